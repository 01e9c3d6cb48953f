/*
** test_calls_api.c -- the calls C API (fnt_calls_open with every predicate
** field, fnt_account_compute, fnt_callgraph_compute, fnt_flame_compute) on
** a run worked out by hand, the one test_calls_cli.sh uses; times in
** µs x 1000:
**
**   thread 1: main [0,100] { f [10,60] { f [20,50] { f [30,40] } } }
**   thread 2: main [0,60] { a [10,20] tail_exit, b [20,50] { c [30,50]
**             { d [35,50] } } }   (b's exit unwinds c and d)
**
** filed twice, as runs "r" (one chunk) and "s" (two chunks, the second
** filed first).  SQL reaches the same calls through ext/; test_calls.py
** checks those against a reference.
*/
#include <stdint.h>

#include "util_test.h"

static const fnt_function fns[] = {
  {"main", "c acme * main().", 1}, {"f", NULL, 1}, {"a", NULL, 1},
  {"b", "", 1}, {"c", NULL, 1}, {"d", NULL, 0}
};
#define E(th, seq, t, fn, kind) {(seq), (t), (th), (fn), FNT_KIND_##kind}
static const fnt_event evs[] = {
  E(1, 0, 0, 0, ENTRY), E(1, 1, 10000, 1, ENTRY), E(1, 2, 20000, 1, ENTRY),
  E(1, 3, 30000, 1, ENTRY), E(1, 4, 40000, 1, EXIT), E(1, 5, 50000, 1, EXIT),
  E(1, 6, 60000, 1, EXIT), E(1, 7, 100000, 0, EXIT),
  E(2, 100, 0, 0, ENTRY), E(2, 101, 10000, 2, ENTRY), E(2, 102, 20000, 2, TAIL_EXIT),
  E(2, 103, 20000, 3, ENTRY), E(2, 104, 30000, 4, ENTRY), E(2, 105, 35000, 5, ENTRY),
  E(2, 106, 50000, 3, EXIT), E(2, 107, 60000, 0, EXIT),
};
#define NEV (sizeof(evs)/sizeof(evs[0]))

static void fileRun(fnt_store *st, const char *run, size_t from, size_t to,
                    int64_t chunk, int64_t chunks){
  fnt_chunk c;
  memset(&c, 0, sizeof(c));
  c.repo = "acme/api"; c.commit = "c0ffee"; c.run_id = run; c.ts_micros = -1;
  c.target = "t"; c.source = "xray-basic"; c.chunk = chunk; c.chunks = chunks;
  c.total_events = (int64_t)NEV; c.threads = -1;
  c.functions = fns; c.n_functions = sizeof(fns)/sizeof(fns[0]);
  c.events = evs + from; c.n_events = to - from;
  CHECK_RC(st, fnt_file_chunk(st, &c), 1);
}

/* The columns a block gives, in callText's order. */
static const int blockCol[8] = {
  FNT_CALL_THREAD, FNT_CALL_CALL_ID, FNT_CALL_PARENT_ID, FNT_CALL_DEPTH,
  FNT_CALL_START_NS, FNT_CALL_DUR_NS, FNT_CALL_SELF_NS, FNT_CALL_SYMBOL
};

/* One call's fields (those a block gives too) appended to out, those of
** columns not in `cols` (block_cols: 0 all) as "-". */
static void callText(char *out, size_t n, size_t *used, uint64_t cols, const char *run,
                     const int64_t v[7], const char *symbol){
  int k;
  *used += (size_t)snprintf(out+*used, n-*used, "%s", run);
  for(k=0; k<8 && *used<n; k++){
    if( cols && (cols & FNT_CALL_COL(blockCol[k]))==0 ) *used += (size_t)snprintf(out+*used, n-*used, ":-");
    else if( k<7 ) *used += (size_t)snprintf(out+*used, n-*used, ":%lld", (long long)v[k]);
    else *used += (size_t)snprintf(out+*used, n-*used, ":%s", symbol);
  }
  if( *used<n ) *used += (size_t)snprintf(out+*used, n-*used, "\n");
  if( *used>=n ) *used = n-1;
}

/* Row i of block b into v (the arrays asked for: the others must be NULL). */
static void blockRow(const fnt_call_block *b, size_t i, uint64_t cols, int64_t v[7]){
  const int64_t *a[7];
  int k;
  a[0] = b->thread; a[1] = b->call_id; a[2] = b->parent_id; a[3] = b->depth;
  a[4] = b->start_ns; a[5] = b->dur_ns; a[6] = b->self_ns;
  for(k=0; k<7; k++){
    int asked = cols==0 || (cols & FNT_CALL_COL(blockCol[k]));
    CHECK(asked ? a[k]!=0 : a[k]==0);
    v[k] = a[k] ? a[k][i] : 0;
  }
  CHECK((cols==0 || (cols & FNT_CALL_COL(FNT_CALL_SYMBOL))) ? b->fn && b->fn_symbol
                                                   : !b->fn && !b->fn_symbol);
}

/* The same scan read by fnt_calls_next_block() asking for `cols`: the same
** calls, fields and order as by rows; an ordered scan, or one read by
** rows, refused. */
static void checkBlockCols(fnt_store *st, fnt_snapshot *snap, const fnt_call_predicate *p0,
                           uint64_t cols){
  static char byRow[16384], byBlock[16384];
  fnt_call_predicate p = *p0;
  size_t nr = 0, nb = 0, i;
  fnt_calls *sc = 0;
  const fnt_call *c;
  fnt_call_block b;
  int64_t v[7];
  int rc;
  byRow[0] = byBlock[0] = 0;
  p.block_cols = cols;
  CHECK_RC(st, fnt_calls_open(snap, &p, &sc), FNT_OK);
  while( (rc = fnt_calls_next(sc, &c))==1 ){
    v[0] = c->thread; v[1] = c->call_id; v[2] = c->parent_id; v[3] = c->depth;
    v[4] = c->start_ns; v[5] = c->dur_ns; v[6] = c->self_ns;
    callText(byRow, sizeof(byRow), &nr, cols, c->run_id, v, c->symbol);
  }
  CHECK_EQ_INT(rc, 0);
  CHECK_EQ_INT(fnt_calls_next_block(sc, &b), FNT_E_MISUSE);
  fnt_calls_close(sc);
  sc = 0;
  CHECK_RC(st, fnt_calls_open(snap, &p, &sc), FNT_OK);
  if( p.ordered ){
    CHECK_EQ_INT(fnt_calls_next_block(sc, &b), FNT_E_MISUSE);
    fnt_calls_close(sc);
    return;
  }
  while( (rc = fnt_calls_next_block(sc, &b))==1 ){
    CHECK(b.n>0);
    for(i=0; i<b.n; i++){
      blockRow(&b, i, cols, v);
      CHECK(!b.fn || (b.fn[i]>=0 && (size_t)b.fn[i]<b.n_fn));
      callText(byBlock, sizeof(byBlock), &nb, cols, b.run_id, v,
               b.fn ? b.fn_symbol[b.fn[i]] : "");
    }
  }
  CHECK_EQ_INT(rc, 0);
  CHECK_EQ_INT(fnt_calls_next(sc, &c), FNT_E_MISUSE);
  fnt_calls_close(sc);
  CHECK_STR(byBlock, byRow);
}

/* checkBlockCols with every column, each column alone, and the columns the
** exports ask for (chrome: all but parent_id; speedscope: all but self_ns,
** and thread and times alone). */
static void checkBlocks(fnt_store *st, fnt_snapshot *snap, const fnt_call_predicate *p){
  uint64_t all = 0;
  size_t k;
  checkBlockCols(st, snap, p, 0);
  for(k=0; k<8; k++){
    checkBlockCols(st, snap, p, FNT_CALL_COL(blockCol[k]));
    all |= FNT_CALL_COL(blockCol[k]);
  }
  checkBlockCols(st, snap, p, all & ~FNT_CALL_COL(FNT_CALL_PARENT_ID));
  checkBlockCols(st, snap, p, all & ~FNT_CALL_COL(FNT_CALL_SELF_NS));
  checkBlockCols(st, snap, p, FNT_CALL_COL(FNT_CALL_THREAD) | FNT_CALL_COL(FNT_CALL_START_NS)
                              | FNT_CALL_COL(FNT_CALL_DUR_NS));
  checkBlockCols(st, snap, p, FNT_CALL_COL(FNT_CALL_KEY));   /* not a block's: none given */
}

/* The calls a predicate gives, as "run:call_id" joined by spaces (in the
** scan's order), their count returned; the block reader checked against
** it on the way. */
static int scan(fnt_store *st, fnt_snapshot *snap, const fnt_call_predicate *p,
                char *out, size_t n){
  fnt_calls *sc = 0;
  const fnt_call *c;
  int rc, k = 0;
  size_t used = 0;
  out[0] = 0;
  checkBlocks(st, snap, p);
  rc = fnt_calls_open(snap, p, &sc);
  CHECK_RC(st, rc, FNT_OK);
  if( rc ) return -1;
  while( (rc = fnt_calls_next(sc, &c))==1 ){
    used += (size_t)snprintf(out+used, n-used, "%s%s:%lld", k++ ? " " : "", c->run_id,
                             (long long)c->call_id);
    if( used>=n ) used = n-1;
  }
  CHECK_EQ_INT(rc, 0);
  fnt_calls_close(sc);
  return k;
}

/* Sorted copy of the space-separated words of s (scan order is free where
** the predicate does not order). */
static int cmpStr(const void *a, const void *b){
  return strcmp(*(char *const*)a, *(char *const*)b);
}
static const char *sorted(const char *s){
  static char out[4096];
  char buf[4096], *w[256], *tok, *save = 0;
  int n = 0, i;
  size_t used = 0;
  snprintf(buf, sizeof(buf), "%s", s);
  for(tok = strtok_r(buf, " ", &save); tok && n<256; tok = strtok_r(0, " ", &save)) w[n++] = tok;
  qsort(w, (size_t)n, sizeof(char*), cmpStr);
  out[0] = 0;
  for(i=0; i<n; i++) used += (size_t)snprintf(out+used, sizeof(out)-used, "%s%s", i ? " " : "", w[i]);
  return out;
}

int main(void){
  const char *dir = t_scratch_dir("calls_api");
  const char *runR[] = {"r"}, *runRS[] = {"s", "r"}, *runNone[] = {"nope"};
  fnt_store *st = 0;
  fnt_snapshot *snap = 0;
  fnt_call_predicate p;
  fnt_calls *sc = 0;
  const fnt_call *c;
  char got[4096];
  size_t i;

  CHECK_STR(fnt_ended_by_name(FNT_ENDED_EXIT), "exit");
  CHECK_STR(fnt_ended_by_name(FNT_ENDED_TAIL_EXIT), "tail_exit");
  CHECK_STR(fnt_ended_by_name(FNT_ENDED_UNWOUND), "unwound");
  CHECK_STR(fnt_ended_by_name(FNT_ENDED_OPEN), "open");
  CHECK(fnt_ended_by_name(4)==NULL);

  CHECK_RC(st, fnt_open(dir, FNT_OPEN_CREATE, &st), FNT_OK);
  if( st==0 ) return 1;
  fileRun(st, "r", 0, NEV, 0, 1);
  fileRun(st, "s", 5, NEV, 1, 2);
  fileRun(st, "s", 0, 5, 0, 2);
  CHECK_RC(st, fnt_snapshot_current(st, &snap), FNT_OK);

  /* every column of one call: c, unwound by b's exit */
  fnt_call_predicate_init(&p);
  p.run_ids = runR; p.n_run_ids = 1; p.call_id = 104;
  CHECK_RC(st, fnt_calls_open(snap, &p, &sc), FNT_OK);
  CHECK_EQ_INT(fnt_calls_next(sc, &c), 1);
  CHECK_STR(c->repo, "acme/api"); CHECK_STR(c->commit, "c0ffee"); CHECK_STR(c->run_id, "r");
  CHECK_EQ_INT(c->thread, 2); CHECK_EQ_INT(c->call_id, 104); CHECK_EQ_INT(c->parent_id, 103);
  CHECK_EQ_INT(c->depth, 2); CHECK_EQ_INT(c->start_ns, 30000); CHECK_EQ_INT(c->end_ns, 50000);
  CHECK_EQ_INT(c->dur_ns, 20000); CHECK_EQ_INT(c->self_ns, 5000);
  CHECK_STR(c->key, "?c"); CHECK(c->stable_id==NULL); CHECK_STR(c->symbol, "c");
  CHECK_EQ_INT(c->ended_by, FNT_ENDED_UNWOUND); CHECK_EQ_INT(c->outermost, 1);
  CHECK_EQ_INT(fnt_calls_next(sc, &c), 0);
  fnt_calls_close(sc);

  /* main of thread 1: stable_id kept, no parent; a recursive f is not outermost */
  p.call_id = 0;
  CHECK_RC(st, fnt_calls_open(snap, &p, &sc), FNT_OK);
  CHECK_EQ_INT(fnt_calls_next(sc, &c), 1);
  CHECK_STR(c->key, "c acme * main()."); CHECK_STR(c->stable_id, "c acme * main().");
  CHECK_EQ_INT(c->parent_id, -1); CHECK_EQ_INT(c->depth, 0); CHECK_EQ_INT(c->self_ns, 50000);
  CHECK_EQ_INT(c->ended_by, FNT_ENDED_EXIT);
  fnt_calls_close(sc);
  p.call_id = 2;
  CHECK_RC(st, fnt_calls_open(snap, &p, &sc), FNT_OK);
  CHECK_EQ_INT(fnt_calls_next(sc, &c), 1);
  CHECK_EQ_INT(c->outermost, 0); CHECK_EQ_INT(c->self_ns, 20000);
  fnt_calls_close(sc);
  p.call_id = 101;
  CHECK_RC(st, fnt_calls_open(snap, &p, &sc), FNT_OK);
  CHECK_EQ_INT(fnt_calls_next(sc, &c), 1);
  CHECK_EQ_INT(c->ended_by, FNT_ENDED_TAIL_EXIT); CHECK_EQ_INT(c->end_ns, 20000);
  CHECK_STR(c->key, "?a");
  fnt_calls_close(sc);

  /* each predicate field */
  fnt_call_predicate_init(&p);
  p.run_ids = runR; p.n_run_ids = 1;
  CHECK_EQ_INT(scan(st, snap, &p, got, sizeof(got)), 9);
  p.parent_id = 103;
  scan(st, snap, &p, got, sizeof(got));
  CHECK_STR(got, "r:104");
  p.parent_id = 0;
  scan(st, snap, &p, got, sizeof(got));
  CHECK_STR(got, "r:1");
  p.parent_id = -1; p.depth_min = 2; p.depth_max = 3;
  scan(st, snap, &p, got, sizeof(got));
  CHECK_STR(sorted(got), "r:104 r:105 r:2 r:3");
  p.depth_min = 0; p.depth_max = INT64_MAX; p.dur_min = 30000;
  scan(st, snap, &p, got, sizeof(got));
  CHECK_STR(sorted(got), "r:0 r:1 r:100 r:103 r:2");
  p.dur_min = INT64_MIN; p.thread = 2;
  CHECK_EQ_INT(scan(st, snap, &p, got, sizeof(got)), 5);
  p.thread = -1; p.key = "?f";
  scan(st, snap, &p, got, sizeof(got));
  CHECK_STR(sorted(got), "r:1 r:2 r:3");
  p.key = "c acme * main().";
  scan(st, snap, &p, got, sizeof(got));
  CHECK_STR(sorted(got), "r:0 r:100");
  p.key = NULL;
  p.t0 = p.t1 = 35000;                         /* the stacks at 35 µs */
  scan(st, snap, &p, got, sizeof(got));
  CHECK_STR(sorted(got), "r:0 r:1 r:100 r:103 r:104 r:105 r:2 r:3");
  p.t0 = p.t1 = 20000;                         /* a ends and b starts at the instant */
  p.thread = 2;
  scan(st, snap, &p, got, sizeof(got));
  CHECK_STR(sorted(got), "r:100 r:101 r:103");
  p.thread = -1;
  p.t0 = 41000; p.t1 = 45000;                  /* a window */
  scan(st, snap, &p, got, sizeof(got));
  CHECK_STR(sorted(got), "r:0 r:1 r:100 r:103 r:104 r:105 r:2");
  p.t0 = 100001; p.t1 = INT64_MAX;
  CHECK_EQ_INT(scan(st, snap, &p, got, sizeof(got)), 0);
  p.t0 = INT64_MIN; p.t1 = INT64_MAX;
  p.ordered = 1;                               /* start_ns, then call_id */
  scan(st, snap, &p, got, sizeof(got));
  CHECK_STR(got, "r:0 r:100 r:1 r:101 r:2 r:103 r:3 r:104 r:105");
  p.limit = 3;
  scan(st, snap, &p, got, sizeof(got));
  CHECK_STR(got, "r:0 r:100 r:1");
  p.limit = 0;
  CHECK_EQ_INT(scan(st, snap, &p, got, sizeof(got)), 0);
  p.limit = -1; p.ordered = 0;
  p.run_ids = runRS; p.n_run_ids = 2;          /* two runs: run by run */
  CHECK_EQ_INT(scan(st, snap, &p, got, sizeof(got)), 18);
  CHECK(strstr(got, "s:104") && strstr(got, "r:104"));
  {
    const char *firstS = strstr(got, "s:"), *lastS = strrchr(got, 's');
    const char *firstR = strstr(got, "r:"), *lastR = strrchr(got, 'r');
    CHECK(firstS && firstR && (lastS < firstR || lastR < firstS));
  }
  p.run_ids = runNone; p.n_run_ids = 1;
  CHECK_EQ_INT(scan(st, snap, &p, got, sizeof(got)), 0);
  fnt_call_predicate_init(&p);                 /* every run */
  CHECK_EQ_INT(scan(st, snap, &p, got, sizeof(got)), 18);

  /* the run filed out of order has the same calls */
  {
    char r[4096], s[4096];
    fnt_call_predicate_init(&p);
    p.run_ids = runR; p.n_run_ids = 1; p.ordered = 1;
    scan(st, snap, &p, r, sizeof(r));
    p.run_ids = runRS;
    scan(st, snap, &p, s, sizeof(s));
    for(i=0; s[i]; i++) if( s[i]=='s' && s[i+1]==':' ) s[i] = 'r';
    CHECK_STR(s, r);
  }

  /* account: rows in key order */
  {
    fnt_account *a = 0;
    const fnt_account_row *r;
    CHECK_RC(st, fnt_account_compute(snap, "r", &a), FNT_OK);
    CHECK_EQ_INT(fnt_account_count(a), 6);
    r = fnt_account_rows(a);
    if( fnt_account_count(a)==6 ){
      static const char *keys[] = {"?a", "?b", "?c", "?d", "?f", "c acme * main()."};
      for(i=0; i<6; i++) CHECK_STR(r[i].key, keys[i]);
      CHECK_STR(r[4].symbol, "f");
      CHECK_EQ_INT(r[4].calls, 3); CHECK_EQ_INT(r[4].min_ns, 10000); CHECK_EQ_INT(r[4].p50_ns, 30000);
      CHECK_EQ_INT(r[4].p90_ns, 50000); CHECK_EQ_INT(r[4].p99_ns, 50000); CHECK_EQ_INT(r[4].max_ns, 50000);
      CHECK_EQ_INT(r[4].sum_ns, 90000); CHECK_EQ_INT(r[4].inclusive_ns, 50000); CHECK_EQ_INT(r[4].self_ns, 50000);
      CHECK_EQ_INT(r[5].calls, 2); CHECK_EQ_INT(r[5].min_ns, 60000); CHECK_EQ_INT(r[5].p50_ns, 100000);
      CHECK_EQ_INT(r[5].sum_ns, 160000); CHECK_EQ_INT(r[5].inclusive_ns, 160000); CHECK_EQ_INT(r[5].self_ns, 70000);
      CHECK_EQ_INT(r[2].self_ns, 5000); CHECK_EQ_INT(r[1].self_ns, 10000);
    }
    fnt_account_free(a);
    CHECK_RC(st, fnt_account_compute(snap, "nope", &a), FNT_OK);
    CHECK_EQ_INT(fnt_account_count(a), 0);
    fnt_account_free(a);
  }

  /* call graph: ordered by caller_key (NULL first), then callee_key */
  {
    static const struct { const char *from, *to; int64_t calls, total, self; } want[] = {
      {NULL, "c acme * main().", 2, 160000, 70000},
      {"?b", "?c", 1, 20000, 5000}, {"?c", "?d", 1, 15000, 15000},
      {"?f", "?f", 2, 40000, 30000},
      {"c acme * main().", "?a", 1, 10000, 10000}, {"c acme * main().", "?b", 1, 30000, 10000},
      {"c acme * main().", "?f", 1, 50000, 20000},
    };
    fnt_callgraph *g = 0;
    const fnt_edge_row *e;
    CHECK_RC(st, fnt_callgraph_compute(snap, "s", &g), FNT_OK);
    CHECK_EQ_INT(fnt_callgraph_count(g), 7);
    e = fnt_callgraph_rows(g);
    for(i=0; i<7 && i<fnt_callgraph_count(g); i++){
      if( want[i].from ) CHECK_STR(e[i].caller_key, want[i].from);
      else CHECK(e[i].caller_key==NULL);
      CHECK_STR(e[i].callee_key, want[i].to);
      CHECK_EQ_INT(e[i].calls, want[i].calls);
      CHECK_EQ_INT(e[i].total_ns, want[i].total);
      CHECK_EQ_INT(e[i].self_ns, want[i].self);
    }
    fnt_callgraph_free(g);
  }

  /* heat equals the calls' aggregate */
  {
    fnt_heat *h = 0;
    const fnt_heat_row *r;
    CHECK_RC(st, fnt_heat_compute(snap, "s", &h), FNT_OK);
    CHECK_EQ_INT(fnt_heat_count(h), 6);
    r = fnt_heat_rows(h);
    for(i=0; i<fnt_heat_count(h); i++){
      if( strcmp(r[i].key, "?f")==0 ){
        CHECK_EQ_INT(r[i].inclusive_ns, 50000); CHECK_EQ_INT(r[i].self_ns, 50000);
        CHECK_EQ_INT(r[i].calls, 3);
      }
    }
    fnt_heat_free(h);
  }

  /* fnt_flame: the whole run (both runs: "s" folds two files), a window
  ** of thread 1, bad arguments. */
  {
    static const char *const wholeRun =
      "main 70000 2|main;a 10000 1|main;b 10000 1|main;b;c 5000 1|"
      "main;b;c;d 15000 1|main;f 20000 1|main;f;f 20000 1|main;f;f;f 10000 1|";
    const char *runs[] = {"r", "s"};
    fnt_flame_window w = {25000, 45000, 1};
    fnt_flame *f = 0;
    size_t k;
    for(k=0; k<3; k++){
      got[0] = 0;
      CHECK_RC(st, fnt_flame_compute(snap, k<2 ? runs[k] : "r", k<2 ? 0 : &w, &f), FNT_OK);
      /* Row by row, backwards (a whole run's rows are made when asked,
      ** from the stack made before), then all at once: the same rows. */
      for(i=fnt_flame_count(f); i-- > 0; ){
        const fnt_flame_row *r = fnt_flame_row_at(f, i);
        char one[256];
        snprintf(one, sizeof(one), "%s %lld %lld|", r->stack, (long long)r->self_ns,
                 (long long)r->calls);
        memmove(got+strlen(one), got, strlen(got)+1);
        memcpy(got, one, strlen(one));
      }
      CHECK_STR(got, k<2 ? wholeRun
                         : "main 0 1|main;f 0 1|main;f;f 10000 1|main;f;f;f 10000 1|");
      got[0] = 0;
      for(i=0; i<fnt_flame_count(f); i++){
        const fnt_flame_row *r = &fnt_flame_rows(f)[i];
        snprintf(got+strlen(got), sizeof(got)-strlen(got), "%s %lld %lld|", r->stack,
                 (long long)r->self_ns, (long long)r->calls);
      }
      CHECK_STR(got, k<2 ? wholeRun
                         : "main 0 1|main;f 0 1|main;f;f 10000 1|main;f;f;f 10000 1|");
      CHECK(fnt_flame_row_at(f, fnt_flame_count(f))==NULL);
      CHECK_STR(fnt_flame_row_at(f, 3)->stack, k<2 ? "main;b;c" : "main;f;f;f");
      fnt_flame_free(f);
    }
    CHECK_RC(st, fnt_flame_compute(snap, "nope", 0, &f), FNT_OK);
    CHECK_EQ_INT(fnt_flame_count(f), 0);
    fnt_flame_free(f);
    w.t1 = w.t0;
    CHECK_RC(st, fnt_flame_compute(snap, "r", &w, &f), FNT_E_MISUSE);
    CHECK(f==NULL && strstr(fnt_errmsg(st), "must be greater than t0"));
    CHECK_RC(st, fnt_flame_compute(snap, NULL, 0, &f), FNT_E_MISUSE);
  }

  fnt_snapshot_release(snap);
  fnt_close(st);
  t_remove_tree(dir);
  return t_finish("test_calls_api");
}
