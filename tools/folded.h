/*
** folded.h -- a run's folded stacks (fnt_flame's rows, SPEC §8) handed
** one at a time to a caller, in bounded memory: `fnt export --format
** folded|pprof`.
*/
#ifndef FNT_FOLDED_H
#define FNT_FOLDED_H

#include <stddef.h>
#include <stdint.h>

#include "fnt_store.h"

/* One row: the stack's text (len bytes, NUL-terminated, valid during the
** call), its self time and calls, and its inclusive time when the fold
** knows it (on disk), else -1 (a caller adds its rows' self times by
** prefix).  @return 0 to go on, else the value folded_each() stops with. */
typedef int (*folded_row_fn)(void *ctx, const char *stack, size_t len,
                             int64_t self_ns, int64_t calls, int64_t incl_ns);

/* Calls `row` once per row of fnt_flame(run [, w]).  The rows are
** fnt_flame_compute()'s, in its order (strcmp of the stacks), when
** folding them takes at most `mem` bytes; past that they are folded on
** disk (temporary files in $TMPDIR, else /tmp) in about `mem` bytes, and
** come in the order their stacks are first entered, by thread.  With
** keep > 0, a fold on disk hands out only the `keep` stacks of greatest
** inclusive time (and any tied with the last of them): a caller's stack is
** at least as thick as its callees', so every stack handed out comes with
** its callers; *dropped (when not NULL) counts the others.
** @return 0; a non-zero value of `row`; or -1 after printing the error
** (prefixed with `cmd`) to stderr. */
int folded_each(const char *cmd, fnt_store *st, fnt_snapshot *snap, const char *run,
                const fnt_flame_window *w, size_t mem, size_t keep, uint64_t *dropped,
                folded_row_fn row, void *ctx);

#endif /* FNT_FOLDED_H */
