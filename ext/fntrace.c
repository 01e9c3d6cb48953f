/*
** fntrace.c -- the entry point of the fntrace SQLite extension.
**
**   .load ./build/fntrace
**   SELECT fnt_open('warehouse');            -- opens (creates) a warehouse
**   SELECT * FROM fn_trace_run_summary;      -- eponymous virtual tables
**   SELECT fntrace_version();
**
** This file owns the per-connection state (FntConn), fnt_open() and the
** mapping of store errors to SQLite's; the tables, filing functions and
** fnt_heat live in files of their own.
*/
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "sqlite3ext.h"
SQLITE_EXTENSION_INIT1

#include "fntrace_int.h"

int fntSqliteCode(int rc){
  switch( rc ){
    case FNT_OK:          return SQLITE_OK;
    case FNT_E_NOMEM:     return SQLITE_NOMEM;
    case FNT_E_CORRUPT:   return SQLITE_CORRUPT;
    case FNT_E_BUSY:
    case FNT_E_EXPIRED:   return SQLITE_BUSY;   /* retry: both go away */
    case FNT_E_INVALID:
    case FNT_E_CONFLICT:  return SQLITE_CONSTRAINT;
    case FNT_E_NOTFOUND:  return SQLITE_NOTFOUND;
    case FNT_E_FORMAT:    return SQLITE_CANTOPEN;
    case FNT_E_IO:        return SQLITE_IOERR;
    default:              return SQLITE_ERROR;
  }
}

char *fntStoreError(const char *zPrefix, fnt_store *pStore, int rc){
  const char *zMsg = pStore ? fnt_errmsg(pStore) : "";
  if( zMsg==0 || zMsg[0]==0 ) zMsg = fnt_strerror(rc);
  return sqlite3_mprintf("%s: %s", zPrefix, zMsg);
}

static void epochDrop(FntConn *p, int i);

/* Replaces the connection's warehouse with the one at zPath (made there
** when bCreate and the folder is absent or empty). */
static int fntConnOpen(FntConn *p, const char *zPath, int bCreate,
                       char **pzErr){
  fnt_store *pNew = 0;
  int rc;
  int i;
  for(i=0; i<p->nEpoch; i++){
    if( p->aEpoch[i].nOpen>0 ){
      *pzErr = sqlite3_mprintf("fnt_open: cannot switch warehouses while a "
                               "statement is reading one");
      return SQLITE_BUSY;
    }
  }
  rc = fnt_open(zPath, bCreate ? FNT_OPEN_CREATE : 0, &pNew);
  if( rc!=FNT_OK ){
    *pzErr = fntStoreError("fnt_open", pNew, rc);
    fnt_close(pNew);
    return fntSqliteCode(rc);
  }
  while( p->nEpoch>0 ) epochDrop(p, p->nEpoch-1);   /* the old warehouse's */
  fnt_close(p->pStore);
  p->pStore = pNew;
  return SQLITE_OK;
}

int fntConnStore(FntConn *p, int bCreate, fnt_store **ppStore, char **pzErr){
  if( p->pStore==0 ){
    const char *zEnv = getenv("FNT_WAREHOUSE");
    if( zEnv==0 || zEnv[0]==0 ){
      *pzErr = sqlite3_mprintf("no warehouse is open: call "
          "fnt_open('path/to/warehouse') first (or set $FNT_WAREHOUSE)");
      return SQLITE_ERROR;
    }
    int rc = fntConnOpen(p, zEnv, bCreate, pzErr);
    if( rc!=SQLITE_OK ){
      char *zMsg = sqlite3_mprintf("$FNT_WAREHOUSE: %s", *pzErr);
      sqlite3_free(*pzErr);
      *pzErr = zMsg;
      return rc;
    }
  }
  *ppStore = p->pStore;
  return SQLITE_OK;
}

/*
** A statement's snapshot.  SQLite tells a virtual table nothing of the
** statement that runs it, and closes and reopens a correlated subquery's
** cursor for every outer row, so "no cursor open" does not mean "the
** statement ended".  What SQLite does expose tells a statement's run apart:
** sqlite3_stmt_busy() holds from its first step to its reset or end, and
** SQLITE_STMTSTATUS_RUN counts its resets, so the set of busy statements
** with their run counts stays the same while one statement runs and changes
** once it is reset, ends, or another starts.  A statement prepared after
** the first was finalized may get its address and run count; but its plans
** were numbered (fntConnPlan, by xBestIndex at prepare time) after the
** first statement pinned its snapshot, at its first xFilter, which tells
** them apart.  An epoch is such a statement's snapshot, kept until a cursor
** opens in a set of busy statements that no longer holds its own.
*/
static void epochFree(FntEpoch *e){
  fnt_snapshot_release(e->pSnap);
  sqlite3_free(e->aStmt);
  memset(e, 0, sizeof(*e));
}

static void epochDrop(FntConn *p, int i){
  epochFree(&p->aEpoch[i]);
  memmove(&p->aEpoch[i], &p->aEpoch[i+1], sizeof(FntEpoch)*(size_t)(p->nEpoch-i-1));
  p->nEpoch--;
  memset(&p->aEpoch[p->nEpoch], 0, sizeof(FntEpoch));
}

static int fntCmpStmtRun(const void *a, const void *b){
  const FntStmtRun *x = (const FntStmtRun*)a, *y = (const FntStmtRun*)b;
  if( x->pStmt!=y->pStmt ) return (uintptr_t)x->pStmt < (uintptr_t)y->pStmt ? -1 : 1;
  return x->nRun<y->nRun ? -1 : x->nRun>y->nRun;
}

/* The connection's busy statements and their run counts, sorted. */
static int busyNow(FntConn *p, FntStmtRun **paOut, int *pn){
  sqlite3_stmt *q = 0;
  FntStmtRun *a = 0;
  int n = 0, nAlloc = 0;
  while( (q = sqlite3_next_stmt(p->db, q))!=0 ){
    if( !sqlite3_stmt_busy(q) ) continue;
    if( n==nAlloc ){
      FntStmtRun *aNew;
      nAlloc = nAlloc ? 2*nAlloc : 4;
      aNew = sqlite3_realloc64(a, sizeof(*a)*(size_t)nAlloc);
      if( aNew==0 ){ sqlite3_free(a); return SQLITE_NOMEM; }
      a = aNew;
    }
    a[n].pStmt = q;
    a[n].nRun = sqlite3_stmt_status(q, SQLITE_STMTSTATUS_RUN, 0);
    n++;
  }
  if( n>1 ) qsort(a, (size_t)n, sizeof(*a), fntCmpStmtRun);
  *paOut = a;
  *pn = n;
  return SQLITE_OK;
}

/* 1 when every pair of the sorted a[] is in the sorted b[]. */
static int stmtSubset(const FntStmtRun *a, int na, const FntStmtRun *b, int nb){
  int i, j = 0;
  for(i=0; i<na; i++){
    while( j<nb && fntCmpStmtRun(&b[j], &a[i])<0 ) j++;
    if( j==nb || fntCmpStmtRun(&b[j], &a[i])!=0 ) return 0;
  }
  return 1;
}

/* The epoch of the running statement (iPlan: the cursor's plan, or -1):
** found, or made with the newest snapshot.  *piEpoch gets its index. */
static int epochFor(FntConn *p, sqlite3_int64 iPlan, int *piEpoch, char **pzErr){
  fnt_store *pStore;
  FntStmtRun *aNow = 0;
  FntEpoch *e;
  int nNow = 0, i, rc, frc;
  rc = fntConnStore(p, 0, &pStore, pzErr);
  if( rc!=SQLITE_OK ) return rc;
  rc = busyNow(p, &aNow, &nNow);
  if( rc!=SQLITE_OK ) return rc;
  /* Epochs of statements that were reset or ended go; a statement that is
  ** still running keeps its own, also while another runs within it. */
  for(i=p->nEpoch-1; i>=0; i--){
    e = &p->aEpoch[i];
    if( e->nOpen==0 && !stmtSubset(e->aStmt, e->nStmt, aNow, nNow) ){
      epochDrop(p, i);
    }
  }
  for(i=p->nEpoch-1; i>=0; i--){
    e = &p->aEpoch[i];
    if( e->nStmt==nNow && (iPlan<0 || iPlan<=e->iPlanMark) ){
      sqlite3_free(aNow);
      *piEpoch = i;
      return SQLITE_OK;
    }
  }
  if( p->nEpoch==FNT_MAX_EPOCH ){
    for(i=0; i<p->nEpoch && p->aEpoch[i].nOpen>0; i++){}
    if( i==p->nEpoch ){
      sqlite3_free(aNow);
      *pzErr = sqlite3_mprintf("fntrace: too many statements reading at "
                               "once (%d)", FNT_MAX_EPOCH);
      return SQLITE_BUSY;
    }
    epochDrop(p, i);
  }
  e = &p->aEpoch[p->nEpoch];
  frc = fnt_snapshot_current(pStore, &e->pSnap);
  if( frc!=FNT_OK ){
    sqlite3_free(aNow);
    e->pSnap = 0;
    *pzErr = fntStoreError("fntrace", pStore, frc);
    return fntSqliteCode(frc);
  }
  e->aStmt = aNow;
  e->nStmt = nNow;
  e->iPlanMark = p->iPlanSeq;
  *piEpoch = p->nEpoch++;
  return SQLITE_OK;
}

sqlite3_int64 fntConnPlan(FntConn *p){
  return ++p->iPlanSeq;
}

int fntConnPinPlan(FntConn *p, sqlite3_int64 iPlan, fnt_snapshot **ppSnap,
                   char **pzErr){
  int iEpoch, rc = epochFor(p, iPlan, &iEpoch, pzErr);
  if( rc!=SQLITE_OK ) return rc;
  p->aEpoch[iEpoch].nOpen++;
  *ppSnap = p->aEpoch[iEpoch].pSnap;
  return SQLITE_OK;
}

int fntConnPin(FntConn *p, fnt_snapshot **ppSnap, char **pzErr){
  return fntConnPinPlan(p, -1, ppSnap, pzErr);
}

void fntConnUnpin(FntConn *p, fnt_snapshot *pSnap){
  /* The epoch keeps the snapshot for the rest of its statement.  Epochs
  ** that share a snapshot are interchangeable here: each holds a reference,
  ** and one with open cursors is never dropped. */
  int i;
  for(i=0; i<p->nEpoch; i++){
    if( p->aEpoch[i].pSnap==pSnap && p->aEpoch[i].nOpen>0 ){
      p->aEpoch[i].nOpen--;
      return;
    }
  }
}

int fntConnStatementSnapshot(FntConn *p, fnt_snapshot **ppSnap, char **pzErr){
  int iEpoch, rc = epochFor(p, -1, &iEpoch, pzErr);
  if( rc==SQLITE_OK ) *ppSnap = p->aEpoch[iEpoch].pSnap;
  return rc;
}

int fntConnSnapshotAt(FntConn *p, sqlite3_int64 iId, fnt_snapshot **ppSnap,
                      char **pzErr){
  fnt_store *pStore;
  int frc, rc = fntConnStore(p, 0, &pStore, pzErr);
  *ppSnap = 0;
  if( rc!=SQLITE_OK ) return rc;
  frc = iId<0 ? FNT_E_NOTFOUND : fnt_snapshot_at(pStore, (uint64_t)iId, ppSnap);
  if( frc==FNT_E_NOTFOUND ){
    *pzErr = sqlite3_mprintf("snapshot_id %lld: no such snapshot: it was "
        "expired (fnt expire), or is not committed yet (see fnt_snapshots)",
        iId);
    return SQLITE_ERROR;
  }
  if( frc!=FNT_OK ){
    *pzErr = fntStoreError("fntrace", pStore, frc);
    return fntSqliteCode(frc);
  }
  return SQLITE_OK;
}

int fntCurSnapOpen(FntConn *p, FntCurSnap *pCs, int bAt, sqlite3_int64 iAt,
                   sqlite3_int64 iPlan, char **pzErr){
  fnt_snapshot_info info;
  int rc;
  memset(pCs, 0, sizeof(*pCs));
  if( bAt ){
    rc = fntConnSnapshotAt(p, iAt, &pCs->pSnap, pzErr);
    pCs->bOwn = (rc==SQLITE_OK);
  }else{
    rc = fntConnPinPlan(p, iPlan, &pCs->pSnap, pzErr);
    pCs->bPinned = (rc==SQLITE_OK);
  }
  if( rc!=SQLITE_OK ) return rc;
  fnt_snapshot_describe(pCs->pSnap, &info);
  pCs->iId = (sqlite3_int64)info.id;
  return SQLITE_OK;
}

void fntCurSnapClose(FntConn *p, FntCurSnap *pCs){
  if( pCs->bPinned ) fntConnUnpin(p, pCs->pSnap);
  if( pCs->bOwn ) fnt_snapshot_release(pCs->pSnap);
  memset(pCs, 0, sizeof(*pCs));
}

int fntConnVtabConnect(sqlite3 *db, FntConn *p, const char *zName,
                       const char *zSql, sqlite3_vtab **ppVtab, char **pzErr){
  FntConnVtab *pTab;
  int rc = sqlite3_declare_vtab(db, zSql);
  if( rc!=SQLITE_OK ){
    *pzErr = sqlite3_mprintf("%s: %s", zName, sqlite3_errmsg(db));
    return rc;
  }
  pTab = sqlite3_malloc(sizeof(*pTab));
  if( pTab==0 ) return SQLITE_NOMEM;
  memset(pTab, 0, sizeof(*pTab));
  pTab->pConn = p;
  *ppVtab = &pTab->base;
  return SQLITE_OK;
}

int fntConnVtabDisconnect(sqlite3_vtab *pVtab){
  sqlite3_free(pVtab);
  return SQLITE_OK;
}

static void fntConnFree(void *pArg){
  FntConn *p = (FntConn*)pArg;
  if( p==0 ) return;
  while( p->nEpoch>0 ) epochDrop(p, p->nEpoch-1);
  fnt_close(p->pStore);
  sqlite3_free(p);
}

/* fnt_open(path) -> path.  Opens a warehouse for this connection, creating
** it in an absent or empty folder (a folder of other things is an error). */
static void fntOpenFunc(sqlite3_context *ctx, int argc, sqlite3_value **argv){
  FntConn *p = (FntConn*)sqlite3_user_data(ctx);
  const char *zPath = (const char*)sqlite3_value_text(argv[0]);
  char *zErr = 0;
  (void)argc;
  if( zPath==0 || zPath[0]==0 ){
    sqlite3_result_error(ctx, "fnt_open: the warehouse path is empty", -1);
    return;
  }
  int rc = fntConnOpen(p, zPath, 1, &zErr);
  if( rc!=SQLITE_OK ){
    sqlite3_result_error(ctx, zErr, -1);
    sqlite3_result_error_code(ctx, rc);
    sqlite3_free(zErr);
    return;
  }
  sqlite3_result_text(ctx, fnt_path(p->pStore), -1, SQLITE_TRANSIENT);
}

static void fntVersionFunc(sqlite3_context *ctx, int argc, sqlite3_value **argv){
  (void)argc; (void)argv;
  sqlite3_result_text(ctx, fnt_version(), -1, SQLITE_STATIC);
}

/* The only symbol the library exports (CMake builds with hidden
** visibility). */
__attribute__((visibility("default")))
int sqlite3_fntrace_init(sqlite3 *db, char **pzErrMsg,
                         const sqlite3_api_routines *pApi);
int sqlite3_fntrace_init(sqlite3 *db, char **pzErrMsg,
                         const sqlite3_api_routines *pApi){
  int rc;
  FntConn *p;
  SQLITE_EXTENSION_INIT2(pApi);
  p = sqlite3_malloc(sizeof(*p));
  if( p==0 ) return SQLITE_NOMEM;
  memset(p, 0, sizeof(*p));
  p->db = db;
  /* fnt_open touches the file system: DIRECTONLY, so that a view or trigger
  ** of a hostile database cannot call it.  The FntConn is freed with it. */
  rc = sqlite3_create_function_v2(db, "fnt_open", 1,
          SQLITE_UTF8|SQLITE_DIRECTONLY, p, fntOpenFunc, 0, 0, fntConnFree);
  if( rc!=SQLITE_OK ) return rc;   /* SQLite has called fntConnFree(p) */
  rc = sqlite3_create_function(db, "fntrace_version", 0,
          SQLITE_UTF8|SQLITE_DETERMINISTIC|SQLITE_INNOCUOUS, 0,
          fntVersionFunc, 0, 0);
  if( rc==SQLITE_OK ) rc = fntRegisterFiling(db, p);
  if( rc==SQLITE_OK ) rc = fntRegisterTimeline(db, p);
  if( rc==SQLITE_OK ) rc = fntRegisterTables(db, p);
  if( rc==SQLITE_OK ) rc = fntRegisterRunFunctions(db, p);
  if( rc==SQLITE_OK ) rc = fntRegisterCompare(db, p);
  if( rc==SQLITE_OK ) rc = fntRegisterFlame(db, p);
  if( rc==SQLITE_OK ) rc = fntRegisterMaintenance(db, p);
  if( rc==SQLITE_OK ) rc = fntRegisterSnapshots(db, p);
  if( rc!=SQLITE_OK && pzErrMsg ){
    *pzErrMsg = sqlite3_mprintf("fntrace: registration failed: %s",
                                sqlite3_errstr(rc));
  }
  return rc;
}
