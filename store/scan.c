/*
** scan.c -- reading a table of a pinned snapshot, with pruning.
**
** Pruning happens at three levels, cheapest first:
**   1. files: a snapshot's manifest entries carry run_id, repo, chunk and the
**      seq_no/t_ns bounds of each file, so files that cannot match are never
**      opened;
**   2. row groups: a segment's footer carries each row group's bounds, so
**      groups outside a t_ns/seq_no window are never read;
**   3. columns: only requested columns (and those a predicate needs) are
**      read and decoded.
** The events of one run may lie in several files (one per chunk).  They are
** merged by seq_no: files are taken in seq_min order and a file joins the
** merge only once the merge has reached its seq_min, so runs whose chunks do
** not overlap (the usual case) keep a single file open at a time.
*/
#include <stdlib.h>
#include <string.h>

#include "segment.h"

/* One open segment and its decoded row group. */
typedef struct seg_cursor {
  fnt_segment *seg;
  const fnt_entry *entry;
  uint32_t next_rg;       /* next row group to consider */
  size_t row, nrows;      /* position in the decoded row group */
  int has_row;
  /* events: decoded columns (only those needed) */
  uint64_t *thread, *seq, *t, *kind, *fn;
  uint8_t *fn_match;      /* stable_id predicate: per function, 1 = matches */
  const fnt_seg_col *consts[3];  /* repo, commit, run_id */
  uint64_t generation;
  /* runs/profile: per column, integers or text offsets into arena[col] */
  int64_t **ivals;
  int64_t **toff;
  fnt_buf *arena;
  const fnt_seg_col **colmap;
} seg_cursor;

struct fnt_scan {
  fnt_store *st;
  fnt_snapshot *snap;
  fnt_table table;
  int ncol;
  fnt_predicate p;
  char **run_ids;           /* copies, deduplicated */
  char **repos;
  char *stable_id;
  uint64_t need;            /* columns to decode: requested | filtered */
  const fnt_entry **files;  /* candidates, grouped by run, by seq_min */
  size_t nfiles, next_file, group_end;
  seg_cursor **active;      /* cursors of the current group */
  size_t nactive;
  seg_cursor *cur;          /* the cursor holding the current row */
  int advance_cur;          /* cur must step before the next row */
  int64_t yielded;
  uint64_t generation;
  fnt_buf scratch, raw;
  fnt_scan_stats stats;
  int done;
};

void fnt_predicate_init(fnt_predicate *p){
  memset(p, 0, sizeof(*p));
  p->t_min = INT64_MIN;
  p->t_max = INT64_MAX;
  p->seq_min = INT64_MIN;
  p->seq_max = INT64_MAX;
  p->thread = -1;
  p->kind = -1;
  p->chunk = -1;
  p->columns = ~UINT64_C(0);
  p->limit = -1;
}

#define COLBIT(c) (UINT64_C(1) << (c))

static int inList(char **list, size_t n, const char *v){
  size_t i;
  for(i=0; i<n; i++) if( strcmp(list[i], v)==0 ) return (int)i;
  return -1;
}

/* Whether a manifest entry can hold matching rows. */
static int entryMatches(const fnt_scan *sc, const fnt_entry *e){
  const fnt_predicate *p = &sc->p;
  if( e->table!=sc->table ) return 0;
  if( p->n_run_ids ){
    size_t i;
    for(i=0; i<p->n_run_ids && !fnt_entry_has_run(e, sc->run_ids[i]); i++){}
    if( i==p->n_run_ids ) return 0;
  }
  if( p->n_repos && inList(sc->repos, p->n_repos, e->repo)<0 ) return 0;
  if( sc->table==FNT_TABLE_RUNS && p->chunk>=0 ){
    size_t i;
    if( e->n_keys==0 ) return e->chunk==p->chunk;
    for(i=0; i<e->n_keys && e->keys[i].chunk!=p->chunk; i++){}
    if( i==e->n_keys ) return 0;
  }
  if( sc->table==FNT_TABLE_EVENTS ){
    if( e->seq_max<p->seq_min || e->seq_min>p->seq_max ) return 0;
    if( e->t_max<p->t_min || e->t_min>p->t_max ) return 0;
  }
  return 1;
}

/* The candidates of manifest m for a predicate on runs, by m's index: the
** entries of those runs (each once), not a test of every entry. */
static void addRunFiles(fnt_scan *sc, const fnt_manifest *m){
  size_t k, kk, taken = 0;
  for(k=0; k<sc->p.n_run_ids; k++){
    fnt_entry_iter it;
    const fnt_entry *e;
    fnt_entry_iter_init(&it, m, FNT_BY_RUN, sc->run_ids[k]);
    while( (e = fnt_entry_iter_next(&it))!=0 ){
      if( e->table!=sc->table ) continue;
      for(kk=0; kk<k && !fnt_entry_has_run(e, sc->run_ids[kk]); kk++){}
      if( kk<k ) continue;                  /* taken for an earlier run */
      taken++;
      if( entryMatches(sc, e) ) sc->files[sc->nfiles++] = e;
      else sc->stats.files_skipped++;
    }
  }
  sc->stats.files_skipped += m->n_of_table[sc->table] - taken;
}

/* At least how many candidate files the snapshot can give: a manifest's
** entries of the given runs where it indexes them (a commit's scan of its
** run must not allocate for every file of a warehouse of many runs), else
** all of its entries. */
static size_t candidateBound(const fnt_scan *sc, const fnt_snapshot *snap){
  size_t i, k, n = 0;
  for(i=0; i<snap->n_manifests; i++){
    const fnt_manifest *m = snap->manifests[i];
    if( sc->p.n_run_ids==0 || m->refs_by==0 ){
      n += m->n;
      continue;
    }
    for(k=0; k<sc->p.n_run_ids; k++){
      fnt_entry_iter it;
      fnt_entry_iter_init(&it, m, FNT_BY_RUN, sc->run_ids[k]);
      while( fnt_entry_iter_next(&it)!=0 ) n++;
    }
  }
  return n;
}

/* A candidate file and the position of its run in the predicate's run_ids
** (runs come out in that order), for sorting without a global context. */
typedef struct ranked_file {
  const fnt_entry *e;
  size_t rank;
} ranked_file;

static int cmpFiles(const void *a, const void *b){
  const ranked_file *rx = a, *ry = b;
  const fnt_entry *x = rx->e, *y = ry->e;
  int c;
  if( rx->rank!=ry->rank ) return rx->rank<ry->rank ? -1 : 1;
  c = strcmp(x->run_id, y->run_id);
  if( c ) return c;
  if( x->seq_min!=y->seq_min ) return x->seq_min<y->seq_min ? -1 : 1;
  if( x->chunk!=y->chunk ) return x->chunk<y->chunk ? -1 : 1;
  return strcmp(x->path, y->path);
}

/* Orders the candidates: run by run (in the order of p->run_ids when
** given), each run's files by seq_min. */
static int sortFiles(fnt_scan *sc){
  ranked_file *r;
  size_t i, k;
  if( sc->nfiles<2 ) return FNT_OK;
  r = fnt_malloc(sc->nfiles*sizeof(*r));
  if( r==0 ) return fnt_err(sc->st, FNT_E_NOMEM, "out of memory");
  for(i=0; i<sc->nfiles; i++){
    r[i].e = sc->files[i];
    r[i].rank = 0;
    for(k=0; k<sc->p.n_run_ids; k++){
      if( fnt_entry_has_run(r[i].e, sc->run_ids[k]) ){ r[i].rank = k; break; }
    }
  }
  qsort(r, sc->nfiles, sizeof(*r), cmpFiles);
  for(i=0; i<sc->nfiles; i++) sc->files[i] = r[i].e;
  fnt_free(r);
  return FNT_OK;
}

static char **copyList(const char *const *src, size_t n, size_t *nOut){
  char **out = fnt_calloc(n+1, sizeof(char*));
  size_t i, k = 0;
  if( out==0 ) return 0;
  for(i=0; i<n; i++){
    if( src[i]==0 || inList(out, k, src[i])>=0 ) continue;
    out[k] = fnt_strdup(src[i]);
    if( out[k]==0 ){
      while( k>0 ) fnt_free(out[--k]);
      fnt_free(out);
      return 0;
    }
    k++;
  }
  *nOut = k;
  return out;
}

static void freeList(char **l, size_t n){
  size_t i;
  if( l==0 ) return;
  for(i=0; i<n; i++) fnt_free(l[i]);
  fnt_free(l);
}

/* An events cursor's five decode arrays are one block of 5 x FNT_RG_ROWS
** integers (640 KB), and the handle keeps FNT_SCAN_KEEP of them for the
** next cursors.  Freed, the block went back to the kernel (glibc maps
** blocks of 128 KB and more until a free raises its threshold), and the
** next window's cursor paid 160 page faults for it: half the time of a
** window that opened a file. */
#define SCAN_ARRAYS ((size_t)5*FNT_RG_ROWS)

static uint64_t *arraysTake(fnt_store *st){
  if( st->n_scan_keep>0 ) return st->scan_keep[--st->n_scan_keep];
  return fnt_malloc(SCAN_ARRAYS*sizeof(uint64_t));
}

static void arraysGive(fnt_store *st, uint64_t *a){
  if( a && st->n_scan_keep<FNT_SCAN_KEEP ) st->scan_keep[st->n_scan_keep++] = a;
  else fnt_free(a);
}

void fnt_scan_keep_free(fnt_store *st){
  while( st->n_scan_keep>0 ) fnt_free(st->scan_keep[--st->n_scan_keep]);
}

static void cursorFree(fnt_scan *sc, seg_cursor *c){
  int i;
  if( c==0 ) return;
  arraysGive(sc->st, c->thread);       /* the block of all five */
  fnt_free(c->fn_match);
  /* Any of the three arrays may be missing (openCursor ran out of memory). */
  for(i=0; i<sc->ncol; i++){
    if( c->ivals ) fnt_free(c->ivals[i]);
    if( c->toff ) fnt_free(c->toff[i]);
    if( c->arena ) fnt_buf_free(&c->arena[i]);
  }
  fnt_free(c->ivals); fnt_free(c->toff); fnt_free(c->arena); fnt_free(c->colmap);
  fnt_segment_release(sc->st, c->seg);
  fnt_free(c);
}

static int nomem(fnt_scan *sc){ return fnt_err(sc->st, FNT_E_NOMEM, "out of memory"); }

/* Reads and decodes one integer chunk of row group rg into out. */
static int decodeInts(fnt_scan *sc, seg_cursor *c, uint32_t rg,
                      const fnt_seg_col *col, uint64_t limit, uint64_t *out){
  const fnt_segment *s = c->seg;
  int rc = fnt_segment_read_chunk(sc->st, s, rg, col, &sc->scratch, &sc->raw);
  if( rc ) return rc;
  if( fnt_decode_ints(col->encoding, sc->raw.data, sc->raw.len,
                      (size_t)s->rgs[rg].nrows, limit, out) ){
    return fnt_err(sc->st, FNT_E_CORRUPT, "%s: row group %u, field %u: "
                   "malformed column chunk", s->full_path, rg, col->field_id);
  }
  return FNT_OK;
}

static int openCursor(fnt_scan *sc, const fnt_entry *e, seg_cursor **out){
  seg_cursor *c = fnt_calloc(1, sizeof(*c));
  int rc, i;
  *out = 0;
  if( c==0 ) return nomem(sc);
  c->entry = e;
  rc = fnt_segment_open(sc->st, e->path, &c->seg);
  if( rc ){ fnt_free(c); return rc; }
  sc->stats.files_opened++;
  if( c->seg->table!=sc->table ){
    rc = fnt_err(sc->st, FNT_E_CORRUPT, "%s: holds table %d, the manifest "
                 "says %d", c->seg->full_path, c->seg->table, sc->table);
    cursorFree(sc, c);
    return rc;
  }
  c->generation = ++sc->generation;
  if( sc->table==FNT_TABLE_EVENTS ){
    for(i=0; i<3; i++) c->consts[i] = fnt_segment_col(c->seg, (uint32_t)i+1);
    if( (c->thread = arraysTake(sc->st))==0 ){
      cursorFree(sc, c);
      return nomem(sc);
    }
    c->seq = c->thread + FNT_RG_ROWS;
    c->t = c->seq + FNT_RG_ROWS;
    c->kind = c->t + FNT_RG_ROWS;
    c->fn = c->kind + FNT_RG_ROWS;
    if( sc->stable_id ){
      uint32_t f;
      c->fn_match = fnt_calloc(c->seg->nfuncs+1, 1);
      if( c->fn_match==0 ){ cursorFree(sc, c); return nomem(sc); }
      for(f=0; f<c->seg->nfuncs; f++){
        const char *sid = c->seg->funcs[f].stable_id;
        c->fn_match[f] = sid && strcmp(sid, sc->stable_id)==0;
      }
    }
  }else{
    c->ivals = fnt_calloc((size_t)sc->ncol, sizeof(int64_t*));
    c->toff = fnt_calloc((size_t)sc->ncol, sizeof(int64_t*));
    c->arena = fnt_calloc((size_t)sc->ncol, sizeof(fnt_buf));
    c->colmap = fnt_calloc((size_t)sc->ncol, sizeof(fnt_seg_col*));
    if( !c->ivals || !c->toff || !c->arena || !c->colmap ){ cursorFree(sc, c); return nomem(sc); }
    for(i=0; i<sc->ncol; i++){
      c->colmap[i] = fnt_segment_col(c->seg, fnt_table_cols(sc->table)[i].field_id);
      if( c->colmap[i] && c->colmap[i]->chunk_index<0 ) c->colmap[i] = 0;
    }
  }
  *out = c;
  return FNT_OK;
}

/* Loads the next row group that can match; has_row = 0 at the end. */
static int loadRowGroup(fnt_scan *sc, seg_cursor *c){
  fnt_segment *s = c->seg;
  const fnt_predicate *p = &sc->p;
  int rc, i;
  while( c->next_rg < s->nrg ){
    uint32_t rg = c->next_rg++;
    const fnt_seg_rg *g = &s->rgs[rg];
    if( sc->table==FNT_TABLE_EVENTS ){
      if( g->seq_min>p->seq_max ){ c->next_rg = s->nrg; break; }  /* sorted */
      if( g->seq_max<p->seq_min || g->t_max<p->t_min || g->t_min>p->t_max ){
        sc->stats.row_groups_skipped++;
        continue;
      }
      {
        const fnt_seg_col *col;
        uint64_t need = sc->need;
        if( need & COLBIT(FNT_EV_THREAD) ){
          col = fnt_segment_col(s, 4);
          if( !col || col->chunk_index<0 || col->encoding!=FNT_ENC_THREAD_BP ) goto bad;
          if( (rc = decodeInts(sc, c, rg, col, s->nthreads, c->thread)) ) return rc;
        }
        if( need & COLBIT(FNT_EV_SEQ_NO) ){
          col = fnt_segment_col(s, 5);
          if( !col || col->chunk_index<0 || col->encoding!=FNT_ENC_DELTA_BP ) goto bad;
          if( (rc = decodeInts(sc, c, rg, col, 0, c->seq)) ) return rc;
        }
        if( need & COLBIT(FNT_EV_T_NS) ){
          col = fnt_segment_col(s, 6);
          if( !col || col->chunk_index<0 || col->encoding!=FNT_ENC_DELTA_BP ) goto bad;
          if( (rc = decodeInts(sc, c, rg, col, 0, c->t)) ) return rc;
        }
        if( need & COLBIT(FNT_EV_KIND) ){
          col = fnt_segment_col(s, 8);
          if( !col || col->chunk_index<0 || col->encoding!=FNT_ENC_KIND_BP ) goto bad;
          if( (rc = decodeInts(sc, c, rg, col, 3, c->kind)) ) return rc;
        }
        if( need & (COLBIT(FNT_EV_SYMBOL)|COLBIT(FNT_EV_STABLE_ID)) ){
          col = fnt_segment_col(s, 9);
          if( !col || col->chunk_index<0 || (col->encoding!=FNT_ENC_FUNC_STACK && col->encoding!=FNT_ENC_FUNC_BP) ) goto bad;
          if( col->encoding==FNT_ENC_FUNC_STACK ){
            rc = fnt_segment_read_chunk(sc->st, s, rg, col, &sc->scratch, &sc->raw);
            if( rc ) return rc;
            rc = fnt_decode_func_stack(sc->raw.data, sc->raw.len, (size_t)g->nrows,
                                       c->thread, c->kind, s->nthreads, s->nfuncs, c->fn);
            if( rc==-2 ) return nomem(sc);
            if( rc ){
              return fnt_err(sc->st, FNT_E_CORRUPT, "%s: row group %u, field %u: "
                             "malformed column chunk", s->full_path, rg, col->field_id);
            }
          }else if( (rc = decodeInts(sc, c, rg, col, s->nfuncs, c->fn)) ){
            return rc;
          }
        }
      }
    }else{
      for(i=0; i<sc->ncol; i++){
        const fnt_seg_col *col = c->colmap[i];
        size_t n = (size_t)g->nrows;
        if( (sc->need & COLBIT(i))==0 || col==0 ) continue;
        if( fnt_column_is_text(sc->table, i) ){
          if( col->encoding!=FNT_ENC_PLAIN_TEXT ) goto bad;
          fnt_free(c->toff[i]);
          c->toff[i] = fnt_malloc(n*sizeof(int64_t));
          if( c->toff[i]==0 ) return nomem(sc);
          rc = fnt_segment_read_chunk(sc->st, s, rg, col, &sc->scratch, &sc->raw);
          if( rc ) return rc;
          rc = fnt_decode_texts(sc->raw.data, sc->raw.len, n, &c->arena[i], c->toff[i]);
          if( rc==-2 ) return nomem(sc);
          if( rc ) goto bad;
        }else{
          if( col->encoding!=FNT_ENC_PLAIN_INT ) goto bad;
          fnt_free(c->ivals[i]);
          c->ivals[i] = fnt_malloc(n*sizeof(int64_t));
          if( c->ivals[i]==0 ) return nomem(sc);
          rc = decodeInts(sc, c, rg, col, 0, (uint64_t*)c->ivals[i]);
          if( rc ) return rc;
          {
            size_t k;
            for(k=0; k<n; k++) c->ivals[i][k] = fnt_unzigzag((uint64_t)c->ivals[i][k]);
          }
        }
      }
    }
    sc->stats.row_groups_read++;
    sc->stats.rows_decoded += g->nrows;
    c->nrows = (size_t)g->nrows;
    c->row = 0;
    c->has_row = 1;
    return FNT_OK;
  }
  c->has_row = 0;
  return FNT_OK;
bad:
  return fnt_err(sc->st, FNT_E_CORRUPT, "%s: a column has an unexpected "
                 "encoding", s->full_path);
}

static const char *genericText(const seg_cursor *c, int col){
  int64_t off;
  if( c->colmap[col]==0 || c->toff[col]==0 ) return 0;
  off = c->toff[col][c->row];
  return off<0 ? 0 : (const char*)c->arena[col].data + off;
}

/* Whether the cursor's current row passes every predicate. */
static int rowMatches(const fnt_scan *sc, const seg_cursor *c){
  const fnt_predicate *p = &sc->p;
  size_t r = c->row;
  if( sc->table==FNT_TABLE_EVENTS ){
    if( (p->seq_min>INT64_MIN || p->seq_max<INT64_MAX)
     && ((int64_t)c->seq[r]<p->seq_min || (int64_t)c->seq[r]>p->seq_max) ) return 0;
    if( (p->t_min>INT64_MIN || p->t_max<INT64_MAX)
     && ((int64_t)c->t[r]<p->t_min || (int64_t)c->t[r]>p->t_max) ) return 0;
    if( p->thread>=0 && c->seg->threads[c->thread[r]]!=(uint64_t)p->thread ) return 0;
    if( p->kind>=0 && c->kind[r]!=(uint64_t)p->kind ) return 0;
    if( c->fn_match && !c->fn_match[c->fn[r]] ) return 0;
    return 1;
  }
  if( p->n_run_ids ){
    const char *v = genericText(c, 0);        /* run_id is column 0 */
    if( v==0 || inList(sc->run_ids, p->n_run_ids, v)<0 ) return 0;
  }
  if( p->n_repos ){
    const char *v = genericText(c, 2);        /* repo is column 2 */
    if( v==0 || inList(sc->repos, p->n_repos, v)<0 ) return 0;
  }
  if( sc->table==FNT_TABLE_RUNS && p->chunk>=0 ){
    if( c->ivals[FNT_RUN_CHUNK]==0 || c->ivals[FNT_RUN_CHUNK][r]!=p->chunk ) return 0;
  }
  if( sc->table==FNT_TABLE_PROFILE && sc->stable_id ){
    const char *v = genericText(c, FNT_PROF_STABLE_ID);
    if( v==0 || strcmp(v, sc->stable_id)!=0 ) return 0;
  }
  return 1;
}

/* Moves the cursor to its next matching row (starting with the current one
** when `fresh`). */
static int seekMatch(fnt_scan *sc, seg_cursor *c, int fresh){
  int rc;
  if( !fresh ) c->row++;
  for(;;){
    if( !c->has_row || c->row>=c->nrows ){
      rc = loadRowGroup(sc, c);
      if( rc ) return rc;
      if( !c->has_row ) return FNT_OK;
    }
    while( c->row<c->nrows ){
      if( rowMatches(sc, c) ) return FNT_OK;
      /* Rows are in seq_no order: past seq_max nothing more matches. */
      if( sc->table==FNT_TABLE_EVENTS && (sc->need & COLBIT(FNT_EV_SEQ_NO))
       && (int64_t)c->seq[c->row]>sc->p.seq_max ){
        c->has_row = 0;
        c->next_rg = c->seg->nrg;
        return FNT_OK;
      }
      c->row++;
    }
  }
}

static void dropActive(fnt_scan *sc, size_t i){
  cursorFree(sc, sc->active[i]);
  sc->active[i] = sc->active[--sc->nactive];
}

static int scanOpen(fnt_snapshot *snap, fnt_table table, const fnt_predicate *p,
                    const fnt_entry *const *only, size_t nOnly, fnt_scan **out){
  fnt_store *st;
  fnt_scan *sc;
  size_t i, j, n = 0;
  int rc;
  if( out==0 ) return FNT_E_MISUSE;
  *out = 0;
  if( snap==0 || p==0 || (int)table<0 || (int)table>FNT_TABLE_PROFILE ) return FNT_E_MISUSE;
  st = snap->st;
  fnt_err_clear(st);
  sc = fnt_calloc(1, sizeof(*sc));
  if( sc==0 ) return fnt_err(st, FNT_E_NOMEM, "out of memory");
  sc->st = st;
  sc->snap = snap;
  snap->refs++;
  sc->table = table;
  sc->ncol = fnt_table_ncol(table);
  sc->p = *p;
  sc->p.run_ids = 0;
  sc->p.repos = 0;
  sc->p.stable_id = 0;
  sc->run_ids = copyList(p->run_ids, p->n_run_ids, &sc->p.n_run_ids);
  sc->repos = copyList(p->repos, p->n_repos, &sc->p.n_repos);
  if( p->stable_id ) sc->stable_id = fnt_strdup(p->stable_id);
  if( !sc->run_ids || !sc->repos || (p->stable_id && !sc->stable_id) ){
    rc = nomem(sc);
    goto fail;
  }
  /* An IN list whose values were all NULL matches nothing. */
  if( (p->n_run_ids && sc->p.n_run_ids==0) || (p->n_repos && sc->p.n_repos==0) ){
    sc->done = 1;
  }
  sc->need = p->columns & (sc->ncol>=64 ? ~UINT64_C(0) : COLBIT(sc->ncol)-1);
  if( table==FNT_TABLE_EVENTS ){
    /* seq_no for merging and stopping early; the function index for
    ** fnt_scan_function(), which heat reads without symbol text. */
    sc->need |= COLBIT(FNT_EV_SEQ_NO) | COLBIT(FNT_EV_SYMBOL);
    /* The function column's stack model replays threads and kinds. */
    sc->need |= COLBIT(FNT_EV_THREAD) | COLBIT(FNT_EV_KIND);
    if( p->t_min>INT64_MIN || p->t_max<INT64_MAX ) sc->need |= COLBIT(FNT_EV_T_NS);
    if( p->thread>=0 ) sc->need |= COLBIT(FNT_EV_THREAD);
    if( p->kind>=0 ) sc->need |= COLBIT(FNT_EV_KIND);
    if( p->stable_id ) sc->need |= COLBIT(FNT_EV_SYMBOL);
  }else{
    if( p->n_run_ids ) sc->need |= COLBIT(0);
    if( p->n_repos ) sc->need |= COLBIT(2);
    if( table==FNT_TABLE_RUNS && p->chunk>=0 ) sc->need |= COLBIT(FNT_RUN_CHUNK);
    if( table==FNT_TABLE_PROFILE && p->stable_id ) sc->need |= COLBIT(FNT_PROF_STABLE_ID);
  }
  /* Candidate files: those given, else the snapshot's that can match. */
  n = only ? nOnly : sc->done ? 0 : candidateBound(sc, snap);
  sc->files = fnt_calloc(n+1, sizeof(fnt_entry*));
  sc->active = fnt_calloc(n+1, sizeof(seg_cursor*));
  if( !sc->files || !sc->active ){ rc = nomem(sc); goto fail; }
  for(i=0; only && i<nOnly; i++) sc->files[sc->nfiles++] = only[i];
  for(i=0; !only && !sc->done && i<snap->n_manifests; i++){
    const fnt_manifest *m = snap->manifests[i];
    if( sc->p.n_run_ids && m->refs_by ){
      addRunFiles(sc, m);
      continue;
    }
    for(j=0; j<m->n; j++){
      const fnt_entry *e = &m->entries[j];
      if( e->table!=table ) continue;
      if( entryMatches(sc, e) ) sc->files[sc->nfiles++] = e;
      else sc->stats.files_skipped++;
    }
  }
  if( (rc = sortFiles(sc))!=FNT_OK ) goto fail;
  *out = sc;
  return FNT_OK;
fail:
  fnt_scan_close(sc);
  return rc;
}

int fnt_scan_open(fnt_snapshot *snap, fnt_table table, const fnt_predicate *p,
                  fnt_scan **out){
  return scanOpen(snap, table, p, 0, 0, out);
}

int fnt_scan_open_entries(fnt_snapshot *snap, fnt_table table,
                          const fnt_entry *const *entries, size_t n,
                          int ordered, fnt_scan **out){
  fnt_predicate p;
  fnt_predicate_init(&p);
  p.ordered = ordered;
  return scanOpen(snap, table, &p, entries, n, out);
}

/* The events merge: see the comment at the top of the file. */
static int nextEvent(fnt_scan *sc){
  int rc;
  size_t i;
  for(;;){
    seg_cursor *best = 0;
    if( sc->nactive==0 && sc->next_file>=sc->group_end ){
      /* Start the next run's group of files. */
      if( sc->next_file>=sc->nfiles ) return 0;
      sc->group_end = sc->next_file + 1;
      while( sc->group_end<sc->nfiles
          && strcmp(sc->files[sc->group_end]->run_id,
                    sc->files[sc->next_file]->run_id)==0 ){
        sc->group_end++;
      }
    }
    for(i=0; i<sc->nactive; i++){
      seg_cursor *c = sc->active[i];
      if( best==0 || c->seq[c->row]<best->seq[best->row] ) best = c;
    }
    /* Admit the next file if the merge has reached its first seq_no. */
    if( sc->next_file<sc->group_end
     && (best==0 || !sc->p.ordered
         || sc->files[sc->next_file]->seq_min<=(int64_t)best->seq[best->row]) ){
      seg_cursor *c;
      if( best && !sc->p.ordered ){
        sc->cur = best;            /* unordered: finish this file first */
        return 1;
      }
      rc = openCursor(sc, sc->files[sc->next_file++], &c);
      if( rc ) return rc;
      rc = seekMatch(sc, c, 1);
      if( rc ){ cursorFree(sc, c); return rc; }
      if( c->has_row ) sc->active[sc->nactive++] = c;
      else cursorFree(sc, c);
      continue;
    }
    if( best==0 ) continue;       /* group exhausted: next group */
    sc->cur = best;
    return 1;
  }
}

static int nextGeneric(fnt_scan *sc){
  int rc;
  for(;;){
    seg_cursor *c;
    if( sc->nactive>0 ){
      sc->cur = sc->active[0];
      return 1;
    }
    if( sc->next_file>=sc->nfiles ) return 0;
    rc = openCursor(sc, sc->files[sc->next_file++], &c);
    if( rc ) return rc;
    rc = seekMatch(sc, c, 1);
    if( rc ){ cursorFree(sc, c); return rc; }
    if( c->has_row ) sc->active[sc->nactive++] = c;
    else cursorFree(sc, c);
  }
}

int fnt_scan_next(fnt_scan *sc){
  int rc;
  if( sc==0 ) return FNT_E_MISUSE;
  if( sc->done ) return 0;
  if( sc->p.limit>=0 && sc->yielded>=sc->p.limit ){
    sc->done = 1;
    return 0;
  }
  if( sc->advance_cur && sc->cur ){
    seg_cursor *c = sc->cur;
    size_t i;
    /* The common step: the next row of the same row group matches, and no
    ** other file of an ordered merge can come before it. */
    if( c->row+1<c->nrows && sc->nactive==1 ){
      c->row++;
      if( rowMatches(sc, c)
       && (sc->table!=FNT_TABLE_EVENTS || !sc->p.ordered
           || sc->next_file>=sc->group_end
           || sc->files[sc->next_file]->seq_min>(int64_t)c->seq[c->row]) ){
        sc->yielded++;
        return 1;
      }
      c->row--;
    }
    sc->advance_cur = 0;
    rc = seekMatch(sc, c, 0);
    if( rc ){ sc->done = 1; return rc; }
    if( !c->has_row ){
      for(i=0; i<sc->nactive; i++){
        if( sc->active[i]==c ){ dropActive(sc, i); break; }
      }
      sc->cur = 0;
    }
  }
  rc = sc->table==FNT_TABLE_EVENTS ? nextEvent(sc) : nextGeneric(sc);
  if( rc<=0 ){
    sc->done = 1;
    sc->cur = 0;
    return rc;
  }
  sc->advance_cur = 1;
  sc->yielded++;
  return 1;
}

int64_t fnt_scan_int(const fnt_scan *sc, int col){
  const seg_cursor *c;
  if( sc==0 || (c = sc->cur)==0 || col<0 || col>=sc->ncol ) return 0;
  if( (sc->need & COLBIT(col))==0 ) return 0;
  if( sc->table==FNT_TABLE_EVENTS ){
    switch( col ){
      case FNT_EV_THREAD: return (int64_t)c->seg->threads[c->thread[c->row]];
      case FNT_EV_SEQ_NO: return (int64_t)c->seq[c->row];
      case FNT_EV_T_NS:   return (int64_t)c->t[c->row];
      case FNT_EV_KIND:   return (int64_t)c->kind[c->row];
      default:            return 0;
    }
  }
  if( c->colmap[col]==0 || c->ivals[col]==0 ) return 0;
  return c->ivals[col][c->row];
}

/* fnt_scan_text and the lifetime class of its text (FNT_TEXT_...); a
** held text's segment in *owner. */
static const char *scanText(const fnt_scan *sc, int col, size_t *len,
                            int *life, fnt_segment **owner){
  const seg_cursor *c;
  const char *v = 0;
  *life = FNT_TEXT_HELD;       /* a segment footer's text, but for... */
  *owner = 0;
  if( sc && (c = sc->cur)!=0 && col>=0 && col<sc->ncol
   && (sc->need & COLBIT(col))!=0 ){
    *owner = c->seg;
    if( sc->table==FNT_TABLE_EVENTS ){
      const fnt_seg_col *sc_col;
      switch( col ){
        case FNT_EV_REPO: case FNT_EV_COMMIT: case FNT_EV_RUN_ID:
          sc_col = c->consts[col];     /* field ids 1, 2, 3 */
          if( sc_col==0 ) break;
          if( len ) *len = sc_col->const_len;
          return sc_col->const_value;
        case FNT_EV_SYMBOL: {
          uint64_t f = c->fn[c->row];
          if( len ) *len = c->seg->func_len[2*f];
          return c->seg->funcs[f].symbol;
        }
        case FNT_EV_STABLE_ID: {
          uint64_t f = c->fn[c->row];
          if( len ) *len = c->seg->func_len[2*f+1];
          return c->seg->funcs[f].stable_id;
        }
        case FNT_EV_KIND: {
          static const size_t kindLen[] = {5, 4, 9};   /* entry exit tail_exit */
          uint64_t k = c->kind[c->row];
          if( len ) *len = kindLen[k];
          *life = FNT_TEXT_STATIC;                  /* ...a literal */
          return fnt_kind_name((int)k);
        }
        default: break;
      }
    }else if( fnt_column_is_text(sc->table, col) ){
      v = genericText(c, col);
      *life = FNT_TEXT_VOLATILE;                    /* ...a decoded chunk */
    }
  }
  if( len ) *len = v ? strlen(v) : 0;
  return v;
}

const char *fnt_scan_text(const fnt_scan *sc, int col, size_t *len){
  fnt_segment *owner;
  int life;
  return scanText(sc, col, len, &life, &owner);
}

int fnt_scan_text_hold(const fnt_scan *sc, int col, const char **z,
                       size_t *len){
  fnt_segment *owner;
  int life;
  *z = scanText(sc, col, len, &life, &owner);
  /* The owner is the text's (segment_read.c's ownedStr), known here
  ** without reading it from before the text. */
  if( *z && life==FNT_TEXT_HELD ) owner->refs++;
  return life;
}

int fnt_scan_event_row(const fnt_scan *sc, fnt_event_row *r){
  const seg_cursor *c;
  const fnt_function *fn;
  size_t k;
  int i;
  if( sc==0 || sc->table!=FNT_TABLE_EVENTS || (c = sc->cur)==0 ){
    return FNT_E_MISUSE;
  }
  k = c->row;
  fn = &c->seg->funcs[c->fn[k]];     /* always decoded: see scanOpen */
  for(i=0; i<3; i++){                /* repo, commit, run_id: field ids 1-3 */
    r->text[i] = c->consts[i] ? c->consts[i]->const_value : 0;
  }
  r->text[FNT_EV_STABLE_ID] = fn->stable_id;
  r->text[FNT_EV_SYMBOL] = fn->symbol;
  r->text[FNT_EV_KIND] = fnt_kind_name((int)c->kind[k]);
  r->num[FNT_EV_THREAD] = (int64_t)c->seg->threads[c->thread[k]];
  r->num[FNT_EV_SEQ_NO] = (int64_t)c->seq[k];
  r->num[FNT_EV_T_NS] = (sc->need & COLBIT(FNT_EV_T_NS)) ? (int64_t)c->t[k] : 0;
  r->num[FNT_EV_KIND] = (int64_t)c->kind[k];
  return FNT_OK;
}

int fnt_scan_is_null(const fnt_scan *sc, int col){
  const seg_cursor *c;
  if( sc==0 || (c = sc->cur)==0 || col<0 || col>=sc->ncol ) return 1;
  if( fnt_column_is_text(sc->table, col) ) return fnt_scan_text(sc, col, 0)==0;
  if( sc->table==FNT_TABLE_EVENTS ) return 0;
  return c->colmap[col]==0;
}

uint32_t fnt_scan_function(const fnt_scan *sc, uint64_t *gen){
  const seg_cursor *c;
  if( sc==0 || (c = sc->cur)==0 || sc->table!=FNT_TABLE_EVENTS ){
    if( gen ) *gen = 0;
    return 0;
  }
  if( gen ) *gen = c->generation;
  return (uint32_t)c->fn[c->row];
}

uint64_t fnt_scan_rowid(const fnt_scan *sc){
  const seg_cursor *c;
  uint64_t ord = 0;
  size_t i;
  if( sc==0 || (c = sc->cur)==0 ) return 0;
  /* The entry's ordinal in the snapshot: manifests hold entries in arrays,
  ** and a snapshot lists few manifests (they are merged past 16). */
  for(i=0; i<sc->snap->n_manifests; i++){
    const fnt_manifest *m = sc->snap->manifests[i];
    if( c->entry>=m->entries && c->entry<m->entries + m->n ){
      ord += (uint64_t)(c->entry - m->entries);
      break;
    }
    ord += m->n;
  }
  return (ord << 32) | (c->seg->rgs[c->next_rg-1].first_row + c->row);
}

int fnt_scan_next_batch(fnt_scan *sc, fnt_event_batch *b){
  const fnt_predicate *p;
  seg_cursor *c;
  uint64_t bound = UINT64_MAX;
  size_t i, m;
  int rc;
  if( sc==0 || b==0 ) return FNT_E_MISUSE;
  p = &sc->p;
  memset(b, 0, sizeof(*b));
  if( sc->table!=FNT_TABLE_EVENTS || p->t_min>INT64_MIN || p->t_max<INT64_MAX
   || p->seq_min>INT64_MIN || p->seq_max<INT64_MAX || p->thread>=0
   || p->kind>=0 || sc->stable_id || p->limit>=0 ){
    return fnt_err(sc->st, FNT_E_MISUSE, "fnt_scan_next_batch: the scan "
                   "bounds rows; use fnt_scan_next");
  }
  rc = fnt_scan_next(sc);
  if( rc<=0 ) return rc;
  c = sc->cur;
  /* Every row matches: the batch runs to the end of the row group, or in
  ** an ordered merge up to the next row another file must interleave. */
  if( p->ordered ){
    for(i=0; i<sc->nactive; i++){
      seg_cursor *o = sc->active[i];
      if( o!=c && o->seq[o->row]<bound ) bound = o->seq[o->row];
    }
    if( sc->next_file<sc->group_end
     && (uint64_t)sc->files[sc->next_file]->seq_min<bound ){
      bound = (uint64_t)sc->files[sc->next_file]->seq_min;
    }
  }
  for(m=1; c->row+m<c->nrows && c->seq[c->row+m]<bound; m++){}
  b->n = m;
  b->seq_no = c->seq + c->row;
  b->t_ns = (sc->need & COLBIT(FNT_EV_T_NS)) ? c->t + c->row : 0;
  b->thread = c->thread + c->row;
  b->kind = c->kind + c->row;
  b->function = c->fn + c->row;
  b->thread_ids = c->seg->threads;
  b->n_threads = c->seg->nthreads;
  b->functions = c->seg->funcs;
  b->n_functions = c->seg->nfuncs;
  b->table_generation = c->generation;
  c->row += m-1;               /* the next call steps past the batch */
  sc->yielded += (int64_t)(m-1);
  return 1;
}

void fnt_scan_stats_get(const fnt_scan *sc, fnt_scan_stats *out){
  if( sc ) *out = sc->stats; else memset(out, 0, sizeof(*out));
}

void fnt_scan_close(fnt_scan *sc){
  size_t i;
  if( sc==0 ) return;
  for(i=0; i<sc->nactive; i++) cursorFree(sc, sc->active[i]);
  fnt_free(sc->active);
  fnt_free(sc->files);
  freeList(sc->run_ids, sc->p.n_run_ids);
  freeList(sc->repos, sc->p.n_repos);
  fnt_free(sc->stable_id);
  fnt_buf_free(&sc->scratch);
  fnt_buf_free(&sc->raw);
  fnt_snapshot_release(sc->snap);
  fnt_free(sc);
}
