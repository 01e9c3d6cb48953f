/*
** verify.c -- reading everything one segment file holds, as its readers
** do (fnt_segment_verify), for `fnt check`.
**
** A segment is opened once: its footer is verified by the open, then
** every chunk of every row group is read (checksum, decompression), then
** decoded by the reader of its table -- the scan for events, runs and
** profile files, the calls decoder for calls files.  An events file's
** functions chunk is read and checked against its footer's hash, which
** the open does not when another file's table is the same; a calls
** file's stacks and level-of-detail chunks go through their own parsers.
** The open keeps the file in the handle's cache, so the readers find it
** there (a small file was read whole: no further reads of the disk).
*/
#include <string.h>

#include "internal.h"
#include "segment.h"
#include "calls.h"

/* Every chunk of every row group: checksum and decompression. */
static int verifyChunks(fnt_store *st, const fnt_segment *seg){
  fnt_buf scratch = {0}, raw = {0};
  uint32_t g, k;
  int rc = FNT_OK;
  for(g=0; rc==FNT_OK && g<seg->nrg; g++){
    for(k=0; rc==FNT_OK && k<seg->ncols; k++){
      if( seg->cols[k].chunk_index<0 ) continue;
      rc = fnt_segment_read_chunk(st, seg, g, &seg->cols[k], &scratch, &raw);
    }
  }
  fnt_buf_free(&scratch);
  fnt_buf_free(&raw);
  return rc;
}

/* The rows of an events, runs or profile file, through a scan of it
** alone.  Such a scan reads nothing of its snapshot but the handle: one
** of no manifests serves, so that the files of a snapshot that does not
** load (a manifest of it corrupt) are verified all the same. */
static int verifyScan(fnt_store *st, const fnt_entry *e){
  fnt_snapshot none;
  fnt_scan *sc = 0;
  int rc;
  memset(&none, 0, sizeof(none));
  none.st = st;
  none.refs = 1;                      /* ours: the scan never frees it */
  rc = fnt_scan_open_entries(&none, (fnt_table)e->table, &e, 1, 0, &sc);
  while( rc==FNT_OK && (rc = fnt_scan_next(sc))==1 ) rc = FNT_OK;
  fnt_scan_close(sc);
  return rc<0 ? rc : FNT_OK;
}

/* The level-of-detail chunk: every group's summary, block and entry. */
static int verifyLod(fnt_store *st, const fnt_segment *seg){
  fnt_buf scratch = {0};
  fnt_lod lod;
  uint32_t g;
  int rc;
  memset(&lod, 0, sizeof(lod));
  rc = fnt_lod_load(st, seg, &scratch, &lod);
  for(g=0; rc==FNT_OK && g<seg->nrg; g++){
    fnt_lod_iter it;
    fnt_lod_block b;
    int r = fnt_lod_group(&lod, seg, g, &it, &b);
    if( r==1 ) r = fnt_lod_skip_entries(&it);
    while( r==0 && (r = fnt_lod_next_block(&it, &b))==1 ) r = fnt_lod_skip_entries(&it);
    if( r<0 ){
      rc = fnt_err(st, FNT_E_CORRUPT, "%s: level-of-detail chunk: row group %u "
                   "is malformed", seg->full_path, g);
    }
  }
  fnt_lod_clear(&lod);
  fnt_buf_free(&scratch);
  return rc;
}

/* A calls file's rows, through the calls decoder, and its stacks and
** level-of-detail chunks. */
static int verifyCalls(fnt_store *st, const fnt_segment *seg){
  fnt_calls_rows rows;
  fnt_buf scratch = {0}, raw = {0};
  uint32_t g;
  int rc = fnt_calls_rows_alloc(&rows);
  if( rc ) return fnt_err(st, rc, "out of memory");
  for(g=0; rc==FNT_OK && g<seg->nrg; g++){
    rc = fnt_calls_rows_decode(st, seg, g, FNT_CR_ALL, &scratch, &raw, &rows);
  }
  fnt_free(rows.thr);
  fnt_buf_free(&scratch);
  fnt_buf_free(&raw);
  if( rc==FNT_OK && seg->has_stacks ){
    fnt_calls_stack *nodes = 0;
    uint32_t n = 0;
    rc = fnt_calls_stacks_read(st, seg, &nodes, &n);
    fnt_free(nodes);
  }
  if( rc==FNT_OK && seg->has_lod ) rc = verifyLod(st, seg);
  return rc;
}

int fnt_segment_verify(fnt_store *st, const fnt_entry *e, uint64_t *size){
  fnt_segment *seg = 0;
  int rc = fnt_segment_open(st, e->path, &seg);
  *size = 0;
  if( rc ) return rc;
  *size = seg->size;
  if( seg->table!=e->table ){
    rc = fnt_err(st, FNT_E_CORRUPT, "%s: holds table %u, the manifest says %u",
                 seg->full_path, seg->table, e->table);
  }else if( seg->nrows!=e->rows ){
    rc = fnt_err(st, FNT_E_CORRUPT, "%s: holds %llu rows, the manifest says %llu",
                 seg->full_path, (unsigned long long)seg->nrows,
                 (unsigned long long)e->rows);
  }else if( (rc = verifyChunks(st, seg))==FNT_OK
          && (rc = fnt_segment_verify_funcs(st, seg))==FNT_OK ){
    rc = seg->table==FNT_TABLE_CALLS ? verifyCalls(st, seg) : verifyScan(st, e);
  }
  fnt_segment_release(st, seg);
  return rc;
}
