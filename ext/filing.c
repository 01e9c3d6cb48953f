/*
** filing.c -- the SQL filing functions (SPEC §4):
**
**   SELECT fnt_file_chunk(readfile('chunk.json'));           -- 1 filed, 0 already
**   SELECT fnt_file_chunk(:json, 'code_room');               -- stable_ids from a room
**   SELECT fnt_file_profile(readfile('profile.json') [, room]);
**
** Each call parses its JSON (json.c), fills missing stable_ids from the
** room, and hands the result to the store, which files it in one atomic
** snapshot commit of its own (not part of the SQLite transaction around the
** call).  Bad input writes nothing: every check, ours and the store's,
** runs before the commit, and errors read "fnt_file_chunk: <path>: <what>".
**
** The argument may be TEXT or a BLOB (readfile() returns one).  Keys the
** shape does not know are ignored, so producers may add fields (json.c
** lists the other leniencies).  The room is a table or view with columns
** symbol, stable_id, named as one identifier (any characters, no schema
** prefix; SQL NULL means no room); symbols match byte for byte, and a
** symbol with several non-empty stable_ids in the room takes the first
** one found.
*/
#include <stdlib.h>
#include <string.h>

#include "fntrace_int.h"
#include "json.h"

/* At most this many symbols are looked up in the room one by one (a
** prepared `WHERE symbol = ?`, which an index on the room makes cheap);
** more are matched in one scan of the room against the sorted symbols, so
** that a room without an index costs one pass, not one per symbol. */
#define FNT_ROOM_PROBES 64

/* One per connection, shared by the filing functions: the parser's buffers
** are reused from call to call.  bBusy guards them should a room query
** somehow re-enter a filing function; nRef counts the registrations that
** hold this (each one's xDestroy drops one). */
typedef struct FntFiler {
  FntConn *pConn;
  FntJson json;
  int bBusy;
  int nRef;
} FntFiler;

static void filerUnref(void *pArg){
  FntFiler *pF = (FntFiler*)pArg;
  if( pF && --pF->nRef==0 ){
    fntJsonClear(&pF->json);
    sqlite3_free(pF);
  }
}

/* A function or profile row whose stable_id the room may supply. */
typedef struct RoomItem {
  const char *zSymbol;
  const char **pzStableId;       /* where the room's stable_id goes */
} RoomItem;

/* What a room lookup allocated: the stable_id copies, freed after filing. */
typedef struct RoomCopies {
  char **az;
  size_t n;
} RoomCopies;

static void roomCopiesFree(RoomCopies *pC){
  for(size_t i=0; i<pC->n; i++) sqlite3_free(pC->az[i]);
  sqlite3_free(pC->az);
  pC->az = 0;
  pC->n = 0;
}

static int roomItemCmp(const void *a, const void *b){
  return strcmp(((const RoomItem*)a)->zSymbol, ((const RoomItem*)b)->zSymbol);
}

/* Gives aItem[i] the stable_id text z (non-empty), copied. */
static int roomAssign(RoomItem *pItem, const unsigned char *z, RoomCopies *pC){
  char *zCopy = sqlite3_mprintf("%s", (const char*)z);
  if( zCopy==0 ) return SQLITE_NOMEM;
  pC->az[pC->n++] = zCopy;
  *pItem->pzStableId = zCopy;
  return SQLITE_OK;
}

/* Fills the stable_id of each of the nItem items from the room zRoom.
** pC->az must have room for nItem pointers.  On error *pzErr is set. */
static int roomLookup(sqlite3 *db, const char *zFunc, const char *zRoom,
                      RoomItem *aItem, size_t nItem, RoomCopies *pC,
                      char **pzErr){
  sqlite3_stmt *pStmt = 0;
  char *zSql;
  int rc;
  int bProbe = nItem<=FNT_ROOM_PROBES;

  /* %w doubles the quotes inside an identifier: any name is safe. */
  if( bProbe ){
    zSql = sqlite3_mprintf("SELECT stable_id FROM \"%w\" WHERE symbol = ?1 "
                           "COLLATE BINARY AND stable_id IS NOT NULL "
                           "AND stable_id <> '' LIMIT 1", zRoom);
  }else{
    zSql = sqlite3_mprintf("SELECT symbol, stable_id FROM \"%w\" "
                           "WHERE stable_id IS NOT NULL AND stable_id <> ''",
                           zRoom);
  }
  if( zSql==0 ) return SQLITE_NOMEM;
  rc = sqlite3_prepare_v2(db, zSql, -1, &pStmt, 0);
  sqlite3_free(zSql);
  if( rc!=SQLITE_OK ){
    *pzErr = sqlite3_mprintf("%s: room '%s': %s (a room is a table or view "
                             "with columns symbol, stable_id)", zFunc, zRoom,
                             sqlite3_errmsg(db));
    goto done;
  }
  if( bProbe ){
    for(size_t i=0; i<nItem && rc==SQLITE_OK; i++){
      sqlite3_bind_text(pStmt, 1, aItem[i].zSymbol, -1, SQLITE_STATIC);
      rc = sqlite3_step(pStmt);
      if( rc==SQLITE_ROW ){
        const unsigned char *z = sqlite3_column_text(pStmt, 0);
        rc = z ? roomAssign(&aItem[i], z, pC) : SQLITE_NOMEM;
      }else if( rc==SQLITE_DONE ){
        rc = SQLITE_OK;
      }
      sqlite3_reset(pStmt);
    }
  }else{
    /* One pass over the room; each symbol takes its first stable_id. */
    qsort(aItem, nItem, sizeof(RoomItem), roomItemCmp);
    while( (rc = sqlite3_step(pStmt))==SQLITE_ROW ){
      RoomItem key;
      const unsigned char *zSym = sqlite3_column_text(pStmt, 0);
      if( zSym==0 ) continue;
      key.zSymbol = (const char*)zSym;
      RoomItem *pHit = bsearch(&key, aItem, nItem, sizeof(RoomItem),
                               roomItemCmp);
      if( pHit==0 ) continue;
      while( pHit>aItem && strcmp(pHit[-1].zSymbol, key.zSymbol)==0 ) pHit--;
      for(; pHit<aItem+nItem && strcmp(pHit->zSymbol, key.zSymbol)==0; pHit++){
        if( *pHit->pzStableId && (*pHit->pzStableId)[0] ) continue;
        const unsigned char *z = sqlite3_column_text(pStmt, 1);
        if( z==0 ){ rc = SQLITE_NOMEM; break; }
        if( (rc = roomAssign(pHit, z, pC))!=SQLITE_OK ) break;
      }
      if( rc!=SQLITE_ROW && rc!=SQLITE_OK ) break;
    }
    if( rc==SQLITE_DONE ) rc = SQLITE_OK;
  }
  if( rc!=SQLITE_OK && rc!=SQLITE_NOMEM ){
    *pzErr = sqlite3_mprintf("%s: room '%s': %s", zFunc, zRoom,
                             sqlite3_errmsg(db));
  }
done:
  sqlite3_finalize(pStmt);
  return rc;
}

/* Collects the items with no stable_id and looks them up in the room named
** by argv (an SQL NULL room: nothing to do). */
static int roomApply(sqlite3_context *ctx, const char *zFunc,
                     sqlite3_value *pRoom, const char **azSymbol,
                     const char ***apzStable, size_t n, RoomCopies *pC,
                     char **pzErr){
  const char *zRoom;
  RoomItem *aItem;
  size_t nItem = 0;
  int rc;
  if( sqlite3_value_type(pRoom)==SQLITE_NULL ) return SQLITE_OK;
  zRoom = (const char*)sqlite3_value_text(pRoom);
  if( zRoom==0 ) return SQLITE_NOMEM;
  if( zRoom[0]==0 ){
    *pzErr = sqlite3_mprintf("%s: the room name is empty (pass NULL for no "
                             "room)", zFunc);
    return SQLITE_ERROR;
  }
  aItem = sqlite3_malloc64((n ? n : 1)*sizeof(RoomItem));
  pC->az = sqlite3_malloc64((n ? n : 1)*sizeof(char*));
  if( aItem==0 || pC->az==0 ){
    sqlite3_free(aItem);
    return SQLITE_NOMEM;
  }
  for(size_t i=0; i<n; i++){
    const char *zId = *apzStable[i];
    if( zId==0 || zId[0]==0 ){
      aItem[nItem].zSymbol = azSymbol[i];
      aItem[nItem].pzStableId = apzStable[i];
      nItem++;
    }
  }
  /* Prepared even when every stable_id is known, so that a wrong room
  ** name is always an error, not only with some inputs. */
  rc = roomLookup(sqlite3_context_db_handle(ctx), zFunc, zRoom, aItem,
                  nItem, pC, pzErr);
  sqlite3_free(aItem);
  return rc;
}

/* The JSON argument, TEXT or BLOB (readfile() gives a BLOB). */
static int filingInput(sqlite3_context *ctx, const char *zFunc,
                       sqlite3_value *pVal, const char **pz, size_t *pn){
  switch( sqlite3_value_type(pVal) ){
    case SQLITE_TEXT:
      *pz = (const char*)sqlite3_value_text(pVal);
      break;
    case SQLITE_BLOB:
      *pz = (const char*)sqlite3_value_blob(pVal);
      if( *pz==0 ) *pz = "";
      break;
    default: {
      char *zErr = sqlite3_mprintf("%s: the first argument must be JSON "
          "text, got %s", zFunc,
          sqlite3_value_type(pVal)==SQLITE_NULL ? "NULL" : "a number");
      sqlite3_result_error(ctx, zErr ? zErr : zFunc, -1);
      sqlite3_free(zErr);
      return SQLITE_ERROR;
    }
  }
  if( *pz==0 ){
    sqlite3_result_error_nomem(ctx);
    return SQLITE_NOMEM;
  }
  *pn = (size_t)sqlite3_value_bytes(pVal);
  return SQLITE_OK;
}

/* Sets the function's error: bad input is SQLITE_CONSTRAINT, the code the
** store's FNT_E_INVALID maps to, so that clients see one kind of error for
** every rejected chunk, whoever rejected it. */
static void filingError(sqlite3_context *ctx, int rc, const char *zErr){
  if( rc==SQLITE_NOMEM ){
    sqlite3_result_error_nomem(ctx);
    return;
  }
  sqlite3_result_error(ctx, zErr, -1);
  sqlite3_result_error_code(ctx, rc);
}

/* Takes the connection's parser, or a fresh one if it is in use. */
static FntJson *filerTake(FntFiler *pF, FntJson *pLocal){
  if( pF->bBusy ){
    memset(pLocal, 0, sizeof(*pLocal));
    return pLocal;
  }
  pF->bBusy = 1;
  return &pF->json;
}

static void filerGive(FntFiler *pF, FntJson *pJ){
  if( pJ==&pF->json ){
    fntJsonTrim(pJ);
    pF->bBusy = 0;
  }else{
    fntJsonClear(pJ);
  }
}

/* fnt_file_chunk(chunk_json [, room]) -> 1 filed, 0 already filed;
** fnt_file_profile(profile_json [, room]) -> 1 filed, 0 already filed or no
** rows.  One body: parse, fill stable_ids from the room, file. */
static void fileFunc(sqlite3_context *ctx, int argc, sqlite3_value **argv,
                     int bProfile){
  const char *zFunc = bProfile ? "fnt_file_profile" : "fnt_file_chunk";
  FntFiler *pF = (FntFiler*)sqlite3_user_data(ctx);
  FntJson local, *pJ;
  RoomCopies copies = {0, 0};
  fnt_chunk chunk;
  fnt_profile prof;
  fnt_store *pStore = 0;
  const char *z;
  size_t n;
  char *zErr = 0;
  int rc, frc;

  if( filingInput(ctx, zFunc, argv[0], &z, &n) ) return;
  pJ = filerTake(pF, &local);
  rc = bProfile ? fntJsonParseProfile(pJ, z, n, &prof)
                : fntJsonParseChunk(pJ, z, n, &chunk);
  if( rc!=SQLITE_OK ){
    zErr = sqlite3_mprintf("%s: %s", zFunc, pJ->zErr);
    rc = rc==SQLITE_NOMEM ? rc : fntSqliteCode(FNT_E_INVALID);
    goto done;
  }
  if( argc>1 ){
    /* The parser's function (row) array is ours to amend: the chunk's
    ** functions (the profile's rows) point into it. */
    size_t i, nItem = bProfile ? prof.n_rows : chunk.n_functions;
    const char **azSym = sqlite3_malloc64((nItem ? nItem : 1)*sizeof(char*));
    const char ***apzId = sqlite3_malloc64((nItem ? nItem : 1)*sizeof(char**));
    if( azSym && apzId ){
      for(i=0; i<nItem; i++){
        azSym[i] = bProfile ? pJ->aRow[i].symbol : pJ->aFunc[i].symbol;
        apzId[i] = bProfile ? &pJ->aRow[i].stable_id : &pJ->aFunc[i].stable_id;
      }
      rc = roomApply(ctx, zFunc, argv[1], azSym, apzId, nItem, &copies, &zErr);
    }else{
      rc = SQLITE_NOMEM;
    }
    sqlite3_free(azSym);
    sqlite3_free(apzId);
    if( rc!=SQLITE_OK ) goto done;
  }
  rc = fntConnStore(pF->pConn, 1, &pStore, &zErr);
  if( rc!=SQLITE_OK ){
    char *zMsg = sqlite3_mprintf("%s: %s", zFunc, zErr ? zErr : "");
    sqlite3_free(zErr);
    zErr = zMsg;
    goto done;
  }
  frc = bProfile ? fnt_file_profile(pStore, &prof) : fnt_file_chunk(pStore, &chunk);
  if( frc<0 ){
    zErr = fntStoreError(zFunc, pStore, frc);
    rc = frc==FNT_E_NOMEM ? SQLITE_NOMEM : fntSqliteCode(frc);
    goto done;
  }
  sqlite3_result_int(ctx, frc);

done:
  if( rc!=SQLITE_OK ) filingError(ctx, rc, zErr ? zErr : zFunc);
  sqlite3_free(zErr);
  roomCopiesFree(&copies);
  filerGive(pF, pJ);
}

static void fileChunkFunc(sqlite3_context *ctx, int argc, sqlite3_value **argv){
  fileFunc(ctx, argc, argv, 0);
}

static void fileProfileFunc(sqlite3_context *ctx, int argc,
                            sqlite3_value **argv){
  fileFunc(ctx, argc, argv, 1);
}

int fntRegisterFiling(sqlite3 *db, FntConn *p){
  static const struct {
    const char *zName;
    int nArg;
    void (*xFunc)(sqlite3_context*, int, sqlite3_value**);
  } aFunc[] = {
    { "fnt_file_chunk",   1, fileChunkFunc },
    { "fnt_file_chunk",   2, fileChunkFunc },
    { "fnt_file_profile", 1, fileProfileFunc },
    { "fnt_file_profile", 2, fileProfileFunc },
  };
  FntFiler *pF = sqlite3_malloc(sizeof(*pF));
  int rc = SQLITE_OK;
  if( pF==0 ) return SQLITE_NOMEM;
  memset(pF, 0, sizeof(*pF));
  pF->pConn = p;
  pF->nRef = 1;
  for(size_t i=0; i<sizeof(aFunc)/sizeof(aFunc[0]) && rc==SQLITE_OK; i++){
    /* These write to the warehouse on disk: DIRECTONLY, so that a view or
    ** trigger of a hostile database schema cannot file (or fill the disk)
    ** behind the back of whoever opened it.  Not DETERMINISTIC: they have
    ** side effects and their result depends on what is already filed.
    ** SQLite calls xDestroy itself when a registration fails. */
    pF->nRef++;
    rc = sqlite3_create_function_v2(db, aFunc[i].zName, aFunc[i].nArg,
            SQLITE_UTF8|SQLITE_DIRECTONLY, pF, aFunc[i].xFunc, 0, 0,
            filerUnref);
  }
  filerUnref(pF);
  return rc;
}
