/*
** parquet_write.h -- a focused Apache Parquet writer: flat schemas of
** 64-bit integers and UTF-8 text, for `fnt export-iceberg`.
**
** Debian packages no library that writes Parquet (Apache Arrow is not in
** Debian), so this is the part of the format fntrace needs and no more:
** data pages v1, DELTA_BINARY_PACKED integers, RLE_DICTIONARY text (PLAIN
** dictionary pages), zstd pages, REQUIRED or OPTIONAL columns with field
** ids, exact min/max/null-count statistics per column chunk, and the
** thrift compact footer.  Rows are buffered one row group at a time: memory is
** bounded by the row-group size (and the text dictionaries, which are reset
** once they pass 16 MB).
**
** Use: pq_writer_new(); per row, one pq_int/pq_text/pq_text_id/pq_null per
** column in any order, then pq_end_row() (or many rows at once: pq_ints,
** pq_text_ids, pq_end_rows); pq_finish(); pq_writer_free().
*/
#ifndef FNT_PARQUET_WRITE_H
#define FNT_PARQUET_WRITE_H

#include <stddef.h>
#include <stdint.h>

typedef enum pq_type { PQ_INT64 = 0, PQ_TEXT = 1 } pq_type;

typedef struct pq_column {
  const char *name;       /* copied */
  pq_type type;
  int nullable;           /* 1: OPTIONAL, 0: REQUIRED */
  int32_t field_id;       /* written as the schema element's field_id */
} pq_column;

/* Where the bytes go: returns 0, or non-zero to fail the write. */
typedef int (*pq_sink)(void *ctx, const void *p, size_t n);

typedef struct pq_writer pq_writer;

/* A writer of `ncol` columns (1..1000) whose row groups hold at most
** `group_rows` rows (0: 1Mi).  Writes the leading magic at once.
** @return the writer, or NULL (out of memory, bad schema, sink failure);
** *err (when not NULL) then gets a static message. */
pq_writer *pq_writer_new(const pq_column *cols, int ncol, size_t group_rows,
                         int zstd_level, pq_sink sink, void *ctx,
                         const char **err);

/* The current row's value of column `col`.  Each column of a row gets
** exactly one value.  pq_text_id takes an id from pq_intern.
** @return 0, or -1 (the message in pq_errmsg). */
int pq_int(pq_writer *w, int col, int64_t v);
int pq_text(pq_writer *w, int col, const char *s, size_t n);
int pq_null(pq_writer *w, int col);
int pq_text_id(pq_writer *w, int col, uint32_t id);

/* The dictionary id of text `s` in column `col` (added when new), so that a
** caller writing the same strings again and again can hash them once.
** Ids stay valid while pq_dict_generation() is unchanged (it changes only
** inside pq_end_row, when a row group is written).
** @return the id, or -1 (out of memory, string over 2 GB). */
int64_t pq_intern(pq_writer *w, int col, const char *s, size_t n);
uint64_t pq_dict_generation(const pq_writer *w);

/* Ends the row (every column must have its value); writes a row group once
** `group_rows` rows are buffered.  @return 0 or -1. */
int pq_end_row(pq_writer *w);

/* Bulk appends, for `n` rows at once (n <= pq_room()): every column gets
** its n values (pq_ints, or pq_text_ids, where an id < 0 is NULL), then
** pq_end_rows(n) ends them as pq_end_row would.  @return 0 or -1. */
size_t pq_room(const pq_writer *w);
int pq_ints(pq_writer *w, int col, const int64_t *v, size_t n);
int pq_text_ids(pq_writer *w, int col, const int64_t *ids, size_t n);
int pq_end_rows(pq_writer *w, size_t n);

/* Writes the last row group and the footer; *size gets the file's size.
** @return 0 or -1. */
int pq_finish(pq_writer *w, uint64_t *size);

/* A column's statistics over the whole file (after pq_finish): values
** (NULLs included), NULLs, and the min/max as written in the column chunk
** statistics (integers 8 bytes little-endian, text its bytes); min is NULL
** when the column holds no value but NULL.  Owned by the writer. */
typedef struct pq_stats {
  uint64_t values, nulls;
  const uint8_t *min, *max;
  size_t min_n, max_n;
} pq_stats;
void pq_column_stats(const pq_writer *w, int col, pq_stats *out);

/* Rows ended so far. */
uint64_t pq_rows(const pq_writer *w);

/* The message of the last failure ("" when none). */
const char *pq_errmsg(const pq_writer *w);

void pq_writer_free(pq_writer *w);

#endif /* FNT_PARQUET_WRITE_H */
