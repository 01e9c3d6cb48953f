/*
** fuzz_perf.c -- libFuzzer target: bytes as `perf script` text, through the
** folder of tools/perf_script.c (and, for the second half of the input
** after a NUL byte, perf_script_add_leaves over `perf script -G` text).
**
** A profile that folds must add up: each symbol's self counts are within
** its totals, no total exceeds the samples read, and the self samples of
** all symbols never exceed the samples (a sample has at most one leaf).
*/
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "perf_script.h"

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerInitialize(int *argc, char ***argv){
  (void)argc; (void)argv;
  return 0;
}

static void checkProfile(const perf_profile *p){
  size_t i;
  int64_t selfSamples = 0;
  for(i=0; i<p->n_symbols; i++){
    const perf_symbol *s = &p->symbols[i];
    if( s->name==0 ) abort();
    if( s->self_samples<0 || s->self_samples>s->total_samples ) abort();
    if( s->total_samples>p->samples ) abort();
    if( s->self_ns<0 || s->self_ns>s->total_ns ) abort();
    selfSamples += s->self_samples;
  }
  if( selfSamples>p->samples ){
    fprintf(stderr, "self samples %lld > samples %lld\n",
            (long long)selfSamples, (long long)p->samples);
    abort();
  }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size){
  const uint8_t *nul = memchr(data, 0, size);
  size_t n1 = nul ? (size_t)(nul - data) : size;
  FILE *in;
  perf_profile *p = 0;
  char err[512];
  if( n1==0 ) return 0;                      /* fmemopen of 0 bytes: EINVAL */
  in = fmemopen((void*)data, n1, "r");
  if( in==0 ) return 0;
  err[0] = 0;
  if( perf_script_fold(in, "fuzz", &p, err, sizeof(err))==0 ){
    if( p==0 ) abort();
    checkProfile(p);
    if( nul && size-n1-1>0 ){
      FILE *g = fmemopen((void*)(nul+1), size-n1-1, "r");
      if( g ){
        if( perf_script_add_leaves(p, g, "fuzz-G", err, sizeof(err))==0 ){
          checkProfile(p);
        }else if( err[0]==0 ){
          abort();
        }
        fclose(g);
      }
    }
    perf_profile_free(p);
  }else{
    if( p!=0 || err[0]==0 ) abort();
  }
  fclose(in);
  return 0;
}
