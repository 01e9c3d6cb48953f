/*
** calls_order.c -- the row order of a calls segment: by (depth, start,
** thread, call_id) (FORMAT.md, "Calls segments").
**
** The replay emits calls in the order they end.  At one depth a thread's
** calls do not overlap, so in that order they already come by start: the
** rows of a depth are one sorted run per thread.  A stable counting sort
** by (depth, thread) and a merge of those runs by start orders them in
** O(n log threads), where a generic sort of the 64-byte records cost a
** quarter of filing; the result is a permutation, so the records are
** never moved.  When a run is not sorted (t_ns that goes back in time)
** that depth is sorted with the comparator instead, and so are inputs
** whose depths x threads would make the counts large.
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

/* Fallbacks sort copies that remember where they came from. */
typedef struct tagged { fnt_callrec c; uint32_t i; } tagged;
static int cmpTagged(const void *a, const void *b){
  return cmpCall(&((const tagged*)a)->c, &((const tagged*)b)->c);
}

/* Sorts v[ix[0..n)] with the comparator into out[0..n).  @return FNT_OK or
** FNT_E_NOMEM. */
static int sortSlow(const fnt_callrec *v, const uint32_t *ix, size_t n,
                    uint32_t *out){
  tagged *t = fnt_malloc((n ? n : 1)*sizeof(tagged));
  size_t i;
  if( t==0 ) return FNT_E_NOMEM;
  for(i=0; i<n; i++){ t[i].c = v[ix ? ix[i] : i]; t[i].i = ix ? ix[i] : (uint32_t)i; }
  qsort(t, n, sizeof(tagged), cmpTagged);
  for(i=0; i<n; i++) out[i] = t[i].i;
  fnt_free(t);
  return FNT_OK;
}

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
static void mergeDepth(const uint32_t *ix, const int64_t *ks, const size_t *off,
                       uint32_t nth, head *h, uint32_t *out){
  size_t k = 0;
  uint32_t t, nh = 0;
  for(t=0; t<nth; t++){
    if( off[t]<off[t+1] ){ h[nh].at = off[t]; h[nh].end = off[t+1]; h[nh++].run = t; }
  }
  for(t=nh/2; t-- > 0; ) siftDown(ks, h, nh, t);
  while( nh ){
    out[k++] = ix[h[0].at];
    if( ++h[0].at==h[0].end ) h[0] = h[--nh];
    siftDown(ks, h, nh, 0);
  }
}

int fnt_calls_order(const fnt_callvec *cv, const uint64_t *threads,
                    uint32_t nthreads, uint32_t **order){
  const fnt_callrec *v = cv->a;
  size_t n = cv->n, nb, i, *off = 0, *pos = 0;
  uint32_t *key = 0, *ix = 0, *last = 0, *out, maxDepth = 0, d;
  int64_t *ks = 0;
  uint8_t *unsorted = 0;
  head *h = 0;
  int rc = FNT_E_NOMEM;
  *order = out = fnt_malloc((n ? n : 1)*sizeof(uint32_t));
  if( out==0 ) return FNT_E_NOMEM;
  if( n>=UINT32_MAX ){ rc = FNT_E_NOMEM; goto done; }
  for(i=0; i<n; i++) if( v[i].depth>maxDepth ) maxDepth = v[i].depth;
  nb = ((size_t)maxDepth+1)*(nthreads ? nthreads : 1);
  if( n<2 || nthreads==0 || nb>n+65536 ){
    rc = sortSlow(v, 0, n, out);
    goto done;
  }
  /* One block for the three arrays of a call each: 16 bytes a call, so a
  ** chunk's (8 MB for a million events) is large enough to be given 2 MB
  ** pages (alloc.c), where three of 2-4 MB faulted in 4 KB pages. */
  ks = fnt_malloc(n*(sizeof(int64_t) + 2*sizeof(uint32_t)));
  if( ks ){
    key = (uint32_t*)(ks + n);
    ix = key + n;
  }
  off = fnt_calloc(nb+1, sizeof(size_t));
  pos = fnt_malloc(nb*sizeof(size_t));
  last = fnt_malloc(nb*sizeof(uint32_t));
  unsorted = fnt_calloc((size_t)maxDepth+1, 1);
  h = fnt_malloc(nthreads*sizeof(head));
  if( key==0 || ix==0 || ks==0 || off==0 || pos==0 || last==0 || unsorted==0
   || h==0 ) goto done;
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
    if( !unsorted[d] ) mergeDepth(ix, ks, o, nthreads, h, out + o[0]);
    else if( sortSlow(v, ix + o[0], o[nthreads]-o[0], out + o[0]) ) goto done;
  }
  rc = FNT_OK;
done:
  if( rc ){ fnt_free(out); *order = 0; }
  fnt_free(ks);                /* key and ix too */
  fnt_free(off);
  fnt_free(pos);
  fnt_free(last);
  fnt_free(unsorted);
  fnt_free(h);
  return rc;
}
