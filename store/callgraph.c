/*
** callgraph.c -- fnt_callgraph (SPEC §7): caller -> callee edges of a run,
** each call counted once under the key of its parent call.
**
** A call's parent ends at or after it, so it is among the rows of the calls
** file the call ended in: an ended call there, or a frame still open at
** the file's end (FORMAT.md, "Stacks").  So the graph is added up a file
** at a time, each file's rows joined with themselves and dropped: memory
** is one file's rows plus the edges, whatever the run's length.  A run
** whose calls are not stored (format 1), or a file where a parent is not
** found (never written so, but not assumed), is joined whole instead:
** every call of the run in memory at once, a call whose parent is nowhere
** counted under no caller.
*/
#include <stdlib.h>
#include <string.h>

#include "calls.h"
#include "segment.h"

/* ------------------------------------------------------------------ edges */
typedef struct edge_acc {
  uint32_t caller;             /* key id + 1; 0 at depth 0 */
  uint32_t callee;
  int64_t calls, total, self;
} edge_acc;

/* Edges by (caller, callee): open addressing, at most half full. */
typedef struct edge_set {
  edge_acc *a;
  size_t n;
  uint64_t *slot;              /* index + 1; 0 = empty */
  size_t mask;
} edge_set;

static uint64_t mix64(uint64_t x){
  x ^= x>>33; x *= 0xff51afd7ed558ccdull; x ^= x>>33;
  return x;
}

static void edgesClear(edge_set *e){
  fnt_free(e->a);
  fnt_free(e->slot);
  memset(e, 0, sizeof(*e));
}

/* Adds one call of `callee` under `caller`.  @return FNT_OK or NOMEM. */
static int edgeAdd(edge_set *e, uint32_t caller, uint32_t callee,
                   int64_t dur, int64_t self){
  uint64_t h;
  edge_acc *x;
  if( 2*(e->n+1) > e->mask ){
    size_t nNew = e->mask ? 2*(e->mask+1) : 1024, i;
    uint64_t *slot = fnt_calloc(nNew, sizeof(uint64_t));
    edge_acc *a = fnt_realloc(e->a, (nNew/2+1)*sizeof(edge_acc));
    if( a ) e->a = a;
    if( slot==0 || a==0 ){ fnt_free(slot); return FNT_E_NOMEM; }
    for(i=0; i<e->n; i++){
      for(h=mix64((uint64_t)e->a[i].caller<<32 | e->a[i].callee); slot[h & (nNew-1)]; h++){}
      slot[h & (nNew-1)] = i+1;
    }
    fnt_free(e->slot);
    e->slot = slot;
    e->mask = nNew-1;
  }
  for(h=mix64((uint64_t)caller<<32 | callee); e->slot[h & e->mask]; h++){
    x = &e->a[e->slot[h & e->mask]-1];
    if( x->caller==caller && x->callee==callee ) goto found;
  }
  x = &e->a[e->n];
  memset(x, 0, sizeof(*x));
  x->caller = caller;
  x->callee = callee;
  e->slot[h & e->mask] = ++e->n;
found:
  x->calls++;
  x->total = (int64_t)((uint64_t)x->total + (uint64_t)dur);
  x->self = (int64_t)((uint64_t)x->self + (uint64_t)self);
  return FNT_OK;
}

/* ------------------------------------------------------------------- join */
typedef struct call_row {
  int64_t id, parent, dur, self;
  uint32_t key;
  uint8_t call;                /* 0: an open frame that is not a call */
} call_row;

typedef struct call_rows {
  fnt_fntab *tab;
  call_row *a;
  size_t n, cap;
  uint64_t *byId;              /* row index + 1, by call_id */
  size_t mask;
} call_rows;

static int rowPush(call_rows *r, int64_t id, int64_t parent, int64_t dur,
                   int64_t self, uint32_t fn, int call){
  call_row *x;
  if( r->n==r->cap ){
    size_t nNew = r->cap ? r->cap*2 : 1024;
    call_row *a = fnt_realloc(r->a, nNew*sizeof(call_row));
    if( a==0 ) return FNT_E_NOMEM;
    r->a = a;
    r->cap = nNew;
  }
  x = &r->a[r->n++];
  x->id = id;
  x->parent = parent;
  x->dur = dur;
  x->self = self;
  x->key = r->tab->key[fn];
  x->call = (uint8_t)call;
  return FNT_OK;
}

/* Adds the edges of r's calls, each parent looked up among r's rows.
** When a parent is not there, *missing is set and the call is not added;
** with missing NULL, it is added under no caller. */
static int joinRows(call_rows *r, edge_set *e, int *missing){
  size_t i, mask;
  uint64_t h;
  for(mask=1; mask<2*r->n+2; mask<<=1){}
  if( mask>r->mask+1 ){
    fnt_free(r->byId);
    r->byId = fnt_malloc(mask*sizeof(uint64_t));
    if( r->byId==0 ){ r->mask = 0; return FNT_E_NOMEM; }
    r->mask = mask-1;
  }
  mask = r->mask;
  memset(r->byId, 0, (mask+1)*sizeof(uint64_t));
  for(i=0; i<r->n; i++){
    for(h=mix64((uint64_t)r->a[i].id); r->byId[h & mask]; h++){}
    r->byId[h & mask] = i+1;
  }
  for(i=0; i<r->n; i++){
    const call_row *c = &r->a[i];
    uint32_t caller = 0;
    if( !c->call ) continue;
    if( c->parent>=0 ){
      for(h=mix64((uint64_t)c->parent); r->byId[h & mask]; h++){
        const call_row *q = &r->a[r->byId[h & mask]-1];
        if( q->id==c->parent ){ caller = q->key+1; break; }
      }
      if( caller==0 && missing ){ *missing = 1; continue; }
    }
    if( edgeAdd(e, caller, c->key, c->dur, c->self) ) return FNT_E_NOMEM;
  }
  return FNT_OK;
}

/* A stored run, a calls file at a time (fnt_run_calls_visit). */
typedef struct file_ctx {
  call_rows rows;
  edge_set *edges;
  int missing;
} file_ctx;

static int fileRows(void *ctx, const fnt_segment *seg, const fnt_calls_rows *g,
                    int64_t threadIx, uint32_t *fnids, int calls){
  file_ctx *x = ctx;
  size_t i;
  (void)threadIx;
  for(i=0; i<g->n; i++){
    uint32_t fn;
    if( fnt_calls_fnid(x->rows.tab, seg, fnids, (uint32_t)g->fn[i], &fn)
     || rowPush(&x->rows, (int64_t)g->cid[i], (int64_t)g->par[i],
                (int64_t)g->dur[i], (int64_t)g->slf[i], fn, calls) ){
      return FNT_E_NOMEM;
    }
  }
  return FNT_OK;
}

static int fileEnd(void *ctx){
  file_ctx *x = ctx;
  int rc = joinRows(&x->rows, x->edges, &x->missing);
  x->rows.n = 0;
  return rc;
}

/* Every call of a run at once (fnt_run_calls_each). */
static int wholeRow(void *ctx, const fnt_callrec *c){
  return rowPush(ctx, c->call_id, c->parent_id, c->end - c->start, c->self,
                 c->fn, 1);
}

/* The edges of run_id into e, file by file when the files allow it. */
static int addEdges(fnt_snapshot *snap, const char *run_id, fnt_fntab *tab,
                    edge_set *e){
  fnt_store *st = snap->st;
  const unsigned cols = FNT_CR_CALL_ID | FNT_CR_PARENT | FNT_CR_DUR
                      | FNT_CR_SELF | FNT_CR_FN;
  fnt_run_calls files;
  file_ctx x;
  int rc = fnt_run_calls_find(snap, run_id, &files);
  if( rc ) return rc;
  memset(&x, 0, sizeof(x));
  x.rows.tab = tab;
  x.edges = e;
  if( files.complete ){
    fnt_calls_visit v;
    memset(&v, 0, sizeof(v));
    v.cols = cols;
    v.t0 = INT64_MIN;
    v.t1 = INT64_MAX;
    v.thread = -1;
    v.open_rows = 1;
    v.rows = fileRows;
    v.file_end = fileEnd;
    v.ctx = &x;
    rc = fnt_run_calls_visit(st, &files, &v);
  }
  if( rc==FNT_OK && (!files.complete || x.missing) ){
    /* Start again, with every call of the run in memory. */
    edgesClear(e);
    x.rows.n = 0;
    rc = fnt_run_calls_each(snap, run_id, cols, tab, wholeRow, &x.rows);
    if( rc==FNT_OK ) rc = joinRows(&x.rows, e, 0);
  }
  fnt_run_calls_clear(&files);
  fnt_free(x.rows.a);
  fnt_free(x.rows.byId);
  return rc;
}

/* ------------------------------------------------------------ the result */
struct fnt_callgraph {
  fnt_fntab tab;
  fnt_edge_row *rows;
  size_t n;
};

size_t fnt_callgraph_count(const fnt_callgraph *g){ return g ? g->n : 0; }
const fnt_edge_row *fnt_callgraph_rows(const fnt_callgraph *g){ return g ? g->rows : 0; }

void fnt_callgraph_free(fnt_callgraph *g){
  if( g==0 ) return;
  fnt_fntab_clear(&g->tab);
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
  fnt_store *st;
  fnt_callgraph *g;
  edge_set e;
  size_t i;
  int rc;

  if( out ) *out = 0;
  if( snap==0 || out==0 ) return FNT_E_MISUSE;
  st = snap->st;
  if( run_id==0 ) return fnt_err(st, FNT_E_MISUSE, "fnt_callgraph_compute: run_id is NULL");
  g = fnt_calloc(1, sizeof(*g));
  if( g==0 ) return fnt_err(st, FNT_E_NOMEM, "out of memory");
  fnt_err_clear(st);
  memset(&e, 0, sizeof(e));
  rc = addEdges(snap, run_id, &g->tab, &e);
  if( rc==FNT_OK ){
    g->rows = fnt_calloc(e.n+1, sizeof(fnt_edge_row));
    if( g->rows==0 ) rc = FNT_E_NOMEM;
  }
  for(i=0; rc==FNT_OK && i<e.n; i++){
    fnt_edge_row *r = &g->rows[g->n++];
    r->caller_key = e.a[i].caller ? g->tab.keys[e.a[i].caller-1] : 0;
    r->callee_key = g->tab.keys[e.a[i].callee];
    r->calls = e.a[i].calls;
    r->total_ns = e.a[i].total;
    r->self_ns = e.a[i].self;
  }
  edgesClear(&e);
  if( rc==FNT_OK && g->n>1 ) qsort(g->rows, g->n, sizeof(fnt_edge_row), cmpEdgeRow);
  if( rc==FNT_E_NOMEM ){
    rc = fnt_err(st, rc, "run '%s': out of memory building its call graph", run_id);
  }
  if( rc ){ fnt_callgraph_free(g); return rc; }
  *out = g;
  return FNT_OK;
}
