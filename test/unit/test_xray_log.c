/*
** test_xray_log.c -- unit tests of the XRay log reader (tools/xray_log.c)
** and the room TSV (tools/room.c) on small logs built byte by byte: the
** records real runs rarely show (TSCWrap, custom and typed events with
** their TSC deltas, call arguments, enter-with-argument), a cycle frequency
** other than 1 GHz, blocks of one thread written out of time order, ties
** across threads, and the offsets of errors.
**
** Unit tests link only the store library, so the sources are compiled in.
*/
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../tools/xray_log.c"
#include "../../tools/room.c"

#include "util_test.h"

/* ------------------------------------------------------------------------
** A log under construction.
*/
typedef struct buf { unsigned char b[4096]; size_t n; } buf;

static void append(buf *b, const void *p, size_t n){
  if( b->n + n > sizeof(b->b) ){ fprintf(stderr, "test buffer full\n"); exit(1); }
  memcpy(b->b + b->n, p, n);
  b->n += n;
}
static void u8(buf *b, unsigned v){ unsigned char c = (unsigned char)v; append(b, &c, 1); }
static void u16(buf *b, unsigned v){ u8(b, v & 0xff); u8(b, (v>>8) & 0xff); }
static void u32(buf *b, uint32_t v){ u16(b, v & 0xffff); u16(b, v>>16); }
static void u64(buf *b, uint64_t v){ u32(b, (uint32_t)v); u32(b, (uint32_t)(v>>32)); }
static void pad(buf *b, size_t to){ while( b->n < to ) u8(b, 0xee); }  /* not zeroed, as in real logs */

static void header(buf *b, unsigned version, unsigned type, uint64_t freq){
  b->n = 0;
  u16(b, version); u16(b, type); u32(b, 0xfffffff3u);  /* garbage flag bits */
  u64(b, freq); u64(b, 65536); u64(b, 0);
}

/* Basic mode: one 32-byte function record. */
static void basic(buf *b, uint32_t tid, unsigned kind, int32_t fn, uint64_t tsc){
  size_t start = b->n;
  u16(b, 0); u8(b, 0); u8(b, kind); u32(b, (uint32_t)fn); u64(b, tsc);
  u32(b, tid); u32(b, 42);
  pad(b, start + 32);
}

/* FDR: a metadata record of `kind` whose body starts with `body`. */
static void md(buf *b, unsigned kind, const buf *body){
  size_t start = b->n;
  u8(b, 1 | kind<<1);
  if( body ) append(b, body->b, body->n);
  pad(b, start + 16);
}
static void fdr_fn(buf *b, unsigned kind, uint32_t fn, uint32_t delta){
  u32(b, kind<<1 | fn<<4);
  u32(b, delta);
}
/* The BufferExtents of what follows at `at` (patched when the buffer ends). */
static size_t extents(buf *b){
  size_t at = b->n;
  buf z; z.n = 0; u64(&z, 0);
  md(b, 7, &z);
  return at;
}
static void close_extents(buf *b, size_t at){
  uint64_t n = b->n - (at + 16);
  memcpy(b->b + at + 1, &n, 8);
}
static void new_buffer(buf *b, uint32_t tid, uint64_t tsc){
  buf body;
  body.n = 0; u32(&body, tid); md(b, 0, &body);
  body.n = 0; u64(&body, 1700000000); u32(&body, 123); md(b, 4, &body);  /* Walltime */
  body.n = 0; u32(&body, 42); md(b, 9, &body);                          /* Pid */
  body.n = 0; u16(&body, 3); u64(&body, tsc); md(b, 2, &body);          /* NewCPUId */
}

static const char *scratch(void){
  static char path[4096];
  const char *dir = getenv("FNT_TEST_TMP");
  if( !dir || !dir[0] ) dir = "/tmp";
  mkdir(dir, 0777);   /* ctest names it; it may not exist yet */
  snprintf(path, sizeof(path), "%s/test_xray_log.bin", dir);
  return path;
}

/* Writes b and reads it back; returns xray_log_read's result. */
static int load(const buf *b, xray_log *log, char *err, size_t errlen){
  const char *path = scratch();
  FILE *f = fopen(path, "wb");
  if( !f || fwrite(b->b, 1, b->n, f)!=b->n || fclose(f)!=0 ){
    perror(path);
    exit(1);
  }
  err[0] = 0;
  return xray_log_read(path, log, err, errlen);
}

#define EV(i, tid_, fn_, kind_, tsc_) do{ \
  CHECK_EQ_INT(log.events[i].tid, tid_); CHECK_EQ_INT(log.events[i].func_id, fn_); \
  CHECK_EQ_INT(log.events[i].kind, FNT_KIND_##kind_); CHECK_EQ_INT(log.events[i].tsc, tsc_); }while(0)

static void test_basic(void){
  buf b;
  xray_log log;
  char err[256];
  header(&b, 3, 0, 0);
  basic(&b, 7, 0, 1, 500);            /* thread 7, a later block first */
  basic(&b, 7, 1, 1, 600);
  basic(&b, 9, 3, 2, 300);            /* enter with argument ... */
  u16(&b, 1); pad(&b, b.n + 30);      /* ... and its argument payload record */
  basic(&b, 7, 0, 3, 200);            /* thread 7's earlier block */
  basic(&b, 7, 2, 3, 300);            /* ties thread 9's 300: file order wins */
  basic(&b, 9, 1, 2, 700);
  CHECK_EQ_INT(load(&b, &log, err, sizeof(err)), 0);
  CHECK_EQ_INT(log.fdr, 0);
  CHECK_EQ_INT(log.version, 3);
  CHECK_EQ_INT(log.n_events, 6);
  CHECK_EQ_INT(log.n_threads, 2);
  CHECK_EQ_INT(log.has_walltime, 0);
  if( log.n_events==6 ){
    EV(0, 7, 3, ENTRY, 200);
    EV(1, 9, 2, ENTRY, 300);          /* thread 9's record is earlier in the file */
    EV(2, 7, 3, TAIL_EXIT, 300);
    EV(3, 7, 1, ENTRY, 500);
    EV(4, 7, 1, EXIT, 600);
    EV(5, 9, 2, EXIT, 700);
  }
  CHECK_EQ_INT(log.first_tsc, 200);
  CHECK_EQ_INT(log.last_tsc, 700);
  CHECK_EQ_INT(xray_log_ns(&log, 700), 500);   /* frequency 0: ticks are ns */
  xray_log_free(&log);

  /* errors: a partial record, an unknown kind, an unknown record type */
  header(&b, 3, 0, 0);
  basic(&b, 7, 0, 1, 500);
  b.n -= 8;
  CHECK_EQ_INT(load(&b, &log, err, sizeof(err)), -1);
  CHECK_STR(err, "offset 32: truncated record (24 of 32 bytes)");
  header(&b, 3, 0, 0);
  basic(&b, 7, 0, 1, 500);
  basic(&b, 7, 6, 1, 600);
  CHECK_EQ_INT(load(&b, &log, err, sizeof(err)), -1);
  CHECK_STR(err, "offset 67: unknown function record kind 6");
  CHECK(log.events==0 && log.n_events==0);
  header(&b, 3, 0, 0);
  u16(&b, 5); pad(&b, 64);
  CHECK_EQ_INT(load(&b, &log, err, sizeof(err)), -1);
  CHECK_STR(err, "offset 32: unknown record type 5");
  header(&b, 4, 0, 0);
  CHECK_EQ_INT(load(&b, &log, err, sizeof(err)), -1);
  CHECK(strstr(err, "type 0 version 4")!=0);
  b.n = 31;
  CHECK_EQ_INT(load(&b, &log, err, sizeof(err)), -1);
  CHECK(strncmp(err, "offset 0: truncated header", 26)==0);
}

static void test_fdr(void){
  buf b, body;
  xray_log log;
  char err[256];
  size_t ext, rec;
  const uint64_t wrap = (uint64_t)1<<32;
  header(&b, 5, 1, 2500000000u);    /* 2.5 GHz */

  /* thread 5, its second buffer first in the file */
  ext = extents(&b);
  new_buffer(&b, 5, wrap + 5000);
  fdr_fn(&b, 1, 3, 10);             /* exit of 3 at 2^32+5010 */
  close_extents(&b, ext);

  /* thread 5's first buffer: every record kind */
  ext = extents(&b);
  new_buffer(&b, 5, 1000);
  fdr_fn(&b, 3, 3, 10);             /* enter with argument, 1010 */
  body.n = 0; u64(&body, 99); md(&b, 6, &body);                        /* CallArg */
  body.n = 0; u32(&body, 4); u32(&body, 5); md(&b, 5, &body);          /* CustomEvent v5: +5 */
  u32(&b, 0xdeadbeef);                                                 /* its payload */
  fdr_fn(&b, 1, 3, 25);             /* exit, 1040 */
  body.n = 0; u64(&body, wrap + 7); md(&b, 3, &body);                  /* TSCWrap */
  fdr_fn(&b, 0, 4, 1);              /* enter, 2^32+8 */
  body.n = 0; u32(&body, 2); u32(&body, 2); u16(&body, 1); md(&b, 8, &body); /* TypedEvent: +2 */
  u16(&b, 0xabcd);
  fdr_fn(&b, 2, 4, 3);              /* tail exit, 2^32+13 */
  close_extents(&b, ext);

  /* thread 6: ties thread 5's 1040 */
  ext = extents(&b);
  new_buffer(&b, 6, 1040);
  fdr_fn(&b, 0, 9, 0);
  close_extents(&b, ext);
  ext = extents(&b);                /* an empty buffer is allowed */
  close_extents(&b, ext);

  CHECK_EQ_INT(load(&b, &log, err, sizeof(err)), 0);
  if( err[0] ) fprintf(stderr, "%s\n", err);
  CHECK_EQ_INT(log.fdr, 1);
  CHECK_EQ_INT(log.n_events, 6);
  CHECK_EQ_INT(log.n_threads, 2);
  CHECK_EQ_INT(log.has_walltime, 1);
  CHECK_EQ_INT(log.walltime_micros, 1700000000LL*1000000 + 123);
  if( log.n_events==6 ){
    EV(0, 5, 3, ENTRY, 1010);
    EV(1, 5, 3, EXIT, 1040);
    EV(2, 6, 9, ENTRY, 1040);       /* thread 6's tie: later in the file */
    EV(3, 5, 4, ENTRY, wrap + 8);
    EV(4, 5, 4, TAIL_EXIT, wrap + 13);
    EV(5, 5, 3, EXIT, wrap + 5010);  /* from the buffer first in the file */
  }
  /* (t - 1010) ticks at 2.5 GHz = 0.4 ns each, rounded down */
  CHECK_EQ_INT(xray_log_ns(&log, 1040), 12);
  CHECK_EQ_INT(xray_log_ns(&log, wrap + 13), (long long)((wrap + 13 - 1010)*2/5));
  xray_log_free(&log);

  /* errors */
  header(&b, 5, 1, 0);
  ext = extents(&b);
  new_buffer(&b, 5, 1000);
  rec = b.n;
  fdr_fn(&b, 0, 1, 1);
  b.n -= 4;                         /* half a function record */
  close_extents(&b, ext);
  CHECK_EQ_INT(load(&b, &log, err, sizeof(err)), -1);
  { char want[80]; snprintf(want, sizeof(want), "offset %zu: truncated function record (4 of 8 bytes)", rec);
    CHECK_STR(err, want); }

  header(&b, 5, 1, 0);
  ext = extents(&b);
  new_buffer(&b, 5, 1000);
  rec = b.n;
  md(&b, 12, 0);
  close_extents(&b, ext);
  CHECK_EQ_INT(load(&b, &log, err, sizeof(err)), -1);
  { char want[80]; snprintf(want, sizeof(want), "offset %zu: unknown metadata record kind 12", rec);
    CHECK_STR(err, want); }

  header(&b, 5, 1, 0);
  ext = extents(&b);
  new_buffer(&b, 5, 1000);
  fdr_fn(&b, 0, 1, 1);
  close_extents(&b, ext);
  b.n -= 1;                         /* the extents promise one byte more */
  CHECK_EQ_INT(load(&b, &log, err, sizeof(err)), -1);
  CHECK(strncmp(err, "offset 48: truncated buffer", 27)==0);

  header(&b, 5, 1, 0);
  ext = extents(&b);
  fdr_fn(&b, 0, 1, 1);              /* no NewBuffer */
  close_extents(&b, ext);
  CHECK_EQ_INT(load(&b, &log, err, sizeof(err)), -1);
  CHECK_STR(err, "offset 48: function record before any NewBuffer record");

  header(&b, 5, 1, 0);
  ext = extents(&b);
  new_buffer(&b, 5, 1000);
  rec = b.n;
  body.n = 0; u32(&body, 64); u32(&body, 0); md(&b, 5, &body);  /* payload past the buffer */
  close_extents(&b, ext);
  CHECK_EQ_INT(load(&b, &log, err, sizeof(err)), -1);
  { char want[80]; snprintf(want, sizeof(want), "offset %zu: truncated custom event", rec);
    CHECK(strncmp(err, want, strlen(want))==0); }
}

/* The streaming merge over a log larger than its buffers: 3 threads, each
** writing 400 blocks of 97 records (one in five with an argument payload
** record after it), one thread's blocks in reverse time order; then the
** same log cut short after it was opened, which must stop with a message,
** not read past the end. */
static void put_basic(FILE *f, uint16_t type, uint32_t tid, unsigned kind, int32_t fn, uint64_t tsc){
  buf b;
  b.n = 0;
  if( type==1 ){ u16(&b, 1); pad(&b, 32); }
  else basic(&b, tid, kind, fn, tsc);
  fwrite(b.b, 1, b.n, f);
}

static void test_stream(void){
  enum { THREADS = 3, BLOCKS = 400, PER = 97 };
  const char *path = scratch();
  FILE *f = fopen(path, "wb");
  buf h;
  xray_log log;
  xray_stream *xs;
  xray_event ev[1000];
  char err[256];
  size_t n, total = 0, got;
  uint64_t last = 0, seen[THREADS] = {0};
  int blk, t, i, sorted = 1;
  header(&h, 3, 0, 0);
  fwrite(h.b, 1, h.n, f);
  for(blk=0; blk<BLOCKS; blk++){
    for(t=0; t<THREADS; t++){
      int b = t==2 ? BLOCKS-1-blk : blk;     /* thread 2 writes its last block first */
      for(i=0; i<PER; i++){
        uint64_t tsc = 1000 + ((uint64_t)b*PER + (uint64_t)i)*THREADS + (uint64_t)t;
        put_basic(f, 0, 100u + (uint32_t)t, (unsigned)(i & 1), 1 + t, tsc);
        if( i%5==0 ) put_basic(f, 1, 0, 0, 0, 0);
      }
    }
  }
  CHECK(fclose(f)==0);
  CHECK_EQ_INT(xray_stream_open(path, &log, &xs, 0, err, sizeof(err)), 0);
  CHECK_EQ_INT(log.n_events, THREADS*BLOCKS*PER);
  while( (got = xray_stream_read(xs, ev, 1000))>0 ){
    for(n=0; n<got; n++){
      if( ev[n].tsc < last ) sorted = 0;
      last = ev[n].tsc;
      if( ev[n].tid>=100 && ev[n].tid<100+THREADS ) seen[ev[n].tid-100]++;
    }
    total += got;
  }
  CHECK(sorted);
  CHECK_EQ_INT(total, THREADS*BLOCKS*PER);
  for(t=0; t<THREADS; t++) CHECK_EQ_INT(seen[t], BLOCKS*PER);
  CHECK(xray_stream_error(xs)==0);
  xray_stream_close(xs);

  /* cut to a third after pass 1 */
  CHECK_EQ_INT(xray_stream_open(path, &log, &xs, 0, err, sizeof(err)), 0);
  { struct stat sb; stat(path, &sb); CHECK(truncate(path, sb.st_size/3)==0); }
  total = 0;
  while( (got = xray_stream_read(xs, ev, 1000))>0 ) total += got;
  CHECK(total < THREADS*BLOCKS*PER);
  CHECK(xray_stream_error(xs)!=0 && strstr(xray_stream_error(xs), "the log became shorter")!=0);
  xray_stream_close(xs);
}

static void test_room(void){
  const char *path = scratch();
  fnt_room *r = 0;
  char err[256];
  FILE *f = fopen(path, "w");
  fputs("# symbol\tstable_id\n\nmain\tc x * main().\r\nf(int, char)\tc x * f().\n"
        "empty\t\nmain\tc x * main2().\n", f);
  fclose(f);
  CHECK_EQ_INT(room_load(path, &r, err, sizeof(err)), 0);
  CHECK_STR(room_lookup(r, "main"), "c x * main2().");   /* the later line wins */
  CHECK_STR(room_lookup(r, "f(int, char)"), "c x * f().");
  CHECK(room_lookup(r, "empty")==0);
  CHECK(room_lookup(r, "absent")==0);
  CHECK(room_lookup(r, "# symbol")==0);
  CHECK_EQ_INT(room_size(r), 2);
  room_free(r);
  room_free(0);

  f = fopen(path, "w");
  fputs("a\tb\n\nno tab\n", f);
  fclose(f);
  CHECK_EQ_INT(room_load(path, &r, err, sizeof(err)), -1);
  CHECK(r==0);
  { char want[4200]; snprintf(want, sizeof(want), "%s:3: no tab (lines are symbol<TAB>stable_id)", path);
    CHECK_STR(err, want); }
  CHECK_EQ_INT(room_load("/nonexistent/room.tsv", &r, err, sizeof(err)), -1);
  CHECK(strstr(err, "No such file")!=0);
}

int main(void){
  test_basic();
  test_fdr();
  test_stream();
  test_room();
  return t_finish("test_xray_log");
}
