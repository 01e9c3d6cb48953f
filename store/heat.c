/*
** heat.c -- fnt_heat (SPEC §5) from the aggregates the store keeps with a
** run's calls: each calls file's footer sums its ended calls per function,
** so a run's heat adds up O(functions x files), plus the tail file's few
** open frames.  Files of version 4 name their functions by key hashes in
** the footer: they are summed by hash, and only the files where a key
** first appears have their function tables read, to name it.  A run
** without complete calls (format 1) is replayed in memory.
*/
#include <stdlib.h>
#include <string.h>

#include "calls.h"
#include "segment.h"

void fnt_run_sums_clear(fnt_run_sums *s){
  fnt_fntab_clear(&s->tab);
  fnt_segment_release(0, s->held);
  fnt_free(s->incl);
  fnt_free(s->self);
  fnt_free(s->calls);
  fnt_free(s->first);
  fnt_free(s->ids);
  memset(s, 0, sizeof(*s));
}

/* Grows the sums to the table's keys, the new ones zero. */
static int sumsKeys(fnt_run_sums *s){
  uint32_t n = s->tab.nkey, i;
  if( n<=s->nkey ) return FNT_OK;
  {
    uint64_t *a = fnt_realloc(s->incl, (size_t)n*sizeof(uint64_t));
    uint32_t *b;
    if( a==0 ) return FNT_E_NOMEM;
    s->incl = a;
    a = fnt_realloc(s->self, (size_t)n*sizeof(uint64_t));
    if( a==0 ) return FNT_E_NOMEM;
    s->self = a;
    a = fnt_realloc(s->calls, (size_t)n*sizeof(uint64_t));
    if( a==0 ) return FNT_E_NOMEM;
    s->calls = a;
    b = fnt_realloc(s->first, (size_t)n*sizeof(uint32_t));
    if( b==0 ) return FNT_E_NOMEM;
    s->first = b;
  }
  for(i=s->nkey; i<n; i++){
    s->incl[i] = s->self[i] = s->calls[i] = 0;
    s->first[i] = 0;
  }
  s->nkey = n;
  return FNT_OK;
}

/* Notes function `fn` as its key's first in this run, unless one was. */
static void sumsFirst(fnt_run_sums *s, uint32_t fn){
  uint32_t k = s->tab.key[fn];
  if( s->first[k]==0 ) s->first[k] = fn+1;
}

const char *fnt_run_sums_symbol(const fnt_run_sums *s, uint32_t k){
  return s->first[k] ? s->tab.fn[s->first[k]-1].symbol : "";
}

/* Adds calls given as records (functions of s->tab). */
static int sumsAddCalls(fnt_run_sums *s, const fnt_callvec *v){
  size_t i;
  if( sumsKeys(s) ) return FNT_E_NOMEM;
  for(i=0; i<v->n; i++){
    const fnt_callrec *c = &v->a[i];
    uint32_t k = s->tab.key[c->fn];
    sumsFirst(s, c->fn);
    uint64_t d = (uint64_t)c->end - (uint64_t)c->start;
    s->calls[k]++;
    s->self[k] += (uint64_t)c->self;
    if( c->outermost ) s->incl[k] += d;
  }
  return FNT_OK;
}

static int sumsBad(fnt_store *st, const fnt_segment *seg){
  return fnt_err(st, FNT_E_CORRUPT, "%s: malformed per-function sums", seg->full_path);
}

/* Adds the footer aggregates of calls file `e`.  Files with the function
** table of the file before (a run's chunks, a repo's runs) reuse its ids. */
static int sumsAddFile(fnt_store *st, fnt_run_sums *s, const fnt_entry *e){
  fnt_segment *seg = 0;
  fnt_seg_sums sums;
  fnt_calls_agg a;
  uint64_t h[2];
  uint32_t i;
  int rc = fnt_segment_open(st, e->path, &seg);
  if( rc ) return rc;
  if( seg->table!=FNT_TABLE_CALLS ){
    rc = fnt_err(st, FNT_E_CORRUPT, "%s: not a calls segment", seg->full_path);
    goto done;
  }
  if( s->nids!=seg->nfuncs || s->ids_hash[0]!=seg->func_hash[0]
   || s->ids_hash[1]!=seg->func_hash[1] ){
    uint32_t *ids = fnt_realloc(s->ids, ((size_t)seg->nfuncs+1)*sizeof(uint32_t));
    if( ids==0 ) goto nomem;
    s->ids = ids;
    s->nids = 0;
    for(i=0; i<seg->nfuncs; i++){
      if( fnt_fntab_intern(&s->tab, seg->funcs[i].symbol, seg->funcs[i].stable_id, &ids[i]) ) goto nomem;
    }
    s->nids = seg->nfuncs;
    memcpy(s->ids_hash, seg->func_hash, sizeof(s->ids_hash));
  }
  if( sumsKeys(s) ) goto nomem;
  rc = fnt_segment_sums(st, seg, &sums);
  while( rc==FNT_OK && fnt_seg_sums_next(&sums, h, &a) ){
    uint32_t k = s->tab.key[s->ids[sums.i-1]];
    sumsFirst(s, s->ids[sums.i-1]);
    s->calls[k] += (uint64_t)a.calls;
    s->incl[k] += (uint64_t)a.incl;
    s->self[k] += (uint64_t)a.self;
  }
  if( rc==FNT_OK && sums.bad ) rc = sumsBad(st, seg);
  goto done;
nomem:
  rc = fnt_err(st, FNT_E_NOMEM, "out of memory");
done:
  fnt_segment_release(st, seg);
  return rc;
}

/* A key of the run while files are summed by key hash: its sums and its
** first function (file index, function index). */
typedef struct hash_slot {
  uint64_t h[2];
  uint64_t calls, incl, self;
  uint32_t file, fn;
} hash_slot;

typedef struct hash_sums {
  hash_slot *slot;             /* in order of first appearance */
  uint32_t n, cap;
  uint32_t *ix, mask;          /* open addressing: slot index + 1 */
} hash_sums;

/* The index rebuilt at nIx entries (a power of two, > m->n).
** @return 0, or -1: no memory. */
static int hashIndex(hash_sums *m, uint32_t nIx){
  uint32_t *a = fnt_calloc(nIx, sizeof(uint32_t)), i, j;
  if( a==0 ) return -1;
  for(i=0; i<m->n; i++){
    for(j=(uint32_t)m->slot[i].h[0] & (nIx-1); a[j]; j=(j+1) & (nIx-1)){}
    a[j] = i+1;
  }
  fnt_free(m->ix);
  m->ix = a;
  m->mask = nIx-1;
  return 0;
}

/* Room for n keys in all (the first file's, most of a run's): no array
** regrown and copied, no index rebuilt while they are added.
** @return 0, or -1: no memory. */
static int hashReserve(hash_sums *m, uint32_t n){
  uint32_t nIx = 1024;
  if( n>m->cap ){
    hash_slot *a = fnt_realloc(m->slot, (size_t)n*sizeof(hash_slot));
    if( a==0 ) return -1;
    m->slot = a;
    m->cap = n;
  }
  while( (uint64_t)n*2 > nIx ) nIx *= 2;
  return m->ix && nIx<=m->mask+1 ? 0 : hashIndex(m, nIx);
}

/* The slot of key hash h, new (file, fn) when first seen.  NULL: no memory. */
static hash_slot *hashSlot(hash_sums *m, const uint64_t h[2], uint32_t file,
                           uint32_t fn){
  uint32_t j;
  if( (uint64_t)(m->n+1)*2 > (m->ix ? (uint64_t)m->mask+1 : 0)
   && hashIndex(m, m->ix ? (m->mask+1)*2 : 1024) ){
    return 0;
  }
  for(j=(uint32_t)h[0] & m->mask; m->ix[j]; j=(j+1) & m->mask){
    hash_slot *x = &m->slot[m->ix[j]-1];
    if( x->h[0]==h[0] && x->h[1]==h[1] ) return x;
  }
  if( m->n==m->cap && hashReserve(m, m->cap ? m->cap*2 : 256) ) return 0;
  memset(&m->slot[m->n], 0, sizeof(hash_slot));
  m->slot[m->n].h[0] = h[0];
  m->slot[m->n].h[1] = h[1];
  m->slot[m->n].file = file;
  m->slot[m->n].fn = fn;
  m->ix[j] = ++m->n;
  return &m->slot[m->n-1];
}

/* Adds the sums of file `file`, function by function.  @return 0, or -1:
** no memory. */
static int hashAddSums(hash_sums *m, fnt_seg_sums *sums, uint32_t file){
  fnt_calls_agg a;
  uint64_t h[2];
  while( fnt_seg_sums_next(sums, h, &a) ){
    hash_slot *x = hashSlot(m, h, file, sums->i - 1);
    if( x==0 ) return -1;
    x->calls += (uint64_t)a.calls;
    x->incl += (uint64_t)a.incl;
    x->self += (uint64_t)a.self;
  }
  return 0;
}

/* Adds the tail file's open frames (file f of the run, its row groups
** from nclosed_rg on), each as fnt_calls_read_open gives it, by the key
** hash of its function: the function table is not read for a few stacks.
** @return FNT_OK or a code (message set). */
static int hashOpenRows(fnt_store *st, hash_sums *m, const fnt_segment *seg,
                        const fnt_seg_sums *sums, uint32_t f){
  fnt_calls_rows g;
  fnt_buf scratch = {0}, raw = {0};
  uint32_t rg;
  size_t i;
  int rc = FNT_OK;
  if( seg->nclosed_rg>=seg->nrg ) return FNT_OK;
  if( fnt_calls_rows_alloc(&g) ) return fnt_err(st, FNT_E_NOMEM, "out of memory");
  for(rg=seg->nclosed_rg; rc==FNT_OK && rg<seg->nrg; rg++){
    rc = fnt_calls_rows_decode(st, seg, rg, FNT_CR_DUR | FNT_CR_SELF | FNT_CR_FN
                               | FNT_CR_FLAGS, &scratch, &raw, &g);
    for(i=0; rc==FNT_OK && i<g.n; i++){
      uint64_t h[2];
      hash_slot *x;
      fnt_seg_sums_hash(sums, (uint32_t)g.fn[i], h);
      x = hashSlot(m, h, f, (uint32_t)g.fn[i]);
      if( x==0 ){ rc = fnt_err(st, FNT_E_NOMEM, "out of memory"); break; }
      x->calls++;
      x->self += g.slf[i];
      if( g.flg[i]>>2 & 1 ) x->incl += g.dur[i];      /* outermost */
    }
  }
  fnt_free(g.thr);
  fnt_buf_free(&scratch);
  fnt_buf_free(&raw);
  return rc;
}

/* Sums the files' aggregates by the key hashes their footers give
** (version 4), so that only the files where a key first appears have their
** function tables read, to name it; the tail's open frames too.  *done 0
** when a file gives no hashes (then nothing is summed).  @return FNT_OK or
** a code (message set). */
static int sumsByHash(fnt_store *st, fnt_run_sums *s, const fnt_run_calls *files,
                      int *done){
  hash_sums m;
  uint32_t i, f, next = 0;
  int rc = FNT_OK, borrow;
  fnt_segment *first = 0;    /* file 0, kept to name its keys */
  memset(&m, 0, sizeof(m));
  *done = 0;
  for(f=0; rc==FNT_OK && f<files->nfiles; f++){
    fnt_segment *seg = 0;
    fnt_seg_sums sums;
    /* The tail's open frames are read from its rows; the first file names
    ** its keys (below), so its function table is loaded and it is kept,
    ** but not its row groups (a file of a million events has a thousand,
    ** a third of a first call's pages touched). */
    const char *path = files->files[f]->path;
    int tail = files->files[f]==files->tail;
    rc = tail ? fnt_segment_open_rows(st, path, &seg)
       : fnt_segment_open_lazy(st, path, &seg, &sums);
    if( rc==FNT_OK && tail ) rc = fnt_segment_sums(st, seg, &sums);
    if( rc ){
      fnt_segment_release(st, seg);
      break;
    }
    if( seg->table!=FNT_TABLE_CALLS ){
      rc = fnt_err(st, FNT_E_CORRUPT, "%s: not a calls segment", seg->full_path);
    }else if( !sums.hashed ){
      fnt_segment_release(st, seg);
      goto done;                                     /* an older file */
    }
    if( rc==FNT_OK && ((f==0 && hashReserve(&m, sums.n)) || hashAddSums(&m, &sums, f)) ){
      rc = fnt_err(st, FNT_E_NOMEM, "out of memory");
    }
    if( rc==FNT_OK && sums.bad ) rc = sumsBad(st, seg);
    if( rc==FNT_OK && tail ) rc = hashOpenRows(st, &m, seg, &sums, f);
    /* Only now: the sums may lie in the buffer the table is read through. */
    if( rc==FNT_OK && f==0 && !seg->funcs_loaded ) rc = fnt_segment_load_funcs(st, seg);
    if( f==0 ) first = seg;
    else fnt_segment_release(st, seg);
  }
  /* Names: from each file where keys first appear, in that order (slot
  ** fn is overwritten by its fnt_fntab id). */
  while( rc==FNT_OK && next<m.n ){
    fnt_segment *seg = 0;
    uint32_t from = next, end = next;
    f = m.slot[next].file;
    while( end<m.n && m.slot[end].file==f ) end++;
    if( f==0 ){
      seg = first;
      first = 0;
    }else{
      rc = fnt_segment_open(st, files->files[f]->path, &seg);
    }
    /* An empty table (a heat's; a comparison's first run) borrows the
    ** texts of the first file it names keys from, and holds the file: the
    ** copies of a few thousand names were a tenth of a first call. */
    borrow = rc==FNT_OK && s->tab.nfn==0 && s->held==0;
    if( rc==FNT_OK && fnt_fntab_reserve(&s->tab, end-from) ){
      rc = fnt_err(st, FNT_E_NOMEM, "out of memory");
    }
    for(; rc==FNT_OK && next<end; next++){
      const fnt_function *fn = &seg->funcs[m.slot[next].fn];
      if( (borrow ? fnt_fntab_intern_borrowed : fnt_fntab_intern)(&s->tab,
              fn->symbol, fn->stable_id, &m.slot[next].fn) ){
        rc = fnt_err(st, FNT_E_NOMEM, "out of memory");
      }
    }
    if( borrow ){
      s->held = seg;
      seg->refs++;
    }
    if( rc==FNT_OK && sumsKeys(s) ) rc = fnt_err(st, FNT_E_NOMEM, "out of memory");
    for(i=from; rc==FNT_OK && i<next; i++){
      const hash_slot *x = &m.slot[i];
      uint32_t id = x->fn, k = s->tab.key[id];
      uint64_t h[2];
      fnt_hash128(s->tab.keys[k], strlen(s->tab.keys[k]), h);
      if( h[0]!=x->h[0] || h[1]!=x->h[1] ){
        rc = fnt_err(st, FNT_E_CORRUPT, "%s: the key hash of '%s' does not match "
                     "it", seg->full_path, s->tab.keys[k]);
        break;
      }
      sumsFirst(s, id);
      s->calls[k] += x->calls;
      s->incl[k] += x->incl;
      s->self[k] += x->self;
    }
    fnt_segment_release(st, seg);
  }
  if( rc==FNT_OK ) *done = 1;
done:
  fnt_segment_release(st, first);
  fnt_free(m.slot);
  fnt_free(m.ix);
  return rc;
}

int fnt_run_sums_add(fnt_snapshot *snap, const char *run_id, fnt_run_sums *s){
  fnt_store *st = snap->st;
  fnt_run_calls files;
  fnt_callvec v = {0};
  size_t i;
  int rc;
  for(i=0; i<s->nkey; i++){
    s->incl[i] = s->self[i] = s->calls[i] = 0;
    s->first[i] = 0;
  }
  rc = fnt_run_calls_find(snap, run_id, &files);
  if( rc ) return fnt_err(st, rc, "out of memory");
  if( files.complete ){
    int done = 0;
    rc = sumsByHash(st, s, &files, &done);
    for(i=0; rc==FNT_OK && !done && i<files.nfiles; i++) rc = sumsAddFile(st, s, files.files[i]);
    if( rc==FNT_OK && !done && files.tail ) rc = fnt_calls_read_open(st, files.tail, &s->tab, &v);
  }else{
    fnt_replay *r = fnt_replay_new(&s->tab, &v);
    int64_t last;
    if( r==0 ) rc = FNT_E_NOMEM;
    if( rc==FNT_OK ) rc = fnt_replay_run_events(snap, run_id, 0, 0, 0, 0, r, &s->tab, &last, 0, 0);
    if( rc==FNT_OK ) rc = fnt_replay_open_calls(r, &v);
    fnt_replay_free(r);
    /* A key's first function: the first of it the replay met. */
    if( rc==FNT_OK && sumsKeys(s) ) rc = FNT_E_NOMEM;
    for(i=0; rc==FNT_OK && i<s->tab.nfn; i++) sumsFirst(s, (uint32_t)i);
  }
  if( rc==FNT_OK && sumsAddCalls(s, &v) ) rc = FNT_E_NOMEM;
  if( rc==FNT_E_NOMEM ) rc = fnt_err(st, rc, "run '%s': out of memory adding up its calls", run_id);
  fnt_callvec_free(&v);
  fnt_run_calls_clear(&files);
  return rc;
}

/* ------------------------------------------------------------------ heat */
struct fnt_heat {
  fnt_run_sums s;
  fnt_heat_row *rows;
  size_t n;
};

size_t fnt_heat_count(const fnt_heat *h){ return h ? h->n : 0; }
const fnt_heat_row *fnt_heat_rows(const fnt_heat *h){ return h ? h->rows : 0; }

void fnt_heat_free(fnt_heat *h){
  if( h==0 ) return;
  fnt_run_sums_clear(&h->s);
  fnt_free(h->rows);
  fnt_free(h);
}

int fnt_heat_compute(fnt_snapshot *snap, const char *run_id, fnt_heat **out){
  fnt_heat *h;
  uint32_t k;
  int rc;
  if( out ) *out = 0;
  if( snap==0 || out==0 ) return FNT_E_MISUSE;
  if( run_id==0 ) return fnt_err(snap->st, FNT_E_MISUSE, "fnt_heat_compute: run_id is NULL");
  fnt_err_clear(snap->st);
  h = fnt_calloc(1, sizeof(*h));
  if( h==0 ) return fnt_err(snap->st, FNT_E_NOMEM, "out of memory");
  rc = fnt_run_sums_add(snap, run_id, &h->s);
  if( rc==FNT_OK ){
    h->rows = fnt_calloc((size_t)h->s.nkey+1, sizeof(fnt_heat_row));
    if( h->rows==0 ) rc = fnt_err(snap->st, FNT_E_NOMEM, "out of memory");
  }
  for(k=0; rc==FNT_OK && k<h->s.nkey; k++){
    fnt_heat_row *r;
    if( h->s.calls[k]==0 ) continue;
    r = &h->rows[h->n++];
    r->key = h->s.tab.keys[k];
    r->symbol = fnt_run_sums_symbol(&h->s, k);
    r->inclusive_ns = (int64_t)h->s.incl[k];
    r->self_ns = (int64_t)h->s.self[k];
    r->calls = (int64_t)h->s.calls[k];
  }
  if( rc ){ fnt_heat_free(h); return rc; }
  *out = h;
  return FNT_OK;
}
