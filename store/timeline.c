/*
** timeline.c -- fnt_timeline (SPEC §8): what a viewer draws for [t0, t1)
** at a given width.  Per (thread, depth, bucket) the longest call starting
** in the bucket (ties: the smallest call_id) and how many calls the bucket
** holds; per (thread, depth) the call still running at t0 as bucket -1.
**
** The calls of the window come from one calls scan (its time overlap
** prunes files and row groups); they are reduced as they come into a hash
** table of (thread, depth, bucket) slots, so memory is the size of the
** answer, not of the window.
*/
#include <stdlib.h>
#include <string.h>

#include "calls.h"

/* One (thread, depth, bucket) of the answer while it is being reduced. */
typedef struct tl_slot {
  int64_t depth, bucket, call_id, start, dur, calls;
  uint32_t thread, fn;      /* fn: fnt_fntab id of the best call */
  int used;
} tl_slot;

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

/* The slots, open addressing over a power-of-two table. */
typedef struct tl_map {
  tl_slot *a;
  size_t n, mask;
} tl_map;

static uint64_t slotHash(uint32_t thread, int64_t depth, int64_t bucket){
  uint64_t h = (uint64_t)thread*0x9E3779B97F4A7C15ull;
  h ^= (uint64_t)depth*0xC2B2AE3D27D4EB4Full + (h<<6) + (h>>2);
  h ^= (uint64_t)bucket*0x165667B19E3779F9ull + (h<<6) + (h>>2);
  return h ^ (h>>29);
}

static int mapGrow(tl_map *m){
  size_t cap = m->a ? (m->mask+1)*2 : 1024, i;
  tl_slot *a = fnt_calloc(cap, sizeof(tl_slot));
  if( a==0 ) return FNT_E_NOMEM;
  for(i=0; m->a && i<=m->mask; i++){
    tl_slot *s = &m->a[i];
    size_t j;
    if( !s->used ) continue;
    for(j=slotHash(s->thread, s->depth, s->bucket)&(cap-1); a[j].used; j=(j+1)&(cap-1)){}
    a[j] = *s;
  }
  fnt_free(m->a);
  m->a = a;
  m->mask = cap-1;
  return FNT_OK;
}

/* The slot of (thread, depth, bucket), made (unused fields 0) when new. */
static tl_slot *mapSlot(tl_map *m, uint32_t thread, int64_t depth, int64_t bucket){
  size_t j;
  if( m->a==0 || (m->n+1)*2>m->mask+1 ){
    if( mapGrow(m) ) return 0;
  }
  for(j=slotHash(thread, depth, bucket)&m->mask; m->a[j].used; j=(j+1)&m->mask){
    tl_slot *s = &m->a[j];
    if( s->thread==thread && s->depth==depth && s->bucket==bucket ) return s;
  }
  m->a[j].used = 1;
  m->a[j].thread = thread;
  m->a[j].depth = depth;
  m->a[j].bucket = bucket;
  m->n++;
  return &m->a[j];
}

static int cmpRow(const void *a, const void *b){
  const fnt_timeline_row *x = a, *y = b;
  if( x->thread!=y->thread ) return x->thread<y->thread ? -1 : 1;
  if( x->depth!=y->depth ) return x->depth<y->depth ? -1 : 1;
  return x->bucket<y->bucket ? -1 : x->bucket>y->bucket;
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

int fnt_timeline_compute(fnt_snapshot *snap, const char *run_id, int64_t t0,
                         int64_t t1, int64_t buckets, int64_t thread,
                         fnt_timeline **out){
  fnt_store *st;
  fnt_timeline *t = 0;
  fnt_call_predicate p;
  fnt_calls *sc = 0;
  const fnt_call *c;
  tl_map m = {0, 0, 0};
  uint64_t w;
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
  /* w = max(1, ceil((t1 - t0) / buckets)), in unsigned arithmetic: the
  ** span of any int64 window fits a uint64. */
  {
    uint64_t span = (uint64_t)t1 - (uint64_t)t0, nb = (uint64_t)buckets;
    w = span/nb + (span%nb!=0);
    if( w==0 ) w = 1;
  }
  t = fnt_calloc(1, sizeof(*t));
  if( t==0 ) return fnt_err(st, FNT_E_NOMEM, "out of memory");
  /* The scan's overlap, start <= t1-1 AND end >= t0, holds both the calls
  ** starting in [t0, t1) and those running at t0; the rest is exact below. */
  fnt_call_predicate_init(&p);
  p.run_ids = &run_id;
  p.n_run_ids = 1;
  p.thread = thread;
  p.t0 = t0;
  p.t1 = t1-1;
  rc = fnt_calls_open(snap, &p, &sc);
  while( rc==FNT_OK && (rc = fnt_calls_next(sc, &c))==1 ){
    int64_t bucket;
    tl_slot *s;
    rc = FNT_OK;
    if( c->start_ns>=t0 ){
      bucket = (int64_t)(((uint64_t)c->start_ns - (uint64_t)t0)/w);
    }else if( c->end_ns>t0 ){
      bucket = -1;
    }else{
      continue;
    }
    s = mapSlot(&m, c->thread, c->depth, bucket);
    if( s==0 ) goto nomem;
    if( s->calls==0 || c->dur_ns>s->dur || (c->dur_ns==s->dur && c->call_id<s->call_id) ){
      if( fnt_fntab_intern(&t->tab, c->symbol, c->stable_id, &s->fn) ) goto nomem;
      s->call_id = c->call_id;
      s->start = c->start_ns;
      s->dur = c->dur_ns;
    }
    /* Bucket -1 stands for one call (SPEC §8), whatever else ran at t0. */
    s->calls = bucket<0 ? 1 : s->calls+1;
  }
  if( rc<0 ) goto done;
  t->rows = fnt_calloc(m.n+1, sizeof(fnt_timeline_row));
  if( t->rows==0 ) goto nomem;
  for(i=0; m.a && i<=m.mask; i++){
    const tl_slot *s = &m.a[i];
    fnt_timeline_row *r;
    if( !s->used ) continue;
    r = &t->rows[t->n++];
    r->thread = s->thread;
    r->depth = s->depth;
    r->bucket = s->bucket;
    r->call_id = s->call_id;
    r->start_ns = s->start;
    r->dur_ns = s->dur;
    r->key = t->tab.keys[t->tab.key[s->fn]];
    r->symbol = t->tab.fn[s->fn].symbol;
    r->calls = s->calls;
  }
  if( t->n>1 ) qsort(t->rows, t->n, sizeof(fnt_timeline_row), cmpRow);
  rc = FNT_OK;
  goto done;
nomem:
  rc = fnt_err(st, FNT_E_NOMEM, "run '%s': out of memory drawing its timeline", run_id);
done:
  fnt_calls_close(sc);
  fnt_free(m.a);
  if( rc ){ fnt_timeline_free(t); return rc; }
  *out = t;
  return FNT_OK;
}
