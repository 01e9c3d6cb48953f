/*
** maintenance.c -- SQL functions that maintain a warehouse.
**
**   SELECT fnt_compact();   -- {"compacted":1,"files_before":53,"files_after":8,...}
**
** fnt_compact() merges small segment files (fnt_compact() of fnt_store.h) in
** one snapshot commit of its own.  It writes files, so it is DIRECTONLY: a
** view or trigger of a hostile database cannot call it.
*/
#include "fntrace_int.h"

static void fntCompactFunc(sqlite3_context *ctx, int argc, sqlite3_value **argv){
  FntConn *p = (FntConn*)sqlite3_user_data(ctx);
  fnt_store *pStore;
  fnt_compact_stats cs;
  char *zErr = 0;
  int rc;
  (void)argc; (void)argv;
  rc = fntConnStore(p, &pStore, &zErr);
  if( rc!=SQLITE_OK ){
    sqlite3_result_error(ctx, zErr, -1);
    sqlite3_free(zErr);
    return;
  }
  rc = fnt_compact(pStore, &cs);
  if( rc<0 ){
    zErr = fntStoreError("fnt_compact", pStore, rc);
    sqlite3_result_error(ctx, zErr, -1);
    sqlite3_result_error_code(ctx, fntSqliteCode(rc));
    sqlite3_free(zErr);
    return;
  }
  sqlite3_result_text(ctx, sqlite3_mprintf(
      "{\"compacted\":%d,\"files_before\":%llu,\"files_after\":%llu,"
      "\"files_merged\":%llu,\"files_written\":%llu,\"rows_rewritten\":%llu}",
      rc, (unsigned long long)cs.files_before, (unsigned long long)cs.files_after,
      (unsigned long long)cs.files_merged, (unsigned long long)cs.files_written,
      (unsigned long long)cs.rows_rewritten), -1, sqlite3_free);
}

int fntRegisterMaintenance(sqlite3 *db, FntConn *p){
  return sqlite3_create_function(db, "fnt_compact", 0,
            SQLITE_UTF8|SQLITE_DIRECTONLY, p, fntCompactFunc, 0, 0);
}
