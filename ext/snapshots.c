/*
** snapshots.c -- SPEC §10: the fnt_snapshots table and fnt_snapshot().
**
**   SELECT snapshot_id, operation, run_id, chunk FROM fnt_snapshots;  -- newest first
**   SELECT fnt_snapshot();                  -- the id this statement reads
**   SELECT count(*) FROM fn_trace_events WHERE snapshot_id = 41;  -- time travel
**
**   CREATE TABLE x(snapshot_id INTEGER, committed_micros INTEGER,
**     operation TEXT, run_id TEXT, chunk INTEGER, files INTEGER, bytes INTEGER)
**
** One row per snapshot still listed (not expired) up to the one the
** statement reads, so that a statement sees one state of the warehouse.
** xFilter materializes the rows from fnt_snapshot_list(); `bytes` loads
** each snapshot's manifests, so it is computed only when a query uses it,
** and "snapshot_id = :s" reads one snapshot.
*/
#include <string.h>

#include "fntrace_int.h"

enum { SN_ID, SN_MICROS, SN_OPERATION, SN_RUN_ID, SN_CHUNK, SN_FILES,
       SN_BYTES, SN_NCOL };

typedef struct SnRow {
  sqlite3_int64 iId, iMicros, iChunk, nFiles, nBytes;
  char *zOp, *zRun;              /* sqlite3_malloc'd; zRun NULL for none */
} SnRow;

typedef FntConnVtab SnVtab;

typedef struct SnCursor {
  sqlite3_vtab_cursor base;
  SnRow *aRow;
  int nRow, nAlloc, iRow;
  int bBytes;                    /* compute bytes */
  sqlite3_int64 iMax;            /* the statement's snapshot: no row above */
  fnt_store *pStore;
  int rc;                        /* of the listing callback */
} SnCursor;

static int snConnect(sqlite3 *db, void *pAux, int argc,
                     const char *const *argv, sqlite3_vtab **ppVtab,
                     char **pzErr){
  (void)argc; (void)argv;
  return fntConnVtabConnect(db, (FntConn*)pAux, "fnt_snapshots",
      "CREATE TABLE x(snapshot_id INTEGER, committed_micros INTEGER, "
      "operation TEXT, run_id TEXT, chunk INTEGER, files INTEGER, "
      "bytes INTEGER)", ppVtab, pzErr);
}

/* idxNum: bit 1 "snapshot_id =" in argv[0]; bit 2 bytes is used. */
#define SN_IDX_ID    1
#define SN_IDX_BYTES 2

static int snBestIndex(sqlite3_vtab *pVtab, sqlite3_index_info *pInfo){
  int i, idxNum = 0;
  (void)pVtab;
  for(i=0; i<pInfo->nConstraint; i++){
    const struct sqlite3_index_constraint *pC = &pInfo->aConstraint[i];
    if( pC->usable && pC->iColumn==SN_ID && pC->op==SQLITE_INDEX_CONSTRAINT_EQ
     && !(idxNum & SN_IDX_ID) ){
      pInfo->aConstraintUsage[i].argvIndex = 1;
      pInfo->aConstraintUsage[i].omit = 1;
      idxNum |= SN_IDX_ID;
    }
  }
  if( pInfo->colUsed & ((sqlite3_uint64)1<<SN_BYTES) ) idxNum |= SN_IDX_BYTES;
  pInfo->idxNum = idxNum;
  pInfo->estimatedRows = (idxNum & SN_IDX_ID) ? 1 : 1000;
  pInfo->estimatedCost = (idxNum & SN_IDX_ID) ? 10.0 : 1000.0;
  if( idxNum & SN_IDX_ID ) pInfo->idxFlags = SQLITE_INDEX_SCAN_UNIQUE;
  return SQLITE_OK;
}

static int snOpen(sqlite3_vtab *pVtab, sqlite3_vtab_cursor **ppCur){
  SnCursor *pCur = sqlite3_malloc(sizeof(*pCur));
  (void)pVtab;
  if( pCur==0 ) return SQLITE_NOMEM;
  memset(pCur, 0, sizeof(*pCur));
  *ppCur = &pCur->base;
  return SQLITE_OK;
}

static void snReset(SnCursor *pCur){
  int i;
  for(i=0; i<pCur->nRow; i++){
    sqlite3_free(pCur->aRow[i].zOp);
    sqlite3_free(pCur->aRow[i].zRun);
  }
  sqlite3_free(pCur->aRow);
  pCur->aRow = 0;
  pCur->nRow = pCur->nAlloc = pCur->iRow = 0;
}

static int snClose(sqlite3_vtab_cursor *cur){
  snReset((SnCursor*)cur);
  sqlite3_free(cur);
  return SQLITE_OK;
}

/* Appends the row of one snapshot; non-zero stops the listing. */
static int snAdd(void *pCtx, const fnt_snapshot_info *pInfo){
  SnCursor *pCur = (SnCursor*)pCtx;
  SnRow *p;
  char *z;
  if( (sqlite3_int64)pInfo->id > pCur->iMax ) return 0;
  if( pCur->nRow==pCur->nAlloc ){
    int nNew = pCur->nAlloc ? 2*pCur->nAlloc : 16;
    SnRow *aNew = sqlite3_realloc64(pCur->aRow, sizeof(SnRow)*(size_t)nNew);
    if( aNew==0 ){ pCur->rc = SQLITE_NOMEM; return 1; }
    pCur->aRow = aNew;
    pCur->nAlloc = nNew;
  }
  p = &pCur->aRow[pCur->nRow];
  memset(p, 0, sizeof(*p));
  p->iId = (sqlite3_int64)pInfo->id;
  p->iMicros = pInfo->ts_micros;
  p->iChunk = pInfo->chunk;
  p->nFiles = (sqlite3_int64)pInfo->total_files;
  p->zOp = sqlite3_mprintf("%s", pInfo->operation ? pInfo->operation : "");
  p->zRun = pInfo->run_id ? sqlite3_mprintf("%s", pInfo->run_id) : 0;
  if( p->zOp==0 || (pInfo->run_id && p->zRun==0) ){
    sqlite3_free(p->zOp);
    sqlite3_free(p->zRun);
    pCur->rc = SQLITE_NOMEM;
    return 1;
  }
  for(z=p->zOp; *z; z++) if( *z=='-' ) *z = '_';   /* "file-chunk" -> SPEC's */
  pCur->nRow++;
  if( pCur->bBytes ){
    fnt_snapshot *pSnap = 0;
    int frc = fnt_snapshot_at(pCur->pStore, pInfo->id, &pSnap);
    if( frc==FNT_OK ){
      p->nBytes = (sqlite3_int64)fnt_snapshot_bytes(pSnap);
    }else if( frc!=FNT_E_NOTFOUND ){           /* expired meanwhile: 0 */
      pCur->rc = frc;
      return 1;
    }
    fnt_snapshot_release(pSnap);
  }
  return 0;
}

static int snFilter(sqlite3_vtab_cursor *cur, int idxNum, const char *idxStr,
                    int argc, sqlite3_value **argv){
  SnCursor *pCur = (SnCursor*)cur;
  SnVtab *pTab = (SnVtab*)cur->pVtab;
  fnt_snapshot *pSnap = 0;
  fnt_snapshot_info info;
  char *zErr = 0;
  int rc, frc = FNT_OK;
  (void)idxStr;
  snReset(pCur);
  pCur->rc = SQLITE_OK;
  pCur->bBytes = (idxNum & SN_IDX_BYTES)!=0;
  rc = fntConnStatementSnapshot(pTab->pConn, &pSnap, &zErr);
  if( rc!=SQLITE_OK ){
    sqlite3_free(pTab->base.zErrMsg);
    pTab->base.zErrMsg = zErr;
    return rc;
  }
  fnt_snapshot_describe(pSnap, &info);
  pCur->iMax = (sqlite3_int64)info.id;
  pCur->pStore = pTab->pConn->pStore;
  if( (idxNum & SN_IDX_ID) && argc>0 ){
    fnt_snapshot *pAt = 0;
    sqlite3_int64 iId = -1;
    sqlite3_value *pDup = sqlite3_value_dup(argv[0]);   /* affinity on a copy */
    if( pDup==0 ) return SQLITE_NOMEM;
    if( sqlite3_value_numeric_type(pDup)==SQLITE_INTEGER ) iId = sqlite3_value_int64(pDup);
    sqlite3_value_free(pDup);
    if( iId<=0 || iId>pCur->iMax ) return SQLITE_OK;
    frc = fnt_snapshot_at(pCur->pStore, (uint64_t)iId, &pAt);
    if( frc==FNT_E_NOTFOUND ) return SQLITE_OK;          /* expired: no row */
    if( frc==FNT_OK ){
      fnt_snapshot_describe(pAt, &info);
      snAdd(pCur, &info);
      fnt_snapshot_release(pAt);
    }
  }else{
    frc = fnt_snapshot_list(pCur->pStore, snAdd, pCur);
  }
  if( frc==FNT_OK && pCur->rc<0 ) frc = pCur->rc;
  if( frc!=FNT_OK ){
    sqlite3_free(pTab->base.zErrMsg);
    pTab->base.zErrMsg = fntStoreError("fnt_snapshots", pCur->pStore, frc);
    return fntSqliteCode(frc);
  }
  return pCur->rc;
}

static int snNext(sqlite3_vtab_cursor *cur){
  ((SnCursor*)cur)->iRow++;
  return SQLITE_OK;
}

static int snEof(sqlite3_vtab_cursor *cur){
  SnCursor *pCur = (SnCursor*)cur;
  return pCur->iRow>=pCur->nRow;
}

static int snColumn(sqlite3_vtab_cursor *cur, sqlite3_context *ctx, int i){
  SnCursor *pCur = (SnCursor*)cur;
  const SnRow *p = &pCur->aRow[pCur->iRow];
  switch( i ){
    case SN_ID:        sqlite3_result_int64(ctx, p->iId); break;
    case SN_MICROS:    sqlite3_result_int64(ctx, p->iMicros); break;
    case SN_OPERATION: sqlite3_result_text(ctx, p->zOp, -1, SQLITE_TRANSIENT); break;
    case SN_RUN_ID:
      if( p->zRun ) sqlite3_result_text(ctx, p->zRun, -1, SQLITE_TRANSIENT);
      break;
    case SN_CHUNK:     if( p->iChunk>=0 ) sqlite3_result_int64(ctx, p->iChunk); break;
    case SN_FILES:     sqlite3_result_int64(ctx, p->nFiles); break;
    case SN_BYTES:     sqlite3_result_int64(ctx, p->nBytes); break;
  }
  return SQLITE_OK;
}

static int snRowid(sqlite3_vtab_cursor *cur, sqlite_int64 *pRowid){
  *pRowid = ((SnCursor*)cur)->aRow[((SnCursor*)cur)->iRow].iId;
  return SQLITE_OK;
}

static const sqlite3_module snModule = {
  .iVersion = 0,
  .xConnect = snConnect,
  .xBestIndex = snBestIndex,
  .xDisconnect = fntConnVtabDisconnect,
  .xOpen = snOpen,
  .xClose = snClose,
  .xFilter = snFilter,
  .xNext = snNext,
  .xEof = snEof,
  .xColumn = snColumn,
  .xRowid = snRowid,
};

/* fnt_snapshot() -> the id of the snapshot the running statement reads
** (pinned for the statement if it has read none yet). */
static void fntSnapshotFunc(sqlite3_context *ctx, int argc, sqlite3_value **argv){
  FntConn *p = (FntConn*)sqlite3_user_data(ctx);
  fnt_snapshot *pSnap = 0;
  fnt_snapshot_info info;
  char *zErr = 0;
  int rc = fntConnStatementSnapshot(p, &pSnap, &zErr);
  (void)argc; (void)argv;
  if( rc!=SQLITE_OK ){
    sqlite3_result_error(ctx, zErr ? zErr : "fnt_snapshot: failed", -1);
    sqlite3_result_error_code(ctx, rc);
    sqlite3_free(zErr);
    return;
  }
  fnt_snapshot_describe(pSnap, &info);
  sqlite3_result_int64(ctx, (sqlite3_int64)info.id);
}

int fntRegisterSnapshots(sqlite3 *db, FntConn *p){
  int rc = sqlite3_create_module(db, "fnt_snapshots", &snModule, p);
  if( rc==SQLITE_OK ){
    rc = sqlite3_create_function(db, "fnt_snapshot", 0, SQLITE_UTF8, p,
                                 fntSnapshotFunc, 0, 0);
  }
  return rc;
}
