/*
** segment.h -- segment files: writing them (segment_write.c) and reading
** them back (segment_read.c).  The bytes are specified in FORMAT.md.
*/
#ifndef FNT_SEGMENT_H
#define FNT_SEGMENT_H

#include "internal.h"

/* Rows per row group: small enough that a 10,000-event replay window
** decodes one or two groups, large enough to compress well. */
#define FNT_RG_ROWS 16384
#define FNT_SEG_MAX_COLS 64  /* columns of a segment, at most */

/* Column encodings (FORMAT.md, "Encodings"). */
enum {
  FNT_ENC_CONST      = 0,  /* one text value for the whole segment, in the footer */
  FNT_ENC_DELTA_BP   = 1,  /* first value, min delta, bit-packed deltas */
  FNT_ENC_THREAD_BP  = 2,  /* bit-packed indexes into the footer's thread dictionary */
  FNT_ENC_FUNC_BP    = 3,  /* bit-packed indexes into the footer's function table */
  FNT_ENC_FUNC_REF   = 4,  /* no chunk: the stable_id of the row's function */
  FNT_ENC_KIND_BP    = 5,  /* bit-packed kinds */
  FNT_ENC_PLAIN_INT  = 6,  /* zigzag varint per row; NULL not representable */
  FNT_ENC_PLAIN_TEXT = 7,  /* length+1 varint (0 = NULL) and bytes per row */
  FNT_ENC_FUNC_STACK = 8,  /* function indexes, exits predicted from a call stack */
  FNT_ENC_DELTA_VARINT = 9,/* zigzag varint of each row's delta from the row before */
  FNT_ENC_DERIVED    = 10  /* no chunk: computed from other columns (calls) */
};

/* Calls segments: rows per row group at most (a row group also holds one
** depth only), so that an instant reads a few small groups per depth. */
#define FNT_CALLS_RG_ROWS 1024

/* Per row group of a calls segment: the bounds beyond seq (call_id) and t
** (start .. end) that pruning uses. */
typedef struct fnt_calls_rg {
  int64_t depth, parent_min, parent_max, dur_max;
  uint32_t thread_min, thread_max;   /* dictionary indexes */
} fnt_calls_rg;

/* Per function of a calls segment: the aggregates of its closed calls. */
typedef struct fnt_calls_agg {
  int64_t calls, incl, self;
} fnt_calls_agg;

/* Per distinct stack of a calls segment (its stacks section, stacks.c):
** the count and self time of its closed calls. */
typedef struct fnt_calls_stack {
  uint32_t parent;          /* the parent's index + 1; 0 at depth 0 */
  uint32_t fn;              /* the segment's function */
  int64_t calls, self;
} fnt_calls_stack;

/* Stack nodes interned by (parent, fn) to dense ids (stacks.c): the
** writer's nodes, and fnt_flame's (fn: a symbol id there).  New nodes
** start with calls and self 0. */
typedef struct fnt_stacktab {
  fnt_calls_stack *node;
  uint32_t n, cap;
  uint32_t *slot, mask;       /* open addressing: id + 1, 0 empty */
} fnt_stacktab;
int fnt_stacktab_intern(fnt_stacktab *t, uint32_t parent, uint32_t fn,
                        uint32_t *id);            /* FNT_OK or FNT_E_NOMEM */
void fnt_stacktab_clear(fnt_stacktab *t);

/* Optional sections of a calls segment's footer, after the aggregates. */
#define FNT_CALLS_SECTION_STACKS 1
#define FNT_CALLS_SECTION_LOD    2   /* blocks only (written before tag 3) */
#define FNT_CALLS_SECTION_LOD_SUMMED 3  /* each group's summary, then blocks */
/* Rows per block of the level-of-detail chunk that writers make (lod.c;
** readers take the chunk's own), at most FNT_CALLS_RG_ROWS. */
#ifndef FNT_LOD_ROWS
#define FNT_LOD_ROWS 128
#endif
/* A stacks chunk is written when it has at most one node per
** FNT_STACKS_MIN_FOLD rows of the file, or is at most FNT_STACKS_SMALL
** bytes. */
#define FNT_STACKS_MIN_FOLD 4
#define FNT_STACKS_SMALL    4096



/* The trailer: u64 footer stored length, u64 footer raw length, u64
** checksum of the stored footer, magic.  The footer is zstd-compressed
** when that is smaller (its function table is mostly similar symbols). */
#define FNT_SEG_TRAILER 32

/* Per-thread call stacks that FUNC_STACK keeps beyond this depth are not
** modelled (the writer and every reader drop the same pushes). */
#define FNT_STACK_MODEL_DEPTH 256
/* Segments with more threads than this use FUNC_BP (bounded model memory). */
#define FNT_STACK_MODEL_THREADS 4096

/* A value for the row writer. */
typedef struct fnt_value {
  int64_t i;
  const char *s;        /* text columns: NULL = SQL NULL */
} fnt_value;

/* Bounds of what a segment holds, for the manifest. */
typedef struct fnt_seg_bounds {
  int64_t seq_min, seq_max, t_min, t_max;
} fnt_seg_bounds;

/* The distinct thread ids of ev[0..n), sorted, in a new allocation.
** Returns FNT_OK or FNT_E_NOMEM. */
int fnt_distinct_threads(const fnt_event *ev, size_t n, uint64_t **out,
                         uint32_t *nout);
/* The same over the uint32 ids at a, a+stride, ... (na of them) and then
** those at b, b+stride, ... (nb). */
int fnt_distinct_u32(const uint32_t *a, size_t stride, size_t na,
                     const uint32_t *b, size_t nb, uint64_t **out,
                     uint32_t *nout);

/* Encodes an events segment.  `ev` is sorted by seq_no; the segment's
** function i is fns[i], and event e's is fns[remap[e.function]]; `threads`
** is the sorted thread dictionary (fnt_distinct_threads).  Appends the
** file's bytes to `out`. */
int fnt_segment_write_events(const char *repo, const char *commit,
                             const char *run_id, const fnt_function *fns,
                             size_t n_fns, const fnt_event *ev, size_t n,
                             const uint32_t *remap, const uint64_t *threads,
                             uint32_t nthreads, fnt_buf *out,
                             fnt_seg_bounds *bounds);

/* Encodes a segment of `nrows` rows of table `t` (runs or profile), values
** row-major (nrows * fnt_table_ncol(t)).  Appends the bytes to `out`. */
int fnt_segment_write_rows(fnt_table t, const fnt_value *vals, size_t nrows,
                           fnt_buf *out);

/* ---- reading */
typedef struct fnt_seg_chunk {
  uint64_t offset, stored_len, raw_len, checksum;
  uint8_t codec;
} fnt_seg_chunk;

typedef struct fnt_seg_col {
  uint32_t field_id;
  uint8_t encoding;
  char *const_value;     /* FNT_ENC_CONST */
  size_t const_len;
  int chunk_index;       /* index into a row group's chunks, -1 if none */
} fnt_seg_col;

typedef struct fnt_seg_rg {
  uint64_t nrows, first_row;
  int64_t seq_min, seq_max, t_min, t_max;
  /* Its chunk descriptors, parsed when the group is read: their bytes'
  ** place in the footer's row-group section, and their length. */
  uint32_t desc, desc_len;
} fnt_seg_rg;

typedef struct fnt_segment {
  char *path;            /* relative, the cache key */
  uint64_t path_hash;    /* fnt_hash of path: the cache compares it first */
  char *full_path;       /* for messages */
  int fd;                /* -1 once the file is read whole into `image` */
  uint8_t *image;        /* a small file's bytes, read with one pread */
  uint64_t size;         /* the file's size in bytes */
  int refs;
  uint64_t serial;       /* this handle's number for it, never reused */
  size_t bytes;          /* about what the parsed footer holds in memory */
  uint8_t table;
  uint64_t nrows;
  uint32_t ncols, nchunk_cols;
  fnt_seg_col *cols;
  uint32_t nthreads;
  uint64_t *threads;
  uint32_t nfuncs;
  fnt_function *funcs;   /* texts in func_text; NULL until loaded (below) */
  char *func_text;       /* each text preceded by a pointer to its owner: */
  struct fnt_segment *funcs_owner; /* the segment holding (a reference on
                         ** it) the table this one shares, or NULL: own */
  uint32_t *func_len;    /* per function: symbol length, stable_id length */
  char **func_keys;      /* per function without a stable_id: its key
                         ** "?symbol", an owned text made on first use
                         ** (fnt_segment_func_key); NULL until then */
  uint64_t func_hash[2]; /* XXH3-128 of the function table's bytes: files
                         ** of one program share it, and readers that map
                         ** functions to their own ids map them once */
  uint32_t nrg;
  fnt_seg_rg *rgs;
  /* The footer's row-group section, where the groups' chunk descriptors
  ** are parsed from when a group is read (a calls file has thousands; a
  ** query reads a few groups): `desc` in memory (the file's image, or a
  ** copy when the footer was compressed), else read from the file at
  ** offset desc_at.  data_end: where the footer begins, which every chunk
  ** lies before. */
  const uint8_t *desc;
  uint8_t *desc_copy;
  uint64_t desc_at, data_end;
  /* Per row group its descriptors once parsed (fnt_segment_descs), each
  ** a block of nchunk_cols; NULL until a group is first read.  A cache of
  ** what the file holds, so filled through const pointers. */
  fnt_seg_chunk **rg_descs;
  int cached;            /* in the handle's cache: its bytes counted there */
  /* Calls segments: row groups [0, nclosed_rg) hold calls that ended, the
  ** rest the frames open at the end (read from the run's tail file only). */
  uint32_t nclosed_rg;
  fnt_calls_rg *crgs;
  /* Per function the aggregates of its closed calls, and its key hash (2
  ** per function, XXH3-128 of its key; version 4): only heat reads them,
  ** through fnt_segment_sums().  Parsed when the footer was compressed;
  ** a raw one leaves them in the file, at hash_at and aggs_at (a file of
  ** 5,000 functions has 200 KB of them, new memory at every first open);
  ** a lazy open hands them out once. */
  fnt_calls_agg *aggs;
  uint64_t *key_hash;
  uint64_t hash_at, aggs_at, aggs_end;   /* file offsets; 0: none */
  int has_stacks;           /* the file has a stacks chunk */
  fnt_seg_chunk stacks;     /* read only by fnt_flame (stacks.c) */
  int has_lod;              /* the file has a level-of-detail chunk: 1 of
                            ** blocks only (tag 2), 2 with the groups'
                            ** summaries (tag 3) */
  fnt_seg_chunk lod;        /* read only by fnt_timeline (lod.c) */
  /* Calls segments of version 4 and events segments of version 6 keep
  ** their function table in a chunk, loaded by fnt_segment_open() and not
  ** by fnt_segment_open_lazy() (fnt_segment_load_funcs() loads it then).
  ** A calls footer gives each function's key hash; an events footer the
  ** table's hash (func_hash), by which the open shares a cached file's. */
  int has_funcs_chunk, funcs_loaded;
  int aggs_only;            /* opened lazily, not cached: no row groups */
  fnt_seg_chunk funcs_chunk;
} fnt_segment;

/* The nodes of a calls segment's stacks chunk (stacks.c), parents first;
** *out is freed by the caller.  @return FNT_OK or a code (message set). */
int fnt_calls_stacks_read(fnt_store *st, const fnt_segment *seg,
                          fnt_calls_stack **out, uint32_t *n);

/* Opens a segment (or finds it in the handle's cache) and verifies its
** footer.  Release with fnt_segment_release(). */
int fnt_segment_open(fnt_store *st, const char *path, fnt_segment **out);
/* The same without loading a function table kept in a chunk (funcs NULL
** unless it was loaded before): for readers of rows that name functions
** by their key hashes. */
int fnt_segment_open_rows(fnt_store *st, const char *path, fnt_segment **out);
/* A calls file's per-function sums (heat.c): each function's key hash
** (version 4 files) and the aggregates of its closed calls, read in order
** by fnt_seg_sums_next().  They come from the parsed arrays of a segment
** whose footer was compressed, else they are read where the file holds
** them (its image, or the handle's footer buffer): nothing is allocated
** per file (two arrays a file of ~200 KB were a heat's first new pages,
** and malloc trimmed and grew its heap again for every file), but they
** are valid only while the segment is held and until the handle's next
** segment open or fnt_segment_load_funcs(). */
typedef struct fnt_seg_sums {
  uint32_t n, i;                 /* functions; the next one */
  int hashed;                    /* key hashes given */
  int bad;                       /* raw bytes ended early (a file changed) */
  const uint64_t *hash;          /* parsed: 2 a function (or NULL) ... */
  const fnt_calls_agg *agg;
  const uint8_t *raw_hash;       /* ... else raw: 16 bytes a function, */
  fnt_rd raw_agg;                /* and 3 varints */
} fnt_seg_sums;

/* For readers of a calls segment's aggregates only: the cached segment,
** else one read without its row groups (nrg 0) and, when it keeps it in a
** chunk, its function table (funcs NULL); not cached.  Its sums go to
** *sums when not NULL: a segment opened so keeps no aggs or key_hash. */
int fnt_segment_open_lazy(fnt_store *st, const char *path, fnt_segment **out,
                          fnt_seg_sums *sums);
/* The sums of a segment opened whole (fnt_segment_open_rows()); none (n
** 0) for other tables.  @return FNT_OK or a code (message set). */
int fnt_segment_sums(fnt_store *st, const fnt_segment *seg, fnt_seg_sums *sums);
/* The next function's key hash (h unset when !hashed) and aggregates.
** @return 1, or 0 after the last (or at bytes that end early: s->bad). */
int fnt_seg_sums_next(fnt_seg_sums *s, uint64_t h[2], fnt_calls_agg *a);
/* The key hash of function i (i < s->n, s->hashed), in any order. */
void fnt_seg_sums_hash(const fnt_seg_sums *s, uint32_t i, uint64_t h[2]);
/* Loads the function table of a segment that keeps it in a chunk (one
** opened lazily); on failure the segment stays as it was, its table
** unloaded.  @return FNT_OK or a code (message set). */
int fnt_segment_load_funcs(fnt_store *st, fnt_segment *seg);

/* The key of function i of a loaded table (SPEC §7): its stable_id, else
** "?symbol", made once for the table's owner and kept with it, so that
** every reader of the file (and of files sharing its table) finds it made.
** Like the table's texts it names its owner for fnt_text_release.
** @return the key, or NULL when out of memory. */
const char *fnt_segment_func_key(fnt_store *st, fnt_segment *seg, uint32_t i);

void fnt_segment_release(fnt_store *st, fnt_segment *seg);
void fnt_segment_cache_free(fnt_store *st);

/* A footer's texts (a constant, symbol or stable_id of a fnt_segment) know
** their segment: a reader that took a reference on it (refs++) for a text
** it keeps drops it with fnt_text_release(text) (fnt_store.h). */

/* The segment column of a field id, or NULL (a column this file predates). */
const fnt_seg_col *fnt_segment_col(const fnt_segment *seg, uint32_t field_id);

/* The chunk descriptors of row group `rg` (seg->nchunk_cols of them, by
** fnt_seg_col.chunk_index) into *out, valid as long as the segment.
** @return FNT_OK or a code (message set). */
int fnt_segment_descs(fnt_store *st, const fnt_segment *seg, uint32_t rg,
                      const fnt_seg_chunk **out);

/* Reads, verifies and decompresses a column chunk of row group `rg` into
** `raw` (reused; its len is set to the raw length). */
int fnt_segment_read_chunk(fnt_store *st, const fnt_segment *seg, uint32_t rg,
                           const fnt_seg_col *col, fnt_buf *scratch,
                           fnt_buf *raw);

/* The same for a calls segment's stacks chunk (seg->has_stacks). */
int fnt_segment_read_stacks(fnt_store *st, const fnt_segment *seg,
                            fnt_buf *scratch, fnt_buf *raw);
/* The same for its level-of-detail chunk (seg->has_lod). */
int fnt_segment_read_lod(fnt_store *st, const fnt_segment *seg,
                         fnt_buf *scratch, fnt_buf *raw);
/* An events segment's functions chunk (version 6), read and checked
** against the count and hash its footer gives, even when the open shared
** another file's table and never read it (`fnt check`). */
int fnt_segment_verify_funcs(fnt_store *st, const fnt_segment *seg);

/* Decodes an integer chunk (DELTA_BP, *_BP, PLAIN_INT or DELTA_VARINT) of
** n rows into out[0..n).  `limit` bounds the *_BP encodings' indexes (the
** dictionary's size; an empty dictionary admits none).  Returns 0,
** or -1 when the bytes are malformed. */
int fnt_decode_ints(int encoding, const uint8_t *p, size_t len, size_t n,
                    uint64_t limit, uint64_t *out);
/* The same for rows [from, to) only, into out[from..to) (ints.c): the
** rows before are skipped, those after only counted (the chunk must hold
** exactly n rows); indexes are checked against `limit` in the range. */
int fnt_decode_ints_range(int encoding, const uint8_t *p, size_t len, size_t n,
                          uint64_t limit, size_t from, size_t to, uint64_t *out);

/* A cursor over an integer chunk of n rows (ints.c), read in row order
** from any row on: fnt_ints_skip(k) passes k rows as cheaply as the
** encoding lets it (bit-packed: O(1); PLAIN_INT: by counting the varints'
** last bytes; deltas: summed, not stored), fnt_ints_read(k) decodes the
** next k into out[0..k).  Each returns 0, or -1 when the bytes are
** malformed or fewer than k rows are left; fnt_ints_finish() checks that
** the bytes after the rows read hold exactly the rows left. */
typedef struct fnt_ints {
  int encoding;
  const uint8_t *p, *end;   /* varints: the next row's; *_BP: the packed bits */
  const uint8_t *base;      /* where the rows' bytes begin */
  size_t n, pos;            /* rows; the next row */
  uint64_t limit;           /* *_BP: indexes below it */
  uint64_t prev;            /* delta encodings: the value of row pos-1 */
  uint64_t first, min_delta;/* DELTA_BP */
  unsigned width;           /* the *_BP encodings and DELTA_BP */
} fnt_ints;
int fnt_ints_init(fnt_ints *c, int encoding, const uint8_t *p, size_t len,
                  size_t n, uint64_t limit);
int fnt_ints_skip(fnt_ints *c, size_t k);
int fnt_ints_read(fnt_ints *c, size_t k, uint64_t *out);
/* fnt_ints_read of k rows of each of cursors c[0..nc) into out[0..nc),
** the varint columns decoded side by side (one row of each in turn): a
** varint's place waits for the length of the one before it, in its own
** column only. */
int fnt_ints_read_many(fnt_ints *const *c, int nc, size_t k,
                       uint64_t *const *out);
int fnt_ints_finish(fnt_ints *c);
/* Moves the cursor to row `row`, whose bytes begin `off` bytes after the
** rows' first (varints; ignored for *_BP) and whose value is `value`
** (DELTA_VARINT: the cursor goes on from it), as a calls file's
** level-of-detail chunk gives them.  Returns 0, or -1 when the encoding
** cannot seek (DELTA_BP) or the place lies outside the chunk; a wrong
** place shows as malformed rows when read. */
int fnt_ints_seek(fnt_ints *c, size_t row, size_t off, uint64_t value);

/* Decodes a FUNC_STACK chunk of n rows given the rows' thread dictionary
** indexes and kinds (decoded before).  Returns 0, or -1 when malformed. */
int fnt_decode_func_stack(const uint8_t *p, size_t len, size_t n,
                          const uint64_t *thread, const uint64_t *kind,
                          uint32_t nthreads, uint32_t nfuncs, uint64_t *out);

/* Decodes a PLAIN_TEXT chunk of n rows: each string is copied, with its
** NUL, into `arena`, and off[i] is its offset there or -1 for NULL. */
int fnt_decode_texts(const uint8_t *p, size_t len, size_t n, fnt_buf *arena,
                     int64_t *off);

#endif /* FNT_SEGMENT_H */
