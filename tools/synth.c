/*
** synth.c -- the deterministic synthetic trace of `fnt bench` (synth.h).
**
** One splitmix64 stream drives everything, so a seed names a trace on any
** machine.  Events are produced in bursts: a thread is picked, then emits
** 1..64 events before another is picked, as XRay's per-thread buffers
** interleave.  An exit always closes the top frame, so calls are properly
** nested; a few are tail_exits.
**
** SYNTH_FLAT: each thread's stack does a random walk biased toward depth
** 13; an entry picks a function by Zipf-like popularity (weight 1/rank over
** a shuffled order, so popularity is unrelated to the function's index),
** or now and then a function already on the stack (recursion).
**
** SYNTH_TREE: a fixed program.  The last tenth of the functions are leaf
** utilities (hashing, copying) that any function may call; the others form
** a tree of at most TREE_DEPTH levels under a few roots (one per thread, in
** turn), grown so that chains run deep as in real code.  Each function's
** callees are its children, up to two utilities and, for some leaves of
** the tree, itself.  A frame makes a number of calls drawn at entry around
** the function's own mean (a few functions loop), each to one of its
** callees; the time to a thread's next event follows the cost of its top
** function, so leaves are short and loops long.
*/
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "synth.h"

#define TARGET_DEPTH 13
#define MAX_BURST 64
#define TREE_DEPTH 18             /* levels of the tree; recursion and utilities go deeper */
#define TREE_ROOTS 4

typedef struct synth_thread {
  uint32_t id;
  int depth;
  uint32_t stack[SYNTH_MAX_DEPTH];
  uint32_t left[SYNTH_MAX_DEPTH];  /* tree: calls the frame has yet to make */
} synth_thread;

/* SYNTH_TREE's program: callees of f are callee[at[f] .. at[f+1]). */
typedef struct synth_tree {
  uint32_t *at, *callee;
  uint8_t *meanCalls;        /* calls a frame makes, on average; 0: a leaf */
  uint8_t *cost;             /* index into gaps[]: the function's self time */
  uint32_t roots;
} synth_tree;

struct synth {
  synth_config cfg;
  uint64_t rng;
  fnt_function *functions;
  char *names;               /* symbols and stable_ids, NUL-separated */
  double *cdf;               /* cumulative popularity, by rank */
  uint32_t *by_rank;         /* rank -> function index */
  synth_thread *threads;
  synth_tree tree;
  uint32_t gaps[256];        /* t_ns gaps, log-uniform 10..5000 ns */
  uint32_t cur;              /* the thread emitting the current burst */
  uint32_t burst;            /* events left in it */
  uint64_t seq, t;
  synth_stats st;
  double depth_sum;
};

static uint64_t next64(uint64_t *x){
  uint64_t z = (*x += 0x9e3779b97f4a7c15ULL);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}
static uint32_t below(uint64_t *x, uint32_t n){   /* 0 .. n-1 */
  return (uint32_t)(((next64(x) >> 32) * (uint64_t)n) >> 32);
}
static double unit(uint64_t *x){                  /* [0, 1) */
  return (double)(next64(x) >> 11) * (1.0/9007199254740992.0);
}

static const char *const words[] = {
  "storage", "segment", "reader", "writer", "decode", "encode", "column",
  "parser", "lexer", "token", "buffer", "vector", "string", "widget",
  "render", "layout", "event", "queue", "thread", "worker", "socket",
  "stream", "handle", "commit", "snapshot", "index", "cursor", "filter",
  "schema", "codec", "hash", "table", "node", "tree", "graph", "alloc",
};
#define NWORDS (sizeof(words)/sizeof(words[0]))

/* Appends "<len><word>" (an Itanium-mangled name component). */
static char *component(char *p, const char *w){
  return p + sprintf(p, "%zu%s", strlen(w), w);
}

/* Writes function i's symbol, 40..80 characters, unique through the
** base-26 tag that ends its name component.  Returns its length. */
static size_t makeSymbol(uint64_t *rng, uint32_t i, char *out){
  size_t want = 40 + below(rng, 41);
  char name[64], tag[8], *p = out;
  int k = 0, n;
  uint32_t v = i;
  static const char params[] = "imlcjdfbsxy";
  do{ tag[k++] = (char)('a' + v%26); v /= 26; }while( v && k<7 );
  tag[k] = 0;
  p += sprintf(p, "_ZN4acme6widget");
  for(n = (int)below(rng, 3); n>0 && (size_t)(p-out) < want-30; n--){
    p = component(p, words[below(rng, NWORDS)]);
  }
  snprintf(name, sizeof(name), "%s_%s", words[below(rng, NWORDS)], tag);
  p = component(p, name);
  *p++ = 'E';
  if( (size_t)(p-out) > want-2 ) want = (size_t)(p-out) + 2;
  if( want > 80 ) want = 80;
  while( (size_t)(p-out) < want ) *p++ = params[below(rng, sizeof(params)-1)];
  *p = 0;
  return (size_t)(p-out);
}

/* Grows SYNTH_TREE's program (the header above says how).
** @return 0, or -1 when out of memory. */
static int buildTree(synth *s){
  synth_tree *t = &s->tree;
  uint32_t nf = s->cfg.functions, nUtil = nf>=20 ? nf/10 : 0, nTree = nf - nUtil;
  uint32_t *parent = malloc((size_t)nf * sizeof(uint32_t));
  uint32_t *kids = malloc((size_t)nf * sizeof(uint32_t));      /* by parent */
  uint32_t *kidAt = calloc((size_t)nf + 1, sizeof(uint32_t));
  uint8_t *depth = malloc(nf);
  uint32_t i, n = 0;
  int rc = -1;
  t->at = calloc((size_t)nf + 1, sizeof(uint32_t));
  t->callee = malloc((size_t)nf * 4 * sizeof(uint32_t));   /* children + 2 utilities + self */
  t->meanCalls = calloc(nf, 1);
  t->cost = malloc(nf);
  if( !parent || !kids || !kidAt || !depth || !t->at || !t->callee || !t->meanCalls
   || !t->cost ) goto done;
  t->roots = nTree < TREE_ROOTS ? nTree : TREE_ROOTS;
  for(i=0; i<nTree; i++){
    uint32_t p;
    if( i<t->roots ){ depth[i] = 1; parent[i] = i; continue; }
    /* Mostly a recent function, so chains run deep; else any. */
    p = unit(&s->rng) < 0.6 ? i-1-below(&s->rng, i<8 ? i : 8) : below(&s->rng, i);
    if( depth[p]>=TREE_DEPTH ) p = below(&s->rng, t->roots);
    parent[i] = p;
    depth[i] = (uint8_t)(depth[p] + 1);
  }
  /* Each parent's children in index order: kids[kidAt[p] .. kidAt[p+1]). */
  for(i=t->roots; i<nTree; i++) kidAt[parent[i]+1]++;
  for(i=0; i<nTree; i++) kidAt[i+1] += kidAt[i];
  for(i=t->roots; i<nTree; i++) kids[kidAt[parent[i]]++] = i;
  for(i=nTree; i>0; i--) kidAt[i] = kidAt[i-1];   /* back to the starts */
  kidAt[0] = 0;
  /* Callee lists in function order: children, utilities, self. */
  for(i=0; i<nTree; i++){
    uint32_t c, k, nKids = kidAt[i+1] - kidAt[i], nUse = nUtil ? below(&s->rng, 3) : 0;
    t->at[i] = n;
    for(c=kidAt[i]; c<kidAt[i+1]; c++) t->callee[n++] = kids[c];
    for(k=0; k<nUse; k++) t->callee[n++] = nTree + below(&s->rng, nUtil);
    if( nKids==0 && i>=t->roots && unit(&s->rng) < 0.15 ){
      t->callee[n++] = i;
      t->meanCalls[i] = 1;
    }else if( n>t->at[i] ){
      t->meanCalls[i] = (uint8_t)(unit(&s->rng) < 0.05 ? 4 + below(&s->rng, 9)
                                                        : 2 + below(&s->rng, 2));
    }
    if( i<t->roots ) t->meanCalls[i] = 32;           /* a thread's main loop */
    t->cost[i] = (uint8_t)below(&s->rng, 192);
  }
  for(i=nTree; i<nf; i++){
    t->at[i] = n;
    t->cost[i] = (uint8_t)below(&s->rng, 64);          /* utilities are quick */
  }
  t->at[nf] = n;
  rc = 0;
done:
  free(parent);
  free(kids);
  free(kidAt);
  free(depth);
  return rc;
}

synth *synth_new(const synth_config *cfg){
  synth *s = calloc(1, sizeof(*s));
  uint32_t nf, i;
  size_t used = 0;
  double sum = 0;
  if( s==0 || cfg->threads==0 || cfg->functions==0 ){ free(s); return 0; }
  s->cfg = *cfg;
  nf = cfg->functions;
  s->rng = cfg->seed ^ 0x6a09e667f3bcc908ULL;
  s->functions = calloc(nf, sizeof(fnt_function));
  s->names = malloc((size_t)nf * 200);
  s->cdf = malloc((size_t)nf * sizeof(double));
  s->by_rank = malloc((size_t)nf * sizeof(uint32_t));
  s->threads = calloc(cfg->threads, sizeof(synth_thread));
  if( !s->functions || !s->names || !s->cdf || !s->by_rank || !s->threads ){
    synth_free(s);
    return 0;
  }
  for(i=0; i<nf; i++){
    char *sym = s->names + used;
    size_t len = makeSymbol(&s->rng, i, sym);
    used += len + 1;
    s->functions[i].symbol = sym;
    if( unit(&s->rng) < 0.7 ){
      /* A code-room id as SPEC §4 shows them: "c <repo> * <path>()." */
      char *sid = s->names + used;
      used += (size_t)sprintf(sid, "c acme/widget * %s().", sym + 15) + 1;
      s->functions[i].stable_id = sid;
      s->functions[i].local = 1;
    }else{
      s->functions[i].local = unit(&s->rng) < 0.5;
    }
    s->by_rank[i] = i;
  }
  for(i=nf; i>1; i--){                     /* Fisher-Yates: rank -> function */
    uint32_t j = below(&s->rng, i), tmp = s->by_rank[i-1];
    s->by_rank[i-1] = s->by_rank[j];
    s->by_rank[j] = tmp;
  }
  for(i=0; i<nf; i++){
    sum += 1.0/(double)(i+1);
    s->cdf[i] = sum;
  }
  for(i=0; i<nf; i++) s->cdf[i] /= sum;
  for(i=0; i<256; i++) s->gaps[i] = (uint32_t)(10.0 * pow(500.0, (double)i/255.0));
  for(i=0; i<cfg->threads; i++) s->threads[i].id = 41000u + 7u*i;
  if( cfg->shape==SYNTH_TREE && buildTree(s) ){ synth_free(s); return 0; }
  return s;
}

void synth_free(synth *s){
  if( s==0 ) return;
  free(s->functions);
  free(s->names);
  free(s->cdf);
  free(s->by_rank);
  free(s->threads);
  free(s->tree.at);
  free(s->tree.callee);
  free(s->tree.meanCalls);
  free(s->tree.cost);
  free(s);
}

const fnt_function *synth_functions(const synth *s, size_t *n){
  *n = s->cfg.functions;
  return s->functions;
}

static uint32_t popular(synth *s){
  double u = unit(&s->rng);
  uint32_t lo = 0, hi = s->cfg.functions - 1;
  while( lo<hi ){
    uint32_t mid = lo + (hi-lo)/2;
    if( s->cdf[mid] < u ) lo = mid+1; else hi = mid;
  }
  return s->by_rank[lo];
}

/* SYNTH_FLAT's next step of th: the function it enters, or -1 to exit. */
static int64_t flatStep(synth *s, synth_thread *th){
  double pEntry = 0.5 + 0.012*(TARGET_DEPTH - th->depth);
  if( pEntry < 0.05 ) pEntry = 0.05;
  if( pEntry > 0.95 ) pEntry = 0.95;
  if( th->depth==0 ) pEntry = 1;
  if( th->depth==SYNTH_MAX_DEPTH ) pEntry = 0;
  if( unit(&s->rng) >= pEntry ) return -1;
  if( th->depth>0 && unit(&s->rng) < 0.06 ){
    s->st.recursive_entries++;
    return th->stack[below(&s->rng, (uint32_t)th->depth)];
  }
  return popular(s);
}

/* SYNTH_TREE's next step of th (as flatStep), which is `ti`-th thread: its
** root when its stack is empty, else a callee of its top frame while that
** frame has calls left to make.  Sets the entered frame's calls. */
static int64_t treeStep(synth *s, synth_thread *th, uint32_t ti){
  const synth_tree *t = &s->tree;
  uint32_t f, g, n;
  if( th->depth==0 ){
    g = ti % t->roots;
  }else{
    f = th->stack[th->depth-1];
    n = t->at[f+1] - t->at[f];
    if( n==0 || th->left[th->depth-1]==0 || th->depth==SYNTH_TREE_MAX_DEPTH ) return -1;
    th->left[th->depth-1]--;
    g = t->callee[t->at[f] + below(&s->rng, n)];
    if( g==f ) s->st.recursive_entries++;
  }
  th->left[th->depth] = below(&s->rng, 2u*t->meanCalls[g] + 1);
  return g;
}

/* The t_ns to th's next event: any gap (flat), or about its top function's
** self time (tree). */
static uint32_t gap(synth *s, const synth_thread *th){
  uint64_t r = next64(&s->rng);
  if( s->cfg.shape==SYNTH_FLAT || th->depth==0 ) return s->gaps[r & 255];
  return s->gaps[s->tree.cost[th->stack[th->depth-1]] + (r & 63)];
}

size_t synth_next(synth *s, fnt_event *out, size_t max){
  size_t n = 0;
  while( n<max && s->seq < s->cfg.events ){
    synth_thread *th;
    fnt_event *e = &out[n++];
    int64_t f;
    if( s->burst==0 ){
      s->cur = below(&s->rng, s->cfg.threads);
      s->burst = 1 + below(&s->rng, MAX_BURST);
    }
    s->burst--;
    th = &s->threads[s->cur];
    s->t += gap(s, th);
    e->seq_no = s->seq++;
    e->t_ns = s->t;
    e->thread = th->id;
    f = s->cfg.shape==SYNTH_TREE ? treeStep(s, th, s->cur) : flatStep(s, th);
    if( f>=0 ){
      th->stack[th->depth++] = (uint32_t)f;
      e->function = (uint32_t)f;
      e->kind = FNT_KIND_ENTRY;
      s->st.entries++;
      s->depth_sum += th->depth;
      if( th->depth > s->st.max_depth ) s->st.max_depth = th->depth;
    }else{
      e->function = th->stack[--th->depth];
      if( unit(&s->rng) < 0.03 ){
        e->kind = FNT_KIND_TAIL_EXIT;
        s->st.tail_exits++;
      }else{
        e->kind = FNT_KIND_EXIT;
      }
    }
  }
  s->st.events = s->seq;
  s->st.last_t_ns = s->t;
  return n;
}

void synth_stats_get(const synth *s, synth_stats *out){
  *out = s->st;
  out->mean_depth = s->st.entries ? s->depth_sum/(double)s->st.entries : 0;
}

const char *synth_shape_name(synth_shape shape){
  return shape==SYNTH_TREE ? "tree" : "flat";
}

int synth_shape_parse(const char *name){
  if( strcmp(name, "flat")==0 ) return SYNTH_FLAT;
  if( strcmp(name, "tree")==0 ) return SYNTH_TREE;
  return -1;
}
