/*
** heat.c -- fnt_heat(run_id), the table-valued function of SPEC §5: per
** function of a run, inclusive time, self time and calls.
**
**   SELECT * FROM fnt_heat('run-2026-12-02-0001') ORDER BY inclusive_ns DESC;
**   SELECT key, self_ns FROM fnt_heat WHERE run_id = :run;    -- the same
**
** Schema (run_id is the HIDDEN argument column):
**   CREATE TABLE x(key TEXT, inclusive_ns INTEGER, self_ns INTEGER,
**                  calls INTEGER, run_id HIDDEN)
**
** The figures come from fnt_heat_compute() (store/heat.c), one streaming
** pass over the run's events, run in xFilter; the cursor then walks its
** rows, in no particular order.  The run_id argument is required: without
** it there is nothing to compute, so xBestIndex refuses such a plan with a
** message that shows the call.  A NULL or unknown run_id gives no rows.
**
** Eponymous-only (xCreate is NULL), as series.c: there is no table to
** create, only the function to call.
*/
#include <string.h>

#include "fntrace_int.h"

/* Column numbers, as declared in heatConnect. */
#define HEAT_COL_KEY          0
#define HEAT_COL_INCLUSIVE_NS 1
#define HEAT_COL_SELF_NS      2
#define HEAT_COL_CALLS        3
#define HEAT_COL_RUN_ID       4   /* HIDDEN: the argument */

typedef struct HeatVtab {
  sqlite3_vtab base;
  FntConn *pConn;
} HeatVtab;

typedef struct HeatCursor {
  sqlite3_vtab_cursor base;
  int bPinned;            /* this cursor holds a pin of pConn's snapshot */
  fnt_heat *pHeat;        /* the rows of the current xFilter, or NULL */
  size_t iRow;
  char *zRun;             /* the run_id argument (sqlite3_malloc'd), or NULL */
} HeatCursor;

static int heatConnect(sqlite3 *db, void *pAux, int argc,
                       const char *const *argv, sqlite3_vtab **ppVtab,
                       char **pzErr){
  HeatVtab *pTab;
  int rc;
  (void)argc; (void)argv; (void)pzErr;
  rc = sqlite3_declare_vtab(db,
      "CREATE TABLE x(key TEXT, inclusive_ns INTEGER, self_ns INTEGER, "
      "calls INTEGER, run_id HIDDEN)");
  if( rc!=SQLITE_OK ) return rc;
  pTab = sqlite3_malloc(sizeof(*pTab));
  if( pTab==0 ) return SQLITE_NOMEM;
  memset(pTab, 0, sizeof(*pTab));
  pTab->pConn = (FntConn*)pAux;
  *ppVtab = &pTab->base;
  return SQLITE_OK;
}

static int heatDisconnect(sqlite3_vtab *pVtab){
  sqlite3_free(pVtab);
  return SQLITE_OK;
}

static int heatOpen(sqlite3_vtab *pVtab, sqlite3_vtab_cursor **ppCursor){
  HeatCursor *pCur = sqlite3_malloc(sizeof(*pCur));
  (void)pVtab;
  if( pCur==0 ) return SQLITE_NOMEM;
  memset(pCur, 0, sizeof(*pCur));
  *ppCursor = &pCur->base;
  return SQLITE_OK;
}

static void heatCursorReset(HeatCursor *pCur){
  fnt_heat_free(pCur->pHeat);
  pCur->pHeat = 0;
  pCur->iRow = 0;
  sqlite3_free(pCur->zRun);
  pCur->zRun = 0;
}

static int heatClose(sqlite3_vtab_cursor *cur){
  HeatCursor *pCur = (HeatCursor*)cur;
  HeatVtab *pTab = (HeatVtab*)cur->pVtab;
  heatCursorReset(pCur);
  if( pCur->bPinned ) fntConnUnpin(pTab->pConn);
  sqlite3_free(pCur);
  return SQLITE_OK;
}

static int heatNext(sqlite3_vtab_cursor *cur){
  ((HeatCursor*)cur)->iRow++;
  return SQLITE_OK;
}

static int heatEof(sqlite3_vtab_cursor *cur){
  HeatCursor *pCur = (HeatCursor*)cur;
  return pCur->iRow>=fnt_heat_count(pCur->pHeat);
}

static int heatColumn(sqlite3_vtab_cursor *cur, sqlite3_context *ctx, int i){
  HeatCursor *pCur = (HeatCursor*)cur;
  const fnt_heat_row *pRow = &fnt_heat_rows(pCur->pHeat)[pCur->iRow];
  switch( i ){
    case HEAT_COL_KEY:
      sqlite3_result_text(ctx, pRow->key, -1, SQLITE_TRANSIENT);
      break;
    case HEAT_COL_INCLUSIVE_NS:
      sqlite3_result_int64(ctx, pRow->inclusive_ns);
      break;
    case HEAT_COL_SELF_NS:
      sqlite3_result_int64(ctx, pRow->self_ns);
      break;
    case HEAT_COL_CALLS:
      sqlite3_result_int64(ctx, pRow->calls);
      break;
    default:
      sqlite3_result_text(ctx, pCur->zRun, -1, SQLITE_TRANSIENT);
      break;
  }
  return SQLITE_OK;
}

static int heatRowid(sqlite3_vtab_cursor *cur, sqlite_int64 *pRowid){
  *pRowid = (sqlite_int64)((HeatCursor*)cur)->iRow + 1;
  return SQLITE_OK;
}

/*
** idxNum: 1 when run_id = ? is given, argv[0] being its value (the only
** plan xBestIndex accepts, so xFilter sees nothing else).
*/
static int heatFilter(sqlite3_vtab_cursor *cur, int idxNum,
                      const char *idxStr, int argc, sqlite3_value **argv){
  HeatCursor *pCur = (HeatCursor*)cur;
  HeatVtab *pTab = (HeatVtab*)cur->pVtab;
  FntConn *pConn = pTab->pConn;
  fnt_snapshot *pSnap = 0;
  const char *zRun;
  char *zErr = 0;
  int rc;
  (void)idxStr;

  heatCursorReset(pCur);
  if( idxNum!=1 || argc<1 ) return SQLITE_OK;   /* unreachable: no rows */
  zRun = (const char*)sqlite3_value_text(argv[0]);
  if( zRun==0 ){
    if( sqlite3_value_type(argv[0])!=SQLITE_NULL ) return SQLITE_NOMEM;
    return SQLITE_OK;                           /* NULL: no run, no rows */
  }
  pCur->zRun = sqlite3_mprintf("%s", zRun);
  if( pCur->zRun==0 ) return SQLITE_NOMEM;

  /* One pin per cursor, held until xClose: a cursor filtered again (the
  ** inner side of a join) keeps reading the statement's snapshot. */
  if( !pCur->bPinned ){
    rc = fntConnPin(pConn, &pSnap, &zErr);
    if( rc!=SQLITE_OK ){
      sqlite3_free(pTab->base.zErrMsg);
      pTab->base.zErrMsg = zErr;
      return rc;
    }
    pCur->bPinned = 1;
  }
  pSnap = pConn->pSnap;

  rc = fnt_heat_compute(pSnap, pCur->zRun, &pCur->pHeat);
  if( rc!=FNT_OK ){
    sqlite3_free(pTab->base.zErrMsg);
    pTab->base.zErrMsg = fntStoreError("fnt_heat", pConn->pStore, rc);
    return fntSqliteCode(rc);
  }
  return SQLITE_OK;
}

/*
** The one plan: run_id = ? (argv[0] of xFilter, idxNum 1).  A run_id
** constraint that is not usable in this join order gets SQLITE_CONSTRAINT,
** which makes the planner try another order (as series.c does); no run_id
** constraint at all is the caller's mistake, reported as such.
*/
static int heatBestIndex(sqlite3_vtab *pVtab, sqlite3_index_info *pInfo){
  int i;
  int iUsable = -1;
  int bUnusable = 0;
  for(i=0; i<pInfo->nConstraint; i++){
    const struct sqlite3_index_constraint *pC = &pInfo->aConstraint[i];
    if( pC->iColumn!=HEAT_COL_RUN_ID ) continue;
    if( pC->op!=SQLITE_INDEX_CONSTRAINT_EQ ) continue;
    if( pC->usable ){
      iUsable = i;
      break;
    }
    bUnusable = 1;
  }
  if( iUsable<0 ){
    if( bUnusable ) return SQLITE_CONSTRAINT;
    sqlite3_free(pVtab->zErrMsg);
    pVtab->zErrMsg = sqlite3_mprintf(
        "fnt_heat: the run_id argument is required, "
        "as in SELECT * FROM fnt_heat('run-id')");
    return SQLITE_ERROR;
  }
  pInfo->aConstraintUsage[iUsable].argvIndex = 1;
  pInfo->aConstraintUsage[iUsable].omit = 1;
  pInfo->idxNum = 1;
  /* One pass over the run's events: costly, but the only way; the row
  ** count is that of the run's functions, a guess here. */
  pInfo->estimatedCost = 1e6;
  pInfo->estimatedRows = 1000;
  return SQLITE_OK;
}

static sqlite3_module heatModule = {
  .iVersion   = 0,
  .xCreate    = 0,        /* eponymous-only */
  .xConnect   = heatConnect,
  .xBestIndex = heatBestIndex,
  .xDisconnect= heatDisconnect,
  .xOpen      = heatOpen,
  .xClose     = heatClose,
  .xFilter    = heatFilter,
  .xNext      = heatNext,
  .xEof       = heatEof,
  .xColumn    = heatColumn,
  .xRowid     = heatRowid,
};

int fntRegisterHeat(sqlite3 *db, FntConn *p){
  return sqlite3_create_module(db, "fnt_heat", &heatModule, p);
}
