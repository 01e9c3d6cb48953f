/*
** synth.c -- the deterministic synthetic trace of `fnt bench` (synth.h).
**
** One splitmix64 stream drives everything, so a seed names a trace on any
** machine.  Events are produced in bursts: a thread is picked, then emits
** 1..64 events before another is picked, as XRay's per-thread buffers
** interleave.  Each thread's stack does a random walk biased toward depth
** 13; an entry picks a function by Zipf-like popularity (weight 1/rank over
** a shuffled order, so popularity is unrelated to the function's index), or
** now and then a function already on the stack (recursion).  An exit always
** closes the top frame, so calls are properly nested; a few are tail_exits.
*/
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "synth.h"

#define TARGET_DEPTH 13
#define MAX_BURST 64

typedef struct synth_thread {
  uint32_t id;
  int depth;
  uint32_t stack[SYNTH_MAX_DEPTH];
} synth_thread;

struct synth {
  synth_config cfg;
  uint64_t rng;
  fnt_function *functions;
  char *names;               /* symbols and stable_ids, NUL-separated */
  double *cdf;               /* cumulative popularity, by rank */
  uint32_t *by_rank;         /* rank -> function index */
  synth_thread *threads;
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
  return s;
}

void synth_free(synth *s){
  if( s==0 ) return;
  free(s->functions);
  free(s->names);
  free(s->cdf);
  free(s->by_rank);
  free(s->threads);
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

size_t synth_next(synth *s, fnt_event *out, size_t max){
  size_t n = 0;
  while( n<max && s->seq < s->cfg.events ){
    synth_thread *th;
    fnt_event *e = &out[n++];
    double pEntry;
    if( s->burst==0 ){
      s->cur = below(&s->rng, s->cfg.threads);
      s->burst = 1 + below(&s->rng, MAX_BURST);
    }
    s->burst--;
    th = &s->threads[s->cur];
    s->t += s->gaps[next64(&s->rng) & 255];
    e->seq_no = s->seq++;
    e->t_ns = s->t;
    e->thread = th->id;
    pEntry = 0.5 + 0.012*(TARGET_DEPTH - th->depth);
    if( pEntry < 0.05 ) pEntry = 0.05;
    if( pEntry > 0.95 ) pEntry = 0.95;
    if( th->depth==0 ) pEntry = 1;
    if( th->depth==SYNTH_MAX_DEPTH ) pEntry = 0;
    if( unit(&s->rng) < pEntry ){
      uint32_t f;
      if( th->depth>0 && unit(&s->rng) < 0.06 ){
        f = th->stack[below(&s->rng, (uint32_t)th->depth)];
        s->st.recursive_entries++;
      }else{
        f = popular(s);
      }
      th->stack[th->depth++] = f;
      e->function = f;
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
