/*
** fuzz_segment.c -- libFuzzer target: bytes as a segment file, read back
** through the real read path (footer parse, chunk checks, decoding, scans,
** heat).
**
** The scratch warehouse (fuzz_warehouse.c) lists four segments: the
** events of chunk 0, the runs row of chunk 0, the profile, and the calls
** of chunk 0.  Input:
**   byte 0, bits 0-1: which of the four the rest of the input replaces
**                     (0 events, 1 runs, 2 profile, 3 calls);
**           bit 2:    "sign" the bytes: force both magics and recompute the
**                     footer checksum in the trailer, then, once the footer
**                     parses, the checksum of every column chunk (in the
**                     footer's bytes, signed again), so that
**                     mutations reach the footer parser and the decoders
**                     instead of all dying at a checksum;
**   the rest:         the segment file.
** Each input opens a fresh handle (no cached footer survives from one input
** to the next), pins the snapshot and scans the table reading every column
** of every row; for events also in seq_no order and through fnt_heat; for
** calls through heat (its aggregates read lazily), every call, account,
** the flame and the timeline.
** The only acceptable outcomes are rows or a clean error code with a
** message: a crash, leak or sanitizer report is the bug.
*/
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "segment.h"
#include "fuzz_warehouse.h"

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const char *g_dir;
#define NSEG 4
static char *g_rel[NSEG];       /* the segment of each table, relative */
static char *g_full[NSEG];
static uint8_t *g_orig[NSEG];   /* its bytes as filed */
static size_t g_norig[NSEG];

static uint8_t *rawFooterCopy(const uint8_t *p, size_t n, size_t *nOut);

static void freeAll(void){
  int i;
  for(i=0; i<NSEG; i++){
    /* Put the file back so the next process start is not misled. */
    if( g_full[i] && g_orig[i] ) fuzz_write_file(g_full[i], g_orig[i], g_norig[i]);
    free(g_rel[i]); free(g_full[i]); free(g_orig[i]);
  }
}

int LLVMFuzzerInitialize(int *argc, char ***argv){
  fnt_store *st = 0;
  fnt_snapshot *snap = 0;
  size_t i, j;
  (void)argc; (void)argv;
  g_dir = fuzz_warehouse("segment");
  if( fnt_open(g_dir, 0, &st) || fnt_snapshot_current(st, &snap) ){
    fprintf(stderr, "fuzz_segment: %s\n", fnt_errmsg(st));
    exit(1);
  }
  /* The first-listed segment of each table (events: chunk 0). */
  for(i=0; i<snap->n_manifests; i++){
    const fnt_manifest *m = snap->manifests[i];
    for(j=0; j<m->n; j++){
      const fnt_entry *e = &m->entries[j];
      if( e->table<NSEG && (g_rel[e->table]==0 || e->chunk==0) ){
        free(g_rel[e->table]);
        g_rel[e->table] = strdup(e->path);
      }
    }
  }
  for(i=0; i<NSEG; i++){
    static const char *names[NSEG] = {"events.seg", "runs.seg", "profile.seg",
                                      "calls.seg"};
    if( g_rel[i]==0 ){ fprintf(stderr, "fuzz_segment: no segment of table %zu\n", i); exit(1); }
    g_full[i] = malloc(strlen(g_dir) + strlen(g_rel[i]) + 2);
    sprintf(g_full[i], "%s/%s", g_dir, g_rel[i]);
    if( fuzz_read_file(g_full[i], &g_orig[i], &g_norig[i]) ){
      fprintf(stderr, "fuzz_segment: cannot read %s\n", g_full[i]);
      exit(1);
    }
    fuzz_seed(names[i], (uint8_t)i, g_orig[i], g_norig[i]);
    if( getenv("FNT_FUZZ_SEEDS") ){
      char signedName[32];
      size_t nraw = 0;
      uint8_t *raw = rawFooterCopy(g_orig[i], g_norig[i], &nraw);
      snprintf(signedName, sizeof(signedName), "signed-%s", names[i]);
      if( raw ) fuzz_seed(signedName, (uint8_t)(i|4), raw, nraw);
      free(raw);
    }
  }
  fnt_snapshot_release(snap);
  fnt_close(st);
  atexit(freeAll);
  return 0;
}

static void put64le(uint8_t *p, uint64_t v){
  int i;
  for(i=0; i<8; i++) p[i] = (uint8_t)(v >> (8*i));
}
static uint64_t get64le(const uint8_t *p){
  uint64_t v = 0;
  int i;
  for(i=7; i>=0; i--) v = (v<<8) | p[i];
  return v;
}

/* Forces the magics and the footer checksum of a would-be segment (the
** trailer: u64le stored footer length, u64le raw length, u64le checksum of
** the stored bytes, magic; FORMAT.md). */
static void signFooter(uint8_t *p, size_t n){
  uint64_t slen;
  if( n<8+FNT_SEG_TRAILER ) return;
  memcpy(p, "FNTSEG01", 8);
  memcpy(p+n-8, "FNTSEG01", 8);
  slen = get64le(p+n-FNT_SEG_TRAILER);
  if( slen > n-8-FNT_SEG_TRAILER ) return;
  put64le(p+n-FNT_SEG_TRAILER+16, fnt_hash(p+n-FNT_SEG_TRAILER-slen, (size_t)slen));
}

/* The same segment with its footer stored raw (a zstd-compressed footer is
** no use to a mutator), for the signed seeds.  A new malloc'd buffer, or
** NULL when the file is not as expected. */
static uint8_t *rawFooterCopy(const uint8_t *p, size_t n, size_t *nOut){
  uint64_t slen, flen;
  size_t head;
  uint8_t *out;
  void *dctx = 0;
  int bad;
  if( n<8+FNT_SEG_TRAILER ) return 0;
  slen = get64le(p+n-FNT_SEG_TRAILER);
  flen = get64le(p+n-FNT_SEG_TRAILER+8);
  if( slen > n-8-FNT_SEG_TRAILER || flen > (64u<<20) ) return 0;
  head = n - FNT_SEG_TRAILER - (size_t)slen;
  out = malloc(head + (size_t)flen + FNT_SEG_TRAILER);
  if( out==0 ) return 0;
  memcpy(out, p, head);
  bad = fnt_block_decompress(&dctx, slen==flen ? FNT_CODEC_RAW : FNT_CODEC_ZSTD,
                             p+head, (size_t)slen, out+head, (size_t)flen);
  fnt_block_ctx_free(&dctx);
  if( bad ){
    free(out);
    return 0;
  }
  memcpy(out+head+flen, p+n-FNT_SEG_TRAILER, FNT_SEG_TRAILER);
  put64le(out+head+flen, flen);      /* stored length = raw length: raw */
  *nOut = head + (size_t)flen + FNT_SEG_TRAILER;
  signFooter(out, *nOut);
  return out;
}

/* The footer parsed: make every column chunk's checksum match its bytes,
** in the file's raw footer p[0..n) (its descriptors stay there: readers
** parse a group's when they read it), and sign the footer again.  A
** compressed footer is left as it is. */
static void signChunks(fnt_store *st, const char *rel, uint8_t *p, size_t n){
  fnt_segment *seg = 0;
  uint64_t at;
  uint32_t g, c;
  if( fnt_segment_open(st, rel, &seg) ) return;
  at = seg->desc==0 ? seg->desc_at
     : seg->image && seg->desc>=seg->image ? (uint64_t)(seg->desc - seg->image) : UINT64_MAX;
  for(g=0; at<=n && g<seg->nrg; g++){
    fnt_rd r;
    if( seg->rgs[g].desc_len > n-at || seg->rgs[g].desc > n-at-seg->rgs[g].desc_len ) break;
    r.p = p + at + seg->rgs[g].desc;
    r.end = r.p + seg->rgs[g].desc_len;
    r.ok = 1;
    for(c=0; c<seg->nchunk_cols && r.ok; c++){
      uint64_t off = fnt_get_varint(&r), len = fnt_get_varint(&r);
      (void)fnt_get_varint(&r);
      (void)fnt_get_u8(&r);
      if( !r.ok || r.end - r.p < 8 ) break;
      if( off<=n && len<=n-off ) put64le((uint8_t*)r.p, fnt_hash(p+off, (size_t)len));
      r.p += 8;
    }
  }
  fnt_segment_release(st, seg);
  signFooter(p, n);
}

static volatile uint64_t g_sink;

/* Reads the run's calls every way a viewer does; errors are fine, as long
** as they say which file. */
static void readCalls(fnt_store *st, fnt_snapshot *snap){
  static const char *run = FUZZ_RUN;
  fnt_call_predicate cp;
  fnt_calls *cs = 0;
  const fnt_call *c;
  fnt_account *a = 0;
  fnt_flame *f = 0;
  fnt_timeline *tl = 0;
  int rc;
  fnt_call_predicate_init(&cp);
  cp.run_ids = &run;
  cp.n_run_ids = 1;
  cp.ordered = 1;
  rc = fnt_calls_open(snap, &cp, &cs);
  while( rc==FNT_OK && (rc = fnt_calls_next(cs, &c))==1 ){
    g_sink += (uint64_t)c->dur_ns + strlen(c->key);
  }
  if( rc<0 && fnt_errmsg(st)[0]==0 ) abort();
  fnt_calls_close(cs);
  if( fnt_account_compute(snap, run, &a)==FNT_OK ) g_sink += fnt_account_count(a);
  fnt_account_free(a);
  if( fnt_flame_compute(snap, run, 0, &f)==FNT_OK ) g_sink += fnt_flame_count(f);
  fnt_flame_free(f);
  if( fnt_timeline_compute(snap, run, 0, 1000000, 16, -1, &tl)==FNT_OK ){
    g_sink += fnt_timeline_count(tl);
  }
  fnt_timeline_free(tl);
}

static void scanAll(fnt_store *st, fnt_snapshot *snap, fnt_table t, int ordered){
  fnt_predicate pr;
  fnt_scan *sc = 0;
  int rc, col, ncol = fnt_table_ncol(t);
  fnt_predicate_init(&pr);
  pr.ordered = ordered;
  rc = fnt_scan_open(snap, t, &pr, &sc);
  if( rc==FNT_OK ){
    while( (rc = fnt_scan_next(sc))==1 ){
      for(col=0; col<ncol; col++){
        if( fnt_column_is_text(t, col) ){
          size_t len = 0;
          const char *z = fnt_scan_text(sc, col, &len);
          if( z && strlen(z)!=len ) abort();   /* no NUL inside, length exact */
          g_sink += len;
        }else{
          g_sink += (uint64_t)fnt_scan_int(sc, col);
        }
        g_sink += (uint64_t)fnt_scan_is_null(sc, col);
      }
      if( t==FNT_TABLE_EVENTS ){
        uint64_t gen;
        g_sink += fnt_scan_function(sc, &gen);
      }
    }
  }
  if( rc<0 && fnt_errmsg(st)[0]==0 ) abort();   /* an error names its file */
  fnt_scan_close(sc);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size){
  fnt_store *st = 0;
  fnt_snapshot *snap = 0;
  int which, sign;
  uint8_t *buf;
  size_t n;
  if( size<1 ) return 0;
  which = data[0] & 3;
  sign = (data[0] & 4)!=0;
  n = size - 1;
  buf = malloc(n ? n : 1);
  if( buf==0 ) return 0;
  if( n ) memcpy(buf, data+1, n);
  if( sign ) signFooter(buf, n);
  if( fuzz_write_file(g_full[which], buf, n) ){
    fprintf(stderr, "fuzz_segment: cannot write %s\n", g_full[which]);
    abort();
  }
  if( sign ){
    if( fnt_open(g_dir, 0, &st)==FNT_OK ) signChunks(st, g_rel[which], buf, n);
    fnt_close(st);
    st = 0;
    if( fuzz_write_file(g_full[which], buf, n) ){
      fprintf(stderr, "fuzz_segment: cannot write %s\n", g_full[which]);
      abort();
    }
  }
  if( fnt_open(g_dir, 0, &st)==FNT_OK && fnt_snapshot_current(st, &snap)==FNT_OK ){
    if( which!=FNT_TABLE_CALLS ) scanAll(st, snap, (fnt_table)which, 0);
    if( which==FNT_TABLE_CALLS ) readCalls(st, snap);
    if( which==FNT_TABLE_EVENTS || which==FNT_TABLE_CALLS ){
      fnt_heat *h = 0;
      if( which==FNT_TABLE_EVENTS ) scanAll(st, snap, FNT_TABLE_EVENTS, 1);
      if( fnt_heat_compute(snap, FUZZ_RUN, &h)==FNT_OK ){
        size_t i, nh = fnt_heat_count(h);
        const fnt_heat_row *r = fnt_heat_rows(h);
        for(i=0; i<nh; i++) g_sink += strlen(r[i].key) + (uint64_t)r[i].calls;
      }
      fnt_heat_free(h);
    }
  }else{
    fprintf(stderr, "fuzz_segment: the warehouse does not open: %s\n", fnt_errmsg(st));
    abort();
  }
  fnt_snapshot_release(snap);
  fnt_close(st);
  free(buf);
  return 0;
}
