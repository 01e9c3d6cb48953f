/*
** lod.c -- a calls file's level-of-detail chunk (FORMAT.md, "Level of
** detail"): per row group its summary (start bounds, and per thread its
** calls and its longest call), then per block of FNT_LOD_ROWS rows the
** same figures and where the block's rows begin in the start_ns, call_id
** and dur_ns chunks.
**
** fnt_timeline reads it to draw a wide window: a group, or else a block,
** whose calls all start in one bucket adds its per-thread figures to that
** bucket's cells, and only the blocks across a bucket's edge are decoded,
** from the place the chunk gives, so that the rows between edges are never
** read.  Chunks written before the summaries (section tag 2) are read by
** their blocks.
*/
#include <stdlib.h>
#include <string.h>

#include "calls.h"
#include "segment.h"

/* ------------------------------------------------------------------ writing */

/* One thread's figures in the rows being summed (a block, a group). */
typedef struct fnt_lod_ent { uint64_t thread, calls, dur, cid, start, fn; } lod_ent;

int fnt_lod_writer_init(fnt_lod_writer *w, uint32_t nthreads){
  uint32_t i;
  memset(w, 0, sizeof(*w));
  w->summed = 1;
  w->slot = fnt_malloc(((size_t)nthreads+1)*sizeof(uint32_t));
  w->ent = fnt_malloc(((size_t)nthreads+1)*sizeof(lod_ent));
  if( w->slot==0 || w->ent==0 ){
    fnt_lod_writer_clear(w);
    return FNT_E_NOMEM;
  }
  for(i=0; i<nthreads; i++) w->slot[i] = UINT32_MAX;
  return FNT_OK;
}

void fnt_lod_writer_clear(fnt_lod_writer *w){
  fnt_free(w->slot);
  fnt_free(w->ent);
  fnt_buf_free(&w->parts);
  fnt_buf_free(&w->lens);
  memset(w, 0, sizeof(*w));
}

/* 1 when call (dur, id) is drawn before (dur2, id2) (SPEC §8). */
static int lodLonger(uint64_t dur, uint64_t id, uint64_t dur2, uint64_t id2){
  return (int64_t)dur>(int64_t)dur2 || (dur==dur2 && (int64_t)id<(int64_t)id2);
}

static int cmpEnt(const void *a, const void *b){
  const lod_ent *x = a, *y = b;
  return x->thread<y->thread ? -1 : x->thread>y->thread;
}

/* The entries of rows [lo, hi) into ent, one per thread by thread index.
** @return how many. */
static size_t lodEntries(fnt_lod_writer *w, const fnt_lod_rows *g, size_t lo,
                         size_t hi, lod_ent *ent){
  size_t n = 0, i;
  for(i=lo; i<hi; i++){
    uint32_t *s = &w->slot[g->thr[i]];
    lod_ent *e;
    if( *s==UINT32_MAX ){
      *s = (uint32_t)n;
      e = &ent[n++];
      e->thread = g->thr[i];
      e->calls = 0;
    }else{
      e = &ent[*s];
    }
    if( e->calls++==0 || lodLonger(g->dur[i], g->cid[i], e->dur, e->cid) ){
      e->dur = g->dur[i];
      e->cid = g->cid[i];
      e->start = g->sta[i];
      e->fn = g->fn[i];
    }
  }
  for(i=0; i<n; i++) w->slot[ent[i].thread] = UINT32_MAX;
  qsort(ent, n, sizeof(lod_ent), cmpEnt);
  return n;
}

/* The count and entries, their call_ids and starts from the first row's. */
static void putEntries(fnt_buf *out, const lod_ent *ent, size_t n,
                       uint64_t cid0, uint64_t sta0){
  uint64_t prevThr = 0;
  size_t i;
  fnt_put_varint(out, n);
  for(i=0; i<n; i++){
    const lod_ent *e = &ent[i];
    fnt_put_varint(out, e->thread - prevThr);
    fnt_put_varint(out, e->calls);
    fnt_put_varint(out, fnt_zigzag((int64_t)e->dur));
    fnt_put_varint(out, fnt_zigzag((int64_t)(e->cid - cid0)));
    fnt_put_varint(out, e->start - sta0);
    fnt_put_varint(out, e->fn);
    prevThr = e->thread;
  }
}

void fnt_lod_write_group(fnt_lod_writer *w, const fnt_lod_rows *g, size_t m){
  lod_ent ent[FNT_LOD_ROWS];
  fnt_buf *out = &w->parts;
  size_t start = out->len, b, i, n;
  uint64_t prevSta = 0, prevCid = 0, prevOff[3] = {0, 0, 0};
  if( w->summed ){
    /* The group's own summary first: a window whose bucket holds the
    ** whole group reads none of its blocks. */
    n = lodEntries(w, g, 0, m, w->ent);
    fnt_put_varint(out, fnt_zigzag((int64_t)g->sta[0]));
    fnt_put_varint(out, g->sta[m-1] - g->sta[0]);
    fnt_put_varint(out, fnt_zigzag((int64_t)g->cid[0]));
    putEntries(out, w->ent, n, g->cid[0], g->sta[0]);
  }
  for(b=0; b*FNT_LOD_ROWS<m; b++){
    size_t lo = b*FNT_LOD_ROWS, hi = lo+FNT_LOD_ROWS<m ? lo+FNT_LOD_ROWS : m;
    uint64_t off[3];
    off[0] = g->off_sta[b]; off[1] = g->off_cid[b]; off[2] = g->off_dur[b];
    n = lodEntries(w, g, lo, hi, ent);
    fnt_put_varint(out, fnt_zigzag((int64_t)(g->sta[lo] - prevSta)));
    fnt_put_varint(out, g->sta[hi-1] - g->sta[lo]);
    fnt_put_varint(out, fnt_zigzag((int64_t)(g->cid[lo] - prevCid)));
    for(i=0; i<3; i++){
      fnt_put_varint(out, off[i] - prevOff[i]);
      prevOff[i] = off[i];
    }
    putEntries(out, ent, n, g->cid[lo], g->sta[lo]);
    prevSta = g->sta[lo];
    prevCid = g->cid[lo];
  }
  fnt_put_varint(&w->lens, out->len - start);
  w->ngroups++;
}

void fnt_lod_writer_append(fnt_lod_writer *w, const fnt_lod_writer *next){
  fnt_buf_append(&w->lens, next->lens.data, next->lens.len);
  fnt_buf_append(&w->parts, next->parts.data, next->parts.len);
  if( next->lens.failed || next->parts.failed ) w->parts.failed = 1;
  w->ngroups += next->ngroups;
}

void fnt_lod_finish(fnt_lod_writer *w, fnt_buf *raw){
  raw->len = 0;
  fnt_put_varint(raw, FNT_LOD_ROWS);
  fnt_put_varint(raw, w->ngroups);
  fnt_buf_append(raw, w->lens.data, w->lens.len);
  fnt_buf_append(raw, w->parts.data, w->parts.len);
  if( w->parts.failed || w->lens.failed ) raw->failed = 1;
}

/* ------------------------------------------------------------------ reading */

void fnt_lod_clear(fnt_lod *l){
  fnt_buf_free(&l->raw);
  fnt_free(l->part);
  memset(l, 0, sizeof(*l));
}

int fnt_lod_load(fnt_store *st, const fnt_segment *seg, fnt_buf *scratch,
                 fnt_lod *l){
  fnt_rd r;
  uint64_t rows, n, i, at;
  int rc;
  l->serial = 0;
  rc = fnt_segment_read_lod(st, seg, scratch, &l->raw);
  if( rc ) return rc;
  r.p = l->raw.data; r.end = r.p + l->raw.len; r.ok = 1;
  rows = fnt_get_varint(&r);
  n = fnt_get_varint(&r);
  if( !r.ok || rows==0 || rows>FNT_CALLS_RG_ROWS || n!=seg->nrg ) goto corrupt;
  fnt_free(l->part);
  l->part = fnt_malloc(((size_t)n+1)*sizeof(size_t));
  if( l->part==0 ) return fnt_err(st, FNT_E_NOMEM, "out of memory");
  /* The parts follow the lengths: their offsets once here. */
  for(i=0, at=0; i<n && r.ok; i++){
    l->part[i] = (size_t)at;
    at += fnt_get_varint(&r);
  }
  if( !r.ok || at!=(uint64_t)(r.end - r.p) ) goto corrupt;
  l->part[n] = (size_t)at;
  l->body = (size_t)(r.p - l->raw.data);
  l->rows = (uint32_t)rows;
  l->summed = seg->has_lod==2;
  l->serial = seg->serial;
  return FNT_OK;
corrupt:
  return fnt_err(st, FNT_E_CORRUPT, "%s: malformed level-of-detail chunk",
                 seg->full_path);
}

int fnt_lod_group(const fnt_lod *l, const fnt_segment *seg, uint32_t rg,
                  fnt_lod_iter *it, fnt_lod_block *g){
  fnt_rd *r = &it->r;
  memset(it, 0, sizeof(*it));
  memset(g, 0, sizeof(*g));
  r->p = l->raw.data + l->body + l->part[rg];
  r->end = l->raw.data + l->body + l->part[rg+1];
  r->ok = 1;
  it->rows = l->rows;
  it->n = (size_t)seg->rgs[rg].nrows;
  it->nthreads = seg->nthreads;
  it->nfuncs = seg->nfuncs;
  if( !l->summed ) return 0;
  /* The group's summary: a block of all its rows, read as one. */
  g->nrows = it->n;
  g->first = fnt_unzigzag(fnt_get_varint(r));
  g->last = (int64_t)((uint64_t)g->first + fnt_get_varint(r));
  g->call_id = fnt_unzigzag(fnt_get_varint(r));
  it->e_left = fnt_get_varint(r);
  it->e_first = 1;
  if( !r->ok || g->last<g->first || it->e_left==0 || it->e_left>g->nrows ) return -1;
  it->b = *g;
  return 1;
}

int fnt_lod_next_block(fnt_lod_iter *it, fnt_lod_block *b){
  fnt_rd *r = &it->r;
  size_t k;
  it->e_left = 0;
  if( it->row>=it->n ) return r->p==r->end ? 0 : -1;
  b->row = it->row;
  b->nrows = it->n - it->row<it->rows ? it->n - it->row : it->rows;
  it->row += b->nrows;
  it->sta = (uint64_t)it->sta + (uint64_t)fnt_unzigzag(fnt_get_varint(r));
  b->first = (int64_t)it->sta;
  b->last = (int64_t)(it->sta + fnt_get_varint(r));
  it->cid = (uint64_t)it->cid + (uint64_t)fnt_unzigzag(fnt_get_varint(r));
  b->call_id = (int64_t)it->cid;
  for(k=0; k<3; k++){
    it->off[k] += fnt_get_varint(r);
    b->off[k] = it->off[k];
  }
  it->e_left = fnt_get_varint(r);
  it->e_thread = 0;
  it->e_first = 1;
  it->e_calls = 0;
  if( !r->ok || b->last<b->first || it->e_left==0 || it->e_left>b->nrows ) return -1;
  it->b = *b;
  return 1;
}

int fnt_lod_next_entry(fnt_lod_iter *it, fnt_lod_entry *e){
  fnt_rd *r = &it->r;
  uint64_t d;
  if( it->e_left==0 ) return it->e_calls==it->b.nrows ? 0 : -1;
  it->e_left--;
  d = fnt_get_varint(r);
  if( !it->e_first && d==0 ) return -1;        /* threads ascend */
  it->e_first = 0;
  it->e_thread += d;
  e->thread = (uint32_t)it->e_thread;
  e->calls = fnt_get_varint(r);
  e->dur = fnt_unzigzag(fnt_get_varint(r));
  e->call_id = (int64_t)((uint64_t)it->b.call_id + (uint64_t)fnt_unzigzag(fnt_get_varint(r)));
  e->start = (int64_t)((uint64_t)it->b.first + fnt_get_varint(r));
  d = fnt_get_varint(r);
  e->fn = (uint32_t)d;
  it->e_calls += e->calls;
  if( !r->ok || it->e_thread>=it->nthreads || d>=it->nfuncs || e->calls==0
   || e->calls>it->b.nrows || e->start<it->b.first || e->start>it->b.last ){
    return -1;
  }
  return 1;
}

int fnt_lod_skip_entries(fnt_lod_iter *it){
  fnt_lod_entry e;
  int rc;
  while( (rc = fnt_lod_next_entry(it, &e))==1 ){}
  return rc;
}
