/*
** diff.c -- fnt_diff (SPEC §9): two runs side by side, per key of either
** run, from fnt_account_compute() of each: calls, inclusive and self time
** and p50.  The two accounts are sorted by key here and merged, so the
** cost is that of the accounts plus O(k log k) in the keys; the result
** keeps both accounts, whose strings the rows point into.
*/
#include <stdlib.h>
#include <string.h>

#include "internal.h"

struct fnt_diff {
  fnt_account *pA, *pB;
  fnt_diff_row *aRow;
  size_t nRow;
};

size_t fnt_diff_count(const fnt_diff *d){
  return d ? d->nRow : 0;
}

const fnt_diff_row *fnt_diff_rows(const fnt_diff *d){
  return d ? d->aRow : 0;
}

void fnt_diff_free(fnt_diff *d){
  if( d==0 ) return;
  fnt_account_free(d->pA);
  fnt_account_free(d->pB);
  fnt_free(d->aRow);
  fnt_free(d);
}

static int cmpAccountRow(const void *pA, const void *pB){
  const fnt_account_row *a = *(const fnt_account_row *const*)pA;
  const fnt_account_row *b = *(const fnt_account_row *const*)pB;
  return strcmp(a->key, b->key);
}

/* The rows of an account as pointers sorted by key (NULL for none). */
static const fnt_account_row **sortedRows(const fnt_account *a, size_t *pn){
  size_t n = fnt_account_count(a), i;
  const fnt_account_row *aRow = fnt_account_rows(a);
  const fnt_account_row **ap = fnt_malloc((n+1)*sizeof(*ap));
  *pn = n;
  if( ap==0 ) return 0;
  for(i=0; i<n; i++) ap[i] = &aRow[i];
  qsort(ap, n, sizeof(*ap), cmpAccountRow);
  return ap;
}

/* One side of a row; r NULL: the run does not call the key. */
static void diffSide(const fnt_account_row *r, int *pIn, int64_t *pCalls,
                     int64_t *pIncl, int64_t *pSelf, int64_t *pP50){
  *pIn = r!=0;
  *pCalls = r ? r->calls : 0;
  *pIncl = r ? r->inclusive_ns : 0;
  *pSelf = r ? r->self_ns : 0;
  *pP50 = r ? r->p50_ns : 0;
}

int fnt_diff_compute(fnt_snapshot *snap, const char *run_a, const char *run_b,
                     fnt_diff **out){
  const fnt_account_row **apA = 0, **apB = 0;
  size_t nA = 0, nB = 0, i = 0, j = 0;
  fnt_diff *d;
  fnt_store *st;
  int rc;

  if( out ) *out = 0;
  if( snap==0 || out==0 ) return FNT_E_MISUSE;
  st = snap->st;
  if( run_a==0 || run_b==0 ){
    return fnt_err(st, FNT_E_MISUSE, "fnt_diff: run_a and run_b are required");
  }
  d = fnt_calloc(1, sizeof(*d));
  if( d==0 ) goto nomem;
  rc = fnt_account_compute(snap, run_a, &d->pA);
  if( rc==FNT_OK ) rc = fnt_account_compute(snap, run_b, &d->pB);
  if( rc ) goto done;
  fnt_err_clear(st);
  apA = sortedRows(d->pA, &nA);
  apB = sortedRows(d->pB, &nB);
  d->aRow = fnt_malloc((nA+nB+1)*sizeof(fnt_diff_row));
  if( apA==0 || apB==0 || d->aRow==0 ) goto nomem;
  /* Merge the two sorted key lists: a key of both runs is one row. */
  while( i<nA || j<nB ){
    fnt_diff_row *r = &d->aRow[d->nRow++];
    const fnt_account_row *pA = 0, *pB = 0;
    int c = i>=nA ? 1 : j>=nB ? -1 : strcmp(apA[i]->key, apB[j]->key);
    if( c<=0 ) pA = apA[i++];
    if( c>=0 ) pB = apB[j++];
    r->key = pA ? pA->key : pB->key;
    r->symbol = pA ? pA->symbol : pB->symbol;
    diffSide(pA, &r->in_a, &r->calls_a, &r->inclusive_a, &r->self_a, &r->p50_a);
    diffSide(pB, &r->in_b, &r->calls_b, &r->inclusive_b, &r->self_b, &r->p50_b);
  }
  *out = d;
  d = 0;
  rc = FNT_OK;
  goto done;

nomem:
  rc = fnt_err(st, FNT_E_NOMEM, "fnt_diff: out of memory comparing runs "
               "'%s' and '%s'", run_a, run_b);
done:
  fnt_free(apA);
  fnt_free(apB);
  fnt_diff_free(d);
  return rc;
}
