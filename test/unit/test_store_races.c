/*
** test_store_races.c -- expiry racing other processes, each held at an
** exact step (the I/O hook's stall) while another one goes on:
**
**  - two expirers at once: the first is held just before it writes
**    catalog/EXPIRED while a second, which would expire further, runs; the
**    floor must end at the higher id (never lowered), and every snapshot
**    still listed must read;
**  - a writer held just before it links snapshot N+1 while other commits
**    publish N+1 and beyond and expiry removes N+1's file: its link must
**    not resurrect an expired id; its chunk must be in the newest snapshot;
**    and if it dies right after that link, before it takes it back, the
**    id stays expired, the chunk files again, and expiry removes the link.
*/
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "internal.h"   /* the I/O hook's stall */
#include "util_test.h"

static int g_toParent[2], g_toChild[2];
static unsigned g_crashOps;   /* after the hold: crash at the next of these */

/* The stall: tell the parent we are held, and wait for its go. */
static void holdHere(void){
  char c = 's';
  if( write(g_toParent[1], &c, 1)!=1 ) _exit(97);
  if( read(g_toChild[0], &c, 1)!=1 ) _exit(98);
  if( g_crashOps ){
    fnt_io_fault f;
    memset(&f, 0, sizeof(f));
    f.ops = g_crashOps;
    f.nth = 1;
    f.crash = 1;
    fnt_io_set_fault(&f);
  }
}

static void waitHeld(void){
  char c;
  CHECK(read(g_toParent[0], &c, 1)==1);
}

static void release(void){
  char c = 'g';
  CHECK(write(g_toChild[1], &c, 1)==1);
}

/* A child process held at the nth call of `ops`; returns its pid (in the
** parent) after the child reached the hold. */
static pid_t forkHeld(const char *dir, unsigned ops, int (*body)(fnt_store *st)){
  pid_t pid;
  CHECK(pipe(g_toParent)==0 && pipe(g_toChild)==0);
  pid = fork();
  if( pid==0 ){
    fnt_store *st = 0;
    fnt_io_fault f;
    int rc;
    if( fnt_open(dir, 0, &st) ) _exit(90);
    memset(&f, 0, sizeof(f));
    f.ops = ops;
    f.nth = 1;
    f.stall = holdHere;
    fnt_io_set_fault(&f);
    rc = body(st);
    if( rc<0 ) fprintf(stderr, "held child: %s\n", fnt_errmsg(st));
    fnt_close(st);
    _exit(rc<0 ? 91 : rc);
  }
  CHECK(pid>0);
  waitHeld();
  return pid;
}

static int exitCode(pid_t pid){
  int status = 0;
  CHECK(waitpid(pid, &status, 0)==pid);
  return WIFEXITED(status) ? WEXITSTATUS(status) : 100 + WTERMSIG(status);
}

static void fileRuns(fnt_store *st, const char *prefix, int from, int to){
  int k;
  for(k=from; k<to; k++){
    t_chunk t;
    char run[32];
    snprintf(run, sizeof(run), "%s-%d", prefix, k);
    t_chunk_make(&t, "repo", run, 0, 1, 50, 1, 0, (unsigned)k);
    CHECK_RC(st, fnt_file_chunk(st, &t.c), 1);
    t_chunk_free(&t);
  }
}

/* Rows of a table in snapshot s (run: one run only); -1 on error. */
static long rowsIn(fnt_snapshot *s, fnt_table t, const char *run){
  fnt_predicate p;
  fnt_scan *sc;
  const char *r[1];
  long n = 0;
  int rc;
  fnt_predicate_init(&p);
  if( run ){ r[0] = run; p.run_ids = r; p.n_run_ids = 1; }
  if( fnt_scan_open(s, t, &p, &sc) ) return -1;
  while( (rc = fnt_scan_next(sc))==1 ) n++;
  fnt_scan_close(sc);
  return rc==0 ? n : -1;
}

static int expireAll(fnt_store *st){
  return fnt_expire_snapshots(st, 0, 0);
}

typedef struct listed { uint64_t ids[256]; int n; } listed;
static int collect(void *ctx, const fnt_snapshot_info *info){
  listed *l = ctx;
  if( l->n<256 ) l->ids[l->n++] = info->id;
  return 0;
}

static void testTwoExpirers(void){
  const char *dir = t_scratch_dir("races-expire");
  fnt_store *st = 0;
  fnt_snapshot *s;
  listed l;
  pid_t a, b;
  int i;
  CHECK_RC(st, fnt_open(dir, FNT_OPEN_CREATE, &st), FNT_OK);
  fileRuns(st, "a", 0, 20);                     /* snapshots 1..20 */
  /* A lists 1..20 and would expire 1..19: held before it writes EXPIRED. */
  a = forkHeld(dir, FNT_IO_RENAME, expireAll);
  fileRuns(st, "b", 0, 20);                     /* snapshots 21..40 */
  b = fork();
  if( b==0 ){
    fnt_store *st2 = 0;
    _exit(fnt_open(dir, 0, &st2) || fnt_expire_snapshots(st2, 0, 0) ? 1 : 0);
  }
  CHECK(b>0);
  sleep(1);           /* B runs to its end, or waits for A's turn */
  release();
  CHECK_EQ_INT(exitCode(a), 0);
  CHECK_EQ_INT(exitCode(b), 0);
  CHECK_EQ_INT(fnt_snapshot_floor(st), 39);     /* raised by B, never lowered */
  memset(&l, 0, sizeof(l));
  CHECK_RC(st, fnt_snapshot_list(st, collect, &l), FNT_OK);
  CHECK_EQ_INT(l.n, 1);
  for(i=0; i<l.n; i++){                        /* every listed one reads */
    CHECK_RC(st, fnt_snapshot_at(st, l.ids[i], &s), FNT_OK);
    if( s ){
      CHECK_EQ_INT(rowsIn(s, FNT_TABLE_EVENTS, 0), 40*50);
      fnt_snapshot_release(s);
    }
  }
  fnt_close(st);
  t_remove_tree(dir);
}

static int fileStalled(fnt_store *st){
  t_chunk t;
  int rc;
  t_chunk_make(&t, "repo", "stalled", 0, 1, 50, 1, 0, 7);
  rc = fnt_file_chunk(st, &t.c);
  t_chunk_free(&t);
  return rc;
}

/* crash: W dies at the unlink that takes its link back. */
static void testStalledWriter(int crash){
  const char *dir = t_scratch_dir("races-writer");
  fnt_store *st = 0;
  fnt_snapshot *s;
  char path[1024];
  pid_t w;
  CHECK_RC(st, fnt_open(dir, FNT_OPEN_CREATE, &st), FNT_OK);
  fileRuns(st, "w", 0, 3);                      /* snapshots 1..3 */
  /* W builds on 3 and is held before it links catalog/v4. */
  g_crashOps = crash ? FNT_IO_UNLINK : 0;
  w = forkHeld(dir, FNT_IO_LINK, fileStalled);
  /* 4..33 published meanwhile; their list merges v4's entries into a
  ** manifest, so expiring all but 33 removes v4's file. */
  fileRuns(st, "w", 3, 33);
  CHECK_RC(st, fnt_expire_snapshots(st, 0, 0), FNT_OK);
  CHECK_EQ_INT(fnt_snapshot_floor(st), 32);
  snprintf(path, sizeof(path), "%s/catalog/v%020d", dir, 4);
  CHECK(access(path, F_OK)!=0);
  release();
  if( crash ){
    CHECK_EQ_INT(exitCode(w), 99);
    CHECK(access(path, F_OK)==0);               /* the link it left */
    CHECK_RC(st, fnt_snapshot_at(st, 4, &s), FNT_E_NOTFOUND);
    CHECK_RC(st, fileStalled(st), 1);           /* not filed: files now */
    CHECK_RC(st, fnt_expire_snapshots(st, 0, 0), FNT_OK);
  }else{
    CHECK_EQ_INT(exitCode(w), 1);               /* W says: filed */
  }
  CHECK(access(path, F_OK)!=0);                 /* not by an expired id */
  CHECK_RC(st, fnt_snapshot_current(st, &s), FNT_OK);
  if( s ){
    CHECK_EQ_INT(rowsIn(s, FNT_TABLE_EVENTS, "stalled"), 50);
    CHECK_EQ_INT(rowsIn(s, FNT_TABLE_RUNS, 0), 34);
    fnt_snapshot_release(s);
  }
  fnt_close(st);
  t_remove_tree(dir);
}

int main(void){
  testTwoExpirers();
  testStalledWriter(0);
  testStalledWriter(1);
  return t_finish("test_store_races");
}
