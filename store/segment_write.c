/*
** segment_write.c -- encoding segment files.
**
** An events segment holds one chunk of one run, rows in seq_no order, cut
** into row groups of FNT_RG_ROWS.  repo, commit and run_id are constant and
** live once in the footer; threads and functions are dictionaries in the
** footer, so each row stores small indexes; symbol and stable_id both come
** from the row's function entry.  seq_no and t_ns are delta-encoded and
** bit-packed.  Each column chunk is then zstd-compressed when that helps.
*/
#include <stdlib.h>
#include <string.h>

#include <zstd.h>

#include "calls.h"
#include "segment.h"

#define FNT_ZSTD_LEVEL 1   /* filing speed first; deltas are already small */

static const char segMagic[8] = {'F','N','T','S','E','G','0','1'};

/* Appends the packed bit-width form of v[0..n): u8 width, packed bytes. */
static void encodeBitPacked(const uint64_t *v, size_t n, fnt_buf *raw){
  uint64_t maxv = 0;
  unsigned width;
  size_t i, sz;
  for(i=0; i<n; i++) if( v[i]>maxv ) maxv = v[i];
  width = fnt_bits_needed(maxv);
  fnt_put_u8(raw, (uint8_t)width);
  sz = fnt_bp_size(n, width);
  if( fnt_buf_reserve(raw, sz+8) ) return;
  fnt_bp_pack(raw->data + raw->len, v, n, width);
  raw->len += sz;
}

/* first value, min delta (both zigzag varints), then bit-packed
** (delta - min) for rows 1..n-1.  `tmp` has room for n values. */
static void encodeDelta(const uint64_t *v, size_t n, uint64_t *tmp, fnt_buf *raw){
  int64_t minDelta = 0;
  size_t i;
  fnt_put_varint(raw, fnt_zigzag((int64_t)(n ? v[0] : 0)));
  for(i=1; i<n; i++){
    int64_t d = (int64_t)(v[i] - v[i-1]);
    if( i==1 || d<minDelta ) minDelta = d;
  }
  fnt_put_varint(raw, fnt_zigzag(minDelta));
  for(i=1; i<n; i++){
    tmp[i-1] = (uint64_t)(int64_t)(v[i] - v[i-1]) - (uint64_t)minDelta;
  }
  encodeBitPacked(tmp, n ? n-1 : 0, raw);
}

/* Columns (by their place in a row group) whose chunks zstd did not
** shrink are stored raw for the next few row groups without trying: the
** varints of start, dur_ns, key and thread never shrink, and trying cost
** a fifth of filing.  A column that misses again waits longer. */
#define SEG_SLOTS 16
#define SEG_SKIP_MAX 32

/* A window, an instant or a timeline's bucket edge decodes a few rows of
** many small calls row groups (at most 1,024 rows, chunks of 0.3-1 KiB),
** where zstd's per-frame set-up (2.5-3.8 us a chunk) costs more than
** reading the bytes it saves: their chunks are kept raw unless zstd
** halves them (depth, and flags where they repeat, still do).  The
** stacks, functions and level of detail, read whole, take the usual rule. */
#define SEG_CALLS_SAVING 50

/* A file being written, and the zstd context its chunks share. */
typedef struct seg_file {
  fnt_buf *buf;
  ZSTD_CCtx *z;         /* NULL: one context per chunk (out of memory) */
  uint8_t misses[SEG_SLOTS], skip[SEG_SLOTS];
  unsigned min_saving;  /* percent zstd must save a row group's chunk */
} seg_file;

static seg_file segFile(fnt_buf *out){
  seg_file f;
  memset(&f, 0, sizeof(f));
  f.buf = out;
  f.z = ZSTD_createCCtx();
  f.min_saving = FNT_ZSTD_SAVING;
  return f;
}

/* Frees the file's context (not its bytes). */
static void segFileClear(seg_file *f){
  ZSTD_freeCCtx(f->z);
  f->z = 0;
}

/* Compresses raw[0..n) of column `slot` of f onto `out` with `z` (zstd
** unless the slot is skipping it), updating the slot's skip state.  The
** codec, or < 0. */
static int compressSlot(seg_file *f, ZSTD_CCtx *z, const uint8_t *raw,
                        size_t n, fnt_buf *out, int slot){
  uint8_t *misses = f->misses, *skip = f->skip;
  int codec, s = slot>=0 && slot<SEG_SLOTS ? slot : -1;
  if( s>=0 && skip[s] ){
    skip[s]--;
    return fnt_block_compress(z, raw, n, out, -1, 0);
  }
  codec = fnt_block_compress(z, raw, n, out, FNT_ZSTD_LEVEL,
                             s>=0 ? f->min_saving : FNT_ZSTD_SAVING);
  if( s>=0 && n>=FNT_ZSTD_MIN ){
    if( codec==FNT_CODEC_RAW ){
      if( misses[s]<SEG_SKIP_MAX ) misses[s]++;
      skip[s] = (uint8_t)(misses[s]*2 < SEG_SKIP_MAX ? misses[s]*2 : SEG_SKIP_MAX);
    }else{
      misses[s] = 0;
    }
  }
  return codec;
}

/* A chunk's descriptor: where it is stored, its sizes, codec, checksum. */
static void putChunkDesc(fnt_buf *meta, size_t start, size_t stored,
                         size_t raw_len, int codec, uint64_t sum){
  fnt_put_varint(meta, start);
  fnt_put_varint(meta, stored);
  fnt_put_varint(meta, raw_len);
  fnt_put_u8(meta, (uint8_t)codec);
  fnt_put_u64le(meta, sum);
}

static void putDescriptor(fnt_buf *meta, const fnt_buf *file, size_t start,
                          size_t raw_len, int codec){
  putChunkDesc(meta, start, file->len - start, raw_len, codec,
               fnt_hash(file->data + start, file->len - start));
}

/* Writes raw as a column chunk to `f`, and its descriptor to `meta`;
** `slot` is the column's place in its row group (-1: always try zstd). */
static void emitChunk(seg_file *f, fnt_buf *meta, const fnt_buf *raw, int slot){
  fnt_buf *file = f->buf;
  size_t start = file->len;
  int codec;
  if( raw->failed ){ file->failed = 1; return; }
  codec = compressSlot(f, f->z, raw->data, raw->len, file, slot);
  if( codec<0 ){ file->failed = 1; return; }
  putDescriptor(meta, file, start, raw->len, codec);
}

/* The footer (compressed when zstd saves f->min_saving percent: a calls
** file's stays raw, so that readers parse a row group's chunk descriptors
** from the file when they read the group), then the trailer: stored
** length, raw length, checksum of the stored bytes, magic.  Frees f's
** context. */
static int finishFile(seg_file *f, const fnt_buf *footer){
  fnt_buf *file = f->buf;
  size_t start, stored;
  uint64_t sum;
  int codec;
  start = file->len;
  codec = footer->failed ? -1 : fnt_block_compress(f->z, footer->data, footer->len, file, 3,
                                                       f->min_saving);
  segFileClear(f);
  if( codec<0 ) return FNT_E_NOMEM;
  stored = file->len - start;
  sum = fnt_hash(file->data + start, stored);
  fnt_put_u64le(file, stored);
  fnt_put_u64le(file, footer->len);
  fnt_put_u64le(file, sum);
  fnt_buf_append(file, segMagic, 8);
  return file->failed ? FNT_E_NOMEM : FNT_OK;
}

/* A thread's modelled call stack, for FUNC_STACK. */
typedef struct stack_model {
  uint32_t *frames;     /* nthreads * FNT_STACK_MODEL_DEPTH */
  uint32_t *depth;      /* per thread */
} stack_model;

/* FUNC_STACK: varint count of exit rows, one flag bit per exit row (1: its
** function is the top of its thread's modelled stack), then the function
** index of every other row, bit-packed.  Entries push, predicted exits pop
** one frame, other exits pop down to their function when it is on the
** stack.  In a well-nested trace every exit is predicted, so a row group
** stores function indexes for its entries only.  The model starts empty at
** each row group, so any group decodes on its own. */
static void encodeFuncStack(const uint64_t *fn, const uint64_t *thr,
                            const uint64_t *kind, size_t n, stack_model *m,
                            uint32_t nthreads, uint64_t *tmp, fnt_buf *raw){
  size_t i, nExits = 0, nExplicit = 0, flagBytes;
  memset(m->depth, 0, nthreads*sizeof(uint32_t));
  for(i=0; i<n; i++) nExits += kind[i]!=FNT_KIND_ENTRY;
  fnt_put_varint(raw, nExits);
  flagBytes = (nExits+7)/8;
  if( fnt_buf_reserve(raw, flagBytes) ) return;
  memset(raw->data + raw->len, 0, flagBytes);
  raw->len += flagBytes;
  nExits = 0;
  for(i=0; i<n; i++){
    uint32_t t = (uint32_t)thr[i], f = (uint32_t)fn[i];
    uint32_t *st = m->frames + (size_t)t*FNT_STACK_MODEL_DEPTH, *d = &m->depth[t];
    if( kind[i]==FNT_KIND_ENTRY ){
      tmp[nExplicit++] = f;
      if( *d<FNT_STACK_MODEL_DEPTH ) st[(*d)++] = f;
    }else if( *d>0 && st[*d-1]==f ){
      raw->data[raw->len - flagBytes + nExits/8] |= (uint8_t)(1u << (nExits%8));
      (*d)--;
      nExits++;
    }else{
      uint32_t k = *d;
      tmp[nExplicit++] = f;
      while( k>0 && st[k-1]!=f ) k--;
      if( k>0 ) *d = k-1;
      nExits++;
    }
  }
  encodeBitPacked(tmp, nExplicit, raw);
}

int fnt_distinct_u32(const uint32_t *a, size_t stride, size_t na,
                     const uint32_t *b, size_t nb, uint64_t **out,
                     uint32_t *nout){
  /* Open addressing over the few distinct ids a run has; slot value is
  ** id+1 so that 0 marks an empty slot.  Grows at half full. */
  size_t cap = 64, used = 0, i, k = 0;
  uint64_t *slots = fnt_calloc(cap, sizeof(uint64_t)), *list;
  *out = 0;
  *nout = 0;
  if( slots==0 ) return FNT_E_NOMEM;
  for(i=0; i<na+nb; i++){
    const uint32_t *p = i<na ? a : b;
    size_t j = i<na ? i : i-na;
    uint64_t key = (uint64_t)*(const uint32_t*)((const char*)p + j*stride) + 1;
    size_t h = (size_t)((key * 0x9E3779B97F4A7C15ull) >> 32) & (cap-1);
    while( slots[h] && slots[h]!=key ) h = (h+1) & (cap-1);
    if( slots[h] ) continue;
    slots[h] = key;
    if( ++used*2 > cap ){
      size_t ncap = cap*2, m;
      uint64_t *ns = fnt_calloc(ncap, sizeof(uint64_t));
      if( ns==0 ){ fnt_free(slots); return FNT_E_NOMEM; }
      for(m=0; m<cap; m++){
        if( slots[m] ){
          size_t g = (size_t)((slots[m] * 0x9E3779B97F4A7C15ull) >> 32) & (ncap-1);
          while( ns[g] ) g = (g+1) & (ncap-1);
          ns[g] = slots[m];
        }
      }
      fnt_free(slots);
      slots = ns;
      cap = ncap;
    }
  }
  list = fnt_malloc((used ? used : 1) * sizeof(uint64_t));
  if( list==0 ){ fnt_free(slots); return FNT_E_NOMEM; }
  for(i=0; i<cap; i++) if( slots[i] ) list[k++] = slots[i]-1;
  fnt_free(slots);
  qsort(list, k, sizeof(uint64_t), fnt_cmp_u64);
  *out = list;
  *nout = (uint32_t)k;
  return FNT_OK;
}

int fnt_distinct_threads(const fnt_event *ev, size_t n, uint64_t **out,
                         uint32_t *nout){
  return fnt_distinct_u32(n ? &ev->thread : 0, sizeof(fnt_event), n, 0, 0,
                          out, nout);
}

static uint32_t threadIndex(const uint64_t *dict, uint32_t n, uint64_t t){
  uint32_t lo = 0, hi = n;
  while( lo<hi ){
    uint32_t mid = lo + (hi-lo)/2;
    if( dict[mid]<t ) lo = mid+1; else hi = mid;
  }
  return lo;
}

int fnt_segment_write_events(const char *repo, const char *commit,
                             const char *run_id, const fnt_function *fns,
                             size_t n_fns, const fnt_event *ev, size_t n,
                             const uint32_t *remap, const uint64_t *threads,
                             uint32_t nthreads, fnt_buf *out,
                             fnt_seg_bounds *bounds){
  fnt_buf footer = {0}, raw = {0};
  uint64_t *cols = 0, *tmp, hash[2];
  size_t i, rg, entries, nrg = (n + FNT_RG_ROWS - 1) / FNT_RG_ROWS;
  stack_model model = {0, 0};
  int useStack = nthreads<=FNT_STACK_MODEL_THREADS;
  seg_file sf = segFile(out);
  int rc;

  memset(bounds, 0, sizeof(*bounds));
  cols = fnt_malloc(6 * FNT_RG_ROWS * sizeof(uint64_t));
  /* Most of the file is column chunks of a few bytes a row: reserve once
  ** rather than grow by copying. */
  if( cols==0 || fnt_buf_reserve(out, 64 + n*4 + n_fns*96) ){
    rc = FNT_E_NOMEM;
    goto done;
  }
  if( useStack ){
    model.frames = fnt_malloc((size_t)(nthreads ? nthreads : 1)*FNT_STACK_MODEL_DEPTH*sizeof(uint32_t));
    model.depth = fnt_malloc((size_t)(nthreads ? nthreads : 1)*sizeof(uint32_t));
    if( model.frames==0 || model.depth==0 ){ rc = FNT_E_NOMEM; goto done; }
  }

  fnt_buf_append(out, segMagic, 8);
  fnt_put_varint(&footer, FNT_FORMAT_VERSION);
  fnt_put_u8(&footer, FNT_TABLE_EVENTS);
  fnt_put_varint(&footer, n);
  /* Schema: field id, encoding (and the value of a constant). */
  fnt_put_varint(&footer, 9);
  fnt_put_varint(&footer, 1); fnt_put_u8(&footer, FNT_ENC_CONST); fnt_put_str(&footer, repo);
  fnt_put_varint(&footer, 2); fnt_put_u8(&footer, FNT_ENC_CONST); fnt_put_str(&footer, commit);
  fnt_put_varint(&footer, 3); fnt_put_u8(&footer, FNT_ENC_CONST); fnt_put_str(&footer, run_id);
  fnt_put_varint(&footer, 4); fnt_put_u8(&footer, FNT_ENC_THREAD_BP);
  fnt_put_varint(&footer, 5); fnt_put_u8(&footer, FNT_ENC_DELTA_BP);
  fnt_put_varint(&footer, 6); fnt_put_u8(&footer, FNT_ENC_DELTA_BP);
  fnt_put_varint(&footer, 7); fnt_put_u8(&footer, FNT_ENC_FUNC_REF);
  fnt_put_varint(&footer, 8); fnt_put_u8(&footer, FNT_ENC_KIND_BP);
  fnt_put_varint(&footer, 9);
  fnt_put_u8(&footer, useStack ? FNT_ENC_FUNC_STACK : FNT_ENC_FUNC_BP);
  /* Dictionaries. */
  fnt_put_varint(&footer, nthreads);
  for(i=0; i<nthreads; i++) fnt_put_varint(&footer, threads[i]);
  /* The function table, a chunk of its own (the file's first), named in
  ** the footer by its count and hash: a reader that holds a table of that
  ** hash from another file of the run shares it and reads no byte of it. */
  fnt_put_varint(&raw, n_fns);
  entries = raw.len;
  for(i=0; i<n_fns; i++){
    const char *sid = fns[i].stable_id && fns[i].stable_id[0] ? fns[i].stable_id : 0;
    fnt_put_str(&raw, fns[i].symbol ? fns[i].symbol : "");
    fnt_put_str(&raw, sid);
    fnt_put_u8(&raw, fns[i].local ? 1 : 0);
  }
  if( raw.failed ) memset(hash, 0, sizeof(hash));      /* emitChunk fails */
  else fnt_hash128(raw.data + entries, raw.len - entries, hash);
  fnt_put_varint(&footer, n_fns);
  emitChunk(&sf, &footer, &raw, -1);
  fnt_put_u64le(&footer, hash[0]);
  fnt_put_u64le(&footer, hash[1]);
  /* Row groups: chunks in schema order of the columns that have one:
  ** thread, seq_no, t_ns, kind, symbol. */
  fnt_put_varint(&footer, nrg);
  tmp = cols + 5*FNT_RG_ROWS;
  for(rg=0; rg<nrg; rg++){
    size_t first = rg*FNT_RG_ROWS, m = n-first < FNT_RG_ROWS ? n-first : FNT_RG_ROWS;
    uint64_t *thr = cols, *seq = cols + FNT_RG_ROWS, *t = cols + 2*FNT_RG_ROWS;
    uint64_t *kind = cols + 3*FNT_RG_ROWS, *fn = cols + 4*FNT_RG_ROWS;
    int64_t tmin = INT64_MAX, tmax = 0;
    for(i=0; i<m; i++){
      const fnt_event *e = &ev[first+i];
      thr[i] = threadIndex(threads, nthreads, e->thread);
      seq[i] = e->seq_no;
      t[i] = e->t_ns;
      kind[i] = e->kind;
      fn[i] = remap[e->function];
      if( (int64_t)e->t_ns<tmin ) tmin = (int64_t)e->t_ns;
      if( (int64_t)e->t_ns>tmax ) tmax = (int64_t)e->t_ns;
    }
    fnt_put_varint(&footer, m);
    fnt_put_varint(&footer, fnt_zigzag((int64_t)seq[0]));
    fnt_put_varint(&footer, fnt_zigzag((int64_t)seq[m-1]));
    fnt_put_varint(&footer, fnt_zigzag(tmin));
    fnt_put_varint(&footer, fnt_zigzag(tmax));
    if( rg==0 ){
      bounds->seq_min = (int64_t)seq[0];
      bounds->t_min = tmin;
      bounds->t_max = tmax;
    }
    bounds->seq_max = (int64_t)seq[m-1];
    if( tmin<bounds->t_min ) bounds->t_min = tmin;
    if( tmax>bounds->t_max ) bounds->t_max = tmax;

    raw.len = 0; encodeBitPacked(thr, m, &raw);    emitChunk(&sf, &footer, &raw, 0);
    raw.len = 0; encodeDelta(seq, m, tmp, &raw);   emitChunk(&sf, &footer, &raw, 1);
    raw.len = 0; encodeDelta(t, m, tmp, &raw);     emitChunk(&sf, &footer, &raw, 2);
    raw.len = 0; encodeBitPacked(kind, m, &raw);   emitChunk(&sf, &footer, &raw, 3);
    raw.len = 0;
    if( useStack ) encodeFuncStack(fn, thr, kind, m, &model, nthreads, tmp, &raw);
    else encodeBitPacked(fn, m, &raw);
    emitChunk(&sf, &footer, &raw, 4);
  }
  rc = finishFile(&sf, &footer);
done:
  segFileClear(&sf);
  fnt_buf_free(&footer);
  fnt_buf_free(&raw);
  fnt_free(cols);
  fnt_free(model.frames);
  fnt_free(model.depth);
  return rc;
}

int fnt_segment_write_rows(fnt_table t, const fnt_value *vals, size_t nrows,
                           fnt_buf *out){
  fnt_buf footer = {0}, raw = {0};
  const fnt_colinfo *info = fnt_table_cols(t);
  int ncol = fnt_table_ncol(t), c;
  size_t r, first;
  seg_file sf = segFile(out);
  int rc;

  fnt_buf_append(out, segMagic, 8);
  fnt_put_varint(&footer, FNT_FORMAT_VERSION);
  fnt_put_u8(&footer, (uint8_t)t);
  fnt_put_varint(&footer, nrows);
  fnt_put_varint(&footer, (uint64_t)ncol);
  for(c=0; c<ncol; c++){
    fnt_put_varint(&footer, info[c].field_id);
    fnt_put_u8(&footer, info[c].is_text ? FNT_ENC_PLAIN_TEXT : FNT_ENC_PLAIN_INT);
  }
  fnt_put_varint(&footer, 0);    /* no thread dictionary */
  fnt_put_varint(&footer, 0);    /* no function table */
  /* Row groups of at most FNT_RG_ROWS rows, as readers require. */
  fnt_put_varint(&footer, (nrows + FNT_RG_ROWS - 1) / FNT_RG_ROWS);
  for(first=0; first<nrows; first+=FNT_RG_ROWS){
    size_t end = nrows-first < FNT_RG_ROWS ? nrows : first+FNT_RG_ROWS;
    fnt_put_varint(&footer, end-first);
    for(c=0; c<4; c++) fnt_put_varint(&footer, 0);   /* no seq/t bounds */
    for(c=0; c<ncol; c++){
      raw.len = 0;
      for(r=first; r<end; r++){
        const fnt_value *v = &vals[r*(size_t)ncol + (size_t)c];
        if( info[c].is_text ) fnt_put_str(&raw, v->s);
        else fnt_put_varint(&raw, fnt_zigzag(v->i));
      }
      emitChunk(&sf, &footer, &raw, c);
    }
  }
  rc = finishFile(&sf, &footer);
  fnt_buf_free(&footer);
  fnt_buf_free(&raw);
  return rc;
}

/* ------------------------------------------------------------------ calls */

/* Zigzag varints of each value's delta from the one before (delta 1),
** or of each value (0); offs[k] gets the byte offset of row
** k*FNT_LOD_ROWS, where the level-of-detail chunk says a block begins. */
static void encodeVarints(const uint64_t *v, size_t n, int delta,
                          uint64_t *offs, fnt_buf *raw){
  uint64_t prev = 0;
  uint8_t *p;
  size_t i;
  /* Room for the longest, once: a cursor in a register, where a byte
  ** written through raw->data could alias raw->len. */
  if( fnt_buf_reserve(raw, n*10) ) return;       /* n: a group's rows */
  p = raw->data + raw->len;
  for(i=0; i<n; i++){
    if( i%FNT_LOD_ROWS==0 ) offs[i/FNT_LOD_ROWS] = (uint64_t)(p - raw->data);
    p += fnt_varint_put(p, fnt_zigzag((int64_t)(v[i] - prev)));
    if( delta ) prev = v[i];
  }
  raw->len = (size_t)(p - raw->data);
}

#define SEG_GATHER_AHEAD 16
#if defined(__GNUC__) || defined(__clang__)
# define SEG_PREFETCH(p) __builtin_prefetch(p)
#else
# define SEG_PREFETCH(p) ((void)0)
#endif

/* The functions a calls file uses, numbered densely in the order of their
** first calls: idx[fnt_fntab id] (UINT32_MAX: unused), used[number]. */
typedef struct fn_numbering { uint32_t *idx, *used, n; } fn_numbering;

/* A function and its first call, to number the functions by. */
typedef struct fn_first { int64_t call_id; uint32_t fn; } fn_first;

static int cmpFirst(const void *a, const void *b){
  const fn_first *x = a, *y = b;
  return x->call_id<y->call_id ? -1 : x->call_id>y->call_id;
}

/* Renumbers fns->used (idx follows) in the order of firstCall[fn]. */
static int numberByFirstCall(fn_numbering *fns, const int64_t *firstCall){
  fn_first *f = fnt_malloc(((size_t)fns->n+1)*sizeof(fn_first));
  uint32_t i;
  if( f==0 ) return FNT_E_NOMEM;
  for(i=0; i<fns->n; i++){ f[i].fn = fns->used[i]; f[i].call_id = firstCall[f[i].fn]; }
  qsort(f, fns->n, sizeof(fn_first), cmpFirst);
  for(i=0; i<fns->n; i++){ fns->used[i] = f[i].fn; fns->idx[f[i].fn] = i; }
  fnt_free(f);
  return FNT_OK;
}

/* One pass over a calls file's rows in the replay's order: the functions
** they use (numbered by their first calls), each one's aggregates of its
** closed calls (*aggOut, by fntab id) and the file's bounds. */
static int sumCalls(const fnt_callvec *closed, const fnt_callvec *open,
                    const fnt_fntab *tab, fn_numbering *fns,
                    fnt_calls_agg **aggOut, fnt_calls_bounds *bounds){
  fnt_calls_agg *agg;
  int64_t *firstCall;
  size_t k, nall = closed->n + open->n;
  int rc;
  fns->idx = fnt_malloc(((size_t)tab->nfn+1)*sizeof(uint32_t));
  fns->used = fnt_malloc(((size_t)tab->nfn+1)*sizeof(uint32_t));
  agg = *aggOut = fnt_calloc((size_t)tab->nfn+1, sizeof(fnt_calls_agg));
  firstCall = fnt_malloc(((size_t)tab->nfn+1)*sizeof(int64_t));
  if( fns->idx==0 || fns->used==0 || agg==0 || firstCall==0 ){
    fnt_free(firstCall);
    return FNT_E_NOMEM;
  }
  memset(fns->idx, 0xff, ((size_t)tab->nfn+1)*sizeof(uint32_t));
  for(k=0; k<nall; k++){
    const fnt_callrec *c = k<closed->n ? &closed->a[k] : &open->a[k-closed->n];
    if( fns->idx[c->fn]==UINT32_MAX ){
      fns->idx[c->fn] = fns->n;
      fns->used[fns->n++] = c->fn;
      firstCall[c->fn] = c->call_id;
    }else if( c->call_id<firstCall[c->fn] ){
      firstCall[c->fn] = c->call_id;
    }
    if( k<closed->n ){
      fnt_calls_agg *a = &agg[c->fn];
      a->calls++;
      a->self = (int64_t)((uint64_t)a->self + (uint64_t)c->self);
      if( c->outermost ) a->incl = (int64_t)((uint64_t)a->incl + ((uint64_t)c->end - (uint64_t)c->start));
    }
    if( c->start<bounds->t_min ) bounds->t_min = c->start;
    if( c->end>bounds->t_max ) bounds->t_max = c->end;
    if( c->call_id<bounds->call_min ) bounds->call_min = c->call_id;
    if( c->call_id>bounds->call_max ) bounds->call_max = c->call_id;
  }
  if( nall==0 ){ bounds->t_min = bounds->t_max = 0; bounds->call_min = bounds->call_max = 0; }
  /* Numbered by their first calls: a key's first function in the file
  ** names it (fnt_heat: the symbol of the key's first call). */
  rc = numberByFirstCall(fns, firstCall);
  fnt_free(firstCall);
  return rc;
}

/* ---- The row groups, encoded in two parts, each on a thread of its own.
** Gathering a group's rows out of the replay's order and encoding them
** was a third of deriving a chunk's calls, on one core while the other
** had finished the events segment.  The groups are cut first
** (calls_span), then split where half the rows lie; a part writes its
** chunks and records each one's place, and the footer describes both
** parts' groups in order once the second part's bytes follow the
** first's.  The split depends on the rows only, so the bytes are the
** same with or without threads. */
#define CALLS_NCOL 9

/* A row group: m rows, v[ord[0..m)], one depth. */
typedef struct calls_span { const fnt_callrec *v; const uint32_t *ord; size_t m; } calls_span;

/* A column chunk written by a part: where in the part's bytes. */
typedef struct chunk_rec { size_t off, len, raw_len; uint64_t sum; int codec; } chunk_rec;

/* A row group's footer entry before its chunks' places are final. */
typedef struct group_rec {
  int64_t cmin, cmax, tmin, tmax;
  size_t m;
  chunk_rec c[CALLS_NCOL];
} group_rec;

typedef struct calls_part {
  const calls_span *span;       /* its row groups */
  size_t nspan;
  const fn_numbering *fns;
  const uint64_t *threads;
  uint32_t nthreads;
  seg_file f;                   /* f.buf: where its chunks go */
  group_rec *g;                 /* nspan */
  fnt_buf extra;                /* the groups' bounds (fnt_calls_rg) */
  fnt_lod_writer lod;
  uint64_t *cols;               /* CALLS_NCOL columns of a group */
  fnt_buf raw;                  /* a chunk being encoded */
} calls_part;

/* Compresses raw as column `slot` of a part's group onto its bytes. */
static void partChunk(calls_part *p, chunk_rec *r, int slot){
  fnt_buf *file = p->f.buf;
  memset(r, 0, sizeof(*r));
  r->off = file->len;
  r->raw_len = p->raw.len;
  r->codec = p->raw.failed || file->failed ? -1
           : compressSlot(&p->f, p->f.z, p->raw.data, p->raw.len, file, slot);
  if( r->codec<0 || file->failed ){
    file->failed = 1;             /* the part fails: no descriptor is used */
    r->codec = 0;
    return;
  }
  r->len = file->len - r->off;
  r->sum = fnt_hash(file->data + r->off, r->len);
}

/* The rows of span s into the part's columns, chunks, bounds and level of
** detail. */
static void writeCallsGroup(calls_part *p, const calls_span *s, group_rec *g){
  uint64_t offs[4][FNT_CALLS_RG_ROWS/FNT_LOD_ROWS+1];   /* start, call_id, dur, unused */
  const fnt_callrec *v = s->v;
  const uint32_t *ord = s->ord;
  const uint32_t *fnIdx = p->fns->idx;
  fnt_calls_rg crg;
  fnt_lod_rows lr;
  fnt_buf *raw = &p->raw, *extra = &p->extra;
  uint64_t *cols = p->cols;
  uint64_t *thr = cols, *cid = cols + FNT_CALLS_RG_ROWS, *par = cols + 2*FNT_CALLS_RG_ROWS;
  uint64_t *dep = cols + 3*FNT_CALLS_RG_ROWS, *sta = cols + 4*FNT_CALLS_RG_ROWS;
  uint64_t *dur = cols + 5*FNT_CALLS_RG_ROWS, *kid = cols + 6*FNT_CALLS_RG_ROWS;
  uint64_t *fn = cols + 7*FNT_CALLS_RG_ROWS, *flg = cols + 8*FNT_CALLS_RG_ROWS;
  size_t i, m = s->m;
  g->m = m;
  g->cmin = g->tmin = INT64_MAX;
  g->cmax = g->tmax = INT64_MIN;
  crg.depth = v[ord[0]].depth;
  crg.parent_min = INT64_MAX; crg.parent_max = INT64_MIN; crg.dur_max = INT64_MIN;
  crg.thread_min = UINT32_MAX; crg.thread_max = 0;
  for(i=0; i<m; i++){
    const fnt_callrec *c = &v[ord[i]];
    int64_t d = (int64_t)((uint64_t)c->end - (uint64_t)c->start);
    /* The rows are gathered out of the replay's order: a cache miss
    ** each unless fetched ahead. */
    if( i+SEG_GATHER_AHEAD<m ) SEG_PREFETCH(&v[ord[i+SEG_GATHER_AHEAD]]);
    thr[i] = threadIndex(p->threads, p->nthreads, c->thread);
    cid[i] = (uint64_t)c->call_id;
    par[i] = (uint64_t)c->parent_id;
    dep[i] = c->depth;
    sta[i] = (uint64_t)c->start;
    dur[i] = (uint64_t)d;
    kid[i] = (uint64_t)d - (uint64_t)c->self;   /* 0 for every leaf */
    fn[i] = fnIdx[c->fn];
    flg[i] = (uint64_t)c->ended_by | (uint64_t)c->outermost<<2;
    if( c->call_id<g->cmin ) g->cmin = c->call_id;
    if( c->call_id>g->cmax ) g->cmax = c->call_id;
    if( c->start<g->tmin ) g->tmin = c->start;
    if( c->end>g->tmax ) g->tmax = c->end;
    if( c->parent_id<crg.parent_min ) crg.parent_min = c->parent_id;
    if( c->parent_id>crg.parent_max ) crg.parent_max = c->parent_id;
    if( d>crg.dur_max ) crg.dur_max = d;
    if( thr[i]<crg.thread_min ) crg.thread_min = (uint32_t)thr[i];
    if( thr[i]>crg.thread_max ) crg.thread_max = (uint32_t)thr[i];
  }
  raw->len = 0; encodeBitPacked(thr, m, raw);          partChunk(p, &g->c[0], 0);
  raw->len = 0; encodeVarints(cid, m, 1, offs[1], raw); partChunk(p, &g->c[1], 1);
  raw->len = 0; encodeVarints(par, m, 1, offs[3], raw); partChunk(p, &g->c[2], 2);
  raw->len = 0; encodeVarints(dep, m, 1, offs[3], raw); partChunk(p, &g->c[3], 3);
  raw->len = 0; encodeVarints(sta, m, 1, offs[0], raw); partChunk(p, &g->c[4], 4);
  raw->len = 0; encodeVarints(dur, m, 0, offs[2], raw); partChunk(p, &g->c[5], 5);
  raw->len = 0; encodeVarints(kid, m, 0, offs[3], raw); partChunk(p, &g->c[6], 6);
  raw->len = 0; encodeBitPacked(fn, m, raw);           partChunk(p, &g->c[7], 7);
  raw->len = 0; encodeBitPacked(flg, m, raw);          partChunk(p, &g->c[8], 8);
  lr.thr = thr; lr.cid = cid; lr.sta = sta; lr.dur = dur; lr.fn = fn;
  lr.off_sta = offs[0]; lr.off_cid = offs[1]; lr.off_dur = offs[2];
  fnt_lod_write_group(&p->lod, &lr, m);
  fnt_put_varint(extra, (uint64_t)crg.depth);
  fnt_put_varint(extra, crg.thread_min);
  fnt_put_varint(extra, crg.thread_max);
  fnt_put_varint(extra, fnt_zigzag(crg.parent_min));
  fnt_put_varint(extra, fnt_zigzag(crg.parent_max));
  fnt_put_varint(extra, fnt_zigzag(crg.dur_max));
}

/* A part's groups, in order (a worker's job). */
static int writePart(void *arg){
  calls_part *p = arg;
  size_t i;
  if( fnt_lod_writer_init(&p->lod, p->nthreads) ) return FNT_E_NOMEM;
  if( p->nspan==0 ) return FNT_OK;
  p->f.z = ZSTD_createCCtx();
  p->g = fnt_malloc(p->nspan*sizeof(group_rec));
  p->cols = fnt_malloc(CALLS_NCOL*(size_t)FNT_CALLS_RG_ROWS*sizeof(uint64_t));
  if( p->g==0 || p->cols==0 ) return FNT_E_NOMEM;
  for(i=0; i<p->nspan; i++) writeCallsGroup(p, &p->span[i], &p->g[i]);
  return p->f.buf->failed || p->extra.failed ? FNT_E_NOMEM : FNT_OK;
}

static void partClear(calls_part *p){
  segFileClear(&p->f);
  fnt_free(p->g);
  fnt_free(p->cols);
  fnt_buf_free(&p->extra);
  fnt_buf_free(&p->raw);
  fnt_lod_writer_clear(&p->lod);
}

/* The footer entries of a part's groups, its bytes at `base` in the file. */
static void putGroups(fnt_buf *meta, const calls_part *p, size_t base){
  size_t i, k;
  for(i=0; i<p->nspan; i++){
    const group_rec *g = &p->g[i];
    fnt_put_varint(meta, g->m);
    fnt_put_varint(meta, fnt_zigzag(g->cmin));
    fnt_put_varint(meta, fnt_zigzag(g->cmax));
    fnt_put_varint(meta, fnt_zigzag(g->tmin));
    fnt_put_varint(meta, fnt_zigzag(g->tmax));
    for(k=0; k<CALLS_NCOL; k++){
      const chunk_rec *c = &g->c[k];
      putChunkDesc(meta, base + c->off, c->len, c->raw_len, c->codec, c->sum);
    }
  }
}

/* Where the row group starting at ord[i] ends: at most FNT_CALLS_RG_ROWS
** rows of one depth.  The rows come by depth, so the end is bisected. */
static size_t groupEnd(const fnt_callrec *v, const uint32_t *ord, size_t i, size_t n){
  uint32_t d = v[ord[i]].depth;
  size_t lo = i+1, hi = n-i>FNT_CALLS_RG_ROWS ? i+FNT_CALLS_RG_ROWS : n;
  if( v[ord[hi-1]].depth==d ) return hi;
  while( lo<hi ){
    size_t mid = lo + (hi-lo)/2;
    if( v[ord[mid]].depth==d ) lo = mid+1; else hi = mid;
  }
  return lo;
}

/* Appends the row groups of v[ord[0..n)] to *spans (grown).  @return
** FNT_OK or FNT_E_NOMEM. */
static int cutGroups(const fnt_callrec *v, const uint32_t *ord, size_t n,
                     calls_span **spans, size_t *ns, size_t *cap){
  size_t i = 0;
  while( i<n ){
    size_t e = groupEnd(v, ord, i, n);
    calls_span *s;
    if( *ns==*cap ){
      size_t c = *cap ? *cap*2 : 64;
      calls_span *a = fnt_realloc(*spans, c*sizeof(calls_span));
      if( a==0 ) return FNT_E_NOMEM;
      *spans = a;
      *cap = c;
    }
    s = &(*spans)[(*ns)++];
    s->v = v; s->ord = ord + i; s->m = e - i;
    i = e;
  }
  return FNT_OK;
}

/* Parts smaller than this are written on the caller's thread. */
#define CALLS_PART_THREAD_ROWS (4*FNT_CALLS_RG_ROWS)

int fnt_segment_write_calls(const char *repo, const char *commit,
                            const char *run_id, const fnt_fntab *tab,
                            fnt_callvec *closed, fnt_callvec *open,
                            fnt_stacktab *stackTab, int two_threads,
                            fnt_buf *out, fnt_calls_bounds *bounds){
  fnt_buf footer = {0}, groups = {0}, extra = {0}, raw = {0}, body = {0};
  fnt_buf stacks = {0}, stacksDesc = {0}, funcs = {0}, funcsDesc = {0};
  fnt_buf lodDesc = {0};
  fnt_worker w;
  calls_part part[2];
  calls_span *spans = 0;
  size_t nspan = 0, capspan = 0, split, half, base;
  uint64_t *threads = 0;
  uint32_t nthreads = 0, nrg, nclosed, i;
  fn_numbering fns = {0, 0, 0};
  uint32_t *ordClosed = 0, *ordOpen = 0;
  fnt_calls_agg *agg = 0;
  size_t nall = closed->n + open->n;
  seg_file sf = segFile(out);
  int rc = FNT_E_NOMEM, rc0, rc1;

  memset(part, 0, sizeof(part));
  memset(&w, 0, sizeof(w));
  sf.min_saving = SEG_CALLS_SAVING;
  bounds->t_min = INT64_MAX; bounds->t_max = INT64_MIN;
  bounds->call_min = INT64_MAX; bounds->call_max = INT64_MIN;

  /* The thread dictionary. */
  if( fnt_distinct_u32(closed->n ? &closed->a->thread : 0, sizeof(fnt_callrec),
                       closed->n, open->n ? &open->a->thread : 0, open->n,
                       &threads, &nthreads) ) goto done;

  /* The rows' functions and sums; their order (calls_order.c).  (The sums
  ** on a worker beside the ordering were slower: the two passes over the
  ** rows at once.) */
  if( sumCalls(closed, open, tab, &fns, &agg, bounds) ) goto done;
  if( fnt_calls_order(closed, threads, nthreads, &ordClosed) ) goto done;
  if( fnt_calls_order(open, threads, nthreads, &ordOpen) ) goto done;

  /* The row groups: the closed rows', then the open rows'; two parts. */
  if( cutGroups(closed->a, ordClosed, closed->n, &spans, &nspan, &capspan) ) goto done;
  nclosed = (uint32_t)nspan;
  if( cutGroups(open->a, ordOpen, open->n, &spans, &nspan, &capspan) ) goto done;
  nrg = (uint32_t)nspan;
  for(split=0, half=0; split<nspan && half*2<nall; split++) half += spans[split].m;
  for(i=0; i<2; i++){
    calls_part *p = &part[i];
    p->span = spans + (i ? split : 0);
    p->nspan = i ? nspan - split : split;
    p->fns = &fns;
    p->threads = threads;
    p->nthreads = nthreads;
    p->f.min_saving = SEG_CALLS_SAVING;
  }
  /* The file in one block sized for it (13 bytes a call on the bench's
  ** runs, 16 allowed): doubled from 256 bytes, each step copied the file
  ** so far into pages touched for the first time.  The first part writes
  ** there, the second beside it. */
  if( out->cap==0 && fnt_buf_reserve(out, nall*16 + 65536) ) goto done;
  if( fnt_buf_reserve(&body, (nall - half)*16 + 4096) ) goto done;
  fnt_buf_append(out, segMagic, 8);
  part[0].f.buf = out;
  part[1].f.buf = &body;
  fnt_worker_start(&w, two_threads && nall-half>=CALLS_PART_THREAD_ROWS, writePart, &part[1]);
  rc0 = writePart(&part[0]);
  rc1 = fnt_worker_join(&w);
  if( rc0 || rc1 ) goto done;
  base = out->len;
  fnt_buf_append(out, body.data, body.len);
  putGroups(&groups, &part[0], 0);
  putGroups(&groups, &part[1], base);
  fnt_buf_append(&extra, part[0].extra.data, part[0].extra.len);
  fnt_buf_append(&extra, part[1].extra.data, part[1].extra.len);
  fnt_lod_writer_append(&part[0].lod, &part[1].lod);

  /* The stacks of the calls (stacks.c), a chunk after the row groups. */
  if( fnt_calls_stacks_write(closed, stackTab, nall, fns.idx, &stacks) ) goto done;
  if( stacks.len ) emitChunk(&sf, &stacksDesc, &stacks, -1);
  /* The function table, a chunk of its own: readers of the aggregates
  ** (fnt_heat) go by the key hashes in the footer and never load it. */
  fnt_put_varint(&funcs, fns.n);
  for(i=0; i<fns.n; i++){
    const fnt_function *f = &tab->fn[fns.used[i]];
    fnt_put_str(&funcs, f->symbol);
    fnt_put_str(&funcs, f->stable_id);
    fnt_put_u8(&funcs, 0);
  }
  emitChunk(&sf, &funcsDesc, &funcs, -1);
  /* The level of detail (lod.c), read by fnt_timeline only. */
  fnt_lod_finish(&part[0].lod, &raw);
  emitChunk(&sf, &lodDesc, &raw, -1);

  fnt_put_varint(&footer, FNT_FORMAT_VERSION);
  fnt_put_u8(&footer, FNT_TABLE_CALLS);
  fnt_put_varint(&footer, nall);
  /* Schema (FORMAT.md, "Calls segments"): chunks in this order: thread,
  ** call_id, parent_id, depth, start_ns, dur_ns, self_ns, key, ended_by. */
  fnt_put_varint(&footer, 16);
  fnt_put_varint(&footer, 1); fnt_put_u8(&footer, FNT_ENC_CONST); fnt_put_str(&footer, repo);
  fnt_put_varint(&footer, 2); fnt_put_u8(&footer, FNT_ENC_CONST); fnt_put_str(&footer, commit);
  fnt_put_varint(&footer, 3); fnt_put_u8(&footer, FNT_ENC_CONST); fnt_put_str(&footer, run_id);
  fnt_put_varint(&footer, 4); fnt_put_u8(&footer, FNT_ENC_THREAD_BP);
  fnt_put_varint(&footer, 5); fnt_put_u8(&footer, FNT_ENC_DELTA_VARINT);
  fnt_put_varint(&footer, 6); fnt_put_u8(&footer, FNT_ENC_DELTA_VARINT);
  fnt_put_varint(&footer, 7); fnt_put_u8(&footer, FNT_ENC_DELTA_VARINT);
  fnt_put_varint(&footer, 8); fnt_put_u8(&footer, FNT_ENC_DELTA_VARINT);
  fnt_put_varint(&footer, 9); fnt_put_u8(&footer, FNT_ENC_DERIVED);
  fnt_put_varint(&footer, 10); fnt_put_u8(&footer, FNT_ENC_PLAIN_INT);
  fnt_put_varint(&footer, 11); fnt_put_u8(&footer, FNT_ENC_PLAIN_INT);
  fnt_put_varint(&footer, 12); fnt_put_u8(&footer, FNT_ENC_FUNC_BP);
  fnt_put_varint(&footer, 13); fnt_put_u8(&footer, FNT_ENC_FUNC_REF);
  fnt_put_varint(&footer, 14); fnt_put_u8(&footer, FNT_ENC_FUNC_REF);
  fnt_put_varint(&footer, 15); fnt_put_u8(&footer, FNT_ENC_KIND_BP);
  fnt_put_varint(&footer, 16); fnt_put_u8(&footer, FNT_ENC_DERIVED);
  fnt_put_varint(&footer, nthreads);
  for(i=0; i<nthreads; i++) fnt_put_varint(&footer, threads[i]);
  fnt_put_varint(&footer, fns.n);
  fnt_buf_append(&footer, funcsDesc.data, funcsDesc.len);
  for(i=0; i<fns.n; i++){
    const char *key = tab->keys[tab->key[fns.used[i]]];
    uint64_t h[2];
    fnt_hash128(key, strlen(key), h);
    fnt_put_u64le(&footer, h[0]);
    fnt_put_u64le(&footer, h[1]);
  }
  fnt_put_varint(&footer, nrg);
  fnt_buf_append(&footer, groups.data, groups.len);
  /* The calls section: closed row groups, per-group bounds, aggregates. */
  fnt_put_varint(&footer, nclosed);
  fnt_buf_append(&footer, extra.data, extra.len);
  for(i=0; i<fns.n; i++){
    const fnt_calls_agg *a = &agg[fns.used[i]];
    fnt_put_varint(&footer, (uint64_t)a->calls);
    fnt_put_varint(&footer, fnt_zigzag(a->incl));
    fnt_put_varint(&footer, fnt_zigzag(a->self));
  }
  if( stacks.len ){                 /* optional: the stacks chunk's place */
    fnt_put_varint(&footer, FNT_CALLS_SECTION_STACKS);
    fnt_put_varint(&footer, stacksDesc.len);
    fnt_buf_append(&footer, stacksDesc.data, stacksDesc.len);
  }
  fnt_put_varint(&footer, FNT_CALLS_SECTION_LOD_SUMMED);
  fnt_put_varint(&footer, lodDesc.len);
  fnt_buf_append(&footer, lodDesc.data, lodDesc.len);
  if( groups.failed || extra.failed || stacksDesc.failed || funcsDesc.failed
   || lodDesc.failed ) goto done;
  rc = finishFile(&sf, &footer);
done:
  segFileClear(&sf);
  fnt_buf_free(&footer);
  fnt_buf_free(&groups);
  fnt_buf_free(&extra);
  fnt_buf_free(&raw);
  fnt_buf_free(&stacks);
  fnt_buf_free(&stacksDesc);
  fnt_buf_free(&funcs);
  fnt_buf_free(&funcsDesc);
  fnt_buf_free(&lodDesc);
  fnt_buf_free(&body);
  partClear(&part[0]);
  partClear(&part[1]);
  fnt_free(spans);
  fnt_free(threads);
  fnt_free(fns.idx);
  fnt_free(fns.used);
  fnt_free(ordClosed);
  fnt_free(ordOpen);
  fnt_free(agg);
  return rc;
}
