/*
** synth.h -- a deterministic synthetic function trace, for `fnt bench`.
**
** The same (events, threads, functions, seed, shape) always gives the same
** events, so every system the benchmark compares files exactly the same
** trace, each regenerating it in its own process rather than holding it in
** memory (100M events would not fit).  The trace looks like an XRay log of
** a C++ program: per thread, properly nested calls with some recursion;
** 40-80-character mangled symbols, about 70% of them with a
** stable_id; t_ns gaps of tens to thousands of ns on one clock; one seq_no
** across the interleaved threads (t_ns grows with seq_no).
**
** Two shapes of calls.  SYNTH_FLAT: a random walk of mean depth about 13
** (at most SYNTH_MAX_DEPTH) where each entry picks any function by Zipf-like
** popularity, so nearly every call has a stack of its own, the worst case
** for folded stacks.  SYNTH_TREE: a program's fixed call tree, each
** function with a fixed small set of callees (its children in the tree,
** a few shared leaf utilities, itself for some recursive leaves), depth at
** most SYNTH_TREE_MAX_DEPTH; its distinct stacks are bounded by the tree,
** whatever the number of events.
*/
#ifndef FNT_SYNTH_H
#define FNT_SYNTH_H

#include <stddef.h>
#include <stdint.h>
#include "fnt_store.h"

#define SYNTH_MAX_DEPTH 64
#define SYNTH_TREE_MAX_DEPTH 24

typedef enum synth_shape { SYNTH_FLAT, SYNTH_TREE } synth_shape;

typedef struct synth_config {
  uint64_t events;      /* events of the whole run */
  uint32_t threads;     /* >= 1 */
  uint32_t functions;   /* >= 1 */
  uint64_t seed;
  synth_shape shape;
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

/* "flat" or "tree"; synth_shape_parse gives -1 for any other name. */
const char *synth_shape_name(synth_shape shape);
int synth_shape_parse(const char *name);

#endif /* FNT_SYNTH_H */
