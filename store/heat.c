/*
** heat.c -- per-function inclusive time, self time and calls of one run
** (SPEC §5), from one streaming pass over the run's events in seq_no order.
**
** Two layers, so that the replay can be tested and measured on its own:
**   - the replay core (heatReplay) takes batches of events whose function
**     is already a dense key id, and keeps per thread a stack of frames and
**     a small hash of "how many frames of key k are on this stack";
**   - fnt_heat_compute() scans the run, maps each segment's function
**     indexes to key ids once per (segment table, index) and feeds batches.
** Memory is bounded by threads x stack depth plus the number of keys, never
** by the length of the run.
**
** Arithmetic on durations is done in uint64_t: the spec does not require
** t_ns to grow along seq_no, so a duration may be negative, and sums of
** hostile values may overflow; two's-complement wrap-around keeps both
** well-defined (no UB), and the result is cast back to int64_t.
*/
#include <string.h>

#include "internal.h"

#define heatMalloc(n)     fnt_malloc(n)
#define heatRealloc(p, n) fnt_realloc((p), (n))
#define heatFree(p)       fnt_free(p)

/* ------------------------------------------------------------------------
** The replay core.
*/

/* One event as the replay sees it: the function already mapped to a key. */
typedef struct HeatEvent {
  int64_t t;          /* t_ns */
  uint32_t thread;    /* index into HeatState.aThread (resolved per batch) */
  uint32_t key;       /* dense key id, < HeatState.nKey */
  int kind;           /* FNT_KIND_... */
} HeatEvent;

typedef struct HeatFrame {
  int64_t start;      /* t_ns of the entry */
  uint64_t child;     /* sum of the durations of frames that ended directly above */
  uint32_t key;
} HeatFrame;

/* A slot of a thread's "frames of this key on my stack" hash.  count==0
** marks an empty slot: a key whose last frame is popped is deleted, so the
** table never holds more keys than the stack has frames. */
typedef struct HeatSlot {
  uint32_t key;
  uint32_t count;
} HeatSlot;

typedef struct HeatThread {
  HeatFrame *aFrame;
  size_t nFrame, nFrameAlloc;
  HeatSlot *aSlot;      /* open addressing, linear probing, nSlotMask+1 slots */
  uint32_t nSlotMask;
  uint32_t nSlotUsed;
  uint32_t tid;
  int64_t tLast;        /* t_ns of this thread's last event */
} HeatThread;

typedef struct HeatState {
  /* Per key totals, indexed by key id.  Kept in uint64_t: see the top. */
  uint64_t *aIncl, *aSelf, *aCalls;
  uint32_t nKey, nKeyAlloc;
  /* Threads, dense, and a hash from thread id to index+1 (0 = empty). */
  HeatThread *aThread;
  uint32_t nThread, nThreadAlloc;
  uint32_t *aTidSlot;
  uint32_t nTidMask;
} HeatState;

/* Fibonacci hashing: one multiply, the high bits are well mixed. */
static uint32_t heatHash(uint32_t x){
  return (uint32_t)(((uint64_t)x * 0x9E3779B97F4A7C15ull) >> 32);
}

static void heatStateInit(HeatState *s){
  memset(s, 0, sizeof(*s));
}

static void heatStateClear(HeatState *s){
  uint32_t i;
  for(i=0; i<s->nThread; i++){
    heatFree(s->aThread[i].aFrame);
    heatFree(s->aThread[i].aSlot);
  }
  heatFree(s->aThread);
  heatFree(s->aTidSlot);
  heatFree(s->aIncl);
  heatFree(s->aSelf);
  heatFree(s->aCalls);
  memset(s, 0, sizeof(*s));
}

/* Makes room for key ids 0 .. nKey-1 (new keys start at zero). */
static int heatReserveKeys(HeatState *s, uint32_t nKey){
  if( nKey>s->nKeyAlloc ){
    uint32_t nNew = s->nKeyAlloc ? s->nKeyAlloc : 64;
    uint64_t *a;
    while( nNew<nKey ) nNew *= 2;
    a = heatRealloc(s->aIncl, nNew*sizeof(uint64_t));
    if( a==0 ) return FNT_E_NOMEM;
    s->aIncl = a;
    a = heatRealloc(s->aSelf, nNew*sizeof(uint64_t));
    if( a==0 ) return FNT_E_NOMEM;
    s->aSelf = a;
    a = heatRealloc(s->aCalls, nNew*sizeof(uint64_t));
    if( a==0 ) return FNT_E_NOMEM;
    s->aCalls = a;
    s->nKeyAlloc = nNew;
  }
  if( nKey>s->nKey ){
    size_t nAdd = (size_t)(nKey - s->nKey)*sizeof(uint64_t);
    memset(s->aIncl+s->nKey, 0, nAdd);
    memset(s->aSelf+s->nKey, 0, nAdd);
    memset(s->aCalls+s->nKey, 0, nAdd);
    s->nKey = nKey;
  }
  return FNT_OK;
}

/* Rebuilds the thread-id hash at twice its size (or 16 slots). */
static int heatTidGrow(HeatState *s){
  uint32_t nNew = s->nTidMask ? (s->nTidMask+1)*2 : 16;
  uint32_t *aNew = heatMalloc(nNew*sizeof(uint32_t));
  uint32_t i;
  if( aNew==0 ) return FNT_E_NOMEM;
  memset(aNew, 0, nNew*sizeof(uint32_t));
  for(i=0; i<s->nThread; i++){
    uint32_t h = heatHash(s->aThread[i].tid) & (nNew-1);
    while( aNew[h] ) h = (h+1) & (nNew-1);
    aNew[h] = i+1;
  }
  heatFree(s->aTidSlot);
  s->aTidSlot = aNew;
  s->nTidMask = nNew-1;
  return FNT_OK;
}

/* The thread `tid`, created on its first event; NULL when out of memory. */
static HeatThread *heatThread(HeatState *s, uint32_t tid){
  uint32_t h;
  HeatThread *th;
  if( s->nTidMask==0 && heatTidGrow(s) ) return 0;
  h = heatHash(tid) & s->nTidMask;
  while( s->aTidSlot[h] ){
    th = &s->aThread[s->aTidSlot[h]-1];
    if( th->tid==tid ) return th;
    h = (h+1) & s->nTidMask;
  }
  /* A new thread.  Events name threads by index, so aThread may move. */
  if( s->nThread==s->nThreadAlloc ){
    uint32_t nNew = s->nThreadAlloc ? s->nThreadAlloc*2 : 8;
    HeatThread *a = heatRealloc(s->aThread, nNew*sizeof(HeatThread));
    if( a==0 ) return 0;
    s->aThread = a;
    s->nThreadAlloc = nNew;
  }
  th = &s->aThread[s->nThread];
  memset(th, 0, sizeof(*th));
  th->tid = tid;
  s->aTidSlot[h] = ++s->nThread;
  if( (uint64_t)s->nThread*2 > (uint64_t)s->nTidMask+1 && heatTidGrow(s) ){
    return 0;
  }
  return &s->aThread[s->nThread-1];
}

/* The slot of `key` in th's hash, or NULL when the key has no frame. */
static HeatSlot *heatSlotFind(HeatThread *th, uint32_t key){
  uint32_t h;
  if( th->aSlot==0 ) return 0;
  h = heatHash(key) & th->nSlotMask;
  for(;;){
    HeatSlot *p = &th->aSlot[h];
    if( p->count==0 ) return 0;
    if( p->key==key ) return p;
    h = (h+1) & th->nSlotMask;
  }
}

static int heatSlotGrow(HeatThread *th){
  uint32_t nOld = th->aSlot ? th->nSlotMask+1 : 0;
  uint32_t nNew = nOld ? nOld*2 : 16;
  HeatSlot *aNew = heatMalloc(nNew*sizeof(HeatSlot));
  uint32_t i;
  if( aNew==0 ) return FNT_E_NOMEM;
  memset(aNew, 0, nNew*sizeof(HeatSlot));
  for(i=0; i<nOld; i++){
    HeatSlot *p = &th->aSlot[i];
    if( p->count ){
      uint32_t h = heatHash(p->key) & (nNew-1);
      while( aNew[h].count ) h = (h+1) & (nNew-1);
      aNew[h] = *p;
    }
  }
  heatFree(th->aSlot);
  th->aSlot = aNew;
  th->nSlotMask = nNew-1;
  return FNT_OK;
}

/* Counts one more frame of `key` on th's stack. */
static int heatSlotPush(HeatThread *th, uint32_t key){
  uint32_t h;
  if( th->aSlot==0 || (th->nSlotUsed+1)*2 > th->nSlotMask+1 ){
    if( heatSlotGrow(th) ) return FNT_E_NOMEM;
  }
  h = heatHash(key) & th->nSlotMask;
  for(;;){
    HeatSlot *p = &th->aSlot[h];
    if( p->count==0 ){
      p->key = key;
      p->count = 1;
      th->nSlotUsed++;
      return FNT_OK;
    }
    if( p->key==key ){
      p->count++;
      return FNT_OK;
    }
    h = (h+1) & th->nSlotMask;
  }
}

/* Counts one frame of `key` less; returns 1 when it was the last one (the
** popped frame had no other frame of its key below it).  Deleting uses
** backward shift, so that probes never need tombstones. */
static int heatSlotPop(HeatThread *th, uint32_t key){
  uint32_t mask = th->nSlotMask;
  uint32_t i = heatHash(key) & mask, j;
  while( th->aSlot[i].key!=key || th->aSlot[i].count==0 ) i = (i+1) & mask;
  if( --th->aSlot[i].count ) return 0;
  th->nSlotUsed--;
  /* Move later members of the probe run into the hole when their home
  ** position does not lie cyclically within (hole, their position]. */
  j = i;
  for(;;){
    uint32_t home;
    j = (j+1) & mask;
    if( th->aSlot[j].count==0 ) break;
    home = heatHash(th->aSlot[j].key) & mask;
    if( i<=j ? (i<home && home<=j) : (i<home || home<=j) ) continue;
    th->aSlot[i] = th->aSlot[j];
    th->aSlot[j].count = 0;
    i = j;
  }
  return 1;
}

/* Ends every frame of `th` above depth nKeep at time t. */
static void heatPopTo(HeatState *s, HeatThread *th, size_t nKeep, int64_t t){
  while( th->nFrame>nKeep ){
    HeatFrame *f = &th->aFrame[--th->nFrame];
    uint64_t d = (uint64_t)t - (uint64_t)f->start;
    uint32_t k = f->key;
    s->aCalls[k]++;
    s->aSelf[k] += d - f->child;
    if( heatSlotPop(th, k) ) s->aIncl[k] += d;
    if( th->nFrame ) th->aFrame[th->nFrame-1].child += d;
  }
}

/* Replays n events, in seq_no order, continuing the previous batches. */
static int heatReplay(HeatState *s, const HeatEvent *aEv, size_t n){
  size_t i;
  for(i=0; i<n; i++){
    const HeatEvent *e = &aEv[i];
    HeatThread *th = &s->aThread[e->thread];
    th->tLast = e->t;
    if( e->kind==FNT_KIND_ENTRY ){
      HeatFrame *f;
      if( th->nFrame==th->nFrameAlloc ){
        size_t nNew = th->nFrameAlloc ? th->nFrameAlloc*2 : 32;
        HeatFrame *a = heatRealloc(th->aFrame, nNew*sizeof(HeatFrame));
        if( a==0 ) return FNT_E_NOMEM;
        th->aFrame = a;
        th->nFrameAlloc = nNew;
      }
      if( heatSlotPush(th, e->key) ) return FNT_E_NOMEM;
      f = &th->aFrame[th->nFrame++];
      f->start = e->t;
      f->child = 0;
      f->key = e->key;
    }else if( th->nFrame && th->aFrame[th->nFrame-1].key==e->key ){
      /* The usual exit: of the function on top. */
      heatPopTo(s, th, th->nFrame-1, e->t);
    }else if( heatSlotFind(th, e->key) ){
      /* An exit that unwinds several frames.  The search only walks frames
      ** that are popped right after, so it costs O(1) amortised. */
      size_t d = th->nFrame;
      while( th->aFrame[d-1].key!=e->key ) d--;
      heatPopTo(s, th, d-1, e->t);
    }
    /* else: an exit of a function with no frame on this stack: ignored. */
  }
  return FNT_OK;
}

/* Ends the frames still open, each thread's at its last event's t_ns. */
static void heatFinish(HeatState *s){
  uint32_t i;
  for(i=0; i<s->nThread; i++){
    heatPopTo(s, &s->aThread[i], 0, s->aThread[i].tLast);
  }
}

/* ------------------------------------------------------------------------
** Keys: "stable_id" or "?symbol", interned to dense ids.
*/
typedef struct HeatKeys {
  char *zArena;          /* every key, NUL-terminated, back to back */
  size_t nArena, nArenaAlloc;
  size_t *aOff;          /* aOff[id]: the key's offset in zArena */
  size_t *aLen;          /* aLen[id]: its length, without the NUL */
  uint32_t *aHash;       /* aHash[id]: its hash */
  uint32_t nKey, nKeyAlloc;
  uint32_t *aSlot;       /* open addressing: id+1, 0 = empty */
  uint32_t nSlotMask;
} HeatKeys;

static void heatKeysClear(HeatKeys *k){
  heatFree(k->zArena);
  heatFree(k->aOff);
  heatFree(k->aLen);
  heatFree(k->aHash);
  heatFree(k->aSlot);
  memset(k, 0, sizeof(*k));
}

/* FNV-1a over the prefix byte and the text. */
static uint32_t heatKeyHash(char cPrefix, const char *z, size_t n){
  uint32_t h = 2166136261u;
  size_t i;
  if( cPrefix ){ h ^= (unsigned char)cPrefix; h *= 16777619u; }
  for(i=0; i<n; i++){ h ^= (unsigned char)z[i]; h *= 16777619u; }
  return h;
}

static int heatKeysGrow(HeatKeys *k){
  uint32_t nNew = k->aSlot ? (k->nSlotMask+1)*2 : 64;
  uint32_t *aNew = heatMalloc(nNew*sizeof(uint32_t));
  uint32_t i;
  if( aNew==0 ) return FNT_E_NOMEM;
  memset(aNew, 0, nNew*sizeof(uint32_t));
  for(i=0; i<k->nKey; i++){
    uint32_t h = k->aHash[i] & (nNew-1);
    while( aNew[h] ) h = (h+1) & (nNew-1);
    aNew[h] = i+1;
  }
  heatFree(k->aSlot);
  k->aSlot = aNew;
  k->nSlotMask = nNew-1;
  return FNT_OK;
}

/* The id of the key cPrefix+z[0..n) ('\0' prefix = none), added when new.
** @return FNT_OK or FNT_E_NOMEM. */
static int heatKeyIntern(HeatKeys *k, char cPrefix, const char *z, size_t n,
                         uint32_t *pId){
  uint32_t hash = heatKeyHash(cPrefix, z, n);
  size_t nKey = n + (cPrefix!=0);
  uint32_t h;
  if( k->aSlot==0 && heatKeysGrow(k) ) return FNT_E_NOMEM;
  h = hash & k->nSlotMask;
  while( k->aSlot[h] ){
    uint32_t id = k->aSlot[h]-1;
    const char *zOld = k->zArena + k->aOff[id];
    if( k->aHash[id]==hash
     && k->aLen[id]==nKey
     && (cPrefix==0 || zOld[0]==cPrefix)
     && memcmp(zOld+(cPrefix!=0), z, n)==0
    ){
      *pId = id;
      return FNT_OK;
    }
    h = (h+1) & k->nSlotMask;
  }
  if( k->nKey==UINT32_MAX-1 ) return FNT_E_NOMEM;
  if( k->nKey==k->nKeyAlloc ){
    uint32_t nNew = k->nKeyAlloc ? k->nKeyAlloc*2 : 64;
    size_t *aOff = heatRealloc(k->aOff, nNew*sizeof(size_t));
    uint32_t *aHash;
    if( aOff==0 ) return FNT_E_NOMEM;
    k->aOff = aOff;
    aOff = heatRealloc(k->aLen, nNew*sizeof(size_t));
    if( aOff==0 ) return FNT_E_NOMEM;
    k->aLen = aOff;
    aHash = heatRealloc(k->aHash, nNew*sizeof(uint32_t));
    if( aHash==0 ) return FNT_E_NOMEM;
    k->aHash = aHash;
    k->nKeyAlloc = nNew;
  }
  if( k->nArena+nKey+1 > k->nArenaAlloc ){
    size_t nNew = k->nArenaAlloc ? k->nArenaAlloc*2 : 4096;
    char *zNew;
    while( nNew < k->nArena+nKey+1 ) nNew *= 2;
    zNew = heatRealloc(k->zArena, nNew);
    if( zNew==0 ) return FNT_E_NOMEM;
    k->zArena = zNew;
    k->nArenaAlloc = nNew;
  }
  k->aOff[k->nKey] = k->nArena;
  k->aLen[k->nKey] = nKey;
  k->aHash[k->nKey] = hash;
  if( cPrefix ) k->zArena[k->nArena++] = cPrefix;
  if( n ) memcpy(k->zArena+k->nArena, z, n);
  k->nArena += n;
  k->zArena[k->nArena++] = 0;
  k->aSlot[h] = k->nKey+1;
  *pId = k->nKey++;
  if( (uint64_t)k->nKey*2 > (uint64_t)k->nSlotMask+1 && heatKeysGrow(k) ){
    return FNT_E_NOMEM;
  }
  return FNT_OK;
}

/* ------------------------------------------------------------------------
** The result.
*/
struct fnt_heat {
  fnt_heat_row *aRow;
  size_t nRow;
  char *zArena;          /* the keys the rows point into */
};

size_t fnt_heat_count(const fnt_heat *h){
  return h ? h->nRow : 0;
}

const fnt_heat_row *fnt_heat_rows(const fnt_heat *h){
  return h ? h->aRow : 0;
}

void fnt_heat_free(fnt_heat *h){
  if( h==0 ) return;
  heatFree(h->aRow);
  heatFree(h->zArena);
  heatFree(h);
}

/* Moves the totals of every key with a call into a new fnt_heat; the key
** arena changes owner (k->zArena is left NULL). */
static int heatCollect(HeatState *s, HeatKeys *k, fnt_heat **ppOut){
  fnt_heat *h = heatMalloc(sizeof(*h));
  uint32_t i;
  size_t n = 0;
  if( h==0 ) return FNT_E_NOMEM;
  memset(h, 0, sizeof(*h));
  for(i=0; i<s->nKey; i++) n += s->aCalls[i]!=0;
  if( n ){
    h->aRow = heatMalloc(n*sizeof(fnt_heat_row));
    if( h->aRow==0 ){
      heatFree(h);
      return FNT_E_NOMEM;
    }
  }
  for(i=0; i<s->nKey; i++){
    fnt_heat_row *r;
    if( s->aCalls[i]==0 ) continue;
    r = &h->aRow[h->nRow++];
    r->key = k->zArena + k->aOff[i];
    r->inclusive_ns = (int64_t)s->aIncl[i];
    r->self_ns = (int64_t)s->aSelf[i];
    r->calls = (int64_t)s->aCalls[i];
  }
  h->zArena = k->zArena;
  k->zArena = 0;
  *ppOut = h;
  return FNT_OK;
}

/* ------------------------------------------------------------------------
** The scan.
*/

/* Events handed to the replay at a time: small enough to stay in L1/L2. */
#define HEAT_BATCH 1024

/* A segment function index's key id, valid while aEpoch[i]==epoch: a map
** is recycled for another function table by moving its epoch on, without
** clearing it. */
typedef struct HeatFnMap {
  uint32_t *aKey;
  uint32_t *aEpoch;
  uint32_t nAlloc;
  uint32_t epoch;
  uint64_t generation;
  uint64_t lastUse;
} HeatFnMap;

/* An ordered scan merges the segments of a run's chunks, so the function
** table may alternate between a few segments where chunks' seq_no ranges
** interleave: keep the maps of the last few tables instead of one. */
#define HEAT_NMAP 4
typedef struct HeatFnMaps {
  HeatFnMap a[HEAT_NMAP];
  HeatFnMap *pCur;
  uint64_t generation;   /* pCur's, cached for the per-row test */
  uint64_t clock;
} HeatFnMaps;

static void heatFnMapsClear(HeatFnMaps *p){
  int i;
  for(i=0; i<HEAT_NMAP; i++){
    heatFree(p->a[i].aKey);
    heatFree(p->a[i].aEpoch);
  }
  memset(p, 0, sizeof(*p));
}

/* Makes p->pCur the map of function table `gen`. */
static void heatFnMapsSwitch(HeatFnMaps *p, uint64_t gen){
  HeatFnMap *m = &p->a[0];
  int i;
  for(i=0; i<HEAT_NMAP; i++){
    if( p->a[i].epoch && p->a[i].generation==gen ){ m = &p->a[i]; goto found; }
    if( p->a[i].lastUse<m->lastUse ) m = &p->a[i];
  }
  /* Recycle the least recently used map for a table not seen before. */
  m->generation = gen;
  if( ++m->epoch==0 ){
    /* 2^32 tables later: start the stamps over. */
    if( m->nAlloc ) memset(m->aEpoch, 0, (size_t)m->nAlloc*sizeof(uint32_t));
    m->epoch = 1;
  }
found:
  m->lastUse = ++p->clock;
  p->pCur = m;
  p->generation = gen;
}

static int heatFnMapReserve(HeatFnMap *m, uint32_t idx){
  uint32_t nNew = m->nAlloc ? m->nAlloc : 64;
  uint32_t *a;
  if( idx<m->nAlloc ) return FNT_OK;
  while( nNew<=idx ){
    if( nNew>UINT32_MAX/2 ){ nNew = UINT32_MAX; break; }
    nNew *= 2;
  }
  a = heatRealloc(m->aKey, (size_t)nNew*sizeof(uint32_t));
  if( a==0 ) return FNT_E_NOMEM;
  m->aKey = a;
  a = heatRealloc(m->aEpoch, (size_t)nNew*sizeof(uint32_t));
  if( a==0 ) return FNT_E_NOMEM;
  m->aEpoch = a;
  memset(m->aEpoch+m->nAlloc, 0, (size_t)(nNew-m->nAlloc)*sizeof(uint32_t));
  m->nAlloc = nNew;
  return FNT_OK;
}

/* The key id of function `idx` of the batch's function table, interned on
** first sight. */
static int heatFnKey(const fnt_event_batch *b, uint32_t idx, HeatFnMaps *p,
                     HeatKeys *k, HeatState *s, uint32_t *pKey){
  HeatFnMap *m;
  const fnt_function *f;
  int rc;
  if( p->pCur==0 || b->table_generation!=p->generation ){
    heatFnMapsSwitch(p, b->table_generation);
  }
  m = p->pCur;
  if( idx<m->nAlloc && m->aEpoch[idx]==m->epoch ){
    *pKey = m->aKey[idx];
    return FNT_OK;
  }
  rc = heatFnMapReserve(m, idx);
  if( rc ) return rc;
  f = &b->functions[idx];
  if( f->stable_id && f->stable_id[0] ){
    rc = heatKeyIntern(k, 0, f->stable_id, strlen(f->stable_id), pKey);
  }else{
    rc = heatKeyIntern(k, '?', f->symbol, strlen(f->symbol), pKey);
  }
  if( rc ) return rc;
  rc = heatReserveKeys(s, k->nKey);
  if( rc ) return rc;
  m->aKey[idx] = *pKey;
  m->aEpoch[idx] = m->epoch;
  return FNT_OK;
}

int fnt_heat_compute(fnt_snapshot *snap, const char *run_id, fnt_heat **out){
  HeatState s;
  HeatKeys k;
  HeatFnMaps m;
  HeatEvent *aBatch = 0;
  size_t nBatch = 0;
  fnt_predicate p;
  fnt_event_batch b;
  fnt_scan *sc = 0;
  fnt_store *st;
  uint32_t *aTix = 0, nTix = 0;
  int64_t seqPrev = -1;
  int rc;

  if( out ) *out = 0;
  if( snap==0 || out==0 ) return FNT_E_MISUSE;
  st = snap->st;
  if( run_id==0 ){
    return fnt_err(st, FNT_E_MISUSE, "fnt_heat_compute: run_id is NULL");
  }
  fnt_err_clear(st);
  heatStateInit(&s);
  memset(&k, 0, sizeof(k));
  memset(&m, 0, sizeof(m));

  aBatch = heatMalloc(HEAT_BATCH*sizeof(HeatEvent));
  if( aBatch==0 ) goto nomem;

  fnt_predicate_init(&p);
  p.run_ids = &run_id;
  p.n_run_ids = 1;
  p.ordered = 1;
  p.columns = (1ull<<FNT_EV_THREAD) | (1ull<<FNT_EV_SEQ_NO) | (1ull<<FNT_EV_T_NS)
            | (1ull<<FNT_EV_KIND);
  rc = fnt_scan_open(snap, FNT_TABLE_EVENTS, &p, &sc);
  if( rc ) goto done;

  /* Whole row groups at a time: the per-event work is array reads and the
  ** key lookup, a table indexed by the segment's function index. */
  while( (rc = fnt_scan_next_batch(sc, &b))==1 ){
    size_t i;
    /* The replay is only right in seq_no order: check what it relies on
    ** rather than return wrong figures. */
    if( (int64_t)b.seq_no[0]<=seqPrev ){
      rc = fnt_err(st, FNT_E_CORRUPT, "run '%s': the scan gave seq_no %lld "
                   "after %lld, not in seq_no order", run_id,
                   (long long)b.seq_no[0], (long long)seqPrev);
      goto done;
    }
    seqPrev = (int64_t)b.seq_no[b.n-1];
    /* The segment's thread dictionary, resolved once per batch: events
    ** then name their thread by index, with no lookup per event. */
    if( b.n_threads>nTix ){
      uint32_t *a = heatRealloc(aTix, (size_t)b.n_threads*sizeof(uint32_t));
      if( a==0 ) goto nomem;
      aTix = a;
      nTix = b.n_threads;
    }
    for(i=0; i<b.n_threads; i++){
      HeatThread *th = heatThread(&s, (uint32_t)b.thread_ids[i]);
      if( th==0 ) goto nomem;
      aTix[i] = (uint32_t)(th - s.aThread);
    }
    for(i=0; i<b.n; i++){
      HeatEvent *e = &aBatch[nBatch];
      rc = heatFnKey(&b, (uint32_t)b.function[i], &m, &k, &s, &e->key);
      if( rc ) goto nomem;
      e->kind = (int)b.kind[i];
      e->thread = aTix[b.thread[i]];
      e->t = (int64_t)b.t_ns[i];
      if( ++nBatch==HEAT_BATCH ){
        rc = heatReplay(&s, aBatch, nBatch);
        if( rc ) goto nomem;
        nBatch = 0;
      }
    }
  }
  if( rc<0 ) goto done;           /* the scan's error, its message set */
  rc = heatReplay(&s, aBatch, nBatch);
  if( rc ) goto nomem;
  heatFinish(&s);
  rc = heatCollect(&s, &k, out);
  if( rc ) goto nomem;
  goto done;

nomem:
  /* Every failure of the layers above is an allocation's. */
  rc = fnt_err(st, FNT_E_NOMEM, "run '%s': out of memory computing its heat "
               "(%u threads, %u functions)", run_id, s.nThread, k.nKey);
done:
  fnt_scan_close(sc);
  heatFree(aTix);
  heatFree(aBatch);
  heatFnMapsClear(&m);
  heatKeysClear(&k);
  heatStateClear(&s);
  return rc;
}
