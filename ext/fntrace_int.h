/*
** fntrace_int.h -- what the files of the SQLite extension share.
**
** Every SQL function and virtual-table module of one connection gets the
** same FntConn as its user data: the warehouse open on that connection and
** the snapshot that its running statement reads.
*/
#ifndef FNTRACE_INT_H
#define FNTRACE_INT_H

#include "sqlite3ext.h"
SQLITE_EXTENSION_INIT3

#include "fnt_store.h"

/* A statement's snapshot, kept after its cursors close for as long as the
** statement runs (fntrace.c says how a statement is recognised). */
typedef struct FntStmtRun { sqlite3_stmt *pStmt; int nRun; } FntStmtRun;
typedef struct FntEpoch {
  fnt_snapshot *pSnap;    /* one reference held */
  int nOpen;              /* cursors reading it now */
  sqlite3_int64 iPlanMark;/* the plan counter when it was pinned */
  int nStmt;
  FntStmtRun *aStmt;      /* the busy statements then, and their runs */
} FntEpoch;
#define FNT_MAX_EPOCH 8

typedef struct FntConn {
  sqlite3 *db;
  fnt_store *pStore;      /* the open warehouse, or NULL */
  sqlite3_int64 iPlanSeq; /* plans numbered by xBestIndex (fntConnPlan) */
  int nEpoch;             /* statements still running and their snapshots */
  FntEpoch aEpoch[FNT_MAX_EPOCH];
} FntConn;

/* The connection's warehouse: the one fnt_open() opened, else
** $FNT_WAREHOUSE (opened on first use; created there only when bCreate,
** which filing passes: a read never makes a warehouse).  On failure
** returns an SQLite code and sets *pzErr (sqlite3_malloc'd) to a message
** that says to call fnt_open. */
int fntConnStore(FntConn *p, int bCreate, fnt_store **ppStore, char **pzErr);

/* Pins the snapshot of the running statement for a cursor: every cursor
** of a statement (a join, a correlated subquery, also one that SQLite
** closes and reopens for each outer row) reads the snapshot that was newest
** when the statement first read one; a statement that starts later, also
** one run within another, reads the newest.  iPlan is the cursor's plan
** number (fntConnPlan, in its idxStr), or -1 when it has none.  Pair every
** successful call with fntConnUnpin() of the snapshot it gave. */
int fntConnPinPlan(FntConn *p, sqlite3_int64 iPlan, fnt_snapshot **ppSnap,
                   char **pzErr);
int fntConnPin(FntConn *p, fnt_snapshot **ppSnap, char **pzErr);  /* iPlan -1 */
void fntConnUnpin(FntConn *p, fnt_snapshot *pSnap);
/* A new plan number, for xBestIndex to put in idxStr. */
sqlite3_int64 fntConnPlan(FntConn *p);
/* The snapshot the running statement reads (pinned now if it has none yet,
** and kept for the statement): fnt_snapshot(). */
int fntConnStatementSnapshot(FntConn *p, fnt_snapshot **ppSnap, char **pzErr);
/* Time travel: snapshot iId (a new reference: fnt_snapshot_release it), or
** an SQLite code and *pzErr naming the id when it is expired or unknown. */
int fntConnSnapshotAt(FntConn *p, sqlite3_int64 iId, fnt_snapshot **ppSnap,
                      char **pzErr);

/* What a table's cursor reads (SPEC §10): the snapshot named by its hidden
** column, "WHERE snapshot_id = :s" (bAt, iAt), else the statement's
** (fntConnPinPlan with iPlan).  Close it before the cursor's next filter. */
typedef struct FntCurSnap {
  fnt_snapshot *pSnap;
  sqlite3_int64 iId;      /* pSnap's id: the snapshot_id column's value */
  int bPinned, bOwn;
} FntCurSnap;
int fntCurSnapOpen(FntConn *p, FntCurSnap *pCs, int bAt, sqlite3_int64 iAt,
                   sqlite3_int64 iPlan, char **pzErr);
void fntCurSnapClose(FntConn *p, FntCurSnap *pCs);

/* A virtual table whose only state is the connection's FntConn
** (summary.c, snapshots.c): declared from zSql, errors prefixed zName. */
typedef struct FntConnVtab { sqlite3_vtab base; FntConn *pConn; } FntConnVtab;
int fntConnVtabConnect(sqlite3 *db, FntConn *p, const char *zName,
                       const char *zSql, sqlite3_vtab **ppVtab, char **pzErr);
int fntConnVtabDisconnect(sqlite3_vtab *pVtab);

/* The one place that maps store codes (FNT_E_...) to SQLite codes. */
int fntSqliteCode(int rc);

/* "<prefix>: <the store's message>" (or the code's text when the store gave
** none), sqlite3_malloc'd. */
char *fntStoreError(const char *zPrefix, fnt_store *pStore, int rc);

/* A table-valued function whose rows one store call computes from its
** arguments (tvf.c does the sqlite3_module part; run_functions.c and
** compare.c describe the functions).  The arguments are the
** schema's last nArg columns, HIDDEN, each required with =. */
typedef struct FntTvf {
  const char *zName;          /* "fnt_heat": the module, and errors' prefix */
  const char *zSchema;        /* "CREATE TABLE x(...)" */
  int iFirstArg, nArg;        /* the argument columns; 1 <= nArg <= 8 */
  int nReq;                   /* the first nReq are required; 0: all */
  const char *zUsage;         /* the error when an argument is missing */
  double estimatedCost;       /* of computing the rows, for the planner */
  /* Computes the rows for the arguments (none NULL but optional ones not
  ** given) in pSnap: *ppRows (may
  ** stay NULL when there are none) and *pnRow.  A store code: on failure
  ** the store's message is the error. */
  int (*xCompute)(fnt_snapshot *pSnap, const char *const *azArg,
                  void **ppRows, size_t *pnRow);
  /* Optional: an error (sqlite3_malloc'd) for bad arguments, else NULL. */
  char *(*xCheck)(const char *const *azArg);
  void (*xFree)(void *pRows);
  /* The result of column iCol (< iFirstArg) of row iRow. */
  void (*xColumn)(const void *pRows, size_t iRow, int iCol,
                  sqlite3_context *ctx);
} FntTvf;
int fntRegisterTvf(sqlite3 *db, FntConn *p, const FntTvf *pTvf);  /* tvf.c */

/* Registration, one per file of ext/. */
int fntRegisterFiling(sqlite3 *db, FntConn *p);  /* filing.c */
int fntRegisterTimeline(sqlite3 *db, FntConn *p);  /* timeline.c: fnt_timeline */
int fntRegisterTables(sqlite3 *db, FntConn *p);  /* tables.c, summary.c */
int fntRegisterSummary(sqlite3 *db, FntConn *p); /* summary.c, called by tables.c */
int fntRegisterRunFunctions(sqlite3 *db, FntConn *p);  /* run_functions.c */
int fntRegisterCompare(sqlite3 *db, FntConn *p); /* compare.c: fnt_compare, fnt_diff */
int fntRegisterFlame(sqlite3 *db, FntConn *p);   /* flame.c: fnt_flame, fnt_folded */
int fntRegisterMaintenance(sqlite3 *db, FntConn *p);  /* maintenance.c */
int fntRegisterSnapshots(sqlite3 *db, FntConn *p);    /* snapshots.c */

#endif /* FNTRACE_INT_H */
