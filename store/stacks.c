/*
** stacks.c -- the stacks section of a calls segment (FORMAT.md, "Calls
** segments"): per distinct stack of the file's calls, the count and self
** time of its ended calls, so that a run's whole flame graph (fnt_flame
** without a window, flame.c) adds up O(stacks x files) instead of reading
** every call.
**
** The section is a chunk of the file after the row groups, which the
** footer only points at: readers other than fnt_flame never load it.
**
** A stack is a node (parent node, function).  Within one file every call's
** parent is among the file's rows: a parent ends at or after its child, so
** it ended in the same derivation or is one of the frames still open at
** its end.  The replay that derives the file keeps each frame's node as
** it enters it (replay.c), so every node's parent has a smaller number.
*/
#include <stdlib.h>
#include <string.h>

#include "calls.h"
#include "segment.h"

static uint32_t nodeHash(uint32_t parent, uint32_t fn){
  uint64_t h = ((uint64_t)parent<<32 | fn) * 0x9E3779B97F4A7C15ull;
  return (uint32_t)(h ^ (h>>29));
}

int fnt_stacktab_intern(fnt_stacktab *t, uint32_t parent, uint32_t fn, uint32_t *id){
  uint32_t h, i;
  if( (uint64_t)(t->n+1)*2 > (t->slot ? (uint64_t)t->mask+1 : 0) ){
    uint32_t nSlot = t->slot ? (t->mask+1)*2 : 1024;
    uint32_t *a = fnt_calloc(nSlot, sizeof(uint32_t));
    if( a==0 ) return FNT_E_NOMEM;
    for(i=0; i<t->n; i++){
      h = nodeHash(t->node[i].parent, t->node[i].fn) & (nSlot-1);
      while( a[h] ) h = (h+1) & (nSlot-1);
      a[h] = i+1;
    }
    fnt_free(t->slot);
    t->slot = a;
    t->mask = nSlot-1;
  }
  for(h = nodeHash(parent, fn) & t->mask; t->slot[h]; h = (h+1) & t->mask){
    const fnt_calls_stack *x = &t->node[t->slot[h]-1];
    if( x->parent==parent && x->fn==fn ){ *id = t->slot[h]-1; return FNT_OK; }
  }
  if( t->n==t->cap ){
    uint32_t nNew = t->cap ? t->cap*2 : 256;
    fnt_calls_stack *a = fnt_realloc(t->node, (size_t)nNew*sizeof(*a));
    if( a==0 ) return FNT_E_NOMEM;
    t->node = a;
    t->cap = nNew;
  }
  memset(&t->node[t->n], 0, sizeof(fnt_calls_stack));
  t->node[t->n].parent = parent;
  t->node[t->n].fn = fn;
  t->slot[h] = ++t->n;
  *id = t->n-1;
  return FNT_OK;
}

void fnt_stacktab_clear(fnt_stacktab *t){
  fnt_free(t->node);
  fnt_free(t->slot);
  memset(t, 0, sizeof(*t));
}

int fnt_calls_stacks_write(const fnt_callvec *closed, fnt_stacktab *t,
                           size_t nrows, const uint32_t *fnIdx, fnt_buf *out){
  size_t i;
  if( t==0 ) return FNT_OK;
  for(i=0; i<closed->n; i++){
    const fnt_callrec *c = &closed->a[i];
    fnt_calls_stack *x = &t->node[c->node];
    x->calls++;
    x->self = (int64_t)((uint64_t)x->self + (uint64_t)c->self);
  }
  fnt_put_varint(out, t->n);
  for(i=0; i<t->n; i++){
    fnt_put_varint(out, t->node[i].parent);
    fnt_put_varint(out, fnIdx[t->node[i].fn]);
    fnt_put_varint(out, (uint64_t)t->node[i].calls);
    fnt_put_varint(out, fnt_zigzag(t->node[i].self));
  }
  if( out->failed ) return FNT_E_NOMEM;
  /* Worth its bytes only when it folds the rows: where nearly every call
  ** has a stack of its own, reading the calls costs about the same. */
  if( (uint64_t)t->n*FNT_STACKS_MIN_FOLD > nrows && out->len>FNT_STACKS_SMALL ) out->len = 0;
  return FNT_OK;
}

int fnt_calls_stacks_read(fnt_store *st, const fnt_segment *s,
                          fnt_calls_stack **out, uint32_t *nOut){
  fnt_buf scratch = {0}, raw = {0};
  fnt_calls_stack *v = 0;
  fnt_rd r;
  uint64_t n = 0, i;
  int rc;
  *out = 0;
  *nOut = 0;
  rc = fnt_segment_read_stacks(st, s, &scratch, &raw);
  if( rc ) goto done;
  r.p = raw.data;
  r.end = raw.data + raw.len;
  r.ok = 1;
  n = fnt_get_varint(&r);
  if( !r.ok || n>raw.len ) goto corrupt;
  v = fnt_calloc(n+1, sizeof(fnt_calls_stack));
  if( v==0 ){ rc = fnt_err(st, FNT_E_NOMEM, "out of memory"); goto done; }
  for(i=0; i<n && r.ok; i++){
    fnt_calls_stack *x = &v[i];
    uint64_t parent = fnt_get_varint(&r), fn = fnt_get_varint(&r);
    x->calls = (int64_t)fnt_get_varint(&r);
    x->self = fnt_unzigzag(fnt_get_varint(&r));
    /* A parent numbered before its child; a function of the table. */
    if( parent>i || fn>=s->nfuncs ) goto corrupt;
    x->parent = (uint32_t)parent;
    x->fn = (uint32_t)fn;
  }
  if( !r.ok || r.p!=r.end ) goto corrupt;
  *out = v;
  *nOut = (uint32_t)n;
  v = 0;
  goto done;
corrupt:
  rc = fnt_err(st, FNT_E_CORRUPT, "%s: stacks chunk: malformed", s->full_path);
done:
  fnt_free(v);
  fnt_buf_free(&scratch);
  fnt_buf_free(&raw);
  return rc;
}
