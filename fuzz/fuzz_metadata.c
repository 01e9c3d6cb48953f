/*
** fuzz_metadata.c -- libFuzzer target: bytes as a manifest or a snapshot
** (catalog) file.
**
** Input: byte 0
**   bit 0: 0 manifest (fnt_manifest_decode), 1 catalog (fnt_catalog_decode);
**   bit 1: "sign": force the magic and recompute the trailing checksum, so
**          that mutations reach the body decoder;
**   bit 2: also install the bytes in the scratch warehouse (as its newest
**          catalog version, or as the manifest it lists) and read every
**          table of the current snapshot through them: the references a
**          forged file makes (paths, counts) are followed for real.
** the rest: the file.
** A decoded file must survive a round trip: encoding it and decoding that
** gives the same values (the encoder and decoder agree on every field).
*/
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "fuzz_warehouse.h"

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const char *g_dir;
static char g_catalog[600];      /* the newest catalog version, full path */
static char g_manifest[600];     /* a manifest it lists, full path */
static uint8_t *g_origCat, *g_origMan;
static size_t g_nCat, g_nMan;
static fnt_store *g_st;          /* for messages of the plain decoders */

static void restore(void){
  if( g_origCat ) fuzz_write_file(g_catalog, g_origCat, g_nCat);
  if( g_origMan ) fuzz_write_file(g_manifest, g_origMan, g_nMan);
}
static void freeAll(void){
  restore();
  free(g_origCat); free(g_origMan);
  fnt_close(g_st);
}

int LLVMFuzzerInitialize(int *argc, char ***argv){
  fnt_snapshot *snap = 0;
  char name[64];
  (void)argc; (void)argv;
  g_dir = fuzz_warehouse("metadata");
  if( fnt_open(g_dir, 0, &g_st) || fnt_snapshot_current(g_st, &snap) ){
    fprintf(stderr, "fuzz_metadata: %s\n", fnt_errmsg(g_st));
    exit(1);
  }
  fnt_catalog_name(snap->cat.id, name);
  snprintf(g_catalog, sizeof(g_catalog), "%s/%s", g_dir, name);
  snprintf(g_manifest, sizeof(g_manifest), "%s/%s", g_dir,
           snap->cat.manifest_paths[0]);
  fnt_snapshot_release(snap);
  if( fuzz_read_file(g_catalog, &g_origCat, &g_nCat)
   || fuzz_read_file(g_manifest, &g_origMan, &g_nMan) ){
    fprintf(stderr, "fuzz_metadata: cannot read the warehouse's metadata\n");
    exit(1);
  }
  fuzz_seed("manifest", 0, g_origMan, g_nMan);
  fuzz_seed("signed-manifest", 2, g_origMan, g_nMan);
  fuzz_seed("installed-manifest", 6, g_origMan, g_nMan);
  fuzz_seed("catalog", 1, g_origCat, g_nCat);
  fuzz_seed("signed-catalog", 3, g_origCat, g_nCat);
  fuzz_seed("installed-catalog", 7, g_origCat, g_nCat);
  atexit(freeAll);
  return 0;
}

static int strEq(const char *a, const char *b){
  if( a==0 || b==0 ) return a==b;
  return strcmp(a, b)==0;
}

static void roundTripManifest(const fnt_manifest *m){
  fnt_buf b = {0};
  fnt_manifest *m2 = 0;
  size_t i;
  if( fnt_manifest_encode(m->entries, m->n, &b) ){ fnt_buf_free(&b); return; }
  if( fnt_manifest_decode(g_st, "re-encoded", b.data, b.len, &m2) ){
    if( g_st && strstr(fnt_errmsg(g_st), "out of memory") ){ fnt_buf_free(&b); return; }
    fprintf(stderr, "re-encoded manifest does not decode: %s\n", fnt_errmsg(g_st));
    abort();
  }
  if( m2->n!=m->n ) abort();
  for(i=0; i<m->n; i++){
    const fnt_entry *a = &m->entries[i], *c = &m2->entries[i];
    if( a->table!=c->table || !strEq(a->path, c->path) || a->file_size!=c->file_size
     || a->rows!=c->rows || !strEq(a->run_id, c->run_id) || !strEq(a->repo, c->repo)
     || a->chunk!=c->chunk || a->seq_min!=c->seq_min || a->seq_max!=c->seq_max
     || a->t_min!=c->t_min || a->t_max!=c->t_max || a->snapshot_id!=c->snapshot_id ){
      fprintf(stderr, "manifest entry %zu changed in a round trip\n", i);
      abort();
    }
  }
  fnt_manifest_free(m2);
  fnt_buf_free(&b);
}

static void roundTripCatalog(const fnt_catalog *c){
  fnt_buf b = {0};
  fnt_catalog c2;
  size_t i;
  if( fnt_catalog_encode(c, &b) ){ fnt_buf_free(&b); return; }
  if( fnt_catalog_decode(g_st, "re-encoded", b.data, b.len, &c2) ){
    if( strstr(fnt_errmsg(g_st), "out of memory") ){ fnt_buf_free(&b); return; }
    fprintf(stderr, "re-encoded catalog does not decode: %s\n", fnt_errmsg(g_st));
    abort();
  }
  if( c2.id!=c->id || c2.parent_id!=c->parent_id || c2.ts_micros!=c->ts_micros
   || !strEq(c2.operation, c->operation) || !strEq(c2.summary, c->summary)
   || c2.added_files!=c->added_files || c2.added_rows!=c->added_rows
   || c2.total_files!=c->total_files || c2.total_rows!=c->total_rows
   || c2.n_manifests!=c->n_manifests ){
    fprintf(stderr, "catalog changed in a round trip\n");
    abort();
  }
  for(i=0; i<c->n_manifests; i++){
    if( !strEq(c->manifest_paths[i], c2.manifest_paths[i]) ) abort();
  }
  fnt_catalog_clear(&c2);
  fnt_buf_free(&b);
}

static volatile uint64_t g_sink;

/* Reads every table of the current snapshot, every column. */
static void readWarehouse(void){
  fnt_store *st = 0;
  fnt_snapshot *snap = 0;
  int t;
  if( fnt_open(g_dir, 0, &st)==FNT_OK && fnt_snapshot_current(st, &snap)==FNT_OK ){
    fnt_snapshot_info info;
    fnt_snapshot_describe(snap, &info);
    g_sink += info.total_rows;
    for(t=0; t<3; t++){
      fnt_predicate pr;
      fnt_scan *sc = 0;
      int rc, col;
      fnt_predicate_init(&pr);
      if( fnt_scan_open(snap, (fnt_table)t, &pr, &sc)==FNT_OK ){
        while( (rc = fnt_scan_next(sc))==1 ){
          for(col=0; col<fnt_table_ncol((fnt_table)t); col++){
            if( fnt_column_is_text((fnt_table)t, col) ){
              size_t len;
              const char *z = fnt_scan_text(sc, col, &len);
              g_sink += z ? len : 0;
            }else{
              g_sink += (uint64_t)fnt_scan_int(sc, col);
            }
          }
        }
      }
      fnt_scan_close(sc);
    }
  }
  if( st && fnt_errmsg(st)[0]==0 && snap==0 ) abort();   /* failed in silence */
  fnt_snapshot_release(snap);
  fnt_close(st);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size){
  int isCatalog, sign, install;
  uint8_t *buf;
  size_t n;
  if( size<1 ) return 0;
  isCatalog = data[0] & 1;
  sign = (data[0] & 2)!=0;
  install = (data[0] & 4)!=0;
  n = size - 1;
  buf = malloc(n ? n : 1);
  if( buf==0 ) return 0;
  if( n ) memcpy(buf, data+1, n);
  if( sign && n>=17 ){
    memcpy(buf, isCatalog ? "FNTCATL1" : "FNTMANI1", 8);
    {
      uint64_t h = fnt_hash(buf, n-8);
      int i;
      for(i=0; i<8; i++) buf[n-8+i] = (uint8_t)(h >> (8*i));
    }
  }
  if( isCatalog ){
    fnt_catalog c;
    if( fnt_catalog_decode(g_st, "fuzz-catalog", buf, n, &c)==FNT_OK ){
      roundTripCatalog(&c);
      fnt_catalog_clear(&c);
    }else if( fnt_errmsg(g_st)[0]==0 ){
      abort();
    }
  }else{
    fnt_manifest *m = 0;
    if( fnt_manifest_decode(g_st, "fuzz-manifest", buf, n, &m)==FNT_OK ){
      roundTripManifest(m);
      fnt_manifest_free(m);
    }else if( fnt_errmsg(g_st)[0]==0 ){
      abort();
    }
  }
  if( install ){
    if( fuzz_write_file(isCatalog ? g_catalog : g_manifest, buf, n) ) abort();
    readWarehouse();
    restore();
  }
  free(buf);
  return 0;
}
