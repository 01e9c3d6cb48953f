/*
** compare.c -- fnt_compare (SPEC §9): the runs of one commit of a repo
** against those of another.  Per key, each run's value is the key's
** inclusive_ns in that run's heat; the two samples give medians, their
** ratio and a two-sided Mann-Whitney U p-value.
**
** The values are the runs' heat sums (heat.c), one run at a time over one
** function table, so this file never reads events: the cost is the runs'
** stored aggregates, then grouping the (key id, run, value) triples by key
** and ranking each key's samples.  The test is SciPy's
** mannwhitneyu(x, y, method='asymptotic', use_continuity=True), two-sided:
**
**   ranks      average ranks of the pooled sample (ties share their mean)
**   U1         sum of side a's ranks - na(na+1)/2;  U = max(U1, na*nb - U1)
**   s          sqrt(na*nb/12 * ((n+1) - sum(t^3 - t) / (n(n-1)))),
**              t running over the sizes of the groups of tied values
**   z          (U - na*nb/2 - 0.5) / s
**   p          2 * (1 - Phi(z)) = erfc(z / sqrt 2), clipped to [0, 1]
**
** Taking the larger U and subtracting 0.5 moves z towards 0, the correction
** that accounts for the probability mass at U itself.
*/
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "calls.h"

static int cmpInt64(const void *pA, const void *pB){
  int64_t a = *(const int64_t*)pA, b = *(const int64_t*)pB;
  return a<b ? -1 : a>b;
}

/* The median of n sorted values, NAN for none: the middle one, or the mean
** of the two middle ones. */
static double sortedMedian(const int64_t *a, size_t n){
  if( n==0 ) return NAN;
  if( n%2 ) return (double)a[n/2];
  return ((double)a[n/2-1] + (double)a[n/2]) / 2.0;
}

double fnt_mann_whitney_p(const int64_t *a, size_t na,
                          const int64_t *b, size_t nb){
  double n = (double)na + (double)nb;
  double r1 = 0.0, tie = 0.0, u1, u, s, z, p;
  size_t i = 0, j = 0, pos = 0;
  if( na<2 || nb<2 ) return NAN;
  if( a[0]==a[na-1] && b[0]==b[nb-1] && a[0]==b[0] ) return NAN;
  /* Walk the pooled sample in order, one group of equal values at a time:
  ** the group takes ranks pos+1 .. pos+t, each member their mean. */
  while( i<na || j<nb ){
    int64_t v = (j>=nb || (i<na && a[i]<=b[j])) ? a[i] : b[j];
    size_t ca = 0, cb = 0;
    double t, mean;
    while( i<na && a[i]==v ){ i++; ca++; }
    while( j<nb && b[j]==v ){ j++; cb++; }
    t = (double)(ca + cb);
    mean = (double)pos + (t + 1.0) / 2.0;
    r1 += (double)ca * mean;
    tie += t*t*t - t;
    pos += ca + cb;
  }
  u1 = r1 - (double)na * ((double)na + 1.0) / 2.0;
  u = (double)na*(double)nb - u1;
  if( u1>u ) u = u1;
  s = sqrt((double)na*(double)nb/12.0 * ((n + 1.0) - tie/(n*(n - 1.0))));
  z = (u - (double)na*(double)nb/2.0 - 0.5) / s;
  p = erfc(z / M_SQRT2);
  return p<0.0 ? 0.0 : p>1.0 ? 1.0 : p;
}

/* ------------------------------------------------------------------------
** Which runs are samples of which side.
*/

/* One row of fn_trace_runs: a filed chunk of a run. */
typedef struct CmpChunk {
  char *run_id;
  char *commit;          /* NULL when unknown */
  int64_t chunk;
} CmpChunk;

static int cmpChunk(const void *pA, const void *pB){
  const CmpChunk *a = pA, *b = pB;
  int c = strcmp(a->run_id, b->run_id);
  if( c ) return c;
  return a->chunk<b->chunk ? -1 : a->chunk>b->chunk;
}

static void chunksFree(CmpChunk *a, size_t n){
  size_t i;
  for(i=0; i<n; i++){
    fnt_free(a[i].run_id);
    fnt_free(a[i].commit);
  }
  fnt_free(a);
}

/* The run ids of `repo` whose commit (their lowest filed chunk's) is
** commit_a, then those whose commit is commit_b, each part in run_id order;
** pointers into *paChunk, which the caller frees with chunksFree. */
static int sideRuns(fnt_snapshot *snap, const char *repo, const char *zA,
                    const char *zB, CmpChunk **paChunk, size_t *pnChunk,
                    const char ***paRun, size_t *pnA, size_t *pnB){
  fnt_predicate p;
  fnt_scan *sc = 0;
  CmpChunk *aChunk = 0;
  size_t nChunk = 0, nAlloc = 0, i, side;
  const char **aRun = 0;
  size_t nRun = 0;
  int rc;

  fnt_predicate_init(&p);
  p.repos = &repo;
  p.n_repos = 1;
  p.columns = (1ull<<FNT_RUN_RUN_ID) | (1ull<<FNT_RUN_COMMIT)
            | (1ull<<FNT_RUN_CHUNK);
  rc = fnt_scan_open(snap, FNT_TABLE_RUNS, &p, &sc);
  if( rc ) goto done;
  while( (rc = fnt_scan_next(sc))==1 ){
    const char *zCommit = fnt_scan_text(sc, FNT_RUN_COMMIT, 0);
    CmpChunk *c;
    if( nChunk==nAlloc ){
      size_t nNew = nAlloc ? nAlloc*2 : 64;
      CmpChunk *aNew = fnt_realloc(aChunk, nNew*sizeof(CmpChunk));
      if( aNew==0 ) goto nomem;
      aChunk = aNew;
      nAlloc = nNew;
    }
    c = &aChunk[nChunk];
    c->run_id = fnt_strdup(fnt_scan_text(sc, FNT_RUN_RUN_ID, 0));
    c->commit = fnt_strdup(zCommit);
    c->chunk = fnt_scan_int(sc, FNT_RUN_CHUNK);
    nChunk++;
    if( c->run_id==0 || (zCommit && c->commit==0) ) goto nomem;
  }
  if( rc<0 ) goto done;
  rc = FNT_OK;
  if( nChunk ) qsort(aChunk, nChunk, sizeof(CmpChunk), cmpChunk);

  /* Twice the runs at most: a run is on both sides when zA equals zB. */
  aRun = fnt_malloc((2*nChunk+1)*sizeof(char*));
  if( aRun==0 ) goto nomem;
  for(side=0; side<2; side++){
    const char *zWant = side ? zB : zA;
    for(i=0; i<nChunk; i++){
      if( i>0 && strcmp(aChunk[i].run_id, aChunk[i-1].run_id)==0 ) continue;
      if( aChunk[i].commit && strcmp(aChunk[i].commit, zWant)==0 ){
        aRun[nRun++] = aChunk[i].run_id;
      }
    }
    if( side==0 ) *pnA = nRun;
  }
  *pnB = nRun - *pnA;
  goto done;

nomem:
  rc = fnt_err(snap->st, FNT_E_NOMEM, "fnt_compare: out of memory listing "
               "the runs of repo '%s'", repo);
done:
  fnt_scan_close(sc);
  if( rc ){
    fnt_free(aRun);
    chunksFree(aChunk, nChunk);
    return rc;
  }
  *paChunk = aChunk;
  *pnChunk = nChunk;
  *paRun = aRun;
  return FNT_OK;
}

/* ------------------------------------------------------------------------
** The comparison.
*/

/* One key's value in one run: what the run's sums give. */
typedef struct CmpValue {
  uint32_t key;          /* key id of the shared function table */
  uint32_t run;          /* index into the sides' runs, side a first */
  int64_t value;
} CmpValue;

/* SPEC order: p_value ascending, then ratio descending, NANs last; then key,
** so that the order is total. */
static int cmpRow(const void *pA, const void *pB){
  const fnt_compare_row *a = pA, *b = pB;
  int na = isnan(a->p_value), nb = isnan(b->p_value);
  if( na!=nb ) return na - nb;
  if( !na && a->p_value!=b->p_value ) return a->p_value<b->p_value ? -1 : 1;
  na = isnan(a->ratio);
  nb = isnan(b->ratio);
  if( na!=nb ) return na - nb;
  if( !na && a->ratio!=b->ratio ) return a->ratio>b->ratio ? -1 : 1;
  return strcmp(a->key, b->key);
}

struct fnt_compare {
  fnt_compare_row *aRow;
  size_t nRow;
  int64_t nRunA, nRunB;
  char *zArena;          /* the rows' keys and symbols */
};

size_t fnt_compare_count(const fnt_compare *c){
  return c ? c->nRow : 0;
}

void fnt_compare_runs(const fnt_compare *c, int64_t *runs_a, int64_t *runs_b){
  if( runs_a ) *runs_a = c ? c->nRunA : 0;
  if( runs_b ) *runs_b = c ? c->nRunB : 0;
}

const fnt_compare_row *fnt_compare_rows(const fnt_compare *c){
  return c ? c->aRow : 0;
}

void fnt_compare_free(fnt_compare *c){
  if( c==0 ) return;
  fnt_free(c->aRow);
  fnt_free(c->zArena);
  fnt_free(c);
}

/* Builds one row per key from the values, grouped by key (aFirst[k] ..
** aFirst[k+1]), the keys' texts and symbols copied from s. */
static int compareRows(const CmpValue *aVal, const size_t *aFirst,
                       const fnt_run_sums *s, const char **azSym,
                       size_t nA, size_t nB, fnt_compare *c){
  int64_t *aSample = 0;
  size_t nArena = 0, nRow = 0, i, k;
  char *z;
  for(k=0; k<s->nkey; k++){
    if( aFirst[k]==aFirst[k+1] ) continue;
    nArena += strlen(s->tab.keys[k]) + strlen(azSym[k]) + 2;
    nRow++;
  }
  if( nRow==0 ) return FNT_OK;
  c->aRow = fnt_malloc(nRow*sizeof(fnt_compare_row));
  c->zArena = fnt_malloc(nArena);
  aSample = fnt_malloc((nA+nB)*sizeof(int64_t));
  if( c->aRow==0 || c->zArena==0 || aSample==0 ){
    fnt_free(aSample);
    return FNT_E_NOMEM;
  }
  z = c->zArena;
  for(k=0; k<s->nkey; k++){
    fnt_compare_row *r;
    size_t n;
    if( aFirst[k]==aFirst[k+1] ) continue;
    r = &c->aRow[c->nRow++];
    /* A run with no call of the key counts 0. */
    memset(aSample, 0, (nA+nB)*sizeof(int64_t));
    for(i=aFirst[k]; i<aFirst[k+1]; i++) aSample[aVal[i].run] = aVal[i].value;
    n = strlen(s->tab.keys[k]) + 1;
    r->key = memcpy(z, s->tab.keys[k], n);
    z += n;
    n = strlen(azSym[k]) + 1;
    r->symbol = memcpy(z, azSym[k], n);
    z += n;
    r->runs_a = (int64_t)nA;
    r->runs_b = (int64_t)nB;
    qsort(aSample, nA, sizeof(int64_t), cmpInt64);
    qsort(aSample+nA, nB, sizeof(int64_t), cmpInt64);
    r->p_value = fnt_mann_whitney_p(aSample, nA, aSample+nA, nB);
    r->median_a = sortedMedian(aSample, nA);
    r->median_b = sortedMedian(aSample+nA, nB);
    r->ratio = (isnan(r->median_a) || r->median_a==0.0)
             ? NAN : r->median_b / r->median_a;
  }
  fnt_free(aSample);
  qsort(c->aRow, c->nRow, sizeof(fnt_compare_row), cmpRow);
  return FNT_OK;
}

/* Groups the values by key id, a counting sort that keeps run order:
** key k's values end up at aOut[aFirst[k] .. aFirst[k+1]). */
static void groupByKey(const CmpValue *aVal, size_t nVal, size_t nKey,
                       size_t *aFirst, CmpValue *aOut){
  size_t i, k, sum = 0;
  memset(aFirst, 0, (nKey+1)*sizeof(size_t));
  for(i=0; i<nVal; i++) aFirst[aVal[i].key]++;
  for(k=0; k<=nKey; k++){
    size_t n = aFirst[k];
    aFirst[k] = sum;
    sum += n;
  }
  for(i=0; i<nVal; i++) aOut[aFirst[aVal[i].key]++] = aVal[i];
  for(k=nKey; k>0; k--) aFirst[k] = aFirst[k-1];
  aFirst[0] = 0;
}

int fnt_compare_compute(fnt_snapshot *snap, const char *repo,
                        const char *commit_a, const char *commit_b,
                        fnt_compare **out){
  CmpChunk *aChunk = 0;
  size_t nChunk = 0, nA = 0, nB = 0, nRun, i;
  const char **aRun = 0;
  fnt_run_sums sums;
  const char **azSym = 0;      /* per key id: the symbol of its first run */
  size_t nSym = 0;
  CmpValue *aVal = 0, *aByKey = 0;
  size_t *aFirst = 0;
  size_t nVal = 0, nValAlloc = 0;
  fnt_compare *c = 0;
  fnt_store *st;
  int rc;

  if( out ) *out = 0;
  if( snap==0 || out==0 ) return FNT_E_MISUSE;
  st = snap->st;
  if( repo==0 || commit_a==0 || commit_b==0 ){
    return fnt_err(st, FNT_E_MISUSE, "fnt_compare: repo, commit_a and "
                   "commit_b are required");
  }
  fnt_err_clear(st);
  memset(&sums, 0, sizeof(sums));
  rc = sideRuns(snap, repo, commit_a, commit_b, &aChunk, &nChunk, &aRun,
                &nA, &nB);
  if( rc ) return rc;
  nRun = nA + nB;

  c = fnt_calloc(1, sizeof(*c));
  if( c==0 ) goto nomem;
  c->nRunA = (int64_t)nA;
  c->nRunB = (int64_t)nB;
  /* One function table for all runs: each run interns only what is new,
  ** and the values carry key ids, so grouping them compares no strings. */
  for(i=0; i<nRun; i++){
    uint32_t k;
    rc = fnt_run_sums_add(snap, aRun[i], &sums);
    if( rc ) goto done;
    if( sums.nkey>nSym ){
      const char **a = fnt_realloc(azSym, sums.nkey*sizeof(char*));
      if( a==0 ) goto nomem;
      memset(a+nSym, 0, (sums.nkey-nSym)*sizeof(char*));
      azSym = a;
      nSym = sums.nkey;
    }
    if( nVal+sums.nkey > nValAlloc ){
      size_t nNew = nValAlloc ? nValAlloc : 1024;
      CmpValue *aNew;
      while( nNew<nVal+sums.nkey ) nNew *= 2;
      aNew = fnt_realloc(aVal, nNew*sizeof(CmpValue));
      if( aNew==0 ) goto nomem;
      aVal = aNew;
      nValAlloc = nNew;
    }
    for(k=0; k<sums.nkey; k++){
      CmpValue *v;
      if( sums.calls[k]==0 ) continue;
      v = &aVal[nVal++];
      v->key = k;
      v->run = (uint32_t)i;
      v->value = (int64_t)sums.incl[k];
      if( azSym[k]==0 ) azSym[k] = fnt_run_sums_symbol(&sums, k);
    }
  }
  aFirst = fnt_malloc((nSym+1)*sizeof(size_t));
  aByKey = fnt_malloc((nVal+1)*sizeof(CmpValue));
  if( aFirst==0 || aByKey==0 ) goto nomem;
  groupByKey(aVal, nVal, nSym, aFirst, aByKey);
  rc = compareRows(aByKey, aFirst, &sums, azSym, nA, nB, c);
  if( rc ) goto nomem;
  *out = c;
  c = 0;
  goto done;

nomem:
  rc = fnt_err(st, FNT_E_NOMEM, "fnt_compare: out of memory comparing %zu "
               "runs of repo '%s'", nRun, repo);
done:
  fnt_run_sums_clear(&sums);
  fnt_free(azSym);
  fnt_free(aFirst);
  fnt_free(aByKey);
  fnt_free(aVal);
  fnt_free(aRun);
  chunksFree(aChunk, nChunk);
  fnt_compare_free(c);
  return rc;
}
