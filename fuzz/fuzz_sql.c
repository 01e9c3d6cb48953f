/*
** fuzz_sql.c -- libFuzzer target: SQL statements over the extension, on a
** small warehouse filed beforehand (fuzz_warehouse.c).
**
** The extension is compiled into this program with -DSQLITE_CORE and
** registered through sqlite3_auto_extension(), as an application that links
** it statically would; each input gets a fresh in-memory connection, opens
** the scratch warehouse, and runs the input's statements to their end.
** Guards, so that a finding is a bug of ours rather than of the harness:
**   - an authorizer denies fnt_open (an input must not open warehouses
**     elsewhere on the machine) and ATTACH (no file databases);
**   - a progress handler stops a statement after ~1M VM steps, and
**     SQLITE_LIMIT_LENGTH keeps strings small (recursive CTEs are SQLite's
**     to fuzz, not ours);
**   - filings are allowed (the validation of fnt_file_* is hostile-input
**     code too), and when they have grown the warehouse past a few
**     snapshots it is filed afresh.
*/
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sqlite3.h"
#include "fnt_store.h"
#include "fuzz_warehouse.h"

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int sqlite3_fntrace_init(sqlite3 *db, char **pzErrMsg,
                         const sqlite3_api_routines *pApi);

static const char *g_dir;
static uint64_t g_baseId;      /* the snapshot id of a fresh warehouse */

static uint64_t currentId(void){
  fnt_store *st = 0;
  fnt_snapshot *snap = 0;
  fnt_snapshot_info info;
  uint64_t id = 0;
  if( fnt_open(g_dir, 0, &st)==FNT_OK && fnt_snapshot_current(st, &snap)==FNT_OK ){
    fnt_snapshot_describe(snap, &info);
    id = info.id;
  }else{
    fprintf(stderr, "fuzz_sql: the warehouse does not read: %s\n", fnt_errmsg(st));
    abort();
  }
  fnt_snapshot_release(snap);
  fnt_close(st);
  return id;
}

int LLVMFuzzerInitialize(int *argc, char ***argv){
  (void)argc; (void)argv;
  g_dir = fuzz_warehouse("sql");
  g_baseId = currentId();
  sqlite3_auto_extension((void(*)(void))sqlite3_fntrace_init);
  return 0;
}

static int authorize(void *ctx, int op, const char *a, const char *b,
                     const char *c, const char *d){
  (void)ctx; (void)b; (void)c; (void)d;
  if( op==SQLITE_ATTACH ) return SQLITE_DENY;
  if( op==SQLITE_FUNCTION && a && sqlite3_stricmp(a, "fnt_open")==0 ) return SQLITE_DENY;
  return SQLITE_OK;
}

static int progress(void *ctx){
  int *ticks = (int*)ctx;
  return ++*ticks > 1000;      /* x 1000 VM steps */
}

static volatile size_t g_sink;

static int eachRow(void *ctx, int n, char **vals, char **names){
  int i;
  (void)ctx; (void)names;
  for(i=0; i<n; i++) if( vals[i] ) g_sink += strlen(vals[i]);
  return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size){
  sqlite3 *db = 0;
  char *sql, *open, *err = 0;
  int ticks = 0;
  if( size>4096 ) return 0;      /* long inputs only slow the search */
  sql = malloc(size + 1);
  if( sql==0 ) return 0;
  memcpy(sql, data, size);
  sql[size] = 0;
  if( sqlite3_open(":memory:", &db)!=SQLITE_OK ){
    fprintf(stderr, "fuzz_sql: sqlite3_open: %s\n", sqlite3_errmsg(db));
    abort();
  }
  open = sqlite3_mprintf("SELECT fnt_open(%Q)", g_dir);
  if( sqlite3_exec(db, open, 0, 0, &err)!=SQLITE_OK ){
    fprintf(stderr, "fuzz_sql: %s\n", err);
    abort();
  }
  sqlite3_free(open);
  sqlite3_limit(db, SQLITE_LIMIT_LENGTH, 1<<20);
  sqlite3_limit(db, SQLITE_LIMIT_SQL_LENGTH, 1<<16);
  sqlite3_limit(db, SQLITE_LIMIT_EXPR_DEPTH, 100);
  sqlite3_limit(db, SQLITE_LIMIT_COMPOUND_SELECT, 50);
  sqlite3_set_authorizer(db, authorize, 0);
  sqlite3_progress_handler(db, 1000, progress, &ticks);
  sqlite3_exec(db, sql, eachRow, 0, &err);
  sqlite3_free(err);
  if( sqlite3_close(db)!=SQLITE_OK ){
    /* A statement or blob left open by the extension. */
    fprintf(stderr, "fuzz_sql: sqlite3_close: %s\n", sqlite3_errmsg(db));
    abort();
  }
  free(sql);
  if( currentId() > g_baseId + 20 ){
    fuzz_warehouse_reset();
    g_baseId = currentId();
  }
  return 0;
}
