/*
** ints.c -- integer column chunks (FORMAT.md, "Encodings": DELTA_BP, the
** *_BP dictionary indexes, PLAIN_INT, DELTA_VARINT) read through a cursor.
**
** A window or an instant needs a few rows of a row group: the cursor skips
** the rows before them as cheaply as their encoding lets it (bit-packed
** rows in O(1), varints by counting their last bytes, deltas by summing
** them without storing) and decodes only the rows asked for.
*/
#include <string.h>

#include "segment.h"

#define VARINT_LAST_BYTES UINT64_C(0x8080808080808080)

/* How many of the eight bytes of w end a varint (high bit clear). */
static inline size_t lastBytes(uint64_t w){
  uint64_t t = (~w & VARINT_LAST_BYTES) >> 7;    /* 0 or 1 per byte */
  return (size_t)((t * UINT64_C(0x0101010101010101)) >> 56);
}

/* The varint at *pp, ten bytes (the longest) or more before the end, so
** read without a bound check a byte.  @return 0, or -1 when longer. */
static inline int varintUnchecked(const uint8_t **pp, uint64_t *out){
  const uint8_t *p = *pp;
  uint64_t v = *p++;
  if( v>=0x80 ){
    unsigned shift = 7;
    uint64_t c;
    v &= 0x7f;
    do{
      c = *p++;
      v |= (c & 0x7f) << shift;
      shift += 7;
    }while( (c & 0x80) && shift<70 );
    if( c & 0x80 ) return -1;
  }
  *pp = p;
  *out = v;
  return 0;
}

/* The varint at *pp, before `end`.  @return 0, or -1 when malformed.
** Loops keep the position in a local (through pp): written back to the
** cursor each varint, it was read back as a stalled 16-byte load. */
static inline int varintNext(const uint8_t **pp, const uint8_t *end, uint64_t *out){
  fnt_rd r;
  if( end - *pp >= 10 ) return varintUnchecked(pp, out);
  r.p = *pp; r.end = end; r.ok = 1;
  *out = fnt_get_varint(&r);
  *pp = r.p;
  return r.ok ? 0 : -1;
}

/* k varints into out[0..k), as fnt_get_varint reads them. */
static int getVarints(fnt_ints *c, size_t k, uint64_t *out){
  const uint8_t *p = c->p, *end = c->end;
  size_t i;
  for(i=0; i<k; i++){
    unsigned n = end - p >= 8 ? fnt_varint_word(p, &out[i]) : 0;
    if( n ) p += n;
    else if( varintNext(&p, end, &out[i]) ) return -1;
  }
  c->p = p;
  return 0;
}

/* Moves past k varints: whole words while they hold fewer than k last
** bytes (a word's trailing continuation bytes then belong to a varint
** skipped too), the rest a byte at a time. */
static int skipVarints(fnt_ints *c, size_t k){
  const uint8_t *p = c->p, *end = c->end;
  while( k>0 && end - p >= 8 ){
    uint64_t w;
    size_t last;
    memcpy(&w, p, 8);
    last = lastBytes(w);
    if( last>=k ) break;
    k -= last;
    p += 8;
  }
  for(; k>0 && p<end; p++) k -= (*p & 0x80)==0;
  c->p = p;
  return k==0 ? 0 : -1;
}

/* Moves past k zigzag deltas, adding them to c->prev: eight one-byte
** deltas (a depth's, a call_id's) at a time where they come in a row. */
static int skipDeltaVarints(fnt_ints *c, size_t k){
  const uint8_t *p = c->p, *end = c->end;
  uint64_t v = c->prev, x = 0;
  int rc = 0;
  while( k>0 && rc==0 ){
    if( k>=8 && end - p >= 8 ){
      uint64_t w;
      memcpy(&w, p, 8);
      if( (w & VARINT_LAST_BYTES)==0 ){
        int j;
        for(j=0; j<8; j++, w >>= 8){
          uint64_t b = w & 0xff;
          v += (b >> 1) ^ (uint64_t)-(int64_t)(b & 1);
        }
        p += 8;
        k -= 8;
        continue;
      }
    }
    rc = varintNext(&p, end, &x);
    v += (uint64_t)fnt_unzigzag(x);
    k--;
  }
  c->p = p;
  c->prev = v;
  return rc;
}

int fnt_ints_init(fnt_ints *c, int encoding, const uint8_t *p, size_t len,
                  size_t n, uint64_t limit){
  fnt_rd r;
  memset(c, 0, sizeof(*c));
  c->encoding = encoding;
  c->n = n;
  c->limit = limit;
  r.p = p; r.end = p+len; r.ok = 1;
  switch( encoding ){
    case FNT_ENC_PLAIN_INT:
    case FNT_ENC_DELTA_VARINT:
      break;
    case FNT_ENC_DELTA_BP:
      c->first = (uint64_t)fnt_unzigzag(fnt_get_varint(&r));
      c->min_delta = (uint64_t)fnt_unzigzag(fnt_get_varint(&r));
      c->width = fnt_get_u8(&r);
      if( !r.ok || c->width>64 || n==0 ) return -1;
      if( fnt_bp_size(n-1, c->width)!=(size_t)(r.end - r.p) ) return -1;
      break;
    case FNT_ENC_THREAD_BP:
    case FNT_ENC_FUNC_BP:
    case FNT_ENC_KIND_BP:
      c->width = fnt_get_u8(&r);
      if( !r.ok || c->width>64 ) return -1;
      if( fnt_bp_size(n, c->width)!=(size_t)(r.end - r.p) ) return -1;
      break;
    default:
      return -1;
  }
  c->base = c->p = r.p;
  c->end = r.end;
  return 0;
}

int fnt_ints_seek(fnt_ints *c, size_t row, size_t off, uint64_t value){
  uint64_t d;
  const uint8_t *p;
  if( row>=c->n ) return -1;
  switch( c->encoding ){
    case FNT_ENC_PLAIN_INT:
    case FNT_ENC_DELTA_VARINT:
      if( off>=(size_t)(c->end - c->base) ) return -1;
      p = c->base + off;
      if( c->encoding==FNT_ENC_DELTA_VARINT ){
        /* The row before is the value less the row's own delta. */
        const uint8_t *q = p;
        if( varintNext(&q, c->end, &d) ) return -1;
        c->prev = value - (uint64_t)fnt_unzigzag(d);
      }
      c->p = p;
      break;
    case FNT_ENC_THREAD_BP:
    case FNT_ENC_FUNC_BP:
    case FNT_ENC_KIND_BP:
      break;
    default:
      return -1;                       /* DELTA_BP: only by summing */
  }
  c->pos = row;
  return 0;
}

int fnt_ints_skip(fnt_ints *c, size_t k){
  uint64_t buf[256];
  if( k>c->n - c->pos ) return -1;
  switch( c->encoding ){
    case FNT_ENC_PLAIN_INT:
      if( skipVarints(c, k) ) return -1;
      break;
    case FNT_ENC_DELTA_VARINT:
      if( skipDeltaVarints(c, k) ) return -1;
      break;
    case FNT_ENC_DELTA_BP:
      /* Row r > 0 adds packed value r-1 to row r-1's value. */
      if( k>0 && c->pos==0 ){ c->prev = c->first; c->pos++; k--; }
      while( k>0 ){
        size_t m = k<256 ? k : 256, i;
        fnt_bp_unpack_from(c->p, c->n-1, c->width, c->pos-1, buf, m);
        for(i=0; i<m; i++) c->prev += buf[i] + c->min_delta;
        c->pos += m;
        k -= m;
      }
      return 0;
    default:
      break;
  }
  c->pos += k;
  return 0;
}

int fnt_ints_read(fnt_ints *c, size_t k, uint64_t *out){
  size_t i, j = 0;
  if( k>c->n - c->pos ) return -1;
  switch( c->encoding ){
    case FNT_ENC_PLAIN_INT:
      if( getVarints(c, k, out) ) return -1;
      break;
    case FNT_ENC_DELTA_VARINT: {
      uint64_t v = c->prev;
      if( getVarints(c, k, out) ) return -1;
      for(i=0; i<k; i++){
        v += (uint64_t)fnt_unzigzag(out[i]);
        out[i] = v;
      }
      c->prev = v;
      break;
    }
    case FNT_ENC_DELTA_BP: {
      uint64_t v;
      if( k>0 && c->pos==0 ){ out[0] = c->prev = c->first; c->pos++; j = 1; }
      if( k>j ) fnt_bp_unpack_from(c->p, c->n-1, c->width, c->pos-1, out+j, k-j);
      for(v=c->prev, i=j; i<k; i++){
        v += out[i] + c->min_delta;
        out[i] = v;
      }
      c->prev = v;
      c->pos += k-j;
      return 0;
    }
    default:         /* dictionary indexes (and kinds) */
      fnt_bp_unpack_from(c->p, c->n, c->width, c->pos, out, k);
      for(i=0; i<k; i++) if( out[i]>=c->limit ) return -1;
      break;
  }
  c->pos += k;
  return 0;
}

int fnt_ints_read_many(fnt_ints *const *c, int nc, size_t k,
                       uint64_t *const *out){
  const uint8_t *p[4], *end[4];
  uint64_t prev[4], *o[4];
  int delta[4], nv = 0, j;
  size_t i;
  for(j=0; j<nc; j++){
    int e = c[j]->encoding;
    if( k>c[j]->n - c[j]->pos ) return -1;
    if( nv==4 || (e!=FNT_ENC_PLAIN_INT && e!=FNT_ENC_DELTA_VARINT) ){
      if( fnt_ints_read(c[j], k, out[j]) ) return -1;
      continue;
    }
    p[nv] = c[j]->p; end[nv] = c[j]->end; prev[nv] = c[j]->prev;
    delta[nv] = e==FNT_ENC_DELTA_VARINT;
    o[nv++] = out[j];
  }
  /* Row by row across the columns: each column's next varint waits for
  ** the length of the one before, the columns do not wait for each other. */
  for(i=0; i<k; i++){
    for(j=0; j<nv; j++){
      uint64_t v;
      unsigned len = end[j] - p[j] >= 8 ? fnt_varint_word(p[j], &v) : 0;
      if( len ) p[j] += len;
      else if( varintNext(&p[j], end[j], &v) ) return -1;
      if( delta[j] ) v = prev[j] += (uint64_t)fnt_unzigzag(v);
      o[j][i] = v;
    }
  }
  for(j=nv=0; j<nc; j++){
    int e = c[j]->encoding;
    if( nv==4 || (e!=FNT_ENC_PLAIN_INT && e!=FNT_ENC_DELTA_VARINT) ) continue;
    c[j]->p = p[nv];
    c[j]->prev = prev[nv++];
    c[j]->pos += k;
  }
  return 0;
}

int fnt_ints_finish(fnt_ints *c){
  const uint8_t *p;
  size_t last = 0;
  if( c->encoding!=FNT_ENC_PLAIN_INT && c->encoding!=FNT_ENC_DELTA_VARINT ){
    return 0;                        /* sized exactly by fnt_ints_init */
  }
  /* The rows left are exactly the varints left: as many last bytes, the
  ** final byte one of them. */
  for(p=c->p; c->end - p >= 8; p += 8){
    uint64_t w;
    memcpy(&w, p, 8);
    last += lastBytes(w);
  }
  for(; p<c->end; p++) last += (*p & 0x80)==0;
  if( last!=c->n - c->pos || (c->p<c->end && (c->end[-1] & 0x80)) ) return -1;
  return 0;
}

int fnt_decode_ints_range(int encoding, const uint8_t *p, size_t len, size_t n,
                          uint64_t limit, size_t from, size_t to, uint64_t *out){
  fnt_ints c;
  if( from>to || to>n ) return -1;
  if( fnt_ints_init(&c, encoding, p, len, n, limit)
   || fnt_ints_skip(&c, from)
   || fnt_ints_read(&c, to-from, out+from) ){
    return -1;
  }
  return fnt_ints_finish(&c);
}

int fnt_decode_ints(int encoding, const uint8_t *p, size_t len, size_t n,
                    uint64_t limit, uint64_t *out){
  return fnt_decode_ints_range(encoding, p, len, n, limit, 0, n, out);
}
