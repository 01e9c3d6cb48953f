/*
** import_chrome.c -- `fnt import-chrome`: files a Chrome Trace Event JSON
** file (clang -ftime-trace, Perfetto/Chrome exports, ...) as a run.
**
**   fnt import-chrome build/codec.json
**
** What becomes events: per thread, `B` (begin) is an entry of its name, `E`
** (end) the exit of the thread's innermost open `B`, and `X` (complete) an
** entry at ts and an exit at ts + dur.  Other phases (M, i, C, b/e, ...)
** are ignored.  ts and dur are µs; t_ns is ns from the trace's first B, E
** or X event.
**
** Order: events sorted by (time, thread); at one time on one thread, exits
** before entries (innermost first: an X's exit, or an E when a B is
** innermost), then entries outer first (B in file order, X longest first),
** then zero-length X as entry + exit.  X events on one thread must nest:
** one that overlaps another without containing it is an error naming it.
**
** Threads: a trace of one pid keeps its tids as thread ids; with several
** pids, each (pid, tid) is numbered 1, 2, ... in (pid, tid) order, and the
** summary prints the mapping.
**
** Memory: the file is read as a stream (chrome_json.h); the marks (one per
** B and E, two per X: 40 bytes each) are sorted by ext_sort.h, spilling
** sorted runs to a temporary file past 16 MiB; then the sorted marks are
** replayed twice: once to check the nesting (so a bad trace files
** nothing), once to file them chunk by chunk (run_filer.h).
*/
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "chrome_json.h"
#include "ext_sort.h"
#include "fnt.h"
#include "import_opts.h"
#include "progress.h"
#include "room.h"
#include "run_filer.h"

#define CMD "import-chrome"
#define SORT_MEMORY ((size_t)16 << 20)

static void usage(FILE *out){
  fprintf(out,
    "usage: fnt import-chrome [options] FILE|-\n"
    "\n"
    "Files a Chrome Trace Event JSON file (the array of events, or the object\n"
    "with \"traceEvents\") as one run of fn_trace_events, in chunks, read as a\n"
    "stream: files of any size.  Per pid/tid, B/E pairs and X events become\n"
    "entry/exit events of their name; other phases are ignored.  X events on\n"
    "one thread must nest (an overlap is an error naming the event); nothing\n"
    "is filed from a trace found bad.  Re-running files only the chunks not\n"
    "yet filed.\n"
    "\n"
    "  --repo REPO         default \"" IMPORT_DEFAULT_REPO "\"\n"
    "  --commit SHA        default none (NULL)\n"
    "  --run-id ID         default FILE's name without a trailing \".json\"\n"
    "                      (\"stdin\" for -, which reads the trace from stdin)\n"
    "  --target NAME       default the same as the run id\n"
    "  --room FILE         TSV of symbol<TAB>stable_id lines naming functions\n"
    "  --chunk-events N    events a chunk, default %d\n"
    "\n"
    "Times: ts and dur are µs (fractions allowed), t_ns counts ns from the\n"
    "trace's first B, E or X event.  Threads: one pid keeps its tids;\n"
    "several pids number each (pid, tid) 1, 2, ... in (pid, tid) order\n"
    "(printed).  The run's ts_micros is the file's modification time (now\n"
    "for a pipe); its source is \"chrome\".  Functions are the events' names.\n"
    "\n"
    "example:\n"
    "  clang -ftime-trace -ftime-trace-granularity=0 -c -O2 codec.c   # writes codec.json\n"
    "  fnt import-chrome --repo acme/widget codec.json\n"
    "  zcat trace.json.gz | fnt import-chrome --run-id nightly -\n"
    "  fnt heat codec --top 10\n",
    IMPORT_DEFAULT_CHUNK_EVENTS);
  cli_globals_help(out);
}

/* ------------------------------------------------------------------------
** Marks: what the sort orders.  One per B and E, two per X.
*/
enum { MARK_EXIT_X, MARK_E, MARK_B, MARK_ENTRY_X };

typedef struct mark {
  int64_t  t;         /* ns, as in the file (not yet relative) */
  uint64_t index;     /* the event's position in traceEvents */
  int64_t  dur;       /* X: its duration in ns; else 0 */
  uint32_t thread;    /* index of its (pid, tid) */
  uint32_t name;      /* index of its name (E: unused) */
  uint32_t kind;      /* MARK_... */
} mark;

/* Time, then thread; (index, kind) only make the order total. */
static int cmp_mark(const void *a, const void *b){
  const mark *x = a, *y = b;
  if( x->t!=y->t ) return x->t<y->t ? -1 : 1;
  if( x->thread!=y->thread ) return x->thread<y->thread ? -1 : 1;
  if( x->index!=y->index ) return x->index<y->index ? -1 : 1;
  return x->kind<y->kind ? -1 : x->kind>y->kind;
}

/* An open frame of a thread's stack. */
typedef struct frame {
  uint64_t index;     /* the B or X event */
  int64_t  end;       /* X: ts + dur; B: INT64_MAX */
  uint32_t name;
  int      is_x;
} frame;

typedef struct thread_state {
  int64_t pid, tid;
  uint32_t id;        /* the thread id filed */
  frame *st;
  size_t n, cap;
} thread_state;

/* Everything an import holds. */
typedef struct importer {
  const char *file;
  /* names: interned, open addressing on a string hash */
  char **names;
  size_t n_names, cap_names;
  uint32_t *name_slot;
  size_t name_hcap;
  /* threads: (pid, tid) pairs, open addressing */
  thread_state *th;
  size_t n_th, cap_th;
  uint32_t *th_slot;
  size_t th_hcap;
  int several_pids;
  ext_sort *sort;
  int64_t t_min, t_max;
  uint64_t n_events;
  /* the replay */
  mark *group;
  size_t n_group, cap_group;
  unsigned char *done;        /* group[i] handled */
  run_filer *rf;              /* NULL: check only */
  progress *pg;
  uint64_t replayed;
} importer;

static uint64_t hash_str(const char *s){
  uint64_t h = 1469598103934665603u;   /* FNV-1a */
  for(; *s; s++){ h ^= (unsigned char)*s; h *= 1099511628211u; }
  return h;
}

static int grow_slots(uint32_t **slot, size_t *hcap, size_t n, uint64_t (*hash)(const void*, size_t),
                      const void *ctx){
  size_t ncap = *hcap ? *hcap*2 : 256, j;
  uint32_t *ns = malloc(ncap*sizeof(*ns));
  if( !ns ) return -1;
  memset(ns, 0xff, ncap*sizeof(*ns));
  for(j=0; j<n; j++){
    size_t h = hash(ctx, j) & (ncap-1);
    while( ns[h]!=UINT32_MAX ) h = (h+1) & (ncap-1);
    ns[h] = (uint32_t)j;
  }
  free(*slot);
  *slot = ns;
  *hcap = ncap;
  return 0;
}

static uint64_t hash_name_at(const void *ctx, size_t j){
  return hash_str(((const importer*)ctx)->names[j]);
}
static uint64_t hash_pair(int64_t pid, int64_t tid){
  return ((uint64_t)pid*0x9E3779B97F4A7C15u) ^ ((uint64_t)tid*0xC2B2AE3D27D4EB4Fu);
}
static uint64_t hash_thread_at(const void *ctx, size_t j){
  const importer *im = ctx;
  return hash_pair(im->th[j].pid, im->th[j].tid);
}

/* The index of name (added when new); -1 out of memory. */
static int64_t name_id(importer *im, const char *name){
  size_t h;
  if( (im->n_names+1)*2 > im->name_hcap
   && grow_slots(&im->name_slot, &im->name_hcap, im->n_names, hash_name_at, im) ) return -1;
  h = hash_str(name) & (im->name_hcap-1);
  while( im->name_slot[h]!=UINT32_MAX ){
    if( strcmp(im->names[im->name_slot[h]], name)==0 ) return im->name_slot[h];
    h = (h+1) & (im->name_hcap-1);
  }
  if( im->n_names==im->cap_names ){
    size_t ncap = im->cap_names ? im->cap_names*2 : 256;
    char **nn = realloc(im->names, ncap*sizeof(*nn));
    if( !nn ) return -1;
    im->names = nn; im->cap_names = ncap;
  }
  im->names[im->n_names] = strdup(name);
  if( !im->names[im->n_names] ) return -1;
  im->name_slot[h] = (uint32_t)im->n_names;
  return (int64_t)im->n_names++;
}

/* The index of (pid, tid) (added when new); -1 out of memory. */
static int64_t thread_id(importer *im, int64_t pid, int64_t tid){
  size_t h;
  if( (im->n_th+1)*2 > im->th_hcap
   && grow_slots(&im->th_slot, &im->th_hcap, im->n_th, hash_thread_at, im) ) return -1;
  h = hash_pair(pid, tid) & (im->th_hcap-1);
  while( im->th_slot[h]!=UINT32_MAX ){
    const thread_state *t = &im->th[im->th_slot[h]];
    if( t->pid==pid && t->tid==tid ) return im->th_slot[h];
    h = (h+1) & (im->th_hcap-1);
  }
  if( im->n_th==im->cap_th ){
    size_t ncap = im->cap_th ? im->cap_th*2 : 64;
    thread_state *nt = realloc(im->th, ncap*sizeof(*nt));
    if( !nt ) return -1;
    im->th = nt; im->cap_th = ncap;
  }
  memset(&im->th[im->n_th], 0, sizeof(thread_state));
  im->th[im->n_th].pid = pid;
  im->th[im->n_th].tid = tid;
  if( im->n_th && pid!=im->th[0].pid ) im->several_pids = 1;
  im->th_slot[h] = (uint32_t)im->n_th;
  return (int64_t)im->n_th++;
}

static int add_mark(importer *im, int64_t t, const chrome_event *ev, uint32_t th,
                    uint32_t name, uint32_t kind){
  mark m;
  memset(&m, 0, sizeof(m));   /* the padding too: marks are written to disk */
  m.t = t;
  m.index = ev->index;
  m.dur = kind==MARK_ENTRY_X || kind==MARK_EXIT_X ? ev->dur_ns : 0;
  m.thread = th;
  m.name = name;
  m.kind = kind;
  if( im->n_events==0 || t<im->t_min ) im->t_min = t;
  if( im->n_events==0 || t>im->t_max ) im->t_max = t;
  im->n_events++;
  if( ext_sort_add(im->sort, &m) ){
    cli_error(CMD, "%s: %s", im->file, ext_sort_error(im->sort));
    return -1;
  }
  return 0;
}

/* Pass 1: the events of the file into sorted marks.  0, or -1 (reported). */
static int read_trace(importer *im, FILE *in){
  chrome_reader *r = chrome_reader_new(in, im->file);
  chrome_event ev;
  int rc;
  if( !r ){ cli_error(CMD, "out of memory"); return -1; }
  while( (rc = chrome_reader_next(r, &ev))==1 ){
    int64_t th, nm = 0;
    const char *what = 0;
    if( ev.ph!='B' && ev.ph!='E' && ev.ph!='X' ) continue;
    if( ev.bad ) what = ev.bad;
    else if( !ev.has_ts ) what = "no ts";
    else if( !ev.has_tid ) what = "no tid";
    else if( ev.ph!='E' && !ev.name ) what = "no name";
    else if( ev.ph=='X' && !ev.has_dur ) what = "an X event without dur";
    else if( ev.ph=='X' && ev.dur_ns<0 ) what = "a negative dur";
    if( what ){
      cli_error(CMD, "%s: traceEvents[%llu]%s%s%s: %s", im->file, (unsigned long long)ev.index,
                ev.name ? " '" : "", ev.name ? ev.name : "", ev.name ? "'" : "", what);
      chrome_reader_free(r);
      return -1;
    }
    th = thread_id(im, ev.has_pid ? ev.pid : 0, ev.tid);
    if( ev.ph!='E' ) nm = name_id(im, ev.name);
    if( th<0 || nm<0 ){ cli_error(CMD, "out of memory"); chrome_reader_free(r); return -1; }
    if( ev.ph=='B' ) rc = add_mark(im, ev.ts_ns, &ev, (uint32_t)th, (uint32_t)nm, MARK_B);
    else if( ev.ph=='E' ) rc = add_mark(im, ev.ts_ns, &ev, (uint32_t)th, 0, MARK_E);
    else{
      if( ev.ts_ns > INT64_MAX - ev.dur_ns ){
        cli_error(CMD, "%s: traceEvents[%llu] '%s': ts + dur out of range", im->file,
                  (unsigned long long)ev.index, ev.name);
        chrome_reader_free(r);
        return -1;
      }
      rc = add_mark(im, ev.ts_ns, &ev, (uint32_t)th, (uint32_t)nm, MARK_ENTRY_X);
      if( !rc ) rc = add_mark(im, ev.ts_ns + ev.dur_ns, &ev, (uint32_t)th, (uint32_t)nm, MARK_EXIT_X);
    }
    if( rc ){ chrome_reader_free(r); return -1; }
    progress_update(im->pg, chrome_reader_offset(r));
  }
  if( rc<0 ) cli_error(CMD, "%s", chrome_reader_error(r));
  chrome_reader_free(r);
  if( rc<0 ) return -1;
  if( ext_sort_finish(im->sort) ){
    cli_error(CMD, "%s: %s", im->file, ext_sort_error(im->sort));
    return -1;
  }
  return 0;
}

/* Thread ids: tids when one pid, else 1, 2, ... in (pid, tid) order. */
static int cmp_pair(const void *a, const void *b){
  const thread_state *x = *(thread_state *const*)a, *y = *(thread_state *const*)b;
  if( x->pid!=y->pid ) return x->pid<y->pid ? -1 : 1;
  return x->tid<y->tid ? -1 : x->tid>y->tid;
}

static int number_threads(importer *im){
  size_t i;
  thread_state **order;
  if( !im->several_pids ){
    for(i=0; i<im->n_th; i++){
      if( im->th[i].tid<0 || im->th[i].tid>UINT32_MAX ){
        cli_error(CMD, "%s: tid %lld is not a thread id (0 to 2^32-1)", im->file,
                  (long long)im->th[i].tid);
        return -1;
      }
      im->th[i].id = (uint32_t)im->th[i].tid;
    }
    return 0;
  }
  order = malloc((im->n_th ? im->n_th : 1)*sizeof(*order));
  if( !order ){ cli_error(CMD, "out of memory"); return -1; }
  for(i=0; i<im->n_th; i++) order[i] = &im->th[i];
  qsort(order, im->n_th, sizeof(*order), cmp_pair);
  for(i=0; i<im->n_th; i++) order[i]->id = (uint32_t)(i+1);
  free(order);
  return 0;
}

/* ------------------------------------------------------------------------
** The replay of the sorted marks, one group (same time, same thread) at a
** time, against each thread's stack.
*/
static const char *name_of(const importer *im, const frame *f){ return im->names[f->name]; }

static int emit(importer *im, const mark *m, uint32_t name, uint8_t kind){
  if( (++im->replayed & 0xffff)==0 ) progress_update(im->pg, im->replayed);
  if( !im->rf ) return 0;
  return run_filer_event(im->rf, (uint64_t)(m->t - im->t_min), im->th[m->thread].id, name, kind);
}

static int push(importer *im, thread_state *t, const mark *m){
  frame *f;
  if( t->n==t->cap ){
    size_t ncap = t->cap ? t->cap*2 : 16;
    frame *ns = realloc(t->st, ncap*sizeof(*ns));
    if( !ns ){ cli_error(CMD, "out of memory"); return -1; }
    t->st = ns; t->cap = ncap;
  }
  f = &t->st[t->n++];
  f->index = m->index;
  f->end = m->kind==MARK_ENTRY_X ? m->t + m->dur : INT64_MAX;
  f->name = m->name;
  f->is_x = m->kind==MARK_ENTRY_X;
  return emit(im, m, m->name, FNT_KIND_ENTRY);
}

/* Entries in the order they open: B in file order, X longest first. */
static int cmp_entry(const void *a, const void *b){
  const mark *x = a, *y = b;
  if( x->kind!=y->kind ) return x->kind==MARK_B ? -1 : 1;
  if( x->dur!=y->dur ) return x->dur>y->dur ? -1 : 1;
  return x->index<y->index ? -1 : x->index>y->index;
}

static int overlap(const importer *im, const thread_state *t, const mark *m, const frame *f){
  cli_error(CMD, "%s: traceEvents[%llu] '%s' (X, %.3f to %.3f µs) overlaps traceEvents[%llu] '%s' "
            "(%s) on pid %lld tid %lld without nesting in it: X events on one thread must nest",
            im->file, (unsigned long long)m->index, im->names[m->name], (double)m->t/1e3,
            (double)(m->t + m->dur)/1e3, (unsigned long long)f->index, name_of(im, f),
            f->is_x ? "X" : "B", (long long)t->pid, (long long)t->tid);
  return -1;
}

static int replay_group(importer *im){
  mark *g = im->group;
  size_t n = im->n_group, i, n_entry = 0;
  thread_state *t = &im->th[g[0].thread];
  int progress_made;
  memset(im->done, 0, n);
  /* 1. exits, innermost first, until none matches the top of the stack */
  do{
    progress_made = 0;
    for(i=0; i<n; i++){
      if( im->done[i] || g[i].kind!=MARK_EXIT_X || g[i].dur==0 ) continue;
      if( t->n && t->st[t->n-1].is_x && t->st[t->n-1].index==g[i].index ){
        t->n--;
        if( emit(im, &g[i], g[i].name, FNT_KIND_EXIT) ) return -1;
        im->done[i] = progress_made = 1;
      }
    }
    for(i=0; i<n && !progress_made; i++){
      if( im->done[i] || g[i].kind!=MARK_E ) continue;
      if( t->n && !t->st[t->n-1].is_x ){
        t->n--;
        if( emit(im, &g[i], t->st[t->n].name, FNT_KIND_EXIT) ) return -1;
        im->done[i] = progress_made = 1;
      }
    }
  }while( progress_made );
  for(i=0; i<n; i++){
    if( im->done[i] || (g[i].kind!=MARK_EXIT_X && g[i].kind!=MARK_E) || (g[i].kind==MARK_EXIT_X && g[i].dur==0) ) continue;
    if( g[i].kind==MARK_E ){
      if( t->n==0 ){
        cli_error(CMD, "%s: traceEvents[%llu]: E with no open B on pid %lld tid %lld",
                  im->file, (unsigned long long)g[i].index, (long long)t->pid, (long long)t->tid);
      }else{
        cli_error(CMD, "%s: traceEvents[%llu]: E at %.3f µs inside traceEvents[%llu] '%s' (X, "
                  "ends at %.3f µs) on pid %lld tid %lld: B/E and X events must nest",
                  im->file, (unsigned long long)g[i].index, (double)g[i].t/1e3,
                  (unsigned long long)t->st[t->n-1].index, name_of(im, &t->st[t->n-1]),
                  (double)t->st[t->n-1].end/1e3, (long long)t->pid, (long long)t->tid);
      }
      return -1;
    }
    /* an X whose frame is not innermost: one opened inside it is open */
    cli_error(CMD, "%s: traceEvents[%llu] '%s' (X) ends at %.3f µs while traceEvents[%llu] '%s' "
              "(%s), opened inside it, is still open on pid %lld tid %lld: events on one thread must nest",
              im->file, (unsigned long long)g[i].index, im->names[g[i].name], (double)g[i].t/1e3,
              (unsigned long long)t->st[t->n-1].index, name_of(im, &t->st[t->n-1]),
              t->st[t->n-1].is_x ? "X" : "B", (long long)t->pid, (long long)t->tid);
    return -1;
  }
  /* 2. entries, outer first; the zero-length X last, each closed at once */
  for(i=0; i<n; i++){
    if( g[i].kind==MARK_B || (g[i].kind==MARK_ENTRY_X && g[i].dur>0) ) g[n_entry++] = g[i];
  }
  qsort(g, n_entry, sizeof(*g), cmp_entry);
  for(i=0; i<n_entry; i++){
    const frame *top = t->n ? &t->st[t->n-1] : 0;
    if( g[i].kind==MARK_ENTRY_X && top && top->is_x && top->end < g[i].t + g[i].dur ){
      return overlap(im, t, &g[i], top);
    }
    if( push(im, t, &g[i]) ) return -1;
  }
  return 0;
}

/* The zero-length X of the group (kept apart: replay_group reuses g). */
static int replay_points(importer *im, const mark *pts, size_t n){
  size_t i;
  for(i=0; i<n; i++){
    if( emit(im, &pts[i], pts[i].name, FNT_KIND_ENTRY)
     || emit(im, &pts[i], pts[i].name, FNT_KIND_EXIT) ) return -1;
  }
  return 0;
}

/* Marks at one time on one thread are replayed together: a bound keeps
** that buffer small whatever the trace (no real trace comes near it). */
#define MAX_GROUP 100000

static int add_to_group(importer *im, const mark *m){
  if( im->n_group==MAX_GROUP ){
    const thread_state *t = &im->th[m->thread];
    cli_error(CMD, "%s: more than %d B, E and X marks at %.3f µs on pid %lld tid %lld "
              "(traceEvents[%llu] is one): not a trace of calls", im->file, MAX_GROUP,
              (double)m->t/1e3, (long long)t->pid, (long long)t->tid,
              (unsigned long long)m->index);
    return -1;
  }
  if( im->n_group==im->cap_group ){
    size_t ncap = im->cap_group ? im->cap_group*2 : 64;
    mark *ng = realloc(im->group, ncap*sizeof(*ng));
    unsigned char *nd = ng ? realloc(im->done, ncap) : 0;
    if( ng ) im->group = ng;
    if( !nd ){ cli_error(CMD, "out of memory"); return -1; }
    im->done = nd; im->cap_group = ncap;
  }
  im->group[im->n_group++] = *m;
  return 0;
}

/* Replays every mark: filing them when im->rf, else only checking. */
static int replay(importer *im){
  mark m, *pts = 0;
  size_t n_pts = 0, cap_pts = 0, i;
  int rc;
  for(i=0; i<im->n_th; i++) im->th[i].n = 0;
  im->n_group = 0;
  im->replayed = 0;
  if( ext_sort_rewind(im->sort) ){
    cli_error(CMD, "%s: %s", im->file, ext_sort_error(im->sort));
    return -1;
  }
  for(;;){
    rc = ext_sort_next(im->sort, &m);
    if( rc<0 ){
      cli_error(CMD, "%s: %s", im->file, ext_sort_error(im->sort));
      break;
    }
    if( im->n_group && (rc==0 || m.t!=im->group[0].t || m.thread!=im->group[0].thread) ){
      /* the group is complete: its zero-length X go after its entries */
      n_pts = 0;
      for(i=0; i<im->n_group; i++){
        const mark *x = &im->group[i];
        if( x->kind!=MARK_ENTRY_X || x->dur!=0 ) continue;
        if( n_pts==cap_pts ){
          size_t ncap = cap_pts ? cap_pts*2 : 16;
          mark *np = realloc(pts, ncap*sizeof(*np));
          if( !np ){ cli_error(CMD, "out of memory"); rc = -1; break; }
          pts = np; cap_pts = ncap;
        }
        pts[n_pts++] = *x;
      }
      if( rc<0 || replay_group(im) || replay_points(im, pts, n_pts) ){ rc = -1; break; }
      im->n_group = 0;
    }
    if( rc==0 ) break;
    if( add_to_group(im, &m) ){ rc = -1; break; }
  }
  free(pts);
  return rc;
}

int cmd_import_chrome(int argc, char **argv){
  import_opts o;
  importer im;
  run_filer rf;
  fnt_room *room = 0;
  fnt_store *st = 0;
  fnt_chunk run;
  FILE *in = 0;
  char *run_id = 0, err[512];
  const char *warehouse;
  size_t i, mapped = 0;
  double t0 = run_filer_clock();
  int rc, status = 1, from_stdin;
  progress pg;
  struct stat sb;
  uint64_t bytes_before;

  memset(&im, 0, sizeof(im));
  memset(&rf, 0, sizeof(rf));
  pg.active = 0;
  rc = import_opts_parse(argc, argv, CMD, 0, "FILE", usage, &o);
  if( rc==1 ) return 0;
  if( rc ) return 2;
  im.file = o.input;
  im.pg = &pg;

  /* 1. Read, sort and check the whole trace before the warehouse is touched. */
  if( o.room && room_load(o.room, &room, err, sizeof(err)) ){
    cli_error(CMD, "%s", err);
    goto done;
  }
  from_stdin = strcmp(o.input, "-")==0;   /* e.g. zcat trace.json.gz | fnt import-chrome - */
  in = from_stdin ? stdin : fopen(o.input, "rb");
  if( !in || fstat(fileno(in), &sb)!=0 ){
    cli_error(CMD, "%s: %s", o.input, strerror(errno));
    goto done;
  }
  if( !S_ISREG(sb.st_mode) ) sb.st_size = 0;   /* a pipe: no size for the progress bar */
  im.sort = ext_sort_new(sizeof(mark), cmp_mark, SORT_MEMORY);
  if( !im.sort ){ cli_error(CMD, "out of memory"); goto done; }
  progress_begin(&pg, "reading trace", (uint64_t)sb.st_size);
  if( read_trace(&im, in) || number_threads(&im) ) goto done;
  progress_stage(&pg, "checking nesting", im.n_events);
  if( replay(&im) ) goto done;

  if( o.run_id ) run_id = strdup(o.run_id);
  else if( from_stdin ) run_id = strdup("stdin");
  else{
    const char *b = import_base_name(o.input);
    size_t n = strlen(b);
    if( n>5 && strcmp(b + n - 5, ".json")==0 ) n -= 5;
    run_id = strndup(b, n);
  }
  if( !run_id ){ cli_error(CMD, "out of memory"); goto done; }
  memset(&run, 0, sizeof(run));
  run.repo = o.repo ? o.repo : IMPORT_DEFAULT_REPO;
  run.commit = o.commit;
  run.run_id = run_id;
  /* the file's mtime; for a pipe, now */
  run.ts_micros = S_ISREG(sb.st_mode) ? (int64_t)sb.st_mtim.tv_sec*1000000 + sb.st_mtim.tv_nsec/1000 : -1;
  run.target = o.target ? o.target : run_id;
  run.source = "chrome";
  run.chunks = im.n_events ? (int64_t)((im.n_events + (uint64_t)o.chunk_events - 1) / (uint64_t)o.chunk_events) : 1;
  run.total_events = (int64_t)im.n_events;
  run.duration_ns = im.n_events ? im.t_max - im.t_min : 0;
  run.threads = (int64_t)im.n_th;

  /* 2. File the marks in chunks, replaying them again. */
  warehouse = cli_warehouse(0);    /* -w/--warehouse: a global option (cli.c) */
  st = cli_open(warehouse, 1);
  if( !st ) goto done;
  if( run_filer_begin(&rf, st, &run, (size_t)o.chunk_events, CMD, o.input, &pg) ) goto done;
  for(i=0; i<im.n_names; i++){
    fnt_function f;
    f.symbol = im.names[i];
    f.stable_id = room_lookup(room, f.symbol);
    f.local = 0;     /* no binary: nothing is known to be the program's own */
    if( f.stable_id ) mapped++;
    if( run_filer_function(&rf, &f)<0 ) goto done;
  }
  bytes_before = cli_disk_usage(warehouse);
  progress_stage(&pg, "filing events", im.n_events);
  im.rf = &rf;
  if( replay(&im) || run_filer_end(&rf) ) goto done;
  progress_end(&pg);

  /* 3. The summary. */
  if( cli_g.json && !cli_g.quiet ){
    cli_json_begin();
    cli_json_str("run_id", run_id);
    cli_json_str("source", run.source);
    cli_json_str("repo", run.repo);
    cli_json_str("target", run.target);
    cli_json_int("events", (long long)im.n_events);
    cli_json_int("threads", (long long)im.n_th);
    cli_json_num("traced_s", (double)run.duration_ns/1e9);
    cli_json_bool("several_pids", im.several_pids);
    cli_json_int("functions", (long long)im.n_names);
    cli_json_int("functions_mapped", (long long)mapped);
    run_filer_report(&rf, warehouse, bytes_before, t0);
    cli_json_end();
  }else if( !cli_g.quiet ){
    printf("fnt import-chrome: run '%s' (chrome, repo %s, target %s)\n", run_id, run.repo, run.target);
    printf("  events     %llu on %zu thread%s, %.6f s traced\n", (unsigned long long)im.n_events,
           im.n_th, im.n_th==1 ? "" : "s", (double)run.duration_ns/1e9);
    if( im.several_pids ){
      printf("  threads    several pids: each (pid, tid) is a thread number:");
      for(i=0; i<im.n_th && i<20; i++){
        printf(" %lld/%lld->%u", (long long)im.th[i].pid, (long long)im.th[i].tid, im.th[i].id);
      }
      printf("%s\n", im.n_th>20 ? " ..." : "");
    }
    printf("  functions  %zu, %zu mapped to a stable_id\n", im.n_names, mapped);
    run_filer_report(&rf, warehouse, bytes_before, t0);
  }
  status = 0;

done:
  progress_end(&pg);
  run_filer_free(&rf);
  for(i=0; i<im.n_names; i++) free(im.names[i]);
  free(im.names); free(im.name_slot);
  for(i=0; i<im.n_th; i++) free(im.th[i].st);
  free(im.th); free(im.th_slot);
  free(im.group); free(im.done);
  ext_sort_free(im.sort);
  if( in && !from_stdin ) fclose(in);
  free(run_id);
  room_free(room);
  fnt_close(st);
  return status;
}
