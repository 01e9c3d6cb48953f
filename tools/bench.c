/*
** bench.c -- `fnt bench`: fntrace against the plain SQLite schemas a user
** would otherwise pick, side by side on one synthetic trace (synth.h).
**
** Systems: fntrace through the C API (fnt_file_chunk of fnt_store.h, scans,
** fnt_heat_compute), fntrace through SQL (fnt_file_chunk(json) bound as
** text, the virtual tables, fnt_heat), a plain SQLite table with the nine
** columns of fn_trace_events and indexes on (run_id, seq_no) and
** (run_id, t_ns), and a normalized SQLite schema (runs and functions in
** their own tables).  Each system files the run in a forked child, so that
** the child's ru_maxrss is that system's peak memory, then answers the
** queries in another child, so no system warms the next one's heap.  Only
** the filing calls are timed, not the generation of events or JSON text.
** Every system's answers are cross-checked (window row counts, scan row
** counts, heat totals): a figure for wrong rows would be worthless.
** Last, fnt_compare over two commits of many runs each (the same synthetic
** run with its clock stretched a little differently per run), timed in a
** fresh process.
*/
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <stdarg.h>
#include <getopt.h>
#include <limits.h>
#include <sqlite3.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <xxhash.h>

#include "fnt.h"
#include "synth.h"

#define CHECKPOINT 100           /* t_ns is remembered every this many events */

enum { SYS_FNT_C, SYS_FNT_SQL, SYS_PLAIN, SYS_NORM, NSYS };
static const char *const sysName[NSYS] = {
  "fntrace C API", "fntrace SQL", "plain SQLite", "normalized SQLite"
};
static const char *const sysDir[NSYS] = { "wh-c", "wh-sql", "plain", "normalized" };

typedef struct bench_opts {
  synth_config sc;
  const char *dir;
  int keep, only_fnt, only_sqlite, skip_snapshots;
  const char *json;            /* NULL: none; "-": stdout; else a file */
  uint64_t chunk_events;
  int windows;
  uint64_t window_events;
  int snap_runs, snap_chunks;
  int snap_ev_min, snap_ev_max;  /* events of each snapshot chunk */
  int skip_compare, cmp_runs;  /* cmp_runs: runs of each commit */
  uint64_t cmp_events;         /* events of each of those runs */
} bench_opts;

/* What a reading loop measured: window latencies and the full scan. */
typedef struct sql_reads {
  double p50, p99;             /* window latency, s */
  double scan_s;
} sql_reads;

/* What a child sends back through its pipe (plain data only). */
typedef struct sys_result {
  int ok;
  double file_s;
  uint64_t json_bytes;
  double win_p50, win_p99;
  uint64_t win_rows_bad;       /* windows that did not return window_events rows */
  double scan_s;
  uint64_t scan_rows;
  double heat_s;
  uint64_t heat_rows;
  int64_t heat_calls, heat_self;
  /* Calls (SPEC §7); calls_ran: this system answered them. */
  int calls_ran;
  double cwin_p50, cwin_p99, stack_p50, stack_p99, account_s, build_s;
  uint64_t cwin_rows, stack_rows;        /* rows, summed over the queries */
  uint64_t cwin_hash, stack_hash;        /* rows of query i, weighted by i+1 */
  uint64_t acc_rows;
  int64_t acc_calls, acc_sum, acc_p50;   /* totals over the account's keys */
  sql_reads nomutex;           /* SQL systems: the reads on a NOMUTEX connection */
  sql_reads floor[2];          /* plain's child: the floor, serialized and NOMUTEX */
  /* readsInTurns: fntrace's SQL, plain's and the floor's reads, serialized
  ** and NOMUTEX; the rows each got wrong and its scan's rows */
  sql_reads turns[2][3];
  uint64_t turn_rows_bad[3], turn_scan_rows[3];
  double tl_p50, tl_p99;       /* fnt_timeline, 2,000 buckets, every zoom */
  uint64_t tl_rows, tl_rows_max;
  double tl_floor;             /* timelineFloor's, seconds */
  /* exports (chrome, speedscope) and flame graphs: exportsBench, flameBench */
  int exp_ran;
  double exp_s[4], exp_floor_s[4];       /* fnt export; the floor: its bytes copied */
  uint64_t exp_bytes[4];
  long exp_rss_kb[4];                    /* the export's peak RSS */
  double flame_run_s, flame_win_s;       /* medians */
  uint64_t flame_run_stacks;             /* rows of the run's flame */
  uint64_t flame_win_calls;              /* calls of a window, on average */
} sys_result;

typedef struct sys_figures {
  int ran;
  sys_result r;
  long file_rss_kb;
  double disk_bytes;
  double disk_events, disk_calls;   /* fntrace: data/fn_trace_events, data/fn_trace_calls */
} sys_figures;

typedef struct snap_figures {
  int ran;
  double build_s;
  double sql_ms, c_ms;
  uint64_t sql_rows, c_rows;
  /* metadata (issue: long-lived handles): filing rate over the first and
  ** the last 100 snapshots (chunks/s), metadata and data bytes on disk, a
  ** reader's RSS after following every snapshot, expire and check */
  double rate_first, rate_last;
  double cpu_first_ms, cpu_last_ms;         /* the filing process's CPU a commit */
  double meta_bytes, data_bytes;            /* disk blocks */
  double meta_file_bytes, data_file_bytes;  /* file sizes */
  long follow_rss_kb;
  double follow_s, expire_s, check_s;
  long expire_rss_kb;
  /* then every file aged past expire's grace and all but the newest
  ** snapshot expired: what the warehouse keeps for its current state */
  int expired_all;                          /* 0: aging or expiring failed */
  double expire_all_s;
  long expire_all_rss_kb;
  uint64_t expire_all_files;
  double meta_file_bytes_now, data_file_bytes_now;
} snap_figures;

typedef struct cmp_figures {
  int ran;
  double build_s;              /* filing the runs */
  double s;                    /* fnt_compare_compute, in a fresh process */
  uint64_t rows;
} cmp_figures;

typedef struct bench {
  bench_opts o;
  char root[PATH_MAX];
  char path[NSYS][PATH_MAX + 32];
  char snapPath[PATH_MAX + 32];
  char cmpPath[PATH_MAX + 32];
  char ext[PATH_MAX + 16];
  char runId[64];
  uint64_t *cp;                /* cp[i]: t_ns of event i*CHECKPOINT */
  uint32_t *cpThread;          /* cpThread[i]: the thread of that event */
  uint64_t *starts;            /* first seq_no of each window */
  synth_stats ss;
  long gen_rss_kb;
  double load[2];              /* 1-minute load average at start and end */
  sys_figures sys[NSYS];
  snap_figures snap;
  cmp_figures cmp;
  int plainCalls;              /* plain/calls.db was built */
  double plainCallsBuild_s;
} bench;

static double now(void){
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec*1e-9;
}

static void progress(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void progress(const char *fmt, ...){
  va_list ap;
  if( cli_g.quiet ) return;
  fprintf(stderr, "bench: ");
  va_start(ap, fmt);
  vfprintf(stderr, fmt, ap);
  va_end(ap);
  fputc('\n', stderr);
}

/* ------------------------------------------------------------------------
** Children.  fn runs in a forked child and fills a sys_result, which comes
** back through a pipe; *rss_kb gets the child's peak resident set.
*/

/* n bytes from (to) fd, whatever the pipe hands over at a time.
** @return 0, or -1 (an error, or the end before n). */
static int readFull(int fd, void *p, size_t n){
  while( n>0 ){
    ssize_t r = read(fd, p, n);
    if( r<=0 ) return -1;
    p = (char*)p + r;
    n -= (size_t)r;
  }
  return 0;
}
static int writeFull(int fd, const void *p, size_t n){
  while( n>0 ){
    ssize_t w = write(fd, p, n);
    if( w<=0 ) return -1;
    p = (const char*)p + w;
    n -= (size_t)w;
  }
  return 0;
}

static int inChild(int (*fn)(bench *, int, sys_result *), bench *b, int sys,
                   sys_result *out, long *rss_kb){
  int fd[2], status;
  pid_t pid;
  struct rusage ru;
  int got;
  if( pipe(fd) ){ progress("pipe: %s", strerror(errno)); return 1; }
  fflush(stdout);
  fflush(stderr);
  pid = fork();
  if( pid<0 ){ progress("fork: %s", strerror(errno)); return 1; }
  if( pid==0 ){
    sys_result r;
    close(fd[0]);
    memset(&r, 0, sizeof(r));
    r.ok = fn(b, sys, &r)==0;
    if( writeFull(fd[1], &r, sizeof(r)) ) _exit(1);
    fflush(stderr);
    _exit(r.ok ? 0 : 1);
  }
  close(fd[1]);
  got = readFull(fd[0], out, sizeof(*out))==0;
  close(fd[0]);
  if( wait4(pid, &status, 0, &ru)<0 ){ progress("wait4: %s", strerror(errno)); return 1; }
  if( rss_kb ) *rss_kb = ru.ru_maxrss;
  if( !got || !WIFEXITED(status) || WEXITSTATUS(status)!=0 || !out->ok ){
    progress("%s: the child failed (status %d)", sys>=0 ? sysName[sys] : "snapshots", status);
    return 1;
  }
  return 0;
}

/* ------------------------------------------------------------------------
** The launcher: commands whose peak memory the bench reports are started
** by a process forked when the bench begins, while it is small.  A child
** forked later from the bench would start with the bench's pages, and
** its ru_maxrss would keep them (exec keeps the high-water mark).
*/
static struct { pid_t pid; int req, resp; } launcher = { -1, -1, -1 };

/* The launcher's loop: an argv (length, then its NUL-ended strings) in,
** the command's exit status and peak RSS (KiB) out. */
static void launcherServe(int req, int resp){
  static char buf[8192];
  char *argv[64];
  uint32_t len;
  while( readFull(req, &len, sizeof(len))==0 && len<sizeof(buf) ){
    size_t argc = 0, i;
    long out[2] = { -1, 0 };
    struct rusage ru;
    int status;
    pid_t pid;
    if( readFull(req, buf, len) ) _exit(1);
    for(i=0; i<len && argc<63; i += strlen(buf+i)+1) argv[argc++] = buf+i;
    argv[argc] = 0;
    pid = fork();
    if( pid==0 ){
      execv("/proc/self/exe", argv);
      _exit(127);
    }
    if( pid>0 && wait4(pid, &status, 0, &ru)==pid ){
      out[0] = WIFEXITED(status) ? WEXITSTATUS(status) : 128;
      out[1] = ru.ru_maxrss;
    }
    if( writeFull(resp, out, sizeof(out)) ) _exit(1);
  }
  _exit(0);
}

static void launcherStart(void){
  int a[2], c[2];
  if( pipe(a) ) return;
  if( pipe(c) ){ close(a[0]); close(a[1]); return; }
  fflush(stdout);
  fflush(stderr);
  launcher.pid = fork();
  if( launcher.pid==0 ){
    close(a[1]);
    close(c[0]);
    launcherServe(a[0], c[1]);
  }
  close(a[0]);
  close(c[1]);
  launcher.req = a[1];
  launcher.resp = c[0];
  if( launcher.pid<0 ){ close(a[1]); close(c[0]); launcher.req = launcher.resp = -1; }
}

static void launcherStop(void){
  if( launcher.pid<=0 ) return;
  close(launcher.req);
  close(launcher.resp);
  waitpid(launcher.pid, 0, 0);
  launcher.pid = -1;
}

/* Runs fnt with argv (NULL-ended) through the launcher.  @return its exit
** status (-1: not run), its peak RSS in *rss_kb. */
static int launcherRun(const char *const *argv, long *rss_kb){
  char buf[8192];
  uint32_t len = 0;
  long out[2];
  size_t i;
  if( launcher.pid<=0 ) return -1;
  for(i=0; argv[i]; i++){
    size_t n = strlen(argv[i])+1;
    if( len+n+sizeof(len)>sizeof(buf) ) return -1;
    memcpy(buf+sizeof(len)+len, argv[i], n);
    len += (uint32_t)n;
  }
  memcpy(buf, &len, sizeof(len));
  if( writeFull(launcher.req, buf, sizeof(len)+len)
   || readFull(launcher.resp, out, sizeof(out)) ) return -1;
  *rss_kb = out[1];
  return (int)out[0];
}

/* ------------------------------------------------------------------------
** SQLite helpers.
*/
/* flags: 0, or SQLITE_OPEN_NOMUTEX for a connection without the mutex
** that serialized mode (SQLite's default) takes in every API call. */
static sqlite3 *openDbFlags(const char *file, int flags){
  sqlite3 *db = 0;
  if( sqlite3_open_v2(file, &db, SQLITE_OPEN_READWRITE|SQLITE_OPEN_CREATE|flags,
                      0)!=SQLITE_OK ){
    progress("%s: %s", file, db ? sqlite3_errmsg(db) : "out of memory");
    sqlite3_close(db);
    return 0;
  }
  return db;
}
static sqlite3 *openDb(const char *file){ return openDbFlags(file, 0); }

static int exec(sqlite3 *db, const char *sql){
  char *err = 0;
  if( sqlite3_exec(db, sql, 0, 0, &err)!=SQLITE_OK ){
    progress("%s: %s", sql, err ? err : sqlite3_errmsg(db));
    sqlite3_free(err);
    return 1;
  }
  return 0;
}

static sqlite3_stmt *prep(sqlite3 *db, const char *sql){
  sqlite3_stmt *st = 0;
  if( sqlite3_prepare_v2(db, sql, -1, &st, 0)!=SQLITE_OK ){
    progress("%s: %s", sql, sqlite3_errmsg(db));
    return 0;
  }
  return st;
}

/* An in-memory connection with fntrace loaded and warehouse `dir` open. */
static sqlite3 *openFntrace(bench *b, const char *dir, int flags){
  sqlite3 *db = openDbFlags(":memory:", flags);
  sqlite3_stmt *st;
  char *err = 0;
  int rc;
  if( db==0 ) return 0;
  sqlite3_db_config(db, SQLITE_DBCONFIG_ENABLE_LOAD_EXTENSION, 1, (int*)0);
  if( sqlite3_load_extension(db, b->ext, "sqlite3_fntrace_init", &err)!=SQLITE_OK ){
    progress("cannot load %s: %s", b->ext, err ? err : "?");
    sqlite3_free(err);
    sqlite3_close(db);
    return 0;
  }
  st = prep(db, "SELECT fnt_open(?1)");
  if( st==0 ){ sqlite3_close(db); return 0; }
  sqlite3_bind_text(st, 1, dir, -1, SQLITE_STATIC);
  rc = sqlite3_step(st);
  sqlite3_finalize(st);
  if( rc!=SQLITE_ROW ){
    progress("fnt_open('%s'): %s", dir, sqlite3_errmsg(db));
    sqlite3_close(db);
    return 0;
  }
  return db;
}

/* Steps `st` to the end, reading every column as a client would.
** @return rows, or -1 on error (reported). */
static int64_t drain(sqlite3_stmt *st, uint64_t *sink){
  int64_t rows = 0;
  int rc, i, n = sqlite3_column_count(st);
  while( (rc = sqlite3_step(st))==SQLITE_ROW ){
    for(i=0; i<n; i++){
      if( sqlite3_column_type(st, i)==SQLITE_TEXT ){
        const unsigned char *z = sqlite3_column_text(st, i);
        *sink += (uint64_t)sqlite3_column_bytes(st, i) + z[0];
      }else{
        *sink += (uint64_t)sqlite3_column_int64(st, i);
      }
    }
    rows++;
  }
  if( rc!=SQLITE_DONE ){
    progress("%s: %s", sqlite3_sql(st), sqlite3_errmsg(sqlite3_db_handle(st)));
    return -1;
  }
  return rows;
}

/* ------------------------------------------------------------------------
** Filing.
*/
static const char *kindName(int k){ return fnt_kind_name(k); }

static void initChunk(bench *b, fnt_chunk *c, uint64_t chunk, uint64_t chunks,
                      const fnt_function *fn, size_t nfn){
  memset(c, 0, sizeof(*c));
  c->repo = "bench/synth";
  c->commit = "0123456789abcdef";
  c->run_id = b->runId;
  c->ts_micros = 1764680000000000LL;
  c->target = "synth";
  c->source = "synth";
  c->chunk = (int64_t)chunk;
  c->chunks = (int64_t)chunks;
  c->total_events = (int64_t)b->o.sc.events;
  c->threads = b->o.sc.threads;
  c->functions = fn;
  c->n_functions = nfn;
}

typedef struct textbuf { char *z; size_t n, cap; } textbuf;

static int tbReserve(textbuf *t, size_t more){
  if( t->n + more > t->cap ){
    size_t cap = (t->n + more)*2;
    char *z = realloc(t->z, cap);
    if( z==0 ) return 1;
    t->z = z; t->cap = cap;
  }
  return 0;
}
static void tbStr(textbuf *t, const char *s){
  size_t n = strlen(s);
  memcpy(t->z + t->n, s, n);
  t->n += n;
}
static void tbU64(textbuf *t, uint64_t v){
  char tmp[24];
  int k = 0;
  do{ tmp[k++] = (char)('0' + v%10); v /= 10; }while( v );
  while( k>0 ) t->z[t->n++] = tmp[--k];
}
/* A JSON string; synth symbols and stable_ids need no escapes but '"'/'\\'. */
static void tbJsonStr(textbuf *t, const char *s){
  t->z[t->n++] = '"';
  for(; *s; s++){
    if( *s=='"' || *s=='\\' ) t->z[t->n++] = '\\';
    t->z[t->n++] = *s;
  }
  t->z[t->n++] = '"';
}

/* The SPEC §4 chunk JSON of `c` into `t`. */
static int chunkJson(const fnt_chunk *c, textbuf *t){
  size_t i;
  t->n = 0;
  if( tbReserve(t, 1024 + c->n_functions*256 + c->n_events*64) ) return 1;
  tbStr(t, "{\"repo\":\""); tbStr(t, c->repo);
  tbStr(t, "\",\"commit\":\""); tbStr(t, c->commit);
  tbStr(t, "\",\"run_id\":\""); tbStr(t, c->run_id);
  tbStr(t, "\",\"ts_micros\":"); tbU64(t, (uint64_t)c->ts_micros);
  tbStr(t, ",\"target\":\""); tbStr(t, c->target);
  tbStr(t, "\",\"source\":\""); tbStr(t, c->source);
  tbStr(t, "\",\"chunk\":"); tbU64(t, (uint64_t)c->chunk);
  tbStr(t, ",\"chunks\":"); tbU64(t, (uint64_t)c->chunks);
  tbStr(t, ",\"total_events\":"); tbU64(t, (uint64_t)c->total_events);
  tbStr(t, ",\"duration_ns\":"); tbU64(t, (uint64_t)c->duration_ns);
  tbStr(t, ",\"truncated\":false,\"threads\":"); tbU64(t, (uint64_t)c->threads);
  tbStr(t, ",\"functions\":[");
  for(i=0; i<c->n_functions; i++){
    const fnt_function *f = &c->functions[i];
    tbStr(t, i ? ",{\"symbol\":" : "{\"symbol\":");
    tbJsonStr(t, f->symbol);
    tbStr(t, ",\"stable_id\":");
    if( f->stable_id ) tbJsonStr(t, f->stable_id); else tbStr(t, "null");
    tbStr(t, f->local ? ",\"local\":true}" : ",\"local\":false}");
  }
  tbStr(t, "],\"events\":[");
  for(i=0; i<c->n_events; i++){
    const fnt_event *e = &c->events[i];
    tbStr(t, i ? ",[" : "[");
    tbU64(t, e->thread); t->z[t->n++] = ',';
    tbU64(t, e->seq_no); t->z[t->n++] = ',';
    tbU64(t, e->t_ns); t->z[t->n++] = ',';
    tbU64(t, e->function); tbStr(t, ",\"");
    tbStr(t, kindName(e->kind)); tbStr(t, "\"]");
  }
  tbStr(t, "]}");
  t->z[t->n] = 0;
  return 0;
}

static const char plainSchema[] =
  "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL;"
  "CREATE TABLE events(repo TEXT NOT NULL, \"commit\" TEXT, run_id TEXT NOT NULL,"
  " thread INTEGER, seq_no INTEGER, t_ns INTEGER, stable_id TEXT, kind TEXT,"
  " symbol TEXT NOT NULL);"
  "CREATE INDEX events_seq ON events(run_id, seq_no);"
  "CREATE INDEX events_t ON events(run_id, t_ns);";

static const char normSchema[] =
  "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL;"
  "CREATE TABLE runs(id INTEGER PRIMARY KEY, run_id TEXT NOT NULL UNIQUE,"
  " repo TEXT NOT NULL, \"commit\" TEXT);"
  "CREATE TABLE functions(id INTEGER PRIMARY KEY, symbol TEXT NOT NULL UNIQUE,"
  " stable_id TEXT);"
  "CREATE TABLE events(run INTEGER NOT NULL REFERENCES runs, thread INTEGER,"
  " seq_no INTEGER, t_ns INTEGER, kind TEXT, fn INTEGER NOT NULL REFERENCES functions);"
  "CREATE INDEX events_seq ON events(run, seq_no);"
  "CREATE INDEX events_t ON events(run, t_ns);";

/* Files the run into system `sys`; r->file_s is the time spent in the
** filing calls (fnt_file_chunk, or the inserts and commits). */
static int fileRun(bench *b, int sys, sys_result *r){
  synth *s = synth_new(&b->o.sc);
  fnt_event *ev = malloc(b->o.chunk_events * sizeof(fnt_event));
  uint64_t chunks = (b->o.sc.events + b->o.chunk_events - 1)/b->o.chunk_events, k;
  const fnt_function *fn;
  size_t nfn, n, i;
  fnt_store *st = 0;
  sqlite3 *db = 0;
  sqlite3_stmt *ins = 0, *insFn = 0;
  textbuf tb = {0};
  int rc = 1;
  char file[PATH_MAX + 64];
  if( s==0 || ev==0 ){ progress("out of memory"); goto done; }
  fn = synth_functions(s, &nfn);
  switch( sys ){
    case SYS_FNT_C:
      if( (st = cli_open(b->path[sys], 1))==0 ) goto done;
      break;
    case SYS_FNT_SQL:
      if( (db = openFntrace(b, b->path[sys], 0))==0 ) goto done;
      if( (ins = prep(db, "SELECT fnt_file_chunk(?1)"))==0 ) goto done;
      break;
    case SYS_PLAIN:
      snprintf(file, sizeof(file), "%s/plain.db", b->path[sys]);
      if( (db = openDb(file))==0 || exec(db, plainSchema) ) goto done;
      if( (ins = prep(db, "INSERT INTO events VALUES(?1,?2,?3,?4,?5,?6,?7,?8,?9)"))==0 ) goto done;
      break;
    default:
      snprintf(file, sizeof(file), "%s/normalized.db", b->path[sys]);
      if( (db = openDb(file))==0 || exec(db, normSchema) ) goto done;
      if( (ins = prep(db, "INSERT INTO events VALUES(1,?1,?2,?3,?4,?5)"))==0 ) goto done;
      if( (insFn = prep(db, "INSERT OR IGNORE INTO functions VALUES(?1,?2,?3)"))==0 ) goto done;
      break;
  }
  for(k=0; (n = synth_next(s, ev, b->o.chunk_events))>0; k++){
    fnt_chunk c;
    double t0;
    initChunk(b, &c, k, chunks, fn, nfn);
    c.events = ev;
    c.n_events = n;
    c.duration_ns = (int64_t)ev[n-1].t_ns;
    if( sys==SYS_FNT_SQL && chunkJson(&c, &tb) ){ progress("out of memory"); goto done; }
    t0 = now();
    if( sys==SYS_FNT_C ){
      int frc = fnt_file_chunk(st, &c);
      if( frc!=1 ){
        progress("fnt_file_chunk: chunk %llu: %s", (unsigned long long)k,
                 frc<0 ? fnt_errmsg(st) : "already filed");
        goto done;
      }
    }else if( sys==SYS_FNT_SQL ){
      /* -1: SQLite then knows the text is NUL-terminated and hands it to
      ** the function as is; with a length it would copy it to add the NUL. */
      sqlite3_bind_text(ins, 1, tb.z, -1, SQLITE_STATIC);
      if( sqlite3_step(ins)!=SQLITE_ROW || sqlite3_column_int(ins, 0)!=1 ){
        progress("fnt_file_chunk(json): chunk %llu: %s", (unsigned long long)k,
                 sqlite3_errmsg(db));
        goto done;
      }
      sqlite3_reset(ins);
      r->json_bytes += tb.n;
    }else{
      if( exec(db, "BEGIN") ) goto done;
      if( sys==SYS_NORM && k==0 ){
        if( exec(db, "INSERT INTO runs VALUES(1, 'bench-run', 'bench/synth', '0123456789abcdef')") ) goto done;
      }
      if( sys==SYS_NORM ){
        /* Every chunk brings its function table, as a filer would. */
        for(i=0; i<nfn; i++){
          sqlite3_bind_int64(insFn, 1, (sqlite3_int64)i + 1);
          sqlite3_bind_text(insFn, 2, fn[i].symbol, -1, SQLITE_STATIC);
          if( fn[i].stable_id ) sqlite3_bind_text(insFn, 3, fn[i].stable_id, -1, SQLITE_STATIC);
          else sqlite3_bind_null(insFn, 3);
          if( sqlite3_step(insFn)!=SQLITE_DONE ){ progress("functions: %s", sqlite3_errmsg(db)); goto done; }
          sqlite3_reset(insFn);
        }
      }
      for(i=0; i<n; i++){
        const fnt_event *e = &ev[i];
        const fnt_function *f = &fn[e->function];
        int j = 1;
        if( sys==SYS_PLAIN ){
          sqlite3_bind_text(ins, j++, c.repo, -1, SQLITE_STATIC);
          sqlite3_bind_text(ins, j++, c.commit, -1, SQLITE_STATIC);
          sqlite3_bind_text(ins, j++, b->runId, -1, SQLITE_STATIC);
        }
        sqlite3_bind_int64(ins, j++, e->thread);
        sqlite3_bind_int64(ins, j++, (sqlite3_int64)e->seq_no);
        sqlite3_bind_int64(ins, j++, (sqlite3_int64)e->t_ns);
        if( sys==SYS_PLAIN ){
          if( f->stable_id ) sqlite3_bind_text(ins, j++, f->stable_id, -1, SQLITE_STATIC);
          else sqlite3_bind_null(ins, j++);
        }
        sqlite3_bind_text(ins, j++, kindName(e->kind), -1, SQLITE_STATIC);
        if( sys==SYS_PLAIN ) sqlite3_bind_text(ins, j++, f->symbol, -1, SQLITE_STATIC);
        else sqlite3_bind_int64(ins, j++, (sqlite3_int64)e->function + 1);
        if( sqlite3_step(ins)!=SQLITE_DONE ){ progress("insert: %s", sqlite3_errmsg(db)); goto done; }
        sqlite3_reset(ins);
      }
      if( exec(db, "COMMIT") ) goto done;
    }
    r->file_s += now() - t0;
    progress("%s: filed chunk %llu/%llu (%.2f s so far)", sysName[sys],
             (unsigned long long)k+1, (unsigned long long)chunks, r->file_s);
  }
  if( sys==SYS_PLAIN || sys==SYS_NORM ){
    double t0 = now();
    if( exec(db, "PRAGMA wal_checkpoint(TRUNCATE)") ) goto done;
    r->file_s += now() - t0;
  }
  rc = 0;
done:
  sqlite3_finalize(ins);
  sqlite3_finalize(insFn);
  sqlite3_close(db);
  fnt_close(st);
  free(tb.z);
  free(ev);
  synth_free(s);
  return rc;
}

/* Generation alone, for the baseline of the memory figures. */
static int generateOnly(bench *b, int sys, sys_result *r){
  synth *s = synth_new(&b->o.sc);
  fnt_event *ev = malloc(b->o.chunk_events * sizeof(fnt_event));
  (void)sys; (void)r;
  if( s==0 || ev==0 ){ free(ev); synth_free(s); return 1; }
  while( synth_next(s, ev, b->o.chunk_events)>0 ){}
  free(ev);
  synth_free(s);
  return 0;
}

/* ------------------------------------------------------------------------
** Heat over a plain table: SPEC §5, straightforwardly, over rows
** (thread, t_ns, kind, stable_id, symbol) in seq_no order.
*/
typedef struct frame { uint32_t fn; int64_t start, above; } frame;
typedef struct hthread {
  int64_t id, last_t;
  frame *stack; size_t depth, cap;
  uint32_t *on;               /* frames of each function on this stack */
  size_t n_on;
} hthread;
typedef struct plain_heat {
  char **keys; uint64_t *hashes; size_t nfn, capfn;
  uint32_t *slots; size_t nslot;      /* open addressing: fn+1, 0 = empty */
  int64_t *incl, *self, *calls;
  hthread *th; size_t nth;
} plain_heat;

static int heatGrow(plain_heat *h){
  size_t cap = h->capfn ? h->capfn*2 : 1024, i;
  if( (h->keys = realloc(h->keys, cap*sizeof(char*)))==0 ) return 1;
  if( (h->hashes = realloc(h->hashes, cap*sizeof(uint64_t)))==0 ) return 1;
  if( (h->incl = realloc(h->incl, cap*sizeof(int64_t)))==0 ) return 1;
  if( (h->self = realloc(h->self, cap*sizeof(int64_t)))==0 ) return 1;
  if( (h->calls = realloc(h->calls, cap*sizeof(int64_t)))==0 ) return 1;
  free(h->slots);
  h->nslot = cap*2;
  if( (h->slots = calloc(h->nslot, sizeof(uint32_t)))==0 ) return 1;
  for(i=0; i<h->nfn; i++){
    size_t j = h->hashes[i] & (h->nslot-1);
    while( h->slots[j] ) j = (j+1) & (h->nslot-1);
    h->slots[j] = (uint32_t)i + 1;
  }
  h->capfn = cap;
  return 0;
}

/* The id of `key`, added when new; -1 when out of memory. */
static int64_t heatKey(plain_heat *h, const char *key, size_t len){
  uint64_t hv = XXH3_64bits(key, len);
  size_t j;
  if( h->nfn*2 >= h->capfn && heatGrow(h) ) return -1;
  for(j = hv & (h->nslot-1); h->slots[j]; j = (j+1) & (h->nslot-1)){
    uint32_t f = h->slots[j] - 1;
    if( h->hashes[f]==hv && strcmp(h->keys[f], key)==0 ) return f;
  }
  if( (h->keys[h->nfn] = strdup(key))==0 ) return -1;
  h->hashes[h->nfn] = hv;
  h->incl[h->nfn] = h->self[h->nfn] = h->calls[h->nfn] = 0;
  h->slots[j] = (uint32_t)h->nfn + 1;
  return (int64_t)h->nfn++;
}

static hthread *heatThread(plain_heat *h, int64_t id){
  size_t i;
  for(i=0; i<h->nth; i++) if( h->th[i].id==id ) return &h->th[i];
  if( (h->th = realloc(h->th, (h->nth+1)*sizeof(hthread)))==0 ) return 0;
  memset(&h->th[h->nth], 0, sizeof(hthread));
  h->th[h->nth].id = id;
  return &h->th[h->nth++];
}

static void heatPop(plain_heat *h, hthread *t, int64_t at){
  frame *f = &t->stack[--t->depth];
  int64_t d = at - f->start;
  h->calls[f->fn]++;
  h->self[f->fn] += d - f->above;
  if( --t->on[f->fn]==0 ) h->incl[f->fn] += d;
  if( t->depth>0 ) t->stack[t->depth-1].above += d;
}

static int heatEvent(plain_heat *h, int64_t thread, int64_t t, int isEntry,
                     const char *key, size_t keyLen){
  hthread *th = heatThread(h, thread);
  int64_t f = heatKey(h, key, keyLen);
  if( th==0 || f<0 ) return 1;
  th->last_t = t;
  if( (size_t)f >= th->n_on ){
    size_t n = h->capfn, i;
    if( (th->on = realloc(th->on, n*sizeof(uint32_t)))==0 ) return 1;
    for(i=th->n_on; i<n; i++) th->on[i] = 0;
    th->n_on = n;
  }
  if( isEntry ){
    if( th->depth==th->cap ){
      th->cap = th->cap ? th->cap*2 : 64;
      if( (th->stack = realloc(th->stack, th->cap*sizeof(frame)))==0 ) return 1;
    }
    th->stack[th->depth].fn = (uint32_t)f;
    th->stack[th->depth].start = t;
    th->stack[th->depth].above = 0;
    th->depth++;
    th->on[f]++;
  }else if( th->on[f]>0 ){
    uint32_t popped;
    do{
      popped = th->stack[th->depth-1].fn;
      heatPop(h, th, t);
    }while( popped!=(uint32_t)f );
  }
  return 0;
}

static int plainHeat(sqlite3_stmt *st, sys_result *r){
  plain_heat h;
  int rc, bad = 0;
  size_t i;
  char *key = 0;
  size_t keyCap = 0;
  memset(&h, 0, sizeof(h));
  while( !bad && (rc = sqlite3_step(st))==SQLITE_ROW ){
    const char *kind = (const char*)sqlite3_column_text(st, 2);
    const char *sid = (const char*)sqlite3_column_text(st, 3);
    const char *sym = (const char*)sqlite3_column_text(st, 4);
    size_t n;
    if( sid && sid[0] ){
      n = (size_t)sqlite3_column_bytes(st, 3);
      if( n+2>keyCap ){ keyCap = 2*n+64; if( (key = realloc(key, keyCap))==0 ){ bad = 1; break; } }
      memcpy(key, sid, n+1);
    }else{
      n = (size_t)sqlite3_column_bytes(st, 4) + 1;
      if( n+2>keyCap ){ keyCap = 2*n+64; if( (key = realloc(key, keyCap))==0 ){ bad = 1; break; } }
      key[0] = '?';
      memcpy(key+1, sym ? sym : "", n);
    }
    bad = heatEvent(&h, sqlite3_column_int64(st, 0), sqlite3_column_int64(st, 1),
                    kind && strcmp(kind, "entry")==0, key, n);
  }
  if( bad ) progress("heat over the plain table: out of memory");
  else if( rc!=SQLITE_DONE ){
    progress("%s: %s", sqlite3_sql(st), sqlite3_errmsg(sqlite3_db_handle(st)));
    bad = 1;
  }
  for(i=0; i<h.nth; i++){
    hthread *t = &h.th[i];
    while( !bad && t->depth>0 ) heatPop(&h, t, t->last_t);
    free(t->stack);
    free(t->on);
  }
  for(i=0; i<h.nfn; i++){
    if( h.calls[i]>0 ){
      r->heat_rows++;
      r->heat_calls += h.calls[i];
      r->heat_self += h.self[i];
    }
    free(h.keys[i]);
  }
  free(h.keys); free(h.hashes); free(h.slots);
  free(h.incl); free(h.self); free(h.calls); free(h.th); free(key);
  return bad;
}

/* ------------------------------------------------------------------------
** Queries.
*/
static int cmpDouble(const void *a, const void *b){
  double x = *(const double*)a, y = *(const double*)b;
  return x<y ? -1 : x>y;
}

static void windowBounds(bench *b, int w, int64_t *from, int64_t *to, int64_t *after){
  uint64_t s = b->starts[w];
  *from = (int64_t)b->cp[s/CHECKPOINT];
  *to = (int64_t)b->cp[(s + b->o.window_events)/CHECKPOINT] - 1;
  *after = (int64_t)s - 1;
}

static const char *const sqlWindow[NSYS] = {
  0,
  "SELECT thread, seq_no, t_ns, stable_id, kind, symbol FROM fn_trace_events"
  " WHERE run_id = ?1 AND t_ns BETWEEN ?2 AND ?3 AND seq_no > ?4"
  " ORDER BY seq_no LIMIT ?5",
  "SELECT thread, seq_no, t_ns, stable_id, kind, symbol FROM events"
  " WHERE run_id = ?1 AND t_ns BETWEEN ?2 AND ?3 AND seq_no > ?4"
  " ORDER BY seq_no LIMIT ?5",
  "SELECT e.thread, e.seq_no, e.t_ns, f.stable_id, e.kind, f.symbol"
  " FROM events e JOIN functions f ON f.id = e.fn"
  " WHERE e.run = (SELECT id FROM runs WHERE run_id = ?1)"
  " AND e.t_ns BETWEEN ?2 AND ?3 AND e.seq_no > ?4 ORDER BY e.seq_no LIMIT ?5",
};
static const char *const sqlScan[NSYS] = {
  0,
  "SELECT * FROM fn_trace_events WHERE run_id = ?1",
  "SELECT * FROM events WHERE run_id = ?1",
  "SELECT r.repo, r.\"commit\", r.run_id, e.thread, e.seq_no, e.t_ns,"
  " f.stable_id, e.kind, f.symbol FROM events e JOIN runs r ON r.id = e.run"
  " JOIN functions f ON f.id = e.fn WHERE r.run_id = ?1",
};
static const char *const sqlHeat[NSYS] = {
  0,
  "SELECT count(*), sum(calls), sum(self_ns) FROM fnt_heat(?1)",
  "SELECT thread, t_ns, kind, stable_id, symbol FROM events"
  " WHERE run_id = ?1 ORDER BY seq_no",
  "SELECT e.thread, e.t_ns, e.kind, f.stable_id, f.symbol"
  " FROM events e JOIN functions f ON f.id = e.fn"
  " WHERE e.run = (SELECT id FROM runs WHERE run_id = ?1) ORDER BY e.seq_no",
};

/* ------------------------------------------------------------------------
** Calls (SPEC §7): overlap windows, the stack of a thread at an instant,
** and account, through fntrace's C API, its SQL, and a plain SQLite table
** of the same calls.  The plain table is built by reading fntrace's calls
** once (buildPlainCalls), so it costs no replay and is not timed as filing.
*/
/* A tenth of the event windows, at least 10 of them (2 at --windows 20
** made a p50 of two cold file opens), at most all of them. */
static int nCallWindows(const bench *b){
  int n = b->o.windows/10;
  if( n<10 ) n = 10;
  if( n>b->o.windows ) n = b->o.windows;
  return n>0 ? n : 1;
}
/* Stacks are cheap (a few row groups each): enough of them that p99 is
** not the slowest of a handful (it was windows/5: 4 at --windows 20). */
#define BENCH_STACKS 1000
static uint64_t nCheckpoints(const bench *b){ return (b->o.sc.events - 1)/CHECKPOINT + 1; }
static int nStacks(const bench *b){
  return nCheckpoints(b)<BENCH_STACKS ? (int)nCheckpoints(b) : BENCH_STACKS;
}

/* Call window w: from the t_ns of window w's first event over twice the
** window's events; half of the events are entries, so about window_events
** calls start inside it (plus the frames already open at its start). */
static void callWindowBounds(const bench *b, int w, int64_t *t0, int64_t *t1){
  uint64_t s = b->starts[w], last = (b->o.sc.events - 1)/CHECKPOINT;
  uint64_t e = (s + 2*b->o.window_events)/CHECKPOINT;
  *t0 = (int64_t)b->cp[s/CHECKPOINT];
  *t1 = (int64_t)b->cp[e<last ? e : last];
}

/* Instant i of nStacks, spread evenly over the run: the t_ns of a
** remembered event, on that event's thread. */
static void stackAt(const bench *b, int i, int64_t *t, int64_t *thread){
  uint64_t k = (uint64_t)i*nCheckpoints(b)/(uint64_t)nStacks(b);
  *t = (int64_t)b->cp[k];
  *thread = b->cpThread[k];
}

static void percentiles(double *lat, int n, double *p50, double *p99){
  qsort(lat, (size_t)n, sizeof(double), cmpDouble);
  *p50 = lat[(size_t)((n - 1)*0.50)];
  *p99 = lat[(size_t)((n - 1)*0.99)];
}

/* One overlap query: [t0, t1] on every thread (thread < 0) or one thread.
** @return its rows, or -1 on error (reported). */
typedef int64_t (*call_query)(void *ctx, int64_t t0, int64_t t1, int64_t thread);

/* Times the call windows and the stacks through `q`, the same loop for
** every system. */
static int timeCallQueries(bench *b, call_query q, void *ctx, sys_result *r){
  int nw = nCallWindows(b), ns = nStacks(b), i;
  double *lat = malloc((size_t)(nw>ns ? nw : ns) * sizeof(double));
  if( lat==0 ){ progress("out of memory"); return 1; }
  for(i=0; i<nw; i++){
    int64_t t0, t1, rows;
    double t = now();
    callWindowBounds(b, i, &t0, &t1);
    rows = q(ctx, t0, t1, -1);
    lat[i] = now() - t;
    if( rows<0 ){ free(lat); return 1; }
    r->cwin_rows += (uint64_t)rows;
    r->cwin_hash += (uint64_t)rows*(uint64_t)(i+1);
  }
  percentiles(lat, nw, &r->cwin_p50, &r->cwin_p99);
  for(i=0; i<ns; i++){
    int64_t at, thread, rows;
    double t = now();
    stackAt(b, i, &at, &thread);
    rows = q(ctx, at, at, thread);
    lat[i] = now() - t;
    if( rows<0 ){ free(lat); return 1; }
    r->stack_rows += (uint64_t)rows;
    r->stack_hash += (uint64_t)rows*(uint64_t)(i+1);
  }
  percentiles(lat, ns, &r->stack_p50, &r->stack_p99);
  free(lat);
  r->calls_ran = 1;
  return 0;
}

typedef struct calls_c { fnt_store *st; fnt_snapshot *snap; const char *run; uint64_t sink; } calls_c;

static int64_t callsC(void *ctx, int64_t t0, int64_t t1, int64_t thread){
  calls_c *c = ctx;
  fnt_call_predicate p;
  fnt_calls *sc = 0;
  const fnt_call *row;
  int64_t rows = 0;
  int rc;
  fnt_call_predicate_init(&p);
  p.run_ids = &c->run; p.n_run_ids = 1;
  p.t0 = t0; p.t1 = t1;
  if( thread>=0 ) p.thread = thread;
  rc = fnt_calls_open(c->snap, &p, &sc);
  while( rc==FNT_OK && (rc = fnt_calls_next(sc, &row))==1 ){
    c->sink += (uint64_t)(row->thread + row->call_id + row->parent_id + row->depth
             + row->start_ns + row->end_ns + row->dur_ns + row->self_ns + row->ended_by
             + row->outermost) + (uint64_t)row->key[0] + (uint64_t)row->symbol[0]
             + (row->stable_id ? (uint64_t)row->stable_id[0] : 0);
    rows++;
    rc = FNT_OK;
  }
  fnt_calls_close(sc);
  if( rc<0 ){
    progress("%s: calls: %s", sysName[SYS_FNT_C], fnt_errmsg(c->st)[0] ? fnt_errmsg(c->st) : fnt_strerror(rc));
    return -1;
  }
  return rows;
}

/* Adds one account row to the cross-checked totals. */
static void accountRow(sys_result *r, int64_t calls, int64_t sum, int64_t p50){
  r->acc_rows++;
  r->acc_calls += calls;
  r->acc_sum += sum;
  r->acc_p50 += p50;
}

static int callQueriesC(bench *b, fnt_store *st, fnt_snapshot *snap, sys_result *r){
  calls_c c = { st, snap, b->runId, 0 };
  fnt_account *a = 0;
  double t0;
  int rc;
  size_t i, n;
  if( timeCallQueries(b, callsC, &c, r) ) return 1;
  t0 = now();
  rc = fnt_account_compute(snap, b->runId, &a);
  r->account_s = now() - t0;
  if( rc!=FNT_OK ){
    progress("fnt_account_compute: %s", fnt_errmsg(st)[0] ? fnt_errmsg(st) : fnt_strerror(rc));
    return 1;
  }
  n = fnt_account_count(a);
  for(i=0; i<n; i++){
    const fnt_account_row *ar = &fnt_account_rows(a)[i];
    accountRow(r, ar->calls, ar->sum_ns, ar->p50_ns);
  }
  fnt_account_free(a);
  if( c.sink==42 ) progress("(sink)");
  return 0;
}

typedef struct calls_sql { sqlite3_stmt *win, *stack; const char *run; uint64_t sink; } calls_sql;

static int64_t callsSql(void *ctx, int64_t t0, int64_t t1, int64_t thread){
  calls_sql *c = ctx;
  sqlite3_stmt *st = thread<0 ? c->win : c->stack;
  int64_t rows;
  sqlite3_bind_text(st, 1, c->run, -1, SQLITE_STATIC);
  sqlite3_bind_int64(st, 2, t0);
  sqlite3_bind_int64(st, 3, t1);
  if( thread>=0 ) sqlite3_bind_int64(st, 4, thread);
  rows = drain(st, &c->sink);
  sqlite3_reset(st);
  return rows;
}

/* The same queries a user would write over fn_trace_calls and over the
** plain table; only the table's name differs. */
#define CALLS_WINDOW(T) "SELECT * FROM " T " WHERE run_id = ?1 AND start_ns <= ?3 AND end_ns >= ?2"
#define CALLS_STACK(T)  CALLS_WINDOW(T) " AND thread = ?4"

/* Account over the plain table: one sorted pass, per key count, min, max,
** sum, floor(p*n) percentiles, inclusive and self. */
static int plainAccount(sqlite3 *db, const char *run, sys_result *r){
  sqlite3_stmt *st = prep(db, "SELECT key, dur_ns, self_ns, outermost FROM calls"
                              " WHERE run_id = ?1 ORDER BY key, dur_ns");
  int64_t *d = 0, incl = 0, self = 0, sum = 0;
  size_t n = 0, cap = 0;
  char *key = 0;
  uint64_t sink = 0;
  int rc = SQLITE_ROW;
  if( st==0 ) return 1;
  sqlite3_bind_text(st, 1, run, -1, SQLITE_STATIC);
  while( rc==SQLITE_ROW ){
    const char *k = 0;
    rc = sqlite3_step(st);
    if( rc==SQLITE_ROW ) k = (const char*)sqlite3_column_text(st, 0);
    if( n>0 && (k==0 || strcmp(k, key)!=0) ){
      accountRow(r, (int64_t)n, sum, d[n/2]);
      sink += (uint64_t)(d[0] + d[n-1] + d[n*9/10] + d[n*99/100] + incl + self);
      n = 0; sum = incl = self = 0;
    }
    if( k==0 ) break;
    if( n==0 ){ free(key); key = strdup(k); }
    if( n==cap ){
      int64_t *nd = realloc(d, (cap = cap ? 2*cap : 1024)*sizeof(int64_t));
      if( nd==0 || key==0 ){ progress("out of memory"); rc = SQLITE_NOMEM; break; }
      d = nd;
    }
    d[n] = sqlite3_column_int64(st, 1);
    sum += d[n];
    incl += d[n]*sqlite3_column_int64(st, 3);
    self += sqlite3_column_int64(st, 2);
    n++;
  }
  if( rc!=SQLITE_DONE && rc!=SQLITE_NOMEM ) progress("plain account: %s", sqlite3_errmsg(db));
  sqlite3_finalize(st);
  free(d); free(key);
  if( sink==42 ) progress("(sink)");
  return rc!=SQLITE_DONE;
}

/* Windows, stacks and account over fn_trace_calls (sys SYS_FNT_SQL) or the
** plain table `calls` of `db`. */
static int callQueriesSql(bench *b, int sys, sqlite3 *db, sys_result *r){
  calls_sql c = { 0, 0, b->runId, 0 };
  double t0;
  int rc = 1;
  if( sys==SYS_FNT_SQL ){
    c.win = prep(db, CALLS_WINDOW("fn_trace_calls"));
    c.stack = prep(db, CALLS_STACK("fn_trace_calls"));
  }else{
    c.win = prep(db, CALLS_WINDOW("calls"));
    c.stack = prep(db, CALLS_STACK("calls"));
  }
  if( c.win==0 || c.stack==0 || timeCallQueries(b, callsSql, &c, r) ) goto done;
  t0 = now();
  if( sys==SYS_FNT_SQL ){
    sqlite3_stmt *st = prep(db, "SELECT key, calls, sum_ns, p50_ns FROM fnt_account(?1)");
    if( st==0 ) goto done;
    sqlite3_bind_text(st, 1, b->runId, -1, SQLITE_STATIC);
    while( (rc = sqlite3_step(st))==SQLITE_ROW ){
      accountRow(r, sqlite3_column_int64(st, 1), sqlite3_column_int64(st, 2),
                 sqlite3_column_int64(st, 3));
    }
    if( rc!=SQLITE_DONE ) progress("fnt_account: %s", sqlite3_errmsg(db));
    rc = rc!=SQLITE_DONE;
    sqlite3_finalize(st);
  }else{
    rc = plainAccount(db, b->runId, r);
  }
  r->account_s = now() - t0;
done:
  sqlite3_finalize(c.win);
  sqlite3_finalize(c.stack);
  if( c.sink==42 ) progress("(sink)");
  return rc;
}

static const char plainCallsSchema[] =
  "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL;"
  "CREATE TABLE calls(repo TEXT NOT NULL, \"commit\" TEXT, run_id TEXT NOT NULL,"
  " thread INTEGER, call_id INTEGER, parent_id INTEGER, depth INTEGER,"
  " start_ns INTEGER, end_ns INTEGER, dur_ns INTEGER, self_ns INTEGER,"
  " key TEXT, stable_id TEXT, symbol TEXT, ended_by TEXT, outermost INTEGER);";
/* The indexes a user would pick for windows and stacks, made after the load. */
static const char plainCallsIndexes[] =
  "CREATE INDEX calls_start ON calls(run_id, start_ns);"
  "CREATE INDEX calls_end ON calls(run_id, end_ns);"
  "CREATE INDEX calls_thread ON calls(run_id, thread, start_ns);"
  "ANALYZE; PRAGMA wal_checkpoint(TRUNCATE);";

static void plainCallsFile(const bench *b, char *out, size_t n){
  snprintf(out, n, "%s/calls.db", b->path[SYS_PLAIN]);
}

/* Fills the plain calls table from fntrace's (C API) calls of the run;
** r->build_s: the whole build, indexes included. */
static int buildPlainCalls(bench *b, int sys, sys_result *r){
  fnt_store *st = cli_open(b->path[SYS_FNT_C], 1);
  fnt_snapshot *snap = 0;
  fnt_calls *sc = 0;
  fnt_call_predicate p;
  const fnt_call *c;
  const char *run = b->runId;
  sqlite3 *db = 0;
  sqlite3_stmt *ins = 0;
  char file[PATH_MAX + 64];
  double t0 = now();
  int rc = FNT_E_MISUSE, more = 0;
  (void)sys;
  plainCallsFile(b, file, sizeof(file));
  if( st==0 || (db = openDb(file))==0 || exec(db, plainCallsSchema) || exec(db, "BEGIN") ) goto done;
  if( (ins = prep(db, "INSERT INTO calls VALUES(?1,?2,?3,?4,?5,?6,?7,?8,?9,?10,?11,?12,?13,?14,?15,?16)"))==0 ) goto done;
  fnt_call_predicate_init(&p);
  p.run_ids = &run; p.n_run_ids = 1;
  rc = fnt_snapshot_current(st, &snap);
  if( rc==FNT_OK ) rc = fnt_calls_open(snap, &p, &sc);
  while( rc==FNT_OK && (more = fnt_calls_next(sc, &c))==1 ){
    sqlite3_bind_text(ins, 1, c->repo, -1, SQLITE_STATIC);
    if( c->commit ) sqlite3_bind_text(ins, 2, c->commit, -1, SQLITE_STATIC);
    else sqlite3_bind_null(ins, 2);
    sqlite3_bind_text(ins, 3, c->run_id, -1, SQLITE_STATIC);
    sqlite3_bind_int64(ins, 4, c->thread);
    sqlite3_bind_int64(ins, 5, c->call_id);
    if( c->parent_id>=0 ) sqlite3_bind_int64(ins, 6, c->parent_id);
    else sqlite3_bind_null(ins, 6);
    sqlite3_bind_int64(ins, 7, c->depth);
    sqlite3_bind_int64(ins, 8, c->start_ns);
    sqlite3_bind_int64(ins, 9, c->end_ns);
    sqlite3_bind_int64(ins, 10, c->dur_ns);
    sqlite3_bind_int64(ins, 11, c->self_ns);
    sqlite3_bind_text(ins, 12, c->key, -1, SQLITE_STATIC);
    if( c->stable_id ) sqlite3_bind_text(ins, 13, c->stable_id, -1, SQLITE_STATIC);
    else sqlite3_bind_null(ins, 13);
    sqlite3_bind_text(ins, 14, c->symbol, -1, SQLITE_STATIC);
    sqlite3_bind_text(ins, 15, fnt_ended_by_name(c->ended_by), -1, SQLITE_STATIC);
    sqlite3_bind_int64(ins, 16, c->outermost);
    if( sqlite3_step(ins)!=SQLITE_DONE ){ progress("calls insert: %s", sqlite3_errmsg(db)); rc = FNT_E_MISUSE; break; }
    sqlite3_reset(ins);
  }
  if( rc==FNT_OK && more<0 ) rc = more;
  if( rc<0 && st ) progress("plain calls: %s", fnt_errmsg(st)[0] ? fnt_errmsg(st) : fnt_strerror(rc));
  if( rc==FNT_OK && (exec(db, "COMMIT") || exec(db, plainCallsIndexes)) ) rc = FNT_E_MISUSE;
  r->build_s = now() - t0;
done:
  sqlite3_finalize(ins);
  sqlite3_close(db);
  fnt_calls_close(sc);
  fnt_snapshot_release(snap);
  fnt_close(st);
  return rc!=FNT_OK;
}

/* fntrace's C API: the window, the scan and the heat. */
/* ------------------------------------------------------------------------
** The viewer's zoom: fnt_timeline at 2,000 buckets over windows from the
** whole run down to 10 us (each level 10 times narrower, 5 positions
** across the run), through the C API (snap) or SQL (db).
*/
#define TL_BUCKETS 2000
#define TL_POSITIONS 5
#define TL_MAX_QUERIES 128

static int timelineWindows(bench *b, int64_t *t0, int64_t *t1){
  int64_t first = (int64_t)b->cp[0];
  int64_t last = (int64_t)b->cp[(b->o.sc.events-1)/CHECKPOINT];
  int64_t span = last - first + 1, width;
  int n = 0, k;
  for(width = span; n+TL_POSITIONS<=TL_MAX_QUERIES; width /= 10){
    if( width<10000 ) width = 10000;
    for(k=0; k<TL_POSITIONS; k++){
      int64_t room = span>width ? span-width : 0;
      t0[n] = first + room/(TL_POSITIONS-1)*k;
      t1[n] = t0[n] + width;
      n++;
    }
    if( width==10000 ) break;
  }
  return n;
}

static const sqlite3_module floorModule;

/* The floor of the widest frames, side by side with their p99: where a
** bucket holds fewer of a depth's calls than a level-of-detail block, an
** exact answer reads every call of the window.  Through the C API, the
** run's calls read once by blocks, the five columns the timeline reads;
** through SQL, the same client loop over a virtual table of constants
** (the bench_floor of the window reads) of as many rows as the widest
** answer: what SQLite costs to hand those rows over.  0, or 1 (reported). */
static int timelineFloor(bench *b, fnt_snapshot *snap, sqlite3 *db, sys_result *r){
  double start = now();
  uint64_t sink = 0;
  if( db ){
    static sqlite3_int64 nrows;            /* the module's argument */
    sqlite3_stmt *st;
    nrows = (sqlite3_int64)r->tl_rows_max;
    if( sqlite3_create_module(db, "bench_floor", &floorModule, &nrows)!=SQLITE_OK
     || exec(db, "CREATE VIRTUAL TABLE temp.tl_floor USING bench_floor")
     || (st = prep(db, "SELECT * FROM temp.tl_floor"))==0 ) return 1;
    start = now();
    if( drain(st, &sink)<0 ){ sqlite3_finalize(st); return 1; }
    sqlite3_finalize(st);
  }else{
    fnt_call_predicate p;
    fnt_calls *sc = 0;
    fnt_call_block blk;
    const char *run = b->runId;
    int rc;
    fnt_call_predicate_init(&p);
    p.run_ids = &run;
    p.n_run_ids = 1;
    p.block_cols = FNT_CALL_COL(FNT_CALL_THREAD) | FNT_CALL_COL(FNT_CALL_CALL_ID)
                 | FNT_CALL_COL(FNT_CALL_START_NS) | FNT_CALL_COL(FNT_CALL_DUR_NS)
                 | FNT_CALL_COL(FNT_CALL_SYMBOL);
    rc = fnt_calls_open(snap, &p, &sc);
    while( rc==FNT_OK && (rc = fnt_calls_next_block(sc, &blk))==1 ){
      sink += (uint64_t)(blk.thread[0] + blk.call_id[blk.n-1] + blk.start_ns[0]
                         + blk.dur_ns[blk.n-1]) + blk.n;
      rc = FNT_OK;
    }
    fnt_calls_close(sc);
    if( rc<0 ){ progress("timeline floor: %s", fnt_strerror(rc)); return 1; }
  }
  r->tl_floor = now() - start;
  if( sink==42 ) progress("(sink)");
  return 0;
}

static int timelineBench(bench *b, fnt_snapshot *snap, sqlite3 *db, sys_result *r){
  int64_t t0[TL_MAX_QUERIES], t1[TL_MAX_QUERIES];
  double lat[TL_MAX_QUERIES], start;
  int n = timelineWindows(b, t0, t1), q, rc = 0;
  sqlite3_stmt *st = db ? prep(db, "SELECT * FROM fnt_timeline(?1, ?2, ?3, ?4)") : 0;
  uint64_t sink = 0;
  if( db && st==0 ) return 1;
  for(q=0; q<n && rc==0; q++){
    start = now();
    if( db ){
      int64_t rows;
      sqlite3_bind_text(st, 1, b->runId, -1, SQLITE_STATIC);
      sqlite3_bind_int64(st, 2, t0[q]);
      sqlite3_bind_int64(st, 3, t1[q]);
      sqlite3_bind_int64(st, 4, TL_BUCKETS);
      rows = drain(st, &sink);
      sqlite3_reset(st);
      if( rows<0 ) rc = 1;
      else{
        r->tl_rows += (uint64_t)rows;
        if( (uint64_t)rows>r->tl_rows_max ) r->tl_rows_max = (uint64_t)rows;
      }
    }else{
      fnt_timeline *tl = 0;
      rc = fnt_timeline_compute(snap, b->runId, t0[q], t1[q], TL_BUCKETS, -1, &tl);
      r->tl_rows += fnt_timeline_count(tl);
      if( fnt_timeline_count(tl)>r->tl_rows_max ) r->tl_rows_max = fnt_timeline_count(tl);
      fnt_timeline_free(tl);
    }
    lat[q] = now() - start;
  }
  sqlite3_finalize(st);
  if( rc ) return rc;
  percentiles(lat, n, &r->tl_p50, &r->tl_p99);
  return timelineFloor(b, snap, db, r);
}

/* ------------------------------------------------------------------------
** Exports and flame graphs: `fnt export` of the whole run in each format
** (the real command, started by the launcher, to a scratch file in
** the bench's folder), beside its floor (the same bytes copied from the
** OS cache to a file in the same folder, as cat would); fnt_flame of the
** whole run and of windows of about 100k calls.
*/
static const char *const exportFormat[4] = { "chrome", "speedscope", "folded", "pprof" };
#define FLAME_WINDOW_CALLS 100000
#define FLAME_WINDOWS 5
#define FLAME_RUNS 3

/* Copies file `from` to `to` in 1 MiB blocks.  @return seconds, or -1. */
static double copyFile(const char *from, const char *to){
  static char buf[1<<20];
  int in = open(from, O_RDONLY), out = open(to, O_WRONLY|O_CREAT|O_TRUNC, 0666);
  double t = now();
  ssize_t n = 0;
  while( in>=0 && out>=0 && (n = read(in, buf, sizeof(buf)))>0 ){
    if( write(out, buf, (size_t)n)!=n ){ n = -1; break; }
  }
  if( in>=0 ) close(in);
  if( out>=0 && close(out) ) n = -1;
  t = now() - t;
  unlink(to);
  return in<0 || out<0 || n<0 ? -1 : t;
}

/* `fnt -q -w WH export RUN --format F -o FILE` for each format, timed,
** with its peak RSS. */
static int exportsBench(bench *b, sys_result *r){
  char out[PATH_MAX+64], copy[PATH_MAX+64];
  int k;
  for(k=0; k<4; k++){
    const char *argv[] = { "fnt", "-q", "-w", b->path[SYS_FNT_C], "export", b->runId,
                           "--format", exportFormat[k], "-o", out, 0 };
    struct stat sb;
    int status;
    double t;
    snprintf(out, sizeof(out), "%s/export.%s", b->root, exportFormat[k]);
    snprintf(copy, sizeof(copy), "%s/export.copy", b->root);
    fflush(stdout);
    fflush(stderr);
    t = now();
    status = launcherRun(argv, &r->exp_rss_kb[k]);
    if( status!=0 ){
      progress("fnt export --format %s: failed (status %d)", exportFormat[k], status);
      return 1;
    }
    r->exp_s[k] = now() - t;
    r->exp_bytes[k] = stat(out, &sb)==0 ? (uint64_t)sb.st_size : 0;
    r->exp_floor_s[k] = copyFile(out, copy);
    unlink(out);
    if( r->exp_floor_s[k]<0 ){ progress("%s: cannot copy: %s", out, strerror(errno)); return 1; }
  }
  r->exp_ran = 1;
  return 0;
}

/* fnt_flame of the whole run (FLAME_RUNS times) and of FLAME_WINDOWS
** windows spread over the run, each from a window's first event over
** twice FLAME_WINDOW_CALLS events (half of them are entries); medians. */
static int flameBench(bench *b, fnt_snapshot *snap, sys_result *r){
  double lat[FLAME_RUNS > FLAME_WINDOWS ? FLAME_RUNS : FLAME_WINDOWS], p99;
  uint64_t last = (b->o.sc.events - 1)/CHECKPOINT;
  int i, rc = FNT_OK;
  for(i=0; rc==FNT_OK && i<FLAME_RUNS; i++){
    fnt_flame *fl = 0;
    double t = now();
    rc = fnt_flame_compute(snap, b->runId, 0, &fl);
    lat[i] = now() - t;
    r->flame_run_stacks = fnt_flame_count(fl);
    fnt_flame_free(fl);
  }
  if( rc==FNT_OK ) percentiles(lat, FLAME_RUNS, &r->flame_run_s, &p99);
  for(i=0; rc==FNT_OK && i<FLAME_WINDOWS; i++){
    uint64_t s = b->starts[(size_t)i*(size_t)b->o.windows/FLAME_WINDOWS];
    uint64_t e = (s + 2*FLAME_WINDOW_CALLS)/CHECKPOINT;
    fnt_flame_window w;
    fnt_flame *fl = 0;
    double t;
    size_t k;
    w.t0 = (int64_t)b->cp[s/CHECKPOINT];
    w.t1 = (int64_t)b->cp[e<last ? e : last];
    w.thread = -1;
    if( w.t1<=w.t0 ) w.t1 = w.t0 + 1;
    t = now();
    rc = fnt_flame_compute(snap, b->runId, &w, &fl);
    lat[i] = now() - t;
    for(k=0; k<fnt_flame_count(fl); k++) r->flame_win_calls += (uint64_t)fnt_flame_row_at(fl, k)->calls;
    fnt_flame_free(fl);
  }
  if( rc!=FNT_OK ) return rc;
  r->flame_win_calls /= FLAME_WINDOWS;
  percentiles(lat, FLAME_WINDOWS, &r->flame_win_s, &p99);
  return FNT_OK;
}

static int queryC(bench *b, sys_result *r, double *lat){
  fnt_store *st = cli_open(b->path[SYS_FNT_C], 1);
  fnt_snapshot *snap = 0;
  fnt_scan *sc = 0;
  fnt_heat *h = 0;
  fnt_predicate p;
  const char *runs[1];
  uint64_t sink = 0;
  double t0;
  int w, rc, col, more = 0;
  size_t i, n;
  if( st==0 ) return 1;
  runs[0] = b->runId;
  rc = fnt_snapshot_current(st, &snap);
  for(w=0; rc==FNT_OK && w<b->o.windows; w++){
    int64_t from, to, after, rows = 0;
    windowBounds(b, w, &from, &to, &after);
    t0 = now();
    fnt_predicate_init(&p);
    p.run_ids = runs; p.n_run_ids = 1;
    p.t_min = from; p.t_max = to;
    p.seq_min = after + 1;
    p.ordered = 1;
    p.limit = (int64_t)b->o.window_events;
    p.columns = 1u<<FNT_EV_THREAD | 1u<<FNT_EV_SEQ_NO | 1u<<FNT_EV_T_NS
              | 1u<<FNT_EV_STABLE_ID | 1u<<FNT_EV_KIND | 1u<<FNT_EV_SYMBOL;
    rc = fnt_scan_open(snap, FNT_TABLE_EVENTS, &p, &sc);
    while( rc==FNT_OK && (more = fnt_scan_next(sc))==1 ){
      const char *sid = fnt_scan_text(sc, FNT_EV_STABLE_ID, 0);
      sink += (uint64_t)fnt_scan_int(sc, FNT_EV_THREAD) + (uint64_t)fnt_scan_int(sc, FNT_EV_SEQ_NO)
            + (uint64_t)fnt_scan_int(sc, FNT_EV_T_NS) + (sid ? (uint64_t)sid[0] : 0)
            + (uint64_t)fnt_scan_text(sc, FNT_EV_KIND, 0)[0] + (uint64_t)fnt_scan_text(sc, FNT_EV_SYMBOL, 0)[0];
      rows++;
    }
    if( rc==FNT_OK && more<0 ) rc = more;
    fnt_scan_close(sc); sc = 0;
    lat[w] = now() - t0;
    if( rows!=(int64_t)b->o.window_events ) r->win_rows_bad++;
  }
  if( rc==FNT_OK ){
    t0 = now();
    fnt_predicate_init(&p);
    p.run_ids = runs; p.n_run_ids = 1;
    rc = fnt_scan_open(snap, FNT_TABLE_EVENTS, &p, &sc);
    while( rc==FNT_OK && (more = fnt_scan_next(sc))==1 ){
      for(col=0; col<FNT_EV_NCOL; col++){
        if( fnt_column_is_text(FNT_TABLE_EVENTS, col) ){
          size_t len = 0;
          const char *z = fnt_scan_text(sc, col, &len);
          sink += len + (z ? (uint64_t)z[0] : 0);
        }else{
          sink += (uint64_t)fnt_scan_int(sc, col);
        }
      }
      r->scan_rows++;
    }
    if( rc==FNT_OK && more<0 ) rc = more;
    fnt_scan_close(sc);
    r->scan_s = now() - t0;
  }
  if( rc==FNT_OK ){
    t0 = now();
    rc = fnt_heat_compute(snap, b->runId, &h);
    r->heat_s = now() - t0;
  }
  if( rc==FNT_OK ){
    const fnt_heat_row *hr = fnt_heat_rows(h);
    n = fnt_heat_count(h);
    r->heat_rows = n;
    for(i=0; i<n; i++){ r->heat_calls += hr[i].calls; r->heat_self += hr[i].self_ns; }
    if( callQueriesC(b, st, snap, r) ) rc = FNT_E_MISUSE;
    else rc = timelineBench(b, snap, 0, r);
  }
  if( rc==FNT_OK ) rc = flameBench(b, snap, r);
  if( rc==FNT_OK && exportsBench(b, r) ) rc = FNT_E_MISUSE;
  if( rc!=FNT_OK ){
    progress("%s: %s", sysName[SYS_FNT_C], fnt_errmsg(st)[0] ? fnt_errmsg(st) : fnt_strerror(rc));
  }
  fnt_heat_free(h);
  fnt_snapshot_release(snap);
  fnt_close(st);
  if( sink==42 ) progress("(sink)");     /* keeps the reads from being optimized out */
  return rc!=FNT_OK;
}

/* ------------------------------------------------------------------------
** The floor: a virtual table with the events' columns whose rows are
** constants, read by the same loop as the tables.  It is what SQLite's
** per-row machinery and the client's sqlite3_column_* calls cost with no
** storage behind them: no table can be read faster through SQL.
*/
typedef struct floor_vtab {
  sqlite3_vtab base;
  sqlite3_int64 nrows;         /* the run's events */
} floor_vtab;
typedef struct floor_cursor {
  sqlite3_vtab_cursor base;
  sqlite3_int64 row, nrows;
} floor_cursor;

static int floorConnect(sqlite3 *db, void *aux, int argc, const char *const *argv,
                        sqlite3_vtab **pp, char **err){
  floor_vtab *t;
  (void)argc; (void)argv; (void)err;
  if( sqlite3_declare_vtab(db, "CREATE TABLE x(repo TEXT, \"commit\" TEXT,"
        " run_id TEXT, thread INTEGER, seq_no INTEGER, t_ns INTEGER,"
        " stable_id TEXT, kind TEXT, symbol TEXT)") ) return SQLITE_ERROR;
  if( (t = sqlite3_malloc(sizeof(*t)))==0 ) return SQLITE_NOMEM;
  memset(t, 0, sizeof(*t));
  t->nrows = *(const sqlite3_int64*)aux;
  *pp = &t->base;
  return SQLITE_OK;
}
static int floorBestIndex(sqlite3_vtab *t, sqlite3_index_info *p){
  (void)t;
  p->estimatedCost = 1e6;
  return SQLITE_OK;
}
static int floorDisconnect(sqlite3_vtab *t){ sqlite3_free(t); return SQLITE_OK; }
static int floorOpen(sqlite3_vtab *t, sqlite3_vtab_cursor **pp){
  floor_cursor *c = sqlite3_malloc(sizeof(*c));
  (void)t;
  if( c==0 ) return SQLITE_NOMEM;
  memset(c, 0, sizeof(*c));
  *pp = &c->base;
  return SQLITE_OK;
}
static int floorClose(sqlite3_vtab_cursor *c){ sqlite3_free(c); return SQLITE_OK; }
static int floorFilter(sqlite3_vtab_cursor *cur, int idxNum, const char *idxStr,
                       int argc, sqlite3_value **argv){
  floor_cursor *c = (floor_cursor*)cur;
  (void)idxNum; (void)idxStr; (void)argc; (void)argv;
  c->row = 0;
  c->nrows = ((floor_vtab*)cur->pVtab)->nrows;
  return SQLITE_OK;
}
static int floorNext(sqlite3_vtab_cursor *c){ ((floor_cursor*)c)->row++; return SQLITE_OK; }
static int floorEof(sqlite3_vtab_cursor *cur){
  floor_cursor *c = (floor_cursor*)cur;
  return c->row >= c->nrows;
}
static int floorColumn(sqlite3_vtab_cursor *cur, sqlite3_context *ctx, int i){
  static const char *const azSym[4] = { "fn_1234", "fn_77", "fn_4096", "fn_3" };
  sqlite3_int64 r = ((floor_cursor*)cur)->row;
  switch( i ){
    case 0: sqlite3_result_text(ctx, "bench", -1, SQLITE_STATIC); break;
    case 1: sqlite3_result_text(ctx, "0123456789abcdef", -1, SQLITE_STATIC); break;
    case 2: sqlite3_result_text(ctx, "bench-run", -1, SQLITE_STATIC); break;
    case 3: sqlite3_result_int64(ctx, r & 7); break;
    case 4: sqlite3_result_int64(ctx, r); break;
    case 5: sqlite3_result_int64(ctx, r*811); break;
    case 6: sqlite3_result_text(ctx, azSym[r & 3], -1, SQLITE_STATIC); break;
    case 7: sqlite3_result_text(ctx, "entry", -1, SQLITE_STATIC); break;
    default: sqlite3_result_text(ctx, azSym[(r>>2) & 3], -1, SQLITE_STATIC); break;
  }
  return SQLITE_OK;
}
static int floorRowid(sqlite3_vtab_cursor *c, sqlite3_int64 *pRowid){
  *pRowid = ((floor_cursor*)c)->row;
  return SQLITE_OK;
}
static const sqlite3_module floorModule = {
  .xCreate = floorConnect, .xConnect = floorConnect,
  .xBestIndex = floorBestIndex, .xDisconnect = floorDisconnect,
  .xDestroy = floorDisconnect, .xOpen = floorOpen, .xClose = floorClose,
  .xFilter = floorFilter, .xNext = floorNext, .xEof = floorEof,
  .xColumn = floorColumn, .xRowid = floorRowid,
};
/* The windows' and the scan's shapes, over the floor (?1-?4 are bound as
** for the tables; constant terms, evaluated once). */
static const char floorWindow[] =
  "SELECT thread, seq_no, t_ns, stable_id, kind, symbol FROM bench_floor"
  " WHERE ?1 NOT NULL AND ?2 <= ?3 AND ?4 >= 0 LIMIT ?5";
static const char floorScan[] = "SELECT * FROM bench_floor WHERE ?1 NOT NULL";

/* Window w through SQL with the prepared window statement st: its
** latency in *lat; a wrong row count is counted in r.  0, or 1 on error. */
static int sqlWindowOnce(bench *b, sqlite3_stmt *st, int w, sys_result *r,
                         uint64_t *sink, double *lat){
  int64_t from, to, after, rows;
  double t0;
  windowBounds(b, w, &from, &to, &after);
  t0 = now();
  sqlite3_bind_text(st, 1, b->runId, -1, SQLITE_STATIC);
  sqlite3_bind_int64(st, 2, from);
  sqlite3_bind_int64(st, 3, to);
  sqlite3_bind_int64(st, 4, after);
  sqlite3_bind_int64(st, 5, (sqlite3_int64)b->o.window_events);
  rows = drain(st, sink);
  sqlite3_reset(st);
  *lat = now() - t0;
  if( rows<0 ) return 1;
  if( rows!=(int64_t)b->o.window_events ) r->win_rows_bad++;
  return 0;
}

/* The full scan through SQL (zScan on db): its time in *secs.  0 or 1. */
static int sqlScanOnce(bench *b, sqlite3 *db, const char *zScan, sys_result *r,
                       uint64_t *sink, double *secs){
  sqlite3_stmt *st;
  int64_t rows;
  double t0;
  if( (st = prep(db, zScan))==0 ) return 1;
  t0 = now();
  sqlite3_bind_text(st, 1, b->runId, -1, SQLITE_STATIC);
  rows = drain(st, sink);
  *secs = now() - t0;
  sqlite3_finalize(st);
  if( rows<0 ) return 1;
  /* Every read of a child scans; a wrong count must survive the reads
  ** after it (the check compares scan_rows with the run's events). */
  if( r->scan_rows==0 || r->scan_rows==b->o.sc.events ) r->scan_rows = (uint64_t)rows;
  return 0;
}

/* The windows, then the full scan, through SQL on db; lat is scratch. */
static int readsSql(bench *b, sqlite3 *db, const char *zWindow, const char *zScan,
                    sys_result *r, sql_reads *out, double *lat){
  sqlite3_stmt *st;
  uint64_t sink = 0;
  int w;
  if( (st = prep(db, zWindow))==0 ) return 1;
  for(w=0; w<b->o.windows; w++){
    if( sqlWindowOnce(b, st, w, r, &sink, &lat[w]) ){
      sqlite3_finalize(st);
      return 1;
    }
  }
  sqlite3_finalize(st);
  percentiles(lat, b->o.windows, &out->p50, &out->p99);
  if( sqlScanOnce(b, db, zScan, r, &sink, &out->scan_s) ) return 1;
  if( sink==42 ) progress("(sink)");
  return 0;
}

/* 1 when the SQL reads of fntrace and the plain table run in turns, in
** one process (readsInTurns), rather than each in its system's child. */
static int readsTakeTurns(const bench *b){
  return !b->o.only_fnt && !b->o.only_sqlite;
}

/* A connection to system sys's database: serialized, or NOMUTEX. */
static sqlite3 *openSys(bench *b, int sys, int flags){
  char file[PATH_MAX + 64];
  if( sys==SYS_FNT_SQL ) return openFntrace(b, b->path[sys], flags);
  snprintf(file, sizeof(file), "%s/%s.db", b->path[sys], sys==SYS_PLAIN ? "plain" : "normalized");
  return openDbFlags(file, flags);
}

/* The reads through SQL: on a serialized connection (the figures every
** system reports), with the heat; the same reads on a NOMUTEX connection;
** beside the plain table, the floor in both modes. */
static int querySql(bench *b, int sys, sys_result *r, double *lat){
  sqlite3 *db;
  sqlite3_stmt *st = 0;
  sql_reads rd;
  sqlite3_int64 nrows = (sqlite3_int64)b->o.sc.events;   /* the floor's */
  char file[PATH_MAX + 64];
  double t0;
  int m, rc = 1;
  int bTurns = readsTakeTurns(b) && sys!=SYS_NORM;
  if( (db = openSys(b, sys, 0))==0 ) return 1;
  if( !bTurns ){
    if( readsSql(b, db, sqlWindow[sys], sqlScan[sys], r, &rd, lat) ) goto done;
    r->win_p50 = rd.p50;
    r->win_p99 = rd.p99;
    r->scan_s = rd.scan_s;
  }
  if( (st = prep(db, sqlHeat[sys]))==0 ) goto done;
  t0 = now();
  sqlite3_bind_text(st, 1, b->runId, -1, SQLITE_STATIC);
  if( sys==SYS_FNT_SQL ){
    if( sqlite3_step(st)!=SQLITE_ROW ){ progress("fnt_heat: %s", sqlite3_errmsg(db)); goto done; }
    r->heat_rows = (uint64_t)sqlite3_column_int64(st, 0);
    r->heat_calls = sqlite3_column_int64(st, 1);
    r->heat_self = sqlite3_column_int64(st, 2);
  }else if( plainHeat(st, r) ){
    goto done;
  }
  r->heat_s = now() - t0;
  if( sys==SYS_FNT_SQL && callQueriesSql(b, sys, db, r) ) goto done;
  if( sys==SYS_FNT_SQL && timelineBench(b, 0, db, r) ){
    progress("fnt_timeline: %s", sqlite3_errmsg(db));
    goto done;
  }
  if( sys==SYS_PLAIN && b->plainCalls ){
    sqlite3 *cdb;
    plainCallsFile(b, file, sizeof(file));
    if( (cdb = openDb(file))==0 ) goto done;
    m = callQueriesSql(b, sys, cdb, r);
    sqlite3_close(cdb);
    if( m ) goto done;
  }
  sqlite3_finalize(st);
  st = 0;
  if( bTurns ){
    rc = 0;
    goto done;
  }
  sqlite3_close(db);
  if( (db = openSys(b, sys, SQLITE_OPEN_NOMUTEX))==0 ) return 1;
  if( readsSql(b, db, sqlWindow[sys], sqlScan[sys], r, &r->nomutex, lat) ) goto done;
  for(m=0; sys==SYS_PLAIN && m<2; m++){
    sqlite3_close(db);
    if( (db = openDbFlags(":memory:", m ? SQLITE_OPEN_NOMUTEX : 0))==0 ) return 1;
    if( sqlite3_create_module(db, "bench_floor", &floorModule, &nrows)!=SQLITE_OK
     || readsSql(b, db, floorWindow, floorScan, r, &r->floor[m], lat) ) goto done;
  }
  rc = 0;
done:
  sqlite3_finalize(st);
  sqlite3_close(db);
  return rc;
}

/* The SQL reads of fntrace, the plain table and the floor, in turns:
** window w of each one after the other (who goes first rotates), then each
** full scan twice, forwards then backwards, the faster kept; serialized,
** then NOMUTEX.  One system after the other, the later would read with
** other caches, another clock and another load on the machine; in turns
** they share them, so the ratios compare like with like. */
enum { TURN_FNT, TURN_PLAIN, TURN_FLOOR, NTURN };
static int readsInTurns(bench *b, int sys, sys_result *r){
  static const char *const zScan[NTURN] = { 0, 0, floorScan };
  static const char *const zWin[NTURN] = { 0, 0, floorWindow };
  sqlite3_int64 nrows = (sqlite3_int64)b->o.sc.events;   /* the floor's */
  int nw = b->o.windows;
  double *lat = malloc((size_t)(NTURN*nw) * sizeof(double));
  uint64_t sink = 0;
  int m, k, j, w, ok = lat!=0;
  (void)sys;
  for(m=0; ok && m<2; m++){
    int flags = m ? SQLITE_OPEN_NOMUTEX : 0;
    sqlite3 *db[NTURN] = { 0, 0, 0 };
    sqlite3_stmt *st[NTURN] = { 0, 0, 0 };
    sys_result chk[NTURN];
    memset(chk, 0, sizeof(chk));
    ok = (db[TURN_FNT] = openSys(b, SYS_FNT_SQL, flags))!=0
      && (db[TURN_PLAIN] = openSys(b, SYS_PLAIN, flags))!=0
      && (db[TURN_FLOOR] = openDbFlags(":memory:", flags))!=0
      && sqlite3_create_module(db[TURN_FLOOR], "bench_floor", &floorModule,
                               &nrows)==SQLITE_OK;
    for(k=0; ok && k<NTURN; k++){
      ok = (st[k] = prep(db[k], zWin[k] ? zWin[k] : sqlWindow[k ? SYS_PLAIN : SYS_FNT_SQL]))!=0;
    }
    for(w=0; ok && w<nw; w++){
      for(j=0; ok && j<NTURN; j++){
        k = (w + j) % NTURN;
        ok = !sqlWindowOnce(b, st[k], w, &chk[k], &sink, &lat[k*nw + w]);
      }
    }
    for(k=0; k<NTURN; k++){
      sqlite3_finalize(st[k]);
      if( ok ) percentiles(&lat[k*nw], nw, &r->turns[m][k].p50, &r->turns[m][k].p99);
    }
    for(j=0; ok && j<2*NTURN; j++){
      double secs;
      k = j<NTURN ? j : 2*NTURN-1-j;
      ok = !sqlScanOnce(b, db[k], zScan[k] ? zScan[k] : sqlScan[k ? SYS_PLAIN : SYS_FNT_SQL],
                        &chk[k], &sink, &secs);
      if( ok && (j<NTURN || secs<r->turns[m][k].scan_s) ) r->turns[m][k].scan_s = secs;
    }
    for(k=0; k<NTURN; k++){
      sqlite3_close(db[k]);
      r->turn_rows_bad[k] += chk[k].win_rows_bad;
      if( m==0 || r->turn_scan_rows[k]==b->o.sc.events ) r->turn_scan_rows[k] = chk[k].scan_rows;
    }
  }
  if( sink==42 ) progress("(sink)");
  free(lat);
  return !ok;
}

/* Folds readsInTurns' figures into the systems' results. */
static void takeTurns(bench *b, const sys_result *t){
  sys_result *fs = &b->sys[SYS_FNT_SQL].r, *pl = &b->sys[SYS_PLAIN].r;
  sys_result *who[NTURN] = { fs, pl, pl };
  int k;
  fs->win_p50 = t->turns[0][TURN_FNT].p50;
  fs->win_p99 = t->turns[0][TURN_FNT].p99;
  fs->scan_s = t->turns[0][TURN_FNT].scan_s;
  fs->nomutex = t->turns[1][TURN_FNT];
  pl->win_p50 = t->turns[0][TURN_PLAIN].p50;
  pl->win_p99 = t->turns[0][TURN_PLAIN].p99;
  pl->scan_s = t->turns[0][TURN_PLAIN].scan_s;
  pl->nomutex = t->turns[1][TURN_PLAIN];
  pl->floor[0] = t->turns[0][TURN_FLOOR];
  pl->floor[1] = t->turns[1][TURN_FLOOR];
  for(k=0; k<NTURN; k++){
    who[k]->win_rows_bad += t->turn_rows_bad[k];
    if( who[k]->scan_rows==0 || who[k]->scan_rows==b->o.sc.events ){
      who[k]->scan_rows = t->turn_scan_rows[k];
    }
  }
}

static int queryRun(bench *b, int sys, sys_result *r){
  double *lat = malloc((size_t)b->o.windows * sizeof(double));
  int rc;
  if( lat==0 ) return 1;
  if( sys==SYS_FNT_C ){
    rc = queryC(b, r, lat);
    if( rc==0 ) percentiles(lat, b->o.windows, &r->win_p50, &r->win_p99);
  }else{
    rc = querySql(b, sys, r, lat);
  }
  free(lat);
  return rc;
}

/* ------------------------------------------------------------------------
** Bytes on disk: what du counts (allocated blocks) under a folder.
*/
static uint64_t duTotal, duFileBytes;
static int duVisit(const char *p, const struct stat *sb, int flag, struct FTW *f){
  (void)p; (void)f;
  if( flag==FTW_F ){
    duTotal += (uint64_t)sb->st_blocks * 512;
    duFileBytes += (uint64_t)sb->st_size;
  }
  return 0;
}
/* The disk blocks of the files under dir; *fileBytes (when not NULL) adds
** their sizes (what was written, without the file system's rounding). */
static double du2(const char *dir, double *fileBytes){
  duTotal = duFileBytes = 0;
  nftw(dir, duVisit, 16, FTW_PHYS);
  if( fileBytes ) *fileBytes += (double)duFileBytes;
  return (double)duTotal;
}
static double du(const char *dir){ return du2(dir, 0); }
static int rmVisit(const char *p, const struct stat *sb, int flag, struct FTW *f){
  (void)sb; (void)flag; (void)f;
  return remove(p);
}
static void removeTree(const char *dir){
  nftw(dir, rmVisit, 16, FTW_DEPTH | FTW_PHYS);
}

/* ------------------------------------------------------------------------
** Opening a warehouse of many snapshots.
*/
/* CPU time of this process (what perf's task-clock counts), seconds. */
static double cpuNow(void){
  struct timespec ts;
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec*1e-9;
}

/* The events of snapshot chunk c of run r: snap_ev_min..snap_ev_max, fixed
** by (r, c) so that every build files the same bytes. */
static int snapChunkEvents(const bench *b, int r, int c){
  uint64_t h = ((uint64_t)r*1000003u + (uint64_t)c)*UINT64_C(0x9E3779B97F4A7C15);
  int span = b->o.snap_ev_max - b->o.snap_ev_min + 1;
  return b->o.snap_ev_min + (int)((h>>33) % (uint64_t)span);
}

/* n events from seq_no seq: main{ work{} work{} ... }, main's exit last
** (it unwinds an open work), the works cycling over fn[1..nFn). */
static void snapEvents(fnt_event *ev, int n, uint64_t seq, uint32_t nFn){
  int k;
  for(k=0; k<n; k++){
    ev[k].seq_no = seq + (uint64_t)k;
    ev[k].t_ns = (seq + (uint64_t)k)*10 + (uint64_t)(k*7 % 13);
    ev[k].thread = 1;
    if( k==0 || k==n-1 ){
      ev[k].function = 0;
      ev[k].kind = k==0 ? FNT_KIND_ENTRY : FNT_KIND_EXIT;
    }else{
      ev[k].function = 1 + (uint32_t)((k-1)/2) % (nFn-1);
      ev[k].kind = k%2 ? FNT_KIND_ENTRY : FNT_KIND_EXIT;
    }
  }
}

static int buildSnapshots(bench *b){
  fnt_store *st = cli_open(b->snapPath, 1);
  enum { NFN = 16 };
  fnt_function fn[NFN];
  char names[NFN][16];
  fnt_event *ev = malloc((size_t)b->o.snap_ev_max*sizeof(fnt_event));
  char run[64];
  /* main and the works the longest chunk can call, up to 15 */
  uint32_t nFn = 1 + (uint32_t)(b->o.snap_ev_max>=32 ? NFN-1 : (b->o.snap_ev_max-2)/2 ? (b->o.snap_ev_max-2)/2 : 1);
  int r, c, i;
  double t0 = now(), tFirst = 0, tLast = 0, cpu0 = cpuNow(), cpuLast = 0;
  int total = b->o.snap_runs*b->o.snap_chunks, filed = 0;
  if( st==0 || ev==0 ){
    free(ev);
    if( st ) fnt_close(st);
    return 1;
  }
  fn[0].symbol = "main"; fn[0].stable_id = "c bench/snap * main()."; fn[0].local = 1;
  for(i=1; i<NFN; i++){
    snprintf(names[i], sizeof(names[i]), "work%d", i);
    fn[i].symbol = names[i]; fn[i].stable_id = 0; fn[i].local = 1;
  }
  for(r=0; r<b->o.snap_runs; r++){
    uint64_t seq = 0, runEvents = 0;
    snprintf(run, sizeof(run), "snap-run-%05d", r);
    for(c=0; c<b->o.snap_chunks; c++) runEvents += (uint64_t)snapChunkEvents(b, r, c);
    for(c=0; c<b->o.snap_chunks; c++){
      fnt_chunk ch;
      int rc, n = snapChunkEvents(b, r, c);
      memset(&ch, 0, sizeof(ch));
      ch.repo = "bench/snap"; ch.run_id = run; ch.ts_micros = 1764680000000000LL + r;
      ch.target = "snap"; ch.source = "synth";
      ch.chunk = c; ch.chunks = b->o.snap_chunks;
      ch.total_events = runEvents; ch.duration_ns = runEvents*10; ch.threads = 1;
      ch.functions = fn; ch.n_functions = nFn;
      snapEvents(ev, n, seq, nFn);
      seq += (uint64_t)n;
      ch.events = ev; ch.n_events = (size_t)n;
      if( filed==total-100 ){ tLast = now(); cpuLast = cpuNow(); }
      rc = fnt_file_chunk(st, &ch);
      if( rc!=1 ){
        progress("snapshots: %s chunk %d: %s", run, c, rc<0 ? fnt_errmsg(st) : "already filed");
        fnt_close(st);
        free(ev);
        return 1;
      }
      if( ++filed==100 ){
        tFirst = now() - t0;
        b->snap.cpu_first_ms = (cpuNow() - cpu0)*1e3/100;
      }
    }
    if( (r+1)%100==0 ){
      progress("snapshots: %d/%d runs filed (%.1f s)", r+1, b->o.snap_runs, now()-t0);
    }
  }
  b->snap.build_s = now() - t0;
  if( total>=200 ){
    b->snap.rate_first = 100/tFirst;
    b->snap.rate_last = 100/(now() - tLast);
    b->snap.cpu_last_ms = (cpuNow() - cpuLast)*1e3/100;
  }
  fnt_close(st);
  free(ev);
  return 0;
}

/* In a fresh process: one handle follows every snapshot in turn, as a
** viewer open for hours does (each pinned, its runs counted, released);
** scan_s = the time, the caller takes the RSS. */
static int followSnapshots(bench *b, int sys, sys_result *r){
  fnt_store *st = 0;
  uint64_t id, newest = 0;
  int rc;
  double t0 = now();
  (void)sys;
  rc = fnt_open(b->snapPath, 0, &st);
  for(id=1; rc==FNT_OK; id++){
    fnt_snapshot *snap = 0;
    fnt_snapshot_info info;
    rc = fnt_snapshot_current(st, &snap);
    if( rc ) break;
    fnt_snapshot_describe(snap, &info);
    newest = info.id;
    fnt_snapshot_release(snap);
    if( id>newest ) break;
    rc = fnt_snapshot_at(st, id, &snap);
    if( rc==FNT_OK ){
      fnt_predicate p;
      fnt_scan *sc = 0;
      fnt_predicate_init(&p);
      p.columns = 1u << FNT_RUN_RUN_ID;
      rc = fnt_scan_open(snap, FNT_TABLE_RUNS, &p, &sc);
      while( rc==FNT_OK && (rc = fnt_scan_next(sc))==1 ){ r->scan_rows++; rc = FNT_OK; }
      fnt_scan_close(sc);
      fnt_snapshot_release(snap);
    }
  }
  r->scan_s = now() - t0;
  if( rc<0 ) progress("follow: %s", st ? fnt_errmsg(st) : fnt_strerror(rc));
  fnt_close(st);
  return rc<0;
}

/* fnt_expire_snapshots keeping `keep` seconds of snapshots, timed from the
** open: scan_s the time, scan_rows the files removed. */
static int expireTimed(bench *b, int64_t keep, sys_result *r){
  fnt_store *st = 0;
  fnt_expire_stats es;
  int rc;
  double t0 = now();
  memset(&es, 0, sizeof(es));
  rc = fnt_open(b->snapPath, 0, &st);
  if( rc==FNT_OK ) rc = fnt_expire_snapshots(st, keep, &es);
  r->scan_s = now() - t0;
  r->scan_rows = es.files_removed;
  if( rc<0 ) progress("expire: %s", st ? fnt_errmsg(st) : fnt_strerror(rc));
  fnt_close(st);
  return rc<0;
}

/* In a fresh process: expire with a day's window (nothing is due: every
** retained snapshot is read, the cost that grows). */
static int expireSnapshots(bench *b, int sys, sys_result *r){
  (void)sys;
  return expireTimed(b, 86400, r);
}

/* Every file under a folder made AGE_SECONDS older: the warehouse as it
** will be two hours on, past expire's hour of grace for files a commit in
** flight may not have linked yet. */
#define AGE_SECONDS 7200
static int ageVisit(const char *p, const struct stat *sb, int flag, struct FTW *f){
  struct timespec t[2];
  (void)f;
  if( flag!=FTW_F ) return 0;
  t[0] = sb->st_atim;
  t[1] = sb->st_mtim;
  t[0].tv_sec -= AGE_SECONDS;
  t[1].tv_sec -= AGE_SECONDS;
  return utimensat(AT_FDCWD, p, t, AT_SYMLINK_NOFOLLOW) ? -1 : 0;
}

/* In a fresh process: expire every snapshot but the newest (the files aged
** first); scan_rows = the files removed. */
static int expireAllSnapshots(bench *b, int sys, sys_result *r){
  (void)sys;
  return expireTimed(b, 0, r);
}

/* The snapshot warehouse's metadata (manifests and snapshot files) and
** data, each in disk blocks and in file sizes. */
static void snapSizes(const bench *b, double *meta, double *metaFiles,
                      double *data, double *dataFiles){
  char sub[PATH_MAX + 64];
  *metaFiles = *dataFiles = 0;
  snprintf(sub, sizeof(sub), "%s/metadata", b->snapPath);
  *meta = du2(sub, metaFiles);
  snprintf(sub, sizeof(sub), "%s/catalog", b->snapPath);
  *meta += du2(sub, metaFiles);
  snprintf(sub, sizeof(sub), "%s/data", b->snapPath);
  *data = du2(sub, dataFiles);
}

/* `fnt -q check` of the snapshot warehouse, timed (its own process). */
static int checkSnapshots(bench *b, double *secs){
  double t0 = now();
  int status;
  pid_t pid;
  fflush(stdout);
  fflush(stderr);
  pid = fork();
  if( pid<0 ) return 1;
  if( pid==0 ){
    int fd = open("/dev/null", O_WRONLY);
    if( fd>=0 ){ dup2(fd, 1); close(fd); }
    execl("/proc/self/exe", "fnt", "-q", "-w", b->snapPath, "check", (char*)0);
    _exit(127);
  }
  if( waitpid(pid, &status, 0)<0 || !WIFEXITED(status) || WEXITSTATUS(status)!=0 ){
    progress("snapshots: fnt check failed (status %d)", status);
    return 1;
  }
  *secs = now() - t0;
  return 0;
}

/* In a fresh process: open + every row of fn_trace_run_summary (sys 1), or
** fnt_open + the current snapshot + every fn_trace_runs row (sys 0).  The
** result rides in sys_result: scan_s = the time, scan_rows = the rows. */
static int openSnapshots(bench *b, int sys, sys_result *r){
  double t0;
  if( sys==1 ){
    sqlite3 *db = openDb(":memory:");
    sqlite3_stmt *st = 0;
    uint64_t sink = 0;
    char *err = 0;
    int64_t rows;
    if( db==0 ) return 1;
    sqlite3_db_config(db, SQLITE_DBCONFIG_ENABLE_LOAD_EXTENSION, 1, (int*)0);
    if( sqlite3_load_extension(db, b->ext, "sqlite3_fntrace_init", &err)!=SQLITE_OK ){
      progress("cannot load %s: %s", b->ext, err ? err : "?");
      sqlite3_free(err);
      sqlite3_close(db);
      return 1;
    }
    t0 = now();
    if( (st = prep(db, "SELECT fnt_open(?1)"))==0 ){ sqlite3_close(db); return 1; }
    sqlite3_bind_text(st, 1, b->snapPath, -1, SQLITE_STATIC);
    rows = drain(st, &sink);
    sqlite3_finalize(st);
    if( rows==1 && (st = prep(db, "SELECT * FROM fn_trace_run_summary"))!=0 ){
      rows = drain(st, &sink);
      sqlite3_finalize(st);
    }else{
      rows = -1;
    }
    r->scan_s = now() - t0;
    r->scan_rows = rows<0 ? 0 : (uint64_t)rows;
    sqlite3_close(db);
    return rows<0;
  }else{
    fnt_store *st = 0;
    fnt_snapshot *snap = 0;
    fnt_scan *sc = 0;
    fnt_predicate p;
    int rc, more = 0;
    t0 = now();
    rc = fnt_open(b->snapPath, 0, &st);
    if( rc==FNT_OK ) rc = fnt_snapshot_current(st, &snap);
    fnt_predicate_init(&p);
    if( rc==FNT_OK ) rc = fnt_scan_open(snap, FNT_TABLE_RUNS, &p, &sc);
    while( rc==FNT_OK && (more = fnt_scan_next(sc))==1 ) r->scan_rows++;
    if( rc==FNT_OK && more<0 ) rc = more;
    r->scan_s = now() - t0;
    if( rc<0 ) progress("snapshots: %s", st && fnt_errmsg(st)[0] ? fnt_errmsg(st) : fnt_strerror(rc));
    fnt_scan_close(sc);
    fnt_snapshot_release(snap);
    fnt_close(st);
    return rc<0;
  }
}

/* ------------------------------------------------------------------------
** Comparing two commits of cmp_runs runs each.
*/
#define CMP_REPO "bench/compare"

/* Files the runs: one synthetic run of cmp_events events, filed 2 x
** cmp_runs times with its t_ns stretched by a per-run factor (commit B's
** 2% more), so that every key's values differ between runs. */
static int buildCompare(bench *b){
  synth_config sc = b->o.sc;
  synth *s;
  fnt_store *st = 0;
  fnt_event *ev = 0, *out = 0;
  const fnt_function *fn;
  size_t nFn, n = 0, k;
  int r, rc = 1;
  double t0 = now();
  sc.events = b->o.cmp_events;
  s = synth_new(&sc);
  ev = malloc(sc.events*sizeof(fnt_event));
  out = malloc(sc.events*sizeof(fnt_event));
  if( s==0 || ev==0 || out==0 ){ progress("compare: out of memory"); goto done; }
  while( (k = synth_next(s, ev+n, sc.events-n))>0 ) n += k;
  fn = synth_functions(s, &nFn);
  if( (st = cli_open(b->cmpPath, 1))==0 ) goto done;
  for(r=0; r<2*b->o.cmp_runs; r++){
    int isB = r>=b->o.cmp_runs;
    uint64_t num = 1000 + (uint64_t)((r*7919)%13) + (isB ? 20 : 0);
    char run[64];
    fnt_chunk ch;
    memset(&ch, 0, sizeof(ch));
    for(k=0; k<n; k++){
      out[k] = ev[k];
      out[k].t_ns = ev[k].t_ns*num/1000;
    }
    snprintf(run, sizeof(run), "compare-%s-%03d", isB ? "B" : "A", r);
    ch.repo = CMP_REPO; ch.commit = isB ? "B" : "A"; ch.run_id = run;
    ch.ts_micros = 1764680000000000LL + r; ch.target = "synth"; ch.source = "synth";
    ch.chunk = 0; ch.chunks = 1; ch.total_events = (int64_t)n;
    ch.duration_ns = (int64_t)out[n-1].t_ns; ch.threads = -1;
    ch.functions = fn; ch.n_functions = nFn;
    ch.events = out; ch.n_events = n;
    if( fnt_file_chunk(st, &ch)!=1 ){
      progress("compare: filing %s: %s", run, fnt_errmsg(st));
      goto done;
    }
    if( (r+1)%20==0 ) progress("compare: %d/%d runs filed (%.1f s)", r+1,
                               2*b->o.cmp_runs, now()-t0);
  }
  b->cmp.build_s = now() - t0;
  rc = 0;
done:
  fnt_close(st);
  free(ev);
  free(out);
  synth_free(s);
  return rc;
}

/* In a fresh process: fnt_open, a snapshot and fnt_compare of A against B.
** scan_s = the time, scan_rows = the rows; heat_rows = runs_a, heat_calls =
** runs_b, for the check. */
static int compareCommits(bench *b, int sys, sys_result *r){
  fnt_store *st = 0;
  fnt_snapshot *snap = 0;
  fnt_compare *c = 0;
  int64_t nA = 0, nB = 0;
  double t0 = now();
  int rc;
  (void)sys;
  rc = fnt_open(b->cmpPath, 0, &st);
  if( rc==FNT_OK ) rc = fnt_snapshot_current(st, &snap);
  if( rc==FNT_OK ) rc = fnt_compare_compute(snap, CMP_REPO, "A", "B", &c);
  r->scan_s = now() - t0;
  if( rc<0 ) progress("compare: %s", st && fnt_errmsg(st)[0] ? fnt_errmsg(st) : fnt_strerror(rc));
  r->scan_rows = fnt_compare_count(c);
  fnt_compare_runs(c, &nA, &nB);
  r->heat_rows = (uint64_t)nA;
  r->heat_calls = nB;
  fnt_compare_free(c);
  fnt_snapshot_release(snap);
  fnt_close(st);
  return rc<0;
}

/* ------------------------------------------------------------------------
** The table.
*/
typedef struct figure {
  const char *name, *via, *unit, *key;
  double v[NSYS];             /* NOVAL: not measured */
  double floor;               /* SQL reads: the floor's figure, else NOVAL */
  int sysFnt;                 /* which fntrace system the row is about */
  int op;                     /* 0 no target, 1 >=, -1 <= */
  double target;
  int rel;                    /* 1: the target is a ratio to plain's figure */
} figure;

#define NOVAL (-1.0)

static int nFig;
static figure figs[64];

static figure *addFig(const char *key, const char *name, const char *via,
                      const char *unit, int sysFnt, int op, double target){
  figure *f = &figs[nFig++];
  int i;
  f->key = key; f->name = name; f->via = via; f->unit = unit;
  f->sysFnt = sysFnt; f->op = op; f->target = target; f->rel = 0;
  f->floor = NOVAL;
  for(i=0; i<NSYS; i++) f->v[i] = NOVAL;
  return f;
}

static const char *status(const figure *f){
  double v = f->v[f->sysFnt];
  if( f->rel ) v = (v==NOVAL || f->v[SYS_PLAIN]<=0) ? NOVAL : v/f->v[SYS_PLAIN];
  if( f->op==0 || v==NOVAL ) return "-";
  if( f->op>0 ) return v>=f->target ? "ok" : "MISSED";
  return v<=f->target ? "ok" : "MISSED";
}

/* The exports' rates (calls/s of the whole run, the floor: its bytes
** copied) and fnt_flame's times. */
static void exportFigures(bench *b){
  const sys_result *r = &b->sys[SYS_FNT_C].r;
  double calls = (double)r->heat_calls;
  figure *f;
  int k;
  if( !b->sys[SYS_FNT_C].ran || !r->exp_ran ) return;
  static const char *const rateKey[4] = {
    "export_chrome", "export_speedscope", "export_folded", "export_pprof" };
  static const char *const rateName[4] = {
    "export chrome", "export speedscope", "export folded", "export pprof" };
  static const char *const rssKey[4] = {
    "export_chrome_rss", "export_speedscope_rss", "export_folded_rss", "export_pprof_rss" };
  static const char *const rssName[4] = {
    "export chrome RSS", "export speedscope RSS",
    "export folded RSS", "export pprof RSS" };
  for(k=0; k<4; k++){
    /* the rate target is chrome's and speedscope's (issue: >= 5 M calls/s) */
    f = addFig(rateKey[k], rateName[k], "CLI", "Mcall/s", SYS_FNT_C, k<2, 5);
    f->v[SYS_FNT_C] = calls / r->exp_s[k] / 1e6;
    f->floor = r->exp_floor_s[k]>0 ? calls / r->exp_floor_s[k] / 1e6 : NOVAL;
  }
  for(k=0; k<4; k++){
    f = addFig(rssKey[k], rssName[k], "CLI", "MiB", SYS_FNT_C, -1, 64);
    f->v[SYS_FNT_C] = r->exp_rss_kb[k]/1024.0;
  }
  f = addFig("flame_run_c", "flame of the run", "C API", "ms", SYS_FNT_C, -1, 50);
  f->v[SYS_FNT_C] = r->flame_run_s*1e3;
  f = addFig("flame_window_c", "flame, 100k-call window", "C API", "ms", SYS_FNT_C, -1, 50);
  f->v[SYS_FNT_C] = r->flame_win_s*1e3;
}

static void collectFigures(bench *b){
  uint64_t n = b->o.sc.events;
  int s, m;
  figure *f;
  nFig = 0;
  for(s=SYS_FNT_C; s<=SYS_FNT_SQL; s++){
    const char *via = s==SYS_FNT_C ? "C API" : "SQL";
    int i;
    f = addFig(s==SYS_FNT_C ? "filing_c" : "filing_sql", "filing rate", via,
               "Mev/s", s, 1, s==SYS_FNT_C ? 10 : 3);
    for(i=0; i<NSYS; i++) if( b->sys[i].ran && (i==s || i>=SYS_PLAIN) )
      f->v[i] = (double)n / b->sys[i].r.file_s / 1e6;
    f = addFig(s==SYS_FNT_C ? "rss_filing_c" : "rss_filing_sql", "peak RSS filing", via,
               "MiB", s, 0, 0);
    for(i=0; i<NSYS; i++) if( b->sys[i].ran && (i==s || i>=SYS_PLAIN) )
      f->v[i] = (double)(b->sys[i].file_rss_kb - b->gen_rss_kb) / 1024.0;
    /* fntrace's whole warehouse (events, calls, metadata); plain: its
    ** events and calls databases. */
    f = addFig(s==SYS_FNT_C ? "bytes_c" : "bytes_sql", "bytes on disk/event", via,
               "B", s, -1, 4.0);
    for(i=0; i<=SYS_PLAIN; i++) if( b->sys[i].ran && (i==s || i==SYS_PLAIN) )
      f->v[i] = (b->sys[i].disk_bytes + (i==SYS_PLAIN ? b->sys[i].disk_calls : 0)) / (double)n;
    if( s==SYS_FNT_C ){
      f = addFig("bytes_events_c", "  events alone", via, "B", s, 0, 0);
      for(i=0; i<NSYS; i++) if( b->sys[i].ran && i!=SYS_FNT_SQL )
        f->v[i] = b->sys[i].disk_events / (double)n;
      f = addFig("bytes_calls_c", "  calls alone", via, "B", s, 0, 0);
      for(i=0; i<=SYS_PLAIN; i++) if( b->sys[i].ran && i!=SYS_FNT_SQL && b->sys[i].disk_calls>0 )
        f->v[i] = b->sys[i].disk_calls / (double)n;
    }
  }
  /* Reads: the C API against absolute targets; SQL against plain's
  ** figure read by the same loop, serialized and on NOMUTEX connections,
  ** with the floor beside them. */
  f = addFig("window_p50_c", "window p50", "C API", "ms", SYS_FNT_C, -1, 3);
  addFig("window_p99_c", "window p99", "C API", "ms", SYS_FNT_C, -1, 6);
  addFig("scan_c", "full scan, all columns", "C API", "Mev/s", SYS_FNT_C, 0, 0);
  for(s=0; s<NSYS; s++){
    const sys_result *r = &b->sys[s].r;
    if( !b->sys[s].ran || s==SYS_FNT_SQL ) continue;
    f[0].v[s] = r->win_p50*1e3;
    f[1].v[s] = r->win_p99*1e3;
    f[2].v[s] = (double)n / r->scan_s / 1e6;
  }
  for(m=0; m<2; m++){
    static const char *const azKey[2][3] = {
      { "window_p50_sql", "window_p99_sql", "scan_sql" },
      { "window_p50_sql_nomutex", "window_p99_sql_nomutex", "scan_sql_nomutex" },
    };
    const char *via = m ? "SQL nm" : "SQL";
    const sys_result *pl = &b->sys[SYS_PLAIN].r;
    int plainRan = b->sys[SYS_PLAIN].ran;
    int i, k;
    for(k=0; k<3; k++){
      f = k<2 ? addFig(azKey[m][k], k ? "window p99" : "window p50", via, "ms",
                       SYS_FNT_SQL, -1, 0.7)
              : addFig(azKey[m][k], "full scan, all columns", via, "Mev/s",
                       SYS_FNT_SQL, 1, 1.5);
      f->rel = 1;
      for(i=SYS_FNT_SQL; i<NSYS; i++){
        const sql_reads *rd;
        sql_reads serial;
        if( !b->sys[i].ran ) continue;
        serial.p50 = b->sys[i].r.win_p50;
        serial.p99 = b->sys[i].r.win_p99;
        serial.scan_s = b->sys[i].r.scan_s;
        rd = m ? &b->sys[i].r.nomutex : &serial;
        f->v[i] = k==0 ? rd->p50*1e3 : k==1 ? rd->p99*1e3 : (double)n / rd->scan_s / 1e6;
      }
      if( plainRan ){
        const sql_reads *fl = &pl->floor[m];
        f->floor = k==0 ? fl->p50*1e3 : k==1 ? fl->p99*1e3 : (double)n / fl->scan_s / 1e6;
      }
    }
  }
  for(s=SYS_FNT_C; s<=SYS_FNT_SQL; s++){
    const char *via = s==SYS_FNT_C ? "C API" : "SQL";
    int i;
    /* fntrace adds stored per-file aggregates; the alternatives replay
    ** the events. */
    f = addFig(s==SYS_FNT_C ? "heat_c" : "heat_sql", "heat of the run", via, "ms", s, -1,
               n>10000000 ? 50 : 10);
    for(i=0; i<NSYS; i++) if( b->sys[i].ran && (i==s || i>=SYS_PLAIN) )
      f->v[i] = b->sys[i].r.heat_s*1e3;
  }
  for(s=SYS_FNT_C; s<=SYS_FNT_SQL; s++){
    const char *via = s==SYS_FNT_C ? "C API" : "SQL";
    int isC = s==SYS_FNT_C, i;
    if( !b->sys[s].ran || !b->sys[s].r.calls_ran ) continue;
    f = addFig(isC ? "calls_window_p50_c" : "calls_window_p50_sql", "10k-call window p50",
               via, "ms", s, isC ? -1 : 0, 1);
    for(i=0; i<=SYS_PLAIN; i++) if( b->sys[i].r.calls_ran && (i==s || i==SYS_PLAIN) )
      f->v[i] = b->sys[i].r.cwin_p50*1e3;
    f = addFig(isC ? "stack_p99_c" : "stack_p99_sql", "stack at an instant p99",
               via, "ms", s, isC ? -1 : 0, 1);
    for(i=0; i<=SYS_PLAIN; i++) if( b->sys[i].r.calls_ran && (i==s || i==SYS_PLAIN) )
      f->v[i] = b->sys[i].r.stack_p99*1e3;
    f = addFig(isC ? "account_c" : "account_sql", "account of the run",
               via, "ms", s, isC ? -1 : 0, 500);
    for(i=0; i<=SYS_PLAIN; i++) if( b->sys[i].r.calls_ran && (i==s || i==SYS_PLAIN) )
      f->v[i] = b->sys[i].r.account_s*1e3;
  }
  for(s=SYS_FNT_C; s<=SYS_FNT_SQL; s++){
    const char *via = s==SYS_FNT_C ? "C API" : "SQL";
    if( !b->sys[s].ran ) continue;
    f = addFig(s==SYS_FNT_C ? "timeline_p50_c" : "timeline_p50_sql",
               "timeline p50", via, "ms", s, 0, 0);
    f->v[s] = b->sys[s].r.tl_p50*1e3;
    f = addFig(s==SYS_FNT_C ? "timeline_p99_c" : "timeline_p99_sql",
               "timeline p99", via, "ms", s, -1, s==SYS_FNT_C ? 16 : 30);
    f->v[s] = b->sys[s].r.tl_p99*1e3;
    if( b->sys[s].r.tl_floor>0 ) f->floor = b->sys[s].r.tl_floor*1e3;
  }
  exportFigures(b);
  if( b->snap.ran ){
    f = addFig("snapshots_open_c", "open + runs scan", "C API", "ms", SYS_FNT_C, 0, 0);
    f->v[SYS_FNT_C] = b->snap.c_ms;
    f = addFig("snapshots_open_sql", "open + run summary", "SQL", "ms", SYS_FNT_SQL, -1, 50);
    f->v[SYS_FNT_SQL] = b->snap.sql_ms;
  }
  if( b->cmp.ran ){
    f = addFig("compare_c", "compare of two commits", "C API", "s", SYS_FNT_C, -1, 1);
    f->v[SYS_FNT_C] = b->cmp.s;
  }
}

static void fmtVal(char *out, size_t n, double v){
  if( v==NOVAL ) snprintf(out, n, "-");
  else if( v>=100 ) snprintf(out, n, "%.0f", v);
  else if( v>=10 ) snprintf(out, n, "%.1f", v);
  else snprintf(out, n, "%.3g", v);
}

static void printTable(bench *b){
  int i;
  printf("\nfnt bench: %llu events, %u threads, %u functions, seed %llu, "
         "%llu-event chunks, %d windows of %llu events\n",
         (unsigned long long)b->o.sc.events, b->o.sc.threads, b->o.sc.functions,
         (unsigned long long)b->o.sc.seed, (unsigned long long)b->o.chunk_events,
         b->o.windows, (unsigned long long)b->o.window_events);
  printf("trace: mean depth %.1f, max depth %d, %llu recursive entries, "
         "%llu tail exits, %.3f s of trace\n\n",
         b->ss.mean_depth, b->ss.max_depth, (unsigned long long)b->ss.recursive_entries,
         (unsigned long long)b->ss.tail_exits, (double)b->ss.last_t_ns/1e9);
  printf("machine: %ld cores, load average %.2f at the start, %.2f at the end%s\n\n",
         sysconf(_SC_NPROCESSORS_ONLN), b->load[0], b->load[1],
         b->load[1] > (double)sysconf(_SC_NPROCESSORS_ONLN) ? " (busy: figures are pessimistic)" : "");
  printf("%-23s %-6s %-6s %9s %9s %-6s %9s %8s %8s %10s %8s\n", "figure", "via", "unit",
         "fntrace", "target", "status", "plain", "fnt/pl", "floor", "normalized", "fnt/norm");
  for(i=0; i<nFig; i++){
    figure *f = &figs[i];
    char v[32], t[32], p[32], rp[32], fl[32], nm[32], rn[32];
    double fv = f->v[f->sysFnt];
    fmtVal(v, sizeof(v), fv);
    if( f->op ) snprintf(t, sizeof(t), "%s %g%s", f->op>0 ? ">=" : "<=", f->target,
                         f->rel ? "pl" : "");
    else snprintf(t, sizeof(t), "-");
    fmtVal(p, sizeof(p), f->v[SYS_PLAIN]);
    fmtVal(fl, sizeof(fl), f->floor);
    fmtVal(nm, sizeof(nm), f->v[SYS_NORM]);
    fmtVal(rp, sizeof(rp), (fv==NOVAL || f->v[SYS_PLAIN]<=0) ? NOVAL : fv/f->v[SYS_PLAIN]);
    fmtVal(rn, sizeof(rn), (fv==NOVAL || f->v[SYS_NORM]<=0) ? NOVAL : fv/f->v[SYS_NORM]);
    printf("%-23s %-6s %-6s %9s %9s %-6s %9s %8s %8s %10s %8s\n", f->name, f->via,
           f->unit, v, t, status(f), p, rp, fl, nm, rn);
  }
  printf("\nrates: higher is better; ms, MiB, B: lower is better.  fnt/pl and\n"
         "fnt/norm are fntrace's figure divided by the alternative's; a target\n"
         "ending in pl is a ratio to plain's figure.  SQL nm: the same reads on\n"
         "SQLITE_OPEN_NOMUTEX connections (serialized mode, SQLite's default,\n"
         "takes a mutex in every sqlite3_column_* call).  floor: the same loop\n"
         "over a virtual table of constants, what SQLite and the client cost\n"
         "with no storage behind them; no table reads faster through SQL.\n"
         "SQL windows and scans of fntrace, plain and the floor run in turns\n"
         "in one process (window by window; each scan twice, the faster kept).\n"
         "peak RSS is the filing child's ru_maxrss minus the generator's own "
         "(%.1f MiB).\n", (double)b->gen_rss_kb/1024.0);
  printf("heat: fntrace adds stored per-file aggregates, the alternatives replay\n"
         "the events.  bytes on disk/event: fntrace's whole warehouse (events,\n"
         "calls, metadata), plain's events and calls databases.\n");
  if( b->sys[SYS_FNT_C].r.tl_floor>0 || b->sys[SYS_FNT_SQL].r.tl_floor>0 ){
    printf("timeline: 2,000 buckets from the whole run down to 10 us; the widest\n"
           "answer had %llu rows.  floor of its p99 (the widest frame): through\n"
           "the C API the run's calls read once (five columns, by blocks), what\n"
           "an exact frame reads where a bucket holds fewer of a depth's calls\n"
           "than a level-of-detail block (128); through SQL the same loop over\n"
           "a virtual table of constants of as many rows as that answer.\n",
           (unsigned long long)b->sys[SYS_FNT_C].r.tl_rows_max);
  }
  if( b->plainCalls ){
    printf("calls: plain is a table of the run's calls (the 16 columns of\n"
           "fn_trace_calls, read from fntrace; built in %.1f s, not timed as filing)\n"
           "indexed on (run_id, start_ns), (run_id, end_ns), (run_id, thread, start_ns);\n"
           "%d windows of about %llu calls, %d stacks (one thread, one instant).\n",
           b->plainCallsBuild_s, nCallWindows(b), (unsigned long long)b->o.window_events,
           nStacks(b));
  }
  if( b->snap.ran ){
    printf("snapshots: a warehouse of %d runs x %d chunks (%d snapshots) filed in "
           "%.1f s; opened in a fresh process (OS file cache warm).\n",
           b->o.snap_runs, b->o.snap_chunks, b->o.snap_runs*b->o.snap_chunks, b->snap.build_s);
    printf("metadata: chunks of %d..%d events; filing %.1f chunks/s over the first "
           "100 snapshots, %.1f over the last 100;\n  filing CPU (the filing process) "
           "%.2f ms a commit over the first 100, %.2f ms over the last 100;\n  metadata (manifests, snapshot files) %.1f MiB for %.1f MiB "
           "of data (%.0f%%, %.0f B a snapshot);\n  in file sizes (no block rounding) "
           "%.2f MiB for %.2f MiB (%.0f%%, %.0f B a snapshot);\n  a handle following all %d snapshots "
           "in turn: %.1f MiB peak RSS, %.2f s;\n  expire with nothing due %.2f s, %.1f MiB "
           "peak RSS; fnt check %.2f s.\n",
           b->o.snap_ev_min, b->o.snap_ev_max, b->snap.rate_first, b->snap.rate_last,
           b->snap.cpu_first_ms, b->snap.cpu_last_ms, b->snap.meta_bytes/1048576.0,
           b->snap.data_bytes/1048576.0,
           b->snap.data_bytes>0 ? 100.0*b->snap.meta_bytes/b->snap.data_bytes : 0.0,
           b->snap.meta_bytes/(double)(b->o.snap_runs*b->o.snap_chunks),
           b->snap.meta_file_bytes/1048576.0, b->snap.data_file_bytes/1048576.0,
           b->snap.data_file_bytes>0 ? 100.0*b->snap.meta_file_bytes/b->snap.data_file_bytes : 0.0,
           b->snap.meta_file_bytes/(double)(b->o.snap_runs*b->o.snap_chunks),
           b->o.snap_runs*b->o.snap_chunks, b->snap.follow_rss_kb/1024.0, b->snap.follow_s,
           b->snap.expire_s, b->snap.expire_rss_kb/1024.0, b->snap.check_s);
    if( b->snap.expired_all ){
      printf("  then every file aged %d s and all but the newest snapshot expired: "
             "%.2f s, %.1f MiB peak RSS, %llu files removed;\n  metadata of the current "
             "snapshot (file sizes) %.2f MiB for %.2f MiB of data (%.1f%%, %.0f B a run).\n",
             AGE_SECONDS, b->snap.expire_all_s, b->snap.expire_all_rss_kb/1024.0,
             (unsigned long long)b->snap.expire_all_files,
             b->snap.meta_file_bytes_now/1048576.0, b->snap.data_file_bytes_now/1048576.0,
             b->snap.data_file_bytes_now>0
               ? 100.0*b->snap.meta_file_bytes_now/b->snap.data_file_bytes_now : 0.0,
             b->snap.meta_file_bytes_now/(double)b->o.snap_runs);
    }
  }
  if( b->sys[SYS_FNT_C].r.exp_ran ){
    const sys_result *r = &b->sys[SYS_FNT_C].r;
    printf("exports: `fnt export` of the run's %lld calls to a file in --dir: chrome\n"
           "%.1f MiB, speedscope %.1f MiB, folded %.1f MiB, pprof %.1f MiB; floor: the\n"
           "same bytes copied to that folder (cat).  flame: medians of %d whole-run and\n"
           "%d window flames (windows of %llu calls on average); the run's flame has\n"
           "%llu stacks.\n", (long long)r->heat_calls,
           (double)r->exp_bytes[0]/1048576.0, (double)r->exp_bytes[1]/1048576.0,
           (double)r->exp_bytes[2]/1048576.0, (double)r->exp_bytes[3]/1048576.0,
           FLAME_RUNS, FLAME_WINDOWS, (unsigned long long)r->flame_win_calls,
           (unsigned long long)r->flame_run_stacks);
  }
  if( b->cmp.ran ){
    printf("compare: fnt_compare of 2 commits x %d runs of %llu events (%llu keys), "
           "in a fresh process; the runs filed in %.1f s.\n", b->o.cmp_runs,
           (unsigned long long)b->o.cmp_events, (unsigned long long)b->cmp.rows,
           b->cmp.build_s);
  }
  if( b->o.sc.events!=10000000 || b->o.sc.threads!=8 ){
    printf("targets are set for --events 10000000 --threads 8 on a 2-core machine.\n");
  }
}

static void jsonNum(FILE *out, double v){
  if( v==NOVAL ) fputs("null", out); else fprintf(out, "%.6g", v);
}

static void writeJson(bench *b, FILE *out){
  int i;
  fprintf(out, "{\"events\": %llu, \"threads\": %u, \"functions\": %u, \"seed\": %llu,"
          " \"shape\": \"%s\", \"chunk_events\": %llu, \"windows\": %d, \"window_events\": %llu,\n",
          (unsigned long long)b->o.sc.events, b->o.sc.threads, b->o.sc.functions,
          (unsigned long long)b->o.sc.seed, synth_shape_name(b->o.sc.shape),
          (unsigned long long)b->o.chunk_events, b->o.windows,
          (unsigned long long)b->o.window_events);
  fprintf(out, " \"trace\": {\"mean_depth\": %.3f, \"max_depth\": %d,"
          " \"recursive_entries\": %llu, \"tail_exits\": %llu, \"last_t_ns\": %llu},\n",
          b->ss.mean_depth, b->ss.max_depth, (unsigned long long)b->ss.recursive_entries,
          (unsigned long long)b->ss.tail_exits, (unsigned long long)b->ss.last_t_ns);
  fprintf(out, " \"generator_rss_kb\": %ld, \"cores\": %ld, \"load_start\": %.2f, \"load_end\": %.2f,\n",
          b->gen_rss_kb, sysconf(_SC_NPROCESSORS_ONLN), b->load[0], b->load[1]);
  if( b->snap.ran ){
    fprintf(out, " \"snapshots\": {\"runs\": %d, \"chunks_per_run\": %d,"
            " \"chunk_events_min\": %d, \"chunk_events_max\": %d,"
            " \"filing_cpu_ms_first100\": %.3f, \"filing_cpu_ms_last100\": %.3f, \"build_s\": %.3f,"
            " \"open_summary_ms\": %.3f, \"open_scan_c_ms\": %.3f, \"summary_rows\": %llu,"
            " \"filing_rate_first100\": %.3f, \"filing_rate_last100\": %.3f,"
            " \"metadata_bytes\": %.0f, \"data_bytes\": %.0f,"
            " \"metadata_file_bytes\": %.0f, \"data_file_bytes\": %.0f, \"follow_rss_kb\": %ld,"
            " \"follow_s\": %.3f, \"expire_s\": %.3f, \"expire_rss_kb\": %ld,"
            " \"check_s\": %.3f, \"expire_all_s\": %.3f, \"expire_all_rss_kb\": %ld,"
            " \"expire_all_files\": %llu, \"metadata_file_bytes_current\": %.0f,"
            " \"data_file_bytes_current\": %.0f},\n",
            b->o.snap_runs, b->o.snap_chunks, b->o.snap_ev_min, b->o.snap_ev_max,
            b->snap.cpu_first_ms, b->snap.cpu_last_ms, b->snap.build_s, b->snap.sql_ms, b->snap.c_ms,
            (unsigned long long)b->snap.sql_rows, b->snap.rate_first, b->snap.rate_last,
            b->snap.meta_bytes, b->snap.data_bytes, b->snap.meta_file_bytes,
            b->snap.data_file_bytes, b->snap.follow_rss_kb, b->snap.follow_s,
            b->snap.expire_s, b->snap.expire_rss_kb, b->snap.check_s,
            b->snap.expire_all_s, b->snap.expire_all_rss_kb,
            (unsigned long long)b->snap.expire_all_files, b->snap.meta_file_bytes_now,
            b->snap.data_file_bytes_now);
  }else{
    fprintf(out, " \"snapshots\": null,\n");
  }
  if( b->sys[SYS_FNT_C].r.exp_ran ){
    fprintf(out, " \"flame_run_stacks\": %llu,\n",
            (unsigned long long)b->sys[SYS_FNT_C].r.flame_run_stacks);
  }
  if( b->cmp.ran ){
    fprintf(out, " \"compare\": {\"runs_per_commit\": %d, \"events_per_run\": %llu,"
            " \"build_s\": %.3f, \"compare_s\": %.3f, \"rows\": %llu},\n",
            b->o.cmp_runs, (unsigned long long)b->o.cmp_events, b->cmp.build_s,
            b->cmp.s, (unsigned long long)b->cmp.rows);
  }else{
    fprintf(out, " \"compare\": null,\n");
  }
  fprintf(out, " \"figures\": [\n");
  for(i=0; i<nFig; i++){
    figure *f = &figs[i];
    double fv = f->v[f->sysFnt];
    fprintf(out, "  {\"figure\": \"%s\", \"name\": \"%s\", \"via\": \"%s\", \"unit\": \"%s\", \"fntrace\": ",
            f->key, f->name, f->via, f->unit);
    jsonNum(out, fv);
    fprintf(out, ", \"target\": ");
    if( f->op ) fprintf(out, "\"%s %g%s\"", f->op>0 ? ">=" : "<=", f->target,
                        f->rel ? " x plain" : "");
    else fputs("null", out);
    fprintf(out, ", \"status\": \"%s\", \"plain\": ", status(f));
    jsonNum(out, f->v[SYS_PLAIN]);
    fprintf(out, ", \"floor\": ");
    jsonNum(out, f->floor);
    fprintf(out, ", \"normalized\": ");
    jsonNum(out, f->v[SYS_NORM]);
    fprintf(out, ", \"ratio_plain\": ");
    jsonNum(out, (fv==NOVAL || f->v[SYS_PLAIN]<=0) ? NOVAL : fv/f->v[SYS_PLAIN]);
    fprintf(out, ", \"ratio_normalized\": ");
    jsonNum(out, (fv==NOVAL || f->v[SYS_NORM]<=0) ? NOVAL : fv/f->v[SYS_NORM]);
    fprintf(out, "}%s\n", i+1<nFig ? "," : "");
  }
  fprintf(out, " ]}\n");
}

/* ------------------------------------------------------------------------
** The command.
*/
static void usage(FILE *out){
  fprintf(out,
    "usage: fnt bench [options]\n\n"
    "Files one deterministic synthetic trace into fntrace (C API and SQL) and\n"
    "into plain SQLite schemas, then times replay windows, a full scan, heat,\n"
    "fnt_timeline at 2,000 buckets zooming from the whole run to 10 us,\n"
    "fnt_flame of the run and of 100k-call windows, `fnt export` in each format\n"
    "(rate and peak RSS),\n"
    "opening a warehouse of many snapshots and comparing two commits of many\n"
    "runs (fnt_compare); prints one table with the\n"
    "figures, fntrace's targets and fntrace/alternative ratios.\n\n"
    "  --events N         events of the run (default 1000000)\n"
    "  --threads T        threads (default 8)\n"
    "  --functions F      distinct functions (default 5000; 500 with --shape tree)\n"
    "  --seed S           the trace's seed (default 1)\n"
    "  --shape flat|tree  the calls' shape (default flat): flat, a random walk\n"
    "                     over all functions, nearly every call with a stack of\n"
    "                     its own; tree, a program's fixed call tree (depth <= 24),\n"
    "                     whose distinct stacks do not grow with the events\n"
    "  --dir DIR          scratch folder (default: a temporary folder)\n"
    "  --keep             keep the warehouses and databases afterwards\n"
    "  --json [FILE]      also write the figures as JSON (stdout, after the table)\n"
    "  --only fntrace|sqlite   run only fntrace, or only the SQLite alternatives\n"
    "  --skip-snapshots   skip the 10,000-snapshot warehouse (slow to build)\n"
    "  --windows K        replay windows (default 1000)\n"
    "  --snapshot-runs R  runs of the snapshot warehouse (default 1000)\n"
    "  --snapshot-chunks K   chunks of each of those runs, one snapshot each (default 10)\n"
    "  --snapshot-events N[-M]  events of each such chunk, N..M fixed per chunk\n"
    "                     (default 5; the long-lived scenario: --snapshot-runs 20000\n"
    "                     --snapshot-chunks 1 --snapshot-events 100-1000)\n"
    "  --chunk-events N   events per filed chunk (default 1000000)\n"
    "  --skip-compare     skip comparing two commits (files 2 x 50 runs)\n"
    "  --compare-runs N   runs of each commit compared (default 50)\n"
    "  --compare-events M events of each of those runs (default 1000000)\n\n"
    "examples:\n"
    "  fnt bench\n"
    "  fnt bench --events 10000000 --json bench.json\n"
    "  fnt bench --events 100000000 --only fntrace --skip-snapshots\n"
    "  fnt bench --events 10000000 --shape tree --only fntrace --skip-snapshots\n");
  cli_globals_help(out);
  fprintf(out,
    "(bench works in its own scratch folder, --dir: -w is accepted and not\n"
    "used; --json before the command is --json to stdout; -q drops the\n"
    "progress lines.)\n");
}

static int parseU64(const char *opt, const char *s, uint64_t lo, uint64_t *out){
  char *end;
  unsigned long long v;
  errno = 0;
  v = strtoull(s, &end, 10);
  if( errno || end==s || *end || s[0]=='-' || v<lo ){
    cli_error("bench", "%s: expected a number >= %llu, not '%s'", opt,
              (unsigned long long)lo, s);
    return 1;
  }
  *out = v;
  return 0;
}

/* N or N-M (2 <= N <= M <= 1,000,000) into *lo, *hi. */
static int parseRange(const char *opt, const char *s, int *lo, int *hi){
  char *end;
  unsigned long a, z;
  errno = 0;
  a = strtoul(s, &end, 10);
  z = a;
  if( !errno && end!=s && *end=='-' && s[0]!='-' ){
    const char *t = end+1;
    z = strtoul(t, &end, 10);
    if( end==t || t[0]=='-' ) end = (char*)s;
  }
  if( errno || end==s || *end || s[0]=='-' || a<2 || z<a || z>1000000 ){
    cli_error("bench", "%s: expected N or N-M with 2 <= N <= M <= 1000000, not '%s'",
              opt, s);
    return 1;
  }
  *lo = (int)a;
  *hi = (int)z;
  return 0;
}

static const struct option benchOpts[] = {
  {"events",         required_argument, 0, 'e'},
  {"threads",        required_argument, 0, 't'},
  {"functions",      required_argument, 0, 'f'},
  {"seed",           required_argument, 0, 's'},
  {"shape",          required_argument, 0, 'P'},
  {"dir",            required_argument, 0, 'd'},
  {"keep",           no_argument,       0, 'k'},
  {"json",           optional_argument, 0, 'j'},
  {"only",           required_argument, 0, 'o'},
  {"skip-snapshots", no_argument,       0, 'S'},
  {"windows",        required_argument, 0, 'W'},
  {"snapshot-runs",  required_argument, 0, 'R'},
  {"snapshot-chunks", required_argument, 0, 'K'},
  {"snapshot-events", required_argument, 0, 'E'},
  {"chunk-events",   required_argument, 0, 'C'},
  {"skip-compare",   no_argument,       0, 'X'},
  {"compare-runs",   required_argument, 0, 'N'},
  {"compare-events", required_argument, 0, 'M'},
  {"help",           no_argument,       0, 'h'},
  {0, 0, 0, 0}
};

static int parseArgs(bench *b, int argc, char **argv){
  bench_opts *o = &b->o;
  uint64_t v;
  int c, functionsGiven = 0, shape;
  o->sc.events = 1000000; o->sc.threads = 8; o->sc.functions = 5000; o->sc.seed = 1;
  o->chunk_events = 1000000; o->windows = 1000; o->window_events = 10000;
  o->snap_runs = 1000; o->snap_chunks = 10;
  o->snap_ev_min = o->snap_ev_max = 5;
  o->cmp_runs = 50; o->cmp_events = 1000000;
  if( cli_g.json ) o->json = "-";
  optind = 1;
  while( (c = getopt_long(argc, argv, "+h", benchOpts, 0))!=-1 ){
    switch( c ){
      case 'e': if( parseU64("--events", optarg, 1000, &o->sc.events) ) return 2; break;
      case 't': if( parseU64("--threads", optarg, 1, &v) || v>100000 ) return 2;
                o->sc.threads = (uint32_t)v; break;
      case 'f': if( parseU64("--functions", optarg, 1, &v) || v>10000000 ) return 2;
                o->sc.functions = (uint32_t)v; functionsGiven = 1; break;
      case 's': if( parseU64("--seed", optarg, 0, &o->sc.seed) ) return 2; break;
      case 'P':
        if( (shape = synth_shape_parse(optarg))<0 ){
          cli_error("bench", "--shape: expected flat or tree, not '%s'", optarg);
          return 2;
        }
        o->sc.shape = (synth_shape)shape;
        break;
      case 'd': o->dir = optarg; break;
      case 'k': o->keep = 1; break;
      case 'j':
        o->json = optarg ? optarg : "-";
        if( optarg==0 && optind<argc && argv[optind][0]!='-' ) o->json = argv[optind++];
        break;
      case 'o':
        if( strcmp(optarg, "fntrace")==0 ) o->only_fnt = 1;
        else if( strcmp(optarg, "sqlite")==0 ) o->only_sqlite = 1;
        else{ cli_error("bench", "--only: expected fntrace or sqlite, not '%s'", optarg); return 2; }
        break;
      case 'S': o->skip_snapshots = 1; break;
      case 'W': if( parseU64("--windows", optarg, 1, &v) || v>10000000 ) return 2;
                o->windows = (int)v; break;
      case 'R': if( parseU64("--snapshot-runs", optarg, 1, &v) || v>1000000 ) return 2;
                o->snap_runs = (int)v; break;
      case 'K': if( parseU64("--snapshot-chunks", optarg, 1, &v) || v>10000 ) return 2;
                o->snap_chunks = (int)v; break;
      case 'E': if( parseRange("--snapshot-events", optarg, &o->snap_ev_min, &o->snap_ev_max) ) return 2;
                break;
      case 'C': if( parseU64("--chunk-events", optarg, 1000, &o->chunk_events) ) return 2; break;
      case 'X': o->skip_compare = 1; break;
      case 'N': if( parseU64("--compare-runs", optarg, 1, &v) || v>10000 ) return 2;
                o->cmp_runs = (int)v; break;
      case 'M': if( parseU64("--compare-events", optarg, 1000, &o->cmp_events)
                 || o->cmp_events>100000000 ) return 2;
                break;
      case 'h': usage(stdout); return 0;
      default: usage(stderr); return 2;
    }
  }
  if( optind<argc ){ cli_error("bench", "unexpected argument '%s'", argv[optind]); return 2; }
  if( o->sc.shape==SYNTH_TREE && !functionsGiven ) o->sc.functions = 500;
  if( (uint64_t)o->snap_runs*(uint64_t)o->snap_chunks > 1000000 ){
    cli_error("bench", "--snapshot-runs x --snapshot-chunks: at most 1000000 snapshots");
    return 2;
  }
  /* A window must fit strictly inside the run, on CHECKPOINT boundaries. */
  while( o->window_events + CHECKPOINT >= o->sc.events ) o->window_events /= 2;
  o->window_events -= o->window_events % CHECKPOINT;
  if( o->window_events==0 ){ cli_error("bench", "--events: too few for a window"); return 2; }
  return -1;
}

/* The t_ns checkpoints and the window starts, shared by every system. */
static int prepareTrace(bench *b){
  synth *s = synth_new(&b->o.sc);
  fnt_event *ev = malloc(b->o.chunk_events * sizeof(fnt_event));
  uint64_t seed = b->o.sc.seed * 0x9e3779b97f4a7c15ULL + 1, nStart;
  size_t n, i;
  int w;
  b->cp = malloc((size_t)(b->o.sc.events/CHECKPOINT + 1) * sizeof(uint64_t));
  b->cpThread = malloc((size_t)(b->o.sc.events/CHECKPOINT + 1) * sizeof(uint32_t));
  b->starts = malloc((size_t)b->o.windows * sizeof(uint64_t));
  if( s==0 || ev==0 || b->cp==0 || b->cpThread==0 || b->starts==0 ){
    free(ev); synth_free(s); progress("out of memory"); return 1;
  }
  while( (n = synth_next(s, ev, b->o.chunk_events))>0 ){
    for(i=0; i<n; i++){
      if( ev[i].seq_no % CHECKPOINT==0 ){
        b->cp[ev[i].seq_no/CHECKPOINT] = ev[i].t_ns;
        b->cpThread[ev[i].seq_no/CHECKPOINT] = ev[i].thread;
      }
    }
  }
  synth_stats_get(s, &b->ss);
  nStart = (b->o.sc.events - b->o.window_events - 1)/CHECKPOINT + 1;
  for(w=0; w<b->o.windows; w++){
    seed ^= seed << 13; seed ^= seed >> 7; seed ^= seed << 17;
    b->starts[w] = (seed % nStart) * CHECKPOINT;
  }
  free(ev);
  synth_free(s);
  return 0;
}

/* Calls: every system that answered them gives the same rows per window
** and per stack, the same account totals, and as many calls as heat. */
static int crossCheckCalls(bench *b){
  int i, ref = -1, bad = 0;
  for(i=0; i<NSYS; i++){
    sys_result *r = &b->sys[i].r, *q;
    if( !b->sys[i].ran || !r->calls_ran ) continue;
    if( r->acc_calls!=r->heat_calls || r->acc_rows!=r->heat_rows ){
      progress("%s: account has %llu keys and %lld calls, heat %llu and %lld", sysName[i],
               (unsigned long long)r->acc_rows, (long long)r->acc_calls,
               (unsigned long long)r->heat_rows, (long long)r->heat_calls);
      bad = 1;
    }
    if( ref<0 ){ ref = i; continue; }
    q = &b->sys[ref].r;
    if( r->cwin_rows!=q->cwin_rows || r->cwin_hash!=q->cwin_hash
     || r->stack_rows!=q->stack_rows || r->stack_hash!=q->stack_hash ){
      progress("%s: call windows gave %llu rows and stacks %llu, %s %llu and %llu "
               "(or the rows per query differ)", sysName[i],
               (unsigned long long)r->cwin_rows, (unsigned long long)r->stack_rows,
               sysName[ref], (unsigned long long)q->cwin_rows, (unsigned long long)q->stack_rows);
      bad = 1;
    }
    if( r->acc_rows!=q->acc_rows || r->acc_sum!=q->acc_sum || r->acc_p50!=q->acc_p50 ){
      progress("%s: account (%llu keys, sum %lld, p50s %lld) differs from %s's (%llu, %lld, %lld)",
               sysName[i], (unsigned long long)r->acc_rows, (long long)r->acc_sum,
               (long long)r->acc_p50, sysName[ref], (unsigned long long)q->acc_rows,
               (long long)q->acc_sum, (long long)q->acc_p50);
      bad = 1;
    }
  }
  return bad;
}

/* The answers every system must agree on. */
static int crossCheck(bench *b){
  int i, ref = -1, bad = 0;
  for(i=0; i<NSYS; i++){
    sys_result *r = &b->sys[i].r;
    if( !b->sys[i].ran ) continue;
    if( r->win_rows_bad ){
      progress("%s: %llu windows did not return %llu rows", sysName[i],
               (unsigned long long)r->win_rows_bad, (unsigned long long)b->o.window_events);
      bad = 1;
    }
    if( r->scan_rows!=b->o.sc.events ){
      progress("%s: the full scan returned %llu rows, not %llu", sysName[i],
               (unsigned long long)r->scan_rows, (unsigned long long)b->o.sc.events);
      bad = 1;
    }
    if( ref<0 ){ ref = i; continue; }
    if( r->heat_rows!=b->sys[ref].r.heat_rows || r->heat_calls!=b->sys[ref].r.heat_calls
     || r->heat_self!=b->sys[ref].r.heat_self ){
      progress("%s: heat (%llu rows, %lld calls, %lld self_ns) differs from %s's "
               "(%llu, %lld, %lld)", sysName[i], (unsigned long long)r->heat_rows,
               (long long)r->heat_calls, (long long)r->heat_self, sysName[ref],
               (unsigned long long)b->sys[ref].r.heat_rows,
               (long long)b->sys[ref].r.heat_calls, (long long)b->sys[ref].r.heat_self);
      bad = 1;
    }
  }
  return bad || crossCheckCalls(b);
}

int cmd_bench(int argc, char **argv){
  bench *b = calloc(1, sizeof(bench));
  int rc = 1, i, made = 0, created[NSYS+2] = {0};
  sys_result tmp;
  if( b==0 ){ cli_error("bench", "out of memory"); return 1; }
  if( (i = parseArgs(b, argc, argv))>=0 ){ free(b); return i; }
  launcherStart();
  snprintf(b->runId, sizeof(b->runId), "bench-run");
  if( cli_extension_path(b->ext, sizeof(b->ext)) ){
    cli_error("bench", "cannot locate the fntrace extension beside this program");
    goto done;
  }
  if( b->o.dir ){
    snprintf(b->root, sizeof(b->root), "%s", b->o.dir);
    if( mkdir(b->root, 0777) && errno!=EEXIST ){
      cli_error("bench", "%s: %s", b->root, strerror(errno));
      goto done;
    }
  }else{
    const char *tmpdir = getenv("TMPDIR");
    snprintf(b->root, sizeof(b->root), "%s/fnt-bench-XXXXXX", tmpdir && tmpdir[0] ? tmpdir : "/tmp");
    if( mkdtemp(b->root)==0 ){ cli_error("bench", "%s: %s", b->root, strerror(errno)); goto done; }
    made = 1;
  }
  /* Fresh folders only: a benchmark must not measure (or delete) old data. */
  for(i=0; i<=NSYS+1; i++){
    char *p = i<NSYS ? b->path[i] : i==NSYS ? b->snapPath : b->cmpPath;
    snprintf(p, PATH_MAX + 32, "%s/%s", b->root,
             i<NSYS ? sysDir[i] : i==NSYS ? "wh-snapshots" : "wh-compare");
    if( mkdir(p, 0777) ){
      cli_error("bench", "%s: %s (give --dir a folder without earlier bench results)",
                p, strerror(errno));
      goto done;
    }
    created[i] = 1;
  }
  progress("scratch folder %s", b->root);
  if( getloadavg(b->load, 1)!=1 ) b->load[0] = -1;
  if( prepareTrace(b) ) goto done;
  progress("trace: %llu events, shape %s, mean depth %.1f, max depth %d",
           (unsigned long long)b->o.sc.events, synth_shape_name(b->o.sc.shape),
           b->ss.mean_depth, b->ss.max_depth);
  if( inChild(generateOnly, b, -1, &tmp, &b->gen_rss_kb) ) goto done;

  for(i=0; i<NSYS; i++){
    sys_figures *sf = &b->sys[i];
    if( (i<SYS_PLAIN && b->o.only_sqlite) || (i>=SYS_PLAIN && b->o.only_fnt) ) continue;
    progress("%s: filing", sysName[i]);
    if( inChild(fileRun, b, i, &sf->r, &sf->file_rss_kb) ) goto done;
    sf->disk_bytes = du(b->path[i]);
    if( i==SYS_FNT_C ){
      char dir[PATH_MAX + 64];
      snprintf(dir, sizeof(dir), "%s/data/fn_trace_events", b->path[i]);
      sf->disk_events = du(dir);
      snprintf(dir, sizeof(dir), "%s/data/fn_trace_calls", b->path[i]);
      sf->disk_calls = du(dir);
    }else{
      sf->disk_events = sf->disk_bytes;
    }
    if( i==SYS_PLAIN && b->sys[SYS_FNT_C].ran ){
      char file[PATH_MAX + 64];
      struct stat sb;
      progress("%s: a table of the run's calls, read from fntrace", sysName[i]);
      memset(&tmp, 0, sizeof(tmp));
      if( inChild(buildPlainCalls, b, i, &tmp, 0) ) goto done;
      plainCallsFile(b, file, sizeof(file));
      if( stat(file, &sb)==0 ) sf->disk_calls = (double)sb.st_blocks*512;
      b->plainCalls = 1;
      b->plainCallsBuild_s = tmp.build_s;
      progress("%s: calls table built in %.2f s", sysName[i], tmp.build_s);
    }
    {
      double fileS = sf->r.file_s;
      uint64_t jsonBytes = sf->r.json_bytes;
      progress("%s: filed in %.2f s, %.2f bytes/event on disk%s", sysName[i], fileS,
               sf->disk_bytes/(double)b->o.sc.events, "");
      if( jsonBytes ) progress("%s: %.1f bytes of JSON per event", sysName[i],
                               (double)jsonBytes/(double)b->o.sc.events);
      progress("%s: windows, scan, heat", sysName[i]);
      if( inChild(queryRun, b, i, &sf->r, 0) ) goto done;
      sf->r.file_s = fileS;
      sf->r.json_bytes = jsonBytes;
    }
    sf->ran = 1;
    if( i==SYS_FNT_C || i==SYS_NORM || !readsTakeTurns(b) ){
      progress("%s: window p50 %.3f ms p99 %.3f ms, scan %.2f s, heat %.2f s",
               sysName[i], sf->r.win_p50*1e3, sf->r.win_p99*1e3, sf->r.scan_s,
               sf->r.heat_s);
    }
  }
  if( readsTakeTurns(b) && b->sys[SYS_FNT_SQL].ran && b->sys[SYS_PLAIN].ran ){
    progress("SQL reads in turns: %s, %s and the floor", sysName[SYS_FNT_SQL],
             sysName[SYS_PLAIN]);
    memset(&tmp, 0, sizeof(tmp));
    if( inChild(readsInTurns, b, -1, &tmp, 0) ) goto done;
    takeTurns(b, &tmp);
  }
  if( !b->o.skip_snapshots && !b->o.only_sqlite ){
    progress("snapshots: filing %d runs x %d chunks", b->o.snap_runs, b->o.snap_chunks);
    if( buildSnapshots(b) ) goto done;
    if( inChild(openSnapshots, b, 1, &tmp, 0) ) goto done;
    b->snap.sql_ms = tmp.scan_s*1e3;
    b->snap.sql_rows = tmp.scan_rows;
    memset(&tmp, 0, sizeof(tmp));
    if( inChild(openSnapshots, b, 0, &tmp, 0) ) goto done;
    b->snap.c_ms = tmp.scan_s*1e3;
    b->snap.c_rows = tmp.scan_rows;
    if( b->snap.sql_rows!=(uint64_t)b->o.snap_runs
     || b->snap.c_rows!=(uint64_t)(b->o.snap_runs*b->o.snap_chunks) ){
      progress("snapshots: fn_trace_run_summary gave %llu rows (want %d), fn_trace_runs %llu (want %d)",
               (unsigned long long)b->snap.sql_rows, b->o.snap_runs,
               (unsigned long long)b->snap.c_rows, b->o.snap_runs*b->o.snap_chunks);
      goto done;
    }
    memset(&tmp, 0, sizeof(tmp));
    if( inChild(followSnapshots, b, -1, &tmp, &b->snap.follow_rss_kb) ) goto done;
    b->snap.follow_s = tmp.scan_s;
    memset(&tmp, 0, sizeof(tmp));
    if( inChild(expireSnapshots, b, -1, &tmp, &b->snap.expire_rss_kb) ) goto done;
    b->snap.expire_s = tmp.scan_s;
    if( checkSnapshots(b, &b->snap.check_s) ) goto done;
    {
      double metaNow, dataNow;
      snapSizes(b, &b->snap.meta_bytes, &b->snap.meta_file_bytes,
                &b->snap.data_bytes, &b->snap.data_file_bytes);
      /* Last, as it changes the warehouse: its history expired. */
      progress("snapshots: aging the files %d s and expiring all but the newest snapshot",
               AGE_SECONDS);
      memset(&tmp, 0, sizeof(tmp));
      if( nftw(b->snapPath, ageVisit, 16, FTW_PHYS) ){
        progress("snapshots: cannot age %s (%s): the history is not expired",
                 b->snapPath, strerror(errno));
      }else if( inChild(expireAllSnapshots, b, -1, &tmp, &b->snap.expire_all_rss_kb)==0 ){
        b->snap.expired_all = 1;
        b->snap.expire_all_s = tmp.scan_s;
        b->snap.expire_all_files = tmp.scan_rows;
        snapSizes(b, &metaNow, &b->snap.meta_file_bytes_now, &dataNow,
                  &b->snap.data_file_bytes_now);
      }
    }
    b->snap.ran = 1;
  }
  if( !b->o.skip_compare && !b->o.only_sqlite ){
    progress("compare: filing 2 x %d runs of %llu events", b->o.cmp_runs,
             (unsigned long long)b->o.cmp_events);
    if( buildCompare(b) ) goto done;
    memset(&tmp, 0, sizeof(tmp));
    if( inChild(compareCommits, b, -1, &tmp, 0) ) goto done;
    b->cmp.s = tmp.scan_s;
    b->cmp.rows = tmp.scan_rows;
    if( tmp.heat_rows!=(uint64_t)b->o.cmp_runs || tmp.heat_calls!=b->o.cmp_runs
     || tmp.scan_rows==0 ){
      progress("compare: %llu rows over %llu and %lld runs, want %d runs a side",
               (unsigned long long)tmp.scan_rows, (unsigned long long)tmp.heat_rows,
               (long long)tmp.heat_calls, b->o.cmp_runs);
      goto done;
    }
    progress("compare: %.2f s for %llu keys", b->cmp.s, (unsigned long long)b->cmp.rows);
    b->cmp.ran = 1;
  }
  if( crossCheck(b) ) goto done;
  if( getloadavg(&b->load[1], 1)!=1 ) b->load[1] = -1;
  collectFigures(b);
  printTable(b);
  if( b->o.json ){
    if( strcmp(b->o.json, "-")==0 ){
      printf("\n");
      writeJson(b, stdout);
    }else{
      FILE *out = fopen(b->o.json, "w");
      if( out==0 ){ cli_error("bench", "%s: %s", b->o.json, strerror(errno)); goto done; }
      writeJson(b, out);
      if( fclose(out) ){ cli_error("bench", "%s: %s", b->o.json, strerror(errno)); goto done; }
    }
  }
  rc = 0;
done:
  launcherStop();
  if( !b->o.keep ){
    for(i=0; i<=NSYS+1; i++){
      if( created[i] ) removeTree(i<NSYS ? b->path[i] : i==NSYS ? b->snapPath : b->cmpPath);
    }
    if( made ) rmdir(b->root);
  }else if( b->root[0] ){
    progress("kept %s", b->root);
  }
  free(b->cp);
  free(b->cpThread);
  free(b->starts);
  free(b);
  return rc;
}
