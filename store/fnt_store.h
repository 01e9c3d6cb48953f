/*
** fnt_store.h -- the public interface of the fntrace segment store.
**
** The store is an embedded, in-process columnar store for function traces
** (one row per XRay entry/exit event) and sampled profiles.  A warehouse is
** a directory: immutable, zstd-compressed, xxHash-checked segment files,
** partitioned by run_id (events) or repo (runs, profiles), and an
** Iceberg-style chain of immutable snapshots, each published by one atomic
** link() of the next catalog version.  store/FORMAT.md documents the bytes.
**
** This header knows nothing of SQLite: the SQL extension (ext/) and the
** `fnt` tool (tools/) are both thin layers over it, and a desktop viewer may
** link the store directly.
**
** Conventions (after zstd.h):
**   - every function that can fail returns an int: FNT_OK (0) or a value >= 0
**     documented with it on success, a negative FNT_E... code on failure;
**   - on failure the handle's message (fnt_errmsg) names the file, field or
**     row at fault; fnt_strerror() gives the fixed text of a code;
**   - strings are NUL-terminated UTF-8 (any bytes but NUL); a NULL pointer
**     where a string may be absent means SQL NULL;
**   - every pointer returned by the store stays owned by the store and is
**     valid until the call documented beside it; free/close functions
**     accept NULL.
**   - a fnt_store handle (and what hangs off it) is used by one thread at a
**     time; several handles, threads or processes may share one warehouse.
*/
#ifndef FNT_STORE_H
#define FNT_STORE_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Everything declared here is the shared library's ABI: the store is built
** with hidden visibility, so only these symbols leave libfntstore.so. */
#if defined(__GNUC__)
#pragma GCC visibility push(default)
#endif

#define FNT_VERSION_MAJOR 0
#define FNT_VERSION_MINOR 1
#define FNT_VERSION_PATCH 0
#define FNT_VERSION_STRING "0.1.0"

/* The on-disk format version this library writes (and the newest it reads). */
#define FNT_FORMAT_VERSION 6

/* ------------------------------------------------------------------------
** Error codes.  Stable: their values never change.
*/
#define FNT_OK            0
#define FNT_E_IO        (-1)  /* a system call failed (open, write, fsync, link...) */
#define FNT_E_NOMEM     (-2)  /* the allocator returned NULL */
#define FNT_E_CORRUPT   (-3)  /* a checksum, magic or structure check failed */
#define FNT_E_INVALID   (-4)  /* bad input: a field of a chunk or profile */
#define FNT_E_CONFLICT  (-5)  /* run_id already filed under another repo */
#define FNT_E_NOTFOUND  (-6)  /* no such snapshot, or no warehouse at path */
#define FNT_E_BUSY      (-7)  /* a commit lost the race too many times */
#define FNT_E_FORMAT    (-8)  /* a file of a newer or unknown format version */
#define FNT_E_MISUSE    (-9)  /* an API used out of contract (NULL handle...) */
#define FNT_E_EXPIRED  (-10)  /* the snapshot being read was expired and its
                              ** files removed meanwhile: retry with a new one */
#define FNT_E_LIMIT    (-11)  /* a computation would pass the memory limit it
                              ** was given: nothing is wrong, ask another way */

/* The fixed English text of an error code ("I/O error", ...). */
const char *fnt_strerror(int code);

/* "0.1.0": the library's version. */
const char *fnt_version(void);

/* ------------------------------------------------------------------------
** Allocation.  Every allocation of the store goes through one hook, so that
** tests can fail the Nth allocation and embedders can count memory.
** fnt_set_allocator() is process-wide; call it before opening any store.
** Passing NULL restores malloc/realloc/free.
*/
typedef struct fnt_allocator {
  void *(*xMalloc)(void *opaque, size_t n);
  void *(*xRealloc)(void *opaque, void *p, size_t n);
  void  (*xFree)(void *opaque, void *p);
  void *opaque;
} fnt_allocator;
void fnt_set_allocator(const fnt_allocator *a);

/* ------------------------------------------------------------------------
** Opening a warehouse.
*/
typedef struct fnt_store fnt_store;

#define FNT_OPEN_CREATE 0x1   /* create the directory (and parents) if absent */
/* Never start a thread.  By default fnt_file_chunk() encodes a chunk's
** events on a second thread while it derives the chunk's calls (the same
** bytes either way); that thread allocates through fnt_set_allocator()'s
** hooks too, so a custom allocator must then be thread-safe.  The
** environment variable FNT_THREADS=0 has the effect of this flag on every
** handle. */
#define FNT_OPEN_NO_THREADS 0x2

/* Opens the warehouse at `dir`.  On success *out is a new handle; on failure
** *out is NULL, or a handle whose fnt_errmsg() says why (close it all the
** same).
** FNT_OPEN_CREATE creates a warehouse only in an absent or empty folder (or
** one a crashed creation left with nothing but the warehouse's subfolders):
** a non-empty folder that is not a warehouse is FNT_E_NOTFOUND.
** @return FNT_OK, FNT_E_NOTFOUND (no warehouse and no FNT_OPEN_CREATE, or
**         a folder that is not a warehouse), FNT_E_IO, FNT_E_CORRUPT,
**         FNT_E_FORMAT, FNT_E_NOMEM. */
int fnt_open(const char *dir, int flags, fnt_store **out);

/* Closes a handle; every snapshot and scan taken from it must be released
** before.  NULL is a no-op. */
void fnt_close(fnt_store *st);

/* The memory a handle keeps for manifests that no pinned snapshot lists
** (so that the next snapshot need not read them again): at most `bytes`
** (default FNT_CACHE_BUDGET_DEFAULT).  What the pinned snapshots list is
** kept whatever the budget, so a long-lived handle holds what the newest
** snapshot lists plus the budget, however many snapshots it followed. */
#define FNT_CACHE_BUDGET_DEFAULT ((size_t)8 << 20)
void fnt_set_cache_budget(fnt_store *st, size_t bytes);

/* The parsed footers of segment files a handle keeps, so that reading a
** file again does not parse it again: at most `files` footers and `bytes`
** of them (default FNT_SEGMENT_CACHE_FILES, FNT_SEGMENT_CACHE_BYTES), the
** least recently used out first; files a reader holds stay until it lets
** them go.  The count bounds a handle that reads many small files (a
** viewer polling run rows, an importer); a viewer drawing whole runs again
** and again wants room for every calls file of a run instead: about
** 0.3 MB a file of a million events (`fnt-viewer --cache`). */
#define FNT_SEGMENT_CACHE_FILES 64
#define FNT_SEGMENT_CACHE_BYTES ((size_t)16 << 20)
void fnt_set_segment_cache(fnt_store *st, size_t files, size_t bytes);

/* The warehouse directory as given to fnt_open(); owned by the handle. */
const char *fnt_path(const fnt_store *st);

/* The message of the handle's last failure, naming the file, field or row
** ("events[3]: seq_no 7 repeats events[1]"); "" when the last call succeeded.
** Valid until the next call on the handle. */
const char *fnt_errmsg(const fnt_store *st);

/* ------------------------------------------------------------------------
** Filing.  Each filing is one atomic snapshot commit: after a crash at any
** point either all of it is visible or none of it.  Bad input writes
** nothing and returns FNT_E_INVALID with a message naming the field.
*/

/* Event kinds, as stored. */
#define FNT_KIND_ENTRY     0
#define FNT_KIND_EXIT      1
#define FNT_KIND_TAIL_EXIT 2

/* "entry", "exit", "tail_exit"; NULL for another value. */
const char *fnt_kind_name(int kind);
/* The kind named `name` (exact match), or -1. */
int fnt_kind_from_name(const char *name);

typedef struct fnt_function {
  const char *symbol;     /* required, may be "" */
  const char *stable_id;  /* NULL or "" = unknown (stored as NULL) */
  int local;              /* 1: the function belongs to the traced binary */
} fnt_function;

typedef struct fnt_event {
  uint64_t seq_no;        /* <= INT64_MAX; unique within the chunk */
  uint64_t t_ns;          /* <= INT64_MAX */
  uint32_t thread;
  uint32_t function;      /* index into fnt_chunk.functions */
  uint8_t  kind;          /* FNT_KIND_... */
} fnt_event;

typedef struct fnt_chunk {
  const char *repo;           /* required, non-empty */
  const char *commit;         /* NULL or "" = unknown */
  const char *run_id;         /* required, non-empty */
  int64_t     ts_micros;      /* microseconds since the epoch; < 0 = now */
  const char *target;         /* required */
  const char *source;         /* required: "xray-basic", "xray-fdr", ... */
  int64_t     chunk;          /* 0 <= chunk < chunks */
  int64_t     chunks;
  int64_t     total_events;   /* events in the whole run, >= n_events */
  int64_t     duration_ns;    /* >= 0 */
  int         truncated;      /* 0/1 */
  int64_t     threads;        /* threads of the run, >= the chunk's distinct
                              ** threads; < 0 = distinct threads of this chunk */
  const char *binaries_json;  /* JSON array text; NULL = "[]" */
  /* The functions events index; those unused are left out.  A caller
  ** filing a run in chunks best passes the run's one table with each:
  ** chunks using the same functions then store the same table, which
  ** readers parse once for all of the run's files. */
  const fnt_function *functions;
  size_t      n_functions;
  const fnt_event *events;    /* any order; the store sorts by seq_no */
  size_t      n_events;
} fnt_chunk;

/* Files one chunk of a run: its events (fn_trace_events) and its run row
** (fn_trace_runs), in one commit.  The run row's counts (events,
** mapped_events, functions, mapped_functions, local_functions,
** mapped_local_functions, first_ns, last_ns) are derived here from the
** chunk, as SPEC §4 says.  Idempotent on (run_id, chunk), also across
** processes racing to file it.  The caller's arrays are not modified.
** @return 1 filed, 0 already filed (nothing written), or
**         FNT_E_INVALID (message "events[3]: ..."), FNT_E_CONFLICT (run_id
**         filed under another repo), FNT_E_IO, FNT_E_NOMEM, FNT_E_CORRUPT,
**         FNT_E_BUSY. */
int fnt_file_chunk(fnt_store *st, const fnt_chunk *c);

typedef struct fnt_profile_row {
  const char *symbol;         /* required */
  const char *stable_id;      /* NULL or "" = unknown */
  int64_t self_ns, total_ns, self_samples, total_samples;  /* >= 0 */
} fnt_profile_row;

typedef struct fnt_profile {
  const char *run_id;         /* required, non-empty */
  int64_t     ts_micros;      /* < 0 = now */
  const char *repo;           /* required, non-empty */
  const char *commit;         /* NULL or "" = unknown */
  const char *target;         /* required */
  int64_t     samples;        /* >= 0 */
  int64_t     profile_ns;     /* >= 0 */
  const fnt_profile_row *rows;
  size_t      n_rows;
} fnt_profile;

/* Files one profile (fn_profile rows) in one commit.  Idempotent on run_id.
** @return 1 filed, 0 already filed or no rows (nothing written), or a
**         negative code as fnt_file_chunk(). */
int fnt_file_profile(fnt_store *st, const fnt_profile *p);

/* ------------------------------------------------------------------------
** Maintenance.
*/
typedef struct fnt_compact_stats {
  uint64_t files_before, files_after;   /* files the newest snapshot lists */
  uint64_t files_merged;                /* small files rewritten... */
  uint64_t files_written;               /* ...into these */
  uint64_t rows_rewritten;
} fnt_compact_stats;

/* Merges small segment files, in one snapshot commit ("compact"): per repo
** all run rows into one file and all profiles into one; per run, events
** segments under 256Ki rows into segments of up to 1Mi rows.  Every table
** reads the same rows after as before; older snapshots keep their files.
** Filing stays idempotent (merged files list the chunks they hold).  A
** commit racing with it wins; compaction then does nothing.
** @return 1 compacted, 0 nothing to merge (or lost to a racing commit), or
**         a negative code.  `stats` may be NULL. */
int fnt_compact(fnt_store *st, fnt_compact_stats *stats);

typedef struct fnt_expire_stats {
  uint64_t snapshots_expired, snapshots_kept;
  uint64_t files_removed, bytes_removed;
  /* Files no remaining snapshot lists, kept because they are younger than
  ** the window or an hour: a commit in flight in another process may be
  ** about to publish them (the next expire removes them once old enough). */
  uint64_t unlisted_kept, unlisted_kept_bytes;
} fnt_expire_stats;

/* Expires the snapshots committed more than `keep_seconds` ago (never the
** newest), then removes the segment, manifest and temporary files that no
** remaining snapshot lists and that are older than `keep_seconds` and than
** an hour (so a commit in flight in another process keeps its files: the
** stats count those kept).  It reads each snapshot file and each distinct
** manifest once: linear in the metadata it touches.  Tables read
** the same after; time travel to an expired snapshot gives
** FNT_E_NOTFOUND.  @return FNT_OK or a negative code.  `stats` may be
** NULL. */
int fnt_expire_snapshots(fnt_store *st, int64_t keep_seconds,
                         fnt_expire_stats *stats);

/* ------------------------------------------------------------------------
** Snapshots.  A snapshot is one committed version of the whole warehouse
** (all tables).  Ids are 1, 2, 3, ...; id 0 is the empty warehouse.
** A pinned snapshot never changes, whatever is committed after it.
*/
typedef struct fnt_snapshot fnt_snapshot;

/* Pins the newest committed snapshot.  @return FNT_OK or a negative code. */
int fnt_snapshot_current(fnt_store *st, fnt_snapshot **out);

/* Pins snapshot `id` (time travel).  @return FNT_OK, FNT_E_NOTFOUND, ... */
int fnt_snapshot_at(fnt_store *st, uint64_t id, fnt_snapshot **out);

/* Releases a pinned snapshot (NULL is a no-op). */
void fnt_snapshot_release(fnt_snapshot *snap);

typedef struct fnt_snapshot_info {
  uint64_t id;
  uint64_t parent_id;         /* 0 for the first */
  int64_t  ts_micros;         /* when it was committed */
  const char *operation;      /* "file-chunk", "file-profile", ... */
  const char *summary;        /* e.g. "run_id=r1 chunk=0 events=6"; for people */
  uint64_t added_files, added_rows;
  uint64_t total_files, total_rows;   /* over all tables */
  const char *run_id;         /* the run a file-chunk or file-profile filed,
                              ** else NULL */
  int64_t chunk;              /* the chunk a file-chunk filed, else -1 */
} fnt_snapshot_info;

/* Describes a pinned snapshot; strings owned by the snapshot. */
void fnt_snapshot_describe(const fnt_snapshot *snap, fnt_snapshot_info *info);

/* The bytes of the files a pinned snapshot lists (segments, as their
** manifests give their sizes). */
uint64_t fnt_snapshot_bytes(const fnt_snapshot *snap);

/* 1 when a run_id could read as a number: after optional white space it
** begins with a digit, a sign or a '.' (a superset of what SQL's numeric
** affinity converts).  A layer that compares run ids with numbers uses it
** to know when a comparison of text alone is exact. */
int fnt_run_id_looks_numeric(const char *run_id);

/* 1 when any run_id the pinned snapshot lists looks numeric (above). */
int fnt_snapshot_numeric_run_ids(const fnt_snapshot *snap);

/* Calls `cb` for every retained snapshot, newest first, until it returns
** non-zero.  The info's strings are valid during the call only.
** @return FNT_OK or a negative code. */
int fnt_snapshot_list(fnt_store *st,
                      int (*cb)(void *ctx, const fnt_snapshot_info *info),
                      void *ctx);

/* ------------------------------------------------------------------------
** Tables and scans.
*/
typedef enum fnt_table {
  FNT_TABLE_EVENTS  = 0,   /* fn_trace_events, partitioned by run_id */
  FNT_TABLE_RUNS    = 1,   /* fn_trace_runs, partitioned by repo */
  FNT_TABLE_PROFILE = 2,   /* fn_profile, partitioned by repo */
  FNT_TABLE_CALLS   = 3    /* fn_trace_calls, partitioned by run_id; read
                           ** with fnt_calls_open(), not fnt_scan_open() */
} fnt_table;

/* Columns, numbered in SPEC §3 order.  Text columns: repo, commit, run_id,
** stable_id, kind, symbol, target, source, binaries; every other is an
** integer. */
enum {
  FNT_EV_REPO, FNT_EV_COMMIT, FNT_EV_RUN_ID, FNT_EV_THREAD, FNT_EV_SEQ_NO,
  FNT_EV_T_NS, FNT_EV_STABLE_ID, FNT_EV_KIND, FNT_EV_SYMBOL,
  FNT_EV_NCOL
};
enum {
  FNT_RUN_RUN_ID, FNT_RUN_TS_MICROS, FNT_RUN_REPO, FNT_RUN_COMMIT,
  FNT_RUN_TARGET, FNT_RUN_SOURCE, FNT_RUN_CHUNK, FNT_RUN_CHUNKS,
  FNT_RUN_EVENTS, FNT_RUN_MAPPED_EVENTS, FNT_RUN_FUNCTIONS,
  FNT_RUN_MAPPED_FUNCTIONS, FNT_RUN_LOCAL_FUNCTIONS,
  FNT_RUN_MAPPED_LOCAL_FUNCTIONS, FNT_RUN_THREADS, FNT_RUN_FIRST_NS,
  FNT_RUN_LAST_NS, FNT_RUN_TOTAL_EVENTS, FNT_RUN_DURATION_NS,
  FNT_RUN_TRUNCATED, FNT_RUN_BINARIES,
  FNT_RUN_NCOL
};
enum {
  FNT_PROF_RUN_ID, FNT_PROF_TS_MICROS, FNT_PROF_REPO, FNT_PROF_COMMIT,
  FNT_PROF_TARGET, FNT_PROF_STABLE_ID, FNT_PROF_SYMBOL, FNT_PROF_SELF_NS,
  FNT_PROF_TOTAL_NS, FNT_PROF_SELF_SAMPLES, FNT_PROF_TOTAL_SAMPLES,
  FNT_PROF_SAMPLES, FNT_PROF_PROFILE_NS,
  FNT_PROF_NCOL
};

enum {
  FNT_CALL_REPO, FNT_CALL_COMMIT, FNT_CALL_RUN_ID, FNT_CALL_THREAD,
  FNT_CALL_CALL_ID, FNT_CALL_PARENT_ID, FNT_CALL_DEPTH, FNT_CALL_START_NS,
  FNT_CALL_END_NS, FNT_CALL_DUR_NS, FNT_CALL_SELF_NS, FNT_CALL_KEY,
  FNT_CALL_STABLE_ID, FNT_CALL_SYMBOL, FNT_CALL_ENDED_BY, FNT_CALL_OUTERMOST,
  FNT_CALL_NCOL
};

/* The number of columns of a table, a column's name ("commit" unquoted),
** and whether it is text (1) or integer (0). */
int fnt_table_ncol(fnt_table t);
const char *fnt_table_name(fnt_table t);          /* "fn_trace_events", ... */
const char *fnt_column_name(fnt_table t, int col);
int fnt_column_is_text(fnt_table t, int col);

/* What a scan should return.  Initialise with fnt_predicate_init() (which
** means "every row, every column"), then narrow.  All bounds inclusive.
** The arrays must stay valid until fnt_scan_open() returns. */
typedef struct fnt_predicate {
  const char *const *run_ids; size_t n_run_ids;   /* n = 0: any run */
  const char *const *repos;   size_t n_repos;     /* n = 0: any repo */
  int64_t t_min, t_max;        /* events: t_ns range */
  int64_t seq_min, seq_max;    /* events: seq_no range */
  int64_t thread;              /* events: < 0 = any */
  int     kind;                /* events: < 0 = any */
  const char *stable_id;       /* events, profile: NULL = any */
  int64_t chunk;               /* runs: < 0 = any */
  uint64_t columns;            /* bit i set: column i is read */
  int     ordered;             /* events: rows of each run in seq_no order */
  int64_t limit;               /* < 0: none.  Only valid when every row the
                               ** scan yields is wanted (no filter above). */
} fnt_predicate;

void fnt_predicate_init(fnt_predicate *p);

typedef struct fnt_scan fnt_scan;

/* Opens a scan of `table` in a pinned snapshot.  Partitions, files and row
** groups that cannot match are never read; unrequested columns are never
** decoded.  Every predicate field is applied exactly (a row the scan yields
** matches all of them).  Events come run by run (in the order of
** p->run_ids when given), and within a run in seq_no order when
** p->ordered.  The snapshot must outlive the scan.
** @return FNT_OK or a negative code (message in the store's fnt_errmsg). */
int fnt_scan_open(fnt_snapshot *snap, fnt_table table,
                  const fnt_predicate *p, fnt_scan **out);

/* Advances to the next row.  @return 1 a row, 0 the end, < 0 an error
** (a corrupt file: FNT_E_CORRUPT, its name in fnt_errmsg; a file of the
** snapshot removed by fnt_expire_snapshots() in the meantime, because the
** snapshot was expired: FNT_E_EXPIRED, and a scan of a newer snapshot
** succeeds). */
int fnt_scan_next(fnt_scan *sc);

/* The current row's value of column `col` (which must be requested).
** fnt_scan_text returns NULL for SQL NULL; the text is valid until the next
** fnt_scan_next(); *len (when not NULL) gets its length in bytes.
** fnt_scan_int of a text column or of NULL is 0, except kind, whose
** fnt_scan_int is its FNT_KIND_... number. */
int64_t fnt_scan_int(const fnt_scan *sc, int col);
const char *fnt_scan_text(const fnt_scan *sc, int col, size_t *len);

/* fnt_scan_text for a caller that keeps the text after the scan has moved
** on or closed (SQLite holding a column's value, say), without a copy.
** Returns how long *z lives (NULL for SQL NULL, as fnt_scan_text):
**   FNT_TEXT_HELD      until fnt_text_release(*z): it holds a reference on
**                      the file the text belongs to;
**   FNT_TEXT_STATIC    for ever;
**   FNT_TEXT_VOLATILE  as fnt_scan_text's: copy it.
** fnt_text_release has the shape of a destructor, void (*)(void*), and
** accepts NULL. */
#define FNT_TEXT_VOLATILE 0
#define FNT_TEXT_HELD     1
#define FNT_TEXT_STATIC   2
int fnt_scan_text_hold(const fnt_scan *sc, int col, const char **z,
                       size_t *len);
void fnt_text_release(void *z);
/* One more reference on a FNT_TEXT_HELD text (released by one more
** fnt_text_release); for a caller that hands the same text out twice. */
void fnt_text_hold(const char *z);

/* Events only: every column of the current row in one call, for readers of
** several columns per row (an SQL cursor), indexed by FNT_EV_...:
** text[c] for the text columns (NULL for SQL NULL), num[c] for the integer
** columns and kind's FNT_KIND_ number.  The texts are FNT_TEXT_HELD ones
** without a reference (take one with fnt_text_hold to keep one), except
** text[FNT_EV_KIND], a literal.  t_ns is 0 unless requested (the other
** columns are always there).  @return FNT_OK, or FNT_E_MISUSE without a current event. */
typedef struct fnt_event_row {
  const char *text[FNT_EV_NCOL];
  int64_t num[FNT_EV_NCOL];
} fnt_event_row;
int fnt_scan_event_row(const fnt_scan *sc, fnt_event_row *r);

/* 1 when the current row's column `col` is NULL (a text column's NULL, or
** a column added after the row's file was written), else 0. */
int fnt_scan_is_null(const fnt_scan *sc, int col);

/* A number naming the current row among all rows of the snapshot's table,
** the same in every scan of that snapshot whatever its predicate (the file's
** position in the snapshot and the row's in the file).  For SQLite rowids. */
uint64_t fnt_scan_rowid(const fnt_scan *sc);

/* Events only: the current row's function as an index into the current
** segment's function table, and a number that changes whenever that table
** changes (so a caller can map indexes to its own ids once per segment).
** Cheaper than reading symbol and stable_id per row. */
uint32_t fnt_scan_function(const fnt_scan *sc, uint64_t *table_generation);

/* Events only: the next rows as arrays, in the order fnt_scan_next() would
** give them, a row group's worth (or less) at a time -- for consumers such
** as heat that touch every row.  Only for scans whose predicate bounds no
** row (no t_ns, seq_no, thread, kind or stable_id bound and no limit;
** run_id and repo are fine).  The arrays are valid until the next call on
** the scan.  @return 1 a batch of b->n >= 1 rows, 0 the end, < 0 an error
** (FNT_E_MISUSE for a predicate with row bounds). */
typedef struct fnt_event_batch {
  size_t n;
  const uint64_t *seq_no;
  const uint64_t *t_ns;           /* NULL unless t_ns was requested */
  const uint64_t *thread;         /* indexes into thread_ids */
  const uint64_t *kind;           /* FNT_KIND_... */
  const uint64_t *function;       /* indexes into functions */
  const uint64_t *thread_ids;
  uint32_t n_threads;
  const fnt_function *functions;  /* the segment's function table */
  uint32_t n_functions;
  uint64_t table_generation;      /* as fnt_scan_function() */
} fnt_event_batch;
int fnt_scan_next_batch(fnt_scan *sc, fnt_event_batch *b);

/* Counters, for tests and benchmarks: what this scan has read so far. */
typedef struct fnt_scan_stats {
  uint64_t files_opened;        /* segment files opened */
  uint64_t files_skipped;       /* listed in the snapshot, pruned by bounds */
  uint64_t row_groups_read;     /* row groups decoded */
  uint64_t row_groups_skipped;  /* row groups pruned by their footer bounds */
  uint64_t rows_decoded;
} fnt_scan_stats;
void fnt_scan_stats_get(const fnt_scan *sc, fnt_scan_stats *out);

void fnt_scan_close(fnt_scan *sc);

/* ------------------------------------------------------------------------
** Heat (SPEC §5): per function of a run, inclusive and self time and calls.
** Added up from the per-file aggregates the store keeps with the run's
** calls: O(functions x chunks), not O(events).
*/
typedef struct fnt_heat_row {
  const char *key;           /* stable_id, or "?" followed by the symbol */
  const char *symbol;        /* the symbol of the key's first function in the
                             ** run's files (keys may have several) */
  int64_t inclusive_ns;
  int64_t self_ns;
  int64_t calls;
} fnt_heat_row;

typedef struct fnt_heat fnt_heat;

/* Computes the heat of `run_id` in a pinned snapshot.  An unknown run gives
** an empty result.  @return FNT_OK or a negative code. */
int fnt_heat_compute(fnt_snapshot *snap, const char *run_id, fnt_heat **out);
size_t fnt_heat_count(const fnt_heat *h);
/* Rows in no particular order; owned by `h`. */
const fnt_heat_row *fnt_heat_rows(const fnt_heat *h);
void fnt_heat_free(fnt_heat *h);

/* ------------------------------------------------------------------------
** Calls (SPEC §7).  A call is one frame of the §5 replay: per thread, the
** run's events in seq_no order against a call stack.  The store derives
** the calls when it files a chunk and keeps them beside the events (a
** chunk that arrives late or out of order re-derives the calls it
** changes), so reading calls, heat, account and call graph never replays
** the whole run.  A run filed before calls existed (format 1) gets its
** calls derived on the fly when read, and stored by fnt_compact().
*/

/* How a call ended (fn_trace_calls.ended_by). */
#define FNT_ENDED_EXIT      0   /* its own exit event */
#define FNT_ENDED_TAIL_EXIT 1   /* its own tail_exit event */
#define FNT_ENDED_UNWOUND   2   /* popped by an exit of a frame below it */
#define FNT_ENDED_OPEN      3   /* still open at its thread's last event */

/* "exit", "tail_exit", "unwound", "open"; NULL for another value. */
const char *fnt_ended_by_name(int ended_by);

typedef struct fnt_call {
  const char *repo, *commit, *run_id;   /* commit may be NULL */
  uint32_t thread;
  int64_t call_id;        /* seq_no of the entry event */
  int64_t parent_id;      /* call_id of the frame below; -1 at depth 0 */
  int64_t depth;
  int64_t start_ns, end_ns, dur_ns, self_ns;
  const char *key;        /* stable_id, or "?" followed by the symbol */
  const char *stable_id;  /* NULL when unknown */
  const char *symbol;
  int ended_by;           /* FNT_ENDED_... */
  int outermost;          /* 1: no frame of the same key below it */
  /* 1: repo, commit, run_id, key, stable_id and symbol are FNT_TEXT_HELD
  ** texts without a reference (fnt_text_hold keeps one past the next call,
  ** as for fnt_scan_event_row); 0: copy them (a run replayed in memory). */
  int texts_held;
} fnt_call;

/* Which calls a scan returns.  fnt_call_predicate_init() means "every call
** of every run"; then narrow.  All bounds inclusive.  The arrays must stay
** valid until fnt_calls_open() returns. */
typedef struct fnt_call_predicate {
  const char *const *run_ids; size_t n_run_ids;  /* n = 0: every run */
  int64_t thread;            /* < 0: any */
  int64_t call_id;           /* < 0: any */
  int64_t parent_id;         /* < 0: any; the children of that call */
  int64_t depth_min, depth_max;
  const char *key;           /* NULL: any */
  int64_t dur_min;           /* dur_ns >= dur_min */
  /* Overlap with [t0, t1]: start_ns <= t1 AND end_ns >= t0.  t0 == t1 is
  ** an instant: the stacks at that time.  INT64_MIN / INT64_MAX: none. */
  int64_t t0, t1;
  int ordered;               /* per run, by start_ns then call_id */
  int64_t limit;             /* < 0: none */
  /* fnt_calls_next_block() only: the columns the reader uses, an OR of
  ** FNT_CALL_COL(FNT_CALL_THREAD) and so on for thread, call_id,
  ** parent_id, depth, start_ns, dur_ns, self_ns and symbol (fn and
  ** fn_symbol); 0: all of them.  The others are not decoded and their
  ** arrays in the blocks are NULL; bits of columns a block does not give
  ** are ignored.  The predicate's own bounds apply whatever is asked. */
  uint64_t block_cols;
} fnt_call_predicate;

/* The bit of calls column c (FNT_CALL_...) in fnt_call_predicate.block_cols. */
#define FNT_CALL_COL(c) ((uint64_t)1 << (c))

void fnt_call_predicate_init(fnt_call_predicate *p);

typedef struct fnt_calls fnt_calls;

/* Opens a scan of the calls of a pinned snapshot.  Files, row groups and
** columns that cannot match are never read (the time overlap prunes by
** each row group's start and end bounds, so a window or an instant reads
** what overlaps it, long calls included).  Calls come run by run; within
** a run by (thread, depth, start_ns) unless p->ordered.  An ordered scan
** holds the matching calls of a run in memory to sort them: narrow it
** (a time window, a limit) on large runs.
** @return FNT_OK or a negative code (message in the store's fnt_errmsg). */
int fnt_calls_open(fnt_snapshot *snap, const fnt_call_predicate *p,
                   fnt_calls **out);

/* The next call in *row (owned by the scan, valid until the next call on
** it).  @return 1 a call, 0 the end, < 0 an error. */
int fnt_calls_next(fnt_calls *sc, const fnt_call **row);

/* A block of calls in columns, what fnt_calls_next_block() gives: up to a
** row group of the scan's matching calls (at most 1024), all of one run,
** in the scan's natural order.  Row i is thread[i], call_id[i], ... as
** fnt_call has them (parent_id -1 at depth 0, end_ns = start_ns[i] +
** dur_ns[i]); its symbol is fn_symbol[fn[i]].  Everything is owned by the
** scan and valid until the next call on it; fn_version changes whenever
** fn_symbol does, so a reader may keep what it derives per function (say,
** its name escaped for JSON) until then.  A version is never given twice
** by one handle, so what a reader keeps across scans is renewed too. */
typedef struct fnt_call_block {
  size_t n;
  const char *run_id;
  const int64_t *thread, *call_id, *parent_id, *depth;
  const int64_t *start_ns, *dur_ns, *self_ns;
  const int64_t *fn;
  const char *const *fn_symbol;
  size_t n_fn;
  uint64_t fn_version;
} fnt_call_block;

/* The scan's next block of calls, for readers that go through millions of
** calls (exports): no per-call copy, and columns a loop can run down.  A
** scan is read with fnt_calls_next() or with this, not both; an ordered
** scan only with fnt_calls_next().  key, ended_by and outermost are not
** given.
** @return 1 a block (n >= 1), 0 the end, < 0 an error (FNT_E_MISUSE for an
** ordered scan or one read with fnt_calls_next()). */
int fnt_calls_next_block(fnt_calls *sc, fnt_call_block *b);

/* A number naming the current call among all calls of the snapshot, the
** same in every scan of that snapshot whatever its predicate (for SQLite
** rowids). */
uint64_t fnt_calls_rowid(const fnt_calls *sc);

/* What the scan has read so far (as fnt_scan_stats_get). */
void fnt_calls_stats_get(const fnt_calls *sc, fnt_scan_stats *out);

void fnt_calls_close(fnt_calls *sc);

/* fnt_account (SPEC §7): per key over its calls' dur_ns.  Percentile p is
** the element at floor(p * n) of the n durations sorted ascending. */
typedef struct fnt_account_row {
  const char *key, *symbol;   /* symbol: of the key's first call */
  int64_t calls, min_ns, p50_ns, p90_ns, p99_ns, max_ns;
  int64_t sum_ns;             /* every call, recursive ones too */
  int64_t inclusive_ns, self_ns;   /* as fnt_heat */
} fnt_account_row;

typedef struct fnt_account fnt_account;
/* An unknown run gives no rows.  @return FNT_OK or a negative code. */
int fnt_account_compute(fnt_snapshot *snap, const char *run_id,
                        fnt_account **out);
size_t fnt_account_count(const fnt_account *a);
/* Rows in key order; owned by `a`. */
const fnt_account_row *fnt_account_rows(const fnt_account *a);
void fnt_account_free(fnt_account *a);

/* fnt_callgraph (SPEC §7): one row per caller -> callee edge. */
typedef struct fnt_edge_row {
  const char *caller_key;     /* NULL for calls at depth 0 */
  const char *callee_key;
  int64_t calls, total_ns, self_ns;
} fnt_edge_row;

typedef struct fnt_callgraph fnt_callgraph;
int fnt_callgraph_compute(fnt_snapshot *snap, const char *run_id,
                          fnt_callgraph **out);
size_t fnt_callgraph_count(const fnt_callgraph *g);
/* Rows ordered by caller_key (NULL first), then callee_key; owned by g. */
const fnt_edge_row *fnt_callgraph_rows(const fnt_callgraph *g);
void fnt_callgraph_free(fnt_callgraph *g);

/* ------------------------------------------------------------------------
** fnt_flame (SPEC §8): stacks for a flame graph.  One row per distinct
** stack of symbols (depth 0 first, joined by ';': the folded-stack format),
** with the self time and the count of its calls.  Whole run: self adds the
** calls' self_ns.  In a window [t0, t1) every call is first clipped to it
** and self is the clipped duration minus the clipped durations of the calls
** directly above; a call is in the window when start_ns < t1 and (end_ns >
** t0 or start_ns >= t0); a stack with no call in it has no row.
*/
typedef struct fnt_flame_row {
  const char *stack;          /* "main;run;work" */
  int64_t self_ns, calls;
} fnt_flame_row;

typedef struct fnt_flame_window {
  int64_t t0, t1;             /* t0 < t1 */
  int64_t thread;             /* < 0: every thread */
} fnt_flame_window;

typedef struct fnt_flame fnt_flame;

/* The flame of `run_id` in a pinned snapshot, of the whole run (w NULL) or
** of window w.  Memory and time grow with the calls that overlap w (every
** call of the run without one).  An unknown run gives no rows.  The handle
** keeps the working arrays of its last flame, when they take at most 32 MB,
** for the next one (a viewer asks for window after window); fnt_close()
** frees them.
** @return FNT_OK, FNT_E_MISUSE (w->t1 <= w->t0, a NULL argument) or a
**         negative code; on failure *out is NULL. */
int fnt_flame_compute(fnt_snapshot *snap, const char *run_id,
                      const fnt_flame_window *w, fnt_flame **out);
/* fnt_flame_compute() within `max_bytes` of memory (the calls read, the
** stack nodes and the rows' texts where the flame holds them, counted as
** they grow): past it the work stops and FNT_E_LIMIT says so, with
** nothing left allocated but what the handle keeps (above).  A caller
** that must not hold a run's stacks at once (an export) then folds them
** another way. */
int fnt_flame_compute_within(fnt_snapshot *snap, const char *run_id,
                             const fnt_flame_window *w, size_t max_bytes,
                             fnt_flame **out);
size_t fnt_flame_count(const fnt_flame *f);
/* Row i (< fnt_flame_count) of f, rows ordered by stack (strcmp); NULL
** past the end.  The row and its text are valid until the next call on f:
** a whole run's flame (and a window's whose texts would take more than
** 64 MB) keeps its stack nodes and makes each row's text when asked,
** cheapest in order, so that memory grows with the distinct stacks and
** not with their texts (4.4 GB for the 4.9M stacks of a 10M-event run
** where nearly every call has a stack of its own). */
const fnt_flame_row *fnt_flame_row_at(fnt_flame *f, size_t i);
/* Every row at once, ordered by stack (strcmp); owned by `f`.  A flame
** that makes its rows when asked (above) makes them all here, once: NULL
** when out of memory. */
const fnt_flame_row *fnt_flame_rows(const fnt_flame *f);
void fnt_flame_free(fnt_flame *f);

/* ------------------------------------------------------------------------
** Comparing two runs (SPEC §9): per key of either run, its calls,
** inclusive and self time and p50 in each, from fnt_account of each run.
*/
typedef struct fnt_diff_row {
  const char *key, *symbol;   /* symbol: run a's account's, else run b's */
  int in_a, in_b;             /* 1 when that run calls the key */
  /* A run that does not call the key counts 0; its p50 is SQL NULL. */
  int64_t calls_a, calls_b, inclusive_a, inclusive_b, self_a, self_b;
  int64_t p50_a, p50_b;
} fnt_diff_row;

typedef struct fnt_diff fnt_diff;

/* Compares run_b with run_a in a pinned snapshot.  Unknown runs have no
** keys.  @return FNT_OK, FNT_E_MISUSE (a NULL argument) or a negative code
** of fnt_account_compute(); on failure *out is NULL. */
int fnt_diff_compute(fnt_snapshot *snap, const char *run_a, const char *run_b,
                     fnt_diff **out);
size_t fnt_diff_count(const fnt_diff *d);
/* Rows in key order (strcmp); owned by `d`. */
const fnt_diff_row *fnt_diff_rows(const fnt_diff *d);
void fnt_diff_free(fnt_diff *d);

/* ------------------------------------------------------------------------
** The timeline (SPEC §8): what a viewer draws for the window [t0, t1) of a
** run at `buckets` columns.  With w = max(1, ceil((t1 - t0) / buckets)), a
** call with t0 <= start_ns < t1 is in bucket (start_ns - t0) / w.  One row
** per (thread, depth, bucket) that holds calls: the call of greatest dur_ns
** (ties: the smallest call_id) and how many calls the bucket holds; plus,
** per (thread, depth), the call that started before t0 and ends after it,
** as bucket -1 (calls 1).
*/
typedef struct fnt_timeline_row {
  int64_t thread, depth;
  int64_t bucket;             /* 0 .. buckets-1, or -1: running at t0 */
  int64_t call_id, start_ns, dur_ns;   /* the bucket's longest call */
  const char *key, *symbol;   /* its key (as fnt_call.key) and symbol */
  int64_t calls;              /* the calls of the bucket; 1 for bucket -1 */
} fnt_timeline_row;

typedef struct fnt_timeline fnt_timeline;

/* Computes the timeline of `run_id` over [t0, t1) in a pinned snapshot;
** `thread` >= 0: that thread only, < 0: every thread.  Where buckets are
** wide (a calls row group holds 128 calls and more a bucket) the calls
** files' level of detail is read instead of their calls, but for the
** calls near bucket edges: the cost then grows with buckets x depths x
** threads, not with the calls of the window.  Exact either way.
** @return FNT_OK; FNT_E_INVALID when t1 <= t0 or buckets < 1;
**         FNT_E_NOTFOUND when the snapshot has no run `run_id`;
**         FNT_E_MISUSE (a NULL argument), or a code of fnt_calls_open().
**         On failure *out is NULL and fnt_errmsg() says why. */
int fnt_timeline_compute(fnt_snapshot *snap, const char *run_id, int64_t t0,
                         int64_t t1, int64_t buckets, int64_t thread,
                         fnt_timeline **out);
/* The time span of run `run_id`: its first and last event's t_ns (every
** call lies within), from the snapshot's file bounds alone -- where a
** viewer's first frame, the whole run, is [first, last + 1).  A run filed
** without events (its chunks empty) spans [0, 0]: it has no calls.
** @return FNT_OK, FNT_E_NOTFOUND (no such run), FNT_E_MISUSE. */
int fnt_timeline_span(fnt_snapshot *snap, const char *run_id,
                      int64_t *first_ns, int64_t *last_ns);
size_t fnt_timeline_count(const fnt_timeline *t);
/* Rows ordered by thread, depth, bucket; owned by `t`. */
const fnt_timeline_row *fnt_timeline_rows(const fnt_timeline *t);
void fnt_timeline_free(fnt_timeline *t);

/* ------------------------------------------------------------------------
** Comparing commits (SPEC §9): did a commit make anything slower?  Every
** run of `repo` filed under commit_a is a sample of side a, every run under
** commit_b one of side b (a run's commit is that of its lowest-numbered
** filed chunk).  Per key the value of a run is the key's inclusive_ns in
** the run's heat (0 when the run has no call of it): the comparison reads
** the runs' heat, never more.
*/
typedef struct fnt_compare_row {
  const char *key;           /* as fnt_heat_row.key */
  const char *symbol;        /* the symbol of the first run (side a first,
                             ** then by run_id) that calls the key */
  int64_t runs_a, runs_b;    /* the runs of each side (the same on every row) */
  double median_a, median_b; /* of the runs' values; NAN when a side has none */
  double ratio;              /* median_b / median_a; NAN when median_a is 0
                             ** or NAN */
  double p_value;            /* two-sided Mann-Whitney U, normal
                             ** approximation with tie and continuity
                             ** corrections (SciPy's mannwhitneyu(...,
                             ** method='asymptotic')); NAN when a side has
                             ** fewer than 2 runs or every value is equal */
} fnt_compare_row;

typedef struct fnt_compare fnt_compare;

/* Compares the runs of commit_a with those of commit_b in a pinned snapshot:
** one row per key that either side's runs call.  A commit with no runs
** gives a side of 0 runs (no rows when neither has any).
** @return FNT_OK, FNT_E_MISUSE (a NULL argument), or a negative code of
**         fnt_heat_compute(); on failure *out is NULL. */
int fnt_compare_compute(fnt_snapshot *snap, const char *repo,
                        const char *commit_a, const char *commit_b,
                        fnt_compare **out);
size_t fnt_compare_count(const fnt_compare *c);
/* The runs of each side (also when no run calls anything). */
void fnt_compare_runs(const fnt_compare *c, int64_t *runs_a, int64_t *runs_b);
/* Rows ordered by p_value ascending (NAN last), then ratio descending (NAN
** last), then key; owned by `c`. */
const fnt_compare_row *fnt_compare_rows(const fnt_compare *c);
void fnt_compare_free(fnt_compare *c);
#if defined(__GNUC__)
#pragma GCC visibility pop
#endif

#ifdef __cplusplus
}
#endif
#endif /* FNT_STORE_H */
