/*
** compact.c -- merging small segment files (fnt_compact).
**
** Every filing writes its own files: one run row per chunk, one events
** segment per chunk.  A warehouse of many small chunks therefore lists many
** small files, and a query over fn_trace_runs opens them all.  Compaction
** rewrites, in one snapshot commit:
**   - per repo, fn_trace_runs files, and fn_profile files, in tiers: the
**     small ones with the merged ones no bigger than twice them (so a row
**     is rewritten O(log n) times, not at every compaction);
**   - per run, consecutive events segments smaller than SMALL_ROWS into
**     segments of up to TARGET_ROWS rows (a run's chunks keep their
**     seq_no order; chunks whose commit differs are not merged);
**   - per run, its calls files into one, derived again from its events,
**     when they are several and hold at most TARGET_ROWS calls; and the
**     calls of a run filed before calls existed (format 1): compaction is
**     the upgrade that stores them.
** The merged file's manifest entry lists the (run_id, chunk) keys it holds,
** so idempotent filing still sees every chunk.  Rows are unchanged; older
** snapshots keep their files, so time travel still works.  A commit racing
** with compaction wins: compaction gives up if any file it merged is no
** longer listed.
*/
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "calls.h"
#include "commit.h"
#include "segment.h"

#define SMALL_ROWS   (256u*1024u)   /* events files below this get merged */
#define TARGET_ROWS  (1024u*1024u)  /* up to this many rows per merged file */

/* One merge: files of one table and partition to rewrite as one. */
typedef struct merge_group {
  fnt_table table;
  const char *run_id;         /* calls: the run (its files may be none) */
  const fnt_entry **files;
  size_t n, cap;
  uint64_t rows;
} merge_group;

typedef struct compact_plan {
  merge_group *g;
  size_t n, cap;
} compact_plan;

static int groupAdd(merge_group *g, const fnt_entry *e){
  if( g->n==g->cap ){
    size_t cap = g->cap ? g->cap*2 : 8;
    const fnt_entry **f = fnt_realloc(g->files, cap*sizeof(*f));
    if( f==0 ) return FNT_E_NOMEM;
    g->files = f;
    g->cap = cap;
  }
  g->files[g->n++] = e;
  g->rows += e->rows;
  return FNT_OK;
}

static merge_group *planAdd(compact_plan *p, fnt_table t){
  if( p->n==p->cap ){
    size_t cap = p->cap ? p->cap*2 : 16;
    merge_group *g = fnt_realloc(p->g, cap*sizeof(*g));
    if( g==0 ) return 0;
    p->g = g;
    p->cap = cap;
  }
  memset(&p->g[p->n], 0, sizeof(merge_group));
  p->g[p->n].table = t;
  return &p->g[p->n++];
}

static void planFree(compact_plan *p){
  size_t i;
  for(i=0; i<p->n; i++) fnt_free(p->g[i].files);
  fnt_free(p->g);
}

static int cmpEntry(const void *a, const void *b){
  const fnt_entry *x = *(const fnt_entry*const*)a, *y = *(const fnt_entry*const*)b;
  int c;
  if( x->table!=y->table ) return x->table<y->table ? -1 : 1;
  c = x->table==FNT_TABLE_EVENTS ? strcmp(x->run_id, y->run_id) : strcmp(x->repo, y->repo);
  if( c ) return c;
  if( x->seq_min!=y->seq_min ) return x->seq_min<y->seq_min ? -1 : 1;
  return strcmp(x->path, y->path);
}

static const char *partitionOf(const fnt_entry *e){
  return e->table==FNT_TABLE_EVENTS ? e->run_id : e->repo;
}

/* Closes group g: kept when it merges two files or more. */
static void groupClose(compact_plan *p, merge_group *g){
  if( g && g->n<2 ){
    fnt_free(g->files);
    p->n--;
  }
}

static int cmpRunEntry(const void *a, const void *b){
  const fnt_entry *x = *(const fnt_entry*const*)a, *y = *(const fnt_entry*const*)b;
  return strcmp(x->run_id, y->run_id);
}

/* The runs whose calls are worth deriving again into one file: several
** small calls files, or events past the calls (a run of format 1). */
static int planCalls(const fnt_snapshot *s, compact_plan *plan){
  const fnt_entry **all;
  size_t i, j, k, n = 0;
  for(i=0; i<s->n_manifests; i++) n += s->manifests[i]->n;
  all = fnt_calloc(n+1, sizeof(*all));
  if( all==0 ) return FNT_E_NOMEM;
  n = 0;
  for(i=0; i<s->n_manifests; i++){
    for(j=0; j<s->manifests[i]->n; j++){
      const fnt_entry *e = &s->manifests[i]->entries[j];
      /* (events files hold one run each: compaction merges per run) */
      if( e->table==FNT_TABLE_CALLS || (e->table==FNT_TABLE_EVENTS && e->run_id[0]) ){
        all[n++] = e;
      }
    }
  }
  if( n>1 ) qsort(all, n, sizeof(*all), cmpRunEntry);
  for(i=0; i<n; i=j){
    int64_t evMax = -1, callsMax = -1;
    uint64_t rows = 0;
    size_t nCalls = 0;
    for(j=i; j<n && strcmp(all[j]->run_id, all[i]->run_id)==0; j++){
      if( all[j]->table==FNT_TABLE_CALLS ){
        nCalls++;
        rows += all[j]->rows;
        if( all[j]->seq_max>callsMax ) callsMax = all[j]->seq_max;
      }else if( all[j]->seq_max>evMax ){
        evMax = all[j]->seq_max;
      }
    }
    if( evMax<0 ) continue;                 /* no events: nothing to derive */
    if( callsMax>=evMax && (nCalls<2 || rows>TARGET_ROWS) ) continue;
    {
      merge_group *g = planAdd(plan, FNT_TABLE_CALLS);
      if( g==0 ){ fnt_free(all); return FNT_E_NOMEM; }
      g->run_id = all[i]->run_id;
      for(k=i; k<j; k++){
        if( all[k]->table==FNT_TABLE_CALLS && groupAdd(g, all[k]) ){
          fnt_free(all);
          return FNT_E_NOMEM;
        }
      }
    }
  }
  fnt_free(all);
  return FNT_OK;
}

static int cmpRows(const void *a, const void *b){
  const fnt_entry *x = *(const fnt_entry*const*)a, *y = *(const fnt_entry*const*)b;
  if( x->rows!=y->rows ) return x->rows<y->rows ? -1 : 1;
  return cmpEntry(a, b);
}

/* Which of a partition's n run-row (or profile) files to merge, moved to
** the front: the smallest, then each next while it holds at most twice the
** rows taken so far.  Merged files so grow geometrically and a row is
** rewritten O(log n) times in the warehouse's life, not at every
** compaction (nor is the manifest entry listing its keys). */
static size_t tierTake(const fnt_entry **f, size_t n){
  size_t take = 0;
  uint64_t sum = 0;
  qsort(f, n, sizeof(*f), cmpRows);
  while( take<n && (take<2 || f[take]->rows<=2*sum) ) sum += f[take++]->rows;
  return take;
}

/* Groups the snapshot's files of the tables in `tables` (a bit per
** fnt_table) into merges worth doing. */
static int planCompaction(const fnt_snapshot *s, unsigned tables,
                          compact_plan *plan){
  const fnt_entry **all;
  size_t i, j, k, n = 0;
  for(i=0; i<s->n_manifests; i++) n += s->manifests[i]->n;
  all = fnt_calloc(n+1, sizeof(*all));
  if( all==0 ) return FNT_E_NOMEM;
  n = 0;
  for(i=0; i<s->n_manifests; i++){
    for(j=0; j<s->manifests[i]->n; j++){
      const fnt_entry *e = &s->manifests[i]->entries[j];
      /* Calls files are derived per seq_no interval: never merged. */
      if( e->table==FNT_TABLE_CALLS || (tables & 1u<<e->table)==0 ) continue;
      if( e->table!=FNT_TABLE_EVENTS || e->rows<SMALL_ROWS ) all[n++] = e;
    }
  }
  qsort(all, n, sizeof(*all), cmpEntry);
  for(i=0; i<n; i=j){
    merge_group *g = 0;
    /* [i, j): one table's files of one partition, in seq_no order. */
    for(j=i+1; j<n && all[j]->table==all[i]->table
               && strcmp(partitionOf(all[j]), partitionOf(all[i]))==0; j++){}
    if( j-i<2 ) continue;
    if( all[i]->table!=FNT_TABLE_EVENTS ){
      /* Run rows and profiles: the tier to merge goes first in [i, j). */
      size_t take = tierTake(all+i, j-i);
      if( take<2 ) continue;
      qsort(all+i, take, sizeof(*all), cmpEntry);
      g = planAdd(plan, all[i]->table);
      if( g==0 ){ fnt_free(all); return FNT_E_NOMEM; }
      for(k=i; k<i+take; k++){
        if( groupAdd(g, all[k]) ){ fnt_free(all); return FNT_E_NOMEM; }
      }
      continue;
    }
    for(k=i; k<j; k++){
      if( g==0 || (g->table==FNT_TABLE_EVENTS && g->rows + all[k]->rows > TARGET_ROWS) ){
        groupClose(plan, g);
        g = planAdd(plan, all[i]->table);
        if( g==0 ){ fnt_free(all); return FNT_E_NOMEM; }
      }
      if( groupAdd(g, all[k]) ){ fnt_free(all); return FNT_E_NOMEM; }
    }
    groupClose(plan, g);
  }
  fnt_free(all);
  return (tables & 1u<<FNT_TABLE_CALLS) ? planCalls(s, plan) : FNT_OK;
}

/* Appends the keys of `e` to the merged entry `m`. */
static int keysAdd(fnt_entry *m, const fnt_entry *e, size_t *cap){
  size_t i, n = e->n_keys ? e->n_keys : 1;
  for(i=0; i<n; i++){
    const char *run = e->n_keys ? e->keys[i].run_id : e->run_id;
    int64_t chunk = e->n_keys ? e->keys[i].chunk : e->chunk;
    size_t k;
    if( e->table==FNT_TABLE_PROFILE ){
      for(k=0; k<m->n_keys && strcmp(m->keys[k].run_id, run)!=0; k++){}
      if( k<m->n_keys ) continue;                   /* one key per profile */
    }
    if( m->n_keys==*cap ){
      size_t c = *cap ? *cap*2 : 16;
      fnt_key *p = fnt_realloc(m->keys, c*sizeof(fnt_key));
      if( p==0 ) return FNT_E_NOMEM;
      m->keys = p;
      *cap = c;
    }
    m->keys[m->n_keys].run_id = fnt_strdup(run);
    if( m->keys[m->n_keys].run_id==0 ) return FNT_E_NOMEM;
    m->keys[m->n_keys++].chunk = chunk;
  }
  return FNT_OK;
}

/* A string pool: rows of runs and profiles are copied out of their scan. */
typedef struct str_pool {
  char **s;
  size_t n, cap;
} str_pool;

static const char *poolAdd(str_pool *p, const char *z, int *nomem){
  char *c;
  if( z==0 ) return 0;
  if( p->n==p->cap ){
    size_t cap = p->cap ? p->cap*2 : 256;
    char **a = fnt_realloc(p->s, cap*sizeof(char*));
    if( a==0 ){ *nomem = 1; return 0; }
    p->s = a;
    p->cap = cap;
  }
  c = fnt_strdup(z);
  if( c==0 ){ *nomem = 1; return 0; }
  p->s[p->n++] = c;
  return c;
}

static void poolFree(str_pool *p){
  size_t i;
  for(i=0; i<p->n; i++) fnt_free(p->s[i]);
  fnt_free(p->s);
}

/* Reads every row of a runs or profile group and encodes them as one
** segment. */
static int mergeRows(fnt_store *st, fnt_snapshot *s, const merge_group *g,
                     fnt_pending *out){
  int ncol = fnt_table_ncol(g->table), c, nomem = 0;
  fnt_value *vals = fnt_calloc((size_t)g->rows * (size_t)ncol + 1, sizeof(fnt_value));
  str_pool pool = {0, 0, 0};
  fnt_scan *sc = 0;
  size_t r = 0;
  int rc;
  if( vals==0 ) return fnt_err(st, FNT_E_NOMEM, "out of memory");
  rc = fnt_scan_open_entries(s, g->table, g->files, g->n, 0, &sc);
  while( rc==FNT_OK && (rc = fnt_scan_next(sc))==1 ){
    if( r>=g->rows ){ rc = fnt_err(st, FNT_E_CORRUPT, "a file holds more rows than its manifest entry says"); break; }
    for(c=0; c<ncol; c++){
      fnt_value *v = &vals[r*(size_t)ncol + (size_t)c];
      if( fnt_column_is_text(g->table, c) ) v->s = poolAdd(&pool, fnt_scan_text(sc, c, 0), &nomem);
      else v->i = fnt_scan_int(sc, c);
    }
    r++;
    rc = nomem ? fnt_err(st, FNT_E_NOMEM, "out of memory") : FNT_OK;
  }
  fnt_scan_close(sc);
  if( rc==0 && r!=g->rows ) rc = fnt_err(st, FNT_E_CORRUPT, "files hold fewer rows than their manifest entries say");
  if( rc==0 ){
    rc = fnt_segment_write_rows(g->table, vals, r, &out->bytes);
    if( rc ) rc = fnt_err(st, rc, "out of memory");
  }
  poolFree(&pool);
  fnt_free(vals);
  return rc;
}

/* A union of function tables: segment function -> merged index. */
typedef struct fn_union {
  fnt_function *f;
  uint64_t *hash;
  size_t n, cap;
  uint32_t *slot;       /* open addressing: index+1, 0 empty */
  size_t nslot;
} fn_union;

static uint64_t fnHash(const fnt_function *f){
  uint64_t h = fnt_hash(f->symbol, strlen(f->symbol));
  if( f->stable_id ) h ^= fnt_hash(f->stable_id, strlen(f->stable_id)) * 31;
  return h ^ (uint64_t)(f->local!=0);
}

static int fnSame(const fnt_function *a, const fnt_function *b){
  return strcmp(a->symbol, b->symbol)==0 && (a->local!=0)==(b->local!=0)
      && ((a->stable_id==0 && b->stable_id==0)
          || (a->stable_id && b->stable_id && strcmp(a->stable_id, b->stable_id)==0));
}

static int fnIntern(fn_union *u, const fnt_function *f, uint32_t *idx){
  uint64_t h = fnHash(f);
  size_t i;
  if( u->n*2 >= u->nslot ){
    size_t ns = u->nslot ? u->nslot*2 : 1024, k;
    uint32_t *slot = fnt_calloc(ns, sizeof(uint32_t));
    if( slot==0 ) return FNT_E_NOMEM;
    for(k=0; k<u->n; k++){
      size_t j = (size_t)u->hash[k] & (ns-1);
      while( slot[j] ) j = (j+1) & (ns-1);
      slot[j] = (uint32_t)k+1;
    }
    fnt_free(u->slot);
    u->slot = slot;
    u->nslot = ns;
  }
  for(i=(size_t)h & (u->nslot-1); u->slot[i]; i=(i+1) & (u->nslot-1)){
    uint32_t k = u->slot[i]-1;
    if( u->hash[k]==h && fnSame(&u->f[k], f) ){ *idx = k; return FNT_OK; }
  }
  if( u->n==u->cap ){
    size_t cap = u->cap ? u->cap*2 : 256;
    fnt_function *nf = fnt_realloc(u->f, cap*sizeof(*nf));
    uint64_t *nh = nf ? fnt_realloc(u->hash, cap*sizeof(*nh)) : 0;
    if( nf ) u->f = nf;
    if( nh==0 ) return FNT_E_NOMEM;
    u->hash = nh;
    u->cap = cap;
  }
  /* Copies: the segment a function came from may close before we write. */
  u->f[u->n].symbol = fnt_strdup(f->symbol);
  u->f[u->n].stable_id = fnt_strdup(f->stable_id);
  u->f[u->n].local = f->local;
  if( u->f[u->n].symbol==0 || (f->stable_id && u->f[u->n].stable_id==0) ){
    fnt_free((char*)u->f[u->n].symbol);
    fnt_free((char*)u->f[u->n].stable_id);
    return FNT_E_NOMEM;
  }
  u->hash[u->n] = h;
  u->slot[i] = (uint32_t)u->n+1;
  *idx = (uint32_t)u->n++;
  return FNT_OK;
}

static void unionFree(fn_union *u){
  size_t i;
  for(i=0; i<u->n; i++){
    fnt_free((char*)u->f[i].symbol);
    fnt_free((char*)u->f[i].stable_id);
  }
  fnt_free(u->f);
  fnt_free(u->hash);
  fnt_free(u->slot);
}

/* Reads a run's group of events files in seq_no order and encodes them as
** one segment. */
static int mergeEvents(fnt_store *st, fnt_snapshot *s, const merge_group *g,
                       fnt_pending *out, int *skip){
  fnt_event *ev = fnt_malloc((size_t)g->rows * sizeof(fnt_event) + 1);
  uint32_t *map = 0, *identity = 0, nthreads = 0;
  uint64_t *threads = 0, gen = 0;
  fn_union u;
  fnt_scan *sc = 0;
  fnt_event_batch b;
  fnt_seg_bounds bounds;
  char *repo = 0, *commit = 0;
  size_t n = 0, i, nmap = 0;
  int rc;

  memset(&u, 0, sizeof(u));
  *skip = 0;
  if( ev==0 ) return fnt_err(st, FNT_E_NOMEM, "out of memory");
  rc = fnt_scan_open_entries(s, FNT_TABLE_EVENTS, g->files, g->n, 1, &sc);
  while( rc==FNT_OK && (rc = fnt_scan_next_batch(sc, &b))==1 ){
    const char *r = fnt_scan_text(sc, FNT_EV_REPO, 0);
    rc = FNT_OK;
    const char *c = fnt_scan_text(sc, FNT_EV_COMMIT, 0);
    if( n==0 ){
      repo = fnt_strdup(r);
      commit = c ? fnt_strdup(c) : 0;
      if( repo==0 || (c && commit==0) ){ rc = FNT_E_NOMEM; break; }
    }else if( (c==0)!=(commit==0) || (c && strcmp(c, commit)!=0) ){
      *skip = 1;                 /* chunks of several commits: leave them */
      rc = 0;
      break;
    }
    if( b.table_generation!=gen || map==0 ){
      gen = b.table_generation;
      if( b.n_functions>nmap ){
        fnt_free(map);
        nmap = b.n_functions;
        map = fnt_malloc(nmap*sizeof(uint32_t));
        if( map==0 ){ rc = FNT_E_NOMEM; break; }
      }
      for(i=0; i<b.n_functions && rc==FNT_OK; i++){
        rc = fnIntern(&u, &b.functions[i], &map[i]);
      }
      if( rc ) break;
    }
    for(i=0; i<b.n && n<g->rows; i++, n++){
      ev[n].seq_no = b.seq_no[i];
      ev[n].t_ns = b.t_ns[i];
      ev[n].thread = (uint32_t)b.thread_ids[b.thread[i]];
      ev[n].kind = (uint8_t)b.kind[i];
      ev[n].function = map[b.function[i]];
    }
  }
  if( rc==FNT_E_NOMEM ) rc = fnt_err(st, rc, "out of memory");
  if( rc==0 && !*skip && n!=g->rows ){
    rc = fnt_err(st, FNT_E_CORRUPT, "run '%s': its files hold %zu events, "
                 "their manifest entries say %llu", g->files[0]->run_id, n,
                 (unsigned long long)g->rows);
  }
  if( rc==0 && !*skip ){
    identity = fnt_malloc((u.n ? u.n : 1)*sizeof(uint32_t));
    if( identity==0 || fnt_distinct_threads(ev, n, &threads, &nthreads) ){
      rc = fnt_err(st, FNT_E_NOMEM, "out of memory");
    }else{
      for(i=0; i<u.n; i++) identity[i] = (uint32_t)i;
      rc = fnt_segment_write_events(repo, commit, g->files[0]->run_id, u.f, u.n,
                                    ev, n, identity, threads, nthreads,
                                    &out->bytes, &bounds);
      if( rc ) rc = fnt_err(st, rc, "out of memory");
      out->entry.seq_min = bounds.seq_min; out->entry.seq_max = bounds.seq_max;
      out->entry.t_min = bounds.t_min;     out->entry.t_max = bounds.t_max;
    }
  }
  fnt_scan_close(sc);
  fnt_free(ev);
  fnt_free(map);
  fnt_free(identity);
  fnt_free(threads);
  unionFree(&u);
  fnt_free(repo);
  fnt_free(commit);
  return rc;
}

static int cmpStr(const void *a, const void *b){
  return strcmp(*(const char*const*)a, *(const char*const*)b);
}

/* The commit's check: every file to drop is still listed (q->removed is
** sorted by then). */
static int stillListed(fnt_store *st, const fnt_snapshot *s, void *ctx){
  const fnt_commit *q = ctx;
  size_t i, j, found = 0;
  FNT_UNUSED(st);
  for(i=0; i<s->n_manifests; i++){
    for(j=0; j<s->manifests[i]->n; j++){
      const char *p = s->manifests[i]->entries[j].path;
      found += bsearch(&p, q->removed, q->n_removed, sizeof(char*), cmpStr)!=0;
    }
  }
  return found==q->n_removed ? 0 : 1;
}

int fnt_compact(fnt_store *st, fnt_compact_stats *stats){
  return fnt_compact_tables(st, stats, ~0u);
}

int fnt_compact_tables(fnt_store *st, fnt_compact_stats *stats,
                       unsigned tables){
  fnt_snapshot *s = 0;
  compact_plan plan = {0, 0, 0};
  fnt_commit q;
  fnt_pending *files = 0;
  size_t i, j, nFiles = 0, nRemoved = 0;
  int rc;

  if( st==0 ) return FNT_E_MISUSE;
  if( stats ) memset(stats, 0, sizeof(*stats));
  memset(&q, 0, sizeof(q));
  fnt_err_clear(st);
  rc = fnt_snapshot_current(st, &s);
  if( rc ) return rc;
  if( stats ) stats->files_before = s->cat.total_files;
  rc = planCompaction(s, tables, &plan);
  if( rc ){ rc = fnt_err(st, rc, "out of memory"); goto done; }
  if( plan.n==0 ){
    if( stats ) stats->files_after = s->cat.total_files;
    goto done;
  }
  files = fnt_calloc(plan.n, sizeof(fnt_pending));
  for(i=0; i<plan.n; i++) nRemoved += plan.g[i].n;
  q.removed = fnt_calloc(nRemoved+1, sizeof(char*));
  if( files==0 || q.removed==0 ){ rc = fnt_err(st, FNT_E_NOMEM, "out of memory"); goto done; }
  q.files = files;
  for(i=0; i<plan.n; i++){
    const merge_group *g = &plan.g[i];
    fnt_pending *f = &files[nFiles];
    size_t keyCap = 0;
    int skip = 0;
    if( g->table==FNT_TABLE_CALLS ){
      /* Derived again from the run's events: rows may change in number
      ** (open frames of older tails are gone), never in what they read. */
      rc = fnt_derive_run_calls(st, s, g->run_id, f);
      if( rc==0 ){
        f->entry.run_id = fnt_strdup(g->run_id);   /* repo: owned already */
        if( !f->entry.repo || !f->entry.run_id ) rc = fnt_err(st, FNT_E_NOMEM, "out of memory");
        for(j=0; rc==0 && j<g->n; j++) q.removed[q.n_removed++] = g->files[j]->path;
        nFiles++;
        q.n_files = nFiles;
        if( stats ){
          stats->files_merged += g->n;
          stats->rows_rewritten += f->entry.rows;
        }
      }
    }else if( g->table==FNT_TABLE_EVENTS ){
      rc = mergeEvents(st, s, g, f, &skip);
    }else{
      rc = mergeRows(st, s, g, f);
    }
    if( g->table==FNT_TABLE_CALLS ){
      /* done above */
    }else if( rc==0 && !skip ){
      const fnt_entry *e0 = g->files[0];
      int oneRun = 1;
      for(j=1; j<g->n; j++) oneRun &= strcmp(g->files[j]->run_id, e0->run_id)==0;
      f->entry.table = (uint8_t)g->table;
      f->entry.rows = g->rows;
      f->entry.repo = fnt_strdup(e0->repo);
      f->entry.run_id = fnt_strdup(oneRun ? e0->run_id : "");
      f->entry.chunk = -1;
      f->part_dir = fnt_partition_folder(g->table,
                        g->table==FNT_TABLE_EVENTS ? e0->run_id : e0->repo);
      if( !f->entry.repo || !f->entry.run_id || !f->part_dir ) rc = FNT_E_NOMEM;
      for(j=0; rc==0 && j<g->n; j++) rc = keysAdd(&f->entry, g->files[j], &keyCap);
      for(j=0; rc==0 && j<g->n; j++) q.removed[q.n_removed++] = g->files[j]->path;
      if( rc ) rc = fnt_err(st, FNT_E_NOMEM, "out of memory");
      nFiles++;
      q.n_files = nFiles;
      if( stats ){
        stats->files_merged += g->n;
        stats->rows_rewritten += g->rows;
      }
    }else{
      fnt_buf_free(&f->bytes);
      memset(f, 0, sizeof(*f));
    }
    if( rc ) goto done;
  }
  if( nFiles==0 ) goto done;
  q.operation = "compact";
  snprintf(q.summary, sizeof(q.summary), "merged %zu files into %zu",
           q.n_removed, nFiles);
  q.check = stillListed;
  q.ctx = &q;
  rc = fnt_commit_run(st, &q);
  if( stats ) stats->files_written = rc==1 ? nFiles : 0;
  if( stats ) stats->files_after = s->cat.total_files + (rc==1 ? nFiles : 0)
                                   - (rc==1 ? q.n_removed : 0);
done:
  /* The merged entries' strings are ours, not the commit's. */
  for(i=0; i<nFiles; i++){
    for(j=0; j<files[i].entry.n_keys; j++) fnt_free(files[i].entry.keys[j].run_id);
    fnt_free(files[i].entry.keys);
    fnt_free(files[i].entry.repo);
    fnt_free(files[i].entry.run_id);
  }
  /* q.removed borrows paths from the snapshot: released after. */
  fnt_commit_clear(&q);
  fnt_free(q.removed);
  fnt_free(files);
  planFree(&plan);
  fnt_snapshot_release(s);
  return rc;
}
