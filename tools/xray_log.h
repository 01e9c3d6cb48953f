/*
** xray_log.h -- reads an LLVM XRay log (basic or FDR mode) into one array of
** function events in time order, without llvm-xray.
**
** The byte layouts are those written by compiler-rt's XRay runtime (clang 14
** and newer) and read by llvm/lib/XRay (Trace.cpp, FDRRecordProducer.cpp,
** RecordInitializer.cpp, FDRTraceExpander.cpp); /work/shared/IMPORT-NOTES.md
** sums them up.  Custom and typed events and call arguments are skipped:
** only function entries and exits become events.
*/
#ifndef FNT_XRAY_LOG_H
#define FNT_XRAY_LOG_H

#include <stddef.h>
#include <stdint.h>

typedef struct xray_event {
  uint64_t tsc;       /* absolute TSC ticks (ns when the runtime had no TSC) */
  uint32_t tid;       /* thread id, 32-bit as the LLVM reader has it */
  int32_t  func_id;   /* xray function id: 1-based index of xray_instr_map */
  uint8_t  kind;      /* FNT_KIND_ENTRY (also enter-with-argument), _EXIT, _TAIL_EXIT */
} xray_event;

typedef struct xray_log {
  int      version;         /* header version: basic 1-3, FDR 1-5 */
  int      fdr;             /* 0 basic mode, 1 FDR mode */
  uint64_t cycle_frequency; /* ticks per second; 0 = unknown (ticks are ns) */
  int      has_walltime;    /* an FDR Walltime record holding an epoch time
                            ** was seen (compiler-rt 14 writes CLOCK_MONOTONIC
                            ** there, time since boot: not counted) */
  int64_t  walltime_micros; /* the earliest such Walltime, µs since the epoch */
  xray_event *events;       /* owned; in seq_no order (see xray_log_read) */
  size_t   n_events;
  size_t   n_threads;       /* distinct thread ids */
  uint64_t first_tsc;       /* smallest TSC of any event (0 when none) */
  uint64_t last_tsc;        /* largest */
} xray_log;

/* Reads the whole log at `path` into *log (every field set), in memory
** (the tests' and fuzzer's way; the importer streams, below).  Nothing is
** accepted partially: a malformed or truncated log fails with a message
** naming the byte offset ("offset 4128: truncated function record").
**
** Order of log->events: each thread's records are kept in the order the
** runtime wrote them within a block (a basic-mode run of one thread's
** records, an FDR NewBuffer..NewBuffer span); each thread's blocks are
** sorted by their first TSC; the threads are then merged by TSC, ties
** going to the record that comes first in the file.  So a thread's events
** are never reordered among themselves, and the order is deterministic.
** @return 0, or -1 with a message in err (log left empty). */
int xray_log_read(const char *path, xray_log *log, char *err, size_t errlen);

/* The same log read in two passes and bounded memory, for logs of any
** size: xray_stream_open() reads and checks the whole log (as
** xray_log_read, with the same messages) and fills *log except `events`,
** keeping only an index of its blocks (32 bytes a thread buffer); then
** xray_stream_read() hands out the events in the same order, decoding them
** as the merge reaches them, read with pread into a buffer a thread (8 MiB
** in all).  The first pass reads the file through a window of 256 KiB,
** so the reader's RSS stays a few tens of MiB whatever the log's size.
** @return 0 and *out (close with xray_stream_close), or -1 with a message
**         in err (*out NULL, log left empty). */
typedef struct xray_stream xray_stream;

/* What the first pass reports as it goes (hooks and members may be NULL):
** `tick` now and then, with the bytes read so far (a progress bar); `event`
** each event, in file order (checks that need every event before anything
** is filed, such as the binary's). */
typedef struct xray_hooks {
  void (*tick)(void *arg, uint64_t bytes);
  void (*event)(void *arg, int32_t func_id, uint8_t kind);
  void *arg;
} xray_hooks;

int xray_stream_open(const char *path, xray_log *log, xray_stream **out,
                     const xray_hooks *hooks, char *err, size_t errlen);
/* Up to max next events into out; returns how many (0 at the end, or when
** the file can no longer be read: see xray_stream_error). */
size_t xray_stream_read(xray_stream *s, xray_event *out, size_t max);
/* NULL, or why xray_stream_read stopped before the end ("offset N: the log
** became shorter while it was read"), in the err buffer given to open. */
const char *xray_stream_error(const xray_stream *s);
/* Closes the log and frees the index.  NULL ok. */
void xray_stream_close(xray_stream *s);

/* Nanoseconds from the run's first event to `tsc`, with the header's cycle
** frequency (frequency 0: ticks are taken as ns). */
uint64_t xray_log_ns(const xray_log *log, uint64_t tsc);

/* Frees log->events; the struct may be reused.  NULL ok. */
void xray_log_free(xray_log *log);

#endif /* FNT_XRAY_LOG_H */
