/*
** test_store_snapshots.c -- snapshots through the C API: a scan whose
** snapshot is expired, and its files removed, under it fails with
** FNT_E_EXPIRED (retry: a new snapshot reads the same rows), never
** FNT_E_CORRUPT; fnt_snapshot_list names the run and chunk each filing
** filed (format 5: told by the snapshot's own entries, its summary not
** stored); the manifest cache budget can be set to nothing and reads still
** work; fnt_expire_snapshots counts the young unlisted files it kept.
*/
#include <string.h>
#include <sys/stat.h>

#include "util_test.h"

static long countEvents(fnt_store *st, int *rcOut){
  fnt_snapshot *s;
  fnt_predicate p;
  fnt_scan *sc = 0;
  long n = 0;
  int rc = fnt_snapshot_current(st, &s);
  if( rc ){ *rcOut = rc; return -1; }
  fnt_predicate_init(&p);
  rc = fnt_scan_open(s, FNT_TABLE_EVENTS, &p, &sc);
  while( rc==FNT_OK && (rc = fnt_scan_next(sc))==1 ){ n++; rc = FNT_OK; }
  fnt_scan_close(sc);
  fnt_snapshot_release(s);
  *rcOut = rc;
  return rc<0 ? -1 : n;
}

static void ageFiles(const char *dir){
  char cmd[1024];
  snprintf(cmd, sizeof(cmd), "find '%s' -type f -exec touch -d '-2 hours' {} +", dir);
  CHECK(system(cmd)==0);
}

typedef struct listed { int n; char run[4][32]; long long chunk[4]; char summary[4][64]; } listed;
static int onSnapshot(void *ctx, const fnt_snapshot_info *info){
  listed *l = ctx;
  if( l->n<4 ){
    snprintf(l->run[l->n], sizeof(l->run[0]), "%s", info->run_id ? info->run_id : "(null)");
    snprintf(l->summary[l->n], sizeof(l->summary[0]), "%s", info->summary ? info->summary : "(null)");
    l->chunk[l->n] = info->chunk;
  }
  l->n++;
  return 0;
}

int main(void){
  const char *dir = t_scratch_dir("snapshots");
  fnt_store *w = 0, *r = 0;
  fnt_snapshot *snap = 0;
  fnt_predicate p;
  fnt_scan *sc = 0;
  fnt_expire_stats es;
  listed l;
  long want;
  int k, rc, rows = 0;

  CHECK_RC(w, fnt_open(dir, FNT_OPEN_CREATE, &w), FNT_OK);
  for(k=0; k<4; k++){
    t_chunk t;
    char run[16];
    snprintf(run, sizeof(run), "run %d", k/2);
    t_chunk_make(&t, "repo", run, k%2, 2, 300, 2, (uint64_t)(k%2)*300, (unsigned)k);
    CHECK_RC(w, fnt_file_chunk(w, &t.c), 1);
    t_chunk_free(&t);
  }
  memset(&l, 0, sizeof(l));
  CHECK_RC(w, fnt_snapshot_list(w, onSnapshot, &l), FNT_OK);
  CHECK_EQ_INT(l.n, 4);
  CHECK_STR(l.run[0], "run 1"); CHECK_EQ_INT(l.chunk[0], 1);
  CHECK_STR(l.run[3], "run 0"); CHECK_EQ_INT(l.chunk[3], 0);
  /* Format 5: a filing's summary is told by its entries, not stored. */
  CHECK_STR(l.summary[0], "run_id=run 1 chunk=1 events=300");
  CHECK_STR(l.summary[3], "run_id=run 0 chunk=0 events=300");
  {
    char cmd[1024];
    snprintf(cmd, sizeof(cmd), "grep -lc 'run_id=' '%s'/catalog/v* >/dev/null", dir);
    CHECK(system(cmd)!=0);
  }
  want = countEvents(w, &rc);
  CHECK_EQ_INT(want, 1200);

  /* A reader with no manifest cache to spare pins snapshot 4 and reads a
  ** row: the first file is open, the others not yet. */
  CHECK_RC(r, fnt_open(dir, 0, &r), FNT_OK);
  fnt_set_cache_budget(r, 0);
  CHECK_RC(r, fnt_snapshot_current(r, &snap), FNT_OK);
  fnt_predicate_init(&p);
  CHECK_RC(r, fnt_scan_open(snap, FNT_TABLE_EVENTS, &p, &sc), FNT_OK);
  CHECK_RC(r, fnt_scan_next(sc), 1);
  /* Meanwhile: compaction leaves the old files to old snapshots only, and
  ** expiry (everything two hours old) removes them. */
  CHECK_RC(w, fnt_compact(w, 0), 1);
  ageFiles(dir);
  CHECK_RC(w, fnt_expire_snapshots(w, 0, &es), FNT_OK);
  CHECK(es.files_removed>0);
  CHECK_EQ_INT(es.unlisted_kept, 0);
  while( (rc = fnt_scan_next(sc))==1 ) rows++;
  CHECK_RC(r, rc, FNT_E_EXPIRED);
  CHECK(strstr(fnt_errmsg(r), "expired")!=0);
  fnt_scan_close(sc);
  fnt_snapshot_release(snap);
  /* Retrying reads the newest snapshot: the same rows. */
  CHECK_EQ_INT(countEvents(r, &rc), want);

  /* A young stray is kept, and counted. */
  {
    char path[1024];
    FILE *f;
    snprintf(path, sizeof(path), "%s/data/stray.fnseg", dir);
    f = fopen(path, "w");
    CHECK(f!=0);
    if( f ){ fputs("0123456789", f); fclose(f); }
    CHECK_RC(w, fnt_expire_snapshots(w, 0, &es), FNT_OK);
    CHECK_EQ_INT(es.unlisted_kept, 1);
    CHECK_EQ_INT(es.unlisted_kept_bytes, 10);
  }

  /* A listed file of the newest snapshot gone is corruption. */
  {
    char cmd[1024];
    snprintf(cmd, sizeof(cmd), "find '%s/data/fn_trace_events' -name '*.fnseg' -delete", dir);
    CHECK(system(cmd)==0);
    fnt_close(r);
    r = 0;
    CHECK_RC(r, fnt_open(dir, 0, &r), FNT_OK);
    CHECK_EQ_INT(countEvents(r, &rc), -1);
    CHECK_EQ_INT(rc, FNT_E_CORRUPT);
  }
  fnt_close(r);
  fnt_close(w);
  t_remove_tree(dir);
  return t_finish("test_store_snapshots");
}
