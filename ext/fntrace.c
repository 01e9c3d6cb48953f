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

/* Replaces the connection's warehouse with the one at zPath (made there
** when bCreate and the folder is absent or empty). */
static int fntConnOpen(FntConn *p, const char *zPath, int bCreate,
                       char **pzErr){
  fnt_store *pNew = 0;
  int rc;
  if( p->nPin>0 ){
    *pzErr = sqlite3_mprintf("fnt_open: cannot switch warehouses while a "
                             "statement is reading one");
    return SQLITE_BUSY;
  }
  rc = fnt_open(zPath, bCreate ? FNT_OPEN_CREATE : 0, &pNew);
  if( rc!=FNT_OK ){
    *pzErr = fntStoreError("fnt_open", pNew, rc);
    fnt_close(pNew);
    return fntSqliteCode(rc);
  }
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

int fntConnPin(FntConn *p, fnt_snapshot **ppSnap, char **pzErr){
  fnt_store *pStore;
  int rc = fntConnStore(p, 0, &pStore, pzErr);
  if( rc!=SQLITE_OK ) return rc;
  if( p->nPin==0 ){
    int frc = fnt_snapshot_current(pStore, &p->pSnap);
    if( frc!=FNT_OK ){
      *pzErr = fntStoreError("fntrace", pStore, frc);
      return fntSqliteCode(frc);
    }
  }
  p->nPin++;
  *ppSnap = p->pSnap;
  return SQLITE_OK;
}

void fntConnUnpin(FntConn *p){
  if( p->nPin>0 && --p->nPin==0 ){
    fnt_snapshot_release(p->pSnap);
    p->pSnap = 0;
  }
}

static void fntConnFree(void *pArg){
  FntConn *p = (FntConn*)pArg;
  if( p==0 ) return;
  fnt_snapshot_release(p->pSnap);
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
  if( rc!=SQLITE_OK && pzErrMsg ){
    *pzErrMsg = sqlite3_mprintf("fntrace: registration failed: %s",
                                sqlite3_errstr(rc));
  }
  return rc;
}
