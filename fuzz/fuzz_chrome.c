/*
** fuzz_chrome.c -- libFuzzer target: bytes as a Chrome Trace Event JSON
** file, through the streaming reader of tools/chrome_json.c, and the marks
** of its events through the external sort of tools/ext_sort.c (with a
** memory small enough that a few dozen events spill runs to disk).
**
** The reader must hand out events with consecutive indexes, then either
** end or fail with a message naming a byte; the sort must give back every
** mark, in order.
*/
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "chrome_json.h"
#include "ext_sort.h"

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerInitialize(int *argc, char ***argv){
  (void)argc; (void)argv;
  return 0;
}

typedef struct rec { int64_t t; uint64_t index; } rec;

static int cmp_rec(const void *a, const void *b){
  const rec *x = a, *y = b;
  if( x->t!=y->t ) return x->t<y->t ? -1 : 1;
  return x->index<y->index ? -1 : x->index>y->index;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size){
  FILE *in;
  chrome_reader *r;
  chrome_event ev;
  ext_sort *s;
  rec m, prev;
  uint64_t n = 0, out = 0;
  int rc;
  if( size==0 ) return 0;                    /* fmemopen of 0 bytes: EINVAL */
  in = fmemopen((void*)data, size, "r");
  if( in==0 ) return 0;
  r = chrome_reader_new(in, "fuzz");
  s = ext_sort_new(sizeof(rec), cmp_rec, 16*sizeof(rec));
  if( !r || !s ) abort();
  while( (rc = chrome_reader_next(r, &ev))==1 ){
    if( ev.index!=n ) abort();
    m.t = ev.has_ts ? ev.ts_ns : 0;
    m.index = n++;
    if( ext_sort_add(s, &m) ) abort();
  }
  if( rc<0 && strncmp(chrome_reader_error(r), "fuzz: byte ", 11)!=0 ){
    fprintf(stderr, "error without a byte offset: %s\n", chrome_reader_error(r));
    abort();
  }
  if( chrome_reader_next(r, &ev)==1 && rc==0 ) abort();   /* nothing after the end */
  if( ext_sort_finish(s) ) abort();
  while( (rc = ext_sort_next(s, &m))==1 ){
    if( out>0 && cmp_rec(&prev, &m)>=0 ) abort();
    prev = m;
    out++;
  }
  if( rc<0 || out!=n ) abort();
  ext_sort_free(s);
  chrome_reader_free(r);
  fclose(in);
  return 0;
}
