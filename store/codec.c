/*
** codec.c -- the byte-level encodings of the store: varints, bit-packing,
** checksums and the zstd column-chunk codec.  FORMAT.md describes each.
*/
#include <errno.h>
#include <string.h>
#include <xxhash.h>
#include <zstd.h>

#include "internal.h"

/* fnt_put_varint (internal.h) when the buffer may need to grow. */
void fnt_put_varint_grow(fnt_buf *b, uint64_t v){
  uint8_t tmp[10];
  size_t n = 0;
  while( v>=0x80 ){
    tmp[n++] = (uint8_t)(v | 0x80);
    v >>= 7;
  }
  tmp[n++] = (uint8_t)v;
  fnt_buf_append(b, tmp, n);
}

void fnt_put_u8(fnt_buf *b, uint8_t v){ fnt_buf_append(b, &v, 1); }

void fnt_put_u64le(fnt_buf *b, uint64_t v){
  uint8_t tmp[8];
  int i;
  for(i=0; i<8; i++) tmp[i] = (uint8_t)(v >> (8*i));
  fnt_buf_append(b, tmp, 8);
}

void fnt_put_str(fnt_buf *b, const char *s){
  if( s==0 ){
    fnt_put_varint(b, 0);
  }else{
    size_t n = strlen(s);
    fnt_put_varint(b, (uint64_t)n + 1);
    fnt_buf_append(b, s, n);
  }
}

uint64_t fnt_get_varint(fnt_rd *r){
  uint64_t v = 0;
  unsigned shift = 0, n;
  if( r->ok && r->end - r->p >= 8 && (n = fnt_varint_word(r->p, &v))!=0 ){
    r->p += n;
    return v;
  }
  while( r->ok ){
    uint8_t c;
    if( r->p>=r->end || shift>63 ){ r->ok = 0; break; }
    c = *r->p++;
    v |= (uint64_t)(c & 0x7f) << shift;
    if( (c & 0x80)==0 ) return v;
    shift += 7;
  }
  return 0;
}

uint8_t fnt_get_u8(fnt_rd *r){
  if( !r->ok || r->p>=r->end ){ r->ok = 0; return 0; }
  return *r->p++;
}

uint64_t fnt_get_u64le(fnt_rd *r){
  uint64_t v = 0;
  int i;
  if( !r->ok || r->end - r->p < 8 ){ r->ok = 0; return 0; }
  for(i=0; i<8; i++) v |= (uint64_t)r->p[i] << (8*i);
  r->p += 8;
  return v;
}

char *fnt_get_str(fnt_rd *r, int *isnull){
  return fnt_get_str_after(r, 0, isnull);
}

const uint8_t *fnt_get_str_span(fnt_rd *r, size_t *len, int *isnull){
  uint64_t n = fnt_get_varint(r);
  const uint8_t *p;
  *isnull = 0;
  *len = 0;
  if( !r->ok ) return 0;
  if( n==0 ){ *isnull = 1; return 0; }
  n--;
  if( (uint64_t)(r->end - r->p) < n || memchr(r->p, 0, (size_t)n) ){
    r->ok = 0;
    return 0;
  }
  p = r->p;
  r->p += n;
  *len = (size_t)n;
  return p;
}

char *fnt_get_str_after(fnt_rd *r, size_t head, int *isnull){
  size_t n;
  const uint8_t *p = fnt_get_str_span(r, &n, isnull);
  char *s;
  if( p==0 ) return 0;
  s = fnt_malloc(head + n + 1);
  /* errno tells decoders "no memory" from "malformed" (as io.c does). */
  if( s==0 ){ r->ok = 0; errno = ENOMEM; return 0; }
  s += head;
  memcpy(s, p, n);
  s[n] = 0;
  return s;
}

unsigned fnt_bits_needed(uint64_t maxv){
  unsigned w = 0;
  while( maxv ){ w++; maxv >>= 1; }
  return w;
}

size_t fnt_bp_size(size_t n, unsigned width){
  return (size_t)(((uint64_t)n * width + 7) / 8);
}

void fnt_bp_pack(uint8_t *out, const uint64_t *v, size_t n, unsigned width){
  uint64_t acc = 0;
  unsigned bits = 0;
  size_t i;
  if( width==0 ) return;
  for(i=0; i<n; i++){
    uint64_t x = width==64 ? v[i] : (v[i] & ((UINT64_C(1)<<width)-1));
    acc |= x << bits;
    if( bits + width >= 64 ){
      unsigned used = 64 - bits;           /* bits of x that fit */
      memcpy(out, &acc, 8);                /* little-endian machines only; */
      out += 8;                            /* FORMAT.md fixes LE order */
      acc = used==64 ? 0 : x >> used;
      bits = bits + width - 64;
    }else{
      bits += width;
    }
  }
  while( bits>0 ){
    *out++ = (uint8_t)acc;
    acc >>= 8;
    bits = bits>8 ? bits-8 : 0;
  }
}

void fnt_bp_unpack(const uint8_t *in, uint64_t *v, size_t n, unsigned width){
  fnt_bp_unpack_from(in, n, width, 0, v, n);
}

void fnt_bp_unpack_from(const uint8_t *in, size_t total, unsigned width,
                        size_t from, uint64_t *v, size_t n){
  size_t i = 0;
  uint64_t bitpos = (uint64_t)from * width;
  uint64_t mask = width==64 ? ~UINT64_C(0) : ((UINT64_C(1)<<width)-1);
  size_t bytes = fnt_bp_size(total, width);
  if( width==0 ){
    memset(v, 0, n*sizeof(*v));
    return;
  }
  if( width<=56 && bytes>=8 ){
    /* The hot loop: one unaligned 8-byte load per value holds all of it
    ** (shift <= 7, width <= 56), as long as 8 bytes remain; the last few
    ** values go through the careful loop below. */
    size_t nFast = ((bytes - 8)*8)/width + 1;   /* values starting <= bytes-8 */
    nFast = nFast>from ? nFast - from : 0;
    if( nFast>n ) nFast = n;
    for(; i<nFast; i++, bitpos += width){
      uint64_t lo;
      memcpy(&lo, in + (bitpos >> 3), 8);       /* little-endian (FORMAT.md) */
      v[i] = (lo >> (bitpos & 7)) & mask;
    }
  }
  for(; i<n; i++, bitpos += width){
    size_t byte = (size_t)(bitpos >> 3);
    unsigned shift = (unsigned)(bitpos & 7);
    uint64_t lo = 0, x;
    size_t avail = bytes - byte;
    if( avail>=8 ){
      memcpy(&lo, in+byte, 8);
    }else{
      memcpy(&lo, in+byte, avail);
    }
    x = lo >> shift;
    if( shift + width > 64 ){
      uint8_t hi = in[byte+8];
      x |= (uint64_t)hi << (64 - shift);
    }
    v[i] = x & mask;
  }
}

uint64_t fnt_hash(const void *p, size_t n){
  return XXH3_64bits(p, n);
}

int fnt_cmp_u64(const void *a, const void *b){
  uint64_t x = *(const uint64_t*)a, y = *(const uint64_t*)b;
  return x<y ? -1 : x>y;
}

void fnt_hash128(const void *p, size_t n, uint64_t out[2]){
  XXH128_hash_t h = XXH3_128bits(p, n);
  out[0] = h.low64;
  out[1] = h.high64;
}

int fnt_block_compress(ZSTD_CCtx *zc, const uint8_t *raw, size_t n,
                       fnt_buf *out, int level, unsigned min_saving){
  size_t bound = ZSTD_compressBound(n), z;
  size_t start = out->len;
  if( fnt_buf_reserve(out, bound > n ? bound : n) ) return -1;
  if( n >= FNT_ZSTD_MIN && level>=0 ){
    z = zc ? ZSTD_compressCCtx(zc, out->data + start, bound, raw, n, level)
           : ZSTD_compress(out->data + start, bound, raw, n, level);
    /* Keep raw unless zstd saves min_saving percent: decoding costs
    ** more than the few bytes a poorer ratio saves. */
    if( !ZSTD_isError(z) && z < n - n*min_saving/100 ){
      out->len = start + z;
      return FNT_CODEC_ZSTD;
    }
  }
  memcpy(out->data + start, raw, n);
  out->len = start + n;
  return FNT_CODEC_RAW;
}

int fnt_block_decompress(void **dctx, int codec, const uint8_t *src,
                         size_t n, uint8_t *dst, size_t raw_len){
  if( codec==FNT_CODEC_RAW ){
    if( n!=raw_len ) return -1;
    if( n ) memcpy(dst, src, n);   /* an empty chunk's buffer may be NULL */
    return 0;
  }
  if( codec==FNT_CODEC_ZSTD ){
    size_t z;
    if( *dctx==0 ) *dctx = ZSTD_createDCtx();
    z = *dctx ? ZSTD_decompressDCtx(*dctx, dst, raw_len, src, n)
              : ZSTD_decompress(dst, raw_len, src, n);
    return ZSTD_isError(z) || z!=raw_len ? -1 : 0;
  }
  return -1;
}

void fnt_block_ctx_free(void **dctx){
  ZSTD_freeDCtx(*dctx);
  *dctx = 0;
}
