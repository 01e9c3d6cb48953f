/*
** test_store_roundtrip.c -- filing and reading back through the store's
** public API: every column, edge values, idempotency, the repo conflict,
** multi-chunk runs in seq_no order, profiles, time travel.
*/
#include <stdlib.h>
#include <string.h>

#include "util_test.h"

static fnt_snapshot *pin(fnt_store *st){
  fnt_snapshot *s = 0;
  CHECK_RC(st, fnt_snapshot_current(st, &s), FNT_OK);
  return s;
}

static int cmpSeq(const void *a, const void *b){
  const fnt_event *x = a, *y = b;
  return x->seq_no<y->seq_no ? -1 : x->seq_no>y->seq_no;
}

/* Reads a run's events in order and compares them with `want` (sorted). */
static void checkEvents(fnt_store *st, const char *run, const fnt_chunk *c,
                        fnt_event *want, size_t n){
  fnt_snapshot *s = pin(st);
  fnt_predicate p;
  fnt_scan *sc = 0;
  size_t i = 0;
  int rc, col;
  const char *runs[1];
  const char *zKept = 0;        /* a held symbol, read after the scan closed */
  fnt_event_row row;
  runs[0] = run;
  fnt_predicate_init(&p);
  p.run_ids = runs;
  p.n_run_ids = 1;
  p.ordered = 1;
  qsort(want, n, sizeof(*want), cmpSeq);
  CHECK_RC(st, fnt_scan_open(s, FNT_TABLE_EVENTS, &p, &sc), FNT_OK);
  while( (rc = fnt_scan_next(sc))==1 ){
    const fnt_function *f;
    if( i>=n ){ i++; continue; }
    f = &c->functions[want[i].function];
    CHECK_EQ_INT(fnt_scan_int(sc, FNT_EV_SEQ_NO), want[i].seq_no);
    CHECK_EQ_INT(fnt_scan_int(sc, FNT_EV_T_NS), want[i].t_ns);
    CHECK_EQ_INT(fnt_scan_int(sc, FNT_EV_THREAD), want[i].thread);
    CHECK(strcmp(fnt_scan_text(sc, FNT_EV_KIND, 0), fnt_kind_name(want[i].kind))==0);
    CHECK(strcmp(fnt_scan_text(sc, FNT_EV_SYMBOL, 0), f->symbol)==0);
    if( f->stable_id && f->stable_id[0] ){
      CHECK(fnt_scan_text(sc, FNT_EV_STABLE_ID, 0)
            && strcmp(fnt_scan_text(sc, FNT_EV_STABLE_ID, 0), f->stable_id)==0);
    }else{
      CHECK(fnt_scan_text(sc, FNT_EV_STABLE_ID, 0)==0);
      CHECK(fnt_scan_is_null(sc, FNT_EV_STABLE_ID));
    }
    CHECK(strcmp(fnt_scan_text(sc, FNT_EV_REPO, 0), c->repo)==0);
    CHECK(strcmp(fnt_scan_text(sc, FNT_EV_RUN_ID, 0), run)==0);
    if( c->commit && c->commit[0] ){
      CHECK(strcmp(fnt_scan_text(sc, FNT_EV_COMMIT, 0), c->commit)==0);
    }else{
      CHECK(fnt_scan_text(sc, FNT_EV_COMMIT, 0)==0);
    }
    /* The whole row in one call: the same texts (the same bytes) and
    ** integers as column by column. */
    CHECK_RC(st, fnt_scan_event_row(sc, &row), FNT_OK);
    for(col=0; col<FNT_EV_NCOL; col++){
      if( fnt_column_is_text(FNT_TABLE_EVENTS, col) ){
        CHECK(row.text[col]==fnt_scan_text(sc, col, 0));
      }
      if( !fnt_column_is_text(FNT_TABLE_EVENTS, col) || col==FNT_EV_KIND ){
        CHECK_EQ_INT(row.num[col], fnt_scan_int(sc, col));
      }
    }
    if( zKept==0 ){
      zKept = row.text[FNT_EV_SYMBOL];
      fnt_text_hold(zKept);
    }
    i++;
  }
  CHECK_EQ_INT(rc, 0);
  CHECK_EQ_INT(i, n);
  CHECK(fnt_scan_event_row(sc, &row)==FNT_E_MISUSE);   /* past the end */
  fnt_scan_close(sc);
  fnt_snapshot_release(s);
  /* fnt_text_hold kept the symbol's file: valid until released (ASan
  ** checks the read). */
  if( zKept ){
    if( n>0 ) CHECK(strcmp(zKept, c->functions[want[0].function].symbol)==0);
    fnt_text_release((void*)zKept);
  }
}

static void testBasic(void){
  const char *dir = t_scratch_dir("roundtrip");
  fnt_store *st = 0;
  fnt_snapshot *s;
  fnt_snapshot_info info;
  t_chunk t;
  fnt_event *copy;

  CHECK_RC(st, fnt_open(dir, 0, &st), FNT_E_NOTFOUND);
  fnt_close(st);
  CHECK_RC(st, fnt_open(dir, FNT_OPEN_CREATE, &st), FNT_OK);
  s = pin(st);
  fnt_snapshot_describe(s, &info);
  CHECK_EQ_INT(info.id, 0);
  fnt_snapshot_release(s);

  t_chunk_make(&t, "acme/widget", "run-1", 0, 2, 50000, 4, 0, 1);
  CHECK_RC(st, fnt_file_chunk(st, &t.c), 1);
  CHECK_RC(st, fnt_file_chunk(st, &t.c), 0);        /* idempotent */
  copy = malloc(t.c.n_events * sizeof(fnt_event));
  memcpy(copy, t.ev, t.c.n_events * sizeof(fnt_event));
  checkEvents(st, "run-1", &t.c, copy, t.c.n_events);
  free(copy);

  /* The same run under another repo is refused; the same chunk whatever its
  ** content is "already filed". */
  t.c.repo = "other/repo";
  t.c.chunk = 1;
  CHECK_RC(st, fnt_file_chunk(st, &t.c), FNT_E_CONFLICT);
  CHECK(strstr(fnt_errmsg(st), "run-1")!=0);
  t.c.chunk = 0;
  CHECK_RC(st, fnt_file_chunk(st, &t.c), 0);

  s = pin(st);
  fnt_snapshot_describe(s, &info);
  CHECK_EQ_INT(info.id, 1);
  CHECK(strcmp(info.operation, "file-chunk")==0);
  {
    /* 50,000 events, the run row, and the calls derived from the events
    ** (ended calls plus the frames open at the end). */
    fnt_call_predicate cp;
    fnt_calls *cs = 0;
    const fnt_call *c;
    long nCalls = 0;
    fnt_call_predicate_init(&cp);
    CHECK_RC(st, fnt_calls_open(s, &cp, &cs), FNT_OK);
    while( fnt_calls_next(cs, &c)==1 ) nCalls++;
    fnt_calls_close(cs);
    CHECK(nCalls>0);
    CHECK_EQ_INT(info.total_rows, 50001 + nCalls);
  }
  fnt_snapshot_release(s);
  t_chunk_free(&t);
  fnt_close(st);
  t_remove_tree(dir);
}

/* Two chunks whose seq_no ranges interleave still read in seq_no order;
** ordered reads across many chunks; the run row's derived counts. */
static void testMultiChunk(void){
  const char *dir = t_scratch_dir("multichunk");
  fnt_store *st = 0;
  t_chunk a, b;
  fnt_event *all;
  size_t i, n;
  fnt_snapshot *s;
  fnt_scan *sc;
  fnt_predicate p;
  int rows = 0;

  CHECK_RC(st, fnt_open(dir, FNT_OPEN_CREATE, &st), FNT_OK);
  t_chunk_make(&a, "r", "run-x", 0, 2, 40000, 3, 0, 7);
  t_chunk_make(&b, "r", "run-x", 1, 2, 40000, 3, 0, 8);
  for(i=0; i<40000; i++){ a.ev[i].seq_no = 2*i; b.ev[i].seq_no = 2*i+1; }
  CHECK_RC(st, fnt_file_chunk(st, &b.c), 1);
  CHECK_RC(st, fnt_file_chunk(st, &a.c), 1);
  n = 80000;
  all = malloc(n*sizeof(fnt_event));
  memcpy(all, a.ev, 40000*sizeof(fnt_event));
  memcpy(all+40000, b.ev, 40000*sizeof(fnt_event));
  /* Same function table in both chunks, so indexes compare. */
  checkEvents(st, "run-x", &a.c, all, n);
  free(all);

  /* Batches of the interleaved run give the same rows in the same order. */
  s = pin(st);
  {
    const char *runs[1] = {"run-x"};
    fnt_event_batch bt;
    uint64_t prev = 0, total = 0;
    int rc, first = 1, batches = 0;
    fnt_predicate_init(&p);
    p.run_ids = runs; p.n_run_ids = 1; p.ordered = 1;
    CHECK_RC(st, fnt_scan_open(s, FNT_TABLE_EVENTS, &p, &sc), FNT_OK);
    while( (rc = fnt_scan_next_batch(sc, &bt))==1 ){
      size_t k;
      batches++;
      for(k=0; k<bt.n; k++){
        CHECK(first || bt.seq_no[k]==prev+1);
        CHECK(bt.function[k]<bt.n_functions && bt.thread[k]<bt.n_threads);
        prev = bt.seq_no[k];
        first = 0;
      }
      total += bt.n;
    }
    CHECK_EQ_INT(rc, 0);
    CHECK_EQ_INT(total, 80000);
    CHECK(batches>1);
    fnt_scan_close(sc);
    p.t_min = 5;     /* a row bound: batches refused */
    CHECK_RC(st, fnt_scan_open(s, FNT_TABLE_EVENTS, &p, &sc), FNT_OK);
    CHECK_RC(st, fnt_scan_next_batch(sc, &bt), FNT_E_MISUSE);
    fnt_scan_close(sc);
  }
  fnt_predicate_init(&p);
  p.chunk = 1;
  CHECK_RC(st, fnt_scan_open(s, FNT_TABLE_RUNS, &p, &sc), FNT_OK);
  while( fnt_scan_next(sc)==1 ){
    rows++;
    CHECK_EQ_INT(fnt_scan_int(sc, FNT_RUN_CHUNK), 1);
    CHECK_EQ_INT(fnt_scan_int(sc, FNT_RUN_CHUNKS), 2);
    CHECK_EQ_INT(fnt_scan_int(sc, FNT_RUN_EVENTS), 40000);
    CHECK_EQ_INT(fnt_scan_int(sc, FNT_RUN_THREADS), 3);
    CHECK_EQ_INT(fnt_scan_int(sc, FNT_RUN_FIRST_NS), b.ev[0].t_ns);
    CHECK_EQ_INT(fnt_scan_int(sc, FNT_RUN_LAST_NS), b.ev[39999].t_ns);
    CHECK_EQ_INT(fnt_scan_int(sc, FNT_RUN_TS_MICROS), 1764680000000000);
    CHECK(strcmp(fnt_scan_text(sc, FNT_RUN_SOURCE, 0), "synthetic")==0);
    CHECK(strcmp(fnt_scan_text(sc, FNT_RUN_BINARIES, 0), "[]")==0);
    CHECK(strcmp(fnt_scan_text(sc, FNT_RUN_COMMIT, 0), "c0ffee")==0);
  }
  CHECK_EQ_INT(rows, 1);
  fnt_scan_close(sc);
  fnt_snapshot_release(s);
  t_chunk_free(&a);
  t_chunk_free(&b);
  fnt_close(st);
  t_remove_tree(dir);
}

/* NULLs, empty strings, 0 and 2^63-1, unicode, a 1 MB symbol, a 300-byte
** run_id full of '/' and "..". */
static void testEdgeValues(void){
  const char *dir = t_scratch_dir("edges");
  fnt_store *st = 0;
  fnt_function fns[3];
  fnt_event ev[3];
  fnt_chunk c;
  char runId[301], *big;
  size_t i;
  fnt_event copy[3];

  for(i=0; i<300; i++) runId[i] = "/.."[i%3];
  runId[300] = 0;
  memcpy(runId, "../../etc", 9);
  big = malloc((1<<20) + 1);
  for(i=0; i<(1u<<20); i++) big[i] = (char)('a' + i%26);
  big[1<<20] = 0;
  fns[0].symbol = "\xc3\xa9t\xc3\xa9_\xe2\x98\x83_\xf0\x9f\x94\xa5"; fns[0].stable_id = ""; fns[0].local = 1;
  fns[1].symbol = big; fns[1].stable_id = "c acme * big()."; fns[1].local = 0;
  fns[2].symbol = ""; fns[2].stable_id = 0; fns[2].local = 0;
  memset(ev, 0, sizeof(ev));
  ev[0].seq_no = 0; ev[0].t_ns = 0; ev[0].thread = 0; ev[0].function = 0; ev[0].kind = FNT_KIND_ENTRY;
  ev[1].seq_no = (uint64_t)INT64_MAX; ev[1].t_ns = (uint64_t)INT64_MAX; ev[1].thread = UINT32_MAX;
  ev[1].function = 1; ev[1].kind = FNT_KIND_TAIL_EXIT;
  ev[2].seq_no = 1ull<<53 | 1; ev[2].t_ns = (1ull<<53) + 1; ev[2].thread = 7; ev[2].function = 2;
  ev[2].kind = FNT_KIND_EXIT;
  memset(&c, 0, sizeof(c));
  c.repo = "\xe6\x97\xa5\xe6\x9c\xac/repo"; c.commit = ""; c.run_id = runId; c.ts_micros = 0;
  c.target = ""; c.source = "xray-fdr"; c.chunk = 0; c.chunks = 1;
  c.total_events = INT64_MAX; c.duration_ns = 0; c.threads = -1;
  c.functions = fns; c.n_functions = 3; c.events = ev; c.n_events = 3;

  CHECK_RC(st, fnt_open(dir, FNT_OPEN_CREATE, &st), FNT_OK);
  CHECK_RC(st, fnt_file_chunk(st, &c), 1);
  memcpy(copy, ev, sizeof(ev));
  checkEvents(st, runId, &c, copy, 3);
  {
    /* The run row: empty commit stored as NULL, counts derived. */
    fnt_snapshot *s = pin(st);
    fnt_predicate p;
    fnt_scan *sc;
    const char *r[1];
    r[0] = runId;
    fnt_predicate_init(&p);
    p.run_ids = r; p.n_run_ids = 1;
    CHECK_RC(st, fnt_scan_open(s, FNT_TABLE_RUNS, &p, &sc), FNT_OK);
    CHECK_EQ_INT(fnt_scan_next(sc), 1);
    CHECK(fnt_scan_text(sc, FNT_RUN_COMMIT, 0)==0);
    CHECK(strcmp(fnt_scan_text(sc, FNT_RUN_TARGET, 0), "")==0);
    CHECK_EQ_INT(fnt_scan_int(sc, FNT_RUN_TOTAL_EVENTS), INT64_MAX);
    CHECK_EQ_INT(fnt_scan_int(sc, FNT_RUN_MAPPED_EVENTS), 1);
    CHECK_EQ_INT(fnt_scan_int(sc, FNT_RUN_FUNCTIONS), 3);
    CHECK_EQ_INT(fnt_scan_int(sc, FNT_RUN_MAPPED_FUNCTIONS), 1);
    CHECK_EQ_INT(fnt_scan_int(sc, FNT_RUN_LOCAL_FUNCTIONS), 1);
    CHECK_EQ_INT(fnt_scan_int(sc, FNT_RUN_MAPPED_LOCAL_FUNCTIONS), 0);
    CHECK_EQ_INT(fnt_scan_int(sc, FNT_RUN_THREADS), 3);
    CHECK_EQ_INT(fnt_scan_int(sc, FNT_RUN_FIRST_NS), 0);
    CHECK_EQ_INT(fnt_scan_int(sc, FNT_RUN_LAST_NS), INT64_MAX);
    CHECK_EQ_INT(fnt_scan_next(sc), 0);
    fnt_scan_close(sc);
    fnt_snapshot_release(s);
  }
  /* The run_id did not become a path: nothing escaped the warehouse. */
  {
    char cmd[1024];
    snprintf(cmd, sizeof(cmd), "test -z \"$(find '%s/..' -maxdepth 1 -name etc)\"", dir);
    CHECK(system(cmd)==0);
  }
  free(big);
  fnt_close(st);
  t_remove_tree(dir);
}

static void testProfileAndTimeTravel(void){
  const char *dir = t_scratch_dir("profile");
  fnt_store *st = 0;
  fnt_profile_row rows[2] = {
    {"parse", 0, 5, 9, 2, 4},
    {"main", "c acme * main().", 0, 9, 0, 4},
  };
  fnt_profile p = {"prof-1", 1764680000000000, "acme/widget", "9f1c2e0",
                   "widget_bench", 4000, 1000000000, rows, 2};
  fnt_snapshot *s1, *s;
  fnt_scan *sc;
  fnt_predicate pr;
  t_chunk t;
  int n = 0;

  CHECK_RC(st, fnt_open(dir, FNT_OPEN_CREATE, &st), FNT_OK);
  CHECK_RC(st, fnt_file_profile(st, &p), 1);
  CHECK_RC(st, fnt_file_profile(st, &p), 0);
  p.n_rows = 0;
  p.run_id = "prof-empty";
  CHECK_RC(st, fnt_file_profile(st, &p), 0);
  t_chunk_make(&t, "acme/widget", "later", 0, 1, 100, 1, 0, 3);
  CHECK_RC(st, fnt_file_chunk(st, &t.c), 1);
  t_chunk_free(&t);

  CHECK_RC(st, fnt_snapshot_at(st, 1, &s1), FNT_OK);
  fnt_predicate_init(&pr);
  CHECK_RC(st, fnt_scan_open(s1, FNT_TABLE_PROFILE, &pr, &sc), FNT_OK);
  while( fnt_scan_next(sc)==1 ){
    n++;
    CHECK(strcmp(fnt_scan_text(sc, FNT_PROF_RUN_ID, 0), "prof-1")==0);
    CHECK_EQ_INT(fnt_scan_int(sc, FNT_PROF_SAMPLES), 4000);
    CHECK_EQ_INT(fnt_scan_int(sc, FNT_PROF_PROFILE_NS), 1000000000);
  }
  CHECK_EQ_INT(n, 2);
  fnt_scan_close(sc);
  /* Snapshot 1 predates the chunk. */
  CHECK_RC(st, fnt_scan_open(s1, FNT_TABLE_RUNS, &pr, &sc), FNT_OK);
  CHECK_EQ_INT(fnt_scan_next(sc), 0);
  fnt_scan_close(sc);
  fnt_snapshot_release(s1);
  CHECK_RC(st, fnt_snapshot_at(st, 99, &s), FNT_E_NOTFOUND);
  /* stable_id pushdown on the profile. */
  s = pin(st);
  pr.stable_id = "c acme * main().";
  CHECK_RC(st, fnt_scan_open(s, FNT_TABLE_PROFILE, &pr, &sc), FNT_OK);
  CHECK_EQ_INT(fnt_scan_next(sc), 1);
  CHECK(strcmp(fnt_scan_text(sc, FNT_PROF_SYMBOL, 0), "main")==0);
  CHECK_EQ_INT(fnt_scan_next(sc), 0);
  fnt_scan_close(sc);
  fnt_snapshot_release(s);
  fnt_close(st);
  t_remove_tree(dir);
}

static void testInvalid(void){
  const char *dir = t_scratch_dir("invalid");
  fnt_store *st = 0;
  t_chunk t;
  CHECK_RC(st, fnt_open(dir, FNT_OPEN_CREATE, &st), FNT_OK);
  t_chunk_make(&t, "r", "bad", 0, 1, 10, 1, 0, 1);
  t.ev[3].seq_no = t.ev[1].seq_no;
  CHECK_RC(st, fnt_file_chunk(st, &t.c), FNT_E_INVALID);
  CHECK(strstr(fnt_errmsg(st), "events[3]: seq_no 1 repeats events[1]")!=0);
  t.ev[3].seq_no = 3;
  t.ev[4].function = 6;
  CHECK_RC(st, fnt_file_chunk(st, &t.c), FNT_E_INVALID);
  CHECK(strstr(fnt_errmsg(st), "events[4]: function index 6")!=0);
  t.ev[4].function = 0;
  t.c.chunk = 1;
  CHECK_RC(st, fnt_file_chunk(st, &t.c), FNT_E_INVALID);
  CHECK(strstr(fnt_errmsg(st), "chunk:")!=0);
  t.c.chunk = 0;
  t.c.chunks = 0;
  CHECK_RC(st, fnt_file_chunk(st, &t.c), FNT_E_INVALID);
  CHECK(strstr(fnt_errmsg(st), "chunks: must be at least 1, not 0")!=0);
  t.c.chunks = 1;
  /* The run's own counts cannot be below what this chunk holds. */
  t.c.total_events = 9;
  CHECK_RC(st, fnt_file_chunk(st, &t.c), FNT_E_INVALID);
  CHECK(strstr(fnt_errmsg(st), "total_events: 9 is below the 10 events of this chunk")!=0);
  t.c.total_events = 10;
  t.ev[5].thread = 7;                  /* two distinct threads now */
  t.c.threads = 1;
  CHECK_RC(st, fnt_file_chunk(st, &t.c), FNT_E_INVALID);
  CHECK(strstr(fnt_errmsg(st), "threads: 1 is below the 2 distinct threads of this chunk")!=0);
  t.c.threads = 0;
  CHECK_RC(st, fnt_file_chunk(st, &t.c), FNT_E_INVALID);
  CHECK(strstr(fnt_errmsg(st), "threads: 0 is below")!=0);
  t.c.threads = -1;
  t.c.run_id = "";
  CHECK_RC(st, fnt_file_chunk(st, &t.c), FNT_E_INVALID);
  {
    fnt_snapshot *s = pin(st);
    fnt_snapshot_info info;
    fnt_snapshot_describe(s, &info);
    CHECK_EQ_INT(info.id, 0);          /* nothing was written */
    fnt_snapshot_release(s);
  }
  t_chunk_free(&t);
  fnt_close(st);
  t_remove_tree(dir);
}

/* A profile larger than a row group (compaction makes such files of every
** repo's profiles) is written in several and reads back whole. */
static void testBigProfile(void){
  const char *dir = t_scratch_dir("bigprofile");
  fnt_store *st = 0;
  size_t i, n = 40000;
  fnt_profile_row *rows = calloc(n, sizeof(*rows));
  char (*names)[24] = calloc(n, 24);
  fnt_profile p = {"big", 1, "repo", 0, "t", 1, 1, rows, n};
  fnt_snapshot *s;
  fnt_scan *sc;
  fnt_predicate pr;
  long got = 0, sum = 0;
  for(i=0; i<n; i++){
    snprintf(names[i], 24, "f%zu", i);
    rows[i].symbol = names[i];
    rows[i].self_ns = (int64_t)i;
  }
  CHECK_RC(st, fnt_open(dir, FNT_OPEN_CREATE, &st), FNT_OK);
  CHECK_RC(st, fnt_file_profile(st, &p), 1);
  CHECK_RC(st, fnt_snapshot_current(st, &s), FNT_OK);
  fnt_predicate_init(&pr);
  CHECK_RC(st, fnt_scan_open(s, FNT_TABLE_PROFILE, &pr, &sc), FNT_OK);
  while( fnt_scan_next(sc)==1 ){ got++; sum += (long)fnt_scan_int(sc, FNT_PROF_SELF_NS); }
  fnt_scan_close(sc);
  fnt_snapshot_release(s);
  CHECK_EQ_INT(got, (long)n);
  CHECK_EQ_INT(sum, (long)(n*(n-1)/2));
  fnt_close(st);
  free(rows);
  free(names);
  t_remove_tree(dir);
}

int main(void){
  testBigProfile();
  testBasic();
  testMultiChunk();
  testEdgeValues();
  testProfileAndTimeTravel();
  testInvalid();
  return t_finish("test_store_roundtrip");
}
