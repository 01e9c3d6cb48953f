/*
** test_timeline_lod.c -- fnt_timeline through a calls file's level of
** detail (FORMAT.md), compared with SPEC §8 applied here to every call
** of the run as the calls scan gives it.
**
** The run is made so that the file's layout is known: three threads take
** turns, call k of the run (k = 0, 1, ...) starting at 10k ns on thread
** k % 3 at depth 0, so that row r of the depth-0 row groups starts at
** 10r ns and a block of 128 rows spans [1280b, 1280b + 1270].  Durations
** repeat (3, 4, 5 ns), so a bucket's longest call ties with others,
** across blocks and row groups, and goes to the smallest call_id; every
** fourth call has a child (depth 1, fewer rows a group).  The last call
** of each thread is left open: the tail's open rows.  Windows then put
** bucket edges on block edges, inside blocks, on row group edges, before
** and after the run, with a bucket per block, several, or many per block.
*/
#include <stdint.h>

#include "util_test.h"

#define NCALL 6000               /* depth-0 calls; 6000 rows > 5 row groups */

static const fnt_function fns[] = {
  {"f0", NULL, 1}, {"f1", NULL, 1}, {"f2", "c acme * f2().", 1}, {"kid", NULL, 1}
};

/* The run's events, in time order; *n their count. */
static fnt_event *makeEvents(size_t *n){
  fnt_event *ev = malloc(4*(size_t)NCALL*sizeof(fnt_event));
  size_t k, m = 0;
  for(k=0; k<NCALL; k++){
    int64_t t = 10*(int64_t)k, dur = 3 + (int64_t)(k*7 % 3);
    uint64_t th = 1 + k%3;
    int open = k+3>=NCALL;
    ev[m++] = (fnt_event){0, t, th, (uint32_t)(k%3), FNT_KIND_ENTRY};
    if( k%4==0 && !open ){
      ev[m++] = (fnt_event){0, t+1, th, 3, FNT_KIND_ENTRY};
      ev[m++] = (fnt_event){0, t+2, th, 3, FNT_KIND_EXIT};
    }
    if( !open ) ev[m++] = (fnt_event){0, t+dur, th, (uint32_t)(k%3), FNT_KIND_EXIT};
  }
  /* Exits come after later entries of other threads: sort by time (the
  ** order of one thread's events is kept: their times ascend). */
  for(k=1; k<m; k++){
    fnt_event e = ev[k];
    size_t j = k;
    while( j>0 && ev[j-1].t_ns>e.t_ns ){ ev[j] = ev[j-1]; j--; }
    ev[j] = e;
  }
  for(k=0; k<m; k++) ev[k].seq_no = (int64_t)k;
  *n = m;
  return ev;
}

typedef struct ref_call { int64_t thread, depth, call_id, start, end, dur; const char *sym; } ref_call;

/* Every call of run "r" through the calls scan. */
static ref_call *allCalls(fnt_store *st, fnt_snapshot *snap, size_t *n){
  fnt_call_predicate p;
  fnt_calls *sc = 0;
  const fnt_call *c;
  const char *run = "r";
  ref_call *a = malloc(8*(size_t)NCALL*sizeof(ref_call));
  size_t m = 0;
  fnt_call_predicate_init(&p);
  p.run_ids = &run;
  p.n_run_ids = 1;
  CHECK_RC(st, fnt_calls_open(snap, &p, &sc), FNT_OK);
  while( fnt_calls_next(sc, &c)==1 ){
    ref_call r = {c->thread, c->depth, c->call_id, c->start_ns, c->end_ns, c->dur_ns, c->symbol};
    a[m++] = r;
  }
  fnt_calls_close(sc);
  *n = m;
  return a;
}

/* SPEC §8 word for word: is row r of the timeline what the calls say? */
static int sameAsSpec(const ref_call *a, size_t n, int64_t t0, int64_t t1,
                      int64_t buckets, const fnt_timeline *t){
  uint64_t span = (uint64_t)t1 - (uint64_t)t0;
  int64_t w = (int64_t)(span/(uint64_t)buckets + (span%(uint64_t)buckets!=0));
  const fnt_timeline_row *rows = fnt_timeline_rows(t);
  size_t nrow = fnt_timeline_count(t), i, j, cells = 0;
  if( w<1 ) w = 1;
  for(i=0; i<nrow; i++){
    const fnt_timeline_row *r = &rows[i];
    const ref_call *best = 0;
    int64_t calls = 0;
    for(j=0; j<n; j++){
      const ref_call *c = &a[j];
      int64_t b;
      if( c->thread!=r->thread || c->depth!=r->depth ) continue;
      if( c->start>=t0 && c->start<t1 ) b = (c->start - t0)/w;
      else if( c->start<t0 && c->end>t0 ) b = -1;
      else continue;
      if( b!=r->bucket ) continue;
      calls++;
      if( best==0 || c->dur>best->dur || (c->dur==best->dur && c->call_id<best->call_id) ) best = c;
    }
    if( best==0 || r->call_id!=best->call_id || r->start_ns!=best->start
     || r->dur_ns!=best->dur || r->calls!=(r->bucket<0 ? 1 : calls)
     || strcmp(r->symbol, best->sym)!=0 ){
      fprintf(stderr, "window [%lld, %lld) / %lld: row %zu (thread %lld depth %lld "
              "bucket %lld call %lld * %lld) differs\n", (long long)t0, (long long)t1,
              (long long)buckets, i, (long long)r->thread, (long long)r->depth,
              (long long)r->bucket, (long long)r->call_id, (long long)r->calls);
      return 0;
    }
    if( i>0 && (rows[i-1].thread>r->thread || (rows[i-1].thread==r->thread
        && (rows[i-1].depth>r->depth || (rows[i-1].depth==r->depth
            && rows[i-1].bucket>=r->bucket)))) ){
      fprintf(stderr, "rows out of order at %zu\n", i);
      return 0;
    }
  }
  /* And no cell left out: every drawn call is in a row's bucket. */
  for(j=0; j<n; j++){
    const ref_call *c = &a[j];
    int64_t b;
    if( c->start>=t0 && c->start<t1 ) b = (c->start - t0)/w;
    else if( c->start<t0 && c->end>t0 ) b = -1;
    else continue;
    for(i=0; i<nrow && !(rows[i].thread==c->thread && rows[i].depth==c->depth
                         && rows[i].bucket==b); i++){}
    if( i==nrow ){
      fprintf(stderr, "window [%lld, %lld) / %lld: call %lld has no row\n",
              (long long)t0, (long long)t1, (long long)buckets, (long long)c->call_id);
      return 0;
    }
    cells++;
  }
  return 1;
}

static void check(fnt_store *st, fnt_snapshot *snap, const ref_call *a, size_t n,
                  int64_t t0, int64_t t1, int64_t buckets, int64_t thread){
  fnt_timeline *t = 0;
  CHECK_RC(st, fnt_timeline_compute(snap, "r", t0, t1, buckets, thread, &t), FNT_OK);
  if( thread<0 ){
    CHECK(sameAsSpec(a, n, t0, t1, buckets, t));
  }else{
    /* Thread `thread`'s rows are those of every thread's timeline. */
    fnt_timeline *all = 0;
    size_t i, k = 0;
    CHECK_RC(st, fnt_timeline_compute(snap, "r", t0, t1, buckets, -1, &all), FNT_OK);
    for(i=0; i<fnt_timeline_count(all); i++){
      const fnt_timeline_row *r = &fnt_timeline_rows(all)[i], *q;
      if( r->thread!=thread ) continue;
      if( k>=fnt_timeline_count(t) ){ k++; continue; }
      q = &fnt_timeline_rows(t)[k++];
      CHECK(q->depth==r->depth && q->bucket==r->bucket && q->call_id==r->call_id
            && q->calls==r->calls && strcmp(q->symbol, r->symbol)==0);
    }
    CHECK_EQ_INT(k, fnt_timeline_count(t));
    fnt_timeline_free(all);
  }
  fnt_timeline_free(t);
}

int main(void){
  const char *dir = t_scratch_dir("timeline-lod");
  fnt_store *st = 0;
  fnt_snapshot *snap = 0;
  fnt_chunk c;
  fnt_event *ev;
  ref_call *calls;
  size_t nev, n;
  int64_t end = 10*NCALL + 10, b;

  ev = makeEvents(&nev);
  CHECK_RC(st, fnt_open(dir, FNT_OPEN_CREATE, &st), FNT_OK);
  memset(&c, 0, sizeof(c));
  c.repo = "acme/lod"; c.run_id = "r"; c.ts_micros = -1;
  c.target = "t"; c.source = "xray-basic"; c.chunk = 0; c.chunks = 1;
  c.total_events = (int64_t)nev; c.threads = -1;
  c.functions = fns; c.n_functions = sizeof(fns)/sizeof(fns[0]);
  c.events = ev; c.n_events = nev;
  CHECK_RC(st, fnt_file_chunk(st, &c), 1);
  CHECK_RC(st, fnt_snapshot_current(st, &snap), FNT_OK);
  calls = allCalls(st, snap, &n);
  CHECK(n>(size_t)NCALL);

  /* The whole run: one bucket (every block whole), a few, a bucket per
  ** block or per two (edges on block edges: 1280 ns), per row group
  ** (10240 ns), many buckets a block (every block read by its rows). */
  check(st, snap, calls, n, 0, end, 1, -1);
  check(st, snap, calls, n, 0, end, 3, -1);
  check(st, snap, calls, n, 0, 1280*47, 47, -1);
  check(st, snap, calls, n, 0, 2560*23, 23, -1);
  check(st, snap, calls, n, 0, 10240*6, 6, -1);
  check(st, snap, calls, n, 0, end, 2000, -1);
  /* Edges one row before, after, and inside blocks; a window starting
  ** inside the run (calls running at t0: bucket -1) and ending in it. */
  for(b=-1; b<=1; b++){
    check(st, snap, calls, n, 1280*3 + 10*b, 1280*3 + 10*b + 1280*20, 20, -1);
    check(st, snap, calls, n, 1280*3 + 10*b + 5, 1280*3 + 10*b + 5 + 2560*9, 9, -1);
    check(st, snap, calls, n, 1280*3 + 10*b, 1280*3 + 10*b + 2560*10, 10, -1);
  }
  check(st, snap, calls, n, 10240 - 1, 10240*4 + 7, 5, -1);
  check(st, snap, calls, n, 12345, 45678, 2, -1);
  /* The tail's open rows (the last calls of each thread) in the last bucket. */
  check(st, snap, calls, n, 0, end + 1000, 4, -1);
  check(st, snap, calls, n, end - 100, end + 1000, 1, -1);
  /* Before and after the run; one thread. */
  check(st, snap, calls, n, -5000, -1, 3, -1);
  check(st, snap, calls, n, end + 1000, end + 2000, 3, -1);
  check(st, snap, calls, n, 0, end, 7, 2);
  check(st, snap, calls, n, 1280*5 + 3, 1280*30, 4, 3);

  free(calls);
  free(ev);
  fnt_snapshot_release(snap);
  fnt_close(st);
  t_remove_tree(dir);
  return t_finish("test_timeline_lod");
}
