/*
** internal.h -- what the files of the store share, and nothing public.
**
** One job per file:
**   alloc.c     the allocator hook, growable buffers
**   errors.c    error codes, per-handle messages, version
**   io.c        every system call that touches the disk (fault-injectable)
**   codec.c     varints, bit-packing, checksummed zstd blocks
**   schema.c    tables, columns, field ids
**   segment_write.c / segment_read.c   segment files
**   metadata.c  catalog versions, manifest lists, manifests (encode/decode)
**   snapshot.c  pinning, caching and listing snapshots
**   commit.c    validating and filing chunks and profiles, atomic commit
**               (commit.h: the protocol, shared with compaction)
**   compact.c   merging small files (fnt_compact)
**   expire.c    expiring snapshots, removing unlisted files
**   scan.c      predicate scans with partition and row-group pruning
**   warehouse.c open/close and the folder layout
**   heat.c      fnt_heat (SPEC §5)
**   timeline.c  fnt_timeline (SPEC §8)
**   compare.c   fnt_compare (SPEC §9): medians and the Mann-Whitney U test
**   diff.c      fnt_diff (SPEC §9): two runs' accounts side by side
*/
#ifndef FNT_INTERNAL_H
#define FNT_INTERNAL_H

#include <pthread.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "fnt_store.h"

#define FNT_UNUSED(x) ((void)(x))

/* 1 where a word's first byte in memory is its lowest: the formats are
** little-endian, and readers and writers there move whole words. */
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__==__ORDER_LITTLE_ENDIAN__
# define FNT_LITTLE_ENDIAN 1
#else
# define FNT_LITTLE_ENDIAN 0
#endif

/* ---- alloc.c */
void *fnt_malloc(size_t n);
void *fnt_calloc(size_t n, size_t size);   /* zeroed; overflow-checked */
void *fnt_realloc(void *p, size_t n);
void  fnt_free(void *p);
char *fnt_strdup(const char *s);           /* NULL in, NULL out */

/* A growable byte buffer.  On allocation failure `failed` is set and later
** appends do nothing, so encoders check once at the end. */
typedef struct fnt_buf {
  uint8_t *data;
  size_t len, cap;
  int failed;
} fnt_buf;
int  fnt_buf_reserve(fnt_buf *b, size_t extra);  /* 0 ok, -1 no memory */
void fnt_buf_append(fnt_buf *b, const void *p, size_t n);
void fnt_buf_free(fnt_buf *b);

/* ---- worker.c: one job on a second thread (or inline, threaded 0) */
typedef struct fnt_worker {
  int (*fn)(void*);
  void *arg;
  int rc, started, threaded;
  pthread_t th;
} fnt_worker;
void fnt_worker_start(fnt_worker *w, int threaded, int (*fn)(void*), void *arg);
/* Waits for the job; its return code.  FNT_OK when none was started. */
int fnt_worker_join(fnt_worker *w);
/* fnt_open's choice: not with FNT_OPEN_NO_THREADS or FNT_THREADS=0. */
int fnt_threads_wanted(int flags);

/* ---- errors.c */
/* Records a failure on the handle and returns `code`. */
int fnt_err(fnt_store *st, int code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
void fnt_err_clear(fnt_store *st);

/* ---- io.c: every disk access goes through here so tests can inject faults.
** Each returns 0 or -1 with errno set (fault injection sets errno too). */
enum {
  FNT_IO_OPEN = 1, FNT_IO_WRITE = 2, FNT_IO_FSYNC = 4, FNT_IO_LINK = 8,
  FNT_IO_RENAME = 16, FNT_IO_READ = 32, FNT_IO_MKDIR = 64, FNT_IO_UNLINK = 128
};
typedef struct fnt_io_fault {
  unsigned ops;        /* FNT_IO_... bits that count toward `nth` */
  long nth;            /* fail the nth counted call (1-based); 0 = off */
  int err;             /* errno to fail with (EIO, ENOSPC, ...) */
  int short_write;     /* a failing write first writes half its bytes */
  int crash;           /* instead of failing, _exit(99) at that call */
  int power_loss;      /* as crash, but first drop what was not made
                       ** durable: unsynced file data is cut to half, and
                       ** names (files, links, renames, folders) whose
                       ** folder was not fsynced since are removed */
  void (*stall)(void); /* instead of failing, call this (it may block:
                       ** a process held at an exact step), then go on */
} fnt_io_fault;
void fnt_io_set_fault(const fnt_io_fault *f);   /* NULL: off */
long fnt_io_count(void);                         /* counted calls so far */

int fnt_io_write_file(const char *path, const void *data, size_t n, int excl);
int fnt_io_read_file(const char *path, uint8_t **data, size_t *n);
int fnt_io_open_read(const char *path);          /* fd or -1 */
int fnt_io_pread(int fd, void *buf, size_t n, uint64_t off); /* exact or -1 */
int fnt_io_file_size(int fd, uint64_t *size);
void fnt_io_close(int fd);
int fnt_io_fsync_dir(const char *dir);
int fnt_io_link(const char *from, const char *to);
int fnt_io_rename(const char *from, const char *to);
int fnt_io_unlink(const char *path);
int fnt_io_mkdirs(const char *path);            /* mkdir -p: folders made, or -1 */
int fnt_io_exists(const char *path);            /* 1, 0, or -1 on error */
/* Takes an exclusive advisory lock on a folder (waiting for it): an fd to
** pass to fnt_io_unlock, or -1.  Released by the system if the process
** dies. */
int fnt_io_lock_dir(const char *dir);
void fnt_io_unlock(int fd);
/* Calls fn(ctx, dirfd, name, path, regular) for every file under folder
** `rel` of folder `root`, recursively (folders are walked, not passed;
** symbolic links are files): `dirfd` is its folder's, for fstatat, `path`
** its path relative to root, `regular` 1 for a regular file; fn returns
** 0 to go on, or a positive value to stop the walk, which returns it.
** Names beginning with '.' are skipped unless FNT_WALK_HIDDEN; a folder
** that cannot be read (or a path too long) stops the walk unless
** FNT_WALK_ON, which skips it.  @return 0 once done, fn's value, or -1
** with errno (ENOENT: `rel` is absent). */
#define FNT_WALK_HIDDEN 1u
#define FNT_WALK_ON     2u
typedef int (*fnt_io_walk_fn)(void *ctx, int dirfd, const char *name,
                              const char *path, int regular);
int fnt_io_walk(const char *root, const char *rel, unsigned flags,
                fnt_io_walk_fn fn, void *ctx);

/* ---- codec.c */
void fnt_put_varint_grow(fnt_buf *b, uint64_t v);
/* Puts a varint below 2^56 at p, 8 bytes being writable there, without a
** branch on its length (the mirror of fnt_varint_word): its 7-bit groups
** spread over a word's bytes, the stop bit on all but the last, the word
** written whole.  @return its length, or 0 (longer: the caller's loop). */
static inline unsigned fnt_varint_put_word(uint8_t *p, uint64_t v){
  static const uint8_t len[56] = {
    1,1,1,1,1,1,1, 2,2,2,2,2,2,2, 3,3,3,3,3,3,3, 4,4,4,4,4,4,4,
    5,5,5,5,5,5,5, 6,6,6,6,6,6,6, 7,7,7,7,7,7,7, 8,8,8,8,8,8,8 };
  uint64_t x;
  unsigned n;
  if( !FNT_LITTLE_ENDIAN || v>=(UINT64_C(1) << 56) ) return 0;
  n = len[63 - __builtin_clzll(v | 1)];
  x = (v & UINT64_C(0x000000000fffffff)) | (v & UINT64_C(0x00fffffff0000000)) << 4;
  x = (x & UINT64_C(0x00003fff00003fff)) | (x & UINT64_C(0x0fffc0000fffc000)) << 2;
  x = (x & UINT64_C(0x007f007f007f007f)) | (x & UINT64_C(0x3f803f803f803f80)) << 1;
  x |= UINT64_C(0x8080808080808080) & ((UINT64_C(1) << (8*(n-1))) - 1);
  memcpy(p, &x, 8);
  return n;
}

/* Puts any varint at p, 10 bytes being writable there: one byte where the
** value is small (most of a format's counts, indexes and small deltas: a
** branch predicted right), else a word (lengths that vary from one varint
** to the next mispredicted the byte loop's exit about once a varint).
** @return its length. */
static inline unsigned fnt_varint_put(uint8_t *p, uint64_t v){
  uint8_t *s = p;
  unsigned n;
  if( v<0x80 ){ *p = (uint8_t)v; return 1; }
  if( (n = fnt_varint_put_word(p, v))!=0 ) return n;
  while( v>=0x80 ){ *p++ = (uint8_t)(v | 0x80); v >>= 7; }
  *p++ = (uint8_t)v;
  return (unsigned)(p - s);
}

/* Inline: segment writers put a varint per value of several columns. */
static inline void fnt_put_varint(fnt_buf *b, uint64_t v){
  if( b->failed || b->cap - b->len < 10 ){ fnt_put_varint_grow(b, v); return; }
  b->len += fnt_varint_put(b->data + b->len, v);
}

void fnt_put_u8(fnt_buf *b, uint8_t v);
void fnt_put_u64le(fnt_buf *b, uint64_t v);
void fnt_put_str(fnt_buf *b, const char *s);     /* NULL-able: len+1, 0 = NULL */
static inline uint64_t fnt_zigzag(int64_t v){ return ((uint64_t)v<<1) ^ (uint64_t)(v>>63); }
static inline int64_t fnt_unzigzag(uint64_t v){ return (int64_t)(v>>1) ^ -(int64_t)(v&1); }

/* A bounds-checked reader over bytes: every get fails softly (ok = 0) on
** overrun, so decoders check `ok` once per structure. */
typedef struct fnt_rd {
  const uint8_t *p, *end;
  int ok;
} fnt_rd;
uint64_t fnt_get_varint(fnt_rd *r);

/* The varint at p when it is at most 8 bytes long, 8 bytes being readable
** there, decoded without a branch on its length (lengths that vary from
** one varint to the next -- durations, deltas -- mispredicted such a
** branch about once a varint).  @return its length, or 0 (longer). */
static inline unsigned fnt_varint_word(const uint8_t *p, uint64_t *out){
  uint64_t w, stop, x;
  if( !FNT_LITTLE_ENDIAN ) return 0;       /* the caller's byte loop */
  memcpy(&w, p, 8);
  stop = ~w & UINT64_C(0x8080808080808080);
  if( stop==0 ) return 0;
  x = w & (stop ^ (stop - 1));             /* its bytes only */
  x = (x & UINT64_C(0x007f007f007f007f)) | (x & UINT64_C(0x7f007f007f007f00)) >> 1;
  x = (x & UINT64_C(0x00003fff00003fff)) | (x & UINT64_C(0x3fff00003fff0000)) >> 2;
  x = (x & UINT64_C(0x000000000fffffff)) | (x & UINT64_C(0x0fffffff00000000)) >> 4;
  *out = x;
  return ((unsigned)__builtin_ctzll(stop) >> 3) + 1;
}
uint8_t  fnt_get_u8(fnt_rd *r);
uint64_t fnt_get_u64le(fnt_rd *r);
/* A string inside the reader's bytes, copied to a fresh NUL-terminated
** allocation; *isnull for NULL.  Returns NULL on overrun/no memory (ok = 0). */
char *fnt_get_str(fnt_rd *r, int *isnull);
/* fnt_get_str with `head` bytes allocated before the string (the string is
** at the allocation + head): room for its owner (segment_read.c). */
char *fnt_get_str_after(fnt_rd *r, size_t head, int *isnull);
/* A str's bytes where they lie in the input (not NUL-terminated), *len
** long; 0 when NULL (*isnull) or malformed (r->ok cleared). */
const uint8_t *fnt_get_str_span(fnt_rd *r, size_t *len, int *isnull);

/* Bit-packing: n values of `width` bits (0..64), LSB first. */
size_t fnt_bp_size(size_t n, unsigned width);
void fnt_bp_pack(uint8_t *out, const uint64_t *v, size_t n, unsigned width);
void fnt_bp_unpack(const uint8_t *in, uint64_t *v, size_t n, unsigned width);
/* Values [from, from+n) of the `total` packed at `in` into v[0..n): a
** reader of a few rows starts mid-stream, without unpacking those before. */
void fnt_bp_unpack_from(const uint8_t *in, size_t total, unsigned width,
                        size_t from, uint64_t *v, size_t n);
unsigned fnt_bits_needed(uint64_t maxv);

uint64_t fnt_hash(const void *p, size_t n);   /* XXH3-64 */
void fnt_hash128(const void *p, size_t n, uint64_t out[2]);   /* XXH3-128 */
int fnt_cmp_u64(const void *a, const void *b);   /* qsort/bsearch of uint64_t */

/* Column-chunk codecs.  fnt_block_compress appends `raw` to `out`, zstd
** compressed when that is smaller, and returns the codec used (or -1 on no
** memory).  fnt_block_decompress returns 0, or -1 when the bytes do not
** decode to exactly raw_len bytes. */
#define FNT_CODEC_RAW  0
#define FNT_CODEC_ZSTD 1
/* `z`: a zstd context reused across a file's chunks (a fresh context per
** chunk costs more than compressing a small chunk); NULL for a one-off.
** level < 0: stored raw without trying; so is anything below FNT_ZSTD_MIN
** bytes, and whatever zstd shrinks by less than min_saving percent
** (FNT_ZSTD_SAVING, unless reads want raw bytes more). */
#define FNT_ZSTD_MIN 64
#define FNT_ZSTD_SAVING 10
struct ZSTD_CCtx_s;
int fnt_block_compress(struct ZSTD_CCtx_s *z, const uint8_t *raw, size_t n,
                       fnt_buf *out, int level, unsigned min_saving);
int fnt_block_decompress(void **dctx, int codec, const uint8_t *src,
                         size_t n, uint8_t *dst, size_t raw_len);
/* Frees the context fnt_block_decompress kept in *dctx (made on first use:
** zstd's one-shot call allocates and sets up a fresh one every time, which
** cost as much as decoding a row group's small chunks). */
void fnt_block_ctx_free(void **dctx);

/* ---- schema.c */
#define FNT_NTABLES 4
typedef struct fnt_colinfo {
  const char *name;
  int is_text;
  uint32_t field_id;     /* stable: a column keeps its id forever */
} fnt_colinfo;
const fnt_colinfo *fnt_table_cols(fnt_table t);

/* ---- warehouse.c: layout */
struct fnt_manifest;
struct fnt_segment;
/* Blocks of an events scan cursor's decode arrays a handle keeps (scan.c). */
#define FNT_SCAN_KEEP 2
struct fnt_store {
  char *dir;                 /* as given */
  char errmsg[1024];
  int errcode;
  /* snapshot.c caches */
  struct fnt_snapshot *current;      /* newest pinned so far (ref held) */
  struct fnt_manifest **mbuckets;    /* manifests by path hash (chained) */
  size_t n_mbuckets, n_manifests;
  struct fnt_manifest *idle_head, *idle_tail;  /* held by no snapshot */
  size_t idle_bytes, cache_budget;
  struct fnt_segment **segments;     /* footer cache, most recent last */
  size_t n_segments, cap_segments;
  size_t segment_files;              /* at most this many */
  size_t segment_bytes, segment_budget;  /* their footers' size, at most */
  int checking_missing;              /* in fnt_listed_file_missing() */
  void *zdctx;                       /* codec.c: a zstd context, reused */
  /* segment_read.c: the stored bytes of the calls row group read last
  ** (segment serial, row group, file offset), and the serial the next
  ** segment opened gets (0 is none). */
  fnt_buf group;
  fnt_buf footer[2];                 /* a footer's stored and raw bytes, reused */
  uint64_t group_serial, group_offset, segment_serial;
  uint32_t group_rg;
  int threads;                       /* filing may use a worker thread */
  uint64_t fn_versions;              /* the last fnt_call_block.fn_version given */
  struct fnt_flame_keep *flame_keep; /* flame.c: working arrays kept */
  uint64_t *scan_keep[FNT_SCAN_KEEP]; /* scan.c: events cursors' arrays kept */
  int n_scan_keep;
};
/* flame.c: frees what the handle's flames kept (fnt_close). */
void fnt_flame_keep_free(fnt_store *st);
/* scan.c: frees the events cursors' arrays the handle kept (fnt_close). */
void fnt_scan_keep_free(fnt_store *st);
/* dir/rel into a fresh allocation. */
char *fnt_path_join(const fnt_store *st, const char *rel);
/* A folder name for a partition value: readable where safe, never a path. */
char *fnt_partition_dir(const char *value);
/* data/TABLE/PART for a partition value, in a new allocation. */
char *fnt_partition_folder(fnt_table t, const char *value);
/* data/TABLE/PART/name (name NULL: the folder), in a new allocation. */
char *fnt_partition_path(fnt_table t, const char *value, const char *name);
/* The partition value of table t's entry: run_id (events, calls) or repo. */
const char *fnt_entry_partition(int table, const char *run_id, const char *repo);
/* 32 random hex characters. */
void fnt_random_name(char out[33]);
int64_t fnt_now_micros(void);

#define FNT_DIR_CATALOG  "catalog"
#define FNT_DIR_METADATA "metadata"
#define FNT_DIR_DATA     "data"
#define FNT_DIR_TMP      "tmp"
#define FNT_MARKER       "fntrace-warehouse"

/* ---- metadata.c: manifests and catalog versions (see FORMAT.md) */
typedef struct fnt_entry {
  uint8_t table;         /* fnt_table */
  char *path;            /* relative to the warehouse */
  uint64_t file_size;
  uint64_t rows;
  char *run_id;          /* every table's files belong to one run */
  char *repo;            /* and one repo */
  int64_t chunk;         /* -1 for profiles */
  int64_t seq_min, seq_max, t_min, t_max;   /* events only; else 0 */
  uint64_t snapshot_id;  /* the snapshot that added it */
  /* A file that compaction merged from several lists what it holds here:
  ** (run_id, chunk) per filed chunk, or (run_id, -1) per profile; run_id
  ** and chunk above are then "" (several runs) or the run, and -1. */
  struct fnt_key *keys;
  size_t n_keys;
} fnt_entry;

typedef struct fnt_key {
  char *run_id;
  int64_t chunk;
} fnt_key;

/* Calls cb for every (run_id, chunk) an entry holds, until it returns
** non-zero (which is then returned). */
int fnt_entry_each_key(const fnt_entry *e,
                       int (*cb)(void *ctx, const char *run_id, int64_t chunk),
                       void *ctx);
/* 1 when the entry holds rows of `run_id`. */
int fnt_entry_has_run(const fnt_entry *e, const char *run_id);

typedef struct fnt_manifest {
  char *path;            /* relative */
  fnt_entry *entries;
  size_t n;
  /* snapshot.c's cache: a manifest is shared by the snapshots that list it
  ** (refs); one no snapshot holds waits on the idle list, least recently
  ** used first, until the budget pushes it out. */
  int refs;
  size_t mem;            /* about what it takes in memory */
  uint64_t hash;         /* of path */
  struct fnt_manifest *hnext, *idle_prev, *idle_next;
  /* metadata.c's index of a decoded manifest (none: 0), so that a commit
  ** finds one run's entries without a scan of every entry */
  struct fnt_entry_ref *refs_by;
  size_t n_refs_by;
  size_t n_of_table[FNT_NTABLES];   /* its entries of each table */
  int numeric_run_ids;   /* a run_id it holds looks like a number */
} fnt_manifest;

/* The index: (kind, hash of a string, entry index), sorted. */
enum { FNT_BY_RUN = 0,       /* an entry holding rows of a run (its run_id or keys) */
       FNT_BY_SMALL_REPO = 1 /* a run-row or profile file compaction has not
                             ** merged (no keys), by repo */ };
typedef struct fnt_entry_ref { uint64_t key; size_t i; } fnt_entry_ref;
/* Walks the entries of m of a kind and a string (run_id or repo), in entry
** order: by the index when m has one, else by a scan. */
typedef struct fnt_entry_iter {
  const fnt_manifest *m;
  int kind;
  const char *s;
  uint64_t key;
  size_t k;
} fnt_entry_iter;
void fnt_entry_iter_init(fnt_entry_iter *it, const fnt_manifest *m, int kind,
                         const char *s);
const fnt_entry *fnt_entry_iter_next(fnt_entry_iter *it);

int fnt_manifest_encode(const fnt_entry *e, size_t n, fnt_buf *out);
int fnt_manifest_decode(fnt_store *st, const char *path, const uint8_t *p,
                        size_t len, fnt_manifest **out);
void fnt_manifest_free(fnt_manifest *m);
/* Decodes what a snapshot lists as a manifest at `rel` (file bytes from
** `path`): a manifest, or a snapshot file holding its own entries (format
** 3), whose entries make the manifest. */
int fnt_manifest_decode_listed(fnt_store *st, const char *rel, const char *path,
                               const uint8_t *p, size_t len, fnt_manifest **out);

typedef struct fnt_catalog {
  uint64_t id, parent_id;
  int64_t ts_micros;
  char *operation, *summary;
  uint64_t added_files, added_rows, total_files, total_rows;
  char **manifest_paths;   /* the manifest list, inline */
  size_t n_manifests;
  /* Format 3: the entries the snapshot adds itself (its own name is then
  ** last in manifest_paths), or NULL. */
  struct fnt_manifest *delta;
  /* Not stored as such: the run a filing filed (snapshot.c reads it from
  ** the summary, or the files the snapshot added), NULL otherwise, and its
  ** chunk (-1 for a profile or none). */
  char *run_id;
  int64_t chunk;
} fnt_catalog;
int fnt_catalog_encode(const fnt_catalog *c, fnt_buf *out);
int fnt_catalog_decode(fnt_store *st, const char *path, const uint8_t *p,
                       size_t len, fnt_catalog *out);
void fnt_catalog_clear(fnt_catalog *c);
/* "catalog/v00000000000000000042" */
void fnt_catalog_name(uint64_t id, char out[64]);

/* A whole metadata file: magic, version, body, xxh64 trailer.
** fnt_meta_check verifies it and returns the body's bounds (after the
** version) and the version. */
void fnt_meta_begin(fnt_buf *b, const char magic[8]);
void fnt_meta_end(fnt_buf *b);
int fnt_meta_check(fnt_store *st, const char *path, const uint8_t *p,
                   size_t len, const char magic[8], fnt_rd *body,
                   uint64_t *version);

/* ---- snapshot.c */
struct fnt_snapshot {
  fnt_store *st;
  int refs;
  fnt_catalog cat;
  fnt_manifest **manifests;  /* borrowed from the store's cache */
  size_t n_manifests;
};
/* The ids of the snapshot files in catalog/, in no order (a new
** allocation in *ids). */
int fnt_catalog_ids(fnt_store *st, uint64_t **ids, size_t *n);
/* Reads and checks the snapshot file of `id`, not its manifests
** (FNT_E_NOTFOUND when there is none). */
int fnt_catalog_read(fnt_store *st, uint64_t id, fnt_catalog *cat);
/* The newest committed id (0 = empty warehouse). */
int fnt_snapshot_newest_id(fnt_store *st, uint64_t *id);
int fnt_snapshot_load(fnt_store *st, uint64_t id, fnt_snapshot **out);
/* Loads (or finds in the cache) a manifest by relative path: a reference,
** given back with fnt_manifest_release(). */
int fnt_manifest_get(fnt_store *st, const char *path, fnt_manifest **out);
void fnt_manifest_release(fnt_store *st, fnt_manifest *m);
void fnt_store_caches_free(fnt_store *st);

/* ---- compact.c: fnt_compact of the tables in `tables` only (a bit per
** fnt_table): the filings' own compaction keeps to run rows and profiles. */
int fnt_compact_tables(fnt_store *st, fnt_compact_stats *stats,
                       unsigned tables);

/* The error for a listed file (relative `path`, a "segment" or "manifest")
** found missing: FNT_E_EXPIRED when the newest snapshot no longer lists it
** (the reader's snapshot was expired under it), else FNT_E_CORRUPT. */
int fnt_listed_file_missing(fnt_store *st, const char *path, const char *what);
/* Records the id a commit just published (best effort). */
void fnt_snapshot_hint(fnt_store *st, uint64_t id);
/* The id at and below which snapshots were expired (catalog/EXPIRED; 0
** when none): their files may stay for the entries newer ones list. */
uint64_t fnt_snapshot_floor(fnt_store *st);
/* Writes the decimal `id` to catalog/NAME atomically (durably when
** `synced`): 0, or -1 with errno. */
int fnt_catalog_note(fnt_store *st, const char *name, uint64_t id, int synced);

/* ---- verify.c: reads everything the segment of manifest entry `e`
** holds, as its readers do: the footer, its table and rows against the
** entry's, every chunk of every row group (checksum, decompression) and
** its decoding by the table's reader, and a calls file's stacks and
** level-of-detail chunks.  *size is the file's size (0 when it does not
** open).  @return FNT_OK or the first problem's code, its message naming
** the file. */
int fnt_segment_verify(fnt_store *st, const fnt_entry *e, uint64_t *size);

/* ---- scan.c: a scan of exactly these files of the snapshot (all rows, all
** columns), for compaction and checks. */
int fnt_scan_open_entries(fnt_snapshot *snap, fnt_table table,
                          const fnt_entry *const *entries, size_t n,
                          int ordered, fnt_scan **out);

/* ---- compare.c */
/* The two-sided Mann-Whitney U p-value of fnt_compare_row.p_value on two
** samples, each sorted ascending: NAN when a side has fewer than 2 values or
** every value is equal. */
double fnt_mann_whitney_p(const int64_t *a, size_t na,
                          const int64_t *b, size_t nb);

#endif /* FNT_INTERNAL_H */
