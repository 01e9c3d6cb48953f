/*
** heat.c -- fnt_heat (SPEC §5) and fnt_callgraph (SPEC §7) from the
** aggregates the store keeps with a run's calls: each calls file's footer
** sums its ended calls per function and per caller -> callee edge, so a
** run's figures add up O(functions x files), plus the tail file's few open
** frames.  A run without complete calls (format 1) is replayed in memory.
*/
#include <stdlib.h>
#include <string.h>

#include "calls.h"
#include "segment.h"

/* Sums per key id of a fnt_fntab, and per (caller key, callee key) edge. */
typedef struct run_sums {
  fnt_fntab tab;
  uint64_t *incl, *self, *calls;
  uint32_t nkey;
  fnt_calls_edge *edge;        /* caller: key id + 1 (0 none), callee: key id */
  size_t nedge, capedge;
  uint64_t *slot;
  size_t mask;
} run_sums;

static void sumsClear(run_sums *s){
  fnt_fntab_clear(&s->tab);
  fnt_free(s->incl);
  fnt_free(s->self);
  fnt_free(s->calls);
  fnt_free(s->edge);
  fnt_free(s->slot);
  memset(s, 0, sizeof(*s));
}

static int sumsKeys(run_sums *s){
  uint32_t n = s->tab.nkey, i;
  if( n<=s->nkey ) return FNT_OK;
  {
    uint64_t *a = fnt_realloc(s->incl, (size_t)n*sizeof(uint64_t));
    if( a==0 ) return FNT_E_NOMEM;
    s->incl = a;
    a = fnt_realloc(s->self, (size_t)n*sizeof(uint64_t));
    if( a==0 ) return FNT_E_NOMEM;
    s->self = a;
    a = fnt_realloc(s->calls, (size_t)n*sizeof(uint64_t));
    if( a==0 ) return FNT_E_NOMEM;
    s->calls = a;
  }
  for(i=s->nkey; i<n; i++) s->incl[i] = s->self[i] = s->calls[i] = 0;
  s->nkey = n;
  return FNT_OK;
}

static uint64_t edgeHash(uint32_t a, uint32_t b){
  return ((uint64_t)a<<32 | b) * 0x9E3779B97F4A7C15ull >> 16;
}

static int sumsEdge(run_sums *s, uint32_t caller, uint32_t callee,
                    int64_t calls, int64_t total, int64_t self){
  uint64_t h;
  size_t i;
  if( s->slot==0 || (s->nedge+1)*2 > s->mask+1 ){
    size_t nNew = s->slot ? (s->mask+1)*2 : 256;
    uint64_t *a = fnt_calloc(nNew, sizeof(uint64_t));
    if( a==0 ) return FNT_E_NOMEM;
    for(i=0; i<s->nedge; i++){
      for(h=edgeHash(s->edge[i].caller, s->edge[i].callee); a[h&(nNew-1)]; h++){}
      a[h&(nNew-1)] = i+1;
    }
    fnt_free(s->slot);
    s->slot = a;
    s->mask = nNew-1;
  }
  for(h=edgeHash(caller, callee); s->slot[h&s->mask]; h++){
    fnt_calls_edge *e = &s->edge[s->slot[h&s->mask]-1];
    if( e->caller==caller && e->callee==callee ){
      e->calls += calls;
      e->total = (int64_t)((uint64_t)e->total + (uint64_t)total);
      e->self = (int64_t)((uint64_t)e->self + (uint64_t)self);
      return FNT_OK;
    }
  }
  if( s->nedge==s->capedge ){
    size_t nNew = s->capedge ? s->capedge*2 : 256;
    fnt_calls_edge *a = fnt_realloc(s->edge, nNew*sizeof(*a));
    if( a==0 ) return FNT_E_NOMEM;
    s->edge = a;
    s->capedge = nNew;
  }
  s->slot[h&s->mask] = s->nedge+1;
  s->edge[s->nedge].caller = caller;
  s->edge[s->nedge].callee = callee;
  s->edge[s->nedge].calls = calls;
  s->edge[s->nedge].total = total;
  s->edge[s->nedge].self = self;
  s->nedge++;
  return FNT_OK;
}

/* Adds calls given as records (functions of s->tab). */
static int sumsAddCalls(run_sums *s, const fnt_callvec *v){
  size_t i;
  if( sumsKeys(s) ) return FNT_E_NOMEM;
  for(i=0; i<v->n; i++){
    const fnt_callrec *c = &v->a[i];
    uint32_t k = s->tab.key[c->fn];
    uint64_t d = (uint64_t)c->end - (uint64_t)c->start;
    s->calls[k]++;
    s->self[k] += (uint64_t)c->self;
    if( c->outermost ) s->incl[k] += d;
    if( sumsEdge(s, c->parent_fn==UINT32_MAX ? 0 : s->tab.key[c->parent_fn]+1, k,
                 1, (int64_t)d, c->self) ) return FNT_E_NOMEM;
  }
  return FNT_OK;
}

/* Adds the footer aggregates of calls file `e`. */
static int sumsAddFile(fnt_store *st, run_sums *s, const fnt_entry *e){
  fnt_segment *seg = 0;
  uint32_t *ids = 0, i;
  int rc = fnt_segment_open(st, e->path, &seg);
  if( rc ) return rc;
  if( seg->table!=FNT_TABLE_CALLS ){
    rc = fnt_err(st, FNT_E_CORRUPT, "%s: not a calls segment", seg->full_path);
    goto done;
  }
  ids = fnt_malloc(((size_t)seg->nfuncs+1)*sizeof(uint32_t));
  if( ids==0 ) goto nomem;
  for(i=0; i<seg->nfuncs; i++){
    if( fnt_fntab_intern(&s->tab, seg->funcs[i].symbol, seg->funcs[i].stable_id, &ids[i]) ) goto nomem;
  }
  if( sumsKeys(s) ) goto nomem;
  for(i=0; i<seg->nfuncs; i++){
    uint32_t k = s->tab.key[ids[i]];
    s->calls[k] += (uint64_t)seg->aggs[i].calls;
    s->incl[k] += (uint64_t)seg->aggs[i].incl;
    s->self[k] += (uint64_t)seg->aggs[i].self;
  }
  for(i=0; i<seg->nedges; i++){
    const fnt_calls_edge *g = &seg->edges[i];
    uint32_t caller = g->caller ? s->tab.key[ids[g->caller-1]]+1 : 0;
    if( sumsEdge(s, caller, s->tab.key[ids[g->callee]], g->calls, g->total, g->self) ) goto nomem;
  }
  goto done;
nomem:
  rc = fnt_err(st, FNT_E_NOMEM, "out of memory");
done:
  fnt_free(ids);
  fnt_segment_release(st, seg);
  return rc;
}

/* Every call of `run_id` summed into s. */
static int runSums(fnt_snapshot *snap, const char *run_id, run_sums *s){
  fnt_store *st = snap->st;
  fnt_run_calls files;
  fnt_callvec v = {0};
  size_t i;
  int rc = fnt_run_calls_find(snap, run_id, &files);
  if( rc ) return fnt_err(st, rc, "out of memory");
  if( files.complete ){
    for(i=0; rc==FNT_OK && i<files.nfiles; i++) rc = sumsAddFile(st, s, files.files[i]);
    if( rc==FNT_OK && files.tail ) rc = fnt_calls_read_open(st, files.tail, &s->tab, &v);
  }else{
    fnt_replay *r = fnt_replay_new(&s->tab, &v);
    int64_t last;
    if( r==0 ) rc = FNT_E_NOMEM;
    if( rc==FNT_OK ) rc = fnt_replay_run_events(snap, run_id, 0, 0, 0, 0, r, &s->tab, &last, 0, 0);
    if( rc==FNT_OK ) rc = fnt_replay_open_calls(r, &v);
    fnt_replay_free(r);
  }
  if( rc==FNT_OK && sumsAddCalls(s, &v) ) rc = FNT_E_NOMEM;
  if( rc==FNT_E_NOMEM ) rc = fnt_err(st, rc, "run '%s': out of memory adding up its calls", run_id);
  fnt_callvec_free(&v);
  fnt_run_calls_clear(&files);
  return rc;
}

/* ------------------------------------------------------------------ heat */
struct fnt_heat {
  run_sums s;
  fnt_heat_row *rows;
  size_t n;
};

size_t fnt_heat_count(const fnt_heat *h){ return h ? h->n : 0; }
const fnt_heat_row *fnt_heat_rows(const fnt_heat *h){ return h ? h->rows : 0; }

void fnt_heat_free(fnt_heat *h){
  if( h==0 ) return;
  sumsClear(&h->s);
  fnt_free(h->rows);
  fnt_free(h);
}

int fnt_heat_compute(fnt_snapshot *snap, const char *run_id, fnt_heat **out){
  fnt_heat *h;
  const char **azSym = 0;      /* per key id: its symbol */
  uint32_t k;
  int rc;
  if( out ) *out = 0;
  if( snap==0 || out==0 ) return FNT_E_MISUSE;
  if( run_id==0 ) return fnt_err(snap->st, FNT_E_MISUSE, "fnt_heat_compute: run_id is NULL");
  fnt_err_clear(snap->st);
  h = fnt_calloc(1, sizeof(*h));
  if( h==0 ) return fnt_err(snap->st, FNT_E_NOMEM, "out of memory");
  rc = runSums(snap, run_id, &h->s);
  if( rc==FNT_OK ){
    h->rows = fnt_calloc((size_t)h->s.nkey+1, sizeof(fnt_heat_row));
    azSym = fnt_calloc((size_t)h->s.tab.nkey+1, sizeof(char*));
    if( h->rows==0 || azSym==0 ) rc = fnt_err(snap->st, FNT_E_NOMEM, "out of memory");
  }
  /* A key's symbol: that of its first function in the run's files. */
  for(k=0; rc==FNT_OK && k<h->s.tab.nfn; k++){
    uint32_t id = h->s.tab.key[k];
    if( azSym[id]==0 ) azSym[id] = h->s.tab.fn[k].symbol;
  }
  for(k=0; rc==FNT_OK && k<h->s.nkey; k++){
    fnt_heat_row *r;
    if( h->s.calls[k]==0 ) continue;
    r = &h->rows[h->n++];
    r->key = h->s.tab.keys[k];
    r->symbol = azSym[k] ? azSym[k] : "";
    r->inclusive_ns = (int64_t)h->s.incl[k];
    r->self_ns = (int64_t)h->s.self[k];
    r->calls = (int64_t)h->s.calls[k];
  }
  fnt_free(azSym);
  if( rc ){ fnt_heat_free(h); return rc; }
  *out = h;
  return FNT_OK;
}

/* ------------------------------------------------------------- call graph */
struct fnt_callgraph {
  run_sums s;
  fnt_edge_row *rows;
  size_t n;
};

size_t fnt_callgraph_count(const fnt_callgraph *g){ return g ? g->n : 0; }
const fnt_edge_row *fnt_callgraph_rows(const fnt_callgraph *g){ return g ? g->rows : 0; }

void fnt_callgraph_free(fnt_callgraph *g){
  if( g==0 ) return;
  sumsClear(&g->s);
  fnt_free(g->rows);
  fnt_free(g);
}

static int cmpEdgeRow(const void *a, const void *b){
  const fnt_edge_row *x = a, *y = b;
  int c;
  if( x->caller_key!=y->caller_key ){
    if( x->caller_key==0 ) return -1;
    if( y->caller_key==0 ) return 1;
    c = strcmp(x->caller_key, y->caller_key);
    if( c ) return c;
  }
  return strcmp(x->callee_key, y->callee_key);
}

int fnt_callgraph_compute(fnt_snapshot *snap, const char *run_id, fnt_callgraph **out){
  fnt_callgraph *g;
  size_t i;
  int rc;
  if( out ) *out = 0;
  if( snap==0 || out==0 ) return FNT_E_MISUSE;
  if( run_id==0 ) return fnt_err(snap->st, FNT_E_MISUSE, "fnt_callgraph_compute: run_id is NULL");
  fnt_err_clear(snap->st);
  g = fnt_calloc(1, sizeof(*g));
  if( g==0 ) return fnt_err(snap->st, FNT_E_NOMEM, "out of memory");
  rc = runSums(snap, run_id, &g->s);
  if( rc==FNT_OK ){
    g->rows = fnt_calloc(g->s.nedge+1, sizeof(fnt_edge_row));
    if( g->rows==0 ) rc = fnt_err(snap->st, FNT_E_NOMEM, "out of memory");
  }
  for(i=0; rc==FNT_OK && i<g->s.nedge; i++){
    const fnt_calls_edge *e = &g->s.edge[i];
    fnt_edge_row *r = &g->rows[g->n++];
    r->caller_key = e->caller ? g->s.tab.keys[e->caller-1] : 0;
    r->callee_key = g->s.tab.keys[e->callee];
    r->calls = e->calls;
    r->total_ns = e->total;
    r->self_ns = e->self;
  }
  if( rc ){ fnt_callgraph_free(g); return rc; }
  qsort(g->rows, g->n, sizeof(fnt_edge_row), cmpEdgeRow);
  *out = g;
  return FNT_OK;
}
