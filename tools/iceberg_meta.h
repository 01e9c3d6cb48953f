/*
** iceberg_meta.h -- the metadata file of an Iceberg format-v2 table
** (vN.metadata.json, through jansson) and its publication, for
** `fnt export-iceberg`: loading the current version, appending a snapshot,
** publishing the next version and version-hint.text.
*/
#ifndef FNT_ICEBERG_META_H
#define FNT_ICEBERG_META_H

#include <jansson.h>
#include <stdint.h>

#include "fnt_store.h"

#define ICE_PART_FIELD_ID 1000     /* the one partition field's id */

/* $FNT_EXPORT_ICEBERG_CRASH == step: SIGKILL here (the tests' fault hook). */
void ice_crash_point(const char *step);

/* A random positive 63-bit id (snapshot ids). */
int64_t ice_random_id(void);
int64_t ice_now_ms(void);

/* 1 when the column may be NULL (commit, stable_id): Iceberg optional. */
int ice_nullable(const char *column);

/* The table's Iceberg schema (schema-id 0, store/FORMAT.md's field ids),
** and its partition spec's fields: identity(column part_col). */
json_t *ice_schema_json(fnt_table t);
json_t *ice_spec_fields(fnt_table t, int part_col);

/* What the table's current metadata says. */
typedef struct ice_state {
  json_t *meta;            /* the current document; NULL: no table yet */
  long version;            /* N of vN.metadata.json; 0: none */
  int64_t snapshot_id;     /* current; 0: none */
  int64_t seq;             /* last-sequence-number */
  uint64_t wh_snapshot;    /* property fntrace.warehouse-snapshot-id */
  const char *list_path;   /* the current snapshot's manifest list (in meta) */
  json_t *summary;         /* the current snapshot's summary (in meta) */
  int hint_stale;          /* version-hint.text names an older version */
} ice_state;

/* Loads the newest version of the table in folder tdir: the one
** version-hint.text names, or a newer one found by probing past it.  A
** table exported from another warehouse than `warehouse` is refused.
** @return 0 (s->meta NULL: no table), or -1 with a message in err. */
int ice_state_load(const char *tdir, const char *warehouse, ice_state *s,
                   char *err, size_t errn);
void ice_state_free(ice_state *s);

/* A snapshot to append. */
typedef struct ice_commit {
  int64_t snapshot_id, seq, ms;
  const char *manifest_list;
  int overwrite;                 /* operation overwrite (files deleted), else append */
  int64_t added_files, added_rows, added_bytes;
  int64_t deleted_files, deleted_rows, deleted_bytes;
  uint64_t wh_snapshot;          /* the warehouse snapshot exported */
} ice_commit;

/* The next metadata document: s's (or a new table's for table t,
** partitioned by identity(part_col), at tdir) with c appended as the
** current snapshot, the logs and properties updated.  NULL: out of memory. */
json_t *ice_meta_next(const ice_state *s, fnt_table t, int part_col,
                      const char *tdir, const char *warehouse,
                      const ice_commit *c);

/* Publishes meta as version v: a fsynced temporary file link()ed to
** vN.metadata.json (never replacing one: a racing export loses with a
** clear error), then version-hint.text.  @return 0 or -1 (err). */
int ice_publish(const char *tdir, json_t *meta, long v, char *err, size_t errn);

/* Replaces version-hint.text by one naming version v. */
int ice_write_hint(const char *tdir, long v, char *err, size_t errn);

#endif /* FNT_ICEBERG_META_H */
