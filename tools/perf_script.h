/*
** perf_script.h -- folds the text of `perf script` into per-symbol totals.
**
** Pure: it reads one FILE* and touches nothing else, so the importer
** (import_perf.c) and the unit tests (test/unit/test_perf_script.c) drive
** it the same way.  The text it expects, and what it makes of it:
**
**   # captured on    : Wed Dec  2 13:55:15 2026     (optional, --header)
**   xz  4721   376.850539:     500000 cpu-clock:ppp:
**   \t    14f02 intel_check_word.constprop.0+0x122 (/usr/lib/ld-linux.so.2)
**   \t1e00000000 [unknown] ([unknown])
**   <blank line: the sample ends>
**
** A sample header is `comm tid [cpu] time: period event:` (comm may hold
** spaces; tid may be `pid/tid`; the event may carry modifiers); frames
** follow leaf first, one per line, `<hex ip> <symbol>[+0x<off>] (<dso>)`.
** Samples recorded without -g carry their one frame on the header line.
** Lines starting with '#' are header comments, and so is every line of
** the block that `--header` frames with "# ========" lines (a recorded
** command line may span several).  An indented line that does not start
** with a hex address right after a frame is a srcline continuation
** (`perf script -F +srcline`) and is skipped.  A sample with no frame
** counts in `samples` and `profile_ns` only (see perf_script_add_leaves).
**
** Folding, per symbol:
**   self_samples / self_ns    samples whose leaf frame is the symbol, and
**                             the sum of their periods;
**   total_samples / total_ns  samples with the symbol anywhere in the chain,
**                             counted once per sample however often it
**                             recurs (as `perf report --children` does).
** Names: the dso is split off at the last " (" (precisely: at the " ("
** whose '(' balances the line's final ')', so that a dso path holding
** " (" stays whole); a trailing "+0x<hex>" is stripped; nothing else
** (memcmp@plt, x@@GLIBC_2.2.5, f.isra.0 and C++ names with spaces are
** kept whole).  `(inlined)` frames are frames of the
** inlined function.  A frame perf could not symbolise is named
** "[unknown] (<dso file name>)", e.g. "[unknown] (liblzma.so.5.4.1)", so
** that unsymbolised code stays attributed to its library; with no dso
** either (garbage addresses past a broken frame-pointer chain) it is
** plain "[unknown]".
*/
#ifndef FNT_PERF_SCRIPT_H
#define FNT_PERF_SCRIPT_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

typedef struct perf_symbol {
  char   *name;
  int64_t self_ns, total_ns;
  int64_t self_samples, total_samples;
  int64_t last_sample;      /* private: the last sample that counted it in total */
} perf_symbol;

typedef struct perf_profile {
  perf_symbol *symbols;     /* in order of first appearance */
  size_t       n_symbols;
  int64_t      samples;     /* sample headers read */
  int64_t      profile_ns;  /* sum of the periods of all samples */
  char        *event;       /* the event of the samples ("cpu-clock:ppp"), NULL when none */
  char        *top_comm;    /* the comm with the most samples (first on ties), NULL when none */
  int64_t      ts_micros;   /* recording time from the --header comments, -1 when absent */
  int64_t      lines;       /* lines read */
  uint64_t     text_hash;   /* XXH3-64 of every byte read */
  int64_t     *empty_samples;  /* numbers (0-based, ascending) of the samples */
  int64_t     *empty_periods;  /* whose call chain came out empty, their periods */
  size_t       n_empty;
} perf_profile;

/* Reads `in` to its end and folds it.  `name` is used in messages only.
** On success *out is a new profile (free with perf_profile_free) and 0 is
** returned.  On failure *out is NULL, -1 is returned and `err` holds
** "NAME:LINE: what" (malformed text), or "NAME: what" (read error, no
** memory).  A profile of several events is refused: their periods do not
** add up. */
int perf_script_fold(FILE *in, const char *name, perf_profile **out,
                     char *err, size_t errlen);

/* When perf cannot follow a call chain (an entry that is neither an
** address nor a context marker, as broken frame-pointer stacks give), it
** drops the whole chain: `perf script` prints the sample with no frame,
** while `perf report` still counts the sample's own ip, self and total.
** To count them the same way, `in` is the output of `perf script -G`
** (one line per sample, its ip's frame on it) of the same recording: the
** frame of each sample listed in p->empty_samples is counted as its leaf.
** The samples are matched by their order, so both passes must read the
** same data with the same options.  0 ok, -1 with `err` as
** perf_script_fold(), and `p` then partly updated: free it. */
int perf_script_add_leaves(perf_profile *p, FILE *in, const char *name,
                           char *err, size_t errlen);

/* Frees a profile; NULL is a no-op. */
void perf_profile_free(perf_profile *p);

#endif /* FNT_PERF_SCRIPT_H */
