/*
** parquet_write.c -- the Parquet writer of parquet_write.h.
**
** File layout (Apache Parquet format 2.x):
**   "PAR1" | per row group, per column: [dictionary page] data page... |
**   FileMetaData (thrift compact protocol) | u32le footer length | "PAR1"
** Each page is a thrift PageHeader followed by its zstd-compressed body.
** A data page (v1) body is the definition levels (OPTIONAL columns: u32le
** length + RLE/bit-packed hybrid, bit width 1), then the non-null values:
** DELTA_BINARY_PACKED for integers (blocks of 128 deltas in 4 miniblocks:
** sequence numbers and clocks shrink to a few bits a value before zstd
** sees them); for text, one byte of bit width and the hybrid-encoded
** dictionary indexes (RLE_DICTIONARY), the dictionary page holding the
** distinct strings PLAIN (u32le length + bytes).  Bit-packing is the
** store's (codec.c): the same little-endian bit order as Parquet's.
** Statistics are exact: min_value/max_value (integers as 8 bytes
** little-endian, text as its bytes, compared unsigned), null_count.
*/
#include <stdlib.h>
#include <string.h>
#include <xxhash.h>
#include <zstd.h>

#include "internal.h"      /* fnt_buf, fnt_bp_pack, fnt_zigzag, FNT_VERSION_STRING */
#include "parquet_write.h"

#define DICT_RESET    (16u*1024u*1024u)     /* dictionary bytes that start a new one */
#define STR_MAX       0x7fffffffu

/* ---- byte buffers: the store's fnt_buf (internal.h) ---------------------- */
static void bufLe(fnt_buf *b, uint64_t v, int bytes){
  uint8_t t[8];
  int i;
  for(i=0; i<bytes; i++) t[i] = (uint8_t)(v >> (8*i));
  fnt_buf_append(b, t, (size_t)bytes);
}

/* ---- thrift compact protocol ------------------------------------------ */
enum { T_TRUE = 1, T_FALSE = 2, T_I32 = 5, T_I64 = 6, T_BINARY = 8,
       T_LIST = 9, T_STRUCT = 12 };

typedef struct thrift { fnt_buf *b; int16_t last[16]; int depth; } thrift;

static void tField(thrift *t, int type, int16_t id){
  int d = id - t->last[t->depth];
  if( d>0 && d<=15 ) fnt_put_u8(t->b, (uint8_t)(d<<4 | type));
  else{ fnt_put_u8(t->b, (uint8_t)type); fnt_put_varint(t->b, fnt_zigzag(id)); }
  t->last[t->depth] = id;
}
static void tI32(thrift *t, int16_t id, int32_t v){ tField(t, T_I32, id); fnt_put_varint(t->b, fnt_zigzag(v)); }
static void tI64(thrift *t, int16_t id, int64_t v){ tField(t, T_I64, id); fnt_put_varint(t->b, fnt_zigzag(v)); }
static void tBin(thrift *t, int16_t id, const void *p, size_t n){
  tField(t, T_BINARY, id); fnt_put_varint(t->b, n); fnt_buf_append(t->b, p, n);
}
static void tStr(thrift *t, int16_t id, const char *s){ tBin(t, id, s, strlen(s)); }
static void tBegin(thrift *t){ t->depth++; t->last[t->depth] = 0; }   /* a struct's fields */
static void tEnd(thrift *t){ fnt_put_u8(t->b, 0); t->depth--; }
static void tStruct(thrift *t, int16_t id){ tField(t, T_STRUCT, id); tBegin(t); }
static void tList(thrift *t, int16_t id, int elem, size_t n){
  tField(t, T_LIST, id);
  if( n<15 ) fnt_put_u8(t->b, (uint8_t)(n<<4 | (size_t)elem));
  else{ fnt_put_u8(t->b, (uint8_t)(0xf0 | elem)); fnt_put_varint(t->b, n); }
}

/* Parquet enums used here. */
enum { PT_INT64 = 2, PT_BYTE_ARRAY = 6 };                /* Type */
enum { ENC_PLAIN = 0, ENC_RLE = 3, ENC_DELTA_BINARY_PACKED = 5, ENC_RLE_DICTIONARY = 8 };
enum { PAGE_DATA = 0, PAGE_DICTIONARY = 2 };
enum { CODEC_ZSTD = 6 };

/* ---- the writer --------------------------------------------------------- */
typedef struct chunk_meta {         /* one column chunk, for the footer */
  int64_t data_off, dict_off;       /* dict_off < 0: none */
  int64_t uncompressed, compressed; /* page headers included */
  int64_t values, nulls;
  int has_dict, has_stats;
  uint8_t *min, *max; size_t min_n, max_n;
} chunk_meta;

typedef struct pq_col {
  pq_column def;
  char *name;
  /* the row group being buffered */
  int64_t *ival;                    /* integers, non-null rows only */
  uint32_t *idx;                    /* text: dictionary ids, non-null rows only */
  uint8_t *defl;                    /* nullable: 1 value, 0 NULL, per row */
  size_t nval, nrow;
  size_t cap;                       /* rows the buffers hold (grow up to group_rows) */
  /* text dictionary: strings in `arena`, found through `slot` */
  char *arena; size_t arena_n, arena_cap;
  uint64_t *ent;                    /* offset << 32 | length */
  uint32_t *used;                   /* row-group stamp of the entry's last use */
  size_t nent, ent_cap;
  uint32_t *slot; size_t nslot;     /* open addressing: entry + 1, 0 = empty */
  uint32_t *remap;                  /* at a flush: entry -> index in the page's dictionary */
  uint32_t *tmp;                    /* nullable: a page's definition levels, widened */
} pq_col;

struct pq_writer {
  pq_col *col; int ncol;
  size_t group_rows, rows_in_group;
  size_t page_rows;                 /* a data page's rows: an eighth of a group, 1Ki..128Ki */
  uint64_t rows, dict_gen;
  uint32_t stamp;                   /* the row group being buffered, from 1 */
  int level;
  pq_sink sink; void *ctx;
  int64_t off;                      /* bytes written */
  ZSTD_CCtx *zc;
  fnt_buf page, zpage, hdr, foot;
  chunk_meta *meta; size_t nmeta, meta_cap;
  size_t *group_rowcount; size_t ngroups;
  int failed;
  char err[160];
};

static int fail(pq_writer *w, const char *msg){
  size_t n = strlen(msg);
  if( n >= sizeof w->err ) n = sizeof w->err - 1;
  memcpy(w->err, msg, n); w->err[n] = 0;
  w->failed = 1;
  return -1;
}

static int emit(pq_writer *w, const void *p, size_t n){
  if( n && w->sink(w->ctx, p, n) ) return fail(w, "write failed");
  w->off += (int64_t)n;
  return 0;
}

const char *pq_errmsg(const pq_writer *w){ return w ? w->err : "no writer"; }
uint64_t pq_rows(const pq_writer *w){ return w->rows; }
uint64_t pq_dict_generation(const pq_writer *w){ return w->dict_gen; }

static void colFree(pq_col *c){
  free(c->name); free(c->ival); free(c->idx); free(c->defl);
  free(c->arena); free(c->ent); free(c->used); free(c->slot); free(c->remap); free(c->tmp);
}

void pq_writer_free(pq_writer *w){
  int i;
  size_t m;
  if( w==0 ) return;
  for(i=0; i<w->ncol; i++) colFree(&w->col[i]);
  free(w->col);
  for(m=0; m<w->nmeta; m++){ free(w->meta[m].min); free(w->meta[m].max); }
  free(w->meta); free(w->group_rowcount);
  free(w->page.data); free(w->zpage.data); free(w->hdr.data); free(w->foot.data);
  ZSTD_freeCCtx(w->zc);
  free(w);
}

pq_writer *pq_writer_new(const pq_column *cols, int ncol, size_t group_rows,
                         int zstd_level, pq_sink sink, void *ctx,
                         const char **err){
  pq_writer *w;
  int i;
  const char *why = "out of memory";
  if( ncol<1 || ncol>1000 || sink==0 ){ if( err ) *err = "bad schema"; return 0; }
  for(i=0; i<ncol; i++){
    if( cols[i].name==0 || cols[i].name[0]==0
     || (cols[i].type!=PQ_INT64 && cols[i].type!=PQ_TEXT) ){
      if( err ) *err = "bad schema: a column without a name or type";
      return 0;
    }
  }
  if( group_rows==0 ) group_rows = 1u<<20;
  w = calloc(1, sizeof *w);
  if( w==0 ) goto fail;
  w->col = calloc((size_t)ncol, sizeof *w->col);
  w->zc = ZSTD_createCCtx();
  if( w->col==0 || w->zc==0 ) goto fail;
  w->ncol = ncol; w->group_rows = group_rows; w->level = zstd_level;
  w->page_rows = group_rows/8 < 1024 ? 1024 : group_rows/8 > 131072 ? 131072 : group_rows/8;
  if( w->page_rows > group_rows ) w->page_rows = group_rows;
  w->sink = sink; w->ctx = ctx; w->stamp = 1;
  for(i=0; i<ncol; i++){
    pq_col *c = &w->col[i];
    c->def = cols[i];
    c->name = strdup(cols[i].name);
    if( c->name==0 ) goto fail;
    c->def.name = c->name;
    if( c->def.nullable && (c->tmp = malloc(w->page_rows * sizeof *c->tmp))==0 ) goto fail;
  }
  if( emit(w, "PAR1", 4) ){ why = "write failed"; goto fail; }
  return w;
fail:
  if( err ) *err = why;
  pq_writer_free(w);
  return 0;
}

/* ---- text dictionaries ---------------------------------------------------- */
static uint32_t *slotOf(pq_col *c, const char *s, size_t n, uint64_t h){
  size_t mask = c->nslot - 1, i = (size_t)h & mask;
  for(;;){
    uint32_t e = c->slot[i];
    if( e==0 ) return &c->slot[i];
    e--;
    if( (uint32_t)c->ent[e]==n && memcmp(c->arena + (c->ent[e]>>32), s, n)==0 ) return &c->slot[i];
    i = (i+1) & mask;
  }
}

static int growSlots(pq_col *c){
  size_t ns = c->nslot ? c->nslot*2 : 1024, e;
  uint32_t *old = c->slot, *nw = calloc(ns, sizeof *nw);
  if( nw==0 ) return -1;
  c->slot = nw; c->nslot = ns;
  for(e=0; e<c->nent; e++){
    const char *s = c->arena + (c->ent[e]>>32);
    size_t n = (uint32_t)c->ent[e];
    *slotOf(c, s, n, XXH3_64bits(s, n)) = (uint32_t)e + 1;
  }
  free(old);
  return 0;
}

int64_t pq_intern(pq_writer *w, int col, const char *s, size_t n){
  pq_col *c;
  uint32_t *sl;
  if( w->failed || col<0 || col>=w->ncol || w->col[col].def.type!=PQ_TEXT ){
    fail(w, "pq_intern: not a text column");
    return -1;
  }
  c = &w->col[col];
  if( n > STR_MAX ){ fail(w, "a text value over 2 GB"); return -1; }
  if( (c->nent+1)*2 > c->nslot && growSlots(c) ){ fail(w, "out of memory"); return -1; }
  sl = slotOf(c, s, n, XXH3_64bits(s, n));
  if( *sl ) return *sl - 1;
  if( c->arena_n + n > UINT32_MAX ){ fail(w, "text dictionary over 4 GB"); return -1; }
  if( c->arena_n + n > c->arena_cap || c->arena==0 ){   /* "" needs an arena too */
    size_t cap = c->arena_cap ? c->arena_cap : 4096;
    char *na;
    while( cap < c->arena_n + n ) cap *= 2;
    if( (na = realloc(c->arena, cap))==0 ){ fail(w, "out of memory"); return -1; }
    c->arena = na; c->arena_cap = cap;
  }
  if( c->nent==c->ent_cap ){
    size_t cap = c->ent_cap ? c->ent_cap*2 : 256;
    uint64_t *ne = realloc(c->ent, cap * sizeof *ne);
    uint32_t *nu;
    if( ne==0 ){ fail(w, "out of memory"); return -1; }
    c->ent = ne;
    if( (nu = realloc(c->used, cap * sizeof *nu))==0 ){ fail(w, "out of memory"); return -1; }
    c->used = nu; c->ent_cap = cap;
  }
  if( n ) memcpy(c->arena + c->arena_n, s, n);
  c->ent[c->nent] = (uint64_t)c->arena_n << 32 | n;
  c->used[c->nent] = 0;
  c->arena_n += n;
  *sl = (uint32_t)++c->nent;
  return (int64_t)c->nent - 1;
}

/* ---- values ------------------------------------------------------------- */
/* Room for n more rows in c's buffers: they grow as rows come (doubling,
** up to the row-group size), so a writer of a few rows stays small. */
static int colRoom(pq_writer *w, pq_col *c, size_t n){
  size_t cap = c->cap ? c->cap : 1024;
  if( c->nrow + n <= c->cap ) return 0;
  while( cap < c->nrow + n ) cap *= 2;
  if( cap > w->group_rows ) cap = w->group_rows;
  if( c->def.type==PQ_INT64 ){
    int64_t *x = realloc(c->ival, cap * sizeof *x);
    if( x==0 ) return fail(w, "out of memory");
    c->ival = x;
  }else{
    uint32_t *x = realloc(c->idx, cap * sizeof *x);
    if( x==0 ) return fail(w, "out of memory");
    c->idx = x;
  }
  if( c->def.nullable ){
    uint8_t *x = realloc(c->defl, cap);
    if( x==0 ) return fail(w, "out of memory");
    c->defl = x;
  }
  c->cap = cap;
  return 0;
}

/* Column col, checked to take n values of type t now. */
static pq_col *valueCol(pq_writer *w, int col, pq_type t, size_t n){
  pq_col *c;
  if( w->failed ) return 0;
  if( col<0 || col>=w->ncol ){ fail(w, "no such column"); return 0; }
  c = &w->col[col];
  if( c->def.type!=t ){ fail(w, "a value of the wrong type for its column"); return 0; }
  if( c->nrow!=w->rows_in_group ){ fail(w, "two values for one column of a row"); return 0; }
  if( n > w->group_rows - w->rows_in_group ){ fail(w, "more rows than the row group has room for"); return 0; }
  return colRoom(w, c, n) ? 0 : c;
}

int pq_int(pq_writer *w, int col, int64_t v){
  pq_col *c = valueCol(w, col, PQ_INT64, 1);
  if( c==0 ) return -1;
  c->ival[c->nval++] = v;
  if( c->defl ) c->defl[c->nrow] = 1;
  c->nrow++;
  return 0;
}

int pq_text_id(pq_writer *w, int col, uint32_t id){
  pq_col *c = valueCol(w, col, PQ_TEXT, 1);
  if( c==0 ) return -1;
  if( id>=c->nent ) return fail(w, "pq_text_id: no such dictionary id");
  c->idx[c->nval++] = id;
  c->used[id] = w->stamp;
  if( c->defl ) c->defl[c->nrow] = 1;
  c->nrow++;
  return 0;
}

int pq_text(pq_writer *w, int col, const char *s, size_t n){
  int64_t id = pq_intern(w, col, s, n);
  return id<0 ? -1 : pq_text_id(w, col, (uint32_t)id);
}

int pq_null(pq_writer *w, int col){
  pq_col *c;
  if( w->failed ) return -1;
  if( col<0 || col>=w->ncol ) return fail(w, "no such column");
  c = &w->col[col];
  if( !c->def.nullable ) return fail(w, "NULL in a REQUIRED column");
  if( c->nrow!=w->rows_in_group ) return fail(w, "two values for one column of a row");
  if( colRoom(w, c, 1) ) return -1;
  c->defl[c->nrow++] = 0;
  return 0;
}

size_t pq_room(const pq_writer *w){ return w->group_rows - w->rows_in_group; }

int pq_ints(pq_writer *w, int col, const int64_t *v, size_t n){
  pq_col *c = valueCol(w, col, PQ_INT64, n);
  if( c==0 ) return -1;
  memcpy(c->ival + c->nval, v, n * sizeof *v);
  if( c->defl ) memset(c->defl + c->nrow, 1, n);
  c->nval += n;
  c->nrow += n;
  return 0;
}

int pq_text_ids(pq_writer *w, int col, const int64_t *ids, size_t n){
  pq_col *c = valueCol(w, col, PQ_TEXT, n);
  size_t i;
  if( c==0 ) return -1;
  for(i=0; i<n; i++){
    int64_t id = ids[i];
    if( id<0 ){
      if( c->defl==0 ) return fail(w, "NULL in a REQUIRED column");
      c->defl[c->nrow++] = 0;
      continue;
    }
    if( (uint64_t)id>=c->nent ) return fail(w, "pq_text_ids: no such dictionary id");
    c->idx[c->nval++] = (uint32_t)id;
    c->used[id] = w->stamp;
    if( c->defl ) c->defl[c->nrow] = 1;
    c->nrow++;
  }
  return 0;
}

/* ---- encodings -------------------------------------------------------------- */

/* The RLE / bit-packed hybrid of n values of width bw (1..32): runs of 8 or
** more equal values as RLE runs, the rest bit-packed 8 at a time (at most
** 63 groups a run; the last group padded with zeros). */
static void packGroups(fnt_buf *o, const uint32_t *v, size_t n, size_t from,
                       size_t groups, int bw){
  uint64_t t[63*8];
  size_t k, m = groups*8;
  fnt_put_varint(o, groups<<1 | 1);
  if( fnt_buf_reserve(o, groups*(size_t)bw) ) return;
  for(k=0; k<m; k++) t[k] = from+k<n ? v[from+k] : 0;
  fnt_bp_pack(o->data + o->len, t, m, (unsigned)bw);
  o->len += groups*(size_t)bw;
}

static void rleHybrid(fnt_buf *o, const uint32_t *v, size_t n, int bw){
  size_t i = 0, litFrom = 0, litGroups = 0;
  while( i<n ){
    size_t r = 1;
    uint32_t x = v[i];
    while( i+r<n && v[i+r]==x ) r++;
    if( r>=8 ){
      if( litGroups ){ packGroups(o, v, n, litFrom, litGroups, bw); litGroups = 0; }
      fnt_put_varint(o, (uint64_t)r<<1);
      bufLe(o, x, (bw+7)/8);
      i += r;
    }else{
      if( litGroups==0 ) litFrom = i;
      litGroups++;
      i += 8;
      if( litGroups==63 ){ packGroups(o, v, n, litFrom, litGroups, bw); litGroups = 0; }
    }
  }
  if( litGroups ) packGroups(o, v, n, litFrom, litGroups, bw);
}

/* Definition levels (0/1 per row) as the hybrid at bit width 1. */
static void defLevels(fnt_buf *o, const uint8_t *defl, size_t n, uint32_t *tmp){
  size_t k;
  if( memchr(defl, 0, n)==0 ){               /* no NULL: one run of 1s */
    fnt_put_varint(o, (uint64_t)n<<1);
    fnt_put_u8(o, 1);
    return;
  }
  for(k=0; k<n; k++) tmp[k] = defl[k];
  rleHybrid(o, tmp, n, 1);
}

/* DELTA_BINARY_PACKED: header (block size 128, 4 miniblocks, count, first
** value), then per block the smallest delta and 4 miniblocks of 32 deltas
** above it, each at its own bit width (deltas wrap mod 2^64, as readers
** add them). */
static void deltaPacked(fnt_buf *o, const int64_t *v, size_t n){
  uint64_t d[128];
  size_t i = 1;
  fnt_put_varint(o, 128); fnt_put_varint(o, 4); fnt_put_varint(o, n);
  fnt_put_varint(o, fnt_zigzag(n ? v[0] : 0));
  while( i<n ){
    size_t cnt = n-i < 128 ? n-i : 128, k, m;
    int64_t mind = INT64_MAX;
    uint8_t width[4];
    for(k=0; k<cnt; k++){
      d[k] = (uint64_t)v[i+k] - (uint64_t)v[i+k-1];
      if( (int64_t)d[k] < mind ) mind = (int64_t)d[k];
    }
    for(k=0; k<cnt; k++) d[k] -= (uint64_t)mind;
    for(k=cnt; k<128; k++) d[k] = 0;
    fnt_put_varint(o, fnt_zigzag(mind));
    for(m=0; m<4; m++){
      uint64_t mx = 0;
      for(k=m*32; k<m*32+32 && k<cnt; k++) mx |= d[k];
      width[m] = (uint8_t)fnt_bits_needed(mx);
    }
    fnt_buf_append(o, width, 4);
    for(m=0; m<4 && m*32<cnt; m++){
      if( fnt_buf_reserve(o, 4u*width[m]) ) return;
      fnt_bp_pack(o->data + o->len, d + m*32, 32, width[m]);
      o->len += 4u*width[m];
    }
    i += cnt;
  }
}

static int widthOf(uint32_t maxv){
  int bw = 1;
  while( bw<32 && (maxv >> bw) ) bw++;
  return bw;
}

/* Compresses w->page into a page with its header; appends both to the
** file.  Adds the sizes to m. */
static int writePage(pq_writer *w, int type, int32_t nvalues, int encoding,
                     chunk_meta *m){
  thrift t = {0};
  size_t bound = ZSTD_compressBound(w->page.len), z;
  if( w->page.failed ) return fail(w, "out of memory");
  if( w->page.len > 0x7fffffff ) return fail(w, "a page over 2 GB");
  w->zpage.len = 0;
  if( fnt_buf_reserve(&w->zpage, bound) ) return fail(w, "out of memory");
  z = ZSTD_compressCCtx(w->zc, w->zpage.data, bound, w->page.data, w->page.len, w->level);
  if( ZSTD_isError(z) ) return fail(w, "zstd failed");
  w->hdr.len = 0;
  t.b = &w->hdr;
  tI32(&t, 1, type);
  tI32(&t, 2, (int32_t)w->page.len);
  tI32(&t, 3, (int32_t)z);
  if( type==PAGE_DATA ){
    tStruct(&t, 5);
    tI32(&t, 1, nvalues);
    tI32(&t, 2, encoding);
    tI32(&t, 3, ENC_RLE);
    tI32(&t, 4, ENC_RLE);
    tEnd(&t);
  }else{
    tStruct(&t, 7);
    tI32(&t, 1, nvalues);
    tI32(&t, 2, ENC_PLAIN);
    tEnd(&t);
  }
  fnt_put_u8(&w->hdr, 0);
  if( w->hdr.failed ) return fail(w, "out of memory");
  m->uncompressed += (int64_t)(w->hdr.len + w->page.len);
  m->compressed += (int64_t)(w->hdr.len + z);
  if( emit(w, w->hdr.data, w->hdr.len) || emit(w, w->zpage.data, z) ) return -1;
  return 0;
}

static int setStat(uint8_t **dst, size_t *dn, const void *p, size_t n){
  *dst = malloc(n ? n : 1);
  if( *dst==0 ) return -1;
  if( n ) memcpy(*dst, p, n);
  *dn = n;
  return 0;
}

static int cmpBytes(const char *a, size_t an, const char *b, size_t bn){
  int c = memcmp(a, b, an<bn ? an : bn);
  return c ? c : (an<bn ? -1 : an>bn);
}

/* Writes the buffered column chunk of column c. */
static int writeChunk(pq_writer *w, pq_col *c, chunk_meta *m){
  size_t rows = c->nrow, r0, v0 = 0, e;
  uint32_t ndict = 0;
  int bw = 1, dict = 0;
  m->dict_off = -1;
  m->values = (int64_t)rows;
  m->nulls = (int64_t)(rows - c->nval);
  if( c->def.type==PQ_TEXT && c->nval ){
    /* The page's dictionary: the entries this row group used, in id order. */
    const char *lo = 0, *hi = 0;
    size_t lon = 0, hin = 0;
    if( (c->remap = realloc(c->remap, c->nent * sizeof *c->remap))==0 ) return fail(w, "out of memory");
    w->page.len = 0;
    for(e=0; e<c->nent; e++){
      const char *s = c->arena + (c->ent[e]>>32);
      size_t n = (uint32_t)c->ent[e];
      if( c->used[e]!=w->stamp ) continue;
      c->remap[e] = ndict++;
      bufLe(&w->page, n, 4);
      fnt_buf_append(&w->page, s, n);
      if( lo==0 || cmpBytes(s, n, lo, lon)<0 ){ lo = s; lon = n; }
      if( hi==0 || cmpBytes(s, n, hi, hin)>0 ){ hi = s; hin = n; }
    }
    m->dict_off = w->off;
    if( writePage(w, PAGE_DICTIONARY, (int32_t)ndict, ENC_PLAIN, m) ) return -1;
    if( setStat(&m->min, &m->min_n, lo, lon) || setStat(&m->max, &m->max_n, hi, hin) )
      return fail(w, "out of memory");
    m->has_stats = 1;
    bw = widthOf(ndict-1);
    dict = 1;
  }else if( c->def.type==PQ_INT64 && c->nval ){
    int64_t lo = c->ival[0], hi = c->ival[0];
    uint8_t b[2][8];
    int k;
    for(e=1; e<c->nval; e++){
      if( c->ival[e]<lo ) lo = c->ival[e];
      if( c->ival[e]>hi ) hi = c->ival[e];
    }
    for(k=0; k<8; k++){ b[0][k] = (uint8_t)((uint64_t)lo >> 8*k); b[1][k] = (uint8_t)((uint64_t)hi >> 8*k); }
    if( setStat(&m->min, &m->min_n, b[0], 8) || setStat(&m->max, &m->max_n, b[1], 8) )
      return fail(w, "out of memory");
    m->has_stats = 1;
  }
  m->has_dict = dict;
  m->data_off = w->off;
  for(r0=0; r0<rows; r0+=w->page_rows){
    size_t nr = rows-r0 < w->page_rows ? rows-r0 : w->page_rows, nv = nr;
    w->page.len = 0;
    if( c->defl ){
      size_t at, k;
      bufLe(&w->page, 0, 4);
      at = w->page.len;
      defLevels(&w->page, c->defl + r0, nr, c->tmp);
      if( w->page.failed ) return fail(w, "out of memory");
      for(k=0; k<4; k++) w->page.data[at-4+k] = (uint8_t)((w->page.len-at) >> 8*k);
      for(nv=0, k=r0; k<r0+nr; k++) nv += c->defl[k];
    }
    if( c->def.type==PQ_INT64 ){
      deltaPacked(&w->page, c->ival + v0, nv);
    }else if( dict ){
      size_t k;
      for(k=0; k<nv; k++) c->idx[v0+k] = c->remap[c->idx[v0+k]];
      fnt_put_u8(&w->page, (uint8_t)bw);
      rleHybrid(&w->page, c->idx + v0, nv, bw);
    }
    v0 += nv;
    if( writePage(w, PAGE_DATA, (int32_t)nr, dict ? ENC_RLE_DICTIONARY
                  : c->def.type==PQ_INT64 ? ENC_DELTA_BINARY_PACKED : ENC_PLAIN, m) ) return -1;
  }
  return 0;
}

static int flushGroup(pq_writer *w){
  int i;
  size_t *ng;
  if( w->rows_in_group==0 ) return 0;
  if( w->nmeta + (size_t)w->ncol > w->meta_cap ){
    size_t cap = (w->meta_cap ? w->meta_cap*2 : 64) + (size_t)w->ncol;
    chunk_meta *nm = realloc(w->meta, cap * sizeof *nm);
    if( nm==0 ) return fail(w, "out of memory");
    w->meta = nm; w->meta_cap = cap;
  }
  if( (ng = realloc(w->group_rowcount, (w->ngroups+1) * sizeof *ng))==0 ) return fail(w, "out of memory");
  w->group_rowcount = ng;
  for(i=0; i<w->ncol; i++){
    chunk_meta *m = &w->meta[w->nmeta++];
    memset(m, 0, sizeof *m);
    if( writeChunk(w, &w->col[i], m) ) return -1;
  }
  w->group_rowcount[w->ngroups++] = w->rows_in_group;
  for(i=0; i<w->ncol; i++){
    pq_col *c = &w->col[i];
    c->nrow = c->nval = 0;
    /* A dictionary that grew large starts again, so memory stays bounded. */
    if( c->def.type==PQ_TEXT && c->arena_n > DICT_RESET ){
      c->nent = c->arena_n = 0;
      memset(c->slot, 0, c->nslot * sizeof *c->slot);
      w->dict_gen++;
    }
  }
  w->rows_in_group = 0;
  w->stamp++;
  return 0;
}

int pq_end_rows(pq_writer *w, size_t n){
  int i;
  if( w->failed ) return -1;
  for(i=0; i<w->ncol; i++){
    if( w->col[i].nrow!=w->rows_in_group+n ) return fail(w, "a row without a value for every column");
  }
  w->rows_in_group += n;
  w->rows += n;
  if( w->rows_in_group==w->group_rows ) return flushGroup(w);
  return 0;
}

int pq_end_row(pq_writer *w){ return pq_end_rows(w, 1); }

static int64_t le64(const uint8_t *p){
  uint64_t v = 0;
  int k;
  for(k=0; k<8; k++) v |= (uint64_t)p[k] << 8*k;
  return (int64_t)v;
}

/* Orders two statistics values of column c: integers signed, text bytewise. */
static int statCmp(const pq_col *c, const uint8_t *a, size_t an, const uint8_t *b, size_t bn){
  if( c->def.type==PQ_INT64 ){
    int64_t x = le64(a), y = le64(b);
    return x<y ? -1 : x>y;
  }
  return cmpBytes((const char*)a, an, (const char*)b, bn);
}

void pq_column_stats(const pq_writer *w, int col, pq_stats *out){
  const pq_col *c = &w->col[col];
  size_t m;
  memset(out, 0, sizeof *out);
  for(m=(size_t)col; m<w->nmeta; m+=(size_t)w->ncol){
    const chunk_meta *x = &w->meta[m];
    out->values += (uint64_t)x->values;
    out->nulls += (uint64_t)x->nulls;
    if( !x->has_stats ) continue;
    if( out->min==0 || statCmp(c, x->min, x->min_n, out->min, out->min_n)<0 ){ out->min = x->min; out->min_n = x->min_n; }
    if( out->max==0 || statCmp(c, x->max, x->max_n, out->max, out->max_n)>0 ){ out->max = x->max; out->max_n = x->max_n; }
  }
}

/* ---- the footer ------------------------------------------------------------- */
static void footerSchema(thrift *t, const pq_writer *w){
  int i;
  tList(t, 2, T_STRUCT, (size_t)w->ncol + 1);
  tBegin(t);
  tStr(t, 4, "table");
  tI32(t, 5, w->ncol);
  tEnd(t);
  for(i=0; i<w->ncol; i++){
    const pq_column *d = &w->col[i].def;
    tBegin(t);
    tI32(t, 1, d->type==PQ_INT64 ? PT_INT64 : PT_BYTE_ARRAY);
    tI32(t, 3, d->nullable ? 1 : 0);
    tStr(t, 4, d->name);
    if( d->type==PQ_TEXT ) tI32(t, 6, 0);          /* converted_type UTF8 */
    tI32(t, 9, d->field_id);
    if( d->type==PQ_TEXT ){                        /* logicalType STRING */
      tStruct(t, 10); tStruct(t, 1); tEnd(t); tEnd(t);
    }
    tEnd(t);
  }
}

static void footerChunk(thrift *t, const pq_col *c, const chunk_meta *m){
  tBegin(t);
  tI64(t, 2, m->dict_off>=0 ? m->dict_off : m->data_off);
  tStruct(t, 3);
  tI32(t, 1, c->def.type==PQ_INT64 ? PT_INT64 : PT_BYTE_ARRAY);
  /* The encodings used: PLAIN (dictionary pages, or a text chunk of NULLs
  ** only), RLE (levels), and the values' own. */
  {
    int values = m->has_dict ? ENC_RLE_DICTIONARY
               : c->def.type==PQ_INT64 ? ENC_DELTA_BINARY_PACKED : ENC_PLAIN;
    tList(t, 2, T_I32, values==ENC_PLAIN ? 2 : 3);
    fnt_put_varint(t->b, fnt_zigzag(ENC_PLAIN)); fnt_put_varint(t->b, fnt_zigzag(ENC_RLE));
    if( values!=ENC_PLAIN ) fnt_put_varint(t->b, fnt_zigzag(values));
  }
  tList(t, 3, T_BINARY, 1);
  fnt_put_varint(t->b, strlen(c->def.name)); fnt_buf_append(t->b, c->def.name, strlen(c->def.name));
  tI32(t, 4, CODEC_ZSTD);
  tI64(t, 5, m->values);
  tI64(t, 6, m->uncompressed);
  tI64(t, 7, m->compressed);
  tI64(t, 9, m->data_off);
  if( m->dict_off>=0 ) tI64(t, 11, m->dict_off);
  tStruct(t, 12);
  tI64(t, 3, m->nulls);
  if( m->has_stats ){
    tBin(t, 5, m->max, m->max_n);
    tBin(t, 6, m->min, m->min_n);
  }
  tEnd(t);
  tEnd(t);
  tEnd(t);
}

int pq_finish(pq_writer *w, uint64_t *size){
  thrift t = {0};
  size_t g, i, m = 0;
  uint8_t tail[8];
  if( w->failed ) return -1;
  if( w->col[0].nrow!=w->rows_in_group ) return fail(w, "pq_finish inside a row");
  if( flushGroup(w) ) return -1;
  w->foot.len = 0;
  t.b = &w->foot;
  tBegin(&t);                                 /* FileMetaData */
  tI32(&t, 1, 2);
  footerSchema(&t, w);
  tI64(&t, 3, (int64_t)w->rows);
  tList(&t, 4, T_STRUCT, w->ngroups);
  for(g=0; g<w->ngroups; g++){
    const chunk_meta *first = &w->meta[m];
    int64_t total = 0, comp = 0;
    tBegin(&t);                               /* RowGroup */
    tList(&t, 1, T_STRUCT, (size_t)w->ncol);
    for(i=0; i<(size_t)w->ncol; i++, m++){
      footerChunk(&t, &w->col[i], &w->meta[m]);
      total += w->meta[m].uncompressed;
      comp += w->meta[m].compressed;
    }
    tI64(&t, 2, total);
    tI64(&t, 3, (int64_t)w->group_rowcount[g]);
    tI64(&t, 5, first->dict_off>=0 ? first->dict_off : first->data_off);
    tI64(&t, 6, comp);
    tField(&t, 4 /* I16 */, 7); fnt_put_varint(t.b, fnt_zigzag((int64_t)g));
    tEnd(&t);
  }
  tStr(&t, 6, "fntrace version " FNT_VERSION_STRING);
  tList(&t, 7, T_STRUCT, (size_t)w->ncol);    /* column_orders: TYPE_ORDER each */
  for(i=0; i<(size_t)w->ncol; i++){ tBegin(&t); tStruct(&t, 1); tEnd(&t); tEnd(&t); }
  tEnd(&t);
  if( w->foot.failed ) return fail(w, "out of memory");
  for(i=0; i<4; i++) tail[i] = (uint8_t)(w->foot.len >> 8*i);
  memcpy(tail+4, "PAR1", 4);
  if( emit(w, w->foot.data, w->foot.len) || emit(w, tail, 8) ) return -1;
  if( size ) *size = (uint64_t)w->off;
  return 0;
}
