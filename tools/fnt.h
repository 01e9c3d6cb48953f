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
int cmd_ls(int argc, char **argv);            /* read.c */
int cmd_heat(int argc, char **argv);          /* read.c */
int cmd_sql(int argc, char **argv);           /* read.c */
int cmd_check(int argc, char **argv);         /* check.c */
int cmd_bench(int argc, char **argv);         /* bench.c */
int cmd_compact(int argc, char **argv);       /* maintain.c */
int cmd_expire(int argc, char **argv);        /* maintain.c */
int cmd_export_iceberg(int argc, char **argv); /* export_iceberg.c */

/* The warehouse to use: `opt` when given, else $FNT_WAREHOUSE, else
** "./fnt-warehouse". */
const char *cli_warehouse(const char *opt);

/* Opens (creating) the warehouse; on failure prints "fnt: DIR: why" to
** stderr and returns NULL. */
fnt_store *cli_open(const char *dir);

/* The fntrace extension beside this executable (build/fnt -> build/fntrace),
** for sqlite3_load_extension or .load; 0, or -1 when it cannot be located. */
int cli_extension_path(char *out, size_t n);

/* "fnt <cmd>: <message>" to stderr, printf-style. */
void cli_error(const char *cmd, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

#endif /* FNT_CLI_H */
