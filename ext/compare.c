/*
** compare.c -- the table-valued functions of SPEC §9, comparing runs and
** commits.
**
** fnt_diff(run_a, run_b): per key of either run, calls, inclusive time,
** self time and p50 of each (fnt_diff_compute, from the runs' accounts), in
** key order.  A run that does not call the key has 0s and a NULL p50.
**
**   SELECT key, inclusive_a, inclusive_b FROM fnt_diff('run-1', 'run-2')
**    ORDER BY inclusive_b - inclusive_a DESC;
**
**   CREATE TABLE x(key TEXT, symbol TEXT, calls_a INTEGER, calls_b INTEGER,
**                  inclusive_a INTEGER, inclusive_b INTEGER, self_a INTEGER,
**                  self_b INTEGER, p50_a INTEGER, p50_b INTEGER,
**                  run_a HIDDEN, run_b HIDDEN)
**
** fnt_compare(repo, commit_a, commit_b): per key, the runs of commit_a
** against those of commit_b (medians of the key's inclusive_ns, their
** ratio, a Mann-Whitney U p-value), the likeliest changes first.
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
** xFilter (tvf.c) runs fnt_compare_compute() (store/compare.c), which reads
** each run's heat; the cursor walks its rows in the store's order (p_value,
** then ratio descending).  The store's NAN is SQL NULL.
**
** Every argument is required; a NULL one gives no rows.
*/
#include <math.h>

#include "fntrace_int.h"

/* Column numbers, as declared in the schema. */
#define CMP_COL_KEY       0
#define CMP_COL_SYMBOL    1
#define CMP_COL_RUNS_A    2
#define CMP_COL_RUNS_B    3
#define CMP_COL_MEDIAN_A  4
#define CMP_COL_MEDIAN_B  5
#define CMP_COL_RATIO     6
#define CMP_COL_P_VALUE   7
#define CMP_COL_REPO      8   /* HIDDEN: repo, commit_a, commit_b */

static int cmpCompute(fnt_snapshot *pSnap, const char *const *azArg,
                      void **ppRows, size_t *pnRow){
  fnt_compare *c = 0;
  int rc = fnt_compare_compute(pSnap, azArg[0], azArg[1], azArg[2], &c);
  *ppRows = c;
  *pnRow = fnt_compare_count(c);
  return rc;
}

static void cmpFree(void *pRows){
  fnt_compare_free((fnt_compare*)pRows);
}

/* A REAL, or NULL for the store's NAN. */
static void cmpResultReal(sqlite3_context *ctx, double v){
  if( isnan(v) ) sqlite3_result_null(ctx);
  else sqlite3_result_double(ctx, v);
}

static void cmpColumn(const void *pRows, size_t iRow, int iCol,
                      sqlite3_context *ctx){
  const fnt_compare_row *pRow = &fnt_compare_rows(pRows)[iRow];
  switch( iCol ){
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
    default:               cmpResultReal(ctx, pRow->p_value); break;
  }
}

static const FntTvf cmpTvf = {
  .zName = "fnt_compare",
  .zSchema = "CREATE TABLE x(key TEXT, symbol TEXT, runs_a INTEGER, "
             "runs_b INTEGER, median_a REAL, median_b REAL, ratio REAL, "
             "p_value REAL, repo HIDDEN, commit_a HIDDEN, commit_b HIDDEN)",
  .iFirstArg = CMP_COL_REPO,
  .nArg = 3,
  .zUsage = "fnt_compare: the repo, commit_a and commit_b arguments are "
            "required, as in SELECT * FROM fnt_compare('repo', 'commit-a', "
            "'commit-b')",
  /* The heat of every run of both commits. */
  .estimatedCost = 1e7,
  .xCompute = cmpCompute,
  .xFree = cmpFree,
  .xColumn = cmpColumn,
};

/* ---- fnt_diff */
#define DIFF_COL_KEY      0
#define DIFF_COL_SYMBOL   1
#define DIFF_COL_RUN_A    10  /* HIDDEN: run_a, run_b */

static int diffCompute(fnt_snapshot *pSnap, const char *const *azArg,
                       void **ppRows, size_t *pnRow){
  fnt_diff *d = 0;
  int rc = fnt_diff_compute(pSnap, azArg[0], azArg[1], &d);
  *ppRows = d;
  *pnRow = fnt_diff_count(d);
  return rc;
}

static void diffFree(void *pRows){
  fnt_diff_free((fnt_diff*)pRows);
}

static void diffColumn(const void *pRows, size_t iRow, int iCol,
                       sqlite3_context *ctx){
  const fnt_diff_row *r = &fnt_diff_rows(pRows)[iRow];
  /* Columns 2..9: calls, inclusive, self, p50, each run a then run b. */
  const int64_t aInt[8] = { r->calls_a, r->calls_b, r->inclusive_a,
      r->inclusive_b, r->self_a, r->self_b, r->p50_a, r->p50_b };
  if( iCol==DIFF_COL_KEY ){
    sqlite3_result_text(ctx, r->key, -1, SQLITE_TRANSIENT);
  }else if( iCol==DIFF_COL_SYMBOL ){
    sqlite3_result_text(ctx, r->symbol, -1, SQLITE_TRANSIENT);
  }else if( (iCol==8 && !r->in_a) || (iCol==9 && !r->in_b) ){
    sqlite3_result_null(ctx);              /* no call: no p50 */
  }else{
    sqlite3_result_int64(ctx, aInt[iCol-2]);
  }
}

static const FntTvf diffTvf = {
  .zName = "fnt_diff",
  .zSchema = "CREATE TABLE x(key TEXT, symbol TEXT, calls_a INTEGER, "
             "calls_b INTEGER, inclusive_a INTEGER, inclusive_b INTEGER, "
             "self_a INTEGER, self_b INTEGER, p50_a INTEGER, p50_b INTEGER, "
             "run_a HIDDEN, run_b HIDDEN)",
  .iFirstArg = DIFF_COL_RUN_A,
  .nArg = 2,
  .zUsage = "fnt_diff: the run_a and run_b arguments are required, as in "
            "SELECT * FROM fnt_diff('run-a', 'run-b')",
  /* The accounts of two runs. */
  .estimatedCost = 2e5,
  .xCompute = diffCompute,
  .xFree = diffFree,
  .xColumn = diffColumn,
};

int fntRegisterCompare(sqlite3 *db, FntConn *p){
  int rc = fntRegisterTvf(db, p, &cmpTvf);
  if( rc==SQLITE_OK ) rc = fntRegisterTvf(db, p, &diffTvf);
  return rc;
}
