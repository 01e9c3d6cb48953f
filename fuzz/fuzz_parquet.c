/*
** fuzz_parquet.c -- the Parquet writer (tools/parquet_write.c) over any
** schema and values, and a check of what it wrote.
**
** Input: byte 0: bits 0-2 the column count - 1 (1..8), bit 3 bulk appends
** (pq_ints / pq_text_ids) instead of row by row, bit 4 a 65,536-row group
** instead of byte 1 + 1 (1..256) rows; byte 1: the row-group size; then a
** byte per column: bit 0 text, bit 1 nullable.  Then rows until the input
** ends, per column a control byte: bit 0 NULL (a nullable column; not for
** bulk integers), else an integer's 8 bytes follow, or a text of
** (control >> 2) bytes.
**
** The written file is then read back: both magics and the footer length,
** the footer as well-formed thrift compact protocol whose num_rows is the
** rows written, and every page from the first byte to the footer: its
** header well-formed, its zstd body decompressing to exactly its
** uncompressed size, and the data pages' values adding up to rows x
** columns.  A mismatch aborts.
*/
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <zstd.h>

#include "parquet_write.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerInitialize(int *argc, char ***argv);

int LLVMFuzzerInitialize(int *argc, char ***argv){ (void)argc; (void)argv; return 0; }

typedef struct mem { uint8_t *p; size_t n, cap; } mem;

static int sinkMem(void *ctx, const void *p, size_t n){
  mem *m = ctx;
  if( m->n + n > m->cap ){
    size_t cap = m->cap ? m->cap : 4096;
    uint8_t *np;
    while( cap < m->n + n ) cap *= 2;
    if( (np = realloc(m->p, cap))==0 ) return -1;
    m->p = np; m->cap = cap;
  }
  memcpy(m->p + m->n, p, n);
  m->n += n;
  return 0;
}

/* ---- a thrift compact protocol walker ------------------------------------ */
typedef struct rd { const uint8_t *p, *end; } rd;

static uint64_t varint(rd *r){
  uint64_t v = 0;
  int s = 0;
  for(;;){
    if( r->p>=r->end || s>63 ) abort();
    v |= (uint64_t)(*r->p & 0x7f) << s;
    if( (*r->p++ & 0x80)==0 ) return v;
    s += 7;
  }
}
static int64_t zigzag(rd *r){ uint64_t v = varint(r); return (int64_t)(v>>1) ^ -(int64_t)(v&1); }

/* What the walker keeps: integer fields of the top-level struct, and field
** 1 of a struct in field 5 or 7 (a page header's num_values). */
typedef struct found { int64_t top[16]; int64_t nested; } found;

static void walkStruct(rd *r, int depth, int parent, found *f);

static void walkValue(rd *r, int type, int depth, int parent, int id, found *f){
  int64_t v;
  if( depth>16 ) abort();
  switch( type ){
    case 1: case 2: return;                          /* bool in the field header */
    case 3: if( r->p>=r->end ) abort(); r->p++; return;
    case 4: case 5: case 6:
      v = zigzag(r);
      if( depth==0 && id>=0 && id<16 ) f->top[id] = v;
      if( depth==1 && (parent==5 || parent==7) && id==1 ) f->nested = v;
      return;
    case 7: if( r->end - r->p < 8 ) abort(); r->p += 8; return;
    case 8: {
      uint64_t n = varint(r);
      if( n > (uint64_t)(r->end - r->p) ) abort();
      r->p += n;
      return;
    }
    case 9: case 10: {
      uint8_t h;
      uint64_t n, i;
      if( r->p>=r->end ) abort();
      h = *r->p++;
      n = h>>4;
      if( n==15 ) n = varint(r);
      if( n > (uint64_t)(r->end - r->p) ) abort();   /* every element takes a byte */
      for(i=0; i<n; i++) walkValue(r, h & 15, depth+1, id, -1, f);
      return;
    }
    case 12: walkStruct(r, depth+1, id, f); return;
    default: abort();                                /* maps are never written */
  }
}

static void walkStruct(rd *r, int depth, int parent, found *f){
  int last = 0;
  for(;;){
    uint8_t h;
    int id, type;
    if( r->p>=r->end ) abort();
    h = *r->p++;
    if( h==0 ) return;
    type = h & 15;
    id = (h>>4) ? last + (h>>4) : (int)zigzag(r);
    last = id;
    walkValue(r, type, depth, parent, id, f);
  }
}

/* ---- the check ------------------------------------------------------------ */
static void checkFile(const mem *m, uint64_t rows, int ncol){
  uint32_t flen;
  const uint8_t *foot;
  rd r;
  found f;
  uint64_t values = 0;
  if( m->n < 12 || memcmp(m->p, "PAR1", 4) || memcmp(m->p + m->n - 4, "PAR1", 4) ) abort();
  memcpy(&flen, m->p + m->n - 8, 4);                  /* little-endian machines */
  if( flen > m->n - 12 ) abort();
  foot = m->p + m->n - 8 - flen;
  memset(&f, 0, sizeof f);
  r.p = foot; r.end = foot + flen;
  walkStruct(&r, 0, 0, &f);
  if( r.p!=r.end || f.top[3]!=(int64_t)rows ) abort();
  /* The pages, back to back from byte 4 to the footer. */
  r.p = m->p + 4;
  while( r.p < foot ){
    size_t got;
    void *out;
    memset(&f, 0, sizeof f);
    r.end = foot;
    walkStruct(&r, 0, 0, &f);
    if( f.top[3]<0 || f.top[3] > foot - r.p || f.top[2]<0 ) abort();
    out = malloc((size_t)f.top[2] + 1);
    if( out==0 ) abort();
    got = ZSTD_decompress(out, (size_t)f.top[2] + 1, r.p, (size_t)f.top[3]);
    free(out);
    if( ZSTD_isError(got) || got!=(size_t)f.top[2] ) abort();
    if( f.top[1]==0 ) values += (uint64_t)f.nested;   /* a data page */
    r.p += f.top[3];
  }
  if( values != rows*(uint64_t)ncol ) abort();
}

#define MAXCOL 8
#define BULK 16

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size){
  pq_column cols[MAXCOL];
  int ncol, c, bulk;
  size_t i = 0, group, k, nb = 0;
  mem m = {0, 0, 0};
  pq_writer *w;
  uint64_t fsize;
  int64_t vals[MAXCOL][BULK];
  static const char *names[MAXCOL] = {"a", "b", "c", "d", "e", "f", "g", "h"};
  if( size<2 ) return 0;
  ncol = (data[0] & 7) + 1;
  bulk = (data[0] >> 3) & 1;
  group = (data[0] & 16) ? 65536 : (size_t)data[1] + 1;
  i = 2;
  if( size < i + (size_t)ncol ) return 0;
  for(c=0; c<ncol; c++, i++){
    cols[c].name = names[c];
    cols[c].type = (data[i] & 1) ? PQ_TEXT : PQ_INT64;
    cols[c].nullable = (data[i] >> 1) & 1;
    cols[c].field_id = c + 1;
  }
  w = pq_writer_new(cols, ncol, group, 1, sinkMem, &m, 0);
  if( w==0 ) abort();
  while( i<size && pq_rows(w) + nb < 200000 ){
    for(c=0; c<ncol; c++){
      uint8_t ctl = i<size ? data[i++] : 0;
      int64_t id = -1, v = 0;
      /* (Bulk integers have no NULL: pq_ints takes values only.) */
      if( cols[c].nullable && (ctl & 1) && !(bulk && cols[c].type==PQ_INT64) ){
        if( !bulk && pq_null(w, c) ) abort();
      }else if( cols[c].type==PQ_INT64 ){
        for(k=0; k<8; k++) v |= (int64_t)((uint64_t)(i<size ? data[i++] : 0) << 8*k);
        id = v;
        if( !bulk && pq_int(w, c, v) ) abort();
      }else{
        size_t n = ctl>>2;
        if( n > size-i ) n = size-i;
        if( bulk ) id = pq_intern(w, c, (const char*)data+i, n);
        else if( pq_text(w, c, (const char*)data+i, n) ) abort();
        if( bulk && id<0 ) abort();
        i += n;
      }
      vals[c][nb] = id;
    }
    if( !bulk ){
      if( pq_end_row(w) ) abort();
      continue;
    }
    /* Bulk: rows gather until BULK or the row group's room; ids interned
    ** for them stay valid until pq_end_rows (the only dictionary reset). */
    if( ++nb==BULK || nb==pq_room(w) ){
      for(c=0; c<ncol; c++){
        int rc = cols[c].type==PQ_TEXT ? pq_text_ids(w, c, vals[c], nb) : pq_ints(w, c, vals[c], nb);
        if( rc ) abort();
      }
      if( pq_end_rows(w, nb) ) abort();
      nb = 0;
    }
  }
  if( nb ){
    for(c=0; c<ncol; c++){
      int rc = cols[c].type==PQ_TEXT ? pq_text_ids(w, c, vals[c], nb) : pq_ints(w, c, vals[c], nb);
      if( rc ) abort();
    }
    if( pq_end_rows(w, nb) ) abort();
  }
  if( pq_finish(w, &fsize) || fsize!=m.n ) abort();
  checkFile(&m, pq_rows(w), ncol);
  pq_writer_free(w);
  free(m.p);
  return 0;
}
