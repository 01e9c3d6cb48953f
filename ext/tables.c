/*
** tables.c -- the eponymous virtual tables fn_trace_events, fn_trace_runs
** and fn_profile (SPEC §3), one module generic over the store's fnt_table,
** and fnt_last_scan().
**
**   SELECT thread, seq_no, t_ns, stable_id, kind, symbol FROM fn_trace_events
**    WHERE run_id = :run AND t_ns BETWEEN :from AND :to AND seq_no > :after
**    ORDER BY seq_no LIMIT :limit;
**   SELECT fnt_last_scan();   -- what that scan read: {"files_opened":1,...}
**
** Schemas come from the store (fnt_table_ncol, fnt_column_name,
** fnt_column_is_text), in SPEC order, e.g.
**   CREATE TABLE x("repo" TEXT NOT NULL, "commit" TEXT, "run_id" TEXT NOT
**     NULL, "thread" INTEGER, "seq_no" INTEGER, "t_ns" INTEGER,
**     "stable_id" TEXT, "kind" TEXT, "symbol" TEXT NOT NULL)
**
** The tables are read-only (filing goes through fnt_file_chunk() and
** fnt_file_profile(), which commit whole chunks atomically).  Every cursor
** pins the connection's shared snapshot (fntConnPin), so one statement reads
** one snapshot however many cursors it opens.  Constraints the store can
** apply are pushed into fnt_predicate: see the plan comment above
** fntBestIndex().
*/
#include <assert.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "fntrace_int.h"

/* The columns a plan can constrain, whatever table they are in. */
enum {
  FNT_F_RUN_ID, FNT_F_REPO, FNT_F_T_NS, FNT_F_SEQ_NO, FNT_F_THREAD,
  FNT_F_KIND, FNT_F_STABLE_ID, FNT_F_CHUNK,
  FNT_F_CALL_ID, FNT_F_PARENT_ID, FNT_F_DEPTH, FNT_F_KEY, FNT_F_DUR_NS,
  FNT_F_START_NS, FNT_F_END_NS, FNT_NFIELD
};
static const char *const azField[FNT_NFIELD] = {
  "run_id", "repo", "t_ns", "seq_no", "thread", "kind", "stable_id", "chunk",
  "call_id", "parent_id", "depth", "key", "dur_ns", "start_ns", "end_ns"
};
/* Which tables the store filters by each field (fnt_predicate's and
** fnt_call_predicate's comments): bit t set for fnt_table t. */
static const unsigned aFieldTables[FNT_NFIELD] = {
  1|2|4|8, 7, 1, 1, 1|8, 1, 1|4, 2, 8, 8, 8, 8, 8, 8, 8
};
/* The operators pushed per field (SQLITE_INDEX_CONSTRAINT_* are bits).
** Calls push the overlap form only: start_ns <= :t1 AND end_ns >= :t0,
** and dur_ns >= x. */
#define OPS_EQ  SQLITE_INDEX_CONSTRAINT_EQ
#define OPS_LE  (SQLITE_INDEX_CONSTRAINT_LE|SQLITE_INDEX_CONSTRAINT_LT)
#define OPS_GE  (SQLITE_INDEX_CONSTRAINT_GE|SQLITE_INDEX_CONSTRAINT_GT)
#define OPS_ALL (OPS_EQ|OPS_LE|OPS_GE)
static const unsigned aFieldOps[FNT_NFIELD] = {
  OPS_EQ, OPS_EQ, OPS_ALL, OPS_ALL, OPS_EQ, OPS_EQ, OPS_EQ, OPS_EQ,
  OPS_EQ, OPS_EQ, OPS_ALL, OPS_EQ, OPS_GE, OPS_LE, OPS_GE
};

/* Per connection: shared by the three modules and fnt_last_scan(); freed
** when the last of them is destroyed. */
typedef struct FntTables FntTables;
typedef struct FntModAux { FntTables *pT; fnt_table eTab; } FntModAux;
struct FntTables {
  FntConn *pConn;
  int nRef;
  FntModAux aAux[4];
  int bLastScan;                 /* lastScan holds a closed events scan */
  fnt_scan_stats lastScan;
};

typedef struct FntCursor FntCursor;

/* Answers xColumn for column i of the cursor's current row. */
typedef void (*FntColReader)(FntCursor*, sqlite3_context*, int);

typedef struct FntVtab {
  sqlite3_vtab base;
  FntTables *pT;
  fnt_table eTab;
  int nCol;
  int aCol[FNT_NFIELD];          /* column of each field, -1 if none here */
  FntColReader axCol[65];        /* each column's reader (and snapshot_id's),
                                 ** chosen at connect: xColumn's one branch */
} FntVtab;

struct FntCursor {
  sqlite3_vtab_cursor base;
  FntCurSnap cs;                 /* the snapshot it reads */
  fnt_scan *pScan;               /* NULL: no rows (empty plan) */
  fnt_calls *pCalls;             /* fn_trace_calls: its scan instead */
  const fnt_call *pCall;         /* ...and its current row */
  int bEof;
  int bRow;                      /* events: row holds the current row */
  fnt_event_row row;
};

static void fntColumnsChoose(FntVtab *pTab);

static const char *fntFiler(fnt_table eTab){
  switch( eTab ){
    case FNT_TABLE_EVENTS:  return "file events with fnt_file_chunk()";
    case FNT_TABLE_RUNS:    return "file run chunks with fnt_file_chunk()";
    case FNT_TABLE_CALLS:   return "calls are derived from the events filed "
                                   "with fnt_file_chunk()";
    default:                return "file profiles with fnt_file_profile()";
  }
}

static void fntTablesUnref(FntTables *pT){
  if( pT && --pT->nRef==0 ) sqlite3_free(pT);
}
static void fntModAuxFree(void *p){ fntTablesUnref(((FntModAux*)p)->pT); }
static void fntTablesFree(void *p){ fntTablesUnref((FntTables*)p); }

/* ---------------------------------------------------------------------- */

static int fntConnect(sqlite3 *db, void *pAux, int argc,
                      const char *const *argv, sqlite3_vtab **ppVtab,
                      char **pzErr){
  FntModAux *pA = (FntModAux*)pAux;
  FntVtab *pTab;
  sqlite3_str *pSql;
  char *zSql;
  int i, f, rc;
  int nCol = fnt_table_ncol(pA->eTab);
  (void)argc; (void)argv;

  /* Only repo, run_id and symbol are NOT NULL in SPEC §3; the declared
  ** types give SQLite the affinities that the differential test checks. */
  pSql = sqlite3_str_new(db);
  sqlite3_str_appendall(pSql, "CREATE TABLE x(");
  for(i=0; i<nCol; i++){
    const char *zCol = fnt_column_name(pA->eTab, i);
    sqlite3_str_appendf(pSql, "%s\"%w\" %s%s", i ? ", " : "", zCol,
        fnt_column_is_text(pA->eTab, i) ? "TEXT" : "INTEGER",
        (strcmp(zCol,"repo")==0 || strcmp(zCol,"run_id")==0
          || strcmp(zCol,"symbol")==0) ? " NOT NULL" : "");
  }
  /* SPEC §10: WHERE snapshot_id = :s reads snapshot :s. */
  sqlite3_str_appendall(pSql, ", snapshot_id INTEGER HIDDEN)");
  zSql = sqlite3_str_finish(pSql);
  if( zSql==0 ) return SQLITE_NOMEM;
  rc = sqlite3_declare_vtab(db, zSql);
  sqlite3_free(zSql);
  if( rc!=SQLITE_OK ){
    *pzErr = sqlite3_mprintf("%s: %s", fnt_table_name(pA->eTab),
                             sqlite3_errmsg(db));
    return rc;
  }
  pTab = sqlite3_malloc(sizeof(*pTab));
  if( pTab==0 ) return SQLITE_NOMEM;
  memset(pTab, 0, sizeof(*pTab));
  pTab->pT = pA->pT;
  pTab->eTab = pA->eTab;
  pTab->nCol = nCol;
  fntColumnsChoose(pTab);
  for(f=0; f<FNT_NFIELD; f++){
    pTab->aCol[f] = -1;
    if( (aFieldTables[f] & (1u<<pA->eTab))==0 ) continue;
    for(i=0; i<nCol; i++){
      if( strcmp(fnt_column_name(pA->eTab, i), azField[f])==0 ){
        pTab->aCol[f] = i;
      }
    }
  }
  *ppVtab = &pTab->base;
  return SQLITE_OK;
}

static int fntDisconnect(sqlite3_vtab *pVtab){
  sqlite3_free(pVtab);
  return SQLITE_OK;
}

/*
** The plan.  xBestIndex describes it to xFilter in two parts:
**
** idxStr: space-separated tokens, one per value in argv, in argv order:
**   "<field><op>"  argv[i] is the right-hand side of one constraint,
**                  <field> one of azField, <op> one of = < <= > >= or =IN
**                  ("=IN": an IN list received whole, sqlite3_vtab_in());
**   "limit"        argv[i] is the LIMIT;
**   "offset"       argv[i] is the OFFSET;
**   "snapshot="    argv[i] is the snapshot_id to read (time travel);
** then tokens that take no value:
**   "order"        ORDER BY seq_no consumed (one run, in seq_no order);
**   "plan=<n>"     the plan's number (fntConnPlan), which tells the
**                  cursors of a statement from those of a later statement;
**   "cols=<hex>"   colUsed, the columns to decode (always last).
** Several constraints on one field fold into one store predicate (ranges
** intersect, = values must agree, IN lists intersect).
**
** idxNum: bit flags, the same facts in a form cheaper to test:
**   FNT_IDX_FIELD(f)   a constraint on field f (bits 0..14)
**   FNT_IDX_ORDERED    ORDER BY seq_no (calls: start_ns) consumed
**   FNT_IDX_LIMIT      LIMIT in argv: passed (plus OFFSET) as .limit
**   FNT_IDX_OFFSET     OFFSET in argv
**   FNT_IDX_OMIT_OFFSET  OFFSET omitted: the cursor skips the OFFSET rows
**                      itself (only when every constraint is omitted too,
**                      else SQLite would filter after the skip)
**
** Exactness.  Values reach xFilter untyped, so each is compared as SQLite
** compares it with a column of the declared type:
**   INTEGER columns (t_ns, seq_no, thread, chunk): numeric affinity is
**   applied to the value (sqlite3_value_numeric_type), then a REAL bounds
**   the integers exactly (col > 2.5 is col >= 3), NULL matches nothing and
**   a non-numeric TEXT or BLOB sorts above every integer.  Exact, so these
**   constraints are omitted (SQLite does not re-check them).
**   TEXT columns (run_id, repo, kind, stable_id): a TEXT value matches
**   itself (BINARY collation only: another collation is not pushed), NULL
**   and BLOB match nothing.  An INTEGER or REAL is not pushed: it equals
**   '7' when the right-hand side has no affinity (a literal, a parameter)
**   but also '07' when it has a numeric one (a join on an INTEGER column),
**   and only SQLite knows which; the scan then leaves that column open and
**   drops the store LIMIT.  Omitted only when sqlite3_vtab_rhs_value()
**   shows a TEXT or NULL literal; otherwise SQLite re-checks the rows.
**   Except run_id (FNT_IDX_RUN_TEXT): when no run_id of the newest
**   snapshot looks like a number (fnt_run_id_looks_numeric), no number
**   equals any of them under either affinity, so "run_id = ?" is omitted
**   and a number matches nothing.  Should the statement's snapshot hold
**   a numeric-looking run_id by the time a number arrives (filed after
**   the statement was prepared), xFilter fails asking for a new prepare
**   rather than answer what it cannot know.
**   (One inexact corner remains: ORDER BY seq_no consumed for a run_id
**   compared with a numeric expression that two run_ids equal, '7' and
**   '07', yields each run in order but the two runs one after the other.)
** LIMIT is consumed only when every constraint offered is consumed and the
** ORDER BY (if any) is too, so that the store's first rows are SQLite's.
*/
#define FNT_IDX_FIELD(f)     (1<<(f))
#define FNT_IDX_ORDERED      0x10000
#define FNT_IDX_LIMIT        0x20000
#define FNT_IDX_OFFSET       0x40000
#define FNT_IDX_OMIT_OFFSET  0x80000
#define FNT_IDX_SNAPSHOT     0x100000
#define FNT_IDX_RUN_TEXT     0x200000

static int fntIsIntField(int f){
  return f!=FNT_F_RUN_ID && f!=FNT_F_REPO && f!=FNT_F_KIND
      && f!=FNT_F_STABLE_ID && f!=FNT_F_KEY;
}

static const char *fntOpName(int op){
  switch( op ){
    case SQLITE_INDEX_CONSTRAINT_EQ: return "=";
    case SQLITE_INDEX_CONSTRAINT_LT: return "<";
    case SQLITE_INDEX_CONSTRAINT_LE: return "<=";
    case SQLITE_INDEX_CONSTRAINT_GT: return ">";
    case SQLITE_INDEX_CONSTRAINT_GE: return ">=";
    default: return 0;
  }
}

/* 1 when the newest snapshot's run ids are all text that no number equals
** (FNT_IDX_RUN_TEXT); 0 when some look numeric or the store cannot say. */
static int fntRunIdsTextOnly(FntConn *pConn){
  fnt_store *pStore = 0;
  fnt_snapshot *pSnap = 0;
  char *zErr = 0;
  int bText = 0;
  if( fntConnStore(pConn, 0, &pStore, &zErr)==SQLITE_OK
   && fnt_snapshot_current(pStore, &pSnap)==FNT_OK ){
    bText = !fnt_snapshot_numeric_run_ids(pSnap);
    fnt_snapshot_release(pSnap);
  }
  sqlite3_free(zErr);
  return bText;
}

/* Chooses the plan: idxNum, idxStr and argv as the plan comment above says;
** fntFilter() reads them back. */
static int fntBestIndex(sqlite3_vtab *pVtab, sqlite3_index_info *pInfo){
  FntVtab *pTab = (FntVtab*)pVtab;
  sqlite3_str *pStr = sqlite3_str_new(0);
  int idxNum = 0;
  int nArg = 0;
  int nOffered = 0, nUsed = 0, nKept = 0;  /* constraints: offered, used,
                                           ** used but left to SQLite */
  int iLimit = -1, iOffset = -1;
  int bSnapUnusable = 0;
  int bOneRun = 0;
  int nRunIn = 0;
  double nRow;
  int i, f;
  char *z;

  switch( pTab->eTab ){
    case FNT_TABLE_EVENTS: nRow = 1e8; break;
    case FNT_TABLE_RUNS:   nRow = 1e4; break;
    case FNT_TABLE_CALLS:  nRow = 5e7; break;
    default:               nRow = 1e5; break;
  }

  for(i=0; i<pInfo->nConstraint; i++){
    const struct sqlite3_index_constraint *pC = &pInfo->aConstraint[i];
    const char *zOp = fntOpName(pC->op);
    int bIn = 0, bOmit = 1;
    if( pC->op==SQLITE_INDEX_CONSTRAINT_LIMIT ){
      if( pC->usable ) iLimit = i;
      continue;
    }
    if( pC->op==SQLITE_INDEX_CONSTRAINT_OFFSET ){
      if( pC->usable ) iOffset = i;
      continue;
    }
    nOffered++;
    if( pC->iColumn==pTab->nCol && pC->op==SQLITE_INDEX_CONSTRAINT_EQ ){
      /* snapshot_id = :s must reach xFilter: SQLite filtering the rows of
      ** the statement's snapshot by their snapshot_id would find none. */
      if( !pC->usable || (idxNum & FNT_IDX_SNAPSHOT) ){
        bSnapUnusable |= !pC->usable;
        continue;
      }
      pInfo->aConstraintUsage[i].argvIndex = ++nArg;
      pInfo->aConstraintUsage[i].omit = 1;
      nUsed++;
      idxNum |= FNT_IDX_SNAPSHOT;
      sqlite3_str_appendf(pStr, "%ssnapshot=", nArg>1 ? " " : "");
      continue;
    }
    if( !pC->usable || zOp==0 ) continue;
    for(f=0; f<FNT_NFIELD; f++){
      if( pTab->aCol[f]==pC->iColumn && pC->iColumn>=0 ) break;
    }
    if( f==FNT_NFIELD ) continue;
    if( (aFieldOps[f] & (unsigned)pC->op)==0 ) continue;
    if( !fntIsIntField(f) ){
      sqlite3_value *pRhs = 0;
      const char *zColl = sqlite3_vtab_collation(pInfo, i);
      if( zColl && sqlite3_stricmp(zColl, "BINARY")!=0 ) continue;
      if( (f==FNT_F_RUN_ID || f==FNT_F_REPO) && sqlite3_vtab_in(pInfo, i, -1) ){
        sqlite3_vtab_in(pInfo, i, 1);
        bIn = 1;
      }
      bOmit = 0;
      if( !bIn && sqlite3_vtab_rhs_value(pInfo, i, &pRhs)==SQLITE_OK ){
        int t = sqlite3_value_type(pRhs);
        bOmit = (t==SQLITE_TEXT || t==SQLITE_NULL);
      }else if( f==FNT_F_RUN_ID && fntRunIdsTextOnly(pTab->pT->pConn) ){
        bOmit = 1;
        idxNum |= FNT_IDX_RUN_TEXT;
      }
    }
    /* An IN list on an INTEGER column is left to SQLite's one-value-at-a-
    ** time processing: each xFilter then sees a plain "=". */
    pInfo->aConstraintUsage[i].argvIndex = ++nArg;
    pInfo->aConstraintUsage[i].omit = (unsigned char)bOmit;
    nUsed++;
    if( !bOmit ) nKept++;
    idxNum |= FNT_IDX_FIELD(f);
    sqlite3_str_appendf(pStr, "%s%s%s%s", nArg>1 ? " " : "", azField[f], zOp,
                        bIn ? "IN" : "");
    if( f==FNT_F_RUN_ID ){
      if( bIn ) nRunIn++; else bOneRun = 1;
    }
    switch( f ){
      case FNT_F_RUN_ID:     /* one run: its events, chunks or functions */
        if( !bIn ) nRow /= (pTab->eTab==FNT_TABLE_RUNS ? 2500 : 100);
        break;
      case FNT_F_REPO:      nRow /= 10; break;
      case FNT_F_T_NS:
      case FNT_F_SEQ_NO:    nRow /= (pC->op==SQLITE_INDEX_CONSTRAINT_EQ ? 1e6 : 30);
                            break;
      case FNT_F_THREAD:    nRow /= 4; break;
      case FNT_F_KIND:      nRow /= 2; break;
      case FNT_F_STABLE_ID: nRow /= 1000; break;
      case FNT_F_CHUNK:     nRow /= 10; break;
      case FNT_F_CALL_ID:   nRow /= 1e6; break;
      case FNT_F_PARENT_ID: nRow /= 1e5; break;
      case FNT_F_DEPTH:     nRow /= (pC->op==SQLITE_INDEX_CONSTRAINT_EQ ? 20 : 3); break;
      case FNT_F_KEY:       nRow /= 1000; break;
      case FNT_F_DUR_NS:    nRow /= 10; break;
      case FNT_F_START_NS:
      case FNT_F_END_NS:    nRow /= 30; break;
    }
  }
  if( nRunIn && !bOneRun ){
    /* an IN list of runs: say ten of them */
    nRow /= (pTab->eTab==FNT_TABLE_RUNS ? 250 : 10);
  }

  /* ORDER BY seq_no: the store orders one run's events; ORDER BY start_ns
  ** one run's calls. */
  if( bOneRun && pInfo->nOrderBy==1 && !pInfo->aOrderBy[0].desc
   && ((pTab->eTab==FNT_TABLE_EVENTS
        && pInfo->aOrderBy[0].iColumn==pTab->aCol[FNT_F_SEQ_NO])
    || (pTab->eTab==FNT_TABLE_CALLS
        && pInfo->aOrderBy[0].iColumn==pTab->aCol[FNT_F_START_NS])) ){
    pInfo->orderByConsumed = 1;
    idxNum |= FNT_IDX_ORDERED;
  }

  /* LIMIT/OFFSET: only when the store's rows are exactly SQLite's rows. */
  if( iLimit>=0 && nUsed==nOffered
   && (pInfo->nOrderBy==0 || pInfo->orderByConsumed) ){
    sqlite3_value *pVal = 0;
    pInfo->aConstraintUsage[iLimit].argvIndex = ++nArg;
    pInfo->aConstraintUsage[iLimit].omit = 1;
    idxNum |= FNT_IDX_LIMIT;
    sqlite3_str_appendf(pStr, "%slimit", nArg>1 ? " " : "");
    if( sqlite3_vtab_rhs_value(pInfo, iLimit, &pVal)==SQLITE_OK
     && sqlite3_value_type(pVal)==SQLITE_INTEGER
     && sqlite3_value_int64(pVal)>=0 && sqlite3_value_int64(pVal)<nRow ){
      nRow = (double)sqlite3_value_int64(pVal);
    }
    if( iOffset>=0 ){
      pInfo->aConstraintUsage[iOffset].argvIndex = ++nArg;
      idxNum |= FNT_IDX_OFFSET;
      sqlite3_str_appendall(pStr, " offset");
      if( nKept==0 ){
        pInfo->aConstraintUsage[iOffset].omit = 1;
        idxNum |= FNT_IDX_OMIT_OFFSET;
      }
    }
  }
  if( idxNum & FNT_IDX_ORDERED ) sqlite3_str_appendf(pStr, "%sorder",
                                                     nArg ? " " : "");
  sqlite3_str_appendf(pStr, "%splan=%lld cols=%llx",
                      (nArg || (idxNum & FNT_IDX_ORDERED)) ? " " : "",
                      fntConnPlan(pTab->pT->pConn),
                      (unsigned long long)pInfo->colUsed);
  z = sqlite3_str_finish(pStr);
  if( z==0 ) return SQLITE_NOMEM;
  if( nRow < 1 ) nRow = 1;
  pInfo->idxNum = idxNum;
  pInfo->idxStr = z;
  pInfo->needToFreeIdxStr = 1;
  pInfo->estimatedRows = (sqlite3_int64)nRow;
  /* A few row groups are opened whatever the rows: a fixed start-up cost. */
  pInfo->estimatedCost = 100.0 + nRow;
  if( bSnapUnusable && !(idxNum & FNT_IDX_SNAPSHOT) ){
    pInfo->estimatedCost *= 1e6;   /* a plan that can pass snapshot_id wins */
  }
  return SQLITE_OK;
}

/* ----------------------------------------------------------------------
** Folding constraint values into a predicate (see "Exactness" above).
*/
typedef struct FntTextSet {
  int bSet;                      /* constrained: az[] is the allowed set */
  int n;
  char **az;                     /* sqlite3_malloc'd strings */
} FntTextSet;

typedef struct FntFold {
  int bEmpty;                    /* no row can match */
  int bOpen;                     /* a constraint was left to SQLite alone */
  int bRunNumber;                /* FNT_IDX_RUN_TEXT and a number given */
  FntTextSet aText[FNT_NFIELD];  /* used for run_id, repo, kind, stable_id */
  sqlite3_int64 aLo[FNT_NFIELD], aHi[FNT_NFIELD];  /* INTEGER fields */
  sqlite3_int64 nLimit;          /* < 0: none */
  sqlite3_int64 nOffset;
  sqlite3_int64 iPlan;           /* the plan's number, -1 when unknown */
  sqlite3_int64 iSnapLo, iSnapHi;/* snapshot_id = : lo==hi, or lo>hi: none */
} FntFold;

static void fntFoldInit(FntFold *p){
  int f;
  memset(p, 0, sizeof(*p));
  for(f=0; f<FNT_NFIELD; f++){
    p->aLo[f] = INT64_MIN;
    p->aHi[f] = INT64_MAX;
  }
  p->nLimit = -1;
  p->iPlan = -1;
  p->iSnapLo = INT64_MIN;
  p->iSnapHi = INT64_MAX;
}

static void fntTextSetClear(FntTextSet *s){
  int i;
  for(i=0; i<s->n; i++) sqlite3_free(s->az[i]);
  sqlite3_free(s->az);
  memset(s, 0, sizeof(*s));
}

static void fntFoldClear(FntFold *p){
  int f;
  for(f=0; f<FNT_NFIELD; f++) fntTextSetClear(&p->aText[f]);
}

static int fntCmpStr(const void *a, const void *b){
  return strcmp(*(char*const*)a, *(char*const*)b);
}

/* Sorts and dedups s (so that the store reads no run twice). */
static void fntTextSetNormalize(FntTextSet *s){
  int i, j;
  if( s->n<2 ) return;
  qsort(s->az, (size_t)s->n, sizeof(char*), fntCmpStr);
  for(i=1, j=1; i<s->n; i++){
    if( strcmp(s->az[i], s->az[j-1])==0 ){
      sqlite3_free(s->az[i]);
    }else{
      s->az[j++] = s->az[i];
    }
  }
  s->n = j;
}

/* Intersects *pDst (when set) with pNew (normalized); pNew is consumed. */
static void fntTextSetMerge(FntTextSet *pDst, FntTextSet *pNew){
  int i, j;
  fntTextSetNormalize(pNew);
  if( !pDst->bSet ){
    *pDst = *pNew;
    pDst->bSet = 1;
    memset(pNew, 0, sizeof(*pNew));
    return;
  }
  for(i=0, j=0; i<pDst->n; i++){
    if( pNew->n>0 && bsearch(&pDst->az[i], pNew->az, (size_t)pNew->n, sizeof(char*),
                fntCmpStr) ){
      pDst->az[j++] = pDst->az[i];
    }else{
      sqlite3_free(pDst->az[i]);
    }
  }
  pDst->n = j;
  fntTextSetClear(pNew);
}

/* Appends to s the stored string that a TEXT value pVal equals.  Sets
** *pbOpen when pVal is an INTEGER or REAL, which narrows nothing here: what
** it equals depends on the affinity of the expression it came from, which
** only SQLite knows (see "Exactness").  NULL and BLOB equal no text.
** SQLITE_NOMEM or SQLITE_OK. */
static int fntTextSetAdd(FntTextSet *s, sqlite3_value *pVal, int *pbOpen){
  int t = sqlite3_value_type(pVal);
  const unsigned char *z;
  char *zCopy;
  int n;
  if( t==SQLITE_INTEGER || t==SQLITE_FLOAT ){
    *pbOpen = 1;
    return SQLITE_OK;
  }
  if( t!=SQLITE_TEXT ) return SQLITE_OK;      /* no match */
  z = sqlite3_value_text(pVal);
  n = sqlite3_value_bytes(pVal);
  if( z==0 ) return SQLITE_NOMEM;
  /* A value with an embedded NUL equals no NUL-terminated stored string. */
  if( (int)strlen((const char*)z)!=n ) return SQLITE_OK;
  zCopy = sqlite3_mprintf("%s", z);
  if( zCopy==0 ) return SQLITE_NOMEM;
  if( (s->n & (s->n-1))==0 ){
    char **aNew = sqlite3_realloc64(s->az, sizeof(char*)*(s->n ? 2*s->n : 1));
    if( aNew==0 ){
      sqlite3_free(zCopy);
      return SQLITE_NOMEM;
    }
    s->az = aNew;
  }
  s->az[s->n++] = zCopy;
  return SQLITE_OK;
}

/* Folds "col <op> pVal" for an INTEGER column into [*pLo, *pHi], exactly as
** SQLite compares: see "Exactness".  SQLITE_OK or SQLITE_NOMEM. */
static int fntFoldInt(sqlite3_value *pVal, int op,
                      sqlite3_int64 *pLo, sqlite3_int64 *pHi){
  sqlite3_value *pDup = 0;
  sqlite3_int64 lo = INT64_MIN, hi = INT64_MAX;
  int bNone = 0;                   /* no integer satisfies it */
  int t = sqlite3_value_type(pVal);
  if( t==SQLITE_TEXT ){
    /* Numeric affinity is applied to a copy: the caller's register keeps
    ** its text for SQLite's own use. */
    pDup = sqlite3_value_dup(pVal);
    if( pDup==0 ) return SQLITE_NOMEM;
    pVal = pDup;
    t = sqlite3_value_numeric_type(pVal);
  }
  if( t==SQLITE_NULL ){
    bNone = 1;
  }else if( t==SQLITE_INTEGER ){
    sqlite3_int64 v = sqlite3_value_int64(pVal);
    switch( op ){
      case SQLITE_INDEX_CONSTRAINT_EQ: lo = hi = v; break;
      case SQLITE_INDEX_CONSTRAINT_GE: lo = v; break;
      case SQLITE_INDEX_CONSTRAINT_LE: hi = v; break;
      case SQLITE_INDEX_CONSTRAINT_GT:
        if( v==INT64_MAX ) bNone = 1; else lo = v+1;
        break;
      case SQLITE_INDEX_CONSTRAINT_LT:
        if( v==INT64_MIN ) bNone = 1; else hi = v-1;
        break;
    }
  }else if( t==SQLITE_FLOAT ){
    /* SQLite compares an integer with a real exactly (not through double),
    ** so the bounds are the integers on the right side of r. */
    double r = sqlite3_value_double(pVal);
    const double two63 = 9223372036854775808.0;
    double fl = floor(r), ce = ceil(r);
    int bHigh = !(r < two63);          /* above every int64 */
    int bLow = r < -two63;             /* below every int64 */
    switch( op ){
      case SQLITE_INDEX_CONSTRAINT_EQ:
        if( bHigh || bLow || fl!=r ) bNone = 1;
        else lo = hi = (sqlite3_int64)r;
        break;
      case SQLITE_INDEX_CONSTRAINT_GE:          /* col >= ceil(r) */
        if( bHigh ) bNone = 1;
        else if( !bLow ) lo = (sqlite3_int64)ce;
        break;
      case SQLITE_INDEX_CONSTRAINT_GT:          /* col >= floor(r)+1 */
        if( bHigh ) bNone = 1;
        else if( !bLow ){
          sqlite3_int64 v = (sqlite3_int64)fl;
          if( v==INT64_MAX ) bNone = 1; else lo = v+1;
        }
        break;
      case SQLITE_INDEX_CONSTRAINT_LE:          /* col <= floor(r) */
        if( bLow ) bNone = 1;
        else if( !bHigh ) hi = (sqlite3_int64)fl;
        break;
      case SQLITE_INDEX_CONSTRAINT_LT:          /* col <= ceil(r)-1 */
        if( bLow ) bNone = 1;
        else if( !bHigh ){
          sqlite3_int64 v = (sqlite3_int64)ce;
          if( v==INT64_MIN ) bNone = 1; else hi = v-1;
        }
        break;
    }
  }else{
    /* TEXT that is not a number, or a BLOB: above every integer. */
    if( op!=SQLITE_INDEX_CONSTRAINT_LT && op!=SQLITE_INDEX_CONSTRAINT_LE ){
      bNone = 1;
    }
  }
  sqlite3_value_free(pDup);
  if( bNone ){
    *pLo = 1; *pHi = 0;
  }else{
    if( lo>*pLo ) *pLo = lo;
    if( hi<*pHi ) *pHi = hi;
  }
  return SQLITE_OK;
}

/* Parses one idxStr token ("t_ns>=") into field and op.  0 on success. */
static int fntParseToken(const char *z, int n, int *pF, int *pOp, int *pbIn){
  static const struct { const char *z; int op; int bIn; } aOp[] = {
    { "=IN", SQLITE_INDEX_CONSTRAINT_EQ, 1 },
    { "=",   SQLITE_INDEX_CONSTRAINT_EQ, 0 },
    { "<=",  SQLITE_INDEX_CONSTRAINT_LE, 0 },
    { "<",   SQLITE_INDEX_CONSTRAINT_LT, 0 },
    { ">=",  SQLITE_INDEX_CONSTRAINT_GE, 0 },
    { ">",   SQLITE_INDEX_CONSTRAINT_GT, 0 },
  };
  int f;
  size_t k;
  for(f=0; f<FNT_NFIELD; f++){
    int nF = (int)strlen(azField[f]);
    if( n<=nF || memcmp(z, azField[f], (size_t)nF)!=0 ) continue;
    for(k=0; k<sizeof(aOp)/sizeof(aOp[0]); k++){
      if( (int)strlen(aOp[k].z)==n-nF && memcmp(z+nF, aOp[k].z, (size_t)(n-nF))==0 ){
        *pF = f; *pOp = aOp[k].op; *pbIn = aOp[k].bIn;
        return 0;
      }
    }
  }
  return 1;
}

/* Folds argv into p, walking idxStr (plan comment) with idxNum's flags.
** *pColumns gets the cols= mask.  SQLITE_OK, SQLITE_NOMEM, or SQLITE_ERROR
** for a plan this code did not write. */
static int fntFoldArgs(FntFold *p, int idxNum, const char *zPlan, int argc,
                       sqlite3_value **argv, sqlite3_uint64 *pColumns){
  int iArg = 0;
  const char *z = zPlan ? zPlan : "";
  *pColumns = ~(sqlite3_uint64)0;
  while( *z ){
    int n = 0, f, op, bIn, rc = SQLITE_OK;
    while( z[n] && z[n]!=' ' ) n++;
    if( n==5 && memcmp(z, "limit", 5)==0 ){
      if( iArg>=argc ) return SQLITE_ERROR;
      p->nLimit = sqlite3_value_int64(argv[iArg++]);
    }else if( n==6 && memcmp(z, "offset", 6)==0 ){
      if( iArg>=argc ) return SQLITE_ERROR;
      p->nOffset = sqlite3_value_int64(argv[iArg++]);
      if( p->nOffset<0 ) p->nOffset = 0;
    }else if( n==5 && memcmp(z, "order", 5)==0 ){
      /* idxNum carries it */
    }else if( n>5 && memcmp(z, "cols=", 5)==0 ){
      *pColumns = strtoull(z+5, 0, 16);
    }else if( n>5 && memcmp(z, "plan=", 5)==0 ){
      p->iPlan = strtoll(z+5, 0, 10);
    }else if( n==9 && memcmp(z, "snapshot=", 9)==0 ){
      if( iArg>=argc ) return SQLITE_ERROR;
      rc = fntFoldInt(argv[iArg++], SQLITE_INDEX_CONSTRAINT_EQ,
                      &p->iSnapLo, &p->iSnapHi);
      if( rc!=SQLITE_OK ) return rc;
    }else if( fntParseToken(z, n, &f, &op, &bIn)==0 ){
      sqlite3_value *pVal;
      if( iArg>=argc ) return SQLITE_ERROR;
      pVal = argv[iArg++];
      if( fntIsIntField(f) ){
        rc = fntFoldInt(pVal, op, &p->aLo[f], &p->aHi[f]);
        if( rc!=SQLITE_OK ) return rc;
      }else{
        FntTextSet s;
        int bOpen = 0;
        memset(&s, 0, sizeof(s));
        if( bIn ){
          sqlite3_value *pX = 0;
          int rc2;
          for(rc2=sqlite3_vtab_in_first(pVal, &pX);
              rc2==SQLITE_OK && pX && rc==SQLITE_OK;
              rc2=sqlite3_vtab_in_next(pVal, &pX)){
            rc = fntTextSetAdd(&s, pX, &bOpen);
          }
          if( rc==SQLITE_OK && rc2!=SQLITE_DONE && rc2!=SQLITE_OK ) rc = rc2;
        }else{
          rc = fntTextSetAdd(&s, pVal, &bOpen);
        }
        if( rc!=SQLITE_OK ){
          fntTextSetClear(&s);
          return rc;
        }
        if( bOpen && f==FNT_F_RUN_ID && (idxNum & FNT_IDX_RUN_TEXT) ){
          /* Omitted: the number matches no run (see "Exactness"). */
          p->bRunNumber = 1;
          fntTextSetMerge(&p->aText[f], &s);
        }else if( bOpen ){
          /* Not pushed: SQLite re-checks it (omit=0), so no store LIMIT. */
          fntTextSetClear(&s);
          p->bOpen = 1;
        }else{
          fntTextSetMerge(&p->aText[f], &s);
        }
      }
    }else{
      return SQLITE_ERROR;
    }
    z += n;
    while( *z==' ' ) z++;
  }
  return iArg==argc ? SQLITE_OK : SQLITE_ERROR;
}

/* ---------------------------------------------------------------------- */

/* Rowids.  SQLite's OR optimization runs one xFilter per OR branch and
** drops rows whose rowid it has already seen, so a rowid must name the same
** row in every scan of the statement, whatever the filter: the store's
** fnt_scan_rowid (the file's place in the snapshot, the row's in the file)
** is exactly that, since every cursor of a statement reads one snapshot. */
static int fntRowid(sqlite3_vtab_cursor *cur, sqlite_int64 *pRowid){
  FntCursor *pCur = (FntCursor*)cur;
  *pRowid = pCur->pCalls ? (sqlite3_int64)fnt_calls_rowid(pCur->pCalls)
          : pCur->pScan ? (sqlite3_int64)fnt_scan_rowid(pCur->pScan) : 0;
  return SQLITE_OK;
}

static int fntOpen(sqlite3_vtab *pVtab, sqlite3_vtab_cursor **ppCur){
  FntCursor *pCur = sqlite3_malloc(sizeof(*pCur));
  (void)pVtab;
  if( pCur==0 ) return SQLITE_NOMEM;
  memset(pCur, 0, sizeof(*pCur));
  pCur->bEof = 1;
  *ppCur = &pCur->base;
  return SQLITE_OK;
}

/* Ends the cursor's scan (remembering an events scan's counters for
** fnt_last_scan) and its pin. */
static void fntCursorReset(FntCursor *pCur){
  FntVtab *pTab = (FntVtab*)pCur->base.pVtab;
  if( pCur->pScan ){
    if( pTab->eTab==FNT_TABLE_EVENTS ){
      fnt_scan_stats_get(pCur->pScan, &pTab->pT->lastScan);
      pTab->pT->bLastScan = 1;
    }
    fnt_scan_close(pCur->pScan);
    pCur->pScan = 0;
  }
  if( pCur->pCalls ){
    fnt_calls_stats_get(pCur->pCalls, &pTab->pT->lastScan);
    pTab->pT->bLastScan = 1;
    fnt_calls_close(pCur->pCalls);
    pCur->pCalls = 0;
    pCur->pCall = 0;
  }
  fntCurSnapClose(pTab->pT->pConn, &pCur->cs);
  pCur->bEof = 1;
}

static int fntClose(sqlite3_vtab_cursor *cur){
  fntCursorReset((FntCursor*)cur);
  sqlite3_free(cur);
  return SQLITE_OK;
}

/* One step of the scan; sets bEof at the end.  Reports a store error. */
static int fntStep(FntCursor *pCur){
  FntVtab *pTab = (FntVtab*)pCur->base.pVtab;
  int rc = pCur->pCalls ? fnt_calls_next(pCur->pCalls, &pCur->pCall)
                        : fnt_scan_next(pCur->pScan);
  if( rc<0 ){
    pCur->bEof = 1;
    sqlite3_free(pTab->base.zErrMsg);
    pTab->base.zErrMsg = fntStoreError(fnt_table_name(pTab->eTab),
                                       pTab->pT->pConn->pStore, rc);
    return fntSqliteCode(rc);
  }
  pCur->bEof = (rc==0);
  pCur->bRow = 0;
  return SQLITE_OK;
}

static int fntNext(sqlite3_vtab_cursor *cur){
  return fntStep((FntCursor*)cur);
}

/* The store LIMIT of a fold (LIMIT + OFFSET), or -1 for none. */
static sqlite3_int64 fntFoldLimit(const FntFold *p, int idxNum){
  if( (idxNum & FNT_IDX_LIMIT) && p->nLimit>0 && !p->bOpen ){
    /* The store stops after LIMIT+OFFSET rows; the OFFSET ones are skipped
    ** by the cursor, or by SQLite when it kept the OFFSET. */
    return p->nLimit > INT64_MAX - p->nOffset ? -1 : p->nLimit + p->nOffset;
  }
  return -1;
}

/* fn_trace_calls: the fold as a fnt_call_predicate, and the scan's first
** row.  SQLITE_OK with no scan when nothing can match. */
static int fntFilterCalls(FntCursor *pCur, int idxNum, FntFold *p, char **pzErr){
  FntVtab *pTab = (FntVtab*)pCur->base.pVtab;
  FntConn *pConn = pTab->pT->pConn;
  fnt_call_predicate pred;
  sqlite3_int64 v;
  int frc;
  fnt_call_predicate_init(&pred);
  if( p->aText[FNT_F_RUN_ID].bSet ){
    pred.run_ids = (const char *const *)p->aText[FNT_F_RUN_ID].az;
    pred.n_run_ids = (size_t)p->aText[FNT_F_RUN_ID].n;
  }
  if( p->aText[FNT_F_KEY].bSet ){
    if( p->aText[FNT_F_KEY].n!=1 ) return SQLITE_OK;
    pred.key = p->aText[FNT_F_KEY].az[0];
  }
  /* "=" fields: lo==hi, or no row (several different values, or outside
  ** what the column holds). */
  if( idxNum & FNT_IDX_FIELD(FNT_F_THREAD) ){
    v = p->aLo[FNT_F_THREAD];
    if( v!=p->aHi[FNT_F_THREAD] || v<0 || v>(sqlite3_int64)UINT32_MAX ) return SQLITE_OK;
    pred.thread = v;
  }
  if( idxNum & FNT_IDX_FIELD(FNT_F_CALL_ID) ){
    v = p->aLo[FNT_F_CALL_ID];
    if( v!=p->aHi[FNT_F_CALL_ID] || v<0 ) return SQLITE_OK;
    pred.call_id = v;
  }
  if( idxNum & FNT_IDX_FIELD(FNT_F_PARENT_ID) ){
    v = p->aLo[FNT_F_PARENT_ID];
    if( v!=p->aHi[FNT_F_PARENT_ID] || v<0 ) return SQLITE_OK;
    pred.parent_id = v;
  }
  pred.depth_min = p->aLo[FNT_F_DEPTH]<0 ? 0 : p->aLo[FNT_F_DEPTH];
  pred.depth_max = p->aHi[FNT_F_DEPTH];
  if( pred.depth_min>pred.depth_max ) return SQLITE_OK;
  pred.dur_min = p->aLo[FNT_F_DUR_NS];
  pred.t1 = p->aHi[FNT_F_START_NS];
  pred.t0 = p->aLo[FNT_F_END_NS];
  pred.ordered = (idxNum & FNT_IDX_ORDERED)!=0;
  pred.limit = fntFoldLimit(p, idxNum);
  frc = fnt_calls_open(pCur->cs.pSnap, &pred, &pCur->pCalls);
  if( frc!=FNT_OK ){
    fnt_calls_close(pCur->pCalls);
    pCur->pCalls = 0;
    *pzErr = fntStoreError(fnt_table_name(pTab->eTab), pConn->pStore, frc);
    return fntSqliteCode(frc);
  }
  return fntStep(pCur);
}

/* Starts a scan: idxNum, idxStr and argv are those of the plan comment
** above fntBestIndex().  Pins the connection's snapshot first. */
static int fntFilter(sqlite3_vtab_cursor *cur, int idxNum, const char *idxStr,
                     int argc, sqlite3_value **argv){
  FntCursor *pCur = (FntCursor*)cur;
  FntVtab *pTab = (FntVtab*)cur->pVtab;
  FntConn *pConn = pTab->pT->pConn;
  FntFold fold;
  fnt_predicate pred;
  sqlite3_uint64 mCols;
  char *zErr = 0;
  int rc, frc, f;

  fntCursorReset(pCur);
  fntFoldInit(&fold);
  rc = fntFoldArgs(&fold, idxNum, idxStr, argc, argv, &mCols);
  if( rc!=SQLITE_OK ){
    if( rc==SQLITE_ERROR ){
      zErr = sqlite3_mprintf("%s: internal error: bad plan \"%s\" for %d "
                             "values", fnt_table_name(pTab->eTab),
                             idxStr ? idxStr : "", argc);
    }
    goto filter_out;
  }
  if( (idxNum & FNT_IDX_SNAPSHOT) && fold.iSnapLo>fold.iSnapHi ){
    zErr = sqlite3_mprintf("snapshot_id: not a snapshot id (an integer)");
    rc = SQLITE_ERROR;
    goto filter_out;
  }
  rc = fntCurSnapOpen(pConn, &pCur->cs, (idxNum & FNT_IDX_SNAPSHOT)!=0,
                      fold.iSnapLo, fold.iPlan, &zErr);
  if( rc!=SQLITE_OK ) goto filter_out;
  if( fold.bRunNumber && fnt_snapshot_numeric_run_ids(pCur->cs.pSnap) ){
    zErr = sqlite3_mprintf("%s: run_id compared with a number, and a run_id "
        "that reads as a number was filed after the statement was prepared: "
        "prepare it again", fnt_table_name(pTab->eTab));
    rc = SQLITE_ERROR;
    goto filter_out;
  }

  fnt_predicate_init(&pred);
  for(f=0; f<FNT_NFIELD; f++){
    FntTextSet *s = &fold.aText[f];
    if( fntIsIntField(f) ){
      if( fold.aLo[f]>fold.aHi[f] ) fold.bEmpty = 1;
    }else if( s->bSet && s->n==0 ){
      fold.bEmpty = 1;
    }
  }
  if( fold.nLimit==0 ) fold.bEmpty = 1;
  if( fold.bEmpty ) goto filter_out;
  if( pTab->eTab==FNT_TABLE_CALLS ){
    rc = fntFilterCalls(pCur, idxNum, &fold, &zErr);
    if( rc!=SQLITE_OK ) goto filter_out;
    goto filter_done;
  }

  if( fold.aText[FNT_F_RUN_ID].bSet ){
    pred.run_ids = (const char *const *)fold.aText[FNT_F_RUN_ID].az;
    pred.n_run_ids = (size_t)fold.aText[FNT_F_RUN_ID].n;
  }
  if( fold.aText[FNT_F_REPO].bSet ){
    pred.repos = (const char *const *)fold.aText[FNT_F_REPO].az;
    pred.n_repos = (size_t)fold.aText[FNT_F_REPO].n;
  }
  if( fold.aText[FNT_F_KIND].bSet ){
    /* one value folded: several different kinds match nothing */
    int k = fold.aText[FNT_F_KIND].n==1
              ? fnt_kind_from_name(fold.aText[FNT_F_KIND].az[0]) : -1;
    if( k<0 ) goto filter_out;
    pred.kind = k;
  }
  if( fold.aText[FNT_F_STABLE_ID].bSet ){
    if( fold.aText[FNT_F_STABLE_ID].n!=1 ) goto filter_out;
    pred.stable_id = fold.aText[FNT_F_STABLE_ID].az[0];
  }
  if( fold.aLo[FNT_F_T_NS]>pred.t_min ) pred.t_min = fold.aLo[FNT_F_T_NS];
  if( fold.aHi[FNT_F_T_NS]<pred.t_max ) pred.t_max = fold.aHi[FNT_F_T_NS];
  if( fold.aLo[FNT_F_SEQ_NO]>pred.seq_min ) pred.seq_min = fold.aLo[FNT_F_SEQ_NO];
  if( fold.aHi[FNT_F_SEQ_NO]<pred.seq_max ) pred.seq_max = fold.aHi[FNT_F_SEQ_NO];
  if( pred.t_min>pred.t_max || pred.seq_min>pred.seq_max ) goto filter_out;
  if( idxNum & FNT_IDX_FIELD(FNT_F_THREAD) ){
    /* "=" only: lo==hi; a thread outside 0..2^32-1 exists in no row */
    sqlite3_int64 v = fold.aLo[FNT_F_THREAD];
    if( v!=fold.aHi[FNT_F_THREAD] || v<0 || v>(sqlite3_int64)UINT32_MAX ){
      goto filter_out;
    }
    pred.thread = v;
  }
  if( idxNum & FNT_IDX_FIELD(FNT_F_CHUNK) ){
    sqlite3_int64 v = fold.aLo[FNT_F_CHUNK];
    if( v!=fold.aHi[FNT_F_CHUNK] || v<0 ) goto filter_out;
    pred.chunk = v;
  }
  pred.columns = mCols
               & ((pTab->nCol>=64 ? 0 : ((sqlite3_uint64)1<<pTab->nCol)) - 1);
  pred.ordered = (idxNum & FNT_IDX_ORDERED)!=0;
  pred.limit = fntFoldLimit(&fold, idxNum);

  frc = fnt_scan_open(pCur->cs.pSnap, pTab->eTab, &pred, &pCur->pScan);
  if( frc!=FNT_OK ){
    pCur->pScan = 0;
    zErr = fntStoreError(fnt_table_name(pTab->eTab), pConn->pStore, frc);
    rc = fntSqliteCode(frc);
    goto filter_out;
  }
  rc = fntStep(pCur);
filter_done:
  if( rc==SQLITE_OK && (idxNum & FNT_IDX_OMIT_OFFSET) ){
    sqlite3_int64 k;
    for(k=0; k<fold.nOffset && !pCur->bEof && rc==SQLITE_OK; k++){
      rc = fntStep(pCur);
    }
  }
  fntFoldClear(&fold);
  return rc;

filter_out:
  fntFoldClear(&fold);
  pCur->bEof = 1;
  if( zErr ){
    sqlite3_free(pTab->base.zErrMsg);
    pTab->base.zErrMsg = zErr;
  }
  return rc;
}

static int fntEof(sqlite3_vtab_cursor *cur){
  return ((FntCursor*)cur)->bEof;
}

/* A column of the current call. */
static void fntCallColumn(const fnt_call *c, sqlite3_context *ctx, int i){
  const char *z = 0;
  sqlite3_int64 v = 0;
  switch( i ){
    case FNT_CALL_REPO:      z = c->repo; break;
    case FNT_CALL_COMMIT:    z = c->commit; break;
    case FNT_CALL_RUN_ID:    z = c->run_id; break;
    case FNT_CALL_THREAD:    v = c->thread; break;
    case FNT_CALL_CALL_ID:   v = c->call_id; break;
    case FNT_CALL_PARENT_ID: if( c->parent_id<0 ) return;
                             v = c->parent_id; break;
    case FNT_CALL_DEPTH:     v = c->depth; break;
    case FNT_CALL_START_NS:  v = c->start_ns; break;
    case FNT_CALL_END_NS:    v = c->end_ns; break;
    case FNT_CALL_DUR_NS:    v = c->dur_ns; break;
    case FNT_CALL_SELF_NS:   v = c->self_ns; break;
    case FNT_CALL_KEY:       z = c->key; break;
    case FNT_CALL_STABLE_ID: z = c->stable_id; break;
    case FNT_CALL_SYMBOL:    z = c->symbol; break;
    case FNT_CALL_ENDED_BY:  z = fnt_ended_by_name(c->ended_by); break;
    case FNT_CALL_OUTERMOST: v = c->outermost; break;
    default: return;
  }
  if( fnt_column_is_text(FNT_TABLE_CALLS, i) ){
    if( z==0 ) return;
    /* Without a copy where the store can hold the text (fntColText);
    ** ended_by's names are literals. */
    if( i==FNT_CALL_ENDED_BY ){
      sqlite3_result_text(ctx, z, -1, SQLITE_STATIC);
    }else if( c->texts_held ){
      fnt_text_hold(z);
      sqlite3_result_text(ctx, z, -1, fnt_text_release);
    }else{
      sqlite3_result_text(ctx, z, -1, SQLITE_TRANSIENT);
    }
  }else{
    sqlite3_result_int64(ctx, v);
  }
}

/* The column readers.  xColumn is called only on a row (SQLite asks
** xEof first), so a reader finds pScan or pCall set. */
static void fntColSnapshot(FntCursor *pCur, sqlite3_context *ctx, int i){
  (void)i;
  sqlite3_result_int64(ctx, pCur->cs.iId);
}
static void fntColCall(FntCursor *pCur, sqlite3_context *ctx, int i){
  fntCallColumn(pCur->pCall, ctx, i);
}
/* A text without a copy when the store can hold it for as long as SQLite
** keeps it (correlated subqueries and sorters included): the destructor
** drops the reference on the file it points into. */
static void fntColText(FntCursor *pCur, sqlite3_context *ctx, int i){
  static void (*const axDel[])(void*) = {
    SQLITE_TRANSIENT, fnt_text_release, SQLITE_STATIC
  };
  const char *z;
  int life = fnt_scan_text_hold(pCur->pScan, i, &z, 0);
  /* Length -1: SQLite then knows the text is NUL-terminated, and
  ** sqlite3_column_text() needs no copy to terminate it. */
  if( z ) sqlite3_result_text(ctx, z, -1, axDel[life]);
}
/* Events: the whole row is read once, at its first column. */
static const fnt_event_row *fntEventRow(FntCursor *pCur){
  if( !pCur->bRow ){
    fnt_scan_event_row(pCur->pScan, &pCur->row);
    pCur->bRow = 1;
  }
  return &pCur->row;
}
/* An event's text: held as fntColText's are. */
static void fntColEvText(FntCursor *pCur, sqlite3_context *ctx, int i){
  const char *z = fntEventRow(pCur)->text[i];
  if( z ){
    fnt_text_hold(z);
    sqlite3_result_text(ctx, z, -1, fnt_text_release);
  }
}
/* An event's kind: a literal. */
static void fntColKind(FntCursor *pCur, sqlite3_context *ctx, int i){
  sqlite3_result_text(ctx, fntEventRow(pCur)->text[i], -1, SQLITE_STATIC);
}
/* An event's integer: never NULL. */
static void fntColInt(FntCursor *pCur, sqlite3_context *ctx, int i){
  sqlite3_result_int64(ctx, fntEventRow(pCur)->num[i]);
}
/* A runs or profile integer: NULL in a file older than its column. */
static void fntColIntOrNull(FntCursor *pCur, sqlite3_context *ctx, int i){
  if( !fnt_scan_is_null(pCur->pScan, i) ){
    sqlite3_result_int64(ctx, fnt_scan_int(pCur->pScan, i));
  }
}

static void fntColumnsChoose(FntVtab *pTab){
  int i;
  assert( pTab->nCol < (int)(sizeof(pTab->axCol)/sizeof(pTab->axCol[0])) );
  for(i=0; i<pTab->nCol; i++){
    if( pTab->eTab==FNT_TABLE_CALLS ){
      pTab->axCol[i] = fntColCall;
    }else if( pTab->eTab==FNT_TABLE_EVENTS && i==FNT_EV_KIND ){
      pTab->axCol[i] = fntColKind;
    }else if( fnt_column_is_text(pTab->eTab, i) ){
      pTab->axCol[i] = pTab->eTab==FNT_TABLE_EVENTS ? fntColEvText : fntColText;
    }else{
      pTab->axCol[i] = pTab->eTab==FNT_TABLE_EVENTS ? fntColInt : fntColIntOrNull;
    }
  }
  pTab->axCol[pTab->nCol] = fntColSnapshot;
}

static int fntColumn(sqlite3_vtab_cursor *cur, sqlite3_context *ctx, int i){
  FntVtab *pTab = (FntVtab*)cur->pVtab;
  if( i>=0 && i<=pTab->nCol ) pTab->axCol[i]((FntCursor*)cur, ctx, i);
  return SQLITE_OK;
}

static int fntUpdate(sqlite3_vtab *pVtab, int argc, sqlite3_value **argv,
                     sqlite_int64 *pRowid){
  FntVtab *pTab = (FntVtab*)pVtab;
  (void)argc; (void)argv; (void)pRowid;
  sqlite3_free(pVtab->zErrMsg);
  pVtab->zErrMsg = sqlite3_mprintf("%s is read-only: %s",
                       fnt_table_name(pTab->eTab), fntFiler(pTab->eTab));
  return SQLITE_READONLY;
}

static const sqlite3_module fntModule = {
  /* iVersion    */ 0,
  /* xCreate     */ 0,      /* eponymous-only: no CREATE VIRTUAL TABLE */
  /* xConnect    */ fntConnect,
  /* xBestIndex  */ fntBestIndex,
  /* xDisconnect */ fntDisconnect,
  /* xDestroy    */ 0,
  /* xOpen       */ fntOpen,
  /* xClose      */ fntClose,
  /* xFilter     */ fntFilter,
  /* xNext       */ fntNext,
  /* xEof        */ fntEof,
  /* xColumn     */ fntColumn,
  /* xRowid      */ fntRowid,
  /* xUpdate     */ fntUpdate,
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

/* fnt_last_scan() -> JSON: the counters of the connection's most recently
** closed fn_trace_events scan, NULL before the first.  Reads memory only,
** so it needs no DIRECTONLY. */
static void fntLastScanFunc(sqlite3_context *ctx, int argc,
                            sqlite3_value **argv){
  FntTables *pT = (FntTables*)sqlite3_user_data(ctx);
  const fnt_scan_stats *s = &pT->lastScan;
  char *z;
  (void)argc; (void)argv;
  if( !pT->bLastScan ) return;
  z = sqlite3_mprintf("{\"files_opened\":%llu,\"files_skipped\":%llu,"
        "\"row_groups_read\":%llu,\"row_groups_skipped\":%llu,"
        "\"rows_decoded\":%llu}",
        (unsigned long long)s->files_opened,
        (unsigned long long)s->files_skipped,
        (unsigned long long)s->row_groups_read,
        (unsigned long long)s->row_groups_skipped,
        (unsigned long long)s->rows_decoded);
  if( z==0 ){
    sqlite3_result_error_nomem(ctx);
    return;
  }
  sqlite3_result_text(ctx, z, -1, sqlite3_free);
}

int fntRegisterTables(sqlite3 *db, FntConn *p){
  static const fnt_table aTab[4] = {
    FNT_TABLE_EVENTS, FNT_TABLE_RUNS, FNT_TABLE_PROFILE, FNT_TABLE_CALLS
  };
  FntTables *pT = sqlite3_malloc(sizeof(*pT));
  int rc, i;
  if( pT==0 ) return SQLITE_NOMEM;
  memset(pT, 0, sizeof(*pT));
  pT->pConn = p;
  pT->nRef = 1;
  rc = sqlite3_create_function_v2(db, "fnt_last_scan", 0, SQLITE_UTF8, pT,
                                  fntLastScanFunc, 0, 0, fntTablesFree);
  if( rc!=SQLITE_OK ) return rc;   /* pT was freed by SQLite */
  for(i=0; i<4 && rc==SQLITE_OK; i++){
    pT->aAux[i].pT = pT;
    pT->aAux[i].eTab = aTab[i];
    pT->nRef++;
    rc = sqlite3_create_module_v2(db, fnt_table_name(aTab[i]), &fntModule,
                                  &pT->aAux[i], fntModAuxFree);
  }
  if( rc==SQLITE_OK ) rc = fntRegisterSummary(db, p);
  return rc;
}
