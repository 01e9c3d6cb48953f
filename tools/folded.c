/*
** folded.c -- a run's folded stacks, one row at a time, in bounded memory
** (folded.h).
**
** A run whose stacks fold within the memory given is read with
** fnt_flame_compute_within().  Past it (a trace where nearly every call
** has a stack of its own: the stacks' text can be a hundred times the
** run), the fold goes through three external sorts (ext_sort.h):
**
**  1. the calls of the run (or the window), by (thread, call_id): each
**     thread's calls in the order they were entered, so a replay with one
**     frame per depth knows every call's parent;
**  2. replayed, each call gives its stack's hash (XXH3-128, chained over
**     the stack's symbols split at ';', so that equal texts hash alike)
**     and what it adds to that stack, sorted by hash: equal stacks meet
**     and are summed, named by their first call;
**  3. those first calls, by (thread, call_id): a second replay of sort 1
**     writes each stack's text as it reaches its first call.
**
** Two different stacks with one 128-bit hash would be summed as one: we
** take that chance, as the store does for keys (FORMAT.md).  A call whose
** parent is not the frame one depth below in the replay (a run of format
** 1 can repeat a seq_no) is folded as a stack of its own, from depth 0.
*/
#include <stdlib.h>
#include <string.h>
#include <xxhash.h>

#include "ext_sort.h"
#include "fnt.h"
#include "folded.h"
#include "strtab.h"

/* Sort 1: a call as the replay needs it. */
typedef struct fd_call {
  uint32_t thread, depth;
  int64_t call_id, parent_id;
  int64_t start, end, self;
  uint32_t sym, pad;          /* a symbol of the fold (fd_fold.syms) */
} fd_call;

/* Sort 2: what a call adds to a stack, named by a call of that stack. */
typedef struct fd_part {
  uint64_t hi, lo;            /* the stack's hash */
  uint32_t thread, depth;
  int64_t call_id;
  int64_t self, calls, incl;
} fd_part;

/* Sort 3: a stack's sums, at its first call. */
typedef struct fd_stack {
  uint32_t thread, depth;
  int64_t call_id;
  int64_t self, calls, incl;
} fd_stack;

/* The replay's frame at one depth of the current thread. */
typedef struct fd_frame {
  int64_t call_id;
  XXH128_hash_t h;
  size_t len;                 /* its stack's text: text[0..len) */
} fd_frame;

typedef struct fd_fold {
  const char *cmd;
  const fnt_flame_window *w;
  /* keep > 0: the `keep` greatest inclusive times so far, a min-heap */
  int64_t *thick;
  size_t keep, nthick;
  uint64_t dropped;
  strtab syms, parts;         /* symbols; their ';'-separated parts */
  uint32_t *symPart;          /* per symbol: first index in partSeq, */
  uint32_t *symNPart;         /* ... and how many */
  uint32_t *partSeq;
  size_t nPartSeq, capPartSeq, capSym;
  fd_frame *stk;              /* by depth: the frames of [base, nstk) */
  size_t base, nstk, capstk;
  uint32_t thread;            /* of the frames in stk */
  char *text;                 /* the stack of the current call */
  size_t capText;
} fd_fold;

/* Total orders (ext_sort.h), the keys first, then every field. */
#define FD_CMP(x, y) do{ if( (x)!=(y) ) return (x)<(y) ? -1 : 1; }while(0)
static int cmpCall(const void *pa, const void *pb){
  const fd_call *a = pa, *b = pb;
  FD_CMP(a->thread, b->thread); FD_CMP(a->call_id, b->call_id);
  FD_CMP(a->depth, b->depth); FD_CMP(a->parent_id, b->parent_id);
  FD_CMP(a->start, b->start); FD_CMP(a->end, b->end);
  FD_CMP(a->self, b->self); FD_CMP(a->sym, b->sym);
  return 0;
}
static int cmpPart(const void *pa, const void *pb){
  const fd_part *a = pa, *b = pb;
  FD_CMP(a->hi, b->hi); FD_CMP(a->lo, b->lo);
  FD_CMP(a->thread, b->thread); FD_CMP(a->call_id, b->call_id);
  FD_CMP(a->depth, b->depth); FD_CMP(a->self, b->self); FD_CMP(a->calls, b->calls);
  FD_CMP(a->incl, b->incl);
  return 0;
}
static int cmpStack(const void *pa, const void *pb){
  const fd_stack *a = pa, *b = pb;
  FD_CMP(a->thread, b->thread); FD_CMP(a->call_id, b->call_id);
  FD_CMP(a->depth, b->depth);
  return 0;
}

static void *grown(void *p, size_t *cap, size_t need, size_t size){
  size_t n = *cap ? *cap : 64;
  void *a;
  if( need<=*cap ) return p;
  while( n<need ) n *= 2;
  a = realloc(p, n*size);
  if( a ) *cap = n;
  return a;
}

/* The symbol id of z, its parts interned on first sight.  -1: no memory. */
static int64_t symOf(fd_fold *f, const char *z){
  uint32_t before = f->syms.n, *a;
  int64_t id = strtab_intern(&f->syms, z, strlen(z));
  const char *p = z;
  if( id<0 || f->syms.n==before ) return id;
  if( f->syms.n>f->capSym ){
    size_t cap = f->capSym;
    if( (a = grown(f->symPart, &cap, f->syms.n, sizeof(uint32_t)))==0 ) return -1;
    f->symPart = a;
    if( (a = realloc(f->symNPart, cap*sizeof(uint32_t)))==0 ) return -1;
    f->symNPart = a;
    f->capSym = cap;
  }
  f->symPart[id] = (uint32_t)f->nPartSeq;
  f->symNPart[id] = 0;
  for(;;){
    const char *e = strchr(p, ';');
    int64_t part = strtab_intern(&f->parts, p, e ? (size_t)(e-p) : strlen(p));
    if( part<0 ) return -1;
    if( (a = grown(f->partSeq, &f->capPartSeq, f->nPartSeq+1, sizeof(uint32_t)))==0 ) return -1;
    f->partSeq = a;
    f->partSeq[f->nPartSeq++] = (uint32_t)part;
    f->symNPart[id]++;
    if( e==0 ) return id;
    p = e+1;
  }
}

/* Sort 1: the calls of the run (of the window).  0, or -1 after an error. */
static int readCalls(fd_fold *f, fnt_store *st, fnt_snapshot *snap,
                     const char *run, ext_sort *calls){
  fnt_call_predicate p;
  fnt_calls *sc = 0;
  fnt_call_block k;
  uint32_t *symOfFn = 0;
  uint64_t version = 0;
  size_t nFn = 0, i;
  int rc;
  fnt_call_predicate_init(&p);
  p.run_ids = &run;
  p.n_run_ids = 1;
  p.block_cols = FNT_CALL_COL(FNT_CALL_THREAD) | FNT_CALL_COL(FNT_CALL_CALL_ID)
               | FNT_CALL_COL(FNT_CALL_PARENT_ID) | FNT_CALL_COL(FNT_CALL_DEPTH)
               | FNT_CALL_COL(FNT_CALL_START_NS) | FNT_CALL_COL(FNT_CALL_DUR_NS)
               | FNT_CALL_COL(FNT_CALL_SELF_NS) | FNT_CALL_COL(FNT_CALL_SYMBOL);
  if( f->w ){
    p.t0 = f->w->t0;
    p.t1 = f->w->t1;
    if( f->w->thread>=0 ) p.thread = f->w->thread;
  }
  rc = fnt_calls_open(snap, &p, &sc);
  while( rc==FNT_OK && (rc = fnt_calls_next_block(sc, &k))==1 ){
    rc = FNT_OK;
    if( symOfFn==0 || version!=k.fn_version ){
      free(symOfFn);
      nFn = k.n_fn;
      if( (symOfFn = calloc(nFn+1, sizeof(uint32_t)))==0 ){ rc = FNT_E_NOMEM; break; }
      version = k.fn_version;
    }
    for(i=0; rc==FNT_OK && i<k.n; i++){
      fd_call c;
      int64_t fn = k.fn[i];
      if( symOfFn[fn]==0 ){
        int64_t id = symOf(f, k.fn_symbol[fn] ? k.fn_symbol[fn] : "");
        if( id<0 ){ rc = FNT_E_NOMEM; break; }
        symOfFn[fn] = (uint32_t)id+1;
      }
      memset(&c, 0, sizeof(c));
      c.thread = (uint32_t)k.thread[i];
      c.depth = (uint32_t)k.depth[i];
      c.call_id = k.call_id[i];
      c.parent_id = k.parent_id[i];
      c.start = k.start_ns[i];
      c.end = (int64_t)((uint64_t)k.start_ns[i] + (uint64_t)k.dur_ns[i]);
      c.self = k.self_ns[i];
      c.sym = symOfFn[fn]-1;
      if( ext_sort_add(calls, &c) ){
        cli_error(f->cmd, "%s", ext_sort_error(calls));
        free(symOfFn);
        fnt_calls_close(sc);
        return -1;
      }
    }
  }
  free(symOfFn);
  fnt_calls_close(sc);
  if( rc<0 ){
    cli_error(f->cmd, "%s", fnt_errmsg(st)[0] ? fnt_errmsg(st) : fnt_strerror(rc));
    return -1;
  }
  if( ext_sort_finish(calls) ){
    cli_error(f->cmd, "%s", ext_sort_error(calls));
    return -1;
  }
  return 0;
}

/* Replays call c: its frame (*self) goes under its parent's (*parent),
** or from depth 0 when the frame one depth below is not its parent
** (*parent NULL); the frame holds its stack's hash, and with `text` its
** stack's text is in f->text.  The frames are valid until the next call.
** @return 0, or -1 out of memory. */
static int replay(fd_fold *f, const fd_call *c, int text,
                  fd_frame **parent, fd_frame **self){
  XXH128_hash_t h = {0, 0};
  size_t len = 0, at, i, d = c->depth;
  const uint32_t *part;
  fd_frame *x;
  if( f->thread!=c->thread ) f->base = f->nstk = 0;
  f->thread = c->thread;
  if( (x = grown(f->stk, &f->capstk, d+1, sizeof(fd_frame)))==0 ) return -1;
  f->stk = x;
  *parent = d>f->base && d<=f->nstk && f->stk[d-1].call_id==c->parent_id ? &f->stk[d-1] : 0;
  if( *parent ){
    h = (*parent)->h;
    len = (*parent)->len;
  }else{
    f->base = d;              /* no frame below it is its ancestor */
  }
  part = f->partSeq + f->symPart[c->sym];
  for(i=0, at=len; i<f->symNPart[c->sym]; i++){
    h = XXH3_128bits_withSeed(&h, sizeof(h), (XXH64_hash_t)part[i]+1);
    len += (*parent || i>0) + strlen(f->parts.name[part[i]]);
  }
  if( text ){
    char *t = grown(f->text, &f->capText, len+1, 1);
    if( t==0 ) return -1;
    f->text = t;
    for(i=0; i<f->symNPart[c->sym]; i++){
      const char *z = f->parts.name[part[i]];
      size_t n = strlen(z);
      if( *parent || i>0 ) t[at++] = ';';
      memcpy(t+at, z, n);
      at += n;
    }
    t[len] = 0;
  }
  x = &f->stk[d];
  x->call_id = c->call_id;
  x->h = h;
  x->len = len;
  f->nstk = d+1;
  *self = x;
  return 0;
}

/* Reports a failed sort.  @return -1. */
static int sortFailed(const fd_fold *f, const ext_sort *s){
  cli_error(f->cmd, "%s", ext_sort_error(s));
  return -1;
}
static int noMemory(const fd_fold *f){
  cli_error(f->cmd, "out of memory folding the stacks");
  return -1;
}

/* Sort 2: each call replayed gives its stack's hash and what it adds there
** (in a window: its clipped time, taken from its parent's stack too).
** @return 0 or -1. */
static int hashStacks(fd_fold *f, ext_sort *calls, ext_sort *parts){
  fd_call c;
  int r;
  while( (r = ext_sort_next(calls, &c))==1 ){
    fd_frame *parent, *me;
    fd_part x;
    if( replay(f, &c, 0, &parent, &me) ) return noMemory(f);
    memset(&x, 0, sizeof(x));
    x.hi = me->h.high64;
    x.lo = me->h.low64;
    x.thread = c.thread;
    x.depth = c.depth;
    x.call_id = c.call_id;
    x.calls = 1;
    x.self = c.self;
    x.incl = c.end - c.start;
    if( f->w ){
      const fnt_flame_window *w = f->w;
      if( !(c.start < w->t1 && (c.end > w->t0 || c.start >= w->t0)) ) continue;
      x.self = x.incl = (c.end < w->t1 ? c.end : w->t1) - (c.start > w->t0 ? c.start : w->t0);
      if( parent ){
        fd_part y = x;
        y.hi = parent->h.high64;
        y.lo = parent->h.low64;
        y.depth = c.depth-1;
        y.call_id = parent->call_id;
        y.self = -x.self;
        y.calls = y.incl = 0;
        if( ext_sort_add(parts, &y) ) return sortFailed(f, parts);
      }
    }
    if( ext_sort_add(parts, &x) ) return sortFailed(f, parts);
  }
  if( r<0 ) return sortFailed(f, calls);
  return ext_sort_finish(parts) ? sortFailed(f, parts) : 0;
}

/* Keeps x among the f->keep greatest inclusive times seen. */
static void keepThick(fd_fold *f, int64_t x){
  size_t i = 0;
  if( f->nthick<f->keep ){
    /* sift up */
    for(i=f->nthick++; i>0 && f->thick[(i-1)/2]>x; i=(i-1)/2) f->thick[i] = f->thick[(i-1)/2];
    f->thick[i] = x;
    return;
  }
  if( x<=f->thick[0] ) return;
  /* replace the least, sift down */
  for(;;){
    size_t c = 2*i+1;
    if( c>=f->nthick ) break;
    if( c+1<f->nthick && f->thick[c+1]<f->thick[c] ) c++;
    if( f->thick[c]>=x ) break;
    f->thick[i] = f->thick[c];
    i = c;
  }
  f->thick[i] = x;
}

/* Sort 3: the stacks summed, each at its first call.  @return 0 or -1. */
static int sumStacks(fd_fold *f, ext_sort *parts, ext_sort *stacks){
  fd_part x, g = {0};
  int r, have = 0;
  while( (r = ext_sort_next(parts, &x))>=0 ){
    if( r==1 && have && x.hi==g.hi && x.lo==g.lo ){
      g.self += x.self;
      g.calls += x.calls;
      g.incl += x.incl;
      continue;
    }
    if( have && g.calls>0 ){
      fd_stack s;
      memset(&s, 0, sizeof(s));
      s.thread = g.thread;
      s.depth = g.depth;
      s.call_id = g.call_id;
      s.self = g.self;
      s.calls = g.calls;
      s.incl = g.incl;
      if( f->keep ) keepThick(f, g.incl);
      if( ext_sort_add(stacks, &s) ) return sortFailed(f, stacks);
    }
    if( r==0 ) break;
    g = x;
    have = 1;
  }
  if( r<0 ) return sortFailed(f, parts);
  return ext_sort_finish(stacks) ? sortFailed(f, stacks) : 0;
}

/* The second replay, naming each stack at its first call. */
static int nameStacks(fd_fold *f, ext_sort *calls, ext_sort *stacks,
                      folded_row_fn row, void *ctx){
  fd_stack s;
  fd_call c;
  int r = 1, rs;
  /* with keep, the thinnest kept: the least of the heap once it is full */
  int64_t least = f->keep && f->nthick==f->keep ? f->thick[0] : INT64_MIN;
  f->base = f->nstk = 0;
  if( ext_sort_rewind(calls) ) return sortFailed(f, calls);
  rs = ext_sort_next(stacks, &s);
  while( rs==1 && (r = ext_sort_next(calls, &c))==1 ){
    fd_frame *parent, *me;
    if( replay(f, &c, 1, &parent, &me) ) return noMemory(f);
    if( c.thread==s.thread && c.call_id==s.call_id && c.depth==s.depth ){
      if( s.incl>=least ){
        int rc = row(ctx, f->text, me->len, s.self, s.calls, s.incl);
        if( rc ) return rc;
      }else{
        f->dropped++;
      }
      rs = ext_sort_next(stacks, &s);
    }
  }
  if( r<0 ) return sortFailed(f, calls);
  if( rs<0 ) return sortFailed(f, stacks);
  if( rs==1 ){
    cli_error(f->cmd, "folding the stacks: a stack's first call was not found again");
    return -1;
  }
  return 0;
}

static int foldOnDisk(fd_fold *f, fnt_store *st, fnt_snapshot *snap,
                      const char *run, size_t mem, folded_row_fn row, void *ctx){
  size_t each = mem/4 > ((size_t)1<<20) ? mem/4 : (size_t)1<<20;
  ext_sort *calls = ext_sort_new(sizeof(fd_call), cmpCall, each);
  ext_sort *parts = ext_sort_new(sizeof(fd_part), cmpPart, each);
  ext_sort *stacks = ext_sort_new(sizeof(fd_stack), cmpStack, each);
  int rc = -1;
  if( calls==0 || parts==0 || stacks==0 ){
    noMemory(f);
  }else if( readCalls(f, st, snap, run, calls)==0 && hashStacks(f, calls, parts)==0
         && sumStacks(f, parts, stacks)==0 ){
    ext_sort_free(parts);       /* its memory back before the last pass */
    parts = 0;
    rc = nameStacks(f, calls, stacks, row, ctx);
  }
  ext_sort_free(calls);
  ext_sort_free(parts);
  ext_sort_free(stacks);
  return rc;
}

int folded_each(const char *cmd, fnt_store *st, fnt_snapshot *snap, const char *run,
                const fnt_flame_window *w, size_t mem, size_t keep, uint64_t *dropped,
                folded_row_fn row, void *ctx){
  fnt_flame *fl = 0;
  fd_fold f;
  int rc = fnt_flame_compute_within(snap, run, w, mem, &fl);
  if( rc==FNT_OK ){
    size_t i;
    for(i=0; rc==0 && i<fnt_flame_count(fl); i++){
      const fnt_flame_row *x = fnt_flame_row_at(fl, i);
      rc = row(ctx, x->stack, strlen(x->stack), x->self_ns, x->calls, -1);
    }
    fnt_flame_free(fl);
    return rc;
  }
  if( rc!=FNT_E_LIMIT ){
    cli_error(cmd, "%s", fnt_errmsg(st)[0] ? fnt_errmsg(st) : fnt_strerror(rc));
    return -1;
  }
  if( dropped ) *dropped = 0;
  memset(&f, 0, sizeof(f));
  f.cmd = cmd;
  f.w = w;
  f.keep = keep;
  if( keep && (f.thick = malloc(keep*sizeof(int64_t)))==0 ){
    cli_error(cmd, "out of memory folding the stacks");
    return -1;
  }
  rc = foldOnDisk(&f, st, snap, run, mem, row, ctx);
  if( dropped ) *dropped = f.dropped;
  free(f.thick);
  strtab_clear(&f.syms);
  strtab_clear(&f.parts);
  free(f.symPart);
  free(f.symNPart);
  free(f.partSeq);
  free(f.stk);
  free(f.text);
  return rc;
}
