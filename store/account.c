/*
** account.c -- fnt_account (SPEC §7): per key, the distribution of its
** calls' durations, as `llvm-xray account` prints it: percentile p of the
** n durations sorted ascending is the element at floor(p * n).  Reads the
** run's calls (two of their columns matter) once; memory is one duration
** per call of the run, in one block: the run's heat (its files' stored
** sums, a few ms) tells each key's count, so each key's durations get
** their slice of it before the calls are read.  Grown per key, the arrays were a
** third of the time (copies, and the pages each copy touched).
*/
#include <stdlib.h>
#include <string.h>

#include "calls.h"

typedef struct key_acc {
  int64_t *dur;                 /* in acc_ctx.pool unless `own` */
  size_t n, cap;
  int own;
  int64_t min, max;             /* of dur */
  uint64_t sum, incl, self;
  int64_t first_call;
  uint32_t first_fn;
} key_acc;

struct fnt_account {
  fnt_fntab tab;
  fnt_account_row *rows;
  size_t n;
};

size_t fnt_account_count(const fnt_account *a){ return a ? a->n : 0; }
const fnt_account_row *fnt_account_rows(const fnt_account *a){ return a ? a->rows : 0; }

void fnt_account_free(fnt_account *a){
  if( a==0 ) return;
  fnt_fntab_clear(&a->tab);
  fnt_free(a->rows);
  fnt_free(a);
}

/* Puts the k-th smallest of a[0..n) at a[k], the smaller ones before it
** and the larger after: quickselect with three-way partitions, so that the
** many equal durations of a trace cost nothing extra.  O(n) expected,
** where sorting every key's durations was most of fnt_account's time. */
static void selectNth(int64_t *a, size_t n, size_t k){
  size_t lo = 0, hi = n;                  /* k lies in [lo, hi) */
  uint64_t seed = 0x9E3779B97F4A7C15ull ^ n;
  while( hi-lo>1 ){
    size_t lt = lo, i = lo, gt = hi, r;
    int64_t x, p, q;
    /* Pivot: the median of three, one of them pseudo-random. */
    seed = seed*6364136223846793005ull + 1442695040888963407ull;
    r = lo + (size_t)((seed>>33) % (hi-lo));
    x = a[lo]; p = a[r]; q = a[hi-1];
    if( (x<=p && p<=q) || (q<=p && p<=x) ) x = p;
    else if( (p<=q && q<=x) || (x<=q && q<=p) ) x = q;
    /* a[lo..lt) < x, a[lt..i) == x, a[gt..hi) > x */
    while( i<gt ){
      int64_t v = a[i];
      if( v<x ){ a[i++] = a[lt]; a[lt++] = v; }
      else if( v>x ){ a[i] = a[--gt]; a[gt] = v; }
      else i++;
    }
    if( k<lt ) hi = lt;
    else if( k>=gt ) lo = gt;
    else return;
  }
}

/* Durations as unsigned values in the same order. */
static uint64_t ordU(int64_t v){ return (uint64_t)v ^ 0x8000000000000000ull; }

/* A histogram bucket of y = value - min, log-linear as HDR histograms
** are: exact below 16, then 16 buckets per power of two; increasing in y.
** 16 + 60 x 16 buckets hold every uint64_t. */
#define ACC_BUCKETS (16 + 60*16)
static unsigned bucketOf(uint64_t y){
  unsigned b;
  if( y<16 ) return (unsigned)y;
  b = 63u - (unsigned)__builtin_clzll(y);
  return 16 + (b-4)*16 + (unsigned)((y >> (b-4)) & 15);
}

/* The order statistics fnt_account prints, of d[0..n), n > 0: d is
** reordered, each position k of llvm-xray's floor(p * n) selected.  Many
** durations are first counted into log-linear buckets, so that only the
** few in the buckets holding k50, k90 and k99 are selected among;
** `scratch` has room for n values. */
static void percentiles(int64_t *d, size_t n, int64_t mn, int64_t mx,
                        int64_t *scratch, fnt_account_row *r){
  size_t k[3], i;
  int64_t out[3];
  uint64_t umin = ordU(mn);
  int j;
  k[0] = n/2; k[1] = n*90/100; k[2] = n*99/100;
  if( n<512 ){
    /* Each selection leaves the one before in place: it works below it. */
    selectNth(d, n, k[2]);
    if( k[1]<k[2] ) selectNth(d, k[2], k[1]);
    if( k[0]<k[1] ) selectNth(d, k[1], k[0]);
    for(j=0; j<3; j++) out[j] = d[k[j]];
  }else{
    size_t cnt[ACC_BUCKETS], below[3], at[3], m = 0;
    unsigned want[3];
    memset(cnt, 0, sizeof(cnt));
    for(i=0; i<n; i++) cnt[bucketOf(ordU(d[i]) - umin)]++;
    /* The bucket of each rank and the values below that bucket. */
    for(j=0; j<3; j++){
      size_t cum = 0;
      unsigned b = 0;
      while( cum + cnt[b] <= k[j] ) cum += cnt[b++];
      want[j] = b;
      below[j] = cum;
    }
    /* The wanted buckets' values (at most three buckets, ascending), each
    ** bucket's together, in one pass. */
    for(j=0; j<3; j++){
      if( j>0 && want[j]==want[j-1] ){ at[j] = at[j-1]; continue; }
      at[j] = m;
      m += cnt[want[j]];
    }
    {
      size_t put[3];
      memcpy(put, at, sizeof(put));
      for(i=0; i<n; i++){
        unsigned b = bucketOf(ordU(d[i]) - umin);
        if( b==want[0] ) scratch[put[0]++] = d[i];
        else if( b==want[1] ) scratch[put[1]++] = d[i];
        else if( b==want[2] ) scratch[put[2]++] = d[i];
      }
    }
    for(j=0; j<3; j++){
      size_t len = cnt[want[j]];
      selectNth(scratch+at[j], len, k[j]-below[j]);
      out[j] = scratch[at[j] + k[j]-below[j]];
    }
  }
  r->min_ns = mn;
  r->p50_ns = out[0];
  r->p90_ns = out[1];
  r->p99_ns = out[2];
  r->max_ns = mx;
}

static int cmpRowKey(const void *a, const void *b){
  return strcmp(((const fnt_account_row*)a)->key, ((const fnt_account_row*)b)->key);
}

/* What the calls of a run add up to, per key id of tab. */
typedef struct acc_ctx {
  fnt_fntab *tab;
  key_acc *acc;
  uint32_t nacc;
  int64_t *pool;                /* the keys' slices (slicePool) */
} acc_ctx;

/* Key k's sums, grown (zeroed) to hold it; NULL when out of memory. */
static key_acc *accOf(acc_ctx *x, uint32_t k){
  if( k>=x->nacc ){
    uint32_t nNew = x->nacc ? x->nacc*2 : 64;
    key_acc *n2;
    while( nNew<=k ) nNew *= 2;
    n2 = fnt_realloc(x->acc, (size_t)nNew*sizeof(key_acc));
    if( n2==0 ) return 0;
    memset(n2+x->nacc, 0, (size_t)(nNew-x->nacc)*sizeof(key_acc));
    x->acc = n2;
    x->nacc = nNew;
  }
  return &x->acc[k];
}

/* Gives each key of the run's heat its slice of one block, as many
** durations as it has calls.  @return FNT_OK or FNT_E_NOMEM. */
static int slicePool(acc_ctx *x, const fnt_heat_row *r, size_t n){
  size_t i, total = 0, at = 0;
  for(i=0; i<n; i++) total += r[i].calls>0 ? (size_t)r[i].calls : 0;
  x->pool = fnt_malloc((total ? total : 1)*sizeof(int64_t));
  if( x->pool==0 ) return FNT_E_NOMEM;
  for(i=0; i<n; i++){
    uint32_t k;
    key_acc *a;
    if( r[i].calls<=0 ) continue;
    if( fnt_fntab_intern_key(x->tab, r[i].key, &k) || (a = accOf(x, k))==0 ){
      return FNT_E_NOMEM;
    }
    a->dur = x->pool + at;
    a->cap = (size_t)r[i].calls;
    at += a->cap;
  }
  return FNT_OK;
}

/* Adds one call of function fn (an id of x->tab). */
static int accAdd(acc_ctx *x, uint32_t fn, int64_t call_id, int64_t dur,
                  int64_t self, int outermost){
  key_acc *a = accOf(x, x->tab->key[fn]);
  if( a==0 ) return FNT_E_NOMEM;
  if( a->n==a->cap ){
    /* A key the counts did not foresee (or none): an array of its own. */
    size_t nNew = a->cap ? a->cap*2 : 16;
    int64_t *d = a->own ? fnt_realloc(a->dur, nNew*sizeof(int64_t))
                        : fnt_malloc(nNew*sizeof(int64_t));
    if( d==0 ) return FNT_E_NOMEM;
    if( !a->own && a->n ) memcpy(d, a->dur, a->n*sizeof(int64_t));
    a->dur = d;
    a->cap = nNew;
    a->own = 1;
  }
  if( a->n==0 || call_id<a->first_call ){ a->first_call = call_id; a->first_fn = fn; }
  if( a->n==0 || dur<a->min ) a->min = dur;
  if( a->n==0 || dur>a->max ) a->max = dur;
  a->dur[a->n++] = dur;
  a->sum += (uint64_t)dur;
  a->self += (uint64_t)self;
  if( outermost ) a->incl += (uint64_t)dur;
  return FNT_OK;
}

static int accCall(void *ctx, const fnt_callrec *c){
  return accAdd(ctx, c->fn, c->call_id, c->end - c->start, c->self, c->outermost);
}

/* A decoded row group of stored calls, added straight from its columns. */
static int accRows(void *ctx, const struct fnt_segment *seg, const fnt_calls_rows *g,
                   int64_t threadIx, uint32_t *fnids, int calls){
  acc_ctx *x = ctx;
  size_t i;
  (void)threadIx;
  (void)calls;
  for(i=0; i<g->n; i++){
    uint32_t fn;
    if( fnt_calls_fnid(x->tab, seg, fnids, (uint32_t)g->fn[i], &fn)
     || accAdd(x, fn, (int64_t)g->cid[i], (int64_t)g->dur[i], (int64_t)g->slf[i],
               (int)(g->flg[i]>>2 & 1)) ){
      return FNT_E_NOMEM;
    }
  }
  return FNT_OK;
}

/* Every call of the run into x: stored calls a row group at a time, five
** of their columns; a run of format 1 through its derived calls. */
static int accRun(fnt_snapshot *snap, const char *run_id, acc_ctx *x){
  fnt_run_calls files;
  unsigned cols = FNT_CR_CALL_ID | FNT_CR_DUR | FNT_CR_SELF | FNT_CR_FN | FNT_CR_FLAGS;
  int rc = fnt_run_calls_find(snap, run_id, &files);
  if( rc ) return fnt_err(snap->st, rc, "out of memory");
  if( files.complete ){
    fnt_calls_visit v;
    fnt_heat *h = 0;
    rc = fnt_heat_compute(snap, run_id, &h);
    if( rc==FNT_OK ) rc = slicePool(x, fnt_heat_rows(h), fnt_heat_count(h));
    if( rc ){
      fnt_heat_free(h);
      fnt_run_calls_clear(&files);
      return rc;
    }
    memset(&v, 0, sizeof(v));
    v.cols = cols;
    v.t0 = INT64_MIN;
    v.t1 = INT64_MAX;
    v.thread = -1;
    v.rows = accRows;
    v.ctx = x;
    rc = fnt_run_calls_visit(snap->st, &files, &v);
    fnt_heat_free(h);
  }else{
    rc = fnt_run_calls_each(snap, run_id, cols, x->tab, accCall, x);
  }
  fnt_run_calls_clear(&files);
  return rc;
}

int fnt_account_compute(fnt_snapshot *snap, const char *run_id, fnt_account **out){
  fnt_store *st;
  fnt_account *a = 0;
  acc_ctx x;
  uint32_t k;
  size_t nmax = 0;
  int64_t *scratch = 0;
  int rc;

  if( out ) *out = 0;
  if( snap==0 || out==0 ) return FNT_E_MISUSE;
  st = snap->st;
  if( run_id==0 ) return fnt_err(st, FNT_E_MISUSE, "fnt_account_compute: run_id is NULL");
  a = fnt_calloc(1, sizeof(*a));
  if( a==0 ) return fnt_err(st, FNT_E_NOMEM, "out of memory");
  memset(&x, 0, sizeof(x));
  x.tab = &a->tab;
  fnt_err_clear(st);
  rc = accRun(snap, run_id, &x);
  if( rc ) goto done;
  a->rows = fnt_calloc((size_t)a->tab.nkey+1, sizeof(fnt_account_row));
  for(k=0; k<a->tab.nkey && k<x.nacc; k++){
    if( x.acc[k].n>nmax ) nmax = x.acc[k].n;
  }
  scratch = fnt_malloc((nmax ? nmax : 1)*sizeof(int64_t));
  if( a->rows==0 || scratch==0 ){ rc = FNT_E_NOMEM; goto done; }
  for(k=0; k<a->tab.nkey && k<x.nacc; k++){
    key_acc *y = &x.acc[k];
    fnt_account_row *r;
    if( y->n==0 ) continue;
    r = &a->rows[a->n++];
    r->key = a->tab.keys[k];
    r->symbol = a->tab.fn[y->first_fn].symbol;
    r->calls = (int64_t)y->n;
    percentiles(y->dur, y->n, y->min, y->max, scratch, r);
    r->sum_ns = (int64_t)y->sum;
    r->inclusive_ns = (int64_t)y->incl;
    r->self_ns = (int64_t)y->self;
  }
  if( a->n>1 ) qsort(a->rows, a->n, sizeof(fnt_account_row), cmpRowKey);
done:
  if( rc==FNT_E_NOMEM ){
    rc = fnt_err(st, rc, "run '%s': out of memory accounting its calls", run_id);
  }
  for(k=0; k<x.nacc; k++) if( x.acc[k].own ) fnt_free(x.acc[k].dur);
  fnt_free(x.acc);
  fnt_free(x.pool);
  fnt_free(scratch);
  if( rc ){ fnt_account_free(a); return rc; }
  *out = a;
  return FNT_OK;
}
