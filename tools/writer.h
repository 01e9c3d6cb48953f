/*
** writer.h -- an export's output, written on a thread of its own.
**
** The thread that formats (fnt export: millions of calls as text) fills
** buffers and hands them over; the writer thread does the write(2)s, so
** formatting and writing overlap.  Output made with fprintf (fnt flame's
** SVG, fnt report's page) goes through a stdio stream into the writer's
** buffers (writer_stream).
**
** Nothing half-written is left under the output's name: a regular file
** (or a name not taken yet) is written under a temporary name beside it,
** "FILE.fnt-XXXXXX", renamed to FILE when everything was written, removed
** when not.  A device or a FIFO (-o /dev/null, /dev/full), stdout, and a
** FILE in a folder where no file may be created are written directly.
*/
#ifndef FNT_WRITER_H
#define FNT_WRITER_H

#include <stddef.h>
#include <stdio.h>

typedef struct writer writer;

/* The size of every buffer a writer hands out. */
#define WRITER_BUF (1u<<20)

/* An output to `path` (stdout for NULL or "-"); `cmd` names the command
** in messages.  @return the writer, or NULL after a message on stderr
** ("fnt CMD: PATH: cannot write: REASON"). */
writer *writer_open(const char *cmd, const char *path);

/* An empty buffer of WRITER_BUF bytes for the caller to fill.  The writer
** owns it (writer_close frees it): the caller gives it back filled with
** writer_put. */
char *writer_buffer(writer *w);

/* Queues the first n bytes of buf (a buffer of this writer) to be written
** after everything queued before, and returns an empty buffer to fill
** next, waiting while every buffer is queued. */
char *writer_put(writer *w, char *buf, size_t n);

/* A stdio stream into w, for output made with fprintf: its bytes fill
** w's buffers, which go out as writer_put's do.  Put nothing else into w
** while it is in use (it holds bytes back).  writer_close flushes and
** closes it: do not fclose it.  @return the stream (the same one on every
** call), or NULL after a message on stderr (out of memory; w still to be
** closed). */
FILE *writer_stream(writer *w);

/* 1 once a write has failed (what is queued after it is dropped): a long
** export may stop early. */
int writer_failed(writer *w);

/* Flushes w's stream (if any), waits until everything queued is written,
** closes the output and, when `status` is 0 and every write succeeded,
** gives it its name (the temporary file renamed); otherwise the temporary
** file is removed.  Frees w and its buffers.  @return `status`, or 1
** after a message naming the file ("fnt CMD: FILE: write failed: No space
** left on device") when a write, the close or the rename failed. */
int writer_close(writer *w, int status);

#endif /* FNT_WRITER_H */
