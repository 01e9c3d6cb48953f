/*
** test_synth.c -- the synthetic trace of `fnt bench` (tools/synth.c), both
** shapes: the same config gives the same events whatever the batch size,
** another seed other events; every thread's calls are well nested, seq_no
** counts from 0 and t_ns grows; the tree shape stays within its depth and
** its distinct stacks stop growing with the events, while the flat shape's
** keep growing (so the count below can tell them apart).
*/
#include <stdint.h>

#include "synth.h"
#include "util_test.h"

#define THREADS 4
#define FUNCTIONS 300

static synth_config config(synth_shape shape, uint64_t events, uint64_t seed){
  synth_config c;
  memset(&c, 0, sizeof(c));
  c.events = events;
  c.threads = THREADS;
  c.functions = FUNCTIONS;
  c.seed = seed;
  c.shape = shape;
  return c;
}

/* A hash of the events of `c`, generated `batch` at a time. */
static uint64_t traceHash(const synth_config *c, size_t batch){
  synth *s = synth_new(c);
  fnt_event *ev = malloc(batch * sizeof(fnt_event));
  uint64_t h = 1469598103934665603ULL;
  size_t n, i;
  CHECK(s && ev);
  if( s==0 || ev==0 ){ free(ev); synth_free(s); return 0; }
  while( (n = synth_next(s, ev, batch))>0 ){
    for(i=0; i<n; i++){
      uint64_t v[4] = { ev[i].seq_no, ev[i].t_ns,
                        (uint64_t)ev[i].thread<<32 | ev[i].function, ev[i].kind };
      int k;
      for(k=0; k<4; k++) h = (h ^ v[k]) * 1099511628211ULL;
    }
  }
  free(ev);
  synth_free(s);
  return h;
}

static void testDeterministic(synth_shape shape){
  synth_config a = config(shape, 300000, 7), b = config(shape, 300000, 8);
  uint64_t h = traceHash(&a, 4096);
  CHECK(h==traceHash(&a, 997));
  CHECK(h!=traceHash(&b, 4096));
}

/* Distinct stacks as nodes (parent node, function), interned. */
typedef struct stacks { uint64_t *key; uint32_t *id; uint32_t mask, n; } stacks;

static uint32_t intern(stacks *t, uint32_t parent, uint32_t fn){
  uint64_t k = ((uint64_t)parent<<32 | fn) + 1;
  uint32_t h = (uint32_t)((k * 0x9E3779B97F4A7C15ULL) >> 40) & t->mask;
  while( t->key[h] && t->key[h]!=k ) h = (h+1) & t->mask;
  if( t->key[h]==0 ){ t->key[h] = k; t->id[h] = ++t->n; }
  return t->id[h];
}

typedef struct walk {
  uint32_t stack[THREADS][SYNTH_MAX_DEPTH];   /* node ids */
  uint32_t fn[THREADS][SYNTH_MAX_DEPTH];
  int depth[THREADS], maxDepth;
  uint32_t thread[THREADS];
  int nThread;
} walk;

/* Replays `events` of `shape`, checking the event model, and returns the
** distinct stacks seen after `events`/4 events (*quarter) and after all. */
static uint32_t replay(synth_shape shape, uint64_t events, uint32_t *quarter){
  synth_config c = config(shape, events, 3);
  synth *s = synth_new(&c);
  fnt_event ev[2048];
  stacks t = { 0, 0, (1u<<22) - 1, 0 };
  walk *w = calloc(1, sizeof(walk));
  uint64_t seq = 0, lastT = 0, entries = 0, bad = 0;
  int limit = shape==SYNTH_TREE ? SYNTH_TREE_MAX_DEPTH : SYNTH_MAX_DEPTH;
  synth_stats st;
  size_t n, i;
  t.key = calloc((size_t)t.mask + 1, sizeof(uint64_t));
  t.id = calloc((size_t)t.mask + 1, sizeof(uint32_t));
  CHECK(s && w && t.key && t.id);
  if( !s || !w || !t.key || !t.id ) goto done;
  while( (n = synth_next(s, ev, sizeof(ev)/sizeof(ev[0])))>0 ){
    for(i=0; i<n; i++){
      const fnt_event *e = &ev[i];
      int k;
      for(k=0; k<w->nThread && w->thread[k]!=e->thread; k++){}
      if( k==w->nThread ){
        CHECK(k<THREADS);
        if( k==THREADS ) goto done;
        w->thread[w->nThread++] = e->thread;
      }
      bad += e->seq_no!=seq++ || e->t_ns<=lastT || e->function>=FUNCTIONS;
      lastT = e->t_ns;
      if( e->kind==FNT_KIND_ENTRY ){
        int d = w->depth[k];
        if( d==limit ){ bad++; continue; }
        w->stack[k][d] = intern(&t, d ? w->stack[k][d-1] : 0, e->function);
        w->fn[k][d] = e->function;
        w->depth[k] = ++d;
        if( d>w->maxDepth ) w->maxDepth = d;
        entries++;
      }else{
        int d = w->depth[k];
        bad += d==0 || (e->kind!=FNT_KIND_EXIT && e->kind!=FNT_KIND_TAIL_EXIT)
            || w->fn[k][d-1]!=e->function;
        if( d ) w->depth[k]--;
      }
      if( seq==events/4 ) *quarter = t.n;
    }
  }
  CHECK_EQ_INT(bad, 0);
  CHECK_EQ_INT(seq, events);
  CHECK_EQ_INT(w->nThread, THREADS);
  synth_stats_get(s, &st);
  CHECK_EQ_INT(st.events, events);
  CHECK_EQ_INT(st.entries, entries);
  CHECK_EQ_INT(st.max_depth, w->maxDepth);
  CHECK(st.last_t_ns==lastT);
  CHECK(st.recursive_entries>0 && st.tail_exits>0);
  if( shape==SYNTH_TREE ){
    fprintf(stderr, "tree: mean depth %.2f\n", st.mean_depth);
    CHECK(st.mean_depth>=4 && st.mean_depth<=16);
    CHECK(w->maxDepth==SYNTH_TREE_MAX_DEPTH);
  }
done:
  free(t.key);
  free(t.id);
  free(w);
  synth_free(s);
  return t.n;
}

static void testStacks(void){
  uint32_t q = 0, all;
  /* The tree: the last 3/4 of the events add few stacks, and all of them
  ** are within a few per function (a leaf utility under each caller). */
  all = replay(SYNTH_TREE, 2000000, &q);
  fprintf(stderr, "tree: %u stacks after 500k events, %u after 2M\n", q, all);
  CHECK(q>FUNCTIONS/2);
  CHECK(all<=q + q/5);
  CHECK(all<=4*FUNCTIONS);
  /* The flat walk: nearly every call a new stack. */
  all = replay(SYNTH_FLAT, 2000000, &q);
  fprintf(stderr, "flat: %u stacks after 500k events, %u after 2M\n", q, all);
  CHECK(all>=3*q);
}

/* A program of many functions is grown in linear time (a quadratic pass
** over them took minutes at 200,000) and every function is in it. */
static void testLargeTree(void){
  synth_config c = config(SYNTH_TREE, 20000, 5);
  synth *s;
  fnt_event ev[1000];
  size_t n, nfn;
  c.functions = 200000;
  s = synth_new(&c);
  CHECK(s!=0);
  if( s==0 ) return;
  CHECK(synth_functions(s, &nfn)!=0 && nfn==200000);
  n = synth_next(s, ev, 1000);
  CHECK_EQ_INT(n, 1000);
  CHECK(ev[0].kind==FNT_KIND_ENTRY && ev[0].function<4);   /* a root: one of the first 4 */
  synth_free(s);
}

static void testShapeNames(void){
  CHECK_EQ_INT(synth_shape_parse("flat"), SYNTH_FLAT);
  CHECK_EQ_INT(synth_shape_parse("tree"), SYNTH_TREE);
  CHECK_EQ_INT(synth_shape_parse("Tree"), -1);
  CHECK_EQ_INT(synth_shape_parse(""), -1);
  CHECK_STR(synth_shape_name(SYNTH_TREE), "tree");
  CHECK_STR(synth_shape_name(SYNTH_FLAT), "flat");
}

int main(void){
  testDeterministic(SYNTH_FLAT);
  testDeterministic(SYNTH_TREE);
  testStacks();
  testLargeTree();
  testShapeNames();
  return t_finish("test_synth");
}
