/*
** import_opts.h -- the options the run importers share (import-xray,
** import-chrome): one parser, so that they spell and check them alike.
**
**   --repo REPO  --commit SHA  --run-id ID  --target NAME  --room FILE
**   --chunk-events N  [--binary BIN and --force, when the importer takes
**   a binary]  --help / -h  and one positional INPUT
**
** Values come as `--opt VALUE` or `--opt=VALUE`.  -w/--warehouse, --json
** and -q are global options (cli.c), gone from argv by now.
*/
#ifndef FNT_IMPORT_OPTS_H
#define FNT_IMPORT_OPTS_H

#include <stdint.h>
#include <stdio.h>

#define IMPORT_DEFAULT_REPO "local"
/* Filing a chunk derives its calls in memory: 250,000 events keep an
** import under 64 MiB of RSS (1M: about 96 MiB) at no cost in speed. */
#define IMPORT_DEFAULT_CHUNK_EVENTS 250000

typedef struct import_opts {
  const char *repo, *commit, *run_id, *target, *room, *binary;
  int force;                    /* --force: import a log that does not fit BIN */
  const char *input;            /* the positional argument */
  int64_t chunk_events;         /* IMPORT_DEFAULT_CHUNK_EVENTS when not given */
} import_opts;

/* Parses argv (argv[0] the subcommand).  with_binary: --binary is accepted
** and required, and --force accepted.  input_name names the positional argument in messages
** ("LOG", "FILE").  usage prints the subcommand's help.
** @return 0 ok, 1 --help shown, 2 usage error (reported as "fnt CMD: ..."). */
int import_opts_parse(int argc, char **argv, const char *cmd, int with_binary,
                      const char *input_name, void (*usage)(FILE *out),
                      import_opts *o);

/* The file name part of path ("dir/x.json" -> "x.json"; "dir/" stays). */
const char *import_base_name(const char *path);

#endif /* FNT_IMPORT_OPTS_H */
