/*
** commit.c -- filing: validating a chunk or a profile, encoding its segment
** files, and publishing them in one atomic snapshot commit.
**
** The commit protocol (FORMAT.md, "Committing"), in order:
**   1. check the newest snapshot: already filed -> 0, nothing written;
**   2. write each segment file under a fresh random name, fsync it, fsync
**      its folder and that folder's parent;
**   3. read the newest snapshot N again and re-check (another process may
**      have filed the same chunk meanwhile);
**   4. write the one manifest this commit adds, fsync it and metadata/:
**      the new segments' entries, or, once N's list is long, those merged
**      with the tail of N's small manifests (the list is decided first, so
**      that no manifest is written that the snapshot does not list);
**   5. write snapshot N+1 (its manifest list: N's, or N's head when the
**      tail was merged, plus that manifest) to tmp/, fsync, and link() it
**      to catalog/v(N+1).  link() never overwrites: EEXIST means another
**      commit won N+1, so remove the manifest and go back to 3; so does
**      an id at or below catalog/EXPIRED (a writer that stalled while
**      expire removed snapshot N+1 unlinks what it linked);
**   6. fsync catalog/, remove the tmp name, update the HEAD hint.
** Until step 5 succeeds nothing is visible; files of a failed or lost
** commit are never listed by any snapshot, so never read.
*/
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "calls.h"
#include "commit.h"
#include "segment.h"

#define MAX_ATTEMPTS     1000   /* lost races before FNT_E_BUSY */
#define MERGE_MANIFESTS  16     /* merge the list when it grows past this */

typedef struct filed_ctx {
  const fnt_commit *q;
  int table;
  const char *repo;
  int conflict;
} filed_ctx;

static int filedKey(void *pCtx, const char *runId, int64_t chunk){
  filed_ctx *x = pCtx;
  const fnt_commit *q = x->q;
  if( strcmp(runId, q->run_id)!=0 ) return 0;
  if( q->chunk<0 ) return x->table==FNT_TABLE_PROFILE;
  if( x->table==FNT_TABLE_PROFILE ) return 0;
  if( chunk==q->chunk ) return 1;
  if( strcmp(x->repo, q->repo)!=0 ) x->conflict = 1;
  return 0;
}

/* 1 already filed, 0 not yet, FNT_E_CONFLICT when the run belongs to
** another repo. */
static int checkFiled(fnt_store *st, const fnt_snapshot *s, fnt_commit *q){
  size_t i;
  filed_ctx x;
  if( q->check ) return q->check(st, s, q->ctx);
  memset(&x, 0, sizeof(x));
  x.q = q;
  q->n_small = 0;
  /* By each manifest's index: a commit costs the same at 20,000 entries
  ** as at 20, not a scan of all of them. */
  for(i=0; i<s->n_manifests; i++){
    const fnt_manifest *m = s->manifests[i];
    fnt_entry_iter it;
    const fnt_entry *e;
    /* This repo's run-row and profile files not yet merged. */
    fnt_entry_iter_init(&it, m, FNT_BY_SMALL_REPO, q->repo);
    while( fnt_entry_iter_next(&it) ) q->n_small++;
    fnt_entry_iter_init(&it, m, FNT_BY_RUN, q->run_id);
    while( (e = fnt_entry_iter_next(&it))!=0 ){
      if( e->table==FNT_TABLE_CALLS ) continue;
      x.table = e->table;
      x.repo = e->repo;
      if( fnt_entry_each_key(e, filedKey, &x) ) return 1;
    }
  }
  if( x.conflict ){
    return fnt_err(st, FNT_E_CONFLICT, "run_id '%s' is already filed under "
                   "another repo (not '%s')", q->run_id, q->repo);
  }
  return 0;
}

/* An I/O error's code and message "WHAT PATH: reason" into err[nerr]. */
static int ioErrTo(char *err, size_t nerr, const char *what, const char *path){
  int code = errno==ENOMEM ? FNT_E_NOMEM : FNT_E_IO;
  snprintf(err, nerr, "%s %s: %s", what, path, strerror(errno));
  return code;
}

/* Room for an error message made off the handle. */
#define FNT_ERR_LEN 1024

/* Writes `bytes` to a fresh file named DIR/<random>SUFFIX, durably: the
** file is fsynced, and its folder too unless the name is a temporary one
** (tmp/ names are linked elsewhere, and only the link must last).  *rel
** gets the relative path.  Touches nothing of `st` but its folder's name,
** so a worker thread may call it; an error's message goes to err[nerr]. */
static int writeFileAt(const fnt_store *st, const char *dir, const char *suffix,
                       const fnt_buf *bytes, char **rel, char *err, size_t nerr){
  int syncDir = strcmp(dir, FNT_DIR_TMP)!=0;
  char name[33], *full = 0, *fullDir = 0;
  size_t n = strlen(dir) + 40 + strlen(suffix);
  int rc = FNT_OK, made;
  *rel = fnt_malloc(n);
  if( *rel==0 ){ snprintf(err, nerr, "out of memory"); return FNT_E_NOMEM; }
  fnt_random_name(name);
  snprintf(*rel, n, "%s/%s%s", dir, name, suffix);
  full = fnt_path_join(st, *rel);
  fullDir = fnt_path_join(st, dir);
  if( full==0 || fullDir==0 ){
    snprintf(err, nerr, "out of memory");
    rc = FNT_E_NOMEM;
    goto done;
  }
  made = fnt_io_mkdirs(fullDir);
  if( made<0 ){ rc = ioErrTo(err, nerr, "cannot create", fullDir); goto done; }
  if( fnt_io_write_file(full, bytes->data, bytes->len, 1) ){
    rc = ioErrTo(err, nerr, "cannot write", full);
    fnt_io_unlink(full);
    goto done;
  }
  if( syncDir && fnt_io_fsync_dir(fullDir) ){
    rc = ioErrTo(err, nerr, "cannot fsync", fullDir);
    goto done;
  }
  /* A partition folder is a name in its parent, which must be durable
  ** before anything lists files in it.  Its parent is synced even when this
  ** commit did not make the folder: another process may just have made it
  ** and not synced it yet.  Folders made higher up are synced too. */
  if( made<1 && strncmp(dir, FNT_DIR_DATA "/", sizeof(FNT_DIR_DATA))==0 ) made = 1;
  while( made-- > 0 ){
    char *slash = strrchr(fullDir, '/');
    if( slash==0 ) break;
    *slash = 0;
    if( fnt_io_fsync_dir(fullDir) ){
      rc = ioErrTo(err, nerr, "cannot fsync", fullDir);
      goto done;
    }
  }
done:
  fnt_free(full);
  fnt_free(fullDir);
  if( rc ){
    fnt_free(*rel);
    *rel = 0;
  }
  return rc;
}

/* The same, the error reported on the handle. */
static int ioErr(fnt_store *st, const char *what, const char *path){
  char err[FNT_ERR_LEN];
  int rc = ioErrTo(err, sizeof(err), what, path);
  return fnt_err(st, rc, "%s", err);
}

static int writeNewFile(fnt_store *st, const char *dir, const char *suffix,
                        const fnt_buf *bytes, char **rel){
  char err[FNT_ERR_LEN];
  int rc = writeFileAt(st, dir, suffix, bytes, rel, err, sizeof(err));
  return rc ? fnt_err(st, rc, "%s", err) : FNT_OK;
}

/* A segment file of q written, its entry's path and size set. */
static int writePending(const fnt_store *st, fnt_pending *f, char *err, size_t nerr){
  int rc = writeFileAt(st, f->part_dir, ".fnseg", &f->bytes, &f->entry.path, err, nerr);
  if( rc==FNT_OK ) f->entry.file_size = f->bytes.len;
  return rc;
}

static void removeFile(fnt_store *st, const char *rel){
  char *full;
  if( rel==0 ) return;
  full = fnt_path_join(st, rel);
  if( full ) fnt_io_unlink(full);
  fnt_free(full);
}

static int cmpPath(const void *a, const void *b){
  return strcmp(*(const char*const*)a, *(const char*const*)b);
}

/* 1 when entry `e` is one the commit drops. */
static int isRemoved(const fnt_commit *q, const fnt_entry *e){
  return q->n_removed>0
      && bsearch(&e->path, q->removed, q->n_removed, sizeof(char*), cmpPath)!=0;
}

/* 1 when manifest m lists a file the commit drops. */
static int holdsRemoved(const fnt_commit *q, const fnt_manifest *m){
  size_t j;
  for(j=0; q->n_removed>0 && j<m->n; j++) if( isRemoved(q, &m->entries[j]) ) return 1;
  return 0;
}

/* Builds the manifest list of snapshot base+1: base's manifests, and the
** commit's entries `oursM` in the snapshot file itself.  Once the list is
** long, the tail of small recent manifests is merged with them into one
** new manifest; when the commit drops files, the manifests that list them
** are rewritten into it without them (the others stay as they are).  *written
** gets the new manifest's path, so that a lost race can remove it.
** *droppedRows counts the rows dropped. */
static int buildList(fnt_store *st, const fnt_snapshot *base, const fnt_commit *q,
                     const fnt_manifest *oursM, fnt_catalog *cat, char **written,
                     uint64_t *droppedRows){
  size_t i, j, n = 0, nKept = 0, keep = base->n_manifests, total = oursM->n;
  fnt_entry *all;
  char *merge;               /* merge[i]: base's manifest i is rewritten */
  fnt_buf bytes = {0};
  int rc;
  *written = 0;
  *droppedRows = 0;
  if( q->n_removed==0 && base->n_manifests>=MERGE_MANIFESTS ){
    /* Merge the tail while it is no bigger than the manifest before it:
    ** sizes then grow geometrically, a list holds O(log n) manifests, and
    ** an entry is rewritten O(log n) times in the warehouse's life rather
    ** than at every merge. */
    size_t sum = oursM->n;
    while( keep>0 && (base->n_manifests-keep<2 || base->manifests[keep-1]->n<=2*sum) ){
      sum += base->manifests[--keep]->n;
    }
  }
  merge = fnt_calloc(base->n_manifests+1, 1);
  cat->manifest_paths = fnt_calloc(base->n_manifests+1, sizeof(char*));
  if( merge==0 || cat->manifest_paths==0 ){
    fnt_free(merge);
    return fnt_err(st, FNT_E_NOMEM, "out of memory");
  }
  for(i=0; i<base->n_manifests; i++){
    merge[i] = i>=keep || holdsRemoved(q, base->manifests[i]);
    if( merge[i] ){
      total += base->manifests[i]->n;
      continue;
    }
    cat->manifest_paths[nKept] = fnt_strdup(base->manifests[i]->path);
    if( cat->manifest_paths[nKept]==0 ){
      fnt_free(merge);
      return fnt_err(st, FNT_E_NOMEM, "out of memory");
    }
    cat->n_manifests = ++nKept;
  }
  all = fnt_calloc(total+1, sizeof(fnt_entry));
  if( all==0 ){
    fnt_free(merge);
    return fnt_err(st, FNT_E_NOMEM, "out of memory");
  }
  for(i=0; i<base->n_manifests; i++){
    for(j=0; merge[i] && j<base->manifests[i]->n; j++){
      const fnt_entry *e = &base->manifests[i]->entries[j];
      if( isRemoved(q, e) ) *droppedRows += e->rows;
      else all[n++] = *e;
    }
  }
  fnt_free(merge);
  if( n==0 ){
    /* Nothing merged: the snapshot file holds the commit's entries itself
    ** (no manifest file, and its fsyncs, per commit). */
    fnt_free(all);
    cat->delta = (fnt_manifest*)oursM;     /* borrowed: publish() unsets it */
    return FNT_OK;
  }
  for(j=0; j<oursM->n; j++) all[n++] = oursM->entries[j];
  rc = fnt_manifest_encode(all, n, &bytes);   /* entries are borrowed */
  fnt_free(all);
  if( rc ) rc = fnt_err(st, rc, "out of memory");
  else rc = writeNewFile(st, FNT_DIR_METADATA, ".fnman", &bytes, written);
  fnt_buf_free(&bytes);
  if( rc ) return rc;
  cat->manifest_paths[nKept] = fnt_strdup(*written);
  if( cat->manifest_paths[nKept]==0 ) return fnt_err(st, FNT_E_NOMEM, "out of memory");
  cat->n_manifests = nKept+1;
  return FNT_OK;
}

/* Tries to publish snapshot base+1.  1 published, 0 lost the race. */
static int publish(fnt_store *st, const fnt_snapshot *base, const fnt_commit *q,
                   const fnt_manifest *oursM, uint64_t *published){
  fnt_catalog cat;
  fnt_buf bytes = {0};
  char *written = 0, *tmpRel = 0, *tmpFull = 0, *target = 0, *catDir = 0;
  char name[64];
  uint64_t addedRows = 0, droppedRows = 0;
  size_t i;
  int rc;

  memset(&cat, 0, sizeof(cat));
  for(i=0; i<q->n_files; i++) addedRows += q->files[i].entry.rows;
  cat.id = base->cat.id + 1;
  cat.parent_id = base->cat.id;
  cat.ts_micros = fnt_now_micros();
  cat.operation = fnt_strdup(q->operation);
  cat.summary = fnt_strdup(q->summary);
  cat.added_files = q->n_files;
  cat.added_rows = addedRows;
  if( cat.operation==0 || cat.summary==0 ){ rc = fnt_err(st, FNT_E_NOMEM, "out of memory"); goto done; }
  rc = buildList(st, base, q, oursM, &cat, &written, &droppedRows);
  if( rc ) goto done;
  cat.total_files = base->cat.total_files + q->n_files - q->n_removed;
  cat.total_rows = base->cat.total_rows + addedRows - droppedRows;
  rc = fnt_catalog_encode(&cat, &bytes);
  if( rc ){ rc = fnt_err(st, rc, "out of memory"); goto done; }
  rc = writeNewFile(st, FNT_DIR_TMP, ".fncat", &bytes, &tmpRel);
  if( rc ) goto done;
  fnt_catalog_name(cat.id, name);
  tmpFull = fnt_path_join(st, tmpRel);
  target = fnt_path_join(st, name);
  catDir = fnt_path_join(st, FNT_DIR_CATALOG);
  if( !tmpFull || !target || !catDir ){ rc = fnt_err(st, FNT_E_NOMEM, "out of memory"); goto done; }
  if( fnt_io_link(tmpFull, target) ){
    if( errno==EEXIST ){
      rc = 0;                        /* lost the race for this id */
    }else{
      rc = ioErr(st, "cannot publish", target);
    }
    goto done;
  }
  if( cat.id<=fnt_snapshot_floor(st) ){
    /* We stalled so long that expire removed snapshot cat.id (it writes
    ** EXPIRED before it removes): our link holds a free name but an
    ** expired id, which no reader would see.  Take it back and retry. */
    if( fnt_io_unlink(target) && errno!=ENOENT ){
      rc = ioErr(st, "cannot remove", target);
    }else{
      rc = 0;
    }
    goto done;
  }
  *published = cat.id;
  if( fnt_io_fsync_dir(catDir) ){
    rc = fnt_err(st, FNT_E_IO, "snapshot %llu was published but fsync of %s "
                 "failed: %s", (unsigned long long)cat.id, catDir, strerror(errno));
    goto done;
  }
  rc = 1;
done:
  if( tmpFull ) fnt_io_unlink(tmpFull);
  if( rc<=0 && *published==0 ) removeFile(st, written);
  fnt_free(written);
  fnt_free(tmpRel);
  fnt_free(tmpFull);
  fnt_free(target);
  fnt_free(catDir);
  fnt_buf_free(&bytes);
  cat.delta = 0;                     /* borrowed from the caller */
  fnt_catalog_clear(&cat);
  return rc;
}

/* Writes files[from..n_files) not written yet (a filing's worker writes
** its own) and sets their entries. */
static int writeFiles(fnt_store *st, fnt_commit *q, size_t from, fnt_entry *entries){
  size_t i;
  for(i=from; i<q->n_files; i++){
    fnt_pending *f = &q->files[i];
    if( f->entry.path==0 ){
      char err[FNT_ERR_LEN];
      int rc = writePending(st, f, err, sizeof(err));
      if( rc ) return fnt_err(st, rc, "%s", err);
    }
    entries[i] = f->entry;
  }
  return FNT_OK;
}

void fnt_commit_underive(fnt_store *st, fnt_commit *q){
  size_t i;
  for(i=q->n_fixed; i<q->n_files; i++){
    fnt_pending *f = &q->files[i];
    removeFile(st, f->entry.path);
    fnt_buf_free(&f->bytes);
    fnt_free(f->part_dir);
    fnt_free(f->entry.path);
    memset(f, 0, sizeof(*f));
  }
  q->n_files = q->n_fixed;
  for(i=0; i<q->n_removed; i++) fnt_free(q->removed[i]);
  fnt_free(q->removed);
  q->removed = 0;
  q->n_removed = 0;
}

int fnt_commit_run(fnt_store *st, fnt_commit *q){
  fnt_snapshot *s = 0;
  fnt_manifest ours;
  fnt_entry *entries = 0;
  uint64_t published = 0, fingerprint = 0;
  size_t i;
  int rc, attempt;

  memset(&ours, 0, sizeof(ours));
  if( q->n_removed ) qsort(q->removed, q->n_removed, sizeof(char*), cmpPath);
  rc = fnt_snapshot_current(st, &s);
  if( rc ) return rc;
  rc = checkFiled(st, s, q);
  if( rc ){
    fnt_snapshot_release(s);
    return rc==1 ? 0 : rc;          /* already filed, or an error */
  }
  q->n_fixed = q->n_files;
  if( q->derive ){
    rc = q->derive(st, s, q, &fingerprint);
    if( rc ){ fnt_snapshot_release(s); return rc; }
  }
  fnt_snapshot_release(s);
  s = 0;
  if( q->n_removed ) qsort(q->removed, q->n_removed, sizeof(char*), cmpPath);
  if( q->ready ){
    rc = q->ready(st, q);
    if( rc ) return rc;
  }

  /* Room for every file, derived ones included (at most one more). */
  entries = fnt_calloc(q->n_files+2, sizeof(fnt_entry));
  if( entries==0 ) return fnt_err(st, FNT_E_NOMEM, "out of memory");
  rc = writeFiles(st, q, 0, entries);
  if( rc ) goto fail;
  ours.entries = entries;
  ours.n = q->n_files;
  for(attempt=0; ; attempt++){
    if( attempt==MAX_ATTEMPTS ){
      rc = fnt_err(st, FNT_E_BUSY, "gave up after %d lost commit races", attempt);
      goto fail;
    }
    rc = fnt_snapshot_current(st, &s);
    if( rc ) goto fail;
    rc = checkFiled(st, s, q);
    if( rc ){
      fnt_snapshot_release(s);
      if( rc==1 ){ rc = 0; goto cleanup; }   /* filed by a racing commit */
      goto fail;
    }
    if( q->derive && q->fingerprint(s, q)!=fingerprint ){
      /* A racing commit changed what the derived files derive from. */
      fnt_commit_underive(st, q);
      rc = q->derive(st, s, q, &fingerprint);
      if( rc==FNT_OK ){
        if( q->n_removed ) qsort(q->removed, q->n_removed, sizeof(char*), cmpPath);
        rc = writeFiles(st, q, q->n_fixed, entries);
      }
      if( rc ){ fnt_snapshot_release(s); goto fail; }
      ours.n = q->n_files;
    }
    /* The manifest records the snapshot that adds its files; written once
    ** we know the id (publish() writes it, and removes it if we lose). */
    for(i=0; i<q->n_files; i++) entries[i].snapshot_id = s->cat.id + 1;
    rc = publish(st, s, q, &ours, &published);
    if( published ) q->published = 1;
    fnt_snapshot_release(s);
    s = 0;
    if( rc==1 ) break;
    if( rc<0 ){
      if( published ) goto done;   /* visible, but not durably confirmed */
      goto fail;
    }
  }
  fnt_snapshot_hint(st, published);
  rc = 1;
  goto done;
fail:
cleanup:
  for(i=0; i<q->n_files; i++){
    removeFile(st, q->files[i].entry.path);
  }
done:
  fnt_free(entries);
  return rc;
}

void fnt_commit_clear(fnt_commit *q){
  size_t i;
  for(i=0; i<q->n_files; i++){
    fnt_buf_free(&q->files[i].bytes);
    fnt_free(q->files[i].part_dir);
    fnt_free(q->files[i].entry.path);
  }
}

static int nonEmpty(const char *s){ return s && s[0]; }
static const char *nullIfEmpty(const char *s){ return s && s[0] ? s : 0; }

/* Every filing adds a small run-row or profile file; once enough have
** piled up since the last compaction, compact them, so that reading
** fn_trace_runs never opens more than about AUTO_COMPACT files per repo.
** Those tables only: merging a run's events (and deriving its calls
** again) would hold millions of events in the filer's memory, and an
** import is bounded by its chunk (`fnt compact` does the rest).  Best
** effort: the filing has committed whatever happens here. */
#define AUTO_COMPACT 256
static void compactWhenDue(fnt_store *st, const fnt_commit *q){
  /* q->n_small counted the base snapshot's; the commit added one. */
  if( q->n_small+1>=AUTO_COMPACT ){
    fnt_compact_tables(st, 0, 1u<<FNT_TABLE_RUNS | 1u<<FNT_TABLE_PROFILE);
    fnt_err_clear(st);
  }
}

/* ------------------------------------------------------------------ chunks */

static int validateChunk(fnt_store *st, const fnt_chunk *c){
  size_t i;
  if( !nonEmpty(c->repo) ) return fnt_err(st, FNT_E_INVALID, "repo: must be a non-empty string");
  if( !nonEmpty(c->run_id) ) return fnt_err(st, FNT_E_INVALID, "run_id: must be a non-empty string");
  if( c->target==0 ) return fnt_err(st, FNT_E_INVALID, "target: missing");
  if( c->source==0 ) return fnt_err(st, FNT_E_INVALID, "source: missing");
  if( c->chunks<=0 ) return fnt_err(st, FNT_E_INVALID, "chunks: must be at least 1, not %lld", (long long)c->chunks);
  if( c->chunk<0 || c->chunk>=c->chunks ){
    return fnt_err(st, FNT_E_INVALID, "chunk: %lld is not in 0 .. chunks-1 (chunks = %lld)",
                   (long long)c->chunk, (long long)c->chunks);
  }
  if( c->total_events<0 ) return fnt_err(st, FNT_E_INVALID, "total_events: must not be negative");
  if( (uint64_t)c->total_events<c->n_events ){
    return fnt_err(st, FNT_E_INVALID, "total_events: %lld is below the %zu events of this chunk",
                   (long long)c->total_events, c->n_events);
  }
  if( c->duration_ns<0 ) return fnt_err(st, FNT_E_INVALID, "duration_ns: must not be negative");
  if( c->truncated!=0 && c->truncated!=1 ) return fnt_err(st, FNT_E_INVALID, "truncated: must be 0 or 1");
  if( c->n_functions>0 && c->functions==0 ) return fnt_err(st, FNT_E_INVALID, "functions: missing");
  if( c->n_events>0 && c->events==0 ) return fnt_err(st, FNT_E_INVALID, "events: missing");
  if( c->n_functions>UINT32_MAX ) return fnt_err(st, FNT_E_INVALID, "functions: too many");
  for(i=0; i<c->n_functions; i++){
    if( c->functions[i].symbol==0 ) return fnt_err(st, FNT_E_INVALID, "functions[%zu].symbol: missing", i);
  }
  for(i=0; i<c->n_events; i++){
    const fnt_event *e = &c->events[i];
    if( e->seq_no>(uint64_t)INT64_MAX ) return fnt_err(st, FNT_E_INVALID, "events[%zu]: seq_no is above 2^63-1", i);
    if( e->t_ns>(uint64_t)INT64_MAX ) return fnt_err(st, FNT_E_INVALID, "events[%zu]: t_ns is above 2^63-1", i);
    if( e->function>=c->n_functions ){
      return fnt_err(st, FNT_E_INVALID, "events[%zu]: function index %u is out of range (%zu functions)",
                     i, e->function, c->n_functions);
    }
    if( e->kind>FNT_KIND_TAIL_EXIT ) return fnt_err(st, FNT_E_INVALID, "events[%zu]: unknown kind %u", i, e->kind);
  }
  return FNT_OK;
}

typedef struct seq_idx { uint64_t seq; size_t idx; } seq_idx;
static int cmpSeqIdx(const void *a, const void *b){
  const seq_idx *x = a, *y = b;
  if( x->seq!=y->seq ) return x->seq<y->seq ? -1 : 1;
  return x->idx<y->idx ? -1 : x->idx>y->idx;
}

/* The events in seq_no order: the caller's array when it is sorted already
** (the usual case: importers emit seq_no order), else a sorted copy in
** *copy.  Reports a repeated seq_no naming both events. */
static int sortEvents(fnt_store *st, const fnt_chunk *c, const fnt_event **out,
                      fnt_event **copy){
  size_t i, n = c->n_events;
  seq_idx *order;
  *out = c->events;
  *copy = 0;
  for(i=1; i<n; i++){
    if( c->events[i].seq_no<=c->events[i-1].seq_no ) break;
  }
  if( i>=n ) return FNT_OK;
  *copy = fnt_malloc(n*sizeof(fnt_event));
  order = fnt_malloc(n*sizeof(seq_idx));
  if( *copy==0 || order==0 ){
    fnt_free(order);
    return fnt_err(st, FNT_E_NOMEM, "out of memory");
  }
  for(i=0; i<n; i++){ order[i].seq = c->events[i].seq_no; order[i].idx = i; }
  qsort(order, n, sizeof(seq_idx), cmpSeqIdx);
  for(i=0; i<n; i++){
    if( i>0 && order[i].seq==order[i-1].seq ){
      int rc = fnt_err(st, FNT_E_INVALID, "events[%zu]: seq_no %llu repeats events[%zu]",
                       order[i].idx, (unsigned long long)order[i].seq, order[i-1].idx);
      fnt_free(order);
      return rc;
    }
    (*copy)[i] = c->events[order[i].idx];
  }
  fnt_free(order);
  *out = *copy;
  return FNT_OK;
}

/* The chunk's own files, its events segment and its run row, made and
** written on a worker thread (worker.c) while the commit derives the
** calls: the job reads the chunk and writes its own pending files and
** buffers, nothing the commit touches before q->ready.  Writing them there
** takes their writes and fsyncs (a tenth of filing) off the commit's
** path; fnt_file_chunk removes them when its commit does not publish
** them.  Errors wait in `err` for the caller's thread (the handle's
** message is not the worker's to set). */
typedef struct chunk_job {
  const fnt_store *st;          /* its folder only */
  const fnt_chunk *c;
  const fnt_event *ev;          /* in seq_no order */
  size_t n;
  fnt_pending *events, *runRow; /* events: NULL for a chunk without events */
  fnt_function *fns;
  uint32_t *remap;
  uint64_t *threadDict;
  char err[FNT_ERR_LEN];
  fnt_worker w;
} chunk_job;

static int jobErr(chunk_job *j, int rc, const char *msg){
  snprintf(j->err, sizeof(j->err), "%s", msg);
  return rc;
}

static int makeChunkFiles(void *arg){
  chunk_job *j = arg;
  const fnt_chunk *c = j->c;
  const fnt_event *ev = j->ev;
  size_t nFns = 0, i, n = j->n;
  uint32_t *remap, nthreads = 0;
  fnt_function *fns;
  fnt_value row[FNT_RUN_NCOL];
  int64_t mappedEvents = 0, mappedFns = 0, localFns = 0, mappedLocalFns = 0;
  int64_t firstNs = 0, lastNs = 0;
  int rc;
  fnt_pending *f;

  /* One pass: the functions the events use and the run row's counts
  ** (SPEC §4); then those functions renumbered densely in the chunk's
  ** order (remap[chunk index] = segment index), not in order of first
  ** use: the chunks of a run that pass one table and use the same
  ** functions then write the same function table, which a reader parses
  ** once for all of the run's files (segment_read.c, shareFuncs). */
  remap = j->remap = fnt_calloc(c->n_functions ? c->n_functions : 1, sizeof(uint32_t));
  fns = j->fns = fnt_malloc((c->n_functions ? c->n_functions : 1) * sizeof(fnt_function));
  if( remap==0 || fns==0 ) return jobErr(j, FNT_E_NOMEM, "out of memory");
  for(i=0; i<n; i++){
    uint32_t fi = ev[i].function;
    int64_t t = (int64_t)ev[i].t_ns;
    remap[fi] = 1;
    mappedEvents += nonEmpty(c->functions[fi].stable_id);
    if( i==0 || t<firstNs ) firstNs = t;
    if( i==0 || t>lastNs ) lastNs = t;
  }
  for(i=0; i<c->n_functions; i++){
    if( remap[i] ){
      fns[nFns] = c->functions[i];
      remap[i] = (uint32_t)nFns++;
    }
  }
  for(i=0; i<nFns; i++){
    int mapped = nonEmpty(fns[i].stable_id);
    mappedFns += mapped;
    localFns += fns[i].local!=0;
    mappedLocalFns += mapped && fns[i].local;
  }
  if( fnt_distinct_threads(ev, n, &j->threadDict, &nthreads) ){
    return jobErr(j, FNT_E_NOMEM, "out of memory");
  }
  if( c->threads>=0 && c->threads<(int64_t)nthreads ){
    snprintf(j->err, sizeof(j->err), "threads: %lld is below the %u distinct threads of this chunk",
             (long long)c->threads, nthreads);
    return FNT_E_INVALID;
  }

  if( (f = j->events)!=0 ){
    fnt_seg_bounds b;
    rc = fnt_segment_write_events(c->repo, nullIfEmpty(c->commit), c->run_id,
                                  fns, nFns, ev, n, remap, j->threadDict,
                                  nthreads, &f->bytes, &b);
    if( rc ) return jobErr(j, rc, "out of memory encoding the events segment");
    f->part_dir = fnt_partition_folder(FNT_TABLE_EVENTS, c->run_id);
    f->entry.table = FNT_TABLE_EVENTS;
    f->entry.rows = c->n_events;
    f->entry.run_id = (char*)c->run_id;
    f->entry.repo = (char*)c->repo;
    f->entry.chunk = c->chunk;
    f->entry.seq_min = b.seq_min; f->entry.seq_max = b.seq_max;
    f->entry.t_min = b.t_min;     f->entry.t_max = b.t_max;
    if( f->part_dir==0 ) return jobErr(j, FNT_E_NOMEM, "out of memory");
  }

  f = j->runRow;
  memset(row, 0, sizeof(row));
  row[FNT_RUN_RUN_ID].s = c->run_id;
  row[FNT_RUN_TS_MICROS].i = c->ts_micros>=0 ? c->ts_micros : fnt_now_micros();
  row[FNT_RUN_REPO].s = c->repo;
  row[FNT_RUN_COMMIT].s = nullIfEmpty(c->commit);
  row[FNT_RUN_TARGET].s = c->target;
  row[FNT_RUN_SOURCE].s = c->source;
  row[FNT_RUN_CHUNK].i = c->chunk;
  row[FNT_RUN_CHUNKS].i = c->chunks;
  row[FNT_RUN_EVENTS].i = (int64_t)c->n_events;
  row[FNT_RUN_MAPPED_EVENTS].i = mappedEvents;
  row[FNT_RUN_FUNCTIONS].i = (int64_t)nFns;
  row[FNT_RUN_MAPPED_FUNCTIONS].i = mappedFns;
  row[FNT_RUN_LOCAL_FUNCTIONS].i = localFns;
  row[FNT_RUN_MAPPED_LOCAL_FUNCTIONS].i = mappedLocalFns;
  row[FNT_RUN_THREADS].i = c->threads>=0 ? c->threads : (int64_t)nthreads;
  row[FNT_RUN_FIRST_NS].i = firstNs;
  row[FNT_RUN_LAST_NS].i = lastNs;
  row[FNT_RUN_TOTAL_EVENTS].i = c->total_events;
  row[FNT_RUN_DURATION_NS].i = c->duration_ns;
  row[FNT_RUN_TRUNCATED].i = c->truncated;
  row[FNT_RUN_BINARIES].s = c->binaries_json ? c->binaries_json : "[]";
  rc = fnt_segment_write_rows(FNT_TABLE_RUNS, row, 1, &f->bytes);
  if( rc ) return jobErr(j, rc, "out of memory encoding the run row");
  f->part_dir = fnt_partition_folder(FNT_TABLE_RUNS, c->repo);
  f->entry.table = FNT_TABLE_RUNS;
  f->entry.rows = 1;
  f->entry.run_id = (char*)c->run_id;
  f->entry.repo = (char*)c->repo;
  f->entry.chunk = c->chunk;
  if( f->part_dir==0 ) return jobErr(j, FNT_E_NOMEM, "out of memory");

  if( j->events ){
    rc = writePending(j->st, j->events, j->err, sizeof(j->err));
    if( rc ) return rc;
  }
  return writePending(j->st, j->runRow, j->err, sizeof(j->err));
}

/* The job's outcome, on the caller's thread: FNT_OK or its error. */
static int jobDone(fnt_store *st, chunk_job *j){
  int rc = fnt_worker_join(&j->w);
  return rc ? fnt_err(st, rc, "%s", j->err[0] ? j->err : "out of memory") : FNT_OK;
}

/* A chunk commit's q->ctx: what the derivation and q->ready need. */
typedef struct chunk_ctx {
  fnt_derive_in din;
  chunk_job *job;
} chunk_ctx;

/* The commit's q->ready: the chunk's own files are made. */
static int chunkFilesReady(fnt_store *st, fnt_commit *q){
  chunk_ctx *x = q->ctx;
  return jobDone(st, x->job);
}

/* The commit's derivation: the calls the chunk changes (derive.c). */
static int deriveChunkCalls(fnt_store *st, fnt_snapshot *base, fnt_commit *q,
                            uint64_t *fingerprint){
  return fnt_derive_calls(st, base, &((chunk_ctx*)q->ctx)->din, q, fingerprint);
}

static uint64_t chunkFingerprint(const fnt_snapshot *s, const fnt_commit *q){
  return fnt_derive_fingerprint(s, q->run_id);
}

int fnt_file_chunk(fnt_store *st, const fnt_chunk *c){
  fnt_commit q;
  fnt_pending files[3];
  chunk_ctx cx;
  chunk_job job;
  const fnt_event *ev = 0;
  fnt_event *sortedCopy = 0;
  size_t i, n;
  int rc;

  if( st==0 || c==0 ) return FNT_E_MISUSE;
  fnt_err_clear(st);
  memset(&q, 0, sizeof(q));
  memset(files, 0, sizeof(files));
  memset(&job, 0, sizeof(job));
  q.files = files;
  rc = validateChunk(st, c);
  if( rc ) return rc;
  n = c->n_events;
  rc = sortEvents(st, c, &ev, &sortedCopy);
  if( rc ) goto done;

  q.operation = "file-chunk";
  q.run_id = c->run_id;
  q.repo = c->repo;
  q.chunk = c->chunk;
  snprintf(q.summary, sizeof(q.summary), "run_id=%.300s chunk=%lld events=%zu",
           c->run_id, (long long)c->chunk, c->n_events);

  /* The events segment and the run row: on the worker while the commit
  ** derives the calls, or here and now for a chunk without events. */
  job.st = st;
  job.c = c;
  job.ev = ev;
  job.n = n;
  job.events = n>0 ? &q.files[q.n_files++] : 0;
  job.runRow = &q.files[q.n_files++];
  fnt_worker_start(&job.w, st->threads && n>0, makeChunkFiles, &job);
  if( n>0 ){
    /* The calls: derived against the snapshot the commit builds on. */
    cx.din.repo = c->repo;
    cx.din.commit = nullIfEmpty(c->commit);
    cx.din.run_id = c->run_id;
    cx.din.chunk = c->chunk;
    cx.din.ev = ev;
    cx.din.n = n;
    cx.din.fns = c->functions;
    cx.job = &job;
    q.derive = deriveChunkCalls;
    q.fingerprint = chunkFingerprint;
    q.ready = chunkFilesReady;
    q.ctx = &cx;
  }else{
    rc = jobDone(st, &job);
    if( rc ) goto done;
  }
  rc = fnt_commit_run(st, &q);
  if( rc==1 ) compactWhenDue(st, &q);
  /* Already filed: a chunk the job finds invalid is still an error. */
  if( rc==0 && q.ready ) rc = jobDone(st, &job);
done:
  fnt_worker_join(&job.w);    /* a commit that stopped before q->ready */
  /* The job's files, when no snapshot took them (already filed, or an
  ** error before or after they were written). */
  if( !q.published ){
    if( job.events ) removeFile(st, job.events->entry.path);
    if( job.runRow ) removeFile(st, job.runRow->entry.path);
  }
  for(i=0; i<q.n_removed; i++) fnt_free(q.removed[i]);
  fnt_free(q.removed);
  fnt_commit_clear(&q);
  fnt_free(sortedCopy);
  fnt_free(job.fns);
  fnt_free(job.remap);
  fnt_free(job.threadDict);
  return rc;
}

/* ---------------------------------------------------------------- profiles */

int fnt_file_profile(fnt_store *st, const fnt_profile *p){
  fnt_commit q;
  fnt_pending files[2];
  fnt_value *vals = 0;
  size_t i;
  int rc;
  int64_t ts;

  if( st==0 || p==0 ) return FNT_E_MISUSE;
  fnt_err_clear(st);
  memset(&q, 0, sizeof(q));
  memset(files, 0, sizeof(files));
  q.files = files;
  if( !nonEmpty(p->run_id) ) return fnt_err(st, FNT_E_INVALID, "run_id: must be a non-empty string");
  if( !nonEmpty(p->repo) ) return fnt_err(st, FNT_E_INVALID, "repo: must be a non-empty string");
  if( p->target==0 ) return fnt_err(st, FNT_E_INVALID, "target: missing");
  if( p->samples<0 ) return fnt_err(st, FNT_E_INVALID, "samples: must not be negative");
  if( p->profile_ns<0 ) return fnt_err(st, FNT_E_INVALID, "profile_ns: must not be negative");
  if( p->n_rows>0 && p->rows==0 ) return fnt_err(st, FNT_E_INVALID, "rows: missing");
  for(i=0; i<p->n_rows; i++){
    const fnt_profile_row *r = &p->rows[i];
    if( r->symbol==0 ) return fnt_err(st, FNT_E_INVALID, "rows[%zu].symbol: missing", i);
    if( r->self_ns<0 || r->total_ns<0 || r->self_samples<0 || r->total_samples<0 ){
      return fnt_err(st, FNT_E_INVALID, "rows[%zu]: counts must not be negative", i);
    }
  }
  if( p->n_rows==0 ) return 0;
  vals = fnt_calloc(p->n_rows * FNT_PROF_NCOL, sizeof(fnt_value));
  if( vals==0 ) return fnt_err(st, FNT_E_NOMEM, "out of memory");
  ts = p->ts_micros>=0 ? p->ts_micros : fnt_now_micros();
  for(i=0; i<p->n_rows; i++){
    fnt_value *v = &vals[i*FNT_PROF_NCOL];
    v[FNT_PROF_RUN_ID].s = p->run_id;
    v[FNT_PROF_TS_MICROS].i = ts;
    v[FNT_PROF_REPO].s = p->repo;
    v[FNT_PROF_COMMIT].s = nullIfEmpty(p->commit);
    v[FNT_PROF_TARGET].s = p->target;
    v[FNT_PROF_STABLE_ID].s = nullIfEmpty(p->rows[i].stable_id);
    v[FNT_PROF_SYMBOL].s = p->rows[i].symbol;
    v[FNT_PROF_SELF_NS].i = p->rows[i].self_ns;
    v[FNT_PROF_TOTAL_NS].i = p->rows[i].total_ns;
    v[FNT_PROF_SELF_SAMPLES].i = p->rows[i].self_samples;
    v[FNT_PROF_TOTAL_SAMPLES].i = p->rows[i].total_samples;
    v[FNT_PROF_SAMPLES].i = p->samples;
    v[FNT_PROF_PROFILE_NS].i = p->profile_ns;
  }
  q.operation = "file-profile";
  q.run_id = p->run_id;
  q.repo = p->repo;
  q.chunk = -1;
  snprintf(q.summary, sizeof(q.summary), "run_id=%.300s rows=%zu", p->run_id, p->n_rows);
  {
    fnt_pending *f = &q.files[q.n_files++];
    rc = fnt_segment_write_rows(FNT_TABLE_PROFILE, vals, p->n_rows, &f->bytes);
    if( rc ){ rc = fnt_err(st, rc, "out of memory encoding the profile"); goto done; }
    f->part_dir = fnt_partition_folder(FNT_TABLE_PROFILE, p->repo);
    f->entry.table = FNT_TABLE_PROFILE;
    f->entry.rows = p->n_rows;
    f->entry.run_id = (char*)p->run_id;
    f->entry.repo = (char*)p->repo;
    f->entry.chunk = -1;
    if( f->part_dir==0 ){ rc = fnt_err(st, FNT_E_NOMEM, "out of memory"); goto done; }
  }
  rc = fnt_commit_run(st, &q);
  if( rc==1 ) compactWhenDue(st, &q);
done:
  fnt_commit_clear(&q);
  fnt_free(vals);
  return rc;
}
