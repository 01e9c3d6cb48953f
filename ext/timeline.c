/*
** timeline.c -- fnt_timeline (SPEC §8), what a viewer draws for the window
** [t0, t1) of a run at `buckets` columns: per (thread, depth, bucket) the
** longest call starting in the bucket, and per (thread, depth) the call
** still running at t0 as bucket -1.  An FntTvf (tvf.c does the
** sqlite3_module part); the rows come from fnt_timeline_compute().
**
**   SELECT thread, depth, bucket, symbol, dur_ns, calls
**     FROM fnt_timeline('demo', 0, 50000000, 2000) ORDER BY thread, depth, bucket;
**   SELECT * FROM fnt_timeline('demo', 0, 50000000, 2000, 7);   -- thread 7 only
**
** Schema (run_id, t0, t1, buckets and the optional thread are the HIDDEN
** argument columns):
**   CREATE TABLE x(thread INTEGER, depth INTEGER, bucket INTEGER,
**                  call_id INTEGER, start_ns INTEGER, dur_ns INTEGER,
**                  key TEXT, symbol TEXT, calls INTEGER, run_id HIDDEN,
**                  t0 HIDDEN, t1 HIDDEN, buckets HIDDEN, thread_arg HIDDEN)
**
** t1 <= t0, buckets < 1 and an unknown run are errors (the store's
** message); a NULL argument, or a negative thread, gives no rows.
*/
#include <errno.h>
#include <stdlib.h>

#include "fntrace_int.h"

static const char *const azName[] = { "run_id", "t0", "t1", "buckets", "thread" };

/* Arguments 1..4 (those given) must be integers: 0, or the error. */
static char *tlCheck(const char *const *az){
  int i;
  for(i=1; i<5; i++){
    char *zEnd;
    if( az[i]==0 ) continue;
    errno = 0;
    (void)strtoll(az[i], &zEnd, 10);
    if( az[i][0]==0 || *zEnd || errno ){
      return sqlite3_mprintf("fnt_timeline: %s must be an integer, not '%s'",
                             azName[i], az[i]);
    }
  }
  return 0;
}

static int tlCompute(fnt_snapshot *s, const char *const *az, void **pp, size_t *pn){
  int64_t thread = az[4] ? strtoll(az[4], 0, 10) : -1;
  int rc;
  *pn = 0;
  if( az[4] && thread<0 ) return FNT_OK;     /* no such thread */
  rc = fnt_timeline_compute(s, az[0], strtoll(az[1], 0, 10),
                            strtoll(az[2], 0, 10), strtoll(az[3], 0, 10),
                            thread, (fnt_timeline**)pp);
  *pn = fnt_timeline_count(*pp);
  return rc;
}

static void tlFree(void *p){ fnt_timeline_free(p); }

static void tlColumn(const void *p, size_t i, int c, sqlite3_context *ctx){
  const fnt_timeline_row *r = &fnt_timeline_rows(p)[i];
  const int64_t v[] = { r->thread, r->depth, r->bucket, r->call_id,
                        r->start_ns, r->dur_ns, 0, 0, r->calls };
  if( c==6 || c==7 ){
    const char *z = c==6 ? r->key : r->symbol;
    if( z ) sqlite3_result_text(ctx, z, -1, SQLITE_TRANSIENT);
  }else{
    sqlite3_result_int64(ctx, v[c]);
  }
}

static const FntTvf timelineTvf = {
  .zName = "fnt_timeline",
  .zSchema = "CREATE TABLE x(thread INTEGER, depth INTEGER, bucket INTEGER, "
             "call_id INTEGER, start_ns INTEGER, dur_ns INTEGER, key TEXT, "
             "symbol TEXT, calls INTEGER, run_id HIDDEN, t0 HIDDEN, "
             "t1 HIDDEN, buckets HIDDEN, thread_arg HIDDEN)",
  .iFirstArg = 9, .nArg = 5, .nReq = 4,     /* thread is optional */
  .zUsage = "fnt_timeline: the run_id, t0, t1 and buckets arguments are "
            "required, as in SELECT * FROM fnt_timeline('run-id', 0, "
            "1000000, 2000 [, thread])",
  .estimatedCost = 1e4,
  .xCompute = tlCompute, .xCheck = tlCheck, .xFree = tlFree,
  .xColumn = tlColumn,
};

int fntRegisterTimeline(sqlite3 *db, FntConn *p){
  return fntRegisterTvf(db, p, &timelineTvf);
}
