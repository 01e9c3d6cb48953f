/*
** timeline.c -- fnt_timeline (SPEC §8): what a viewer draws for [t0, t1)
** at a given width.  Per (thread, depth, bucket) the longest call starting
** in the bucket (ties: the smallest call_id) and how many calls the bucket
** holds; per (thread, depth) the call still running at t0 as bucket -1.
**
** The calls of the window are read from the run's calls files, pruning
** files and row groups by their time bounds (a row group holds one depth,
** start-sorted), decoding only the five columns that matter, and reduced
** as they come into lanes of (thread, depth) cells by bucket, so memory is
** the size of the answer, not of the window.  A row group that holds many
** calls a bucket is read through the file's level of detail (lod.c): a
** block of its rows whose starts all lie in one bucket adds its per-thread
** count and longest call, and only blocks across an edge are decoded, from
** the places the chunk gives.  Functions are interned for the calls drawn
** in the end only.  A run whose calls are not stored (format 1) goes
** through the calls scan, which derives them; a file without a level of
** detail (written before it) is read by its rows.
*/
#include <stdlib.h>
#include <string.h>

#include "calls.h"
#include "segment.h"

/* One (thread, depth, bucket) of the answer while it is being reduced. */
typedef struct tl_cell {
  int64_t bucket, call_id, start, dur, calls;
  uint32_t fn;              /* the best call's function: of held segment */
  uint32_t seg;             /* `seg` (tl_ctx.segs), or UINT32_MAX: a tab id */
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
  uint32_t held;            /* tl_ctx.nseg when the held segment last met it */
  size_t mark;              /* the first cell that segment may have named */
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
      d->seg = l->c[i].seg;
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
** the manifests' entries of the run alone (by their index): 1 with *t_min,
** *t_max when it has events, 2 when the run is filed without any, 0 when
** the snapshot has no run run_id. */
static int runSpan(const fnt_snapshot *s, const char *run_id,
                   int64_t *t_min, int64_t *t_max){
  size_t i;
  int found = 0;
  for(i=0; i<s->n_manifests; i++){
    fnt_entry_iter it;
    const fnt_entry *e;
    fnt_entry_iter_init(&it, s->manifests[i], FNT_BY_RUN, run_id);
    while( (e = fnt_entry_iter_next(&it))!=0 ){
      if( e->table!=FNT_TABLE_EVENTS || e->rows==0 ){
        if( !found ) found = 2;
        continue;
      }
      if( found!=1 || e->t_min<*t_min ) *t_min = e->t_min;
      if( found!=1 || e->t_max>*t_max ) *t_max = e->t_max;
      found = 1;
    }
  }
  return found;
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

/* The columns the timeline reads of a calls row group, as decoded. */
enum { TL_THR, TL_CID, TL_STA, TL_DUR, TL_FN, TL_NCOL };
static const uint32_t tlFields[TL_NCOL] = {4, 5, 8, 10, 12};

/* What one computation reduces into. */
typedef struct tl_ctx {
  fnt_store *st;
  fnt_timeline *t;
  tl_map m;
  int64_t t0, t1;          /* the window */
  uint64_t w;              /* bucket width */
  uint64_t boff;           /* the last bucket found, and its offset from t0 */
  int64_t bucket;
  int64_t thread;          /* < 0: every thread */
  /* The row group being read: its depth, and per thread index its lane
  ** (an index in m.lanes), valid while gen[] holds the group's number. */
  int64_t depth;
  uint32_t *lane, *gen, ngen, group;
  fnt_calls_rows g;        /* rows decoded whole (no level of detail) */
  fnt_buf scratch, raw;
  fnt_lod lod;             /* the level of detail of the file being read */
  fnt_buf col[TL_NCOL];    /* a group's chunks, for blocks read by place */
  fnt_ints cur[TL_NCOL];
  uint32_t loaded;         /* the group number the chunks are of + 1 */
  /* The segments whose functions cells name, by number: only the last is
  ** held (refs), so that a timeline holds one file's footer at a time;
  ** the cells naming it are interned when the next file comes (tlSettle),
  ** not every call that was a bucket's longest for a while.  dirty: the
  ** lanes it met, each from its mark. */
  struct tl_seg { fnt_segment *seg; uint32_t *fnid; } *segs;
  uint32_t nseg, capseg;
  uint32_t *dirty;
  size_t ndirty, capdirty;
} tl_ctx;

static int tlFnid(tl_ctx *x, const tl_cell *c, uint32_t *id);

/* Interns the functions the cells name of held segment k, and lets it go.
** A file's calls reach a lane's cells in order, so they are all from the
** lane's mark on.  @return FNT_OK or FNT_E_NOMEM. */
static int tlSettle(tl_ctx *x, uint32_t k){
  size_t i, j;
  for(i=0; i<x->ndirty; i++){
    tl_lane *l = &x->m.lanes[x->dirty[i]];
    for(j=l->mark; j<l->n; j++){
      tl_cell *c = &l->c[j];
      uint32_t id;
      if( c->seg!=k ) continue;
      if( tlFnid(x, c, &id) ) return FNT_E_NOMEM;
      c->seg = UINT32_MAX;
      c->fn = id;
    }
  }
  x->ndirty = 0;
  fnt_free(x->segs[k].fnid);
  x->segs[k].fnid = 0;
  fnt_segment_release(x->st, x->segs[k].seg);
  x->segs[k].seg = 0;
  return FNT_OK;
}

/* Lane l (an index in m.lanes) met by the held segment: remembered with
** the first cell it may name.  @return FNT_OK or FNT_E_NOMEM. */
static int tlDirty(tl_ctx *x, uint32_t l){
  tl_lane *a = &x->m.lanes[l];
  if( a->held==x->nseg ) return FNT_OK;
  if( x->ndirty==x->capdirty ){
    size_t cap = x->capdirty ? x->capdirty*2 : 64;
    uint32_t *d = fnt_realloc(x->dirty, cap*sizeof(uint32_t));
    if( d==0 ) return FNT_E_NOMEM;
    x->dirty = d;
    x->capdirty = cap;
  }
  x->dirty[x->ndirty++] = l;
  a->held = x->nseg;
  a->mark = a->n ? a->n-1 : 0;     /* its last cell may be added to */
  return FNT_OK;
}

/* The number in x->segs of seg, held from now on (the one held before is
** settled); UINT32_MAX: no memory. */
static uint32_t tlHold(tl_ctx *x, const fnt_segment *seg){
  if( x->nseg && x->segs[x->nseg-1].seg==seg ) return x->nseg-1;
  if( x->nseg && tlSettle(x, x->nseg-1) ) return UINT32_MAX;
  if( x->nseg==x->capseg ){
    uint32_t cap = x->capseg ? x->capseg*2 : 16;
    struct tl_seg *a = fnt_realloc(x->segs, cap*sizeof(*a));
    if( a==0 ) return UINT32_MAX;
    x->segs = a;
    x->capseg = cap;
  }
  x->segs[x->nseg].seg = (fnt_segment*)seg;
  x->segs[x->nseg].fnid = 0;
  ((fnt_segment*)seg)->refs++;
  return x->nseg++;
}

/* The fnt_fntab id of cell c's function, interned now. */
static int tlFnid(tl_ctx *x, const tl_cell *c, uint32_t *id){
  struct tl_seg *h;
  if( c->seg==UINT32_MAX ){ *id = c->fn; return FNT_OK; }
  h = &x->segs[c->seg];
  if( h->fnid==0 ){
    h->fnid = fnt_malloc(((size_t)h->seg->nfuncs+1)*sizeof(uint32_t));
    if( h->fnid==0 ) return FNT_E_NOMEM;
    memset(h->fnid, 0xff, ((size_t)h->seg->nfuncs+1)*sizeof(uint32_t));
  }
  return fnt_calls_fnid(&x->t->tab, h->seg, h->fnid, c->fn, id);
}

/* The bucket of a start in [t0, t1): the last one again while starts stay
** in it (a group's rows come by start), else a division. */
static int64_t tlBucket(tl_ctx *x, int64_t start){
  uint64_t off = (uint64_t)start - (uint64_t)x->t0;
  if( off - x->boff>=x->w ){
    x->bucket = (int64_t)(off/x->w);
    x->boff = (uint64_t)x->bucket*x->w;
  }
  return x->bucket;
}

/* Starts reading row group rg of seg: its lanes are looked up anew. */
static int tlGroupStart(tl_ctx *x, const fnt_segment *seg, uint32_t rg){
  if( seg->nthreads>x->ngen ){
    uint32_t n = seg->nthreads, *l = fnt_realloc(x->lane, (size_t)n*sizeof(uint32_t));
    uint32_t *g = l ? fnt_realloc(x->gen, (size_t)n*sizeof(uint32_t)) : 0;
    if( l ) x->lane = l;
    if( g==0 ) return FNT_E_NOMEM;
    x->gen = g;
    memset(g + x->ngen, 0, (size_t)(n - x->ngen)*sizeof(uint32_t));
    x->ngen = n;
  }
  if( ++x->group==0 ){                 /* wrapped: forget every tag */
    memset(x->gen, 0, (size_t)x->ngen*sizeof(uint32_t));
    x->group = 1;
  }
  x->depth = seg->crgs[rg].depth;
  x->loaded = 0;
  return FNT_OK;
}

/* The bucket of a call, *b: -1 when it runs at t0.  0 when not drawn. */
static int tlPlace(tl_ctx *x, int64_t start, int64_t end, int64_t *b){
  if( start>=x->t0 ){
    if( start>=x->t1 ) return 0;
    *b = tlBucket(x, start);
    return 1;
  }
  *b = -1;
  return end>x->t0;
}

/* Adds `calls` calls to cell c of bucket b, the longest of them (dur,
** call_id, start): 1 when that one is now the cell's.  Bucket -1 stands
** for one call (SPEC §8), whatever else ran at t0. */
static int cellAdd(tl_cell *c, int64_t b, uint64_t calls, int64_t dur,
                   int64_t call_id, int64_t start){
  int take = c->calls==0 || longer(dur, call_id, c->dur, c->call_id);
  c->calls = b<0 ? 1 : c->calls + (int64_t)calls;
  if( take ){
    c->call_id = call_id;
    c->start = start;
    c->dur = dur;
  }
  return take;
}

/* cellAdd for thread index thr of the group being read, function f of
** seg. */
static int tlAdd(tl_ctx *x, const fnt_segment *seg, uint32_t thr, int64_t b,
                 uint64_t calls, int64_t dur, int64_t call_id, int64_t start,
                 uint32_t f){
  tl_lane *l;
  tl_cell *c;
  if( x->gen[thr]!=x->group ){
    l = mapLane(&x->m, (uint32_t)seg->threads[thr], x->depth);
    if( l==0 ) return FNT_E_NOMEM;
    x->gen[thr] = x->group;
    x->lane[thr] = (uint32_t)(l - x->m.lanes);
    if( tlDirty(x, x->lane[thr]) ) return FNT_E_NOMEM;
  }
  l = &x->m.lanes[x->lane[thr]];
  c = laneCell(l, b);
  if( c==0 ) return FNT_E_NOMEM;
  if( cellAdd(c, b, calls, dur, call_id, start) ){
    c->fn = f;
    c->seg = x->nseg-1;      /* tlGroup held seg */
  }
  return FNT_OK;
}

/* Rows [lo, hi) of a group, decoded into the arrays at their row. */
static int tlRows(tl_ctx *x, const fnt_segment *seg, int64_t threadIx,
                  const uint64_t *thr, const uint64_t *cid,
                  const uint64_t *sta, const uint64_t *dur, const uint64_t *fn,
                  size_t lo, size_t hi){
  size_t i;
  for(i=lo; i<hi; i++){
    int64_t start = (int64_t)sta[i], b;
    int rc;
    if( threadIx>=0 && (int64_t)thr[i]!=threadIx ) continue;
    if( !tlPlace(x, start, (int64_t)(sta[i] + dur[i]), &b) ) continue;
    rc = tlAdd(x, seg, (uint32_t)thr[i], b, 1, (int64_t)dur[i],
               (int64_t)cid[i], start, (uint32_t)fn[i]);
    if( rc ) return rc;
  }
  return FNT_OK;
}

/* A group read whole: the rows that may start in the window or run at
** t0 (fnt_calls_rows_window). */
static int tlGroupRows(tl_ctx *x, const fnt_segment *seg, uint32_t rg,
                       int64_t threadIx){
  fnt_calls_rows *g = &x->g;
  size_t lo;
  int rc = fnt_calls_rows_window(x->st, seg, rg, FNT_CR_THREAD | FNT_CR_CALL_ID
                                 | FNT_CR_START | FNT_CR_DUR | FNT_CR_FN,
                                 x->t0, x->t1-1, &x->scratch, &x->raw, g, &lo);
  if( rc ) return rc;
  return tlRows(x, seg, threadIx, g->thr, g->cid, g->sta, g->dur, g->fn,
                lo, g->n);
}

static int tlLodCorrupt(tl_ctx *x, const fnt_segment *seg, uint32_t rg){
  return fnt_err(x->st, FNT_E_CORRUPT, "%s: row group %u: level-of-detail "
                 "chunk does not match the rows", seg->full_path, rg);
}

/* The rows of block b of row group rg, read from the places the level of
** detail gives (the group's chunks read once, at its first such block). */
static int tlBlockRows(tl_ctx *x, const fnt_segment *seg, uint32_t rg,
                       const fnt_lod_block *b, int64_t threadIx){
  /* Into x->g's arrays: a group read by blocks is not read whole. */
  uint64_t *v[TL_NCOL];
  size_t n = (size_t)seg->rgs[rg].nrows, m = b->nrows, i;
  int k, rc;
  v[TL_THR] = x->g.thr; v[TL_CID] = x->g.cid; v[TL_STA] = x->g.sta;
  v[TL_DUR] = x->g.dur; v[TL_FN] = x->g.fn;
  if( m>FNT_CALLS_RG_ROWS ) return tlLodCorrupt(x, seg, rg);
  if( x->loaded!=rg+1 ){
    for(k=0; k<TL_NCOL; k++){
      const fnt_seg_col *col = fnt_segment_col(seg, tlFields[k]);
      uint64_t limit = k==TL_THR ? seg->nthreads : k==TL_FN ? seg->nfuncs : UINT64_MAX;
      if( col==0 || col->chunk_index<0 ){
        return fnt_err(x->st, FNT_E_CORRUPT, "%s: calls segment without field %u",
                       seg->full_path, tlFields[k]);
      }
      rc = fnt_segment_read_chunk(x->st, seg, rg, col, &x->scratch, &x->col[k]);
      if( rc ) return rc;
      if( fnt_ints_init(&x->cur[k], col->encoding, x->col[k].data, x->col[k].len,
                        n, limit) ){
        return tlLodCorrupt(x, seg, rg);
      }
    }
    x->loaded = rg+1;
  }
  if( fnt_ints_seek(&x->cur[TL_THR], b->row, 0, 0)
   || fnt_ints_seek(&x->cur[TL_FN], b->row, 0, 0)
   || fnt_ints_seek(&x->cur[TL_STA], b->row, (size_t)b->off[0], (uint64_t)b->first)
   || fnt_ints_seek(&x->cur[TL_CID], b->row, (size_t)b->off[1], (uint64_t)b->call_id)
   || fnt_ints_seek(&x->cur[TL_DUR], b->row, (size_t)b->off[2], 0) ){
    return tlLodCorrupt(x, seg, rg);
  }
  {
    fnt_ints *cur[TL_NCOL];
    for(k=0; k<TL_NCOL; k++) cur[k] = &x->cur[k];
    if( fnt_ints_read_many(cur, TL_NCOL, m, v) ) return tlLodCorrupt(x, seg, rg);
  }
  /* The block's bounds are checked against its rows: a place that is off
  ** shows here, not as a wrong count. */
  if( (int64_t)v[TL_STA][0]!=b->first || (int64_t)v[TL_STA][m-1]!=b->last
   || (int64_t)v[TL_CID][0]!=b->call_id ){
    return tlLodCorrupt(x, seg, rg);
  }
  for(i=0; i<m; i++) v[TL_DUR][i] = (uint64_t)fnt_unzigzag(v[TL_DUR][i]);
  return tlRows(x, seg, threadIx, v[TL_THR], v[TL_CID], v[TL_STA],
                v[TL_DUR], v[TL_FN], 0, m);
}

/* The entries of the block (or group) of row group rg the iterator is at,
** all of whose calls start in bucket bk, added to their cells.
** @return FNT_OK, FNT_E_NOMEM, or FNT_E_CORRUPT (tlLodCorrupt). */
static int tlLodEntries(tl_ctx *x, const fnt_segment *seg, uint32_t rg,
                        fnt_lod_iter *it, int64_t bk, int64_t threadIx){
  fnt_lod_entry e;
  int r, rc;
  while( (r = fnt_lod_next_entry(it, &e))==1 ){
    if( threadIx>=0 && (int64_t)e.thread!=threadIx ) continue;
    rc = tlAdd(x, seg, e.thread, bk, e.calls, e.dur, e.call_id, e.start, e.fn);
    if( rc ) return rc;
  }
  return r<0 ? tlLodCorrupt(x, seg, rg) : FNT_OK;
}

/* 1 when every start in [first, last] lies in one bucket of the window,
** *bk. */
static int tlOneBucket(tl_ctx *x, int64_t first, int64_t last, int64_t *bk){
  if( first<x->t0 || last>=x->t1 ) return 0;
  *bk = tlBucket(x, first);
  return *bk==tlBucket(x, last);
}

/* A group read through its level of detail: a group, or else a block,
** whose calls all start in one bucket adds its per-thread entries; the
** blocks across an edge are read.  The iterator's -1 (a malformed chunk)
** is kept apart from the store's codes (FNT_E_IO is -1 too). */
static int tlGroupLod(tl_ctx *x, const fnt_segment *seg, uint32_t rg,
                      int64_t threadIx){
  int64_t durMax = seg->crgs[rg].dur_max>0 ? seg->crgs[rg].dur_max : 0;
  fnt_lod_iter it;
  fnt_lod_block b;
  int64_t bk;
  int r, rc;
  r = fnt_lod_group(&x->lod, seg, rg, &it, &b);
  if( r<0 ) return tlLodCorrupt(x, seg, rg);
  if( r==1 ){
    if( tlOneBucket(x, b.first, b.last, &bk) ){
      return tlLodEntries(x, seg, rg, &it, bk, threadIx);   /* no block read */
    }
    if( fnt_lod_skip_entries(&it) ) return tlLodCorrupt(x, seg, rg);
  }
  while( (r = fnt_lod_next_block(&it, &b))==1 ){
    if( b.first>=x->t1 ) return FNT_OK;     /* blocks come by start */
    if( b.last<x->t0 && (uint64_t)x->t0 - (uint64_t)b.last>=(uint64_t)durMax ){
      r = fnt_lod_skip_entries(&it);        /* every call ends by t0 */
    }else if( !tlOneBucket(x, b.first, b.last, &bk) ){
      if( (r = fnt_lod_skip_entries(&it))!=0 ) break;
      rc = tlBlockRows(x, seg, rg, &b, threadIx);
      if( rc ) return rc;
    }else{
      rc = tlLodEntries(x, seg, rg, &it, bk, threadIx);
      if( rc ) return rc;
    }
    if( r<0 ) break;
  }
  return r<0 ? tlLodCorrupt(x, seg, rg) : FNT_OK;
}

/* 1 when row group rg is read through the level of detail: the file has
** one, and the group holds at least FNT_LOD_ROWS rows per bucket (it
** starts over (t_max - t_min), about): blocks then mostly lie in one. */
static int tlUseLod(const tl_ctx *x, const fnt_segment *seg, uint32_t rg){
  const fnt_seg_rg *r = &seg->rgs[rg];
  uint64_t span = (uint64_t)r->t_max - (uint64_t)r->t_min;
  return seg->has_lod && r->t_max>r->t_min
      && (double)r->nrows*(double)x->w>=(double)FNT_LOD_ROWS*(double)span;
}

/* fnt_calls_visit's group: one row group of calls. */
static int tlGroup(void *ctx, const fnt_segment *seg, uint32_t rg,
                   int64_t threadIx, uint32_t *fnids){
  tl_ctx *x = ctx;
  int rc = tlGroupStart(x, seg, rg);
  (void)fnids;                /* interned when the rows are made (tlFnid) */
  if( rc || tlHold(x, seg)==UINT32_MAX ) return fnt_err(x->st, FNT_E_NOMEM, "out of memory");
  if( tlUseLod(x, seg, rg) ){
    if( x->lod.serial!=seg->serial ){
      rc = fnt_lod_load(x->st, seg, &x->scratch, &x->lod);
      if( rc ) return rc;
    }
    return tlGroupLod(x, seg, rg, threadIx);
  }
  return tlGroupRows(x, seg, rg, threadIx);
}

/* A run whose calls are stored: every calls file, the tail's open rows
** too. */
static int tlStored(tl_ctx *x, const fnt_run_calls *files){
  fnt_calls_visit v;
  memset(&v, 0, sizeof(v));
  v.t0 = x->t0;
  v.t1 = x->t1;
  v.thread = x->thread;
  v.group = tlGroup;
  v.ctx = x;
  if( fnt_calls_rows_alloc(&x->g) ) return FNT_E_NOMEM;
  return fnt_run_calls_visit(x->st, files, &v);
}

/* A run whose calls are derived when read (format 1): the calls scan. */
static int tlScan(tl_ctx *x, fnt_snapshot *snap, const char *run_id){
  fnt_call_predicate p;
  fnt_calls *sc = 0;
  const fnt_call *c;
  int rc;
  /* The scan's overlap, start <= t1-1 AND end >= t0, holds both the calls
  ** starting in [t0, t1) and those running at t0; tlPlace is exact. */
  fnt_call_predicate_init(&p);
  p.run_ids = &run_id;
  p.n_run_ids = 1;
  p.thread = x->thread;
  p.t0 = x->t0;
  p.t1 = x->t1-1;
  rc = fnt_calls_open(snap, &p, &sc);
  while( rc==FNT_OK && (rc = fnt_calls_next(sc, &c))==1 ){
    int64_t b;
    tl_lane *l;
    tl_cell *s;
    rc = FNT_OK;
    if( !tlPlace(x, c->start_ns, c->end_ns, &b) ) continue;
    l = mapLane(&x->m, c->thread, c->depth);
    s = l ? laneCell(l, b) : 0;
    if( s==0 ){
      rc = FNT_E_NOMEM;
      break;
    }
    if( !cellAdd(s, b, 1, c->dur_ns, c->call_id, c->start_ns) ) continue;
    s->seg = UINT32_MAX;
    if( fnt_fntab_intern(&x->t->tab, c->symbol, c->stable_id, &s->fn) ){
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
      tl_lane *l = &x.m.lanes[i];
      for(j=0; j<l->n; j++){
        const tl_cell *c = &l->c[j];
        fnt_timeline_row *r = &x.t->rows[x.t->n++];
        uint32_t fn;
        r->thread = l->thread;
        r->depth = l->depth;
        r->bucket = c->bucket;
        r->call_id = c->call_id;
        r->start_ns = c->start;
        r->dur_ns = c->dur;
        rc = tlFnid(&x, c, &fn);
        if( rc ) goto done;
        r->key = x.t->tab.keys[x.t->tab.key[fn]];
        r->symbol = x.t->tab.fn[fn].symbol;
        r->calls = c->calls;
      }
      /* a lane's cells go as its rows come: the answer is held once */
      fnt_free(l->c);
      l->c = 0;
      l->n = l->cap = 0;
    }
  }
done:
  mapFree(&x.m);
  fnt_free(x.lane);
  fnt_free(x.gen);
  fnt_free(x.g.thr);
  fnt_buf_free(&x.scratch);
  fnt_buf_free(&x.raw);
  fnt_lod_clear(&x.lod);
  for(i=0; i<TL_NCOL; i++) fnt_buf_free(&x.col[i]);
  for(i=0; i<x.nseg; i++){
    fnt_free(x.segs[i].fnid);
    if( x.segs[i].seg ) fnt_segment_release(st, x.segs[i].seg);
  }
  fnt_free(x.segs);
  fnt_free(x.dirty);
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
