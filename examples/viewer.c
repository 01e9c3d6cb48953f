/*
** viewer.c -- the store's C API as a desktop replay viewer uses it: a
** flame chart of a window of a run, drawn in ASCII, zoomed in and out.
**
**   fnt-viewer WAREHOUSE [RUN_ID] [--width N] [--zoom F] [--steps N]
**              [--cache MIB]
**
** It opens the warehouse, pins the newest snapshot, picks the run (by
** default the first run_id of fn_trace_runs), asks fnt_timeline_span()
** for the run's extent, then draws frames: the whole run, then `steps`
** frames each `zoom` times narrower around the middle, then back out.  A
** frame is one fnt_timeline_compute() of its window at `width` buckets:
** one line per (thread, depth), a bucket's column showing its longest
** call's function as a letter (the legend below the frame), the columns a
** long call covers after its start drawn with it.  Each frame's header
** gives the query's wall time.  Memory is the frame's rows and the parsed
** footers the handle keeps (--cache: room for every calls file of the run
** makes frames after the first parse none again): the run stays on disk.
*/
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "fnt_store.h"

#define MAX_KEYS 62
static const char glyphs[] = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";

/* The functions seen so far, so that a function keeps its letter across
** frames; '#' past the 62nd. */
static char *keyNames[MAX_KEYS], *keySymbols[MAX_KEYS];
static int nKeys;

static char glyphOf(const char *key, const char *symbol){
  int i;
  for(i=0; i<nKeys; i++) if( strcmp(keyNames[i], key)==0 ) return glyphs[i];
  if( nKeys==MAX_KEYS ) return '#';
  keyNames[nKeys] = strdup(key);
  keySymbols[nKeys] = strdup(symbol ? symbol : "");
  if( keyNames[nKeys]==0 || keySymbols[nKeys]==0 ) return '#';
  return glyphs[nKeys++];
}

/* glyphOf by the key's address: a timeline's rows share one copy of each
** key, so the strcmp over the letters given runs once per key a frame. */
#define SEEN_SLOTS 256
typedef struct seen { const char *key; char g; } seen;
static char glyphAt(seen *m, const char *key, const char *symbol){
  seen *s = &m[((uintptr_t)key >> 4) % SEEN_SLOTS];
  if( s->key!=key ){
    s->key = key;
    s->g = glyphOf(key, symbol);
  }
  return s->g;
}

static double nowMs(void){
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec*1e3 + ts.tv_nsec/1e6;
}

/* The first run_id of fn_trace_runs (a copy), or NULL. */
static char *firstRun(fnt_snapshot *snap){
  fnt_predicate p;
  fnt_scan *sc = 0;
  char *best = 0;
  fnt_predicate_init(&p);
  p.columns = 1u<<FNT_RUN_RUN_ID;
  if( fnt_scan_open(snap, FNT_TABLE_RUNS, &p, &sc)!=FNT_OK ) return 0;
  while( fnt_scan_next(sc)==1 ){
    const char *r = fnt_scan_text(sc, FNT_RUN_RUN_ID, 0);
    if( r && (best==0 || strcmp(r, best)<0) ){
      free(best);
      best = strdup(r);
    }
  }
  fnt_scan_close(sc);
  return best;
}

/* Draws one frame of [t0, t1) at `width` columns; 0 or a store code. */
static int drawFrame(fnt_snapshot *snap, const char *run, int frame,
                     int64_t t0, int64_t t1, int width, fnt_store *st){
  fnt_timeline *tl = 0;
  const fnt_timeline_row *rows;
  uint64_t span = (uint64_t)t1 - (uint64_t)t0;
  int64_t w = (int64_t)(span/(uint64_t)width + (span%(uint64_t)width!=0));
  size_t i, n, lines = 0;
  char *line, used[MAX_KEYS+1] = {0};
  seen known[SEEN_SLOTS] = {{0, 0}};
  double ms = nowMs();
  int rc = fnt_timeline_compute(snap, run, t0, t1, width, -1, &tl);
  ms = nowMs() - ms;
  if( rc ){
    fprintf(stderr, "fnt-viewer: %s\n", fnt_errmsg(st));
    return rc;
  }
  if( w<1 ) w = 1;
  n = fnt_timeline_count(tl);
  rows = fnt_timeline_rows(tl);
  printf("frame %d: [%lld, %lld) %d columns of %lld ns: %zu rows, query %.3f ms\n",
         frame, (long long)t0, (long long)t1, width, (long long)w, n, ms);
  line = malloc((size_t)width+1);
  if( line==0 ){ fnt_timeline_free(tl); return FNT_E_NOMEM; }
  /* Rows come by thread, depth, bucket: one line per (thread, depth). */
  for(i=0; i<n; ){
    size_t j = i;
    memset(line, '.', (size_t)width);
    line[width] = 0;
    for(; j<n && rows[j].thread==rows[i].thread && rows[j].depth==rows[i].depth; j++){
      const fnt_timeline_row *r = &rows[j];
      char g = glyphAt(known, r->key, r->symbol);
      int64_t from = r->bucket<0 ? 0 : r->bucket, to = from, end = r->start_ns + r->dur_ns;
      /* The columns the call still covers after its start. */
      if( end>t0 ){
        uint64_t last = end>=t1 ? span-1 : (uint64_t)(end-1) - (uint64_t)t0;
        to = (int64_t)(last/(uint64_t)w);
      }
      if( to>=width ) to = width-1;
      for(; from<=to; from++){
        /* A bucket's own call wins over one running across it. */
        if( line[from]=='.' || from==(r->bucket<0 ? -1 : r->bucket) ) line[from] = g;
      }
      if( g!='#' ) used[strchr(glyphs, g)-glyphs] = 1;
    }
    printf("  t%-6lld d%-3lld |%s|\n", (long long)rows[i].thread,
           (long long)rows[i].depth, line);
    lines++;
    i = j;
  }
  printf("  %zu lines; legend:", lines);
  for(i=0; i<MAX_KEYS; i++) if( used[i] ) printf(" %c=%s", glyphs[i], keySymbols[i]);
  printf("\n");
  free(line);
  fnt_timeline_free(tl);
  return FNT_OK;
}

static int usage(void){
  fprintf(stderr, "usage: fnt-viewer WAREHOUSE [RUN_ID] [--width N] [--zoom F] [--steps N]\n"
          "                  [--cache MIB]\n"
          "  draws the run (default: the first) as an ASCII flame chart, N columns\n"
          "  wide (default 100), then zooms in F times (default 4) per frame for\n"
          "  `steps` frames (default 3) and back out, with each frame's query time;\n"
          "  --cache: MiB of parsed file footers kept between frames (default: 64\n"
          "  files, 16 MiB)\n");
  return 2;
}

int main(int argc, char **argv){
  const char *wh = 0, *runArg = 0;
  char *run = 0;
  int width = 100, steps = 3, cacheMib = -1, i, k, rc;
  double zoom = 4;
  fnt_store *st = 0;
  fnt_snapshot *snap = 0;
  int64_t first, last, mid, half;
  for(i=1; i<argc; i++){
    if( strcmp(argv[i], "--width")==0 && i+1<argc ) width = atoi(argv[++i]);
    else if( strcmp(argv[i], "--zoom")==0 && i+1<argc ) zoom = atof(argv[++i]);
    else if( strcmp(argv[i], "--steps")==0 && i+1<argc ) steps = atoi(argv[++i]);
    else if( strcmp(argv[i], "--cache")==0 && i+1<argc ) cacheMib = atoi(argv[++i]);
    else if( argv[i][0]=='-' ) return usage();
    else if( wh==0 ) wh = argv[i];
    else if( runArg==0 ) runArg = argv[i];
    else return usage();
  }
  if( wh==0 || width<1 || width>100000 || zoom<=1 || steps<0
   || cacheMib<-1 || cacheMib>65536 ) return usage();
  rc = fnt_open(wh, 0, &st);
  /* Room for every footer of a run that fits in the bytes: the count is
  ** for handles that read many small files. */
  if( rc==FNT_OK && cacheMib>=0 ) fnt_set_segment_cache(st, 65536, (size_t)cacheMib << 20);
  if( rc==FNT_OK ) rc = fnt_snapshot_current(st, &snap);
  if( rc ){
    fprintf(stderr, "fnt-viewer: %s: %s\n", wh, st ? fnt_errmsg(st) : fnt_strerror(rc));
    fnt_close(st);
    return 1;
  }
  run = runArg ? strdup(runArg) : firstRun(snap);
  if( run==0 ){
    fprintf(stderr, "fnt-viewer: %s: no runs\n", wh);
    rc = FNT_E_NOTFOUND;
    goto done;
  }
  rc = fnt_timeline_span(snap, run, &first, &last);
  if( rc ){ fprintf(stderr, "fnt-viewer: %s\n", fnt_errmsg(st)); goto done; }
  printf("run %s: [%lld, %lld] ns\n", run, (long long)first, (long long)last);
  mid = first + (last - first)/2;
  half = (last - first)/2 + 1;
  /* In: frames 0..steps; out: back to the whole run. */
  for(k=0; k<=2*steps && rc==FNT_OK; k++){
    int level = k<=steps ? k : 2*steps-k;
    double h = (double)half;
    int64_t hw;
    for(i=0; i<level; i++) h /= zoom;
    hw = h<1 ? 1 : (int64_t)h;
    rc = drawFrame(snap, run, k, level ? mid-hw : first, level ? mid+hw : last+1, width, st);
  }
done:
  for(i=0; i<nKeys; i++){ free(keyNames[i]); free(keySymbols[i]); }
  free(run);
  fnt_snapshot_release(snap);
  fnt_close(st);
  return rc ? 1 : 0;
}
