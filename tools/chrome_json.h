/*
** chrome_json.h -- a streaming reader of Chrome Trace Event JSON: hands
** out the trace's events one at a time, in file order, in fixed memory
** (a 1 MiB read buffer and the longest name seen), whatever the file's size.
**
** Both forms of the format are read: the JSON array of events (whose
** closing `]` may be missing, as the format allows for traces cut short)
** and the object whose "traceEvents" member is that array (the object's
** other members are skipped).  Of each event only the members an importer
** of calls needs are decoded -- ph, name, ts, dur, pid, tid -- the others
** (args, cat, ...) are skipped after being checked to be well-formed.
*/
#ifndef FNT_CHROME_JSON_H
#define FNT_CHROME_JSON_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

typedef struct chrome_event {
  uint64_t index;       /* its position in the events array, from 0 */
  char ph;              /* the phase's first character; 0 when absent */
  const char *name;     /* decoded, NUL-terminated; NULL when absent.
                        ** Valid until the next chrome_reader_next. */
  int has_ts, has_dur, has_pid, has_tid;
  int64_t ts_ns;        /* ts and dur (µs, possibly fractional) in ns, */
  int64_t dur_ns;       /* rounded half away from zero */
  int64_t pid, tid;     /* integers */
  const char *bad;      /* NULL, or the first member of a known name whose
                        ** value has the wrong type ("tid is not an integer") */
} chrome_event;

typedef struct chrome_reader chrome_reader;

/* A reader of `in` (not closed by the reader); `name` is used in messages.
** NULL when out of memory. */
chrome_reader *chrome_reader_new(FILE *in, const char *name);

/* The next event: 1 (in *ev), 0 at the end of the events, -1 on malformed
** JSON or a read error (chrome_reader_error says where: "NAME: byte 812:
** expected ':' after a key"). */
int chrome_reader_next(chrome_reader *r, chrome_event *ev);

/* The last error's message. */
const char *chrome_reader_error(const chrome_reader *r);

/* Bytes consumed so far (for a progress bar). */
uint64_t chrome_reader_offset(const chrome_reader *r);

void chrome_reader_free(chrome_reader *r);   /* NULL ok */

#endif /* FNT_CHROME_JSON_H */
