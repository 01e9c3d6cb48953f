/*
** progress.h -- a one-line progress bar on stderr, for the importers.
**
** Drawn only when stderr is a terminal and -q was not given: in pipes, logs
** and tests nothing is written, so output stays clean and diffable.  Redraws at most ten times a
** second, so calling progress_update() per item is cheap.
**
**   progress pg;
**   progress_begin(&pg, "filing", total);
**   for(...){ ...; progress_update(&pg, done); }
**   progress_end(&pg);      (erases the bar)
*/
#ifndef FNT_PROGRESS_H
#define FNT_PROGRESS_H

#include <stdint.h>

typedef struct progress {
  int active;              /* 0: not a terminal, every call is a no-op */
  const char *label;       /* not copied: must outlive the bar */
  uint64_t total;          /* 0: unknown, shows the count only */
  uint64_t done;
  int64_t start_ms, last_ms;
} progress;

/* Starts a bar labelled `label` for `total` units (0 = unknown). */
void progress_begin(progress *pg, const char *label, uint64_t total);
/* Sets the units done so far; redraws when 100 ms have passed. */
void progress_update(progress *pg, uint64_t done);
/* Changes the label and total of a running bar (next stage), redrawing. */
void progress_stage(progress *pg, const char *label, uint64_t total);
/* Erases the bar's line. */
void progress_end(progress *pg);

#endif /* FNT_PROGRESS_H */
