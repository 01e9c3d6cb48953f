/*
** metadata.c -- encoding and decoding the metadata files: snapshot (catalog
** version) files and manifests.  Every metadata file is
**   8-byte magic | body | 8-byte XXH3-64 of magic and body
** (FORMAT.md); decoders check the checksum before trusting a byte, and every
** read is bounds-checked, so a corrupt file is an error naming it.
*/
#include <errno.h>
#include <stdio.h>
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
                   size_t len, const char magic[8], fnt_rd *body){
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
  return FNT_OK;
}

int fnt_manifest_encode(const fnt_entry *e, size_t n, fnt_buf *out){
  size_t i, j;
  fnt_meta_begin(out, manifestMagic);
  fnt_put_varint(out, n);
  for(i=0; i<n; i++){
    fnt_put_u8(out, e[i].table);
    fnt_put_str(out, e[i].path);
    fnt_put_varint(out, e[i].file_size);
    fnt_put_varint(out, e[i].rows);
    fnt_put_str(out, e[i].run_id);
    fnt_put_str(out, e[i].repo);
    fnt_put_varint(out, fnt_zigzag(e[i].chunk));
    fnt_put_varint(out, fnt_zigzag(e[i].seq_min));
    fnt_put_varint(out, fnt_zigzag(e[i].seq_max));
    fnt_put_varint(out, fnt_zigzag(e[i].t_min));
    fnt_put_varint(out, fnt_zigzag(e[i].t_max));
    fnt_put_varint(out, e[i].snapshot_id);
    fnt_put_varint(out, e[i].n_keys);
    for(j=0; j<e[i].n_keys; j++){
      fnt_put_str(out, e[i].keys[j].run_id);
      fnt_put_varint(out, fnt_zigzag(e[i].keys[j].chunk));
    }
  }
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
  fnt_free(m->entries);
  fnt_free(m->path);
  fnt_free(m);
}

int fnt_manifest_decode(fnt_store *st, const char *path, const uint8_t *p,
                        size_t len, fnt_manifest **out){
  fnt_rd r;
  fnt_manifest *m;
  uint64_t n, i;
  int rc = fnt_meta_check(st, path, p, len, manifestMagic, &r), isnull;
  *out = 0;
  if( rc ) return rc;
  errno = 0;   /* fnt_get_str sets ENOMEM when it runs out of memory */
  n = fnt_get_varint(&r);
  /* Each entry takes at least 12 bytes: a count beyond that is corrupt. */
  if( !r.ok || n > (uint64_t)(r.end - r.p)/12 + 1 ){
    return fnt_err(st, FNT_E_CORRUPT, "%s: bad entry count", path);
  }
  m = fnt_calloc(1, sizeof(*m));
  if( m==0 ) return fnt_err(st, FNT_E_NOMEM, "out of memory reading %s", path);
  m->entries = fnt_calloc(n ? (size_t)n : 1, sizeof(fnt_entry));
  m->path = fnt_strdup(path);
  if( m->entries==0 || m->path==0 ){
    fnt_manifest_free(m);
    return fnt_err(st, FNT_E_NOMEM, "out of memory reading %s", path);
  }
  for(i=0; i<n && r.ok; i++){
    fnt_entry *e = &m->entries[i];
    m->n = (size_t)i + 1;
    e->table = fnt_get_u8(&r);
    e->path = fnt_get_str(&r, &isnull);
    e->file_size = fnt_get_varint(&r);
    e->rows = fnt_get_varint(&r);
    e->run_id = fnt_get_str(&r, &isnull);
    e->repo = fnt_get_str(&r, &isnull);
    e->chunk = fnt_unzigzag(fnt_get_varint(&r));
    e->seq_min = fnt_unzigzag(fnt_get_varint(&r));
    e->seq_max = fnt_unzigzag(fnt_get_varint(&r));
    e->t_min = fnt_unzigzag(fnt_get_varint(&r));
    e->t_max = fnt_unzigzag(fnt_get_varint(&r));
    e->snapshot_id = fnt_get_varint(&r);
    {
      uint64_t nk = fnt_get_varint(&r), k;
      if( r.ok && nk > (uint64_t)(r.end - r.p)/2 ) r.ok = 0;
      if( r.ok && nk>0 ){
        e->keys = fnt_calloc((size_t)nk, sizeof(fnt_key));
        if( e->keys==0 ) r.ok = 0;
        for(k=0; k<nk && r.ok; k++){
          e->keys[k].run_id = fnt_get_str(&r, &isnull);
          e->keys[k].chunk = fnt_unzigzag(fnt_get_varint(&r));
          e->n_keys = (size_t)k+1;
          if( r.ok && isnull ) r.ok = 0;
        }
      }
    }
    if( r.ok && (e->table>=FNT_NTABLES || !e->path || !e->run_id || !e->repo
              || strstr(e->path, "..")) ){
      r.ok = 0;
    }
  }
  if( !r.ok || r.p!=r.end ){
    fnt_manifest_free(m);
    if( errno==ENOMEM ) return fnt_err(st, FNT_E_NOMEM, "out of memory reading %s", path);
    return fnt_err(st, FNT_E_CORRUPT, "%s: malformed manifest entry %llu",
                   path, (unsigned long long)(i ? i-1 : 0));
  }
  *out = m;
  return FNT_OK;
}

void fnt_catalog_name(uint64_t id, char out[64]){
  snprintf(out, 64, FNT_DIR_CATALOG "/v%020llu", (unsigned long long)id);
}

int fnt_catalog_encode(const fnt_catalog *c, fnt_buf *out){
  size_t i;
  fnt_meta_begin(out, catalogMagic);
  fnt_put_varint(out, c->id);
  fnt_put_varint(out, c->parent_id);
  fnt_put_varint(out, fnt_zigzag(c->ts_micros));
  fnt_put_str(out, c->operation);
  fnt_put_str(out, c->summary);
  fnt_put_varint(out, c->added_files);
  fnt_put_varint(out, c->added_rows);
  fnt_put_varint(out, c->total_files);
  fnt_put_varint(out, c->total_rows);
  fnt_put_varint(out, c->n_manifests);
  for(i=0; i<c->n_manifests; i++) fnt_put_str(out, c->manifest_paths[i]);
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
  memset(c, 0, sizeof(*c));
}

int fnt_catalog_decode(fnt_store *st, const char *path, const uint8_t *p,
                       size_t len, fnt_catalog *c){
  fnt_rd r;
  uint64_t n, i;
  int isnull, rc = fnt_meta_check(st, path, p, len, catalogMagic, &r);
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
      c->manifest_paths[i] = fnt_get_str(&r, &isnull);
      c->n_manifests = (size_t)i + 1;
      if( r.ok && (isnull || strstr(c->manifest_paths[i], "..")) ) r.ok = 0;
    }
  }else{
    r.ok = 0;
  }
  if( !r.ok || r.p!=r.end || !c->operation ){
    fnt_catalog_clear(c);
    if( errno==ENOMEM ) return fnt_err(st, FNT_E_NOMEM, "out of memory reading %s", path);
    return fnt_err(st, FNT_E_CORRUPT, "%s: malformed snapshot file", path);
  }
  return FNT_OK;
}
