/*
** binary_check.c -- the log of `fnt import-xray` against its --binary
** (binary_check.h says what is checked and why).
*/
#include <stdio.h>
#include <string.h>

#include "binary_check.h"
#include "fnt.h"

#define FORCE_HINT "another program's log, or another build's? (--force imports anyway)"

void binary_check_init(binary_check *bc, elf_symbols *syms){
  memset(bc, 0, sizeof(*bc));
  bc->syms = syms;
  bc->n_map = elf_symbols_count(syms);
}

int binary_check_finish(const binary_check *bc, const char *log_path,
                        const char *bin_path, char *err, size_t errlen){
  static const char *const kindName[] = {"entries", "exits", "tail exits"};
  static const char *const sledName[] = {"entry", "return", "tail-call"};
  if( bc->outside ){
    snprintf(err, errlen, "the log %s does not match the binary %s: it uses function "
             "ids up to %d, and %llu of its events have ids (such as %d) outside the "
             "binary's xray_instr_map of %d functions: " FORCE_HINT,
             log_path, bin_path, (int)bc->max_id, (unsigned long long)bc->outside,
             (int)bc->outside_id, (int)bc->n_map);
    return -1;
  }
  if( bc->unsled ){
    const char *name = elf_symbols_name(bc->syms, bc->unsled_id);
    unsigned k = bc->unsled_kind<3 ? bc->unsled_kind : 0;
    snprintf(err, errlen, "the log %s does not match the binary %s: function id %d "
             "(%s there) has %s in the log but no %s sled in the binary (%llu such "
             "events): " FORCE_HINT, log_path, bin_path, (int)bc->unsled_id, name,
             kindName[k], sledName[k], (unsigned long long)bc->unsled);
    return -1;
  }
  return 0;
}

static const char *baseName(const char *path){
  const char *s = strrchr(path, '/');
  return s ? s+1 : path;
}

int binary_check_name(const char *log_path, const char *bin_path, char *err, size_t errlen){
  const char *log = baseName(log_path), *bin = baseName(bin_path), *dot;
  size_t n, nb = strlen(bin), k;
  if( strncmp(log, "xray-log.", 9)==0 ) log += 9;
  dot = strrchr(log, '.');
  if( !dot || dot==log || strlen(dot+1)!=6 ) return 0;
  for(k=1; k<=6; k++){
    char c = dot[k];
    if( !((c>='a' && c<='z') || (c>='A' && c<='Z') || (c>='0' && c<='9')) ) return 0;
  }
  n = (size_t)(dot - log);
  if( n>=nb && memcmp(dot - nb, bin, nb)==0 ) return 0;
  snprintf(err, errlen, "the log %s does not match the binary %s: its name says the "
           "program '%.*s' wrote it (XRay names a log after the program): " FORCE_HINT,
           log_path, bin_path, (int)n, log);
  return -1;
}

/* The value of "build_id" in a binaries JSON array as the importers write
** it ([{"path": ..., "build_id": "hex"}]), copied into out; "" when null
** or absent. */
static void recordedBuildId(const char *json, char *out, size_t n){
  const char *p = json ? strstr(json, "\"build_id\": \"") : 0;
  size_t k = 0;
  out[0] = 0;
  if( !p ) return;
  p += strlen("\"build_id\": \"");
  while( p[k] && p[k]!='"' && k+1<n ){ out[k] = p[k]; k++; }
  out[k] = 0;
}

int binary_check_filed(fnt_store *st, const char *run_id, const char *bin_path,
                       const char *build_id, char *err, size_t errlen){
  fnt_snapshot *snap;
  fnt_scan *sc;
  char filed[256];
  int rc, status = 0;
  if( !build_id ) return 0;
  rc = cli_run_scan(st, FNT_TABLE_RUNS, run_id, 1u<<FNT_RUN_BINARIES, &snap, &sc);
  while( rc==FNT_OK && (rc = fnt_scan_next(sc))==1 ){
    rc = FNT_OK;
    recordedBuildId(fnt_scan_text(sc, FNT_RUN_BINARIES, 0), filed, sizeof(filed));
    if( filed[0] && strcmp(filed, build_id)!=0 ){
      snprintf(err, errlen, "run '%s' is already filed from a binary with build id %s; "
               "the binary %s has build id %s: " FORCE_HINT, run_id, filed, bin_path,
               build_id);
      status = -1;
      break;
    }
  }
  if( rc<0 ){
    const char *m = fnt_errmsg(st);
    snprintf(err, errlen, "reading the runs of the warehouse: %s", m && m[0] ? m : fnt_strerror(rc));
    status = -2;
  }
  fnt_scan_close(sc);
  fnt_snapshot_release(snap);
  return status;
}
