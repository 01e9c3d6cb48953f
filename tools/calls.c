/*
** calls.c -- the calls of a run (SPEC §7) on the command line:
** `fnt account` (per function: count, percentiles, sum, inclusive, self),
** `fnt calls` (the calls themselves, in time order or the slowest first) and
** `fnt stack` (what is on the stacks at an instant).  All three go through
** the store's C API (fnt_account_compute, fnt_calls_open); --json prints
** the same rows as one JSON array for scripts, times in integer ns.
*/
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "fnt.h"

enum { OPT_JSON = 1000, OPT_AT, OPT_SORT, OPT_SLOWEST, OPT_KEY, OPT_THREAD, OPT_LIMIT };

static const struct option callOpts[] = {
  {"warehouse", required_argument, 0, 'w'},
  {"top",       required_argument, 0, 'n'},
  {"sort",      required_argument, 0, OPT_SORT},
  {"slowest",   required_argument, 0, OPT_SLOWEST},
  {"key",       required_argument, 0, OPT_KEY},
  {"thread",    required_argument, 0, OPT_THREAD},
  {"limit",     required_argument, 0, OPT_LIMIT},
  {"at",        required_argument, 0, OPT_AT},
  {"json",      no_argument,       0, OPT_JSON},
  {"help",      no_argument,       0, 'h'},
  {0, 0, 0, 0}
};

/* The options the three commands share, parsed by one loop. */
typedef struct call_opts {
  const char *wh, *run, *key, *sort;
  int64_t top, slowest, thread, limit, at;
  int json, has_at;
} call_opts;

/* A non-negative integer option; -1 (and a message) when `s` is not one. */
static int64_t parseCount(const char *cmd, const char *opt, const char *s, int64_t min){
  char *end;
  long long v;
  errno = 0;
  v = strtoll(s, &end, 10);
  if( s[0]==0 || *end || errno || v<min ){
    cli_error(cmd, "--%s: expected a%s integer, not '%s'", opt,
              min>0 ? " positive" : " non-negative", s);
    return -1;
  }
  return v;
}

/* Whether `name` is one of the space-separated words of `allowed`. */
static int isAllowed(const char *allowed, const char *name){
  size_t n = strlen(name);
  const char *p;
  for(p = strstr(allowed, name); p; p = strstr(p+1, name)){
    if( (p==allowed || p[-1]==' ') && (p[n]==0 || p[n]==' ') ) return 1;
  }
  return 0;
}

/* Parses argv into `o`; returns -1 to go on, else the exit status (help
** printed: 0, usage error: 2). */
static int parseOpts(const char *cmd, int argc, char **argv, const char *usage,
                     const char *allowed, call_opts *o){
  int c;
  optind = 1;
  while( (c = getopt_long(argc, argv, "w:n:h", callOpts, 0))!=-1 ){
    const char *name = 0;
    int i;
    for(i=0; callOpts[i].name; i++) if( callOpts[i].val==c ) name = callOpts[i].name;
    if( c=='h' || c=='?' || name==0 ){
      fputs(usage, c=='h' ? stdout : stderr);
      cli_globals_help(c=='h' ? stdout : stderr);
      return c=='h' ? 0 : 2;
    }
    if( c!='w' && !isAllowed(allowed, name) ){
      cli_error(cmd, "--%s is not an option of fnt %s (see fnt %s --help)", name, cmd, cmd);
      return 2;
    }
    switch( c ){
      case 'w': o->wh = optarg; break;
      case 'n': if( (o->top = parseCount(cmd, name, optarg, 1))<0 ) return 2; break;
      case OPT_SLOWEST: if( (o->slowest = parseCount(cmd, name, optarg, 1))<0 ) return 2; break;
      case OPT_LIMIT: if( (o->limit = parseCount(cmd, name, optarg, 0))<0 ) return 2; break;
      case OPT_THREAD:
        if( (o->thread = parseCount(cmd, name, optarg, 0))<0 ) return 2;
        if( o->thread>UINT32_MAX ){ cli_error(cmd, "--thread: %s is above 2^32-1", optarg); return 2; }
        break;
      case OPT_AT: if( (o->at = parseCount(cmd, name, optarg, 0))<0 ) return 2; o->has_at = 1; break;
      case OPT_KEY: o->key = optarg; break;
      case OPT_SORT: o->sort = optarg; break;
      case OPT_JSON: o->json = 1; break;
    }
  }
  if( cli_g.json ) o->json = 1;
  if( optind!=argc-1 ){
    cli_error(cmd, "expected one RUN_ID (see fnt %s --help)", cmd);
    return 2;
  }
  o->run = argv[optind];
  return -1;
}

/* Text as a JSON string (NULL as null). */
static void jsonStr(FILE *out, const char *s){
  if( s==0 ){ fputs("null", out); return; }
  fputc('"', out);
  for(; *s; s++){
    unsigned char ch = (unsigned char)*s;
    if( ch=='"' || ch=='\\' ) fprintf(out, "\\%c", ch);
    else if( ch<0x20 ) fprintf(out, "\\u%04x", ch);
    else fputc(ch, out);
  }
  fputc('"', out);
}

static void reportError(const char *cmd, fnt_store *st, int rc){
  cli_error(cmd, "%s", fnt_errmsg(st)[0] ? fnt_errmsg(st) : fnt_strerror(rc));
}

/* ------------------------------------------------------------ fnt account */

static int sortBy;                 /* 0 sum, 1 p99, 2 calls: qsort has no context */

static int cmpAccount(const void *a, const void *b){
  const fnt_account_row *x = a, *y = b;
  int64_t u = sortBy==1 ? x->p99_ns : sortBy==2 ? x->calls : x->sum_ns;
  int64_t v = sortBy==1 ? y->p99_ns : sortBy==2 ? y->calls : y->sum_ns;
  if( u!=v ) return u>v ? -1 : 1;
  return strcmp(x->key, y->key);
}

static const char accountUsage[] =
  "usage: fnt account [--warehouse DIR] [--top N] [--sort sum|p99|calls] [--json] RUN_ID\n"
  "\n"
  "Per function of a run, over its calls' durations (SPEC fnt_account):\n"
  "calls, min, median (p50), p90, p99, max and sum (every call, recursive\n"
  "ones too, as llvm-xray account adds them), inclusive (recursion counted\n"
  "once) and self time.  Times in microseconds; --json: one array of\n"
  "objects, times in ns.  Percentile p of n sorted durations is the one at\n"
  "index floor(p*n).\n"
  "\n"
  "  --top N        the first N functions (default 20)\n"
  "  --sort KEY     sum (default), p99 or calls, largest first\n"
  "\n"
  "example:\n  fnt account demo --top 10 --sort p99\n";

int cmd_account(int argc, char **argv){
  call_opts o = {0};
  fnt_store *st;
  fnt_snapshot *snap;
  fnt_account *a = 0;
  fnt_account_row *rows;
  size_t i, n;
  int rc;
  o.top = 20;
  rc = parseOpts("account", argc, argv, accountUsage, "top sort json", &o);
  if( rc>=0 ) return rc;
  if( o.sort==0 || strcmp(o.sort, "sum")==0 ) sortBy = 0;
  else if( strcmp(o.sort, "p99")==0 ) sortBy = 1;
  else if( strcmp(o.sort, "calls")==0 ) sortBy = 2;
  else{ cli_error("account", "--sort: expected sum, p99 or calls, not '%s'", o.sort); return 2; }
  st = cli_open(cli_warehouse(o.wh), 0);
  if( st==0 ) return 1;
  rc = fnt_snapshot_current(st, &snap);
  if( rc==FNT_OK ){
    rc = fnt_account_compute(snap, o.run, &a);
    fnt_snapshot_release(snap);
  }
  if( rc ){ reportError("account", st, rc); fnt_close(st); return 1; }
  n = fnt_account_count(a);
  if( n==0 ){
    cli_error("account", "no calls in run '%s' of %s (see fnt ls)", o.run, fnt_path(st));
    fnt_account_free(a); fnt_close(st);
    return 1;
  }
  rows = malloc(n*sizeof(*rows));
  if( rows==0 ){ cli_error("account", "out of memory"); fnt_account_free(a); fnt_close(st); return 1; }
  memcpy(rows, fnt_account_rows(a), n*sizeof(*rows));
  qsort(rows, n, sizeof(*rows), cmpAccount);
  if( (int64_t)n>o.top ) n = (size_t)o.top;
  if( o.json ){
    printf("[");
    for(i=0; i<n; i++){
      const fnt_account_row *r = &rows[i];
      printf("%s\n {\"key\": ", i ? "," : "");
      jsonStr(stdout, r->key);
      printf(", \"symbol\": ");
      jsonStr(stdout, r->symbol);
      printf(", \"calls\": %" PRId64 ", \"min_ns\": %" PRId64 ", \"p50_ns\": %" PRId64
             ", \"p90_ns\": %" PRId64 ", \"p99_ns\": %" PRId64 ", \"max_ns\": %" PRId64
             ", \"sum_ns\": %" PRId64 ", \"inclusive_ns\": %" PRId64 ", \"self_ns\": %" PRId64 "}",
             r->calls, r->min_ns, r->p50_ns, r->p90_ns, r->p99_ns, r->max_ns, r->sum_ns,
             r->inclusive_ns, r->self_ns);
    }
    printf("\n]\n");
  }else{
    printf("%10s %12s %12s %12s %12s %12s %14s %14s %14s  %s\n", "calls", "min_us",
           "p50_us", "p90_us", "p99_us", "max_us", "sum_us", "inclusive_us", "self_us",
           "function");
    for(i=0; i<n; i++){
      const fnt_account_row *r = &rows[i];
      printf("%10" PRId64 " %12.3f %12.3f %12.3f %12.3f %12.3f %14.3f %14.3f %14.3f  %s\n",
             r->calls, r->min_ns/1e3, r->p50_ns/1e3, r->p90_ns/1e3, r->p99_ns/1e3,
             r->max_ns/1e3, r->sum_ns/1e3, r->inclusive_ns/1e3, r->self_ns/1e3, r->symbol);
    }
    if( fnt_account_count(a)>n ) printf("(%zu more functions: --top N)\n", fnt_account_count(a)-n);
  }
  free(rows);
  fnt_account_free(a);
  fnt_close(st);
  return 0;
}

/* ---------------------------------------------------- fnt calls, fnt stack */

/* A call copied out of the scan (its strings are the scan's until the next
** row). */
typedef struct call_copy {
  fnt_call c;
  char *key, *symbol;
} call_copy;

static int copyCall(call_copy *d, const fnt_call *c){
  d->c = *c;
  d->key = strdup(c->key);
  d->symbol = strdup(c->symbol);
  d->c.repo = d->c.commit = d->c.run_id = d->c.stable_id = 0;
  d->c.key = d->key;
  d->c.symbol = d->symbol;
  return d->key && d->symbol ? 0 : -1;
}

static void freeCall(call_copy *d){ free(d->key); free(d->symbol); }

static void printCallHeader(void){
  printf("%10s %12s %5s %16s %14s %14s %-9s  %s\n", "thread", "call_id", "depth",
         "start_ns", "dur_ns", "self_ns", "ended_by", "function");
}

/* One call as a table line (indented by depth) or a JSON object. */
static void printCall(const fnt_call *c, int json, int first){
  if( json ){
    printf("%s\n {\"thread\": %u, \"call_id\": %" PRId64 ", \"parent_id\": ", first ? "" : ",",
           c->thread, c->call_id);
    if( c->parent_id<0 ) printf("null"); else printf("%" PRId64, c->parent_id);
    printf(", \"depth\": %" PRId64 ", \"start_ns\": %" PRId64 ", \"end_ns\": %" PRId64
           ", \"dur_ns\": %" PRId64 ", \"self_ns\": %" PRId64 ", \"key\": ",
           c->depth, c->start_ns, c->end_ns, c->dur_ns, c->self_ns);
    jsonStr(stdout, c->key);
    printf(", \"symbol\": ");
    jsonStr(stdout, c->symbol);
    printf(", \"ended_by\": \"%s\", \"outermost\": %d}", fnt_ended_by_name(c->ended_by),
           c->outermost);
    return;
  }
  printf("%10u %12" PRId64 " %5" PRId64 " %16" PRId64 " %14" PRId64 " %14" PRId64 " %-9s  %*s%s\n",
         c->thread, c->call_id, c->depth, c->start_ns, c->dur_ns, c->self_ns,
         fnt_ended_by_name(c->ended_by), (int)(c->depth>40 ? 40 : c->depth)*2, "", c->symbol);
}

/* The slowest first: dur_ns descending, then call_id. */
static int cmpSlowest(const void *a, const void *b){
  const call_copy *x = a, *y = b;
  if( x->c.dur_ns!=y->c.dur_ns ) return x->c.dur_ns>y->c.dur_ns ? -1 : 1;
  return x->c.call_id<y->c.call_id ? -1 : x->c.call_id>y->c.call_id;
}

/* Stacks: by thread, then depth, then start. */
static int cmpStack(const void *a, const void *b){
  const call_copy *x = a, *y = b;
  if( x->c.thread!=y->c.thread ) return x->c.thread<y->c.thread ? -1 : 1;
  if( x->c.depth!=y->c.depth ) return x->c.depth<y->c.depth ? -1 : 1;
  if( x->c.start_ns!=y->c.start_ns ) return x->c.start_ns<y->c.start_ns ? -1 : 1;
  return x->c.call_id<y->c.call_id ? -1 : x->c.call_id>y->c.call_id;
}

/* Runs the scan `p` of o->run.  keep > 0: collects the `keep` slowest calls
** (a bounded array, the shortest replaced); keep == 0: collects every
** call; keep < 0: prints each call as it comes, stopping after o->limit
** (0: none).  Collected calls are left in *out (n in *nOut) for the
** caller to sort and print.  Returns 0, or 1 after printing the error. */
static int scanCalls(const char *cmd, fnt_store *st, fnt_call_predicate *p,
                     const call_opts *o, int64_t keep, call_copy **out, size_t *nOut,
                     int64_t *total){
  const char *runs[1];
  fnt_snapshot *snap;
  fnt_calls *sc = 0;
  const fnt_call *c;
  call_copy *v = 0;
  size_t n = 0, cap = 0, shortest = 0;
  int rc;
  runs[0] = o->run;
  p->run_ids = runs;
  p->n_run_ids = 1;
  *total = 0;
  rc = fnt_snapshot_current(st, &snap);
  if( rc==FNT_OK ){
    rc = fnt_calls_open(snap, p, &sc);
    while( rc==FNT_OK && (rc = fnt_calls_next(sc, &c))==1 ){
      rc = FNT_OK;
      ++*total;
      if( keep<0 ){
        printCall(c, o->json, *total==1);
        continue;
      }
      if( keep>0 && n==(size_t)keep ){
        /* full: replace the shortest kept call when this one is slower */
        call_copy tmp;
        if( cmpSlowest(&(call_copy){*c, 0, 0}, &v[shortest])>=0 ) continue;
        if( copyCall(&tmp, c) ){ freeCall(&tmp); rc = FNT_E_NOMEM; break; }
        freeCall(&v[shortest]);
        v[shortest] = tmp;
      }else{
        if( n==cap ){
          call_copy *nv;
          cap = cap ? cap*2 : 256;
          nv = realloc(v, cap*sizeof(*v));
          if( nv==0 ){ rc = FNT_E_NOMEM; break; }
          v = nv;
        }
        if( copyCall(&v[n++], c) ){ rc = FNT_E_NOMEM; break; }
      }
      if( keep>0 && n==(size_t)keep ){
        size_t i;
        for(shortest=0, i=1; i<n; i++){
          if( cmpSlowest(&v[i], &v[shortest])>0 ) shortest = i;
        }
      }
    }
    fnt_calls_close(sc);
    fnt_snapshot_release(snap);
  }
  *out = v;
  *nOut = n;
  if( rc<0 ){
    reportError(cmd, st, rc);
    return 1;
  }
  return 0;
}

static void freeCalls(call_copy *v, size_t n){
  size_t i;
  for(i=0; i<n; i++) freeCall(&v[i]);
  free(v);
}

/* What fnt calls and fnt stack do first: parse the options (thread -1 when
** not given), open the warehouse, start a predicate.  NULL with *status set
** (0 help shown, 2 usage error, 1 no warehouse) when there is nothing more
** to do. */
static fnt_store *startCalls(const char *cmd, int argc, char **argv, const char *usage,
                             const char *allowed, call_opts *o, fnt_call_predicate *p,
                             int *status){
  fnt_store *st;
  o->thread = -1;
  *status = parseOpts(cmd, argc, argv, usage, allowed, o);
  if( *status>=0 ) return 0;
  if( isAllowed(allowed, "at") && !o->has_at ){
    cli_error(cmd, "--at NS is required (see fnt %s --help)", cmd);
    *status = 2;
    return 0;
  }
  st = cli_open(cli_warehouse(o->wh), 0);
  *status = 1;
  fnt_call_predicate_init(p);
  p->thread = o->thread;
  return st;
}

static const char callsUsage[] =
  "usage: fnt calls [--warehouse DIR] [--slowest N | --limit N] [--key K]\n"
  "                 [--thread T] [--json] RUN_ID\n"
  "\n"
  "The calls of a run (SPEC fn_trace_calls: one row per frame of the\n"
  "replay), in start order, each indented by its depth; or with --slowest N\n"
  "the N longest, longest first.  ended_by: exit, tail_exit, unwound (popped\n"
  "by an exit of a frame below) or open (still open at the thread's end).\n"
  "\n"
  "  --slowest N    the N calls of greatest dur_ns\n"
  "  --limit N      at most N calls in start order (default 100; 0: all)\n"
  "  --key K        only the function of key K (its stable_id, or ?symbol)\n"
  "  --thread T     only thread T\n"
  "\n"
  "examples:\n"
  "  fnt calls demo --slowest 10 --key '?fib'\n"
  "  fnt calls demo --thread 4242 --limit 50\n";

int cmd_calls(int argc, char **argv){
  call_opts o = {0};
  fnt_call_predicate p;
  fnt_store *st;
  call_copy *v = 0;
  size_t i, n = 0;
  int64_t total;
  int rc;
  o.limit = 100;
  st = startCalls("calls", argc, argv, callsUsage, "slowest limit key thread json", &o, &p, &rc);
  if( st==0 ) return rc;
  p.key = o.key;
  if( o.slowest==0 ){
    p.ordered = 1;
    if( o.limit>0 ) p.limit = o.limit + 1;   /* one more: to say there are more */
  }
  if( !o.json && o.slowest==0 ) printCallHeader();
  if( o.json ) printf("[");
  if( o.slowest==0 && o.limit>0 ){
    /* collect limit+1, print limit */
    rc = scanCalls("calls", st, &p, &o, 0, &v, &n, &total);
    for(i=0; rc==0 && i<n && (int64_t)i<o.limit; i++) printCall(&v[i].c, o.json, i==0);
  }else if( o.slowest==0 ){
    rc = scanCalls("calls", st, &p, &o, -1, &v, &n, &total);
  }else{
    rc = scanCalls("calls", st, &p, &o, o.slowest, &v, &n, &total);
    if( n ) qsort(v, n, sizeof(*v), cmpSlowest);
    if( rc==0 && !o.json ) printCallHeader();
    for(i=0; rc==0 && i<n; i++) printCall(&v[i].c, o.json, i==0);
  }
  if( o.json ) printf("\n]\n");
  else if( rc==0 && total==0 ) printf("(no calls: see fnt ls for the runs, fnt account %s for the keys)\n", o.run);
  else if( rc==0 && o.slowest==0 && o.limit>0 && total>o.limit ) printf("(more calls: --limit N, 0 for all)\n");
  freeCalls(v, n);
  fnt_close(st);
  return rc;
}

static const char stackUsage[] =
  "usage: fnt stack [--warehouse DIR] --at NS [--thread T] [--json] RUN_ID\n"
  "\n"
  "What is on each thread's stack at time NS (ns from the run's start):\n"
  "the calls with start_ns <= NS <= end_ns, per thread from depth 0 up.\n"
  "A call that ends at NS and one that starts at NS are both shown.\n"
  "\n"
  "  --at NS        the instant (required)\n"
  "  --thread T     only thread T\n"
  "\n"
  "example:\n  fnt stack demo --at 5000000\n";

int cmd_stack(int argc, char **argv){
  call_opts o = {0};
  fnt_call_predicate p;
  fnt_store *st;
  call_copy *v = 0;
  size_t i, n = 0;
  int64_t total;
  int rc;
  st = startCalls("stack", argc, argv, stackUsage, "at thread json", &o, &p, &rc);
  if( st==0 ) return rc;
  p.t0 = p.t1 = o.at;
  rc = scanCalls("stack", st, &p, &o, 0, &v, &n, &total);
  if( rc==0 ){
    if( n ) qsort(v, n, sizeof(*v), cmpStack);
    if( o.json ) printf("[");
    for(i=0; i<n; i++){
      if( !o.json && (i==0 || v[i].c.thread!=v[i-1].c.thread) ){
        printf("%sthread %u\n", i ? "\n" : "", v[i].c.thread);
        printCallHeader();
      }
      printCall(&v[i].c, o.json, i==0);
    }
    if( o.json ) printf("\n]\n");
    else if( n==0 ) printf("(no call open at %" PRId64 " ns in run '%s')\n", o.at, o.run);
  }
  freeCalls(v, n);
  fnt_close(st);
  return rc;
}
