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
#include <sys/mman.h>
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

/* A block: consecutive events of one thread in file order. */
typedef struct block {
  uint32_t thread;      /* index of the thread, by first appearance */
  size_t   start, count;/* range of reader.ev */
  uint64_t first_tsc;
  size_t   ordinal;     /* position in the file, the sort's last key */
} block;

typedef struct reader {
  const unsigned char *p;     /* the mapped file */
  size_t size;
  xray_log *log;
  char *err; size_t errlen;
  xray_event *ev; size_t nev, cap_ev;
  block *blk; size_t nblk, cap_blk;
  /* tid -> thread index: open addressing, capacity a power of two */
  uint32_t *tid_key; uint32_t *tid_val; size_t tid_cap, ntid;
  uint32_t *thread_tid;       /* thread index -> tid */
  size_t cap_thread;
  /* the block being filled */
  int in_block; uint32_t cur_tid;
} reader;

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
    if( !nt ) return oom(r);
    r->thread_tid = nt; r->cap_thread = ncap;
  }
  r->tid_key[i] = tid;
  r->tid_val[i] = (uint32_t)r->ntid;
  r->thread_tid[r->ntid] = tid;
  *out = (uint32_t)r->ntid++;
  return 0;
}

/* Starts a new block for tid (the previous one, if any, is complete). */
static int block_begin(reader *r, uint32_t tid){
  uint32_t t;
  block *b;
  if( thread_index(r, tid, &t) ) return -1;
  if( r->nblk==r->cap_blk ){
    size_t ncap = r->cap_blk ? r->cap_blk*2 : 64;
    block *nb = realloc(r->blk, ncap*sizeof(*nb));
    if( !nb ) return oom(r);
    r->blk = nb; r->cap_blk = ncap;
  }
  b = &r->blk[r->nblk];
  b->thread = t;
  b->start = r->nev;
  b->count = 0;
  b->first_tsc = 0;
  b->ordinal = r->nblk;
  r->nblk++;
  r->in_block = 1;
  r->cur_tid = tid;
  return 0;
}

static int add_event(reader *r, uint64_t tsc, int32_t func_id, uint8_t kind){
  block *b = &r->blk[r->nblk-1];
  xray_event *e;
  if( r->nev==r->cap_ev ){
    size_t ncap = r->cap_ev ? r->cap_ev*2 : 4096;
    xray_event *ne = realloc(r->ev, ncap*sizeof(*ne));
    if( !ne ) return oom(r);
    r->ev = ne; r->cap_ev = ncap;
  }
  e = &r->ev[r->nev++];
  e->tsc = tsc;
  e->tid = r->cur_tid;
  e->func_id = func_id;
  e->kind = kind;
  if( b->count++==0 ) b->first_tsc = tsc;
  return 0;
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
  /* at most one event a record: reserve once rather than doubling */
  r->cap_ev = (r->size - HEADER_SIZE)/BASIC_RECORD + 1;
  r->ev = malloc(r->cap_ev*sizeof(*r->ev));
  if( !r->ev ) return oom(r);
  for(off=HEADER_SIZE; off<r->size; off+=BASIC_RECORD){
    const unsigned char *q = r->p + off;
    unsigned type;
    int kind;
    uint32_t tid;
    if( r->size - off < BASIC_RECORD ){
      return fail(r, off, "truncated record (%zu of %d bytes)", r->size - off, BASIC_RECORD);
    }
    type = rd16(q);
    if( type==1 ) continue;   /* the argument payload of the previous record */
    if( type!=0 ) return fail(r, off, "unknown record type %u", type);
    kind = xray_kind(q[3]);
    if( kind<0 ) return fail(r, off+3, "unknown function record kind %u", q[3]);
    tid = rd32(q+16);
    if( !r->in_block || tid!=r->cur_tid ){
      if( block_begin(r, tid) ) return -1;
    }
    if( add_event(r, rd64(q+8), (int32_t)rd32(q+4), (uint8_t)kind) ) return -1;
  }
  return 0;
}

/* Parses FDR records in [off, end).  Version >= 3 calls this once per
** buffer (end = the BufferExtents' limit); older versions once for the
** whole file.  *base is the running TSC of the current block. */
static int read_fdr_records(reader *r, size_t off, size_t end){
  xray_log *log = r->log;
  uint64_t base = 0;
  int have_base = 0, ignoring = 0;
  while( off<end ){
    const unsigned char *q = r->p + off;
    if( q[0] & 1 ){
      unsigned md = q[0]>>1;
      int32_t size = 0;
      if( end - off < FDR_METADATA ){
        return fail(r, off, "truncated metadata record (%zu of %d bytes)", end - off, FDR_METADATA);
      }
      if( md>=MD_KIND_END ) return fail(r, off, "unknown metadata record kind %u", md);
      switch( md ){
        case MD_NEW_BUFFER:
          if( block_begin(r, rd32(q+1)) ) return -1;
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
          base = rd64(q+3);
          have_base = 1;
          break;
        case MD_TSC_WRAP:
          base = rd64(q+1);
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
          size = (int32_t)rd32(q+1);
          if( size<=0 ){
            return fail(r, off, "%s event record with size %d",
                        md==MD_CUSTOM_EVENT ? "custom" : "typed", (int)size);
          }
          /* version 5 (and every typed event) carries a TSC delta */
          if( md==MD_TYPED_EVENT || log->version>=5 ) base += (uint64_t)(int64_t)(int32_t)rd32(q+5);
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
        if( add_event(r, base, (int32_t)(w>>4), (uint8_t)kind) ) return -1;
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
    const unsigned char *q = r->p + off;
    uint64_t extent;
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

static int cmp_block(const void *a, const void *b){
  const block *x = a, *y = b;
  if( x->thread!=y->thread ) return x->thread<y->thread ? -1 : 1;
  if( x->first_tsc!=y->first_tsc ) return x->first_tsc<y->first_tsc ? -1 : 1;
  return x->ordinal<y->ordinal ? -1 : x->ordinal>y->ordinal;
}

/* A cursor over one thread's sorted blocks, for the merge. */
typedef struct cursor { size_t blk, end, pos; } cursor;

/* Heap order: smaller TSC first, then the earlier record in the file. */
static int before(const reader *r, const cursor *a, const cursor *b){
  size_t ia = r->blk[a->blk].start + a->pos, ib = r->blk[b->blk].start + b->pos;
  if( r->ev[ia].tsc!=r->ev[ib].tsc ) return r->ev[ia].tsc < r->ev[ib].tsc;
  return ia < ib;
}

static void sift_down(const reader *r, cursor *h, size_t n, size_t i){
  for(;;){
    size_t l = 2*i+1, m = i;
    cursor t;
    if( l<n && before(r, &h[l], &h[m]) ) m = l;
    if( l+1<n && before(r, &h[l+1], &h[m]) ) m = l+1;
    if( m==i ) return;
    t = h[i]; h[i] = h[m]; h[m] = t;
    i = m;
  }
}

/* Sorts each thread's blocks by first TSC, then merges the threads. */
static int merge(reader *r){
  xray_log *log = r->log;
  cursor *heap;
  xray_event *out;
  size_t nh = 0, i, n = 0;
  if( r->nblk ) qsort(r->blk, r->nblk, sizeof(block), cmp_block);  /* NULL when none: UB for qsort */
  heap = malloc((r->ntid ? r->ntid : 1)*sizeof(*heap));
  out = malloc((r->nev ? r->nev : 1)*sizeof(*out));
  if( !heap || !out ){ free(heap); free(out); return oom(r); }
  for(i=0; i<r->nblk; ){
    size_t j = i;
    while( j<r->nblk && r->blk[j].thread==r->blk[i].thread ) j++;
    /* skip empty blocks at the front of a thread's list */
    while( i<j && r->blk[i].count==0 ) i++;
    if( i<j ){
      heap[nh].blk = i; heap[nh].end = j; heap[nh].pos = 0;
      nh++;
    }
    i = j;
  }
  for(i=nh; i-->0; ) sift_down(r, heap, nh, i);
  while( nh>0 ){
    cursor *c = &heap[0];
    const xray_event *e = &r->ev[r->blk[c->blk].start + c->pos];
    out[n++] = *e;
    if( ++c->pos == r->blk[c->blk].count ){
      c->pos = 0;
      do c->blk++; while( c->blk<c->end && r->blk[c->blk].count==0 );
      if( c->blk==c->end ) heap[0] = heap[--nh];
    }
    sift_down(r, heap, nh, 0);
  }
  free(heap);
  log->events = out;
  log->n_events = n;
  log->n_threads = 0;
  log->first_tsc = log->last_tsc = 0;
  for(i=0; i<n; i++){
    if( i==0 || out[i].tsc<log->first_tsc ) log->first_tsc = out[i].tsc;
    if( i==0 || out[i].tsc>log->last_tsc ) log->last_tsc = out[i].tsc;
  }
  /* threads with at least one event */
  {
    unsigned char *seen = calloc(r->ntid ? r->ntid : 1, 1);
    if( !seen ) return oom(r);
    for(i=0; i<r->nblk; i++){
      if( r->blk[i].count && !seen[r->blk[i].thread] ){
        seen[r->blk[i].thread] = 1;
        log->n_threads++;
      }
    }
    free(seen);
  }
  return 0;
}

int xray_log_read(const char *path, xray_log *log, char *err, size_t errlen){
  reader r;
  struct stat sb;
  void *map = MAP_FAILED;
  int fd, rc = -1;
  unsigned type;

  memset(log, 0, sizeof(*log));
  memset(&r, 0, sizeof(r));
  r.log = log; r.err = err; r.errlen = errlen;
  fd = open(path, O_RDONLY | O_CLOEXEC);
  if( fd<0 || fstat(fd, &sb)!=0 ){
    snprintf(err, errlen, "%s", strerror(errno));
    if( fd>=0 ) close(fd);
    return -1;
  }
  if( !S_ISREG(sb.st_mode) ){
    close(fd);
    snprintf(err, errlen, "not a regular file");
    return -1;
  }
  if( sb.st_size < HEADER_SIZE ){
    close(fd);
    snprintf(err, errlen, "offset 0: truncated header (%lld bytes, an XRay log header has %d)",
             (long long)sb.st_size, HEADER_SIZE);
    return -1;
  }
  map = mmap(0, (size_t)sb.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
  close(fd);
  if( map==MAP_FAILED ){
    snprintf(err, errlen, "mmap: %s", strerror(errno));
    return -1;
  }
  r.p = map;
  r.size = (size_t)sb.st_size;

  log->version = rd16(r.p);
  type = rd16(r.p+2);
  /* flags at 4 (bit 0 constant TSC, bit 1 nonstop TSC): not needed here */
  log->cycle_frequency = rd64(r.p+8);
  if( type==0 && log->version>=1 && log->version<=3 ){
    log->fdr = 0;
    rc = read_basic(&r);
  }else if( type==1 && log->version>=1 && log->version<=5 ){
    log->fdr = 1;
    rc = read_fdr(&r);
  }else{
    fail(&r, 0, "not an XRay log this reader knows (type %u version %d; "
         "basic mode is type 0 version 1-3, FDR type 1 version 1-5)", type, log->version);
  }
  munmap(map, r.size);   /* the events are copies: the file is done with */
  if( rc==0 ) rc = merge(&r);
  free(r.ev); free(r.blk);
  free(r.tid_key); free(r.tid_val); free(r.thread_tid);
  if( rc!=0 ){
    free(log->events);
    memset(log, 0, sizeof(*log));
  }
  return rc;
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
