/*
** fuzz_warehouse.c -- the scratch warehouse of the fuzz targets (see
** fuzz_warehouse.h).  Filed through the public API, so its files are
** exactly what the writer of this build produces.
*/
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fnt_store.h"
#include "util_test.h"
#include "fuzz_warehouse.h"

static char g_dir[512];

static void removeWarehouse(void){
  if( g_dir[0] ) t_remove_tree(g_dir);
}

static void die(const char *what, fnt_store *st){
  fprintf(stderr, "fuzz_warehouse: %s: %s\n", what, st ? fnt_errmsg(st) : "");
  exit(1);
}

static void fileWarehouse(void);

const char *fuzz_warehouse(const char *target){
  char name[128];
  if( g_dir[0] ) return g_dir;
  snprintf(name, sizeof(name), "fuzz-%s", target);
  snprintf(g_dir, sizeof(g_dir), "%s", t_scratch_dir(name));
  atexit(removeWarehouse);
  fileWarehouse();
  return g_dir;
}

void fuzz_warehouse_reset(void){
  fileWarehouse();
}

static void fileWarehouse(void){
  fnt_store *st = 0;
  t_chunk a, b;
  fnt_profile_row rows[3];
  fnt_profile p;
  t_remove_tree(g_dir);
  if( fnt_open(g_dir, FNT_OPEN_CREATE, &st) ) die("open", st);
  /* Two chunks of one run (so reads merge files), two threads, nested
  ** calls; small enough that a seed stays a few hundred bytes. */
  t_chunk_make(&a, FUZZ_REPO, FUZZ_RUN, 0, 2, 40, 2, 0, 7);
  t_chunk_make(&b, FUZZ_REPO, FUZZ_RUN, 1, 2, 24, 2, 40, 8);
  a.c.commit = "9f1c2e0";
  if( fnt_file_chunk(st, &a.c)!=1 ) die("file chunk 0", st);
  if( fnt_file_chunk(st, &b.c)!=1 ) die("file chunk 1", st);
  t_chunk_free(&a);
  t_chunk_free(&b);
  memset(rows, 0, sizeof(rows));
  rows[0].symbol = "main"; rows[0].stable_id = "c acme/fuzz * main().";
  rows[0].self_ns = 5; rows[0].total_ns = 900; rows[0].self_samples = 1; rows[0].total_samples = 9;
  rows[1].symbol = "parse"; rows[1].self_ns = 800; rows[1].total_ns = 800;
  rows[1].self_samples = 8; rows[1].total_samples = 8;
  rows[2].symbol = "[unknown] (libc.so.6)"; rows[2].self_ns = 95; rows[2].total_ns = 95;
  rows[2].self_samples = 1; rows[2].total_samples = 1;
  memset(&p, 0, sizeof(p));
  p.run_id = FUZZ_PROFILE; p.ts_micros = 1764680000000000; p.repo = FUZZ_REPO;
  p.target = "fuzz_bench"; p.samples = 10; p.profile_ns = 1000;
  p.rows = rows; p.n_rows = 3;
  if( fnt_file_profile(st, &p)!=1 ) die("file profile", st);
  fnt_close(st);
}

int fuzz_read_file(const char *path, uint8_t **data, size_t *n){
  FILE *f = fopen(path, "rb");
  long len;
  *data = 0; *n = 0;
  if( f==0 ) return -1;
  if( fseek(f, 0, SEEK_END) || (len = ftell(f))<0 || fseek(f, 0, SEEK_SET) ){
    fclose(f);
    return -1;
  }
  *data = malloc((size_t)len + 1);
  if( *data==0 || fread(*data, 1, (size_t)len, f)!=(size_t)len ){
    fclose(f); free(*data); *data = 0;
    return -1;
  }
  fclose(f);
  *n = (size_t)len;
  return 0;
}

int fuzz_write_file(const char *path, const void *data, size_t n){
  FILE *f = fopen(path, "wb");
  int rc;
  if( f==0 ) return -1;
  rc = (n && fwrite(data, 1, n, f)!=n) ? -1 : 0;
  if( fclose(f) ) rc = -1;
  return rc;
}

void fuzz_seed(const char *name, uint8_t prefix, const uint8_t *data, size_t n){
  const char *dir = getenv("FNT_FUZZ_SEEDS");
  char path[1024];
  uint8_t *buf;
  if( dir==0 || dir[0]==0 ) return;
  buf = malloc(n + 1);
  if( buf==0 ) return;
  buf[0] = prefix;
  if( n ) memcpy(buf+1, data, n);
  snprintf(path, sizeof(path), "%s/%s", dir, name);
  if( fuzz_write_file(path, buf, n+1) ) fprintf(stderr, "cannot write seed %s\n", path);
  free(buf);
}
