/*
** gen_xray_log.c -- writes a synthetic, valid LLVM XRay log of any size, as
** compiler-rt's runtime lays it out, for the importer's size tests:
**
**   gen_xray_log basic|fdr EVENTS THREADS FUNCTIONS OUT
**
** Each thread runs a random call stack (depth 1-40, recursion, tail exits
** followed by the callee's entry) over function ids 1..FUNCTIONS, its clock
** advancing 1-64 ns an event; the thread to act next is drawn at random, so
** threads interleave and tie.  Each thread fills its own buffer (basic mode:
** 1024 records, the runtime's default; FDR: 64 KiB, as buffer_size=65536)
** and writes it out when full, so the file holds per-thread blocks in flush
** order, not time order, as real logs do.  Deterministic (a fixed seed).
** Frames left open at the end stay open (a real trace's pthread_exit).
** Prints the number of entry events (= calls in the SPEC §5 heat).
*/
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define BASIC_BUF_RECORDS 1024
#define FDR_BUF_BYTES     65536
#define MAX_DEPTH         40

typedef struct thread {
  uint32_t tid;
  uint64_t clock;
  int depth;
  int32_t stack[MAX_DEPTH];
  unsigned char *buf;    /* the thread's buffer */
  size_t n;              /* bytes in it */
  uint64_t last_tsc;     /* FDR: the TSC the deltas run from */
} thread;

static uint64_t rng = 0x9E3779B97F4A7C15u;
static uint64_t next_rand(void){   /* xorshift64* */
  rng ^= rng >> 12; rng ^= rng << 25; rng ^= rng >> 27;
  return rng * 2685821657736338717u;
}

static void put16(unsigned char *p, uint16_t v){ p[0] = (unsigned char)v; p[1] = (unsigned char)(v>>8); }
static void put32(unsigned char *p, uint32_t v){ put16(p, (uint16_t)v); put16(p+2, (uint16_t)(v>>16)); }
static void put64(unsigned char *p, uint64_t v){ put32(p, (uint32_t)v); put32(p+4, (uint32_t)(v>>32)); }

static int fdr;
static FILE *out;

static void write_or_die(const void *p, size_t n){
  if( fwrite(p, 1, n, out)!=n ){ perror("gen_xray_log: write"); exit(1); }
}

/* FDR: a buffer's preamble (NewBuffer, Walltime, Pid, NewCPUId). */
static void fdr_preamble(thread *t){
  unsigned char *q = t->buf;
  memset(q, 0, 64);
  q[0] = 1 | 0<<1;  put32(q+1, t->tid);
  q[16] = 1 | 4<<1; put64(q+17, 1700000000); put32(q+25, 0);
  q[32] = 1 | 9<<1; put32(q+33, 4242);
  q[48] = 1 | 2<<1; put16(q+49, 0); put64(q+51, t->clock);
  t->n = 64;
  t->last_tsc = t->clock;
}

static void flush(thread *t){
  if( fdr ){
    unsigned char ext[16];
    if( t->n<=64 ) return;            /* nothing but the preamble */
    memset(ext, 0, sizeof(ext));
    ext[0] = 1 | 7<<1;
    put64(ext+1, t->n);
    write_or_die(ext, sizeof(ext));
    write_or_die(t->buf, t->n);
    fdr_preamble(t);
  }else{
    write_or_die(t->buf, t->n);
    t->n = 0;
  }
}

static void event(thread *t, int kind, int32_t fn){
  t->clock += 1 + next_rand() % 64;
  if( fdr ){
    unsigned char *q;
    if( t->n + 8 > FDR_BUF_BYTES ) flush(t);
    q = t->buf + t->n;
    put32(q, (uint32_t)kind<<1 | (uint32_t)fn<<4);
    put32(q+4, (uint32_t)(t->clock - t->last_tsc));
    t->last_tsc = t->clock;
    t->n += 8;
  }else{
    unsigned char *q;
    if( t->n + 32 > BASIC_BUF_RECORDS*32 ) flush(t);
    q = t->buf + t->n;
    memset(q, 0, 32);
    put16(q, 0); q[2] = 0; q[3] = (unsigned char)kind;
    put32(q+4, (uint32_t)fn); put64(q+8, t->clock);
    put32(q+16, t->tid); put32(q+20, 4242);
    t->n += 32;
  }
}

int main(int argc, char **argv){
  unsigned char hdr[32];
  uint64_t events, i, entries = 0;
  int nthreads, nfn, k;
  thread *th;
  if( argc!=6 || (strcmp(argv[1], "basic")!=0 && strcmp(argv[1], "fdr")!=0) ){
    fprintf(stderr, "usage: gen_xray_log basic|fdr EVENTS THREADS FUNCTIONS OUT\n");
    return 2;
  }
  fdr = strcmp(argv[1], "fdr")==0;
  events = strtoull(argv[2], 0, 10);
  nthreads = atoi(argv[3]);
  nfn = atoi(argv[4]);
  if( nthreads<1 || nfn<1 ){ fprintf(stderr, "gen_xray_log: THREADS and FUNCTIONS must be >= 1\n"); return 2; }
  out = fopen(argv[5], "wb");
  if( !out ){ perror(argv[5]); return 1; }
  setvbuf(out, 0, _IOFBF, 1<<20);
  memset(hdr, 0, sizeof(hdr));
  put16(hdr, fdr ? 5 : 3); put16(hdr+2, fdr ? 1 : 0); put32(hdr+4, 3);
  put64(hdr+8, 1000000000);             /* the VM's "no TSC": ticks are ns */
  if( fdr ) put64(hdr+16, FDR_BUF_BYTES);
  write_or_die(hdr, sizeof(hdr));
  th = calloc((size_t)nthreads, sizeof(*th));
  if( !th ){ fprintf(stderr, "gen_xray_log: out of memory\n"); return 1; }
  for(k=0; k<nthreads; k++){
    th[k].tid = 1000 + (uint32_t)k*7;
    th[k].clock = 5000000 + (uint64_t)k*3;
    th[k].buf = malloc(fdr ? FDR_BUF_BYTES : BASIC_BUF_RECORDS*32);
    if( !th[k].buf ){ fprintf(stderr, "gen_xray_log: out of memory\n"); return 1; }
    if( fdr ) fdr_preamble(&th[k]);
  }
  for(i=0; i<events; ){
    thread *t = &th[next_rand() % (uint64_t)nthreads];
    uint64_t r = next_rand();
    if( t->depth==0 || (t->depth<MAX_DEPTH && r%100 < 52) ){
      int32_t fn = (int32_t)(1 + (r>>8) % (uint64_t)nfn);
      if( t->depth>0 && r%7==0 ) fn = t->stack[t->depth-1];   /* recursion */
      event(t, 0, fn);
      t->stack[t->depth++] = fn;
      i++;
      entries++;
    }else if( r%100 < 56 && i+2<=events ){
      /* a tail call: the frame's tail exit, then the callee's entry */
      int32_t fn = (int32_t)(1 + (r>>8) % (uint64_t)nfn);
      event(t, 2, t->stack[t->depth-1]);
      event(t, 0, fn);
      t->stack[t->depth-1] = fn;
      i += 2;
      entries++;
    }else{
      event(t, 1, t->stack[--t->depth]);
      i++;
    }
  }
  for(k=0; k<nthreads; k++){ flush(&th[k]); free(th[k].buf); }
  free(th);
  if( fclose(out)!=0 ){ perror("gen_xray_log: close"); return 1; }
  printf("%llu\n", (unsigned long long)entries);
  return 0;
}
