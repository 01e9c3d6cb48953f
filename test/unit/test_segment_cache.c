/*
** test_segment_cache.c -- a handle's cache of parsed segment footers
** (fnt_set_segment_cache): bounded by a count (64 by default) and bytes,
** both settable, so that a viewer drawing a run of many files again
** parses none of them; a footer is found again by its path, not parsed
** again; limits of 0 keep nothing, and lowering them lets the oldest go
** at once.
**
** The events files of a run whose chunks use the same functions write one
** function table (in the chunk's order), which a handle parses once: the
** other files share it, and a text handed out from a sharer outlives
** every segment but its owner.
**
** Also the calls writer's codec rule (SEG_CALLS_SAVING): a calls row
** group's chunk is zstd only when zstd halves it, elsewhere when it saves
** a tenth.
*/
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "util_test.h"
#include "internal.h"
#include "segment.h"

#define RUNS 90            /* more files than the old count limit (64) */

/* Opens every calls file of every run; the segments opened. */
static size_t openAll(fnt_store *st, fnt_snapshot *snap){
  size_t i, j, n = 0;
  for(i=0; i<snap->n_manifests; i++){
    const fnt_manifest *m = snap->manifests[i];
    for(j=0; j<m->n; j++){
      fnt_segment *seg = 0;
      if( m->entries[j].table!=FNT_TABLE_CALLS ) continue;
      CHECK_RC(st, fnt_segment_open(st, m->entries[j].path, &seg), FNT_OK);
      fnt_segment_release(st, seg);
      n++;
    }
  }
  return n;
}

/* A calls file's sums read lazily, where its footer lies (in the file's
** image when small, else in the handle's buffer), equal those read when
** it is opened whole: from the file for a raw footer, parsed for a
** compressed one (`parsed`). */
static void checkSums(const char *dir, const char *path, int parsed){
  fnt_store *st = 0;
  fnt_segment *seg = 0;
  fnt_seg_sums sums;
  fnt_calls_agg *lazy = 0, a;
  uint64_t *hash = 0, h[2];
  uint32_t n = 0, i = 0;
  CHECK_RC(st, fnt_open(dir, 0, &st), FNT_OK);
  CHECK_RC(st, fnt_segment_open_lazy(st, path, &seg, &sums), FNT_OK);
  if( seg ){
    CHECK(seg->aggs==0 && seg->key_hash==0);
    CHECK_EQ_INT(sums.hashed, 1);
    CHECK_EQ_INT(sums.n, seg->nfuncs);
    lazy = calloc((size_t)sums.n+1, sizeof(*lazy));
    hash = calloc(2*(size_t)sums.n+1, sizeof(*hash));
    while( lazy && hash && fnt_seg_sums_next(&sums, &hash[2*n], &lazy[n]) ) n++;
    CHECK_EQ_INT(n, seg->nfuncs);
    CHECK(n>0);
    fnt_segment_release(st, seg);
    seg = 0;
  }
  fnt_close(st);
  CHECK_RC(st, fnt_open(dir, 0, &st), FNT_OK);
  CHECK_RC(st, fnt_segment_open_rows(st, path, &seg), FNT_OK);
  if( seg ){
    /* A raw footer's sums stay in the file, read when asked for. */
    if( parsed ) CHECK(seg->aggs!=0 && seg->key_hash!=0);
    else CHECK(seg->aggs==0 && seg->key_hash==0 && seg->aggs_at>0 && seg->hash_at>0);
    CHECK_RC(st, fnt_segment_sums(st, seg, &sums), FNT_OK);
    CHECK_EQ_INT(sums.hashed, 1);
    CHECK_EQ_INT(sums.n, n);
    for(; i<n && fnt_seg_sums_next(&sums, h, &a); i++){
      if( h[0]!=hash[2*i] || h[1]!=hash[2*i+1] || a.calls!=lazy[i].calls
       || a.incl!=lazy[i].incl || a.self!=lazy[i].self ){
        fprintf(stderr, "%s: function %u: the sums read lazily differ\n", path, i);
        t_failures++;
        break;
      }
    }
    CHECK_EQ_INT(i, n);
    CHECK_EQ_INT(fnt_seg_sums_next(&sums, h, &a), 0);
    fnt_segment_release(st, seg);
  }
  fnt_close(st);
  free(lazy);
  free(hash);
}

/* Rewrites segment file `full` with its raw footer zstd-compressed, as
** writers before raw calls footers left them (FORMAT.md: trailer = stored
** length, raw length, checksum of the stored bytes, magic).  *orig and
** *norig: the file as it was, to put back. */
static void compressFooter(const char *full, uint8_t **orig, size_t *norig){
  FILE *f = fopen(full, "rb");
  uint8_t *b = 0, *tr;
  fnt_buf out = {0};
  size_t n = 0;
  uint64_t slen, flen, data;
  int i;
  *orig = 0;
  if( f && fseek(f, 0, SEEK_END)==0 && (n = (size_t)ftell(f))>40 ){
    b = malloc(n);
    rewind(f);
    if( b && fread(b, 1, n, f)!=n ){ free(b); b = 0; }
  }
  if( f ) fclose(f);
  CHECK(b!=0);
  if( b==0 ) return;
  tr = b + n - FNT_SEG_TRAILER;
  for(slen=flen=0, i=7; i>=0; i--){ slen = slen<<8 | tr[i]; flen = flen<<8 | tr[8+i]; }
  CHECK(slen==flen && slen < n);
  data = n - FNT_SEG_TRAILER - slen;
  CHECK(fnt_block_compress(0, b + data, (size_t)slen, &out, 3, 0)==FNT_CODEC_ZSTD);
  f = fopen(full, "wb");
  CHECK(f!=0);
  if( f ){
    uint64_t sum = fnt_hash(out.data, out.len);
    uint8_t t[FNT_SEG_TRAILER];
    memcpy(t, tr, FNT_SEG_TRAILER);
    for(i=0; i<8; i++){
      t[i] = (uint8_t)(out.len >> (8*i));
      t[16+i] = (uint8_t)(sum >> (8*i));
    }
    CHECK(fwrite(b, 1, (size_t)data, f)==data && fwrite(out.data, 1, out.len, f)==out.len
          && fwrite(t, 1, FNT_SEG_TRAILER, f)==FNT_SEG_TRAILER);
    fclose(f);
  }
  fnt_buf_free(&out);
  *orig = b;
  *norig = n;
}

/* Rewrites segment file `full`, whose footer is stored raw, with one bit
** of the function-table hash its footer gives (h, version 6) flipped and
** the footer's checksum made good again: a writer's lie that only the
** hash check can catch.  *orig and *norig: the file as it was. */
static void forgeFuncHash(const char *full, const uint64_t h[2], uint8_t **orig,
                          size_t *norig){
  FILE *f = fopen(full, "rb");
  uint8_t *b = 0, *tr, want[16];
  size_t n = 0, k, at = 0, hits = 0;
  uint64_t slen, flen, data, sum;
  int i;
  *orig = 0;
  if( f && fseek(f, 0, SEEK_END)==0 && (n = (size_t)ftell(f))>40 ){
    b = malloc(2*n);
    rewind(f);
    if( b && fread(b, 1, n, f)!=n ){ free(b); b = 0; }
  }
  if( f ) fclose(f);
  CHECK(b!=0);
  if( b==0 ) return;
  memcpy(b+n, b, n);                       /* the original, to put back */
  tr = b + n - FNT_SEG_TRAILER;
  for(slen=flen=0, i=7; i>=0; i--){ slen = slen<<8 | tr[i]; flen = flen<<8 | tr[8+i]; }
  CHECK(slen==flen && slen < n);
  data = n - FNT_SEG_TRAILER - slen;
  for(i=0; i<16; i++) want[i] = (uint8_t)(h[i/8] >> (8*(i%8)));
  for(k=(size_t)data; k+16<=(size_t)(data+slen); k++){
    if( memcmp(b+k, want, 16)==0 ){ at = k; hits++; }
  }
  CHECK_EQ_INT(hits, 1);
  b[at] ^= 1;
  sum = fnt_hash(b + data, (size_t)slen);
  for(i=0; i<8; i++) tr[16+i] = (uint8_t)(sum >> (8*i));
  f = fopen(full, "wb");
  CHECK(f && fwrite(b, 1, n, f)==n);
  if( f ) fclose(f);
  *orig = malloc(n);
  if( *orig ) memcpy(*orig, b+n, n);
  *norig = n;
  free(b);
}

/* The serial of the calls file `path` as the cache gives it now. */
static uint64_t serialOf(fnt_store *st, const char *path){
  fnt_segment *seg = 0;
  uint64_t s;
  CHECK_RC(st, fnt_segment_open(st, path, &seg), FNT_OK);
  s = seg ? seg->serial : 0;
  fnt_segment_release(st, seg);
  return s;
}

/* Files run `run` as three chunks using all six functions of the test
** chunk's table and a fourth using only the first; opens its events files
** and checks which share a table, then that a shared text lives on. */
static void checkSharedFuncs(const char *dir){
  fnt_store *st = 0;
  fnt_snapshot *snap = 0;
  fnt_segment *seg[8] = {0}, *owner = 0, *lone = 0;
  char loneFull[4096], lonePath[1024];
  uint64_t loneHash[2] = {0, 0};
  const fnt_entry *e;
  fnt_entry_iter it;
  t_chunk t;
  const char *z = 0;
  size_t i, n = 0, shared = 0, own = 0;
  CHECK_RC(st, fnt_open(dir, 0, &st), FNT_OK);
  for(i=0; i<4; i++){
    t_chunk_make(&t, "acme/cache", "shared", (int64_t)i, 4, 400, 2, 1000*i, (unsigned)i);
    if( i==3 ){
      size_t k;
      for(k=0; k<t.c.n_events; k++) t.ev[k].function = 0;
    }
    CHECK_RC(st, fnt_file_chunk(st, &t.c), 1);
    t_chunk_free(&t);
  }
  CHECK_RC(st, fnt_snapshot_current(st, &snap), FNT_OK);
  for(i=0; snap && i<snap->n_manifests; i++){
    fnt_entry_iter_init(&it, snap->manifests[i], FNT_BY_RUN, "shared");
    while( (e = fnt_entry_iter_next(&it))!=0 && n<8 ){
      if( e->table!=FNT_TABLE_EVENTS ) continue;
      CHECK_RC(st, fnt_segment_open(st, e->path, &seg[n]), FNT_OK);
      n++;
    }
  }
  CHECK_EQ_INT(n, 4);
  for(i=0; i<n; i++){
    fnt_segment *s = seg[i];
    if( s==0 ) continue;
    /* Version 6: the table in a chunk, its hash in the footer. */
    CHECK(s->has_funcs_chunk && s->funcs_loaded);
    if( s->nfuncs==1 ){
      /* The fourth chunk's: a table of its own. */
      CHECK(s->funcs_owner==0);
      CHECK_STR(s->funcs[0].symbol, "main");
      lone = s;
      continue;
    }
    CHECK_EQ_INT(s->nfuncs, 6);
    /* In the chunk's order, not in order of first use. */
    CHECK_STR(s->funcs[1].symbol, "parse");
    CHECK_STR(s->funcs[5].symbol, "free_all");
    if( s->funcs_owner ){
      shared++;
      CHECK(owner==0 || s->funcs_owner==owner);
      owner = s->funcs_owner;
      CHECK(s->func_text==owner->func_text && s->funcs==owner->funcs);
      CHECK(s->bytes < owner->bytes);
      if( z==0 ) z = s->funcs[1].symbol;
    }else{
      own++;
    }
  }
  CHECK_EQ_INT(shared, 2);
  CHECK_EQ_INT(own, 1);
  if( lone ){
    snprintf(loneFull, sizeof(loneFull), "%s", lone->full_path);
    snprintf(lonePath, sizeof(lonePath), "%s", lone->path);
    memcpy(loneHash, lone->func_hash, sizeof(loneHash));
  }
  /* A text of a sharer, held past every segment and the cache. */
  if( z ) fnt_text_hold(z);
  for(i=0; i<n; i++) fnt_segment_release(st, seg[i]);
  fnt_set_segment_cache(st, 0, 0);
  if( z ){
    CHECK_STR(z, "parse");
    fnt_text_release((void*)z);
  }
  /* A footer whose table hash is not that of its table is corrupt: read
  ** alone, the table is checked against it; a reader sharing by it would
  ** name another table's functions. */
  if( lone ){
    uint8_t *orig = 0;
    size_t norig = 0;
    fnt_segment *s2 = 0;
    FILE *f;
    forgeFuncHash(loneFull, loneHash, &orig, &norig);
    for(i=0; i<2; i++){     /* the second from the cache, checked again */
      CHECK_EQ_INT(fnt_segment_open(st, lonePath, &s2), FNT_E_CORRUPT);
      CHECK(strstr(fnt_errmsg(st), "functions chunk")!=0);
    }
    f = orig ? fopen(loneFull, "wb") : 0;
    CHECK(f && fwrite(orig, 1, norig, f)==norig);
    if( f ) fclose(f);
    free(orig);
    CHECK_RC(st, fnt_segment_open(st, lonePath, &s2), FNT_OK);
    fnt_segment_release(st, s2);
  }
  fnt_snapshot_release(snap);
  fnt_close(st);
}

int main(void){
  const char *dir = t_scratch_dir("segment_cache");
  fnt_store *st = 0;
  fnt_snapshot *snap = 0;
  const char *first = 0;
  size_t i, j, files, one;
  char run[32];

  CHECK_RC(st, fnt_open(dir, FNT_OPEN_CREATE, &st), FNT_OK);
  for(i=0; i<RUNS; i++){
    snprintf(run, sizeof(run), "run-%03zu", i);
    t_file_run(st, "acme/cache", run, 1, 3000, 2, (unsigned)i);
  }
  fnt_close(st);

  CHECK_RC(st, fnt_open(dir, 0, &st), FNT_OK);
  CHECK_RC(st, fnt_snapshot_current(st, &snap), FNT_OK);
  files = openAll(st, snap);
  CHECK_EQ_INT(files, RUNS);
  /* The default holds the newest 64. */
  CHECK_EQ_INT(st->n_segments, FNT_SEGMENT_CACHE_FILES);
  CHECK(st->segment_bytes <= FNT_SEGMENT_CACHE_BYTES);
  for(i=0; i<snap->n_manifests && first==0; i++){
    for(j=0; j<snap->manifests[i]->n; j++){
      if( snap->manifests[i]->entries[j].table==FNT_TABLE_CALLS ){
        first = snap->manifests[i]->entries[j].path;
        break;
      }
    }
  }
  CHECK(first!=0);
  if( first ) checkSums(dir, first, 0);       /* a small file: its image */
  /* Room for all. */
  fnt_set_segment_cache(st, 1000, FNT_SEGMENT_CACHE_BYTES);
  openAll(st, snap);
  CHECK_EQ_INT(st->n_segments, RUNS);
  /* Found again, not parsed again. */
  CHECK_EQ_INT(serialOf(st, first), serialOf(st, first));
  one = st->segments[0]->bytes;

  /* Lowered: the oldest go at once, and it stays within the budget. */
  fnt_set_segment_cache(st, 1000, 3*one + one/2);
  CHECK(st->n_segments<=3 && st->n_segments>=1);
  CHECK(st->segment_bytes <= 3*one + one/2);
  openAll(st, snap);
  CHECK(st->segment_bytes <= 3*one + one/2);

  fnt_set_segment_cache(st, 2, FNT_SEGMENT_CACHE_BYTES);
  CHECK_EQ_INT(st->n_segments, 2);
  openAll(st, snap);
  CHECK_EQ_INT(st->n_segments, 2);

  /* 0: nothing kept; every open parses the footer again. */
  fnt_set_segment_cache(st, 1000, 0);
  CHECK_EQ_INT(st->n_segments, 0);
  CHECK_EQ_INT(st->segment_bytes, 0);
  CHECK(serialOf(st, first)!=serialOf(st, first));
  openAll(st, snap);
  CHECK_EQ_INT(st->n_segments, 0);

  fnt_set_segment_cache(st, 0, FNT_SEGMENT_CACHE_BYTES);
  openAll(st, snap);
  CHECK_EQ_INT(st->n_segments, 0);

  /* Raised again: every file once more, then all hits. */
  fnt_set_segment_cache(st, 1000, (size_t)64 << 20);
  openAll(st, snap);
  CHECK_EQ_INT(st->n_segments, RUNS);
  CHECK_EQ_INT(serialOf(st, first), serialOf(st, first));

  fnt_snapshot_release(snap);
  fnt_close(st);
  checkSharedFuncs(dir);

  /* The codec rule of calls row groups and footers: zstd only where it
  ** halves; a run large enough for chunks of both kinds. */
  CHECK_RC(st, fnt_open(dir, 0, &st), FNT_OK);
  t_file_run(st, "acme/cache", "big", 1, 200000, 2, 7);
  CHECK_RC(st, fnt_snapshot_current(st, &snap), FNT_OK);
  {
    fnt_segment *seg = 0;
    const fnt_entry *e = 0;
    fnt_entry_iter it;
    uint32_t rg, c, zstd = 0, raw = 0;
    for(i=0; i<snap->n_manifests && e==0; i++){
      fnt_entry_iter_init(&it, snap->manifests[i], FNT_BY_RUN, "big");
      while( (e = fnt_entry_iter_next(&it))!=0 && e->table!=FNT_TABLE_CALLS ){}
    }
    CHECK(e!=0);
    CHECK_RC(st, fnt_segment_open(st, e ? e->path : "", &seg), FNT_OK);
    /* Its footer is stored raw, and row groups' descriptors are parsed
    ** from the file when looked up (not from memory). */
    CHECK(seg && seg->image==0 && seg->desc==0 && seg->desc_at>0);
    if( seg ){
      /* Sums from the file, then, the footer compressed, parsed. */
      uint8_t *orig = 0;
      size_t norig = 0;
      FILE *f;
      checkSums(dir, e->path, 0);
      compressFooter(seg->full_path, &orig, &norig);
      checkSums(dir, e->path, 1);
      f = orig ? fopen(seg->full_path, "wb") : 0;
      CHECK(f && fwrite(orig, 1, norig, f)==norig);
      if( f ) fclose(f);
      free(orig);
    }
    for(rg=0; seg && rg<seg->nrg; rg++){
      const fnt_seg_chunk *descs = 0;
      CHECK_RC(st, fnt_segment_descs(st, seg, rg, &descs), FNT_OK);
      for(c=0; descs && c<seg->ncols; c++){
        const fnt_seg_chunk *k;
        if( seg->cols[c].chunk_index<0 ) continue;
        k = &descs[seg->cols[c].chunk_index];
        if( k->codec!=FNT_CODEC_ZSTD ){
          raw += k->raw_len>=FNT_ZSTD_MIN;
          continue;
        }
        zstd++;
        CHECK(k->stored_len*2 <= k->raw_len);
      }
    }
    CHECK(zstd>0);            /* depth and flags chunks */
    CHECK(raw>0);             /* start_ns, dur_ns at least */
    /* Cut short after another handle opened it: a group's descriptors,
    ** read when it is first read, are an error naming the file and the
    ** group, not a crash. */
    CHECK(seg==0 || seg->nrg>2);
    if( seg && seg->nrg>2 ){
      fnt_store *st2 = 0;
      fnt_segment *seg2 = 0;
      const fnt_seg_chunk *descs = 0;
      CHECK_RC(st2, fnt_open(dir, 0, &st2), FNT_OK);
      CHECK_RC(st2, fnt_segment_open(st2, e->path, &seg2), FNT_OK);
      CHECK(truncate(seg->full_path, (off_t)(seg->desc_at + seg->rgs[1].desc))==0);
      if( seg2 ){
        CHECK_RC(st2, fnt_segment_descs(st2, seg2, 1, &descs), FNT_E_CORRUPT);
        CHECK(strstr(fnt_errmsg(st2), seg->full_path)!=0);
        CHECK(strstr(fnt_errmsg(st2), "chunk descriptors (truncated?)")!=0);
        /* group 0 lies before the cut */
        CHECK_RC(st2, fnt_segment_descs(st2, seg2, 0, &descs), FNT_OK);
      }
      fnt_segment_release(st2, seg2);
      fnt_close(st2);
    }
    fnt_segment_release(st, seg);
  }

  fnt_snapshot_release(snap);
  fnt_close(st);
  t_remove_tree(dir);
  return t_finish("test_segment_cache");
}
