/*
** test_oom_sql.c -- out of memory through SQL: every allocation of a filing
** and of a query, SQLite's (SQLITE_CONFIG_MALLOC) and the store's
** (fnt_set_allocator) alike, fails in turn.  Each statement must then fail
** with an error (or succeed), never crash; nothing may leak (LeakSanitizer
** in the sanitizer build); and the warehouse must afterwards hold the chunk
** once or not at all, reading correctly.
**
** The extension is compiled into this program (-DSQLITE_CORE), as an
** application that links fntrace would.
*/
#include <stdio.h>
#include <stdlib.h>
#include <stdatomic.h>
#include <string.h>
#include <unistd.h>

#include <sqlite3.h>
#include "fnt_store.h"

int sqlite3_fntrace_init(sqlite3 *db, char **pzErrMsg,
                         const sqlite3_api_routines *pApi);

/* Atomic: a filing allocates on its worker thread too (FNT_OPEN_NO_THREADS). */
static _Atomic long g_count, g_failed;
static long g_failAt;

static int failNow(void){
  if( g_failAt && ++g_count==g_failAt ){ g_failed++; return 1; }
  return 0;
}

/* SQLite's allocator: the system's, failing on cue.  Sizes are kept in a
** header so xSize works. */
static void *sqlMalloc(int n){
  sqlite3_int64 *p;
  if( failNow() ) return 0;
  p = malloc((size_t)n + 8);
  if( p==0 ) return 0;
  p[0] = n;
  return p+1;
}
static void sqlFree(void *p){ if( p ) free((sqlite3_int64*)p - 1); }
static void *sqlRealloc(void *p, int n){
  sqlite3_int64 *q;
  if( failNow() ) return 0;
  q = realloc(p ? (sqlite3_int64*)p - 1 : 0, (size_t)n + 8);
  if( q==0 ) return 0;
  q[0] = n;
  return q+1;
}
static int sqlSize(void *p){ return p ? (int)((sqlite3_int64*)p)[-1] : 0; }
static int sqlRoundup(int n){ return (n+7)&~7; }
static int sqlInit(void *x){ (void)x; return SQLITE_OK; }
static void sqlShutdown(void *x){ (void)x; }

/* The store's allocator, failing on the same count. */
static void *stMalloc(void *o, size_t n){ (void)o; return failNow() ? 0 : malloc(n); }
static void *stRealloc(void *o, void *p, size_t n){ (void)o; return failNow() ? 0 : realloc(p, n); }
static void stFree(void *o, void *p){ (void)o; free(p); }

static const char *kChunk =
  "SELECT fnt_file_chunk('{\"repo\":\"acme/widget\",\"commit\":\"9f1c2e0\","
  "\"run_id\":\"r1\",\"ts_micros\":1764680000000000,\"target\":\"t\","
  "\"source\":\"xray\",\"chunk\":0,\"chunks\":1,\"total_events\":4,"
  "\"duration_ns\":900,\"truncated\":false,\"functions\":["
  "{\"symbol\":\"main\",\"stable_id\":\"s main\",\"local\":true},"
  "{\"symbol\":\"f\",\"stable_id\":null,\"local\":false}],\"events\":["
  "[1,0,0,0,\"entry\"],[1,1,100,1,\"entry\"],[1,2,900,1,\"exit\"],"
  "[1,3,950,0,\"exit\"]]}')";

static const char *kQueries[] = {
  "SELECT count(*), sum(t_ns), group_concat(symbol) FROM fn_trace_events WHERE run_id='r1'",
  "SELECT * FROM fn_trace_run_summary",
  "SELECT key, inclusive_ns, self_ns, calls FROM fnt_heat('r1') ORDER BY key",
  "SELECT count(*) FROM fn_trace_runs WHERE repo='acme/widget' AND chunk=0",
  "SELECT * FROM fnt_compare('acme/widget', '9f1c2e0', '9f1c2e0')",
  "SELECT * FROM fnt_timeline('r1', 0, 1000, 7, 1)",
};

/* Runs one statement; the text of its rows (or "ERR") goes to out. */
static int runSql(sqlite3 *db, const char *sql, char *out, size_t nOut){
  sqlite3_stmt *st = 0;
  int rc = sqlite3_prepare_v2(db, sql, -1, &st, 0);
  size_t o = 0;
  out[0] = 0;
  while( rc==SQLITE_OK && (rc = sqlite3_step(st))==SQLITE_ROW ){
    int i;
    for(i=0; i<sqlite3_column_count(st); i++){
      const char *v = (const char*)sqlite3_column_text(st, i);
      o += (size_t)snprintf(out+o, o<nOut ? nOut-o : 0, "%s|", v ? v : "NULL");
    }
    rc = SQLITE_OK;
  }
  if( rc==SQLITE_DONE ) rc = SQLITE_OK;
  sqlite3_finalize(st);
  return rc;
}

/* One round: open, load, open the warehouse, file, query. Faults armed
** from the start.  Returns the number of failed statements. */
static int aRc[6];   /* each statement's result code in the last round */

static int runRound(const char *dir, char results[][512], int *nFailed){
  sqlite3 *db = 0;
  char *zErr = 0, sql[1024];
  int i, failed = 0;
  for(i=0; i<6; i++){ aRc[i] = SQLITE_NOMEM; results[i][0] = 0; }
  if( sqlite3_open(":memory:", &db)!=SQLITE_OK ){
    sqlite3_close(db);
    *nFailed = 99;
    return 0;
  }
  if( sqlite3_fntrace_init(db, &zErr, 0)!=SQLITE_OK ){
    sqlite3_free(zErr);
    sqlite3_close(db);
    *nFailed = 99;
    return 0;
  }
  snprintf(sql, sizeof(sql), "SELECT fnt_open('%s') IS NOT NULL", dir);
  aRc[0] = runSql(db, sql, results[0], 512);
  aRc[1] = runSql(db, kChunk, results[1], 512);
  for(i=0; i<4; i++) aRc[2+i] = runSql(db, kQueries[i], results[2+i], 512);
  for(i=0; i<6; i++) failed += aRc[i]!=SQLITE_OK;
  sqlite3_close(db);
  *nFailed = failed;
  return 1;
}

int main(void){
  static const sqlite3_mem_methods mem = {
    sqlMalloc, sqlFree, sqlRealloc, sqlSize, sqlRoundup, sqlInit, sqlShutdown, 0
  };
  fnt_allocator fa = { stMalloc, stRealloc, stFree, 0 };
  const char *base = access("/dev/shm", W_OK)==0 ? "/dev/shm" : getenv("FNT_TEST_TMP");
  char dir[512], cmd[600], ref[6][512], got[6][512];
  long n, survived = 0, bad = 0;
  int nFailed;

  if( base==0 ) base = "/tmp";
  sqlite3_config(SQLITE_CONFIG_MALLOC, &mem);
  sqlite3_initialize();
  fnt_set_allocator(&fa);
  snprintf(dir, sizeof(dir), "%s/fnt-oom-sql-%d", base, (int)getpid());
  snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);

  /* The reference: no faults. */
  if( system(cmd) ){}
  g_failAt = 0;
  runRound(dir, ref, &nFailed);
  if( nFailed ){ printf("reference round failed (%d)\n", nFailed); return 1; }

  for(n=1; ; n++){
    int i, k;
    if( system(cmd) ){}
    g_count = 0; g_failed = 0; g_failAt = n;
    runRound(dir, got, &nFailed);
    g_failAt = 0;
    if( g_failed==0 ) break;                 /* past the last allocation */
    survived++;
    /* A query that succeeded under the fault read right rows (the chunk
    ** was filed, so a query after it sees it). */
    for(i=2; i<6; i++){
      if( aRc[i]==SQLITE_OK && aRc[1]==SQLITE_OK && i!=3 && strcmp(got[i], ref[i])!=0 ){
        printf("fault %ld: '%s' read '%s', expected '%s'\n", n, kQueries[i-2], got[i], ref[i]);
        bad++;
      }
    }
    /* Whatever failed, the warehouse holds the chunk once or not at all,
    ** and filing it again (no faults) leaves exactly the reference. */
    runRound(dir, got, &k);
    for(i=2; i<6 && k==0; i++){
      if( strcmp(got[i], ref[i])!=0 && i!=3 ){   /* summary: ts differs by run */
        printf("fault %ld: afterwards '%s' reads '%s', expected '%s'\n",
               n, kQueries[i-2], got[i], ref[i]);
        bad++;
      }
    }
    if( k ){ printf("fault %ld: a clean round afterwards failed\n", n); bad++; }
  }
  if( system(cmd) ){}
  printf("test_oom_sql: %ld allocation failures survived over a filing and 4 "
         "queries through SQL (%ld allocations in all)\n", survived, n-1);
  if( bad ){ printf("0 passed, 1 failed\n"); return 1; }
  printf("1 passed, 0 failed\n");
  return 0;
}
