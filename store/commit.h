/*
** commit.h -- the commit protocol (commit.c), shared by filing (commit.c)
** and compaction (compact.c).  FORMAT.md, "Committing", gives the steps.
*/
#ifndef FNT_COMMIT_H
#define FNT_COMMIT_H

#include "internal.h"

/* A segment file to add: its bytes, its folder, and its manifest entry
** (entry.path and file_size are set when it is written). */
typedef struct fnt_pending {
  fnt_entry entry;
  fnt_buf bytes;
  char *part_dir;
} fnt_pending;

/* What one commit adds and drops, and when it has nothing to do. */
typedef struct fnt_commit {
  const char *operation;
  char summary[512];
  fnt_pending *files;        /* to add */
  size_t n_files;
  char **removed;            /* paths of listed files it drops (sorted here) */
  size_t n_removed;
  /* Filing: is (run_id, chunk) (chunk < 0: the profile run_id) filed? */
  const char *run_id, *repo;
  int64_t chunk;
  /* Instead of that check, when set: 1 nothing to do, 0 go on, < 0 error. */
  int (*check)(fnt_store *st, const fnt_snapshot *s, void *ctx);
  void *ctx;
  /* Out: the repo's run-row and profile files not yet merged by
  ** compaction, in the snapshot the commit was published on. */
  size_t n_small;
  /* Derived files (filing's calls), made against the snapshot the commit
  ** builds on: derive() appends them to files[] and the files they
  ** supersede to removed[]; fingerprint() tells whether a newer snapshot
  ** changed what they derive from, and then they are made again. */
  int (*derive)(fnt_store *st, fnt_snapshot *base, struct fnt_commit *q,
                uint64_t *fingerprint);
  uint64_t (*fingerprint)(const fnt_snapshot *s, const struct fnt_commit *q);
  size_t n_fixed;            /* files[0..n_fixed) are not derived */
  /* When set: called once the derivation is made, before any file is
  ** written; waits for fixed files that a worker thread encodes and
  ** writes (filing's events; those with entry.path set are not written
  ** again).  FNT_OK or a negative code (reported). */
  int (*ready)(fnt_store *st, struct fnt_commit *q);
  /* Out: 1 once a snapshot holding the files is visible (even when the
  ** commit then fails): files written before the commit took them are
  ** the caller's to remove unless it is set. */
  int published;
} fnt_commit;

/* Frees the derived files (bytes, paths; removing those written) and the
** removed list of a derivation. */
void fnt_commit_underive(fnt_store *st, fnt_commit *q);

/* Writes the files and publishes them (and the drops) as one snapshot,
** retrying lost races.  @return 1 committed, 0 nothing to do (already
** filed), or a negative code.  Files written by a commit that does not
** publish are removed (best effort). */
int fnt_commit_run(fnt_store *st, fnt_commit *q);

/* Frees the pending files' bytes and paths (not q->files itself). */
void fnt_commit_clear(fnt_commit *q);

#endif /* FNT_COMMIT_H */
