/*
** run_functions.c -- the table-valued functions of one run: fnt_heat
** (SPEC §5), fnt_account and fnt_callgraph (SPEC §7).  One module, generic
** over a RunFunc that says how to compute the rows and read their columns.
**
**   SELECT * FROM fnt_heat('run-2026-12-02-0001') ORDER BY inclusive_ns DESC;
**   SELECT key, p99_ns FROM fnt_account('run-1') ORDER BY p99_ns DESC;
**   SELECT * FROM fnt_callgraph('run-1') WHERE caller_key = '?main';
**   SELECT key, self_ns FROM fnt_heat WHERE run_id = :run;    -- the same
**
** Schemas: the function's columns, then run_id HIDDEN (the argument), e.g.
**   CREATE TABLE x(key TEXT, inclusive_ns INTEGER, self_ns INTEGER,
**                  calls INTEGER, run_id HIDDEN)
**
** The rows come from the store (fnt_heat_compute, fnt_account_compute,
** fnt_callgraph_compute: added up from the aggregates it keeps with the
** run's calls) in xFilter; the cursor then walks them.  The run_id
** argument is required: without it there is nothing to compute, so
** xBestIndex refuses such a plan with a message that shows the call.  A
** NULL or unknown run_id gives no rows.
**
** Eponymous-only (xCreate is NULL), as series.c: there is no table to
** create, only the function to call.
*/
#include <string.h>

#include "fntrace_int.h"

typedef struct RunFunc {
  const char *zName;
  const char *zSchema;          /* ends with ", run_id HIDDEN)" */
  int nCol;                     /* columns before run_id */
  int (*xCompute)(fnt_snapshot *pSnap, const char *zRun, void **ppRes);
  size_t (*xCount)(const void *pRes);
  void (*xColumn)(const void *pRes, size_t iRow, int iCol, sqlite3_context *ctx);
  void (*xFree)(void *pRes);
} RunFunc;

static void resultText(sqlite3_context *ctx, const char *z){
  if( z ) sqlite3_result_text(ctx, z, -1, SQLITE_TRANSIENT);
}

/* ---- fnt_heat */
static int heatCompute(fnt_snapshot *s, const char *z, void **pp){
  return fnt_heat_compute(s, z, (fnt_heat**)pp);
}
static size_t heatCount(const void *p){ return fnt_heat_count(p); }
static void heatFree(void *p){ fnt_heat_free(p); }
static void heatColumn(const void *p, size_t i, int c, sqlite3_context *ctx){
  const fnt_heat_row *r = &fnt_heat_rows(p)[i];
  switch( c ){
    case 0: resultText(ctx, r->key); break;
    case 1: sqlite3_result_int64(ctx, r->inclusive_ns); break;
    case 2: sqlite3_result_int64(ctx, r->self_ns); break;
    default: sqlite3_result_int64(ctx, r->calls); break;
  }
}

/* ---- fnt_account */
static int accountCompute(fnt_snapshot *s, const char *z, void **pp){
  return fnt_account_compute(s, z, (fnt_account**)pp);
}
static size_t accountCount(const void *p){ return fnt_account_count(p); }
static void accountFree(void *p){ fnt_account_free(p); }
static void accountColumn(const void *p, size_t i, int c, sqlite3_context *ctx){
  const fnt_account_row *r = &fnt_account_rows(p)[i];
  const int64_t v[] = { 0, 0, r->calls, r->min_ns, r->p50_ns, r->p90_ns,
                        r->p99_ns, r->max_ns, r->sum_ns, r->inclusive_ns,
                        r->self_ns };
  if( c==0 ) resultText(ctx, r->key);
  else if( c==1 ) resultText(ctx, r->symbol);
  else sqlite3_result_int64(ctx, v[c]);
}

/* ---- fnt_callgraph */
static int graphCompute(fnt_snapshot *s, const char *z, void **pp){
  return fnt_callgraph_compute(s, z, (fnt_callgraph**)pp);
}
static size_t graphCount(const void *p){ return fnt_callgraph_count(p); }
static void graphFree(void *p){ fnt_callgraph_free(p); }
static void graphColumn(const void *p, size_t i, int c, sqlite3_context *ctx){
  const fnt_edge_row *r = &fnt_callgraph_rows(p)[i];
  switch( c ){
    case 0: resultText(ctx, r->caller_key); break;
    case 1: resultText(ctx, r->callee_key); break;
    case 2: sqlite3_result_int64(ctx, r->calls); break;
    case 3: sqlite3_result_int64(ctx, r->total_ns); break;
    default: sqlite3_result_int64(ctx, r->self_ns); break;
  }
}

static const RunFunc aRunFunc[] = {
  { "fnt_heat",
    "CREATE TABLE x(key TEXT, inclusive_ns INTEGER, self_ns INTEGER, "
    "calls INTEGER, run_id HIDDEN)", 4,
    heatCompute, heatCount, heatColumn, heatFree },
  { "fnt_account",
    "CREATE TABLE x(key TEXT, symbol TEXT, calls INTEGER, min_ns INTEGER, "
    "p50_ns INTEGER, p90_ns INTEGER, p99_ns INTEGER, max_ns INTEGER, "
    "sum_ns INTEGER, inclusive_ns INTEGER, self_ns INTEGER, run_id HIDDEN)", 11,
    accountCompute, accountCount, accountColumn, accountFree },
  { "fnt_callgraph",
    "CREATE TABLE x(caller_key TEXT, callee_key TEXT, calls INTEGER, "
    "total_ns INTEGER, self_ns INTEGER, run_id HIDDEN)", 5,
    graphCompute, graphCount, graphColumn, graphFree },
};
#define N_RUN_FUNC ((int)(sizeof(aRunFunc)/sizeof(aRunFunc[0])))

/* What the module's pAux points to, one per function and connection. */
typedef struct RunAux {
  FntConn *pConn;
  const RunFunc *pFunc;
} RunAux;

typedef struct RunVtab {
  sqlite3_vtab base;
  RunAux aux;
} RunVtab;

typedef struct RunCursor {
  sqlite3_vtab_cursor base;
  int bPinned;            /* this cursor holds a pin of pConn's snapshot */
  void *pRes;             /* the rows of the current xFilter, or NULL */
  size_t iRow;
  char *zRun;             /* the run_id argument (sqlite3_malloc'd), or NULL */
} RunCursor;

static int runConnect(sqlite3 *db, void *pAux, int argc,
                      const char *const *argv, sqlite3_vtab **ppVtab,
                      char **pzErr){
  RunAux *pA = (RunAux*)pAux;
  RunVtab *pTab;
  int rc;
  (void)argc; (void)argv; (void)pzErr;
  rc = sqlite3_declare_vtab(db, pA->pFunc->zSchema);
  if( rc!=SQLITE_OK ) return rc;
  pTab = sqlite3_malloc(sizeof(*pTab));
  if( pTab==0 ) return SQLITE_NOMEM;
  memset(pTab, 0, sizeof(*pTab));
  pTab->aux = *pA;
  *ppVtab = &pTab->base;
  return SQLITE_OK;
}

static int runDisconnect(sqlite3_vtab *pVtab){
  sqlite3_free(pVtab);
  return SQLITE_OK;
}

static int runOpen(sqlite3_vtab *pVtab, sqlite3_vtab_cursor **ppCursor){
  RunCursor *pCur = sqlite3_malloc(sizeof(*pCur));
  (void)pVtab;
  if( pCur==0 ) return SQLITE_NOMEM;
  memset(pCur, 0, sizeof(*pCur));
  *ppCursor = &pCur->base;
  return SQLITE_OK;
}

static void runCursorReset(RunCursor *pCur){
  const RunFunc *pF = ((RunVtab*)pCur->base.pVtab)->aux.pFunc;
  if( pCur->pRes ) pF->xFree(pCur->pRes);
  pCur->pRes = 0;
  pCur->iRow = 0;
  sqlite3_free(pCur->zRun);
  pCur->zRun = 0;
}

static int runClose(sqlite3_vtab_cursor *cur){
  RunCursor *pCur = (RunCursor*)cur;
  RunVtab *pTab = (RunVtab*)cur->pVtab;
  runCursorReset(pCur);
  if( pCur->bPinned ) fntConnUnpin(pTab->aux.pConn);
  sqlite3_free(pCur);
  return SQLITE_OK;
}

static int runNext(sqlite3_vtab_cursor *cur){
  ((RunCursor*)cur)->iRow++;
  return SQLITE_OK;
}

static int runEof(sqlite3_vtab_cursor *cur){
  RunCursor *pCur = (RunCursor*)cur;
  const RunFunc *pF = ((RunVtab*)cur->pVtab)->aux.pFunc;
  return pCur->pRes==0 || pCur->iRow>=pF->xCount(pCur->pRes);
}

static int runColumn(sqlite3_vtab_cursor *cur, sqlite3_context *ctx, int i){
  RunCursor *pCur = (RunCursor*)cur;
  const RunFunc *pF = ((RunVtab*)cur->pVtab)->aux.pFunc;
  if( i>=pF->nCol ){
    resultText(ctx, pCur->zRun);
  }else{
    pF->xColumn(pCur->pRes, pCur->iRow, i, ctx);
  }
  return SQLITE_OK;
}

static int runRowid(sqlite3_vtab_cursor *cur, sqlite_int64 *pRowid){
  *pRowid = (sqlite_int64)((RunCursor*)cur)->iRow + 1;
  return SQLITE_OK;
}

/*
** idxNum: 1 when run_id = ? is given, argv[0] being its value (the only
** plan xBestIndex accepts, so xFilter sees nothing else).
*/
static int runFilter(sqlite3_vtab_cursor *cur, int idxNum,
                     const char *idxStr, int argc, sqlite3_value **argv){
  RunCursor *pCur = (RunCursor*)cur;
  RunVtab *pTab = (RunVtab*)cur->pVtab;
  FntConn *pConn = pTab->aux.pConn;
  const RunFunc *pF = pTab->aux.pFunc;
  fnt_snapshot *pSnap = 0;
  const char *zRun;
  char *zErr = 0;
  int rc;
  (void)idxStr;

  runCursorReset(pCur);
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

  rc = pF->xCompute(pSnap, pCur->zRun, &pCur->pRes);
  if( rc!=FNT_OK ){
    pCur->pRes = 0;
    sqlite3_free(pTab->base.zErrMsg);
    pTab->base.zErrMsg = fntStoreError(pF->zName, pConn->pStore, rc);
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
static int runBestIndex(sqlite3_vtab *pVtab, sqlite3_index_info *pInfo){
  const RunFunc *pF = ((RunVtab*)pVtab)->aux.pFunc;
  int i;
  int iUsable = -1;
  int bUnusable = 0;
  for(i=0; i<pInfo->nConstraint; i++){
    const struct sqlite3_index_constraint *pC = &pInfo->aConstraint[i];
    if( pC->iColumn!=pF->nCol ) continue;
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
        "%s: the run_id argument is required, as in SELECT * FROM %s('run-id')",
        pF->zName, pF->zName);
    return SQLITE_ERROR;
  }
  pInfo->aConstraintUsage[iUsable].argvIndex = 1;
  pInfo->aConstraintUsage[iUsable].omit = 1;
  pInfo->idxNum = 1;
  /* The row count is that of the run's functions (or edges), a guess. */
  pInfo->estimatedCost = 1e4;
  pInfo->estimatedRows = 1000;
  return SQLITE_OK;
}

static sqlite3_module runModule = {
  .iVersion   = 0,
  .xCreate    = 0,        /* eponymous-only */
  .xConnect   = runConnect,
  .xBestIndex = runBestIndex,
  .xDisconnect= runDisconnect,
  .xOpen      = runOpen,
  .xClose     = runClose,
  .xFilter    = runFilter,
  .xNext      = runNext,
  .xEof       = runEof,
  .xColumn    = runColumn,
  .xRowid     = runRowid,
};

int fntRegisterRunFunctions(sqlite3 *db, FntConn *p){
  int i, rc = SQLITE_OK;
  for(i=0; i<N_RUN_FUNC && rc==SQLITE_OK; i++){
    RunAux *pA = sqlite3_malloc(sizeof(*pA));
    if( pA==0 ) return SQLITE_NOMEM;
    pA->pConn = p;
    pA->pFunc = &aRunFunc[i];
    rc = sqlite3_create_module_v2(db, aRunFunc[i].zName, &runModule, pA, sqlite3_free);
  }
  return rc;
}
