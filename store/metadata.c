/*
** metadata.c -- encoding and decoding the metadata files: snapshot (catalog
** version) files and manifests.  Every metadata file is
**   8-byte magic | body | 8-byte XXH3-64 of magic and body
** (FORMAT.md); decoders check the checksum before trusting a byte, and every
** read is bounds-checked, so a corrupt file is an error naming it.
*/
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

static const char manifestMagic[8] = {'F','N','T','M','A','N','I','1'};
static const char catalogMagic[8]  = {'F','N','T','C','A','T','L','1'};

void fnt_meta_begin(fnt_buf *b, const char magic[8]){
  fnt_buf_append(b, magic, 8);
  fnt_put_varint(b, FNT_FORMAT_VERSION);
}

void fnt_meta_end(fnt_buf *b){
  if( b->failed ) return;
  fnt_put_u64le(b, fnt_hash(b->data, b->len));
}

int fnt_meta_check(fnt_store *st, const char *path, const uint8_t *p,
                   size_t len, const char magic[8], fnt_rd *body,
                   uint64_t *pVersion){
  uint64_t want, version;
  fnt_rd r;
  if( len < 8+1+8 || memcmp(p, magic, 8)!=0 ){
    return fnt_err(st, FNT_E_CORRUPT, "%s: not a fntrace metadata file "
                   "(bad magic or truncated to %zu bytes)", path, len);
  }
  r.p = p + len - 8; r.end = p + len; r.ok = 1;
  want = fnt_get_u64le(&r);
  if( fnt_hash(p, len-8)!=want ){
    return fnt_err(st, FNT_E_CORRUPT, "%s: checksum mismatch (the file is "
                   "corrupt or truncated)", path);
  }
  body->p = p + 8; body->end = p + len - 8; body->ok = 1;
  version = fnt_get_varint(body);
  if( version==0 || version>FNT_FORMAT_VERSION ){
    return fnt_err(st, FNT_E_FORMAT, "%s: format version %llu, this build "
                   "reads up to %d", path, (unsigned long long)version,
                   FNT_FORMAT_VERSION);
  }
  *pVersion = version;
  return FNT_OK;
}

/* ---- Version 3 (FORMAT.md, "Manifests"): strings by dictionary, file
** names as 16 bytes, the whole body one zstd block.  The dictionary is a
** hash table of (pointer, length) slices into the entries being encoded. */

typedef struct dict_slot { const char *s; size_t len; uint64_t idx; } dict_slot;
typedef struct str_dict {
  dict_slot *slot;
  size_t cap, n;
  fnt_buf out;           /* the strings, in index order, as str */
} str_dict;

static uint64_t dictIndex(str_dict *d, const char *s, size_t len){
  uint64_t h = fnt_hash(s, len);
  size_t i = (size_t)h & (d->cap-1);
  while( d->slot[i].s ){
    if( d->slot[i].len==len && memcmp(d->slot[i].s, s, len)==0 ) return d->slot[i].idx;
    i = (i+1) & (d->cap-1);
  }
  d->slot[i].s = s;
  d->slot[i].len = len;
  d->slot[i].idx = d->n++;
  fnt_put_varint(&d->out, (uint64_t)len + 1);
  fnt_buf_append(&d->out, s, len);
  return d->slot[i].idx;
}

static uint64_t dictStr(str_dict *d, const char *s){
  return dictIndex(d, s ? s : "", s ? strlen(s) : 0);
}

/* The folder of a path is all before its last '/' (none: ""). */
static size_t folderLen(const char *path){
  const char *slash = strrchr(path, '/');
  return slash && slash>path ? (size_t)(slash - path) : 0;
}

static int hexDigit(int c){
  return c>='0' && c<='9' ? c-'0' : c>='a' && c<='f' ? c-'a'+10 : -1;
}

/* A name of 32 lower-case hex digits followed by `suffix` (every name a
** writer makes) packs into 16 bytes: 1 when it does. */
static int packName(const char *name, const char *suffix, uint8_t id[16]){
  int i;
  for(i=0; i<32; i++){
    int h = hexDigit((unsigned char)name[i]);
    if( h<0 ) return 0;
    if( i&1 ) id[i/2] |= (uint8_t)h; else id[i/2] = (uint8_t)(h<<4);
  }
  return strcmp(name+32, suffix)==0;
}

/* u8 0 and the 16 bytes of a name that packs, else u8 1 and `whole`. */
static void putName(fnt_buf *b, const char *name, const char *suffix,
                    const char *whole){
  uint8_t id[16];
  if( packName(name, suffix, id) ){
    fnt_put_u8(b, 0);
    fnt_buf_append(b, id, 16);
  }else{
    fnt_put_u8(b, 1);
    fnt_put_str(b, whole);
  }
}

/* What putName() wrote: `packed` followed by the name's 32 hex digits and
** `suffix`, or `plain` followed by the str; a new allocation, NULL
** (r->ok = 0) when malformed. */
static char *getName(fnt_rd *r, const char *packed, const char *plain,
                     const char *suffix){
  static const char hex[] = "0123456789abcdef";
  size_t i, np;
  int form = fnt_get_u8(r), isnull;
  char *out, *name;
  if( form==0 && r->ok && r->end - r->p >= 16 ){
    np = strlen(packed);
    out = fnt_malloc(np + 32 + strlen(suffix) + 1);
    if( out==0 ){ r->ok = 0; errno = ENOMEM; return 0; }
    memcpy(out, packed, np);
    for(i=0; i<16; i++){
      out[np+2*i] = hex[r->p[i]>>4];
      out[np+2*i+1] = hex[r->p[i]&15];
    }
    strcpy(out+np+32, suffix);
    r->p += 16;
    return out;
  }
  if( form!=1 ){ r->ok = 0; return 0; }
  name = fnt_get_str(r, &isnull);
  if( name==0 ){ r->ok = 0; return 0; }
  np = strlen(plain);
  out = fnt_malloc(np + strlen(name) + 1);
  if( out==0 ){ fnt_free(name); r->ok = 0; errno = ENOMEM; return 0; }
  memcpy(out, plain, np);
  strcpy(out+np, name);
  fnt_free(name);
  return out;
}

#define SMALL_BLOCK 1024   /* bytes below which a block is stored raw */

/* Appends u8 codec, varint raw length and `raw`, compressed when that
** pays: the body of a version-3 metadata file. */
static void putBlock(fnt_buf *out, const fnt_buf *raw){
  fnt_buf z = {0};
  int codec;
  if( raw->failed ){ out->failed = 1; return; }
  if( raw->len < SMALL_BLOCK ){
    /* A commit's own entries: zstd would save a few bytes at the cost of
    ** a compression context per commit and a decompression per reader. */
    fnt_put_u8(out, FNT_CODEC_RAW);
    fnt_put_varint(out, raw->len);
    fnt_buf_append(out, raw->data, raw->len);
    return;
  }
  codec = fnt_block_compress(0, raw->data, raw->len, &z, 3, FNT_ZSTD_SAVING);
  if( codec<0 || z.failed ){ out->failed = 1; fnt_buf_free(&z); return; }
  fnt_put_u8(out, (uint8_t)codec);
  fnt_put_varint(out, raw->len);
  fnt_buf_append(out, z.data, z.len);
  fnt_buf_free(&z);
}

/* The block putBlock() wrote, up to the end of `r`: *raw is a new
** allocation (FNT_E_NOMEM, or FNT_E_CORRUPT when it does not decode). */
static int getBlock(fnt_store *st, fnt_rd *r, uint8_t **raw, size_t *n){
  void *own = 0, **dctx = st ? &st->zdctx : &own;
  int codec = fnt_get_u8(r);
  uint64_t len = fnt_get_varint(r);
  size_t stored = r->ok ? (size_t)(r->end - r->p) : 0;
  *raw = 0;
  *n = 0;
  /* A manifest compresses well, not beyond this: a larger claim is a lie. */
  if( !r->ok || len > (uint64_t)stored*4096 + 4096 || len > ((uint64_t)1<<32) ){
    return FNT_E_CORRUPT;
  }
  *raw = fnt_malloc(len ? (size_t)len : 1);
  if( *raw==0 ) return FNT_E_NOMEM;
  if( fnt_block_decompress(dctx, codec, r->p, stored, *raw, (size_t)len) ){
    fnt_block_ctx_free(&own);
    fnt_free(*raw);
    *raw = 0;
    return FNT_E_CORRUPT;
  }
  fnt_block_ctx_free(&own);
  r->p = r->end;
  *n = (size_t)len;
  return FNT_OK;
}

/* 1 when e's file lies in the folder of its table and partition value
** (the first fl bytes of its path). */
static int derivedFolder(const fnt_entry *e, size_t fl){
  char *want;
  int same;
  if( e->table>=FNT_NTABLES || !e->run_id || !e->repo ) return 0;
  want = fnt_partition_folder((fnt_table)e->table,
                              fnt_entry_partition(e->table, e->run_id, e->repo));
  same = want && strlen(want)==fl && memcmp(want, e->path, fl)==0;
  fnt_free(want);
  return same;
}

/* The dictionary and entries of a version-3 or 4 manifest, as one block. */
static void putEntries(fnt_buf *out, const fnt_entry *e, size_t n){
  str_dict d;
  fnt_buf ent = {0}, raw = {0};
  size_t i, j, strs = 1;
  for(i=0; i<n; i++) strs += 3 + e[i].n_keys;
  memset(&d, 0, sizeof(d));
  for(d.cap = 16; d.cap < 2*strs; d.cap *= 2){}
  d.slot = fnt_calloc(d.cap, sizeof(dict_slot));
  if( d.slot==0 ){ out->failed = 1; return; }
  fnt_put_varint(&ent, n);
  for(i=0; i<n; i++){
    size_t fl = folderLen(e[i].path);
    const char *name = e[i].path + (fl ? fl+1 : 0);
    fnt_put_u8(&ent, e[i].table);
    /* Version 4: 0 for the folder every writer puts the file in, the
    ** table's and partition's (no string at all), else 1 + its index. */
    if( derivedFolder(&e[i], fl) ) fnt_put_varint(&ent, 0);
    else fnt_put_varint(&ent, 1 + dictIndex(&d, e[i].path, fl));
    putName(&ent, name, ".fnseg", name);
    fnt_put_varint(&ent, e[i].file_size);
    fnt_put_varint(&ent, e[i].rows);
    fnt_put_varint(&ent, dictStr(&d, e[i].run_id));
    fnt_put_varint(&ent, dictStr(&d, e[i].repo));
    fnt_put_varint(&ent, fnt_zigzag(e[i].chunk));
    fnt_put_varint(&ent, fnt_zigzag(e[i].seq_min));
    fnt_put_varint(&ent, fnt_zigzag((int64_t)((uint64_t)e[i].seq_max - (uint64_t)e[i].seq_min)));
    fnt_put_varint(&ent, fnt_zigzag(e[i].t_min));
    fnt_put_varint(&ent, fnt_zigzag((int64_t)((uint64_t)e[i].t_max - (uint64_t)e[i].t_min)));
    fnt_put_varint(&ent, e[i].snapshot_id);
    fnt_put_varint(&ent, e[i].n_keys);
    for(j=0; j<e[i].n_keys; j++){
      fnt_put_varint(&ent, dictStr(&d, e[i].keys[j].run_id));
      fnt_put_varint(&ent, fnt_zigzag(e[i].keys[j].chunk));
    }
  }
  fnt_put_varint(&raw, d.n);
  fnt_buf_append(&raw, d.out.data, d.out.len);
  fnt_buf_append(&raw, ent.data, ent.len);
  if( d.out.failed || ent.failed ) raw.failed = 1;
  putBlock(out, &raw);
  fnt_free(d.slot);
  fnt_buf_free(&d.out);
  fnt_buf_free(&ent);
  fnt_buf_free(&raw);
}

int fnt_manifest_encode(const fnt_entry *e, size_t n, fnt_buf *out){
  fnt_meta_begin(out, manifestMagic);
  putEntries(out, e, n);
  fnt_meta_end(out);
  return out->failed ? FNT_E_NOMEM : FNT_OK;
}

static void entryClear(fnt_entry *e){
  size_t i;
  fnt_free(e->path);
  fnt_free(e->run_id);
  fnt_free(e->repo);
  for(i=0; i<e->n_keys; i++) fnt_free(e->keys[i].run_id);
  fnt_free(e->keys);
}

int fnt_entry_each_key(const fnt_entry *e,
                       int (*cb)(void *ctx, const char *run_id, int64_t chunk),
                       void *ctx){
  size_t i;
  int rc;
  if( e->n_keys==0 ) return cb(ctx, e->run_id, e->chunk);
  for(i=0; i<e->n_keys; i++){
    if( (rc = cb(ctx, e->keys[i].run_id, e->keys[i].chunk))!=0 ) return rc;
  }
  return 0;
}

int fnt_entry_has_run(const fnt_entry *e, const char *run_id){
  size_t i;
  if( e->n_keys==0 || e->run_id[0] ) return strcmp(e->run_id, run_id)==0;
  for(i=0; i<e->n_keys; i++){
    if( strcmp(e->keys[i].run_id, run_id)==0 ) return 1;
  }
  return 0;
}

void fnt_manifest_free(fnt_manifest *m){
  size_t i;
  if( m==0 ) return;
  for(i=0; i<m->n; i++) entryClear(&m->entries[i]);
  fnt_free(m->refs_by);
  fnt_free(m->entries);
  fnt_free(m->path);
  fnt_free(m);
}

/* ---- The index of a decoded manifest (internal.h, fnt_entry_ref): its
** key is the string's hash with the kind in the top bit, so one sort
** orders both kinds; a key found is checked against the entry itself. */

static uint64_t refKey(int kind, const char *s){
  return (fnt_hash(s, strlen(s)) >> 1) | ((uint64_t)kind << 63);
}

static int cmpRef(const void *a, const void *b){
  const fnt_entry_ref *x = a, *y = b;
  if( x->key!=y->key ) return x->key<y->key ? -1 : 1;
  return x->i<y->i ? -1 : x->i>y->i;
}

/* 1 when entry e is one of (kind, s). */
static int refMatches(const fnt_entry *e, int kind, const char *s){
  if( kind==FNT_BY_RUN ) return fnt_entry_has_run(e, s);
  return (e->table==FNT_TABLE_RUNS || e->table==FNT_TABLE_PROFILE)
      && e->n_keys==0 && strcmp(e->repo, s)==0;
}

/* Builds m's index; without memory m simply has none (readers scan).
** Counts its entries per table and notes numeric-looking run ids, which
** need neither. */
static void indexEntries(fnt_manifest *m){
  size_t i, j, n = 0, cap = 0;
  fnt_entry_ref *r;
  for(i=0; i<m->n; i++){
    const fnt_entry *e = &m->entries[i];
    cap += 2 + e->n_keys;
    if( e->table<FNT_NTABLES ) m->n_of_table[e->table]++;
    m->numeric_run_ids |= fnt_run_id_looks_numeric(e->run_id);
    for(j=0; j<e->n_keys; j++){
      m->numeric_run_ids |= fnt_run_id_looks_numeric(e->keys[j].run_id);
    }
  }
  r = fnt_malloc((cap ? cap : 1)*sizeof(*r));
  if( r==0 ) return;
  for(i=0; i<m->n; i++){
    const fnt_entry *e = &m->entries[i];
    if( e->n_keys==0 || e->run_id[0] ){
      r[n].key = refKey(FNT_BY_RUN, e->run_id); r[n++].i = i;
    }else{
      for(j=0; j<e->n_keys; j++){
        r[n].key = refKey(FNT_BY_RUN, e->keys[j].run_id); r[n++].i = i;
      }
    }
    if( refMatches(e, FNT_BY_SMALL_REPO, e->repo) ){
      r[n].key = refKey(FNT_BY_SMALL_REPO, e->repo); r[n++].i = i;
    }
  }
  qsort(r, n, sizeof(*r), cmpRef);
  for(i=j=0; i<n; i++){             /* a run merged twice into one file */
    if( j==0 || cmpRef(&r[i], &r[j-1])!=0 ) r[j++] = r[i];
  }
  m->refs_by = r;
  m->n_refs_by = j;
}

void fnt_entry_iter_init(fnt_entry_iter *it, const fnt_manifest *m, int kind,
                         const char *s){
  size_t lo = 0, hi = m->n_refs_by;
  it->m = m;
  it->kind = kind;
  it->s = s;
  it->key = refKey(kind, s);
  while( lo<hi ){                    /* the first ref of the key */
    size_t mid = lo + (hi-lo)/2;
    if( m->refs_by[mid].key < it->key ) lo = mid+1; else hi = mid;
  }
  it->k = lo;
}

const fnt_entry *fnt_entry_iter_next(fnt_entry_iter *it){
  const fnt_manifest *m = it->m;
  if( m->refs_by==0 ){
    while( it->k < m->n ){
      const fnt_entry *e = &m->entries[it->k++];
      if( refMatches(e, it->kind, it->s) ) return e;
    }
    return 0;
  }
  while( it->k < m->n_refs_by && m->refs_by[it->k].key==it->key ){
    const fnt_entry *e = &m->entries[m->refs_by[it->k++].i];
    if( refMatches(e, it->kind, it->s) ) return e;
  }
  return 0;
}

/* A string of an entry: inline (versions 1, 2) or by dictionary index
** (version 3), in a new allocation; NULL (r->ok = 0) when malformed. */
static char *getText(fnt_rd *r, char **dict, uint64_t nDict){
  int isnull;
  char *s;
  if( dict ){
    uint64_t i = fnt_get_varint(r);
    if( !r->ok || i>=nDict ){ r->ok = 0; return 0; }
    s = fnt_strdup(dict[i]);
    if( s==0 ){ r->ok = 0; errno = ENOMEM; }
    return s;
  }
  s = fnt_get_str(r, &isnull);
  if( s==0 ) r->ok = 0;
  return s;
}

/* A version-3 entry's path: its folder by dictionary, then its name.
** Version 4 (v4): folder 0 is derived once the entry's partition is read
** (*derive set, the name returned alone), else 1 + its index. */
static char *getPath(fnt_rd *r, char **dict, uint64_t nDict, int v4, int *derive){
  uint64_t i = fnt_get_varint(r);
  char prefix[4096];
  *derive = v4 && r->ok && i==0;
  if( *derive ) return getName(r, "", "", ".fnseg");
  if( v4 ) i--;
  if( !r->ok || i>=nDict || strlen(dict[i])+2 > sizeof(prefix) ){ r->ok = 0; return 0; }
  snprintf(prefix, sizeof(prefix), "%s%s", dict[i], dict[i][0] ? "/" : "");
  return getName(r, prefix, prefix, ".fnseg");
}

/* Puts the folder of e's table and partition before its path (a name). */
static void deriveFolder(fnt_rd *r, fnt_entry *e){
  char *path;
  if( e->table>=FNT_NTABLES || !e->path || !e->run_id || !e->repo ){ r->ok = 0; return; }
  path = fnt_partition_path((fnt_table)e->table,
                            fnt_entry_partition(e->table, e->run_id, e->repo), e->path);
  if( path==0 ){
    r->ok = 0;
    errno = ENOMEM;
    return;
  }
  fnt_free(e->path);
  e->path = path;
}

/* The entries of a manifest body at r (a version-3 or 4 body once
** unpacked: dict is then its string dictionary) into m. */
static int decodeEntries(fnt_store *st, const char *path, fnt_rd *r,
                         char **dict, uint64_t nDict, int v4, fnt_manifest *m){
  uint64_t n = fnt_get_varint(r), i;
  /* Each entry takes at least 12 bytes: a count beyond that is corrupt. */
  if( !r->ok || n > (uint64_t)(r->end - r->p)/12 + 1 ){
    return fnt_err(st, FNT_E_CORRUPT, "%s: bad entry count", path);
  }
  m->entries = fnt_calloc(n ? (size_t)n : 1, sizeof(fnt_entry));
  if( m->entries==0 ) return fnt_err(st, FNT_E_NOMEM, "out of memory reading %s", path);
  for(i=0; i<n && r->ok; i++){
    fnt_entry *e = &m->entries[i];
    int isnull, derive = 0;
    m->n = (size_t)i + 1;
    e->table = fnt_get_u8(r);
    e->path = dict ? getPath(r, dict, nDict, v4, &derive) : fnt_get_str(r, &isnull);
    e->file_size = fnt_get_varint(r);
    e->rows = fnt_get_varint(r);
    e->run_id = getText(r, dict, nDict);
    e->repo = getText(r, dict, nDict);
    if( derive && r->ok ) deriveFolder(r, e);
    e->chunk = fnt_unzigzag(fnt_get_varint(r));
    e->seq_min = fnt_unzigzag(fnt_get_varint(r));
    e->seq_max = fnt_unzigzag(fnt_get_varint(r));
    e->t_min = fnt_unzigzag(fnt_get_varint(r));
    e->t_max = fnt_unzigzag(fnt_get_varint(r));
    if( dict ){    /* version 3 stores the spans */
      e->seq_max = (int64_t)((uint64_t)e->seq_min + (uint64_t)e->seq_max);
      e->t_max = (int64_t)((uint64_t)e->t_min + (uint64_t)e->t_max);
    }
    e->snapshot_id = fnt_get_varint(r);
    {
      uint64_t nk = fnt_get_varint(r), k;
      if( r->ok && nk > (uint64_t)(r->end - r->p)/2 ) r->ok = 0;
      if( r->ok && nk>0 ){
        e->keys = fnt_calloc((size_t)nk, sizeof(fnt_key));
        if( e->keys==0 ) r->ok = 0;
        for(k=0; k<nk && r->ok; k++){
          e->keys[k].run_id = getText(r, dict, nDict);
          e->keys[k].chunk = fnt_unzigzag(fnt_get_varint(r));
          e->n_keys = (size_t)k+1;
        }
      }
    }
    if( r->ok && (e->table>=FNT_NTABLES || !e->path || !e->run_id || !e->repo
              || strstr(e->path, "..")) ){
      r->ok = 0;
    }
  }
  if( !r->ok || r->p!=r->end ){
    if( errno==ENOMEM ) return fnt_err(st, FNT_E_NOMEM, "out of memory reading %s", path);
    return fnt_err(st, FNT_E_CORRUPT, "%s: malformed manifest entry %llu",
                   path, (unsigned long long)(i ? i-1 : 0));
  }
  indexEntries(m);
  return FNT_OK;
}

/* A version-3 or 4 body: the block unpacked, its dictionary, its
** entries. */
static int decodeV3(fnt_store *st, const char *path, fnt_rd *body,
                    uint64_t version, fnt_manifest *m){
  uint8_t *raw = 0;
  size_t n = 0;
  char **dict = 0;
  uint64_t nDict = 0, i;
  fnt_rd r;
  int rc = getBlock(st, body, &raw, &n), isnull;
  if( rc ){
    return rc==FNT_E_NOMEM ? fnt_err(st, rc, "out of memory reading %s", path)
         : fnt_err(st, rc, "%s: the manifest's block does not decode", path);
  }
  r.p = raw; r.end = raw + n; r.ok = 1;
  nDict = fnt_get_varint(&r);
  if( !r.ok || nDict > n ){
    rc = fnt_err(st, FNT_E_CORRUPT, "%s: bad dictionary size", path);
    goto done;
  }
  dict = fnt_calloc(nDict ? (size_t)nDict : 1, sizeof(char*));
  if( dict==0 ){ rc = fnt_err(st, FNT_E_NOMEM, "out of memory reading %s", path); goto done; }
  for(i=0; i<nDict && r.ok; i++){
    dict[i] = fnt_get_str(&r, &isnull);
    if( dict[i]==0 ) r.ok = 0;
  }
  if( !r.ok ){
    rc = errno==ENOMEM ? fnt_err(st, FNT_E_NOMEM, "out of memory reading %s", path)
       : fnt_err(st, FNT_E_CORRUPT, "%s: malformed dictionary string %llu",
                 path, (unsigned long long)(i ? i-1 : 0));
    goto done;
  }
  rc = decodeEntries(st, path, &r, dict, nDict, version>=5, m);
done:
  for(i=0; dict && i<nDict; i++) fnt_free(dict[i]);
  fnt_free(dict);
  fnt_free(raw);
  return rc;
}

int fnt_manifest_decode(fnt_store *st, const char *path, const uint8_t *p,
                        size_t len, fnt_manifest **out){
  fnt_rd r;
  fnt_manifest *m;
  uint64_t version = 0;
  int rc = fnt_meta_check(st, path, p, len, manifestMagic, &r, &version);
  *out = 0;
  if( rc ) return rc;
  errno = 0;   /* fnt_get_str sets ENOMEM when it runs out of memory */
  m = fnt_calloc(1, sizeof(*m));
  if( m==0 ) return fnt_err(st, FNT_E_NOMEM, "out of memory reading %s", path);
  m->path = fnt_strdup(path);
  if( m->path==0 ) rc = fnt_err(st, FNT_E_NOMEM, "out of memory reading %s", path);
  else if( version>=3 ) rc = decodeV3(st, path, &r, version, m);
  else rc = decodeEntries(st, path, &r, 0, 0, 0, m);
  if( rc ){
    fnt_manifest_free(m);
    return rc;
  }
  *out = m;
  return FNT_OK;
}

void fnt_catalog_name(uint64_t id, char out[64]){
  snprintf(out, 64, FNT_DIR_CATALOG "/v%020llu", (unsigned long long)id);
}

/* The id of a snapshot file's name (catalog/v + 20 digits), else 0. */
static uint64_t snapshotFileId(const char *path){
  static const char prefix[] = FNT_DIR_CATALOG "/v";
  const char *d = path + sizeof(prefix) - 1;
  if( strncmp(path, prefix, sizeof(prefix)-1)!=0 || strlen(d)!=20
   || strspn(d, "0123456789")!=20 ){
    return 0;
  }
  {
    uint64_t id = strtoull(d, 0, 10);
    char name[64];
    fnt_catalog_name(id, name);
    return strcmp(name, path)==0 ? id : 0;   /* beyond 2^64: plain */
  }
}

/* Version 5: the summary of a filing, "run_id=R chunk=K events=N", told
** by its own entries (its one events file), into out; 0 when they do not
** tell it. */
static int summaryOfEntries(const fnt_catalog *c, char *out, size_t n){
  const fnt_entry *ev = 0;
  size_t i;
  if( c->delta==0 || c->operation==0 || strcmp(c->operation, "file-chunk")!=0 ) return 0;
  for(i=0; i<c->delta->n; i++){
    const fnt_entry *e = &c->delta->entries[i];
    if( e->table!=FNT_TABLE_EVENTS ) continue;
    if( ev || e->n_keys ) return 0;
    ev = e;
  }
  if( ev==0 ) return 0;
  snprintf(out, n, "run_id=%.300s chunk=%lld events=%llu", ev->run_id,
           (long long)ev->chunk, (unsigned long long)ev->rows);
  return 1;
}

int fnt_catalog_encode(const fnt_catalog *c, fnt_buf *out){
  size_t i, n = c->n_manifests;
  char self[64], told[512];
  fnt_catalog_name(c->id, self);
  /* A snapshot's own entries are listed implicitly (the decoder adds its
  ** own name to the list), never by name. */
  if( c->delta && n>0 && strcmp(c->manifest_paths[n-1], self)==0 ) n--;
  fnt_meta_begin(out, catalogMagic);
  fnt_put_varint(out, c->id);
  fnt_put_varint(out, c->parent_id);
  fnt_put_varint(out, fnt_zigzag(c->ts_micros));
  fnt_put_str(out, c->operation);
  /* NULL: the summary its own entries tell (what a filing writes) */
  told[0] = 0;
  if( summaryOfEntries(c, told, sizeof(told)) && c->summary
   && strcmp(told, c->summary)==0 ){
    fnt_put_str(out, 0);
  }else{
    fnt_put_str(out, c->summary);
  }
  fnt_put_varint(out, c->added_files);
  fnt_put_varint(out, c->added_rows);
  fnt_put_varint(out, c->total_files);
  fnt_put_varint(out, c->total_rows);
  fnt_put_varint(out, n);
  for(i=0; i<n; i++){
    const char *m = c->manifest_paths[i];
    int inMeta = strncmp(m, FNT_DIR_METADATA "/", sizeof(FNT_DIR_METADATA))==0;
    uint64_t id = snapshotFileId(m);
    if( id ){                  /* another snapshot file, for its entries */
      fnt_put_u8(out, 2);
      fnt_put_varint(out, id);
    }else{
      putName(out, inMeta ? m + sizeof(FNT_DIR_METADATA) : "", ".fnman", m);
    }
  }
  if( c->delta ) putEntries(out, c->delta->entries, c->delta->n);
  fnt_meta_end(out);
  return out->failed ? FNT_E_NOMEM : FNT_OK;
}

void fnt_catalog_clear(fnt_catalog *c){
  size_t i;
  fnt_free(c->operation);
  fnt_free(c->summary);
  fnt_free(c->run_id);
  for(i=0; i<c->n_manifests; i++) fnt_free(c->manifest_paths[i]);
  fnt_free(c->manifest_paths);
  fnt_manifest_free(c->delta);
  memset(c, 0, sizeof(*c));
}

int fnt_catalog_decode(fnt_store *st, const char *path, const uint8_t *p,
                       size_t len, fnt_catalog *c){
  fnt_rd r;
  uint64_t n, i, version = 0;
  int isnull, rc = fnt_meta_check(st, path, p, len, catalogMagic, &r, &version);
  memset(c, 0, sizeof(*c));
  if( rc ) return rc;
  errno = 0;   /* fnt_get_str sets ENOMEM when it runs out of memory */
  c->id = fnt_get_varint(&r);
  c->parent_id = fnt_get_varint(&r);
  c->ts_micros = fnt_unzigzag(fnt_get_varint(&r));
  c->operation = fnt_get_str(&r, &isnull);
  c->summary = fnt_get_str(&r, &isnull);
  c->added_files = fnt_get_varint(&r);
  c->added_rows = fnt_get_varint(&r);
  c->total_files = fnt_get_varint(&r);
  c->total_rows = fnt_get_varint(&r);
  n = fnt_get_varint(&r);
  if( r.ok && n <= (uint64_t)(r.end - r.p) ){
    c->manifest_paths = fnt_calloc(n ? (size_t)n : 1, sizeof(char*));
    if( c->manifest_paths==0 ){
      fnt_catalog_clear(c);
      return fnt_err(st, FNT_E_NOMEM, "out of memory reading %s", path);
    }
    for(i=0; i<n && r.ok; i++){
      if( version>=3 && r.ok && r.p<r.end && r.p[0]==2 ){
        uint64_t id;
        r.p++;
        id = fnt_get_varint(&r);
        c->manifest_paths[i] = fnt_malloc(64);
        if( c->manifest_paths[i] ) fnt_catalog_name(id, c->manifest_paths[i]);
        else errno = ENOMEM;
        if( id==0 ) r.ok = 0;
      }else{
        c->manifest_paths[i] = version>=3
            ? getName(&r, FNT_DIR_METADATA "/", "", ".fnman")
            : fnt_get_str(&r, &isnull);
      }
      c->n_manifests = (size_t)i + 1;
      if( r.ok && (!c->manifest_paths[i] || strstr(c->manifest_paths[i], "..")) ) r.ok = 0;
    }
  }else{
    r.ok = 0;
  }
  if( r.ok && c->operation && version>=3 && r.p!=r.end ){
    /* The entries this snapshot adds itself: a manifest named after it,
    ** last in its list. */
    char self[64], **v;
    fnt_catalog_name(c->id, self);
    for(i=0; i<c->n_manifests; i++){
      if( strcmp(c->manifest_paths[i], self)==0 ) r.ok = 0;
    }
    c->delta = r.ok ? fnt_calloc(1, sizeof(fnt_manifest)) : 0;
    v = c->delta ? fnt_realloc(c->manifest_paths, (c->n_manifests+1)*sizeof(char*)) : 0;
    if( v ) c->manifest_paths = v;
    if( r.ok && (v==0 || (c->delta->path = fnt_strdup(self))==0
              || (v[c->n_manifests] = fnt_strdup(self))==0) ){
      fnt_catalog_clear(c);
      return fnt_err(st, FNT_E_NOMEM, "out of memory reading %s", path);
    }
    if( r.ok ){
      c->n_manifests++;
      if( (rc = decodeV3(st, path, &r, version, c->delta))!=FNT_OK ){
        fnt_catalog_clear(c);
        return rc;
      }
    }
  }
  if( r.ok && r.p==r.end && c->operation && c->summary==0 ){
    char told[512] = "";
    if( version<5 || summaryOfEntries(c, told, sizeof(told)) ){
      c->summary = fnt_strdup(told);
      if( c->summary==0 ) errno = ENOMEM;
    }
  }
  if( !r.ok || r.p!=r.end || !c->operation || !c->summary ){
    fnt_catalog_clear(c);
    if( errno==ENOMEM ) return fnt_err(st, FNT_E_NOMEM, "out of memory reading %s", path);
    return fnt_err(st, FNT_E_CORRUPT, "%s: malformed snapshot file", path);
  }
  return FNT_OK;
}

int fnt_manifest_decode_listed(fnt_store *st, const char *rel, const char *path,
                               const uint8_t *p, size_t len, fnt_manifest **out){
  fnt_catalog cat;
  int rc;
  *out = 0;
  if( len<8 || memcmp(p, catalogMagic, 8)!=0 ){
    return fnt_manifest_decode(st, path, p, len, out);
  }
  rc = fnt_catalog_decode(st, path, p, len, &cat);
  if( rc ) return rc;
  if( cat.delta==0 || strcmp(cat.delta->path, rel)!=0 ){
    fnt_catalog_clear(&cat);
    return fnt_err(st, FNT_E_CORRUPT, "%s: is listed as a manifest but does "
                   "not hold the entries of snapshot %s", path, rel);
  }
  *out = cat.delta;
  cat.delta = 0;
  fnt_catalog_clear(&cat);
  return FNT_OK;
}
