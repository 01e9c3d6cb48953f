/*
** import_xray.c -- `fnt import-xray`: files an LLVM XRay log as a run.
**
**   fnt import-xray --binary ./prog xray-log.prog.XbVh2a
**
** The whole log is read and checked before anything is filed (a malformed
** log files nothing); the binary names the function ids; the run is then
** cut into chunks of --chunk-events events in seq_no order, each filed by
** fnt_file_chunk() in one atomic, idempotent commit.  So an import that is
** killed midway and run again files every chunk exactly once, and a second
** import of the same log files nothing ("already filed").
**
** Test hook: FNT_TEST_KILL_AFTER_CHUNK=k makes the process _exit(137) right
** after chunk k has been filed, as a kill -9 there would.
*/
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "binary_check.h"
#include "elf_symbols.h"
#include "fnt.h"
#include "progress.h"
#include "room.h"
#include "xray_log.h"

#define CMD "import-xray"
#define DEFAULT_REPO "local"
#define DEFAULT_CHUNK_EVENTS 1000000

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
    "  --repo REPO         default \"" DEFAULT_REPO "\"\n"
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
    DEFAULT_CHUNK_EVENTS);
  cli_globals_help(out);
}

/* The options of one invocation. */
typedef struct opts {
  const char *repo, *commit, *run_id, *target, *room, *binary, *log;
  int64_t chunk_events;
  int force;
} opts;

/* Parses argv; returns 0 ok, 1 --help shown, 2 usage error (reported). */
static int parse_args(int argc, char **argv, opts *o){
  int i;
  memset(o, 0, sizeof(*o));
  o->chunk_events = DEFAULT_CHUNK_EVENTS;
  for(i=1; i<argc; i++){
    const char *a = argv[i], *val = 0, *eq;
    static const char *const with_value[] = {
      "--repo", "--commit", "--run-id", "--target", "--room",
      "--chunk-events", "--binary"
    };
    size_t k, nlen;
    if( strcmp(a, "--help")==0 || strcmp(a, "-h")==0 ){ usage(stdout); return 1; }
    if( strcmp(a, "--force")==0 ){ o->force = 1; continue; }
    if( a[0]!='-' || strcmp(a, "-")==0 ){
      if( o->log ){ cli_error(CMD, "more than one LOG given ('%s', '%s')", o->log, a); return 2; }
      o->log = a;
      continue;
    }
    eq = strchr(a, '=');
    nlen = eq ? (size_t)(eq - a) : strlen(a);
    for(k=0; k<sizeof(with_value)/sizeof(with_value[0]); k++){
      if( strlen(with_value[k])==nlen && strncmp(a, with_value[k], nlen)==0 ) break;
    }
    if( k==sizeof(with_value)/sizeof(with_value[0]) ){
      cli_error(CMD, "unknown option '%s' (see fnt import-xray --help)", a);
      return 2;
    }
    if( eq ) val = eq+1;
    else if( i+1<argc ) val = argv[++i];
    else { cli_error(CMD, "%s needs a value", a); return 2; }
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
          cli_error(CMD, "--chunk-events: '%s' is not a positive number", val);
          return 2;
        }
        o->chunk_events = n;
        break;
      }
      case 6: o->binary = val; break;
    }
  }
  if( !o->binary ){ cli_error(CMD, "--binary BIN is required (see --help)"); return 2; }
  if( !o->log ){ cli_error(CMD, "no LOG given (see --help)"); return 2; }
  if( o->repo && !o->repo[0] ){ cli_error(CMD, "--repo must not be empty"); return 2; }
  if( o->run_id && !o->run_id[0] ){ cli_error(CMD, "--run-id must not be empty"); return 2; }
  return 0;
}

static const char *base_name(const char *path){
  const char *s = strrchr(path, '/');
  return s ? s+1 : path;
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

static double now_s(void){
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec/1e9;
}

/* The run's functions: one per distinct xray function id its events use. */
typedef struct run_functions {
  fnt_function *fn;       /* symbol, stable_id (from the room), local */
  size_t n, cap;
  int32_t *key;           /* open addressing: func_id -> index */
  uint32_t *val;
  size_t hcap;
  uint32_t *of_event;     /* of_event[i]: the function of log event i */
} run_functions;

static size_t slot_of(const run_functions *rf, int32_t id){
  size_t h = ((uint32_t)id*2654435761u) & (rf->hcap-1);
  while( rf->val[h]!=UINT32_MAX && rf->key[h]!=id ) h = (h+1) & (rf->hcap-1);
  return h;
}

/* Doubles the id -> index table (ids outside the map can be many in a
** damaged log; they are named "#id" and still filed). */
static int grow_table(run_functions *rf){
  run_functions old = *rf;
  size_t j;
  rf->hcap = old.hcap ? old.hcap*2 : 64;
  rf->key = malloc(rf->hcap*sizeof(*rf->key));
  rf->val = malloc(rf->hcap*sizeof(*rf->val));
  if( !rf->key || !rf->val ){
    free(rf->key); free(rf->val);
    rf->key = old.key; rf->val = old.val; rf->hcap = old.hcap;
    return -1;
  }
  memset(rf->val, 0xff, rf->hcap*sizeof(*rf->val));
  for(j=0; j<old.hcap; j++){
    if( old.val[j]!=UINT32_MAX ){
      size_t h = slot_of(rf, old.key[j]);
      rf->key[h] = old.key[j];
      rf->val[h] = old.val[j];
    }
  }
  free(old.key); free(old.val);
  return 0;
}

static int run_functions_build(run_functions *rf, const xray_log *log,
                               elf_symbols *syms, const fnt_room *room){
  size_t i;
  memset(rf, 0, sizeof(*rf));
  rf->of_event = malloc((log->n_events ? log->n_events : 1)*sizeof(*rf->of_event));
  if( !rf->of_event || grow_table(rf) ) return -1;
  for(i=0; i<log->n_events; i++){
    int32_t id = log->events[i].func_id;
    size_t h = slot_of(rf, id);
    if( rf->val[h]==UINT32_MAX ){
      fnt_function *f;
      if( (rf->n+1)*2 > rf->hcap ){
        if( grow_table(rf) ) return -1;
        h = slot_of(rf, id);
      }
      if( rf->n==rf->cap ){
        size_t ncap = rf->cap ? rf->cap*2 : 64;
        fnt_function *nf = realloc(rf->fn, ncap*sizeof(*nf));
        if( !nf ) return -1;
        rf->fn = nf; rf->cap = ncap;
      }
      f = &rf->fn[rf->n];
      f->symbol = elf_symbols_name(syms, id);
      if( f->symbol[0]=='#' ){
        /* "#id" lives in a scratch buffer: keep a copy */
        f->symbol = strdup(f->symbol);
        if( !f->symbol ) return -1;
      }
      f->stable_id = room_lookup(room, f->symbol);
      f->local = elf_symbols_has(syms, id);
      rf->key[h] = id;
      rf->val[h] = (uint32_t)rf->n++;
    }
    rf->of_event[i] = rf->val[h];
  }
  return 0;
}

static void run_functions_free(run_functions *rf){
  size_t i;
  for(i=0; i<rf->n; i++){
    if( !rf->fn[i].local ) free((char*)rf->fn[i].symbol);
  }
  free(rf->fn); free(rf->key); free(rf->val); free(rf->of_event);
}

/* A re-import must cut the run the same way, or chunks already filed and
** chunks filed now would overlap (idempotency is per (run_id, chunk)).
** Returns 0 when the run is absent or filed with the same chunks and
** total_events; else reports the difference and returns -1. */
static int check_same_cut(fnt_store *st, const char *log_path, const char *run_id,
                          int64_t chunks, int64_t total){
  fnt_snapshot *snap;
  fnt_scan *sc;
  int rc = cli_run_scan(st, FNT_TABLE_RUNS, run_id,
                        (1u<<FNT_RUN_CHUNKS) | (1u<<FNT_RUN_TOTAL_EVENTS), &snap, &sc);
  int status = 0;
  while( rc==FNT_OK && (rc = fnt_scan_next(sc))==1 ){
    int64_t c = fnt_scan_int(sc, FNT_RUN_CHUNKS), n = fnt_scan_int(sc, FNT_RUN_TOTAL_EVENTS);
    if( c!=chunks || n!=total ){
      cli_error(CMD, "%s: run '%s' is already filed as %lld chunk(s) of %lld events in all; "
                "this import makes %lld chunk(s) of %lld: use the same log and "
                "--chunk-events, or another --run-id", log_path, run_id, (long long)c,
                (long long)n, (long long)chunks, (long long)total);
      status = -1;
      break;
    }
    rc = FNT_OK;
  }
  if( rc<0 ){
    const char *m = fnt_errmsg(st);
    cli_error(CMD, "%s: reading the runs of the warehouse: %s", log_path,
              m && m[0] ? m : fnt_strerror(rc));
    status = -1;
  }
  fnt_scan_close(sc);
  fnt_snapshot_release(snap);
  return status;
}

int cmd_import_xray(int argc, char **argv){
  opts o;
  char err[1024];
  xray_log log;
  elf_symbols *syms = 0;
  fnt_room *room = 0;
  fnt_store *st = 0;
  run_functions rf;
  fnt_event *ev = 0;
  fnt_function *cfn = 0;
  uint32_t *remap = 0;
  char *run_id = 0, *bin_json = 0;
  const char *target, *warehouse, *kill_env;
  int64_t chunks, k, ts_micros, kill_after = -1;
  int64_t filed = 0, already = 0;
  uint64_t bytes_before = 0;
  size_t mapped = 0, local = 0, i;
  double t0 = now_s();
  int rc, status = 1;
  progress pg;

  memset(&log, 0, sizeof(log));
  memset(&rf, 0, sizeof(rf));
  pg.active = 0;
  rc = parse_args(argc, argv, &o);
  if( rc==1 ) return 0;
  if( rc ) return 2;
  kill_env = getenv("FNT_TEST_KILL_AFTER_CHUNK");
  if( kill_env && kill_env[0] ){
    char *end;
    kill_after = strtoll(kill_env, &end, 10);
    if( *end || kill_after<0 ){
      cli_error(CMD, "FNT_TEST_KILL_AFTER_CHUNK: '%s' is not a chunk number", kill_env);
      return 2;
    }
  }

  /* 1. Everything is read and checked before the warehouse is touched. */
  if( o.room && room_load(o.room, &room, err, sizeof(err)) ){
    cli_error(CMD, "%s", err);
    goto done;
  }
  if( elf_symbols_load(o.binary, &syms, err, sizeof(err)) ){
    cli_error(CMD, "%s: %s", o.binary, err);
    goto done;
  }
  progress_begin(&pg, "reading log", 0);
  if( xray_log_read(o.log, &log, err, sizeof(err)) ){
    progress_end(&pg);
    cli_error(CMD, "%s: %s", o.log, err);
    goto done;
  }
  if( !o.force ){
    binary_check bc;
    binary_check_init(&bc, syms);
    for(i=0; i<log.n_events; i++) binary_check_event(&bc, log.events[i].func_id, log.events[i].kind);
    if( binary_check_finish(&bc, o.log, o.binary, err, sizeof(err))
     || binary_check_name(o.log, o.binary, err, sizeof(err)) ){
      progress_end(&pg);
      cli_error(CMD, "%s", err);
      goto done;
    }
  }
  if( run_functions_build(&rf, &log, syms, room) ){
    progress_end(&pg);
    cli_error(CMD, "%s: out of memory naming functions", o.log);
    goto done;
  }
  for(i=0; i<rf.n; i++){
    if( rf.fn[i].stable_id ) mapped++;
    if( rf.fn[i].local ) local++;
  }
  if( o.run_id ){
    run_id = strdup(o.run_id);
  }else{
    const char *b = base_name(o.log);
    if( strncmp(b, "xray-log.", 9)==0 && b[9] ) b += 9;
    run_id = strdup(b);
  }
  target = o.target ? o.target : base_name(o.binary);
  bin_json = binaries_json(o.binary, elf_symbols_build_id(syms));
  if( !run_id || !bin_json ){ cli_error(CMD, "out of memory"); goto done; }
  if( log.has_walltime ){
    ts_micros = log.walltime_micros;
  }else{
    struct stat sb;
    if( stat(o.log, &sb)!=0 ){ cli_error(CMD, "%s: %s", o.log, strerror(errno)); goto done; }
    ts_micros = (int64_t)sb.st_mtim.tv_sec*1000000 + sb.st_mtim.tv_nsec/1000;
  }
  /* A run with no events is filed as one empty chunk, so that it shows. */
  chunks = log.n_events ? (int64_t)((log.n_events + (uint64_t)o.chunk_events - 1) / (uint64_t)o.chunk_events) : 1;

  /* 2. File the chunks. */
  warehouse = cli_warehouse(0);    /* -w/--warehouse: a global option (cli.c) */
  st = cli_open(warehouse);
  if( !st ) goto done;
  if( cli_check_repo(st, CMD, FNT_TABLE_RUNS, run_id, o.repo ? o.repo : DEFAULT_REPO) ) goto done;
  if( check_same_cut(st, o.log, run_id, chunks, (int64_t)log.n_events) ) goto done;
  if( !o.force ){
    rc = binary_check_filed(st, run_id, o.binary, elf_symbols_build_id(syms), err, sizeof(err));
    if( rc ){ cli_error(CMD, "%s: %s", o.log, err); goto done; }
  }
  {
    size_t per = log.n_events < (uint64_t)o.chunk_events ? log.n_events : (size_t)o.chunk_events;
    ev = malloc((per ? per : 1)*sizeof(*ev));
    cfn = malloc((rf.n ? rf.n : 1)*sizeof(*cfn));
    remap = malloc((rf.n ? rf.n : 1)*sizeof(*remap));
    if( !ev || !cfn || !remap ){ cli_error(CMD, "out of memory"); goto done; }
  }
  bytes_before = cli_disk_usage(warehouse);
  progress_stage(&pg, "filing events", (uint64_t)log.n_events);
  for(k=0; k<chunks; k++){
    size_t lo = (size_t)k * (size_t)o.chunk_events, hi = lo + (size_t)o.chunk_events, n_fn = 0;
    fnt_chunk c;
    if( hi>log.n_events ) hi = log.n_events;
    if( lo>hi ) lo = hi;
    memset(remap, 0xff, (rf.n ? rf.n : 1)*sizeof(*remap));
    for(i=lo; i<hi; i++){
      uint32_t f = rf.of_event[i];
      if( remap[f]==UINT32_MAX ){
        remap[f] = (uint32_t)n_fn;
        cfn[n_fn++] = rf.fn[f];
      }
      ev[i-lo].seq_no = i;
      ev[i-lo].t_ns = xray_log_ns(&log, log.events[i].tsc);
      ev[i-lo].thread = log.events[i].tid;
      ev[i-lo].function = remap[f];
      ev[i-lo].kind = log.events[i].kind;
    }
    memset(&c, 0, sizeof(c));
    c.repo = o.repo ? o.repo : DEFAULT_REPO;
    c.commit = o.commit;
    c.run_id = run_id;
    c.ts_micros = ts_micros;
    c.target = target;
    c.source = log.fdr ? "xray-fdr" : "xray-basic";
    c.chunk = k;
    c.chunks = chunks;
    c.total_events = (int64_t)log.n_events;
    c.duration_ns = log.n_events ? (int64_t)xray_log_ns(&log, log.last_tsc) : 0;
    c.truncated = 0;    /* a log found truncated is refused, never filed */
    c.threads = (int64_t)log.n_threads;
    c.binaries_json = bin_json;
    c.functions = cfn;
    c.n_functions = n_fn;
    c.events = ev;
    c.n_events = hi - lo;
    rc = fnt_file_chunk(st, &c);
    if( rc<0 ){
      const char *m = fnt_errmsg(st);
      progress_end(&pg);
      cli_error(CMD, "%s: chunk %lld of %lld: %s", o.log, (long long)k, (long long)chunks,
                m && m[0] ? m : fnt_strerror(rc));
      goto done;
    }
    if( rc==1 ) filed++; else already++;
    progress_update(&pg, (uint64_t)hi);
    if( k==kill_after ){
      fflush(stdout);
      _exit(137);
    }
  }
  progress_end(&pg);

  /* 3. The summary. */
  {
    double secs = now_s() - t0;
    uint64_t bytes_after = cli_disk_usage(warehouse);
    int64_t grew = (int64_t)(bytes_after - bytes_before);
    const char *source = log.fdr ? "xray-fdr" : "xray-basic";
    const char *repo = o.repo ? o.repo : DEFAULT_REPO;
    double traced = log.n_events ? (double)xray_log_ns(&log, log.last_tsc)/1e9 : 0.0;
    if( cli_g.quiet ){
      /* -q: the exit status says it */
    }else if( cli_g.json ){
      cli_json_begin();
      cli_json_str("run_id", run_id);
      cli_json_str("source", source);
      cli_json_str("repo", repo);
      cli_json_str("target", target);
      cli_json_int("events", (long long)log.n_events);
      cli_json_int("threads", (long long)log.n_threads);
      cli_json_num("traced_s", traced);
      cli_json_int("functions", (long long)rf.n);
      cli_json_int("functions_in_map", (long long)local);
      cli_json_int("functions_mapped", (long long)mapped);
      cli_json_int("chunks", (long long)chunks);
      cli_json_int("chunks_filed", (long long)filed);
      cli_json_int("chunks_already_filed", (long long)already);
      cli_json_str("warehouse", warehouse);
      cli_json_int("import_bytes", (long long)grew);
      cli_json_int("warehouse_bytes", (long long)bytes_after);
      cli_json_num("seconds", secs);
      cli_json_end();
    }else{
      printf("fnt import-xray: run '%s' (%s, repo %s, target %s)\n", run_id, source, repo, target);
      printf("  events     %zu on %zu thread%s, %.6f s traced\n", log.n_events,
             log.n_threads, log.n_threads==1 ? "" : "s", traced);
      printf("  functions  %zu (%zu in the binary's map), %zu mapped to a stable_id\n",
             rf.n, local, mapped);
      printf("  chunks     %lld: %lld filed, %lld already filed\n", (long long)chunks,
             (long long)filed, (long long)already);
      printf("  warehouse  %s: grew by %lld bytes on disk during this import (%llu in all)\n",
             warehouse, (long long)grew, (unsigned long long)bytes_after);
      printf("  time       %.2f s (%.0f events/s)\n", secs,
             secs>0 ? (double)log.n_events/secs : 0.0);
    }
  }
  status = 0;

done:
  progress_end(&pg);
  free(ev); free(cfn); free(remap); free(run_id); free(bin_json);
  run_functions_free(&rf);
  xray_log_free(&log);
  elf_symbols_free(syms);
  room_free(room);
  fnt_close(st);
  return status;
}
