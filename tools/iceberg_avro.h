/*
** iceberg_avro.h -- Iceberg v2 manifests and manifest lists (Avro object
** container files), written and read through avro-c (Debian libavro-dev).
**
** Only what `fnt export-iceberg` writes: data manifests of Parquet files
** whose partition is one identity-transformed string field.
*/
#ifndef FNT_ICEBERG_AVRO_H
#define FNT_ICEBERG_AVRO_H

#include <stddef.h>
#include <stdint.h>

#define ICE_EXISTING 0
#define ICE_ADDED    1
#define ICE_DELETED  2

/* A data file's metrics of one column (data_file value_counts,
** null_value_counts, lower_bounds, upper_bounds), bounds in Iceberg's
** single-value binary form (long: 8 bytes little-endian, string: UTF-8). */
typedef struct ice_metric {
  int32_t id;                 /* the column's field id */
  int64_t values, nulls;      /* values: NULLs included */
  char *lo, *hi;              /* NULL: no bounds */
  size_t lo_n, hi_n;
} ice_metric;

/* One manifest entry: a data file and its status in a snapshot. */
typedef struct ice_entry {
  int status;                 /* ICE_... */
  int64_t snapshot_id;        /* the snapshot that added (or deleted) it */
  int64_t seq, file_seq;      /* data and file sequence numbers; 0 = null:
                              ** inherited from the manifest list (an added file) */
  char *path;                 /* absolute */
  char *partition;            /* the partition value */
  int64_t records, size;
  ice_metric *metrics;        /* per column; may be none */
  size_t n_metrics;
} ice_entry;

/* One manifest_file record of a manifest list. */
typedef struct ice_manifest {
  char *path;
  int64_t length;
  int64_t seq, min_seq, added_snapshot_id;
  int32_t added_files, existing_files, deleted_files;
  int64_t added_rows, existing_rows, deleted_rows;
  char *lower, *upper;        /* partition bounds; NULL when no entry */
} ice_manifest;

/* What a manifest's header says of its table (the spec's required keys). */
typedef struct ice_table_desc {
  const char *schema_json;    /* the table schema, Iceberg JSON */
  const char *spec_json;      /* the partition spec's fields, JSON array */
  const char *part_name;      /* the partition field's name */
  int part_field_id;          /* 1000 */
} ice_table_desc;

/* Writes a manifest of `n` entries to `path` (exclusive create, fsynced);
** *m gets its manifest_file record (path and the counts), seq and
** added_snapshot_id filled from the arguments.  @return 0, or -1 with a
** message in err[0..errn). */
int ice_manifest_write(const char *path, const ice_table_desc *d,
                       const ice_entry *e, size_t n, int64_t snapshot_id,
                       int64_t seq, ice_manifest *m, char *err, size_t errn);

/* Reads a manifest's entries (a new array in *e; ice_entries_free); a null
** sequence number becomes `seq`, the manifest's in its list. */
int ice_manifest_read(const char *path, int64_t seq, ice_entry **e, size_t *n,
                      char *err, size_t errn);
void ice_entries_free(ice_entry *e, size_t n);

/* Writes a manifest list for snapshot `snapshot_id` (parent 0: none). */
int ice_list_write(const char *path, int64_t snapshot_id, int64_t parent_id,
                   int64_t seq, const ice_manifest *m, size_t n,
                   char *err, size_t errn);

/* Reads a manifest list (a new array in *m; ice_manifests_free). */
int ice_list_read(const char *path, ice_manifest **m, size_t *n,
                  char *err, size_t errn);
void ice_manifests_free(ice_manifest *m, size_t n);

#endif /* FNT_ICEBERG_AVRO_H */
