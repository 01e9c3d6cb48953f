/*
** test_calls_order.c -- the row order of calls segments (calls_order.c)
** against a plain sort by (depth, start, thread, call_id): replay-like
** inputs (each thread's calls of a depth in start order), starts that go
** back in time, ties of start across threads, and more depths x threads
** than calls (the comparator fallback).
*/
#include "calls.h"
#include "util_test.h"

static int cmpRef(const void *a, const void *b){
  const fnt_callrec *x = a, *y = b;
  if( x->depth!=y->depth ) return x->depth<y->depth ? -1 : 1;
  if( x->start!=y->start ) return x->start<y->start ? -1 : 1;
  if( x->thread!=y->thread ) return x->thread<y->thread ? -1 : 1;
  return x->call_id<y->call_id ? -1 : x->call_id>y->call_id;
}

static int cmpU64(const void *a, const void *b){
  uint64_t x = *(const uint64_t*)a, y = *(const uint64_t*)b;
  return x<y ? -1 : x>y;
}

static uint64_t rnd(uint64_t *s){
  *s ^= *s<<13; *s ^= *s>>7; *s ^= *s<<17;
  return *s;
}

/* n calls over nth threads (ids spread out) and depths < ndep; each
** (thread, depth) gets increasing starts unless `backwards`; starts are
** drawn from a small range so that ties across threads happen. */
static void one(size_t n, uint32_t nth, uint32_t ndep, int backwards, uint64_t seed){
  fnt_callvec v = {0};
  fnt_callrec *want;
  uint64_t *threads = calloc(nth, sizeof(uint64_t)), s = seed*2654435761u + 1;
  int64_t *next = calloc((size_t)nth*ndep, sizeof(int64_t));
  uint32_t i, *order = 0;
  uint8_t *seen;
  size_t k;
  for(i=0; i<nth; i++) threads[i] = (uint64_t)i*7919 + 3;
  for(k=0; k<n; k++){
    fnt_callrec c;
    uint32_t t = (uint32_t)(rnd(&s)%nth), d = (uint32_t)(rnd(&s)%ndep);
    int64_t *at = &next[(size_t)t*ndep + d];
    memset(&c, 0, sizeof(c));
    *at += (int64_t)(rnd(&s)%3);
    c.start = backwards && rnd(&s)%5==0 ? *at - (int64_t)(rnd(&s)%50) : *at;
    c.end = c.start + 10;
    /* As the replay's: a later entry of the thread has a larger id. */
    c.call_id = backwards ? (int64_t)(rnd(&s)%1000) : (int64_t)k;
    c.thread = (uint32_t)threads[t];
    c.depth = d;
    c.fn = (uint32_t)k;           /* identifies the record */
    CHECK(fnt_callvec_push(&v, &c)==FNT_OK);
  }
  want = malloc((n ? n : 1)*sizeof(fnt_callrec));
  if( n ) memcpy(want, v.a, n*sizeof(fnt_callrec));
  qsort(want, n, sizeof(fnt_callrec), cmpRef);
  qsort(threads, nth, sizeof(uint64_t), cmpU64);
  CHECK_EQ_INT(fnt_calls_order(&v, threads, nth, &order), FNT_OK);
  /* A permutation ... */
  seen = calloc(n+1, 1);
  for(k=0; k<n; k++){
    CHECK(order[k]<n && !seen[order[k]]);
    if( order[k]<n ) seen[order[k]] = 1;
  }
  for(k=0; k<n; k++){
    /* ... in the order of the keys (equal keys may come in either order). */
    if( cmpRef(&v.a[order[k]], &want[k])!=0 ){
      fprintf(stderr, "n=%zu threads=%u depths=%u backwards=%d seed=%llu: row %zu differs\n",
              n, nth, ndep, backwards, (unsigned long long)seed, k);
      t_failures++;
      break;
    }
  }
  fnt_callvec_free(&v);
  fnt_free(order);
  free(seen);
  free(want);
  free(threads);
  free(next);
}

int main(void){
  uint64_t seed;
  one(0, 1, 1, 0, 1);
  one(1, 1, 1, 0, 1);
  for(seed=1; seed<=40; seed++){
    one(1000 + seed*37, 1 + (uint32_t)(seed%9), 1 + (uint32_t)(seed%13), 0, seed);
    one(1000 + seed*37, 1 + (uint32_t)(seed%9), 1 + (uint32_t)(seed%13), 1, seed);
  }
  one(5000, 64, 40, 0, 99);            /* many runs per depth: the heap */
  one(300, 300, 300, 0, 7);            /* depths x threads >> calls: fallback */
  one(300, 300, 300, 1, 8);
  return t_finish("test_calls_order");
}
