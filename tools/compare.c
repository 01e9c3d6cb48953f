/*
** compare.c -- comparing (SPEC §9).  `fnt compare`: did a commit make
** anything slower?  The runs of two commits of a repo, per function,
** through fnt_compare_compute(), as a table for people (significant
** regressions first, in colour on a terminal) or JSON for scripts, with an
** exit status for CI.  `fnt diff`: two runs side by side, per function,
** through fnt_diff_compute(), the largest slowdowns first.
*/
#include <getopt.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fnt.h"

/* Exit statuses, as --help documents them. */
#define CMP_EXIT_SAME       0
#define CMP_EXIT_ERROR      1
#define CMP_EXIT_USAGE      2
#define CMP_EXIT_REGRESSION 3

typedef struct cmp_opts {
  const char *wh, *repo, *commit_a, *commit_b;
  double alpha, min_ratio;
  long top;                 /* < 0: not given */
  int json;
} cmp_opts;

/* What a row says, given the thresholds. */
typedef enum { V_NONE, V_SLOWER, V_FASTER, V_NEW, V_GONE } verdict;
static const char *const verdictName[] = { "", "slower", "faster", "new", "gone" };

static verdict verdictOf(const fnt_compare_row *r, const cmp_opts *o){
  if( isnan(r->p_value) || r->p_value>o->alpha ) return V_NONE;
  if( isnan(r->ratio) ) return r->median_b>0 ? V_NEW : V_NONE;
  if( r->ratio>=o->min_ratio ) return V_SLOWER;
  if( r->ratio==0.0 ) return V_GONE;
  if( r->ratio<=1.0/o->min_ratio ) return V_FASTER;
  return V_NONE;
}

static void usage(FILE *out){
  fprintf(out,
    "usage: fnt compare [--warehouse DIR] --repo REPO [--alpha P] [--min-ratio R]\n"
    "                   [--top N] [--json] COMMIT_A COMMIT_B\n"
    "\n"
    "Did COMMIT_B make anything slower than COMMIT_A?  Every run of REPO filed\n"
    "under a commit (fnt import-xray --repo REPO --commit C) is one sample of\n"
    "it; per function the value of a run is its inclusive time.  For each\n"
    "function: the median of each side, their ratio (B/A) and a two-sided\n"
    "Mann-Whitney U p-value (SQL: fnt_compare(repo, commit_a, commit_b)).\n"
    "\n"
    "A function is SLOWER when p <= alpha and ratio >= min-ratio, FASTER when\n"
    "p <= alpha and ratio <= 1/min-ratio; NEW (not called under A) and GONE\n"
    "(not called under B) are shown but are not regressions.  Regressions\n"
    "come first, then the other functions by p-value.  A function's time\n"
    "includes its callees', so its callers slow down with it: the culprit is\n"
    "usually the slower function of largest ratio that its callers explain.\n"
    "\n"
    "Runs needed: the p-value needs 2 runs a side at least, and cannot go\n"
    "below 0.012 with 5 runs a side or 0.005 with 6: trace 6 or more runs of\n"
    "each commit for the default alpha, or raise --alpha.\n"
    "\n"
    "options:\n"
    "  --repo REPO       the repo the runs were filed under (required)\n"
    "  --alpha P         significance level (default 0.01)\n"
    "  --min-ratio R     smallest median ratio that counts as slower (default 1.05)\n"
    "  --top N           show at most N functions (default 20; JSON: all)\n"
    "  --json            one JSON object: the thresholds, the runs of each side and\n"
    "                    a row per function (medians in ns; null for SQL NULL)\n"
    "  --warehouse DIR   the warehouse (default $FNT_WAREHOUSE, else ./fnt-warehouse)\n"
    "\n"
    "exit status:\n"
    "  0  no function is slower beyond the thresholds\n"
    "  1  an error (unreadable warehouse, a commit with no runs of REPO)\n"
    "  2  a usage error\n"
    "  3  at least one function is slower beyond the thresholds (a regression)\n"
    "\n"
    "example:\n"
    "  fnt compare --repo acme/widget 9f1c2e0 a41b7d3 --alpha 0.05\n");
  cli_globals_help(out);
}

static const struct option compareOpts[] = {
  {"warehouse", required_argument, 0, 'w'},
  {"repo",      required_argument, 0, 'r'},
  {"alpha",     required_argument, 0, 'a'},
  {"min-ratio", required_argument, 0, 'm'},
  {"top",       required_argument, 0, 'n'},
  {"json",      no_argument,       0, 'j'},
  {"help",      no_argument,       0, 'h'},
  {0, 0, 0, 0}
};

/* A number in [lo, hi] for option `name`; 0, or -1 after saying why. */
static int parseReal(const char *name, const char *s, double lo, double hi,
                     double *out){
  char *end;
  double v = strtod(s, &end);
  if( end==s || *end || !(v>=lo && v<=hi) ){
    cli_error("compare", "--%s: expected a number from %g to %g, not '%s'",
              name, lo, hi, s);
    return -1;
  }
  *out = v;
  return 0;
}

static int parseArgs(int argc, char **argv, cmp_opts *o){
  int c;
  memset(o, 0, sizeof(*o));
  o->alpha = 0.01;
  o->min_ratio = 1.05;
  o->top = -1;
  optind = 1;
  while( (c = getopt_long(argc, argv, "w:r:a:m:n:jh", compareOpts, 0))!=-1 ){
    switch( c ){
      case 'w': o->wh = optarg; break;
      case 'r': o->repo = optarg; break;
      case 'a':
        if( parseReal("alpha", optarg, 0.0, 1.0, &o->alpha) ) return CMP_EXIT_USAGE;
        break;
      case 'm':
        if( parseReal("min-ratio", optarg, 1.0, 1e9, &o->min_ratio) ) return CMP_EXIT_USAGE;
        break;
      case 'n': {
        char *end;
        o->top = strtol(optarg, &end, 10);
        if( end==optarg || *end || o->top<=0 ){
          cli_error("compare", "--top: expected a positive number, not '%s'", optarg);
          return CMP_EXIT_USAGE;
        }
        break;
      }
      case 'j': o->json = 1; break;
      case 'h': usage(stdout); return -1;
      default: usage(stderr); return CMP_EXIT_USAGE;
    }
  }
  if( cli_g.json ) o->json = 1;
  if( o->repo==0 || !o->repo[0] ){
    cli_error("compare", "--repo REPO is required (see fnt compare --help)");
    return CMP_EXIT_USAGE;
  }
  if( argc-optind!=2 ){
    cli_error("compare", "expected COMMIT_A and COMMIT_B (see fnt compare --help)");
    return CMP_EXIT_USAGE;
  }
  o->commit_a = argv[optind];
  o->commit_b = argv[optind+1];
  return 0;
}

/* Rows to show: regressions first, then the others, each part in the
** store's order (p-value, then ratio descending). */
static const fnt_compare_row **showOrder(const fnt_compare *cmp,
                                         const cmp_opts *o, size_t *pnSlower){
  size_t n = fnt_compare_count(cmp), i, k = 0;
  const fnt_compare_row *aRow = fnt_compare_rows(cmp);
  const fnt_compare_row **ap = malloc((n+1)*sizeof(*ap));
  int pass;
  if( ap==0 ) return 0;
  for(pass=0; pass<2; pass++){
    for(i=0; i<n; i++){
      int slower = verdictOf(&aRow[i], o)==V_SLOWER;
      if( slower==(pass==0) ) ap[k++] = &aRow[i];
    }
    if( pass==0 ) *pnSlower = k;
  }
  return ap;
}

/* `, "name": "text"` (sep is what comes before the name). */
static void jsonText(const char *sep, const char *name, const char *s){
  printf("%s\"%s\": \"", sep, name);
  for(; *s; s++){
    unsigned char c = (unsigned char)*s;
    if( c=='"' || c=='\\' ) printf("\\%c", c);
    else if( c<0x20 ) printf("\\u%04x", c);
    else putchar(c);
  }
  putchar('"');
}

/* `, "name": v`, null for NAN; 17 digits round-trip a double. */
static void jsonReal(const char *sep, const char *name, double v){
  printf("%s\"%s\": ", sep, name);
  if( isnan(v) ) printf("null");
  else printf("%.17g", v);
}

static void printJson(const cmp_opts *o, const fnt_compare_row **ap, size_t n,
                      size_t nShow, size_t nSlower, int64_t nA, int64_t nB){
  size_t i;
  jsonText("{", "repo", o->repo);
  jsonText(", ", "commit_a", o->commit_a);
  jsonText(", ", "commit_b", o->commit_b);
  printf(",\n \"runs_a\": %lld, \"runs_b\": %lld", (long long)nA, (long long)nB);
  jsonReal(", ", "alpha", o->alpha);
  jsonReal(", ", "min_ratio", o->min_ratio);
  printf(", \"functions\": %zu, \"regressions\": %zu,\n \"rows\": [", n, nSlower);
  for(i=0; i<nShow; i++){
    const fnt_compare_row *r = ap[i];
    jsonText(i ? ",\n  {" : "\n  {", "key", r->key);
    jsonText(", ", "symbol", r->symbol);
    jsonReal(", ", "median_a", r->median_a);
    jsonReal(", ", "median_b", r->median_b);
    jsonReal(", ", "ratio", r->ratio);
    jsonReal(", ", "p_value", r->p_value);
    printf(", \"verdict\": \"%s\"}", verdictName[verdictOf(r, o)]);
  }
  printf("%s]}\n", nShow ? "\n " : "");
}

/* v with `digits` decimals ('f') or significant digits ('g'); "-" for NAN. */
static void fmtReal(char *out, size_t n, double v, int digits, char style){
  if( isnan(v) ) snprintf(out, n, "-");
  else if( style=='g' ) snprintf(out, n, "%.*g", digits, v);
  else snprintf(out, n, "%.*f", digits, v);
}

static void printTable(const cmp_opts *o, const fnt_compare_row **ap,
                       size_t n, size_t nShow, size_t nSlower, int64_t nA,
                       int64_t nB){
  int colour = isatty(STDOUT_FILENO) && getenv("NO_COLOR")==0;
  size_t i;
  printf("%s: %s (%lld runs) -> %s (%lld runs), alpha %g, min ratio %g\n\n",
         o->repo, o->commit_a, (long long)nA, o->commit_b, (long long)nB,
         o->alpha, o->min_ratio);
  printf("%-7s %10s %8s %14s %14s  %s\n", "", "p_value", "ratio",
         "median_a_ms", "median_b_ms", "function");
  for(i=0; i<nShow; i++){
    const fnt_compare_row *r = ap[i];
    verdict v = verdictOf(r, o);
    char p[32], ratio[32], ma[32], mb[32];
    const char *on = "", *off = "";
    if( colour && v!=V_NONE ){
      on = v==V_SLOWER || v==V_NEW ? "\033[31m" : "\033[32m";
      off = "\033[0m";
    }
    fmtReal(p, sizeof(p), r->p_value, 3, 'g');
    fmtReal(ratio, sizeof(ratio), r->ratio, 3, 'f');
    fmtReal(ma, sizeof(ma), r->median_a/1e6, 3, 'f');
    fmtReal(mb, sizeof(mb), r->median_b/1e6, 3, 'f');
    printf("%s%-7s %10s %8s %14s %14s  %s", on, verdictName[v], p, ratio, ma,
           mb, r->symbol);
    /* A stable_id key says more than the symbol: show it too. */
    if( r->key[0]!='?' ) printf("  [%s]", r->key);
    printf("%s\n", off);
  }
  if( n>nShow ) printf("(%zu more functions: --top N)\n", n-nShow);
  printf("\n%zu function(s) slower with p <= %g and ratio >= %g\n", nSlower,
         o->alpha, o->min_ratio);
  if( nA<2 || nB<2 ){
    printf("note: no p-values, a side has fewer than 2 runs\n");
  }
}

int cmd_compare(int argc, char **argv){
  cmp_opts o;
  fnt_store *st;
  fnt_snapshot *snap;
  fnt_compare *cmp = 0;
  const fnt_compare_row **ap = 0;
  size_t n, nShow, nSlower = 0;
  int64_t nA, nB;
  int rc = parseArgs(argc, argv, &o);
  if( rc ) return rc<0 ? 0 : rc;

  st = cli_open(cli_warehouse(o.wh), 0);
  if( st==0 ) return CMP_EXIT_ERROR;
  rc = fnt_snapshot_current(st, &snap);
  if( rc==FNT_OK ){
    rc = fnt_compare_compute(snap, o.repo, o.commit_a, o.commit_b, &cmp);
    fnt_snapshot_release(snap);
  }
  if( rc ){
    cli_error("compare", "%s", fnt_errmsg(st)[0] ? fnt_errmsg(st) : fnt_strerror(rc));
    fnt_close(st);
    return CMP_EXIT_ERROR;
  }
  n = fnt_compare_count(cmp);
  fnt_compare_runs(cmp, &nA, &nB);
  if( nA==0 || nB==0 ){
    cli_error("compare", "no runs of repo '%s' under commit '%s' in %s",
              o.repo, nA==0 ? o.commit_a : o.commit_b, fnt_path(st));
    fnt_compare_free(cmp);
    fnt_close(st);
    return CMP_EXIT_ERROR;
  }
  ap = showOrder(cmp, &o, &nSlower);
  if( ap==0 ){
    cli_error("compare", "out of memory");
    fnt_compare_free(cmp);
    fnt_close(st);
    return CMP_EXIT_ERROR;
  }
  nShow = n;
  if( o.top>0 && (size_t)o.top<n ) nShow = (size_t)o.top;
  else if( o.top<0 && !o.json && n>20 ) nShow = 20;
  if( o.json ) printJson(&o, ap, n, nShow, nSlower, nA, nB);
  else printTable(&o, ap, n, nShow, nSlower, nA, nB);
  free(ap);
  fnt_compare_free(cmp);
  fnt_close(st);
  return nSlower ? CMP_EXIT_REGRESSION : CMP_EXIT_SAME;
}

/* ------------------------------------------------------------------------
** fnt diff
*/
static int64_t diffDelta(const fnt_diff_row *r){
  return r->inclusive_b - r->inclusive_a;
}

/* The largest slowdown (inclusive_b - inclusive_a) first, then by key. */
static int cmpDiffRow(const void *pA, const void *pB){
  const fnt_diff_row *a = pA, *b = pB;
  int64_t da = diffDelta(a), db = diffDelta(b);
  if( da!=db ) return da>db ? -1 : 1;
  return strcmp(a->key, b->key);
}

/* "12.345" microseconds, or "-" when the run does not call the key. */
static void fmtP50(char *out, size_t n, int in, int64_t p50){
  fmtReal(out, n, in ? (double)p50/1e3 : NAN, 3, 'f');
}

int cmd_diff(int argc, char **argv){
  static const struct option diffOpts[] = {
    {"warehouse", required_argument, 0, 'w'},
    {"top",       required_argument, 0, 'n'},
    {"help",      no_argument,       0, 'h'},
    {0, 0, 0, 0}
  };
  const char *wh = 0, *zA, *zB;
  long top = 20;
  fnt_store *st;
  fnt_snapshot *snap;
  fnt_diff *d = 0;
  fnt_diff_row *aRow = 0;
  size_t i, n, nInA = 0, nInB = 0;
  int c, rc;
  optind = 1;
  while( (c = getopt_long(argc, argv, "w:n:h", diffOpts, 0))!=-1 ){
    if( c=='w' ){ wh = optarg; continue; }
    if( c=='n' ){
      char *end;
      top = strtol(optarg, &end, 10);
      if( end==optarg || *end || top<=0 ){
        cli_error("diff", "--top: expected a positive number, not '%s'", optarg);
        return 2;
      }
      continue;
    }
    printf("usage: fnt diff [--warehouse DIR] [--top N] RUN_A RUN_B\n\n"
           "Two runs side by side, per function: inclusive time in each, its\n"
           "change, calls and median call duration (p50), the largest slowdown\n"
           "first (SQL: fnt_diff(run_a, run_b)).  For runs of two commits with\n"
           "statistics, see fnt compare.\n\n"
           "  --top N   show at most N functions (default 20)\n\n"
           "example:\n  fnt diff --top 10 run-before run-after\n");
    cli_globals_help(stdout);
    return c=='h' ? 0 : 2;
  }
  if( argc-optind!=2 ){ cli_error("diff", "expected RUN_A and RUN_B (see fnt diff --help)"); return 2; }
  zA = argv[optind];
  zB = argv[optind+1];
  st = cli_open(cli_warehouse(wh), 0);
  if( st==0 ) return 1;
  rc = fnt_snapshot_current(st, &snap);
  if( rc==FNT_OK ){
    rc = fnt_diff_compute(snap, zA, zB, &d);
    fnt_snapshot_release(snap);
  }
  if( rc ){
    cli_error("diff", "%s", fnt_errmsg(st)[0] ? fnt_errmsg(st) : fnt_strerror(rc));
    fnt_close(st);
    return 1;
  }
  n = fnt_diff_count(d);
  for(i=0; i<n; i++){
    nInA += fnt_diff_rows(d)[i].in_a;
    nInB += fnt_diff_rows(d)[i].in_b;
  }
  if( nInA==0 || nInB==0 ){
    cli_error("diff", "no calls in run '%s' in %s (see fnt ls)", nInA ? zB : zA, fnt_path(st));
    fnt_diff_free(d);
    fnt_close(st);
    return 1;
  }
  aRow = malloc(n*sizeof(*aRow));
  if( aRow==0 ){ cli_error("diff", "out of memory"); fnt_diff_free(d); fnt_close(st); return 1; }
  memcpy(aRow, fnt_diff_rows(d), n*sizeof(*aRow));
  qsort(aRow, n, sizeof(*aRow), cmpDiffRow);
  printf("%s -> %s\n\n", zA, zB);
  printf("%14s %14s %12s %9s %9s %11s %11s  %s\n", "inclusive_a_ms",
         "inclusive_b_ms", "change_ms", "calls_a", "calls_b", "p50_a_us",
         "p50_b_us", "function");
  for(i=0; i<n && i<(size_t)top; i++){
    const fnt_diff_row *r = &aRow[i];
    char pa[32], pb[32];
    fmtP50(pa, sizeof(pa), r->in_a, r->p50_a);
    fmtP50(pb, sizeof(pb), r->in_b, r->p50_b);
    printf("%14.3f %14.3f %+12.3f %9lld %9lld %11s %11s  %s\n",
           (double)r->inclusive_a/1e6, (double)r->inclusive_b/1e6,
           (double)diffDelta(r)/1e6, (long long)r->calls_a,
           (long long)r->calls_b, pa, pb, r->symbol);
  }
  if( n>(size_t)top ) printf("(%zu more functions: --top N)\n", n-(size_t)top);
  free(aRow);
  fnt_diff_free(d);
  fnt_close(st);
  return 0;
}
