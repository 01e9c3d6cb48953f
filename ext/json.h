/*
** json.h -- the JSON reader of the filing functions (SPEC §4).
**
** Turns the text given to fnt_file_chunk() / fnt_file_profile() into the
** fnt_chunk / fnt_profile structs of fnt_store.h.  It is not a general JSON
** library: it knows the two shapes, checks every field as it reads it, and
** writes events straight into one reused array (no tree, no malloc per
** event, integers parsed exactly from their digits, never via double).
**
** A FntJson owns everything the parsed struct points to (strings, the
** function, event and row arrays) until the next parse or fntJsonClear();
** its buffers are kept from one parse to the next so that a connection
** filing chunk after chunk does not allocate again.
*/
#ifndef FNT_JSON_H
#define FNT_JSON_H

#include <stddef.h>
#include "fnt_store.h"

typedef struct FntJson {
  char *zArena;              /* decoded strings, NUL-terminated, back to back */
  size_t nArena;             /* bytes of zArena allocated */
  fnt_event *aEvent;         /* events of the last chunk */
  size_t nEventAlloc;
  fnt_function *aFunc;       /* functions of the last chunk */
  size_t nFuncAlloc;
  fnt_profile_row *aRow;     /* rows of the last profile */
  size_t nRowAlloc;
  char zErr[400];            /* the last error: "<path>: <what>" or "<what>" */
} FntJson;

/* A FntJson starts zeroed (memset or = {0}); nothing else to initialise. */

/* Frees every buffer; the FntJson may be used again (it starts empty). */
void fntJsonClear(FntJson *pJ);

/* Frees the buffers that grew past a few megabytes, so that one huge chunk
** does not pin its memory on the connection for ever. */
void fntJsonTrim(FntJson *pJ);

/* Parses a chunk (SPEC §4) from the n bytes at z (need not be
** NUL-terminated).  Optional fields that are absent or null come out as the
** store's defaults: commit NULL, ts_micros -1 (now), threads -1 (count
** them), binaries_json NULL ("[]").  A function whose stable_id is absent
** comes out with stable_id NULL.  Unknown keys are skipped (after being
** checked to be well-formed JSON), so that producers may add fields.
** @return SQLITE_OK; SQLITE_ERROR with pJ->zErr naming the field
**         ("events[3]: unknown kind 'enter'") or the byte offset of
**         malformed JSON; SQLITE_NOMEM. */
int fntJsonParseChunk(FntJson *pJ, const char *z, size_t n, fnt_chunk *pOut);

/* Parses a profile (SPEC §4) the same way: commit NULL and ts_micros -1 when
** absent; a row's stable_id NULL when absent.  Same return codes. */
int fntJsonParseProfile(FntJson *pJ, const char *z, size_t n,
                        fnt_profile *pOut);

#endif /* FNT_JSON_H */
