/*
** calls.h -- the calls of a run (SPEC §7) inside the store: the replay that
** derives them (replay.c), the run's function table (fntab.c), calls
** segment files (segment_write.c / segment_read.c), deriving the calls a
** filing changes (derive.c), and reading them back (calls.c, account.c,
** heat.c).  FORMAT.md, "Calls", gives the bytes and the invariants.
*/
#ifndef FNT_CALLS_H
#define FNT_CALLS_H

#include "internal.h"

/* ---- fntab.c: the functions of one derivation or read, interned.
** A function is a (symbol, stable_id) pair; its key is the stable_id, or
** "?" followed by the symbol.  Ids are dense from 0. */
typedef struct fnt_fntab {
  fnt_function *fn;       /* strings in `text` */
  uint32_t *key;          /* per function: its key id */
  char **keys;            /* per key id: the key text (in `text`) */
  struct fnt_fntab_text *text;   /* the texts' blocks, newest first */
  uint32_t nfn, nkey, capfn, capkey;
  uint32_t *fnslot, fnmask;    /* open addressing: id+1, 0 = empty */
  uint32_t *keyslot, keymask;
} fnt_fntab;

void fnt_fntab_clear(fnt_fntab *t);
/* The id of (symbol, stable_id) ("" stable_id = NULL), added when new.
** @return FNT_OK or FNT_E_NOMEM. */
int fnt_fntab_intern(fnt_fntab *t, const char *symbol, const char *stable_id,
                     uint32_t *id);
/* The same, keeping pointers to symbol and stable_id rather than copies
** (a key "?symbol" is still built): the caller keeps the texts alive as
** long as the table. */
int fnt_fntab_intern_borrowed(fnt_fntab *t, const char *symbol,
                              const char *stable_id, uint32_t *id);
/* The id of key text `key` (a function's key), added when new: a key
** may be named before any function of it is.  @return FNT_OK or
** FNT_E_NOMEM. */
int fnt_fntab_intern_key(fnt_fntab *t, const char *key, uint32_t *id);
/* Room for n more functions (and keys) without growing.  @return FNT_OK
** or FNT_E_NOMEM. */
int fnt_fntab_reserve(fnt_fntab *t, uint32_t n);

/* ---- heat.c: a run's per-key sums (SPEC §5), over a function table that
** may be kept across runs so that each run interns only what is new. */
typedef struct fnt_run_sums {
  fnt_fntab tab;
  uint64_t *incl, *self, *calls;   /* per key id */
  uint32_t *first;        /* per key id: its first function in the run + 1 */
  uint32_t nkey;
  uint32_t *ids, nids;    /* the last file's functions' ids in tab */
  uint64_t ids_hash[2];   /* and that file's func_hash */
  struct fnt_segment *held;   /* whose function table tab borrows texts of */
} fnt_run_sums;

/* Replaces the sums of s by those of `run_id` (keys it lacks: 0).
** @return FNT_OK or a negative code (the error set). */
int fnt_run_sums_add(fnt_snapshot *snap, const char *run_id, fnt_run_sums *s);
/* The symbol of key k's first function in the last run summed ("" none). */
const char *fnt_run_sums_symbol(const fnt_run_sums *s, uint32_t k);
void fnt_run_sums_clear(fnt_run_sums *s);

/* ---- replay.c */
/* One call as the replay produces it. */
typedef struct fnt_callrec {
  int64_t call_id, parent_id;   /* parent_id -1 at depth 0 */
  int64_t start, end, self;
  uint32_t thread;              /* thread id */
  uint32_t fn;                  /* fnt_fntab id */
  uint32_t parent_fn;           /* the parent's; UINT32_MAX at depth 0 */
  uint32_t depth;
  uint32_t node;                /* its stack in the replay's fnt_stacktab */
  uint8_t ended_by, outermost;
} fnt_callrec;

typedef struct fnt_callvec {
  fnt_callrec *a;
  size_t n, cap;
} fnt_callvec;
int fnt_callvec_push(fnt_callvec *v, const fnt_callrec *c);   /* 0 or NOMEM */
int fnt_callvec_reserve(fnt_callvec *v, size_t n);            /* 0 or NOMEM */
void fnt_callvec_free(fnt_callvec *v);

typedef struct fnt_replay fnt_replay;

/* A replay over the functions of `tab` (which must outlive it).  Calls
** that end are appended to `out`. */
fnt_replay *fnt_replay_new(const fnt_fntab *tab, fnt_callvec *out);
void fnt_replay_free(fnt_replay *r);
/* Keeps each frame's stack as a node of `t` (parent + 1, fnt_fntab id),
** the nodes numbered in the order frames are first entered (a parent
** before its children); calls carry theirs in `node`.  The replay stops
** keeping them (fnt_replay_kept_stacks 0) when they would not fold. */
struct fnt_stacktab;
void fnt_replay_keep_stacks(fnt_replay *r, struct fnt_stacktab *t);
int fnt_replay_kept_stacks(const fnt_replay *r);

/* Feeds one event (in seq_no order).  @return FNT_OK or FNT_E_NOMEM. */
int fnt_replay_event(fnt_replay *r, uint32_t thread, int64_t seq, int64_t t,
                     uint32_t fn, int kind);

/* Restores an open frame written by a previous derivation (its 'open'
** row), frames of a thread in depth order.  @return FNT_OK or a code. */
int fnt_replay_resume(fnt_replay *r, const fnt_callrec *open_row,
                      int64_t dur_of_frame_above);

/* Appends the frames still open as 'open' calls to `out`, ending each at
** its thread's last event (the state is left as it was).  @return FNT_OK
** or FNT_E_NOMEM. */
int fnt_replay_open_calls(fnt_replay *r, fnt_callvec *out);

/* ---- segment_write.c: a calls segment.  closed[] and open[] are
** sorted here; the function ids index `tab`.  two_threads: encode the
** row groups in two parts on two threads (the same bytes). */
typedef struct fnt_calls_bounds {
  int64_t t_min, t_max;    /* smallest start, largest end of every row */
  int64_t call_min, call_max;
} fnt_calls_bounds;
int fnt_segment_write_calls(const char *repo, const char *commit,
                            const char *run_id, const fnt_fntab *tab,
                            fnt_callvec *closed, fnt_callvec *open,
                            struct fnt_stacktab *stacks, int two_threads,
                            fnt_buf *out, fnt_calls_bounds *bounds);

/* ---- lod.c: a calls segment's level-of-detail chunk (FORMAT.md).
** Writing: each row group's rows as segment_write.c holds them (thread
** and function indexes), with the raw byte offset in the start_ns,
** call_id and dur_ns chunks of each block's first row. */
typedef struct fnt_lod_rows {
  const uint64_t *thr, *cid, *sta, *dur, *fn;
  const uint64_t *off_sta, *off_cid, *off_dur;   /* per block */
} fnt_lod_rows;
typedef struct fnt_lod_writer {
  uint32_t *slot;           /* per thread index: its entry in the rows summed */
  struct fnt_lod_ent *ent;  /* a group's entries, one per thread at most */
  fnt_buf parts, lens;      /* the groups' parts, their lengths */
  uint32_t ngroups;
  int summed;               /* 1 (init): each part begins with the group's
                            ** summary (section tag 3); 0: tag 2's layout,
                            ** which readers still read (tests write it) */
} fnt_lod_writer;
int fnt_lod_writer_init(fnt_lod_writer *w, uint32_t nthreads); /* 0 or NOMEM */
void fnt_lod_writer_clear(fnt_lod_writer *w);
/* Appends the part of the next row group, of m >= 1 rows. */
void fnt_lod_write_group(fnt_lod_writer *w, const fnt_lod_rows *g, size_t m);
/* Appends the groups of `next` (a writer of the same layout) after w's. */
void fnt_lod_writer_append(fnt_lod_writer *w, const fnt_lod_writer *next);
/* The chunk's raw bytes into raw (raw->failed when out of memory). */
void fnt_lod_finish(fnt_lod_writer *w, fnt_buf *raw);

/* Reading: the chunk of one segment, loaded whole (reused from file to
** file), then a row group's blocks in order through an iterator, each
** block's entries (one per thread of the block, by thread index) after
** it.  Every count, index and bound read is checked: a malformed chunk
** gives -1, never a wrong figure that the checks could see. */
typedef struct fnt_lod {
  fnt_buf raw;
  size_t *part, body;       /* per row group its part's offset after body */
  uint32_t rows;            /* per block */
  int summed;               /* parts begin with the group's summary */
  uint64_t serial;          /* the segment loaded (its serial), 0 none */
} fnt_lod;
typedef struct fnt_lod_block {
  size_t row, nrows;        /* rows [row, row+nrows) of the group */
  int64_t first, last;      /* smallest and largest start_ns */
  int64_t call_id;          /* of the first row */
  uint64_t off[3];          /* first row's bytes in start_ns, call_id, dur_ns */
} fnt_lod_block;
typedef struct fnt_lod_entry {
  uint32_t thread, fn;      /* thread index; function index of the longest */
  uint64_t calls;
  int64_t dur, call_id, start;    /* the longest call (ties: smallest id) */
} fnt_lod_entry;
typedef struct fnt_lod_iter {
  fnt_rd r;
  size_t rows, n, row;
  uint32_t nthreads, nfuncs;
  uint64_t sta, cid, off[3];
  fnt_lod_block b;
  uint64_t e_left, e_thread, e_calls;
  int e_first;
} fnt_lod_iter;
/* @return FNT_OK or a code (message set). */
int fnt_lod_load(struct fnt_store *st, const struct fnt_segment *seg,
                 fnt_buf *scratch, fnt_lod *l);
void fnt_lod_clear(fnt_lod *l);
/* Starts reading row group rg.  @return 1: its summary is in *g (rows,
** start bounds and first call_id of the whole group), its entries next,
** then its blocks; 0: the chunk has no summaries (tag 2), its blocks
** next; -1 malformed. */
int fnt_lod_group(const fnt_lod *l, const struct fnt_segment *seg,
                  uint32_t rg, fnt_lod_iter *it, fnt_lod_block *g);
/* 1 a block (its entries next), 0 the group's end, -1 malformed. */
int fnt_lod_next_block(fnt_lod_iter *it, fnt_lod_block *b);
/* 1 an entry, 0 the block's (or the summary's) end, -1 malformed. */
int fnt_lod_next_entry(fnt_lod_iter *it, fnt_lod_entry *e);
int fnt_lod_skip_entries(fnt_lod_iter *it);      /* 0 or -1 */

/* ---- calls_order.c: a calls segment's row order of `v`, by (depth,
** start, thread, call_id), as indexes into v->a in *order (a new
** allocation); `threads` is the sorted dictionary of its threads.
** @return FNT_OK or FNT_E_NOMEM. */
int fnt_calls_order(const fnt_callvec *v, const uint64_t *threads,
                    uint32_t nthreads, uint32_t **order);

/* ---- stacks.c: a calls segment's stacks chunk (its raw bytes) from the
** replay's `stacks` (NULL: none kept), the functions numbered by fnIdx;
** the calls and self of closed[] are added to their nodes.  Nothing is
** written when the nodes would not fold the file's `nrows` rows
** (segment.h).  @return FNT_OK or NOMEM. */
int fnt_calls_stacks_write(const fnt_callvec *closed, struct fnt_stacktab *stacks,
                           size_t nrows, const uint32_t *fnIdx, fnt_buf *out);

/* ---- derive.c: the calls a filing adds and drops. */
struct fnt_commit;
typedef struct fnt_derive_in {
  const char *repo, *commit, *run_id;
  int64_t chunk;
  const fnt_event *ev;          /* the new chunk's events, in seq_no order */
  size_t n;
  const fnt_function *fns;      /* indexed by fnt_event.function */
} fnt_derive_in;

/* Derives, against `base`, the calls files that filing `in` makes, as
** pending files appended to q->files (from index q->n_files), and the
** calls files it supersedes in q->removed.  Records what it derived from
** in *fingerprint.  @return FNT_OK or a negative code. */
int fnt_derive_calls(fnt_store *st, fnt_snapshot *base,
                     const fnt_derive_in *in, struct fnt_commit *q,
                     uint64_t *fingerprint);
/* Derives every call of `run_id` in `s` again, into one pending calls
** file (compaction).  f->entry.repo is a new allocation (the caller's),
** f->entry.run_id is borrowed.  @return FNT_OK or a negative code. */
struct fnt_pending;
int fnt_derive_run_calls(fnt_store *st, fnt_snapshot *s, const char *run_id,
                         struct fnt_pending *f);
/* What a derivation for `run_id` against `s` depends on. */
uint64_t fnt_derive_fingerprint(const fnt_snapshot *s, const char *run_id);

/* ---- calls.c: a row group of a calls segment, decoded into arrays of
** FNT_CALLS_RG_ROWS (one allocation, freed with fnt_free(g->thr)). */
typedef struct fnt_calls_rows {
  size_t n;
  uint64_t *thr, *cid, *par, *dep, *sta, *dur, *slf, *fn, *flg;
} fnt_calls_rows;
/* Which columns to decode (the others keep what they held). */
#define FNT_CR_THREAD  0x001   /* thr: thread dictionary index */
#define FNT_CR_CALL_ID 0x002
#define FNT_CR_PARENT  0x004
#define FNT_CR_DEPTH   0x008
#define FNT_CR_START   0x010
#define FNT_CR_DUR     0x020
#define FNT_CR_SELF    0x040   /* needs FNT_CR_DUR */
#define FNT_CR_FN      0x080   /* function table index */
#define FNT_CR_FLAGS   0x100
#define FNT_CR_ALL     0x1ff
int fnt_calls_rows_alloc(fnt_calls_rows *g);   /* FNT_OK or FNT_E_NOMEM */
/* Decodes columns `cols` of row group `rg` of calls segment `seg`.
** @return FNT_OK or FNT_E_CORRUPT (message naming the file). */
int fnt_calls_rows_decode(fnt_store *st, const struct fnt_segment *seg,
                          uint32_t rg, unsigned cols, fnt_buf *scratch,
                          fnt_buf *raw, fnt_calls_rows *g);
/* The same for rows [from, to) only, into the arrays' rows [from, to):
** the rows before are skipped as cheaply as each encoding lets them be;
** g->n is left as it was. */
int fnt_calls_rows_decode_range(fnt_store *st, const struct fnt_segment *seg,
                                uint32_t rg, unsigned cols, size_t from,
                                size_t to, fnt_buf *scratch, fnt_buf *raw,
                                fnt_calls_rows *g);
/* The rows of row group rg that may overlap [t0, t1]: a group's rows come
** by start_ns, and none lasts longer than its dur_max (FORMAT.md, "Calls
** segments"), so they are rows [*lo, g->n), those that start in
** [t0 - dur_max, t1].  start_ns is decoded for rows [0, g->n), the other
** `cols` for rows [*lo, g->n) only. */
int fnt_calls_rows_window(fnt_store *st, const struct fnt_segment *seg,
                          uint32_t rg, unsigned cols, int64_t t0, int64_t t1,
                          fnt_buf *scratch, fnt_buf *raw, fnt_calls_rows *g,
                          size_t *lo);

/* ---- calls.c: the calls of one run as the scan sees them. */
typedef struct fnt_run_calls {
  const fnt_entry **files;      /* the run's calls files, by seq_max */
  uint64_t *ordinal;            /* each file's place in the snapshot */
  size_t nfiles;
  const fnt_entry *tail;        /* the one whose open rows count */
  int complete;                 /* 0: derive on the fly (format 1 runs) */
} fnt_run_calls;
int fnt_run_calls_find(const fnt_snapshot *s, const char *run_id,
                       fnt_run_calls *out);
void fnt_run_calls_clear(fnt_run_calls *rc);

/* Visits the stored calls of a run (files.complete), a decoded row group
** at a time: the ended calls of every file and the tail's open rows (with
** open_rows, every file's open rows).  Files and row groups are skipped by
** their bounds when they lie outside [t0, t1) and end before t0, or hold no
** call of `thread` (-1: all).  For each row group, rows(ctx, seg, g,
** thread_ix, fnids, calls) gets the columns `cols` (thread_ix: the
** thread's index in seg's dictionary, -1 for all; calls: 0 for the open
** rows of a file other than the tail, which are not calls); fnids, per
** function of seg, starts UINT32_MAX for the callback to fill
** (fnt_calls_fnid).  group(ctx, seg, rg, thread_ix, fnids), when not
** NULL, is given each row group instead, to read itself (of calls only:
** with open_rows 0).  file_end(ctx), when not NULL, follows each file
** visited.  Fields not named are 0.  @return FNT_OK or the first
** negative code. */
typedef struct fnt_calls_visit {
  unsigned cols;
  int64_t t0, t1, thread;
  int open_rows;
  int (*rows)(void *ctx, const struct fnt_segment *seg,
              const fnt_calls_rows *g, int64_t thread_ix, uint32_t *fnids,
              int calls);
  int (*group)(void *ctx, const struct fnt_segment *seg, uint32_t rg,
               int64_t thread_ix, uint32_t *fnids);
  int (*file_end)(void *ctx);
  void *ctx;
} fnt_calls_visit;
int fnt_run_calls_visit(fnt_store *st, const fnt_run_calls *files,
                        const fnt_calls_visit *v);
/* The id in `tab` of function f of seg, interned on first use into
** fnids[f].  @return FNT_OK or FNT_E_NOMEM. */
int fnt_calls_fnid(fnt_fntab *tab, const struct fnt_segment *seg,
                   uint32_t *fnids, uint32_t f, uint32_t *id);

/* Every call of `run_id` in `snap`, in no particular order, to
** each(ctx, c): stored calls through fnt_run_calls_visit (columns `cols`,
** each file's functions interned in `tab` once), a format-1 run's through
** the calls scan.  Fields of columns not asked for are 0, except that
** end - start is always the duration (start 0 without FNT_CR_START);
** parent_fn is not set.  @return FNT_OK or the first negative code. */
int fnt_run_calls_each(fnt_snapshot *snap, const char *run_id, unsigned cols,
                       fnt_fntab *tab,
                       int (*each)(void *ctx, const fnt_callrec *c),
                       void *ctx);

/* Feeds `r` the events of `run_id` in `snap` with seq_no >= from_seq,
** merged in seq_no order with extra[0..nextra) (a chunk being filed, its
** functions `extra_fns`), interning functions in `tab`.  *last_seq gets the
** last seq_no fed (-1 none); *repo and *commit (when not NULL) new copies
** of the run's.  @return FNT_OK or a negative code. */
int fnt_replay_run_events(fnt_snapshot *snap, const char *run_id,
                          int64_t from_seq, const fnt_event *extra,
                          size_t nextra, const fnt_function *extra_fns,
                          fnt_replay *r, fnt_fntab *tab, int64_t *last_seq,
                          char **repo, char **commit);

/* The open rows of calls file `e`, as records (functions interned in tab),
** sorted by thread, then depth. */
int fnt_calls_read_open(fnt_store *st, const fnt_entry *e, fnt_fntab *tab,
                        fnt_callvec *out);

#endif /* FNT_CALLS_H */
