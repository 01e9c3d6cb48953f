/*
** maintain.c -- warehouse maintenance: `fnt compact`.
*/
#include <getopt.h>
#include <stdio.h>

#include "fnt.h"

int cmd_compact(int argc, char **argv){
  static const struct option opts[] = {
    {"warehouse", required_argument, 0, 'w'},
    {"help",      no_argument,       0, 'h'},
    {0, 0, 0, 0}
  };
  const char *wh = 0;
  fnt_compact_stats cs;
  fnt_store *st;
  int c, rc;
  optind = 1;
  while( (c = getopt_long(argc, argv, "w:h", opts, 0))!=-1 ){
    if( c=='w' ){ wh = optarg; continue; }
    printf("usage: fnt compact [--warehouse DIR]\n\n"
           "Merges small segment files in one snapshot commit: per repo the run\n"
           "rows and the profiles into one file each, per run small events\n"
           "segments into segments of up to 1Mi events.  Rows do not change;\n"
           "older snapshots keep their files.  Worth running after filing many\n"
           "small chunks: queries then open far fewer files.\n\n"
           "example:\n  fnt compact --warehouse ./fnt-warehouse\n");
    return c=='h' ? 0 : 2;
  }
  if( optind<argc ){ cli_error("compact", "unexpected argument '%s'", argv[optind]); return 2; }
  st = cli_open(cli_warehouse(wh));
  if( st==0 ) return 1;
  rc = fnt_compact(st, &cs);
  if( rc<0 ){
    cli_error("compact", "%s", fnt_errmsg(st)[0] ? fnt_errmsg(st) : fnt_strerror(rc));
    fnt_close(st);
    return 1;
  }
  if( rc==0 ){
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
