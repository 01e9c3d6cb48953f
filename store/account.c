/*
** account.c -- fnt_account (SPEC §7): per key, the distribution of its
** calls' durations, as `llvm-xray account` prints it: percentile p of the
** n durations sorted ascending is the element at floor(p * n).  Reads the
** run's calls (two of their columns matter) once; memory is one duration
** per call of the run.
*/
#include <stdlib.h>
#include <string.h>

#include "calls.h"

typedef struct key_acc {
  int64_t *dur;
  size_t n, cap;
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

static int cmpI64(const void *a, const void *b){
  int64_t x = *(const int64_t*)a, y = *(const int64_t*)b;
  return x<y ? -1 : x>y;
}

static int cmpRowKey(const void *a, const void *b){
  return strcmp(((const fnt_account_row*)a)->key, ((const fnt_account_row*)b)->key);
}

int fnt_account_compute(fnt_snapshot *snap, const char *run_id, fnt_account **out){
  fnt_store *st;
  fnt_account *a = 0;
  fnt_call_predicate p;
  fnt_calls *sc = 0;
  const fnt_call *c;
  key_acc *acc = 0;
  uint32_t nacc = 0, k;
  int rc;

  if( out ) *out = 0;
  if( snap==0 || out==0 ) return FNT_E_MISUSE;
  st = snap->st;
  if( run_id==0 ) return fnt_err(st, FNT_E_MISUSE, "fnt_account_compute: run_id is NULL");
  a = fnt_calloc(1, sizeof(*a));
  if( a==0 ) return fnt_err(st, FNT_E_NOMEM, "out of memory");
  fnt_call_predicate_init(&p);
  p.run_ids = &run_id;
  p.n_run_ids = 1;
  rc = fnt_calls_open(snap, &p, &sc);
  while( rc==FNT_OK && (rc = fnt_calls_next(sc, &c))==1 ){
    uint32_t fn;
    key_acc *x;
    rc = FNT_OK;
    if( fnt_fntab_intern(&a->tab, c->symbol, c->stable_id, &fn) ) goto nomem;
    k = a->tab.key[fn];
    if( k>=nacc ){
      uint32_t nNew = nacc ? nacc*2 : 64;
      key_acc *n2;
      while( nNew<=k ) nNew *= 2;
      n2 = fnt_realloc(acc, (size_t)nNew*sizeof(key_acc));
      if( n2==0 ) goto nomem;
      memset(n2+nacc, 0, (size_t)(nNew-nacc)*sizeof(key_acc));
      acc = n2;
      nacc = nNew;
    }
    x = &acc[k];
    if( x->n==x->cap ){
      size_t nNew = x->cap ? x->cap*2 : 16;
      int64_t *d = fnt_realloc(x->dur, nNew*sizeof(int64_t));
      if( d==0 ) goto nomem;
      x->dur = d;
      x->cap = nNew;
    }
    if( x->n==0 || c->call_id<x->first_call ){ x->first_call = c->call_id; x->first_fn = fn; }
    x->dur[x->n++] = c->dur_ns;
    x->sum += (uint64_t)c->dur_ns;
    x->self += (uint64_t)c->self_ns;
    if( c->outermost ) x->incl += (uint64_t)c->dur_ns;
  }
  if( rc<0 ) goto done;
  a->rows = fnt_calloc((size_t)a->tab.nkey+1, sizeof(fnt_account_row));
  if( a->rows==0 ) goto nomem;
  for(k=0; k<a->tab.nkey && k<nacc; k++){
    key_acc *x = &acc[k];
    fnt_account_row *r;
    if( x->n==0 ) continue;
    qsort(x->dur, x->n, sizeof(int64_t), cmpI64);
    r = &a->rows[a->n++];
    r->key = a->tab.keys[k];
    r->symbol = a->tab.fn[x->first_fn].symbol;
    r->calls = (int64_t)x->n;
    r->min_ns = x->dur[0];
    r->p50_ns = x->dur[x->n/2];
    r->p90_ns = x->dur[x->n*90/100];     /* floor(p * n), exactly */
    r->p99_ns = x->dur[x->n*99/100];
    r->max_ns = x->dur[x->n-1];
    r->sum_ns = (int64_t)x->sum;
    r->inclusive_ns = (int64_t)x->incl;
    r->self_ns = (int64_t)x->self;
  }
  if( a->n ) qsort(a->rows, a->n, sizeof(fnt_account_row), cmpRowKey);
  rc = FNT_OK;
  goto done;
nomem:
  rc = fnt_err(st, FNT_E_NOMEM, "run '%s': out of memory accounting its calls", run_id);
done:
  fnt_calls_close(sc);
  for(k=0; k<nacc; k++) fnt_free(acc[k].dur);
  fnt_free(acc);
  if( rc ){ fnt_account_free(a); return rc; }
  *out = a;
  return FNT_OK;
}
