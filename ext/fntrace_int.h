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

typedef struct FntConn {
  sqlite3 *db;
  fnt_store *pStore;      /* the open warehouse, or NULL */
  fnt_snapshot *pSnap;    /* the snapshot pinned by open cursors, or NULL */
  int nPin;               /* open cursors that read pSnap */
} FntConn;

/* The connection's warehouse: the one fnt_open() opened, else
** $FNT_WAREHOUSE (opened on first use; created there only when bCreate,
** which filing passes: a read never makes a warehouse).  On failure
** returns an SQLite code and sets *pzErr (sqlite3_malloc'd) to a message
** that says to call fnt_open. */
int fntConnStore(FntConn *p, int bCreate, fnt_store **ppStore, char **pzErr);

/* Pins a snapshot for a cursor.  While any cursor of the connection is open
** the same snapshot is shared, so that a statement (a join, a correlated
** subquery) reads one consistent snapshot; the next statement sees the newest
** commit.  Pair every successful call with fntConnUnpin(). */
int fntConnPin(FntConn *p, fnt_snapshot **ppSnap, char **pzErr);
void fntConnUnpin(FntConn *p);

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

#endif /* FNTRACE_INT_H */
