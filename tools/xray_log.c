/*
** xray_log.c -- the XRay log reader: header, basic-mode records, FDR-mode
** buffers, then the merge of every thread's blocks into one time order.
**
** Why strict where the LLVM reader is lenient: llvm-xray scans byte by byte
** for the next FDR BufferExtents record, skipping whatever it meets; the
** runtime writes its buffers back to back, so anything but a BufferExtents
** record at a buffer boundary means a damaged file, and filing a trace with
** a hole in it would give wrong heat.  We stop with the offset instead.
*/
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fnt_store.h"
#include "xray_log.h"

#define HEADER_SIZE    32
#define BASIC_RECORD   32
#define FDR_METADATA   16
#define FDR_FUNCTION    8

/* FDR metadata record kinds (compiler-rt's MetadataRecord::RecordKinds). */
enum {
  MD_NEW_BUFFER, MD_END_OF_BUFFER, MD_NEW_CPU_ID, MD_TSC_WRAP, MD_WALLTIME,
  MD_CUSTOM_EVENT, MD_CALL_ARG, MD_BUFFER_EXTENTS, MD_TYPED_EVENT, MD_PID,
  MD_KIND_END
};

/* A block: consecutive events of one thread in file order (a basic-mode
** run of one tid's records, an FDR NewBuffer..NewBuffer span).  The index
** of blocks is all pass 1 keeps: 32 bytes a block, i.e. a thread buffer
** flushed by the runtime (1024 records in basic mode by default, 64 KiB in
** FDR mode), so ~3 MB for 100M events. */
typedef struct block {
  uint64_t off;         /* basic: its first record; FDR: its NewBuffer record
                        ** (file order: the sort's last key) */
  uint64_t first_tsc;
  uint64_t count;       /* its events */
  uint32_t thread;      /* index of the thread, by first appearance */
} block;

/* Pass 2: one thread's events, its blocks in order, decoded from a buffer
** of its own that holds the file's bytes from buf_off on. */
typedef struct cursor {
  size_t blk, end;      /* the current block, the end of the thread's blocks */
  uint64_t left;        /* events of the block not decoded yet */
  size_t off;           /* the next record to decode */
  uint64_t base;        /* FDR: the running TSC */
  size_t ev_off;        /* the record of ev: ties go to the earlier one */
  xray_event ev;        /* the thread's next event */
  unsigned char *buf;   /* bufsz bytes, of which buf_len hold the file's */
  size_t buf_off, buf_len;
} cursor;

typedef struct reader {
  int fd;                     /* both passes read it with pread */
  size_t size;
  xray_log *log;
  char *err; size_t errlen;
  block *blk; size_t nblk, cap_blk;
  /* tid -> thread index: open addressing, capacity a power of two */
  uint32_t *tid_key; uint32_t *tid_val; size_t tid_cap, ntid;
  uint32_t *thread_tid;       /* thread index -> tid */
  unsigned char *thread_used; /* thread index -> has events */
  size_t cap_thread;
  /* the block being filled */
  int in_block; uint32_t cur_tid;
  /* pass 1: the window of the file's bytes at win_off, and where the
  ** progress bar was last told */
  unsigned char *win;
  size_t win_off, win_len, ticked;
  xray_hooks hooks;           /* all NULL when none were given */
  /* pass 2: the merge */
  cursor *cur;                /* one a thread with events, then unused ones */
  struct loser *tree;         /* tree[1..k-1]: the loser at each node */
  size_t k;                   /* leaves: threads rounded up to a power of 2 */
  uint32_t winner;            /* the cursor whose event is next */
  unsigned __int128 winner_key;
  unsigned char *bufs;        /* the cursors' buffers, bufsz bytes each */
  size_t bufsz;
  int read_failed;            /* the file no longer has what pass 1 read */
} reader;

struct xray_stream { reader r; };

static int fail(reader *r, size_t off, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static int fail(reader *r, size_t off, const char *fmt, ...){
  va_list ap;
  int n = snprintf(r->err, r->errlen, "offset %zu: ", off);
  if( n<0 ) n = 0;
  if( (size_t)n < r->errlen ){
    va_start(ap, fmt);
    vsnprintf(r->err + n, r->errlen - (size_t)n, fmt, ap);
    va_end(ap);
  }
  return -1;
}

static uint16_t rd16(const unsigned char *p){ return (uint16_t)(p[0] | p[1]<<8); }
static uint32_t rd32(const unsigned char *p){
  return (uint32_t)p[0] | (uint32_t)p[1]<<8 | (uint32_t)p[2]<<16 | (uint32_t)p[3]<<24;
}
static uint64_t rd64(const unsigned char *p){ return (uint64_t)rd32(p) | (uint64_t)rd32(p+4)<<32; }

static int oom(reader *r){
  snprintf(r->err, r->errlen, "out of memory");
  return -1;
}

/* The thread index of tid, assigned in order of first appearance. */
static int thread_index(reader *r, uint32_t tid, uint32_t *out){
  size_t i, mask;
  if( (r->ntid+1)*2 > r->tid_cap ){
    size_t ncap = r->tid_cap ? r->tid_cap*2 : 64, j;
    uint32_t *nk = malloc(ncap*sizeof(*nk)), *nv = malloc(ncap*sizeof(*nv));
    if( !nk || !nv ){ free(nk); free(nv); return oom(r); }
    memset(nv, 0xff, ncap*sizeof(*nv));
    for(j=0; j<r->tid_cap; j++){
      if( r->tid_val[j]==UINT32_MAX ) continue;
      i = (r->tid_key[j]*2654435761u) & (ncap-1);
      while( nv[i]!=UINT32_MAX ) i = (i+1) & (ncap-1);
      nk[i] = r->tid_key[j]; nv[i] = r->tid_val[j];
    }
    free(r->tid_key); free(r->tid_val);
    r->tid_key = nk; r->tid_val = nv; r->tid_cap = ncap;
  }
  mask = r->tid_cap-1;
  i = (tid*2654435761u) & mask;
  while( r->tid_val[i]!=UINT32_MAX ){
    if( r->tid_key[i]==tid ){ *out = r->tid_val[i]; return 0; }
    i = (i+1) & mask;
  }
  if( r->ntid==r->cap_thread ){
    size_t ncap = r->cap_thread ? r->cap_thread*2 : 16;
    uint32_t *nt = realloc(r->thread_tid, ncap*sizeof(*nt));
    unsigned char *nu;
    if( !nt ) return oom(r);
    r->thread_tid = nt;
    nu = realloc(r->thread_used, ncap);
    if( !nu ) return oom(r);
    r->thread_used = nu; r->cap_thread = ncap;
  }
  r->tid_key[i] = tid;
  r->tid_val[i] = (uint32_t)r->ntid;
  r->thread_tid[r->ntid] = tid;
  r->thread_used[r->ntid] = 0;
  *out = (uint32_t)r->ntid++;
  return 0;
}

/* Starts a new block for tid (the previous one, if any, is complete). */
static int block_begin(reader *r, uint32_t tid, size_t off){
  uint32_t t;
  block *b;
  if( thread_index(r, tid, &t) ) return -1;
  if( r->nblk==r->cap_blk ){
    size_t ncap = r->cap_blk ? r->cap_blk*2 : 64;
    block *nb = realloc(r->blk, ncap*sizeof(*nb));
    if( !nb ) return oom(r);
    r->blk = nb; r->cap_blk = ncap;
  }
  b = &r->blk[r->nblk++];
  b->off = off;
  b->first_tsc = 0;
  b->count = 0;
  b->thread = t;
  r->in_block = 1;
  r->cur_tid = tid;
  return 0;
}

/* Pass 1 counts an event of the current block. */
static void count_event(reader *r, uint64_t tsc, int32_t func_id, int kind){
  block *b = &r->blk[r->nblk-1];
  xray_log *log = r->log;
  if( b->count++==0 ) b->first_tsc = tsc;
  if( log->n_events==0 || tsc<log->first_tsc ) log->first_tsc = tsc;
  if( log->n_events==0 || tsc>log->last_tsc ) log->last_tsc = tsc;
  log->n_events++;
  if( r->hooks.event ) r->hooks.event(r->hooks.arg, func_id, (uint8_t)kind);
  if( !r->thread_used[b->thread] ){
    r->thread_used[b->thread] = 1;
    log->n_threads++;
  }
}

/* Pass 1 reads the file front to back through a window of its own (256
** KiB: it stays in the caches), not through a mapping: on the machine
** this was measured on, touching a mapped log cost ~1 ns a byte in TLB
** and cache misses (300 ms for a 10M-event basic log), copying it in
** ~0.2 ns.  Records are at most PASS1_RECORD bytes apart from a custom
** event's payload, which pass 1 skips unread. */
#define PASS1_WINDOW   ((size_t)256 << 10)
#define PASS1_RECORD   32
#define TICK_BYTES     ((size_t)4 << 20)

/* The file's bytes at off: as many as PASS1_RECORD, or the rest of the
** file when it has fewer.  NULL (and the message) on a read error. */
static const unsigned char *pass1_at(reader *r, size_t off){
  size_t need = r->size - off < PASS1_RECORD ? r->size - off : PASS1_RECORD;
  size_t want = r->size - off < PASS1_WINDOW ? r->size - off : PASS1_WINDOW;
  size_t got = 0;
  if( off>=r->win_off && off - r->win_off + need <= r->win_len ){
    return r->win + (off - r->win_off);
  }
  while( got<want ){
    ssize_t n = pread(r->fd, r->win + got, want - got, (off_t)(off + got));
    if( n<0 && errno==EINTR ) continue;
    if( n<0 ){ fail(r, off + got, "read: %s", strerror(errno)); return 0; }
    if( n==0 ){ fail(r, off + got, "the file is shorter than the %zu bytes it had when opened", r->size); return 0; }
    got += (size_t)n;
  }
  r->win_off = off;
  r->win_len = got;
  if( r->hooks.tick && off - r->ticked >= TICK_BYTES ){
    r->ticked = off;
    r->hooks.tick(r->hooks.arg, (uint64_t)off);
  }
  return r->win;
}

/* XRay's record kinds (0 enter, 1 exit, 2 tail exit, 3 enter with argument)
** as stored kinds; -1 for anything else. */
static int xray_kind(unsigned k){
  switch( k ){
    case 0: case 3: return FNT_KIND_ENTRY;
    case 1:         return FNT_KIND_EXIT;
    case 2:         return FNT_KIND_TAIL_EXIT;
  }
  return -1;
}

static int read_basic(reader *r){
  size_t off;
  for(off=HEADER_SIZE; off<r->size; off+=BASIC_RECORD){
    const unsigned char *q;
    unsigned type;
    int kind;
    uint32_t tid;
    if( r->size - off < BASIC_RECORD ){
      return fail(r, off, "truncated record (%zu of %d bytes)", r->size - off, BASIC_RECORD);
    }
    if( (q = pass1_at(r, off))==0 ) return -1;
    type = rd16(q);
    if( type==1 ) continue;   /* the argument payload of the previous record */
    if( type!=0 ) return fail(r, off, "unknown record type %u", type);
    kind = xray_kind(q[3]);
    if( kind<0 ) return fail(r, off+3, "unknown function record kind %u", q[3]);
    tid = rd32(q+16);
    if( !r->in_block || tid!=r->cur_tid ){
      if( block_begin(r, tid, off) ) return -1;
    }
    count_event(r, rd64(q+8), (int32_t)rd32(q+4), kind);
  }
  return 0;
}

/* What an FDR metadata record of kind md at q does to the running TSC
** (both passes agree through this); returns its payload's size. */
static int32_t md_tsc(const reader *r, unsigned md, const unsigned char *q, uint64_t *base){
  int32_t size = 0;
  switch( md ){
    case MD_NEW_CPU_ID: *base = rd64(q+3); break;
    case MD_TSC_WRAP:   *base = rd64(q+1); break;
    case MD_CUSTOM_EVENT:
    case MD_TYPED_EVENT:
      size = (int32_t)rd32(q+1);
      /* version 5 (and every typed event) carries a TSC delta */
      if( md==MD_TYPED_EVENT || r->log->version>=5 ) *base += (uint64_t)(int64_t)(int32_t)rd32(q+5);
      break;
  }
  return size;
}

/* Parses FDR records in [off, end).  Version >= 3 calls this once per
** buffer (end = the BufferExtents' limit); older versions once for the
** whole file.  base is the running TSC of the current block. */
static int read_fdr_records(reader *r, size_t off, size_t end){
  xray_log *log = r->log;
  uint64_t base = 0;
  int have_base = 0, ignoring = 0;
  while( off<end ){
    const unsigned char *q = pass1_at(r, off);
    if( q==0 ) return -1;
    if( q[0] & 1 ){
      unsigned md = q[0]>>1;
      int32_t size = 0;
      if( end - off < FDR_METADATA ){
        return fail(r, off, "truncated metadata record (%zu of %d bytes)", end - off, FDR_METADATA);
      }
      if( md>=MD_KIND_END ) return fail(r, off, "unknown metadata record kind %u", md);
      switch( md ){
        case MD_NEW_BUFFER:
          if( block_begin(r, rd32(q+1), off) ) return -1;
          have_base = 0;
          ignoring = 0;
          break;
        case MD_END_OF_BUFFER:
          if( log->version>=2 ){
            return fail(r, off, "EndOfBuffer record in a version %d log (only version 1 has them)",
                        log->version);
          }
          ignoring = 1;
          break;
        case MD_NEW_CPU_ID:
        case MD_TSC_WRAP:
          md_tsc(r, md, q, &base);
          have_base = 1;
          break;
        case MD_WALLTIME: {
          /* i64 seconds, i32 µs (tv_nsec/1000).  compiler-rt 14 reads
          ** CLOCK_MONOTONIC here (seen: seconds = the machine's uptime), not
          ** the epoch: only a time after 2001 (1e9 s) is taken as a wall
          ** time; otherwise the importer falls back to the file's mtime. */
          int64_t sec = (int64_t)rd64(q+1), us = (int32_t)rd32(q+9), t;
          if( sec < 1000000000 || sec > 100000000000 || us < 0 || us >= 1000000 ) break;
          t = sec*1000000 + us;
          if( !log->has_walltime || t<log->walltime_micros ) log->walltime_micros = t;
          log->has_walltime = 1;
          break;
        }
        case MD_CUSTOM_EVENT:
        case MD_TYPED_EVENT:
          size = md_tsc(r, md, q, &base);
          if( size<=0 ){
            return fail(r, off, "%s event record with size %d",
                        md==MD_CUSTOM_EVENT ? "custom" : "typed", (int)size);
          }
          if( (size_t)size > end - off - FDR_METADATA ){
            return fail(r, off, "truncated %s event (payload of %d bytes, %zu remain)",
                        md==MD_CUSTOM_EVENT ? "custom" : "typed", (int)size,
                        end - off - FDR_METADATA);
          }
          break;
        case MD_BUFFER_EXTENTS:
          if( log->version>=3 ){
            return fail(r, off, "BufferExtents record inside a buffer");
          }
          break;
        case MD_CALL_ARG:
        case MD_PID:
          break;
      }
      off += FDR_METADATA + (size_t)size;
    }else{
      uint32_t w;
      int kind;
      if( end - off < FDR_FUNCTION ){
        return fail(r, off, "truncated function record (%zu of %d bytes)", end - off, FDR_FUNCTION);
      }
      w = rd32(q);
      kind = xray_kind((w>>1) & 7);
      if( kind<0 ) return fail(r, off, "unknown function record kind %u", (w>>1) & 7);
      if( !ignoring ){
        if( !r->in_block ) return fail(r, off, "function record before any NewBuffer record");
        if( !have_base ) return fail(r, off, "function record before any NewCPUId record");
        base += rd32(q+4);
        count_event(r, base, (int32_t)(w>>4), kind);
      }
      off += FDR_FUNCTION;
    }
  }
  return 0;
}

static int read_fdr(reader *r){
  size_t off = HEADER_SIZE;
  if( r->log->version<3 ) return read_fdr_records(r, off, r->size);
  while( off<r->size ){
    const unsigned char *q = pass1_at(r, off);
    uint64_t extent;
    if( q==0 ) return -1;
    if( q[0]!=(1 | MD_BUFFER_EXTENTS<<1) ){
      return fail(r, off, "expected a BufferExtents record, found byte 0x%02x", q[0]);
    }
    if( r->size - off < FDR_METADATA ){
      return fail(r, off, "truncated BufferExtents record (%zu of %d bytes)", r->size - off, FDR_METADATA);
    }
    extent = rd64(q+1);
    off += FDR_METADATA;
    if( extent > r->size - off ){
      return fail(r, off, "truncated buffer (its BufferExtents says %llu bytes, %zu remain)",
                  (unsigned long long)extent, r->size - off);
    }
    /* Each buffer starts afresh with NewBuffer (the runtime's
    ** setupNewBuffer), so the block state does not carry over. */
    r->in_block = 0;
    if( read_fdr_records(r, off, off + (size_t)extent) ) return -1;
    off += (size_t)extent;
  }
  return 0;
}

/* ------------------------------------------------------------------------
** Pass 2: the merge.  Each thread's blocks are sorted by first TSC (then
** file order) and read one after the other; the threads are merged by a
** tournament tree over one cursor a thread, keyed by (TSC, file offset).  Records are
** decoded as the merge reaches them, from each thread's buffer: pass 1
** checked them.
*/
/* The merge reads each thread's records into a buffer of its own: 8 MiB
** in all, 4-64 KiB a thread.  Not from a mapping of the file: a page
** mapped is in the RSS until handed back, and handing back the pages
** behind threads that read here and there either missed the pages the
** kernel maps around a fault (the RSS grew with the log) or cost a walk of
** the whole mapping each time (import time +50-100% at 1 MiB steps). */
#define MERGE_BUFFERS    ((size_t)8 << 20)
#define MERGE_BUFFER_MAX ((size_t)64 << 10)
#define MERGE_BUFFER_MIN ((size_t)4 << 10)

static int cmp_block(const void *a, const void *b){
  const block *x = a, *y = b;
  if( x->thread!=y->thread ) return x->thread<y->thread ? -1 : 1;
  if( x->first_tsc!=y->first_tsc ) return x->first_tsc<y->first_tsc ? -1 : 1;
  return x->off<y->off ? -1 : x->off>y->off;
}

/* The cursor's bytes at c->off, `need` of them, read into its buffer
** when they are not there: as much as the block's events left can use, up
** to the buffer's size (pass 1 checked every record, so the file has
** them).  NULL, and read_failed, when the file no longer has them. */
static const unsigned char *cursor_at(reader *r, cursor *c, size_t need){
  size_t want, got = 0;
  if( c->off>=c->buf_off && c->off - c->buf_off + need <= c->buf_len ){
    return c->buf + (c->off - c->buf_off);
  }
  want = (size_t)c->left * (r->log->fdr ? FDR_FUNCTION : BASIC_RECORD);
  if( want<need ) want = need;
  if( want>r->bufsz ) want = r->bufsz;
  if( want>r->size - c->off ) want = r->size - c->off;
  while( got<want ){
    ssize_t n = pread(r->fd, c->buf + got, want - got, (off_t)(c->off + got));
    if( n<0 && errno==EINTR ) continue;
    if( n<=0 ) break;
    got += (size_t)n;
  }
  c->buf_off = c->off;
  c->buf_len = got;
  if( got<need ){
    r->read_failed = 1;
    fail(r, c->off, "the log became shorter while it was read (%zu bytes before)", r->size);
    return 0;
  }
  return c->buf;
}

/* Decodes the cursor's next event (c->left > 0); 0 when the file could
** not be read (cursor_at). */
static int decode(reader *r, cursor *c){
  for(;;){
    const unsigned char *q = cursor_at(r, c, r->log->fdr ? FDR_FUNCTION : BASIC_RECORD);
    size_t at = c->off;
    if( !q ) return 0;
    if( !r->log->fdr ){
      c->off += BASIC_RECORD;
      if( rd16(q)==1 ) continue;
      c->ev.tsc = rd64(q+8);
      c->ev.func_id = (int32_t)rd32(q+4);
      c->ev.kind = (uint8_t)xray_kind(q[3]);
    }else if( q[0] & 1 ){
      if( (q = cursor_at(r, c, FDR_METADATA))==0 ) return 0;
      c->off += FDR_METADATA + (size_t)md_tsc(r, q[0]>>1, q, &c->base);
      continue;
    }else{
      uint32_t w = rd32(q);
      c->off += FDR_FUNCTION;
      c->base += rd32(q+4);
      c->ev.tsc = c->base;
      c->ev.func_id = (int32_t)(w>>4);
      c->ev.kind = (uint8_t)xray_kind((w>>1) & 7);
    }
    c->ev_off = at;
    c->left--;
    return 1;
  }
}

/* Moves c to its thread's next non-empty block from c->blk on and decodes
** its first event; 0 when the thread has no more. */
static int enter_block(reader *r, cursor *c){
  while( c->blk<c->end && r->blk[c->blk].count==0 ) c->blk++;
  if( c->blk==c->end ) return 0;
  c->off = (size_t)r->blk[c->blk].off;
  c->left = r->blk[c->blk].count;
  c->base = 0;
  c->ev.tid = r->thread_tid[r->blk[c->blk].thread];
  return decode(r, c);
}

/* The merge's key of a cursor: its event's TSC, then its record's offset
** (unique, so no two keys tie); KEY_END once the thread is done.  One
** 128-bit compare, which the compiler makes branch-free. */
typedef unsigned __int128 merge_key;
#define KEY_END (~(merge_key)0)

static merge_key key_of(const cursor *c){
  return (merge_key)c->ev.tsc<<64 | c->ev_off;
}

/* A node of the tree: the cursor that lost there, with its key (kept in
** the node: one load a level, not two dependent ones). */
typedef struct loser { merge_key key; uint32_t idx; } loser;

/* The threads are merged by a tournament tree of losers (Knuth 5.4.1):
** log2(threads) compares an event, where a binary heap makes twice as
** many, each a branch no predictor guesses on interleaved threads. */
static int merge_begin(reader *r){
  size_t i, nc = 0, k = 1;
  loser *win;
  if( r->nblk ) qsort(r->blk, r->nblk, sizeof(block), cmp_block);  /* NULL when none: UB for qsort */
  while( k<r->ntid ) k <<= 1;
  r->k = k;
  r->bufsz = MERGE_BUFFERS / k;
  if( r->bufsz>MERGE_BUFFER_MAX ) r->bufsz = MERGE_BUFFER_MAX;
  if( r->bufsz<MERGE_BUFFER_MIN ) r->bufsz = MERGE_BUFFER_MIN;
  r->cur = malloc(k*sizeof(*r->cur));
  r->tree = malloc(k*sizeof(*r->tree));
  r->bufs = malloc(k*r->bufsz);
  win = malloc(2*k*sizeof(*win));
  if( !r->cur || !r->tree || !r->bufs || !win ){ free(win); return oom(r); }
  for(i=0; i<r->nblk; ){
    size_t j = i;
    cursor *c = &r->cur[nc];
    while( j<r->nblk && r->blk[j].thread==r->blk[i].thread ) j++;
    c->blk = i; c->end = j;
    c->buf = r->bufs + nc*r->bufsz;
    c->buf_off = c->buf_len = 0;
    if( enter_block(r, c) ){ win[k+nc].key = key_of(c); nc++; }
    i = j;
  }
  for(i=0; i<k; i++){
    win[k+i].idx = (uint32_t)i;
    if( i>=nc ) win[k+i].key = KEY_END;
  }
  for(i=k; i-->1; ){
    const loser *a = &win[2*i], *b = &win[2*i+1];
    if( b->key < a->key ){ win[i] = *b; r->tree[i] = *a; }
    else{ win[i] = *a; r->tree[i] = *b; }
  }
  r->winner = win[1].idx;
  r->winner_key = win[1].key;
  free(win);
  return r->read_failed ? -1 : 0;
}

size_t xray_stream_read(xray_stream *s, xray_event *out, size_t max){
  reader *r = &s->r;
  loser *tree = r->tree;
  uint32_t w = r->winner;
  merge_key wk = r->winner_key;
  size_t n = 0, node;
  while( n<max && wk!=KEY_END ){
    cursor *c = &r->cur[w];
    out[n++] = c->ev;
    if( c->left>0 ){
      wk = decode(r, c) ? key_of(c) : KEY_END;
    }else{
      c->blk++;
      wk = enter_block(r, c) ? key_of(c) : KEY_END;
    }
    for(node=(w + r->k)>>1; node>0; node>>=1){
      loser *l = &tree[node];
      if( l->key < wk ){
        loser t = *l;
        l->key = wk; l->idx = w;
        wk = t.key; w = t.idx;
      }
    }
  }
  r->winner = w;
  r->winner_key = wk;
  return n;
}

const char *xray_stream_error(const xray_stream *s){
  return s->r.read_failed ? s->r.err : 0;
}

void xray_stream_close(xray_stream *s){
  reader *r;
  if( !s ) return;
  r = &s->r;
  free(r->win);
  if( r->fd>=0 ) close(r->fd);
  free(r->blk); free(r->cur); free(r->tree); free(r->bufs);
  free(r->tid_key); free(r->tid_val); free(r->thread_tid); free(r->thread_used);
  free(s);
}

int xray_stream_open(const char *path, xray_log *log, xray_stream **out,
                     const xray_hooks *hooks, char *err, size_t errlen){
  xray_stream *s;
  reader *r;
  struct stat sb;
  int fd, rc = -1;
  const unsigned char *q;
  unsigned type;

  *out = 0;
  memset(log, 0, sizeof(*log));
  s = calloc(1, sizeof(*s));
  if( !s ){ snprintf(err, errlen, "out of memory"); return -1; }
  r = &s->r;
  r->log = log; r->err = err; r->errlen = errlen;
  r->fd = -1;
  if( hooks ) r->hooks = *hooks;
  fd = open(path, O_RDONLY | O_CLOEXEC);
  if( fd<0 || fstat(fd, &sb)!=0 ){
    snprintf(err, errlen, "%s", strerror(errno));
    if( fd>=0 ) close(fd);
    free(s);
    return -1;
  }
  if( !S_ISREG(sb.st_mode) ){
    close(fd);
    free(s);
    snprintf(err, errlen, "not a regular file");
    return -1;
  }
  if( sb.st_size < HEADER_SIZE ){
    close(fd);
    free(s);
    snprintf(err, errlen, "offset 0: truncated header (%lld bytes, an XRay log header has %d)",
             (long long)sb.st_size, HEADER_SIZE);
    return -1;
  }
  r->fd = fd;
  r->size = (size_t)sb.st_size;
  r->win = malloc(PASS1_WINDOW);
  if( !r->win ){
    xray_stream_close(s);
    snprintf(err, errlen, "out of memory");
    return -1;
  }
  if( (q = pass1_at(r, 0))==0 ){
    xray_stream_close(s);
    return -1;
  }
  log->version = rd16(q);
  type = rd16(q+2);
  /* flags at 4 (bit 0 constant TSC, bit 1 nonstop TSC): not needed here */
  log->cycle_frequency = rd64(q+8);
  if( type==0 && log->version>=1 && log->version<=3 ){
    log->fdr = 0;
    rc = read_basic(r);
  }else if( type==1 && log->version>=1 && log->version<=5 ){
    log->fdr = 1;
    rc = read_fdr(r);
  }else{
    fail(r, 0, "not an XRay log this reader knows (type %u version %d; "
         "basic mode is type 0 version 1-3, FDR type 1 version 1-5)", type, log->version);
  }
  if( rc==0 ){
    free(r->win);                           /* the merge has buffers of its own */
    r->win = 0;
    rc = merge_begin(r);
  }
  if( rc!=0 ){
    xray_stream_close(s);
    memset(log, 0, sizeof(*log));
    return -1;
  }
  *out = s;
  return 0;
}

int xray_log_read(const char *path, xray_log *log, char *err, size_t errlen){
  xray_stream *s;
  size_t n;
  if( xray_stream_open(path, log, &s, 0, err, errlen) ) return -1;
  log->events = malloc((log->n_events ? log->n_events : 1)*sizeof(*log->events));
  if( !log->events ){
    xray_stream_close(s);
    memset(log, 0, sizeof(*log));
    snprintf(err, errlen, "out of memory");
    return -1;
  }
  n = xray_stream_read(s, log->events, log->n_events);
  xray_stream_close(s);
  if( n!=log->n_events ){   /* cannot happen: pass 2 decodes what pass 1 counted */
    free(log->events);
    memset(log, 0, sizeof(*log));
    snprintf(err, errlen, "internal error: %zu events read of %zu counted", n, log->n_events);
    return -1;
  }
  return 0;
}

uint64_t xray_log_ns(const xray_log *log, uint64_t tsc){
  uint64_t d = tsc - log->first_tsc, f = log->cycle_frequency;
  if( f==0 || f==1000000000u ) return d;
  /* d/f seconds, in ns, without overflow for any 64-bit d */
  return (uint64_t)((unsigned __int128)d * 1000000000u / f);
}

void xray_log_free(xray_log *log){
  if( !log ) return;
  free(log->events);
  log->events = 0;
  log->n_events = 0;
}
