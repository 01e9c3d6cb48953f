/*
** read.c -- reading a warehouse back: `fnt ls`, `fnt heat`, `fnt sql`.
** ls and heat go straight through the store's C API; sql starts the sqlite3
** shell with the extension loaded and the warehouse open.
*/
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "fnt.h"

static const struct option commonOpts[] = {
  {"top",       required_argument, 0, 'n'},
  {"help",      no_argument,       0, 'h'},
  {0, 0, 0, 0}
};

static void formatTime(int64_t micros, char *out, size_t n){
  time_t s = (time_t)(micros / 1000000);
  struct tm tm;
  gmtime_r(&s, &tm);
  strftime(out, n, "%Y-%m-%d %H:%M:%S", &tm);
}

typedef struct run_line {
  char *run_id, *repo, *source, *target;
  int64_t ts, events, chunks, filed, total_events, duration_ns;
  int is_profile;
} run_line;

/* The runs found so far, and an index of them by (run_id, kind): an open-
** addressing hash table of positions + 1 (0: empty), so that listing is
** linear in the rows read. */
typedef struct run_list {
  run_line *v;
  size_t n, cap;
  size_t *slot, nslot;
} run_list;

static uint64_t runHash(const char *runId, int isProfile){
  uint64_t h = 0xcbf29ce484222325ULL ^ (uint64_t)isProfile;
  for(; *runId; runId++){ h ^= (unsigned char)*runId; h *= 0x100000001b3ULL; }
  return h ^ (h >> 29);
}

static void oom(void){ fprintf(stderr, "fnt: out of memory\n"); exit(1); }

static void slotPut(run_list *l, size_t i){
  size_t k = (size_t)runHash(l->v[i].run_id, l->v[i].is_profile) & (l->nslot-1);
  while( l->slot[k] ) k = (k+1) & (l->nslot-1);
  l->slot[k] = i+1;
}

static run_line *findOrAdd(run_list *l, const char *runId, int isProfile){
  size_t k, i;
  if( l->nslot ){
    for(k = (size_t)runHash(runId, isProfile) & (l->nslot-1); l->slot[k];
        k = (k+1) & (l->nslot-1)){
      run_line *r = &l->v[l->slot[k]-1];
      if( r->is_profile==isProfile && strcmp(r->run_id, runId)==0 ) return r;
    }
  }
  if( l->n==l->cap ){
    l->cap = l->cap ? l->cap*2 : 64;
    l->v = realloc(l->v, l->cap*sizeof(run_line));
    if( l->v==0 ) oom();
  }
  memset(&l->v[l->n], 0, sizeof(run_line));
  l->v[l->n].run_id = strdup(runId);
  if( l->v[l->n].run_id==0 ) oom();
  l->v[l->n].is_profile = isProfile;
  l->v[l->n].ts = INT64_MAX;
  l->n++;
  if( 2*l->n > l->nslot ){               /* at most half full: rebuild */
    free(l->slot);
    l->nslot = l->nslot ? 2*l->nslot : 256;
    l->slot = calloc(l->nslot, sizeof(size_t));
    if( l->slot==0 ) oom();
    for(i=0; i<l->n; i++) slotPut(l, i);
  }else{
    slotPut(l, l->n-1);
  }
  return &l->v[l->n-1];
}

static int cmpNewest(const void *a, const void *b){
  const run_line *x = a, *y = b;
  if( x->ts!=y->ts ) return x->ts>y->ts ? -1 : 1;
  return strcmp(x->run_id, y->run_id);
}

static char *dupOr(const char *s){ return strdup(s ? s : ""); }

/* Folds one table of the snapshot into `l`. */
static int collect(fnt_store *st, fnt_snapshot *snap, fnt_table t, run_list *l){
  fnt_predicate p;
  fnt_scan *sc;
  int rc, isProfile = t==FNT_TABLE_PROFILE;
  fnt_predicate_init(&p);
  rc = fnt_scan_open(snap, t, &p, &sc);
  if( rc ) return rc;
  while( (rc = fnt_scan_next(sc))==1 ){
    run_line *r = findOrAdd(l, fnt_scan_text(sc, 0, 0), isProfile);
    int64_t ts = fnt_scan_int(sc, 1);            /* ts_micros is column 1 of both */
    if( r->repo==0 ){
      r->repo = dupOr(fnt_scan_text(sc, 2, 0));
      r->target = dupOr(fnt_scan_text(sc, 4, 0));
      r->source = isProfile ? strdup("perf") : dupOr(fnt_scan_text(sc, FNT_RUN_SOURCE, 0));
    }
    if( ts<r->ts ) r->ts = ts;
    if( isProfile ){
      r->events++;                                /* rows = functions */
      r->total_events = fnt_scan_int(sc, FNT_PROF_SAMPLES);
      r->duration_ns = fnt_scan_int(sc, FNT_PROF_PROFILE_NS);
    }else{
      r->events += fnt_scan_int(sc, FNT_RUN_EVENTS);
      r->filed++;
      r->chunks = fnt_scan_int(sc, FNT_RUN_CHUNKS);
      r->total_events = fnt_scan_int(sc, FNT_RUN_TOTAL_EVENTS);
      r->duration_ns = fnt_scan_int(sc, FNT_RUN_DURATION_NS);
    }
  }
  fnt_scan_close(sc);
  (void)st;
  return rc;
}

/* s as a CSV field (RFC 4180: quoted when it holds a comma, quote or line
** break). */
static void csvField(const char *s, int last){
  if( strpbrk(s, ",\"\r\n") ){
    putchar('"');
    for(; *s; s++){ if( *s=='"' ) putchar('"'); putchar(*s); }
    putchar('"');
  }else{
    fputs(s, stdout);
  }
  putchar(last ? '\n' : ',');
}

int cmd_ls(int argc, char **argv){
  static const struct option lsOpts[] = {
    {"limit", required_argument, 0, 'n'},
    {"csv",   no_argument,       0, 'c'},
    {"help",  no_argument,       0, 'h'},
    {0, 0, 0, 0}
  };
  fnt_store *st;
  fnt_snapshot *snap;
  run_list l = {0};
  size_t i, limit = SIZE_MAX;
  int c, rc, csv = 0;
  optind = 1;
  while( (c = getopt_long(argc, argv, "ch", lsOpts, 0))!=-1 ){
    FILE *out = c=='h' ? stdout : stderr;
    if( c=='n' ){
      char *end;
      long long v = strtoll(optarg, &end, 10);
      if( *end || v<0 ){
        cli_error("ls", "--limit: expected a number of runs, not '%s'", optarg);
        return 2;
      }
      limit = (size_t)v;
      continue;
    }
    if( c=='c' ){ csv = 1; continue; }
    fprintf(out, "usage: fnt ls [-w DIR] [--json] [-q] [--limit N] [--csv]\n\n"
           "Lists the runs (traces) and profiles of a warehouse, newest first.\n"
           "--json: one object a line (kind, ts_micros, filed_utc, run_id, repo,\n"
           "source, target, events, chunks_filed, chunks, duration_ns); --csv:\n"
           "the same columns as CSV with a header line; -q: no header line.\n\n"
           "options:\n"
           "      --limit N  the N newest only\n"
           "  -c, --csv      CSV\n"
           "  -h, --help     this text\n");
    cli_globals_help(out);
    fprintf(out, "\nexample:\n  fnt ls --warehouse ./fnt-warehouse --limit 20\n");
    return c=='h' ? 0 : 2;
  }
  if( optind<argc ){ cli_error("ls", "unexpected argument '%s'", argv[optind]); return 2; }
  st = cli_open(cli_warehouse(0), 0);
  if( st==0 ) return 1;
  rc = fnt_snapshot_current(st, &snap);
  if( rc==FNT_OK ){
    rc = collect(st, snap, FNT_TABLE_RUNS, &l);
    if( rc==FNT_OK ) rc = collect(st, snap, FNT_TABLE_PROFILE, &l);
    fnt_snapshot_release(snap);
  }
  if( rc ){
    cli_error("ls", "%s", fnt_errmsg(st)[0] ? fnt_errmsg(st) : fnt_strerror(rc));
    fnt_close(st);
    return 1;
  }
  qsort(l.v, l.n, sizeof(run_line), cmpNewest);
  if( csv && !cli_g.json && !cli_g.quiet ){
    printf("kind,ts_micros,filed_utc,run_id,repo,source,target,events,"
           "chunks_filed,chunks,duration_ns\n");
  }else if( !cli_g.json && !cli_g.quiet ){
    printf("%-7s %-19s %-28s %-16s %-10s %12s %7s %12s\n", "kind", "filed (UTC)",
           "run_id", "repo", "source", "events/rows", "chunks", "duration_ms");
  }
  for(i=0; i<l.n; i++){
    run_line *r = &l.v[i];
    char when[32], chunks[32];
    if( i>=limit ) goto next;
    formatTime(r->ts, when, sizeof(when));
    if( csv && !cli_g.json ){
      char num[6][24];
      snprintf(num[0], sizeof(num[0]), "%lld", (long long)r->ts);
      snprintf(num[1], sizeof(num[1]), "%lld", (long long)r->events);
      snprintf(num[2], sizeof(num[2]), "%lld", (long long)r->filed);
      snprintf(num[3], sizeof(num[3]), "%lld", (long long)r->chunks);
      snprintf(num[4], sizeof(num[4]), "%lld", (long long)r->duration_ns);
      csvField(r->is_profile ? "profile" : "trace", 0);
      csvField(num[0], 0);
      csvField(when, 0);
      csvField(r->run_id, 0);
      csvField(r->repo, 0);
      csvField(r->source, 0);
      csvField(r->target, 0);
      csvField(num[1], 0);
      csvField(r->is_profile ? "" : num[2], 0);
      csvField(r->is_profile ? "" : num[3], 0);
      csvField(num[4], 1);
    }else if( cli_g.json ){
      cli_json_begin();
      cli_json_str("kind", r->is_profile ? "profile" : "trace");
      cli_json_int("ts_micros", r->ts);
      cli_json_str("filed_utc", when);
      cli_json_str("run_id", r->run_id);
      cli_json_str("repo", r->repo);
      cli_json_str("source", r->source);
      cli_json_str("target", r->target);
      cli_json_int("events", r->events);
      if( !r->is_profile ){
        cli_json_int("chunks_filed", r->filed);
        cli_json_int("chunks", r->chunks);
      }
      cli_json_int("duration_ns", r->duration_ns);
      cli_json_end();
    }else{
      if( r->is_profile ) snprintf(chunks, sizeof(chunks), "-");
      else snprintf(chunks, sizeof(chunks), "%lld/%lld", (long long)r->filed, (long long)r->chunks);
      printf("%-7s %-19s %-28s %-16s %-10s %12lld %7s %12.3f\n",
             r->is_profile ? "profile" : "trace", when, r->run_id, r->repo,
             r->source, (long long)r->events, chunks, (double)r->duration_ns/1e6);
    }
  next:
    free(r->run_id); free(r->repo); free(r->source); free(r->target);
  }
  free(l.slot);
  if( l.n==0 && !cli_g.json && !cli_g.quiet ){
    printf("(no runs yet: file one with fnt import-xray or fnt import-perf)\n");
  }
  free(l.v);
  fnt_close(st);
  return 0;
}

static int cmpHeat(const void *a, const void *b){
  const fnt_heat_row *x = a, *y = b;
  if( x->inclusive_ns!=y->inclusive_ns ) return x->inclusive_ns>y->inclusive_ns ? -1 : 1;
  return strcmp(x->key, y->key);
}

int cmd_heat(int argc, char **argv){
  const char *run;
  long top = 20;
  fnt_store *st;
  fnt_snapshot *snap;
  fnt_heat *h = 0;
  fnt_heat_row *rows;
  size_t i, n;
  int c, rc;
  optind = 1;
  while( (c = getopt_long(argc, argv, "n:h", commonOpts, 0))!=-1 ){
    FILE *out = c=='h' ? stdout : stderr;
    if( c=='n' ){
      char *end;
      top = strtol(optarg, &end, 10);
      if( *end || top<=0 ){ cli_error("heat", "--top: expected a positive number, not '%s'", optarg); return 2; }
      continue;
    }
    fprintf(out, "usage: fnt heat [-w DIR] [--json] [-q] [--top N] RUN_ID\n\n"
           "The hottest functions of a run, by inclusive time (SPEC heat:\n"
           "recursion counted once, self time excludes callees).  --json: one\n"
           "object a line (function, inclusive_ns, self_ns, calls); -q: no header\n"
           "or trailing note.\n\n"
           "options:\n"
           "  -n, --top N  the N hottest (default 20)\n"
           "  -h, --help   this text\n");
    cli_globals_help(out);
    fprintf(out, "\nexample:\n  fnt heat --top 10 demo-run\n");
    return c=='h' ? 0 : 2;
  }
  if( optind!=argc-1 ){ cli_error("heat", "expected one RUN_ID (see fnt heat --help)"); return 2; }
  run = argv[optind];
  st = cli_open(cli_warehouse(0), 0);
  if( st==0 ) return 1;
  rc = fnt_snapshot_current(st, &snap);
  if( rc==FNT_OK ){
    rc = fnt_heat_compute(snap, run, &h);
    fnt_snapshot_release(snap);
  }
  if( rc ){
    cli_error("heat", "%s", fnt_errmsg(st)[0] ? fnt_errmsg(st) : fnt_strerror(rc));
    fnt_close(st);
    return 1;
  }
  n = fnt_heat_count(h);
  if( n==0 ){
    cli_error("heat", "no run '%s' in %s (see fnt ls)", run, fnt_path(st));
    fnt_heat_free(h);
    fnt_close(st);
    return 1;
  }
  rows = malloc(n*sizeof(*rows));
  if( rows==0 ){ cli_error("heat", "out of memory"); fnt_heat_free(h); fnt_close(st); return 1; }
  memcpy(rows, fnt_heat_rows(h), n*sizeof(*rows));
  qsort(rows, n, sizeof(*rows), cmpHeat);
  if( !cli_g.json && !cli_g.quiet ){
    printf("%14s %14s %10s  %s\n", "inclusive_ms", "self_ms", "calls", "function");
  }
  for(i=0; i<n && i<(size_t)top; i++){
    if( cli_g.json ){
      cli_json_begin();
      cli_json_str("function", rows[i].key);
      cli_json_int("inclusive_ns", rows[i].inclusive_ns);
      cli_json_int("self_ns", rows[i].self_ns);
      cli_json_int("calls", rows[i].calls);
      cli_json_end();
    }else{
      printf("%14.3f %14.3f %10lld  %s\n", (double)rows[i].inclusive_ns/1e6,
             (double)rows[i].self_ns/1e6, (long long)rows[i].calls, rows[i].key);
    }
  }
  if( n>(size_t)top && !cli_g.json && !cli_g.quiet ){
    printf("(%zu more functions: --top N)\n", n-(size_t)top);
  }
  free(rows);
  fnt_heat_free(h);
  fnt_close(st);
  return 0;
}

/* The extension beside this executable (build/fnt -> build/fntrace), else
** where `cmake --install` puts it relative to bin/ (FNT_BIN_TO_EXTENSION,
** from CMake: "../lib"), so that an installed fnt finds its own. */
int cli_extension_path(char *out, size_t n){
  char self[PATH_MAX], so[PATH_MAX+32];
  ssize_t len = readlink("/proc/self/exe", self, sizeof(self)-1);
  char *slash;
  if( len<=0 ) return -1;
  self[len] = 0;
  slash = strrchr(self, '/');
  if( slash==0 ) return -1;
  *slash = 0;
  snprintf(so, sizeof(so), "%s/fntrace.so", self);
  if( access(so, R_OK)==0 ){
    snprintf(out, n, "%s/fntrace", self);
  }else{
    snprintf(out, n, "%s/%s/fntrace", self, FNT_BIN_TO_EXTENSION);
  }
  return 0;
}

static void sqlUsage(FILE *out){
  fprintf(out,
    "usage: fnt sql [-w DIR] [--json] [-q] [SQLITE3-OPTIONS] [SQL...]\n"
    "\n"
    "Starts the sqlite3 shell with fntrace loaded and the warehouse open.\n"
    "Every other argument goes to sqlite3 as it is: its options (-json,\n"
    "-csv, -bail, -cmd CMD, ...; see sqlite3 -help) and SQL to run.\n"
    "--json is sqlite3's -json output mode, -q its -batch (no banner, no\n"
    "prompts).  Arguments after -- go to sqlite3 untouched.\n"
    "\n"
    "options:\n"
    "  -h, --help  this text (sqlite3's own: fnt sql -help)\n");
  cli_globals_help(out);
  fprintf(out,
    "\n"
    "examples:\n"
    "  fnt sql\n"
    "  fnt sql 'SELECT * FROM fn_trace_run_summary'\n"
    "  fnt sql -json 'SELECT run_id, events FROM fn_trace_run_summary'\n");
}

int cmd_sql(int argc, char **argv){
  char ext[PATH_MAX+16], load[PATH_MAX+64];
  char **args;
  int i, k = 0;
  /* No option parsing of our own beyond --help: the rest is sqlite3's. */
  if( argc>1 && (strcmp(argv[1], "--help")==0 || strcmp(argv[1], "-h")==0) ){
    sqlUsage(stdout);
    return 0;
  }
  if( cli_extension_path(ext, sizeof(ext)) ){ cli_error("sql", "cannot locate the fntrace extension"); return 1; }
  snprintf(load, sizeof(load), ".load '%s'", ext);
  /* The warehouse as $FNT_WAREHOUSE, not fnt_open(): the extension then
  ** opens it on first use and creates it only for a filing, so a mistyped
  ** -w is an error at the first read rather than a new warehouse. */
  if( setenv("FNT_WAREHOUSE", cli_warehouse(0), 1) ){
    cli_error("sql", "setenv: %s", strerror(errno));
    return 1;
  }
  args = calloc((size_t)argc + 16, sizeof(char*));
  if( args==0 ) return 1;
  args[k++] = "sqlite3";
  args[k++] = "-cmd"; args[k++] = load;
  args[k++] = "-cmd"; args[k++] = ".headers on";
  if( cli_g.json ) args[k++] = "-json";
  if( cli_g.quiet ) args[k++] = "-batch";
  args[k++] = ":memory:";
  for(i=1; i<argc; i++){
    if( strcmp(argv[i], "--")==0 ) continue;   /* ours: sqlite3 knows no "--" */
    args[k++] = argv[i];
  }
  args[k] = 0;
  execvp("sqlite3", args);
  cli_error("sql", "cannot run sqlite3: %s (apt-get install sqlite3)", strerror(errno));
  free(args);
  return 1;
}
