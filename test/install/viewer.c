/*
** viewer.c -- a program that embeds the installed store as a desktop
** viewer does: only <fnt_store.h> and libfntstore, found through
** `pkg-config fntrace` or CMake's find_package(fntrace) (test_install.sh
** builds it both ways against a temporary prefix).  It files the SPEC §4
** chunk into the warehouse argv[1], replays its window in seq_no order and
** prints the run's heat, sorted by key.
*/
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <fnt_store.h>

static int fail(fnt_store *st, const char *what, int rc){
  fprintf(stderr, "viewer: %s: %s\n", what, st && fnt_errmsg(st)[0] ? fnt_errmsg(st) : fnt_strerror(rc));
  fnt_close(st);
  return 1;
}

static int byKey(const void *a, const void *b){
  return strcmp(((const fnt_heat_row*)a)->key, ((const fnt_heat_row*)b)->key);
}

int main(int argc, char **argv){
  static const fnt_function fns[] = {
    {"main", "c acme/widget * main().", 1},
    {"memcpy", NULL, 0},
  };
  static const fnt_event evs[] = {
    {0, 0, 1, 0, FNT_KIND_ENTRY}, {1, 100, 1, 1, FNT_KIND_ENTRY}, {2, 900, 1, 1, FNT_KIND_EXIT},
  };
  const char *run = "run-2026-12-02-0001";
  fnt_chunk c;
  fnt_store *st = 0;
  fnt_snapshot *snap = 0;
  fnt_scan *sc = 0;
  fnt_predicate p;
  fnt_heat *h = 0;
  fnt_heat_row *rows;
  size_t i, n;
  int rc;

  if( argc!=2 ){ fprintf(stderr, "usage: viewer WAREHOUSE\n"); return 2; }
  printf("fntrace %s\n", fnt_version());
  if( (rc = fnt_open(argv[1], FNT_OPEN_CREATE, &st))!=FNT_OK ) return fail(st, "open", rc);

  memset(&c, 0, sizeof(c));
  c.repo = "acme/widget"; c.commit = "9f1c2e0"; c.run_id = run;
  c.ts_micros = 1764680000000000; c.target = "widget_tests"; c.source = "xray";
  c.chunk = 0; c.chunks = 2; c.total_events = 6; c.duration_ns = 5000; c.threads = 1;
  c.binaries_json = "[{\"path\":\"build/widget_tests\",\"build_id\":\"ab12\"}]";
  c.functions = fns; c.n_functions = 2; c.events = evs; c.n_events = 3;
  if( (rc = fnt_file_chunk(st, &c))<0 ) return fail(st, "file", rc);
  printf("filed %d\n", rc);

  if( (rc = fnt_snapshot_current(st, &snap))!=FNT_OK ) return fail(st, "snapshot", rc);
  fnt_predicate_init(&p);
  p.run_ids = &run; p.n_run_ids = 1; p.ordered = 1;
  p.t_min = 0; p.t_max = 1000000;
  if( (rc = fnt_scan_open(snap, FNT_TABLE_EVENTS, &p, &sc))!=FNT_OK ) return fail(st, "scan", rc);
  while( (rc = fnt_scan_next(sc))==1 ){
    printf("%lld %lld %lld %s %s\n", (long long)fnt_scan_int(sc, FNT_EV_THREAD),
           (long long)fnt_scan_int(sc, FNT_EV_SEQ_NO), (long long)fnt_scan_int(sc, FNT_EV_T_NS),
           fnt_scan_text(sc, FNT_EV_KIND, 0), fnt_scan_text(sc, FNT_EV_SYMBOL, 0));
  }
  fnt_scan_close(sc);
  if( rc<0 ) return fail(st, "scan", rc);

  if( (rc = fnt_heat_compute(snap, run, &h))!=FNT_OK ) return fail(st, "heat", rc);
  n = fnt_heat_count(h);
  rows = malloc((n ? n : 1)*sizeof(*rows));
  if( rows==0 ) return fail(st, "heat", FNT_E_NOMEM);
  memcpy(rows, fnt_heat_rows(h), n*sizeof(*rows));
  qsort(rows, n, sizeof(*rows), byKey);
  for(i=0; i<n; i++){
    printf("heat %s %lld %lld %lld\n", rows[i].key, (long long)rows[i].inclusive_ns,
           (long long)rows[i].self_ns, (long long)rows[i].calls);
  }
  free(rows);
  fnt_heat_free(h);
  fnt_snapshot_release(snap);
  fnt_close(st);
  return 0;
}
