/*
** fnt.c -- the `fnt` command: files XRay traces and perf profiles into a
** warehouse and reads them back.  `fnt --help` lists the subcommands; each
** has its own --help with an example.
*/
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "fnt.h"

static const struct {
  const char *name;
  int (*run)(int argc, char **argv);
  const char *summary;
} commands[] = {
  {"import-xray", cmd_import_xray, "file an LLVM XRay log (basic or FDR mode) as a run"},
  {"import-perf", cmd_import_perf, "file a perf.data or `perf script` output as a profile"},
  {"import-chrome", cmd_import_chrome, "file a Chrome Trace Event JSON file (clang -ftime-trace, ...) as a run"},
  {"ls",          cmd_ls,          "list runs and profiles, newest first"},
  {"heat",        cmd_heat,        "the hottest functions of a run"},
  {"account",     cmd_account,     "per function of a run: calls, p50/p90/p99, max, sum (llvm-xray account)"},
  {"calls",       cmd_calls,       "the calls of a run, in time order or the slowest first"},
  {"stack",       cmd_stack,       "what is on each thread's stack at an instant"},
  {"timeline",    cmd_timeline,    "what a flame chart of a window draws: per thread, depth and column"},
  {"diff",        cmd_diff,        "two runs side by side, per function"},
  {"export",      cmd_export,      "a run for Perfetto, speedscope, flamegraph.pl or pprof"},
  {"report",      cmd_report,      "one self-contained HTML page about a run: summary, hottest functions, flame graph"},
  {"flame",       cmd_flame,       "a flame graph of a run (SVG), or of two runs' difference"},
  {"compare",     cmd_compare,     "did a commit make anything slower? its runs against another's"},
  {"check",       cmd_check,       "verify every checksum and reference; list unreferenced files"},
  {"compact",     cmd_compact,     "merge small segment files so that queries open fewer"},
  {"expire",      cmd_expire,      "expire old snapshots and remove the files nothing lists"},
  {"sql",         cmd_sql,         "the sqlite3 shell with fntrace loaded and the warehouse open"},
  {"export-iceberg", cmd_export_iceberg, "write the tables as Apache Iceberg tables (Parquet), incrementally"},
  {"bench",       cmd_bench,       "benchmark fntrace against plain SQLite on a synthetic trace"},
  {"completion",  cmd_completion,  "print a bash completion script (fnt completion bash)"},
};
#define NCOMMANDS (sizeof(commands)/sizeof(commands[0]))

const char *cli_warehouse(const char *opt){
  const char *env;
  if( opt && opt[0] ) return opt;
  if( cli_g.warehouse ) return cli_g.warehouse;
  env = getenv("FNT_WAREHOUSE");
  if( env && env[0] ) return env;
  return "./fnt-warehouse";
}

fnt_store *cli_open(const char *dir, int create){
  fnt_store *st = 0;
  int rc = fnt_open(dir, create ? FNT_OPEN_CREATE : 0, &st);
  if( rc!=FNT_OK ){
    cli_open_failed(0, dir, st, rc);
    return 0;
  }
  return st;
}

void cli_open_failed(const char *cmd, const char *dir, fnt_store *st, int rc){
  const char *msg = st ? fnt_errmsg(st) : "";
  size_t n = strlen(dir);
  fprintf(stderr, "fnt%s%s: ", cmd ? " " : "", cmd ? cmd : "");
  /* The store's messages mostly begin with the folder already. */
  if( strncmp(msg, dir, n)==0 && msg[n]==':' ){
    fprintf(stderr, "%s\n", msg);
  }else{
    fprintf(stderr, "%s: %s\n", dir, msg[0] ? msg : fnt_strerror(rc));
  }
  fnt_close(st);
}

void cli_error(const char *cmd, const char *fmt, ...){
  va_list ap;
  fprintf(stderr, "fnt %s: ", cmd);
  va_start(ap, fmt);
  vfprintf(stderr, fmt, ap);
  va_end(ap);
  fputc('\n', stderr);
}

static void usage(FILE *out){
  size_t i;
  fprintf(out,
    "usage: fnt [global options] <command> [options]\n"
    "\n"
    "fntrace files function traces (LLVM XRay) and profiles (perf) into a\n"
    "warehouse folder, queried with SQL.  The warehouse is --warehouse DIR,\n"
    "else $FNT_WAREHOUSE, else ./fnt-warehouse.\n"
    "\n"
    "commands:\n");
  for(i=0; i<NCOMMANDS; i++){
    fprintf(out, "  %-15s %s\n", commands[i].name, commands[i].summary);
  }
  cli_globals_help(out);
  fprintf(out,
    "\n"
    "  fnt <command> --help   shows a command's options and an example\n"
    "  fnt --version          prints the version\n"
    "  fnt completion bash    prints a bash completion script:\n"
    "                         source <(fnt completion bash)\n");
}

int main(int argc, char **argv){
  size_t i;
  if( cli_take_globals(&argc, argv) ) return 2;
  if( argc<2 ){
    usage(stderr);
    return 2;
  }
  if( strcmp(argv[1], "--help")==0 || strcmp(argv[1], "-h")==0
   || strcmp(argv[1], "help")==0 ){
    usage(stdout);
    return 0;
  }
  if( strcmp(argv[1], "--version")==0 || strcmp(argv[1], "version")==0 ){
    printf("fnt %s (format %d)\n", fnt_version(), FNT_FORMAT_VERSION);
    return 0;
  }
  for(i=0; i<NCOMMANDS; i++){
    if( strcmp(argv[1], commands[i].name)==0 ){
      return commands[i].run(argc-1, argv+1);
    }
  }
  fprintf(stderr, "fnt: unknown command '%s'\n\n", argv[1]);
  usage(stderr);
  return 2;
}
