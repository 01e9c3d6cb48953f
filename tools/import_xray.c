/*
** import_xray.c -- `fnt import-xray`: files an LLVM XRay log as a run.
**
**   fnt import-xray --binary ./prog xray-log.prog.XbVh2a
**
** The whole log is read and checked before anything is filed (a malformed
** log files nothing; xray_log.h's first pass); the binary names the
** function ids; the events are then merged into seq_no order as they are
** filed, in chunks of --chunk-events events, each by fnt_file_chunk() in
** one atomic, idempotent commit (run_filer.h).  So an import that is killed
** midway and run again files every chunk exactly once, a second import of
** the same log files nothing ("already filed"), and the memory used is one
** chunk's, whatever the log's size.
*/
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "binary_check.h"
#include "elf_symbols.h"
#include "fnt.h"
#include "import_opts.h"
#include "progress.h"
#include "room.h"
#include "run_filer.h"
#include "xray_log.h"

#define CMD "import-xray"

static void usage(FILE *out){
  fprintf(out,
    "usage: fnt import-xray [options] --binary BIN LOG\n"
    "\n"
    "Files an LLVM XRay log (basic or FDR mode, read directly: no llvm-xray\n"
    "needed) as one run of fn_trace_events, in chunks.  Re-running files\n"
    "only the chunks not yet filed.\n"
    "\n"
    "  --binary BIN        the instrumented executable that wrote LOG (required):\n"
    "                      its xray_instr_map and symbols name the functions\n"
    "  --repo REPO         default \"" IMPORT_DEFAULT_REPO "\"\n"
    "  --commit SHA        default none (NULL)\n"
    "  --run-id ID         default LOG's file name without a leading \"xray-log.\"\n"
    "  --target NAME       default BIN's file name\n"
    "  --room FILE         TSV of symbol<TAB>stable_id lines naming functions\n"
    "  --chunk-events N    events a chunk, default %d\n"
    "  --force             import even when LOG does not match BIN (below)\n"
    "\n"
    "LOG must come from BIN: every function id of the log must be in BIN's\n"
    "xray_instr_map, with a sled of each event's kind (entry, return, tail\n"
    "call); a log name of XRay's shape (PROGRAM.XXXXXX) must name BIN's file;\n"
    "a run already filed under the run id must record BIN's build id.  Else\n"
    "the import is refused naming both files.\n"
    "\n"
    "The run's ts_micros is the log file's modification time, or for FDR\n"
    "logs a Walltime record holding an epoch time (compiler-rt 14 writes the\n"
    "time since boot there, which is not used).  `truncated` is always 0: a\n"
    "log found malformed or truncated is refused whole (exit 1, the byte\n"
    "offset in the message) and nothing of it is filed.  A log without\n"
    "events is filed as one empty chunk.\n"
    "\n"
    "example:\n"
    "  clang -O2 -fxray-instrument -fxray-instruction-threshold=1 -o prog prog.c\n"
    "  XRAY_OPTIONS='patch_premain=true xray_mode=xray-basic xray_logfile_base=xray-log.' \\\n"
    "  XRAY_BASIC_OPTIONS='func_duration_threshold_us=0 max_stack_depth=4096' ./prog\n"
    "  fnt import-xray --repo acme/widget --commit 9f1c2e0 --binary ./prog xray-log.prog.*\n",
    IMPORT_DEFAULT_CHUNK_EVENTS);
  cli_globals_help(out);
}

/* Appends s to out as a JSON string literal; returns the bytes needed. */
static size_t json_str(char *out, size_t cap, const char *s){
  size_t n = 0;
  #define PUT(c) do{ if( n<cap ) out[n] = (char)(c); n++; }while(0)
  PUT('"');
  for(; *s; s++){
    unsigned char c = (unsigned char)*s;
    if( c=='"' || c=='\\' ){ PUT('\\'); PUT(c); }
    else if( c<0x20 ){
      char esc[8];
      int k;
      snprintf(esc, sizeof(esc), "\\u%04x", c);
      for(k=0; esc[k]; k++) PUT(esc[k]);
    }else PUT(c);
  }
  PUT('"');
  #undef PUT
  return n;
}

/* [{"path": BIN, "build_id": "hex"|null}], malloc'd. */
static char *binaries_json(const char *bin, const char *build_id){
  size_t need = json_str(0, 0, bin) + (build_id ? strlen(build_id) : 4) + 64;
  char *out = malloc(need), *p;
  if( !out ) return 0;
  p = out;
  p += sprintf(p, "[{\"path\": ");
  p += json_str(p, need - (size_t)(p-out), bin);
  if( build_id ) sprintf(p, ", \"build_id\": \"%s\"}]", build_id);
  else sprintf(p, ", \"build_id\": null}]");
  return out;
}

/* The run's functions: xray function id -> the filer's function index,
** each named (and its stable_id looked up) when its first event streams by. */
typedef struct id_map {
  int32_t *key;           /* open addressing */
  uint32_t *val;
  size_t hcap, n;
} id_map;

static size_t slot_of(const id_map *m, int32_t id){
  size_t h = ((uint32_t)id*2654435761u) & (m->hcap-1);
  while( m->val[h]!=UINT32_MAX && m->key[h]!=id ) h = (h+1) & (m->hcap-1);
  return h;
}

/* Doubles the table (ids outside the map can be many in a damaged log;
** they are named "#id" and still filed). */
static int grow_table(id_map *m){
  id_map old = *m;
  size_t j;
  m->hcap = old.hcap ? old.hcap*2 : 64;
  m->key = malloc(m->hcap*sizeof(*m->key));
  m->val = malloc(m->hcap*sizeof(*m->val));
  if( !m->key || !m->val ){
    free(m->key); free(m->val);
    *m = old;
    return -1;
  }
  memset(m->val, 0xff, m->hcap*sizeof(*m->val));
  for(j=0; j<old.hcap; j++){
    if( old.val[j]!=UINT32_MAX ){
      size_t h = slot_of(m, old.key[j]);
      m->key[h] = old.key[j];
      m->val[h] = old.val[j];
    }
  }
  free(old.key); free(old.val);
  return 0;
}

/* The filer's index of function id (added, named, when new); -1 on error
** (reported). */
static int64_t function_of(id_map *m, int32_t id, run_filer *rf,
                           elf_symbols *syms, const fnt_room *room){
  size_t h = slot_of(m, id);
  fnt_function f;
  int64_t k;
  if( m->val[h]!=UINT32_MAX ) return m->val[h];
  if( (m->n+1)*2 > m->hcap ){
    if( grow_table(m) ){ cli_error(CMD, "out of memory"); return -1; }
    h = slot_of(m, id);
  }
  f.symbol = elf_symbols_name(syms, id);
  f.local = elf_symbols_has(syms, id);
  if( f.symbol[0]=='#' ){
    /* "#id" lives in a scratch buffer: keep a copy (freed by the caller) */
    f.symbol = strdup(f.symbol);
    if( !f.symbol ){ cli_error(CMD, "out of memory"); return -1; }
  }
  f.stable_id = room_lookup(room, f.symbol);
  k = run_filer_function(rf, &f);
  if( k<0 ){
    if( !f.local ) free((char*)f.symbol);
    return -1;
  }
  m->key[h] = id;
  m->val[h] = (uint32_t)k;
  m->n++;
  return k;
}

/* The first pass's hooks: its progress, and each event for the binary's
** check (binary_check.h), so that a log of another program files nothing. */
typedef struct first_pass {
  progress *pg;
  binary_check *bc;       /* NULL with --force */
} first_pass;

static void read_tick(void *arg, uint64_t bytes){
  progress_update(((first_pass*)arg)->pg, bytes);
}

static void check_event(void *arg, int32_t func_id, uint8_t kind){
  binary_check_event(((first_pass*)arg)->bc, func_id, kind);
}

/* Events pulled from the log's merge at a time. */
#define BATCH 4096

int cmd_import_xray(int argc, char **argv){
  import_opts o;
  char err[1024];
  xray_log log;
  xray_stream *xs = 0;
  xray_hooks hooks;
  first_pass fp;
  binary_check bc;
  uint64_t bytes_before;
  xray_event *batch = 0;
  elf_symbols *syms = 0;
  fnt_room *room = 0;
  fnt_store *st = 0;
  id_map ids;
  run_filer rf;
  fnt_chunk run;
  char *run_id = 0, *bin_json = 0;
  const char *target, *warehouse;
  int64_t ts_micros;
  size_t mapped = 0, local = 0, i, got;
  double t0 = run_filer_clock();
  int rc, status = 1;
  progress pg;
  struct stat sb;

  memset(&log, 0, sizeof(log));
  memset(&ids, 0, sizeof(ids));
  memset(&rf, 0, sizeof(rf));
  pg.active = 0;
  rc = import_opts_parse(argc, argv, CMD, 1, "LOG", usage, &o);
  if( rc==1 ) return 0;
  if( rc ) return 2;

  /* 1. The whole log is read and checked before the warehouse is touched
  **    (pass 1 of the stream: counts, extremes, an index of its blocks). */
  if( o.room && room_load(o.room, &room, err, sizeof(err)) ){
    cli_error(CMD, "%s", err);
    goto done;
  }
  if( elf_symbols_load(o.binary, &syms, err, sizeof(err)) ){
    cli_error(CMD, "%s: %s", o.binary, err);
    goto done;
  }
  progress_begin(&pg, "reading log", stat(o.input, &sb)==0 ? (uint64_t)sb.st_size : 0);
  binary_check_init(&bc, syms);
  fp.pg = &pg;
  fp.bc = o.force ? 0 : &bc;
  hooks.tick = read_tick;
  hooks.event = o.force ? 0 : check_event;
  hooks.arg = &fp;
  if( xray_stream_open(o.input, &log, &xs, &hooks, err, sizeof(err)) ){
    progress_end(&pg);
    cli_error(CMD, "%s: %s", o.input, err);
    goto done;
  }
  if( !o.force && (binary_check_finish(&bc, o.input, o.binary, err, sizeof(err))
                || binary_check_name(o.input, o.binary, err, sizeof(err))) ){
    progress_end(&pg);
    cli_error(CMD, "%s", err);
    goto done;
  }
  if( o.run_id ){
    run_id = strdup(o.run_id);
  }else{
    const char *b = import_base_name(o.input);
    if( strncmp(b, "xray-log.", 9)==0 && b[9] ) b += 9;
    run_id = strdup(b);
  }
  target = o.target ? o.target : import_base_name(o.binary);
  bin_json = binaries_json(o.binary, elf_symbols_build_id(syms));
  batch = malloc(BATCH*sizeof(*batch));
  if( !run_id || !bin_json || !batch || grow_table(&ids) ){ cli_error(CMD, "out of memory"); goto done; }
  if( log.has_walltime ){
    ts_micros = log.walltime_micros;
  }else{
    if( stat(o.input, &sb)!=0 ){ cli_error(CMD, "%s: %s", o.input, strerror(errno)); goto done; }
    ts_micros = (int64_t)sb.st_mtim.tv_sec*1000000 + sb.st_mtim.tv_nsec/1000;
  }
  memset(&run, 0, sizeof(run));
  run.repo = o.repo ? o.repo : IMPORT_DEFAULT_REPO;
  run.commit = o.commit;
  run.run_id = run_id;
  run.ts_micros = ts_micros;
  run.target = target;
  run.source = log.fdr ? "xray-fdr" : "xray-basic";
  /* A run with no events is filed as one empty chunk, so that it shows. */
  run.chunks = log.n_events ? (int64_t)((log.n_events + (uint64_t)o.chunk_events - 1) / (uint64_t)o.chunk_events) : 1;
  run.total_events = (int64_t)log.n_events;
  run.duration_ns = log.n_events ? (int64_t)xray_log_ns(&log, log.last_tsc) : 0;
  run.truncated = 0;    /* a log found truncated is refused, never filed */
  run.threads = (int64_t)log.n_threads;
  run.binaries_json = bin_json;

  /* 2. File the chunks as pass 2 merges the events: one chunk in memory. */
  warehouse = cli_warehouse(0);    /* -w/--warehouse: a global option (cli.c) */
  st = cli_open(warehouse, 1);
  if( !st ) goto done;
  if( run_filer_begin(&rf, st, &run, (size_t)o.chunk_events, CMD, o.input, &pg) ) goto done;
  if( !o.force ){
    rc = binary_check_filed(st, run_id, o.binary, elf_symbols_build_id(syms), err, sizeof(err));
    if( rc ){ cli_error(CMD, "%s: %s", o.input, err); goto done; }
  }
  bytes_before = cli_disk_usage(warehouse);
  progress_stage(&pg, "filing events", (uint64_t)log.n_events);
  while( (got = xray_stream_read(xs, batch, BATCH))>0 ){
    for(i=0; i<got; i++){
      int64_t f = function_of(&ids, batch[i].func_id, &rf, syms, room);
      if( f<0 || run_filer_event(&rf, xray_log_ns(&log, batch[i].tsc), batch[i].tid,
                                 (uint32_t)f, batch[i].kind) ) goto done;
    }
  }
  if( xray_stream_error(xs) ){
    progress_end(&pg);
    cli_error(CMD, "%s: %s", o.input, xray_stream_error(xs));
    goto done;
  }
  if( run_filer_end(&rf) ) goto done;
  progress_end(&pg);
  for(i=0; i<rf.n_fn; i++){
    if( rf.fn[i].stable_id ) mapped++;
    if( rf.fn[i].local ) local++;
  }

  /* 3. The summary. */
  {
    double traced = log.n_events ? (double)xray_log_ns(&log, log.last_tsc)/1e9 : 0.0;
    if( cli_g.json && !cli_g.quiet ){
      cli_json_begin();
      cli_json_str("run_id", run_id);
      cli_json_str("source", run.source);
      cli_json_str("repo", run.repo);
      cli_json_str("target", target);
      cli_json_int("events", (long long)log.n_events);
      cli_json_int("threads", (long long)log.n_threads);
      cli_json_num("traced_s", traced);
      cli_json_int("functions", (long long)rf.n_fn);
      cli_json_int("functions_in_map", (long long)local);
      cli_json_int("functions_mapped", (long long)mapped);
      run_filer_report(&rf, warehouse, bytes_before, t0);
      cli_json_end();
    }else if( !cli_g.quiet ){
      printf("fnt import-xray: run '%s' (%s, repo %s, target %s)\n", run_id,
             run.source, run.repo, target);
      printf("  events     %zu on %zu thread%s, %.6f s traced\n", log.n_events,
             log.n_threads, log.n_threads==1 ? "" : "s", traced);
      printf("  functions  %zu (%zu in the binary's map), %zu mapped to a stable_id\n",
             rf.n_fn, local, mapped);
      run_filer_report(&rf, warehouse, bytes_before, t0);
    }
  }
  status = 0;

done:
  progress_end(&pg);
  for(i=0; i<rf.n_fn; i++){
    if( !rf.fn[i].local ) free((char*)rf.fn[i].symbol);   /* the "#id" copies */
  }
  run_filer_free(&rf);
  free(batch); free(run_id); free(bin_json);
  free(ids.key); free(ids.val);
  xray_stream_close(xs);
  elf_symbols_free(syms);
  room_free(room);
  fnt_close(st);
  return status;
}
