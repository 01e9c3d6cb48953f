/*
** prog.c -- the XRay test and demo program: threads, recursion, mutual
** recursion and tail calls, so that the importer meets every shape of trace
** (entries, exits, tail exits, deep stacks, ties in time across threads).
**
**   clang -O2 -fxray-instrument -fxray-instruction-threshold=1 -pthread \
**         -o prog test/xray/prog.c
**   ./prog [ROUNDS]        (default 20; about 3,000 events a round)
**
** -DPROG_SLOW_LEAF=N makes leaf_work do N more rounds of its loop: the
** deliberate regression that test/sql/test_compare_xray.sh must find.
**
** In FDR mode the environment alone writes no log: the program must start
** and flush the logger itself.  The weak declarations let the same binary run
** in basic mode (where they stay unused) and even without the XRay runtime.
*/
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int __xray_log_init_mode(const char *mode, const char *config) __attribute__((weak));
int __xray_log_finalize(void) __attribute__((weak));
int __xray_log_flushLog(void) __attribute__((weak));

#define NOINLINE __attribute__((noinline))

static volatile unsigned long sink;

NOINLINE static unsigned long fib(unsigned n){
  return n<2 ? n : fib(n-1) + fib(n-2);
}

/* Mutual recursion: is_even and is_odd call each other. */
NOINLINE static int is_odd(unsigned n);
NOINLINE static int is_even(unsigned n){
  if( n==0 ) return 1;
  sink += n;
  return is_odd(n-1);
}
NOINLINE static int is_odd(unsigned n){
  if( n==0 ) return 0;
  sink += n;
  return is_even(n-1);
}

#ifndef PROG_SLOW_LEAF
#define PROG_SLOW_LEAF 0
#endif

/* At -O2 the calls below are tail calls: leaf_work's caller leaves through a
** tail exit, then leaf_work enters. */
NOINLINE static unsigned long leaf_work(unsigned long x){
  unsigned i;
  for(i=0; i<16 + PROG_SLOW_LEAF; i++) x = x*6364136223846793005UL + 1442695040888963407UL;
  sink ^= x;
  return x;
}
NOINLINE static unsigned long tail_caller(unsigned long x){
  sink += x;
  return leaf_work(x ^ 0x9e3779b97f4a7c15UL);
}
NOINLINE static unsigned long tail_chain(unsigned long x){
  sink -= x;
  return tail_caller(x + 1);
}

/* A tail call out of the traced binary: strlen is not instrumented, so the
** tail exit is followed by no entry. */
NOINLINE static size_t tail_to_libc(const char *s){
  sink++;
  return strlen(s);
}

NOINLINE static void one_round(unsigned r){
  sink += fib(10 + r%3);
  sink += (unsigned long)is_even(40 + r%7);
  sink += tail_chain(r);
  sink += tail_to_libc("fntrace");
}

struct worker_arg { unsigned rounds; unsigned id; };

static void *worker(void *p){
  const struct worker_arg *a = p;
  unsigned r;
  for(r=0; r<a->rounds; r++) one_round(r + a->id);
  return 0;
}

int main(int argc, char **argv){
  enum { NTHREAD = 3 };
  pthread_t th[NTHREAD];
  struct worker_arg args[NTHREAD];
  unsigned rounds = argc>1 ? (unsigned)strtoul(argv[1], 0, 10) : 20;
  unsigned i;
  int fdr = __xray_log_init_mode && getenv("XRAY_OPTIONS")
            && strstr(getenv("XRAY_OPTIONS"), "xray-fdr");

  /* XRayLogInitStatus 2 = XRAY_LOG_INITIALIZED */
  if( fdr && __xray_log_init_mode("xray-fdr", "")!=2 ){
    fprintf(stderr, "prog: __xray_log_init_mode(\"xray-fdr\") failed\n");
    return 1;
  }
  for(i=0; i<NTHREAD; i++){
    args[i].rounds = rounds;
    args[i].id = i;
    if( pthread_create(&th[i], 0, worker, &args[i]) ){
      fprintf(stderr, "prog: pthread_create failed\n");
      return 1;
    }
  }
  worker(&(struct worker_arg){rounds, 7});
  for(i=0; i<NTHREAD; i++) pthread_join(th[i], 0);
  if( fdr ){
    __xray_log_finalize();
    __xray_log_flushLog();
  }
  printf("prog: %u rounds on %d threads, sink %lu\n", rounds, NTHREAD+1, sink);
  return 0;
}
