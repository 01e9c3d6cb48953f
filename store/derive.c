/*
** derive.c -- the calls a filing makes (FORMAT.md, "Calls").
**
** The calls files of a run each cover a seq_no interval of its events and
** hold the calls that ended there plus the frames open at its end.  Filing
** a chunk whose events all come after every calls file (the usual case:
** chunks in order) resumes the replay from the tail file's open frames and
** replays the chunk alone: memory and time of the chunk, not of the run.
** A chunk that lands before the end of some calls files (late, out of
** order, or into a run filed before calls existed) makes those files
** stale: they are dropped and the replay resumes from the last file still
** valid, over every later event of the run.
**
** The derivation depends on the base snapshot: a racing commit that filed
** events of the same run (or its calls) changes the fingerprint, and the
** commit derives again on the new base.
*/
#include <stdlib.h>
#include <string.h>

#include "calls.h"
#include "commit.h"
#include "segment.h"

/* A segment function index -> fntab id, per function table seen. */
typedef struct fn_map {
  uint64_t gen;
  uint32_t *id;         /* UINT32_MAX: not mapped yet */
  uint32_t cap;
} fn_map;
#define NMAP 4

static int mapLookup(fn_map *maps, uint64_t *clock, uint64_t *used,
                     const fnt_scan *sc, uint64_t gen, uint32_t idx,
                     fnt_fntab *tab, uint32_t *out){
  fn_map *m = &maps[0];
  int i;
  for(i=0; i<NMAP; i++){
    if( maps[i].id && maps[i].gen==gen ){ m = &maps[i]; goto found; }
    if( used[i]<used[m-maps] ) m = &maps[i];
  }
  m->gen = gen;
  if( m->id ) memset(m->id, 0xff, (size_t)m->cap*sizeof(uint32_t));
found:
  used[m-maps] = ++*clock;
  if( idx>=m->cap ){
    uint32_t nNew = m->cap ? m->cap : 64;
    uint32_t *a;
    while( nNew<=idx ) nNew *= 2;
    a = fnt_realloc(m->id, (size_t)nNew*sizeof(uint32_t));
    if( a==0 ) return FNT_E_NOMEM;
    memset(a+m->cap, 0xff, (size_t)(nNew-m->cap)*sizeof(uint32_t));
    m->id = a;
    m->cap = nNew;
  }
  if( m->id[idx]==UINT32_MAX ){
    const char *sym = fnt_scan_text(sc, FNT_EV_SYMBOL, 0);
    const char *sid = fnt_scan_text(sc, FNT_EV_STABLE_ID, 0);
    if( fnt_fntab_intern(tab, sym, sid, &m->id[idx]) ) return FNT_E_NOMEM;
  }
  *out = m->id[idx];
  return FNT_OK;
}

int fnt_replay_run_events(fnt_snapshot *snap, const char *run_id,
                          int64_t from_seq, const fnt_event *extra,
                          size_t nextra, const fnt_function *extra_fns,
                          fnt_replay *r, fnt_fntab *tab, int64_t *last_seq,
                          char **repo, char **commit){
  fnt_store *st = snap->st;
  fnt_predicate p;
  fnt_scan *sc = 0;
  fn_map maps[NMAP];
  uint64_t used[NMAP] = {0}, clock = 0;
  uint32_t *extraIds = 0;
  size_t x = 0, i;
  int rc, more;

  memset(maps, 0, sizeof(maps));
  *last_seq = -1;
  if( nextra ){
    /* The chunk's function indexes -> fntab ids, each interned once. */
    uint32_t maxFn = 0;
    for(i=0; i<nextra; i++) if( extra[i].function>maxFn ) maxFn = extra[i].function;
    extraIds = fnt_malloc(((size_t)maxFn+1)*sizeof(uint32_t));
    if( extraIds==0 ) return fnt_err(st, FNT_E_NOMEM, "out of memory");
    memset(extraIds, 0xff, ((size_t)maxFn+1)*sizeof(uint32_t));
    for(i=0; i<nextra; i++){
      uint32_t k = extra[i].function;
      if( extraIds[k]!=UINT32_MAX ) continue;
      if( fnt_fntab_intern(tab, extra_fns[k].symbol, extra_fns[k].stable_id, &extraIds[k]) ){
        rc = fnt_err(st, FNT_E_NOMEM, "out of memory");
        goto done;
      }
    }
  }
  fnt_predicate_init(&p);
  p.run_ids = &run_id;
  p.n_run_ids = 1;
  p.ordered = 1;
  p.seq_min = from_seq;
  p.columns = (1ull<<FNT_EV_THREAD) | (1ull<<FNT_EV_SEQ_NO) | (1ull<<FNT_EV_T_NS)
            | (1ull<<FNT_EV_KIND) | (1ull<<FNT_EV_SYMBOL) | (1ull<<FNT_EV_STABLE_ID)
            | (1ull<<FNT_EV_REPO) | (1ull<<FNT_EV_COMMIT);
  rc = fnt_scan_open(snap, FNT_TABLE_EVENTS, &p, &sc);
  if( rc ) goto done;
  more = fnt_scan_next(sc);
  if( more>0 && repo && commit ){
    const char *zr = fnt_scan_text(sc, FNT_EV_REPO, 0), *zc = fnt_scan_text(sc, FNT_EV_COMMIT, 0);
    *repo = fnt_strdup(zr);
    *commit = fnt_strdup(zc);
    if( (zr && *repo==0) || (zc && *commit==0) ){ rc = fnt_err(st, FNT_E_NOMEM, "out of memory"); goto done; }
  }
  for(;;){
    int64_t seq;
    if( more<0 ){ rc = more; goto done; }
    /* The next event in seq_no order: the warehouse's, or the chunk's. */
    if( more>0 && (x>=nextra || fnt_scan_int(sc, FNT_EV_SEQ_NO)<=(int64_t)extra[x].seq_no) ){
      uint64_t gen;
      uint32_t idx = fnt_scan_function(sc, &gen), id;
      seq = fnt_scan_int(sc, FNT_EV_SEQ_NO);
      rc = mapLookup(maps, &clock, used, sc, gen, idx, tab, &id);
      if( rc==FNT_OK ){
        rc = fnt_replay_event(r, (uint32_t)fnt_scan_int(sc, FNT_EV_THREAD), seq,
                              fnt_scan_int(sc, FNT_EV_T_NS), id,
                              (int)fnt_scan_int(sc, FNT_EV_KIND));
      }
      more = fnt_scan_next(sc);
    }else if( x<nextra ){
      const fnt_event *e = &extra[x];
      seq = (int64_t)e->seq_no;
      rc = fnt_replay_event(r, e->thread, seq, (int64_t)e->t_ns, extraIds[e->function], e->kind);
      x++;
    }else{
      break;
    }
    if( rc ){ rc = fnt_err(st, FNT_E_NOMEM, "run '%s': out of memory replaying its calls", run_id); goto done; }
    *last_seq = seq;
  }
  rc = FNT_OK;
done:
  for(i=0; i<NMAP; i++) fnt_free(maps[i].id);
  fnt_free(extraIds);
  fnt_scan_close(sc);
  return rc;
}

uint64_t fnt_derive_fingerprint(const fnt_snapshot *s, const char *run_id){
  uint64_t h = 0, rows = 0, n = 0;
  int64_t seqMax = -1;
  size_t i;
  for(i=0; i<s->n_manifests; i++){
    fnt_entry_iter it;
    const fnt_entry *e;
    /* The run's entries only (the manifest's index): a commit's cost must
    ** not grow with the other runs of the warehouse. */
    fnt_entry_iter_init(&it, s->manifests[i], FNT_BY_RUN, run_id);
    while( (e = fnt_entry_iter_next(&it))!=0 ){
      if( e->table==FNT_TABLE_CALLS && strcmp(e->run_id, run_id)==0 ){
        h ^= fnt_hash(e->path, strlen(e->path));
        n++;
      }else if( e->table==FNT_TABLE_EVENTS && fnt_entry_has_run(e, run_id) ){
        /* Compaction rewrites events files but keeps their rows. */
        rows += e->rows;
        if( e->seq_max>seqMax ) seqMax = e->seq_max;
      }
    }
  }
  return h ^ (rows*0x9E3779B97F4A7C15ull) ^ ((uint64_t)seqMax<<17) ^ (n<<3);
}

/* Rebuilds the replay state from the open rows of calls file `tail`;
** *nOpen: how many frames it resumed. */
static int resumeFrom(fnt_store *st, const fnt_entry *tail, fnt_fntab *tab,
                      fnt_replay *r, size_t *nOpen){
  fnt_callvec open = {0};
  size_t i;
  int rc = fnt_calls_read_open(st, tail, tab, &open);
  *nOpen = open.n;
  /* Rows come by thread, then depth: the frame above is the next row. */
  for(i=0; rc==FNT_OK && i<open.n; i++){
    const fnt_callrec *c = &open.a[i];
    int64_t above = 0;
    if( i+1<open.n && c[1].thread==c->thread && c[1].depth==c->depth+1 ){
      above = (int64_t)((uint64_t)c[1].end - (uint64_t)c[1].start);
    }
    rc = fnt_replay_resume(r, c, above);
    if( rc==FNT_E_CORRUPT ){
      rc = fnt_err(st, FNT_E_CORRUPT, "%s: its open frames of thread %u do not "
                   "form a stack", tail->path, c->thread);
    }else if( rc ){
      rc = fnt_err(st, rc, "out of memory");
    }
  }
  fnt_callvec_free(&open);
  return rc;
}

/* Ends a derivation: the open frames, the calls segment, and its pending
** file (entry strings borrowed from the arguments). */
static int finishPending(fnt_store *st, fnt_replay *r, fnt_fntab *tab,
                         fnt_stacktab *stacks, fnt_callvec *closed, const char *repo,
                         const char *commit, const char *run_id, int64_t chunk,
                         int64_t from, int64_t last, fnt_pending *f){
  fnt_callvec open = {0};
  fnt_calls_bounds b;
  int rc;
  memset(f, 0, sizeof(*f));
  if( fnt_replay_open_calls(r, &open) ){
    fnt_callvec_free(&open);
    return fnt_err(st, FNT_E_NOMEM, "out of memory");
  }
  rc = fnt_segment_write_calls(repo, commit, run_id, tab, closed, &open,
                               fnt_replay_kept_stacks(r) ? stacks : 0,
                               st->threads, &f->bytes, &b);
  f->entry.rows = closed->n + open.n;
  fnt_callvec_free(&open);
  if( rc ){
    fnt_buf_free(&f->bytes);
    return fnt_err(st, rc, "out of memory encoding the calls segment");
  }
  f->part_dir = fnt_partition_folder(FNT_TABLE_CALLS, run_id);
  if( f->part_dir==0 ){
    fnt_buf_free(&f->bytes);
    return fnt_err(st, FNT_E_NOMEM, "out of memory");
  }
  f->entry.table = FNT_TABLE_CALLS;
  f->entry.run_id = (char*)run_id;
  f->entry.repo = (char*)repo;
  f->entry.chunk = chunk;
  f->entry.seq_min = from;
  f->entry.seq_max = last;
  f->entry.t_min = b.t_min;
  f->entry.t_max = b.t_max;
  return FNT_OK;
}

int fnt_derive_run_calls(fnt_store *st, fnt_snapshot *s, const char *run_id,
                         fnt_pending *f){
  fnt_fntab tab;
  fnt_stacktab stacks;
  fnt_callvec closed = {0};
  fnt_replay *r;
  char *repo = 0, *commit = 0;
  int64_t last = -1;
  int rc;
  memset(&tab, 0, sizeof(tab));
  memset(&stacks, 0, sizeof(stacks));
  memset(f, 0, sizeof(*f));
  r = fnt_replay_new(&tab, &closed);
  if( r==0 ) return fnt_err(st, FNT_E_NOMEM, "out of memory");
  fnt_replay_keep_stacks(r, &stacks);
  rc = fnt_replay_run_events(s, run_id, 0, 0, 0, 0, r, &tab, &last, &repo, &commit);
  if( rc==FNT_OK ){
    rc = finishPending(st, r, &tab, &stacks, &closed, repo ? repo : "", commit,
                       run_id, -1, 0, last, f);
  }
  /* The entry's repo must outlive this call: the caller copies it. */
  if( rc==FNT_OK ) f->entry.repo = repo, repo = 0;
  fnt_replay_free(r);
  fnt_callvec_free(&closed);
  fnt_stacktab_clear(&stacks);
  fnt_fntab_clear(&tab);
  fnt_free(repo);
  fnt_free(commit);
  return rc;
}

int fnt_derive_calls(fnt_store *st, fnt_snapshot *base, const fnt_derive_in *in,
                     fnt_commit *q, uint64_t *fingerprint){
  fnt_run_calls rc_files;
  fnt_fntab tab;
  fnt_stacktab stacks;
  fnt_callvec closed = {0};
  fnt_replay *r = 0;
  const fnt_entry *tail = 0;
  int64_t first = (int64_t)in->ev[0].seq_no, from = 0, last = -1;
  size_t i, resumed = 0;
  int rc;

  memset(&tab, 0, sizeof(tab));
  memset(&stacks, 0, sizeof(stacks));
  *fingerprint = fnt_derive_fingerprint(base, in->run_id);
  rc = fnt_run_calls_find(base, in->run_id, &rc_files);
  if( rc ) return fnt_err(st, rc, "out of memory");
  q->removed = fnt_calloc(rc_files.nfiles+1, sizeof(char*));
  if( q->removed==0 ){ rc = fnt_err(st, FNT_E_NOMEM, "out of memory"); goto done; }
  /* Files ending before the chunk's first event stay; the last of them is
  ** where the replay resumes.  Without complete calls, start over. */
  for(i=0; i<rc_files.nfiles; i++){
    const fnt_entry *e = rc_files.files[i];
    if( rc_files.complete && e->seq_max<first ){
      tail = e;
    }else{
      q->removed[q->n_removed] = fnt_strdup(e->path);
      if( q->removed[q->n_removed]==0 ){ rc = fnt_err(st, FNT_E_NOMEM, "out of memory"); goto done; }
      q->n_removed++;
    }
  }
  r = fnt_replay_new(&tab, &closed);
  if( r==0 ){ rc = fnt_err(st, FNT_E_NOMEM, "out of memory"); goto done; }
  fnt_replay_keep_stacks(r, &stacks);
  if( tail ){
    rc = resumeFrom(st, tail, &tab, r, &resumed);
    if( rc ) goto done;
    from = tail->seq_max + 1;
  }
  /* A chunk's calls: about one per two events (an entry and its exit)
  ** and the frames it resumed: reserved once, not doubled and copied. */
  if( fnt_callvec_reserve(&closed, in->n/2 + resumed + 1) ){
    rc = fnt_err(st, FNT_E_NOMEM, "out of memory");
    goto done;
  }
  rc = fnt_replay_run_events(base, in->run_id, from, in->ev, in->n, in->fns,
                             r, &tab, &last, 0, 0);
  if( rc ) goto done;
  rc = finishPending(st, r, &tab, &stacks, &closed, in->repo, in->commit,
                     in->run_id, in->chunk, from, last, &q->files[q->n_files]);
  if( rc==FNT_OK ) q->n_files++;
done:
  fnt_replay_free(r);
  fnt_callvec_free(&closed);
  fnt_stacktab_clear(&stacks);
  fnt_fntab_clear(&tab);
  fnt_run_calls_clear(&rc_files);
  return rc;
}
