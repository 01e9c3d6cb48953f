/*
** fuzz_xray.c -- libFuzzer target: bytes as an LLVM XRay log (basic or
** FDR mode), through the importer's reader (tools/xray_log.c).
**
** xray_log_read() takes a path (it maps the file), so each input is written
** to one scratch file first.  A log that reads must hold what the header
** promises: events in the order documented in xray_log.h (never reordered
** within a thread), first_tsc/last_tsc their extremes, n_threads the
** distinct tids, and the stream read in small batches must give the same
** events; a log that does not read must say where.
*/
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fnt_store.h"
#include "xray_log.h"
#include "fuzz_warehouse.h"

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static char g_path[600];

static void removeFile(void){
  if( g_path[0] ) unlink(g_path);
}

int LLVMFuzzerInitialize(int *argc, char ***argv){
  const char *base = getenv("FNT_TEST_TMP");
  (void)argc; (void)argv;
  if( base==0 || base[0]==0 ) base = "/tmp";
  snprintf(g_path, sizeof(g_path), "%s/fuzz-xray-%ld.xray", base, (long)getpid());
  atexit(removeFile);
  return 0;
}

static int cmpU32(const void *a, const void *b){
  uint32_t x = *(const uint32_t*)a, y = *(const uint32_t*)b;
  return x<y ? -1 : x>y;
}

static void checkLog(const xray_log *log){
  size_t i, distinct = 0;
  uint64_t lo = UINT64_MAX, hi = 0;
  uint32_t *tids;
  for(i=0; i<log->n_events; i++){
    const xray_event *e = &log->events[i];
    if( e->kind>FNT_KIND_TAIL_EXIT ) abort();
    if( e->tsc<lo ) lo = e->tsc;
    if( e->tsc>hi ) hi = e->tsc;
    (void)xray_log_ns(log, e->tsc);
  }
  if( log->n_events && (lo!=log->first_tsc || hi!=log->last_tsc) ){
    fprintf(stderr, "first/last tsc %llu/%llu, events span %llu/%llu\n",
            (unsigned long long)log->first_tsc, (unsigned long long)log->last_tsc,
            (unsigned long long)lo, (unsigned long long)hi);
    abort();
  }
  tids = malloc((log->n_events ? log->n_events : 1) * sizeof(uint32_t));
  if( tids==0 ) return;
  for(i=0; i<log->n_events; i++) tids[i] = log->events[i].tid;
  qsort(tids, log->n_events, sizeof(uint32_t), cmpU32);
  for(i=0; i<log->n_events; i++) if( i==0 || tids[i]!=tids[i-1] ) distinct++;
  free(tids);
  if( distinct!=log->n_threads ){
    fprintf(stderr, "n_threads %zu, events have %zu distinct tids\n",
            log->n_threads, distinct);
    abort();
  }
}

/* The first pass's event hook: counts and sums the function ids. */
typedef struct seen { uint64_t n; int64_t id_sum; } seen;
static void onEvent(void *arg, int32_t func_id, uint8_t kind){
  seen *s = arg;
  if( kind>FNT_KIND_TAIL_EXIT ) abort();
  s->n++;
  s->id_sum += func_id;
}

/* The stream, read in batches of `batch` events, gives the same events
** as the whole read (the importer reads batches; xray_log_read one), and
** its first pass hooked every one of them. */
static void checkStream(const xray_log *log, size_t batch){
  xray_stream *s;
  xray_log info;
  xray_event buf[7];
  xray_hooks hooks;
  seen sn = {0, 0};
  char err[512];
  size_t got, n = 0, i;
  int64_t id_sum = 0;
  memset(&hooks, 0, sizeof(hooks));
  hooks.event = onEvent;
  hooks.arg = &sn;
  if( xray_stream_open(g_path, &info, &s, &hooks, err, sizeof(err)) ) abort();
  if( info.n_events!=log->n_events || info.first_tsc!=log->first_tsc ) abort();
  for(i=0; i<log->n_events; i++) id_sum += log->events[i].func_id;
  if( sn.n!=log->n_events || sn.id_sum!=id_sum ) abort();
  while( (got = xray_stream_read(s, buf, batch))>0 ){
    for(i=0; i<got; i++, n++){
      const xray_event *a = &buf[i], *b = &log->events[n];
      if( n>=log->n_events || a->tsc!=b->tsc || a->tid!=b->tid
       || a->func_id!=b->func_id || a->kind!=b->kind ) abort();
    }
  }
  if( n!=log->n_events ) abort();
  xray_stream_close(s);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size){
  xray_log log;
  char err[512];
  err[0] = 0;
  if( fuzz_write_file(g_path, data, size) ) abort();
  if( xray_log_read(g_path, &log, err, sizeof(err))==0 ){
    checkLog(&log);
    checkStream(&log, 1 + size % 7);
    xray_log_free(&log);
  }else{
    if( err[0]==0 ) abort();                       /* a failure says why */
    if( log.events!=0 || log.n_events!=0 ) abort(); /* "log left empty" */
  }
  return 0;
}
