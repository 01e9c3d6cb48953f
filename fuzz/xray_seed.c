/*
** xray_seed.c -- the program whose XRay logs seed corpus/xray/ (README.md):
** two threads, a few nested calls, a tail call, a recursion: every record
** kind in a log of a few hundred bytes.  Not part of the build.
**
**   clang -O2 -fxray-instrument -fxray-instruction-threshold=1 -pthread \
**         -o xray_seed fuzz/xray_seed.c
*/
#include <pthread.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

int __xray_log_init_mode(const char *mode, const char *config) __attribute__((weak));
int __xray_log_finalize(void) __attribute__((weak));
int __xray_log_flushLog(void) __attribute__((weak));

static volatile unsigned long sink;

__attribute__((noinline)) static unsigned long leaf(unsigned long x){
  sink ^= x * 2654435761u;
  return x + 1;
}
__attribute__((noinline)) static unsigned long tail(unsigned long x){
  sink += x;
  return leaf(x ^ 7);
}
__attribute__((noinline)) static unsigned long rec(unsigned n){
  return n==0 ? leaf(n) : rec(n-1) + 1;
}
static void *worker(void *arg){
  sink += tail((unsigned long)(size_t)arg);
  return 0;
}

int main(void){
  pthread_t t;
  /* Only in FDR mode (the environment says which); 2 = XRAY_LOG_INITIALIZED. */
  int fdr = __xray_log_init_mode && getenv("XRAY_OPTIONS")
            && strstr(getenv("XRAY_OPTIONS"), "xray-fdr")
            && __xray_log_init_mode("xray-fdr", "")==2;
  pthread_create(&t, 0, worker, (void*)5);
  sink += rec(3);
  pthread_join(t, 0);
  if( fdr ){ __xray_log_finalize(); __xray_log_flushLog(); }
  return 0;
}
