/*
** import_opts.c -- the importers' shared options (import_opts.h).
*/
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "fnt.h"
#include "import_opts.h"

int import_opts_parse(int argc, char **argv, const char *cmd, int with_binary,
                      const char *input_name, void (*usage)(FILE *out),
                      import_opts *o){
  static const char *const with_value[] = {
    "--repo", "--commit", "--run-id", "--target", "--room", "--chunk-events", "--binary"
  };
  size_t n_opts = sizeof(with_value)/sizeof(with_value[0]) - (with_binary ? 0 : 1);
  int i;
  memset(o, 0, sizeof(*o));
  o->chunk_events = IMPORT_DEFAULT_CHUNK_EVENTS;
  for(i=1; i<argc; i++){
    const char *a = argv[i], *val = 0, *eq;
    size_t k, nlen;
    if( strcmp(a, "--help")==0 || strcmp(a, "-h")==0 ){ usage(stdout); return 1; }
    if( with_binary && strcmp(a, "--force")==0 ){ o->force = 1; continue; }
    if( a[0]!='-' || strcmp(a, "-")==0 ){
      if( o->input ){
        cli_error(cmd, "more than one %s given ('%s', '%s')", input_name, o->input, a);
        return 2;
      }
      o->input = a;
      continue;
    }
    eq = strchr(a, '=');
    nlen = eq ? (size_t)(eq - a) : strlen(a);
    for(k=0; k<n_opts; k++){
      if( strlen(with_value[k])==nlen && strncmp(a, with_value[k], nlen)==0 ) break;
    }
    if( k==n_opts ){
      cli_error(cmd, "unknown option '%s' (see fnt %s --help)", a, cmd);
      return 2;
    }
    if( eq ) val = eq+1;
    else if( i+1<argc ) val = argv[++i];
    else { cli_error(cmd, "%s needs a value", a); return 2; }
    switch( k ){
      case 0: o->repo = val; break;
      case 1: o->commit = val; break;
      case 2: o->run_id = val; break;
      case 3: o->target = val; break;
      case 4: o->room = val; break;
      case 5: {
        char *end;
        long long n;
        errno = 0;
        n = strtoll(val, &end, 10);
        if( errno || end==val || *end || n<=0 ){
          cli_error(cmd, "--chunk-events: '%s' is not a positive number", val);
          return 2;
        }
        o->chunk_events = n;
        break;
      }
      case 6: o->binary = val; break;
    }
  }
  if( with_binary && !o->binary ){ cli_error(cmd, "--binary BIN is required (see --help)"); return 2; }
  if( !o->input ){ cli_error(cmd, "no %s given (see --help)", input_name); return 2; }
  if( o->repo && !o->repo[0] ){ cli_error(cmd, "--repo must not be empty"); return 2; }
  if( o->run_id && !o->run_id[0] ){ cli_error(cmd, "--run-id must not be empty"); return 2; }
  return 0;
}

const char *import_base_name(const char *path){
  const char *s = strrchr(path, '/');
  return s && s[1] ? s+1 : path;
}
