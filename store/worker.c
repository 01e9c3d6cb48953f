/*
** worker.c -- one job on a second thread, for filing (commit.c): a chunk's
** events segment is encoded while its calls are derived.  Without threads
** (FNT_OPEN_NO_THREADS, FNT_THREADS=0, or pthread_create failing) the job
** runs at once on the caller's thread; the result is the same either way,
** since the job touches nothing the caller uses until the join.
*/
#include <stdlib.h>
#include <string.h>

#include "internal.h"

static void *runJob(void *arg){
  fnt_worker *w = arg;
  w->rc = w->fn(w->arg);
  return 0;
}

void fnt_worker_start(fnt_worker *w, int threaded, int (*fn)(void*), void *arg){
  memset(w, 0, sizeof(*w));
  w->fn = fn;
  w->arg = arg;
  w->started = 1;
  if( threaded && pthread_create(&w->th, 0, runJob, w)==0 ){
    w->threaded = 1;
  }else{
    runJob(w);
  }
}

int fnt_worker_join(fnt_worker *w){
  if( !w->started ) return FNT_OK;
  if( w->threaded ) pthread_join(w->th, 0);
  w->started = w->threaded = 0;
  return w->rc;
}

int fnt_threads_wanted(int flags){
  const char *e = getenv("FNT_THREADS");
  if( flags & FNT_OPEN_NO_THREADS ) return 0;
  return !(e && strcmp(e, "0")==0);
}
