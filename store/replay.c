/*
** replay.c -- the replay of SPEC §5 and §7: events of a run in seq_no
** order against a call stack per thread; every frame that ends is a call.
**
**   - entry of f at t: push a frame (f, t);
**   - exit or tail_exit of f at t: when f has a frame on the thread's
**     stack, pop every frame down to and including the topmost frame of f,
**     each ending at t (that frame 'exit'/'tail_exit', those above it
**     'unwound'); otherwise ignore the event;
**   - frames open after the thread's last event end at its t ('open').
** A frame is outermost when no frame of its key is below it; each thread
** keeps a small hash "frames of key k on my stack" for that test and for
** the exit search.  Memory: threads x stack depth, never the run's length.
**
** Durations are computed in uint64_t: t_ns need not grow along seq_no, so
** a duration may be negative; wrap-around keeps that defined.
*/
#include <string.h>

#include "calls.h"
#include "segment.h"

typedef struct Frame {
  int64_t call_id, start;
  uint64_t child;       /* durations of the frames that ended directly above */
  uint32_t fn, key;
  uint32_t node;        /* its stack's node (UINT32_MAX: stacks not kept) */
  uint8_t outermost;
} Frame;

typedef struct Slot { uint32_t key, count; } Slot;   /* count 0 = empty */

typedef struct Thread {
  Frame *frame;
  size_t nframe, cap;
  Slot *slot;
  uint32_t mask, used;
  uint32_t tid;
  int64_t tlast;        /* t_ns of the thread's last event */
} Thread;

struct fnt_replay {
  const fnt_fntab *tab;
  fnt_callvec *out;
  Thread *th;
  uint32_t nth, capth;
  uint32_t *tidslot, tidmask;   /* thread index+1, 0 = empty */
  fnt_stacktab *stacks;         /* the frames' stacks, or NULL */
  uint64_t pushes;              /* frames pushed while keeping them */
};

static uint32_t mix(uint32_t x){
  return (uint32_t)(((uint64_t)x * 0x9E3779B97F4A7C15ull) >> 32);
}

int fnt_callvec_reserve(fnt_callvec *v, size_t n){
  fnt_callrec *a;
  if( n<=v->cap ) return FNT_OK;
  a = fnt_realloc(v->a, n*sizeof(fnt_callrec));
  if( a==0 ) return FNT_E_NOMEM;
  v->a = a;
  v->cap = n;
  return FNT_OK;
}

int fnt_callvec_push(fnt_callvec *v, const fnt_callrec *c){
  if( v->n==v->cap ){
    size_t nNew = v->cap ? v->cap*2 : 1024;
    fnt_callrec *a = fnt_realloc(v->a, nNew*sizeof(fnt_callrec));
    if( a==0 ) return FNT_E_NOMEM;
    v->a = a;
    v->cap = nNew;
  }
  v->a[v->n++] = *c;
  return FNT_OK;
}

void fnt_callvec_free(fnt_callvec *v){
  fnt_free(v->a);
  memset(v, 0, sizeof(*v));
}

fnt_replay *fnt_replay_new(const fnt_fntab *tab, fnt_callvec *out){
  fnt_replay *r = fnt_calloc(1, sizeof(*r));
  if( r ){ r->tab = tab; r->out = out; }
  return r;
}

void fnt_replay_keep_stacks(fnt_replay *r, fnt_stacktab *t){
  r->stacks = t;
}

int fnt_replay_kept_stacks(const fnt_replay *r){
  return r->stacks!=0;
}

void fnt_replay_free(fnt_replay *r){
  uint32_t i;
  if( r==0 ) return;
  for(i=0; i<r->nth; i++){
    fnt_free(r->th[i].frame);
    fnt_free(r->th[i].slot);
  }
  fnt_free(r->th);
  fnt_free(r->tidslot);
  fnt_free(r);
}

static int tidGrow(fnt_replay *r){
  uint32_t nNew = r->tidslot ? (r->tidmask+1)*2 : 16, i;
  uint32_t *a = fnt_calloc(nNew, sizeof(uint32_t));
  if( a==0 ) return FNT_E_NOMEM;
  for(i=0; i<r->nth; i++){
    uint32_t h = mix(r->th[i].tid) & (nNew-1);
    while( a[h] ) h = (h+1) & (nNew-1);
    a[h] = i+1;
  }
  fnt_free(r->tidslot);
  r->tidslot = a;
  r->tidmask = nNew-1;
  return FNT_OK;
}

/* The thread `tid`, made on first sight; NULL when out of memory. */
static Thread *threadOf(fnt_replay *r, uint32_t tid){
  uint32_t h;
  if( r->tidslot==0 && tidGrow(r) ) return 0;
  h = mix(tid) & r->tidmask;
  while( r->tidslot[h] ){
    Thread *t = &r->th[r->tidslot[h]-1];
    if( t->tid==tid ) return t;
    h = (h+1) & r->tidmask;
  }
  if( r->nth==r->capth ){
    uint32_t nNew = r->capth ? r->capth*2 : 8;
    Thread *a = fnt_realloc(r->th, nNew*sizeof(Thread));
    if( a==0 ) return 0;
    r->th = a;
    r->capth = nNew;
  }
  memset(&r->th[r->nth], 0, sizeof(Thread));
  r->th[r->nth].tid = tid;
  r->tidslot[h] = ++r->nth;
  if( (uint64_t)r->nth*2 > (uint64_t)r->tidmask+1 && tidGrow(r) ) return 0;
  return &r->th[r->nth-1];
}

static Slot *slotFind(const Thread *t, uint32_t key){
  uint32_t h;
  if( t->slot==0 ) return 0;
  for(h=mix(key) & t->mask; t->slot[h].count; h=(h+1) & t->mask){
    if( t->slot[h].key==key ) return &t->slot[h];
  }
  return 0;
}

static int slotGrow(Thread *t){
  uint32_t nOld = t->slot ? t->mask+1 : 0, nNew = nOld ? nOld*2 : 16, i;
  Slot *a = fnt_calloc(nNew, sizeof(Slot));
  if( a==0 ) return FNT_E_NOMEM;
  for(i=0; i<nOld; i++){
    if( t->slot[i].count ){
      uint32_t h = mix(t->slot[i].key) & (nNew-1);
      while( a[h].count ) h = (h+1) & (nNew-1);
      a[h] = t->slot[i];
    }
  }
  fnt_free(t->slot);
  t->slot = a;
  t->mask = nNew-1;
  return FNT_OK;
}

/* Counts one more frame of `key`; *first = 1 when it is the only one. */
static int slotPush(Thread *t, uint32_t key, int *first){
  uint32_t h;
  if( t->slot==0 || (t->used+1)*2 > t->mask+1 ){
    if( slotGrow(t) ) return FNT_E_NOMEM;
  }
  for(h=mix(key) & t->mask; ; h=(h+1) & t->mask){
    Slot *p = &t->slot[h];
    if( p->count==0 ){
      p->key = key;
      p->count = 1;
      t->used++;
      *first = 1;
      return FNT_OK;
    }
    if( p->key==key ){
      p->count++;
      *first = 0;
      return FNT_OK;
    }
  }
}

/* Counts one frame of `key` less (backward-shift delete: no tombstones). */
static void slotPop(Thread *t, uint32_t key){
  uint32_t mask = t->mask, i = mix(key) & mask, j;
  while( t->slot[i].key!=key || t->slot[i].count==0 ) i = (i+1) & mask;
  if( --t->slot[i].count ) return;
  t->used--;
  j = i;
  for(;;){
    uint32_t home;
    j = (j+1) & mask;
    if( t->slot[j].count==0 ) break;
    home = mix(t->slot[j].key) & mask;
    if( i<=j ? (i<home && home<=j) : (i<home || home<=j) ) continue;
    t->slot[i] = t->slot[j];
    t->slot[j].count = 0;
    i = j;
  }
}

/* A replay that keeps stacks gives up on a trace where they are nearly as
** many as the calls: that chunk would not fold (FNT_STACKS_MIN_FOLD), and
** a table that large costs a cache miss a call. */
#define STACKS_GIVE_UP 65536

static int pushFrame(fnt_replay *r, Thread *t, int64_t call_id, int64_t start,
                     uint64_t child, uint32_t fn, uint32_t key){
  Frame *f;
  uint32_t node = UINT32_MAX;
  int first;
  if( r->stacks ){
    uint32_t parent = t->nframe ? t->frame[t->nframe-1].node + 1 : 0;
    if( fnt_stacktab_intern(r->stacks, parent, fn, &node) ) return FNT_E_NOMEM;
    r->pushes++;
    if( r->stacks->n>STACKS_GIVE_UP
     && (uint64_t)r->stacks->n*FNT_STACKS_MIN_FOLD > r->pushes ){
      r->stacks = 0;
    }
  }
  if( t->nframe==t->cap ){
    size_t nNew = t->cap ? t->cap*2 : 32;
    Frame *a = fnt_realloc(t->frame, nNew*sizeof(Frame));
    if( a==0 ) return FNT_E_NOMEM;
    t->frame = a;
    t->cap = nNew;
  }
  if( slotPush(t, key, &first) ) return FNT_E_NOMEM;
  f = &t->frame[t->nframe++];
  f->call_id = call_id;
  f->start = start;
  f->child = child;
  f->fn = fn;
  f->key = key;
  f->node = node;
  f->outermost = (uint8_t)first;
  return FNT_OK;
}

/* The call of frame `i` of `t` ending at `end`, the frame above it (if
** open) having lasted `above`. */
static void callOf(const Thread *t, size_t i, int64_t end, uint64_t above,
                   int ended_by, fnt_callrec *c){
  const Frame *f = &t->frame[i];
  uint64_t d = (uint64_t)end - (uint64_t)f->start;
  c->call_id = f->call_id;
  c->parent_id = i ? t->frame[i-1].call_id : -1;
  c->parent_fn = i ? t->frame[i-1].fn : UINT32_MAX;
  c->start = f->start;
  c->end = end;
  c->self = (int64_t)(d - f->child - above);
  c->thread = t->tid;
  c->fn = f->fn;
  c->depth = (uint32_t)i;
  c->ended_by = (uint8_t)ended_by;
  c->outermost = f->outermost;
  c->node = f->node;
}

/* Ends the frames of `t` above depth nKeep at t; the lowest of them ended
** by `how`, the others unwound. */
static int popTo(fnt_replay *r, Thread *t, size_t nKeep, int64_t at, int how){
  while( t->nframe>nKeep ){
    fnt_callrec c;
    size_t i = --t->nframe;
    callOf(t, i, at, 0, i==nKeep ? how : FNT_ENDED_UNWOUND, &c);
    slotPop(t, t->frame[i].key);
    if( i ) t->frame[i-1].child += (uint64_t)at - (uint64_t)t->frame[i].start;
    if( fnt_callvec_push(r->out, &c) ) return FNT_E_NOMEM;
  }
  return FNT_OK;
}

int fnt_replay_event(fnt_replay *r, uint32_t thread, int64_t seq, int64_t at,
                     uint32_t fn, int kind){
  Thread *t = threadOf(r, thread);
  uint32_t key;
  if( t==0 ) return FNT_E_NOMEM;
  t->tlast = at;
  key = r->tab->key[fn];
  if( kind==FNT_KIND_ENTRY ) return pushFrame(r, t, seq, at, 0, fn, key);
  if( t->nframe && t->frame[t->nframe-1].key==key ){
    /* The usual exit: of the function on top. */
  }else if( slotFind(t, key) ){
    /* An exit that unwinds several frames: the search walks only frames
    ** that are popped right after, O(1) amortised. */
  }else{
    return FNT_OK;      /* no frame of it on this stack: ignored */
  }
  {
    size_t d = t->nframe;
    while( t->frame[d-1].key!=key ) d--;
    return popTo(r, t, d-1, at,
                 kind==FNT_KIND_TAIL_EXIT ? FNT_ENDED_TAIL_EXIT : FNT_ENDED_EXIT);
  }
}

int fnt_replay_resume(fnt_replay *r, const fnt_callrec *c, int64_t above){
  Thread *t = threadOf(r, c->thread);
  uint64_t d, child;
  if( t==0 ) return FNT_E_NOMEM;
  if( c->depth!=t->nframe ) return FNT_E_CORRUPT;
  /* The open row's self excludes the open frame above it, which is not a
  ** child that has ended: take it back out. */
  d = (uint64_t)c->end - (uint64_t)c->start;
  child = d - (uint64_t)c->self - (uint64_t)above;
  t->tlast = c->end;
  return pushFrame(r, t, c->call_id, c->start, child, c->fn, r->tab->key[c->fn]);
}

int fnt_replay_open_calls(fnt_replay *r, fnt_callvec *out){
  uint32_t i;
  for(i=0; i<r->nth; i++){
    Thread *t = &r->th[i];
    uint64_t above = 0;
    size_t k = t->nframe;
    while( k-- > 0 ){
      fnt_callrec c;
      callOf(t, k, t->tlast, above, FNT_ENDED_OPEN, &c);
      above = (uint64_t)t->tlast - (uint64_t)t->frame[k].start;
      if( fnt_callvec_push(out, &c) ) return FNT_E_NOMEM;
    }
  }
  return FNT_OK;
}
