/*
** maintenance.c -- SQL functions that maintain a warehouse.
**
**   SELECT fnt_compact();   -- {"compacted":1,"files_before":53,"files_after":8,...}
**   SELECT fnt_expire_snapshots(3600);  -- {"snapshots_expired":12,...}
**
** fnt_compact() merges small segment files in one snapshot commit of its
** own; fnt_expire_snapshots([keep_seconds, default a day]) expires older
** snapshots and removes files nothing lists (fnt_store.h says how safely).
** Both write or remove files, so they are DIRECTONLY: a view or trigger of
** a hostile database cannot call them.
*/
#include "fntrace_int.h"

/* The connection's store, or NULL with the error set on ctx. */
static fnt_store *maintainStore(sqlite3_context *ctx){
  FntConn *p = (FntConn*)sqlite3_user_data(ctx);
  fnt_store *pStore = 0;
  char *zErr = 0;
  int rc = fntConnStore(p, 0, &pStore, &zErr);
  if( rc!=SQLITE_OK ){
    sqlite3_result_error(ctx, zErr, -1);
    sqlite3_result_error_code(ctx, rc);
    sqlite3_free(zErr);
    return 0;
  }
  return pStore;
}

/* The JSON result zJson (sqlite3_malloc'd, NULL when out of memory). */
static void maintainResult(sqlite3_context *ctx, char *zJson){
  if( zJson==0 ) sqlite3_result_error_nomem(ctx);
  else sqlite3_result_text(ctx, zJson, -1, sqlite3_free);
}

/* Reports the store's failure `rc` of function zFunc. */
static void maintainFailed(sqlite3_context *ctx, const char *zFunc,
                           fnt_store *pStore, int rc){
  char *zErr = fntStoreError(zFunc, pStore, rc);
  sqlite3_result_error(ctx, zErr, -1);
  sqlite3_result_error_code(ctx, fntSqliteCode(rc));
  sqlite3_free(zErr);
}

static void fntCompactFunc(sqlite3_context *ctx, int argc, sqlite3_value **argv){
  fnt_store *pStore = maintainStore(ctx);
  fnt_compact_stats cs;
  int rc;
  (void)argc; (void)argv;
  if( pStore==0 ) return;
  rc = fnt_compact(pStore, &cs);
  if( rc<0 ){
    maintainFailed(ctx, "fnt_compact", pStore, rc);
    return;
  }
  maintainResult(ctx, sqlite3_mprintf(
      "{\"compacted\":%d,\"files_before\":%llu,\"files_after\":%llu,"
      "\"files_merged\":%llu,\"files_written\":%llu,\"rows_rewritten\":%llu}",
      rc, (unsigned long long)cs.files_before, (unsigned long long)cs.files_after,
      (unsigned long long)cs.files_merged, (unsigned long long)cs.files_written,
      (unsigned long long)cs.rows_rewritten));
}

static void fntExpireFunc(sqlite3_context *ctx, int argc, sqlite3_value **argv){
  fnt_store *pStore;
  fnt_expire_stats es;
  sqlite3_int64 keep = 86400;
  int rc;
  if( argc>0 ){
    if( sqlite3_value_numeric_type(argv[0])!=SQLITE_INTEGER
     || (keep = sqlite3_value_int64(argv[0]))<0 ){
      sqlite3_result_error(ctx, "fnt_expire_snapshots: keep_seconds must be "
                           "a non-negative integer", -1);
      return;
    }
  }
  if( (pStore = maintainStore(ctx))==0 ) return;
  rc = fnt_expire_snapshots(pStore, keep, &es);
  if( rc<0 ){
    maintainFailed(ctx, "fnt_expire_snapshots", pStore, rc);
    return;
  }
  maintainResult(ctx, sqlite3_mprintf(
      "{\"snapshots_expired\":%llu,\"snapshots_kept\":%llu,"
      "\"files_removed\":%llu,\"bytes_removed\":%llu,"
      "\"unlisted_kept\":%llu,\"unlisted_kept_bytes\":%llu}",
      (unsigned long long)es.snapshots_expired, (unsigned long long)es.snapshots_kept,
      (unsigned long long)es.files_removed, (unsigned long long)es.bytes_removed,
      (unsigned long long)es.unlisted_kept,
      (unsigned long long)es.unlisted_kept_bytes));
}

int fntRegisterMaintenance(sqlite3 *db, FntConn *p){
  int rc = sqlite3_create_function(db, "fnt_compact", 0,
            SQLITE_UTF8|SQLITE_DIRECTONLY, p, fntCompactFunc, 0, 0);
  if( rc==SQLITE_OK ){
    rc = sqlite3_create_function(db, "fnt_expire_snapshots", 0,
            SQLITE_UTF8|SQLITE_DIRECTONLY, p, fntExpireFunc, 0, 0);
  }
  if( rc==SQLITE_OK ){
    rc = sqlite3_create_function(db, "fnt_expire_snapshots", 1,
            SQLITE_UTF8|SQLITE_DIRECTONLY, p, fntExpireFunc, 0, 0);
  }
  return rc;
}
