/*
** run_functions.c -- the table-valued functions of one run: fnt_heat
** (SPEC §5), fnt_account and fnt_callgraph (SPEC §7), each an FntTvf
** (tvf.c does the sqlite3_module part) that says how to compute the rows
** and read their columns.
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
*/
#include <string.h>

#include "fntrace_int.h"

static void resultText(sqlite3_context *ctx, const char *z){
  if( z ) sqlite3_result_text(ctx, z, -1, SQLITE_TRANSIENT);
}

/* ---- fnt_heat */
static int heatCompute(fnt_snapshot *s, const char *const *az, void **pp, size_t *pn){
  int rc = fnt_heat_compute(s, az[0], (fnt_heat**)pp);
  *pn = fnt_heat_count(*pp);
  return rc;
}
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
static int accountCompute(fnt_snapshot *s, const char *const *az, void **pp, size_t *pn){
  int rc = fnt_account_compute(s, az[0], (fnt_account**)pp);
  *pn = fnt_account_count(*pp);
  return rc;
}
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
static int graphCompute(fnt_snapshot *s, const char *const *az, void **pp, size_t *pn){
  int rc = fnt_callgraph_compute(s, az[0], (fnt_callgraph**)pp);
  *pn = fnt_callgraph_count(*pp);
  return rc;
}
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

/* The row count is that of the run's functions (or edges), from the stored
** aggregates (the account reads the run's calls). */
#define RUN_FUNC(name, schema, ncol, prefix) { .zName = name, \
  .zSchema = schema, .iFirstArg = ncol, .nArg = 1, \
  .zUsage = name ": the run_id argument is required, as in " \
            "SELECT * FROM " name "('run-id')", \
  .estimatedCost = 1e4, .xCompute = prefix##Compute, \
  .xFree = prefix##Free, .xColumn = prefix##Column }

static const FntTvf aRunFunc[] = {
  RUN_FUNC("fnt_heat",
    "CREATE TABLE x(key TEXT, inclusive_ns INTEGER, self_ns INTEGER, "
    "calls INTEGER, run_id HIDDEN)", 4, heat),
  RUN_FUNC("fnt_account",
    "CREATE TABLE x(key TEXT, symbol TEXT, calls INTEGER, min_ns INTEGER, "
    "p50_ns INTEGER, p90_ns INTEGER, p99_ns INTEGER, max_ns INTEGER, "
    "sum_ns INTEGER, inclusive_ns INTEGER, self_ns INTEGER, run_id HIDDEN)", 11,
    account),
  RUN_FUNC("fnt_callgraph",
    "CREATE TABLE x(caller_key TEXT, callee_key TEXT, calls INTEGER, "
    "total_ns INTEGER, self_ns INTEGER, run_id HIDDEN)", 5, graph),
};
#define N_RUN_FUNC ((int)(sizeof(aRunFunc)/sizeof(aRunFunc[0])))

int fntRegisterRunFunctions(sqlite3 *db, FntConn *p){
  int i, rc = SQLITE_OK;
  for(i=0; i<N_RUN_FUNC && rc==SQLITE_OK; i++){
    rc = fntRegisterTvf(db, p, &aRunFunc[i]);
  }
  return rc;
}
