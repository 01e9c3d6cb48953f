/*
** segment_read.c -- reading segment files back.
**
** Opening a segment reads only its trailer and footer (checksummed); row
** groups are read one column chunk at a time (a calls row group's chunks,
** a few kilobytes, with one read), each verified against its checksum
** before it is decompressed, so a query for one window of a run touches a
** few kilobytes.  Parsed footers are cached per handle (segments are
** immutable, so a cached footer is never stale).
*/
#include <errno.h>
#include <string.h>

#include "segment.h"

#define SEG_MAX_RAW   (256u<<20)   /* a chunk larger than this is corrupt */
#define FNT_CHUNK_STACKS (-1)      /* readChunk's row group for the chunks */
#define FNT_CHUNK_FUNCS  (-2)      /* outside row groups */
#define FNT_CHUNK_LOD    (-3)

static const char segMagic[8] = {'F','N','T','S','E','G','0','1'};

/* A footer's texts (constants, symbols, stable_ids) are each preceded by
** a pointer to their segment, so that a reader holding one (a reference
** taken on the segment) releases it by the text alone: fnt_text_release. */
static char *ownedStr(fnt_segment *s, fnt_rd *r, int *isnull){
  char *z = fnt_get_str_after(r, sizeof(s), isnull);
  if( z ) memcpy(z - sizeof(s), &s, sizeof(s));
  return z;
}

/* The same for the function table, whose thousands of texts share one
** block (s->func_text, sized for the worst case) rather than two
** allocations a function.  *len is the text's length. */
static char *arenaStr(fnt_segment *s, fnt_rd *r, size_t *used, int *isnull,
                      uint32_t *len){
  size_t n;
  const uint8_t *p = fnt_get_str_span(r, &n, isnull);
  char *z = s->func_text + *used;
  *len = (uint32_t)n;
  if( p==0 ) return 0;
  /* The text first: it may lie in the same block, a little above. */
  memmove(z + sizeof(s), p, n);
  memcpy(z, &s, sizeof(s));
  z += sizeof(s);
  z[n] = 0;
  *used += sizeof(s) + n + 1;
  return z;
}
static void ownedFree(const char *z){
  if( z ) fnt_free((char*)z - sizeof(fnt_segment*));
}
static fnt_segment *ownerOf(const void *z){
  fnt_segment *s;
  memcpy(&s, (const char*)z - sizeof(s), sizeof(s));
  return s;
}

static void segmentFree(fnt_segment *s){
  uint32_t i;
  if( s==0 ) return;
  fnt_io_close(s->fd);
  fnt_free(s->image);
  for(i=0; i<s->ncols; i++) ownedFree(s->cols[i].const_value);
  if( s->funcs_owner ){
    fnt_segment_release(0, s->funcs_owner);
  }else{
    if( s->func_keys ){
      for(i=0; i<s->nfuncs; i++) ownedFree(s->func_keys[i]);
      fnt_free(s->func_keys);
    }
    fnt_free(s->func_text);
    fnt_free(s->funcs);
    fnt_free(s->func_len);
  }
  fnt_free(s->desc_copy);
  if( s->rg_descs ){
    for(i=0; i<s->nrg; i++) fnt_free(s->rg_descs[i]);
    fnt_free(s->rg_descs);
  }
  fnt_free(s->cols);
  fnt_free(s->threads);
  fnt_free(s->rgs);
  fnt_free(s->crgs);
  fnt_free(s->aggs);
  fnt_free(s->key_hash);
  fnt_free(s->path);
  fnt_free(s->full_path);
  fnt_free(s);
}

/* A chunk's descriptor: where it lies (within the data before the footer),
** its lengths, codec and checksum.  @return 0, or -1 when corrupt. */
static int parseChunk(fnt_rd *r, uint64_t fileDataEnd, fnt_seg_chunk *c){
  c->offset = fnt_get_varint(r);
  c->stored_len = fnt_get_varint(r);
  c->raw_len = fnt_get_varint(r);
  c->codec = fnt_get_u8(r);
  c->checksum = fnt_get_u64le(r);
  if( c->offset<8 || c->stored_len>fileDataEnd || c->offset>fileDataEnd-c->stored_len
   || c->raw_len>SEG_MAX_RAW || c->codec>FNT_CODEC_ZSTD ){
    return -1;
  }
  return 0;
}

static void skipVarint(fnt_rd *r){
  while( r->p<r->end && (*r->p & 0x80) ) r->p++;
  if( r->p<r->end ) r->p++;
  else r->ok = 0;
}

/* Skips n chunk descriptors: 3 varints, a codec and a checksum each. */
static void skipChunks(fnt_rd *r, uint32_t n){
  uint32_t j;
  int k;
  for(j=0; j<n && r->ok; j++){
    for(k=0; k<3; k++) skipVarint(r);
    if( r->end - r->p < 9 ){ r->ok = 0; break; }
    r->p += 9;
  }
}

/* Skips n row groups' entries: rows, 4 bounds, and nchunk descriptors. */
static void skipRowGroups(fnt_rd *r, uint64_t n, uint32_t nchunk){
  uint64_t i;
  int k;
  for(i=0; i<n && r->ok; i++){
    for(k=0; k<5; k++) skipVarint(r);
    skipChunks(r, nchunk);
  }
}

/* Where parts of a footer lie in the bytes parsed: the row groups'
** section (their chunk descriptors, read on demand), and a calls file's
** sums, left where they lie when `raw` (the footer is the file's bytes)
** or when it is opened lazily (fnt_seg_sums). */
typedef struct footer_at {
  int raw;
  const uint8_t *sec;
  size_t secLen;
  const uint8_t *hash, *aggs, *aggs_end;
  size_t shared;        /* bytes of a function table shared (shareFuncs) */
} footer_at;

/* The calls section of a calls segment's footer (FORMAT.md, "Calls
** segments"): the closed row-group count, per-group bounds (nrg of them)
** and per-function aggregates, then optional sections.  Opened lazily,
** the bounds are skipped; the aggregates of a raw footer or a lazy open
** are only checked, their place kept in *at. */
static int parseCallsSection(fnt_segment *s, fnt_rd *r, uint64_t fileDataEnd,
                             uint64_t nrg, footer_at *at){
  uint64_t n, i;
  n = fnt_get_varint(r);
  if( !r->ok || n>nrg ) return FNT_E_CORRUPT;
  s->nclosed_rg = (uint32_t)n;
  s->crgs = fnt_calloc((size_t)s->nrg+1, sizeof(fnt_calls_rg));
  if( s->crgs==0 ) return FNT_E_NOMEM;
  for(i=0; s->aggs_only && i<6*nrg && r->ok; i++) skipVarint(r);
  for(i=0; i<s->nrg && r->ok; i++){
    fnt_calls_rg *g = &s->crgs[i];
    g->depth = (int64_t)fnt_get_varint(r);
    g->thread_min = (uint32_t)fnt_get_varint(r);
    g->thread_max = (uint32_t)fnt_get_varint(r);
    g->parent_min = fnt_unzigzag(fnt_get_varint(r));
    g->parent_max = fnt_unzigzag(fnt_get_varint(r));
    g->dur_max = fnt_unzigzag(fnt_get_varint(r));
  }
  if( s->aggs_only || at->raw ){
    at->aggs = r->p;
    for(i=0; i<3*(uint64_t)s->nfuncs && r->ok; i++) skipVarint(r);
    at->aggs_end = r->p;
  }else if( (s->aggs = fnt_calloc((size_t)s->nfuncs+1, sizeof(fnt_calls_agg)))==0 ){
    return FNT_E_NOMEM;
  }
  for(i=0; s->aggs && i<s->nfuncs && r->ok; i++){
    s->aggs[i].calls = (int64_t)fnt_get_varint(r);
    s->aggs[i].incl = fnt_unzigzag(fnt_get_varint(r));
    s->aggs[i].self = fnt_unzigzag(fnt_get_varint(r));
  }
  /* Optional sections: tag, byte length, bytes; unknown tags skipped. */
  while( r->ok && r->p<r->end ){
    uint64_t tag = fnt_get_varint(r), len = fnt_get_varint(r);
    fnt_rd sub;
    if( !r->ok || len>(uint64_t)(r->end - r->p) ) return FNT_E_CORRUPT;
    sub = *r;
    sub.end = r->p + len;
    r->p += len;
    if( tag==FNT_CALLS_SECTION_STACKS ){       /* the stacks chunk (stacks.c) */
      if( parseChunk(&sub, fileDataEnd, &s->stacks) || !sub.ok || sub.p!=sub.end ){
        return FNT_E_CORRUPT;
      }
      s->has_stacks = 1;
    }else if( tag==FNT_CALLS_SECTION_LOD || tag==FNT_CALLS_SECTION_LOD_SUMMED ){
      /* level of detail (lod.c) */
      if( parseChunk(&sub, fileDataEnd, &s->lod) || !sub.ok || sub.p!=sub.end ){
        return FNT_E_CORRUPT;
      }
      s->has_lod = tag==FNT_CALLS_SECTION_LOD ? 1 : 2;
    }
  }
  return r->ok ? FNT_OK : FNT_E_CORRUPT;
}

/* The bytes of the texts of a table of n functions whose entries take
** `left` bytes: at most those, plus a segment pointer and a NUL per text,
** and room to parse it in place (FUNCS_SLACK). */
#define FUNCS_SLACK 16
static size_t funcsTextBytes(size_t left, uint64_t n){
  return left + 2*(size_t)n*(sizeof(fnt_segment*)+1) + FUNCS_SLACK;
}

/* The bytes of a function table's n entries at r (not consumed), or 0
** when they run past its end. */
static size_t funcsSpan(const fnt_rd *r, uint64_t n){
  fnt_rd q = *r;
  uint64_t i;
  size_t len;
  int isnull;
  for(i=0; i<n && q.ok; i++){
    fnt_get_str_span(&q, &len, &isnull);
    fnt_get_str_span(&q, &len, &isnull);
    fnt_get_u8(&q);
  }
  return q.ok ? (size_t)(q.p - r->p) : 0;
}

/* Gives s the parsed table of a cached segment whose table has the same
** n functions and bytes (hash h), taking a reference on the segment that
** holds it (its texts name that one as their owner).  The files of a run
** repeat one table, 800 KB parsed for 5,000 functions: parsed again for
** each file, their new pages were most of a window's time when it first
** reads a file.  A sharer counts none of the table in the cache's bytes:
** its owner, evicted first, lives on uncounted until the last sharer
** goes (one table per distinct table at most).  @return 1 when shared. */
static int shareFuncs(fnt_store *st, fnt_segment *s, uint64_t n,
                      const uint64_t h[2]){
  size_t i;
  for(i=st->n_segments; i-- > 0; ){
    fnt_segment *c = st->segments[i];
    if( c->funcs_loaded && c->nfuncs==n && c->func_hash[0]==h[0]
     && c->func_hash[1]==h[1] ){
      fnt_segment *o = c->funcs_owner ? c->funcs_owner : c;
      o->refs++;
      s->funcs_owner = o;
      s->funcs = o->funcs;
      s->func_len = o->func_len;
      s->func_text = o->func_text;
      s->nfuncs = (uint32_t)n;
      memcpy(s->func_hash, h, sizeof(s->func_hash));
      s->funcs_loaded = 1;
      return 1;
    }
  }
  return 0;
}

/* A function table (count, then each symbol, stable_id, local) into
** s->funcs, their texts in one block; its hash into s->func_hash; or a
** cached segment's parse of the same bytes (shareFuncs).  The
** table may lie at the end of s->func_text (its chunk read there, table
** alone to the end of r): each text then moves down to its place, which
** never reaches the bytes not yet read (a text gains a pointer and a NUL,
** 9 bytes, and its length varint and the local byte are left behind: the
** block's spare 18 bytes a function and FUNCS_SLACK keep ahead). */
static int parseFuncs(fnt_store *st, fnt_segment *s, fnt_rd *r){
  uint64_t n, i;
  size_t used = 0, span;
  int isnull, inPlace = s->func_text!=0;
  n = fnt_get_varint(r);
  span = (size_t)(r->end - r->p);
  if( !r->ok || n>span || (s->has_funcs_chunk && n!=s->nfuncs) ) return FNT_E_CORRUPT;
  if( !inPlace ){
    uint64_t h[2];
    span = funcsSpan(r, n);
    if( span==0 && n>0 ) return FNT_E_CORRUPT;
    fnt_hash128(r->p, span, h);
    if( shareFuncs(st, s, n, h) ){
      r->p += span;
      return FNT_OK;
    }
    memcpy(s->func_hash, h, sizeof(s->func_hash));
  }
  s->funcs = fnt_calloc(n+1, sizeof(fnt_function));
  /* Lengths once here, so that reading a row's symbol costs no strlen. */
  s->func_len = fnt_calloc(2*n + 1, sizeof(uint32_t));
  if( !inPlace ) s->func_text = fnt_malloc(funcsTextBytes(span, n));
  if( s->funcs==0 || s->func_len==0 || s->func_text==0 ) return FNT_E_NOMEM;
  /* In place the bytes are overwritten: hashed first (the table is the
  ** whole of r). */
  if( inPlace ) fnt_hash128(r->p, span, s->func_hash);
  for(i=0; i<n && r->ok; i++){
    s->nfuncs = (uint32_t)i+1;
    s->funcs[i].symbol = arenaStr(s, r, &used, &isnull, &s->func_len[2*i]);
    if( r->ok && isnull ) return FNT_E_CORRUPT;
    s->funcs[i].stable_id = arenaStr(s, r, &used, &isnull, &s->func_len[2*i+1]);
    s->funcs[i].local = fnt_get_u8(r);
  }
  if( !r->ok ) return FNT_E_CORRUPT;
  s->funcs_loaded = 1;
  return FNT_OK;
}

/* Parses a footer already checked against its checksum; every count is
** still bounded by the bytes left, so a forged footer cannot make us
** allocate wildly or read past the end.  The row groups' chunk
** descriptors are skipped: at->sec and at->secLen give the bytes of the
** row-group section they lie in (fnt_seg_rg.desc counts from at->sec). */
static int parseFooter(fnt_store *st, fnt_segment *s, fnt_rd *r,
                       uint64_t fileDataEnd,
                       footer_at *at){
  uint64_t version, n, i, nrg;
  int isnull;
  uint32_t nchunk = 0;
#define LEFT ((uint64_t)(r->end - r->p))
  version = fnt_get_varint(r);
  if( version==0 || version>FNT_FORMAT_VERSION ) return FNT_E_FORMAT;
  s->table = fnt_get_u8(r);
  s->nrows = fnt_get_varint(r);
  n = fnt_get_varint(r);
  if( !r->ok || s->table>=FNT_NTABLES || n>LEFT || n>FNT_SEG_MAX_COLS ) return FNT_E_CORRUPT;
  s->cols = fnt_calloc(n+1, sizeof(fnt_seg_col));
  if( s->cols==0 ) return FNT_E_NOMEM;
  s->ncols = (uint32_t)n;    /* only now: segmentFree() walks cols[0..ncols) */
  for(i=0; i<n && r->ok; i++){
    fnt_seg_col *c = &s->cols[i];
    c->field_id = (uint32_t)fnt_get_varint(r);
    c->encoding = fnt_get_u8(r);
    c->chunk_index = -1;
    if( c->encoding==FNT_ENC_CONST ){
      c->const_value = ownedStr(s, r, &isnull);
      if( !isnull && c->const_value==0 ) return FNT_E_CORRUPT;
      c->const_len = c->const_value ? strlen(c->const_value) : 0;
    }else if( c->encoding!=FNT_ENC_FUNC_REF && c->encoding!=FNT_ENC_DERIVED ){
      if( c->encoding>FNT_ENC_DELTA_VARINT ) return FNT_E_CORRUPT;
      c->chunk_index = (int)nchunk++;
    }
  }
  s->nchunk_cols = nchunk;
  n = fnt_get_varint(r);
  if( !r->ok || n>LEFT ) return FNT_E_CORRUPT;
  s->nthreads = (uint32_t)n;
  s->threads = fnt_calloc(n+1, sizeof(uint64_t));
  if( s->threads==0 ) return FNT_E_NOMEM;
  for(i=0; i<n; i++) s->threads[i] = fnt_get_varint(r);
  if( version>=4 && s->table==FNT_TABLE_CALLS ){
    /* The function table lies in its chunk (fnt_segment_load_funcs); here
    ** its count, the chunk's place and each function's key hash. */
    n = fnt_get_varint(r);
    if( !r->ok || n>LEFT/16 ) return FNT_E_CORRUPT;
    if( parseChunk(r, fileDataEnd, &s->funcs_chunk) ) return FNT_E_CORRUPT;
    if( s->aggs_only || at->raw ){
      if( LEFT/16<n ) return FNT_E_CORRUPT;
      at->hash = r->p;
      r->p += 16*n;
    }else{
      s->key_hash = fnt_malloc((2*n+1)*sizeof(uint64_t));
      if( s->key_hash==0 ) return FNT_E_NOMEM;
      for(i=0; i<2*n; i++) s->key_hash[i] = fnt_get_u64le(r);
    }
    s->nfuncs = (uint32_t)n;
    s->has_funcs_chunk = 1;
  }else if( version>=6 && s->table==FNT_TABLE_EVENTS ){
    /* The function table lies in its chunk; here its count and hash, by
    ** which another file's parse of the same table is shared (no read at
    ** all), else fnt_segment_load_funcs() reads it and checks the hash. */
    n = fnt_get_varint(r);
    if( !r->ok || parseChunk(r, fileDataEnd, &s->funcs_chunk)
     || n>s->funcs_chunk.raw_len ) return FNT_E_CORRUPT;
    s->func_hash[0] = fnt_get_u64le(r);
    s->func_hash[1] = fnt_get_u64le(r);
    s->nfuncs = (uint32_t)n;
    s->has_funcs_chunk = 1;
    if( r->ok && !s->aggs_only ) shareFuncs(st, s, n, s->func_hash);
  }else{
    const uint8_t *p0 = r->p;
    int rc = parseFuncs(st, s, r);
    if( rc ) return rc;
    if( s->funcs_owner ) at->shared = (size_t)(r->p - p0);
  }
  n = fnt_get_varint(r);
  if( !r->ok || n>LEFT ) return FNT_E_CORRUPT;
  nrg = n;
  s->rgs = fnt_calloc((s->aggs_only ? 0 : n)+1, sizeof(fnt_seg_rg));
  if( s->rgs==0 ) return FNT_E_NOMEM;
  if( s->aggs_only ){
    skipRowGroups(r, n, nchunk);
  }else{
    uint64_t rows = 0;
    at->sec = r->p;
    for(i=0; i<n && r->ok; i++){
      fnt_seg_rg *g = &s->rgs[i];
      s->nrg = (uint32_t)i+1;
      g->first_row = rows;
      g->nrows = fnt_get_varint(r);
      g->seq_min = fnt_unzigzag(fnt_get_varint(r));
      g->seq_max = fnt_unzigzag(fnt_get_varint(r));
      g->t_min = fnt_unzigzag(fnt_get_varint(r));
      g->t_max = fnt_unzigzag(fnt_get_varint(r));
      /* Readers decode a row group into FNT_RG_ROWS-row buffers. */
      if( g->nrows==0 || g->nrows>FNT_RG_ROWS ) return FNT_E_CORRUPT;
      rows += g->nrows;
      g->desc = (uint32_t)(r->p - at->sec);
      skipChunks(r, nchunk);
      g->desc_len = (uint32_t)(r->p - at->sec) - g->desc;
    }
    at->secLen = (size_t)(r->p - at->sec);
    if( r->ok && rows!=s->nrows ) return FNT_E_CORRUPT;
  }
  if( s->table==FNT_TABLE_CALLS ){
    int rc = parseCallsSection(s, r, fileDataEnd, nrg, at);
    if( rc ) return rc;
  }
  if( !r->ok || r->p!=r->end ) return FNT_E_CORRUPT;
  return FNT_OK;
#undef LEFT
}

/* The footer buffers are kept for the next file unless large (a file of
** a great many functions): a handle keeps at most this much of them. */
#define SEG_FOOTER_KEEP ((size_t)1 << 20)
static void footerDone(fnt_store *st){
  if( st->footer[0].cap + st->footer[1].cap > SEG_FOOTER_KEEP ){
    fnt_buf_free(&st->footer[0]);
    fnt_buf_free(&st->footer[1]);
  }
}

/* Files up to this size are read whole with one pread when opened, and
** their chunks then come from memory: a warehouse of many small chunks
** (a file of a 500-event chunk is ~1 KB) otherwise pays a syscall for
** the trailer, the footer, the function table and every chunk. */
#define SEG_IMAGE_MAX ((uint64_t)64 << 10)

/* n bytes of the file at off: from its image, else with pread.
** @return 0, or -1 when they lie beyond the file or cannot be read. */
static int segRead(const fnt_segment *s, void *dst, size_t n, uint64_t off){
  if( s->image==0 ) return fnt_io_pread(s->fd, dst, n, off);
  if( off>s->size || n>s->size-off ) return -1;
  memcpy(dst, s->image+off, n);
  return 0;
}

/* The stored bytes of chunk c when the file is in memory, else NULL. */
static const uint8_t *imageChunk(const fnt_segment *s, const fnt_seg_chunk *c){
  if( s->image==0 || c->offset>s->size || c->stored_len>s->size-c->offset ) return 0;
  return s->image + c->offset;
}

/* The sums of calls segment s as raw bytes: key hashes at hash (NULL:
** none), aggregates in [aggs, end). */
static void sumsRaw(fnt_seg_sums *sums, const fnt_segment *s,
                    const uint8_t *hash, const uint8_t *aggs, const uint8_t *end){
  memset(sums, 0, sizeof(*sums));
  if( s->table!=FNT_TABLE_CALLS || aggs==0 ) return;
  sums->n = s->nfuncs;
  sums->hashed = hash!=0;
  sums->raw_hash = hash;
  sums->raw_agg.p = aggs;
  sums->raw_agg.end = end;
  sums->raw_agg.ok = 1;
}

/* Reads the segment at path; one opened lazily (aggsOnly) gives its sums
** to *sums when not NULL (fnt_seg_sums). */
static int segmentLoad(fnt_store *st, const char *path, int aggsOnly,
                       fnt_segment **out, fnt_seg_sums *sums){
  fnt_segment *s;
  uint8_t trailer[FNT_SEG_TRAILER], *stored = 0, *footer = 0;
  footer_at at;
  uint64_t size = 0, slen, flen, fsum;
  fnt_rd r;
  int rc;

  *out = 0;
  s = fnt_calloc(1, sizeof(*s));
  if( s==0 ) return fnt_err(st, FNT_E_NOMEM, "out of memory");
  s->fd = -1;
  s->refs = 1;
  s->serial = ++st->segment_serial;
  s->aggs_only = aggsOnly;
  s->path = fnt_strdup(path);
  s->path_hash = fnt_hash(path, strlen(path));
  s->full_path = fnt_path_join(st, path);
  if( s->path==0 || s->full_path==0 ){ segmentFree(s); return fnt_err(st, FNT_E_NOMEM, "out of memory"); }
  s->fd = fnt_io_open_read(s->full_path);
  if( s->fd<0 ){
    rc = errno==ENOENT ? fnt_listed_file_missing(st, path, "segment")
       : fnt_err(st, FNT_E_IO, "%s: cannot open segment: %s", s->full_path,
                 strerror(errno));
    segmentFree(s);
    return rc;
  }
  if( fnt_io_file_size(s->fd, &size)==0 && size<=SEG_IMAGE_MAX && size>0 ){
    s->image = fnt_malloc((size_t)size);
    if( s->image && fnt_io_pread(s->fd, s->image, (size_t)size, 0)==0 ){
      fnt_io_close(s->fd);
      s->fd = -1;
    }else{
      fnt_free(s->image);                /* read by parts, as a large one */
      s->image = 0;
    }
  }
  s->size = size;
  if( size<8+FNT_SEG_TRAILER
   || segRead(s, trailer, 8, 0) || memcmp(trailer, segMagic, 8)!=0
   || segRead(s, trailer, FNT_SEG_TRAILER, size-FNT_SEG_TRAILER) ){
    rc = fnt_err(st, FNT_E_CORRUPT, "%s: not a fntrace segment, or truncated "
                 "(%llu bytes)",
                 s->full_path, (unsigned long long)size);
    segmentFree(s);
    return rc;
  }
  r.p = trailer; r.end = trailer+FNT_SEG_TRAILER; r.ok = 1;
  slen = fnt_get_u64le(&r);
  flen = fnt_get_u64le(&r);
  fsum = fnt_get_u64le(&r);
  if( memcmp(trailer+24, segMagic, 8)!=0 || slen > size-8-FNT_SEG_TRAILER
   || flen > SEG_MAX_RAW ){
    rc = fnt_err(st, FNT_E_CORRUPT, "%s: not a fntrace segment or truncated "
                 "(bad trailer)", s->full_path);
    segmentFree(s);
    return rc;
  }
  /* Into the handle's buffers: a footer is parsed into allocations of
  ** its own, and buffers of ~100 KB taken and freed for every file made
  ** malloc trim and grow its heap again on each (a third of a window's
  ** time when footers were read afresh). */
  st->footer[0].len = st->footer[1].len = 0;
  st->footer[0].failed = st->footer[1].failed = 0;
  s->data_end = size-FNT_SEG_TRAILER-slen;
  if( s->image ){
    stored = s->image + s->data_end;
  }else if( fnt_buf_reserve(&st->footer[0], (size_t)slen + 1)==0 ){
    stored = st->footer[0].data;
  }
  /* A raw footer is parsed where it was read. */
  if( stored && slen==flen ){
    footer = stored;
  }else if( stored && fnt_buf_reserve(&st->footer[1], (size_t)flen + 16)==0 ){
    footer = st->footer[1].data;
  }
  if( stored==0 || footer==0 ){
    rc = fnt_err(st, FNT_E_NOMEM, "out of memory");
    goto fail;
  }
  if( (s->image==0 && segRead(s, stored, (size_t)slen, s->data_end))
   || fnt_hash(stored, (size_t)slen)!=fsum
   || (slen!=flen && fnt_block_decompress(&st->zdctx, FNT_CODEC_ZSTD, stored,
                                          (size_t)slen, footer, (size_t)flen)) ){
    rc = fnt_err(st, FNT_E_CORRUPT, "%s: footer checksum mismatch (corrupt "
                 "or truncated segment)", s->full_path);
    goto fail;
  }
  r.p = footer; r.end = footer+flen; r.ok = 1;
  errno = 0;   /* fnt_get_str sets ENOMEM when it runs out of memory */
  memset(&at, 0, sizeof(at));
  at.raw = slen==flen;
  rc = parseFooter(st, s, &r, s->data_end, &at);
  if( rc==FNT_E_CORRUPT && errno==ENOMEM ) rc = FNT_E_NOMEM;
  if( rc==FNT_OK && at.secLen ){
    /* The descriptors stay where they are when the footer is stored raw
    ** (writers keep a calls file's so): a query reads a few of a calls
    ** file's thousands, and parsing them all took half its first open
    ** (its pages, 40 bytes a descriptor, new memory each). */
    uint64_t off = s->data_end + (uint64_t)(at.sec - footer);
    if( slen==flen && s->image ){
      s->desc = s->image + off;
    }else if( slen==flen ){
      s->desc_at = off;
    }else if( (s->desc_copy = fnt_malloc(at.secLen))==0 ){
      rc = FNT_E_NOMEM;
    }else{
      memcpy(s->desc_copy, at.sec, at.secLen);
      s->desc = s->desc_copy;
    }
  }
  /* Parsed, a footer takes about its bytes (texts, bounds, aggregates). */
  s->bytes = (size_t)flen - at.shared + sizeof(*s) + (s->image ? (size_t)size : 0)
           + (s->desc_copy ? at.secLen : 0);
  if( rc==FNT_E_NOMEM ){
    rc = fnt_err(st, rc, "out of memory reading %s", s->full_path);
    goto fail;
  }
  if( rc ){
    rc = fnt_err(st, rc, "%s: %s footer", s->full_path,
                 rc==FNT_E_FORMAT ? "newer format in" : "malformed");
    goto fail;
  }
  if( at.aggs && !s->aggs_only ){
    /* left in the file, read by fnt_segment_sums() */
    s->aggs_at = s->data_end + (uint64_t)(at.aggs - footer);
    s->aggs_end = s->data_end + (uint64_t)(at.aggs_end - footer);
    s->hash_at = at.hash ? s->data_end + (uint64_t)(at.hash - footer) : 0;
  }
  if( sums ){
    /* Read where they lie: the buffer is kept past footerDone() for them. */
    sumsRaw(sums, s, at.hash, at.aggs, at.aggs_end);
  }else{
    footerDone(st);
  }
  *out = s;
  return FNT_OK;
fail:
  footerDone(st);
  segmentFree(s);
  return rc;
}

/* Grows a segment's bytes by n, and the cache's with them when it is
** cached (eviction takes off what the segment says it holds). */
static void segmentGrew(fnt_store *st, fnt_segment *s, size_t n){
  s->bytes += n;
  if( s->cached ) st->segment_bytes += n;
}

static int chunkInto(fnt_store *st, const fnt_segment *s, const fnt_seg_chunk *c,
                     int64_t rg, uint32_t field, fnt_buf *scratch, uint8_t *dst);

const char *fnt_segment_func_key(fnt_store *st, fnt_segment *seg, uint32_t i){
  fnt_segment *o = seg->funcs_owner ? seg->funcs_owner : seg;
  const fnt_function *fn = &o->funcs[i];
  size_t n;
  char *z;
  if( fn->stable_id ) return fn->stable_id;
  if( o->func_keys==0 ){
    o->func_keys = fnt_calloc((size_t)o->nfuncs+1, sizeof(char*));
    if( o->func_keys==0 ) return 0;
    segmentGrew(st, o, ((size_t)o->nfuncs+1)*sizeof(char*));
  }
  if( o->func_keys[i] ) return o->func_keys[i];
  /* A calls scan made these per cursor: thousands of allocations a
  ** window, each freed when the window's file closed. */
  n = o->func_len[2*i];
  z = fnt_malloc(sizeof(o) + n + 2);
  if( z==0 ) return 0;
  memcpy(z, &o, sizeof(o));
  z += sizeof(o);
  z[0] = '?';
  memcpy(z+1, fn->symbol, n+1);
  segmentGrew(st, o, sizeof(o) + n + 2);
  return o->func_keys[i] = z;
}

int fnt_segment_load_funcs(fnt_store *st, fnt_segment *s){
  fnt_rd r;
  uint32_t n = s->nfuncs;
  size_t rawLen = (size_t)s->funcs_chunk.raw_len, cap = funcsTextBytes(rawLen, n);
  int rc;
  /* The chunk is decompressed into the end of the block its texts are
  ** parsed into, in place: a copy of its bytes (half a megabyte for 5,000
  ** C++ names) cost new pages on a first read, and a copy on every one.
  ** Its stored bytes go to the footer's buffer, for the reason it is kept. */
  st->footer[0].failed = 0;
  s->func_text = fnt_malloc(cap);
  rc = s->func_text==0 ? fnt_err(st, FNT_E_NOMEM, "out of memory reading %s", s->full_path)
     : chunkInto(st, s, &s->funcs_chunk, FNT_CHUNK_FUNCS, 0, &st->footer[0],
                 (uint8_t*)s->func_text + cap - rawLen);
  if( rc==FNT_OK ){
    /* An events file's footer gives the table's hash (version 6), which
    ** other files' share by: it must be that of these bytes. */
    uint64_t want[2];
    memcpy(want, s->func_hash, sizeof(want));
    r.p = (uint8_t*)s->func_text + cap - rawLen; r.end = r.p + rawLen; r.ok = 1;
    errno = 0;
    rc = parseFuncs(st, s, &r);
    if( rc==FNT_OK && r.p!=r.end ) rc = FNT_E_CORRUPT;
    if( rc==FNT_OK && s->table==FNT_TABLE_EVENTS
     && memcmp(want, s->func_hash, sizeof(want))!=0 ) rc = FNT_E_CORRUPT;
    if( rc==FNT_E_CORRUPT && errno==ENOMEM ) rc = FNT_E_NOMEM;
    if( rc ){
      fnt_free(s->funcs); fnt_free(s->func_len); fnt_free(s->func_text);
      s->funcs = 0; s->func_len = 0; s->func_text = 0;
      memcpy(s->func_hash, want, sizeof(want));   /* a retry checks again */
      s->nfuncs = n;
      s->funcs_loaded = 0;
      rc = rc==FNT_E_NOMEM ? fnt_err(st, rc, "out of memory reading %s", s->full_path)
         : fnt_err(st, rc, "%s: malformed functions chunk", s->full_path);
    }else{
      segmentGrew(st, s, cap);
    }
  }else{
    fnt_free(s->func_text);
    s->func_text = 0;
  }
  footerDone(st);
  return rc;
}

/* The cached segment of `path` (a new reference), or NULL.  The cache is
** bounded by count and bytes, both settable (calls footers of 5,000
** functions are ~1 MB, a count alone let a viewer's cache grow to 64 MB;
** a run of 100 files has 0.3 MB each): a scan comparing path hashes
** first stays cheap at a few thousand files. */
static fnt_segment *cacheFind(fnt_store *st, const char *path){
  uint64_t h = fnt_hash(path, strlen(path));
  size_t i;
  for(i=st->n_segments; i-- > 0; ){       /* the recent ones first */
    fnt_segment *s = st->segments[i];
    if( s->path_hash==h && strcmp(s->path, path)==0 ){
      /* Move to the back: the cache is least-recently-used first. */
      memmove(&st->segments[i], &st->segments[i+1],
              (st->n_segments-i-1)*sizeof(*st->segments));
      st->segments[st->n_segments-1] = s;
      s->refs++;
      return s;
    }
  }
  return 0;
}

/* Drops the least recently used footers until `files` more of `bytes`
** more fit the cache's limits. */
static void cacheTrim(fnt_store *st, size_t files, size_t bytes){
  size_t k = 0;
  while( k<st->n_segments && (st->n_segments - k + files > st->segment_files
         || st->segment_bytes + bytes > st->segment_budget) ){
    st->segment_bytes -= st->segments[k]->bytes;
    st->segments[k]->cached = 0;
    fnt_segment_release(st, st->segments[k++]);  /* drop the cache's ref */
  }
  if( k==0 ) return;
  memmove(&st->segments[0], &st->segments[k],
          (st->n_segments-k)*sizeof(*st->segments));
  st->n_segments -= k;
}

/* Keeps s in the cache (which takes a reference), evicting the least
** recently used beyond the budget; one larger than the budget is not
** kept. */
static void cacheAdd(fnt_store *st, fnt_segment *s){
  if( s->bytes > st->segment_budget || st->segment_files==0 ) return;
  cacheTrim(st, 1, s->bytes);
  if( st->n_segments==st->cap_segments ){
    size_t cap = st->cap_segments ? st->cap_segments*2 : 64;
    fnt_segment **a = fnt_realloc(st->segments, cap*sizeof(*a));
    if( a==0 ) return;                          /* works uncached */
    st->segments = a;
    st->cap_segments = cap;
  }
  s->refs++;
  s->cached = 1;
  st->segments[st->n_segments++] = s;
  st->segment_bytes += s->bytes;
}

int fnt_segment_open(fnt_store *st, const char *path, fnt_segment **out){
  int rc = fnt_segment_open_rows(st, path, out);
  if( rc ) return rc;
  if( !(*out)->funcs_loaded ){
    rc = fnt_segment_load_funcs(st, *out);
    if( rc ){
      fnt_segment_release(st, *out);
      *out = 0;
    }
  }
  return rc;
}

int fnt_segment_open_rows(fnt_store *st, const char *path, fnt_segment **out){
  int rc;
  *out = cacheFind(st, path);
  if( *out ) return FNT_OK;
  rc = segmentLoad(st, path, 0, out, 0);
  if( rc==FNT_OK ) cacheAdd(st, *out);
  return rc;
}

int fnt_segment_open_lazy(fnt_store *st, const char *path, fnt_segment **out,
                          fnt_seg_sums *sums){
  int rc;
  *out = cacheFind(st, path);
  if( *out==0 ) return segmentLoad(st, path, 1, out, sums);
  rc = sums ? fnt_segment_sums(st, *out, sums) : FNT_OK;
  if( rc ){
    fnt_segment_release(st, *out);
    *out = 0;
  }
  return rc;
}

int fnt_segment_sums(fnt_store *st, const fnt_segment *seg, fnt_seg_sums *sums){
  size_t nh = seg->hash_at ? 16*(size_t)seg->nfuncs : 0;
  size_t na = (size_t)(seg->aggs_end - seg->aggs_at);
  fnt_buf *b = &st->footer[0];
  memset(sums, 0, sizeof(*sums));
  if( seg->table!=FNT_TABLE_CALLS ) return FNT_OK;
  if( seg->aggs ){                          /* parsed: a compressed footer */
    sums->n = seg->nfuncs;
    sums->hashed = seg->key_hash!=0;
    sums->hash = seg->key_hash;
    sums->agg = seg->aggs;
    return FNT_OK;
  }
  if( seg->aggs_at==0 ) return FNT_OK;     /* opened lazily: handed out */
  if( seg->image ){
    sumsRaw(sums, seg, nh ? seg->image + seg->hash_at : 0, seg->image + seg->aggs_at,
            seg->image + seg->aggs_end);
    return FNT_OK;
  }
  /* One buffer for both (the footer's, free while no footer is read). */
  b->len = 0;
  if( fnt_buf_reserve(b, nh + na + 1) ) return fnt_err(st, FNT_E_NOMEM, "out of memory");
  if( (nh && segRead(seg, b->data, nh, seg->hash_at))
   || segRead(seg, b->data + nh, na, seg->aggs_at) ){
    return fnt_err(st, FNT_E_CORRUPT, "%s: cannot read its per-function sums "
                   "(truncated?)", seg->full_path);
  }
  sumsRaw(sums, seg, nh ? b->data : 0, b->data + nh, b->data + nh + na);
  return FNT_OK;
}

void fnt_seg_sums_hash(const fnt_seg_sums *s, uint32_t i, uint64_t h[2]){
  if( s->hash ){
    h[0] = s->hash[2*(size_t)i];
    h[1] = s->hash[2*(size_t)i+1];
  }else{
#if FNT_LITTLE_ENDIAN
    memcpy(h, s->raw_hash + 16*(size_t)i, 16);    /* two u64le, as they lie */
#else
    fnt_rd r;
    r.p = s->raw_hash + 16*(size_t)i; r.end = r.p + 16; r.ok = 1;
    h[0] = fnt_get_u64le(&r);
    h[1] = fnt_get_u64le(&r);
#endif
  }
}

int fnt_seg_sums_next(fnt_seg_sums *s, uint64_t h[2], fnt_calls_agg *a){
  if( s->i>=s->n ) return 0;
  if( s->agg ){
    *a = s->agg[s->i];
  }else{
    /* The footer's parse checked these bytes (parseCallsSection); read
    ** again from the file (fnt_segment_sums), they may have changed. */
    a->calls = (int64_t)fnt_get_varint(&s->raw_agg);
    a->incl = fnt_unzigzag(fnt_get_varint(&s->raw_agg));
    a->self = fnt_unzigzag(fnt_get_varint(&s->raw_agg));
    if( !s->raw_agg.ok ){
      s->bad = 1;
      return 0;
    }
  }
  if( s->hashed ) fnt_seg_sums_hash(s, s->i, h);
  s->i++;
  return 1;
}

void fnt_segment_release(fnt_store *st, fnt_segment *s){
  FNT_UNUSED(st);
  if( s && --s->refs==0 ) segmentFree(s);
}

void fnt_text_hold(const char *z){
  if( z ) ownerOf(z)->refs++;
}

void fnt_text_release(void *z){
  if( z ) fnt_segment_release(0, ownerOf(z));
}

void fnt_segment_cache_free(fnt_store *st){
  size_t i;
  for(i=0; i<st->n_segments; i++){
    st->segments[i]->cached = 0;
    fnt_segment_release(st, st->segments[i]);
  }
  fnt_free(st->segments);
  st->segments = 0;
  st->n_segments = st->cap_segments = 0;
  st->segment_bytes = 0;
  fnt_buf_free(&st->group);
  fnt_buf_free(&st->footer[0]);
  fnt_buf_free(&st->footer[1]);
  st->group_serial = 0;
}

void fnt_set_segment_cache(fnt_store *st, size_t files, size_t bytes){
  if( st==0 ) return;
  st->segment_files = files;
  st->segment_budget = bytes;
  cacheTrim(st, 0, 0);
}

const fnt_seg_col *fnt_segment_col(const fnt_segment *s, uint32_t field_id){
  uint32_t i;
  for(i=0; i<s->ncols; i++){
    if( s->cols[i].field_id==field_id ) return &s->cols[i];
  }
  return 0;
}

/* A chunk's error: "FILE: row group R, field F: WHY" (field 0: of the
** group's descriptors, "FILE: row group R: WHY"), or for the stacks
** or functions chunk "FILE: stacks chunk: WHY". */
static int chunkErr(fnt_store *st, const fnt_segment *s, int64_t rg,
                    uint32_t field, const char *why){
  if( rg<0 ){
    return fnt_err(st, FNT_E_CORRUPT, "%s: %s chunk: %s", s->full_path,
                   rg==FNT_CHUNK_FUNCS ? "functions" : rg==FNT_CHUNK_LOD
                   ? "level-of-detail" : "stacks", why);
  }
  if( field==0 ){
    return fnt_err(st, FNT_E_CORRUPT, "%s: row group %u: %s", s->full_path,
                   (unsigned)rg, why);
  }
  return fnt_err(st, FNT_E_CORRUPT, "%s: row group %u, field %u: %s", s->full_path,
                 (unsigned)rg, field, why);
}

/* Parses row group rg's chunk descriptors from p (its desc_len bytes)
** into s->rg_descs[rg].  @return FNT_OK, FNT_E_NOMEM or FNT_E_CORRUPT,
** no message set (descsErr() says it). */
static int groupDescsParse(fnt_store *st, fnt_segment *s, uint32_t rg,
                           const uint8_t *p){
  fnt_seg_chunk *k;
  fnt_rd r;
  uint32_t j;
  r.p = p;
  r.end = p + s->rgs[rg].desc_len;
  r.ok = 1;
  k = fnt_malloc(((size_t)s->nchunk_cols+1)*sizeof(fnt_seg_chunk));
  if( k==0 ) return FNT_E_NOMEM;
  for(j=0; j<s->nchunk_cols; j++){
    if( parseChunk(&r, s->data_end, &k[j]) || !r.ok ) break;
  }
  if( j<s->nchunk_cols || r.p!=r.end ){
    fnt_free(k);
    return FNT_E_CORRUPT;
  }
  s->rg_descs[rg] = k;
  segmentGrew(st, s, ((size_t)s->nchunk_cols+1)*sizeof(fnt_seg_chunk));
  return FNT_OK;
}

static int descsErr(fnt_store *st, const fnt_segment *s, uint32_t rg, int rc){
  return rc==FNT_E_NOMEM ? fnt_err(st, rc, "out of memory reading %s", s->full_path)
       : chunkErr(st, s, rg, 0, "malformed chunk descriptors");
}

/* Parsed from the footer's bytes, in memory or read from the file, the
** first time the group is read, and kept with the segment (a stab or a
** window reads a few dozen groups of a file's thousands, then reads them
** again).  A read from the file takes DESC_READ bytes, and the groups
** after this one that lie whole in them are parsed too: a window goes on
** to the next group of its depth, a later stab to a nearby one. */
#define DESC_READ 1024
#define DESC_MAX  (FNT_SEG_MAX_COLS*39)  /* a descriptor is at most 39 bytes */
int fnt_segment_descs(fnt_store *st, const fnt_segment *seg, uint32_t rg,
                      const fnt_seg_chunk **out){
  fnt_segment *s = (fnt_segment*)seg;    /* the cache below: see segment.h */
  uint8_t buf[DESC_MAX>DESC_READ ? DESC_MAX : DESC_READ];
  const fnt_seg_rg *g = &s->rgs[rg];
  uint32_t j;
  int rc;
  *out = s->rg_descs ? s->rg_descs[rg] : 0;
  if( *out ) return FNT_OK;
  if( s->rg_descs==0 ){
    s->rg_descs = fnt_calloc((size_t)s->nrg+1, sizeof(*s->rg_descs));
    if( s->rg_descs==0 ) return descsErr(st, s, rg, FNT_E_NOMEM);
    segmentGrew(st, s, ((size_t)s->nrg+1)*sizeof(*s->rg_descs));
  }
  if( g->desc_len>DESC_MAX ) return descsErr(st, s, rg, FNT_E_CORRUPT);
  if( s->desc ){
    rc = groupDescsParse(st, s, rg, s->desc + g->desc);
  }else{
    /* DESC_READ bytes, or to the section's end, and at least the group's */
    const fnt_seg_rg *last = &s->rgs[s->nrg-1];
    uint64_t left = (uint64_t)last->desc + last->desc_len - g->desc;
    size_t n = left<DESC_READ ? (size_t)left : DESC_READ;
    if( n<g->desc_len ) n = g->desc_len;
    rc = segRead(s, buf, n, s->desc_at + g->desc);
    if( rc && n>g->desc_len ){          /* the group's own bytes alone */
      n = g->desc_len;
      rc = segRead(s, buf, n, s->desc_at + g->desc);
    }
    if( rc ) return chunkErr(st, s, rg, 0, "cannot read its chunk descriptors (truncated?)");
    rc = groupDescsParse(st, s, rg, buf);
    /* A neighbour that does not parse is told of when it is read. */
    for(j=rg+1; rc==FNT_OK && j<s->nrg
        && (uint64_t)s->rgs[j].desc + s->rgs[j].desc_len <= (uint64_t)g->desc + n; j++){
      if( s->rg_descs[j]==0 && groupDescsParse(st, s, j, buf + (s->rgs[j].desc - g->desc)) ) break;
    }
  }
  if( rc ) return descsErr(st, s, rg, rc);
  *out = s->rg_descs[rg];
  return FNT_OK;
}

/* The stored bytes of chunk c of row group rg of a calls segment, from
** the group's bytes read with one pread: a calls window or instant reads
** most chunks of each group it decodes, and writers put a group's chunks
** one after another.  NULL when they do not lie so (or the read fails:
** the caller reads the chunk alone, and tells its error). */
static const uint8_t *groupChunk(fnt_store *st, const fnt_segment *s,
                                 uint32_t rg, const fnt_seg_chunk *c){
  fnt_buf *b = &st->group;
  if( s->table!=FNT_TABLE_CALLS ) return 0;
  if( st->group_serial!=s->serial || st->group_rg!=rg ){
    const fnt_seg_chunk *k;
    uint64_t lo = UINT64_MAX, hi = 0, sum = 0;
    uint32_t i;
    if( fnt_segment_descs(st, s, rg, &k) ) return 0;
    for(i=0; i<s->nchunk_cols; i++){
      if( k[i].offset<lo ) lo = k[i].offset;
      if( k[i].offset + k[i].stored_len>hi ) hi = k[i].offset + k[i].stored_len;
      sum += k[i].stored_len;
    }
    st->group_serial = 0;
    b->len = 0;
    if( hi-lo!=sum ) return 0;
    if( fnt_buf_reserve(b, (size_t)sum) ){
      fnt_buf_free(b);                 /* no memory now; may have later */
      return 0;
    }
    if( fnt_io_pread(s->fd, b->data, (size_t)sum, lo) ) return 0;
    b->len = (size_t)sum;
    st->group_serial = s->serial;
    st->group_rg = rg;
    st->group_offset = lo;
  }
  if( c->offset<st->group_offset
   || c->offset + c->stored_len>st->group_offset + b->len ) return 0;
  return b->data + (c->offset - st->group_offset);
}

/* Reads, verifies and decompresses chunk c into dst (c->raw_len bytes). */
static int chunkInto(fnt_store *st, const fnt_segment *s, const fnt_seg_chunk *c,
                     int64_t rg, uint32_t field, fnt_buf *scratch, uint8_t *dst){
  const uint8_t *stored = s->image ? imageChunk(s, c)
                        : rg>=0 ? groupChunk(st, s, (uint32_t)rg, c) : 0;
  scratch->len = 0;
  if( stored==0 && fnt_buf_reserve(scratch, (size_t)c->stored_len) ){
    return fnt_err(st, FNT_E_NOMEM, "out of memory reading %s", s->full_path);
  }
  if( stored==0 ){
    if( segRead(s, scratch->data, (size_t)c->stored_len, c->offset) ){
      return chunkErr(st, s, rg, field, "cannot read column chunk (truncated?)");
    }
    stored = scratch->data;
  }
  if( fnt_hash(stored, (size_t)c->stored_len)!=c->checksum ){
    return chunkErr(st, s, rg, field, "column chunk checksum mismatch");
  }
  if( fnt_block_decompress(&st->zdctx, c->codec, stored, (size_t)c->stored_len,
                           dst, (size_t)c->raw_len) ){
    return chunkErr(st, s, rg, field, "column chunk does not decompress");
  }
  return FNT_OK;
}

static int readChunk(fnt_store *st, const fnt_segment *s, const fnt_seg_chunk *c,
                     int64_t rg, uint32_t field, fnt_buf *scratch, fnt_buf *raw){
  int rc;
  raw->len = 0;
  if( fnt_buf_reserve(raw, (size_t)c->raw_len + 16) ){
    return fnt_err(st, FNT_E_NOMEM, "out of memory reading %s", s->full_path);
  }
  rc = chunkInto(st, s, c, rg, field, scratch, raw->data);
  if( rc ) return rc;
  raw->len = (size_t)c->raw_len;
  /* Zeroed slack lets the bit unpacker read whole words at the end. */
  memset(raw->data + raw->len, 0, 16);
  return FNT_OK;
}

int fnt_segment_read_chunk(fnt_store *st, const fnt_segment *s, uint32_t rg,
                           const fnt_seg_col *col, fnt_buf *scratch,
                           fnt_buf *raw){
  const fnt_seg_chunk *k;
  int rc = fnt_segment_descs(st, s, rg, &k);
  if( rc ) return rc;
  return readChunk(st, s, &k[col->chunk_index], rg, col->field_id, scratch, raw);
}

int fnt_segment_read_stacks(fnt_store *st, const fnt_segment *s,
                            fnt_buf *scratch, fnt_buf *raw){
  return readChunk(st, s, &s->stacks, FNT_CHUNK_STACKS, 0, scratch, raw);
}

int fnt_segment_read_lod(fnt_store *st, const fnt_segment *s,
                         fnt_buf *scratch, fnt_buf *raw){
  return readChunk(st, s, &s->lod, FNT_CHUNK_LOD, 0, scratch, raw);
}

int fnt_segment_verify_funcs(fnt_store *st, const fnt_segment *s){
  fnt_buf scratch = {0}, raw = {0};
  uint64_t h[2];
  fnt_rd r;
  int rc;
  if( !s->has_funcs_chunk || s->table!=FNT_TABLE_EVENTS ) return FNT_OK;
  rc = readChunk(st, s, &s->funcs_chunk, FNT_CHUNK_FUNCS, 0, &scratch, &raw);
  if( rc==FNT_OK ){
    r.p = raw.data; r.end = raw.data + raw.len; r.ok = 1;
    if( fnt_get_varint(&r)!=s->nfuncs || !r.ok ){
      rc = FNT_E_CORRUPT;
    }else{
      fnt_hash128(r.p, (size_t)(r.end - r.p), h);
      if( memcmp(h, s->func_hash, sizeof(h))!=0 ) rc = FNT_E_CORRUPT;
    }
    if( rc ) rc = fnt_err(st, rc, "%s: malformed functions chunk", s->full_path);
  }
  fnt_buf_free(&scratch);
  fnt_buf_free(&raw);
  return rc;
}

int fnt_decode_func_stack(const uint8_t *p, size_t len, size_t n,
                          const uint64_t *thread, const uint64_t *kind,
                          uint32_t nthreads, uint32_t nfuncs, uint64_t *out){
  fnt_rd r;
  size_t i, nExits, flagBytes, nExplicit = 0, e = 0, x = 0;
  const uint8_t *flags;
  unsigned width;
  uint32_t *frames, *depth;
  int rc = -1;
  r.p = p; r.end = p+len; r.ok = 1;
  nExits = (size_t)fnt_get_varint(&r);
  if( !r.ok || nExits>n ) return -1;
  flagBytes = (nExits+7)/8;
  if( (size_t)(r.end - r.p) < flagBytes+1 ) return -1;
  flags = r.p;
  r.p += flagBytes;
  width = fnt_get_u8(&r);
  for(i=0; i<nExits; i++) nExplicit += !((flags[i/8] >> (i%8)) & 1);
  nExplicit += n - nExits;
  if( width>64 || fnt_bp_size(nExplicit, width)!=(size_t)(r.end - r.p) ) return -1;
  /* The explicit indexes go to the tail of `out`, then spread forward as
  ** rows consume them (out[i] is written before out[i+k] is read, k>=1). */
  fnt_bp_unpack(r.p, out + (n - nExplicit), nExplicit, width);
  frames = fnt_malloc((size_t)(nthreads ? nthreads : 1)*FNT_STACK_MODEL_DEPTH*sizeof(uint32_t));
  depth = fnt_calloc(nthreads ? nthreads : 1, sizeof(uint32_t));
  if( frames==0 || depth==0 ){ rc = -2; goto done; }
  x = n - nExplicit;
  for(i=0; i<n; i++){
    uint64_t t = thread[i], f;
    uint32_t *st, *d;
    if( t>=nthreads ) goto done;
    st = frames + (size_t)t*FNT_STACK_MODEL_DEPTH;
    d = &depth[t];
    if( kind[i]==FNT_KIND_ENTRY ){
      if( x>=n ) goto done;
      f = out[x++];
      if( f>=nfuncs ) goto done;
      if( *d<FNT_STACK_MODEL_DEPTH ) st[(*d)++] = (uint32_t)f;
    }else if( e>=nExits ){
      goto done;                      /* more exit rows than the chunk says */
    }else if( (flags[e/8] >> (e%8)) & 1 ){
      e++;
      if( *d==0 ) goto done;
      f = st[--(*d)];
    }else{
      uint32_t k;
      e++;
      if( x>=n ) goto done;
      f = out[x++];
      if( f>=nfuncs ) goto done;
      k = *d;
      while( k>0 && st[k-1]!=f ) k--;
      if( k>0 ) *d = k-1;
    }
    out[i] = f;
  }
  rc = e==nExits && x==n ? 0 : -1;
done:
  fnt_free(frames);
  fnt_free(depth);
  return rc;
}

int fnt_decode_texts(const uint8_t *p, size_t len, size_t n, fnt_buf *arena,
                     int64_t *off){
  fnt_rd r;
  size_t i;
  r.p = p; r.end = p+len; r.ok = 1;
  arena->len = 0;
  for(i=0; i<n && r.ok; i++){
    uint64_t sl = fnt_get_varint(&r);
    if( sl==0 ){ off[i] = -1; continue; }
    sl--;
    if( !r.ok || sl>(uint64_t)(r.end - r.p) ) return -1;
    off[i] = (int64_t)arena->len;
    fnt_buf_append(arena, r.p, (size_t)sl);
    fnt_put_u8(arena, 0);
    r.p += sl;
  }
  if( arena->failed ) return -2;
  return r.ok && r.p==r.end ? 0 : -1;
}
