/*
** snapshot.c -- finding, pinning, caching and listing snapshots.
**
** The newest snapshot is the highest N for which catalog/vN exists.
** catalog/HEAD holds a recent N (a hint, written after each commit); a
** reader starts there and probes N+1, N+2, ... so a stale or missing hint
** costs a few stat() calls, never a wrong answer.  Files are immutable, so
** a snapshot already loaded is shared by reference count, and manifests are
** cached by path for as long as a snapshot lists them, then within a budget
** for the next ones (fnt_set_cache_budget): a long-lived handle holds what
** its pinned snapshots list, not what it has ever read.  A "manifest" may
** be a snapshot file holding its own entries (format 3), and ids up to
** catalog/EXPIRED are expired even while such a file stays.
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

uint64_t fnt_snapshot_floor(fnt_store *st){
  char *path = fnt_path_join(st, FNT_DIR_CATALOG "/EXPIRED");
  uint8_t *data = 0;
  size_t n = 0;
  uint64_t id = 0;
  if( path && fnt_io_read_file(path, &data, &n)==0 && n>0 && n<32 ){
    data[n] = 0;
    id = strtoull((char*)data, 0, 10);
  }
  fnt_free(data);
  fnt_free(path);
  return id;
}

/* Writes `text` to catalog/NAME through a tmp/ name and rename(): a
** reader sees the old or the new text, never part of one.  *synced: also
** fsync it and catalog/. */
int fnt_catalog_note(fnt_store *st, const char *name, uint64_t id, int synced){
  char text[32], tmpName[33], rel[64], *tmp, *dst, *dir;
  int n = snprintf(text, sizeof(text), "%llu\n", (unsigned long long)id), rc = -1;
  fnt_random_name(tmpName);
  snprintf(rel, sizeof(rel), FNT_DIR_TMP "/%s-%s", name, tmpName);
  tmp = fnt_path_join(st, rel);
  snprintf(rel, sizeof(rel), FNT_DIR_CATALOG "/%s", name);
  dst = fnt_path_join(st, rel);
  dir = fnt_path_join(st, FNT_DIR_CATALOG);
  if( tmp && dst && dir ){
    rc = fnt_io_write_file(tmp, text, (size_t)n, synced);
    if( rc==0 ) rc = fnt_io_rename(tmp, dst);
    if( rc ) fnt_io_unlink(tmp);
    else if( synced ) rc = fnt_io_fsync_dir(dir);
  }
  fnt_free(tmp);
  fnt_free(dst);
  fnt_free(dir);
  return rc;
}

void fnt_snapshot_hint(fnt_store *st, uint64_t id){
  /* Best effort: a lost hint only makes the next reader probe further.  No
  ** fsync for the same reason. */
  fnt_catalog_note(st, "HEAD", id, 0);
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

/* ---- The manifest cache: a hash table by path (chained), and the idle
** list of manifests no snapshot holds, evicted least recently used first
** once they take more than the budget. */

static fnt_manifest **bucketOf(fnt_store *st, uint64_t h){
  return &st->mbuckets[h & (st->n_mbuckets-1)];
}

static fnt_manifest *cacheFind(fnt_store *st, const char *path, uint64_t h){
  fnt_manifest *m;
  if( st->n_mbuckets==0 ) return 0;
  for(m = *bucketOf(st, h); m; m = m->hnext){
    if( m->hash==h && strcmp(m->path, path)==0 ) return m;
  }
  return 0;
}

/* Inserts m: FNT_OK, or FNT_E_NOMEM when there is no table at all (a
** table that cannot grow takes it all the same). */
static int cacheInsert(fnt_store *st, fnt_manifest *m){
  if( st->n_manifests>=st->n_mbuckets ){
    size_t nb = st->n_mbuckets ? 2*st->n_mbuckets : 64, i;
    fnt_manifest **b = fnt_calloc(nb, sizeof(*b));
    if( b ){
      for(i=0; i<st->n_mbuckets; i++){
        fnt_manifest *x = st->mbuckets[i], *next;
        for(; x; x = next){
          next = x->hnext;
          x->hnext = b[x->hash & (nb-1)];
          b[x->hash & (nb-1)] = x;
        }
      }
      fnt_free(st->mbuckets);
      st->mbuckets = b;
      st->n_mbuckets = nb;
    }
  }
  if( st->n_mbuckets==0 ) return FNT_E_NOMEM;
  m->hnext = *bucketOf(st, m->hash);
  *bucketOf(st, m->hash) = m;
  st->n_manifests++;
  return FNT_OK;
}

static void cacheRemove(fnt_store *st, fnt_manifest *m){
  fnt_manifest **pp;
  if( st->n_mbuckets==0 ) return;
  for(pp = bucketOf(st, m->hash); *pp; pp = &(*pp)->hnext){
    if( *pp==m ){
      *pp = m->hnext;
      st->n_manifests--;
      return;
    }
  }
}

static void idleUnlink(fnt_store *st, fnt_manifest *m){
  if( m->idle_prev ) m->idle_prev->idle_next = m->idle_next;
  else st->idle_head = m->idle_next;
  if( m->idle_next ) m->idle_next->idle_prev = m->idle_prev;
  else st->idle_tail = m->idle_prev;
  m->idle_prev = m->idle_next = 0;
  st->idle_bytes -= m->mem;
}

/* Frees idle manifests, oldest first, until they fit the budget. */
static void cacheTrim(fnt_store *st){
  while( st->idle_head && st->idle_bytes > st->cache_budget ){
    fnt_manifest *m = st->idle_head;
    idleUnlink(st, m);
    cacheRemove(st, m);
    fnt_manifest_free(m);
  }
}

void fnt_set_cache_budget(fnt_store *st, size_t bytes){
  if( st==0 ) return;
  st->cache_budget = bytes;
  cacheTrim(st);
}

void fnt_manifest_release(fnt_store *st, fnt_manifest *m){
  if( m==0 || --m->refs>0 ) return;
  m->idle_prev = st->idle_tail;
  m->idle_next = 0;
  if( st->idle_tail ) st->idle_tail->idle_next = m;
  else st->idle_head = m;
  st->idle_tail = m;
  st->idle_bytes += m->mem;
  cacheTrim(st);
}

int fnt_manifest_get(fnt_store *st, const char *path, fnt_manifest **out){
  size_t i, n;
  uint8_t *data;
  char *full;
  int rc;
  uint64_t h = fnt_hash(path, strlen(path));
  fnt_manifest *m = cacheFind(st, path, h);
  if( m ){
    if( m->refs++==0 ) idleUnlink(st, m);
    *out = m;
    return FNT_OK;
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
  rc = fnt_manifest_decode_listed(st, path, full, data, n, out);
  fnt_free(data);
  fnt_free(full);
  if( rc ) return rc;
  m = *out;
  /* The decoded path is the full one (for messages); keep the relative. */
  fnt_free(m->path);
  m->path = fnt_strdup(path);
  m->hash = h;
  if( m->path==0 || cacheInsert(st, m) ){
    fnt_manifest_free(m);
    *out = 0;
    return fnt_err(st, FNT_E_NOMEM, "out of memory");
  }
  m->refs = 1;
  m->mem = sizeof(*m) + strlen(path) + m->n*sizeof(fnt_entry)
         + m->n_refs_by*sizeof(fnt_entry_ref);
  for(i=0; i<m->n; i++){
    const fnt_entry *e = &m->entries[i];
    m->mem += strlen(e->path) + 3 + (e->run_id ? strlen(e->run_id) : 0)
            + (e->repo ? strlen(e->repo) : 0) + e->n_keys*(sizeof(fnt_key) + 16);
  }
  return FNT_OK;
}

/* The run and chunk a filing's snapshot filed, from its summary
** ("run_id=R chunk=K events=N", "run_id=R rows=N": R is the text between,
** so it may hold spaces).  The summary keeps 300 bytes of R: a run_id that
** long is looked up in the snapshot's files (runFromEntries). */
#define SUMMARY_RUN_MAX 300
static int catalogParseRun(fnt_store *st, fnt_catalog *c){
  const char *z = c->summary, *end;
  int isChunk = strcmp(c->operation, "file-chunk")==0;
  c->chunk = -1;
  if( z==0 || strncmp(z, "run_id=", 7)!=0
   || (!isChunk && strcmp(c->operation, "file-profile")!=0) ) return FNT_OK;
  z += 7;
  end = strrchr(z, ' ');                  /* " events=N" or " rows=N" */
  if( end && isChunk ){
    const char *k = end;
    while( k>z && k[-1]!=' ' ) k--;                    /* " chunk=K" */
    if( k>z && strncmp(k, "chunk=", 6)==0 ){
      c->chunk = strtoll(k+6, 0, 10);
      end = k-1;
    }else{
      end = 0;
    }
  }
  if( end==0 ) return FNT_OK;                          /* not ours: no run */
  c->run_id = fnt_malloc((size_t)(end-z)+1);
  if( c->run_id==0 ) return fnt_err(st, FNT_E_NOMEM, "out of memory");
  memcpy(c->run_id, z, (size_t)(end-z));
  c->run_id[end-z] = 0;
  return FNT_OK;
}

/* The run_id of the run-row or profile file that snapshot s added (for a
** run_id the summary cut). */
static int runFromEntries(fnt_store *st, fnt_snapshot *s){
  size_t i, j;
  for(i=s->n_manifests; i-->0; ){
    const fnt_manifest *m = s->manifests[i];
    for(j=0; j<m->n; j++){
      const fnt_entry *e = &m->entries[j];
      if( e->snapshot_id==s->cat.id && e->n_keys==0 && e->run_id
       && (e->table==FNT_TABLE_RUNS || e->table==FNT_TABLE_PROFILE) ){
        char *r = fnt_strdup(e->run_id);
        if( r==0 ) return fnt_err(st, FNT_E_NOMEM, "out of memory");
        fnt_free(s->cat.run_id);
        s->cat.run_id = r;
        return FNT_OK;
      }
    }
  }
  return FNT_OK;
}

static int runCut(const fnt_catalog *c){
  return c->run_id && strlen(c->run_id)>=SUMMARY_RUN_MAX;
}

uint64_t fnt_snapshot_bytes(const fnt_snapshot *s){
  uint64_t n = 0;
  size_t i, j;
  if( s==0 ) return 0;
  for(i=0; i<s->n_manifests; i++){
    for(j=0; j<s->manifests[i]->n; j++) n += s->manifests[i]->entries[j].file_size;
  }
  return n;
}

int fnt_run_id_looks_numeric(const char *z){
  while( *z==' ' || (*z>='\t' && *z<='\r') ) z++;
  return (*z>='0' && *z<='9') || *z=='+' || *z=='-' || *z=='.';
}

int fnt_snapshot_numeric_run_ids(const fnt_snapshot *s){
  size_t i;
  for(i=0; s && i<s->n_manifests; i++){
    if( s->manifests[i]->numeric_run_ids ) return 1;
  }
  return 0;
}

/* Reads and checks the snapshot file of `id` (not its manifests). */
int fnt_catalog_read(fnt_store *st, uint64_t id, fnt_catalog *cat){
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
    if( rc==FNT_OK && (rc = catalogParseRun(st, cat))!=FNT_OK ){
      fnt_catalog_clear(cat);
    }
  }
  fnt_free(data);
  fnt_free(path);
  return rc;
}

static void snapshotFree(fnt_snapshot *s){
  size_t i;
  for(i=0; i<s->n_manifests; i++) fnt_manifest_release(s->st, s->manifests[i]);
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
  /* A snapshot at or below the floor was expired: its file may be kept
  ** only for the entries it holds, which newer snapshots list. */
  if( id<=fnt_snapshot_floor(st) ){
    rc = fnt_err(st, FNT_E_NOTFOUND, "snapshot %llu not found (expired)",
                 (unsigned long long)id);
    goto done;
  }
  rc = fnt_catalog_read(st, id, &s->cat);
  if( rc ) goto done;
  s->manifests = fnt_calloc(s->cat.n_manifests+1, sizeof(fnt_manifest*));
  if( s->manifests==0 ){ rc = fnt_err(st, FNT_E_NOMEM, "out of memory"); goto done; }
  for(i=0; i<s->cat.n_manifests; i++){
    rc = fnt_manifest_get(st, s->cat.manifest_paths[i], &s->manifests[i]);
    if( rc ) goto done;
    s->n_manifests = i+1;
  }
  if( runCut(&s->cat) ) rc = runFromEntries(st, s);
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
  info->run_id = s->cat.run_id;
  info->chunk = s->cat.chunk;
}

static int cmpIdDesc(const void *a, const void *b){
  uint64_t x = *(const uint64_t*)a, y = *(const uint64_t*)b;
  return x<y ? 1 : x>y ? -1 : 0;
}

int fnt_snapshot_list(fnt_store *st,
                      int (*cb)(void *ctx, const fnt_snapshot_info *info),
                      void *ctx){
  uint64_t *ids = 0, expiredTo;
  size_t n = 0, i;
  int rc;
  if( st==0 || cb==0 ) return FNT_E_MISUSE;
  fnt_err_clear(st);
  expiredTo = fnt_snapshot_floor(st);
  rc = fnt_catalog_ids(st, &ids, &n);
  if( rc==FNT_OK ) qsort(ids, n, sizeof(*ids), cmpIdDesc);
  for(i=0; rc==FNT_OK && i<n && ids[i]>expiredTo; i++){
    fnt_snapshot s;
    fnt_snapshot_info info;
    memset(&s, 0, sizeof(s));
    fnt_snapshot *full = 0;
    rc = fnt_catalog_read(st, ids[i], &s.cat);
    if( rc==FNT_E_NOTFOUND ){ rc = FNT_OK; continue; }   /* just expired */
    if( rc ) break;
    /* A run_id the summary cut: from the snapshot's files. */
    if( runCut(&s.cat) ){
      rc = fnt_snapshot_load(st, ids[i], &full);
      if( rc==FNT_E_NOTFOUND ){ rc = FNT_OK; fnt_catalog_clear(&s.cat); continue; }
      if( rc ){ fnt_catalog_clear(&s.cat); break; }
    }
    fnt_snapshot_describe(full ? full : &s, &info);
    if( cb(ctx, &info) ) i = n;
    fnt_snapshot_release(full);
    fnt_catalog_clear(&s.cat);
  }
  fnt_free(ids);
  return rc;
}

void fnt_store_caches_free(fnt_store *st){
  size_t i;
  fnt_snapshot_release(st->current);
  st->current = 0;
  /* Every snapshot is released by now: every manifest is idle. */
  for(i=0; i<st->n_mbuckets; i++){
    fnt_manifest *m = st->mbuckets[i], *next;
    for(; m; m = next){
      next = m->hnext;
      fnt_manifest_free(m);
    }
  }
  fnt_free(st->mbuckets);
  st->mbuckets = 0;
  st->n_mbuckets = st->n_manifests = 0;
  st->idle_head = st->idle_tail = 0;
  st->idle_bytes = 0;
  fnt_segment_cache_free(st);
}
