/*
** ext_sort.c -- an external merge sort of fixed-size records (ext_sort.h).
*/
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ext_sort.h"

#define RUN_BUF (64u << 10)    /* read buffer of each run in the merge */

typedef struct run {
  uint64_t off, end;           /* bytes of the run in the file */
  uint64_t next;               /* the next byte to read into buf */
  unsigned char *buf;
  size_t pos, len;             /* records' bytes in buf */
} run;

struct ext_sort {
  size_t rec, cap, n;          /* record size; records in mem, of cap */
  ext_sort_cmp cmp;
  unsigned char *mem;
  uint64_t count;
  int fd;                      /* the spill file; -1 when none */
  uint64_t fsize;
  run *runs;
  size_t nruns, cap_runs;
  size_t *heap, nh;            /* indexes of runs, by their head record */
  size_t out;                  /* in-memory: the next record */
  char err[256];
};

static int fail(ext_sort *s, const char *what){
  snprintf(s->err, sizeof(s->err), "%s: %s", what, strerror(errno));
  return -1;
}

ext_sort *ext_sort_new(size_t rec_size, ext_sort_cmp cmp, size_t mem_bytes){
  ext_sort *s = calloc(1, sizeof(*s));
  if( !s ) return 0;
  s->rec = rec_size;
  s->cap = mem_bytes / rec_size;
  s->cmp = cmp;
  s->fd = -1;
  s->mem = malloc(s->cap * rec_size);
  if( !s->mem ){ free(s); return 0; }
  return s;
}

/* Sorts the records in memory and appends them to the spill file as a run. */
static int spill(ext_sort *s){
  const char *dir = getenv("TMPDIR");
  size_t left = s->n * s->rec;
  const unsigned char *p = s->mem;
  run *r;
  qsort(s->mem, s->n, s->rec, s->cmp);
  if( s->fd<0 ){
    char path[4096];
    snprintf(path, sizeof(path), "%s/fnt-sort-XXXXXX", dir && dir[0] ? dir : "/tmp");
    s->fd = mkstemp(path);
    if( s->fd<0 ) return fail(s, "temporary file");
    unlink(path);   /* gone with the process, whatever happens */
  }
  if( s->nruns==s->cap_runs ){
    size_t ncap = s->cap_runs ? s->cap_runs*2 : 16;
    run *nr = realloc(s->runs, ncap*sizeof(*nr));
    if( !nr ){ errno = ENOMEM; return fail(s, "sorting"); }
    s->runs = nr; s->cap_runs = ncap;
  }
  r = &s->runs[s->nruns++];
  memset(r, 0, sizeof(*r));
  r->off = r->next = s->fsize;
  while( left>0 ){
    ssize_t w = write(s->fd, p, left);
    if( w<0 && errno==EINTR ) continue;
    if( w<=0 ) return fail(s, "writing the temporary file");
    p += w; left -= (size_t)w;
  }
  s->fsize += s->n * s->rec;
  r->end = s->fsize;
  s->n = 0;
  return 0;
}

int ext_sort_add(ext_sort *s, const void *rec){
  if( s->n==s->cap && spill(s) ) return -1;
  memcpy(s->mem + s->n*s->rec, rec, s->rec);
  s->n++;
  s->count++;
  return 0;
}

/* Refills a run's buffer; 0 ok (len 0 at its end), -1 error. */
static int refill(ext_sort *s, run *r){
  size_t want = RUN_BUF - RUN_BUF % s->rec;
  ssize_t got;
  if( r->end - r->next < want ) want = (size_t)(r->end - r->next);
  r->pos = 0;
  r->len = 0;
  while( r->len<want ){
    got = pread(s->fd, r->buf + r->len, want - r->len, (off_t)(r->next + r->len));
    if( got<0 && errno==EINTR ) continue;
    if( got<=0 ){ if( got==0 ) errno = EIO; return fail(s, "reading the temporary file"); }
    r->len += (size_t)got;
  }
  r->next += want;
  return 0;
}

static int before(const ext_sort *s, size_t a, size_t b){
  const run *x = &s->runs[a], *y = &s->runs[b];
  return s->cmp(x->buf + x->pos, y->buf + y->pos) < 0;
}

static void sift_down(ext_sort *s, size_t i){
  for(;;){
    size_t l = 2*i+1, m = i, t;
    if( l<s->nh && before(s, s->heap[l], s->heap[m]) ) m = l;
    if( l+1<s->nh && before(s, s->heap[l+1], s->heap[m]) ) m = l+1;
    if( m==i ) return;
    t = s->heap[i]; s->heap[i] = s->heap[m]; s->heap[m] = t;
    i = m;
  }
}

int ext_sort_rewind(ext_sort *s){
  size_t i;
  s->out = 0;
  if( s->fd<0 ) return 0;
  s->nh = 0;
  for(i=0; i<s->nruns; i++){
    run *r = &s->runs[i];
    r->next = r->off;
    if( refill(s, r) ) return -1;
    if( r->len ) s->heap[s->nh++] = i;
  }
  for(i=s->nh; i-->0; ) sift_down(s, i);
  return 0;
}

int ext_sort_finish(ext_sort *s){
  size_t i;
  if( s->fd<0 ){
    qsort(s->mem, s->n, s->rec, s->cmp);   /* it all fits: no file */
    return 0;
  }
  if( s->n && spill(s) ) return -1;
  free(s->mem);
  s->mem = 0;
  s->heap = malloc(s->nruns*sizeof(*s->heap));
  if( !s->heap ){ errno = ENOMEM; return fail(s, "sorting"); }
  for(i=0; i<s->nruns; i++){
    s->runs[i].buf = malloc(RUN_BUF);
    if( !s->runs[i].buf ){ errno = ENOMEM; return fail(s, "sorting"); }
  }
  return ext_sort_rewind(s);
}

int ext_sort_next(ext_sort *s, void *rec){
  run *r;
  if( s->fd<0 ){
    if( s->out==s->n ) return 0;
    memcpy(rec, s->mem + s->out*s->rec, s->rec);
    s->out++;
    return 1;
  }
  if( s->nh==0 ) return 0;
  r = &s->runs[s->heap[0]];
  memcpy(rec, r->buf + r->pos, s->rec);
  r->pos += s->rec;
  if( r->pos==r->len ){
    if( r->next<r->end ){
      if( refill(s, r) ) return -1;
    }else{
      s->heap[0] = s->heap[--s->nh];
    }
  }
  sift_down(s, 0);
  return 1;
}

uint64_t ext_sort_count(const ext_sort *s){ return s->count; }

const char *ext_sort_error(const ext_sort *s){ return s->err; }

void ext_sort_free(ext_sort *s){
  size_t i;
  if( !s ) return;
  if( s->fd>=0 ) close(s->fd);
  for(i=0; i<s->nruns; i++) free(s->runs[i].buf);
  free(s->runs); free(s->heap); free(s->mem); free(s);
}
