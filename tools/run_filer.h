/*
** run_filer.h -- files a run's events chunk by chunk as an importer
** streams them (import-xray, import-chrome): one chunk of events in memory,
** each chunk its own fnt_file_chunk() commit, so an import killed midway
** and run again files every chunk exactly once.
**
**   run_filer rf;
**   run_filer_begin(&rf, st, &run, chunk_events, "import-x", path, &pg);
**   f = run_filer_function(&rf, &fn);            (each new function)
**   run_filer_event(&rf, t_ns, thread, f, kind);  (each event, in seq_no order)
**   run_filer_end(&rf);
**   run_filer_free(&rf);
**
** Events get seq_no 0, 1, 2... in the order given; each chunk passes the
** run's functions, in the order they were added (the store keeps those
** the chunk uses, in that order: fnt_file_chunk).  Errors are printed
** ("fnt CMD: INPUT: chunk 3 of 9: ...") and returned as -1.
**
** Test hook: FNT_TEST_KILL_AFTER_CHUNK=k makes the process _exit(137)
** right after chunk k has been filed, as a kill -9 there would.
*/
#ifndef FNT_RUN_FILER_H
#define FNT_RUN_FILER_H

#include <stddef.h>
#include <stdint.h>

#include "fnt_store.h"
#include "progress.h"

typedef struct run_filer {
  fnt_store *st;
  const char *cmd, *input;    /* for messages */
  fnt_chunk run;              /* the run's fields, copied by begin */
  size_t chunk_events;
  fnt_event *ev;              /* the chunk being filled */
  size_t n_ev;
  fnt_function *fn;           /* the run's functions, passed whole with
                              ** each chunk: the store keeps those the
                              ** chunk uses, in this order, so chunks of
                              ** one set of functions write one table */
  size_t n_fn, cap_fn;
  uint64_t seq;
  int64_t chunk, filed, already, kill_after;
  progress *pg;
} run_filer;

/* Starts filing the run described by `run` (repo, commit, run_id,
** ts_micros, target, source, chunks, total_events, duration_ns, threads,
** binaries_json; the strings must outlive the filer).  A run already filed
** under another repo, or under another cut (other chunks or total_events),
** is refused: a re-import files the same chunks of the same run.  0, or -1
** (reported). */
int run_filer_begin(run_filer *rf, fnt_store *st, const fnt_chunk *run,
                    size_t chunk_events, const char *cmd, const char *input,
                    progress *pg);

/* Adds a function to the run (the struct is copied, not its strings);
** returns its index for run_filer_event, or -1 (reported). */
int64_t run_filer_function(run_filer *rf, const fnt_function *fn);

/* Files the chunk filled so far (run_filer_event calls it when full).
** 0, or -1. */
int run_filer_flush(run_filer *rf);

/* Adds the next event; files the chunk when it is full.  0, or -1.
** Inline: it runs once per event of the run. */
static inline int run_filer_event(run_filer *rf, uint64_t t_ns, uint32_t thread,
                                  uint32_t function, uint8_t kind){
  fnt_event *e;
  if( rf->n_ev==rf->chunk_events && run_filer_flush(rf) ) return -1;
  e = &rf->ev[rf->n_ev++];
  e->seq_no = rf->seq++;
  e->t_ns = t_ns;
  e->thread = thread;
  e->function = function;
  e->kind = kind;
  return 0;
}

/* Files the last chunk (an empty one for a run without events) and checks
** that the run got the chunks it announced.  0, or -1. */
int run_filer_end(run_filer *rf);

/* Frees the buffers (the run's functions too).  Safe after a failed begin. */
void run_filer_free(run_filer *rf);

/* The importers' summary ends alike: the chunks filed, what this import
** added to the warehouse (bytes_before: cli_disk_usage before filing), the
** time since t0 (run_filer_clock).  As text lines, or with cli_g.json as
** members of the caller's JSON object (between cli_json_begin and _end). */
void run_filer_report(const run_filer *rf, const char *warehouse,
                      uint64_t bytes_before, double t0);

/* A monotonic clock in seconds, for the importers' "time" lines. */
double run_filer_clock(void);


#endif /* FNT_RUN_FILER_H */
