/*
** flame.c -- fnt_flame (SPEC §8): a run's calls folded into stacks of
** symbols, with self time and calls per distinct stack, for the whole run or
** clipped to a window [t0, t1).
**
** A call's stack is its parent's stack plus its own symbol.  The calls that
** overlap the window (start <= t1, end >= t0) hold every ancestor of a call
** in the range (a parent spans its children), so they are read once and,
** depth by depth, each call's stack node is found from its parent's (by
** identity, through a hash of the calls read).  Windowed self time needs no per-call bookkeeping: the
** clipped durations of a node's children are exactly what the clipped
** durations of its calls lose, so self = clipped(node) - clipped(children).
** Memory is one small record per call read: narrow windows stay small.
**
** The whole run's flame does not read the calls: each calls file keeps its
** ended calls' count and self time per stack (stacks.c), which add up by
** stack text, plus the tail's open frames.  A run with a file lacking that
** section (written before it existed) is folded from its calls.
*/
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "calls.h"
#include "segment.h"

/* Runs of at most this many calls files are read through the segment
** cache (64 files, 16 MiB: a calls footer and table are 0.3-2 MB parsed). */
#define FLAME_CACHED_FILES 16

/* The working arrays a flame sizes by its calls or its stack nodes. */
enum {
  TMP_NODE_OF, TMP_BY_DEPTH, TMP_CALL_SLOT,          /* foldCalls */
  TMP_LEN, TMP_AT, TMP_START, TMP_POS, TMP_KIDS, TMP_ORDER,   /* makeRows */
  FLAME_NTMP
};

/* One call as the flame needs it. */
typedef struct flame_call {
  int64_t call_id, parent_id;
  int64_t start, end, self;
  uint32_t sym;           /* symbol id */
  uint32_t thread, depth;
} flame_call;


struct fnt_flame {
  fnt_flame_row *rows;    /* every row (a streamed flame's: once asked for) */
  size_t n;
  char *text;             /* the stacks' bytes, rows point into it */
  /* A streamed flame (flameStream) makes one row at a time from its
  ** stack nodes, in their order, into `path`. */
  fnt_stacktab nodes;
  char **sym;             /* the symbols, by id */
  size_t *sym_len;
  uint32_t nsym;
  uint32_t *order;        /* row i: node order[i] */
  uint32_t *depth;        /* per node */
  uint32_t *path_node;    /* per depth: the nodes of the stack in `path` */
  size_t *path_len;       /* per depth: its text's length up to that node */
  uint32_t path_depth;    /* the depth of that stack + 1; 0: none */
  uint32_t *chain;        /* a row's nodes not on the path, leaf first */
  char *path;
  size_t text_bytes;      /* the rows' texts with their NULs */
  fnt_flame_row row;
};

/* The arrays a flame grows with the calls it reads and their stack nodes:
** what the handle keeps for its next flame (fnt_store.flame_keep). */
typedef struct fnt_flame_keep {
  /* stack nodes (parent + 1, symbol id): self is the summed self_ns, or in
  ** a window the clipped self */
  fnt_stacktab nodes;
  flame_call *call;             /* the calls read, capcall of them */
  size_t capcall;
  void *tmp[FLAME_NTMP];        /* working arrays (buildTmp) */
  size_t captmp[FLAME_NTMP];    /* bytes */
} flame_arrays;

typedef struct flame_build {
  fnt_store *st;
  /* symbols, interned */
  char **sym;
  uint32_t nsym, capsym;
  uint32_t *symslot, symmask;
  flame_arrays a;
  size_t ncall;                 /* calls in a.call */
  size_t limit;           /* bytes the build may hold (fnt_flame_compute_within) */
} flame_build;

/* A flame's arrays are kept by the handle for its next flame: a viewer
** asks for one window after another, and each array freed went back to
** the kernel, to cost a page fault a page the next time (12 us where this
** was measured: ten 100k-call windows of the 10M flat bench run took 85 ms
** each, half of it in 4,300 faults).  At most FLAME_KEEP bytes, and none
** that a bounded build could not hold; fnt_close frees them. */
#define FLAME_KEEP ((size_t)32 << 20)

/* The calls, nodes and slots held: what grows with the calls read. */
static size_t heldBytes(const flame_arrays *a){
  return a->capcall*sizeof(flame_call)
       + (size_t)a->nodes.cap*sizeof(fnt_calls_stack)
       + (a->nodes.slot ? ((size_t)a->nodes.mask+1)*sizeof(uint32_t) : 0);
}

static size_t arraysBytes(const flame_arrays *a){
  size_t bytes = heldBytes(a);
  int i;
  for(i=0; i<FLAME_NTMP; i++) bytes += a->captmp[i];
  return bytes;
}

static void arraysFree(flame_arrays *a){
  int i;
  fnt_free(a->call);
  fnt_stacktab_clear(&a->nodes);
  for(i=0; i<FLAME_NTMP; i++) fnt_free(a->tmp[i]);
  memset(a, 0, sizeof(*a));
}

void fnt_flame_keep_free(fnt_store *st){
  if( st->flame_keep==0 ) return;
  arraysFree(st->flame_keep);
  fnt_free(st->flame_keep);
  st->flame_keep = 0;
}

/* Starts build b with the arrays the handle kept, emptied (freed if they
** are more than b may hold). */
static void buildTake(flame_build *b){
  flame_arrays *k = b->st->flame_keep;
  if( k==0 ) return;
  b->a = *k;
  memset(k, 0, sizeof(*k));
  if( arraysBytes(&b->a)>b->limit ){
    arraysFree(&b->a);
    return;
  }
  b->a.nodes.n = 0;
  if( b->a.nodes.slot ) memset(b->a.nodes.slot, 0, ((size_t)b->a.nodes.mask+1)*sizeof(uint32_t));
}

/* Ends build b: its arrays go to the handle when they fit FLAME_KEEP (and
** a place for them can be had), else they are freed. */
static void buildKeep(flame_build *b){
  flame_arrays *k = b->st->flame_keep;
  if( arraysBytes(&b->a)>FLAME_KEEP ){
    arraysFree(&b->a);
    return;
  }
  if( k==0 ) k = b->st->flame_keep = fnt_calloc(1, sizeof(*k));
  if( k==0 ){
    arraysFree(&b->a);
    return;
  }
  *k = b->a;
  memset(&b->a, 0, sizeof(b->a));
}

/* Working array `which` (TMP_...) of n items of `size` bytes, its
** contents left over; owned by the build.  NULL: out of memory. */
static void *buildTmp(flame_build *b, int which, size_t n, size_t size){
  size_t bytes;
  if( n==0 ) n = 1;
  if( n > SIZE_MAX/size ) return 0;
  bytes = n*size;
  if( b->a.captmp[which]<bytes ){
    fnt_free(b->a.tmp[which]);
    b->a.tmp[which] = fnt_malloc(bytes);
    b->a.captmp[which] = b->a.tmp[which] ? bytes : 0;
  }
  return b->a.tmp[which];
}

size_t fnt_flame_count(const fnt_flame *f){ return f ? f->n : 0; }

/* Row i of a streamed flame, its text made in f->path: from the deepest
** of its nodes on the stack made last (rows come depth first, so most
** share all but their last symbol with the row before). */
static const fnt_flame_row *streamRow(fnt_flame *f, size_t i){
  const fnt_calls_stack *node = f->nodes.node;
  uint32_t k = f->order[i], j = k+1, m = 0;
  int64_t d = (int64_t)f->depth[k];
  size_t len;
  while( j && !(d<(int64_t)f->path_depth && f->path_node[d]==j-1) ){
    f->chain[m++] = j-1;
    j = node[j-1].parent;
    d--;
  }
  len = d>=0 ? f->path_len[d] : 0;
  while( m-- ){
    uint32_t c = f->chain[m];
    size_t n = f->sym_len[node[c].fn];
    if( len ) f->path[len++] = ';';
    memcpy(f->path + len, f->sym[node[c].fn], n);
    len += n;
    d++;
    f->path_node[d] = c;
    f->path_len[d] = len;
  }
  f->path[len] = 0;
  f->path_depth = f->depth[k] + 1;
  f->row.stack = f->path;
  f->row.self_ns = node[k].self;
  f->row.calls = node[k].calls;
  return &f->row;
}

const fnt_flame_row *fnt_flame_row_at(fnt_flame *f, size_t i){
  if( f==0 || i>=f->n ) return 0;
  return f->rows ? &f->rows[i] : streamRow(f, i);
}

const fnt_flame_row *fnt_flame_rows(const fnt_flame *cf){
  fnt_flame *f = (fnt_flame*)cf;     /* a streamed flame's rows made once */
  size_t i, off = 0;
  if( f==0 || f->rows || f->n==0 ) return f ? f->rows : 0;
  f->rows = fnt_malloc(f->n*sizeof(fnt_flame_row));
  f->text = fnt_malloc(f->text_bytes);
  if( f->rows==0 || f->text==0 ){
    fnt_free(f->rows); fnt_free(f->text);
    f->rows = 0; f->text = 0;
    return 0;
  }
  for(i=0; i<f->n; i++){
    const fnt_flame_row *r = streamRow(f, i);
    size_t n = strlen(r->stack) + 1;
    memcpy(f->text + off, r->stack, n);
    f->rows[i] = *r;
    f->rows[i].stack = f->text + off;
    off += n;
  }
  return f->rows;
}

/* Frees interned symbols sym[0..n) and their array. */
static void symsFree(char **sym, uint32_t n){
  uint32_t i;
  for(i=0; i<n; i++) fnt_free(sym[i]);
  fnt_free(sym);
}

void fnt_flame_free(fnt_flame *f){
  if( f==0 ) return;
  fnt_free(f->rows);
  fnt_free(f->text);
  fnt_stacktab_clear(&f->nodes);
  symsFree(f->sym, f->nsym);
  fnt_free(f->sym_len);
  fnt_free(f->order);
  fnt_free(f->depth);
  fnt_free(f->path_node);
  fnt_free(f->path_len);
  fnt_free(f->chain);
  fnt_free(f->path);
  fnt_free(f);
}

static uint64_t hashStr(const char *z){
  uint64_t h = 1469598103934665603ull;
  for(; *z; z++) h = (h ^ (unsigned char)*z) * 1099511628211ull;
  return h;
}

/* Grows an open-addressing table of ids (+1, 0 empty) to twice `n` slots
** when it is half full, rehashing with `rehash`.  @return 0 or NOMEM. */
static int growSlots(uint32_t **slot, uint32_t *mask, uint32_t n,
                     uint64_t (*rehash)(const flame_build*, uint32_t),
                     const flame_build *b){
  uint32_t nSlot = *slot ? *mask+1 : 0, i, m;
  uint32_t *a;
  if( (uint64_t)(n+1)*2 <= nSlot ) return 0;
  nSlot = nSlot ? nSlot*2 : 1024;
  a = fnt_calloc(nSlot, sizeof(uint32_t));
  if( a==0 ) return FNT_E_NOMEM;
  m = nSlot-1;
  for(i=0; i<n; i++){
    uint32_t h = (uint32_t)rehash(b, i) & m;
    while( a[h] ) h = (h+1) & m;
    a[h] = i+1;
  }
  fnt_free(*slot);
  *slot = a;
  *mask = m;
  return 0;
}

static uint64_t symHash(const flame_build *b, uint32_t i){ return hashStr(b->sym[i]); }

static int internSym(flame_build *b, const char *z, uint32_t *id){
  uint32_t h;
  if( growSlots(&b->symslot, &b->symmask, b->nsym, symHash, b) ) return FNT_E_NOMEM;
  for(h = (uint32_t)hashStr(z) & b->symmask; b->symslot[h]; h = (h+1) & b->symmask){
    if( strcmp(b->sym[b->symslot[h]-1], z)==0 ){ *id = b->symslot[h]-1; return FNT_OK; }
  }
  if( b->nsym==b->capsym ){
    uint32_t nNew = b->capsym ? b->capsym*2 : 256;
    char **a = fnt_realloc(b->sym, (size_t)nNew*sizeof(char*));
    if( a==0 ) return FNT_E_NOMEM;
    b->sym = a;
    b->capsym = nNew;
  }
  b->sym[b->nsym] = fnt_strdup(z);
  if( b->sym[b->nsym]==0 ) return FNT_E_NOMEM;
  b->symslot[h] = ++b->nsym;
  *id = b->nsym-1;
  return FNT_OK;
}

/* The node (parent node or UINT32_MAX at depth 0, symbol). */
static int internNode(flame_build *b, uint32_t parent, uint32_t sym, uint32_t *id){
  return fnt_stacktab_intern(&b->a.nodes, parent==UINT32_MAX ? 0 : parent+1, sym, id);
}

/* A call's identity: (call_id, depth, thread), which also tells apart the
** calls of a run whose events repeat a seq_no (a warehouse of format 1 can
** hold such runs). */
static uint64_t callHash(int64_t id, uint32_t depth, uint32_t thread){
  uint64_t h = (uint64_t)id*0x9E3779B97F4A7C15ull ^ ((uint64_t)depth<<32 | thread);
  h *= 0xC2B2AE3D27D4EB4Full;
  return h ^ h>>29;
}

/* Indexes the calls by identity (open addressing, index + 1, 0 empty; the
** first of equal identities wins).  @return the slots (mask in *mask), or
** NULL out of memory. */
static uint32_t *indexCalls(flame_build *b, uint32_t *mask){
  size_t nSlot = 1024, i;
  uint32_t *slot;
  while( nSlot < 2*b->ncall ) nSlot *= 2;
  slot = buildTmp(b, TMP_CALL_SLOT, nSlot, sizeof(uint32_t));
  if( slot==0 ) return 0;
  memset(slot, 0, nSlot*sizeof(uint32_t));
  *mask = (uint32_t)(nSlot-1);
  for(i=0; i<b->ncall; i++){
    const flame_call *c = &b->a.call[i];
    uint32_t h = (uint32_t)callHash(c->call_id, c->depth, c->thread) & *mask;
    for(; slot[h]; h = (h+1) & *mask){
      const flame_call *x = &b->a.call[slot[h]-1];
      if( x->call_id==c->call_id && x->depth==c->depth && x->thread==c->thread ) break;
    }
    if( slot[h]==0 ) slot[h] = (uint32_t)i+1;
  }
  return slot;
}

/* The index of the parent of call c, or -1. */
static int64_t findParent(const flame_build *b, const uint32_t *slot,
                          uint32_t mask, const flame_call *c){
  uint32_t h = (uint32_t)callHash(c->parent_id, c->depth-1, c->thread) & mask;
  for(; slot[h]; h = (h+1) & mask){
    const flame_call *x = &b->a.call[slot[h]-1];
    if( x->call_id==c->parent_id && x->depth==c->depth-1 && x->thread==c->thread ){
      return (int64_t)slot[h]-1;
    }
  }
  return -1;
}

/* The calls' indexes by depth (stable): a parent before its children.
** @return them, or NULL out of memory. */
static uint32_t *orderByDepth(flame_build *b){
  uint32_t maxDepth = 0, *cnt, *out;
  size_t i;
  for(i=0; i<b->ncall; i++) if( b->a.call[i].depth>maxDepth ) maxDepth = b->a.call[i].depth;
  cnt = fnt_calloc((size_t)maxDepth+2, sizeof(uint32_t));
  out = buildTmp(b, TMP_BY_DEPTH, b->ncall, sizeof(uint32_t));
  if( cnt==0 || out==0 ){ fnt_free(cnt); return 0; }
  for(i=0; i<b->ncall; i++) cnt[b->a.call[i].depth+1]++;
  for(i=1; i<=(size_t)maxDepth; i++) cnt[i] += cnt[i-1];
  for(i=0; i<b->ncall; i++) out[cnt[b->a.call[i].depth]++] = (uint32_t)i;
  fnt_free(cnt);
  return out;
}

/* FNT_E_LIMIT when what the build holds, and `more` bytes it is about to
** take, pass its limit; else FNT_OK. */
static int within(const flame_build *b, size_t more){
  size_t used = heldBytes(&b->a)
              + (size_t)b->capsym*(sizeof(char*) + 2*sizeof(uint32_t));
  return used + more > b->limit ? FNT_E_LIMIT : FNT_OK;
}

/* Room for one more call.  @return FNT_OK or FNT_E_NOMEM. */
static int growCalls(flame_build *b){
  if( b->ncall==b->a.capcall ){
    size_t nNew = b->a.capcall ? b->a.capcall*2 : 4096;
    flame_call *a = fnt_realloc(b->a.call, nNew*sizeof(*a));
    if( a==0 ) return FNT_E_NOMEM;
    b->a.call = a;
    b->a.capcall = nNew;
  }
  return FNT_OK;
}

/* The calls of one block, each function's symbol interned once per
** function table (symOf: symbol id + 1 per function, 0 not yet). */
static int addBlock(flame_build *b, const fnt_call_block *k, uint32_t *symOf){
  size_t i;
  int rc;
  for(i=0; i<k->n; i++){
    flame_call *x;
    int64_t fn = k->fn[i];
    if( symOf[fn]==0 ){
      uint32_t id;
      rc = internSym(b, k->fn_symbol[fn] ? k->fn_symbol[fn] : "", &id);
      if( rc ) return rc;
      symOf[fn] = id+1;
    }
    if( (rc = growCalls(b))!=FNT_OK ) return rc;
    x = &b->a.call[b->ncall++];
    x->call_id = k->call_id[i];
    x->parent_id = k->parent_id[i];
    x->start = k->start_ns[i];
    x->end = (int64_t)((uint64_t)k->start_ns[i] + (uint64_t)k->dur_ns[i]);
    x->self = k->self_ns[i];
    x->thread = (uint32_t)k->thread[i];
    x->depth = (uint32_t)k->depth[i];
    x->sym = symOf[fn]-1;
  }
  return FNT_OK;
}

/* Reads the calls of the run that overlap the window (all of them without
** one). */
static int readCalls(flame_build *b, fnt_snapshot *snap, const char *run_id,
                     const fnt_flame_window *w){
  fnt_call_predicate p;
  fnt_calls *sc = 0;
  fnt_call_block k;
  uint32_t *symOf = 0;
  uint64_t version = 0;
  int rc;
  fnt_call_predicate_init(&p);
  p.run_ids = &run_id;
  p.n_run_ids = 1;
  if( w ){
    p.t0 = w->t0;
    p.t1 = w->t1;
    if( w->thread>=0 ) p.thread = w->thread;
  }
  rc = fnt_calls_open(snap, &p, &sc);
  while( rc==FNT_OK && (rc = fnt_calls_next_block(sc, &k))==1 ){
    if( symOf==0 || version!=k.fn_version ){
      fnt_free(symOf);
      symOf = fnt_calloc(k.n_fn+1, sizeof(uint32_t));
      if( symOf==0 ){ rc = FNT_E_NOMEM; break; }
      version = k.fn_version;
    }
    rc = addBlock(b, &k, symOf);
    /* folding takes four words a call (its node, its place in the order,
    ** two slots of the identity table) and a stack node a call at most */
    if( rc==FNT_OK ){
      rc = within(b, b->ncall*(4*sizeof(uint32_t) + sizeof(fnt_calls_stack)));
    }
  }
  fnt_free(symOf);
  fnt_calls_close(sc);
  return rc<0 ? rc : FNT_OK;
}

/* Adds every call in the range to its stack node, depth by depth so that a
** parent's node is known before its children's. */
static int foldCalls(flame_build *b, const fnt_flame_window *w){
  uint32_t *nodeOf = buildTmp(b, TMP_NODE_OF, b->ncall, sizeof(uint32_t));
  uint32_t *order = orderByDepth(b);
  uint32_t mask = 0, *slot = indexCalls(b, &mask);
  size_t n;
  if( nodeOf==0 || order==0 || slot==0 ) return FNT_E_NOMEM;
  for(n=0; n<b->ncall; n++){
    uint32_t i = order[n];
    const flame_call *c = &b->a.call[i];
    uint32_t parent = UINT32_MAX, id;
    if( c->parent_id>=0 && c->depth>0 ){
      int64_t j = findParent(b, slot, mask, c);
      /* The overlap read holds every ancestor; a missing one would be a
      ** store inconsistency: fold the call at depth 0 rather than fail. */
      if( j>=0 ) parent = nodeOf[j];
    }
    if( internNode(b, parent, c->sym, &id) ) return FNT_E_NOMEM;
    nodeOf[i] = id;
    if( w ){
      int64_t s, e;
      if( !(c->start < w->t1 && (c->end > w->t0 || c->start >= w->t0)) ) continue;
      s = c->start > w->t0 ? c->start : w->t0;
      e = c->end < w->t1 ? c->end : w->t1;
      if( parent!=UINT32_MAX ) b->a.nodes.node[parent].self -= e - s;
      b->a.nodes.node[id].self += e - s;
    }else{
      b->a.nodes.node[id].self += c->self;
    }
    b->a.nodes.node[id].calls++;
  }
  return FNT_OK;
}

static void buildClear(flame_build *b){
  symsFree(b->sym, b->nsym);
  fnt_free(b->symslot);
  buildKeep(b);
}

/* Symbol ids by function index of the function table last read, which
** the next file most often shares (its func_hash): interned once. */
typedef struct sym_map {
  uint32_t *id;           /* UINT32_MAX: not interned yet */
  uint32_t n;
  uint64_t hash[2];
} sym_map;

/* Points `m` at seg's function table, kept when it is the same one. */
static int symMapFor(sym_map *m, const fnt_segment *seg){
  uint32_t i;
  if( m->id && m->n==seg->nfuncs && memcmp(m->hash, seg->func_hash, sizeof(m->hash))==0 ){
    return FNT_OK;
  }
  fnt_free(m->id);
  m->id = fnt_malloc(((size_t)seg->nfuncs+1)*sizeof(uint32_t));
  if( m->id==0 ) return FNT_E_NOMEM;
  for(i=0; i<seg->nfuncs; i++) m->id[i] = UINT32_MAX;
  m->n = seg->nfuncs;
  memcpy(m->hash, seg->func_hash, sizeof(m->hash));
  return FNT_OK;
}

/* Adds the stacks section of a calls file (seg->has_stacks), its function
** table loaded and `m` pointed at it. */
static int addFileStacks(flame_build *b, const fnt_segment *seg, sym_map *m){
  fnt_calls_stack *v = 0;
  uint32_t *nodeOf, i, n = 0;
  int rc = fnt_calls_stacks_read(b->st, seg, &v, &n);
  if( rc ) return rc;
  nodeOf = fnt_malloc(((size_t)n+1)*sizeof(uint32_t));
  if( nodeOf==0 ){ fnt_free(v); return FNT_E_NOMEM; }
  for(i=0; i<n; i++){
    const fnt_calls_stack *x = &v[i];
    uint32_t *sym = &m->id[x->fn], id;
    if( (*sym==UINT32_MAX && internSym(b, seg->funcs[x->fn].symbol, sym))
     || internNode(b, x->parent ? nodeOf[x->parent-1] : UINT32_MAX, *sym, &id) ){
      rc = FNT_E_NOMEM;
      break;
    }
    nodeOf[i] = id;
    b->a.nodes.node[id].self += x->self;
    b->a.nodes.node[id].calls += x->calls;
  }
  fnt_free(nodeOf);
  fnt_free(v);
  return rc;
}

/* The whole run from the files' stacks sections and the tail's open rows;
** *ok 0 when a file has none (the build is left empty then).  Each file is
** opened once.  A run of more than FLAME_CACHED_FILES files is opened
** lazily, without row groups and outside the segment cache, which its
** files would only empty (for its own next file and every other reader of
** the handle); a run of a few stays there for the next query. */
static int foldStored(flame_build *b, fnt_snapshot *snap, const char *run_id,
                      int *ok){
  fnt_run_calls files;
  fnt_fntab tab;
  fnt_callvec v = {0};
  sym_map m;
  size_t i;
  int rc = fnt_run_calls_find(snap, run_id, &files);
  *ok = 0;
  if( rc ) return rc;
  memset(&tab, 0, sizeof(tab));
  memset(&m, 0, sizeof(m));
  *ok = files.complete && files.nfiles>0;
  for(i=0; rc==FNT_OK && *ok && i<files.nfiles; i++){
    fnt_segment *seg = 0;
    rc = files.nfiles > FLAME_CACHED_FILES
       ? fnt_segment_open_lazy(b->st, files.files[i]->path, &seg, 0)
       : fnt_segment_open(b->st, files.files[i]->path, &seg);
    if( rc ) break;
    *ok = seg->has_stacks;
    if( *ok && !seg->funcs_loaded ) rc = fnt_segment_load_funcs(b->st, seg);
    if( rc==FNT_OK && *ok ) rc = symMapFor(&m, seg);
    if( rc==FNT_OK && *ok ) rc = addFileStacks(b, seg, &m);
    if( rc==FNT_OK && *ok ) rc = within(b, 0);
    fnt_segment_release(b->st, seg);
  }
  fnt_free(m.id);
  if( rc==FNT_OK && !*ok ){
    fnt_store *st = b->st;
    size_t limit = b->limit;
    buildClear(b);
    memset(b, 0, sizeof(*b));
    b->st = st;
    b->limit = limit;
    buildTake(b);
  }
  if( rc==FNT_OK && *ok ) rc = fnt_calls_read_open(b->st, files.tail, &tab, &v);
  for(i=0; rc==FNT_OK && *ok && i<v.n; i++){
    /* The open frames as calls, folded like any others. */
    rc = growCalls(b);
    if( rc==FNT_OK ){
      flame_call *x = &b->a.call[b->ncall++];
      x->call_id = v.a[i].call_id;
      x->parent_id = v.a[i].parent_id;
      x->start = v.a[i].start;
      x->end = v.a[i].end;
      x->self = v.a[i].self;
      x->thread = v.a[i].thread;
      x->depth = v.a[i].depth;
      rc = internSym(b, tab.fn[v.a[i].fn].symbol, &x->sym);
    }
  }
  fnt_callvec_free(&v);
  fnt_fntab_clear(&tab);
  fnt_run_calls_clear(&files);
  return rc;
}

/* Stacks' texts can be tens of MB (a deep stack per call): ask for huge
** pages where the system has them, which spares most page faults. */
static void bigBuffer(void *p, size_t n){
#if defined(MADV_HUGEPAGE)
  const uintptr_t huge = (uintptr_t)2 << 20;
  uintptr_t a = ((uintptr_t)p + huge-1) & ~(huge-1), e = ((uintptr_t)p + n) & ~(huge-1);
  if( p && e>a ) (void)madvise((void*)a, e-a, MADV_HUGEPAGE);
#else
  (void)p; (void)n;
#endif
}

static int cmpRowStack(const void *a, const void *b){
  return strcmp(((const fnt_flame_row*)a)->stack, ((const fnt_flame_row*)b)->stack);
}

typedef struct sym_rank { const char *z; uint32_t id; } sym_rank;
static int cmpSymRank(const void *a, const void *b){
  return strcmp(((const sym_rank*)a)->z, ((const sym_rank*)b)->z);
}
/* The nodes with calls in the order of their stack text, or nearly: depth
** first, a node before its children and siblings by symbol (strcmp).  That
** is strcmp's order of the texts unless a symbol is a prefix of a
** sibling's followed by a byte below ';', or holds a ';' (makeRows checks).
** It spares sorting long texts that share long prefixes.  *plain is 1 when
** no symbol holds a ';' or begins another: then the order is strcmp's and
** no two nodes have the same text.  @return the node ids (*n of them), or
** NULL out of memory. */
static uint32_t *stackOrder(flame_build *b, size_t *n, int *plain){
  const fnt_calls_stack *node = b->a.nodes.node;
  uint32_t nn = b->a.nodes.n, k, *rank = 0, *out = 0;
  size_t *start = 0, *pos = 0, sp = 0, capsp = 0, i;
  uint64_t *kids = 0;
  sym_rank *sr = 0;
  struct { size_t at, end; } *stk = 0;
  *n = 0;
  rank = fnt_malloc(((size_t)b->nsym+1)*sizeof(uint32_t));
  sr = fnt_malloc(((size_t)b->nsym+1)*sizeof(sym_rank));
  start = buildTmp(b, TMP_START, (size_t)nn+2, sizeof(size_t));
  pos = buildTmp(b, TMP_POS, (size_t)nn+2, sizeof(size_t));
  kids = buildTmp(b, TMP_KIDS, (size_t)nn+1, sizeof(uint64_t));
  out = buildTmp(b, TMP_ORDER, (size_t)nn+1, sizeof(uint32_t));
  if( !rank || !sr || !start || !pos || !kids || !out ) goto nomem;
  memset(start, 0, ((size_t)nn+2)*sizeof(size_t));
  for(k=0; k<b->nsym; k++){ sr[k].z = b->sym[k]; sr[k].id = k; }
  qsort(sr, b->nsym, sizeof(sym_rank), cmpSymRank);
  *plain = 1;
  for(k=0; k<b->nsym; k++){
    rank[sr[k].id] = k;
    /* A symbol that begins another begins the next one in sorted order. */
    if( strchr(sr[k].z, ';')
     || (k+1<b->nsym && strncmp(sr[k].z, sr[k+1].z, strlen(sr[k].z))==0) ) *plain = 0;
  }
  /* Children by parent (bucket 0: depth 0, bucket p+1: node p's), each
  ** bucket by its symbols' ranks. */
  for(k=0; k<nn; k++) start[node[k].parent+1]++;
  for(i=1; i<(size_t)nn+2; i++) start[i] += start[i-1];
  memcpy(pos, start, ((size_t)nn+2)*sizeof(size_t));
  for(k=0; k<nn; k++) kids[pos[node[k].parent]++] = (uint64_t)rank[node[k].fn]<<32 | k;
  for(i=0; i<=(size_t)nn; i++){
    if( start[i+1]-start[i]>1 ) qsort(kids+start[i], start[i+1]-start[i], sizeof(uint64_t), fnt_cmp_u64);
  }
  /* Depth first, from the depth-0 nodes. */
  capsp = 64;
  stk = fnt_malloc(capsp*sizeof(*stk));
  if( stk==0 ) goto nomem;
  stk[0].at = start[0];
  stk[0].end = start[1];
  sp = 1;
  while( sp>0 ){
    if( stk[sp-1].at==stk[sp-1].end ){ sp--; continue; }
    k = (uint32_t)kids[stk[sp-1].at++];
    if( node[k].calls ) out[(*n)++] = k;
    if( start[k+2]>start[k+1] ){
      if( sp==capsp ){
        void *x = fnt_realloc(stk, capsp*2*sizeof(*stk));
        if( x==0 ) goto nomem;
        stk = x;
        capsp *= 2;
      }
      stk[sp].at = start[k+1];
      stk[sp++].end = start[k+2];
    }
  }
  fnt_free(stk); fnt_free(rank); fnt_free(sr);
  return out;
nomem:
  fnt_free(stk); fnt_free(rank); fnt_free(sr);
  return 0;
}

/* Flames whose texts take more than this are streamed (flameStream). */
#define FLAME_STREAM_BYTES ((size_t)64 << 20)

/* Makes f a streamed flame: it keeps the stack nodes (24 bytes each) and
** their order, not every row's text: the whole-run flame of the 10M-event
** flat bench run has 4.9M stacks whose texts took 4.4 GB, most of its 15 s
** spent faulting their pages in.  Only for an order that is strcmp's with
** no two rows of one text (stackOrder's `plain`).  The nodes, the order,
** the symbols and their lengths become f's.  @return FNT_OK or NOMEM. */
static int flameStream(flame_build *b, fnt_flame *f, uint32_t *order,
                       size_t norder, const size_t *len, size_t *symLen,
                       size_t total){
  uint32_t nn = b->a.nodes.n, k, maxDepth = 0;
  size_t maxLen = 0;
  f->depth = fnt_malloc(((size_t)nn+1)*sizeof(uint32_t));
  if( f->depth==0 ) return FNT_E_NOMEM;
  for(k=0; k<nn; k++){
    uint32_t p = b->a.nodes.node[k].parent;   /* a parent comes first */
    f->depth[k] = p ? f->depth[p-1]+1 : 0;
    if( f->depth[k]>maxDepth ) maxDepth = f->depth[k];
    if( len[k]>maxLen ) maxLen = len[k];
  }
  f->path_node = fnt_malloc(((size_t)maxDepth+1)*sizeof(uint32_t));
  f->path_len = fnt_malloc(((size_t)maxDepth+1)*sizeof(size_t));
  f->chain = fnt_malloc(((size_t)maxDepth+1)*sizeof(uint32_t));
  f->path = fnt_malloc(maxLen+1);
  if( !f->path_node || !f->path_len || !f->chain || !f->path ) return FNT_E_NOMEM;
  f->nodes = b->a.nodes;
  memset(&b->a.nodes, 0, sizeof(b->a.nodes));
  fnt_free(f->nodes.slot);          /* no more nodes are interned */
  f->nodes.slot = 0;
  f->order = order;
  b->a.tmp[TMP_ORDER] = 0;
  b->a.captmp[TMP_ORDER] = 0;
  f->sym = b->sym;
  f->nsym = b->nsym;
  b->sym = 0;
  b->nsym = b->capsym = 0;
  f->sym_len = symLen;
  f->n = norder;
  f->text_bytes = total;
  return FNT_OK;
}

/* The rows: one per node with calls, its stack text, sorted; stacks of the
** same text (two functions of one symbol) merged.  A whole run's flame
** (`stream`), or one whose texts are large, is streamed when it can be. */
static int makeRows(flame_build *b, fnt_flame *f, int stream){
  size_t total = 0, off = 0, i, n = 0, norder = 0;
  size_t *len, *symLen, *at;    /* at: a node's text offset + 1, 0 none */
  uint32_t k, *order;
  int sorted = 1, plain = 0, rc;
  const fnt_calls_stack *node = b->a.nodes.node;
  /* lengths, offsets and the order's arrays: about 6 words a node */
  if( (rc = within(b, (size_t)b->a.nodes.n*6*sizeof(size_t)))!=FNT_OK ) return rc;
  rc = FNT_E_NOMEM;
  len = buildTmp(b, TMP_LEN, b->a.nodes.n, sizeof(size_t));
  symLen = fnt_malloc(((size_t)b->nsym+1)*sizeof(size_t));
  order = stackOrder(b, &norder, &plain);
  if( len==0 || symLen==0 || order==0 ) goto nomem;
  for(k=0; k<b->nsym; k++) symLen[k] = strlen(b->sym[k]);
  /* Nodes are interned after their parents: one pass gives every length. */
  for(k=0; k<b->a.nodes.n; k++){
    const fnt_calls_stack *x = &node[k];
    len[k] = symLen[x->fn] + (x->parent ? len[x->parent-1]+1 : 0);
    if( x->calls ){ total += len[k]+1; n++; }
  }
  if( plain && (stream || total>FLAME_STREAM_BYTES) ){
    rc = flameStream(b, f, order, norder, len, symLen, total);
    if( rc ) fnt_free(symLen);
    return rc;
  }
  rc = within(b, (size_t)b->a.nodes.n*3*sizeof(size_t) + total + n*sizeof(fnt_flame_row));
  if( rc!=FNT_OK ) goto nomem;
  rc = FNT_E_NOMEM;
  at = buildTmp(b, TMP_AT, b->a.nodes.n, sizeof(size_t));
  if( at==0 ) goto nomem;
  memset(at, 0, (b->a.nodes.n ? b->a.nodes.n : 1)*sizeof(size_t));
  f->rows = fnt_calloc(n ? n : 1, sizeof(fnt_flame_row));
  f->text = fnt_malloc(total ? total : 1);
  bigBuffer(f->text, total);
  if( f->rows==0 || f->text==0 ) goto nomem;
  for(i=0; i<norder; i++){
    const fnt_calls_stack *x = &node[order[i]];
    uint32_t j;
    char *z;
    size_t end;
    k = order[i];
    z = f->text + off;
    z[len[k]] = 0;
    /* Written from the top of the stack down, to depth 0 or to the first
    ** ancestor written before (in this order, most are): its text is the
    ** rest. */
    for(j=k+1, end=len[k]; j; j=node[j-1].parent){
      size_t m = symLen[node[j-1].fn];
      if( j!=k+1 && at[j-1] ){
        memcpy(z, f->text+at[j-1]-1, end);
        break;
      }
      memcpy(z+end-m, b->sym[node[j-1].fn], m);
      end -= m;
      if( end ) z[--end] = ';';
    }
    at[k] = off+1;
    f->rows[f->n].stack = z;
    f->rows[f->n].self_ns = x->self;
    f->rows[f->n].calls = x->calls;
    f->n++;
    off += len[k]+1;
  }
  fnt_free(symLen);
  /* The order by symbols is strcmp's but for the odd symbol (stackOrder):
  ** one comparison per row checks it and finds the texts to merge. */
  for(i=n=0; !plain && i<f->n; i++){
    int c = n>0 ? strcmp(f->rows[n-1].stack, f->rows[i].stack) : -1;
    if( c>0 && sorted ){
      /* rows[0..n) merged so far, rows[i..) not seen: sort them all. */
      memmove(f->rows+n, f->rows+i, (f->n-i)*sizeof(fnt_flame_row));
      f->n = n + (f->n-i);
      qsort(f->rows, f->n, sizeof(fnt_flame_row), cmpRowStack);
      sorted = 0;
      i = n = 0;
      c = -1;
    }
    if( c==0 ){
      f->rows[n-1].self_ns += f->rows[i].self_ns;
      f->rows[n-1].calls += f->rows[i].calls;
    }else{
      f->rows[n++] = f->rows[i];
    }
  }
  if( !plain ) f->n = n;
  return FNT_OK;
nomem:
  fnt_free(symLen);
  return rc;
}

int fnt_flame_compute(fnt_snapshot *snap, const char *run_id,
                      const fnt_flame_window *w, fnt_flame **out){
  return fnt_flame_compute_within(snap, run_id, w, SIZE_MAX, out);
}

int fnt_flame_compute_within(fnt_snapshot *snap, const char *run_id,
                             const fnt_flame_window *w, size_t max_bytes,
                             fnt_flame **out){
  flame_build b;
  fnt_flame *f;
  fnt_store *st;
  int rc;
  if( out ) *out = 0;
  if( snap==0 || out==0 ) return FNT_E_MISUSE;
  st = snap->st;
  if( run_id==0 ) return fnt_err(st, FNT_E_MISUSE, "fnt_flame_compute: run_id is NULL");
  if( w && w->t1<=w->t0 ){
    return fnt_err(st, FNT_E_MISUSE, "fnt_flame: t1 (%lld) must be greater "
                   "than t0 (%lld)", (long long)w->t1, (long long)w->t0);
  }
  f = fnt_calloc(1, sizeof(*f));
  if( f==0 ) return fnt_err(st, FNT_E_NOMEM, "out of memory");
  memset(&b, 0, sizeof(b));
  b.st = st;
  b.limit = max_bytes;
  buildTake(&b);
  if( w==0 ){
    int ok = 0;
    rc = foldStored(&b, snap, run_id, &ok);
    if( rc==FNT_OK && !ok ) rc = readCalls(&b, snap, run_id, w);
  }else{
    rc = readCalls(&b, snap, run_id, w);
  }
  if( rc==FNT_OK ) rc = foldCalls(&b, w);
  if( rc==FNT_OK ) rc = makeRows(&b, f, w==0);
  buildClear(&b);
  if( rc ){
    fnt_flame_free(f);
    if( rc==FNT_E_NOMEM ) return fnt_err(st, rc, "run '%s': out of memory folding its stacks", run_id);
    if( rc==FNT_E_LIMIT ){
      return fnt_err(st, rc, "run '%s': folding its stacks takes more than %zu bytes", run_id, max_bytes);
    }
    return rc;
  }
  *out = f;
  return FNT_OK;
}
