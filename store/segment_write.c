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

/* With two threads (a calls file), column chunks are held raw and
** compressed in batches of about SEG_BATCH bytes (little memory held):
** the even slots on a worker, the odd ones here, each slot's chunks in
** their order, so that the skip rule above decides as it would on one
** thread; then they are laid out in their order.  Same bytes as
** compressing each as it comes. */
#define SEG_BATCH (1u<<20)
typedef struct seg_held {
  int slot;
  size_t raw_off, raw_len;   /* in seg_file.held */
  size_t meta_pos;           /* where its descriptor goes in the meta buffer */
  int codec;
  size_t out_off, out_len;   /* in its half's output */
} seg_held;

/* A file being written, and the zstd context its chunks share. */
typedef struct seg_file {
  fnt_buf *buf;
  ZSTD_CCtx *z;         /* NULL: one context per chunk (out of memory) */
  uint8_t misses[SEG_SLOTS], skip[SEG_SLOTS];
  ZSTD_CCtx *z2;        /* the worker's, made at the first batch */
  int threads;          /* hold chunks for two threads (calls files) */
  unsigned min_saving;  /* percent zstd must save a row group's chunk */
  fnt_buf held;         /* raw bytes of the held chunks */
  seg_held *h;
  size_t nh, caph;
  fnt_buf *meta;        /* the one meta buffer held chunks describe */
} seg_file;

static seg_file segFile(fnt_buf *out){
  seg_file f;
  memset(&f, 0, sizeof(f));
  f.buf = out;
  f.z = ZSTD_createCCtx();
  f.min_saving = FNT_ZSTD_SAVING;
  return f;
}

/* Frees the file's context and held chunks (not its bytes). */
static void segFileClear(seg_file *f){
  ZSTD_freeCCtx(f->z);
  ZSTD_freeCCtx(f->z2);
  f->z = f->z2 = 0;
  fnt_buf_free(&f->held);
  fnt_free(f->h);
  f->h = 0;
  f->nh = f->caph = 0;
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
static void putDescriptor(fnt_buf *meta, const fnt_buf *file, size_t start,
                          size_t raw_len, int codec){
  fnt_put_varint(meta, start);
  fnt_put_varint(meta, file->len - start);
  fnt_put_varint(meta, raw_len);
  fnt_put_u8(meta, (uint8_t)codec);
  fnt_put_u64le(meta, fnt_hash(file->data + start, file->len - start));
}

/* One half of a batch: the held chunks of slots of one parity. */
typedef struct seg_half {
  seg_file *f;
  int parity;
  ZSTD_CCtx *z;
  fnt_buf out;
} seg_half;

static int compressHalf(void *arg){
  seg_half *hf = arg;
  seg_file *f = hf->f;
  size_t i;
  for(i=0; i<f->nh; i++){
    seg_held *c = &f->h[i];
    if( (c->slot & 1)!=hf->parity ) continue;
    c->out_off = hf->out.len;
    c->codec = compressSlot(f, hf->z, f->held.data + c->raw_off, c->raw_len,
                            &hf->out, c->slot);
    if( c->codec<0 ) return FNT_E_NOMEM;
    c->out_len = hf->out.len - c->out_off;
  }
  return FNT_OK;
}

/* Compresses the held chunks on two threads and lays them out in order,
** their descriptors spliced into the meta buffer where they were due. */
static void flushHeld(seg_file *f){
  seg_half half[2];
  fnt_worker w;
  fnt_buf meta = {0};
  size_t i, prev = 0;
  int rc0, rc1;
  if( f->nh==0 ) return;
  if( f->held.failed || f->meta->failed ){
    f->buf->failed = 1;
    f->nh = 0;
    return;
  }
  memset(half, 0, sizeof(half));
  half[0].f = half[1].f = f;
  half[0].parity = 0; half[1].parity = 1;
  if( f->z2==0 ) f->z2 = ZSTD_createCCtx();
  half[0].z = f->z2;
  half[1].z = f->z;
  fnt_worker_start(&w, 1, compressHalf, &half[0]);
  rc1 = compressHalf(&half[1]);
  rc0 = fnt_worker_join(&w);
  if( rc0 || rc1 ){
    f->buf->failed = 1;
  }else{
    for(i=0; i<f->nh; i++){
      const seg_held *c = &f->h[i];
      const fnt_buf *o = &half[c->slot & 1].out;
      size_t start = f->buf->len;
      fnt_buf_append(&meta, f->meta->data + prev, c->meta_pos - prev);
      prev = c->meta_pos;
      fnt_buf_append(f->buf, o->data + c->out_off, c->out_len);
      if( f->buf->failed ) break;
      putDescriptor(&meta, f->buf, start, c->raw_len, c->codec);
    }
    fnt_buf_append(&meta, f->meta->data + prev, f->meta->len - prev);
    if( meta.failed ) f->buf->failed = 1;
    fnt_buf_free(f->meta);
    *f->meta = meta;
    memset(&meta, 0, sizeof(meta));
  }
  fnt_buf_free(&meta);
  fnt_buf_free(&half[0].out);
  fnt_buf_free(&half[1].out);
  f->nh = 0;
  f->held.len = 0;
}

/* Holds raw as the next chunk of column `slot`, its descriptor due at the
** end of `meta`; flushes a full batch. */
static void holdChunk(seg_file *f, fnt_buf *meta, const fnt_buf *raw, int slot){
  seg_held *c;
  if( f->nh==f->caph ){
    size_t cap = f->caph ? f->caph*2 : 256;
    seg_held *a = fnt_realloc(f->h, cap*sizeof(*a));
    if( a==0 ){ f->buf->failed = 1; return; }
    f->h = a;
    f->caph = cap;
  }
  c = &f->h[f->nh++];
  c->slot = slot;
  c->raw_off = f->held.len;
  c->raw_len = raw->len;
  c->meta_pos = meta->len;
  f->meta = meta;
  fnt_buf_append(&f->held, raw->data, raw->len);
  if( f->held.len>=SEG_BATCH ) flushHeld(f);
}

/* Writes raw as a column chunk to `f`, and its descriptor to `meta`;
** `slot` is the column's place in its row group (-1: always try zstd). */
static void emitChunk(seg_file *f, fnt_buf *meta, const fnt_buf *raw, int slot){
  fnt_buf *file = f->buf;
  size_t start = file->len;
  int codec;
  if( raw->failed ){ file->failed = 1; return; }
  if( f->threads && slot>=0 && slot<SEG_SLOTS ){
    holdChunk(f, meta, raw, slot);
    return;
  }
  flushHeld(f);              /* chunks stay in their order in the file */
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
  flushHeld(f);              /* none: the writer flushed before its footer */
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
  uint64_t *cols = 0, *tmp;
  size_t i, rg, nrg = (n + FNT_RG_ROWS - 1) / FNT_RG_ROWS;
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
  fnt_put_varint(&footer, n_fns);
  for(i=0; i<n_fns; i++){
    const char *sid = fns[i].stable_id && fns[i].stable_id[0] ? fns[i].stable_id : 0;
    fnt_put_str(&footer, fns[i].symbol ? fns[i].symbol : "");
    fnt_put_str(&footer, sid);
    fnt_put_u8(&footer, fns[i].local ? 1 : 0);
  }
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
  size_t i;
  for(i=0; i<n; i++){
    if( i%FNT_LOD_ROWS==0 ) offs[i/FNT_LOD_ROWS] = raw->len;
    fnt_put_varint(raw, fnt_zigzag((int64_t)(v[i] - prev)));
    if( delta ) prev = v[i];
  }
}

#define SEG_GATHER_AHEAD 16
#if defined(__GNUC__) || defined(__clang__)
# define SEG_PREFETCH(p) __builtin_prefetch(p)
#else
# define SEG_PREFETCH(p) ((void)0)
#endif

/* The functions a calls file uses, numbered densely in the order rows
** first use them: idx[fnt_fntab id] (UINT32_MAX: unused), used[number]. */
typedef struct fn_numbering { uint32_t *idx, *used, n; } fn_numbering;

/* The rows v[ord[0..m)] into the row group's columns, and the group's
** footer entry and chunks. */
static void writeCallsGroup(const fnt_callrec *v, const uint32_t *ord, size_t m,
                            fn_numbering *fns,
                            const uint64_t *threads, uint32_t nthreads,
                            uint64_t *cols, fnt_buf *raw, seg_file *file,
                            fnt_buf *footer, fnt_lod_writer *lod,
                            fnt_calls_rg *crg){
  uint64_t offs[4][FNT_CALLS_RG_ROWS/FNT_LOD_ROWS+1];   /* start, call_id, dur, unused */
  fnt_lod_rows lr;
  uint64_t *thr = cols, *cid = cols + FNT_CALLS_RG_ROWS, *par = cols + 2*FNT_CALLS_RG_ROWS;
  uint64_t *dep = cols + 3*FNT_CALLS_RG_ROWS, *sta = cols + 4*FNT_CALLS_RG_ROWS;
  uint64_t *dur = cols + 5*FNT_CALLS_RG_ROWS, *kid = cols + 6*FNT_CALLS_RG_ROWS;
  uint64_t *fn = cols + 7*FNT_CALLS_RG_ROWS, *flg = cols + 8*FNT_CALLS_RG_ROWS;
  int64_t cmin = INT64_MAX, cmax = INT64_MIN, tmin = INT64_MAX, tmax = INT64_MIN;
  size_t i;
  crg->depth = v[ord[0]].depth;
  crg->parent_min = INT64_MAX; crg->parent_max = INT64_MIN; crg->dur_max = INT64_MIN;
  crg->thread_min = UINT32_MAX; crg->thread_max = 0;
  for(i=0; i<m; i++){
    const fnt_callrec *c = &v[ord[i]];
    int64_t d = (int64_t)((uint64_t)c->end - (uint64_t)c->start);
    /* The rows are gathered out of the replay's order: a cache miss
    ** each unless fetched ahead. */
    if( i+SEG_GATHER_AHEAD<m ) SEG_PREFETCH(&v[ord[i+SEG_GATHER_AHEAD]]);
    thr[i] = threadIndex(threads, nthreads, c->thread);
    cid[i] = (uint64_t)c->call_id;
    par[i] = (uint64_t)c->parent_id;
    dep[i] = c->depth;
    sta[i] = (uint64_t)c->start;
    dur[i] = (uint64_t)d;
    kid[i] = (uint64_t)d - (uint64_t)c->self;   /* 0 for every leaf */
    if( fns->idx[c->fn]==UINT32_MAX ){
      fns->idx[c->fn] = fns->n;
      fns->used[fns->n++] = c->fn;
    }
    fn[i] = fns->idx[c->fn];
    flg[i] = (uint64_t)c->ended_by | (uint64_t)c->outermost<<2;
    if( c->call_id<cmin ) cmin = c->call_id;
    if( c->call_id>cmax ) cmax = c->call_id;
    if( c->start<tmin ) tmin = c->start;
    if( c->end>tmax ) tmax = c->end;
    if( c->parent_id<crg->parent_min ) crg->parent_min = c->parent_id;
    if( c->parent_id>crg->parent_max ) crg->parent_max = c->parent_id;
    if( d>crg->dur_max ) crg->dur_max = d;
    if( thr[i]<crg->thread_min ) crg->thread_min = (uint32_t)thr[i];
    if( thr[i]>crg->thread_max ) crg->thread_max = (uint32_t)thr[i];
  }
  fnt_put_varint(footer, m);
  fnt_put_varint(footer, fnt_zigzag(cmin));
  fnt_put_varint(footer, fnt_zigzag(cmax));
  fnt_put_varint(footer, fnt_zigzag(tmin));
  fnt_put_varint(footer, fnt_zigzag(tmax));
  raw->len = 0; encodeBitPacked(thr, m, raw);      emitChunk(file, footer, raw, 0);
  raw->len = 0; encodeVarints(cid, m, 1, offs[1], raw); emitChunk(file, footer, raw, 1);
  raw->len = 0; encodeVarints(par, m, 1, offs[3], raw); emitChunk(file, footer, raw, 2);
  raw->len = 0; encodeVarints(dep, m, 1, offs[3], raw); emitChunk(file, footer, raw, 3);
  raw->len = 0; encodeVarints(sta, m, 1, offs[0], raw); emitChunk(file, footer, raw, 4);
  raw->len = 0; encodeVarints(dur, m, 0, offs[2], raw); emitChunk(file, footer, raw, 5);
  raw->len = 0; encodeVarints(kid, m, 0, offs[3], raw); emitChunk(file, footer, raw, 6);
  raw->len = 0; encodeBitPacked(fn, m, raw);       emitChunk(file, footer, raw, 7);
  raw->len = 0; encodeBitPacked(flg, m, raw);      emitChunk(file, footer, raw, 8);
  lr.thr = thr; lr.cid = cid; lr.sta = sta; lr.dur = dur; lr.fn = fn;
  lr.off_sta = offs[0]; lr.off_cid = offs[1]; lr.off_dur = offs[2];
  fnt_lod_write_group(lod, &lr, m);
}

/* Cuts v[ord[0..n)] into row groups of one depth and at most
** FNT_CALLS_RG_ROWS rows; returns how many, and their extra bounds in
** crgs (grown). */
static int writeCallsGroups(const fnt_callrec *v, const uint32_t *ord, size_t n,
                            fn_numbering *fns,
                            const uint64_t *threads, uint32_t nthreads,
                            uint64_t *cols, fnt_buf *raw, seg_file *file,
                            fnt_buf *groups, fnt_buf *extra, fnt_lod_writer *lod,
                            uint32_t *nrg){
  size_t i = 0;
  while( i<n ){
    size_t m = 1;
    fnt_calls_rg crg;
    while( i+m<n && m<FNT_CALLS_RG_ROWS && v[ord[i+m]].depth==v[ord[i]].depth ) m++;
    writeCallsGroup(v, ord+i, m, fns, threads, nthreads, cols, raw, file, groups,
                    lod, &crg);
    fnt_put_varint(extra, (uint64_t)crg.depth);
    fnt_put_varint(extra, crg.thread_min);
    fnt_put_varint(extra, crg.thread_max);
    fnt_put_varint(extra, fnt_zigzag(crg.parent_min));
    fnt_put_varint(extra, fnt_zigzag(crg.parent_max));
    fnt_put_varint(extra, fnt_zigzag(crg.dur_max));
    (*nrg)++;
    i += m;
  }
  return FNT_OK;
}

int fnt_segment_write_calls(const char *repo, const char *commit,
                            const char *run_id, const fnt_fntab *tab,
                            fnt_callvec *closed, fnt_callvec *open,
                            fnt_stacktab *stackTab, int two_threads,
                            fnt_buf *out, fnt_calls_bounds *bounds){
  fnt_buf footer = {0}, groups = {0}, extra = {0}, raw = {0};
  fnt_buf stacks = {0}, stacksDesc = {0}, funcs = {0}, funcsDesc = {0};
  fnt_buf lodDesc = {0};
  fnt_lod_writer lod;
  uint64_t *cols = 0, *threads = 0;
  uint32_t nthreads = 0, nrg = 0, nclosed, i;
  fn_numbering fns = {0, 0, 0};
  uint32_t *ordClosed = 0, *ordOpen = 0;
  fnt_calls_agg *agg = 0;
  size_t k, nall = closed->n + open->n;
  seg_file sf = segFile(out);
  int rc = FNT_E_NOMEM;

  memset(&lod, 0, sizeof(lod));
  sf.threads = two_threads;
  sf.min_saving = SEG_CALLS_SAVING;
  bounds->t_min = INT64_MAX; bounds->t_max = INT64_MIN;
  bounds->call_min = INT64_MAX; bounds->call_max = INT64_MIN;

  /* The thread dictionary; the rows in their order (calls_order.c). */
  if( fnt_distinct_u32(closed->n ? &closed->a->thread : 0, sizeof(fnt_callrec),
                       closed->n, open->n ? &open->a->thread : 0, open->n,
                       &threads, &nthreads) ) goto done;
  if( fnt_calls_order(closed, threads, nthreads, &ordClosed) ) goto done;
  if( fnt_calls_order(open, threads, nthreads, &ordOpen) ) goto done;
  if( fnt_lod_writer_init(&lod, nthreads) ) goto done;

  /* The functions the rows use, numbered as the row groups meet them. */
  fns.idx = fnt_malloc(((size_t)tab->nfn+1)*sizeof(uint32_t));
  fns.used = fnt_malloc(((size_t)tab->nfn+1)*sizeof(uint32_t));
  cols = fnt_malloc(9*(size_t)FNT_CALLS_RG_ROWS*sizeof(uint64_t));
  if( fns.idx==0 || fns.used==0 || cols==0 ) goto done;
  memset(fns.idx, 0xff, ((size_t)tab->nfn+1)*sizeof(uint32_t));

  /* The file in one block sized for it (13 bytes a call on the bench's
  ** runs, 16 allowed): doubled from 256 bytes, each step copied the file
  ** so far into pages touched for the first time. */
  if( out->cap==0 && fnt_buf_reserve(out, nall*16 + 65536) ) goto done;
  fnt_buf_append(out, segMagic, 8);
  writeCallsGroups(closed->a, ordClosed, closed->n, &fns, threads, nthreads, cols, &raw,
                   &sf, &groups, &extra, &lod, &nrg);
  nclosed = nrg;
  writeCallsGroups(open->a, ordOpen, open->n, &fns, threads, nthreads, cols, &raw,
                   &sf, &groups, &extra, &lod, &nrg);
  flushHeld(&sf);            /* groups is complete from here on */

  /* Per function aggregates and the file's bounds, in the replay's order. */
  agg = fnt_calloc((size_t)fns.n+1, sizeof(fnt_calls_agg));
  if( agg==0 ) goto done;
  for(k=0; k<nall; k++){
    const fnt_callrec *c = k<closed->n ? &closed->a[k] : &open->a[k-closed->n];
    if( k<closed->n ){
      fnt_calls_agg *a = &agg[fns.idx[c->fn]];
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
  fnt_lod_finish(&lod, &raw);
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
    fnt_put_varint(&footer, (uint64_t)agg[i].calls);
    fnt_put_varint(&footer, fnt_zigzag(agg[i].incl));
    fnt_put_varint(&footer, fnt_zigzag(agg[i].self));
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
  fnt_lod_writer_clear(&lod);
  fnt_free(cols);
  fnt_free(threads);
  fnt_free(fns.idx);
  fnt_free(fns.used);
  fnt_free(ordClosed);
  fnt_free(ordOpen);
  fnt_free(agg);
  return rc;
}
