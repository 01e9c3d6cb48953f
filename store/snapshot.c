/*
** snapshot.c -- finding, pinning, caching and listing snapshots.
**
** The newest snapshot is the highest N for which catalog/vN exists.
** catalog/HEAD holds a recent N (a hint, written after each commit); a
** reader starts there and probes N+1, N+2, ... so a stale or missing hint
** costs a few stat() calls, never a wrong answer.  Files are immutable, so
** manifests are cached by path for the life of the handle and a snapshot
** already loaded is shared by reference count.
*/
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "segment.h"

static int catalogExists(fnt_store *st, uint64_t id){
  char name[64], *path;
  int e;
  fnt_catalog_name(id, name);
  path = fnt_path_join(st, name);
  if( path==0 ){ errno = ENOMEM; return -1; }
  e = fnt_io_exists(path);
  fnt_free(path);
  return e;
}

int fnt_catalog_ids(fnt_store *st, uint64_t **ids, size_t *n){
  char *dir = fnt_path_join(st, FNT_DIR_CATALOG);
  DIR *d;
  struct dirent *de;
  size_t cap = 0;
  int rc = FNT_OK;
  *ids = 0;
  *n = 0;
  if( dir==0 ) return fnt_err(st, FNT_E_NOMEM, "out of memory");
  d = opendir(dir);
  if( d==0 ){
    rc = fnt_err(st, errno==ENOMEM ? FNT_E_NOMEM : FNT_E_IO, "%s: %s", dir,
                 strerror(errno));
    fnt_free(dir);
    return rc;
  }
  while( (de = readdir(d))!=0 ){
    if( de->d_name[0]!='v' || strlen(de->d_name)!=21 ) continue;
    if( *n==cap ){
      uint64_t *p;
      cap = cap ? cap*2 : 64;
      p = fnt_realloc(*ids, cap*sizeof(uint64_t));
      if( p==0 ){ rc = fnt_err(st, FNT_E_NOMEM, "out of memory"); break; }
      *ids = p;
    }
    (*ids)[(*n)++] = strtoull(de->d_name+1, 0, 10);
  }
  closedir(d);
  fnt_free(dir);
  if( rc ){
    fnt_free(*ids);
    *ids = 0;
    *n = 0;
  }
  return rc;
}

/* The highest id in catalog/ by listing it: used when HEAD is unusable. */
static int scanCatalogDir(fnt_store *st, uint64_t *maxId){
  uint64_t *ids;
  size_t n, i;
  int rc = fnt_catalog_ids(st, &ids, &n);
  *maxId = 0;
  for(i=0; i<n; i++) if( ids[i]>*maxId ) *maxId = ids[i];
  fnt_free(ids);
  return rc;
}

int fnt_snapshot_newest_id(fnt_store *st, uint64_t *id){
  char *head = fnt_path_join(st, FNT_DIR_CATALOG "/HEAD");
  uint8_t *data = 0;
  size_t n = 0;
  uint64_t h = 0;
  int e;
  if( head==0 ) return fnt_err(st, FNT_E_NOMEM, "out of memory");
  if( fnt_io_read_file(head, &data, &n)==0 && n>0 && n<32 ){
    data[n] = 0;
    h = strtoull((char*)data, 0, 10);
  }
  fnt_free(data);
  fnt_free(head);
  if( h>0 && catalogExists(st, h)!=1 ) h = 0;   /* expired or bogus hint */
  if( h==0 ){
    int rc = scanCatalogDir(st, &h);
    if( rc ) return rc;
  }
  while( (e = catalogExists(st, h+1))==1 ) h++;
  if( e<0 ){
    return fnt_err(st, errno==ENOMEM ? FNT_E_NOMEM : FNT_E_IO,
                   "%s/" FNT_DIR_CATALOG ": %s", st->dir, strerror(errno));
  }
  *id = h;
  return FNT_OK;
}

void fnt_snapshot_hint(fnt_store *st, uint64_t id){
  char text[32], tmpName[33], *tmp, *head;
  int n = snprintf(text, sizeof(text), "%llu\n", (unsigned long long)id);
  char rel[64];
  fnt_random_name(tmpName);
  snprintf(rel, sizeof(rel), FNT_DIR_TMP "/head-%s", tmpName);
  tmp = fnt_path_join(st, rel);
  head = fnt_path_join(st, FNT_DIR_CATALOG "/HEAD");
  /* Best effort: a lost hint only makes the next reader probe further.  No
  ** fsync for the same reason. */
  if( tmp && head ){
    int fd_ok = fnt_io_write_file(tmp, text, (size_t)n, 1)==0;
    if( !fd_ok || fnt_io_rename(tmp, head) ) fnt_io_unlink(tmp);
  }
  fnt_free(tmp);
  fnt_free(head);
}

/* 1 when snapshot s lists `path` (a manifest of its list, or a file of one). */
static int snapshotLists(const fnt_snapshot *s, const char *path){
  size_t i, j;
  for(i=0; i<s->cat.n_manifests; i++){
    if( strcmp(s->cat.manifest_paths[i], path)==0 ) return 1;
  }
  for(i=0; i<s->n_manifests; i++){
    for(j=0; j<s->manifests[i]->n; j++){
      if( strcmp(s->manifests[i]->entries[j].path, path)==0 ) return 1;
    }
  }
  return 0;
}

int fnt_listed_file_missing(fnt_store *st, const char *path, const char *what){
  fnt_snapshot *s = 0;
  int listed = 1;
  /* A listed file that is gone is corruption only if the newest snapshot
  ** lists it: otherwise only older snapshots did, and expiry removed it
  ** (expire never removes what a retained snapshot lists), so the reader
  ** holds an expired snapshot.  The check loads the newest snapshot, whose
  ** own files may be missing: no recursion then. */
  if( !st->checking_missing ){
    st->checking_missing = 1;
    if( fnt_snapshot_current(st, &s)==FNT_OK ){
      listed = snapshotLists(s, path);
      fnt_snapshot_release(s);
    }
    st->checking_missing = 0;
  }
  if( !listed ){
    return fnt_err(st, FNT_E_EXPIRED, "%s/%s: removed: the snapshot being "
                   "read was expired (fnt expire) while it was read; re-run "
                   "to read the newest snapshot", st->dir, path);
  }
  return fnt_err(st, FNT_E_CORRUPT, "%s/%s: cannot open %s: missing",
                 st->dir, path, what);
}

int fnt_manifest_get(fnt_store *st, const char *path, fnt_manifest **out){
  size_t i, n;
  uint8_t *data;
  char *full;
  int rc;
  for(i=0; i<st->n_manifests; i++){
    if( strcmp(st->manifests[i]->path, path)==0 ){
      *out = st->manifests[i];
      return FNT_OK;
    }
  }
  full = fnt_path_join(st, path);
  if( full==0 ) return fnt_err(st, FNT_E_NOMEM, "out of memory");
  if( fnt_io_read_file(full, &data, &n) ){
    rc = errno==ENOENT ? fnt_listed_file_missing(st, path, "manifest")
       : fnt_err(st, errno==ENOMEM ? FNT_E_NOMEM : FNT_E_IO,
                 "%s: cannot read manifest: %s", full, strerror(errno));
    fnt_free(full);
    return rc;
  }
  rc = fnt_manifest_decode(st, full, data, n, out);
  fnt_free(data);
  fnt_free(full);
  if( rc ) return rc;
  /* The decoded path is the full one (for messages); keep the relative. */
  fnt_free((*out)->path);
  (*out)->path = fnt_strdup(path);
  if( (*out)->path==0 || st->n_manifests==st->cap_manifests ){
    size_t cap = st->cap_manifests ? st->cap_manifests*2 : 16;
    fnt_manifest **m = (*out)->path ? fnt_realloc(st->manifests, cap*sizeof(*m)) : 0;
    if( m==0 ){
      fnt_manifest_free(*out);
      *out = 0;
      return fnt_err(st, FNT_E_NOMEM, "out of memory");
    }
    st->manifests = m;
    st->cap_manifests = cap;
  }
  st->manifests[st->n_manifests++] = *out;
  return FNT_OK;
}

/* Reads and checks the snapshot file of `id` (not its manifests). */
static int readCatalog(fnt_store *st, uint64_t id, fnt_catalog *cat){
  char name[64], *path;
  uint8_t *data = 0;
  size_t n;
  int rc;
  fnt_catalog_name(id, name);
  path = fnt_path_join(st, name);
  if( path==0 ) return fnt_err(st, FNT_E_NOMEM, "out of memory");
  if( fnt_io_read_file(path, &data, &n) ){
    rc = errno==ENOENT
       ? fnt_err(st, FNT_E_NOTFOUND, "snapshot %llu not found (no %s)",
                 (unsigned long long)id, path)
       : fnt_err(st, errno==ENOMEM ? FNT_E_NOMEM : FNT_E_IO, "%s: %s", path,
                 strerror(errno));
  }else{
    rc = fnt_catalog_decode(st, path, data, n, cat);
    if( rc==FNT_OK && cat->id!=id ){
      rc = fnt_err(st, FNT_E_CORRUPT, "%s: holds snapshot %llu", path,
                   (unsigned long long)cat->id);
      fnt_catalog_clear(cat);
    }
  }
  fnt_free(data);
  fnt_free(path);
  return rc;
}

static void snapshotFree(fnt_snapshot *s){
  fnt_catalog_clear(&s->cat);
  fnt_free(s->manifests);
  fnt_free(s);
}

int fnt_snapshot_load(fnt_store *st, uint64_t id, fnt_snapshot **out){
  fnt_snapshot *s;
  size_t i;
  int rc = FNT_OK;

  *out = 0;
  if( st->current && st->current->cat.id==id ){
    st->current->refs++;
    *out = st->current;
    return FNT_OK;
  }
  s = fnt_calloc(1, sizeof(*s));
  if( s==0 ) return fnt_err(st, FNT_E_NOMEM, "out of memory");
  s->st = st;
  s->refs = 1;
  if( id==0 ){
    s->cat.operation = fnt_strdup("empty");
    s->cat.summary = fnt_strdup("");
    if( !s->cat.operation || !s->cat.summary ){
      snapshotFree(s);
      return fnt_err(st, FNT_E_NOMEM, "out of memory");
    }
    *out = s;
    return FNT_OK;
  }
  rc = readCatalog(st, id, &s->cat);
  if( rc ) goto done;
  s->manifests = fnt_calloc(s->cat.n_manifests+1, sizeof(fnt_manifest*));
  if( s->manifests==0 ){ rc = fnt_err(st, FNT_E_NOMEM, "out of memory"); goto done; }
  for(i=0; i<s->cat.n_manifests; i++){
    rc = fnt_manifest_get(st, s->cat.manifest_paths[i], &s->manifests[i]);
    if( rc ) goto done;
    s->n_manifests = i+1;
  }
done:
  if( rc ){
    snapshotFree(s);
    return rc;
  }
  *out = s;
  return FNT_OK;
}

int fnt_snapshot_at(fnt_store *st, uint64_t id, fnt_snapshot **out){
  if( st==0 || out==0 ) return FNT_E_MISUSE;
  fnt_err_clear(st);
  return fnt_snapshot_load(st, id, out);
}

int fnt_snapshot_current(fnt_store *st, fnt_snapshot **out){
  uint64_t id;
  int rc;
  if( st==0 || out==0 ) return FNT_E_MISUSE;
  *out = 0;
  fnt_err_clear(st);
  rc = fnt_snapshot_newest_id(st, &id);
  if( rc ) return rc;
  rc = fnt_snapshot_load(st, id, out);
  if( rc ) return rc;
  if( st->current!=*out ){
    fnt_snapshot_release(st->current);
    st->current = *out;
    (*out)->refs++;
  }
  return FNT_OK;
}

void fnt_snapshot_release(fnt_snapshot *s){
  if( s && --s->refs==0 ) snapshotFree(s);
}

void fnt_snapshot_describe(const fnt_snapshot *s, fnt_snapshot_info *info){
  memset(info, 0, sizeof(*info));
  if( s==0 ) return;
  info->id = s->cat.id;
  info->parent_id = s->cat.parent_id;
  info->ts_micros = s->cat.ts_micros;
  info->operation = s->cat.operation;
  info->summary = s->cat.summary;
  info->added_files = s->cat.added_files;
  info->added_rows = s->cat.added_rows;
  info->total_files = s->cat.total_files;
  info->total_rows = s->cat.total_rows;
}

static int cmpIdDesc(const void *a, const void *b){
  uint64_t x = *(const uint64_t*)a, y = *(const uint64_t*)b;
  return x<y ? 1 : x>y ? -1 : 0;
}

int fnt_snapshot_list(fnt_store *st,
                      int (*cb)(void *ctx, const fnt_snapshot_info *info),
                      void *ctx){
  uint64_t *ids = 0;
  size_t n = 0, i;
  int rc;
  if( st==0 || cb==0 ) return FNT_E_MISUSE;
  fnt_err_clear(st);
  rc = fnt_catalog_ids(st, &ids, &n);
  if( rc==FNT_OK ) qsort(ids, n, sizeof(*ids), cmpIdDesc);
  for(i=0; rc==FNT_OK && i<n; i++){
    fnt_snapshot s;
    fnt_snapshot_info info;
    memset(&s, 0, sizeof(s));
    rc = readCatalog(st, ids[i], &s.cat);
    if( rc==FNT_E_NOTFOUND ){ rc = FNT_OK; continue; }   /* just expired */
    if( rc ) break;
    fnt_snapshot_describe(&s, &info);
    if( cb(ctx, &info) ) i = n;
    fnt_catalog_clear(&s.cat);
  }
  fnt_free(ids);
  return rc;
}

void fnt_store_caches_free(fnt_store *st){
  size_t i;
  fnt_snapshot_release(st->current);
  st->current = 0;
  for(i=0; i<st->n_manifests; i++) fnt_manifest_free(st->manifests[i]);
  fnt_free(st->manifests);
  st->manifests = 0;
  st->n_manifests = st->cap_manifests = 0;
  fnt_segment_cache_free(st);
}
