/*
** test_ints_range.c -- reading a few rows of an integer column chunk
** (ints.c, fnt_bp_unpack_from) against decoding the whole chunk: every
** encoding, every start and length on small chunks and random ones on
** large, values of every size (one-byte varints in long runs, negative
** deltas, full 64-bit words), a cursor skipping and reading at random, and
** chunks one byte short or long.  The chunks are encoded here, from
** FORMAT.md, not by the store's writer; the writer's varints are checked
** against the same encoding.
*/
#include "segment.h"
#include "util_test.h"

static uint64_t rnd(uint64_t *s){
  *s ^= *s<<13; *s ^= *s>>7; *s ^= *s<<17;
  return *s;
}

/* ---- the encodings, per FORMAT.md */
static void putVarint(uint8_t *out, size_t *len, uint64_t v){
  while( v>=0x80 ){ out[(*len)++] = (uint8_t)(v | 0x80); v >>= 7; }
  out[(*len)++] = (uint8_t)v;
}
static uint64_t zz(uint64_t v){ return (v<<1) ^ (uint64_t)((int64_t)v>>63); }

/* n values of w bits, bit i*w.. of the string (LSB first). */
static void putPacked(uint8_t *out, size_t *len, const uint64_t *v, size_t n, unsigned w){
  size_t bytes = (n*w + 7)/8, i;
  unsigned b;
  memset(out + *len, 0, bytes);
  for(i=0; i<n; i++){
    for(b=0; b<w; b++){
      uint64_t bit = (uint64_t)i*w + b;
      if( v[i]>>b & 1 ) out[*len + bit/8] |= (uint8_t)(1u << (bit%8));
    }
  }
  *len += bytes;
}

static unsigned widthOf(const uint64_t *v, size_t n){
  uint64_t m = 0;
  unsigned w = 0;
  size_t i;
  for(i=0; i<n; i++) m |= v[i];
  while( m ){ w++; m >>= 1; }
  return w;
}

/* The chunk of v[0..n) in `encoding` into out; its length. */
static size_t encode(int encoding, const uint64_t *v, size_t n, uint8_t *out){
  size_t len = 0, i;
  uint64_t *d = malloc((n+1)*sizeof(uint64_t)), minD = 0;
  switch( encoding ){
    case FNT_ENC_PLAIN_INT:       /* the decoder gives the varints: the */
      for(i=0; i<n; i++) putVarint(out, &len, v[i]);   /* caller unzigzags */
      break;
    case FNT_ENC_DELTA_VARINT:
      for(i=0; i<n; i++) putVarint(out, &len, zz(v[i] - (i ? v[i-1] : 0)));
      break;
    case FNT_ENC_DELTA_BP:
      for(i=1; i<n; i++){
        int64_t x = (int64_t)(v[i] - v[i-1]);
        if( i==1 || x<(int64_t)minD ) minD = (uint64_t)x;
      }
      for(i=1; i<n; i++) d[i-1] = v[i] - v[i-1] - minD;
      putVarint(out, &len, zz(v[0]));
      putVarint(out, &len, zz(minD));
      out[len++] = (uint8_t)widthOf(d, n-1);
      putPacked(out, &len, d, n-1, widthOf(d, n-1));
      break;
    default:
      out[len++] = (uint8_t)widthOf(v, n);
      putPacked(out, &len, v, n, widthOf(v, n));
      break;
  }
  free(d);
  return len;
}

/* ---- the values */
enum { SHAPE_SMALL, SHAPE_RUNS, SHAPE_SIGNED, SHAPE_WIDE, SHAPE_TIMES, NSHAPES };

static void values(int shape, int encoding, uint64_t *v, size_t n, uint64_t *s){
  size_t i;
  uint64_t t = rnd(s) % 1000000;
  for(i=0; i<n; i++){
    uint64_t r = rnd(s);
    switch( shape ){
      case SHAPE_SMALL:  v[i] = r % 100; break;
      case SHAPE_RUNS:   v[i] = (r % 16)==0 ? r % 5000 : 7; break;   /* one-byte deltas */
      case SHAPE_SIGNED: v[i] = (uint64_t)((int64_t)(r % 2001) - 1000); break;
      case SHAPE_WIDE:   v[i] = r; break;
      default:           t += r % 40000; v[i] = t; break;           /* start_ns */
    }
  }
  /* Dictionary indexes: below the limit the test gives (n + 1). */
  if( encoding==FNT_ENC_THREAD_BP || encoding==FNT_ENC_FUNC_BP || encoding==FNT_ENC_KIND_BP ){
    for(i=0; i<n; i++) v[i] %= n + 1;
  }
}

static const int encodings[] = {
  FNT_ENC_PLAIN_INT, FNT_ENC_DELTA_VARINT, FNT_ENC_DELTA_BP,
  FNT_ENC_THREAD_BP, FNT_ENC_FUNC_BP, FNT_ENC_KIND_BP
};
#define NENC (sizeof(encodings)/sizeof(encodings[0]))

/* Rows [from, to) decoded alone equal the whole decode's, and nothing
** outside them is written. */
static void checkRange(int enc, const uint8_t *chunk, size_t len, size_t n,
                       const uint64_t *want, size_t from, size_t to, uint64_t *out){
  size_t i;
  for(i=0; i<n+1; i++) out[i] = 0xdeadbeef;
  CHECK_EQ_INT(fnt_decode_ints_range(enc, chunk, len, n, n+1, from, to, out), 0);
  for(i=0; i<n+1; i++){
    uint64_t w = i>=from && i<to ? want[i] : 0xdeadbeef;
    if( out[i]!=w ){
      fprintf(stderr, "encoding %d, n %zu, rows [%zu, %zu): row %zu is %llu, not %llu\n",
              enc, n, from, to, i, (unsigned long long)out[i], (unsigned long long)w);
      t_failures++;
      return;
    }
  }
}

/* A cursor's random skips and reads give the values of the rows read. */
static void checkCursor(int enc, const uint8_t *chunk, size_t len, size_t n,
                        const uint64_t *want, uint64_t *s, uint64_t *out){
  fnt_ints c;
  size_t pos = 0;
  CHECK_EQ_INT(fnt_ints_init(&c, enc, chunk, len, n, n+1), 0);
  while( pos<n ){
    size_t k = (size_t)(rnd(s) % (n - pos + 1)), i;
    if( rnd(s) & 1 ){
      CHECK_EQ_INT(fnt_ints_skip(&c, k), 0);
    }else{
      CHECK_EQ_INT(fnt_ints_read(&c, k, out), 0);
      for(i=0; i<k; i++) CHECK_EQ_INT(out[i], want[pos+i]);
    }
    pos += k;
  }
  CHECK_EQ_INT(fnt_ints_read(&c, 1, out), -1);        /* past the last row */
  CHECK_EQ_INT(fnt_ints_finish(&c), 0);
}

/* A chunk one byte short, or with a byte more, is refused, however few
** rows are read; so is an index the dictionary does not hold. */
static void checkMalformed(int enc, uint8_t *chunk, size_t len, size_t n, uint64_t *out){
  if( n==0 ) return;
  CHECK_EQ_INT(fnt_decode_ints_range(enc, chunk, len-1, n, n+1, 0, n, out), -1);
  CHECK_EQ_INT(fnt_decode_ints_range(enc, chunk, len-1, n, n+1, 0, 1, out), -1);
  chunk[len] = 0;
  CHECK_EQ_INT(fnt_decode_ints_range(enc, chunk, len+1, n, n+1, 0, n, out), -1);
  if( enc==FNT_ENC_THREAD_BP || enc==FNT_ENC_FUNC_BP || enc==FNT_ENC_KIND_BP ){
    /* an empty dictionary admits no index */
    CHECK_EQ_INT(fnt_decode_ints_range(enc, chunk, len, n, 0, n-1, n, out), -1);
  }
  CHECK_EQ_INT(fnt_decode_ints_range(enc, chunk, len+1, n, n+1, n/2, n/2+1, out), -1);
}

static void testEncodings(void){
  static const size_t sizes[] = {0, 1, 2, 7, 8, 9, 17, 63, 64, 65, 70, 200, 1024, 1025};
  uint64_t s = 0x9e3779b97f4a7c15u;
  size_t si;
  unsigned e;
  int shape;
  for(si=0; si<sizeof(sizes)/sizeof(sizes[0]); si++){
    size_t n = sizes[si], from, to;
    uint64_t *v = malloc((n+1)*sizeof(uint64_t)), *full = malloc((n+1)*sizeof(uint64_t));
    uint64_t *out = malloc((n+1)*sizeof(uint64_t));
    uint8_t *chunk = malloc(11*(n+2) + 32);
    for(e=0; e<NENC; e++){
      int enc = encodings[e];
      if( enc==FNT_ENC_DELTA_BP && n==0 ) continue;    /* needs a first value */
      for(shape=0; shape<NSHAPES; shape++){
        size_t len;
        values(shape, enc, v, n, &s);
        len = encode(enc, v, n, chunk);
        CHECK_EQ_INT(fnt_decode_ints(enc, chunk, len, n, n+1, full), 0);
        for(from=0; from<n; from++){
          if( full[from]!=v[from] ){ CHECK_EQ_INT(full[from], v[from]); break; }
        }
        if( n<=70 ){
          for(from=0; from<=n; from++){
            for(to=from; to<=n; to++) checkRange(enc, chunk, len, n, v, from, to, out);
          }
        }else{
          int k;
          for(k=0; k<300; k++){
            from = (size_t)(rnd(&s) % (n+1));
            to = from + (size_t)(rnd(&s) % (n - from + 1));
            checkRange(enc, chunk, len, n, v, from, to, out);
          }
          checkRange(enc, chunk, len, n, v, n-1, n, out);
        }
        checkCursor(enc, chunk, len, n, v, &s, out);
        checkMalformed(enc, chunk, len, n, out);
      }
    }
    free(v); free(full); free(out); free(chunk);
  }
}

/* fnt_bp_unpack_from at every width, start and length against the bits. */
static void testUnpackFrom(void){
  uint64_t s = 12345, v[40], got[40];
  uint8_t packed[40*8 + 16];
  unsigned w;
  size_t n = 40, from, k, i;
  for(w=0; w<=64; w++){
    size_t len = 0;
    for(i=0; i<n; i++) v[i] = w==64 ? rnd(&s) : rnd(&s) & ((UINT64_C(1)<<w) - 1);
    putPacked(packed, &len, v, n, w);
    for(from=0; from<=n; from++){
      for(k=0; from+k<=n; k++){
        fnt_bp_unpack_from(packed, n, w, from, got, k);
        for(i=0; i<k; i++){
          if( got[i]!=v[from+i] ){
            fprintf(stderr, "width %u, values [%zu, %zu): value %zu wrong\n", w, from, from+k, from+i);
            t_failures++;
            break;
          }
        }
      }
    }
  }
}

/* The writer's varints (fnt_put_varint, word at a time below 2^56) equal
** the reference's bytes: every bit length, its neighbours, random values,
** one after another into a buffer that grows as they come. */
static void testPutVarint(void){
  fnt_buf b = {0};
  uint8_t want[11*1200];
  size_t wlen = 0, i;
  uint64_t s = 7;
  unsigned bits;
  for(bits=0; bits<=64; bits++){
    uint64_t v = bits==0 ? 0 : bits==64 ? UINT64_MAX : (UINT64_C(1) << bits);
    uint64_t x[3] = { v, v - (v!=0), v + (bits<64) };
    for(i=0; i<3; i++){
      putVarint(want, &wlen, x[i]);
      fnt_put_varint(&b, x[i]);
    }
  }
  for(i=0; i<1000; i++){
    uint64_t v = rnd(&s) >> (rnd(&s) % 64);
    putVarint(want, &wlen, v);
    fnt_put_varint(&b, v);
  }
  CHECK(!b.failed && b.len==wlen && memcmp(b.data, want, wlen)==0);
  fnt_buf_free(&b);
}

int main(void){
  testPutVarint();
  testUnpackFrom();
  testEncodings();
  return t_finish("test_ints_range");
}
