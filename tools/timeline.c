/*
** timeline.c -- `fnt timeline`: what a viewer draws for a window of a run
** (SPEC §8 fnt_timeline), through the store's C API
** (fnt_timeline_compute).  One line per (thread, depth, bucket): the
** bucket's longest call and how many calls it stands for; bucket -1 is
** the call still running at the window's start.  --json: JSON Lines, one
** row a line, times in ns.
*/
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "fnt.h"

static const char usage[] =
  "usage: fnt timeline [--from NS] [--to NS] [--buckets N] [--thread T] RUN_ID\n"
  "\n"
  "What a flame chart of the window [from, to) of a run draws at N columns\n"
  "(SPEC fnt_timeline): each bucket is ceil((to-from)/N) ns wide; per\n"
  "(thread, depth, bucket) the longest call starting in the bucket and how\n"
  "many calls the bucket holds; bucket -1 is the call that started before\n"
  "the window and still runs at its start.\n"
  "\n"
  "  --from NS      the window's start (default: the run's first event)\n"
  "  --to NS        its end, exclusive (default: just after the last event)\n"
  "  --buckets N    columns (default 100)\n"
  "  --thread T     only thread T\n"
  "\n"
  "example:\n  fnt timeline demo --from 0 --to 5000000 --buckets 50\n";

static const struct option opts[] = {
  {"from",    required_argument, 0, 'f'},
  {"to",      required_argument, 0, 't'},
  {"buckets", required_argument, 0, 'b'},
  {"thread",  required_argument, 0, 'T'},
  {"help",    no_argument,       0, 'h'},
  {0, 0, 0, 0}
};

/* An integer option in [min, max]; 0 ok, else a message and -1. */
static int parseInt(const char *opt, const char *s, int64_t min, int64_t max, int64_t *out){
  char *end;
  long long v;
  errno = 0;
  v = strtoll(s, &end, 10);
  if( s[0]==0 || *end || errno || v<min || v>max ){
    cli_error("timeline", "--%s: expected an integer from %" PRId64 " to %" PRId64
              ", not '%s'", opt, min, max, s);
    return -1;
  }
  *out = v;
  return 0;
}

int cmd_timeline(int argc, char **argv){
  int64_t from = 0, to = 0, buckets = 100, thread = -1;
  int hasFrom = 0, hasTo = 0, c, rc;
  const char *run;
  fnt_store *st;
  fnt_snapshot *snap = 0;
  fnt_timeline *t = 0;
  size_t i, n;
  optind = 1;
  while( (c = getopt_long(argc, argv, "h", opts, 0))!=-1 ){
    switch( c ){
      case 'f': if( parseInt("from", optarg, INT64_MIN, INT64_MAX, &from) ) return 2; hasFrom = 1; break;
      case 't': if( parseInt("to", optarg, INT64_MIN, INT64_MAX, &to) ) return 2; hasTo = 1; break;
      case 'b': if( parseInt("buckets", optarg, 1, INT64_MAX, &buckets) ) return 2; break;
      case 'T': if( parseInt("thread", optarg, 0, UINT32_MAX, &thread) ) return 2; break;
      default:
        fputs(usage, c=='h' ? stdout : stderr);
        cli_globals_help(c=='h' ? stdout : stderr);
        return c=='h' ? 0 : 2;
    }
  }
  if( optind!=argc-1 ){
    cli_error("timeline", "expected one RUN_ID (see fnt timeline --help)");
    return 2;
  }
  run = argv[optind];
  st = cli_open(cli_warehouse(0), 0);
  if( st==0 ) return 1;
  rc = fnt_snapshot_current(st, &snap);
  if( rc==FNT_OK && (!hasFrom || !hasTo) ){
    int64_t first, last;
    rc = fnt_timeline_span(snap, run, &first, &last);
    if( !hasFrom ) from = first;
    if( !hasTo ) to = last<INT64_MAX ? last+1 : last;
  }
  if( rc==FNT_OK ) rc = fnt_timeline_compute(snap, run, from, to, buckets, thread, &t);
  fnt_snapshot_release(snap);
  if( rc ){
    cli_error("timeline", "%s", fnt_errmsg(st)[0] ? fnt_errmsg(st) : fnt_strerror(rc));
    fnt_close(st);
    return 1;
  }
  n = fnt_timeline_count(t);
  if( !cli_g.json && !cli_g.quiet ){
    printf("run %s, [%" PRId64 ", %" PRId64 ") in %" PRId64 " buckets: %zu rows\n",
           run, from, to, buckets, n);
  }
  if( !cli_g.json && n ) printf("%10s %5s %6s %14s %12s %8s  %s\n", "thread", "depth",
                                "bucket", "start_ns", "dur_ns", "calls", "symbol");
  for(i=0; i<n; i++){
    const fnt_timeline_row *r = &fnt_timeline_rows(t)[i];
    if( cli_g.json ){
      cli_json_begin();
      cli_json_int("thread", r->thread);
      cli_json_int("depth", r->depth);
      cli_json_int("bucket", r->bucket);
      cli_json_int("call_id", r->call_id);
      cli_json_int("start_ns", r->start_ns);
      cli_json_int("dur_ns", r->dur_ns);
      cli_json_str("key", r->key);
      cli_json_str("symbol", r->symbol);
      cli_json_int("calls", r->calls);
      cli_json_end();
    }else{
      printf("%10" PRId64 " %5" PRId64 " %6" PRId64 " %14" PRId64 " %12" PRId64
             " %8" PRId64 "  %s\n", r->thread, r->depth, r->bucket, r->start_ns,
             r->dur_ns, r->calls, r->symbol);
    }
  }
  fnt_timeline_free(t);
  fnt_close(st);
  return 0;
}
