/*
** flame.c -- stacks for a flame graph (SPEC §8) in SQL.
**
** fnt_flame(run_id [, t0, t1 [, thread]]): one row per distinct stack of
** the run (or of the window [t0, t1), clipped, of one thread), from
** fnt_flame_compute(); an FntTvf (tvf.c) whose last three arguments are
** optional.
**
**   SELECT stack, self_ns FROM fnt_flame('run-1') ORDER BY self_ns DESC;
**   SELECT * FROM fnt_flame('run-1', 5000000, 6000000, 2);
**
**   CREATE TABLE x(stack TEXT, self_ns INTEGER, calls INTEGER,
**                  run_id HIDDEN, t0 HIDDEN, t1 HIDDEN, thread HIDDEN)
**
** fnt_folded(run_id [, t0, t1 [, thread]]): the same rows as one text in
** the folded-stack format ("stack self_ns" lines, what flamegraph.pl,
** inferno and speedscope read); NULL for a NULL run_id.
**
**   SELECT writefile('run-1.folded', fnt_folded('run-1'));
**
** t0 and t1 come together; t1 <= t0, a window without its end, or an
** argument that is not an integer is an error naming it.
*/
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "fntrace_int.h"

#define FLAME_COL_RUN_ID 3    /* HIDDEN: run_id, t0, t1, thread */

/* An integer argument; 0, or an error message (sqlite3_malloc'd). */
static char *flameInt(const char *zFunc, const char *zName, const char *z,
                      int64_t *pOut){
  char *zEnd;
  long long v;
  errno = 0;
  v = strtoll(z, &zEnd, 10);
  if( z[0]==0 || *zEnd || errno ){
    return sqlite3_mprintf("%s: %s must be an integer, not '%s'", zFunc,
                           zName, z);
  }
  *pOut = v;
  return 0;
}

/* The window of arguments azArg[1..3] (any may be NULL: not given) into
** *pW; *pbWin 0 for the whole run.  0, or an error message. */
static char *flameWindow(const char *zFunc, const char *const *azArg,
                         fnt_flame_window *pW, int *pbWin){
  char *zErr;
  *pbWin = 0;
  memset(pW, 0, sizeof(*pW));
  pW->thread = -1;
  if( azArg[1]==0 && azArg[2]==0 ){
    if( azArg[3]==0 ) return 0;
    return sqlite3_mprintf("%s: a thread needs the window t0, t1 before it",
                           zFunc);
  }
  if( azArg[1]==0 || azArg[2]==0 ){
    return sqlite3_mprintf("%s: t0 and t1 go together, as in %s('run', "
                           "t0, t1)", zFunc, zFunc);
  }
  if( (zErr = flameInt(zFunc, "t0", azArg[1], &pW->t0))!=0 ) return zErr;
  if( (zErr = flameInt(zFunc, "t1", azArg[2], &pW->t1))!=0 ) return zErr;
  if( azArg[3] && (zErr = flameInt(zFunc, "thread", azArg[3], &pW->thread))!=0 ){
    return zErr;
  }
  if( azArg[3] && pW->thread<0 ){
    return sqlite3_mprintf("%s: thread must be >= 0, not %s", zFunc, azArg[3]);
  }
  if( pW->t1<=pW->t0 ){
    return sqlite3_mprintf("%s: t1 (%s) must be greater than t0 (%s)", zFunc,
                           azArg[2], azArg[1]);
  }
  *pbWin = 1;
  return 0;
}

static char *flameCheck(const char *const *azArg){
  fnt_flame_window w;
  int bWin;
  return flameWindow("fnt_flame", azArg, &w, &bWin);
}

static int flameCompute(fnt_snapshot *s, const char *const *az, void **pp,
                        size_t *pn){
  fnt_flame_window w;
  int bWin;
  int rc;
  sqlite3_free(flameWindow("fnt_flame", az, &w, &bWin));  /* xCheck passed */
  rc = fnt_flame_compute(s, az[0], bWin ? &w : 0, (fnt_flame**)pp);
  *pn = fnt_flame_count(*pp);
  return rc;
}

static void flameFree(void *p){ fnt_flame_free(p); }

static void flameColumn(const void *p, size_t i, int c, sqlite3_context *ctx){
  /* Rows are asked for in order (streamed flames make each on demand). */
  const fnt_flame_row *r = fnt_flame_row_at((fnt_flame*)p, i);
  if( r==0 ) return;
  switch( c ){
    case 0: sqlite3_result_text(ctx, r->stack, -1, SQLITE_TRANSIENT); break;
    case 1: sqlite3_result_int64(ctx, r->self_ns); break;
    default: sqlite3_result_int64(ctx, r->calls); break;
  }
}

static const FntTvf flameTvf = {
  .zName = "fnt_flame",
  .zSchema = "CREATE TABLE x(stack TEXT, self_ns INTEGER, calls INTEGER, "
             "run_id HIDDEN, t0 HIDDEN, t1 HIDDEN, thread HIDDEN)",
  .iFirstArg = FLAME_COL_RUN_ID,
  .nArg = 4,
  .nReq = 1,
  .zUsage = "fnt_flame: the run_id argument is required, as in SELECT * "
            "FROM fnt_flame('run-1') or fnt_flame('run-1', t0, t1 [, thread])",
  /* The calls of a run, or of a window of it. */
  .estimatedCost = 1e6,
  .xCompute = flameCompute,
  .xCheck = flameCheck,
  .xFree = flameFree,
  .xColumn = flameColumn,
};

/* fnt_folded(run_id [, t0, t1 [, thread]]) */
static void foldedFunc(sqlite3_context *ctx, int argc, sqlite3_value **argv){
  FntConn *p = sqlite3_user_data(ctx);
  const char *azArg[4] = {0, 0, 0, 0};
  fnt_flame_window w;
  fnt_snapshot *pSnap = 0;
  fnt_flame *f = 0;
  sqlite3_str *pOut;
  char *zErr = 0;
  int i, bWin, rc;
  for(i=0; i<argc && i<4; i++){
    azArg[i] = (const char*)sqlite3_value_text(argv[i]);
    if( azArg[i]==0 ) return;                    /* NULL: NULL */
  }
  if( (zErr = flameWindow("fnt_folded", azArg, &w, &bWin))!=0 ) goto error;
  rc = fntConnPin(p, &pSnap, &zErr);
  if( rc!=SQLITE_OK ) goto error;
  rc = fnt_flame_compute(pSnap, azArg[0], bWin ? &w : 0, &f);
  if( rc!=FNT_OK ){
    zErr = fntStoreError("fnt_folded", p->pStore, rc);
    fntConnUnpin(p, pSnap);
    goto error;
  }
  fntConnUnpin(p, pSnap);
  pOut = sqlite3_str_new(sqlite3_context_db_handle(ctx));
  for(i=0; (size_t)i<fnt_flame_count(f); i++){
    const fnt_flame_row *r = fnt_flame_row_at(f, (size_t)i);
    sqlite3_str_appendf(pOut, "%s %lld\n", r->stack, (long long)r->self_ns);
  }
  fnt_flame_free(f);
  rc = sqlite3_str_errcode(pOut);
  if( rc!=SQLITE_OK ){
    sqlite3_free(sqlite3_str_finish(pOut));
    sqlite3_result_error_code(ctx, rc);
    return;
  }
  i = sqlite3_str_length(pOut);
  if( i==0 ){                                  /* no calls: empty text */
    sqlite3_free(sqlite3_str_finish(pOut));
    sqlite3_result_text(ctx, "", 0, SQLITE_STATIC);
    return;
  }
  sqlite3_result_text(ctx, sqlite3_str_finish(pOut), i, sqlite3_free);
  return;
error:
  sqlite3_result_error(ctx, zErr ? zErr : "fnt_folded: out of memory", -1);
  sqlite3_free(zErr);
}

int fntRegisterFlame(sqlite3 *db, FntConn *p){
  int rc = fntRegisterTvf(db, p, &flameTvf);
  static const int aArity[] = { 1, 3, 4 };     /* run_id, a window, a thread */
  int i;
  for(i=0; rc==SQLITE_OK && i<3; i++){
    rc = sqlite3_create_function(db, "fnt_folded", aArity[i], SQLITE_UTF8, p,
                                 foldedFunc, 0, 0);
  }
  return rc;
}
