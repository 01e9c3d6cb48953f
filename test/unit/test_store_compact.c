/*
** test_store_compact.c -- fnt_compact merges small files without changing a
** row: every table reads the same before and after, filing stays
** idempotent (merged files remember their chunks), pushdown still prunes,
** and the snapshot before compaction still reads.
*/
#include <string.h>

#include "util_test.h"

/* A digest of every row of every table (events in run and seq_no order). */
static unsigned long long digest(fnt_store *st, uint64_t snapId, long *rows){
  fnt_snapshot *s = 0;
  unsigned long long h = 1469598103934665603ull;
  int t, rc;
  *rows = 0;
  rc = snapId ? fnt_snapshot_at(st, snapId, &s) : fnt_snapshot_current(st, &s);
  if( rc ){ t_failures++; return 0; }
  for(t=0; t<3; t++){
    fnt_predicate p;
    fnt_scan *sc;
    unsigned long long tableSum = 0;
    fnt_predicate_init(&p);
    p.ordered = 1;
    if( fnt_scan_open(s, (fnt_table)t, &p, &sc) ){ t_failures++; break; }
    while( (rc = fnt_scan_next(sc))==1 ){
      unsigned long long r = 1099511628211ull * (unsigned)(t+1);
      int c;
      for(c=0; c<fnt_table_ncol((fnt_table)t); c++){
        const char *v = fnt_scan_text(sc, c, 0);
        r = (r ^ (unsigned long long)fnt_scan_int(sc, c)) * 1099511628211ull;
        while( v && *v ) r = (r ^ (unsigned char)*v++) * 1099511628211ull;
        r ^= v ? 7 : 0;
      }
      /* Order-independent across files for runs/profile, ordered for events. */
      if( t==0 ) h = (h ^ r) * 1099511628211ull; else tableSum += r;
      (*rows)++;
    }
    CHECK_EQ_INT(rc, 0);
    h ^= tableSum;
    fnt_scan_close(sc);
  }
  fnt_snapshot_release(s);
  return h;
}

static uint64_t newestId(fnt_store *st){
  fnt_snapshot *s;
  fnt_snapshot_info info;
  if( fnt_snapshot_current(st, &s) ) return 0;
  fnt_snapshot_describe(s, &info);
  fnt_snapshot_release(s);
  return info.id;
}

static long countRuns(fnt_store *st, const char *run, int64_t chunk){
  fnt_snapshot *s;
  fnt_predicate p;
  fnt_scan *sc;
  const char *r[1];
  long n = 0;
  fnt_snapshot_current(st, &s);
  fnt_predicate_init(&p);
  if( run ){ r[0] = run; p.run_ids = r; p.n_run_ids = 1; }
  p.chunk = chunk;
  fnt_scan_open(s, FNT_TABLE_RUNS, &p, &sc);
  while( fnt_scan_next(sc)==1 ) n++;
  fnt_scan_close(sc);
  fnt_snapshot_release(s);
  return n;
}

static void fileRuns(fnt_store *st, int first, int last, int chunks){
  int r;
  for(r=first; r<last; r++){
    char run[32];
    snprintf(run, sizeof(run), "run-%d", r);
    t_file_run(st, r%2 ? "acme/a" : "acme/b", run, chunks, 300, 3, (unsigned)(r*100));
  }
}

/* Files opened by a scan of `table` over every row (of run_id if set). */
static uint64_t filesRead(fnt_store *st, fnt_table table, const char *run_id){
  fnt_snapshot *s = 0;
  fnt_predicate p;
  fnt_scan *sc = 0;
  fnt_scan_stats ss;
  int rc;
  fnt_predicate_init(&p);
  if( run_id ){ p.run_ids = &run_id; p.n_run_ids = 1; }
  CHECK_RC(st, fnt_snapshot_current(st, &s), FNT_OK);
  CHECK_RC(st, fnt_scan_open(s, table, &p, &sc), FNT_OK);
  while( (rc = fnt_scan_next(sc))==1 ){}
  CHECK_EQ_INT(rc, 0);
  fnt_scan_stats_get(sc, &ss);
  fnt_scan_close(sc);
  fnt_snapshot_release(s);
  return ss.files_opened;
}

/* Filing compacts run rows on its own once 256 small files pile up, and
** leaves the events and calls alone: merging them would hold a run's
** events in the filer's memory (an import of 100M events rose from 45 to
** 150 MB), and derive its calls again. */
static void testFilingCompactsRunRowsOnly(void){
  const char *dir = t_scratch_dir("compact-auto");
  fnt_store *st = 0;
  CHECK_RC(st, fnt_open(dir, FNT_OPEN_CREATE, &st), FNT_OK);
  t_file_run(st, "acme/a", "long", 300, 20, 2, 0);
  CHECK_EQ_INT(filesRead(st, FNT_TABLE_EVENTS, "long"), 300);
  CHECK(filesRead(st, FNT_TABLE_RUNS, 0) < 256);
  fnt_close(st);
  t_remove_tree(dir);
}

int main(void){
  const char *dir = t_scratch_dir("compact");
  fnt_store *st = 0;
  fnt_compact_stats cs;
  unsigned long long before, after;
  long rowsBefore, rowsAfter;
  uint64_t preId;
  int i;

  CHECK_RC(st, fnt_open(dir, FNT_OPEN_CREATE, &st), FNT_OK);
  fileRuns(st, 0, 4, 6);
  for(i=0; i<5; i++){
    char run[32];
    fnt_profile_row rows[2] = {{"parse", 0, 5, 9, 2, 4}, {"main", "s main", 1, 9, 1, 4}};
    fnt_profile p = {run, 1, i%2 ? "acme/a" : "acme/b", 0, "bench", 4, 100, rows, 2};
    snprintf(run, sizeof(run), "prof-%d", i);
    CHECK_RC(st, fnt_file_profile(st, &p), 1);
  }
  before = digest(st, 0, &rowsBefore);
  preId = newestId(st);

  CHECK_RC(st, fnt_compact(st, &cs), 1);
  /* Per chunk an events, a runs and a calls file; 5 profiles. */
  CHECK_EQ_INT(cs.files_before, 4*6*3 + 5);
  /* events and calls: one file per run; runs and profiles: one per repo. */
  CHECK_EQ_INT(cs.files_after, 4 + 4 + 2 + 2);
  CHECK_EQ_INT(cs.files_merged, 4*6*3 + 5);
  CHECK_EQ_INT(newestId(st), preId + 1);
  after = digest(st, 0, &rowsAfter);
  CHECK_EQ_INT(rowsAfter, rowsBefore);
  CHECK(after==before);
  /* Time travel: the snapshot before still reads the same. */
  CHECK(digest(st, preId, &rowsAfter)==before);

  /* Idempotency and the repo check see through merged files. */
  {
    t_chunk t;
    t_chunk_make(&t, "acme/a", "run-1", 3, 6, 300, 3, 900, 103);
    CHECK_RC(st, fnt_file_chunk(st, &t.c), 0);
    t.c.repo = "acme/b";
    t.c.chunk = 5;
    CHECK_RC(st, fnt_file_chunk(st, &t.c), 0);
    t.c.chunks = 7;
    t.c.chunk = 6;
    CHECK_RC(st, fnt_file_chunk(st, &t.c), FNT_E_CONFLICT);
    t_chunk_free(&t);
  }
  {
    fnt_profile_row rows[1] = {{"x", 0, 1, 1, 1, 1}};
    fnt_profile p = {"prof-3", 1, "acme/a", 0, "bench", 1, 1, rows, 1};
    CHECK_RC(st, fnt_file_profile(st, &p), 0);
  }
  /* Pushdown through merged files. */
  CHECK_EQ_INT(countRuns(st, "run-2", -1), 6);
  CHECK_EQ_INT(countRuns(st, 0, 3), 4);
  CHECK_EQ_INT(countRuns(st, "run-2", 3), 1);

  /* Nothing left to merge; then new chunks merge with merged files. */
  CHECK_RC(st, fnt_compact(st, &cs), 0);
  fileRuns(st, 4, 6, 3);
  before = digest(st, 0, &rowsBefore);
  CHECK_RC(st, fnt_compact(st, &cs), 1);
  /* Events and calls merge per run as before; each repo's new run rows
  ** merge among themselves (a tier of their own: its merged run-row file
  ** holds more than twice their rows), so 2 run-row files per repo. */
  CHECK_EQ_INT(cs.files_after, 6 + 6 + 2*2 + 2);
  CHECK(digest(st, 0, &rowsAfter)==before);
  CHECK_EQ_INT(rowsAfter, rowsBefore);
  CHECK_EQ_INT(countRuns(st, "run-5", -1), 3);
  CHECK_EQ_INT(countRuns(st, "run-0", -1), 6);

  /* A fresh handle reads the compacted warehouse the same. */
  fnt_close(st);
  CHECK_RC(st, fnt_open(dir, 0, &st), FNT_OK);
  CHECK(digest(st, 0, &rowsAfter)==before);
  fnt_close(st);
  t_remove_tree(dir);
  testFilingCompactsRunRowsOnly();
  return t_finish("test_store_compact");
}
