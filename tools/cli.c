/*
** cli.c -- the grammar every `fnt` subcommand shares: the global options
** (-w/--warehouse DIR, --json, -q/--quiet), taken out of argv wherever they
** stand, before or after the subcommand, so that no subcommand parses them
** itself and none can differ; the JSON Lines writer behind --json; and
** what the importers share (the repo a run is filed under, disk usage).
*/
#include <ftw.h>
#include <stdarg.h>
#include <string.h>
#include <sys/stat.h>

#include "fnt.h"

cli_globals cli_g;

/* sqlite3 shell options that take a value: their value is passed through
** untouched even when it looks like one of ours (`-cmd -q`). */
static int sqliteTakesValue(const char *a){
  static const char *const withValue[] = {
    "-cmd", "-init", "-separator", "-newline", "-nullvalue", "-mmap",
    "-pagecache", "-lookaside", "-heap", "-vfs", "-maxsize", "-nonce",
  };
  size_t k;
  if( a[0]=='-' && a[1]=='-' ) a++;     /* sqlite3 accepts --cmd as -cmd */
  for(k=0; k<sizeof(withValue)/sizeof(withValue[0]); k++){
    if( strcmp(a, withValue[k])==0 ) return 1;
  }
  return 0;
}

int cli_take_globals(int *argc, char **argv){
  int i, out = 1, rest = 0;
  const char *cmd = 0;
  for(i=1; i<*argc; i++){
    const char *a = argv[i];
    int sql = cmd && strcmp(cmd, "sql")==0;
    if( rest ){ argv[out++] = argv[i]; continue; }
    if( cmd && strcmp(a, "--")==0 ){
      rest = 1;                           /* what follows is the command's */
      argv[out++] = argv[i];
      continue;
    }
    if( sql && sqliteTakesValue(a) && i+1<*argc ){
      argv[out++] = argv[i++];
      argv[out++] = argv[i];
      continue;
    }
    if( strcmp(a, "-w")==0 || strcmp(a, "--warehouse")==0 ){
      if( i+1>=*argc ){
        fprintf(stderr, "fnt: %s needs a folder (the warehouse)\n", a);
        return 2;
      }
      cli_g.warehouse = argv[++i];
      continue;
    }
    if( strncmp(a, "--warehouse=", 12)==0 ){ cli_g.warehouse = a+12; continue; }
    if( strncmp(a, "-w", 2)==0 && a[2] && !sql ){ cli_g.warehouse = a+2; continue; }
    if( strcmp(a, "-q")==0 || strcmp(a, "--quiet")==0 ){ cli_g.quiet = 1; continue; }
    if( strcmp(a, "--json")==0 && !(cmd && strcmp(cmd, "bench")==0) ){
      cli_g.json = 1;                     /* bench's --json [FILE] is its own */
      continue;
    }
    if( !cmd && a[0]!='-' ) cmd = a;
    argv[out++] = argv[i];
  }
  if( cli_g.warehouse && !cli_g.warehouse[0] ){
    fprintf(stderr, "fnt: --warehouse must not be empty\n");
    return 2;
  }
  argv[out] = 0;
  *argc = out;
  return 0;
}

void cli_globals_help(FILE *out){
  fprintf(out,
    "\n"
    "global options (before or after the command, the same for every one):\n"
    "  -w, --warehouse DIR  the warehouse (default $FNT_WAREHOUSE, else ./fnt-warehouse)\n"
    "  --json               output as JSON Lines: one JSON object a line\n"
    "  -q, --quiet          print nothing but errors (and what was asked for)\n");
}

/* ------------------------------------------------------------ JSON Lines */

static int jsonFields;

void cli_json_begin(void){
  fputc('{', stdout);
  jsonFields = 0;
}

static void key(const char *k){
  if( jsonFields++ ) fputs(", ", stdout);
  cli_json_string(stdout, k);
  fputs(": ", stdout);
}

void cli_json_string(FILE *out, const char *s){
  fputc('"', out);
  for(; *s; s++){
    unsigned char c = (unsigned char)*s;
    if( c=='"' || c=='\\' ){ fputc('\\', out); fputc(c, out); }
    else if( c<0x20 ) fprintf(out, "\\u%04x", c);
    else fputc(c, out);
  }
  fputc('"', out);
}

void cli_json_str(const char *k, const char *v){
  key(k);
  if( v ) cli_json_string(stdout, v); else fputs("null", stdout);
}

void cli_json_int(const char *k, long long v){
  key(k);
  printf("%lld", v);
}

void cli_json_num(const char *k, double v){
  key(k);
  printf("%.9g", v);
}

void cli_json_bool(const char *k, int v){
  key(k);
  fputs(v ? "true" : "false", stdout);
}

void cli_json_end(void){
  fputs("}\n", stdout);
}

/* ------------------------------------------------------- for the importers */

int cli_run_scan(fnt_store *st, fnt_table t, const char *run_id, unsigned columns,
                 fnt_snapshot **snap, fnt_scan **sc){
  fnt_predicate p;
  int rc;
  *snap = 0;
  *sc = 0;
  rc = fnt_snapshot_current(st, snap);
  if( rc==FNT_OK ){
    fnt_predicate_init(&p);
    p.run_ids = &run_id;
    p.n_run_ids = 1;
    p.columns = columns;
    rc = fnt_scan_open(*snap, t, &p, sc);
  }
  return rc;
}

int cli_check_repo(fnt_store *st, const char *cmd, fnt_table t, const char *run_id,
                   const char *repo){
  fnt_snapshot *snap;
  fnt_scan *sc;
  int col = t==FNT_TABLE_PROFILE ? FNT_PROF_REPO : FNT_RUN_REPO;
  int rc = cli_run_scan(st, t, run_id, 1u<<col, &snap, &sc), status = 0;
  if( rc==FNT_OK && (rc = fnt_scan_next(sc))==1 ){
    const char *filed = fnt_scan_text(sc, col, 0);
    rc = FNT_OK;
    if( filed && strcmp(filed, repo)!=0 ){
      cli_error(cmd, "run '%s' is already filed under repo '%s', not '%s': a run "
                "belongs to one repo (import it with --repo %s, or under another "
                "--run-id)", run_id, filed, repo, filed);
      status = -1;
    }
  }
  if( rc<0 ){
    const char *m = fnt_errmsg(st);
    cli_error(cmd, "reading the warehouse: %s", m && m[0] ? m : fnt_strerror(rc));
    status = -1;
  }
  fnt_scan_close(sc);
  fnt_snapshot_release(snap);
  return status;
}

static uint64_t duBytes;
static int duAdd(const char *path, const struct stat *sb, int flag, struct FTW *ftw){
  (void)path; (void)ftw;
  if( flag==FTW_F ) duBytes += (uint64_t)sb->st_blocks * 512u;
  return 0;
}

uint64_t cli_disk_usage(const char *dir){
  duBytes = 0;
  nftw(dir, duAdd, 16, FTW_PHYS);
  return duBytes;
}
