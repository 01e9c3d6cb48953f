/*
** run_filer.c -- a run's events filed chunk by chunk (run_filer.h).
*/
#include <malloc.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "fnt.h"
#include "run_filer.h"

/* A re-import must cut the run the same way, or chunks already filed and
** chunks filed now would overlap (idempotency is per (run_id, chunk)).
** Returns 0 when the run is absent or filed with the same chunks and
** total_events; else reports the difference and returns -1. */
static int check_same_cut(const run_filer *rf){
  fnt_snapshot *snap;
  fnt_scan *sc;
  int64_t chunks = rf->run.chunks, total = rf->run.total_events;
  int rc = cli_run_scan(rf->st, FNT_TABLE_RUNS, rf->run.run_id,
                        (1u<<FNT_RUN_CHUNKS) | (1u<<FNT_RUN_TOTAL_EVENTS), &snap, &sc);
  int status = 0;
  while( rc==FNT_OK && (rc = fnt_scan_next(sc))==1 ){
    int64_t c = fnt_scan_int(sc, FNT_RUN_CHUNKS), n = fnt_scan_int(sc, FNT_RUN_TOTAL_EVENTS);
    if( c!=chunks || n!=total ){
      cli_error(rf->cmd, "%s: run '%s' is already filed as %lld chunk(s) of %lld events in all; "
                "this import makes %lld chunk(s) of %lld: use the same input and "
                "--chunk-events, or another --run-id", rf->input, rf->run.run_id, (long long)c,
                (long long)n, (long long)chunks, (long long)total);
      status = -1;
      break;
    }
    rc = FNT_OK;
  }
  if( rc<0 ){
    const char *m = fnt_errmsg(rf->st);
    cli_error(rf->cmd, "%s: reading the runs of the warehouse: %s", rf->input,
              m && m[0] ? m : fnt_strerror(rc));
    status = -1;
  }
  fnt_scan_close(sc);
  fnt_snapshot_release(snap);
  return status;
}

int run_filer_begin(run_filer *rf, fnt_store *st, const fnt_chunk *run,
                    size_t chunk_events, const char *cmd, const char *input,
                    progress *pg){
  const char *kill_env = getenv("FNT_TEST_KILL_AFTER_CHUNK");
  size_t per;
  memset(rf, 0, sizeof(*rf));
  rf->st = st;
  rf->cmd = cmd;
  rf->input = input;
  rf->run = *run;
  rf->chunk_events = chunk_events;
  rf->pg = pg;
  rf->kill_after = -1;
  if( kill_env && kill_env[0] ){
    char *end;
    rf->kill_after = strtoll(kill_env, &end, 10);
    if( *end || rf->kill_after<0 ){
      cli_error(cmd, "FNT_TEST_KILL_AFTER_CHUNK: '%s' is not a chunk number", kill_env);
      return -1;
    }
  }
  if( cli_check_repo(st, cmd, FNT_TABLE_RUNS, run->run_id, run->repo) || check_same_cut(rf) ) return -1;
  /* Filing a chunk reads back the calls file of the chunk before (the
  ** stack carried across): a few footers suffice, where the default 64
  ** would let the importer's memory grow with its first 64 chunks. */
  fnt_set_segment_cache(st, 4, FNT_SEGMENT_CACHE_BYTES);
#ifdef M_MMAP_THRESHOLD
  /* Each chunk allocates and frees the same few MB (its calls, stacks,
  ** encoded columns).  glibc hands such blocks back to the kernel when
  ** freed, and each page then costs a fault again at the next chunk (12 us
  ** on the VM this was measured on: 20M events in 5.5 s, 3.2 s kept). */
  mallopt(M_MMAP_THRESHOLD, 32 << 20);
  mallopt(M_TRIM_THRESHOLD, 64 << 20);
#endif
  per = (uint64_t)run->total_events < chunk_events ? (size_t)run->total_events : chunk_events;
  rf->ev = malloc((per ? per : 1)*sizeof(*rf->ev));
  if( !rf->ev ){ cli_error(cmd, "out of memory"); return -1; }
  return 0;
}

int64_t run_filer_function(run_filer *rf, const fnt_function *fn){
  if( rf->n_fn==rf->cap_fn ){
    size_t ncap = rf->cap_fn ? rf->cap_fn*2 : 64;
    fnt_function *nf = realloc(rf->fn, ncap*sizeof(*nf));
    if( !nf ){ cli_error(rf->cmd, "out of memory"); return -1; }
    rf->fn = nf;
    rf->cap_fn = ncap;
  }
  rf->fn[rf->n_fn] = *fn;
  return (int64_t)rf->n_fn++;
}

int run_filer_flush(run_filer *rf){
  fnt_chunk c = rf->run;
  int rc;
  if( rf->chunk>=rf->run.chunks ){
    cli_error(rf->cmd, "%s: more events than the %lld announced", rf->input,
              (long long)rf->run.total_events);
    return -1;
  }
  c.chunk = rf->chunk;
  c.functions = rf->fn;
  c.n_functions = rf->n_fn;
  c.events = rf->ev;
  c.n_events = rf->n_ev;
  rc = fnt_file_chunk(rf->st, &c);
  if( rc<0 ){
    const char *m = fnt_errmsg(rf->st);
    progress_end(rf->pg);
    cli_error(rf->cmd, "%s: chunk %lld of %lld: %s", rf->input, (long long)rf->chunk,
              (long long)rf->run.chunks, m && m[0] ? m : fnt_strerror(rc));
    return -1;
  }
  if( rc==1 ) rf->filed++; else rf->already++;
  progress_update(rf->pg, rf->seq);
  if( rf->chunk==rf->kill_after ){
    fflush(stdout);
    _exit(137);
  }
  rf->chunk++;
  rf->n_ev = 0;
  return 0;
}

int run_filer_end(run_filer *rf){
  if( (rf->n_ev>0 || rf->chunk==0) && run_filer_flush(rf) ) return -1;
  if( rf->chunk!=rf->run.chunks || rf->seq!=(uint64_t)rf->run.total_events ){
    cli_error(rf->cmd, "%s: %llu events in %lld chunk(s), %lld in %lld announced "
              "(the input changed while it was read?)", rf->input,
              (unsigned long long)rf->seq, (long long)rf->chunk,
              (long long)rf->run.total_events, (long long)rf->run.chunks);
    return -1;
  }
  return 0;
}

void run_filer_free(run_filer *rf){
  free(rf->ev); free(rf->fn);
  rf->ev = 0; rf->fn = 0;
}

double run_filer_clock(void){
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec/1e9;
}

void run_filer_report(const run_filer *rf, const char *warehouse,
                      uint64_t bytes_before, double t0){
  double secs = run_filer_clock() - t0;
  uint64_t bytes_after = cli_disk_usage(warehouse);
  int64_t grew = (int64_t)(bytes_after - bytes_before);
  double rate = secs>0 ? (double)rf->run.total_events/secs : 0.0;
  if( cli_g.json ){
    cli_json_int("chunks", (long long)rf->run.chunks);
    cli_json_int("chunks_filed", (long long)rf->filed);
    cli_json_int("chunks_already_filed", (long long)rf->already);
    cli_json_str("warehouse", warehouse);
    cli_json_int("import_bytes", (long long)grew);
    cli_json_int("warehouse_bytes", (long long)bytes_after);
    cli_json_num("seconds", secs);
    return;
  }
  printf("  chunks     %lld: %lld filed, %lld already filed\n", (long long)rf->run.chunks,
         (long long)rf->filed, (long long)rf->already);
  printf("  warehouse  %s: grew by %lld bytes on disk during this import (%llu in all)\n",
         warehouse, (long long)grew, (unsigned long long)bytes_after);
  printf("  time       %.2f s (%.0f events/s)\n", secs, rate);
}
