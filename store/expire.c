/*
** expire.c -- expiring old snapshots and removing the files no snapshot
** needs (fnt_expire_snapshots).
**
** Every commit adds a snapshot file, and compaction leaves the files it
** merged behind for the snapshots before it.  Expiry keeps the newest
** snapshot and every snapshot committed within the retention window,
** expires the others (catalog/EXPIRED) and removes their files but those
** a remaining snapshot lists for the entries they hold (format 3), then
** removes the segment and manifest files that no remaining snapshot lists.
**
** Safety:
**   - the newest snapshot is never expired, so the table never changes;
**   - a file is removed only if no retained snapshot lists it AND it is
**     older than the retention window and than an hour: a commit in flight
**     in another process writes its files before it links its snapshot, and
**     those files are young, so they are never taken for orphans;
**   - expirers take turns (an flock of catalog/): two at once could
**     otherwise write EXPIRED in the wrong order and lower it, making
**     snapshots whose files the other removed readable again;
**   - a reader that pinned an expired snapshot (older than the window) may
**     find its files gone and gets a clear error naming the missing file,
**     never wrong rows.
*/
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "internal.h"

#define ORPHAN_GRACE INT64_C(3600)/* seconds an unlisted file is presumed in flight */

/* A sorted set of relative paths: the manifests to read. */
typedef struct path_set {
  char **v;
  size_t n, cap;
} path_set;

static int setAdd(path_set *s, const char *p){
  if( s->n==s->cap ){
    size_t cap = s->cap ? s->cap*2 : 256;
    char **v = fnt_realloc(s->v, cap*sizeof(char*));
    if( v==0 ) return FNT_E_NOMEM;
    s->v = v;
    s->cap = cap;
  }
  s->v[s->n] = fnt_strdup(p);
  if( s->v[s->n]==0 ) return FNT_E_NOMEM;
  s->n++;
  return FNT_OK;
}

static int cmpStr(const void *a, const void *b){
  return strcmp(*(const char*const*)a, *(const char*const*)b);
}

static void setFree(path_set *s){
  size_t i;
  for(i=0; i<s->n; i++) fnt_free(s->v[i]);
  fnt_free(s->v);
}

/* The files the retained snapshots list, as a sorted array of the hashes
** of their relative paths: 8 bytes a file instead of a copy of its path,
** so that expiring a warehouse of many runs stays small.  Two paths of one
** hash can only make a file look listed, which keeps it: never a removal
** of a listed file. */
typedef struct live_set {
  uint64_t *h;
  size_t n, cap;
} live_set;

static int liveAdd(live_set *s, const char *p){
  if( s->n==s->cap ){
    size_t cap = s->cap ? s->cap*2 : 1024;
    uint64_t *h = fnt_realloc(s->h, cap*sizeof(uint64_t));
    if( h==0 ) return FNT_E_NOMEM;
    s->h = h;
    s->cap = cap;
  }
  s->h[s->n++] = fnt_hash(p, strlen(p));
  return FNT_OK;
}

static int liveHas(const live_set *s, const char *p){
  uint64_t h = fnt_hash(p, strlen(p));
  return bsearch(&h, s->h, s->n, sizeof(uint64_t), fnt_cmp_u64)!=0;
}

/* 1 when catalog c lists `path`. */
static int catalogLists(const fnt_catalog *c, const char *path){
  size_t i;
  for(i=0; i<c->n_manifests; i++) if( strcmp(c->manifest_paths[i], path)==0 ) return 1;
  return 0;
}

/* Adds the manifests snapshot `id` lists to `mans` (FNT_E_NOTFOUND when it
** was expired meanwhile), but those `prev` (the snapshot before, whose list
** it mostly repeats) lists; then `id`'s catalog becomes prev.  So mans
** holds about one path per snapshot, not one per listed manifest.  The
** entries the snapshot adds itself (format 3: a manifest named after it)
** go to `live` at once: decoded here, not read again. */
static int addManifests(fnt_store *st, uint64_t id, path_set *mans,
                        live_set *live, fnt_catalog *prev){
  fnt_catalog cat;
  size_t i, j;
  int rc = fnt_catalog_read(st, id, &cat);
  if( rc ) return rc;
  for(i=0; rc==FNT_OK && i<cat.n_manifests; i++){
    const char *man = cat.manifest_paths[i];
    if( cat.delta && strcmp(man, cat.delta->path)==0 ){
      rc = liveAdd(live, man);
      for(j=0; rc==FNT_OK && j<cat.delta->n; j++) rc = liveAdd(live, cat.delta->entries[j].path);
    }else if( !catalogLists(prev, man) ){
      rc = setAdd(mans, man);
    }
  }
  fnt_catalog_clear(prev);
  *prev = cat;
  if( rc==FNT_E_NOMEM ) rc = fnt_err(st, rc, "out of memory");
  return rc;
}

/* Adds every distinct manifest of the sorted `mans`, and every file it
** lists, to `live`: each manifest read once, however many snapshots list
** it. */
static int markLive(fnt_store *st, const path_set *mans, live_set *live){
  size_t i, j;
  int rc = FNT_OK;
  for(i=0; rc==FNT_OK && i<mans->n; i++){
    fnt_manifest *m;
    if( i>0 && strcmp(mans->v[i], mans->v[i-1])==0 ) continue;
    rc = fnt_manifest_get(st, mans->v[i], &m);
    if( rc ) break;
    rc = liveAdd(live, m->path);
    for(j=0; rc==FNT_OK && j<m->n; j++) rc = liveAdd(live, m->entries[j].path);
    fnt_manifest_release(st, m);
    if( rc==FNT_E_NOMEM ) rc = fnt_err(st, rc, "out of memory");
  }
  return rc;
}

/* What a sweep removes: the files `live` does not list that were last
** modified before `cutoff` (seconds since the epoch). */
typedef struct sweep_ctx {
  fnt_store *st;
  const live_set *live;
  int64_t cutoff;
  fnt_expire_stats *out;
  int rc;                        /* the error that stopped the walk */
} sweep_ctx;

/* fnt_io_walk's visit: a listed file needs no stat (most files are).
** Stops the walk (1) on an error, kept in x->rc. */
static int sweepVisit(void *ctx, int dirfd, const char *name, const char *rel,
                      int regular){
  sweep_ctx *x = ctx;
  struct stat sb;
  char *full;
  if( !regular || liveHas(x->live, rel) ) return 0;
  if( fstatat(dirfd, name, &sb, AT_SYMLINK_NOFOLLOW) || !S_ISREG(sb.st_mode) ){
    return 0;                                  /* gone meanwhile */
  }
  if( (int64_t)sb.st_mtime >= x->cutoff ){
    x->out->unlisted_kept++;                   /* young: maybe in flight */
    x->out->unlisted_kept_bytes += (uint64_t)sb.st_size;
    return 0;
  }
  full = fnt_path_join(x->st, rel);
  if( full==0 ){
    x->rc = fnt_err(x->st, FNT_E_NOMEM, "out of memory");
    return 1;
  }
  if( fnt_io_unlink(full)==0 ){
    x->out->files_removed++;
    x->out->bytes_removed += (uint64_t)sb.st_size;
  }else if( errno!=ENOENT ){
    x->rc = fnt_err(x->st, FNT_E_IO, "cannot remove %s: %s", full, strerror(errno));
  }
  fnt_free(full);
  return x->rc ? 1 : 0;
}

/* Removes the files under `rel` (recursively) that `live` does not list and
** that were last modified before `cutoff`. */
static int sweep(fnt_store *st, const char *rel, const live_set *live,
                 int64_t cutoff, fnt_expire_stats *out){
  sweep_ctx x = {st, live, cutoff, out, FNT_OK};
  int rc = fnt_io_walk(st->dir, rel, 0, sweepVisit, &x);   /* never dot files */
  if( rc>0 ) return x.rc;
  if( rc<0 && errno!=ENOENT ){
    return fnt_err(st, FNT_E_IO, "cannot list %s/%s: %s", st->dir, rel, strerror(errno));
  }
  return FNT_OK;
}

int fnt_expire_snapshots(fnt_store *st, int64_t keep_seconds,
                         fnt_expire_stats *out){
  fnt_expire_stats stats;
  live_set live = {0, 0, 0};
  path_set mans = {0, 0, 0};
  uint64_t *ids = 0, newest, lastExpired;
  size_t n = 0, i, nExpire, kept = 0;
  fnt_catalog prev;
  int64_t now = fnt_now_micros(), cutoffMicros, orphanCutoff;
  int rc, lock = -1;
  char *catDir;

  if( st==0 || keep_seconds<0 ) return FNT_E_MISUSE;
  memset(&stats, 0, sizeof(stats));
  fnt_err_clear(st);
  if( keep_seconds > now/1000000 ) keep_seconds = now/1000000;   /* no overflow */
  cutoffMicros = now - keep_seconds*1000000;
  /* Unlisted files younger than an hour may belong to a commit in flight in
  ** another process (written, not yet linked): never remove those, however
  ** short the snapshot retention. */
  orphanCutoff = (cutoffMicros < now - ORPHAN_GRACE*1000000 ? cutoffMicros
                  : now - ORPHAN_GRACE*1000000) / 1000000;
  catDir = fnt_path_join(st, FNT_DIR_CATALOG);
  if( catDir==0 ) return fnt_err(st, FNT_E_NOMEM, "out of memory");
  lock = fnt_io_lock_dir(catDir);
  rc = lock<0 ? fnt_err(st, FNT_E_IO, "cannot lock %s (expirers take turns): %s",
                        catDir, strerror(errno)) : FNT_OK;
  fnt_free(catDir);
  if( rc ) return rc;
  rc = fnt_snapshot_newest_id(st, &newest);
  if( rc==FNT_OK ) rc = fnt_catalog_ids(st, &ids, &n);
  if( rc ) goto done;
  qsort(ids, n, sizeof(uint64_t), fnt_cmp_u64);

  /* 1. The snapshots to expire: the oldest, committed before the window,
  ** never the newest. */
  for(nExpire=0; nExpire<n && rc==FNT_OK; nExpire++){
    fnt_catalog cat;
    int64_t ts;
    if( ids[nExpire]>=newest ) break;
    rc = fnt_catalog_read(st, ids[nExpire], &cat);   /* its time only */
    if( rc==FNT_E_NOTFOUND ){ rc = FNT_OK; continue; }   /* another expirer */
    if( rc ) break;
    ts = cat.ts_micros;
    fnt_catalog_clear(&cat);
    if( ts>=cutoffMicros ) break;               /* committed in the window */
  }
  if( rc ) goto done;

  /* 2. What the remaining snapshots list is live (listed again, so that a
  ** snapshot committed meanwhile is seen too: what it lists is what its
  ** parent, the newest before, lists, or younger files). */
  lastExpired = nExpire ? ids[nExpire-1] : 0;
  fnt_free(ids);
  ids = 0;
  rc = fnt_catalog_ids(st, &ids, &n);
  if( rc==FNT_OK ) qsort(ids, n, sizeof(uint64_t), fnt_cmp_u64);
  memset(&prev, 0, sizeof(prev));
  for(i=0; rc==FNT_OK && i<n; i++){
    if( ids[i]<=lastExpired ) continue;
    rc = addManifests(st, ids[i], &mans, &live, &prev);
    if( rc==FNT_E_NOTFOUND ) rc = FNT_OK;
    else kept++;
  }
  fnt_catalog_clear(&prev);
  if( rc==FNT_OK ){
    if( mans.n>1 ) qsort(mans.v, mans.n, sizeof(char*), cmpStr);
    rc = markLive(st, &mans, &live);
  }
  if( rc ) goto done;
  if( live.n>1 ) qsort(live.h, live.n, sizeof(uint64_t), fnt_cmp_u64);

  /* 3. Expire them: readers refuse ids up to the floor from now on (only
  ** ever raised: an expirer before us may have gone further); then
  ** remove their files, but those a retained snapshot lists for the
  ** entries they hold (FORMAT.md, "Expiring"): a later expiry removes
  ** those once nothing lists them. */
  if( lastExpired>fnt_snapshot_floor(st)
   && fnt_catalog_note(st, "EXPIRED", lastExpired, 1) ){
    rc = fnt_err(st, FNT_E_IO, "cannot write %s/" FNT_DIR_CATALOG "/EXPIRED: %s",
                 st->dir, strerror(errno));
    goto done;
  }
  for(i=0; i<n && rc==FNT_OK; i++){
    char name[64], *path;
    if( ids[i]>lastExpired ) continue;
    fnt_catalog_name(ids[i], name);
    if( liveHas(&live, name) ){
      stats.snapshots_expired++;
      continue;
    }
    path = fnt_path_join(st, name);
    if( path==0 ){ rc = fnt_err(st, FNT_E_NOMEM, "out of memory"); break; }
    if( fnt_io_unlink(path) && errno!=ENOENT ){
      rc = fnt_err(st, FNT_E_IO, "cannot remove %s: %s", path, strerror(errno));
    }else{
      stats.snapshots_expired++;
    }
    fnt_free(path);
  }
  stats.snapshots_kept = kept;
  if( rc ) goto done;

  /* 4. Remove what nothing lists and is older than the window. */
  rc = sweep(st, FNT_DIR_DATA, &live, orphanCutoff, &stats);
  if( rc==FNT_OK ) rc = sweep(st, FNT_DIR_METADATA, &live, orphanCutoff, &stats);
  if( rc==FNT_OK ) rc = sweep(st, FNT_DIR_TMP, &live, orphanCutoff, &stats);
done:
  fnt_io_unlock(lock);
  if( out ) *out = stats;
  fnt_free(ids);
  fnt_free(live.h);
  setFree(&mans);
  return rc;
}
