/*
** calls.c -- reading the calls of a pinned snapshot (fnt_calls_open), with
** pruning by file, row group and column.
**
** A run's calls live in calls files, each derived over a seq_no interval of
** its events (FORMAT.md, "Calls"): the calls that ended in the interval,
** then the frames open at its end.  Every file's ended calls count; only
** the tail's (the file reaching furthest in seq_no) open frames do.  A run
** whose events reach past its calls files (a warehouse of format 1) is
** replayed in memory instead, the same replay filing uses.
*/
#include <stdlib.h>
#include <string.h>

#include "calls.h"
#include "segment.h"

void fnt_call_predicate_init(fnt_call_predicate *p){
  memset(p, 0, sizeof(*p));
  p->thread = -1;
  p->call_id = -1;
  p->parent_id = -1;
  p->depth_min = 0;
  p->depth_max = INT64_MAX;
  p->dur_min = INT64_MIN;
  p->t0 = INT64_MIN;
  p->t1 = INT64_MAX;
  p->limit = -1;
}

static const char *const endedNames[] = {"exit", "tail_exit", "unwound", "open"};

const char *fnt_ended_by_name(int e){
  return e>=0 && e<4 ? endedNames[e] : 0;
}

/* ------------------------------------------------------------------------
** The files of a run.
*/
typedef struct ranked { const fnt_entry *e; uint64_t ordinal; } ranked;

static int cmpEntrySeqMax(const void *a, const void *b){
  const fnt_entry *x = ((const ranked*)a)->e, *y = ((const ranked*)b)->e;
  return x->seq_max<y->seq_max ? -1 : x->seq_max>y->seq_max;
}

int fnt_run_calls_find(const fnt_snapshot *s, const char *run_id,
                       fnt_run_calls *out){
  size_t i, cap = 0;
  int64_t maxEvents = -1, maxCalls = -1;
  int anyEvents = 0;
  uint64_t ordinal = 0;
  ranked *r = 0;
  memset(out, 0, sizeof(*out));
  for(i=0; i<s->n_manifests; ordinal += s->manifests[i++]->n){
    const fnt_manifest *m = s->manifests[i];
    fnt_entry_iter it;
    const fnt_entry *e;
    /* The run's entries only (the manifest's index), in entry order. */
    fnt_entry_iter_init(&it, m, FNT_BY_RUN, run_id);
    while( (e = fnt_entry_iter_next(&it))!=0 ){
      if( e->table==FNT_TABLE_EVENTS && fnt_entry_has_run(e, run_id) ){
        anyEvents = 1;
        if( e->seq_max>maxEvents ) maxEvents = e->seq_max;
      }else if( e->table==FNT_TABLE_CALLS && strcmp(e->run_id, run_id)==0 ){
        if( out->nfiles==cap ){
          size_t nNew = cap ? cap*2 : 16;
          ranked *a = fnt_realloc(r, nNew*sizeof(*a));
          if( a==0 ){ fnt_free(r); return FNT_E_NOMEM; }
          r = a;
          cap = nNew;
        }
        r[out->nfiles].e = e;
        r[out->nfiles++].ordinal = ordinal + (uint64_t)(e - m->entries);
        if( e->seq_max>maxCalls ) maxCalls = e->seq_max;
      }
    }
  }
  if( out->nfiles ){
    qsort(r, out->nfiles, sizeof(*r), cmpEntrySeqMax);
    out->files = fnt_malloc(out->nfiles*sizeof(*out->files));
    out->ordinal = fnt_malloc(out->nfiles*sizeof(uint64_t));
    if( out->files==0 || out->ordinal==0 ){
      fnt_free(r);
      fnt_run_calls_clear(out);
      return FNT_E_NOMEM;
    }
    for(i=0; i<out->nfiles; i++){
      out->files[i] = r[i].e;
      out->ordinal[i] = r[i].ordinal;
    }
    out->tail = out->files[out->nfiles-1];
  }
  fnt_free(r);
  out->complete = !anyEvents || (out->nfiles>0 && maxCalls>=maxEvents);
  return FNT_OK;
}

void fnt_run_calls_clear(fnt_run_calls *rc){
  fnt_free((void*)rc->files);
  fnt_free(rc->ordinal);
  memset(rc, 0, sizeof(*rc));
}

int fnt_calls_fnid(fnt_fntab *tab, const fnt_segment *seg, uint32_t *fnids,
                   uint32_t f, uint32_t *id){
  if( fnids[f]==UINT32_MAX
   && fnt_fntab_intern(tab, seg->funcs[f].symbol, seg->funcs[f].stable_id, &fnids[f]) ){
    return FNT_E_NOMEM;
  }
  *id = fnids[f];
  return FNT_OK;
}

/* One calls file of fnt_run_calls_visit. */
static int visitFile(fnt_store *st, const fnt_entry *e, int tail,
                     const fnt_calls_visit *v, fnt_calls_rows *g,
                     fnt_buf *scratch, fnt_buf *raw){
  fnt_segment *seg = 0;
  uint32_t *fnids = 0, rg, i;
  int64_t threadIx = -1;
  int rc;
  if( e->t_min>=v->t1 || e->t_max<v->t0 ) return FNT_OK;
  rc = fnt_segment_open(st, e->path, &seg);
  if( rc ) return rc;
  if( seg->table!=FNT_TABLE_CALLS ){
    rc = fnt_err(st, FNT_E_CORRUPT, "%s: holds table %d, the manifest says %d",
                 seg->full_path, seg->table, FNT_TABLE_CALLS);
    goto done;
  }
  if( v->thread>=0 ){
    for(i=0; i<seg->nthreads && seg->threads[i]!=(uint64_t)v->thread; i++){}
    if( i==seg->nthreads ) goto done;
    threadIx = (int64_t)i;
  }
  fnids = fnt_malloc(((size_t)seg->nfuncs+1)*sizeof(uint32_t));
  if( fnids==0 ){ rc = fnt_err(st, FNT_E_NOMEM, "out of memory"); goto done; }
  memset(fnids, 0xff, ((size_t)seg->nfuncs+1)*sizeof(uint32_t));
  for(rg=0; rg<seg->nrg; rg++){
    const fnt_seg_rg *b = &seg->rgs[rg];
    const fnt_calls_rg *c = &seg->crgs[rg];
    int calls = rg<seg->nclosed_rg || tail;
    if( !calls && !v->open_rows ) break;
    if( b->t_min>=v->t1 || b->t_max<v->t0 ) continue;
    if( threadIx>=0 && (threadIx<c->thread_min || threadIx>c->thread_max) ) continue;
    if( v->group ){
      rc = v->group(v->ctx, seg, rg, threadIx, fnids);
    }else{
      rc = fnt_calls_rows_decode(st, seg, rg, v->cols, scratch, raw, g);
      if( rc==FNT_OK ) rc = v->rows(v->ctx, seg, g, threadIx, fnids, calls);
    }
    if( rc ) goto done;
  }
done:
  fnt_free(fnids);
  fnt_segment_release(st, seg);
  return rc;
}

int fnt_run_calls_visit(fnt_store *st, const fnt_run_calls *files,
                        const fnt_calls_visit *v){
  fnt_calls_rows g;
  fnt_buf scratch = {0}, raw = {0};
  size_t i;
  int rc;
  memset(&g, 0, sizeof(g));
  rc = fnt_calls_rows_alloc(&g);
  if( rc ) return fnt_err(st, rc, "out of memory");
  for(i=0; rc==FNT_OK && i<files->nfiles; i++){
    rc = visitFile(st, files->files[i], files->files[i]==files->tail, v, &g,
                   &scratch, &raw);
    if( rc==FNT_OK && v->file_end ) rc = v->file_end(v->ctx);
  }
  fnt_free(g.thr);
  fnt_buf_free(&scratch);
  fnt_buf_free(&raw);
  return rc;
}

/* ------------------------------------------------------------------------
** Decoding a row group of a calls segment.
*/
typedef fnt_calls_rows calls_rg;

int fnt_calls_rows_alloc(fnt_calls_rows *g){
  /* Zeroed: columns a reader does not decode read as 0. */
  uint64_t *a = fnt_calloc(9*(size_t)FNT_CALLS_RG_ROWS, sizeof(uint64_t));
  if( a==0 ) return FNT_E_NOMEM;
  g->thr = a;
  g->cid = a + FNT_CALLS_RG_ROWS;   g->par = a + 2*FNT_CALLS_RG_ROWS;
  g->dep = a + 3*FNT_CALLS_RG_ROWS; g->sta = a + 4*FNT_CALLS_RG_ROWS;
  g->dur = a + 5*FNT_CALLS_RG_ROWS; g->slf = a + 6*FNT_CALLS_RG_ROWS;
  g->fn = a + 7*FNT_CALLS_RG_ROWS;  g->flg = a + 8*FNT_CALLS_RG_ROWS;
  return FNT_OK;
}

static const uint32_t rowsFields[9] = {4, 5, 6, 7, 8, 10, 11, 12, 15};
#define ROWS_START 4                 /* start_ns's place in rowsFields */

/* The rows of row group rg, or an error when above what the arrays hold. */
static int rowsCount(fnt_store *st, const fnt_segment *seg, uint32_t rg,
                     size_t *n){
  *n = (size_t)seg->rgs[rg].nrows;
  if( *n>FNT_CALLS_RG_ROWS ){
    return fnt_err(st, FNT_E_CORRUPT, "%s: row group %u holds %zu calls, above "
                   "the %d a calls row group may", seg->full_path, rg, *n, FNT_CALLS_RG_ROWS);
  }
  return FNT_OK;
}

/* Reads the chunk of column k (rowsFields) of row group rg into raw. */
static int rowsChunk(fnt_store *st, const fnt_segment *seg, uint32_t rg, int k,
                     fnt_buf *scratch, fnt_buf *raw, const fnt_seg_col **out){
  const fnt_seg_col *col = fnt_segment_col(seg, rowsFields[k]);
  *out = col;
  if( col==0 || col->chunk_index<0 ){
    return fnt_err(st, FNT_E_CORRUPT, "%s: calls segment without field %u",
                   seg->full_path, rowsFields[k]);
  }
  return fnt_segment_read_chunk(st, seg, rg, col, scratch, raw);
}

static int rowsMalformed(fnt_store *st, const fnt_segment *seg, uint32_t rg, int k){
  return fnt_err(st, FNT_E_CORRUPT, "%s: row group %u, field %u: malformed "
                 "column chunk", seg->full_path, rg, rowsFields[k]);
}

int fnt_calls_rows_decode_range(fnt_store *st, const fnt_segment *seg,
                                uint32_t rg, unsigned cols, size_t from,
                                size_t to, fnt_buf *scratch, fnt_buf *raw,
                                fnt_calls_rows *g){
  uint64_t *dst[9];
  size_t n, i;
  int k, rc;
  dst[0] = g->thr; dst[1] = g->cid; dst[2] = g->par; dst[3] = g->dep;
  dst[4] = g->sta; dst[5] = g->dur; dst[6] = g->slf; dst[7] = g->fn; dst[8] = g->flg;
  rc = rowsCount(st, seg, rg, &n);
  if( rc ) return rc;
  if( to>n ) to = n;
  if( from>=to ) return FNT_OK;            /* no chunk to read */
  if( cols & FNT_CR_DEPTH ){
    /* A row group holds one depth (FORMAT.md), its footer's: no chunk to
    ** read, decompress and sum up to row `from`. */
    for(i=from; i<to; i++) g->dep[i] = (uint64_t)seg->crgs[rg].depth;
    cols &= ~(unsigned)FNT_CR_DEPTH;
  }
  for(k=0; k<9; k++){
    const fnt_seg_col *col;
    uint64_t limit = k==0 ? seg->nthreads : k==7 ? seg->nfuncs : k==8 ? 16 : UINT64_MAX;
    if( (cols & 1u<<k)==0 ) continue;
    rc = rowsChunk(st, seg, rg, k, scratch, raw, &col);
    if( rc ) return rc;
    if( fnt_decode_ints_range(col->encoding, raw->data, raw->len, n, limit,
                              from, to, dst[k]) ){
      return rowsMalformed(st, seg, rg, k);
    }
  }
  for(i=from; i<to; i++){
    if( cols & FNT_CR_DUR ) g->dur[i] = (uint64_t)fnt_unzigzag(g->dur[i]);
    /* stored: the time in children, dur - self */
    if( cols & FNT_CR_SELF ) g->slf[i] = g->dur[i] - (uint64_t)fnt_unzigzag(g->slf[i]);
    if( (cols & FNT_CR_FLAGS) && (g->flg[i] & 3)>FNT_ENDED_OPEN ) g->flg[i] = FNT_ENDED_OPEN;
  }
  return FNT_OK;
}

int fnt_calls_rows_decode(fnt_store *st, const fnt_segment *seg, uint32_t rg,
                          unsigned cols, fnt_buf *scratch, fnt_buf *raw,
                          fnt_calls_rows *g){
  int rc = fnt_calls_rows_decode_range(st, seg, rg, cols, 0, FNT_CALLS_RG_ROWS,
                                       scratch, raw, g);
  if( rc==FNT_OK ) g->n = (size_t)seg->rgs[rg].nrows;
  return rc;
}

/* The first of rows [0, n) whose start is at or after t (starts ascending). */
static size_t firstStartFrom(const uint64_t *sta, size_t n, int64_t t){
  size_t a = 0, b = n;
  while( a<b ){
    size_t m = a + (b-a)/2;
    if( (int64_t)sta[m]<t ) a = m+1; else b = m;
  }
  return a;
}

int fnt_calls_rows_window(fnt_store *st, const fnt_segment *seg, uint32_t rg,
                          unsigned cols, int64_t t0, int64_t t1,
                          fnt_buf *scratch, fnt_buf *raw, fnt_calls_rows *g,
                          size_t *lo){
  const fnt_seg_col *col;
  fnt_ints c;
  int64_t durMax = seg->crgs[rg].dur_max>0 ? seg->crgs[rg].dur_max : 0;
  size_t n, hi = 0, i;
  int sorted = 1, rc;
  *lo = 0;
  g->n = 0;
  rc = rowsCount(st, seg, rg, &n);
  if( rc==FNT_OK ) rc = rowsChunk(st, seg, rg, ROWS_START, scratch, raw, &col);
  if( rc ) return rc;
  if( fnt_ints_init(&c, col->encoding, raw->data, raw->len, n, UINT64_MAX) ){
    return rowsMalformed(st, seg, rg, ROWS_START);
  }
  /* start_ns 64 rows at a time, up to the first row that starts after t1;
  ** a group whose starts seen so far go back (no writer makes one) is
  ** read whole. */
  while( hi<n ){
    size_t m = n-hi<64 ? n-hi : 64;
    if( fnt_ints_read(&c, m, g->sta+hi) ) return rowsMalformed(st, seg, rg, ROWS_START);
    for(i=hi ? hi : 1; i<hi+m; i++) sorted &= (int64_t)g->sta[i-1]<=(int64_t)g->sta[i];
    hi += m;
    if( sorted && (int64_t)g->sta[hi-1]>t1 ) break;
  }
  if( fnt_ints_finish(&c) ) return rowsMalformed(st, seg, rg, ROWS_START);
  if( sorted ){
    hi = t1==INT64_MAX ? hi : firstStartFrom(g->sta, hi, t1+1);
    *lo = firstStartFrom(g->sta, hi, t0<INT64_MIN+durMax ? INT64_MIN : t0-durMax);
  }
  g->n = hi;
  return fnt_calls_rows_decode_range(st, seg, rg, cols & ~FNT_CR_START, *lo, hi,
                                     scratch, raw, g);
}

static int cmpThreadDepth(const void *a, const void *b){
  const fnt_callrec *x = a, *y = b;
  if( x->thread!=y->thread ) return x->thread<y->thread ? -1 : 1;
  return x->depth<y->depth ? -1 : x->depth>y->depth;
}

/* The open rows of a calls file as replay records (functions interned in
** `tab`), for a derivation to resume from. */
int fnt_calls_read_open(fnt_store *st, const fnt_entry *e, fnt_fntab *tab,
                        fnt_callvec *out){
  fnt_segment *seg = 0;
  fnt_buf scratch = {0}, raw = {0};
  calls_rg g;
  uint32_t *ids = 0, rg;
  size_t i;
  int rc;
  memset(&g, 0, sizeof(g));
  rc = fnt_segment_open(st, e->path, &seg);
  if( rc ) return rc;
  if( seg->table!=FNT_TABLE_CALLS ){
    rc = fnt_err(st, FNT_E_CORRUPT, "%s: not a calls segment", seg->full_path);
    goto done;
  }
  ids = fnt_malloc(((size_t)seg->nfuncs+1)*sizeof(uint32_t));
  if( ids==0 || fnt_calls_rows_alloc(&g) ){ rc = fnt_err(st, FNT_E_NOMEM, "out of memory"); goto done; }
  /* Interned when an open row names it: the open rows are a few stacks,
  ** the file's functions may be thousands. */
  for(i=0; i<seg->nfuncs; i++) ids[i] = UINT32_MAX;
  for(rg=seg->nclosed_rg; rg<seg->nrg; rg++){
    rc = fnt_calls_rows_decode(st, seg, rg, FNT_CR_ALL, &scratch, &raw, &g);
    if( rc ) goto done;
    for(i=0; i<g.n; i++){
      fnt_callrec c;
      memset(&c, 0, sizeof(c));
      c.thread = (uint32_t)seg->threads[g.thr[i]];
      c.call_id = (int64_t)g.cid[i];
      c.parent_id = (int64_t)g.par[i];
      c.depth = (uint32_t)g.dep[i];
      c.start = (int64_t)g.sta[i];
      c.end = (int64_t)(g.sta[i] + g.dur[i]);
      c.self = (int64_t)g.slf[i];
      if( ids[g.fn[i]]==UINT32_MAX ){
        const fnt_function *f = &seg->funcs[g.fn[i]];
        if( fnt_fntab_intern(tab, f->symbol, f->stable_id, &ids[g.fn[i]]) ){
          rc = fnt_err(st, FNT_E_NOMEM, "out of memory");
          goto done;
        }
      }
      c.fn = ids[g.fn[i]];
      c.parent_fn = UINT32_MAX;
      c.ended_by = FNT_ENDED_OPEN;
      c.outermost = (uint8_t)(g.flg[i]>>2 & 1);
      if( fnt_callvec_push(out, &c) ){ rc = fnt_err(st, FNT_E_NOMEM, "out of memory"); goto done; }
    }
  }
  /* By thread, then depth: each open frame's parent is the row before. */
  if( out->n>1 ) qsort(out->a, out->n, sizeof(fnt_callrec), cmpThreadDepth);
  for(i=1; i<out->n; i++){
    fnt_callrec *c = &out->a[i];
    if( c[-1].thread==c->thread && c[-1].depth+1==c->depth ) c->parent_fn = c[-1].fn;
  }
done:
  fnt_free(g.thr);
  fnt_free(ids);
  fnt_buf_free(&scratch);
  fnt_buf_free(&raw);
  fnt_segment_release(st, seg);
  return rc;
}

typedef struct each_ctx {
  fnt_fntab *tab;
  int (*each)(void *ctx, const fnt_callrec *c);
  void *ctx;
} each_ctx;

static int eachRows(void *ctx, const fnt_segment *seg, const fnt_calls_rows *g,
                    int64_t threadIx, uint32_t *fnids, int calls){
  each_ctx *x = ctx;
  size_t i;
  int rc = FNT_OK;
  (void)threadIx;
  (void)calls;
  for(i=0; rc==FNT_OK && i<g->n; i++){
    fnt_callrec c;
    memset(&c, 0, sizeof(c));
    c.call_id = (int64_t)g->cid[i];
    c.parent_id = (int64_t)g->par[i];
    c.start = (int64_t)g->sta[i];
    c.end = (int64_t)(g->sta[i] + g->dur[i]);
    c.self = (int64_t)g->slf[i];
    c.thread = (uint32_t)seg->threads[g->thr[i]];
    c.depth = (uint32_t)g->dep[i];
    c.ended_by = (uint8_t)(g->flg[i] & 3);
    c.outermost = (uint8_t)(g->flg[i]>>2 & 1);
    rc = fnt_calls_fnid(x->tab, seg, fnids, (uint32_t)g->fn[i], &c.fn);
    if( rc==FNT_OK ) rc = x->each(x->ctx, &c);
  }
  return rc;
}

int fnt_run_calls_each(fnt_snapshot *snap, const char *run_id, unsigned cols,
                       fnt_fntab *tab,
                       int (*each)(void *ctx, const fnt_callrec *c),
                       void *ctx){
  fnt_store *st = snap->st;
  fnt_run_calls files;
  int rc = fnt_run_calls_find(snap, run_id, &files);
  if( rc ) return fnt_err(st, rc, "out of memory");
  if( files.complete ){
    each_ctx x;
    fnt_calls_visit v;
    x.tab = tab;
    x.each = each;
    x.ctx = ctx;
    memset(&v, 0, sizeof(v));
    /* Unasked columns decode as 0 once: the row arrays start zeroed. */
    v.cols = cols | FNT_CR_FN | FNT_CR_DUR;
    v.t0 = INT64_MIN;
    v.t1 = INT64_MAX;
    v.thread = -1;
    v.open_rows = 0;
    v.rows = eachRows;
    v.file_end = 0;
    v.ctx = &x;
    rc = fnt_run_calls_visit(st, &files, &v);
  }else{
    fnt_call_predicate p;
    fnt_calls *sc = 0;
    const fnt_call *k;
    fnt_call_predicate_init(&p);
    p.run_ids = &run_id;
    p.n_run_ids = 1;
    rc = fnt_calls_open(snap, &p, &sc);
    while( rc==FNT_OK && (rc = fnt_calls_next(sc, &k))==1 ){
      fnt_callrec c;
      memset(&c, 0, sizeof(c));
      c.call_id = k->call_id;
      c.parent_id = k->parent_id;
      c.start = k->start_ns;
      c.end = k->end_ns;
      c.self = k->self_ns;
      c.thread = k->thread;
      c.depth = (uint32_t)k->depth;
      c.ended_by = (uint8_t)k->ended_by;
      c.outermost = (uint8_t)k->outermost;
      rc = fnt_fntab_intern(tab, k->symbol, k->stable_id, &c.fn);
      if( rc==FNT_OK ) rc = each(ctx, &c);
    }
    fnt_calls_close(sc);
    if( rc>0 ) rc = FNT_OK;
  }
  fnt_run_calls_clear(&files);
  return rc;
}

/* ------------------------------------------------------------------------
** The scan.
*/

/* An open calls file: its segment and its functions' keys. */
typedef struct calls_file {
  fnt_segment *seg;
  const char *run_id;   /* its constant, the run read: held like repo's */
  const char **syms;    /* per function: its symbol (blocks; made on use) */
  uint8_t *fnmatch;     /* key predicate: per function, 1 = matches */
  int64_t thread_ix;    /* the thread predicate's dictionary index, or -1 */
  int tail;
  uint64_t ordinal;     /* the file's place in the snapshot (rowids) */
} calls_file;

typedef struct sorted_call { fnt_call c; uint64_t rowid; } sorted_call;

struct fnt_calls {
  fnt_store *st;
  fnt_snapshot *snap;
  fnt_call_predicate p;
  char **runs;              /* the runs to read, copies */
  size_t nruns, irun;
  char *key;
  /* the current run */
  fnt_run_calls files;
  size_t ifile;
  calls_file *open;         /* files opened for the run (ordered: all) */
  size_t nopen, capopen;
  calls_file *cur;
  uint32_t rg;
  calls_rg g;
  size_t row;
  int run_started;
  /* a run replayed in memory */
  int in_memory;
  fnt_fntab tab;
  fnt_callvec mem;
  size_t imem;
  /* an ordered run: its matching calls, sorted */
  sorted_call *sorted;
  size_t nsorted, capsorted, isorted;
  int64_t yielded;
  int by_block;             /* 1 read by blocks, 0 by rows, -1 not yet */
  uint64_t fn_version;      /* new (st->fn_versions) when a block's functions change */
  const char **memsym;      /* a replayed run's symbols, per function */
  fnt_call row_out;
  uint64_t rowid;
  char *repo, *commit;      /* of a run replayed in memory */
  fnt_buf scratch, raw;
  unsigned filter_cols;     /* FNT_CR_* rowMatches reads */
  unsigned block_cols;      /* FNT_CR_* a block reader asked for */
  fnt_scan_stats stats;
};

static void fileClose(fnt_calls *sc, calls_file *f){
  fnt_free((void*)f->syms);
  fnt_free(f->fnmatch);
  fnt_segment_release(sc->st, f->seg);
  memset(f, 0, sizeof(*f));
}

static void runReset(fnt_calls *sc){
  size_t i;
  for(i=0; i<sc->nopen; i++) fileClose(sc, &sc->open[i]);
  sc->nopen = 0;
  sc->cur = 0;
  fnt_run_calls_clear(&sc->files);
  sc->ifile = 0;
  sc->in_memory = 0;
  fnt_fntab_clear(&sc->tab);
  fnt_callvec_free(&sc->mem);
  sc->imem = 0;
  fnt_free((void*)sc->memsym);
  sc->memsym = 0;
  sc->nsorted = sc->isorted = 0;
  sc->run_started = 0;
  fnt_free(sc->repo);
  fnt_free(sc->commit);
  sc->repo = sc->commit = 0;
}

static int nomem(fnt_calls *sc){ return fnt_err(sc->st, FNT_E_NOMEM, "out of memory"); }

static const char *constText(const fnt_segment *seg, uint32_t field){
  const fnt_seg_col *c = fnt_segment_col(seg, field);
  return c ? c->const_value : 0;
}

/* Opens the calls file `e` of the current run, or returns 0 in *f when
** nothing in it can match. */
static int fileOpen(fnt_calls *sc, const fnt_entry *e, uint64_t ordinal,
                    int tail, calls_file **out){
  const fnt_call_predicate *p = &sc->p;
  calls_file *f;
  uint32_t i;
  int rc, any = 0;
  *out = 0;
  /* The entry's bounds cover every row, open ones included. */
  if( e->t_min>p->t1 || e->t_max<p->t0 ){
    sc->stats.files_skipped++;
    return FNT_OK;
  }
  if( sc->nopen==sc->capopen ){
    size_t nNew = sc->capopen ? sc->capopen*2 : 8;
    calls_file *a = fnt_realloc(sc->open, nNew*sizeof(calls_file));
    if( a==0 ) return nomem(sc);
    sc->open = a;
    sc->capopen = nNew;
  }
  f = &sc->open[sc->nopen];
  memset(f, 0, sizeof(*f));
  rc = fnt_segment_open(sc->st, e->path, &f->seg);
  if( rc ) return rc;
  sc->nopen++;
  sc->stats.files_opened++;
  if( f->seg->table!=FNT_TABLE_CALLS ){
    return fnt_err(sc->st, FNT_E_CORRUPT, "%s: holds table %d, the manifest "
                   "says %d", f->seg->full_path, f->seg->table, FNT_TABLE_CALLS);
  }
  /* Its rows hand out the file's own run_id, a text it owns (held, as
  ** repo and commit are), which must be the run the manifest files it in. */
  f->run_id = constText(f->seg, 3);
  if( f->run_id==0 || strcmp(f->run_id, sc->runs[sc->irun])!=0 ){
    return fnt_err(sc->st, FNT_E_CORRUPT, "%s: holds run '%s', the manifest says '%s'",
                   f->seg->full_path, f->run_id ? f->run_id : "(none)", sc->runs[sc->irun]);
  }
  f->tail = tail;
  f->ordinal = ordinal;
  f->thread_ix = -1;
  if( p->thread>=0 ){
    for(i=0; i<f->seg->nthreads && f->seg->threads[i]!=(uint64_t)p->thread; i++){}
    if( i==f->seg->nthreads ) goto nothing;
    f->thread_ix = i;
  }
  if( sc->key ){
    f->fnmatch = fnt_calloc((size_t)f->seg->nfuncs+1, 1);
    if( f->fnmatch==0 ) return nomem(sc);
    for(i=0; i<f->seg->nfuncs; i++){
      const fnt_function *fn = &f->seg->funcs[i];
      f->fnmatch[i] = fn->stable_id ? strcmp(fn->stable_id, sc->key)==0
                    : sc->key[0]=='?' && strcmp(fn->symbol, sc->key+1)==0;
      any |= f->fnmatch[i];
    }
    if( !any ) goto nothing;
  }
  *out = f;
  return FNT_OK;
nothing:
  sc->stats.files_skipped++;
  fileClose(sc, f);
  sc->nopen--;
  return FNT_OK;
}

/* 1 when row group `rg` of `f` may hold a match. */
static int rgMayMatch(const fnt_calls *sc, const calls_file *f, uint32_t rg){
  const fnt_call_predicate *p = &sc->p;
  const fnt_seg_rg *g = &f->seg->rgs[rg];
  const fnt_calls_rg *c = &f->seg->crgs[rg];
  if( rg>=f->seg->nclosed_rg && !f->tail ) return 0;
  if( g->t_min>p->t1 || g->t_max<p->t0 ) return 0;
  if( p->call_id>=0 && (p->call_id<g->seq_min || p->call_id>g->seq_max) ) return 0;
  if( c->depth<p->depth_min || c->depth>p->depth_max ) return 0;
  if( p->parent_id>=0 && (p->parent_id<c->parent_min || p->parent_id>c->parent_max) ) return 0;
  if( c->dur_max<p->dur_min ) return 0;
  if( f->thread_ix>=0 && (f->thread_ix<c->thread_min || f->thread_ix>c->thread_max) ) return 0;
  return 1;
}

/* 1 when row i of the decoded group matches the predicate. */
static int rowMatches(const fnt_calls *sc, const calls_file *f, size_t i){
  const fnt_call_predicate *p = &sc->p;
  const calls_rg *g = &sc->g;
  int64_t start = (int64_t)g->sta[i], end = (int64_t)(g->sta[i] + g->dur[i]);
  if( start>p->t1 || end<p->t0 ) return 0;
  if( p->call_id>=0 && (int64_t)g->cid[i]!=p->call_id ) return 0;
  if( p->parent_id>=0 && (int64_t)g->par[i]!=p->parent_id ) return 0;
  if( (sc->filter_cols & FNT_CR_DEPTH)
   && ((int64_t)g->dep[i]<p->depth_min || (int64_t)g->dep[i]>p->depth_max) ) return 0;
  if( (int64_t)g->dur[i]<p->dur_min ) return 0;
  if( f->thread_ix>=0 && (int64_t)g->thr[i]!=f->thread_ix ) return 0;
  if( f->fnmatch && !f->fnmatch[g->fn[i]] ) return 0;
  return 1;
}

/* Row i of the decoded group into c.  @return FNT_OK or FNT_E_NOMEM. */
static int rowFromFile(fnt_calls *sc, const calls_file *f, size_t i, fnt_call *c){
  const calls_rg *g = &sc->g;
  const fnt_function *fn = &f->seg->funcs[g->fn[i]];
  c->repo = constText(f->seg, 1);
  c->commit = constText(f->seg, 2);
  c->run_id = f->run_id;
  c->thread = (uint32_t)f->seg->threads[g->thr[i]];
  c->call_id = (int64_t)g->cid[i];
  c->depth = (int64_t)g->dep[i];
  c->parent_id = c->depth ? (int64_t)g->par[i] : -1;
  c->start_ns = (int64_t)g->sta[i];
  c->dur_ns = (int64_t)g->dur[i];
  c->end_ns = (int64_t)(g->sta[i] + g->dur[i]);
  c->self_ns = (int64_t)g->slf[i];
  c->key = fnt_segment_func_key(sc->st, f->seg, (uint32_t)g->fn[i]);
  c->stable_id = fn->stable_id;
  c->symbol = fn->symbol;
  c->ended_by = (int)(g->flg[i] & 3);
  c->outermost = (int)(g->flg[i]>>2 & 1);
  c->texts_held = 1;      /* the footer's and the function table's texts */
  return c->key ? FNT_OK : FNT_E_NOMEM;
}

static int memMatches(const fnt_calls *sc, const fnt_callrec *r){
  const fnt_call_predicate *p = &sc->p;
  if( r->start>p->t1 || r->end<p->t0 ) return 0;
  if( p->call_id>=0 && r->call_id!=p->call_id ) return 0;
  if( p->parent_id>=0 && r->parent_id!=p->parent_id ) return 0;
  if( (int64_t)r->depth<p->depth_min || (int64_t)r->depth>p->depth_max ) return 0;
  if( (int64_t)((uint64_t)r->end-(uint64_t)r->start)<p->dur_min ) return 0;
  if( p->thread>=0 && (int64_t)r->thread!=p->thread ) return 0;
  if( sc->key && strcmp(sc->tab.keys[sc->tab.key[r->fn]], sc->key)!=0 ) return 0;
  return 1;
}

static void rowFromMem(fnt_calls *sc, const fnt_callrec *r, fnt_call *c){
  const fnt_function *fn = &sc->tab.fn[r->fn];
  c->repo = sc->repo;
  c->commit = sc->commit;
  c->run_id = sc->runs[sc->irun];
  c->thread = r->thread;
  c->call_id = r->call_id;
  c->parent_id = r->depth ? r->parent_id : -1;
  c->depth = r->depth;
  c->start_ns = r->start;
  c->end_ns = r->end;
  c->dur_ns = (int64_t)((uint64_t)r->end - (uint64_t)r->start);
  c->self_ns = r->self;
  c->key = sc->tab.keys[sc->tab.key[r->fn]];
  c->stable_id = fn->stable_id;
  c->symbol = fn->symbol;
  c->ended_by = r->ended_by;
  c->outermost = r->outermost;
  c->texts_held = 0;
}

/* Starts run sc->runs[sc->irun]: its files, or its replay in memory. */
static int runStart(fnt_calls *sc){
  const char *run = sc->runs[sc->irun];
  int rc;
  runReset(sc);
  sc->run_started = 1;
  rc = fnt_run_calls_find(sc->snap, run, &sc->files);
  if( rc ) return nomem(sc);
  if( !sc->files.complete ){
    fnt_replay *r;
    int64_t last = -1;
    sc->in_memory = 1;
    r = fnt_replay_new(&sc->tab, &sc->mem);
    if( r==0 ) return nomem(sc);
    rc = fnt_replay_run_events(sc->snap, run, 0, 0, 0, 0, r, &sc->tab, &last,
                               &sc->repo, &sc->commit);
    if( rc==FNT_OK ) rc = fnt_replay_open_calls(r, &sc->mem);
    fnt_replay_free(r);
    if( rc==FNT_E_NOMEM ) return nomem(sc);
    return rc;
  }
  return FNT_OK;
}

/* Decodes the current run's next row group that may match into sc->g,
** opening the run's files in turn: the predicate's columns for the rows
** whose start may overlap its window, then `cols` (the others wanted) for
** the rows from the first match to the last (a window or an instant reads
** a few rows of each group); sc->row is the first match, g.n the row after
** the last.
** @return 1 a row group, 0 the run's files are done, < 0 an error. */
static int rgNext(fnt_calls *sc, unsigned cols){
  int rc;
  for(;;){
    if( sc->cur ){
      while( sc->rg<sc->cur->seg->nrg && !rgMayMatch(sc, sc->cur, sc->rg) ){
        sc->rg++;
        sc->stats.row_groups_skipped++;
      }
      if( sc->rg<sc->cur->seg->nrg ){
        size_t lo, i, j;
        rc = fnt_calls_rows_window(sc->st, sc->cur->seg, sc->rg++, sc->filter_cols,
                                   sc->p.t0, sc->p.t1, &sc->scratch, &sc->raw,
                                   &sc->g, &lo);
        if( rc ) return rc;
        sc->stats.row_groups_read++;
        /* The rows from the first match to the last are read on. */
        for(i=lo; i<sc->g.n && !rowMatches(sc, sc->cur, i); i++){}
        for(j=sc->g.n; j>i && !rowMatches(sc, sc->cur, j-1); j--){}
        sc->stats.rows_decoded += (i - lo) + (sc->g.n - j);
        sc->row = i;
        sc->g.n = j;
        rc = fnt_calls_rows_decode_range(sc->st, sc->cur->seg, sc->rg-1,
                                         cols & ~sc->filter_cols, i, j,
                                         &sc->scratch, &sc->raw, &sc->g);
        if( rc ) return rc;
        return 1;
      }
      /* An unordered scan needs a file no longer once it is read. */
      if( !sc->p.ordered ){
        fileClose(sc, sc->cur);
        sc->nopen--;
      }
      sc->cur = 0;
    }
    if( sc->ifile>=sc->files.nfiles ) return 0;
    {
      const fnt_entry *e = sc->files.files[sc->ifile];
      uint64_t ordinal = sc->files.ordinal[sc->ifile++];
      rc = fileOpen(sc, e, ordinal, e==sc->files.tail, &sc->cur);
      if( rc ) return rc;
      sc->rg = 0;
      sc->g.n = sc->row = 0;
      sc->fn_version = ++sc->st->fn_versions;
    }
  }
}

/* The next matching call of the current run in its natural order, into
** *c.  1 a call, 0 the run is done. */
static int runNext(fnt_calls *sc, fnt_call *c){
  int rc;
  if( sc->in_memory ){
    while( sc->imem<sc->mem.n ){
      const fnt_callrec *r = &sc->mem.a[sc->imem++];
      if( memMatches(sc, r) ){
        /* Runs of format 1: rowids by run, above any file's. */
        rowFromMem(sc, r, c);
        sc->rowid = (uint64_t)1<<62 | (uint64_t)(fnt_hash(c->run_id, strlen(c->run_id)) & 0x3fffffff)<<32
                  | (sc->imem-1);
        return 1;
      }
    }
    return 0;
  }
  for(;;){
    while( sc->cur && sc->row<sc->g.n ){
      size_t i = sc->row++;
      sc->stats.rows_decoded++;
      if( rowMatches(sc, sc->cur, i) ){
        if( rowFromFile(sc, sc->cur, i, c) ) return nomem(sc);
        sc->rowid = sc->cur->ordinal<<32 | (sc->cur->seg->rgs[sc->rg-1].first_row + i);
        return 1;
      }
    }
    rc = rgNext(sc, FNT_CR_ALL);
    if( rc<=0 ) return rc;
  }
}

/* ------------------------------------------------------------------------
** Blocks: the matching rows of a row group moved to the front of sc->g's
** columns (thread ids for dictionary indexes), handed out as they are.
*/

/* The columns a block reader asks for (fnt_call_predicate.block_cols) as
** FNT_CR_* bits to decode: parent_id needs depth (-1 at depth 0), self_ns
** dur_ns (stored as dur - self).  Depth is always given: it costs no chunk
** (a row group's footer holds it), and fileBlock tests it for every row. */
static unsigned blockCols(uint64_t asked){
  static const struct { int col; unsigned cr; } map[] = {
    {FNT_CALL_THREAD, FNT_CR_THREAD}, {FNT_CALL_CALL_ID, FNT_CR_CALL_ID},
    {FNT_CALL_PARENT_ID, FNT_CR_PARENT},
    {FNT_CALL_START_NS, FNT_CR_START}, {FNT_CALL_DUR_NS, FNT_CR_DUR},
    {FNT_CALL_SELF_NS, FNT_CR_SELF|FNT_CR_DUR}, {FNT_CALL_SYMBOL, FNT_CR_FN},
  };
  unsigned cr = FNT_CR_DEPTH;
  size_t i;
  for(i=0; i<sizeof(map)/sizeof(map[0]); i++){
    if( asked==0 || (asked & FNT_CALL_COL(map[i].col)) ) cr |= map[i].cr;
  }
  return cr;
}

/* The array of column `col` for a block: NULL unless asked for. */
static const int64_t *blockCol(const fnt_calls *sc, int col, const uint64_t *a){
  uint64_t asked = sc->p.block_cols;
  return asked==0 || (asked & FNT_CALL_COL(col)) ? (const int64_t*)a : 0;
}

static void blockFrom(fnt_calls *sc, const char *const *syms, size_t nfn,
                      fnt_call_block *b){
  const calls_rg *g = &sc->g;
  b->run_id = sc->runs[sc->irun];
  b->thread = blockCol(sc, FNT_CALL_THREAD, g->thr);
  b->call_id = blockCol(sc, FNT_CALL_CALL_ID, g->cid);
  b->parent_id = blockCol(sc, FNT_CALL_PARENT_ID, g->par);
  b->depth = blockCol(sc, FNT_CALL_DEPTH, g->dep);
  b->start_ns = blockCol(sc, FNT_CALL_START_NS, g->sta);
  b->dur_ns = blockCol(sc, FNT_CALL_DUR_NS, g->dur);
  b->self_ns = blockCol(sc, FNT_CALL_SELF_NS, g->slf);
  b->fn = blockCol(sc, FNT_CALL_SYMBOL, g->fn);
  b->fn_symbol = b->fn ? syms : 0;
  b->n_fn = nfn;
  b->fn_version = sc->fn_version;
}

/* The next block of a run read from its files.  1 a block, 0 the end. */
static int fileBlock(fnt_calls *sc, fnt_call_block *b){
  calls_rg *g = &sc->g;
  int rc;
  for(;;){
    if( sc->cur && sc->row<g->n ){
      calls_file *f = sc->cur;
      const uint64_t *thr = f->seg->threads;
      size_t i, j = 0;
      /* Row i is tested before anything is written at j <= i.  Columns
      ** not decoded are moved too (they are not given): cheaper than a
      ** test per column and row, but for the thread's dictionary look-up. */
      for(i=sc->row; i<g->n; i++){
        if( !rowMatches(sc, f, i) ) continue;
        if( sc->block_cols & FNT_CR_THREAD ) g->thr[j] = thr[g->thr[i]];
        g->cid[j] = g->cid[i];
        g->par[j] = g->dep[i] ? g->par[i] : (uint64_t)-1;
        g->dep[j] = g->dep[i];
        g->sta[j] = g->sta[i];
        g->dur[j] = g->dur[i];
        g->slf[j] = g->slf[i];
        g->fn[j] = g->fn[i];
        j++;
      }
      sc->stats.rows_decoded += g->n - sc->row;
      sc->row = g->n;
      if( j ){
        if( f->syms==0 ){
          uint32_t k;
          f->syms = fnt_malloc(((size_t)f->seg->nfuncs+1)*sizeof(char*));
          if( f->syms==0 ) return nomem(sc);
          for(k=0; k<f->seg->nfuncs; k++) f->syms[k] = f->seg->funcs[k].symbol;
        }
        g->n = sc->row = j;
        b->n = j;
        blockFrom(sc, f->syms, f->seg->nfuncs, b);
        return 1;
      }
    }
    rc = rgNext(sc, sc->block_cols);
    if( rc<=0 ) return rc;
  }
}

/* The next block of a run replayed in memory.  1 a block, 0 the end. */
static int memBlock(fnt_calls *sc, fnt_call_block *b){
  calls_rg *g = &sc->g;
  size_t j = 0;
  uint32_t k;
  if( sc->memsym==0 ){
    sc->memsym = fnt_calloc((size_t)sc->tab.nfn+1, sizeof(char*));
    if( sc->memsym==0 ) return nomem(sc);
    for(k=0; k<sc->tab.nfn; k++) sc->memsym[k] = sc->tab.fn[k].symbol;
    sc->fn_version = ++sc->st->fn_versions;
  }
  while( sc->imem<sc->mem.n && j<FNT_CALLS_RG_ROWS ){
    const fnt_callrec *r = &sc->mem.a[sc->imem++];
    if( !memMatches(sc, r) ) continue;
    g->thr[j] = r->thread;
    g->cid[j] = (uint64_t)r->call_id;
    g->par[j] = r->depth ? (uint64_t)r->parent_id : (uint64_t)-1;
    g->dep[j] = r->depth;
    g->sta[j] = (uint64_t)r->start;
    g->dur[j] = (uint64_t)r->end - (uint64_t)r->start;
    g->slf[j] = (uint64_t)r->self;
    g->fn[j] = r->fn;
    j++;
  }
  if( j==0 ) return 0;
  g->n = sc->row = j;
  b->n = j;
  blockFrom(sc, sc->memsym, sc->tab.nfn, b);
  return 1;
}

int fnt_calls_next_block(fnt_calls *sc, fnt_call_block *b){
  int rc;
  if( sc==0 || b==0 ) return FNT_E_MISUSE;
  memset(b, 0, sizeof(*b));
  if( sc->p.ordered || sc->by_block==0 ){
    return fnt_err(sc->st, FNT_E_MISUSE, "fnt_calls_next_block: %s",
                   sc->p.ordered ? "an ordered scan gives its calls by fnt_calls_next"
                                 : "the scan is read by fnt_calls_next");
  }
  sc->by_block = 1;
  while( sc->irun<sc->nruns ){
    if( sc->p.limit>=0 && sc->yielded>=sc->p.limit ) return 0;
    if( !sc->run_started ){
      rc = runStart(sc);
      if( rc ) return rc;
    }
    rc = sc->in_memory ? memBlock(sc, b) : fileBlock(sc, b);
    if( rc<0 ) return rc;
    if( rc==1 ){
      if( sc->p.limit>=0 && b->n>(uint64_t)(sc->p.limit-sc->yielded) ){
        b->n = (size_t)(sc->p.limit-sc->yielded);
      }
      sc->yielded += (int64_t)b->n;
      return 1;
    }
    runReset(sc);
    sc->irun++;
  }
  return 0;
}

static int cmpStart(const void *a, const void *b){
  const fnt_call *x = &((const sorted_call*)a)->c, *y = &((const sorted_call*)b)->c;
  if( x->start_ns!=y->start_ns ) return x->start_ns<y->start_ns ? -1 : 1;
  return x->call_id<y->call_id ? -1 : x->call_id>y->call_id;
}

/* Collects and sorts the current run's matching calls (ordered scans). */
static int runSort(fnt_calls *sc){
  fnt_call c;
  int rc;
  while( (rc = runNext(sc, &c))==1 ){
    if( sc->nsorted==sc->capsorted ){
      size_t nNew = sc->capsorted ? sc->capsorted*2 : 1024;
      sorted_call *a = fnt_realloc(sc->sorted, nNew*sizeof(sorted_call));
      if( a==0 ) return nomem(sc);
      sc->sorted = a;
      sc->capsorted = nNew;
    }
    sc->sorted[sc->nsorted].c = c;
    sc->sorted[sc->nsorted++].rowid = sc->rowid;
  }
  if( rc<0 ) return rc;
  if( sc->nsorted>1 ) qsort(sc->sorted, sc->nsorted, sizeof(sorted_call), cmpStart);
  sc->isorted = 0;
  return FNT_OK;
}

int fnt_calls_next(fnt_calls *sc, const fnt_call **row){
  int rc;
  if( sc==0 || row==0 ) return FNT_E_MISUSE;
  *row = 0;
  if( sc->by_block==1 ){
    return fnt_err(sc->st, FNT_E_MISUSE, "fnt_calls_next: the scan is read by fnt_calls_next_block");
  }
  sc->by_block = 0;
  if( sc->p.limit>=0 && sc->yielded>=sc->p.limit ) return 0;
  while( sc->irun<sc->nruns ){
    if( !sc->run_started ){
      rc = runStart(sc);
      if( rc ) return rc;
      if( sc->p.ordered ){
        rc = runSort(sc);
        if( rc ) return rc;
      }
    }
    if( sc->p.ordered ){
      if( sc->isorted<sc->nsorted ){
        sc->rowid = sc->sorted[sc->isorted].rowid;
        sc->row_out = sc->sorted[sc->isorted++].c;
        rc = 1;
      }else{
        rc = 0;
      }
    }else{
      rc = runNext(sc, &sc->row_out);
      if( rc<0 ) return rc;
    }
    if( rc==1 ){
      sc->yielded++;
      *row = &sc->row_out;
      return 1;
    }
    runReset(sc);
    sc->irun++;
  }
  return 0;
}

static int cmpStr(const void *a, const void *b){
  return strcmp(*(const char*const*)a, *(const char*const*)b);
}

/* Every run of the snapshot with events or calls, sorted, deduplicated. */
static int allRuns(fnt_calls *sc){
  const fnt_snapshot *s = sc->snap;
  size_t i, j, k, cap = 0;
  for(i=0; i<s->n_manifests; i++){
    const fnt_manifest *m = s->manifests[i];
    for(j=0; j<m->n; j++){
      const fnt_entry *e = &m->entries[j];
      size_t nk = e->table==FNT_TABLE_EVENTS && e->n_keys && !e->run_id[0] ? e->n_keys : 1;
      if( e->table!=FNT_TABLE_EVENTS && e->table!=FNT_TABLE_CALLS ) continue;
      for(k=0; k<nk; k++){
        const char *run = nk>1 || (e->n_keys && !e->run_id[0]) ? e->keys[k].run_id : e->run_id;
        if( sc->nruns==cap ){
          size_t nNew = cap ? cap*2 : 16;
          char **a = fnt_realloc(sc->runs, nNew*sizeof(char*));
          if( a==0 ) return nomem(sc);
          sc->runs = a;
          cap = nNew;
        }
        sc->runs[sc->nruns] = fnt_strdup(run);
        if( sc->runs[sc->nruns]==0 ) return nomem(sc);
        sc->nruns++;
      }
    }
  }
  if( sc->nruns ) qsort(sc->runs, sc->nruns, sizeof(char*), cmpStr);
  for(i=j=0; i<sc->nruns; i++){
    if( j>0 && strcmp(sc->runs[j-1], sc->runs[i])==0 ){ fnt_free(sc->runs[i]); continue; }
    sc->runs[j++] = sc->runs[i];
  }
  sc->nruns = j;
  return FNT_OK;
}

int fnt_calls_open(fnt_snapshot *snap, const fnt_call_predicate *p, fnt_calls **out){
  fnt_calls *sc;
  size_t i;
  int rc;
  if( out ) *out = 0;
  if( snap==0 || p==0 || out==0 ) return FNT_E_MISUSE;
  sc = fnt_calloc(1, sizeof(*sc));
  if( sc==0 ) return fnt_err(snap->st, FNT_E_NOMEM, "out of memory");
  sc->st = snap->st;
  sc->snap = snap;
  snap->refs++;
  sc->p = *p;
  sc->p.run_ids = 0;
  sc->p.key = 0;
  sc->by_block = -1;
  /* What rowMatches reads; a column a bound leaves open is not read. */
  sc->filter_cols = FNT_CR_START | FNT_CR_DUR
    | (p->call_id>=0 ? FNT_CR_CALL_ID : 0)
    | (p->parent_id>=0 ? FNT_CR_PARENT : 0)
    | (p->depth_min>0 || p->depth_max<INT64_MAX ? FNT_CR_DEPTH : 0)
    | (p->thread>=0 ? FNT_CR_THREAD : 0)
    | (p->key ? FNT_CR_FN : 0);
  sc->block_cols = blockCols(p->block_cols);
  *out = sc;
  fnt_err_clear(sc->st);
  if( fnt_calls_rows_alloc(&sc->g) ) return nomem(sc);
  if( p->key ){
    sc->key = fnt_strdup(p->key);
    if( sc->key==0 ) return nomem(sc);
  }
  if( p->n_run_ids ){
    sc->runs = fnt_calloc(p->n_run_ids, sizeof(char*));
    if( sc->runs==0 ) return nomem(sc);
    for(i=0; i<p->n_run_ids; i++){
      /* Each run once, in the order given. */
      size_t j;
      for(j=0; j<sc->nruns && strcmp(sc->runs[j], p->run_ids[i])!=0; j++){}
      if( j<sc->nruns ) continue;
      sc->runs[sc->nruns] = fnt_strdup(p->run_ids[i]);
      if( sc->runs[sc->nruns]==0 ) return nomem(sc);
      sc->nruns++;
    }
  }else{
    rc = allRuns(sc);
    if( rc ) return rc;
  }
  return FNT_OK;
}

uint64_t fnt_calls_rowid(const fnt_calls *sc){
  return sc ? sc->rowid : 0;
}

void fnt_calls_stats_get(const fnt_calls *sc, fnt_scan_stats *out){
  if( sc ) *out = sc->stats; else memset(out, 0, sizeof(*out));
}

void fnt_calls_close(fnt_calls *sc){
  size_t i;
  if( sc==0 ) return;
  runReset(sc);
  for(i=0; i<sc->nruns; i++) fnt_free(sc->runs[i]);
  fnt_free(sc->runs);
  fnt_free(sc->open);
  fnt_free(sc->key);
  fnt_free(sc->g.thr);
  fnt_free(sc->sorted);
  fnt_buf_free(&sc->scratch);
  fnt_buf_free(&sc->raw);
  fnt_snapshot_release(sc->snap);
  fnt_free(sc);
}
