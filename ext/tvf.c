/*
** tvf.c -- table-valued functions whose rows one store call computes from
** their arguments (fnt_heat, fnt_account, fnt_callgraph, fnt_compare,
** ...): the sqlite3_module methods they share.  Each such function describes itself with an FntTvf (its schema,
** which columns are its arguments, how to compute and read its rows) and
** registers through fntRegisterTvf(); this file does the rest.
**
** The arguments are the HIDDEN columns at the end of the schema, given
** with =; the first nReq are required, the others optional (fnt_flame's
** window).  xFilter pins the statement's snapshot (one pin per
** cursor, held until xClose, so that a cursor filtered again -- the inner
** side of a join -- keeps reading the statement's snapshot), copies the
** arguments and calls xCompute; the cursor then walks the rows.  A NULL
** argument gives no rows.  Eponymous-only (xCreate is NULL), as series.c:
** there is no table to create, only the function to call.
*/
#include <string.h>

#include "fntrace_int.h"

#define TVF_MAXARG 8

/* The module's user data: whose connection, which function. */
typedef struct TvfAux {
  FntConn *pConn;
  const FntTvf *pTvf;
} TvfAux;

typedef struct TvfVtab {
  sqlite3_vtab base;
  TvfAux *pAux;
} TvfVtab;

typedef struct TvfCursor {
  sqlite3_vtab_cursor base;
  void *pRows;              /* the rows of the current xFilter, or NULL */
  size_t nRow, iRow;
  char *azArg[TVF_MAXARG];  /* the arguments (sqlite3_malloc'd), or NULL */
} TvfCursor;

static int tvfConnect(sqlite3 *db, void *pAux, int argc,
                      const char *const *argv, sqlite3_vtab **ppVtab,
                      char **pzErr){
  TvfVtab *pTab;
  int rc;
  (void)argc; (void)argv; (void)pzErr;
  rc = sqlite3_declare_vtab(db, ((TvfAux*)pAux)->pTvf->zSchema);
  if( rc!=SQLITE_OK ) return rc;
  pTab = sqlite3_malloc(sizeof(*pTab));
  if( pTab==0 ) return SQLITE_NOMEM;
  memset(pTab, 0, sizeof(*pTab));
  pTab->pAux = (TvfAux*)pAux;
  *ppVtab = &pTab->base;
  return SQLITE_OK;
}

static int tvfDisconnect(sqlite3_vtab *pVtab){
  sqlite3_free(pVtab);
  return SQLITE_OK;
}

static int tvfOpen(sqlite3_vtab *pVtab, sqlite3_vtab_cursor **ppCursor){
  TvfCursor *pCur = sqlite3_malloc(sizeof(*pCur));
  (void)pVtab;
  if( pCur==0 ) return SQLITE_NOMEM;
  memset(pCur, 0, sizeof(*pCur));
  *ppCursor = &pCur->base;
  return SQLITE_OK;
}

static void tvfCursorReset(TvfCursor *pCur, const FntTvf *pTvf){
  int i;
  if( pCur->pRows ) pTvf->xFree(pCur->pRows);
  pCur->pRows = 0;
  pCur->nRow = pCur->iRow = 0;
  for(i=0; i<TVF_MAXARG; i++){
    sqlite3_free(pCur->azArg[i]);
    pCur->azArg[i] = 0;
  }
}

static int tvfClose(sqlite3_vtab_cursor *cur){
  TvfCursor *pCur = (TvfCursor*)cur;
  TvfAux *pAux = ((TvfVtab*)cur->pVtab)->pAux;
  tvfCursorReset(pCur, pAux->pTvf);
  sqlite3_free(pCur);
  return SQLITE_OK;
}

static int tvfNext(sqlite3_vtab_cursor *cur){
  ((TvfCursor*)cur)->iRow++;
  return SQLITE_OK;
}

static int tvfEof(sqlite3_vtab_cursor *cur){
  TvfCursor *pCur = (TvfCursor*)cur;
  return pCur->iRow>=pCur->nRow;
}

static int tvfColumn(sqlite3_vtab_cursor *cur, sqlite3_context *ctx, int i){
  TvfCursor *pCur = (TvfCursor*)cur;
  const FntTvf *pTvf = ((TvfVtab*)cur->pVtab)->pAux->pTvf;
  if( i>=pTvf->iFirstArg ){
    sqlite3_result_text(ctx, pCur->azArg[i-pTvf->iFirstArg], -1,
                        SQLITE_TRANSIENT);
  }else{
    pTvf->xColumn(pCur->pRows, pCur->iRow, i, ctx);
  }
  return SQLITE_OK;
}

static int tvfRowid(sqlite3_vtab_cursor *cur, sqlite_int64 *pRowid){
  *pRowid = (sqlite_int64)((TvfCursor*)cur)->iRow + 1;
  return SQLITE_OK;
}

/* How many arguments are required. */
static int tvfRequired(const FntTvf *pTvf){
  return pTvf->nReq>0 ? pTvf->nReq : pTvf->nArg;
}

/*
** idxNum: bit k set when argument k is given by = (every required one is);
** argv holds the given arguments in column order.
*/
static int tvfFilter(sqlite3_vtab_cursor *cur, int idxNum,
                     const char *idxStr, int argc, sqlite3_value **argv){
  TvfCursor *pCur = (TvfCursor*)cur;
  TvfVtab *pTab = (TvfVtab*)cur->pVtab;
  FntConn *pConn = pTab->pAux->pConn;
  const FntTvf *pTvf = pTab->pAux->pTvf;
  fnt_snapshot *pSnap = 0;
  char *zErr = 0;
  int i, rc;
  (void)idxStr;

  int iArgv = 0;
  tvfCursorReset(pCur, pTvf);
  if( (idxNum & ((1<<tvfRequired(pTvf))-1))!=(1<<tvfRequired(pTvf))-1 ){
    return SQLITE_OK;
  }
  for(i=0; i<pTvf->nArg; i++){
    const char *z;
    if( (idxNum & (1<<i))==0 ) continue;       /* optional, not given */
    if( iArgv>=argc ) return SQLITE_OK;
    z = (const char*)sqlite3_value_text(argv[iArgv]);
    if( z==0 ){
      if( sqlite3_value_type(argv[iArgv])!=SQLITE_NULL ) return SQLITE_NOMEM;
      return SQLITE_OK;                         /* NULL: no rows */
    }
    iArgv++;
    pCur->azArg[i] = sqlite3_mprintf("%s", z);
    if( pCur->azArg[i]==0 ) return SQLITE_NOMEM;
  }
  /* The rows are computed here: the snapshot is the statement's (its
  ** other cursors read the same), needed no longer. */
  rc = fntConnPin(pConn, &pSnap, &zErr);
  if( rc!=SQLITE_OK ){
    sqlite3_free(pTab->base.zErrMsg);
    pTab->base.zErrMsg = zErr;
    return rc;
  }
  if( pTvf->xCheck && (zErr = pTvf->xCheck((const char *const*)pCur->azArg))!=0 ){
    fntConnUnpin(pConn, pSnap);
    sqlite3_free(pTab->base.zErrMsg);
    pTab->base.zErrMsg = zErr;
    return SQLITE_ERROR;
  }
  rc = pTvf->xCompute(pSnap, (const char *const*)pCur->azArg,
                      &pCur->pRows, &pCur->nRow);
  fntConnUnpin(pConn, pSnap);
  if( rc!=FNT_OK ){
    sqlite3_free(pTab->base.zErrMsg);
    pTab->base.zErrMsg = fntStoreError(pTvf->zName, pConn->pStore, rc);
    return fntSqliteCode(rc);
  }
  return SQLITE_OK;
}

/*
** The one plan: every given argument column = ? (argv in column order).  An
** argument whose constraint is unusable in this join order gets
** SQLITE_CONSTRAINT, which makes the planner try another order (as series.c
** does); a missing argument is the caller's mistake, reported as such.
*/
static int tvfBestIndex(sqlite3_vtab *pVtab, sqlite3_index_info *pInfo){
  const FntTvf *pTvf = ((TvfVtab*)pVtab)->pAux->pTvf;
  int aUse[TVF_MAXARG];
  int bUnusable = 0;
  int i, iArgv = 0;
  for(i=0; i<pTvf->nArg; i++) aUse[i] = -1;
  for(i=0; i<pInfo->nConstraint; i++){
    const struct sqlite3_index_constraint *pC = &pInfo->aConstraint[i];
    int iArg = pC->iColumn - pTvf->iFirstArg;
    if( iArg<0 || iArg>=pTvf->nArg ) continue;
    if( pC->op!=SQLITE_INDEX_CONSTRAINT_EQ ) continue;
    if( pC->usable ) aUse[iArg] = i;
    else bUnusable = 1;
  }
  /* An optional argument the call gives (from a table joined to it) but
  ** this join order cannot: left out, it would read as not given. */
  for(i=0; bUnusable && i<pInfo->nConstraint; i++){
    int iArg = pInfo->aConstraint[i].iColumn - pTvf->iFirstArg;
    if( iArg>=0 && iArg<pTvf->nArg && aUse[iArg]<0
     && pInfo->aConstraint[i].op==SQLITE_INDEX_CONSTRAINT_EQ ) return SQLITE_CONSTRAINT;
  }
  for(i=0; i<pTvf->nArg; i++){
    if( aUse[i]>=0 || i>=tvfRequired(pTvf) ) continue;
    if( bUnusable ) return SQLITE_CONSTRAINT;
    sqlite3_free(pVtab->zErrMsg);
    pVtab->zErrMsg = sqlite3_mprintf("%s", pTvf->zUsage);
    return SQLITE_ERROR;
  }
  pInfo->idxNum = 0;
  for(i=0; i<pTvf->nArg; i++){
    if( aUse[i]<0 ) continue;
    pInfo->aConstraintUsage[aUse[i]].argvIndex = ++iArgv;
    pInfo->aConstraintUsage[aUse[i]].omit = 1;
    pInfo->idxNum |= 1<<i;
  }
  pInfo->estimatedCost = pTvf->estimatedCost;
  pInfo->estimatedRows = 1000;     /* the keys of a run: a guess */
  return SQLITE_OK;
}

static sqlite3_module tvfModule = {
  .iVersion   = 0,
  .xCreate    = 0,        /* eponymous-only */
  .xConnect   = tvfConnect,
  .xBestIndex = tvfBestIndex,
  .xDisconnect= tvfDisconnect,
  .xOpen      = tvfOpen,
  .xClose     = tvfClose,
  .xFilter    = tvfFilter,
  .xNext      = tvfNext,
  .xEof       = tvfEof,
  .xColumn    = tvfColumn,
  .xRowid     = tvfRowid,
};

int fntRegisterTvf(sqlite3 *db, FntConn *p, const FntTvf *pTvf){
  TvfAux *pAux;
  if( pTvf->nArg<1 || pTvf->nArg>TVF_MAXARG ) return SQLITE_MISUSE;
  pAux = sqlite3_malloc(sizeof(*pAux));
  if( pAux==0 ) return SQLITE_NOMEM;
  pAux->pConn = p;
  pAux->pTvf = pTvf;
  /* SQLite frees pAux with the module, also when registering fails. */
  return sqlite3_create_module_v2(db, pTvf->zName, &tvfModule, pAux,
                                  sqlite3_free);
}
