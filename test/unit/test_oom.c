/*
** test_oom.c -- every allocation of a filing and of a query fails in turn.
**
** Through fnt_set_allocator(), the Nth allocation (malloc or realloc) fails,
** for N = 1, 2, ... until the operation no longer reaches an Nth:
**   - filings: opening the warehouse and fnt_file_chunk (into an empty
**     warehouse, then a second chunk next to the first), fnt_file_profile;
**   - a query: pin the snapshot, scan every column of the three tables,
**     fnt_heat_compute of the run, fnt_compare_compute of its commit,
**     fnt_timeline_compute of the whole run.
** Each call must return FNT_E_NOMEM (with a message) or succeed: no other
** error, no crash, nothing half-filed (a failed filing leaves the snapshot
** as it was), no leak (the allocator counts live blocks; LeakSanitizer
** checks too in the ASan build), and afterwards the warehouse reads exactly
** as a fault-free reference.
*/
#include <dirent.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "fnt_store.h"
#include "util_test.h"

/* ---- the failing allocator */
/* Atomic: a filing allocates on its worker thread too (FNT_OPEN_NO_THREADS),
** so the failing allocation may be the worker's: its error must come back. */
static _Atomic long g_count; /* allocations so far */
static long g_failAt;        /* fail the allocation with this number; 0 = none */
static _Atomic long g_failed; /* allocations failed (this round) */
static _Atomic long g_live;  /* blocks allocated and not freed */

static void *tMalloc(void *o, size_t n){
  void *p;
  (void)o;
  if( ++g_count==g_failAt ){ g_failed++; return 0; }
  p = malloc(n ? n : 1);
  if( p ) g_live++;
  return p;
}
static void *tRealloc(void *o, void *p, size_t n){
  void *q;
  (void)o;
  if( ++g_count==g_failAt ){ g_failed++; return 0; }
  q = realloc(p, n ? n : 1);
  if( q && p==0 ) g_live++;
  return q;
}
static void tFree(void *o, void *p){
  (void)o;
  if( p ){ g_live--; free(p); }
}
static const fnt_allocator g_alloc = { tMalloc, tRealloc, tFree, 0 };

static void armAt(long n){ g_count = 0; g_failAt = n; g_failed = 0; }

/* Totals for the report line. */
static long g_faultsSurvived;

/* ---- what a warehouse holds, as one hash per table (every column, every
** row, in scan order) plus the heat of the run; -1 rc on failure. */
typedef struct digest {
  uint64_t rows[3], hash[3];
  uint64_t heatRows, heatHash;
  uint64_t cmpRows, cmpHash;
  uint64_t tlRows, tlHash;
} digest;

static uint64_t mix(uint64_t h, uint64_t v){
  h ^= v + 0x9e3779b97f4a7c15ULL + (h<<6) + (h>>2);
  return h * 0xff51afd7ed558ccdULL;
}
static uint64_t mixStr(uint64_t h, const char *z){
  if( z==0 ) return mix(h, 0xdeadULL);
  while( *z ) h = mix(h, (uint8_t)*z++);
  return mix(h, 1);
}

/* Reads everything; returns FNT_OK or the first failure's code. */
static int readAll(const char *dir, const char *run, digest *d){
  fnt_store *st = 0;
  fnt_snapshot *snap = 0;
  fnt_heat *h = 0;
  fnt_compare *c = 0;
  int rc, t;
  memset(d, 0, sizeof(*d));
  rc = fnt_open(dir, 0, &st);
  if( rc==FNT_OK ) rc = fnt_snapshot_current(st, &snap);
  for(t=0; t<3 && rc==FNT_OK; t++){
    fnt_predicate p;
    fnt_scan *sc = 0;
    int col, ncol = fnt_table_ncol((fnt_table)t);
    fnt_predicate_init(&p);
    p.ordered = 1;
    rc = fnt_scan_open(snap, (fnt_table)t, &p, &sc);
    while( rc==FNT_OK ){
      int r = fnt_scan_next(sc);
      if( r<0 ){ rc = r; break; }
      if( r==0 ) break;
      d->rows[t]++;
      for(col=0; col<ncol; col++){
        if( fnt_column_is_text((fnt_table)t, col) ){
          d->hash[t] = mixStr(d->hash[t], fnt_scan_text(sc, col, 0));
        }else{
          d->hash[t] = mix(d->hash[t], (uint64_t)fnt_scan_int(sc, col));
        }
      }
    }
    fnt_scan_close(sc);
  }
  if( rc==FNT_OK ) rc = fnt_heat_compute(snap, run, &h);
  if( rc==FNT_OK ){
    /* Rows come in no particular order: sum the per-row hashes. */
    size_t i, n = fnt_heat_count(h);
    const fnt_heat_row *r = fnt_heat_rows(h);
    d->heatRows = n;
    for(i=0; i<n; i++){
      uint64_t x = mixStr(0, r[i].key);
      x = mix(x, (uint64_t)r[i].inclusive_ns);
      x = mix(x, (uint64_t)r[i].self_ns);
      d->heatHash += mix(x, (uint64_t)r[i].calls);
    }
  }
  /* The run against itself: one run a side, a row per key. */
  if( rc==FNT_OK ) rc = fnt_compare_compute(snap, "acme/oom", "c0ffee", "c0ffee", &c);
  if( rc==FNT_OK ){
    size_t i, n = fnt_compare_count(c);
    const fnt_compare_row *r = fnt_compare_rows(c);
    d->cmpRows = n;
    for(i=0; i<n; i++){
      uint64_t x = mixStr(d->cmpHash, r[i].key);
      x = mixStr(x, r[i].symbol);
      d->cmpHash = mix(x, (uint64_t)r[i].median_a);
    }
  }
  if( rc==FNT_OK ){
    fnt_timeline *tl = 0;
    int64_t first = 0, last = 0;
    rc = fnt_timeline_span(snap, run, &first, &last);
    if( rc==FNT_OK ) rc = fnt_timeline_compute(snap, run, first, last+1, 50, -1, &tl);
    if( rc==FNT_OK ){
      size_t i, n = fnt_timeline_count(tl);
      const fnt_timeline_row *r = fnt_timeline_rows(tl);
      d->tlRows = n;
      for(i=0; i<n; i++){
        uint64_t x = mixStr(d->tlHash, r[i].symbol);
        x = mix(x, (uint64_t)r[i].call_id);
        d->tlHash = mix(x, (uint64_t)r[i].calls);
      }
    }
    fnt_timeline_free(tl);
  }
  if( rc!=FNT_OK && rc!=FNT_E_NOMEM ){
    fprintf(stderr, "read %s: rc %d: %s\n", dir, rc, st ? fnt_errmsg(st) : "");
  }
  if( rc==FNT_E_NOMEM && st && fnt_errmsg(st)[0]==0 ){
    fprintf(stderr, "read: FNT_E_NOMEM without a message\n");
    t_failures++;
  }
  fnt_heat_free(h);
  fnt_compare_free(c);
  fnt_snapshot_release(snap);
  fnt_close(st);
  return rc;
}

static int digestEq(const digest *a, const digest *b){
  return memcmp(a, b, sizeof(*a))==0;
}

static uint64_t snapshotId(const char *dir){
  fnt_store *st = 0;
  fnt_snapshot *snap = 0;
  fnt_snapshot_info info;
  uint64_t id = UINT64_MAX;
  if( fnt_open(dir, 0, &st)==FNT_OK && fnt_snapshot_current(st, &snap)==FNT_OK ){
    fnt_snapshot_describe(snap, &info);
    id = info.id;
  }
  fnt_snapshot_release(snap);
  fnt_close(st);
  return id;
}

/* The files under `path` (a warehouse's data/: its segment files). */
static long countFiles(const char *path){
  DIR *d = opendir(path);
  struct dirent *e;
  long n = 0;
  if( d==0 ) return 0;
  while( (e = readdir(d))!=0 ){
    char sub[4096];
    DIR *x;
    if( e->d_name[0]=='.' ) continue;
    snprintf(sub, sizeof(sub), "%s/%s", path, e->d_name);
    if( (x = opendir(sub))!=0 ){ closedir(x); n += countFiles(sub); }
    else n++;
  }
  closedir(d);
  return n;
}

/* One filing: 0 a chunk, 1 a profile. */
typedef struct filing {
  int isProfile;
  const fnt_chunk *c;
  const fnt_profile *p;
} filing;

/* Files `f` under every allocation failure in turn, then for real.
** Returns the number of injected faults survived. */
static long fileUnderFaults(const char *dir, const filing *f, const char *what){
  long n, survived = 0;
  uint64_t before = snapshotId(dir);
  char data[4096];
  long filesBefore;
  snprintf(data, sizeof(data), "%s/data", dir);
  filesBefore = countFiles(data);
  for(n=1; ; n++){
    fnt_store *st = 0;
    int rc;
    armAt(n);
    rc = fnt_open(dir, FNT_OPEN_CREATE, &st);
    if( rc==FNT_OK ) rc = f->isProfile ? fnt_file_profile(st, f->p) : fnt_file_chunk(st, f->c);
    if( g_failed==0 ){
      /* The filing no longer reaches allocation n: it ran clean. */
      CHECK_EQ_INT(rc, 1);
      fnt_close(st);
      armAt(0);
      break;
    }
    if( rc==FNT_E_NOMEM ){
      if( st && fnt_errmsg(st)[0]==0 ){
        fprintf(stderr, "%s: allocation %ld: FNT_E_NOMEM without a message\n", what, n);
        t_failures++;
      }
    }else if( rc!=1 ){
      /* A degraded path may absorb a failed allocation and still file. */
      fprintf(stderr, "%s: allocation %ld failed: rc %d (%s), want FNT_E_NOMEM\n",
              what, n, rc, st ? fnt_errmsg(st) : "no handle");
      t_failures++;
    }
    fnt_close(st);
    armAt(0);
    if( g_live!=0 ){
      fprintf(stderr, "%s: allocation %ld failed: %ld block(s) leaked\n", what, n, g_live);
      t_failures++;
      g_live = 0;
    }
    if( rc==1 ){
      /* Filed in spite of the fault: the rest of the loop would only
      ** re-file an already filed chunk. */
      survived++;
      break;
    }
    /* Nothing half-filed: the warehouse is at the snapshot it was, and
    ** no segment file written for it (some are, on the worker, before
    ** the commit) is left behind. */
    if( snapshotId(dir)!=before ){
      fprintf(stderr, "%s: allocation %ld failed, yet the snapshot moved\n", what, n);
      t_failures++;
      break;
    }
    if( countFiles(data)!=filesBefore ){
      fprintf(stderr, "%s: allocation %ld failed: %ld segment file(s) left, %ld before\n",
              what, n, countFiles(data), filesBefore);
      t_failures++;
      break;
    }
    survived++;
  }
  CHECK(snapshotId(dir)==before+1);
  printf("%s: %ld allocation failures survived (faults at allocations 1..%ld)\n",
         what, survived, n);
  return survived;
}

static long queryUnderFaults(const char *dir, const char *run, const digest *ref){
  long n, survived = 0;
  for(n=1; ; n++){
    digest d;
    int rc;
    long failed;
    armAt(n);
    rc = readAll(dir, run, &d);
    failed = g_failed;
    armAt(0);
    if( g_live!=0 ){
      fprintf(stderr, "query: allocation %ld failed: %ld block(s) leaked\n", n, g_live);
      t_failures++;
      g_live = 0;
    }
    if( rc==FNT_OK ){
      if( !digestEq(&d, ref) ){
        fprintf(stderr, "query: allocation %ld failed, yet the read succeeded "
                "with different rows\n", n);
        t_failures++;
      }
    }else if( rc!=FNT_E_NOMEM ){
      fprintf(stderr, "query: allocation %ld failed: rc %d, want FNT_E_NOMEM\n", n, rc);
      t_failures++;
    }
    if( failed==0 ) break;       /* ran clean: past the last allocation */
    survived++;
  }
  printf("query: %ld allocation failures survived (%ld allocations in all)\n",
         survived, n-1);
  return survived;
}

int main(void){
  const char *dir = t_scratch_dir("oom");
  t_chunk a, b;
  fnt_profile_row rows[2];
  fnt_profile prof;
  filing f;
  digest ref, after;
  static const char run[] = "oom-run";

  fnt_set_allocator(&g_alloc);
  {
    /* The warehouse exists (empty) before the first filing. */
    fnt_store *st = 0;
    CHECK_RC(st, fnt_open(dir, FNT_OPEN_CREATE, &st), FNT_OK);
    fnt_close(st);
  }
  t_chunk_make(&a, "acme/oom", run, 0, 2, 60, 3, 0, 11);
  t_chunk_make(&b, "acme/oom", run, 1, 2, 40, 2, 60, 12);
  memset(rows, 0, sizeof(rows));
  rows[0].symbol = "main"; rows[0].stable_id = "c main().";
  rows[0].self_ns = 10; rows[0].total_ns = 100; rows[0].self_samples = 1; rows[0].total_samples = 10;
  rows[1].symbol = "parse"; rows[1].self_ns = 90; rows[1].total_ns = 90;
  rows[1].self_samples = 9; rows[1].total_samples = 9;
  memset(&prof, 0, sizeof(prof));
  prof.run_id = "oom-prof"; prof.ts_micros = 1764680000000000; prof.repo = "acme/oom";
  prof.target = "bench"; prof.samples = 10; prof.profile_ns = 100;
  prof.rows = rows; prof.n_rows = 2;

  memset(&f, 0, sizeof(f));
  f.c = &a.c;
  g_faultsSurvived += fileUnderFaults(dir, &f, "file_chunk (empty warehouse)");
  f.c = &b.c;
  g_faultsSurvived += fileUnderFaults(dir, &f, "file_chunk (second chunk)");
  f.isProfile = 1; f.p = &prof;
  g_faultsSurvived += fileUnderFaults(dir, &f, "file_profile");

  /* The reference: read without faults. */
  CHECK_RC(0, readAll(dir, run, &ref), FNT_OK);
  CHECK_EQ_INT(ref.rows[0], 100);
  CHECK_EQ_INT(ref.rows[1], 2);
  CHECK_EQ_INT(ref.rows[2], 2);
  CHECK(ref.heatRows>0);
  CHECK_EQ_INT(ref.cmpRows, ref.heatRows);
  g_faultsSurvived += queryUnderFaults(dir, run, &ref);

  /* Afterwards the warehouse reads exactly as before the faults. */
  CHECK_RC(0, readAll(dir, run, &after), FNT_OK);
  CHECK(digestEq(&ref, &after));
  CHECK_EQ_INT(g_live, 0);
  printf("test_oom: %ld injected allocation failures survived\n", g_faultsSurvived);

  fnt_set_allocator(0);
  t_chunk_free(&a);
  t_chunk_free(&b);
  t_remove_tree(dir);
  return t_finish("test_oom");
}
