/*
** fuzz_warehouse.h -- what the fuzz targets over store files share: one
** small warehouse filed by the real writer, once per process, whose files
** are the starting point that inputs replace.
*/
#ifndef FNT_FUZZ_WAREHOUSE_H
#define FNT_FUZZ_WAREHOUSE_H

#include <stddef.h>
#include <stdint.h>

/* The run and repo filed (two chunks of "fuzz-run", one profile). */
#define FUZZ_RUN     "fuzz-run"
#define FUZZ_PROFILE "fuzz-prof"
#define FUZZ_REPO    "acme/fuzz"

/* Files the warehouse under $FNT_TEST_TMP (or /tmp) the first time and
** returns its folder; removed at exit.  Exits the process on failure: a
** target without its warehouse would fuzz nothing. */
const char *fuzz_warehouse(const char *target);

/* Files the warehouse afresh (after inputs have filed into it). */
void fuzz_warehouse_reset(void);

/* Reads a whole file into a malloc'd buffer.  0 or -1. */
int fuzz_read_file(const char *path, uint8_t **data, size_t *n);

/* Writes (truncating) a whole file.  0 or -1. */
int fuzz_write_file(const char *path, const void *data, size_t n);

/* When $FNT_FUZZ_SEEDS names a folder, writes `prefix` then data[0..n) to
** $FNT_FUZZ_SEEDS/name: how the committed seed corpora were generated
** (see README.md). */
void fuzz_seed(const char *name, uint8_t prefix, const uint8_t *data, size_t n);

#endif
