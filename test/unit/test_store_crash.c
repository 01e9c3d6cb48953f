/*
** test_store_crash.c -- commits under faults and crashes.
**
**  - every I/O step of a commit fails in turn (EIO, ENOSPC, short writes):
**    the call reports an error, the warehouse stays at the old or the new
**    snapshot and reads correctly, and a retry files the chunk exactly once;
**  - a child process dies (_exit, as kill -9 would leave it) at every step
**    of a commit: the same holds after the crash;
**  - the power goes at every step of a commit: file data not fsynced is cut
**    to half and names whose folder was not fsynced vanish (store/io.c
**    journals both); the same holds;
**  - two writer processes race, filing overlapping chunks, while a reader
**    checks that no snapshot shows events without their run row.
*/
#include <errno.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "internal.h"   /* the I/O fault-injection hook */
#include "util_test.h"

/* Snapshots before the commit under test: 1 (the commit's snapshot file
** holds its entries), or 16 (it merges the list into a manifest file). */
static int g_prior = 1;
static char g_template[1024];  /* the warehouse prepare() copies */

/* Counts the rows of a table (optionally of one run) in the newest snapshot;
** -1 on error. */
static long countRows(fnt_store *st, fnt_table t, const char *run){
  fnt_snapshot *s;
  fnt_scan *sc;
  fnt_predicate p;
  const char *r[1];
  long n = 0;
  int rc;
  if( fnt_snapshot_current(st, &s) ) return -1;
  fnt_predicate_init(&p);
  if( run ){ r[0] = run; p.run_ids = r; p.n_run_ids = 1; }
  p.columns = 1;
  if( fnt_scan_open(s, t, &p, &sc) ){ fnt_snapshot_release(s); return -1; }
  while( (rc = fnt_scan_next(sc))==1 ) n++;
  fnt_scan_close(sc);
  fnt_snapshot_release(s);
  return rc==0 ? n : -1;
}

static uint64_t snapshotId(fnt_store *st){
  fnt_snapshot *s;
  fnt_snapshot_info info;
  if( fnt_snapshot_current(st, &s) ) return UINT64_MAX;
  fnt_snapshot_describe(s, &info);
  fnt_snapshot_release(s);
  return info.id;
}

/* After a failed or crashed commit of `t` on top of g_prior committed
** chunks: the warehouse is at snapshot g_prior or g_prior+1 with
** consistent rows, and filing again leaves exactly one copy. */
static void checkRecovered(const char *dir, t_chunk *t, long step){
  fnt_store *st = 0;
  uint64_t id;
  long runs, events;
  int rc;
  CHECK_RC(st, fnt_open(dir, 0, &st), FNT_OK);
  id = snapshotId(st);
  runs = countRows(st, FNT_TABLE_RUNS, "r2");
  events = countRows(st, FNT_TABLE_EVENTS, "r2");
  if( !(id==(uint64_t)g_prior && runs==0 && events==0)
   && !(id==(uint64_t)g_prior+1 && runs==1 && events==(long)t->c.n_events) ){
    fprintf(stderr, "step %ld: snapshot %llu with %ld run rows, %ld events\n",
            step, (unsigned long long)id, runs, events);
    t_failures++;
  }
  CHECK_EQ_INT(countRows(st, FNT_TABLE_EVENTS, "r1"), 1000);
  rc = fnt_file_chunk(st, &t->c);
  if( rc!=(id==(uint64_t)g_prior ? 1 : 0) ){
    fprintf(stderr, "step %ld: retry returned %d (%s)\n", step, rc, fnt_errmsg(st));
    t_failures++;
  }
  CHECK_EQ_INT(countRows(st, FNT_TABLE_RUNS, "r2"), 1);
  CHECK_EQ_INT(countRows(st, FNT_TABLE_EVENTS, "r2"), (long)t->c.n_events);
  fnt_close(st);
}


static void prepare(const char *dir){
  static int tmplPrior;
  char *tmpl = g_template;
  char cmd[3000];
  fnt_store *st = 0;
  t_chunk a;
  int k;
  if( tmplPrior!=g_prior ){
    /* Made once per g_prior, then copied: filing 16 chunks per step would
    ** make the test slow. */
    snprintf(tmpl, sizeof(g_template), "%s", t_scratch_dir("crash-template"));
    t_remove_tree(tmpl);
    CHECK_RC(st, fnt_open(tmpl, FNT_OPEN_CREATE, &st), FNT_OK);
    t_chunk_make(&a, "repo", "r1", 0, 1, 1000, 2, 0, 5);
    CHECK_RC(st, fnt_file_chunk(st, &a.c), 1);
    t_chunk_free(&a);
    for(k=1; k<g_prior; k++){
      char run[16];
      snprintf(run, sizeof(run), "p%02d", k);
      t_chunk_make(&a, "repo", run, 0, 1, 20, 1, 0, (unsigned)k);
      CHECK_RC(st, fnt_file_chunk(st, &a.c), 1);
      t_chunk_free(&a);
    }
    fnt_close(st);
    tmplPrior = g_prior;
  }
  t_remove_tree(dir);
  snprintf(cmd, sizeof(cmd), "cp -a '%s' '%s'", tmpl, dir);
  CHECK(system(cmd)==0);
}

static const unsigned kAllOps = FNT_IO_OPEN|FNT_IO_WRITE|FNT_IO_FSYNC|FNT_IO_LINK
                              |FNT_IO_RENAME|FNT_IO_MKDIR;

/* How many counted I/O calls one commit makes. */
static long commitSteps(const char *dir, t_chunk *t){
  fnt_store *st = 0;
  fnt_io_fault f = {0};
  long n;
  prepare(dir);
  CHECK_RC(st, fnt_open(dir, 0, &st), FNT_OK);
  f.ops = kAllOps;
  fnt_io_set_fault(&f);                 /* nth = 0: count only */
  CHECK_RC(st, fnt_file_chunk(st, &t->c), 1);
  n = fnt_io_count();
  fnt_io_set_fault(0);
  fnt_close(st);
  return n;
}

static void testFaults(void){
  const char *dir = t_scratch_dir("faults");
  t_chunk t;
  long steps, n, failed = 0;
  static const int errs[] = {EIO, ENOSPC};
  t_chunk_make(&t, "repo", "r2", 0, 1, 3000, 3, 0, 9);
  steps = commitSteps(dir, &t);
  CHECK(steps>=8);
  for(n=1; n<=steps; n++){
    fnt_store *st = 0;
    fnt_io_fault f = {0};
    int rc;
    prepare(dir);
    CHECK_RC(st, fnt_open(dir, 0, &st), FNT_OK);
    f.ops = kAllOps;
    f.nth = n;
    f.err = errs[n%2];
    f.short_write = (int)(n%3==0);
    fnt_io_set_fault(&f);
    rc = fnt_file_chunk(st, &t.c);
    fnt_io_set_fault(0);
    if( rc<0 ){
      failed++;
      /* The message says what failed, and names a path. */
      CHECK(strstr(fnt_errmsg(st), dir)!=0);
    }else{
      /* Steps that may fail without failing the commit: reading the HEAD
      ** hint (the catalog folder is listed instead) and writing it. */
      CHECK_EQ_INT(rc, 1);
    }
    fnt_close(st);
    checkRecovered(dir, &t, n);
  }
  /* Most steps must fail the call.  Those that may not: opening the HEAD
  ** hint to read it (the catalog folder is listed instead) and writing it
  ** after the publish. */
  CHECK(failed>=steps/2);
  printf("faults: %ld injected I/O failures over a %ld-step commit, %ld reported, all recovered\n",
         steps, steps, failed);
  t_chunk_free(&t);
  t_remove_tree(dir);
}

static void testCrashes(int powerLoss){
  const char *dir = t_scratch_dir(powerLoss ? "powerloss" : "crash");
  t_chunk t;
  long steps, n, crashed = 0;
  t_chunk_make(&t, "repo", "r2", 0, 1, 3000, 3, 0, 9);
  steps = commitSteps(dir, &t);
  for(n=1; n<=steps+1; n++){
    pid_t pid;
    int status = 0;
    prepare(dir);
    fflush(0);
    pid = fork();
    if( pid==0 ){
      fnt_store *st = 0;
      fnt_io_fault f = {0};
      f.ops = kAllOps;
      f.nth = n;
      f.crash = !powerLoss;            /* _exit(99) at step n: no cleanup */
      f.power_loss = powerLoss;        /* ... and lose what was not fsynced */
      if( fnt_open(dir, 0, &st) ) _exit(2);
      fnt_io_set_fault(&f);
      _exit(fnt_file_chunk(st, &t.c)==1 ? 0 : 3);
    }
    waitpid(pid, &status, 0);
    if( WIFEXITED(status) && WEXITSTATUS(status)==99 ) crashed++;
    else CHECK(n>steps && WIFEXITED(status) && WEXITSTATUS(status)==0);
    checkRecovered(dir, &t, n);
  }
  CHECK_EQ_INT(crashed, steps);
  printf("%s at each of %ld commit steps (%d snapshots before: %s); every "
         "time the warehouse was at the old or new snapshot and the retry "
         "filed once\n",
         powerLoss ? "power lost (unsynced data and names dropped)"
                   : "a writer killed", steps, g_prior,
         g_prior>=16 ? "the commit merges the list into a manifest"
                     : "the snapshot file holds the commit's entries");
  t_chunk_free(&t);
  t_remove_tree(dir);
}

/* Reader invariant: in any snapshot, each run's events equal the sum of
** its run rows' `events`. */
static int snapshotConsistent(fnt_store *st){
  fnt_snapshot *s;
  fnt_scan *sc;
  fnt_predicate p;
  long evRuns[64] = {0}, evRows[64] = {0};
  int rc, i, ok = 1;
  if( fnt_snapshot_current(st, &s) ) return 0;
  fnt_predicate_init(&p);
  if( fnt_scan_open(s, FNT_TABLE_RUNS, &p, &sc) ){ fnt_snapshot_release(s); return 0; }
  while( (rc = fnt_scan_next(sc))==1 ){
    int k = atoi(fnt_scan_text(sc, FNT_RUN_RUN_ID, 0)+1);
    evRuns[k%64] += (long)fnt_scan_int(sc, FNT_RUN_EVENTS);
  }
  fnt_scan_close(sc);
  if( rc ) ok = 0;
  p.columns = UINT64_C(1)<<FNT_EV_RUN_ID;
  if( ok && fnt_scan_open(s, FNT_TABLE_EVENTS, &p, &sc)==0 ){
    while( (rc = fnt_scan_next(sc))==1 ){
      evRows[atoi(fnt_scan_text(sc, FNT_EV_RUN_ID, 0)+1)%64]++;
    }
    fnt_scan_close(sc);
    if( rc ) ok = 0;
  }
  fnt_snapshot_release(s);
  for(i=0; i<64; i++) if( evRuns[i]!=evRows[i] ) ok = 0;
  return ok;
}

static void testConcurrentWriters(void){
  const char *dir = t_scratch_dir("concurrent");
  fnt_store *st = 0;
  pid_t pids[3];
  int w, status, k;
  CHECK_RC(st, fnt_open(dir, FNT_OPEN_CREATE, &st), FNT_OK);
  fnt_close(st);
  fflush(0);
  /* Two writers file runs r0..r11, 3 chunks each, in different orders: every
  ** chunk is contended.  One reader checks every snapshot it sees. */
  for(w=0; w<3; w++){
    pids[w] = fork();
    if( pids[w]==0 ){
      fnt_store *ws = 0;
      int i, bad = 0;
      if( fnt_open(dir, 0, &ws) ) _exit(2);
      if( w==2 ){
        for(i=0; i<300; i++) if( !snapshotConsistent(ws) ) bad++;
        fnt_close(ws);
        _exit(bad ? 4 : 0);
      }
      for(i=0; i<36; i++){
        int j = w==0 ? i : 35-i;
        char run[16];
        t_chunk t;
        int rc;
        snprintf(run, sizeof(run), "r%d", j/3);
        t_chunk_make(&t, "repo", run, j%3, 3, 500, 2, (uint64_t)(j%3)*500, (unsigned)j);
        rc = fnt_file_chunk(ws, &t.c);
        t_chunk_free(&t);
        if( rc<0 ){ fprintf(stderr, "writer %d: %s\n", w, fnt_errmsg(ws)); _exit(3); }
      }
      fnt_close(ws);
      _exit(0);
    }
  }
  for(w=0; w<3; w++){
    waitpid(pids[w], &status, 0);
    CHECK(WIFEXITED(status) && WEXITSTATUS(status)==0);
  }
  CHECK_RC(st, fnt_open(dir, 0, &st), FNT_OK);
  CHECK_EQ_INT(countRows(st, FNT_TABLE_RUNS, 0), 36);
  CHECK_EQ_INT(countRows(st, FNT_TABLE_EVENTS, 0), 36*500);
  CHECK_EQ_INT(snapshotId(st), 36);   /* one snapshot per chunk, none lost */
  for(k=0; k<12; k++){
    char run[16];
    snprintf(run, sizeof(run), "r%d", k);
    CHECK_EQ_INT(countRows(st, FNT_TABLE_RUNS, run), 3);
  }
  CHECK(snapshotConsistent(st));
  fnt_close(st);
  t_remove_tree(dir);
}

int main(void){
  testFaults();
  testCrashes(0);
  testCrashes(1);
  g_prior = 16;
  testCrashes(0);
  testCrashes(1);
  g_prior = 1;
  testConcurrentWriters();
  t_remove_tree(g_template);
  return t_finish("test_store_crash");
}
