/*
** iceberg_meta.c -- an Iceberg v2 table's metadata file and its publication
** (iceberg_meta.h).
**
** The document carries every field the spec requires of v2 metadata
** (format-version, table-uuid, location, last-sequence-number,
** last-updated-ms, last-column-id, schemas, current-schema-id,
** partition-specs, default-spec-id, last-partition-id, sort-orders,
** default-sort-order-id) and current-snapshot-id, refs.main, snapshots,
** snapshot-log, metadata-log and the properties fntrace reads back.  Each
** export reads the newest version, appends its snapshot and publishes the
** next version whole; jansson keeps the keys in their order.
*/
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "iceberg_meta.h"
#include "internal.h"        /* field ids (schema.c), file helpers (io.c) */

#define PBUF 8192

void ice_crash_point(const char *step){
  const char *at = getenv("FNT_EXPORT_ICEBERG_CRASH");
  if( at && strcmp(at, step)==0 ) raise(SIGKILL);
}

int64_t ice_now_ms(void){ return fnt_now_micros() / 1000; }

int64_t ice_random_id(void){
  char hex[33];
  int64_t v;
  fnt_random_name(hex);
  hex[15] = 0;                                   /* 60 random bits */
  v = (int64_t)strtoull(hex, 0, 16);
  return v ? v : 1;
}

static void randomUuid(char out[37]){
  char h[33];
  fnt_random_name(h);
  h[12] = '4';                                   /* version 4 */
  h[16] = "89ab"[h[16] % 4];                     /* RFC 4122 variant */
  snprintf(out, 37, "%.8s-%.4s-%.4s-%.4s-%.12s", h, h+8, h+12, h+16, h+20);
}

int ice_nullable(const char *column){
  return strcmp(column, "commit")==0 || strcmp(column, "stable_id")==0
      || strcmp(column, "parent_id")==0;
}

json_t *ice_schema_json(fnt_table t){
  const fnt_colinfo *ci = fnt_table_cols(t);
  json_t *fields = json_array();
  int i;
  for(i=0; i<fnt_table_ncol(t); i++){
    json_array_append_new(fields, json_pack("{s:I, s:s, s:b, s:s}",
        "id", (json_int_t)ci[i].field_id, "name", ci[i].name,
        "required", !ice_nullable(ci[i].name), "type", ci[i].is_text ? "string" : "long"));
  }
  return json_pack("{s:s, s:i, s:o}", "type", "struct", "schema-id", 0, "fields", fields);
}

json_t *ice_spec_fields(fnt_table t, int part_col){
  const fnt_colinfo *ci = fnt_table_cols(t);
  return json_pack("[{s:s, s:s, s:I, s:i}]", "name", ci[part_col].name,
                   "transform", "identity", "source-id", (json_int_t)ci[part_col].field_id,
                   "field-id", ICE_PART_FIELD_ID);
}

static int lastColumnId(fnt_table t){
  const fnt_colinfo *ci = fnt_table_cols(t);
  int i, m = 0;
  for(i=0; i<fnt_table_ncol(t); i++) if( (int)ci[i].field_id > m ) m = (int)ci[i].field_id;
  return m;
}

static void metaPath(char *out, size_t n, const char *tdir, long v){
  snprintf(out, n, "%s/metadata/v%ld.metadata.json", tdir, v);
}

int ice_state_load(const char *tdir, const char *warehouse, ice_state *s,
                   char *err, size_t errn){
  char path[PBUF];
  FILE *f;
  long v = 0, hinted;
  json_error_t je;
  json_t *props, *snaps, *sn;
  const char *w, *src;
  size_t i;
  memset(s, 0, sizeof *s);
  snprintf(path, sizeof path, "%s/metadata/version-hint.text", tdir);
  if( (f = fopen(path, "r"))!=0 ){
    if( fscanf(f, "%ld", &v)!=1 || v<1 ) v = 0;
    fclose(f);
  }
  /* The hint may be stale (a crash after publishing): probe past it. */
  hinted = v;
  for(;;){
    struct stat sb;
    metaPath(path, sizeof path, tdir, v+1);
    if( stat(path, &sb) ) break;
    v++;
  }
  if( v==0 ) return 0;
  s->hint_stale = v!=hinted;
  metaPath(path, sizeof path, tdir, v);
  if( (s->meta = json_load_file(path, 0, &je))==0 ){
    snprintf(err, errn, "%s: line %d: %s", path, je.line, je.text);
    return -1;
  }
  s->version = v;
  if( json_integer_value(json_object_get(s->meta, "format-version"))!=2 ){
    snprintf(err, errn, "%s: not an Iceberg format-version 2 table", path);
    return -1;
  }
  s->seq = json_integer_value(json_object_get(s->meta, "last-sequence-number"));
  s->snapshot_id = json_integer_value(json_object_get(s->meta, "current-snapshot-id"));
  props = json_object_get(s->meta, "properties");
  w = json_string_value(json_object_get(props, "fntrace.warehouse-snapshot-id"));
  src = json_string_value(json_object_get(props, "fntrace.warehouse"));
  if( w==0 ){
    snprintf(err, errn, "%s: no fntrace.warehouse-snapshot-id property: not a table fnt export-iceberg wrote", path);
    return -1;
  }
  s->wh_snapshot = strtoull(w, 0, 10);
  if( src && strcmp(src, warehouse)!=0 ){
    snprintf(err, errn, "%s: exported from the warehouse %s, not %s; export to another DEST", path, src, warehouse);
    return -1;
  }
  snaps = json_object_get(s->meta, "snapshots");
  json_array_foreach(snaps, i, sn){
    if( json_integer_value(json_object_get(sn, "snapshot-id"))==s->snapshot_id ){
      s->list_path = json_string_value(json_object_get(sn, "manifest-list"));
      s->summary = json_object_get(sn, "summary");
    }
  }
  if( s->snapshot_id>0 && s->list_path==0 ){
    snprintf(err, errn, "%s: current snapshot %lld is not in its snapshots", path, (long long)s->snapshot_id);
    return -1;
  }
  return 0;
}

void ice_state_free(ice_state *s){
  json_decref(s->meta);
  memset(s, 0, sizeof *s);
}

static int64_t summaryInt(json_t *summary, const char *k){
  const char *v = json_string_value(json_object_get(summary, k));
  return v ? strtoll(v, 0, 10) : 0;
}

/* Summary values and properties are strings in Iceberg metadata. */
static void setDecimal(json_t *obj, const char *k, int64_t v){
  char t[24];
  snprintf(t, sizeof t, "%lld", (long long)v);
  json_object_set_new(obj, k, json_string(t));
}

/* A new table's metadata, without snapshots. */
static json_t *newMeta(fnt_table t, int part_col, const char *tdir, const char *warehouse){
  char uuid[37];
  randomUuid(uuid);
  return json_pack("{s:i, s:s, s:s, s:I, s:I, s:i, s:i, s:[o], s:i, s:[{s:i, s:o}], s:i,"
                   " s:i, s:[{s:i, s:[]}], s:{s:s, s:s, s:s, s:s}, s:[], s:[], s:[], s:{}}",
      "format-version", 2, "table-uuid", uuid, "location", tdir,
      "last-sequence-number", (json_int_t)0, "last-updated-ms", (json_int_t)ice_now_ms(),
      "last-column-id", lastColumnId(t), "current-schema-id", 0,
      "schemas", ice_schema_json(t), "default-spec-id", 0,
      "partition-specs", "spec-id", 0, "fields", ice_spec_fields(t, part_col),
      "last-partition-id", ICE_PART_FIELD_ID, "default-sort-order-id", 0,
      "sort-orders", "order-id", 0, "fields",
      "properties", "write.format.default", "parquet",
                    "write.parquet.compression-codec", "zstd",
                    "fntrace.table", fnt_table_name(t),
                    "fntrace.warehouse", warehouse,
      "snapshots", "snapshot-log", "metadata-log", "refs");
}

json_t *ice_meta_next(const ice_state *s, fnt_table t, int part_col,
                      const char *tdir, const char *warehouse,
                      const ice_commit *c){
  json_t *meta = s->meta ? json_deep_copy(s->meta) : newMeta(t, part_col, tdir, warehouse);
  json_t *sum, *sn;
  if( meta==0 || (sum = json_pack("{s:s}", "operation", c->overwrite ? "overwrite" : "append"))==0 ){
    json_decref(meta);
    return 0;
  }
  setDecimal(sum, "added-data-files", c->added_files);
  setDecimal(sum, "added-records", c->added_rows);
  setDecimal(sum, "added-files-size", c->added_bytes);
  setDecimal(sum, "deleted-data-files", c->deleted_files);
  setDecimal(sum, "deleted-records", c->deleted_rows);
  setDecimal(sum, "removed-files-size", c->deleted_bytes);
  setDecimal(sum, "changed-partition-count", c->added_files);   /* a file per partition */
  setDecimal(sum, "total-data-files", summaryInt(s->summary, "total-data-files") + c->added_files - c->deleted_files);
  setDecimal(sum, "total-records", summaryInt(s->summary, "total-records") + c->added_rows - c->deleted_rows);
  setDecimal(sum, "total-files-size", summaryInt(s->summary, "total-files-size") + c->added_bytes - c->deleted_bytes);
  setDecimal(sum, "total-delete-files", 0);
  setDecimal(sum, "total-position-deletes", 0);
  setDecimal(sum, "total-equality-deletes", 0);
  setDecimal(sum, "fntrace.warehouse-snapshot-id", (int64_t)c->wh_snapshot);
  sn = json_pack("{s:I, s:I, s:I, s:s, s:o, s:i}", "snapshot-id", (json_int_t)c->snapshot_id,
                 "sequence-number", (json_int_t)c->seq, "timestamp-ms", (json_int_t)c->ms,
                 "manifest-list", c->manifest_list, "summary", sum, "schema-id", 0);
  if( sn==0 ){ json_decref(meta); return 0; }
  if( s->snapshot_id>0 ) json_object_set_new(sn, "parent-snapshot-id", json_integer(s->snapshot_id));
  json_array_append_new(json_object_get(meta, "snapshots"), sn);
  json_array_append_new(json_object_get(meta, "snapshot-log"),
      json_pack("{s:I, s:I}", "timestamp-ms", (json_int_t)c->ms, "snapshot-id", (json_int_t)c->snapshot_id));
  if( s->meta ){
    char old[PBUF];
    json_t *lu = json_object_get(s->meta, "last-updated-ms");
    metaPath(old, sizeof old, tdir, s->version);
    json_array_append_new(json_object_get(meta, "metadata-log"),
        json_pack("{s:I, s:s}", "timestamp-ms", lu ? json_integer_value(lu) : (json_int_t)c->ms,
                  "metadata-file", old));
  }
  json_object_set_new(meta, "last-sequence-number", json_integer(c->seq));
  json_object_set_new(meta, "last-updated-ms", json_integer(c->ms));
  json_object_set_new(meta, "current-snapshot-id", json_integer(c->snapshot_id));
  json_object_set_new(json_object_get(meta, "refs"), "main",
      json_pack("{s:I, s:s}", "snapshot-id", (json_int_t)c->snapshot_id, "type", "branch"));
  setDecimal(json_object_get(meta, "properties"), "fntrace.warehouse-snapshot-id", (int64_t)c->wh_snapshot);
  return meta;
}

int ice_write_hint(const char *tdir, long v, char *err, size_t errn){
  char tmp[PBUF], fin[PBUF], mdir[PBUF], name[33], hint[24];
  fnt_random_name(name);
  snprintf(mdir, sizeof mdir, "%s/metadata", tdir);
  snprintf(hint, sizeof hint, "%ld\n", v);
  snprintf(tmp, sizeof tmp, "%s/metadata/tmp-%s.hint", tdir, name);
  snprintf(fin, sizeof fin, "%s/metadata/version-hint.text", tdir);
  if( fnt_io_write_file(tmp, hint, strlen(hint), 1) || fnt_io_rename(tmp, fin)
   || fnt_io_fsync_dir(mdir) ){
    snprintf(err, errn, "%s: %s", fin, strerror(errno));
    return -1;
  }
  return 0;
}

int ice_publish(const char *tdir, json_t *meta, long v, char *err, size_t errn){
  char tmp[PBUF], fin[PBUF], mdir[PBUF], name[33];
  char *text = json_dumps(meta, JSON_INDENT(2));
  int rc;
  if( text==0 ){ snprintf(err, errn, "out of memory"); return -1; }
  fnt_random_name(name);
  snprintf(mdir, sizeof mdir, "%s/metadata", tdir);
  snprintf(tmp, sizeof tmp, "%s/metadata/tmp-%s.json", tdir, name);
  metaPath(fin, sizeof fin, tdir, v);
  rc = fnt_io_write_file(tmp, text, strlen(text), 1);
  free(text);
  if( rc ){ snprintf(err, errn, "%s: %s", tmp, strerror(errno)); return -1; }
  if( fnt_io_link(tmp, fin) ){
    int e = errno;
    unlink(tmp);
    if( e==EEXIST ) snprintf(err, errn, "%s: another export published this version meanwhile; run the export again", fin);
    else snprintf(err, errn, "%s: %s", fin, strerror(e));
    return -1;
  }
  unlink(tmp);
  if( fnt_io_fsync_dir(mdir) ){ snprintf(err, errn, "%s: %s", mdir, strerror(errno)); return -1; }
  ice_crash_point("metadata");
  return ice_write_hint(tdir, v, err, errn);
}
