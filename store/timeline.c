/*
** timeline.c -- fnt_timeline (SPEC §8): what a viewer draws for [t0, t1)
** at a given width.  Per (thread, depth, bucket) the longest call starting
** in the bucket (ties: the smallest call_id) and how many calls the bucket
** holds; per (thread, depth) the call still running at t0 as bucket -1.
**
** The calls of the window are read from the run's calls files, pruning
** files and row groups by their time bounds (a row group holds one depth,
** start-sorted), decoding only the six columns that matter, and reduced as
** they come into a hash table of (thread, depth, bucket) slots, so memory
** is the size of the answer, not of the window.  A run whose calls are not
** stored (format 1) goes through the calls scan, which derives them.
*/
#include <stdlib.h>
#include <string.h>

#include "calls.h"
#include "segment.h"

/* One (thread, depth, bucket) of the answer while it is being reduced. */
typedef struct tl_cell {
  int64_t bucket, call_id, start, dur, calls;
  uint32_t fn;              /* fnt_fntab id of the best call */
} tl_cell;

/* The cells of one (thread, depth), in the order calls reached them: a
** file's calls of one depth come in start order, so a call mostly goes to
** the last cell or a new one after it; cells of one bucket from several
** files are merged at the end. */
typedef struct tl_lane {
  uint32_t thread;
  int64_t depth;
  tl_cell *c;
  size_t n, cap;
} tl_lane;

struct fnt_timeline {
  fnt_fntab tab;
  fnt_timeline_row *rows;
  size_t n;
};

size_t fnt_timeline_count(const fnt_timeline *t){ return t ? t->n : 0; }
const fnt_timeline_row *fnt_timeline_rows(const fnt_timeline *t){ return t ? t->rows : 0; }

void fnt_timeline_free(fnt_timeline *t){
  if( t==0 ) return;
  fnt_fntab_clear(&t->tab);
  fnt_free(t->rows);
  fnt_free(t);
}

/* The lanes, found by (thread, depth) through open addressing over a
** power-of-two table of lane index + 1; recent[] keeps each thread's last
** lane (a row group holds one depth). */
#define TL_RECENT 64
typedef struct tl_map {
  tl_lane *lanes;
  size_t n, cap;
  uint32_t *slot;
  size_t mask;
  size_t recent[TL_RECENT];   /* lane index + 1; 0 = none */
} tl_map;

static size_t laneHash(uint32_t thread, int64_t depth){
  uint64_t h = (uint64_t)thread*0x9E3779B97F4A7C15ull ^ (uint64_t)depth*0xC2B2AE3D27D4EB4Full;
  return (size_t)(h ^ (h>>29));
}

static void mapFree(tl_map *m){
  size_t i;
  for(i=0; i<m->n; i++) fnt_free(m->lanes[i].c);
  fnt_free(m->lanes);
  fnt_free(m->slot);
}

/* The lane of (thread, depth), made empty when new; 0: out of memory. */
static tl_lane *mapLane(tl_map *m, uint32_t thread, int64_t depth){
  size_t j, *r = &m->recent[thread % TL_RECENT];
  tl_lane *l;
  if( *r ){
    l = &m->lanes[*r-1];
    if( l->thread==thread && l->depth==depth ) return l;
  }
  if( m->slot==0 || (m->n+1)*2>m->mask+1 ){
    size_t cap = m->slot ? (m->mask+1)*2 : 256, i;
    uint32_t *a = fnt_calloc(cap, sizeof(uint32_t));
    if( a==0 ) return 0;
    for(i=0; i<m->n; i++){
      for(j=laneHash(m->lanes[i].thread, m->lanes[i].depth)&(cap-1); a[j]; j=(j+1)&(cap-1)){}
      a[j] = (uint32_t)i+1;
    }
    fnt_free(m->slot);
    m->slot = a;
    m->mask = cap-1;
  }
  for(j=laneHash(thread, depth)&m->mask; m->slot[j]; j=(j+1)&m->mask){
    l = &m->lanes[m->slot[j]-1];
    if( l->thread==thread && l->depth==depth ){
      *r = m->slot[j];
      return l;
    }
  }
  if( m->n==m->cap ){
    size_t cap = m->cap ? m->cap*2 : 64;
    tl_lane *a = fnt_realloc(m->lanes, cap*sizeof(tl_lane));
    if( a==0 ) return 0;
    m->lanes = a;
    m->cap = cap;
  }
  l = &m->lanes[m->n];
  memset(l, 0, sizeof(*l));
  l->thread = thread;
  l->depth = depth;
  m->slot[j] = (uint32_t)++m->n;
  *r = m->n;
  return l;
}

/* The cell of `bucket` in lane l: its last, or a new one. */
static tl_cell *laneCell(tl_lane *l, int64_t bucket){
  if( l->n && l->c[l->n-1].bucket==bucket ) return &l->c[l->n-1];
  if( l->n==l->cap ){
    size_t cap = l->cap ? l->cap*2 : 16;
    tl_cell *a = fnt_realloc(l->c, cap*sizeof(tl_cell));
    if( a==0 ) return 0;
    l->c = a;
    l->cap = cap;
  }
  memset(&l->c[l->n], 0, sizeof(tl_cell));
  l->c[l->n].bucket = bucket;
  return &l->c[l->n++];
}

/* 1 when the call (dur, id) is drawn before (dur2, id2): longer, then
** the smaller call_id. */
static int longer(int64_t dur, int64_t id, int64_t dur2, int64_t id2){
  return dur>dur2 || (dur==dur2 && id<id2);
}

static int cmpCell(const void *a, const void *b){
  const tl_cell *x = a, *y = b;
  return x->bucket<y->bucket ? -1 : x->bucket>y->bucket;
}

/* Sorts a lane's cells by bucket and merges those of one bucket. */
static void laneMerge(tl_lane *l){
  size_t i, k;
  for(i=1; i<l->n && l->c[i-1].bucket<l->c[i].bucket; i++){}
  if( i==l->n ) return;
  qsort(l->c, l->n, sizeof(tl_cell), cmpCell);
  for(i=1, k=0; i<l->n; i++){
    tl_cell *d = &l->c[k];
    if( l->c[i].bucket!=d->bucket ){
      l->c[++k] = l->c[i];
      continue;
    }
    /* Bucket -1 stands for one call (SPEC §8). */
    d->calls = d->bucket<0 ? 1 : d->calls + l->c[i].calls;
    if( longer(l->c[i].dur, l->c[i].call_id, d->dur, d->call_id) ){
      d->call_id = l->c[i].call_id;
      d->start = l->c[i].start;
      d->dur = l->c[i].dur;
      d->fn = l->c[i].fn;
    }
  }
  l->n = k+1;
}

static int cmpLane(const void *a, const void *b){
  const tl_lane *x = a, *y = b;
  if( x->thread!=y->thread ) return x->thread<y->thread ? -1 : 1;
  return x->depth<y->depth ? -1 : x->depth>y->depth;
}


/* The bounds of the run's events (calls start and end at events), from
** the manifest entries alone; 0 when the snapshot has none of it. */
static int runSpan(const fnt_snapshot *s, const char *run_id,
                   int64_t *t_min, int64_t *t_max){
  size_t i, j;
  int any = 0;
  for(i=0; i<s->n_manifests; i++){
    const fnt_manifest *m = s->manifests[i];
    for(j=0; j<m->n; j++){
      const fnt_entry *e = &m->entries[j];
      if( e->table!=FNT_TABLE_EVENTS || !fnt_entry_has_run(e, run_id) ) continue;
      if( !any || e->t_min<*t_min ) *t_min = e->t_min;
      if( !any || e->t_max>*t_max ) *t_max = e->t_max;
      any = 1;
    }
  }
  return any;
}

int fnt_timeline_span(fnt_snapshot *snap, const char *run_id,
                      int64_t *first_ns, int64_t *last_ns){
  int64_t lo = 0, hi = 0;
  if( snap==0 || run_id==0 ) return FNT_E_MISUSE;
  if( !runSpan(snap, run_id, &lo, &hi) ){
    return fnt_err(snap->st, FNT_E_NOTFOUND, "no run '%s' in snapshot %llu",
                   run_id, (unsigned long long)snap->cat.id);
  }
  if( first_ns ) *first_ns = lo;
  if( last_ns ) *last_ns = hi;
  return FNT_OK;
}

/* What one computation reduces into. */
typedef struct tl_ctx {
  fnt_store *st;
  fnt_timeline *t;
  tl_map m;
  int64_t t0, t1;          /* the window */
  uint64_t w;              /* bucket width */
  int64_t thread;          /* < 0: every thread */
} tl_ctx;

/* The cell a call goes to, or 0 with *skip = 1 when it is not drawn
** (0 with *skip = 0: out of memory).  The call's fields then go to the
** cell when it is the bucket's longest so far (tlTake). */
static tl_cell *tlCell(tl_ctx *x, uint32_t thread, int64_t depth,
                       int64_t start, int64_t end, int *skip){
  int64_t bucket;
  tl_lane *l;
  *skip = 0;
  if( start>=x->t0 ){
    if( start>=x->t1 ){ *skip = 1; return 0; }
    bucket = (int64_t)(((uint64_t)start - (uint64_t)x->t0)/x->w);
  }else if( end>x->t0 ){
    bucket = -1;
  }else{
    *skip = 1;
    return 0;
  }
  l = mapLane(&x->m, thread, depth);
  return l ? laneCell(l, bucket) : 0;
}

/* 1 when a call of duration dur and id call_id replaces the cell's. */
static int tlTake(tl_cell *s, int64_t call_id, int64_t start, int64_t dur){
  int take = s->calls==0 || longer(dur, call_id, s->dur, s->call_id);
  if( take ){
    s->call_id = call_id;
    s->start = start;
    s->dur = dur;
  }
  /* Bucket -1 stands for one call (SPEC §8), whatever else ran at t0. */
  s->calls = s->bucket<0 ? 1 : s->calls+1;
  return take;
}

/* A decoded row group of a calls file into the slots. */
static int tlRows(void *ctx, const fnt_segment *seg, const fnt_calls_rows *g,
                  int64_t threadIx, uint32_t *fnids, int calls){
  tl_ctx *x = ctx;
  size_t i;
  (void)calls;
  for(i=0; i<g->n; i++){
    int64_t start = (int64_t)g->sta[i], dur = (int64_t)g->dur[i];
    tl_cell *s;
    int skip;
    if( threadIx>=0 && (int64_t)g->thr[i]!=threadIx ) continue;
    s = tlCell(x, (uint32_t)seg->threads[g->thr[i]], (int64_t)g->dep[i], start,
               (int64_t)((uint64_t)start + (uint64_t)dur), &skip);
    if( s==0 ){
      if( skip ) continue;
      return FNT_E_NOMEM;
    }
    /* Functions are interned when a call of theirs is first drawn. */
    if( tlTake(s, (int64_t)g->cid[i], start, dur)
     && fnt_calls_fnid(&x->t->tab, seg, fnids, (uint32_t)g->fn[i], &s->fn) ){
      return FNT_E_NOMEM;
    }
  }
  return FNT_OK;
}

/* A run whose calls are stored: every calls file, the tail's open rows
** too. */
static int tlStored(tl_ctx *x, const fnt_run_calls *files){
  fnt_calls_visit v;
  v.cols = FNT_CR_THREAD | FNT_CR_CALL_ID | FNT_CR_DEPTH | FNT_CR_START
         | FNT_CR_DUR | FNT_CR_FN;
  v.t0 = x->t0;
  v.t1 = x->t1;
  v.thread = x->thread;
  v.open_rows = 0;
  v.rows = tlRows;
  v.file_end = 0;
  v.ctx = x;
  return fnt_run_calls_visit(x->st, files, &v);
}

/* A run whose calls are derived when read (format 1): the calls scan. */
static int tlScan(tl_ctx *x, fnt_snapshot *snap, const char *run_id){
  fnt_call_predicate p;
  fnt_calls *sc = 0;
  const fnt_call *c;
  int rc;
  /* The scan's overlap, start <= t1-1 AND end >= t0, holds both the calls
  ** starting in [t0, t1) and those running at t0; tlCell is exact. */
  fnt_call_predicate_init(&p);
  p.run_ids = &run_id;
  p.n_run_ids = 1;
  p.thread = x->thread;
  p.t0 = x->t0;
  p.t1 = x->t1-1;
  rc = fnt_calls_open(snap, &p, &sc);
  while( rc==FNT_OK && (rc = fnt_calls_next(sc, &c))==1 ){
    int skip;
    tl_cell *s = tlCell(x, c->thread, c->depth, c->start_ns, c->end_ns, &skip);
    rc = FNT_OK;
    if( s==0 ){
      if( skip ) continue;
      rc = FNT_E_NOMEM;
      break;
    }
    if( tlTake(s, c->call_id, c->start_ns, c->dur_ns)
     && fnt_fntab_intern(&x->t->tab, c->symbol, c->stable_id, &s->fn) ){
      rc = FNT_E_NOMEM;
      break;
    }
  }
  fnt_calls_close(sc);
  return rc;
}

int fnt_timeline_compute(fnt_snapshot *snap, const char *run_id, int64_t t0,
                         int64_t t1, int64_t buckets, int64_t thread,
                         fnt_timeline **out){
  fnt_store *st;
  fnt_run_calls files;
  tl_ctx x;
  size_t i;
  int rc;

  if( out ) *out = 0;
  if( snap==0 || out==0 ) return FNT_E_MISUSE;
  st = snap->st;
  if( run_id==0 ) return fnt_err(st, FNT_E_MISUSE, "fnt_timeline_compute: run_id is NULL");
  if( t1<=t0 ){
    return fnt_err(st, FNT_E_INVALID, "t1 (%lld) must be greater "
                   "than t0 (%lld)", (long long)t1, (long long)t0);
  }
  if( buckets<1 ){
    return fnt_err(st, FNT_E_INVALID, "buckets (%lld) must be "
                   "at least 1", (long long)buckets);
  }
  rc = fnt_timeline_span(snap, run_id, 0, 0);
  if( rc ) return rc;
  memset(&x, 0, sizeof(x));
  x.st = st;
  x.t0 = t0;
  x.t1 = t1;
  x.thread = thread;
  /* w = max(1, ceil((t1 - t0) / buckets)), in unsigned arithmetic: the
  ** span of any int64 window fits a uint64. */
  {
    uint64_t span = (uint64_t)t1 - (uint64_t)t0, nb = (uint64_t)buckets;
    x.w = span/nb + (span%nb!=0);
    if( x.w==0 ) x.w = 1;
  }
  x.t = fnt_calloc(1, sizeof(*x.t));
  if( x.t==0 ) return fnt_err(st, FNT_E_NOMEM, "out of memory");
  fnt_err_clear(st);
  rc = fnt_run_calls_find(snap, run_id, &files);
  if( rc==FNT_OK ){
    rc = files.complete ? tlStored(&x, &files) : tlScan(&x, snap, run_id);
    fnt_run_calls_clear(&files);
  }
  if( rc ) goto done;
  {
    size_t nrow = 0, j;
    for(i=0; i<x.m.n; i++){ laneMerge(&x.m.lanes[i]); nrow += x.m.lanes[i].n; }
    x.t->rows = fnt_calloc(nrow+1, sizeof(fnt_timeline_row));
    if( x.t->rows==0 ){ rc = FNT_E_NOMEM; goto done; }
    if( x.m.n>1 ) qsort(x.m.lanes, x.m.n, sizeof(tl_lane), cmpLane);
    for(i=0; i<x.m.n; i++){
      const tl_lane *l = &x.m.lanes[i];
      for(j=0; j<l->n; j++){
        const tl_cell *c = &l->c[j];
        fnt_timeline_row *r = &x.t->rows[x.t->n++];
        r->thread = l->thread;
        r->depth = l->depth;
        r->bucket = c->bucket;
        r->call_id = c->call_id;
        r->start_ns = c->start;
        r->dur_ns = c->dur;
        r->key = x.t->tab.keys[x.t->tab.key[c->fn]];
        r->symbol = x.t->tab.fn[c->fn].symbol;
        r->calls = c->calls;
      }
    }
  }
done:
  mapFree(&x.m);
  if( rc ){
    if( rc==FNT_E_NOMEM ){
      rc = fnt_err(st, FNT_E_NOMEM, "run '%s': out of memory drawing its timeline", run_id);
    }
    fnt_timeline_free(x.t);
    return rc;
  }
  *out = x.t;
  return FNT_OK;
}
