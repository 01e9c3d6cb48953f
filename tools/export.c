/*
** export.c -- `fnt export RUN --format chrome|folded|speedscope|pprof`
** (SPEC §11): a run, or a window of it, for the viewers people already use.
**
**   chrome      Trace Event JSON, one "X" event per call (Perfetto UI,
**               chrome://tracing): streamed from fnt_calls_open.
**   folded      fnt_flame's rows as "stack self_ns" lines (flamegraph.pl,
**               inferno, speedscope).
**   speedscope  speedscope's file format, one "evented" profile per thread
**               (O/C events in nanoseconds): the calls read a time slice
**               at a time (memory: one slice), sorted per thread by start,
**               each thread's events kept in a temporary file, coded in
**               a few bytes each, until its profile is written (64
**               threads a pass), then formatted into the output.
**   pprof       gzipped profile.proto (go tool pprof): one sample per
**               distinct stack with values calls/count and wall/nanoseconds;
**               the protobuf is encoded here by hand (varints and lengths),
**               gzip is zlib's.
**
** With --from/--to, the calls in the window as SPEC §8 says (start < to and
** (end > from or start >= from)): chrome and speedscope give them whole,
** folded and pprof clip them (fnt_flame's window).  The output goes
** through writer.h: formatted here, written on a thread of its own, and
** -o FILE replaced only by a complete export.  The options parser is
** shared with `fnt flame` (flame_svg.c).
*/
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "fnt.h"
#include "folded.h"
#include "strtab.h"
#include "writer.h"

/* ------------------------------------------------------------ options */

enum { OPT_FORMAT = 1000, OPT_FROM, OPT_TO, OPT_THREAD, OPT_DIFF, OPT_MEMORY };

static const struct option exportOpts[] = {
  {"format", required_argument, 0, OPT_FORMAT},
  {"output", required_argument, 0, 'o'},
  {"from",   required_argument, 0, OPT_FROM},
  {"to",     required_argument, 0, OPT_TO},
  {"thread", required_argument, 0, OPT_THREAD},
  {"diff",   no_argument,       0, OPT_DIFF},
  {"memory", required_argument, 0, OPT_MEMORY},
  {"help",   no_argument,       0, 'h'},
  {0, 0, 0, 0}
};

/* A non-negative integer option value; -1 after a message when not one. */
static int64_t optInt(const char *cmd, const char *opt, const char *s){
  char *end;
  long long v;
  errno = 0;
  v = strtoll(s, &end, 10);
  if( s[0]==0 || *end || errno || v<0 ){
    cli_error(cmd, "--%s: expected a non-negative integer, not '%s'", opt, s);
    return -1;
  }
  return v;
}

int cli_export_opts(const char *cmd, int argc, char **argv, const char *usage,
                    cli_export *o){
  int c, hasFrom = 0, hasTo = 0;
  memset(o, 0, sizeof(*o));
  o->thread = -1;
  o->memory = (size_t)CLI_EXPORT_MEMORY_MIB << 20;
  optind = 1;
  while( (c = getopt_long(argc, argv, "o:h", exportOpts, 0))!=-1 ){
    switch( c ){
      case 'o': o->out = optarg; break;
      case OPT_FORMAT:
        if( strcmp(cmd, "export")!=0 ) goto bad;
        o->format = optarg;
        break;
      case OPT_FROM: if( (o->win.t0 = optInt(cmd, "from", optarg))<0 ) return 2; hasFrom = 1; break;
      case OPT_TO:   if( (o->win.t1 = optInt(cmd, "to", optarg))<0 ) return 2; hasTo = 1; break;
      case OPT_THREAD:
        if( (o->thread = optInt(cmd, "thread", optarg))<0 ) return 2;
        if( o->thread>UINT32_MAX ){ cli_error(cmd, "--thread: %s is above 2^32-1", optarg); return 2; }
        break;
      case OPT_MEMORY: {
        int64_t mib;
        if( (mib = optInt(cmd, "memory", optarg))<0 ) return 2;
        if( mib>((int64_t)1<<40) ){ cli_error(cmd, "--memory: %s MiB is too much", optarg); return 2; }
        o->memory = (size_t)mib << 20;
        break;
      }
      case OPT_DIFF:
        if( strcmp(cmd, "flame")!=0 ) goto bad;
        o->diff = 1;
        break;
      case 'h':
        fputs(usage, stdout);
        cli_globals_help(stdout);
        return 0;
      default:
      bad:
        fputs(usage, stderr);
        cli_globals_help(stderr);
        return 2;
    }
  }
  /* fnt report RUN_A RUN_B: RUN_B's page, compared with RUN_A. */
  if( strcmp(cmd, "report")==0 && argc-optind==2 ) o->diff = 1;
  if( argc-optind!=(o->diff ? 2 : 1) ){
    cli_error(cmd, "expected %s (see fnt %s --help)",
              o->diff ? "two RUN_IDs: RUN_A RUN_B" : "one RUN_ID", cmd);
    return 2;
  }
  o->run = argv[optind];
  o->run_b = o->diff ? argv[optind+1] : 0;
  if( hasFrom!=hasTo || (!hasFrom && o->thread>=0) ){
    cli_error(cmd, "%s (see fnt %s --help)", hasFrom!=hasTo
              ? "--from and --to go together" : "--thread needs --from and --to", cmd);
    return 2;
  }
  if( hasFrom && o->win.t1<=o->win.t0 ){
    cli_error(cmd, "--to (%lld) must be greater than --from (%lld)",
              (long long)o->win.t1, (long long)o->win.t0);
    return 2;
  }
  o->win.thread = o->thread;
  o->has_win = hasFrom;
  return -1;
}

int cli_run_filed(fnt_store *st, const char *cmd, const char *run_id){
  fnt_snapshot *snap;
  fnt_scan *sc;
  int rc = cli_run_scan(st, FNT_TABLE_RUNS, run_id, 1u<<FNT_RUN_REPO, &snap, &sc);
  if( rc==FNT_OK ) rc = fnt_scan_next(sc);
  fnt_scan_close(sc);
  fnt_snapshot_release(snap);
  if( rc<0 ){
    cli_error(cmd, "reading the warehouse: %s", fnt_errmsg(st)[0] ? fnt_errmsg(st) : fnt_strerror(rc));
    return -1;
  }
  if( rc==0 ) cli_error(cmd, "no run '%s' in the warehouse (see fnt ls)", run_id);
  return rc;
}

void cli_export_summary(const char *cmd, const char *run, const char *what,
                        uint64_t n, const char *unit, const char *out){
  int toStdout = out==0 || strcmp(out, "-")==0;
  if( cli_g.json && !toStdout ){
    cli_json_begin();
    cli_json_str("run_id", run);
    cli_json_str("format", what);
    cli_json_int(unit, (long long)n);
    cli_json_str("output", out);
    cli_json_end();
  }else if( !cli_g.quiet && !cli_g.json ){
    fprintf(stderr, "fnt %s: %s: %llu %s as %s to %s\n", cmd, run,
            (unsigned long long)n, unit, what, toStdout ? "stdout" : out);
  }
}

/* ------------------------------------------------------------ output */

/* A buffered output.  The chrome and speedscope exports write a few
** numbers per call, millions of calls: they format straight into the
** buffer (obRoom, then put* on a char pointer), integers by hand, and the
** buffer goes out in large blocks: to the export's writer thread
** (writer.h), or for a speedscope thread's coded events to its temporary
** file. */
typedef struct ob {
  writer *w;                       /* the output, or NULL: */
  FILE *f;                         /* a temporary file */
  char *buf;
  size_t n, cap;
} ob;

#define OB_SMALL (1u<<16)          /* a speedscope thread's buffer */

/* The export's output: a buffer of w's. */
static void obInitWriter(ob *o, writer *w){
  o->w = w;
  o->f = 0;
  o->n = 0;
  o->cap = WRITER_BUF;
  o->buf = writer_buffer(w);
}
/* A temporary file's.  @return 0, or -1 out of memory. */
static int obInitFile(ob *o, FILE *f, size_t cap){
  o->w = 0;
  o->f = f;
  o->n = 0;
  o->cap = cap;
  o->buf = malloc(cap);
  return o->buf ? 0 : -1;
}
static void obFlush(ob *o){
  if( o->w ) o->buf = writer_put(o->w, o->buf, o->n);
  else if( o->n ) fwrite(o->buf, 1, o->n, o->f);
  o->n = 0;
}
/* Frees a temporary file's buffer (a writer frees its own). */
static void obFree(ob *o){
  if( o->w==0 ) free(o->buf);
  o->buf = 0;
}
/* A pointer to at least `n` free bytes (n <= cap); the caller advances
** o->n by what it wrote. */
static char *obRoom(ob *o, size_t n){
  if( o->cap-o->n<n ) obFlush(o);
  return o->buf+o->n;
}
static void obMem(ob *o, const char *z, size_t n){
  while( n>0 ){
    size_t k = o->cap-o->n<n ? o->cap-o->n : n;
    if( k==0 ){ obFlush(o); continue; }
    memcpy(o->buf+o->n, z, k);
    o->n += k;
    z += k;
    n -= k;
  }
}
static void obStr(ob *o, const char *z){ obMem(o, z, strlen(z)); }
/* A string literal, its length known at compile time. */
#define OBLIT(o, lit) obMem((o), "" lit, sizeof(lit)-1)
#define PUTLIT(p, lit) (memcpy((p), "" lit, sizeof(lit)-1), (p) += sizeof(lit)-1)

static const char digits2[] =
  "00010203040506070809101112131415161718192021222324252627282930313233343536373839"
  "40414243444546474849505152535455565758596061626364656667686970717273747576777879"
  "8081828384858687888990919293949596979899";

/* Decimal printing, two digits at a time from digits2.  A number below
** 10^8 is split into pairs by 32-bit divisions by constants (a multiply
** each), the pairs of 8 digits independent of one another; a larger one is
** first cut into 8-digit chunks. */
static void putPair(char *p, uint32_t v){ memcpy(p, digits2+2*v, 2); }
/* v < 10^4 as exactly 4 digits. */
static void put4(char *p, uint32_t v){ putPair(p, v/100); putPair(p+2, v%100); }
/* v < 10^8 as exactly 8 digits. */
static void put8(char *p, uint32_t v){ put4(p, v/10000); put4(p+4, v%10000); }
/* v < 100 as 1 or 2 digits.  @return the end. */
static char *putUpTo2(char *p, uint32_t v){
  if( v<10 ){ *p = (char)('0'+v); return p+1; }
  putPair(p, v);
  return p+2;
}
/* v < 10^8 without leading zeros.  @return the end. */
static char *putU32(char *p, uint32_t v){
  if( v<100 ) return putUpTo2(p, v);
  if( v<10000 ){ p = putUpTo2(p, v/100); putPair(p, v%100); return p+2; }
  if( v<1000000 ){ p = putUpTo2(p, v/10000); put4(p, v%10000); return p+4; }
  p = putUpTo2(p, v/1000000);
  v %= 1000000;
  putPair(p, v/10000);
  put4(p+2, v%10000);
  return p+6;
}
/* v in decimal at p.  @return the end. */
static char *putU64(char *p, uint64_t v){
  uint64_t hi;
  if( v<100000000 ) return putU32(p, (uint32_t)v);
  hi = v/100000000;
  if( hi<100000000 ){
    p = putU32(p, (uint32_t)hi);
  }else{                                         /* 17 to 20 digits */
    p = putU32(p, (uint32_t)(hi/100000000));
    put8(p, (uint32_t)(hi%100000000));
    p += 8;
  }
  put8(p, (uint32_t)(v%100000000));
  return p+8;
}
static char *putInt(char *p, int64_t v){
  if( v<0 ){ *p++ = '-'; return putU64(p, (uint64_t)0-(uint64_t)v); }
  return putU64(p, (uint64_t)v);
}
/* Nanoseconds as microseconds with 3 decimals. */
static char *putMicros(char *p, int64_t ns){
  uint64_t a = ns<0 ? (uint64_t)0-(uint64_t)ns : (uint64_t)ns;
  unsigned r = (unsigned)(a%1000);
  if( ns<0 ) *p++ = '-';
  p = putU64(p, a/1000);
  p[0] = '.';
  p[1] = (char)('0'+r/100);
  p[2] = digits2[r%100*2];
  p[3] = digits2[r%100*2+1];
  return p+4;
}
/* The most a putInt or putMicros writes. */
#define PUT_INT_MAX 24

static void obInt(ob *o, int64_t v){
  o->n = (size_t)(putInt(obRoom(o, PUT_INT_MAX), v) - o->buf);
}

/* z as a JSON string, quotes included, at p (room: jsonSize(z)).
** @return the end. */
static size_t jsonSize(const char *z){ return 6*strlen(z)+2; }
static char *putJson(char *p, const char *z){
  *p++ = '"';
  for(; *z; z++){
    unsigned char ch = (unsigned char)*z;
    if( ch>=0x20 && ch!='"' && ch!='\\' ){ *p++ = (char)ch; continue; }
    *p++ = '\\';
    if( ch=='"' || ch=='\\' ){ *p++ = (char)ch; continue; }
    p += sprintf(p, "u%04x", ch);
  }
  *p++ = '"';
  return p;
}
static void obJson(ob *o, const char *z){
  size_t n = jsonSize(z);
  char *t;
  if( n<=o->cap ){ o->n = (size_t)(putJson(obRoom(o, n), z) - o->buf); return; }
  t = malloc(n);
  if( t ){ obMem(o, t, (size_t)(putJson(t, z) - t)); free(t); }
}

/* The functions of a block of calls as JSON strings, made again when the
** block's functions change (fnt_call_block.fn_version). */
typedef struct json_names {
  int valid;
  uint64_t version;
  char *text;                      /* the strings, one after the other */
  size_t *off;                     /* n+1 offsets into text */
  size_t max;                      /* the longest */
} json_names;

static int jsonNames(json_names *j, const fnt_call_block *b){
  size_t i, total = 0;
  char *p;
  if( j->valid && j->version==b->fn_version ) return 0;
  for(i=0; i<b->n_fn; i++) total += jsonSize(b->fn_symbol[i]);
  free(j->text);
  free(j->off);
  j->text = malloc(total ? total : 1);
  j->off = malloc((b->n_fn+1)*sizeof(size_t));
  j->valid = 0;
  if( j->text==0 || j->off==0 ) return -1;
  p = j->text;
  j->max = 0;
  for(i=0; i<b->n_fn; i++){
    j->off[i] = (size_t)(p-j->text);
    p = putJson(p, b->fn_symbol[i]);
    if( (size_t)(p-j->text)-j->off[i]>j->max ) j->max = (size_t)(p-j->text)-j->off[i];
  }
  j->off[b->n_fn] = (size_t)(p-j->text);
  j->version = b->fn_version;
  j->valid = 1;
  return 0;
}
static void jsonNamesFree(json_names *j){
  free(j->text);
  free(j->off);
}

/* ------------------------------------------------------------ threads */

/* The run's threads (of the window, or the one asked for), ascending. */
typedef struct thread_set { uint32_t *a; size_t n, cap; } thread_set;

static int threadsAdd(thread_set *s, uint32_t t){
  size_t lo = 0, hi = s->n;
  while( lo<hi ){
    size_t mid = (lo+hi)/2;
    if( s->a[mid]<t ) lo = mid+1; else hi = mid;
  }
  if( lo<s->n && s->a[lo]==t ) return 0;
  if( s->n==s->cap ){
    size_t nNew = s->cap ? s->cap*2 : 16;
    uint32_t *a = realloc(s->a, nNew*sizeof(uint32_t));
    if( a==0 ) return -1;
    s->a = a;
    s->cap = nNew;
  }
  memmove(s->a+lo+1, s->a+lo, (s->n-lo)*sizeof(uint32_t));
  s->a[lo] = t;
  s->n++;
  return 0;
}

/* The columns of the calls the exports read (fnt_call_predicate.block_cols):
** a call's thread and times, and with them its place and function (chrome
** adds self_ns, speedscope parent_id); the others are not decoded. */
#define COLS_TIMES (FNT_CALL_COL(FNT_CALL_THREAD) | FNT_CALL_COL(FNT_CALL_START_NS) \
                    | FNT_CALL_COL(FNT_CALL_DUR_NS))
#define COLS_CALL  (COLS_TIMES | FNT_CALL_COL(FNT_CALL_CALL_ID) | FNT_CALL_COL(FNT_CALL_DEPTH) \
                    | FNT_CALL_COL(FNT_CALL_SYMBOL))

/* A predicate for the run's calls of the window (inclusive overlap bounds:
** inWindow() applies SPEC §8's rule exactly), blocks of columns `cols`. */
static void windowPredicate(const cli_export *o, const char **run, uint64_t cols,
                            fnt_call_predicate *p){
  fnt_call_predicate_init(p);
  p->block_cols = cols;
  p->run_ids = run;
  p->n_run_ids = 1;
  p->thread = o->thread;
  if( o->has_win ){ p->t0 = o->win.t0; p->t1 = o->win.t1; }
}

static int inWindow(const cli_export *o, int64_t start, int64_t end){
  return !o->has_win || (start < o->win.t1 && (end > o->win.t0 || start >= o->win.t0));
}

/* ------------------------------------------------------------ chrome */

/* The most a chrome event writes around its name. */
#define CHROME_ROW_MAX (96 + 6*PUT_INT_MAX)

/* One X event per call, a block at a time; the threads seen go to ts. */
static int chromeBlock(const cli_export *o, const fnt_call_block *b,
                       json_names *names, thread_set *ts, ob *out,
                       uint64_t *ncalls){
  size_t i;
  int64_t lastThread = -1;
  if( jsonNames(names, b) ) return FNT_E_NOMEM;
  for(i=0; i<b->n; i++){
    int64_t start = b->start_ns[i], dur = b->dur_ns[i];
    const char *name = names->text + names->off[b->fn[i]];
    char *p;
    if( !inWindow(o, start, (int64_t)((uint64_t)start+(uint64_t)dur)) ) continue;
    if( b->thread[i]!=lastThread ){
      lastThread = b->thread[i];
      if( threadsAdd(ts, (uint32_t)lastThread) ) return FNT_E_NOMEM;
    }
    p = obRoom(out, CHROME_ROW_MAX);
    if( (*ncalls)++ ) PUTLIT(p, ",\n");
    PUTLIT(p, "{\"ph\":\"X\",\"pid\":1,\"tid\":");
    p = putInt(p, b->thread[i]);
    PUTLIT(p, ",\"ts\":");
    p = putMicros(p, start);
    PUTLIT(p, ",\"dur\":");
    p = putMicros(p, dur);
    PUTLIT(p, ",\"name\":");
    out->n = (size_t)(p-out->buf);
    obMem(out, name, names->off[b->fn[i]+1]-names->off[b->fn[i]]);
    p = obRoom(out, CHROME_ROW_MAX);
    PUTLIT(p, ",\"args\":{\"call_id\":");
    p = putInt(p, b->call_id[i]);
    PUTLIT(p, ",\"depth\":");
    p = putInt(p, b->depth[i]);
    PUTLIT(p, ",\"self_ns\":");
    p = putInt(p, b->self_ns[i]);
    PUTLIT(p, "}}");
    out->n = (size_t)(p-out->buf);
  }
  return FNT_OK;
}

static int exportChrome(fnt_snapshot *snap, const cli_export *o, ob *out,
                        uint64_t *ncalls){
  const char *run = o->run;
  fnt_call_predicate p;
  fnt_calls *sc = 0;
  fnt_call_block b;
  json_names names = {0};
  thread_set ts = {0};
  size_t i;
  int rc;
  windowPredicate(o, &run, COLS_CALL | FNT_CALL_COL(FNT_CALL_SELF_NS), &p);
  OBLIT(out, "{\"displayTimeUnit\":\"ns\",\"otherData\":{\"run_id\":");
  obJson(out, o->run);
  OBLIT(out, "},\"traceEvents\":[\n");
  rc = fnt_calls_open(snap, &p, &sc);
  /* A failed write (a full disk) stops the export: writer_close says why. */
  while( rc==FNT_OK && !writer_failed(out->w) && (rc = fnt_calls_next_block(sc, &b))==1 ){
    rc = chromeBlock(o, &b, &names, &ts, out, ncalls);
  }
  fnt_calls_close(sc);
  for(i=0; rc==FNT_OK && i<ts.n; i++){
    obStr(out, *ncalls||i ? ",\n" : "");
    OBLIT(out, "{\"ph\":\"M\",\"pid\":1,\"tid\":");
    obInt(out, ts.a[i]);
    OBLIT(out, ",\"name\":\"thread_name\",\"args\":{\"name\":\"thread ");
    obInt(out, ts.a[i]);
    OBLIT(out, "\"}}");
  }
  if( rc==FNT_OK ){
    obStr(out, *ncalls||ts.n ? ",\n" : "");
    OBLIT(out, "{\"ph\":\"M\",\"pid\":1,\"name\":\"process_name\",\"args\":{\"name\":");
    obJson(out, o->run);
    OBLIT(out, "}}\n]}\n");
  }
  jsonNamesFree(&names);
  free(ts.a);
  return rc<0 ? rc : FNT_OK;
}

/* ------------------------------------------------------------ speedscope */

/* Frames: symbols interned to indexes of speedscope's shared.frames (or
** pprof's functions), fewer than 2^31 (an event codes frame*2 in 32 bits,
** ssEvent). */
typedef strtab frames;

static int64_t frameOf(frames *fr, const char *z){ return strtab_intern(fr, z, strlen(z)); }

/* A call of one slice, and the frames still open on a thread's stack. */
typedef struct ss_call {
  int64_t start, end, call_id, parent_id;
  uint32_t frame, thread;          /* thread: its index in the group */
  int64_t depth;
} ss_call;
typedef struct ss_open { int64_t end, call_id; uint32_t frame; } ss_open;

/* One thread's profile being written: its events go to a temporary file
** (a profile's events must be contiguous, and a slice holds every thread's
** calls), formatted into the output when the group's threads are done. */
typedef struct ss_thread {
  ob out;
  ss_open *stack;
  size_t ns, caps;
  int64_t first, last;
  int64_t at;                      /* the time of its last event coded */
} ss_thread;

static int cmpSsCall(const void *a, const void *b){
  const ss_call *x = a, *y = b;
  if( x->thread!=y->thread ) return x->thread<y->thread ? -1 : 1;
  if( x->start!=y->start ) return x->start<y->start ? -1 : 1;
  if( x->call_id!=y->call_id ) return x->call_id<y->call_id ? -1 : 1;
  /* A run of format 1 may repeat a seq_no: the parent first still. */
  return x->depth<y->depth ? -1 : x->depth>y->depth;
}

/* Calls per slice of the run's time that a speedscope export holds
** ($FNT_SPEEDSCOPE_SLICE_CALLS overrides it: the tests make slices tiny),
** and threads written at once (one temporary file each). */
#define SS_SLICE_CALLS (1u<<17)
#define SS_GROUP       64

/* An event in a thread's temporary file, 8 bytes where its text takes
** 40: two 32-bit words, frame*2 (+1 for C) and the zigzag of its time's
** distance from the thread's previous event (0 for the first), a distance
** of 2^32-1 or more marked by that value and given whole in 64 more bits.
** Fixed words cost less to code and decode than varints (no branch on
** their length).  The text is formatted once, from the file, into the
** output (ssFormat): the temporary files take a fifth of the writes and
** reads of the text. */
#define SS_CODE_MAX 16
#define SS_FAR      0xffffffffu

static void ssEvent(ss_thread *t, int close, uint32_t frame, int64_t at){
  char *p = obRoom(&t->out, SS_CODE_MAX);
  uint64_t d = (uint64_t)at-(uint64_t)t->at;
  uint32_t w[2];
  d = d<<1 ^ (uint64_t)-(d>>63);
  w[0] = frame<<1 | (uint32_t)close;
  w[1] = d<SS_FAR ? (uint32_t)d : SS_FAR;
  memcpy(p, w, 8);
  if( w[1]==SS_FAR ) memcpy(p+8, &d, 8);
  t->at = at;
  t->out.n = (size_t)(p + (w[1]==SS_FAR ? 16 : 8) - t->out.buf);
}

/* The most an event's text takes. */
#define SS_EVENT_MAX (40 + 2*PUT_INT_MAX)

/* Thread t's events, decoded from its temporary file (flushed), as text
** into out; t's buffer, free now, holds what is read.  @return FNT_OK, or
** FNT_E_IO (the file unreadable or not as written). */
static int ssFormat(ss_thread *t, ob *out){
  unsigned char *buf = (unsigned char *)t->out.buf;
  size_t have = 0, pos = 0;
  int64_t at = 0;
  int eof = 0, first = 1;
  if( fseek(t->out.f, 0, SEEK_SET) ) return FNT_E_IO;
  for(;;){
    uint32_t w[2];
    uint64_t d;
    char *p;
    if( have-pos<SS_CODE_MAX && !eof ){          /* refill: an event may be cut */
      size_t k;
      memmove(buf, buf+pos, have-pos);
      have -= pos;
      pos = 0;
      k = fread(buf+have, 1, t->out.cap-have, t->out.f);
      if( k==0 ){
        if( ferror(t->out.f) ) return FNT_E_IO;
        eof = 1;
      }
      have += k;
    }
    if( pos==have ) return FNT_OK;
    if( have-pos<8 ) return FNT_E_IO;
    memcpy(w, buf+pos, 8);
    pos += 8;
    d = w[1];
    if( d==SS_FAR ){
      if( have-pos<8 ) return FNT_E_IO;
      memcpy(&d, buf+pos, 8);
      pos += 8;
    }
    at = (int64_t)((uint64_t)at + (d>>1 ^ (uint64_t)-(d&1)));
    p = obRoom(out, SS_EVENT_MAX);
    if( first ) PUTLIT(p, "\n{\"type\":\"");
    else PUTLIT(p, ",\n{\"type\":\"");
    first = 0;
    *p++ = w[0]&1 ? 'C' : 'O';
    PUTLIT(p, "\",\"frame\":");
    p = putU64(p, w[0]>>1);
    PUTLIT(p, ",\"at\":");
    p = putInt(p, at);
    *p++ = '}';
    out->n = (size_t)(p-out->buf);
  }
}

/* A thread's next call, in start order (a parent before its children):
** the frames above its parent close (C, at their end: they ended before
** it) and it opens (O), so events nest and never go back in time. */
static int ssCall(ss_thread *t, const ss_call *c){
  while( t->ns>0 && t->stack[t->ns-1].call_id!=c->parent_id ){
    t->ns--;
    ssEvent(t, 1, t->stack[t->ns].frame, t->stack[t->ns].end);
  }
  if( t->ns==t->caps ){
    size_t nNew = t->caps ? t->caps*2 : 64;
    ss_open *x = realloc(t->stack, nNew*sizeof(*x));
    if( x==0 ) return FNT_E_NOMEM;
    t->stack = x;
    t->caps = nNew;
  }
  ssEvent(t, 0, c->frame, c->start);
  if( c->start<t->first ) t->first = c->start;    /* began before the window */
  if( c->end>t->last ) t->last = c->end;
  t->stack[t->ns].end = c->end;
  t->stack[t->ns].call_id = c->call_id;
  t->stack[t->ns++].frame = c->frame;
  return FNT_OK;
}

#define SS_TCACHE 64               /* threads whose place in the group is kept */

/* The calls of one slice of a group of threads, the frames of the
** functions of the blocks being read, and where threads lie in the group
** (a block's rows change thread at nearly every row: the run's rows go by
** depth and start). */
typedef struct ss_slice {
  ss_call *v;
  uint64_t *key, *ktmp;            /* the order (ssSort) */
  size_t n, cap;
  int64_t smin, smax;              /* the slice's earliest, latest start */
  uint32_t *frame;                 /* per function of the block: frame+1 */
  size_t nframe;
  uint64_t version;                /* the block's fn_version it is for */
  int64_t tthread[SS_TCACHE];      /* a thread (-1: none), by its low bits, */
  size_t tix[SS_TCACHE];           /* and its index in ts (g1: not the group's) */
} ss_slice;

/* The calls of block b that the slice starting at `a` gives for threads
** ts[g0..g1), their frames interned in fr.  @return FNT_OK or NOMEM. */
static int ssTake(ss_slice *sl, const fnt_call_block *b, const cli_export *o,
                  const uint32_t *ts, size_t g0, size_t g1, int64_t a,
                  int64_t lo, frames *fr){
  int64_t lastThread = -1;
  size_t ix = g1, i;
  if( sl->frame==0 || sl->version!=b->fn_version ){
    free(sl->frame);
    sl->frame = calloc(b->n_fn+1, sizeof(uint32_t));
    if( sl->frame==0 ) return FNT_E_NOMEM;
    sl->version = b->fn_version;
  }
  if( sl->cap-sl->n<b->n ){
    size_t nNew = (sl->cap ? sl->cap*2 : 4096) + b->n;
    ss_call *x = realloc(sl->v, nNew*sizeof(*x));
    uint64_t *k1 = 0, *k2 = 0;
    if( x ) sl->v = x;
    if( x && (k1 = realloc(sl->key, nNew*sizeof(uint64_t)))!=0 ) sl->key = k1;
    if( k1 && (k2 = realloc(sl->ktmp, nNew*sizeof(uint64_t)))!=0 ) sl->ktmp = k2;
    if( k2==0 ) return FNT_E_NOMEM;
    sl->cap = nNew;
  }
  for(i=0; i<b->n; i++){
    int64_t start = b->start_ns[i], end = (int64_t)((uint64_t)start+(uint64_t)b->dur_ns[i]);
    ss_call *c;
    int64_t fn = b->fn[i];
    /* A call that started in an earlier slice was given there. */
    if( (start<a && a>lo) || !inWindow(o, start, end) ) continue;
    if( b->thread[i]!=lastThread ){
      size_t l = g0, h = g1, s;
      lastThread = b->thread[i];
      s = (size_t)lastThread & (SS_TCACHE-1);
      if( sl->tthread[s]!=lastThread ){
        while( l<h ){
          size_t mid = (l+h)/2;
          if( ts[mid]<(uint64_t)lastThread ) l = mid+1; else h = mid;
        }
        sl->tthread[s] = lastThread;
        sl->tix[s] = l<g1 && ts[l]==(uint64_t)lastThread ? l : g1;
      }
      ix = sl->tix[s];
    }
    if( ix==g1 ) continue;                      /* another group's */
    if( sl->frame[fn]==0 ){
      int64_t id = frameOf(fr, b->fn_symbol[fn]);
      if( id<0 ) return FNT_E_NOMEM;
      sl->frame[fn] = (uint32_t)id+1;
    }
    c = &sl->v[sl->n++];
    c->start = start;
    c->end = end;
    c->call_id = b->call_id[i];
    c->parent_id = b->parent_id[i];
    c->depth = b->depth[i];
    c->thread = (uint32_t)(ix-g0);
    c->frame = sl->frame[fn]-1;
    if( start<sl->smin ) sl->smin = start;
    if( start>sl->smax ) sl->smax = start;
  }
  return FNT_OK;
}

#define SS_AHEAD 16               /* calls prefetched ahead of the one written */
#define SS_RADIX 11               /* bits a pass of the radix sort */

/* Orders the slice's calls by (thread, start, call_id) into sl->key: the
** thread, the start (from the slice's earliest) and the call's index in
** sl->v packed in one 64-bit key, sorted by LSD radix on the bits above
** the index (a stable sort), the index then read from the low bits.  The
** calls that start at the same time on a thread then go by call_id, depth.  A
** slice too wide for one key sorts its calls (qsort) in place. */
static int ssSort(ss_slice *sl, uint32_t ng){
  uint64_t span = (uint64_t)sl->smax-(uint64_t)sl->smin;
  uint64_t *key = sl->key, *tmp = sl->ktmp, imask;
  int sb = 0, tb = 0, ib = 0, sh;
  size_t cnt[1u<<SS_RADIX], i, j;
  while( sb<64 && (span>>sb) ) sb++;
  while( ((uint64_t)(ng-1)>>tb) ) tb++;
  while( ((uint64_t)(sl->n ? sl->n-1 : 0)>>ib) ) ib++;
  imask = ib ? ~(uint64_t)0>>(64-ib) : 0;
  if( sb+tb+ib>64 ){
    qsort(sl->v, sl->n, sizeof(ss_call), cmpSsCall);
    for(i=0; i<sl->n; i++) key[i] = i;
    return FNT_OK;
  }
  for(i=0; i<sl->n; i++){
    const ss_call *c = &sl->v[i];
    uint64_t k = (uint64_t)c->start-(uint64_t)sl->smin;
    if( tb ) k |= (uint64_t)c->thread<<sb;
    key[i] = ib ? k<<ib | i : k;
  }
  for(sh=ib; sl->n>1 && sh<ib+sb+tb; sh+=SS_RADIX){
    size_t sum = 0;
    uint64_t *x;
    memset(cnt, 0, sizeof(cnt));
    for(i=0; i<sl->n; i++) cnt[key[i]>>sh & ((1u<<SS_RADIX)-1)]++;
    if( cnt[key[0]>>sh & ((1u<<SS_RADIX)-1)]==sl->n ) continue;   /* one digit */
    for(j=0; j<(1u<<SS_RADIX); j++){ size_t c = cnt[j]; cnt[j] = sum; sum += c; }
    for(i=0; i<sl->n; i++) tmp[cnt[key[i]>>sh & ((1u<<SS_RADIX)-1)]++] = key[i];
    x = key; key = tmp; tmp = x;
  }
  sl->key = key;
  sl->ktmp = tmp;
  /* Only calls of equal (thread, start), equal keys above the index, can
  ** be out of order: the others are not looked at (sl->v read at random
  ** costs a cache miss a call). */
  for(i=1; i<sl->n; i++){
    uint64_t k = key[i];
    if( (key[i-1]^k)>imask || cmpSsCall(&sl->v[key[i-1]&imask], &sl->v[k&imask])<=0 ) continue;
    for(j=i; j>0 && (key[j-1]^k)<=imask
             && cmpSsCall(&sl->v[k&imask], &sl->v[key[j-1]&imask])<0; j--) key[j] = key[j-1];
    key[j] = k;
  }
  for(i=0; i<sl->n; i++) key[i] &= imask;
  return FNT_OK;
}

/* Threads ts[g0..g1) of the export: the run's time [lo, hi] slice by
** slice, every thread of the group at once, each profile then copied from
** its temporary file into `out`. */
static int ssGroup(fnt_snapshot *snap, const cli_export *o, const uint32_t *ts,
                   size_t g0, size_t g1, int64_t lo, int64_t hi, int64_t width,
                   frames *fr, ob *out, uint64_t *ncalls){
  const char *run = o->run;
  size_t ng = g1-g0, i;
  ss_thread *th = calloc(ng, sizeof(ss_thread));
  ss_slice sl;
  int64_t a;
  int rc = FNT_OK;
  memset(&sl, 0, sizeof(sl));
  for(i=0; i<SS_TCACHE; i++) sl.tthread[i] = -1;
  if( th==0 ) return FNT_E_NOMEM;
  for(i=0; i<ng && rc==FNT_OK; i++){
    th[i].first = lo;
    th[i].last = lo;
    if( obInitFile(&th[i].out, tmpfile(), OB_SMALL) ) rc = FNT_E_NOMEM;
    else if( th[i].out.f==0 ) rc = FNT_E_IO;
  }
  for(a=lo; rc==FNT_OK && !writer_failed(out->w) && a<=hi; a = a>hi-width ? hi+1 : a+width){
    fnt_call_predicate p;
    fnt_calls *sc = 0;
    fnt_call_block b;
    windowPredicate(o, &run, COLS_CALL | FNT_CALL_COL(FNT_CALL_PARENT_ID), &p);
    if( ng==1 ) p.thread = ts[g0];
    p.t0 = a;
    p.t1 = a>hi-width ? hi : a+width-1;         /* the slice [t0, t1] */
    sl.n = 0;
    sl.smin = INT64_MAX;
    sl.smax = INT64_MIN;
    rc = fnt_calls_open(snap, &p, &sc);
    while( rc==FNT_OK && (rc = fnt_calls_next_block(sc, &b))==1 ){
      rc = ssTake(&sl, &b, o, ts, g0, g1, a, lo, fr);
    }
    fnt_calls_close(sc);
    if( rc<0 ) break;
    rc = ssSort(&sl, (uint32_t)ng);
    for(i=0; i<sl.n && rc==FNT_OK; i++){
      const ss_call *c = &sl.v[sl.key[i]];
      /* The calls in sorted order lie anywhere in sl.v: fetched ahead. */
      if( i+SS_AHEAD<sl.n ) __builtin_prefetch(&sl.v[sl.key[i+SS_AHEAD]]);
      rc = ssCall(&th[c->thread], c);
    }
    *ncalls += sl.n;
  }
  for(i=0; i<ng; i++){
    ss_thread *t = &th[i];
    if( rc==FNT_OK ){
      while( t->ns>0 ){
        t->ns--;
        ssEvent(t, 1, t->stack[t->ns].frame, t->stack[t->ns].end);
      }
      obFlush(&t->out);
      if( fflush(t->out.f) || ferror(t->out.f) ) rc = FNT_E_IO;
      obStr(out, g0+i ? ",\n{\"type\":\"evented\",\"name\":\"thread "
                      : "\n{\"type\":\"evented\",\"name\":\"thread ");
      obInt(out, ts[g0+i]);
      obStr(out, "\",\"unit\":\"nanoseconds\",\"events\":[");
      if( rc==FNT_OK ) rc = ssFormat(t, out);
    }
    if( rc==FNT_OK ){
      obStr(out, "\n],\"startValue\":");
      obInt(out, t->first);
      obStr(out, ",\"endValue\":");
      obInt(out, t->last);
      obMem(out, "}", 1);
    }
    if( t->out.f ) fclose(t->out.f);
    obFree(&t->out);
    free(t->stack);
  }
  free(th);
  free(sl.v);
  free(sl.key);
  free(sl.ktmp);
  free(sl.frame);
  return rc;
}

static int exportSpeedscope(fnt_snapshot *snap, const cli_export *o, ob *out,
                            uint64_t *ncalls){
  const char *run = o->run;
  fnt_call_predicate p;
  fnt_calls *sc = 0;
  fnt_call_block b;
  thread_set ts = {0};
  frames fr = {0};
  int64_t lo = INT64_MAX, hi = INT64_MIN, width;
  uint64_t total = 0;
  size_t i;
  int rc;
  /* Threads and the time span from the depth-0 calls (every call lies
  ** within one); the run's calls size the slices. */
  windowPredicate(o, &run, COLS_TIMES, &p);
  p.depth_max = 0;
  rc = fnt_calls_open(snap, &p, &sc);
  while( rc==FNT_OK && (rc = fnt_calls_next_block(sc, &b))==1 ){
    for(i=0, rc=FNT_OK; i<b.n && rc==FNT_OK; i++){
      int64_t start = b.start_ns[i], end = (int64_t)((uint64_t)start+(uint64_t)b.dur_ns[i]);
      if( !inWindow(o, start, end) ) continue;
      if( threadsAdd(&ts, (uint32_t)b.thread[i]) ) rc = FNT_E_NOMEM;
      if( start<lo ) lo = start;
      if( end>hi ) hi = end;
    }
  }
  fnt_calls_close(sc);
  if( rc==FNT_OK && ts.n ){
    fnt_heat *h = 0;
    rc = fnt_heat_compute(snap, o->run, &h);
    for(i=0; rc==FNT_OK && i<fnt_heat_count(h); i++) total += (uint64_t)fnt_heat_rows(h)[i].calls;
    fnt_heat_free(h);
  }
  if( rc<0 ) goto done;
  if( o->has_win ){
    if( lo<o->win.t0 ) lo = o->win.t0;
    if( hi>o->win.t1-1 ) hi = o->win.t1-1;
  }
  /* Slices that hold about SS_SLICE_CALLS calls if calls were spread evenly. */
  {
    const char *z = getenv("FNT_SPEEDSCOPE_SLICE_CALLS");
    double per = z && atof(z)>0 ? atof(z) : SS_SLICE_CALLS;
    width = hi>=lo ? (int64_t)((double)(hi-lo+1) * per / (double)(total ? total : 1)) : 1;
  }
  if( width<1 ) width = 1;
  obStr(out, "{\"$schema\":\"https://www.speedscope.app/file-format-schema.json\","
              "\"exporter\":\"fntrace\",\"name\":");
  obJson(out, o->run);
  obStr(out, ",\"activeProfileIndex\":0,\"profiles\":[");
  for(i=0; rc==FNT_OK && i<ts.n; i+=SS_GROUP){
    rc = ssGroup(snap, o, ts.a, i, i+SS_GROUP<ts.n ? i+SS_GROUP : ts.n, lo, hi, width,
                 &fr, out, ncalls);
  }
  if( rc<0 ) goto done;
  rc = FNT_OK;
  obStr(out, "\n],\"shared\":{\"frames\":[");
  for(i=0; i<fr.n; i++){
    obStr(out, i ? ",{\"name\":" : "{\"name\":");
    obJson(out, fr.name[i]);
    obMem(out, "}", 1);
  }
  obStr(out, "]}}\n");
done:
  strtab_clear(&fr);
  free(ts.a);
  return rc<0 ? rc : FNT_OK;
}

/* ------------------------------------------------------------ pprof */

/* Protobuf by hand: varints, and length-delimited fields. */
typedef struct pb { unsigned char *p; size_t n, cap; int failed; } pb;

static void pbByte(pb *b, unsigned char c){
  if( b->n==b->cap ){
    size_t nNew = b->cap ? b->cap*2 : 4096;
    unsigned char *a = b->failed ? 0 : realloc(b->p, nNew);
    if( a==0 ){ b->failed = 1; return; }
    b->p = a;
    b->cap = nNew;
  }
  b->p[b->n++] = c;
}
static void pbVarint(pb *b, uint64_t v){
  while( v>=0x80 ){ pbByte(b, (unsigned char)(v|0x80)); v >>= 7; }
  pbByte(b, (unsigned char)v);
}
static void pbTag(pb *b, unsigned field, unsigned wire){ pbVarint(b, (uint64_t)field<<3 | wire); }
static void pbInt(pb *b, unsigned field, uint64_t v){ pbTag(b, field, 0); pbVarint(b, v); }
static void pbBytes(pb *b, unsigned field, const void *z, size_t n){
  size_t i;
  pbTag(b, field, 2);
  pbVarint(b, n);
  for(i=0; i<n; i++) pbByte(b, ((const unsigned char*)z)[i]);
}

/* profile.proto field numbers. */
#define PP_SAMPLE_TYPE 1
#define PP_SAMPLE      2
#define PP_LOCATION    4
#define PP_FUNCTION    5
#define PP_STRING      6
#define PP_DURATION   10
#define PP_PERIOD_TYPE 11
#define PP_PERIOD     12

/* A ValueType message of string indexes. */
static void ppValueType(pb *b, unsigned field, uint64_t type, uint64_t unit){
  pb m = {0};
  pbInt(&m, 1, type);
  pbInt(&m, 2, unit);
  pbBytes(b, field, m.p, m.n);
  b->failed |= m.failed;
  free(m.p);
}

/* The profile, encoded as the stacks come and gzipped on the way out:
** strings 0 "", 1 calls, 2 count, 3 wall, 4 nanoseconds, then one per
** symbol (function and location id k+1: symbol k, string k+5).  The
** samples go first; the locations, functions and strings they name
** follow them (protobuf reads a message's fields in any order). */
typedef struct pp_stream {
  ob *out;
  z_stream z;
  pb buf;                 /* encoded, not yet deflated */
  pb m, loc;              /* one sample's message and locations */
  frames fr;
  int64_t total;          /* the samples' wall time: the duration */
  uint64_t calls;
  /* the previous stack, whose leading frames the next one mostly shares:
  ** its text, and per frame from depth 0 its id and where it ends */
  char *prev;
  size_t nprev, capprev;
  uint32_t *id;
  size_t *end, nid, capid;
} pp_stream;

/* Deflates what buf holds into out (all of it with Z_FINISH).
** @return 0, or -1 (a zlib error). */
static int ppDeflate(pp_stream *p, int flush){
  unsigned char buf[1<<15];
  int zrc;
  p->z.next_in = p->buf.p;
  p->z.avail_in = (uInt)p->buf.n;
  do{
    p->z.next_out = buf;
    p->z.avail_out = sizeof(buf);
    zrc = deflate(&p->z, flush);
    if( zrc==Z_STREAM_ERROR ) return -1;
    obMem(p->out, (const char*)buf, sizeof(buf)-p->z.avail_out);
  }while( p->z.avail_out==0 || (flush==Z_FINISH && zrc!=Z_STREAM_END) );
  p->buf.n = 0;
  return 0;
}

enum { PP_NOMEM = 1, PP_ZLIB };   /* what ppSample and ppFinish stop with */

/* The frames of `stack` from depth 0 into p->id (and p->end), those it
** shares with the previous stack taken from there.  @return 0, or -1 out
** of memory. */
static int ppFrames(pp_stream *p, const char *stack, size_t len){
  size_t same = 0, k, at;
  while( same<len && same<p->nprev && stack[same]==p->prev[same] ) same++;
  /* frame k is shared when both texts end it at the same byte */
  for(k=0; k<p->nid && p->end[k]<=same; k++){
    size_t e = p->end[k];
    if( e==same && !((e==len || stack[e]==';') && (e==p->nprev || p->prev[e]==';')) ) break;
  }
  p->nid = k;
  at = k ? p->end[k-1]+1 : 0;
  while( p->nid==0 || p->end[p->nid-1]<len ){
    const char *e = memchr(stack+at, ';', len-at);
    size_t n = e ? (size_t)(e-stack)-at : len-at;
    int64_t id = strtab_intern(&p->fr, stack+at, n);
    if( id<0 ) return -1;
    if( p->nid==p->capid ){
      size_t cap = p->capid ? p->capid*2 : 64;
      uint32_t *a = realloc(p->id, cap*sizeof(uint32_t));
      size_t *b = a ? realloc(p->end, cap*sizeof(size_t)) : 0;
      if( a ) p->id = a;
      if( b==0 ) return -1;
      p->end = b;
      p->capid = cap;
    }
    p->id[p->nid] = (uint32_t)id;
    p->end[p->nid++] = at+n;
    if( e==0 ) break;
    at += n+1;
  }
  if( len+1>p->capprev ){
    char *a = realloc(p->prev, len+1);
    if( a==0 ) return -1;
    p->prev = a;
    p->capprev = len+1;
  }
  memcpy(p->prev, stack, len);
  p->nprev = len;
  return 0;
}

/* folded_row_fn: one sample, its locations leaf first. */
static int ppSample(void *ctx, const char *stack, size_t len, int64_t self_ns, int64_t calls,
                    int64_t incl_ns){
  pp_stream *p = ctx;
  pb vals = {0};
  size_t k;
  (void)incl_ns;
  if( ppFrames(p, stack, len) ) return PP_NOMEM;
  p->m.n = p->loc.n = 0;
  for(k=p->nid; k>0; k--) pbVarint(&p->loc, (uint64_t)p->id[k-1]+1);
  pbBytes(&p->m, 1, p->loc.p, p->loc.n);      /* location_id, packed */
  pbVarint(&vals, (uint64_t)calls);
  pbVarint(&vals, (uint64_t)self_ns);
  pbBytes(&p->m, 2, vals.p, vals.n);          /* value, packed */
  p->m.failed |= vals.failed;
  free(vals.p);
  pbBytes(&p->buf, PP_SAMPLE, p->m.p, p->m.n);
  p->total += self_ns;
  p->calls += (uint64_t)calls;
  if( p->m.failed || p->loc.failed || p->buf.failed ) return PP_NOMEM;
  return p->buf.n>=(1u<<16) && ppDeflate(p, Z_NO_FLUSH) ? PP_ZLIB : 0;
}

/* The rest of the profile after its samples, and the gzip trailer.
** @return 0, PP_NOMEM or PP_ZLIB. */
static int ppFinish(pp_stream *p){
  static const char *const fixed[] = {"", "calls", "count", "wall", "nanoseconds"};
  size_t i;
  for(i=0; i<p->fr.n; i++){
    pb line = {0};
    p->m.n = 0;
    pbInt(&line, 1, i+1);                     /* Line.function_id */
    pbInt(&p->m, 1, i+1);                     /* Location.id */
    pbBytes(&p->m, 4, line.p, line.n);        /* Location.line */
    p->m.failed |= line.failed;
    free(line.p);
    pbBytes(&p->buf, PP_LOCATION, p->m.p, p->m.n);
    p->m.n = 0;
    pbInt(&p->m, 1, i+1);                     /* Function.id */
    pbInt(&p->m, 2, i+5);                     /* Function.name */
    pbInt(&p->m, 3, i+5);                     /* Function.system_name */
    pbBytes(&p->buf, PP_FUNCTION, p->m.p, p->m.n);
  }
  for(i=0; i<5; i++) pbBytes(&p->buf, PP_STRING, fixed[i], strlen(fixed[i]));
  for(i=0; i<p->fr.n; i++) pbBytes(&p->buf, PP_STRING, p->fr.name[i], strlen(p->fr.name[i]));
  pbInt(&p->buf, PP_DURATION, (uint64_t)p->total);
  ppValueType(&p->buf, PP_PERIOD_TYPE, 3, 4);
  pbInt(&p->buf, PP_PERIOD, 1);
  if( p->m.failed || p->buf.failed ) return PP_NOMEM;
  return ppDeflate(p, Z_FINISH) ? PP_ZLIB : 0;
}

/* pprof of the run (window): 0, or -1 after an error message. */
static int exportPprof(fnt_store *st, fnt_snapshot *snap, const cli_export *o,
                       ob *out, uint64_t *ncalls){
  pp_stream p;
  int rc;
  memset(&p, 0, sizeof(p));
  p.out = out;
  if( deflateInit2(&p.z, 6, Z_DEFLATED, 15+16, 8, Z_DEFAULT_STRATEGY)!=Z_OK ){
    cli_error("export", "gzip: %s", p.z.msg ? p.z.msg : "cannot start");
    return -1;
  }
  ppValueType(&p.buf, PP_SAMPLE_TYPE, 1, 2);
  ppValueType(&p.buf, PP_SAMPLE_TYPE, 3, 4);
  rc = folded_each("export", st, snap, o->run, o->has_win ? &o->win : 0, o->memory, 0, 0,
                   ppSample, &p);
  if( rc==0 ) rc = ppFinish(&p);
  if( rc>0 ){
    cli_error("export", "%s: %s", o->out ? o->out : "stdout",
              rc==PP_NOMEM ? "out of memory" : "gzip failed");
    rc = -1;
  }
  *ncalls = p.calls;
  deflateEnd(&p.z);
  free(p.buf.p); free(p.m.p); free(p.loc.p);
  free(p.prev); free(p.id); free(p.end);
  strtab_clear(&p.fr);
  return rc;
}

/* folded_row_fn: a "stack self_ns" line. */
typedef struct folded_out { ob *out; uint64_t calls; } folded_out;
static int foldedLine(void *ctx, const char *stack, size_t len, int64_t self_ns, int64_t calls,
                      int64_t incl_ns){
  folded_out *f = ctx;
  (void)incl_ns;
  obMem(f->out, stack, len);
  obMem(f->out, " ", 1);
  obInt(f->out, self_ns);
  obMem(f->out, "\n", 1);
  f->calls += (uint64_t)calls;
  return 0;
}

/* ------------------------------------------------------------ fnt export */

static const char exportUsage[] =
  "usage: fnt export [-w DIR] RUN_ID --format chrome|folded|speedscope|pprof\n"
  "                  [-o FILE] [--from NS --to NS [--thread T]]\n\n"
  "A run, or a window of it, for the viewers people already use (SPEC §11):\n"
  "  chrome      Trace Event JSON, one X event per call (ts, dur in us):\n"
  "              Perfetto UI (ui.perfetto.dev), chrome://tracing\n"
  "  folded      \"stack self_ns\" lines (fnt_flame): flamegraph.pl, inferno,\n"
  "              speedscope\n"
  "  speedscope  one evented profile per thread: speedscope\n"
  "  pprof       gzipped profile.proto, one sample per stack (calls/count,\n"
  "              wall/nanoseconds): go tool pprof\n"
  "Streamed: memory stays bounded whatever the run's size; -o FILE is\n"
  "written under a temporary name beside it and renamed when complete, so\n"
  "a failed export leaves FILE as it was.  With a window, chrome and\n"
  "speedscope give the calls in it whole; folded and pprof clip them to\n"
  "it.  A summary goes to stderr unless -q (--json: a JSON object on\n"
  "stdout, when -o names a file).\n\n"
  "options:\n"
  "  --format F      chrome, folded, speedscope or pprof (required)\n"
  CLI_WINDOW_HELP
  CLI_MEMORY_HELP
  "                  (folded: its lines then come in the order their stacks\n"
  "                  are first entered, not sorted)\n"
  "  -h, --help      this text\n";

static const char exportExample[] =
  "\nexamples:\n"
  "  fnt export demo --format chrome -o demo.json       # open in ui.perfetto.dev\n"
  "  fnt export demo --format folded | flamegraph.pl > demo.svg\n"
  "  fnt export demo --format pprof -o demo.pb.gz && go tool pprof -top demo.pb.gz\n";

int cmd_export(int argc, char **argv){
  cli_export o;
  fnt_store *st;
  fnt_snapshot *snap = 0;
  writer *w;
  ob out;
  uint64_t ncalls = 0;
  int rc, status;
  status = cli_export_opts("export", argc, argv, exportUsage, &o);
  if( status==0 ) fputs(exportExample, stdout);
  if( status>=0 ) return status;
  if( o.format==0 ){
    cli_error("export", "--format is required: chrome, folded, speedscope or pprof");
    return 2;
  }
  if( strcmp(o.format, "chrome") && strcmp(o.format, "folded")
   && strcmp(o.format, "speedscope") && strcmp(o.format, "pprof") ){
    cli_error("export", "--format: expected chrome, folded, speedscope or pprof, "
              "not '%s'", o.format);
    return 2;
  }
  st = cli_open(cli_warehouse(0), 0);
  if( st==0 ) return 1;
  if( cli_run_filed(st, "export", o.run)<=0 ){ fnt_close(st); return 1; }
  rc = fnt_snapshot_current(st, &snap);
  w = rc==FNT_OK ? writer_open("export", o.out) : 0;
  if( rc==FNT_OK && w==0 ){ fnt_snapshot_release(snap); fnt_close(st); return 1; }
  if( w ) obInitWriter(&out, w);
  if( rc==FNT_OK && strcmp(o.format, "chrome")==0 ){
    rc = exportChrome(snap, &o, &out, &ncalls);
  }else if( rc==FNT_OK && strcmp(o.format, "speedscope")==0 ){
    rc = exportSpeedscope(snap, &o, &out, &ncalls);
  }else if( rc==FNT_OK && strcmp(o.format, "folded")==0 ){
    folded_out fo = {&out, 0};
    if( folded_each("export", st, snap, o.run, o.has_win ? &o.win : 0, o.memory, 0, 0,
                    foldedLine, &fo) ) status = 1;
    ncalls = fo.calls;
  }else if( rc==FNT_OK ){
    if( exportPprof(st, snap, &o, &out, &ncalls) ) status = 1;
  }
  if( rc!=FNT_OK ){
    cli_error("export", "%s", fnt_errmsg(st)[0] ? fnt_errmsg(st) : fnt_strerror(rc));
    status = 1;
  }else if( status<0 ){
    status = 0;
  }
  fnt_snapshot_release(snap);
  if( w ){
    obFlush(&out);
    status = writer_close(w, status);
  }
  if( status==0 ) cli_export_summary("export", o.run, o.format, ncalls, "calls", o.out);
  fnt_close(st);
  return status;
}
