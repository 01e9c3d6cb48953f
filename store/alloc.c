/*
** alloc.c -- the store's one allocator hook, and growable buffers.
** Every allocation of the store goes through fnt_malloc() so that tests can
** fail the Nth one and an embedder can account for memory.
*/
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "internal.h"

/* Large blocks are offered to the kernel for 2 MB pages, where it gives
** them on request (transparent huge pages in "madvise" mode, as on the
** kernel this was measured on): a 4 KB page costs a fault at its first
** touch, about 12 us on that virtual machine, where a 48 MB buffer took
** 340 ms to touch in 4 KB pages and 14 ms in 2 MB ones.  A chunk's calls,
** its columns, a timeline's answer are such blocks.  Only new blocks: a
** block grown by realloc keeps the pages it had (advising the grown one
** raised a bounded fold's peak RSS from 43 to 66 MiB, its doubled array
** filled with 2 MB pages, and slowed filing and flames). */
#define HUGE_MIN  ((size_t)4 << 20)
#define HUGE_PAGE ((uintptr_t)2 << 20)
static void *adviseHuge(void *p, size_t n){
#ifdef MADV_HUGEPAGE
  if( p && n>=HUGE_MIN ){
    uintptr_t s = ((uintptr_t)p + HUGE_PAGE-1) & ~(HUGE_PAGE-1);
    uintptr_t e = ((uintptr_t)p + n) & ~(HUGE_PAGE-1);
    if( e>s ) (void)madvise((void*)s, e-s, MADV_HUGEPAGE);   /* advice only */
  }
#endif
  return p;
}

static void *defaultMalloc(void *o, size_t n){ FNT_UNUSED(o); return adviseHuge(malloc(n), n); }
static void *defaultRealloc(void *o, void *p, size_t n){
  FNT_UNUSED(o);
  return p ? realloc(p, n) : adviseHuge(realloc(p, n), n);
}
static void defaultFree(void *o, void *p){ FNT_UNUSED(o); free(p); }

static fnt_allocator g_alloc = { defaultMalloc, defaultRealloc, defaultFree, 0 };

void fnt_set_allocator(const fnt_allocator *a){
  if( a && a->xMalloc && a->xRealloc && a->xFree ){
    g_alloc = *a;
  }else{
    g_alloc.xMalloc = defaultMalloc;
    g_alloc.xRealloc = defaultRealloc;
    g_alloc.xFree = defaultFree;
    g_alloc.opaque = 0;
  }
}

void *fnt_malloc(size_t n){
  return g_alloc.xMalloc(g_alloc.opaque, n ? n : 1);
}

void *fnt_calloc(size_t n, size_t size){
  void *p;
  if( size && n > SIZE_MAX/size ) return 0;
  p = fnt_malloc(n*size);
  if( p ) memset(p, 0, n*size);
  return p;
}

void *fnt_realloc(void *p, size_t n){
  return g_alloc.xRealloc(g_alloc.opaque, p, n ? n : 1);
}

void fnt_free(void *p){
  if( p ) g_alloc.xFree(g_alloc.opaque, p);
}

char *fnt_strdup(const char *s){
  size_t n;
  char *r;
  if( s==0 ) return 0;
  n = strlen(s);
  r = fnt_malloc(n+1);
  if( r ) memcpy(r, s, n+1);
  return r;
}

int fnt_buf_reserve(fnt_buf *b, size_t extra){
  size_t need, cap;
  uint8_t *p;
  if( b->failed ) return -1;
  if( extra > SIZE_MAX - b->len ){ b->failed = 1; return -1; }
  need = b->len + extra;
  if( need <= b->cap ) return 0;
  cap = b->cap ? b->cap : 256;
  while( cap < need ) cap = cap > SIZE_MAX/2 ? need : cap*2;
  p = fnt_realloc(b->data, cap);
  if( p==0 ){ b->failed = 1; return -1; }
  b->data = p;
  b->cap = cap;
  return 0;
}

void fnt_buf_append(fnt_buf *b, const void *p, size_t n){
  if( n==0 || fnt_buf_reserve(b, n) ) return;
  memcpy(b->data + b->len, p, n);
  b->len += n;
}

void fnt_buf_free(fnt_buf *b){
  fnt_free(b->data);
  memset(b, 0, sizeof(*b));
}
