/*
** test_heat.c -- fnt_heat_compute() (SPEC §5) through the public store API.
**
** Runs are filed with fnt_file_chunk into a warehouse under $FNT_TEST_TMP
** and their heat is compared with figures computed by hand, then with a
** deliberately naive reference implementation over random
** runs (random nesting, recursion, tail exits, unmatched exits, threads,
** up to six chunks whose function tables differ).
*/
#ifndef _GNU_SOURCE
#define _GNU_SOURCE  /* nftw */
#endif
#include <ftw.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fnt_store.h"

static int nFail = 0;
static fnt_store *gStore = 0;
static char gDir[4096];

#define CHECK(cond, ...) do{ if( !(cond) ){ \
  fprintf(stderr, "%s:%d: ", __FILE__, __LINE__); \
  fprintf(stderr, __VA_ARGS__); fputc('\n', stderr); nFail++; } }while(0)

/* ------------------------------------------------------------------------
** Filing helpers.
*/
#define E(th, seq, t, fn, kind) {(seq), (t), (th), (fn), FNT_KIND_##kind}

static void fileChunk(const char *zRun, int64_t chunk, int64_t chunks,
                      const fnt_function *aFn, size_t nFn,
                      const fnt_event *aEv, size_t nEv){
  fnt_chunk c;
  int rc;
  memset(&c, 0, sizeof(c));
  c.repo = "acme/widget";
  c.run_id = zRun;
  c.ts_micros = 1764680000000000;
  c.target = "widget_tests";
  c.source = "xray-basic";
  c.chunk = chunk;
  c.chunks = chunks;
  c.total_events = (int64_t)nEv;
  c.duration_ns = 0;
  c.threads = -1;
  c.functions = aFn;
  c.n_functions = nFn;
  c.events = aEv;
  c.n_events = nEv;
  rc = fnt_file_chunk(gStore, &c);
  if( rc!=1 ){
    fprintf(stderr, "fnt_file_chunk(%s, %" PRId64 "): %d %s\n",
            zRun, chunk, rc, fnt_errmsg(gStore));
    exit(1);
  }
}

/* An expected row. */
typedef struct Want {
  const char *key;
  int64_t incl, self, calls;
} Want;

static int rowCmp(const void *a, const void *b){
  return strcmp(((const fnt_heat_row*)a)->key, ((const fnt_heat_row*)b)->key);
}

/* Computes the heat of zRun and checks it is exactly aWant (sorted by key). */
static void expectHeat(const char *zCase, const char *zRun,
                       const Want *aWant, size_t nWant){
  fnt_snapshot *snap = 0;
  fnt_heat *h = 0;
  fnt_heat_row *aRow;
  size_t i, n;
  int rc = fnt_snapshot_current(gStore, &snap);
  if( rc ){
    fprintf(stderr, "fnt_snapshot_current: %s\n", fnt_errmsg(gStore));
    exit(1);
  }
  rc = fnt_heat_compute(snap, zRun, &h);
  CHECK(rc==FNT_OK, "%s: fnt_heat_compute: %d %s", zCase, rc, fnt_errmsg(gStore));
  if( rc ){ fnt_snapshot_release(snap); return; }
  n = fnt_heat_count(h);
  aRow = malloc((n+1)*sizeof(*aRow));
  if( n ) memcpy(aRow, fnt_heat_rows(h), n*sizeof(*aRow));
  qsort(aRow, n, sizeof(*aRow), rowCmp);
  CHECK(n==nWant, "%s: %zu rows, want %zu", zCase, n, nWant);
  for(i=0; i<n && i<nWant; i++){
    CHECK(strcmp(aRow[i].key, aWant[i].key)==0,
          "%s: row %zu key '%s', want '%s'", zCase, i, aRow[i].key, aWant[i].key);
    CHECK(aRow[i].inclusive_ns==aWant[i].incl
       && aRow[i].self_ns==aWant[i].self
       && aRow[i].calls==aWant[i].calls,
          "%s: %s: inclusive %" PRId64 " self %" PRId64 " calls %" PRId64
          ", want %" PRId64 " %" PRId64 " %" PRId64, zCase, aWant[i].key,
          aRow[i].inclusive_ns, aRow[i].self_ns, aRow[i].calls,
          aWant[i].incl, aWant[i].self, aWant[i].calls);
  }
  free(aRow);
  fnt_heat_free(h);
  fnt_snapshot_release(snap);
}

#define N(a) (sizeof(a)/sizeof((a)[0]))

/* Checks that key zKey of zRun's heat has the symbol zSymbol: the symbol of
** the key's first event. */
static void expectSymbol(const char *zRun, const char *zKey,
                         const char *zSymbol){
  fnt_snapshot *snap = 0;
  fnt_heat *h = 0;
  const char *zGot = 0;
  size_t i;
  if( fnt_snapshot_current(gStore, &snap) || fnt_heat_compute(snap, zRun, &h) ){
    CHECK(0, "%s: heat: %s", zRun, fnt_errmsg(gStore));
  }
  for(i=0; i<fnt_heat_count(h); i++){
    if( strcmp(fnt_heat_rows(h)[i].key, zKey)==0 ) zGot = fnt_heat_rows(h)[i].symbol;
  }
  CHECK(zGot && strcmp(zGot, zSymbol)==0, "%s: key '%s': symbol '%s', want '%s'",
        zRun, zKey, zGot ? zGot : "(no row)", zSymbol);
  fnt_heat_free(h);
  fnt_snapshot_release(snap);
}

/* Functions by symbol only: keys "?main", "?a", ... */
static const fnt_function aPlain[] = {
  {"main", 0, 1}, {"a", 0, 1}, {"b", 0, 1}, {"c", 0, 1}, {"x", 0, 0},
};
enum { MAIN, A, B, C, X };

/* ------------------------------------------------------------------------
** Hand-computed cases.
*/
static void testPlainNesting(void){
  /* main [0,100] { a [10,30], b [40,45] } */
  static const fnt_event ev[] = {
    E(1, 0, 0, MAIN, ENTRY), E(1, 1, 10, A, ENTRY), E(1, 2, 30, A, EXIT),
    E(1, 3, 40, B, ENTRY), E(1, 4, 45, B, EXIT), E(1, 5, 100, MAIN, EXIT),
  };
  static const Want want[] = {
    {"?a", 20, 20, 1}, {"?b", 5, 5, 1}, {"?main", 100, 75, 1},
  };
  fileChunk("nesting", 0, 1, aPlain, N(aPlain), ev, N(ev));
  expectHeat("nesting", "nesting", want, N(want));
}

static void testRecursion(void){
  /* a [0,100] { a [10,40] { a [20,25] } }: inclusive counts the outer only */
  static const fnt_event ev[] = {
    E(1, 0, 0, A, ENTRY), E(1, 1, 10, A, ENTRY), E(1, 2, 20, A, ENTRY),
    E(1, 3, 25, A, EXIT), E(1, 4, 40, A, EXIT), E(1, 5, 100, A, EXIT),
  };
  static const Want want[] = { {"?a", 100, 100, 3} };
  fileChunk("recursion", 0, 1, aPlain, N(aPlain), ev, N(ev));
  expectHeat("recursion", "recursion", want, N(want));
}

static void testMutualRecursion(void){
  /* a [0,100] { b [10,60] { a [20,50] { b [30,40] } } } */
  static const fnt_event ev[] = {
    E(1, 0, 0, A, ENTRY), E(1, 1, 10, B, ENTRY), E(1, 2, 20, A, ENTRY),
    E(1, 3, 30, B, ENTRY), E(1, 4, 40, B, EXIT), E(1, 5, 50, A, EXIT),
    E(1, 6, 60, B, EXIT), E(1, 7, 100, A, EXIT),
  };
  static const Want want[] = {
    {"?a", 100, 50+20, 2}, {"?b", 50, 20+10, 2},
  };
  fileChunk("mutual", 0, 1, aPlain, N(aPlain), ev, N(ev));
  expectHeat("mutual", "mutual", want, N(want));
}

static void testTailExit(void){
  /* main [0,60] { a [10,20] tail-calls b [20,50] } */
  static const fnt_event ev[] = {
    E(1, 0, 0, MAIN, ENTRY), E(1, 1, 10, A, ENTRY), E(1, 2, 20, A, TAIL_EXIT),
    E(1, 3, 20, B, ENTRY), E(1, 4, 50, B, EXIT), E(1, 5, 60, MAIN, EXIT),
  };
  static const Want want[] = {
    {"?a", 10, 10, 1}, {"?b", 30, 30, 1}, {"?main", 60, 20, 1},
  };
  fileChunk("tail", 0, 1, aPlain, N(aPlain), ev, N(ev));
  expectHeat("tail", "tail", want, N(want));
}

static void testExitPopsSeveral(void){
  /* main { a { b { c } } }: the exit of a at 70 ends c, b and a at 70 */
  static const fnt_event ev[] = {
    E(1, 0, 0, MAIN, ENTRY), E(1, 1, 10, A, ENTRY), E(1, 2, 20, B, ENTRY),
    E(1, 3, 30, C, ENTRY), E(1, 4, 70, A, EXIT), E(1, 5, 100, MAIN, EXIT),
  };
  static const Want want[] = {
    {"?a", 60, 10, 1}, {"?b", 50, 10, 1}, {"?c", 40, 40, 1},
    {"?main", 100, 40, 1},
  };
  fileChunk("unwind", 0, 1, aPlain, N(aPlain), ev, N(ev));
  expectHeat("unwind", "unwind", want, N(want));
}

static void testUnmatchedExit(void){
  /* exits of x (never entered) and of a (not on the stack) are ignored; a
  ** function with only ignored exits has no row. */
  static const fnt_event ev[] = {
    E(1, 0, 0, MAIN, ENTRY), E(1, 1, 5, X, EXIT), E(1, 2, 6, A, TAIL_EXIT),
    E(1, 3, 7, B, ENTRY), E(1, 4, 8, B, EXIT), E(1, 5, 9, B, EXIT),
    E(1, 6, 10, MAIN, EXIT),
  };
  static const Want want[] = { {"?b", 1, 1, 1}, {"?main", 10, 9, 1} };
  fileChunk("unmatched", 0, 1, aPlain, N(aPlain), ev, N(ev));
  expectHeat("unmatched", "unmatched", want, N(want));
}

static void testOpenFrames(void){
  /* main { a { b } } never exit: they end at the thread's last event, the
  ** ignored exit of x at 50.  Thread 2 ends at its own last event. */
  static const fnt_event ev[] = {
    E(1, 0, 0, MAIN, ENTRY), E(1, 1, 10, A, ENTRY), E(1, 2, 20, B, ENTRY),
    E(2, 3, 30, C, ENTRY), E(1, 4, 50, X, EXIT), E(2, 5, 35, B, ENTRY),
  };
  static const Want want[] = {
    {"?a", 40, 10, 1}, {"?b", 30+0, 30+0, 2}, {"?c", 5, 5, 1},
    {"?main", 50, 10, 1},
  };
  fileChunk("open", 0, 1, aPlain, N(aPlain), ev, N(ev));
  expectHeat("open", "open", want, N(want));
}

static void testThreads(void){
  /* Thread 1: main [0,40] { a [10,20] }; thread 4294967295: b [5,50]
  ** { a [12,30] }.  Exits on one thread never pop the other's frames. */
  static const fnt_event ev[] = {
    E(1, 10, 0, MAIN, ENTRY), E(4294967295u, 11, 5, B, ENTRY),
    E(1, 12, 10, A, ENTRY), E(4294967295u, 13, 12, A, ENTRY),
    E(1, 14, 20, A, EXIT), E(4294967295u, 15, 25, MAIN, EXIT),
    E(4294967295u, 16, 30, A, EXIT), E(1, 17, 40, MAIN, EXIT),
    E(4294967295u, 18, 50, B, EXIT), E(7, 19, 60, B, EXIT),
  };
  static const Want want[] = {
    {"?a", 28, 28, 2}, {"?b", 45, 27, 1}, {"?main", 40, 30, 1},
  };
  fileChunk("threads", 0, 1, aPlain, N(aPlain), ev, N(ev));
  expectHeat("threads", "threads", want, N(want));
}

static void testChunks(void){
  /* One run, three chunks, filed out of order; seq_no interleaves them and
  ** each chunk numbers the functions its own way.  main [0,50] { a [10,20],
  ** b [30,35] }, plus a recursion of a that spans chunks. */
  static const fnt_function fn0[] = { {"main", 0, 1}, {"a", 0, 1}, {"b", 0, 1} };
  static const fnt_function fn1[] = { {"b", 0, 1}, {"x", 0, 0}, {"a", 0, 1},
                                      {"main", 0, 1} };
  static const fnt_function fn2[] = { {"a", 0, 1} };
  static const fnt_event ev0[] = {
    E(1, 4, 35, 2, EXIT), E(1, 0, 0, 0, ENTRY), E(1, 2, 20, 1, EXIT),
    E(1, 6, 60, 1, ENTRY),
  };
  static const fnt_event ev1[] = {
    E(1, 5, 50, 3, EXIT), E(1, 1, 10, 2, ENTRY), E(1, 3, 30, 0, ENTRY),
    E(1, 9, 90, 2, EXIT),
  };
  static const fnt_event ev2[] = {
    E(1, 7, 70, 0, ENTRY), E(1, 8, 80, 0, EXIT),
  };
  static const Want want[] = {
    {"?a", 10+30, 10+20+10, 3}, {"?b", 5, 5, 1}, {"?main", 50, 35, 1},
  };
  fileChunk("chunks", 2, 3, fn2, N(fn2), ev2, N(ev2));
  fileChunk("chunks", 1, 3, fn1, N(fn1), ev1, N(ev1));
  /* Without chunk 0: a [10,90] { b [30,90] { a [70,80] } }; the exit of
  ** main is unmatched. */
  expectHeat("chunks (2 of 3 filed)", "chunks", (const Want[]){
    {"?a", 80, 20+10, 2}, {"?b", 60, 50, 1},
  }, 2);
  fileChunk("chunks", 0, 3, fn0, N(fn0), ev0, N(ev0));
  expectHeat("chunks", "chunks", want, N(want));
}

static void testKeys(void){
  /* stable_id when known, else '?' || symbol; two symbols with one
  ** stable_id are one function; "" is no stable_id; the symbol "S" without
  ** a stable_id is "?S", not the function whose stable_id is "S". */
  static const fnt_function fn[] = {
    {"main", "c acme/widget * main().", 1}, {"helper", 0, 1},
    {"helper2", "", 1}, {"inl_a", "S", 1}, {"inl_b", "S", 1}, {"S", 0, 1},
    {"", 0, 0},
  };
  static const fnt_event ev[] = {
    E(1, 0, 0, 0, ENTRY), E(1, 1, 1, 1, ENTRY), E(1, 2, 2, 1, EXIT),
    E(1, 3, 3, 2, ENTRY), E(1, 4, 5, 2, EXIT), E(1, 5, 6, 3, ENTRY),
    E(1, 6, 10, 4, ENTRY), E(1, 7, 14, 4, EXIT), E(1, 8, 20, 3, EXIT),
    E(1, 9, 21, 5, ENTRY), E(1, 10, 22, 5, EXIT), E(1, 11, 30, 6, ENTRY),
    E(1, 12, 33, 6, EXIT), E(1, 13, 40, 0, EXIT),
  };
  static const Want want[] = {
    {"?", 3, 3, 1}, {"?S", 1, 1, 1}, {"?helper", 1, 1, 1},
    {"?helper2", 2, 2, 1}, {"S", 14, 14, 2},
    {"c acme/widget * main().", 40, 40-1-2-14-1-3, 1},
  };
  fileChunk("keys", 0, 1, fn, N(fn), ev, N(ev));
  expectHeat("keys", "keys", want, N(want));
  expectSymbol("keys", "S", "inl_a");
  expectSymbol("keys", "c acme/widget * main().", "main");
  expectSymbol("keys", "?helper2", "helper2");
  expectSymbol("keys", "?", "");
}

static void testKeyIsTheIdentity(void){
  /* A function is its key: the stable_id "?q" and the symbol q without one
  ** are the same function (and the recursion rule sees them as such);
  ** "?q" is not "?qq", a longer key with the same prefix. */
  static const fnt_function fn[] = {
    {"q", 0, 1}, {"other", "?q", 1}, {"qq", 0, 1},
  };
  static const fnt_event ev[] = {
    E(1, 0, 0, 0, ENTRY), E(1, 1, 10, 1, ENTRY), E(1, 2, 12, 2, ENTRY),
    E(1, 3, 13, 2, EXIT), E(1, 4, 20, 0, EXIT), E(1, 5, 30, 1, EXIT),
  };
  /* q [0,30] { other [10,20] { qq [12,13] } }: the exit of q at 20 pops
  ** the topmost frame of key "?q" (other's); the exit at 30 the outer. */
  static const Want want[] = { {"?q", 30, 30-1, 2}, {"?qq", 1, 1, 1} };
  fileChunk("samekey", 0, 1, fn, N(fn), ev, N(ev));
  expectHeat("same key", "samekey", want, N(want));
  expectSymbol("samekey", "?q", "q");
}

static void testUnknownAndEmpty(void){
  expectHeat("unknown run", "no-such-run", 0, 0);
  expectHeat("empty run_id", "", 0, 0);
  /* A filed run with no events: no rows either. */
  fileChunk("empty", 0, 1, aPlain, N(aPlain), 0, 0);
  expectHeat("empty run", "empty", 0, 0);
  /* A run whose events are all exits: no calls, no rows. */
  {
    static const fnt_event ev[] = { E(1, 0, 5, A, EXIT), E(2, 1, 6, B, TAIL_EXIT) };
    fileChunk("exits-only", 0, 1, aPlain, N(aPlain), ev, N(ev));
    expectHeat("exits only", "exits-only", 0, 0);
  }
}

/* ------------------------------------------------------------------------
** The property test: random runs against a naive reference.
*/
static uint64_t rngState;
static uint32_t rnd(uint32_t n){
  /* xorshift64*: fixed seeds, same runs everywhere. */
  rngState ^= rngState >> 12;
  rngState ^= rngState << 25;
  rngState ^= rngState >> 27;
  return (uint32_t)(((rngState * 0x2545F4914F6CDD1Dull) >> 32) % n);
}

/* The run's functions: some share a stable_id, some have none, "" is none,
** a symbol may look like another's stable_id.  After the first few, many
** more, so that the per-thread hashes grow, collide and delete. */
#define NUNIVERSE 72
static fnt_function aUniverse[NUNIVERSE];
static char azUniverseText[NUNIVERSE][2][16];

static void universeInit(void){
  static const fnt_function aFirst[] = {
    {"main", 0, 1}, {"f", "sid-f", 1}, {"g", 0, 1}, {"h", "sid-h", 1},
    {"h_clone", "sid-h", 1}, {"k", "", 0}, {"sid-f", 0, 0}, {"memcpy", 0, 0},
  };
  int i;
  for(i=0; i<NUNIVERSE; i++){
    if( i<(int)N(aFirst) ){
      aUniverse[i] = aFirst[i];
      continue;
    }
    snprintf(azUniverseText[i][0], 16, "u%d", i);
    snprintf(azUniverseText[i][1], 16, "sid-u%d", i/2);
    aUniverse[i].symbol = azUniverseText[i][0];
    aUniverse[i].stable_id = i%3 ? azUniverseText[i][1] : 0;
    aUniverse[i].local = 1;
  }
}

static const char *universeKey(uint32_t i, char *zBuf, size_t nBuf){
  const fnt_function *f = &aUniverse[i];
  if( f->stable_id && f->stable_id[0] ) return f->stable_id;
  snprintf(zBuf, nBuf, "?%s", f->symbol);
  return zBuf;
}

typedef struct RefEv {
  uint64_t seq;
  int64_t t;
  uint32_t thread;
  uint32_t fn;         /* index into aUniverse */
  int kind;
} RefEv;

typedef struct RefRow {
  char key[64];
  int64_t incl, self, calls;
} RefRow;

static int refEvCmp(const void *a, const void *b){
  uint64_t x = ((const RefEv*)a)->seq, y = ((const RefEv*)b)->seq;
  return x<y ? -1 : x>y;
}

static int refRowCmp(const void *a, const void *b){
  return strcmp(((const RefRow*)a)->key, ((const RefRow*)b)->key);
}

/* The reference: literally SPEC §5, with linear searches everywhere. */
#define REF_MAXDEPTH 1024
typedef struct RefFrame { char key[64]; int64_t start, child; } RefFrame;
typedef struct RefThread {
  uint32_t tid; int64_t tLast; int n; RefFrame a[REF_MAXDEPTH];
} RefThread;

static RefRow *refRow(RefRow *aRow, int *pnRow, const char *zKey){
  int i;
  for(i=0; i<*pnRow; i++) if( strcmp(aRow[i].key, zKey)==0 ) return &aRow[i];
  memset(&aRow[i], 0, sizeof(aRow[i]));
  snprintf(aRow[i].key, sizeof(aRow[i].key), "%s", zKey);
  (*pnRow)++;
  return &aRow[i];
}

static void refEnd(RefThread *th, int64_t t, RefRow *aRow, int *pnRow){
  RefFrame *f = &th->a[--th->n];
  int64_t d = t - f->start;
  int below = 0, i;
  RefRow *r = refRow(aRow, pnRow, f->key);
  for(i=0; i<th->n; i++) if( strcmp(th->a[i].key, f->key)==0 ) below = 1;
  r->calls++;
  r->self += d - f->child;
  if( !below ) r->incl += d;
  if( th->n ) th->a[th->n-1].child += d;
}

static int refHeat(RefEv *aEv, int nEv, RefRow *aRow){
  static RefThread aTh[8];
  int nTh = 0, nRow = 0, i, j;
  char zBuf[64];
  qsort(aEv, (size_t)nEv, sizeof(*aEv), refEvCmp);
  for(i=0; i<nEv; i++){
    RefThread *th = 0;
    const char *zKey = universeKey(aEv[i].fn, zBuf, sizeof(zBuf));
    for(j=0; j<nTh; j++) if( aTh[j].tid==aEv[i].thread ) th = &aTh[j];
    if( th==0 ){ th = &aTh[nTh++]; th->tid = aEv[i].thread; th->n = 0; }
    th->tLast = aEv[i].t;
    if( aEv[i].kind==FNT_KIND_ENTRY ){
      snprintf(th->a[th->n].key, sizeof(th->a[0].key), "%s", zKey);
      th->a[th->n].start = aEv[i].t;
      th->a[th->n].child = 0;
      th->n++;
    }else{
      int top = -1;
      for(j=th->n-1; j>=0 && top<0; j--) if( strcmp(th->a[j].key, zKey)==0 ) top = j;
      if( top>=0 ) while( th->n>top ) refEnd(th, aEv[i].t, aRow, &nRow);
    }
  }
  for(j=0; j<nTh; j++) while( aTh[j].n ) refEnd(&aTh[j], aTh[j].tLast, aRow, &nRow);
  qsort(aRow, (size_t)nRow, sizeof(*aRow), refRowCmp);
  return nRow;
}

/* One random run: files it in 1..6 chunks and compares. */
static void propertyRun(int iRun){
  enum { MAXEV = 2000 };
  static RefEv aEv[MAXEV];
  static RefRow aRow[NUNIVERSE];
  static Want aWant[NUNIVERSE];
  static fnt_event aChunkEv[6][MAXEV];
  static fnt_function aChunkFn[6][NUNIVERSE];
  uint32_t aDepth[8] = {0, 0, 0, 0, 0, 0, 0, 0};
  static uint32_t aStack[8][REF_MAXDEPTH];
  uint32_t aFnSlot[6][NUNIVERSE];        /* universe index -> chunk's index */
  size_t nChunkEv[6] = {0, 0, 0, 0, 0, 0};
  int nThread = 1 + (int)rnd(8);
  int nChunk = 1 + (int)rnd(iRun%3==0 ? 6 : 2);
  int nEv = iRun%10==0 ? (int)rnd(8) : (int)rnd(MAXEV+1);
  int64_t t = (int64_t)rnd(1000);
  uint64_t seq = rnd(3);
  char zRun[32], zCase[48];
  int i, c, nRow;

  snprintf(zRun, sizeof(zRun), "prop-%d", iRun);
  for(i=0; i<nEv; i++){
    int th = (int)rnd((uint32_t)nThread);
    uint32_t r = rnd(100), fn;
    int kind;
    if( aDepth[th]<REF_MAXDEPTH-1 && (r<45 || aDepth[th]==0) ){
      kind = FNT_KIND_ENTRY;
      /* Bias towards a few functions so that recursion is frequent; on
      ** some runs, towards many, so that stacks hold many keys. */
      fn = (rnd(4)==0 || iRun%5==4) ? rnd(NUNIVERSE) : rnd(3);
      aStack[th][aDepth[th]++] = fn;
    }else{
      kind = rnd(8)==0 ? FNT_KIND_TAIL_EXIT : FNT_KIND_EXIT;
      if( r<85 && aDepth[th] ){
        fn = aStack[th][--aDepth[th]];          /* the usual, matched exit */
      }else{
        char zK1[64], zK2[64];
        fn = rnd(NUNIVERSE);                     /* unwinds several, or none */
        for(c=(int)aDepth[th]-1; c>=0; c--){
          if( strcmp(universeKey(aStack[th][c], zK1, sizeof(zK1)),
                     universeKey(fn, zK2, sizeof(zK2)))==0 ){
            aDepth[th] = (uint32_t)c;
            break;
          }
        }
      }
    }
    t += (int64_t)rnd(50);
    seq += 1 + rnd(3);
    aEv[i].seq = seq;
    aEv[i].t = t;
    aEv[i].thread = th==7 ? 4294967295u : (uint32_t)th * 1000u;
    aEv[i].fn = fn;
    aEv[i].kind = kind;
  }

  /* Each chunk lists the universe in its own shuffled order. */
  for(c=0; c<nChunk; c++){
    uint32_t aPerm[NUNIVERSE];
    for(i=0; i<(int)NUNIVERSE; i++) aPerm[i] = (uint32_t)i;
    for(i=(int)NUNIVERSE-1; i>0; i--){
      uint32_t j = rnd((uint32_t)i+1), x = aPerm[i];
      aPerm[i] = aPerm[j];
      aPerm[j] = x;
    }
    for(i=0; i<(int)NUNIVERSE; i++){
      aChunkFn[c][i] = aUniverse[aPerm[i]];
      aFnSlot[c][aPerm[i]] = (uint32_t)i;
    }
  }
  for(i=0; i<nEv; i++){
    int cc = (int)rnd((uint32_t)nChunk);
    fnt_event *e = &aChunkEv[cc][nChunkEv[cc]++];
    e->seq_no = aEv[i].seq;
    e->t_ns = (uint64_t)aEv[i].t;
    e->thread = aEv[i].thread;
    e->function = aFnSlot[cc][aEv[i].fn];
    e->kind = (uint8_t)aEv[i].kind;
  }
  /* Chunks filed in reverse, events within a chunk reversed on odd runs. */
  for(c=nChunk-1; c>=0; c--){
    if( iRun & 1 ){
      size_t a, b;
      for(a=0, b=nChunkEv[c]; a+1<b; a++, b--){
        fnt_event x = aChunkEv[c][a];
        aChunkEv[c][a] = aChunkEv[c][b-1];
        aChunkEv[c][b-1] = x;
      }
    }
    fileChunk(zRun, c, nChunk, aChunkFn[c], NUNIVERSE, aChunkEv[c], nChunkEv[c]);
  }

  nRow = refHeat(aEv, nEv, aRow);
  for(i=0; i<nRow; i++){
    aWant[i].key = aRow[i].key;
    aWant[i].incl = aRow[i].incl;
    aWant[i].self = aRow[i].self;
    aWant[i].calls = aRow[i].calls;
  }
  snprintf(zCase, sizeof(zCase), "random run %d (%d events)", iRun, nEv);
  expectHeat(zCase, zRun, aWant, (size_t)nRow);
}

/* ------------------------------------------------------------------------
*/
static int rmOne(const char *zPath, const struct stat *st, int flag,
                 struct FTW *ftw){
  (void)st; (void)flag; (void)ftw;
  return remove(zPath);
}

static void openFresh(const char *zName){
  const char *zTmp = getenv("FNT_TEST_TMP");
  int rc;
  if( gStore ){
    fnt_close(gStore);
    nftw(gDir, rmOne, 16, FTW_DEPTH|FTW_PHYS);
  }
  snprintf(gDir, sizeof(gDir), "%s/heat-%s-%d",
           zTmp && zTmp[0] ? zTmp : "/tmp", zName, (int)getpid());
  nftw(gDir, rmOne, 16, FTW_DEPTH|FTW_PHYS);
  rc = fnt_open(gDir, FNT_OPEN_CREATE, &gStore);
  if( rc ){
    fprintf(stderr, "fnt_open(%s): %s\n", gDir,
            gStore ? fnt_errmsg(gStore) : fnt_strerror(rc));
    exit(1);
  }
}

/* Every filing is a commit with its fsyncs, which a busy disk makes cost
** tens of milliseconds: the default is 80 runs (about 175 filings), each of
** up to 2000 events on up to 8 threads, rather than hundreds of small ones.
** More: `test_heat N` or FNT_HEAT_RUNS=N (best with FNT_TEST_TMP on a
** tmpfs: 2000 runs take about 2 s there). */
int main(int argc, char **argv){
  const char *zRuns = argc>1 ? argv[1] : getenv("FNT_HEAT_RUNS");
  int nRun = zRuns && zRuns[0] ? atoi(zRuns) : 80;
  int i;

  universeInit();
  openFresh("cases");
  testPlainNesting();
  testRecursion();
  testMutualRecursion();
  testTailExit();
  testExitPopsSeveral();
  testUnmatchedExit();
  testOpenFrames();
  testThreads();
  testChunks();
  testKeys();
  testKeyIsTheIdentity();
  testUnknownAndEmpty();

  {
    fnt_heat *h = (fnt_heat*)&i;
    CHECK(fnt_heat_compute(0, "x", &h)==FNT_E_MISUSE && h==0,
          "fnt_heat_compute(NULL snapshot) must be FNT_E_MISUSE");
    CHECK(fnt_heat_count(0)==0 && fnt_heat_rows(0)==0, "NULL heat");
    fnt_heat_free(0);
  }

  for(i=0; i<nRun; i++){
    /* A fresh warehouse now and then keeps each commit's snapshot small. */
    if( i%100==0 ) openFresh("prop");
    rngState = 0x9E3779B97F4A7C15ull * (uint64_t)(i+1);
    propertyRun(i);
    if( nFail>20 ) break;
  }

  fnt_close(gStore);
  nftw(gDir, rmOne, 16, FTW_DEPTH|FTW_PHYS);
  if( nFail ){
    fprintf(stderr, "test_heat: %d failure(s)\n", nFail);
    return 1;
  }
  printf("test_heat: ok (%d random runs)\n", nRun);
  return 0;
}
