/*
** calls_order.c -- the row order of a calls segment: by (depth, start,
** thread, call_id) (FORMAT.md, "Calls segments").
**
** The replay emits calls in the order they end.  At one depth a thread's
** calls do not overlap, so in that order they already come by start: the
** rows of a depth are one sorted run per thread.  A stable counting sort
** by (depth, thread) and a merge of those runs by start orders them in
** O(n log threads), where a generic sort of the 64-byte records cost a
** quarter of filing.  When a run is not sorted (t_ns that goes back in
** time) that depth is sorted with the comparator instead, and so are
** inputs whose depths x threads would make the counts large.
*/
#include <stdlib.h>
#include <string.h>

#include "calls.h"

static int cmpCall(const fnt_callrec *x, const fnt_callrec *y){
  if( x->depth!=y->depth ) return x->depth<y->depth ? -1 : 1;
  if( x->start!=y->start ) return x->start<y->start ? -1 : 1;
  if( x->thread!=y->thread ) return x->thread<y->thread ? -1 : 1;
  return x->call_id<y->call_id ? -1 : x->call_id>y->call_id;
}

static int cmpCallQ(const void *a, const void *b){ return cmpCall(a, b); }

/* The merge's heap of run heads: positions in ix/ks and the run's thread
** index, which breaks ties of start (one depth, so call_id never does). */
typedef struct head { size_t at, end; uint32_t run; } head;

static int headLess(const int64_t *ks, const head *x, const head *y){
  return ks[x->at]<ks[y->at] || (ks[x->at]==ks[y->at] && x->run<y->run);
}

static void siftDown(const int64_t *ks, head *h, uint32_t n, uint32_t i){
  for(;;){
    uint32_t l = 2*i+1, m = i;
    if( l<n && headLess(ks, &h[l], &h[m]) ) m = l;
    if( l+1<n && headLess(ks, &h[l+1], &h[m]) ) m = l+1;
    if( m==i ) return;
    { head t = h[i]; h[i] = h[m]; h[m] = t; }
    i = m;
  }
}

/* One depth: its runs ix[off[t] .. off[t+1]) for t < nth (ks: their
** starts), each one thread's calls in start order, merged into out[]. */
static void mergeDepth(const fnt_callrec *v, const uint32_t *ix,
                       const int64_t *ks, const size_t *off, uint32_t nth,
                       head *h, fnt_callrec *out){
  size_t k = 0;
  uint32_t t, nh = 0;
  for(t=0; t<nth; t++){
    if( off[t]<off[t+1] ){ h[nh].at = off[t]; h[nh].end = off[t+1]; h[nh++].run = t; }
  }
  if( nh==1 ){
    size_t i;
    for(i=h[0].at; i<h[0].end; i++) out[k++] = v[ix[i]];
    return;
  }
  for(t=nh/2; t-- > 0; ) siftDown(ks, h, nh, t);
  while( nh ){
    out[k++] = v[ix[h[0].at]];
    if( ++h[0].at==h[0].end ) h[0] = h[--nh];
    siftDown(ks, h, nh, 0);
  }
}

int fnt_calls_order(fnt_callvec *cv, const uint64_t *threads, uint32_t nthreads){
  fnt_callrec *v = cv->a, *out = 0;
  size_t n = cv->n, nb, i, *off = 0, *pos = 0;
  uint32_t *key = 0, *ix = 0, *last = 0, maxDepth = 0, d;
  int64_t *ks = 0;
  uint8_t *unsorted = 0;
  head *h = 0;
  int rc = FNT_E_NOMEM;
  if( n<2 ) return FNT_OK;
  for(i=0; i<n; i++) if( v[i].depth>maxDepth ) maxDepth = v[i].depth;
  nb = ((size_t)maxDepth+1)*(nthreads ? nthreads : 1);
  if( n>=UINT32_MAX || nthreads==0 || nb>n+65536 ){
    qsort(v, n, sizeof(fnt_callrec), cmpCallQ);
    return FNT_OK;
  }
  key = fnt_malloc(n*sizeof(uint32_t));
  ix = fnt_malloc(n*sizeof(uint32_t));
  ks = fnt_malloc(n*sizeof(int64_t));
  off = fnt_calloc(nb+1, sizeof(size_t));
  pos = fnt_malloc(nb*sizeof(size_t));
  last = fnt_malloc(nb*sizeof(uint32_t));
  unsorted = fnt_calloc((size_t)maxDepth+1, 1);
  h = fnt_malloc(nthreads*sizeof(head));
  out = fnt_malloc(n*sizeof(fnt_callrec));
  if( key==0 || ix==0 || ks==0 || off==0 || pos==0 || last==0 || unsorted==0
   || h==0 || out==0 ) goto done;
  /* Stable counting sort by (depth, thread index), noting any depth where
  ** a thread's calls do not come in start order. */
  for(i=0; i<n; i++){
    uint32_t lo = 0, hi = nthreads;
    while( lo<hi ){
      uint32_t mid = lo + (hi-lo)/2;
      if( threads[mid]<v[i].thread ) lo = mid+1; else hi = mid;
    }
    key[i] = v[i].depth*nthreads + lo;
    off[key[i]+1]++;
  }
  for(i=0; i<nb; i++) off[i+1] += off[i];
  memcpy(pos, off, nb*sizeof(size_t));
  memset(last, 0xff, nb*sizeof(uint32_t));
  for(i=0; i<n; i++){
    uint32_t b = key[i];
    if( last[b]!=UINT32_MAX && cmpCall(&v[last[b]], &v[i])>0 ) unsorted[v[i].depth] = 1;
    last[b] = (uint32_t)i;
    ks[pos[b]] = v[i].start;
    ix[pos[b]++] = (uint32_t)i;
  }
  for(d=0; d<=maxDepth; d++){
    const size_t *o = off + (size_t)d*nthreads;
    size_t m = o[nthreads]-o[0];
    if( unsorted[d] ){
      for(i=0; i<m; i++) out[o[0]+i] = v[ix[o[0]+i]];
      qsort(out + o[0], m, sizeof(fnt_callrec), cmpCallQ);
    }else{
      mergeDepth(v, ix, ks, o, nthreads, h, out + o[0]);
    }
  }
  fnt_free(cv->a);
  cv->a = out;
  cv->cap = n;
  out = 0;
  rc = FNT_OK;
done:
  fnt_free(key);
  fnt_free(ix);
  fnt_free(ks);
  fnt_free(off);
  fnt_free(pos);
  fnt_free(last);
  fnt_free(unsorted);
  fnt_free(h);
  fnt_free(out);
  return rc;
}
