/*
** export_iceberg.c -- `fnt export-iceberg DEST`: the warehouse's tables as
** Apache Iceberg format-v2 tables (Hadoop-catalog layout) that Spark,
** Trino, DuckDB and pyiceberg read.
**
**   DEST/<table>/data/<field>=<value>/<uuid>.parquet  data (parquet_write.c)
**   DEST/<table>/metadata/<uuid>-m0.avro              manifests (iceberg_avro.c)
**   DEST/<table>/metadata/snap-<id>-1-<uuid>.avro     manifest lists
**   DEST/<table>/metadata/vN.metadata.json            table metadata (iceberg_meta.c)
**   DEST/<table>/metadata/version-hint.text           N
**
** Incremental: each export adds one Iceberg snapshot holding what the
** warehouse filed since the warehouse snapshot the last export read (kept
** in the table property fntrace.warehouse-snapshot-id, and read back by
** time travel): new chunks' run rows, new profiles, new runs' events and
** calls.  A run that gained chunks since it was exported has its partition
** rewritten (an "overwrite" snapshot: its old file deleted, the whole run
** added), as events carry no chunk number to select the new ones by and a
** late chunk changes a run's calls.
**
** Crash safety follows the store's own commit: data files, manifest and
** manifest list are written and fsynced first; the metadata file is
** published (iceberg_meta.c) by one link() of a fsynced temporary file to vN+1 (which fails
** if another export took that number); version-hint.text is replaced by
** rename() after.  A crash before the link leaves unreferenced files only;
** readers probing past the hint find vN+1 even if the hint is stale.
** $FNT_EXPORT_ICEBERG_CRASH=data|manifest|list|metadata kills the process
** (SIGKILL) right after that step, for the tests.
*/
#include <errno.h>
#include <getopt.h>
#include <jansson.h>
#include <limits.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "fnt.h"
#include "iceberg_avro.h"
#include "iceberg_meta.h"
#include "internal.h"        /* field ids (schema.c), file helpers (io.c) */
#include "parquet_write.h"

#define EVENT_GROUP_ROWS (1u<<20)
#define SMALL_GROUP_ROWS (64u*1024u)
#define ZSTD_LEVEL 1
#define TDIR_MAX (PATH_MAX + 32)      /* DEST/<table> */
#define PBUF (PATH_MAX + 256)         /* a path under DEST/<table> */

typedef struct ice_table {
  const char *name;        /* folder under DEST */
  fnt_table table;
  int part_col;            /* the identity-partition source column */
} ice_table;

static const ice_table iceTables[] = {
  {"events",   FNT_TABLE_EVENTS,  FNT_EV_RUN_ID},
  {"runs",     FNT_TABLE_RUNS,    FNT_RUN_REPO},
  {"profiles", FNT_TABLE_PROFILE, FNT_PROF_REPO},
  {"calls",    FNT_TABLE_CALLS,   FNT_CALL_RUN_ID},
};
#define NTABLES (sizeof iceTables / sizeof iceTables[0])

typedef struct exporter {
  fnt_store *st;
  const char *wh;          /* the warehouse, absolute */
  char dest[PATH_MAX];     /* absolute */
  size_t group_rows;       /* --row-group-rows; 0: the defaults below */
  char err[2*PBUF];
} exporter;

static int xerr(exporter *x, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int xerr(exporter *x, const char *fmt, ...){
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(x->err, sizeof x->err, fmt, ap);
  va_end(ap);
  return -1;
}

static int storeErr(exporter *x, int rc){
  const char *m = fnt_errmsg(x->st);
  return xerr(x, "%s", m[0] ? m : fnt_strerror(rc));
}

/* ---- what the warehouse holds: chunks and profiles ------------------------ */
typedef struct key { char *run_id; int64_t chunk; } key;
typedef struct keyset { key *k; size_t n, cap; } keyset;

static void keysetFree(keyset *s){
  size_t i;
  for(i=0; i<s->n; i++) free(s->k[i].run_id);
  free(s->k);
  memset(s, 0, sizeof *s);
}

static int keyCmp(const void *a, const void *b){
  const key *x = a, *y = b;
  int c = strcmp(x->run_id, y->run_id);
  return c ? c : (x->chunk < y->chunk ? -1 : x->chunk > y->chunk);
}

static int keysetHas(const keyset *s, const char *run_id, int64_t chunk){
  key k = {(char*)run_id, chunk};
  return s->n && bsearch(&k, s->k, s->n, sizeof k, keyCmp)!=0;
}

/* Chunks filed (from fn_trace_runs: run_id, chunk), or profiles (from
** fn_profile: run_id; chunk -1), sorted, without repeats. */
static int loadKeys(exporter *x, fnt_snapshot *snap, int profiles, keyset *out){
  fnt_predicate p;
  fnt_scan *sc = 0;
  fnt_table t = profiles ? FNT_TABLE_PROFILE : FNT_TABLE_RUNS;
  int crun = profiles ? FNT_PROF_RUN_ID : FNT_RUN_RUN_ID;
  int rc;
  size_t i, o;
  memset(out, 0, sizeof *out);
  if( snap==0 ) return 0;
  fnt_predicate_init(&p);
  p.columns = 1ull<<crun | (profiles ? 0 : 1ull<<FNT_RUN_CHUNK);
  if( (rc = fnt_scan_open(snap, t, &p, &sc))<0 ) return storeErr(x, rc);
  while( (rc = fnt_scan_next(sc))==1 ){
    key *k;
    const char *run = fnt_scan_text(sc, crun, 0);
    if( out->n==out->cap ){
      size_t cap = out->cap ? out->cap*2 : 256;
      key *nk = realloc(out->k, cap * sizeof *nk);
      if( nk==0 ){ rc = FNT_E_NOMEM; break; }
      out->k = nk; out->cap = cap;
    }
    k = &out->k[out->n];
    k->run_id = strdup(run ? run : "");
    k->chunk = profiles ? -1 : fnt_scan_int(sc, FNT_RUN_CHUNK);
    out->n++;
    if( k->run_id==0 ){ rc = FNT_E_NOMEM; break; }
  }
  fnt_scan_close(sc);
  if( rc<0 ){ keysetFree(out); return rc==FNT_E_NOMEM ? xerr(x, "out of memory") : storeErr(x, rc); }
  qsort(out->k, out->n, sizeof *out->k, keyCmp);
  for(i=o=0; i<out->n; i++){         /* a profile has a row per function */
    if( o && keyCmp(&out->k[o-1], &out->k[i])==0 ){ free(out->k[i].run_id); continue; }
    out->k[o++] = out->k[i];
  }
  out->n = o;
  return 0;
}

/* ---- data files ------------------------------------------------------------ */

/* One Parquet file being written, for one partition value. */
typedef struct dfile {
  char *part;              /* partition value */
  char *path;              /* absolute */
  FILE *f;
  pq_writer *w;
  uint64_t size;
} dfile;

typedef struct dfiles { dfile *d; size_t n, cap; } dfiles;

static int sinkFile(void *ctx, const void *p, size_t n){
  return fwrite(p, 1, n, (FILE*)ctx)!=n;
}

static void dfilesFree(dfiles *fs){
  size_t i;
  for(i=0; i<fs->n; i++){
    pq_writer_free(fs->d[i].w);
    if( fs->d[i].f ) fclose(fs->d[i].f);
    free(fs->d[i].part); free(fs->d[i].path);
  }
  free(fs->d);
  memset(fs, 0, sizeof *fs);
}

/* The open data file of partition `part`, made on first use. */
static dfile *dfileFor(exporter *x, const ice_table *it, const char *tdir,
                       dfiles *fs, const char *part, size_t group_rows){
  const fnt_colinfo *ci = fnt_table_cols(it->table);
  pq_column cols[64];
  char name[33], *pdir = 0;
  const char *why = 0;
  dfile *d;
  size_t i, len;
  int c, nc = fnt_table_ncol(it->table);
  for(i=0; i<fs->n; i++) if( strcmp(fs->d[i].part, part)==0 ) return &fs->d[i];
  if( fs->n==fs->cap ){
    size_t cap = fs->cap ? fs->cap*2 : 8;
    dfile *nd = realloc(fs->d, cap * sizeof *nd);
    if( nd==0 ){ xerr(x, "out of memory"); return 0; }
    fs->d = nd; fs->cap = cap;
  }
  d = &fs->d[fs->n++];
  memset(d, 0, sizeof *d);
  /* data/<field>=<value, escaped as the warehouse's partition folders> */
  if( (pdir = fnt_partition_dir(part))==0 || (d->part = strdup(part))==0 ){
    free(pdir); xerr(x, "out of memory"); return 0;
  }
  len = strlen(tdir) + strlen(pdir) + strlen(ci[it->part_col].name) + 64;
  if( (d->path = malloc(len))==0 ){ free(pdir); xerr(x, "out of memory"); return 0; }
  snprintf(d->path, len, "%s/data/%s%s", tdir, ci[it->part_col].name, pdir+1);
  if( fnt_io_mkdirs(d->path)<0 ){
    xerr(x, "%s: %s", d->path, strerror(errno)); free(pdir); return 0;
  }
  free(pdir);
  fnt_random_name(name);
  snprintf(d->path + strlen(d->path), len - strlen(d->path), "/%s.parquet", name);
  if( (d->f = fopen(d->path, "wbx"))==0 ){ xerr(x, "%s: %s", d->path, strerror(errno)); return 0; }
  setvbuf(d->f, 0, _IOFBF, 1u<<20);
  for(c=0; c<nc && c<64; c++){
    cols[c].name = ci[c].name;
    cols[c].type = ci[c].is_text ? PQ_TEXT : PQ_INT64;
    cols[c].nullable = ice_nullable(ci[c].name);
    cols[c].field_id = (int32_t)ci[c].field_id;
  }
  d->w = pq_writer_new(cols, nc, group_rows, ZSTD_LEVEL, sinkFile, d->f, &why);
  if( d->w==0 ){ xerr(x, "%s: %s", d->path, why); return 0; }
  return d;
}

/* Finishes every file: footer, flush, fsync, and the folders' fsyncs. */
static int dfilesFinish(exporter *x, dfiles *fs, const char *tdir){
  size_t i;
  char data[PBUF];
  for(i=0; i<fs->n; i++){
    dfile *d = &fs->d[i];
    char *slash;
    if( pq_finish(d->w, &d->size) ) return xerr(x, "%s: %s", d->path, pq_errmsg(d->w));
    if( fflush(d->f) || fsync(fileno(d->f)) ) return xerr(x, "%s: %s", d->path, strerror(errno));
    fclose(d->f);
    d->f = 0;
    slash = strrchr(d->path, '/');
    *slash = 0;
    if( fnt_io_fsync_dir(d->path) ){ *slash = '/'; return xerr(x, "%s: %s", d->path, strerror(errno)); }
    *slash = '/';
  }
  snprintf(data, sizeof data, "%s/data", tdir);
  if( fs->n && fnt_io_fsync_dir(data) ) return xerr(x, "%s: %s", data, strerror(errno));
  return 0;
}

/* The current row of a scan into a data file, column by column. */
static int writeRow(const fnt_scan *sc, fnt_table t, pq_writer *w){
  int c, nc = fnt_table_ncol(t);
  for(c=0; c<nc; c++){
    if( fnt_column_is_text(t, c) ){
      size_t n;
      const char *s = fnt_scan_text(sc, c, &n);
      if( (s ? pq_text(w, c, s, n) : pq_null(w, c)) ) return -1;
    }else if( pq_int(w, c, fnt_scan_int(sc, c)) ){
      return -1;
    }
  }
  return pq_end_row(w);
}

/* The dictionary ids an events scan repeats: the segment's function table
** (symbol, stable_id), the three kinds, and repo/commit/run_id -- valid
** while the scan's table generation and the writer's dictionary
** generation stay. */
typedef struct evmap {
  uint64_t table_gen, dict_gen;
  int64_t *sym, *sid;           /* per function; stable_id -1: NULL */
  size_t cap;
  int64_t kind[3];
  char *text[3]; size_t text_n[3]; int64_t text_id[3];   /* -1 NULL, -2 unknown */
  int64_t *col[9];              /* a batch's values, column by column */
  size_t col_cap;
} evmap;

static const int evTextCols[3] = {FNT_EV_REPO, FNT_EV_COMMIT, FNT_EV_RUN_ID};

static void evmapFree(evmap *m){
  int i;
  free(m->sym); free(m->sid);
  for(i=0; i<3; i++) free(m->text[i]);
  for(i=0; i<9; i++) free(m->col[i]);
  memset(m, 0, sizeof *m);
}

static void evmapInit(evmap *m){
  int i;
  evmapFree(m);
  m->table_gen = m->dict_gen = UINT64_MAX;
  for(i=0; i<3; i++) m->text_id[i] = -2;
}

/* Brings the maps up to date for batch b of writer w.  @return 0 or -1. */
static int evmapUpdate(evmap *m, const fnt_event_batch *b, fnt_scan *sc, pq_writer *w){
  uint32_t f;
  int i;
  if( pq_dict_generation(w)!=m->dict_gen ){
    m->dict_gen = pq_dict_generation(w);
    m->table_gen = UINT64_MAX;
    for(i=0; i<3; i++){
      const char *k = fnt_kind_name(i);
      if( (m->kind[i] = pq_intern(w, FNT_EV_KIND, k, strlen(k)))<0 ) return -1;
      m->text_id[i] = -2;
    }
  }
  if( b->table_generation!=m->table_gen ){
    if( b->n_functions > m->cap ){
      size_t cap = b->n_functions;
      int64_t *x = realloc(m->sym, cap * sizeof *x), *y;
      if( x==0 ) return -1;
      m->sym = x;
      if( (y = realloc(m->sid, cap * sizeof *y))==0 ) return -1;
      m->sid = y; m->cap = cap;
    }
    for(f=0; f<b->n_functions; f++){
      const fnt_function *fn = &b->functions[f];
      m->sym[f] = pq_intern(w, FNT_EV_SYMBOL, fn->symbol, strlen(fn->symbol));
      m->sid[f] = fn->stable_id && fn->stable_id[0]
                ? pq_intern(w, FNT_EV_STABLE_ID, fn->stable_id, strlen(fn->stable_id)) : -1;
      if( m->sym[f]<0 || (fn->stable_id && fn->stable_id[0] && m->sid[f]<0) ) return -1;
    }
    m->table_gen = b->table_generation;
  }
  /* repo, commit, run_id: constant in a segment (FORMAT.md: CONST). */
  for(i=0; i<3; i++){
    size_t n;
    const char *s = fnt_scan_text(sc, evTextCols[i], &n);
    if( s==0 ){ m->text_id[i] = -1; continue; }
    if( m->text_id[i]>=0 && m->text_n[i]==n && memcmp(m->text[i], s, n)==0 ) continue;
    free(m->text[i]);
    if( (m->text[i] = malloc(n+1))==0 ) return -1;
    memcpy(m->text[i], s, n);
    m->text_n[i] = n;
    if( (m->text_id[i] = pq_intern(w, evTextCols[i], s, n))<0 ) return -1;
  }
  return 0;
}

/* Writes batch b (from row `from`, n rows) into w as bulk appends. */
static int writeEventRows(evmap *m, const fnt_event_batch *b, size_t from, size_t n,
                          pq_writer *w){
  size_t i;
  int c;
  if( n > m->col_cap ){
    for(c=0; c<9; c++){
      int64_t *x = realloc(m->col[c], n * sizeof *x);
      if( x==0 ) return -1;
      m->col[c] = x;
    }
    m->col_cap = n;
  }
  for(i=0; i<n; i++){
    size_t r = from + i;
    uint64_t f = b->function[r];
    if( f>=b->n_functions || b->kind[r]>2 || b->thread[r]>=b->n_threads ) return -1;
    m->col[FNT_EV_THREAD][i] = (int64_t)b->thread_ids[b->thread[r]];
    m->col[FNT_EV_KIND][i] = m->kind[b->kind[r]];
    m->col[FNT_EV_SYMBOL][i] = m->sym[f];
    m->col[FNT_EV_STABLE_ID][i] = m->sid[f];
  }
  for(c=0; c<3; c++){
    for(i=0; i<n; i++) m->col[evTextCols[c]][i] = m->text_id[c];
  }
  for(c=0; c<9; c++){
    const int64_t *v = c==FNT_EV_SEQ_NO ? (const int64_t*)b->seq_no + from
                     : c==FNT_EV_T_NS ? (const int64_t*)b->t_ns + from : m->col[c];
    if( fnt_column_is_text(FNT_TABLE_EVENTS, c) ? pq_text_ids(w, c, v, n) : pq_ints(w, c, v, n) ) return -1;
  }
  return pq_end_rows(w, n);
}

/* The events the scan yields (one run: one partition) into one file, a
** row group of the store at a time. */
static int writeEvents(exporter *x, const ice_table *it, const char *tdir,
                       fnt_scan *sc, dfiles *fs, uint64_t *rows){
  fnt_event_batch b;
  evmap m;
  dfile *d = 0;
  int rc;
  memset(&m, 0, sizeof m);
  evmapInit(&m);
  while( (rc = fnt_scan_next_batch(sc, &b))==1 ){
    size_t from = 0;
    if( d==0 ){
      const char *part = fnt_scan_text(sc, it->part_col, 0);
      d = dfileFor(x, it, tdir, fs, part ? part : "", x->group_rows ? x->group_rows : EVENT_GROUP_ROWS);
      if( d==0 ){ rc = -100; break; }
    }
    while( from<b.n ){
      size_t n = b.n - from;
      if( n > pq_room(d->w) ) n = pq_room(d->w);
      if( evmapUpdate(&m, &b, sc, d->w) || writeEventRows(&m, &b, from, n, d->w) ){
        xerr(x, "%s: row %llu: %s", d->path, (unsigned long long)pq_rows(d->w),
             pq_errmsg(d->w)[0] ? pq_errmsg(d->w) : "out of memory");
        rc = -100;
        break;
      }
      from += n;
      *rows += n;
    }
    if( rc==-100 ) break;
  }
  evmapFree(&m);
  return rc==-100 ? -1 : rc<0 ? storeErr(x, rc) : 0;
}

/* Writes the rows of `table` the scan with predicate p yields into one file
** per partition value; `skip` (may be NULL) drops the rows whose key it
** holds (runs: (run_id, chunk)). */
static int writeScan(exporter *x, const ice_table *it, const char *tdir,
                     fnt_snapshot *snap, const fnt_predicate *p,
                     const keyset *skip, dfiles *fs, uint64_t *rows){
  fnt_scan *sc = 0;
  int rc;
  dfile *d = 0;
  if( (rc = fnt_scan_open(snap, it->table, p, &sc))<0 ) return storeErr(x, rc);
  if( it->table==FNT_TABLE_EVENTS ){
    rc = writeEvents(x, it, tdir, sc, fs, rows);
    fnt_scan_close(sc);
    return rc;
  }
  while( (rc = fnt_scan_next(sc))==1 ){
    size_t n;
    const char *part = fnt_scan_text(sc, it->part_col, &n);
    if( skip && keysetHas(skip, fnt_scan_text(sc, FNT_RUN_RUN_ID, 0), fnt_scan_int(sc, FNT_RUN_CHUNK)) )
      continue;
    if( d==0 || strcmp(d->part, part ? part : "")!=0 ){
      d = dfileFor(x, it, tdir, fs, part ? part : "", x->group_rows ? x->group_rows : SMALL_GROUP_ROWS);
      if( d==0 ){ rc = -100; break; }
    }
    if( writeRow(sc, it->table, d->w) ){
      xerr(x, "%s: row %llu: %s", d->path, (unsigned long long)pq_rows(d->w),
           pq_errmsg(d->w)[0] ? pq_errmsg(d->w) : "out of memory");
      rc = -100;
      break;
    }
    (*rows)++;
  }
  fnt_scan_close(sc);
  if( rc==-100 ) return -1;
  if( rc<0 ) return storeErr(x, rc);
  return 0;
}

/* ---- one table's export ------------------------------------------------------ */
/* The partitions an export rewrites whole: a list, or all of them. */
typedef struct strs { char **s; size_t n; int all; } strs;

static int strsAdd(strs *a, const char *s){
  char **ns = realloc(a->s, (a->n+1) * sizeof *ns);
  if( ns==0 ) return -1;
  a->s = ns;
  return (a->s[a->n++] = strdup(s))==0 ? -1 : 0;
}
static void strsFree(strs *a){
  size_t i;
  for(i=0; i<a->n; i++) free(a->s[i]);
  free(a->s);
}
static int strsHas(const strs *a, const char *s){
  size_t i;
  if( a->all ) return 1;
  for(i=0; s && i<a->n; i++) if( strcmp(a->s[i], s)==0 ) return 1;
  return 0;
}

/* One call as a row of the calls table. */
static int writeCall(const fnt_call *r, pq_writer *w){
  const char *ended = fnt_ended_by_name(r->ended_by);
#define TEXT(col, s) ((s) ? pq_text(w, col, s, strlen(s)) : pq_null(w, col))
  if( TEXT(FNT_CALL_REPO, r->repo) || TEXT(FNT_CALL_COMMIT, r->commit)
   || TEXT(FNT_CALL_RUN_ID, r->run_id) || pq_int(w, FNT_CALL_THREAD, r->thread)
   || pq_int(w, FNT_CALL_CALL_ID, r->call_id)
   || (r->parent_id<0 ? pq_null(w, FNT_CALL_PARENT_ID) : pq_int(w, FNT_CALL_PARENT_ID, r->parent_id))
   || pq_int(w, FNT_CALL_DEPTH, r->depth) || pq_int(w, FNT_CALL_START_NS, r->start_ns)
   || pq_int(w, FNT_CALL_END_NS, r->end_ns) || pq_int(w, FNT_CALL_DUR_NS, r->dur_ns)
   || pq_int(w, FNT_CALL_SELF_NS, r->self_ns) || TEXT(FNT_CALL_KEY, r->key)
   || TEXT(FNT_CALL_STABLE_ID, r->stable_id) || TEXT(FNT_CALL_SYMBOL, r->symbol)
   || TEXT(FNT_CALL_ENDED_BY, ended) || pq_int(w, FNT_CALL_OUTERMOST, r->outermost) ) return -1;
#undef TEXT
  return pq_end_row(w);
}

/* The calls of one run into one file, in the store's order (thread, depth,
** start_ns): unordered, so no run is held in memory to sort. */
static int writeCalls(exporter *x, const ice_table *it, const char *tdir,
                      fnt_snapshot *snap, const char *run, dfiles *fs, uint64_t *rows){
  fnt_call_predicate p;
  fnt_calls *sc = 0;
  const fnt_call *r;
  dfile *d = 0;
  int rc;
  fnt_call_predicate_init(&p);
  p.run_ids = &run;
  p.n_run_ids = 1;
  if( (rc = fnt_calls_open(snap, &p, &sc))<0 ) return storeErr(x, rc);
  while( (rc = fnt_calls_next(sc, &r))==1 ){
    if( d==0 && (d = dfileFor(x, it, tdir, fs, run, x->group_rows ? x->group_rows : EVENT_GROUP_ROWS))==0 ){
      rc = -100;
      break;
    }
    if( writeCall(r, d->w) ){
      xerr(x, "%s: row %llu: %s", d->path, (unsigned long long)pq_rows(d->w),
           pq_errmsg(d->w)[0] ? pq_errmsg(d->w) : "out of memory");
      rc = -100;
      break;
    }
    (*rows)++;
  }
  fnt_calls_close(sc);
  return rc==-100 ? -1 : rc<0 ? storeErr(x, rc) : 0;
}

/* Writes the data files: the rows filed between `prev` (NULL: none) and
** `now`.  `replaced` gets the partitions (events: runs) rewritten whole. */
static int writeData(exporter *x, const ice_table *it, const char *tdir,
                     fnt_snapshot *prev, fnt_snapshot *now, dfiles *fs,
                     strs *replaced, uint64_t *rows){
  keyset kp, kn;
  int rc = 0, prof = it->table==FNT_TABLE_PROFILE;
  size_t i, j;
  fnt_predicate p;
  if( loadKeys(x, prev, prof, &kp) ) return -1;
  if( loadKeys(x, now, prof, &kn) ){ keysetFree(&kp); return -1; }
  fnt_predicate_init(&p);
  if( it->table==FNT_TABLE_RUNS ){
    rc = writeScan(x, it, tdir, now, &p, &kp, fs, rows);
  }else{
    /* Runs (or profiles) with chunks that prev does not list, run by run. */
    for(i=0; i<kn.n && rc==0; i=j){
      int fresh = 0, seen = 0;
      const char *run = kn.k[i].run_id;
      for(j=i; j<kn.n && strcmp(kn.k[j].run_id, run)==0; j++){
        if( keysetHas(&kp, run, kn.k[j].chunk) ) seen = 1; else fresh = 1;
      }
      if( !fresh ) continue;
      if( seen && strsAdd(replaced, run) ){ rc = xerr(x, "out of memory"); break; }
      p.run_ids = (const char *const *)&run;
      p.n_run_ids = 1;
      p.ordered = !prof;
      rc = it->table==FNT_TABLE_CALLS ? writeCalls(x, it, tdir, now, run, fs, rows)
                                      : writeScan(x, it, tdir, now, &p, 0, fs, rows);
    }
  }
  keysetFree(&kp);
  keysetFree(&kn);
  if( rc ) return -1;
  return dfilesFinish(x, fs, tdir);
}

/* The column metrics of a data file for its manifest entry, from the
** Parquet writer's statistics.  Text bounds longer than 64 bytes are left
** out (bounds are optional per column; a truncated upper bound would need
** incrementing). */
static int fileMetrics(fnt_table t, const pq_writer *w, ice_entry *e){
  const fnt_colinfo *ci = fnt_table_cols(t);
  int c, nc = fnt_table_ncol(t);
  if( (e->metrics = calloc((size_t)nc, sizeof *e->metrics))==0 ) return -1;
  e->n_metrics = (size_t)nc;
  for(c=0; c<nc; c++){
    ice_metric *m = &e->metrics[c];
    pq_stats ps;
    pq_column_stats(w, c, &ps);
    m->id = (int32_t)ci[c].field_id;
    m->values = (int64_t)ps.values;
    m->nulls = (int64_t)ps.nulls;
    if( ps.min==0 || ps.min_n>64 || ps.max_n>64 ) continue;
    if( (m->lo = malloc(ps.min_n ? ps.min_n : 1))==0 || (m->hi = malloc(ps.max_n ? ps.max_n : 1))==0 ) return -1;
    if( ps.min_n ) memcpy(m->lo, ps.min, ps.min_n);
    if( ps.max_n ) memcpy(m->hi, ps.max, ps.max_n);
    m->lo_n = ps.min_n; m->hi_n = ps.max_n;
  }
  return 0;
}

/* The manifests of the new snapshot: the current ones, those holding a
** replaced partition rewritten into the new manifest (their files of it
** DELETED, the rest EXISTING), plus the new files ADDED. */
static int buildManifests(exporter *x, const ice_table *it, const char *tdir,
                          const ice_state *s, const dfiles *fs,
                          const strs *replaced, int64_t snap, int64_t seq,
                          ice_manifest **out, size_t *nout,
                          int64_t *deleted_files, int64_t *deleted_rows,
                          int64_t *deleted_bytes){
  ice_manifest *old = 0, *res = 0;
  ice_entry *ent = 0;
  size_t nold = 0, nent = 0, nres = 0, i, k;
  char mpath[PBUF], name[33];
  const fnt_colinfo *ci = fnt_table_cols(it->table);
  json_t *schema = 0, *spec = 0;
  char *schemaText = 0, *specText = 0;
  int rc = -1;
  *deleted_files = *deleted_rows = *deleted_bytes = 0;
  if( s->list_path && ice_list_read(s->list_path, &old, &nold, x->err, sizeof x->err) ) return -1;
  if( (res = calloc(nold + 1, sizeof *res))==0 ){ xerr(x, "out of memory"); goto done; }
  for(i=0; i<nold; i++){
    ice_entry *e = 0;
    size_t ne = 0, r = 0;
    int hit = replaced->all;
    for(k=0; k<replaced->n; k++){
      if( old[i].lower && strcmp(replaced->s[k], old[i].lower)>=0
       && strcmp(replaced->s[k], old[i].upper)<=0 ) hit = 1;
    }
    if( hit ){
      if( ice_manifest_read(old[i].path, old[i].seq, &e, &ne, x->err, sizeof x->err) ) goto done;
      for(r=0; r<ne; r++) if( e[r].status!=ICE_DELETED && strsHas(replaced, e[r].partition) ) break;
    }
    if( !hit || r==ne ){                       /* carried over as it is */
      res[nres++] = old[i];
      memset(&old[i], 0, sizeof old[i]);
      ice_entries_free(e, ne);
      continue;
    }
    for(r=0; r<ne; r++){
      ice_entry *ne2;
      if( e[r].status==ICE_DELETED ) continue;
      if( (ne2 = realloc(ent, (nent+1) * sizeof *ent))==0 ){ ice_entries_free(e, ne); xerr(x, "out of memory"); goto done; }
      ent = ne2;
      ent[nent] = e[r];
      memset(&e[r], 0, sizeof e[r]);
      if( strsHas(replaced, ent[nent].partition) ){
        ent[nent].status = ICE_DELETED;
        ent[nent].snapshot_id = snap;
        (*deleted_files)++;
        *deleted_rows += ent[nent].records;
        *deleted_bytes += ent[nent].size;
      }else{
        ent[nent].status = ICE_EXISTING;
      }
      nent++;
    }
    ice_entries_free(e, ne);
  }
  for(i=0; i<fs->n; i++){
    ice_entry *ne2 = realloc(ent, (nent+1) * sizeof *ent);
    if( ne2==0 ){ xerr(x, "out of memory"); goto done; }
    ent = ne2;
    memset(&ent[nent], 0, sizeof *ent);
    ent[nent].status = ICE_ADDED;
    ent[nent].snapshot_id = snap;
    ent[nent].seq = ent[nent].file_seq = 0;     /* null: inherited (the spec's way) */
    ent[nent].records = (int64_t)pq_rows(fs->d[i].w);
    ent[nent].size = (int64_t)fs->d[i].size;
    if( (ent[nent].path = strdup(fs->d[i].path))==0
     || (ent[nent].partition = strdup(fs->d[i].part))==0
     || fileMetrics(it->table, fs->d[i].w, &ent[nent]) ){ nent++; xerr(x, "out of memory"); goto done; }
    nent++;
  }
  if( nent ){
    ice_table_desc d;
    schema = ice_schema_json(it->table);
    spec = ice_spec_fields(it->table, it->part_col);
    schemaText = json_dumps(schema, JSON_COMPACT);
    specText = json_dumps(spec, JSON_COMPACT);
    if( schemaText==0 || specText==0 ){ xerr(x, "out of memory"); goto done; }
    d.schema_json = schemaText; d.spec_json = specText;
    d.part_name = ci[it->part_col].name; d.part_field_id = ICE_PART_FIELD_ID;
    fnt_random_name(name);
    snprintf(mpath, sizeof mpath, "%s/metadata/%s-m0.avro", tdir, name);
    if( ice_manifest_write(mpath, &d, ent, nent, snap, seq, &res[nres], x->err, sizeof x->err) ) goto done;
    nres++;
  }
  *out = res; *nout = nres; res = 0;
  rc = 0;
done:
  ice_manifests_free(res, nres);
  ice_manifests_free(old, nold);
  ice_entries_free(ent, nent);
  json_decref(schema); json_decref(spec);
  free(schemaText); free(specText);
  return rc;
}

typedef struct table_stats {
  uint64_t rows, files, bytes, deleted_files;
  int64_t snapshot_id;
  int up_to_date;
  int rewritten;         /* the table rewritten whole (its last snapshot expired) */
} table_stats;

static int exportTable(exporter *x, const ice_table *it, fnt_snapshot *now,
                       table_stats *ts){
  char tdir[TDIR_MAX], list[PBUF], name[33];
  ice_state s;
  ice_commit c;
  fnt_snapshot *prev = 0;
  fnt_snapshot_info ni;
  dfiles fs = {0};
  strs replaced = {0};
  ice_manifest *mf = 0;
  size_t nmf = 0, i;
  json_t *meta = 0;
  int rc = -1;
  memset(ts, 0, sizeof *ts);
  memset(&c, 0, sizeof c);
  snprintf(tdir, sizeof tdir, "%s/%.16s", x->dest, it->name);
  snprintf(list, sizeof list, "%s/metadata", tdir);
  if( fnt_io_mkdirs(list)<0 ) return xerr(x, "%s: %s", list, strerror(errno));
  if( ice_state_load(tdir, x->wh, &s, x->err, sizeof x->err) ) goto done;
  fnt_snapshot_describe(now, &ni);
  if( s.meta && s.wh_snapshot==ni.id ){
    ts->up_to_date = 1;
    ts->snapshot_id = s.snapshot_id;
    rc = s.hint_stale ? ice_write_hint(tdir, s.version, x->err, sizeof x->err) : 0;
    goto done;
  }
  if( s.meta && s.wh_snapshot>0 ){
    int r = fnt_snapshot_at(x->st, s.wh_snapshot, &prev);
    if( r==FNT_E_NOTFOUND ){
      /* What was filed since cannot be told: rewrite the table whole. */
      if( !cli_g.quiet && !cli_g.json ){
        printf("%-8s the warehouse snapshot %llu exported last has been expired: "
               "rewriting the table whole\n", it->name, (unsigned long long)s.wh_snapshot);
      }
      ts->rewritten = 1;
      replaced.all = 1;
    }else if( r<0 ){
      storeErr(x, r);
      goto done;
    }
  }
  if( writeData(x, it, tdir, prev, now, &fs, &replaced, &ts->rows) ) goto done;
  if( fs.n ) ice_crash_point("data");
  c.snapshot_id = ice_random_id();
  c.seq = s.seq + 1;
  c.ms = ice_now_ms();
  if( buildManifests(x, it, tdir, &s, &fs, &replaced, c.snapshot_id, c.seq, &mf, &nmf,
                     &c.deleted_files, &c.deleted_rows, &c.deleted_bytes) ) goto done;
  ice_crash_point("manifest");
  fnt_random_name(name);
  snprintf(list, sizeof list, "%s/metadata/snap-%lld-1-%s.avro", tdir, (long long)c.snapshot_id, name);
  if( ice_list_write(list, c.snapshot_id, s.snapshot_id, c.seq, mf, nmf, x->err, sizeof x->err) ) goto done;
  ice_crash_point("list");
  c.manifest_list = list;
  c.overwrite = replaced.n>0 || replaced.all;
  c.added_files = (int64_t)fs.n;
  c.added_rows = (int64_t)ts->rows;
  for(i=0; i<fs.n; i++) c.added_bytes += (int64_t)fs.d[i].size;
  c.wh_snapshot = ni.id;
  meta = ice_meta_next(&s, it->table, it->part_col, tdir, x->wh, &c);
  if( meta==0 ){ xerr(x, "out of memory"); goto done; }
  if( ice_publish(tdir, meta, s.version + 1, x->err, sizeof x->err) ) goto done;
  ts->files = fs.n;
  ts->bytes = (uint64_t)c.added_bytes;
  ts->deleted_files = (uint64_t)c.deleted_files;
  ts->snapshot_id = c.snapshot_id;
  rc = 0;
done:
  json_decref(meta);
  ice_state_free(&s);
  ice_manifests_free(mf, nmf);
  strsFree(&replaced);
  dfilesFree(&fs);
  fnt_snapshot_release(prev);
  return rc;
}

/* ---- the command ------------------------------------------------------------ */
static void usage(FILE *out){
  fprintf(out,
    "usage: fnt export-iceberg DEST [--table events|runs|profiles|calls|all]\n"
    "                          [--row-group-rows N]\n\n"
    "Writes the warehouse's tables as Apache Iceberg format-v2 tables under\n"
    "DEST/<table>/ (Parquet data files, Avro manifests, metadata/vN.metadata.json\n"
    "and version-hint.text: the layout of a Hadoop catalog), readable by Spark,\n"
    "Trino, DuckDB (iceberg_scan('DEST/events')) and pyiceberg:\n"
    "  events    fn_trace_events, partitioned by identity(run_id)\n"
    "  runs      fn_trace_runs,   partitioned by identity(repo)\n"
    "  profiles  fn_profile,      partitioned by identity(repo)\n"
    "  calls     fn_trace_calls,  partitioned by identity(run_id)\n"
    "The default is all four.  Parquet row groups hold\n"
    "--row-group-rows rows (default 1048576 for events, 65536 for the others;\n"
    "memory grows with it).\n\n"
    "Run again later: each export adds one Iceberg snapshot with only what the\n"
    "warehouse filed since the last one (a run that gained chunks since has\n"
    "its partition rewritten; if the warehouse snapshot it read has been\n"
    "expired since, the table is rewritten whole).  A table already up to\n"
    "date gets no snapshot.\n"
    "An export killed midway leaves the previous snapshot as it was.\n"
    "It prints a line per table (--json: an object per table).\n\n"
    "example:\n  fnt export-iceberg ./lake --table events --warehouse ./fnt-warehouse\n");
  cli_globals_help(out);
}

int cmd_export_iceberg(int argc, char **argv){
  static const struct option opts[] = {
    {"table",     required_argument, 0, 't'},
    {"row-group-rows", required_argument, 0, 'r'},
    {"help",      no_argument,       0, 'h'},
    {0, 0, 0, 0}
  };
  const char *wh = cli_warehouse(0), *table = "all";
  char whAbs[PATH_MAX] = "";
  exporter x;
  fnt_snapshot *now = 0;
  fnt_snapshot_info ni;
  size_t i;
  int c, rc = 0, any = 0;
  optind = 1;
  memset(&x, 0, sizeof x);
  while( (c = getopt_long(argc, argv, "t:r:h", opts, 0))!=-1 ){
    if( c=='t' ){ table = optarg; continue; }
    if( c=='r' ){
      char *end;
      unsigned long long v = strtoull(optarg, &end, 10);
      if( *end || v<1 || v>(1u<<24) ){
        cli_error("export-iceberg", "--row-group-rows: expected 1 .. 16777216, not '%s'", optarg);
        return 2;
      }
      x.group_rows = (size_t)v;
      continue;
    }
    usage(c=='h' ? stdout : stderr);
    return c=='h' ? 0 : 2;
  }
  if( optind!=argc-1 ){
    cli_error("export-iceberg", optind<argc ? "expected one DEST, got '%s' too" : "no DEST given%s",
              optind<argc ? argv[argc-1] : "");
    return 2;
  }
  for(i=0; i<NTABLES; i++) if( strcmp(table, iceTables[i].name)==0 ) any = 1;
  if( !any && strcmp(table, "all")!=0 ){
    cli_error("export-iceberg", "--table: expected events, runs, profiles, calls or all, not '%s'", table);
    return 2;
  }
  /* An export reads: a mistyped --warehouse must not become an empty one. */
  if( (c = fnt_open(wh, 0, &x.st))!=FNT_OK ){
    cli_open_failed("export-iceberg", wh, x.st, c);
    return 1;
  }
  if( realpath(fnt_path(x.st), whAbs)==0
   || fnt_io_mkdirs(argv[optind])<0 || realpath(argv[optind], x.dest)==0 ){
    cli_error("export-iceberg", "%s: %s", whAbs[0] ? argv[optind] : fnt_path(x.st), strerror(errno));
    fnt_close(x.st);
    return 1;
  }
  x.wh = whAbs;
  if( (c = fnt_snapshot_current(x.st, &now))<0 ){
    storeErr(&x, c);
    cli_error("export-iceberg", "%s", x.err);
    fnt_close(x.st);
    return 1;
  }
  fnt_snapshot_describe(now, &ni);
  for(i=0; i<NTABLES && rc==0; i++){
    table_stats ts;
    struct timespec t0, t1, c0, c1;
    double sec, cpu;
    if( strcmp(table, "all")!=0 && strcmp(table, iceTables[i].name)!=0 ) continue;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &c0);
    if( exportTable(&x, &iceTables[i], now, &ts) ){
      cli_error("export-iceberg", "%s: %s", iceTables[i].name, x.err);
      rc = 1;
      break;
    }
    clock_gettime(CLOCK_MONOTONIC, &t1);
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &c1);
    sec = (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9;
    cpu = (double)(c1.tv_sec - c0.tv_sec) + (double)(c1.tv_nsec - c0.tv_nsec) / 1e9;
    if( cli_g.quiet ) continue;
    if( cli_g.json ){
      cli_json_begin();
      cli_json_str("table", iceTables[i].name);
      cli_json_bool("up_to_date", ts.up_to_date);
      cli_json_int("snapshot_id", (long long)ts.snapshot_id);
      cli_json_int("files", ts.up_to_date ? 0 : (long long)ts.files);
      cli_json_int("rows", ts.up_to_date ? 0 : (long long)ts.rows);
      cli_json_int("bytes", ts.up_to_date ? 0 : (long long)ts.bytes);
      cli_json_int("files_replaced", ts.up_to_date ? 0 : (long long)ts.deleted_files);
      cli_json_bool("rewritten_whole", ts.rewritten);
      cli_json_num("seconds", sec);
      cli_json_num("cpu_seconds", cpu);
      cli_json_int("warehouse_snapshot", (long long)ni.id);
      cli_json_end();
      continue;
    }
    if( ts.up_to_date ){
      printf("%-8s up to date (warehouse snapshot %llu)\n", iceTables[i].name,
             (unsigned long long)ni.id);
      continue;
    }
    printf("%-8s snapshot %lld: +%llu files, +%llu rows, %llu bytes (%.2f B/row)",
           iceTables[i].name, (long long)ts.snapshot_id, (unsigned long long)ts.files,
           (unsigned long long)ts.rows, (unsigned long long)ts.bytes,
           ts.rows ? (double)ts.bytes / (double)ts.rows : 0.0);
    if( ts.deleted_files ) printf(", %llu files replaced", (unsigned long long)ts.deleted_files);
    printf(" in %.3f s, %.2f M rows/s (cpu %.3f s, %.2f M rows/s); warehouse snapshot %llu\n",
           sec, sec>0 ? (double)ts.rows / sec / 1e6 : 0.0,
           cpu, cpu>0 ? (double)ts.rows / cpu / 1e6 : 0.0, (unsigned long long)ni.id);
  }
  fnt_snapshot_release(now);
  fnt_close(x.st);
  return rc;
}
