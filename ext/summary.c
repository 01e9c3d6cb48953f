/*
** summary.c -- fn_trace_run_summary, the eponymous virtual table with one
** row per run: its fn_trace_runs chunks folded (SPEC §3).
**
**   SELECT run_id, chunks_filed, chunks, events FROM fn_trace_run_summary
**    WHERE repo = 'acme/widget';           -- newest run first
**
**   CREATE TABLE x(run_id TEXT NOT NULL, ts_micros INTEGER, repo TEXT NOT
**     NULL, "commit" TEXT, target TEXT, source TEXT, chunks_filed INTEGER,
**     chunks INTEGER, events INTEGER, mapped_events INTEGER, total_events
**     INTEGER, threads INTEGER, duration_ns INTEGER, truncated INTEGER,
**     functions INTEGER, mapped_functions INTEGER, local_functions INTEGER,
**     mapped_local_functions INTEGER, binaries TEXT)
**
** A run has a handful of chunks and a warehouse a few thousand runs, so
** xFilter materializes the result: one scan of fn_trace_runs (run_id and
** repo pushed into it), grouped by run_id, then sorted newest first
** (ts_micros DESC, run_id) -- the order SPEC §3 gives rows without ORDER BY,
** and the one an ORDER BY ts_micros DESC[, run_id] gets without a sort.
*/
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "fntrace_int.h"

/* The columns, and how each folds the run's chunks. */
enum { FOLD_OWN, FOLD_SUM, FOLD_MIN, FOLD_COUNT };
static const struct {
  const char *zName;
  int isText;
  int iSrc;           /* column of fn_trace_runs; -1: none (chunks_filed) */
  int eFold;          /* FOLD_OWN: the lowest-numbered filed chunk's value */
} aSumCol[] = {
  { "run_id",                 1, FNT_RUN_RUN_ID,                 FOLD_OWN   },
  { "ts_micros",              0, FNT_RUN_TS_MICROS,              FOLD_MIN   },
  { "repo",                   1, FNT_RUN_REPO,                   FOLD_OWN   },
  { "commit",                 1, FNT_RUN_COMMIT,                 FOLD_OWN   },
  { "target",                 1, FNT_RUN_TARGET,                 FOLD_OWN   },
  { "source",                 1, FNT_RUN_SOURCE,                 FOLD_OWN   },
  { "chunks_filed",           0, -1,                             FOLD_COUNT },
  { "chunks",                 0, FNT_RUN_CHUNKS,                 FOLD_OWN   },
  { "events",                 0, FNT_RUN_EVENTS,                 FOLD_SUM   },
  { "mapped_events",          0, FNT_RUN_MAPPED_EVENTS,          FOLD_SUM   },
  { "total_events",           0, FNT_RUN_TOTAL_EVENTS,           FOLD_OWN   },
  { "threads",                0, FNT_RUN_THREADS,                FOLD_OWN   },
  { "duration_ns",            0, FNT_RUN_DURATION_NS,            FOLD_OWN   },
  { "truncated",              0, FNT_RUN_TRUNCATED,              FOLD_OWN   },
  { "functions",              0, FNT_RUN_FUNCTIONS,              FOLD_SUM   },
  { "mapped_functions",       0, FNT_RUN_MAPPED_FUNCTIONS,       FOLD_SUM   },
  { "local_functions",        0, FNT_RUN_LOCAL_FUNCTIONS,        FOLD_SUM   },
  { "mapped_local_functions", 0, FNT_RUN_MAPPED_LOCAL_FUNCTIONS, FOLD_SUM   },
  { "binaries",               1, FNT_RUN_BINARIES,               FOLD_OWN   },
};
#define SUM_NCOL ((int)(sizeof(aSumCol)/sizeof(aSumCol[0])))
#define SUM_RUN_ID     0
#define SUM_TS_MICROS  1
#define SUM_REPO       2

/* One chunk row as scanned, then (after folding) one run. */
typedef struct SumRow {
  sqlite3_int64 iChunk;
  sqlite3_int64 ai[SUM_NCOL];
  char *az[SUM_NCOL];            /* sqlite3_malloc'd; NULL = SQL NULL */
} SumRow;

typedef FntConnVtab SumVtab;

typedef struct SumCursor {
  sqlite3_vtab_cursor base;
  FntCurSnap cs;                 /* the snapshot it read */
  SumRow *aRow;
  int nRow;
  int iRow;
} SumCursor;

static void sumRowClear(SumRow *p){
  int i;
  for(i=0; i<SUM_NCOL; i++){
    sqlite3_free(p->az[i]);
    p->az[i] = 0;
  }
}

static int sumConnect(sqlite3 *db, void *pAux, int argc,
                      const char *const *argv, sqlite3_vtab **ppVtab,
                      char **pzErr){
  sqlite3_str *pSql = sqlite3_str_new(db);
  char *zSql;
  int i, rc;
  (void)argc; (void)argv;
  sqlite3_str_appendall(pSql, "CREATE TABLE x(");
  for(i=0; i<SUM_NCOL; i++){
    const char *zCol = aSumCol[i].zName;
    sqlite3_str_appendf(pSql, "%s\"%w\" %s%s", i ? ", " : "", zCol,
        aSumCol[i].isText ? "TEXT" : "INTEGER",
        (i==SUM_RUN_ID || i==SUM_REPO) ? " NOT NULL" : "");
  }
  sqlite3_str_appendall(pSql, ", snapshot_id INTEGER HIDDEN)");  /* SPEC §10 */
  zSql = sqlite3_str_finish(pSql);
  if( zSql==0 ) return SQLITE_NOMEM;
  rc = fntConnVtabConnect(db, (FntConn*)pAux, "fn_trace_run_summary", zSql,
                          ppVtab, pzErr);
  sqlite3_free(zSql);
  return rc;
}

/*
** The plan.  idxNum bits, and argv in this order:
**   SUM_IDX_RUN_ID  0x1  argv: the right-hand side of one "run_id ="
**   SUM_IDX_REPO    0x2  argv: the right-hand side of one "repo ="
**   SUM_IDX_ORDER   0x4  ORDER BY ts_micros DESC[, run_id] consumed (no argv)
**   SUM_IDX_SNAPSHOT 0x8 argv: the right-hand side of "snapshot_id =" (time
**                        travel: SQLite must not filter by it, so omit=1)
** idxStr ends with "plan=<n>", the plan's number (fntConnPlan).
** Only TEXT values (BINARY collation) narrow the fn_trace_runs scan; a NULL
** matches nothing; other values are left to SQLite, which re-checks every
** constraint here (omit=0): the table is small, and exactness is free.
*/
#define SUM_IDX_RUN_ID  0x1
#define SUM_IDX_REPO    0x2
#define SUM_IDX_ORDER   0x4
#define SUM_IDX_SNAPSHOT 0x8

static int sumBestIndex(sqlite3_vtab *pVtab, sqlite3_index_info *pInfo){
  int iRun = -1, iRepo = -1, iSnap = -1, bSnapUnusable = 0;
  int idxNum = 0, nArg = 0, i;
  double nRow = 1000;
  for(i=0; i<pInfo->nConstraint; i++){
    const struct sqlite3_index_constraint *pC = &pInfo->aConstraint[i];
    const char *zColl;
    if( pC->iColumn==SUM_NCOL && pC->op==SQLITE_INDEX_CONSTRAINT_EQ ){
      if( !pC->usable ) bSnapUnusable = 1;
      else if( iSnap<0 ) iSnap = i;
      continue;
    }
    if( !pC->usable || pC->op!=SQLITE_INDEX_CONSTRAINT_EQ ) continue;
    if( pC->iColumn!=SUM_RUN_ID && pC->iColumn!=SUM_REPO ) continue;
    zColl = sqlite3_vtab_collation(pInfo, i);
    if( zColl && sqlite3_stricmp(zColl, "BINARY")!=0 ) continue;
    if( pC->iColumn==SUM_RUN_ID && iRun<0 ) iRun = i;
    if( pC->iColumn==SUM_REPO && iRepo<0 ) iRepo = i;
  }
  if( iRun>=0 ){
    pInfo->aConstraintUsage[iRun].argvIndex = ++nArg;
    idxNum |= SUM_IDX_RUN_ID;
    nRow = 1;
  }
  if( iRepo>=0 ){
    pInfo->aConstraintUsage[iRepo].argvIndex = ++nArg;
    idxNum |= SUM_IDX_REPO;
    nRow /= 10;
  }
  if( iSnap>=0 ){
    pInfo->aConstraintUsage[iSnap].argvIndex = ++nArg;
    pInfo->aConstraintUsage[iSnap].omit = 1;
    idxNum |= SUM_IDX_SNAPSHOT;
  }
  if( pInfo->nOrderBy>=1 && pInfo->aOrderBy[0].iColumn==SUM_TS_MICROS
   && pInfo->aOrderBy[0].desc
   && (pInfo->nOrderBy==1 || (pInfo->aOrderBy[1].iColumn==SUM_RUN_ID
                              && !pInfo->aOrderBy[1].desc)) ){
    /* run_id is unique, so terms after it are already satisfied */
    pInfo->orderByConsumed = 1;
    idxNum |= SUM_IDX_ORDER;
  }
  if( nRow<1 ) nRow = 1;
  /* xFilter reads idxNum, and the plan number: the rest is for EXPLAIN. */
  pInfo->idxStr = sqlite3_mprintf("%s%s%s%splan=%lld",
      (idxNum & SUM_IDX_RUN_ID) ? "run_id= " : "",
      (idxNum & SUM_IDX_REPO) ? "repo= " : "",
      (idxNum & SUM_IDX_SNAPSHOT) ? "snapshot= " : "",
      (idxNum & SUM_IDX_ORDER) ? "order " : "",
      fntConnPlan(((SumVtab*)pVtab)->pConn));
  if( pInfo->idxStr==0 ) return SQLITE_NOMEM;
  pInfo->needToFreeIdxStr = 1;
  pInfo->idxNum = idxNum;
  pInfo->estimatedRows = (sqlite3_int64)nRow;
  pInfo->estimatedCost = 1000.0 + nRow;   /* the runs scan, whatever is kept */
  if( bSnapUnusable && iSnap<0 ) pInfo->estimatedCost *= 1e6;
  return SQLITE_OK;
}

static int sumOpen(sqlite3_vtab *pVtab, sqlite3_vtab_cursor **ppCur){
  SumCursor *pCur = sqlite3_malloc(sizeof(*pCur));
  (void)pVtab;
  if( pCur==0 ) return SQLITE_NOMEM;
  memset(pCur, 0, sizeof(*pCur));
  *ppCur = &pCur->base;
  return SQLITE_OK;
}

static void sumCursorReset(SumCursor *pCur){
  SumVtab *pTab = (SumVtab*)pCur->base.pVtab;
  int i;
  for(i=0; i<pCur->nRow; i++) sumRowClear(&pCur->aRow[i]);
  sqlite3_free(pCur->aRow);
  pCur->aRow = 0;
  pCur->nRow = pCur->iRow = 0;
  fntCurSnapClose(pTab->pConn, &pCur->cs);
}

static int sumClose(sqlite3_vtab_cursor *cur){
  sumCursorReset((SumCursor*)cur);
  sqlite3_free(cur);
  return SQLITE_OK;
}

static int sumCmpRunChunk(const void *a, const void *b){
  const SumRow *p = (const SumRow*)a, *q = (const SumRow*)b;
  int c = strcmp(p->az[SUM_RUN_ID], q->az[SUM_RUN_ID]);
  if( c ) return c;
  return p->iChunk<q->iChunk ? -1 : p->iChunk>q->iChunk;
}

static int sumCmpNewest(const void *a, const void *b){
  const SumRow *p = (const SumRow*)a, *q = (const SumRow*)b;
  if( p->ai[SUM_TS_MICROS]!=q->ai[SUM_TS_MICROS] ){
    return p->ai[SUM_TS_MICROS]>q->ai[SUM_TS_MICROS] ? -1 : 1;
  }
  return strcmp(p->az[SUM_RUN_ID], q->az[SUM_RUN_ID]);
}

/* Saturating: a sum of counts cannot be trusted past 2^63 anyway. */
static sqlite3_int64 sumAdd(sqlite3_int64 a, sqlite3_int64 b){
  sqlite3_int64 r;
  if( __builtin_add_overflow(a, b, &r) ) r = b>0 ? INT64_MAX : INT64_MIN;
  return r;
}

/* The text a TEXT column equals, for a scan filter: NULL *pz when the
** value narrows nothing (left to SQLite); returns 0 when it matches no row. */
static int sumTextKey(sqlite3_value *pVal, const char **pz){
  int t = sqlite3_value_type(pVal);
  *pz = 0;
  if( t==SQLITE_NULL ) return 0;
  if( t==SQLITE_TEXT ){
    const char *z = (const char*)sqlite3_value_text(pVal);
    if( z && (int)strlen(z)==sqlite3_value_bytes(pVal) ) *pz = z;
    else if( z ) return 0;      /* an embedded NUL: no stored run_id */
  }
  return 1;
}

/* Reads the chunk rows of pCur->cs's snapshot into pCur->aRow. */
static int sumLoad(SumCursor *pCur, const fnt_predicate *pPred, char **pzErr){
  SumVtab *pTab = (SumVtab*)pCur->base.pVtab;
  fnt_scan *pScan = 0;
  int nAlloc = 0, rc = SQLITE_OK, frc, i;

  frc = fnt_scan_open(pCur->cs.pSnap, FNT_TABLE_RUNS, pPred, &pScan);
  while( frc>=0 && (frc = fnt_scan_next(pScan))==1 ){
    SumRow *p;
    if( pCur->nRow==nAlloc ){
      int nNew = nAlloc ? 2*nAlloc : 16;
      SumRow *aNew = sqlite3_realloc64(pCur->aRow, sizeof(SumRow)*(size_t)nNew);
      if( aNew==0 ){ rc = SQLITE_NOMEM; break; }
      pCur->aRow = aNew;
      nAlloc = nNew;
    }
    p = &pCur->aRow[pCur->nRow++];
    memset(p, 0, sizeof(*p));
    p->iChunk = fnt_scan_int(pScan, FNT_RUN_CHUNK);
    for(i=0; i<SUM_NCOL; i++){
      int iSrc = aSumCol[i].iSrc;
      if( iSrc<0 ){
        p->ai[i] = 1;                           /* chunks_filed */
      }else if( aSumCol[i].isText ){
        size_t n = 0;
        const char *z = fnt_scan_text(pScan, iSrc, &n);
        if( z ){
          p->az[i] = sqlite3_malloc64(n+1);
          if( p->az[i]==0 ){ rc = SQLITE_NOMEM; break; }
          memcpy(p->az[i], z, n);
          p->az[i][n] = 0;
        }
      }else{
        p->ai[i] = fnt_scan_int(pScan, iSrc);
      }
    }
    if( rc!=SQLITE_OK ) break;
    if( p->az[SUM_RUN_ID]==0 ){
      /* The store never files a run without a run_id; don't crash if a
      ** damaged warehouse says otherwise. */
      p->az[SUM_RUN_ID] = sqlite3_mprintf("");
      if( p->az[SUM_RUN_ID]==0 ){ rc = SQLITE_NOMEM; break; }
    }
  }
  if( rc==SQLITE_OK && frc<0 ){
    *pzErr = fntStoreError("fn_trace_run_summary", pTab->pConn->pStore, frc);
    rc = fntSqliteCode(frc);
  }
  fnt_scan_close(pScan);
  return rc;
}

/* Folds the sorted chunk rows of each run into its first row. */
static void sumFold(SumCursor *pCur){
  int i, j, k, n = 0;
  if( pCur->nRow==0 ) return;
  qsort(pCur->aRow, (size_t)pCur->nRow, sizeof(SumRow), sumCmpRunChunk);
  for(i=0; i<pCur->nRow; i=j){
    SumRow *pRun = &pCur->aRow[i];
    for(j=i+1; j<pCur->nRow
               && strcmp(pCur->aRow[j].az[SUM_RUN_ID], pRun->az[SUM_RUN_ID])==0;
        j++){
      SumRow *p = &pCur->aRow[j];
      for(k=0; k<SUM_NCOL; k++){
        switch( aSumCol[k].eFold ){
          case FOLD_SUM:
          case FOLD_COUNT:
            pRun->ai[k] = sumAdd(pRun->ai[k], p->ai[k]);
            break;
          case FOLD_MIN:
            if( p->ai[k]<pRun->ai[k] ) pRun->ai[k] = p->ai[k];
            break;
        }
      }
      sumRowClear(p);
    }
    if( n!=i ) pCur->aRow[n] = *pRun;
    n++;
  }
  pCur->nRow = n;
  qsort(pCur->aRow, (size_t)pCur->nRow, sizeof(SumRow), sumCmpNewest);
}

/* Materializes the rows: idxNum and argv as the plan comment above
** sumBestIndex() says. */
static int sumFilter(sqlite3_vtab_cursor *cur, int idxNum, const char *idxStr,
                     int argc, sqlite3_value **argv){
  SumCursor *pCur = (SumCursor*)cur;
  SumVtab *pTab = (SumVtab*)cur->pVtab;
  fnt_predicate pred;
  const char *zRun = 0, *zRepo = 0, *zPlan;
  sqlite3_int64 iAt = -1;
  char *zErr = 0;
  int iArg = 0, rc, i, bNone = 0;

  sumCursorReset(pCur);
  fnt_predicate_init(&pred);
  if( idxNum & SUM_IDX_RUN_ID ){
    if( iArg>=argc ) return SQLITE_OK;
    bNone |= !sumTextKey(argv[iArg++], &zRun);
  }
  if( idxNum & SUM_IDX_REPO ){
    if( iArg>=argc ) return SQLITE_OK;
    bNone |= !sumTextKey(argv[iArg++], &zRepo);
  }
  if( idxNum & SUM_IDX_SNAPSHOT ){
    sqlite3_value *pDup;
    if( iArg>=argc ) return SQLITE_OK;
    pDup = sqlite3_value_dup(argv[iArg++]);  /* affinity on a copy */
    if( pDup==0 ) return SQLITE_NOMEM;
    if( sqlite3_value_numeric_type(pDup)==SQLITE_INTEGER ){
      iAt = sqlite3_value_int64(pDup);
    }
    sqlite3_value_free(pDup);
    if( iAt<0 ){
      sqlite3_free(pTab->base.zErrMsg);
      pTab->base.zErrMsg = sqlite3_mprintf("snapshot_id: not a snapshot id "
                                           "(an integer)");
      return SQLITE_ERROR;
    }
  }
  zPlan = idxStr ? strstr(idxStr, "plan=") : 0;
  rc = fntCurSnapOpen(pTab->pConn, &pCur->cs, (idxNum & SUM_IDX_SNAPSHOT)!=0,
                      iAt, zPlan ? strtoll(zPlan+5, 0, 10) : -1, &zErr);
  if( rc!=SQLITE_OK || bNone ){
    if( zErr ){
      sqlite3_free(pTab->base.zErrMsg);
      pTab->base.zErrMsg = zErr;
    }
    return rc;
  }
  if( zRun ){ pred.run_ids = &zRun; pred.n_run_ids = 1; }
  if( zRepo ){ pred.repos = &zRepo; pred.n_repos = 1; }
  for(i=0; i<SUM_NCOL; i++){
    if( aSumCol[i].iSrc>=0 ) pred.columns |= (uint64_t)1 << aSumCol[i].iSrc;
  }
  pred.columns |= (uint64_t)1 << FNT_RUN_CHUNK;
  rc = sumLoad(pCur, &pred, &zErr);
  if( rc!=SQLITE_OK ){
    if( zErr ){
      sqlite3_free(pTab->base.zErrMsg);
      pTab->base.zErrMsg = zErr;
    }
    return rc;
  }
  sumFold(pCur);
  return SQLITE_OK;
}

static int sumNext(sqlite3_vtab_cursor *cur){
  ((SumCursor*)cur)->iRow++;
  return SQLITE_OK;
}

static int sumEof(sqlite3_vtab_cursor *cur){
  SumCursor *pCur = (SumCursor*)cur;
  return pCur->iRow>=pCur->nRow;
}

static int sumColumn(sqlite3_vtab_cursor *cur, sqlite3_context *ctx, int i){
  SumCursor *pCur = (SumCursor*)cur;
  const SumRow *p;
  if( i==SUM_NCOL ){
    sqlite3_result_int64(ctx, pCur->cs.iId);
    return SQLITE_OK;
  }
  if( pCur->iRow>=pCur->nRow || i<0 || i>=SUM_NCOL ) return SQLITE_OK;
  p = &pCur->aRow[pCur->iRow];
  if( aSumCol[i].isText ){
    if( p->az[i] ) sqlite3_result_text(ctx, p->az[i], -1, SQLITE_TRANSIENT);
  }else{
    sqlite3_result_int64(ctx, p->ai[i]);
  }
  return SQLITE_OK;
}

/* The rowid must name the same run in every xFilter of a statement (the
** OR optimization dedups by rowid), whatever was filtered: a hash of the
** run_id (FNV-1a, then a 64-bit mix).  Collisions: odds 2^-64 a pair. */
static int sumRowid(sqlite3_vtab_cursor *cur, sqlite_int64 *pRowid){
  SumCursor *pCur = (SumCursor*)cur;
  sqlite3_uint64 h = 0xcbf29ce484222325ULL;
  const unsigned char *z;
  if( pCur->iRow>=pCur->nRow ){ *pRowid = 0; return SQLITE_OK; }
  for(z=(const unsigned char*)pCur->aRow[pCur->iRow].az[SUM_RUN_ID]; *z; z++){
    h ^= *z;
    h *= 0x100000001b3ULL;
  }
  h ^= h >> 30; h *= 0xbf58476d1ce4e5b9ULL;
  h ^= h >> 27; h *= 0x94d049bb133111ebULL;
  *pRowid = (sqlite3_int64)(h ^ (h >> 31));
  return SQLITE_OK;
}

static int sumUpdate(sqlite3_vtab *pVtab, int argc, sqlite3_value **argv,
                     sqlite_int64 *pRowid){
  (void)argc; (void)argv; (void)pRowid;
  sqlite3_free(pVtab->zErrMsg);
  pVtab->zErrMsg = sqlite3_mprintf("fn_trace_run_summary is read-only: "
                                   "file run chunks with fnt_file_chunk()");
  return SQLITE_READONLY;
}

static const sqlite3_module sumModule = {
  /* iVersion    */ 0,
  /* xCreate     */ 0,      /* eponymous-only */
  /* xConnect    */ sumConnect,
  /* xBestIndex  */ sumBestIndex,
  /* xDisconnect */ fntConnVtabDisconnect,
  /* xDestroy    */ 0,
  /* xOpen       */ sumOpen,
  /* xClose      */ sumClose,
  /* xFilter     */ sumFilter,
  /* xNext       */ sumNext,
  /* xEof        */ sumEof,
  /* xColumn     */ sumColumn,
  /* xRowid      */ sumRowid,
  /* xUpdate     */ sumUpdate,
  /* xBegin      */ 0,
  /* xSync       */ 0,
  /* xCommit     */ 0,
  /* xRollback   */ 0,
  /* xFindMethod */ 0,
  /* xRename     */ 0,
  /* xSavepoint  */ 0,
  /* xRelease    */ 0,
  /* xRollbackTo */ 0,
  /* xShadowName */ 0
};

int fntRegisterSummary(sqlite3 *db, FntConn *p){
  return sqlite3_create_module(db, "fn_trace_run_summary", &sumModule, p);
}
