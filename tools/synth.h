/*
** synth.h -- a deterministic synthetic function trace, for `fnt bench`.
**
** The same (events, threads, functions, seed) always gives the same events,
** so every system the benchmark compares files exactly the same trace, each
** regenerating it in its own process rather than holding it in memory
** (100M events would not fit).  The trace looks like an XRay log of a
** C++ program: per thread, properly nested calls (mean depth about 13, at
** most SYNTH_MAX_DEPTH) with some recursion; Zipf-like popularity over the
** functions; 40-80-character mangled symbols, about 70% of them with a
** stable_id; t_ns gaps of tens to thousands of ns on one clock; one seq_no
** across the interleaved threads (t_ns grows with seq_no).
*/
#ifndef FNT_SYNTH_H
#define FNT_SYNTH_H

#include <stddef.h>
#include <stdint.h>
#include "fnt_store.h"

#define SYNTH_MAX_DEPTH 64

typedef struct synth_config {
  uint64_t events;      /* events of the whole run */
  uint32_t threads;     /* >= 1 */
  uint32_t functions;   /* >= 1 */
  uint64_t seed;
} synth_config;

typedef struct synth_stats {
  uint64_t events;      /* generated so far */
  uint64_t entries, recursive_entries, tail_exits;
  double   mean_depth;  /* stack depth after each entry, averaged */
  int      max_depth;
  uint64_t last_t_ns;
} synth_stats;

typedef struct synth synth;

/* A new generator, positioned at the first event.  NULL when out of memory. */
synth *synth_new(const synth_config *cfg);
void synth_free(synth *s);

/* The function table every event indexes; owned by `s`.  The same for every
** chunk, so a chunk may pass all of it (the store counts only those used). */
const fnt_function *synth_functions(const synth *s, size_t *n);

/* Writes the next events (at most `max`) to `out`, in seq_no order.
** @return how many; 0 once all cfg->events have been generated. */
size_t synth_next(synth *s, fnt_event *out, size_t max);

void synth_stats_get(const synth *s, synth_stats *out);

#endif /* FNT_SYNTH_H */
