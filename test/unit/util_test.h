/*
** util_test.h -- small helpers shared by the C unit tests: checks that
** report file:line, and scratch warehouses under $FNT_TEST_TMP.
*/
#ifndef FNT_UTIL_TEST_H
#define FNT_UTIL_TEST_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "fnt_store.h"

extern int t_failures;

#define CHECK(cond) do{ if(!(cond)){ \
  fprintf(stderr, "%s:%d: CHECK failed: %s\n", __FILE__, __LINE__, #cond); \
  t_failures++; } }while(0)
#define CHECK_EQ_INT(a, b) do{ long long _a = (long long)(a), _b = (long long)(b); \
  if(_a!=_b){ fprintf(stderr, "%s:%d: %s == %lld, expected %lld\n", \
  __FILE__, __LINE__, #a, _a, _b); t_failures++; } }while(0)
#define CHECK_STR(a, b) do{ const char *_a = (a), *_b = (b); \
  if(!_a || strcmp(_a, _b)!=0){ fprintf(stderr, "%s:%d: %s == \"%s\", expected \"%s\"\n", \
  __FILE__, __LINE__, #a, _a ? _a : "(null)", _b); t_failures++; } }while(0)
#define CHECK_RC(st, expr, want) do{ int _rc = (expr); if(_rc!=(want)){ \
  fprintf(stderr, "%s:%d: %s returned %d (%s), expected %d\n", __FILE__, \
  __LINE__, #expr, _rc, (st) ? fnt_errmsg(st) : "", (want)); t_failures++; } }while(0)

/* A fresh empty folder path for a warehouse (not created), under
** $FNT_TEST_TMP or /tmp.  Returned string is static storage per call slot. */
const char *t_scratch_dir(const char *name);
/* rm -rf of a scratch folder. */
void t_remove_tree(const char *path);
/* Prints the summary line and returns the exit status. */
int t_finish(const char *name);

/* A synthetic chunk: n events over `threads` threads with well-nested calls,
** seq_no from seq0; the arrays are malloc'd and freed by t_chunk_free. */
typedef struct t_chunk {
  fnt_chunk c;
  fnt_function *fns;
  fnt_event *ev;
} t_chunk;
void t_chunk_make(t_chunk *t, const char *repo, const char *run_id,
                  int64_t chunk, int64_t chunks, size_t n, uint32_t threads,
                  uint64_t seq0, unsigned seed);
void t_chunk_free(t_chunk *t);
/* Files chunks 0..chunks-1 of a run, n events on `threads` threads each,
** chunk k's seed k + seed0; every filing must commit. */
void t_file_run(fnt_store *st, const char *repo, const char *run_id,
                int64_t chunks, size_t n, uint32_t threads, unsigned seed0);

#endif
