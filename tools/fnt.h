/*
** fnt.h -- what the files of the `fnt` command-line tool share.
** One file per subcommand family; fnt.c dispatches.
*/
#ifndef FNT_CLI_H
#define FNT_CLI_H

#include <stdio.h>
#include "fnt_store.h"

/* Subcommands: each gets argv with argv[0] = its own name, returns the exit
** status (0 ok, 1 failure, 2 usage error). */
int cmd_import_xray(int argc, char **argv);   /* import_xray.c */
int cmd_import_perf(int argc, char **argv);   /* import_perf.c */
int cmd_import_chrome(int argc, char **argv); /* import_chrome.c */
int cmd_ls(int argc, char **argv);            /* read.c */
int cmd_heat(int argc, char **argv);          /* read.c */
int cmd_compare(int argc, char **argv);       /* compare.c */
int cmd_diff(int argc, char **argv);          /* compare.c */
int cmd_sql(int argc, char **argv);           /* read.c */
int cmd_account(int argc, char **argv);       /* calls.c */
int cmd_calls(int argc, char **argv);         /* calls.c */
int cmd_stack(int argc, char **argv);         /* calls.c */
int cmd_timeline(int argc, char **argv);      /* timeline.c */
int cmd_check(int argc, char **argv);         /* check.c */
int cmd_bench(int argc, char **argv);         /* bench.c */
int cmd_compact(int argc, char **argv);       /* maintain.c */
int cmd_expire(int argc, char **argv);        /* maintain.c */
int cmd_completion(int argc, char **argv);    /* completion.c */
int cmd_export_iceberg(int argc, char **argv); /* export_iceberg.c */
int cmd_export(int argc, char **argv);        /* export.c */
int cmd_flame(int argc, char **argv);         /* flame_svg.c */
int cmd_report(int argc, char **argv);        /* report.c */

/* The global options (cli.c), set by cli_take_globals() before a
** subcommand runs.  A subcommand never sees -w/--warehouse, --json or -q in
** its argv (bench keeps its own --json [FILE]): it calls cli_warehouse(0),
** honours cli_g.json and cli_g.quiet, and its usage calls
** cli_globals_help() (test/sql/test_cli.sh checks every --help for it). */
typedef struct cli_globals {
  const char *warehouse;   /* -w/--warehouse DIR, or NULL */
  int json;                /* --json: output as JSON Lines */
  int quiet;               /* -q/--quiet: nothing but errors and what was asked */
} cli_globals;
extern cli_globals cli_g;

/* Takes the global options out of argv[1..], wherever they stand (before or
** after the subcommand; not after "--", nor an sqlite3 option's value for
** `fnt sql`; bench keeps its own --json [FILE]), into cli_g; argv and
** *argc keep the rest.  @return 0, or 2 after printing a usage error. */
int cli_take_globals(int *argc, char **argv);

/* The lines of --help describing the global options. */
void cli_globals_help(FILE *out);

/* --json output, one object a line on stdout:
**   cli_json_begin(); cli_json_str("run_id", id); ...; cli_json_end(); */
void cli_json_begin(void);
void cli_json_str(const char *key, const char *val);   /* NULL = null */
void cli_json_int(const char *key, long long val);
void cli_json_num(const char *key, double val);
void cli_json_bool(const char *key, int val);
void cli_json_end(void);
/* `s` as a JSON string literal. */
void cli_json_string(FILE *out, const char *s);

/* Opens a scan of the rows of run `run_id` in table t of the current
** snapshot, reading `columns` (a bit mask of column indexes).  The caller
** closes *sc and releases *snap (both NULL-safe) whatever the result.
** @return FNT_OK or the store's error code (message in fnt_errmsg). */
int cli_run_scan(fnt_store *st, fnt_table t, const char *run_id, unsigned columns,
                 fnt_snapshot **snap, fnt_scan **sc);

/* For the importers: 0 when run `run_id` is not in table t (FNT_TABLE_RUNS
** or FNT_TABLE_PROFILE) or is filed under `repo`; else -1 after printing
** "fnt CMD: run ... is already filed under repo ..." (a run belongs to one
** repo: filing it again under another would say "already filed" and file
** nothing, which reads as if it had been). */
int cli_check_repo(fnt_store *st, const char *cmd, fnt_table t, const char *run_id,
                   const char *repo);

/* The options of fnt export, flame and report (export.c): RUN_ID (two with
** flame --diff), --format (export), -o, --from/--to, --thread. */
typedef struct cli_export {
  const char *run, *run_b;      /* run_b: flame --diff's newer run */
  const char *format, *out;     /* NULL when not given */
  int64_t thread;               /* -1: every thread */
  int has_win, diff;
  fnt_flame_window win;         /* when has_win */
  size_t memory;                /* --memory: bytes the stacks are folded in
                                ** before they are sorted on disk */
} cli_export;
#define CLI_EXPORT_MEMORY_MIB 64
/* The help lines of --memory (export, flame, report). */
#define CLI_MEMORY_HELP \
  "  --memory MIB    memory for folding the stacks (default 64); a run that\n" \
  "                  needs more is folded on disk, in temporary files\n" \
  "                  ($TMPDIR, else /tmp)\n"
/* The help lines of the window options. */
#define CLI_WINDOW_HELP \
  "  -o, --output F  write to F (default: stdout)\n" \
  "  --from NS       the window [NS, --to NS) in the run's nanoseconds\n" \
  "  --to NS\n" \
  "  --thread T      that thread only (with --from/--to)\n"
/* Parses argv; -1 to go on, else the exit status (0 help printed to
** stdout, 2 a usage error reported). */
int cli_export_opts(const char *cmd, int argc, char **argv, const char *usage,
                    cli_export *o);
/* 1 when run_id is filed; else 0 or -1 after printing why to stderr. */
int cli_run_filed(fnt_store *st, const char *cmd, const char *run_id);
/* The summary of an export written to `out` ("N unit as what to out"): a
** line on stderr (none with -q), or with --json a JSON object on stdout
** when `out` is a file. */
void cli_export_summary(const char *cmd, const char *run, const char *what,
                        uint64_t n, const char *unit, const char *out);
/* z (NULL: nothing) as XML/HTML text or attribute value (flame_svg.c). */
void cli_xml_text(FILE *f, const char *z);
/* A function's colour in fntrace's pictures, from its symbol: the same in
** every flame graph and timeline (flame_svg.c). */
void cli_hot_colour(const char *z, int *r, int *g, int *b);
/* A flame graph's stack tree (flame_svg.c): fnt_flame's rows of `run`
** (window w, NULL the whole run), with run_a those of RUN_A too for the
** differential graph.  Read in bounded memory: a run whose stacks do not
** fold in `mem` bytes is folded on disk (folded.h) and only its stacks
** thick enough to be drawn are kept.  NULL after printing why. */
typedef struct cli_flame cli_flame;
cli_flame *cli_flame_load(const char *cmd, fnt_store *st, fnt_snapshot *snap,
                          const char *run, const char *run_a,
                          const fnt_flame_window *w, size_t mem);
/* The run's distinct stacks (those left on disk too). */
uint64_t cli_flame_stacks(const cli_flame *t);
/* Draws t as an SVG flame graph, differential when it holds RUN_A.
** inHtml: inside an HTML page.  @return 0, or -1 out of memory. */
int cli_flame_svg(FILE *f, cli_flame *t, const char *title, const char *subtitle,
                  int inHtml);
void cli_flame_free(cli_flame *t);
/* Bytes on disk under dir (allocated blocks of every file, like du). */
uint64_t cli_disk_usage(const char *dir);

/* The warehouse to use: `opt` when given, else -w/--warehouse, else
** $FNT_WAREHOUSE, else "./fnt-warehouse". */
const char *cli_warehouse(const char *opt);

/* Opens the warehouse, creating it (in an absent or empty folder) only when
** `create`: filing does, every other subcommand reads or maintains what
** exists, so a mistyped -w or $FNT_WAREHOUSE is an error, not a new
** warehouse.  On failure prints "fnt: DIR: why" to stderr and returns NULL. */
fnt_store *cli_open(const char *dir, int create);

/* Reports fnt_open(dir)'s failure `rc` as "fnt[ cmd]: DIR: why" (cmd may be
** NULL), naming DIR once, and closes `st` (NULL allowed). */
void cli_open_failed(const char *cmd, const char *dir, fnt_store *st, int rc);

/* The fntrace extension beside this executable (build/fnt -> build/fntrace)
** or installed (bin/fnt -> lib/fntrace),
** for sqlite3_load_extension or .load; 0, or -1 when it cannot be located. */
int cli_extension_path(char *out, size_t n);

/* "fnt <cmd>: <message>" to stderr, printf-style. */
void cli_error(const char *cmd, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

#endif /* FNT_CLI_H */
