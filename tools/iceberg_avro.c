/*
** iceberg_avro.c -- Iceberg v2 manifests and manifest lists through avro-c.
**
** avro-c parses the schemas, builds the records and encodes and decodes
** them; reading uses its file reader as it is.  Writing frames the object
** container file here (magic, header map, sync marker, one block of
** records: Avro 1.11 "Object Container Files"), because avro-c's file
** writer cannot add the header keys the Iceberg spec requires of manifests
** (schema, partition-spec, format-version, content, ...) and of manifest
** lists (snapshot-id, sequence-number, ...).  The header map itself is an
** Avro map<bytes> value, encoded by avro-c too.
**
** The schemas are the spec's (Iceberg table spec v2, "Manifests" and
** "Manifest Lists"), each field with its `field-id`; of the optional
** data_file fields the column metrics engines prune files by are written
** (value_counts, null_value_counts, lower_bounds, upper_bounds: maps with
** int keys, which Avro spells as arrays of key/value records).
*/
#include <avro.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>

#include "iceberg_avro.h"
#include "internal.h"    /* fnt_io_write_file: write and fsync */

static const char listSchema[] =
  "{\"type\":\"record\",\"name\":\"manifest_file\",\"fields\":["
  "{\"name\":\"manifest_path\",\"type\":\"string\",\"field-id\":500},"
  "{\"name\":\"manifest_length\",\"type\":\"long\",\"field-id\":501},"
  "{\"name\":\"partition_spec_id\",\"type\":\"int\",\"field-id\":502},"
  "{\"name\":\"content\",\"type\":\"int\",\"field-id\":517},"
  "{\"name\":\"sequence_number\",\"type\":\"long\",\"field-id\":515},"
  "{\"name\":\"min_sequence_number\",\"type\":\"long\",\"field-id\":516},"
  "{\"name\":\"added_snapshot_id\",\"type\":\"long\",\"field-id\":503},"
  "{\"name\":\"added_files_count\",\"type\":\"int\",\"field-id\":504},"
  "{\"name\":\"existing_files_count\",\"type\":\"int\",\"field-id\":505},"
  "{\"name\":\"deleted_files_count\",\"type\":\"int\",\"field-id\":506},"
  "{\"name\":\"added_rows_count\",\"type\":\"long\",\"field-id\":512},"
  "{\"name\":\"existing_rows_count\",\"type\":\"long\",\"field-id\":513},"
  "{\"name\":\"deleted_rows_count\",\"type\":\"long\",\"field-id\":514},"
  "{\"name\":\"partitions\",\"type\":[\"null\",{\"type\":\"array\",\"items\":"
    "{\"type\":\"record\",\"name\":\"r508\",\"fields\":["
    "{\"name\":\"contains_null\",\"type\":\"boolean\",\"field-id\":509},"
    "{\"name\":\"contains_nan\",\"type\":[\"null\",\"boolean\"],\"default\":null,\"field-id\":518},"
    "{\"name\":\"lower_bound\",\"type\":[\"null\",\"bytes\"],\"default\":null,\"field-id\":510},"
    "{\"name\":\"upper_bound\",\"type\":[\"null\",\"bytes\"],\"default\":null,\"field-id\":511}]},"
    "\"element-id\":508}],\"default\":null,\"field-id\":507}"
  "]}";

/* An optional map<int, T> field with id FID, key id K, value id V. */
#define MAP_FIELD(name, fid, k, v, t) \
  "{\"name\":\"" name "\",\"type\":[\"null\",{\"type\":\"array\",\"logicalType\":\"map\"," \
  "\"items\":{\"type\":\"record\",\"name\":\"k" #k "_v" #v "\",\"fields\":[" \
  "{\"name\":\"key\",\"type\":\"int\",\"field-id\":" #k "}," \
  "{\"name\":\"value\",\"type\":\"" t "\",\"field-id\":" #v "}]}}]," \
  "\"default\":null,\"field-id\":" #fid "}"

/* The manifest_entry schema, for a partition of one string field (%s: its
** name, %d: its field id). */
static const char entrySchemaFmt[] =
  "{\"type\":\"record\",\"name\":\"manifest_entry\",\"fields\":["
  "{\"name\":\"status\",\"type\":\"int\",\"field-id\":0},"
  "{\"name\":\"snapshot_id\",\"type\":[\"null\",\"long\"],\"default\":null,\"field-id\":1},"
  "{\"name\":\"sequence_number\",\"type\":[\"null\",\"long\"],\"default\":null,\"field-id\":3},"
  "{\"name\":\"file_sequence_number\",\"type\":[\"null\",\"long\"],\"default\":null,\"field-id\":4},"
  "{\"name\":\"data_file\",\"type\":{\"type\":\"record\",\"name\":\"r2\",\"fields\":["
    "{\"name\":\"content\",\"type\":\"int\",\"field-id\":134},"
    "{\"name\":\"file_path\",\"type\":\"string\",\"field-id\":100},"
    "{\"name\":\"file_format\",\"type\":\"string\",\"field-id\":101},"
    "{\"name\":\"partition\",\"type\":{\"type\":\"record\",\"name\":\"r102\",\"fields\":["
      "{\"name\":\"%s\",\"type\":[\"null\",\"string\"],\"default\":null,\"field-id\":%d}]},"
      "\"field-id\":102},"
    "{\"name\":\"record_count\",\"type\":\"long\",\"field-id\":103},"
    "{\"name\":\"file_size_in_bytes\",\"type\":\"long\",\"field-id\":104},"
    MAP_FIELD("value_counts", 109, 119, 120, "long") ","
    MAP_FIELD("null_value_counts", 110, 121, 122, "long") ","
    MAP_FIELD("lower_bounds", 125, 126, 127, "bytes") ","
    MAP_FIELD("upper_bounds", 128, 129, 130, "bytes") "]},"
    "\"field-id\":2}"
  "]}";

static int errf(char *err, size_t errn, const char *path, const char *what){
  snprintf(err, errn, "%s: %s", path, what);
  return -1;
}

/* ---- writing ---------------------------------------------------------------- */

/* An encoder of records of one schema into a growing byte string. */
typedef struct enc {
  avro_schema_t schema;
  avro_value_iface_t *iface;
  avro_value_t v;
  int has_v;
  fnt_buf out;
  size_t count;
} enc;

static int encOpen(enc *e, const char *json){
  memset(e, 0, sizeof *e);
  if( avro_schema_from_json_length(json, strlen(json), &e->schema) ) return -1;
  if( (e->iface = avro_generic_class_from_schema(e->schema))==0 ) return -1;
  if( avro_generic_value_new(e->iface, &e->v) ) return -1;
  e->has_v = 1;
  return 0;
}

static void encClose(enc *e){
  if( e->has_v ) avro_value_decref(&e->v);
  if( e->iface ) avro_value_iface_decref(e->iface);
  if( e->schema ) avro_schema_decref(e->schema);
  fnt_buf_free(&e->out);
}

/* Appends the encoding of value v to b. */
static int encAppend(fnt_buf *b, avro_value_t *v){
  size_t n = 0;
  avro_writer_t w;
  int rc;
  if( avro_value_sizeof(v, &n) || fnt_buf_reserve(b, n) ) return -1;
  w = avro_writer_memory((char*)b->data + b->len, (int64_t)n);
  if( w==0 ) return -1;
  rc = avro_value_write(w, v);
  avro_writer_free(w);
  if( rc ) return -1;
  b->len += n;
  return 0;
}

/* Field `name` of record r (dst), or -1. */
#define FIELD(r, name, dst) avro_value_get_by_name((r), (name), (dst), 0)

static int setLong(avro_value_t *r, const char *name, int64_t x){
  avro_value_t f;
  return FIELD(r, name, &f) || avro_value_set_long(&f, x);
}
static int setInt(avro_value_t *r, const char *name, int32_t x){
  avro_value_t f;
  return FIELD(r, name, &f) || avro_value_set_int(&f, x);
}
static int setStr(avro_value_t *r, const char *name, const char *s){
  avro_value_t f;
  return FIELD(r, name, &f) || avro_value_set_string(&f, s);
}
/* A ["null", T] union set to T (long) or null. */
static int setOptLong(avro_value_t *r, const char *name, int64_t x){
  avro_value_t f, b;
  return FIELD(r, name, &f) || avro_value_set_branch(&f, 1, &b) || avro_value_set_long(&b, x);
}
static int setOptBytes(avro_value_t *r, const char *name, const char *s){
  avro_value_t f, b;
  if( FIELD(r, name, &f) ) return -1;
  if( s==0 ) return avro_value_set_branch(&f, 0, &b) || avro_value_set_null(&b);
  return avro_value_set_branch(&f, 1, &b) || avro_value_set_bytes(&b, (void*)s, strlen(s));
}

/* Writes "Obj\1", the header map of `keys` (NULL-terminated pairs), a
** random sync marker and one block of the encoder's records to `path`. */
static int writeContainer(const char *path, const char *schema_json,
                          const char *const *keys, const enc *e, int64_t *size,
                          char *err, size_t errn){
  static const char mapJson[] = "{\"type\":\"map\",\"values\":\"bytes\"}";
  avro_schema_t ms = 0;
  avro_value_iface_t *mi = 0;
  avro_value_t map, elem;
  int has_map = 0, rc = -1;
  uint8_t sync[16];
  fnt_buf f = {0};
  size_t i;
  if( getrandom(sync, sizeof sync, 0)!=(ssize_t)sizeof sync ){
    for(i=0; i<sizeof sync; i++) sync[i] = (uint8_t)rand();
  }
  if( avro_schema_from_json_length(mapJson, strlen(mapJson), &ms)
   || (mi = avro_generic_class_from_schema(ms))==0
   || avro_generic_value_new(mi, &map) ) goto done;
  has_map = 1;
  if( avro_value_add(&map, "avro.schema", &elem, 0, 0)
   || avro_value_set_bytes(&elem, (void*)schema_json, strlen(schema_json))
   || avro_value_add(&map, "avro.codec", &elem, 0, 0)
   || avro_value_set_bytes(&elem, (void*)"null", 4) ) goto done;
  for(i=0; keys[i]; i+=2){
    if( avro_value_add(&map, keys[i], &elem, 0, 0)
     || avro_value_set_bytes(&elem, (void*)keys[i+1], strlen(keys[i+1])) ) goto done;
  }
  fnt_buf_append(&f, "Obj\x01", 4);
  if( encAppend(&f, &map) ) goto done;
  fnt_buf_append(&f, sync, sizeof sync);
  if( e->count ){
    fnt_put_varint(&f, fnt_zigzag((int64_t)e->count));
    fnt_put_varint(&f, fnt_zigzag((int64_t)e->out.len));
    fnt_buf_append(&f, e->out.data, e->out.len);
    fnt_buf_append(&f, sync, sizeof sync);
  }
  if( f.failed ) goto done;
  if( fnt_io_write_file(path, f.data, f.len, 1) ){
    snprintf(err, errn, "%s: %s", path, strerror(errno));
    rc = -2;
    goto done;
  }
  if( size ) *size = (int64_t)f.len;
  rc = 0;
done:
  if( rc==-1 ) errf(err, errn, path, avro_strerror()[0] ? avro_strerror() : "out of memory");
  if( has_map ) avro_value_decref(&map);
  if( mi ) avro_value_iface_decref(mi);
  if( ms ) avro_schema_decref(ms);
  fnt_buf_free(&f);
  return rc ? -1 : 0;
}

/* A ["null", long] union: null when x <= 0 (an unset sequence number). */
static int setSeq(avro_value_t *r, const char *name, int64_t x){
  avro_value_t f, b;
  if( x>0 ) return setOptLong(r, name, x);
  return FIELD(r, name, &f) || avro_value_set_branch(&f, 0, &b) || avro_value_set_null(&b);
}

/* The map field `name` of data_file df from the entry's metrics: what
** selects 0 values, 1 nulls, 2 lower bounds, 3 upper bounds. */
static int setMetrics(avro_value_t *df, const char *name, const ice_entry *x, int what){
  avro_value_t f, arr, el, k, v;
  size_t i;
  if( FIELD(df, name, &f) ) return -1;
  if( x->n_metrics==0 ) return avro_value_set_branch(&f, 0, &el) || avro_value_set_null(&el);
  if( avro_value_set_branch(&f, 1, &arr) ) return -1;
  for(i=0; i<x->n_metrics; i++){
    const ice_metric *m = &x->metrics[i];
    if( what>=2 && m->lo==0 ) continue;
    if( avro_value_append(&arr, &el, 0) || FIELD(&el, "key", &k) || avro_value_set_int(&k, m->id)
     || FIELD(&el, "value", &v) ) return -1;
    if( what==0 && avro_value_set_long(&v, m->values) ) return -1;
    if( what==1 && avro_value_set_long(&v, m->nulls) ) return -1;
    if( what==2 && avro_value_set_bytes(&v, m->lo, m->lo_n) ) return -1;
    if( what==3 && avro_value_set_bytes(&v, m->hi, m->hi_n) ) return -1;
  }
  return 0;
}

static int entryRecord(avro_value_t *r, const ice_entry *x, const char *part){
  avro_value_t df, pr, pf, b;
  if( avro_value_reset(r) ) return -1;
  if( setInt(r, "status", x->status) || setOptLong(r, "snapshot_id", x->snapshot_id)
   || setSeq(r, "sequence_number", x->seq)
   || setSeq(r, "file_sequence_number", x->file_seq)
   || FIELD(r, "data_file", &df) ) return -1;
  if( setInt(&df, "content", 0) || setStr(&df, "file_path", x->path)
   || setStr(&df, "file_format", "PARQUET")
   || setLong(&df, "record_count", x->records)
   || setLong(&df, "file_size_in_bytes", x->size)
   || setMetrics(&df, "value_counts", x, 0) || setMetrics(&df, "null_value_counts", x, 1)
   || setMetrics(&df, "lower_bounds", x, 2) || setMetrics(&df, "upper_bounds", x, 3)
   || FIELD(&df, "partition", &pr) || FIELD(&pr, part, &pf) ) return -1;
  if( x->partition==0 ) return avro_value_set_branch(&pf, 0, &b) || avro_value_set_null(&b);
  return avro_value_set_branch(&pf, 1, &b) || avro_value_set_string(&b, x->partition);
}

int ice_manifest_write(const char *path, const ice_table_desc *d,
                       const ice_entry *e, size_t n, int64_t snapshot_id,
                       int64_t seq, ice_manifest *m, char *err, size_t errn){
  char *schema = 0, pid[24];
  size_t i, len = sizeof entrySchemaFmt + strlen(d->part_name) + 24;
  enc en;
  int rc = -1;
  const char *keys[13];
  memset(m, 0, sizeof *m);
  if( (schema = malloc(len))==0 ) return errf(err, errn, path, "out of memory");
  snprintf(schema, len, entrySchemaFmt, d->part_name, d->part_field_id);
  if( encOpen(&en, schema) ) goto avroerr;
  m->seq = seq; m->min_seq = seq; m->added_snapshot_id = snapshot_id;
  for(i=0; i<n; i++){
    const ice_entry *x = &e[i];
    if( entryRecord(&en.v, x, d->part_name) || encAppend(&en.out, &en.v) ) goto avroerr;
    en.count++;
    if( x->seq>0 && x->seq < m->min_seq ) m->min_seq = x->seq;
    if( x->status==ICE_ADDED ){ m->added_files++; m->added_rows += x->records; }
    else if( x->status==ICE_EXISTING ){ m->existing_files++; m->existing_rows += x->records; }
    else{ m->deleted_files++; m->deleted_rows += x->records; }
    if( x->partition ){
      if( m->lower==0 || strcmp(x->partition, m->lower)<0 ) m->lower = x->partition;
      if( m->upper==0 || strcmp(x->partition, m->upper)>0 ) m->upper = x->partition;
    }
  }
  snprintf(pid, sizeof pid, "%d", d->part_field_id);
  keys[0] = "schema"; keys[1] = d->schema_json;
  keys[2] = "schema-id"; keys[3] = "0";
  keys[4] = "partition-spec"; keys[5] = d->spec_json;
  keys[6] = "partition-spec-id"; keys[7] = "0";
  keys[8] = "format-version"; keys[9] = "2";
  keys[10] = "content"; keys[11] = "data";
  keys[12] = 0;
  if( writeContainer(path, schema, keys, &en, &m->length, err, errn) ) goto done;
  /* The bounds point into e[]: copy them, with the path. */
  m->lower = m->lower ? strdup(m->lower) : 0;
  m->upper = m->upper ? strdup(m->upper) : 0;
  m->path = strdup(path);
  if( m->path==0 ){ errf(err, errn, path, "out of memory"); goto done; }
  rc = 0;
  goto done;
avroerr:
  errf(err, errn, path, avro_strerror());
done:
  if( rc ){ m->lower = m->upper = 0; }
  encClose(&en);
  free(schema);
  return rc;
}

static int manifestRecord(avro_value_t *r, const ice_manifest *x){
  avro_value_t f, b, arr, el;
  if( avro_value_reset(r) ) return -1;
  if( setStr(r, "manifest_path", x->path) || setLong(r, "manifest_length", x->length)
   || setInt(r, "partition_spec_id", 0) || setInt(r, "content", 0)
   || setLong(r, "sequence_number", x->seq) || setLong(r, "min_sequence_number", x->min_seq)
   || setLong(r, "added_snapshot_id", x->added_snapshot_id)
   || setInt(r, "added_files_count", x->added_files)
   || setInt(r, "existing_files_count", x->existing_files)
   || setInt(r, "deleted_files_count", x->deleted_files)
   || setLong(r, "added_rows_count", x->added_rows)
   || setLong(r, "existing_rows_count", x->existing_rows)
   || setLong(r, "deleted_rows_count", x->deleted_rows)
   || FIELD(r, "partitions", &f) || avro_value_set_branch(&f, 1, &arr)
   || avro_value_append(&arr, &el, 0) ) return -1;
  if( FIELD(&el, "contains_null", &f) || avro_value_set_boolean(&f, 0) ) return -1;
  if( FIELD(&el, "contains_nan", &f) || avro_value_set_branch(&f, 0, &b) || avro_value_set_null(&b) ) return -1;
  return setOptBytes(&el, "lower_bound", x->lower) || setOptBytes(&el, "upper_bound", x->upper);
}

int ice_list_write(const char *path, int64_t snapshot_id, int64_t parent_id,
                   int64_t seq, const ice_manifest *m, size_t n,
                   char *err, size_t errn){
  enc en;
  size_t i;
  int rc = -1, k = 0;
  char sid[24], par[24], sq[24];
  const char *keys[9];
  if( encOpen(&en, listSchema) ) goto avroerr;
  for(i=0; i<n; i++){
    if( manifestRecord(&en.v, &m[i]) || encAppend(&en.out, &en.v) ) goto avroerr;
    en.count++;
  }
  snprintf(sid, sizeof sid, "%lld", (long long)snapshot_id);
  snprintf(par, sizeof par, "%lld", (long long)parent_id);
  snprintf(sq, sizeof sq, "%lld", (long long)seq);
  keys[k++] = "snapshot-id"; keys[k++] = sid;
  if( parent_id ){ keys[k++] = "parent-snapshot-id"; keys[k++] = par; }
  keys[k++] = "sequence-number"; keys[k++] = sq;
  keys[k++] = "format-version"; keys[k++] = "2";
  keys[k] = 0;
  rc = writeContainer(path, listSchema, keys, &en, 0, err, errn);
  goto done;
avroerr:
  errf(err, errn, path, avro_strerror());
done:
  encClose(&en);
  return rc;
}

/* ---- reading ------------------------------------------------------------------ */

static int getLong(avro_value_t *r, const char *name, int64_t *x){
  avro_value_t f;
  return FIELD(r, name, &f) || avro_value_get_long(&f, x);
}
static int getInt(avro_value_t *r, const char *name, int32_t *x){
  avro_value_t f;
  return FIELD(r, name, &f) || avro_value_get_int(&f, x);
}
static int getStr(avro_value_t *r, const char *name, char **s){
  avro_value_t f;
  const char *p;
  size_t n;
  if( FIELD(r, name, &f) || avro_value_get_string(&f, &p, &n) ) return -1;
  return (*s = strdup(p))==0;
}
/* The value of a ["null", T] union: 1 when set (b gets T), 0 when null. */
static int optBranch(avro_value_t *f, avro_value_t *b){
  int d;
  if( avro_value_get_discriminant(f, &d) || avro_value_get_current_branch(f, b) ) return -1;
  return avro_value_get_type(b)==AVRO_NULL ? 0 : 1;
}
static int getOptLong(avro_value_t *r, const char *name, int64_t *x){
  avro_value_t f, b;
  int k;
  *x = 0;
  if( FIELD(r, name, &f) || (k = optBranch(&f, &b))<0 ) return -1;
  return k ? avro_value_get_long(&b, x) : 0;
}
static int getOptText(avro_value_t *r, const char *name, char **s){
  avro_value_t f, b;
  const void *p;
  size_t n;
  int k;
  *s = 0;
  if( FIELD(r, name, &f) || (k = optBranch(&f, &b))<0 ) return -1;
  if( k==0 ) return 0;
  if( avro_value_get_type(&b)==AVRO_STRING ){
    const char *t;
    if( avro_value_get_string(&b, &t, &n) ) return -1;
    return (*s = strdup(t))==0;
  }
  if( avro_value_get_bytes(&b, &p, &n) || (*s = malloc(n+1))==0 ) return -1;
  memcpy(*s, p, n); (*s)[n] = 0;
  return 0;
}

/* Calls row(ctx, record) for every record of the container file. */
static int readAll(const char *path, int (*row)(void *ctx, avro_value_t *r),
                   void *ctx, char *err, size_t errn){
  avro_file_reader_t rd;
  avro_schema_t ws;
  avro_value_iface_t *iface = 0;
  avro_value_t v;
  int rc = -1, has_v = 0, k;
  if( avro_file_reader(path, &rd) ) return errf(err, errn, path, avro_strerror());
  ws = avro_file_reader_get_writer_schema(rd);
  if( (iface = avro_generic_class_from_schema(ws))==0 || avro_generic_value_new(iface, &v) ) goto done;
  has_v = 1;
  while( (k = avro_file_reader_read_value(rd, &v))==0 ){
    if( row(ctx, &v) ){ errf(err, errn, path, "a record without the fields of its Iceberg schema"); rc = -2; goto done; }
  }
  if( k!=EOF ) goto done;
  rc = 0;
done:
  if( rc==-1 ) errf(err, errn, path, avro_strerror());
  if( has_v ) avro_value_decref(&v);
  if( iface ) avro_value_iface_decref(iface);
  avro_schema_decref(ws);
  avro_file_reader_close(rd);
  return rc ? -1 : 0;
}

typedef struct grow { void *p; size_t n, cap, size; } grow;
static void *growOne(grow *g){
  if( g->n==g->cap ){
    size_t cap = g->cap ? g->cap*2 : 16;
    void *np = realloc(g->p, cap * g->size);
    if( np==0 ) return 0;
    g->p = np; g->cap = cap;
  }
  memset((char*)g->p + g->n*g->size, 0, g->size);
  return (char*)g->p + g->n++ * g->size;
}

typedef struct entry_ctx { grow g; int64_t seq; } entry_ctx;

/* The metric of column id in x, added when new (NULL: out of memory). */
static ice_metric *metricOf(ice_entry *x, int32_t id){
  size_t i;
  ice_metric *nm;
  for(i=0; i<x->n_metrics; i++) if( x->metrics[i].id==id ) return &x->metrics[i];
  if( (nm = realloc(x->metrics, (x->n_metrics+1) * sizeof *nm))==0 ) return 0;
  x->metrics = nm;
  nm = &x->metrics[x->n_metrics++];
  memset(nm, 0, sizeof *nm);
  nm->id = id;
  return nm;
}

/* Reads the map field `name` of data_file df into x's metrics (what as
** setMetrics).  A file without the field has no metrics of that kind. */
static int getMetrics(avro_value_t *df, const char *name, ice_entry *x, int what){
  avro_value_t f, arr, el, k, v;
  size_t i, n;
  int has;
  if( FIELD(df, name, &f) ) return 0;            /* written without metrics */
  if( (has = optBranch(&f, &arr))<=0 ) return has;
  if( avro_value_get_size(&arr, &n) ) return -1;
  for(i=0; i<n; i++){
    int32_t id;
    ice_metric *m;
    if( avro_value_get_by_index(&arr, i, &el, 0) || FIELD(&el, "key", &k)
     || avro_value_get_int(&k, &id) || FIELD(&el, "value", &v) || (m = metricOf(x, id))==0 ) return -1;
    if( what<2 ){
      if( avro_value_get_long(&v, what==0 ? &m->values : &m->nulls) ) return -1;
    }else{
      const void *p;
      size_t len;
      char **dst = what==2 ? &m->lo : &m->hi;
      if( avro_value_get_bytes(&v, &p, &len) || (*dst = malloc(len ? len : 1))==0 ) return -1;
      memcpy(*dst, p, len);
      if( what==2 ) m->lo_n = len; else m->hi_n = len;
    }
  }
  return 0;
}

static int entryRow(void *ctx, avro_value_t *r){
  entry_ctx *ec = ctx;
  ice_entry *x = growOne(&ec->g);
  avro_value_t df, pr, pf;
  int32_t st;
  size_t nf;
  if( x==0 ) return -1;
  if( getInt(r, "status", &st) || getOptLong(r, "snapshot_id", &x->snapshot_id)
   || getOptLong(r, "sequence_number", &x->seq)
   || getOptLong(r, "file_sequence_number", &x->file_seq)
   || FIELD(r, "data_file", &df) || getStr(&df, "file_path", &x->path)
   || getLong(&df, "record_count", &x->records)
   || getLong(&df, "file_size_in_bytes", &x->size)
   || FIELD(&df, "partition", &pr) || avro_value_get_size(&pr, &nf) || nf!=1
   || avro_value_get_by_index(&pr, 0, &pf, 0) ) return -1;
  if( getMetrics(&df, "value_counts", x, 0) || getMetrics(&df, "null_value_counts", x, 1)
   || getMetrics(&df, "lower_bounds", x, 2) || getMetrics(&df, "upper_bounds", x, 3) ) return -1;
  x->status = st;
  /* Sequence number inheritance: null is the manifest's (list's) number. */
  if( x->seq<=0 ) x->seq = ec->seq;
  if( x->file_seq<=0 ) x->file_seq = ec->seq;
  {
    avro_value_t b;
    const char *t;
    size_t n;
    int k = optBranch(&pf, &b);
    if( k<0 ) return -1;
    if( k && (avro_value_get_string(&b, &t, &n) || (x->partition = strdup(t))==0) ) return -1;
  }
  return 0;
}

int ice_manifest_read(const char *path, int64_t seq, ice_entry **e, size_t *n,
                      char *err, size_t errn){
  entry_ctx ec = {{0, 0, 0, sizeof(ice_entry)}, seq};
  int rc = readAll(path, entryRow, &ec, err, errn);
  *e = ec.g.p; *n = ec.g.n;
  if( rc ){ ice_entries_free(ec.g.p, ec.g.n); *e = 0; *n = 0; }
  return rc;
}

void ice_entries_free(ice_entry *e, size_t n){
  size_t i, k;
  for(i=0; e && i<n; i++){
    free(e[i].path); free(e[i].partition);
    for(k=0; k<e[i].n_metrics; k++){ free(e[i].metrics[k].lo); free(e[i].metrics[k].hi); }
    free(e[i].metrics);
  }
  free(e);
}

static int manifestRow(void *ctx, avro_value_t *r){
  ice_manifest *x = growOne(ctx);
  avro_value_t f, arr, el;
  size_t np;
  int k;
  if( x==0 ) return -1;
  if( getStr(r, "manifest_path", &x->path) || getLong(r, "manifest_length", &x->length)
   || getLong(r, "sequence_number", &x->seq) || getLong(r, "min_sequence_number", &x->min_seq)
   || getLong(r, "added_snapshot_id", &x->added_snapshot_id)
   || getInt(r, "added_files_count", &x->added_files)
   || getInt(r, "existing_files_count", &x->existing_files)
   || getInt(r, "deleted_files_count", &x->deleted_files)
   || getLong(r, "added_rows_count", &x->added_rows)
   || getLong(r, "existing_rows_count", &x->existing_rows)
   || getLong(r, "deleted_rows_count", &x->deleted_rows)
   || FIELD(r, "partitions", &f) || (k = optBranch(&f, &arr))<0 ) return -1;
  if( k && avro_value_get_size(&arr, &np)==0 && np==1 ){
    if( avro_value_get_by_index(&arr, 0, &el, 0)
     || getOptText(&el, "lower_bound", &x->lower)
     || getOptText(&el, "upper_bound", &x->upper) ) return -1;
  }
  return 0;
}

int ice_list_read(const char *path, ice_manifest **m, size_t *n,
                  char *err, size_t errn){
  grow g = {0, 0, 0, sizeof(ice_manifest)};
  int rc = readAll(path, manifestRow, &g, err, errn);
  *m = g.p; *n = g.n;
  if( rc ){ ice_manifests_free(g.p, g.n); *m = 0; *n = 0; }
  return rc;
}

void ice_manifests_free(ice_manifest *m, size_t n){
  size_t i;
  for(i=0; m && i<n; i++){ free(m[i].path); free(m[i].lower); free(m[i].upper); }
  free(m);
}
