/*
** test_store_expire.c -- fnt_expire_snapshots keeps the newest snapshot and
** the recent ones, removes only files no remaining snapshot lists and that
** are old enough (a young unlisted file may be a commit in flight), and
** leaves every table reading the same; snapshot files that newer ones
** list for their entries (format 3) are expired but kept until unlisted.
*/
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <unistd.h>

#include "util_test.h"

static long countRows(fnt_store *st, fnt_table t){
  fnt_snapshot *s;
  fnt_predicate p;
  fnt_scan *sc;
  long n = 0;
  int rc;
  if( fnt_snapshot_current(st, &s) ) return -1;
  fnt_predicate_init(&p);
  if( fnt_scan_open(s, t, &p, &sc) ){ fnt_snapshot_release(s); return -1; }
  while( (rc = fnt_scan_next(sc))==1 ) n++;
  fnt_scan_close(sc);
  fnt_snapshot_release(s);
  return rc==0 ? n : -1;
}

/* Sets every file's mtime under dir two hours back: they look old. */
static void ageFiles(const char *dir){
  char cmd[1024];
  snprintf(cmd, sizeof(cmd), "find '%s' -type f -exec touch -d '-2 hours' {} +", dir);
  CHECK(system(cmd)==0);
}

/* The number a shell command prints. */
static long commandNumber(const char *cmd){
  long n = -1;
  FILE *f = popen(cmd, "r");
  if( f ){ if( fscanf(f, "%ld", &n)!=1 ) n = -1; pclose(f); }
  return n;
}

static long countFiles(const char *dir, const char *sub){
  char cmd[1024];
  snprintf(cmd, sizeof(cmd), "find '%s/%s' -type f | wc -l", dir, sub);
  return commandNumber(cmd);
}

/* The snapshot files in catalog/ (not HEAD, not EXPIRED). */
static long countSnapshotFiles(const char *dir){
  char cmd[1024];
  snprintf(cmd, sizeof(cmd), "find '%s/catalog' -type f -name 'v*' | wc -l", dir);
  return commandNumber(cmd);
}

static int countSnapshot(void *ctx, const fnt_snapshot_info *info){
  (void)info;
  ++*(long*)ctx;
  return 0;
}

/* Files runs held-FROM .. held-(TO-1), one chunk of 100 events each. */
static void fileHeldRuns(fnt_store *st, int from, int to){
  int k;
  for(k=from; k<to; k++){
    t_chunk t;
    char run[32];
    snprintf(run, sizeof(run), "held-%d", k);
    t_chunk_make(&t, "repo", run, 0, 1, 100, 1, 0, (unsigned)k);
    CHECK_RC(st, fnt_file_chunk(st, &t.c), 1);
    t_chunk_free(&t);
  }
}

/* Format 3: a snapshot file holds the entries its commit added, and newer
** snapshots list it for them.  Expiring it makes it unreadable and
** unlisted at once, but its file stays until no retained snapshot lists
** it (once a merge has rewritten its entries into a manifest). */
static void testHeldSnapshotFiles(void){
  const char *dir = t_scratch_dir("expire-held");
  fnt_store *st = 0;
  fnt_expire_stats es;
  fnt_snapshot *s;
  long events, listed = 0;
  CHECK_RC(st, fnt_open(dir, FNT_OPEN_CREATE, &st), FNT_OK);
  fileHeldRuns(st, 0, 3);
  CHECK_EQ_INT(countFiles(dir, "metadata"), 0);      /* no manifest file yet */
  events = countRows(st, FNT_TABLE_EVENTS);
  CHECK_EQ_INT(events, 300);
  sleep(2);
  CHECK_RC(st, fnt_expire_snapshots(st, 1, &es), FNT_OK);
  CHECK_EQ_INT(es.snapshots_expired, 2);
  CHECK_EQ_INT(es.snapshots_kept, 1);
  CHECK_EQ_INT(countSnapshotFiles(dir), 3); /* held for their entries */
  CHECK_RC(st, fnt_snapshot_at(st, 1, &s), FNT_E_NOTFOUND);
  CHECK_RC(st, fnt_snapshot_at(st, 2, &s), FNT_E_NOTFOUND);
  CHECK_RC(st, fnt_snapshot_list(st, countSnapshot, &listed), FNT_OK);
  CHECK_EQ_INT(listed, 1);
  fnt_close(st);
  CHECK_RC(st, fnt_open(dir, 0, &st), FNT_OK);
  CHECK_EQ_INT(countRows(st, FNT_TABLE_EVENTS), events);
  /* 14 more commits: the list reaches 16 and is merged into a manifest;
  ** then nothing lists the held files and expiry removes them. */
  fileHeldRuns(st, 3, 17);
  CHECK_EQ_INT(countFiles(dir, "metadata"), 1);
  CHECK_RC(st, fnt_expire_snapshots(st, 0, &es), FNT_OK);
  CHECK_EQ_INT(es.snapshots_expired, 16);
  CHECK_EQ_INT(countSnapshotFiles(dir), 1);
  CHECK_EQ_INT(countRows(st, FNT_TABLE_EVENTS), 1700);
  fnt_close(st);
  t_remove_tree(dir);
}

int main(void){
  const char *dir = t_scratch_dir("expire");
  fnt_store *st = 0;
  fnt_expire_stats es;
  fnt_snapshot *s;
  long events, runs;
  char path[1024];
  FILE *f;

  CHECK_RC(st, fnt_open(dir, FNT_OPEN_CREATE, &st), FNT_OK);
  t_file_run(st, "repo", "run", 3, 500, 2, 0);
  CHECK_RC(st, fnt_compact(st, 0), 1);            /* snapshot 4 */
  events = countRows(st, FNT_TABLE_EVENTS);
  runs = countRows(st, FNT_TABLE_RUNS);
  CHECK_EQ_INT(events, 1500);
  /* 9 filed (events, run row, calls per chunk) + 3 merged */
  CHECK_EQ_INT(countFiles(dir, "data"), 12);

  /* Everything recent: nothing goes. */
  CHECK_RC(st, fnt_expire_snapshots(st, 3600, &es), FNT_OK);
  CHECK_EQ_INT(es.snapshots_expired, 0);
  CHECK_EQ_INT(es.files_removed, 0);

  /* All old, plus a stray old temporary file and a young unlisted segment
  ** (as a commit in flight in another process would have). */
  snprintf(path, sizeof(path), "%s/tmp/stray.fncat", dir);
  f = fopen(path, "w"); if( f ){ fputs("x", f); fclose(f); }
  ageFiles(dir);
  sleep(2);                       /* the snapshots, 2 s old, fall out of a 1 s window */
  snprintf(path, sizeof(path), "%s/data/fn_trace_events/p=run/inflight.fnseg", dir);
  f = fopen(path, "w"); if( f ){ fputs("young", f); fclose(f); }

  CHECK_RC(st, fnt_expire_snapshots(st, 1, &es), FNT_OK);
  CHECK_EQ_INT(es.snapshots_expired, 3);
  CHECK_EQ_INT(es.snapshots_kept, 1);
  /* 9 merged segments, 3 manifests of the first commits... and the stray. */
  CHECK(es.files_removed>=10);
  CHECK_EQ_INT(countFiles(dir, "data"), 4);        /* 3 merged + the young one */
  CHECK_EQ_INT(countFiles(dir, "tmp"), 0);
  CHECK_EQ_INT(countRows(st, FNT_TABLE_EVENTS), events);
  CHECK_EQ_INT(countRows(st, FNT_TABLE_RUNS), runs);
  CHECK_RC(st, fnt_snapshot_at(st, 1, &s), FNT_E_NOTFOUND);

  /* A fresh handle (no cached snapshots) reads the same; filing goes on
  ** and stays idempotent. */
  fnt_close(st);
  CHECK_RC(st, fnt_open(dir, 0, &st), FNT_OK);
  CHECK_EQ_INT(countRows(st, FNT_TABLE_EVENTS), events);
  {
    t_chunk t;
    t_chunk_make(&t, "repo", "run", 1, 3, 500, 2, 500, 1);
    CHECK_RC(st, fnt_file_chunk(st, &t.c), 0);
    t_chunk_free(&t);
  }
  /* Nothing more to expire: the newest is always kept. */
  CHECK_RC(st, fnt_expire_snapshots(st, 0, &es), FNT_OK);
  CHECK_EQ_INT(es.snapshots_expired, 0);
  CHECK_EQ_INT(countRows(st, FNT_TABLE_EVENTS), events);
  fnt_close(st);
  t_remove_tree(dir);
  testHeldSnapshotFiles();
  return t_finish("test_store_expire");
}
