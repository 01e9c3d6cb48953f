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
#include <ftw.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

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
    "  --warehouse DIR     default $FNT_WAREHOUSE, else ./fnt-warehouse\n"
    "  --repo REPO         default \"" DEFAULT_REPO "\"\n"
    "  --commit SHA        default none (NULL)\n"
    "  --run-id ID         default LOG's file name without a leading \"xray-log.\"\n"
    "  --target NAME       default BIN's file name\n"
    "  --room FILE         TSV of symbol<TAB>stable_id lines naming functions\n"
    "  --chunk-events N    events a chunk, default %d\n"
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
}

/* The options of one invocation. */
typedef struct opts {
  const char *warehouse, *repo, *commit, *run_id, *target, *room, *binary, *log;
  int64_t chunk_events;
} opts;

/* Parses argv; returns 0 ok, 1 --help shown, 2 usage error (reported). */
static int parse_args(int argc, char **argv, opts *o){
  int i;
  memset(o, 0, sizeof(*o));
  o->chunk_events = DEFAULT_CHUNK_EVENTS;
  for(i=1; i<argc; i++){
    const char *a = argv[i], *val = 0, *eq;
    static const char *const with_value[] = {
      "--warehouse", "--repo", "--commit", "--run-id", "--target", "--room",
      "--chunk-events", "--binary"
    };
    size_t k, nlen;
    if( strcmp(a, "--help")==0 || strcmp(a, "-h")==0 ){ usage(stdout); return 1; }
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
      case 0: o->warehouse = val; break;
      case 1: o->repo = val; break;
      case 2: o->commit = val; break;
      case 3: o->run_id = val; break;
      case 4: o->target = val; break;
      case 5: o->room = val; break;
      case 6: {
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
      case 7: o->binary = val; break;
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

static uint64_t du_bytes;
static int du_add(const char *path, const struct stat *sb, int flag, struct FTW *ftw){
  (void)path; (void)ftw;
  if( flag==FTW_F ) du_bytes += (uint64_t)sb->st_blocks * 512u;
  return 0;
}

/* Bytes on disk of the warehouse (like du): allocated blocks, all files. */
static uint64_t disk_usage(const char *dir){
  du_bytes = 0;
  nftw(dir, du_add, 16, FTW_PHYS);
  return du_bytes;
}

static double now_s(void){
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec/1e9;
}

/* The run's functions: one per distinct xray function id its events use,
** numbered in order of first appearance as the events stream by. */
typedef struct run_functions {
  fnt_function *fn;       /* symbol, stable_id (from the room), local */
  size_t n, cap;
  int32_t *key;           /* open addressing: func_id -> index */
  uint32_t *val;
  size_t hcap;
  elf_symbols *syms;
  const fnt_room *room;
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

static int run_functions_init(run_functions *rf, elf_symbols *syms, const fnt_room *room){
  memset(rf, 0, sizeof(*rf));
  rf->syms = syms;
  rf->room = room;
  return grow_table(rf);
}

/* The index of function id in rf (added, named, when new); -1 out of memory. */
static int64_t run_function(run_functions *rf, int32_t id){
  size_t h = slot_of(rf, id);
  fnt_function *f;
  if( rf->val[h]!=UINT32_MAX ) return rf->val[h];
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
  f->symbol = elf_symbols_name(rf->syms, id);
  f->local = elf_symbols_has(rf->syms, id);
  if( f->symbol[0]=='#' ){
    /* "#id" lives in a scratch buffer: keep a copy */
    f->symbol = strdup(f->symbol);
    if( !f->symbol ) return -1;
  }
  f->stable_id = room_lookup(rf->room, f->symbol);
  rf->key[h] = id;
  rf->val[h] = (uint32_t)rf->n;
  return (int64_t)rf->n++;
}

static void run_functions_free(run_functions *rf){
  size_t i;
  for(i=0; i<rf->n; i++){
    if( !rf->fn[i].local ) free((char*)rf->fn[i].symbol);
  }
  free(rf->fn); free(rf->key); free(rf->val);
}

/* A re-import must cut the run the same way, or chunks already filed and
** chunks filed now would overlap (idempotency is per (run_id, chunk)).
** Returns 0 when the run is absent or filed with the same chunks and
** total_events; else reports the difference and returns -1. */
static int check_same_cut(fnt_store *st, const char *log_path, const char *run_id,
                          int64_t chunks, int64_t total){
  fnt_snapshot *snap = 0;
  fnt_scan *sc = 0;
  fnt_predicate p;
  const char *ids[1];
  int rc, status = 0;
  rc = fnt_snapshot_current(st, &snap);
  if( rc==FNT_OK ){
    fnt_predicate_init(&p);
    ids[0] = run_id;
    p.run_ids = ids;
    p.n_run_ids = 1;
    p.columns = (1u<<FNT_RUN_CHUNKS) | (1u<<FNT_RUN_TOTAL_EVENTS);
    rc = fnt_scan_open(snap, FNT_TABLE_RUNS, &p, &sc);
  }
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

/* The first pass's progress: bytes of the log checked. */
static void read_tick(void *arg, uint64_t bytes){
  progress_update((progress*)arg, bytes);
}

/* Events pulled from the log's merge at a time, converted into the chunk. */
#define BATCH 4096

int cmd_import_xray(int argc, char **argv){
  opts o;
  char err[512];
  xray_log log;
  xray_stream *xs = 0;
  xray_event *batch = 0;
  elf_symbols *syms = 0;
  fnt_room *room = 0;
  fnt_store *st = 0;
  run_functions rf;
  fnt_event *ev = 0;
  fnt_function *cfn = 0;
  uint32_t *remap = 0;
  size_t cap_fn = 0;
  char *run_id = 0, *bin_json = 0;
  const char *target, *warehouse, *kill_env;
  int64_t chunks, k, ts_micros, kill_after = -1;
  int64_t filed = 0, already = 0;
  uint64_t seq = 0;
  size_t mapped = 0, local = 0, i;
  double t0 = now_s();
  int rc, status = 1;
  progress pg;
  struct stat sb;

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
  progress_begin(&pg, "reading log", stat(o.log, &sb)==0 ? (uint64_t)sb.st_size : 0);
  if( xray_stream_open(o.log, &log, &xs, read_tick, &pg, err, sizeof(err)) ){
    progress_end(&pg);
    cli_error(CMD, "%s: %s", o.log, err);
    goto done;
  }
  if( run_functions_init(&rf, syms, room) ){
    progress_end(&pg);
    cli_error(CMD, "%s: out of memory naming functions", o.log);
    goto done;
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
    if( stat(o.log, &sb)!=0 ){ cli_error(CMD, "%s: %s", o.log, strerror(errno)); goto done; }
    ts_micros = (int64_t)sb.st_mtim.tv_sec*1000000 + sb.st_mtim.tv_nsec/1000;
  }
  /* A run with no events is filed as one empty chunk, so that it shows. */
  chunks = log.n_events ? (int64_t)((log.n_events + (uint64_t)o.chunk_events - 1) / (uint64_t)o.chunk_events) : 1;

  /* 2. File the chunks as pass 2 merges the events: one chunk in memory. */
  warehouse = cli_warehouse(o.warehouse);
  st = cli_open(warehouse);
  if( !st ) goto done;
  if( check_same_cut(st, o.log, run_id, chunks, (int64_t)log.n_events) ) goto done;
  {
    size_t per = log.n_events < (uint64_t)o.chunk_events ? log.n_events : (size_t)o.chunk_events;
    ev = malloc((per ? per : 1)*sizeof(*ev));
    batch = malloc(BATCH*sizeof(*batch));
    if( !ev || !batch ){ cli_error(CMD, "out of memory"); goto done; }
  }
  progress_stage(&pg, "filing events", (uint64_t)log.n_events);
  for(k=0; k<chunks; k++){
    size_t n_ev = 0, n_fn = 0, want = (size_t)o.chunk_events, got;
    fnt_chunk c;
    if( remap ) memset(remap, 0xff, cap_fn*sizeof(*remap));
    while( n_ev<want && (got = xray_stream_read(xs, batch, want-n_ev < BATCH ? want-n_ev : BATCH))>0 ){
      for(i=0; i<got; i++){
        int64_t f = run_function(&rf, batch[i].func_id);
        fnt_event *e = &ev[n_ev++];
        if( f<0 ){ cli_error(CMD, "%s: out of memory naming functions", o.log); goto done; }
        if( rf.n>cap_fn ){
          /* the chunk's function table and remap follow the run's */
          size_t ncap = rf.cap;
          uint32_t *nr = realloc(remap, ncap*sizeof(*nr));
          fnt_function *nf = nr ? realloc(cfn, ncap*sizeof(*nf)) : 0;
          if( nr ) remap = nr;
          if( !nr || !nf ){ cli_error(CMD, "out of memory"); goto done; }
          cfn = nf;
          memset(remap + cap_fn, 0xff, (ncap-cap_fn)*sizeof(*remap));
          cap_fn = ncap;
        }
        if( remap[f]==UINT32_MAX ){
          remap[f] = (uint32_t)n_fn;
          cfn[n_fn++] = rf.fn[f];
        }
        e->seq_no = seq++;
        e->t_ns = xray_log_ns(&log, batch[i].tsc);
        e->thread = batch[i].tid;
        e->function = remap[f];
        e->kind = batch[i].kind;
      }
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
    c.n_events = n_ev;
    rc = fnt_file_chunk(st, &c);
    if( rc<0 ){
      const char *m = fnt_errmsg(st);
      progress_end(&pg);
      cli_error(CMD, "%s: chunk %lld of %lld: %s", o.log, (long long)k, (long long)chunks,
                m && m[0] ? m : fnt_strerror(rc));
      goto done;
    }
    if( rc==1 ) filed++; else already++;
    progress_update(&pg, seq);
    if( k==kill_after ){
      fflush(stdout);
      _exit(137);
    }
  }
  progress_end(&pg);
  for(i=0; i<rf.n; i++){
    if( rf.fn[i].stable_id ) mapped++;
    if( rf.fn[i].local ) local++;
  }

  /* 3. The summary. */
  {
    double secs = now_s() - t0;
    printf("fnt import-xray: run '%s' (%s, repo %s, target %s)\n", run_id,
           log.fdr ? "xray-fdr" : "xray-basic", o.repo ? o.repo : DEFAULT_REPO, target);
    printf("  events     %zu on %zu thread%s, %.6f s traced\n", log.n_events,
           log.n_threads, log.n_threads==1 ? "" : "s",
           log.n_events ? (double)xray_log_ns(&log, log.last_tsc)/1e9 : 0.0);
    printf("  functions  %zu (%zu in the binary's map), %zu mapped to a stable_id\n",
           rf.n, local, mapped);
    printf("  chunks     %lld: %lld filed, %lld already filed\n", (long long)chunks,
           (long long)filed, (long long)already);
    printf("  warehouse  %s: %llu bytes on disk\n", warehouse,
           (unsigned long long)disk_usage(warehouse));
    printf("  time       %.2f s (%.0f events/s)\n", secs,
           secs>0 ? (double)log.n_events/secs : 0.0);
  }
  status = 0;

done:
  progress_end(&pg);
  free(ev); free(batch); free(cfn); free(remap); free(run_id); free(bin_json);
  run_functions_free(&rf);
  xray_stream_close(xs);
  elf_symbols_free(syms);
  room_free(room);
  fnt_close(st);
  return status;
}
