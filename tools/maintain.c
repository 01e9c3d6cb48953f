/*
** maintain.c -- warehouse maintenance: `fnt compact`, `fnt expire`.
*/
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>

#include "fnt.h"

int cmd_compact(int argc, char **argv){
  static const struct option opts[] = {
    {"help",      no_argument,       0, 'h'},
    {0, 0, 0, 0}
  };
  fnt_compact_stats cs;
  fnt_store *st;
  int c, rc;
  optind = 1;
  while( (c = getopt_long(argc, argv, "h", opts, 0))!=-1 ){
    FILE *out = c=='h' ? stdout : stderr;
    fprintf(out, "usage: fnt compact [-w DIR] [--json] [-q]\n\n"
           "Merges small segment files in one snapshot commit: per repo the run\n"
           "rows and the profiles into one file each, per run small events\n"
           "segments into segments of up to 1Mi events.  Rows do not change;\n"
           "older snapshots keep their files.  Worth running after filing many\n"
           "small chunks: queries then open far fewer files.  --json: the\n"
           "figures as one object.\n\n"
           "options:\n  -h, --help  this text\n");
    cli_globals_help(out);
    fprintf(out, "\nexample:\n  fnt compact --warehouse ./fnt-warehouse\n");
    return c=='h' ? 0 : 2;
  }
  if( optind<argc ){ cli_error("compact", "unexpected argument '%s'", argv[optind]); return 2; }
  st = cli_open(cli_warehouse(0), 0);
  if( st==0 ) return 1;
  rc = fnt_compact(st, &cs);
  if( rc<0 ){
    cli_error("compact", "%s", fnt_errmsg(st)[0] ? fnt_errmsg(st) : fnt_strerror(rc));
    fnt_close(st);
    return 1;
  }
  if( cli_g.quiet ){
    /* -q: the exit status says it */
  }else if( cli_g.json ){
    cli_json_begin();
    cli_json_bool("compacted", rc==1);
    cli_json_int("files_merged", (long long)cs.files_merged);
    cli_json_int("files_written", (long long)cs.files_written);
    cli_json_int("rows_rewritten", (long long)cs.rows_rewritten);
    cli_json_int("files_before", (long long)cs.files_before);
    cli_json_int("files_after", (long long)cs.files_after);
    cli_json_end();
  }else if( rc==0 ){
    printf("nothing to compact: %llu files\n", (unsigned long long)cs.files_before);
  }else{
    printf("compacted: %llu files merged into %llu (%llu rows rewritten); "
           "the snapshot lists %llu files, was %llu\n",
           (unsigned long long)cs.files_merged, (unsigned long long)cs.files_written,
           (unsigned long long)cs.rows_rewritten, (unsigned long long)cs.files_after,
           (unsigned long long)cs.files_before);
  }
  fnt_close(st);
  return 0;
}

int cmd_expire(int argc, char **argv){
  static const struct option opts[] = {
    {"keep-seconds", required_argument, 0, 'k'},
    {"help",         no_argument,       0, 'h'},
    {0, 0, 0, 0}
  };
  long long keep = 86400;
  fnt_expire_stats es;
  fnt_store *st;
  int c, rc;
  optind = 1;
  while( (c = getopt_long(argc, argv, "k:h", opts, 0))!=-1 ){
    FILE *out = c=='h' ? stdout : stderr;
    if( c=='k' ){
      char *end;
      keep = strtoll(optarg, &end, 10);
      if( *end || keep<0 ){
        cli_error("expire", "--keep-seconds: expected a number of seconds, not '%s'", optarg);
        return 2;
      }
      continue;
    }
    fprintf(out, "usage: fnt expire [-w DIR] [--json] [-q] [--keep-seconds N]\n\n"
           "Expires snapshots committed more than N seconds ago (default 86400,\n"
           "a day; the newest snapshot is always kept), then removes the files\n"
           "no remaining snapshot lists that are older than N seconds and an hour\n"
           "(never a file or folder whose name begins with a dot).\n"
           "Tables read the same; time travel to expired snapshots ends.\n"
           "--json: the figures as one object.\n\n"
           "options:\n"
           "  -k, --keep-seconds N  keep snapshots of the last N seconds\n"
           "  -h, --help            this text\n");
    cli_globals_help(out);
    fprintf(out, "\nexample:\n  fnt expire --keep-seconds 3600\n");
    return c=='h' ? 0 : 2;
  }
  if( optind<argc ){ cli_error("expire", "unexpected argument '%s'", argv[optind]); return 2; }
  st = cli_open(cli_warehouse(0), 0);
  if( st==0 ) return 1;
  rc = fnt_expire_snapshots(st, (int64_t)keep, &es);
  if( rc<0 ){
    cli_error("expire", "%s", fnt_errmsg(st)[0] ? fnt_errmsg(st) : fnt_strerror(rc));
    fnt_close(st);
    return 1;
  }
  if( cli_g.json && !cli_g.quiet ){
    cli_json_begin();
    cli_json_int("snapshots_expired", (long long)es.snapshots_expired);
    cli_json_int("snapshots_kept", (long long)es.snapshots_kept);
    cli_json_int("files_removed", (long long)es.files_removed);
    cli_json_int("bytes_removed", (long long)es.bytes_removed);
    cli_json_int("unlisted_kept", (long long)es.unlisted_kept);
    cli_json_int("unlisted_kept_bytes", (long long)es.unlisted_kept_bytes);
    cli_json_end();
  }else if( !cli_g.quiet ){
    printf("expired %llu snapshot(s), kept %llu; removed %llu file(s), %llu bytes\n",
           (unsigned long long)es.snapshots_expired, (unsigned long long)es.snapshots_kept,
           (unsigned long long)es.files_removed, (unsigned long long)es.bytes_removed);
    if( es.unlisted_kept ){
      printf("kept %llu unlisted file(s), %llu bytes: younger than the window "
             "and an hour, so possibly a commit in flight in another process; "
             "a later expire removes them\n",
             (unsigned long long)es.unlisted_kept,
             (unsigned long long)es.unlisted_kept_bytes);
    }
  }
  fnt_close(st);
  return 0;
}
