/*
** compare.c -- fnt_compare(repo, commit_a, commit_b), the table-valued
** function of SPEC §9: per key, the runs of commit_a against those of
** commit_b (medians of the key's inclusive_ns, their ratio, a Mann-Whitney
** U p-value), the likeliest changes first.
**
**   SELECT key, median_a, median_b, ratio, p_value
**     FROM fnt_compare('acme/widget', '9f1c2e0', 'a41b7d3')
**    WHERE p_value < 0.01 AND ratio > 1.05;
**
** Schema (repo, commit_a, commit_b are the HIDDEN argument columns):
**   CREATE TABLE x(key TEXT, symbol TEXT, runs_a INTEGER, runs_b INTEGER,
**                  median_a REAL, median_b REAL, ratio REAL, p_value REAL,
**                  repo HIDDEN, commit_a HIDDEN, commit_b HIDDEN)
**
** xFilter runs fnt_compare_compute() (store/compare.c), which reads each
** run's heat; the cursor walks its rows in the store's order (p_value, then
** ratio descending).  The three arguments are required (xBestIndex refuses
** a plan without them, with a message that shows the call); a NULL argument
** gives no rows.  Eponymous-only, like fnt_heat.
*/
#include <math.h>
#include <string.h>

#include "fntrace_int.h"

/* Column numbers, as declared in cmpConnect. */
#define CMP_COL_KEY       0
#define CMP_COL_SYMBOL    1
#define CMP_COL_RUNS_A    2
#define CMP_COL_RUNS_B    3
#define CMP_COL_MEDIAN_A  4
#define CMP_COL_MEDIAN_B  5
#define CMP_COL_RATIO     6
#define CMP_COL_P_VALUE   7
#define CMP_COL_REPO      8   /* HIDDEN: the arguments, in call order */
#define CMP_NARG          3

typedef struct CmpVtab {
  sqlite3_vtab base;
  FntConn *pConn;
} CmpVtab;

typedef struct CmpCursor {
  sqlite3_vtab_cursor base;
  int bPinned;              /* this cursor holds a pin of pConn's snapshot */
  fnt_compare *pCmp;        /* the rows of the current xFilter, or NULL */
  size_t iRow;
  char *azArg[CMP_NARG];    /* the arguments (sqlite3_malloc'd), or NULL */
} CmpCursor;

static int cmpConnect(sqlite3 *db, void *pAux, int argc,
                      const char *const *argv, sqlite3_vtab **ppVtab,
                      char **pzErr){
  CmpVtab *pTab;
  int rc;
  (void)argc; (void)argv; (void)pzErr;
  rc = sqlite3_declare_vtab(db,
      "CREATE TABLE x(key TEXT, symbol TEXT, runs_a INTEGER, runs_b INTEGER, "
      "median_a REAL, median_b REAL, ratio REAL, p_value REAL, "
      "repo HIDDEN, commit_a HIDDEN, commit_b HIDDEN)");
  if( rc!=SQLITE_OK ) return rc;
  pTab = sqlite3_malloc(sizeof(*pTab));
  if( pTab==0 ) return SQLITE_NOMEM;
  memset(pTab, 0, sizeof(*pTab));
  pTab->pConn = (FntConn*)pAux;
  *ppVtab = &pTab->base;
  return SQLITE_OK;
}

static int cmpDisconnect(sqlite3_vtab *pVtab){
  sqlite3_free(pVtab);
  return SQLITE_OK;
}

static int cmpOpen(sqlite3_vtab *pVtab, sqlite3_vtab_cursor **ppCursor){
  CmpCursor *pCur = sqlite3_malloc(sizeof(*pCur));
  (void)pVtab;
  if( pCur==0 ) return SQLITE_NOMEM;
  memset(pCur, 0, sizeof(*pCur));
  *ppCursor = &pCur->base;
  return SQLITE_OK;
}

static void cmpCursorReset(CmpCursor *pCur){
  int i;
  fnt_compare_free(pCur->pCmp);
  pCur->pCmp = 0;
  pCur->iRow = 0;
  for(i=0; i<CMP_NARG; i++){
    sqlite3_free(pCur->azArg[i]);
    pCur->azArg[i] = 0;
  }
}

static int cmpClose(sqlite3_vtab_cursor *cur){
  CmpCursor *pCur = (CmpCursor*)cur;
  CmpVtab *pTab = (CmpVtab*)cur->pVtab;
  cmpCursorReset(pCur);
  if( pCur->bPinned ) fntConnUnpin(pTab->pConn);
  sqlite3_free(pCur);
  return SQLITE_OK;
}

static int cmpNext(sqlite3_vtab_cursor *cur){
  ((CmpCursor*)cur)->iRow++;
  return SQLITE_OK;
}

static int cmpEof(sqlite3_vtab_cursor *cur){
  CmpCursor *pCur = (CmpCursor*)cur;
  return pCur->iRow>=fnt_compare_count(pCur->pCmp);
}

/* A REAL, or NULL for the store's NAN. */
static void cmpResultReal(sqlite3_context *ctx, double v){
  if( isnan(v) ) sqlite3_result_null(ctx);
  else sqlite3_result_double(ctx, v);
}

static int cmpColumn(sqlite3_vtab_cursor *cur, sqlite3_context *ctx, int i){
  CmpCursor *pCur = (CmpCursor*)cur;
  const fnt_compare_row *pRow = &fnt_compare_rows(pCur->pCmp)[pCur->iRow];
  switch( i ){
    case CMP_COL_KEY:
      sqlite3_result_text(ctx, pRow->key, -1, SQLITE_TRANSIENT);
      break;
    case CMP_COL_SYMBOL:
      sqlite3_result_text(ctx, pRow->symbol, -1, SQLITE_TRANSIENT);
      break;
    case CMP_COL_RUNS_A:   sqlite3_result_int64(ctx, pRow->runs_a); break;
    case CMP_COL_RUNS_B:   sqlite3_result_int64(ctx, pRow->runs_b); break;
    case CMP_COL_MEDIAN_A: cmpResultReal(ctx, pRow->median_a); break;
    case CMP_COL_MEDIAN_B: cmpResultReal(ctx, pRow->median_b); break;
    case CMP_COL_RATIO:    cmpResultReal(ctx, pRow->ratio); break;
    case CMP_COL_P_VALUE:  cmpResultReal(ctx, pRow->p_value); break;
    default:
      sqlite3_result_text(ctx, pCur->azArg[i-CMP_COL_REPO], -1,
                          SQLITE_TRANSIENT);
      break;
  }
  return SQLITE_OK;
}

static int cmpRowid(sqlite3_vtab_cursor *cur, sqlite_int64 *pRowid){
  *pRowid = (sqlite_int64)((CmpCursor*)cur)->iRow + 1;
  return SQLITE_OK;
}

/*
** idxNum: 7 when repo, commit_a and commit_b are all given by =, argv[0..2]
** being their values in that order (the only plan xBestIndex accepts).
*/
static int cmpFilter(sqlite3_vtab_cursor *cur, int idxNum,
                     const char *idxStr, int argc, sqlite3_value **argv){
  CmpCursor *pCur = (CmpCursor*)cur;
  CmpVtab *pTab = (CmpVtab*)cur->pVtab;
  FntConn *pConn = pTab->pConn;
  fnt_snapshot *pSnap = 0;
  char *zErr = 0;
  int i, rc;
  (void)idxStr;

  cmpCursorReset(pCur);
  if( idxNum!=7 || argc<CMP_NARG ) return SQLITE_OK;   /* unreachable */
  for(i=0; i<CMP_NARG; i++){
    const char *z = (const char*)sqlite3_value_text(argv[i]);
    if( z==0 ){
      if( sqlite3_value_type(argv[i])!=SQLITE_NULL ) return SQLITE_NOMEM;
      return SQLITE_OK;                         /* NULL: no rows */
    }
    pCur->azArg[i] = sqlite3_mprintf("%s", z);
    if( pCur->azArg[i]==0 ) return SQLITE_NOMEM;
  }

  /* One pin per cursor, held until xClose, as fnt_heat does. */
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

  rc = fnt_compare_compute(pSnap, pCur->azArg[0], pCur->azArg[1],
                           pCur->azArg[2], &pCur->pCmp);
  if( rc!=FNT_OK ){
    sqlite3_free(pTab->base.zErrMsg);
    pTab->base.zErrMsg = fntStoreError("fnt_compare", pConn->pStore, rc);
    return fntSqliteCode(rc);
  }
  return SQLITE_OK;
}

/*
** The one plan: repo = ?, commit_a = ?, commit_b = ? (argv[0..2] of
** xFilter, idxNum 7).  An argument whose constraint is unusable in this
** join order gets SQLITE_CONSTRAINT, so the planner tries another order;
** a missing argument is the caller's mistake, reported as such.
*/
static int cmpBestIndex(sqlite3_vtab *pVtab, sqlite3_index_info *pInfo){
  int aUse[CMP_NARG] = {-1, -1, -1};
  int bUnusable = 0;
  int i;
  for(i=0; i<pInfo->nConstraint; i++){
    const struct sqlite3_index_constraint *pC = &pInfo->aConstraint[i];
    int iArg = pC->iColumn - CMP_COL_REPO;
    if( iArg<0 || iArg>=CMP_NARG ) continue;
    if( pC->op!=SQLITE_INDEX_CONSTRAINT_EQ ) continue;
    if( pC->usable ) aUse[iArg] = i;
    else bUnusable = 1;
  }
  for(i=0; i<CMP_NARG; i++){
    if( aUse[i]>=0 ) continue;
    if( bUnusable ) return SQLITE_CONSTRAINT;
    sqlite3_free(pVtab->zErrMsg);
    pVtab->zErrMsg = sqlite3_mprintf(
        "fnt_compare: the repo, commit_a and commit_b arguments are "
        "required, as in SELECT * FROM fnt_compare('repo', 'commit-a', "
        "'commit-b')");
    return SQLITE_ERROR;
  }
  for(i=0; i<CMP_NARG; i++){
    pInfo->aConstraintUsage[aUse[i]].argvIndex = i+1;
    pInfo->aConstraintUsage[aUse[i]].omit = 1;
  }
  pInfo->idxNum = 7;
  /* The heat of every run of both commits: costly.  Rows: the keys. */
  pInfo->estimatedCost = 1e7;
  pInfo->estimatedRows = 1000;
  return SQLITE_OK;
}

static sqlite3_module cmpModule = {
  .iVersion   = 0,
  .xCreate    = 0,        /* eponymous-only */
  .xConnect   = cmpConnect,
  .xBestIndex = cmpBestIndex,
  .xDisconnect= cmpDisconnect,
  .xOpen      = cmpOpen,
  .xClose     = cmpClose,
  .xFilter    = cmpFilter,
  .xNext      = cmpNext,
  .xEof       = cmpEof,
  .xColumn    = cmpColumn,
  .xRowid     = cmpRowid,
};

int fntRegisterCompare(sqlite3 *db, FntConn *p){
  return sqlite3_create_module(db, "fnt_compare", &cmpModule, p);
}
