/*
** ext_sort.h -- sorts fixed-size records in bounded memory: sorted runs
** of `mem_bytes` are spilled to an unlinked temporary file (in $TMPDIR,
** else /tmp) and merged back; input that fits is sorted in memory.
**
**   ext_sort *s = ext_sort_new(sizeof(rec), cmp, 16 << 20);
**   ext_sort_add(s, &rec); ...   ext_sort_finish(s);
**   while( (rc = ext_sort_next(s, &rec))==1 ){ ... }
**   ext_sort_rewind(s);          (read it all again)
**   ext_sort_free(s);
**
** cmp must be a total order (no two records equal), so that the order out
** does not depend on how the input was cut into runs.
*/
#ifndef FNT_EXT_SORT_H
#define FNT_EXT_SORT_H

#include <stddef.h>
#include <stdint.h>

typedef int (*ext_sort_cmp)(const void *a, const void *b);
typedef struct ext_sort ext_sort;

/* NULL when out of memory.  rec_size <= mem_bytes / 2. */
ext_sort *ext_sort_new(size_t rec_size, ext_sort_cmp cmp, size_t mem_bytes);
/* Adds a record (copied).  0, or -1 (ext_sort_error says why). */
int ext_sort_add(ext_sort *s, const void *rec);
/* Ends the input.  0, or -1. */
int ext_sort_finish(ext_sort *s);
/* The next record in order: 1, 0 at the end, -1 on a read error. */
int ext_sort_next(ext_sort *s, void *rec);
/* Starts the output over from the first record.  0, or -1. */
int ext_sort_rewind(ext_sort *s);
/* Records added. */
uint64_t ext_sort_count(const ext_sort *s);
const char *ext_sort_error(const ext_sort *s);
void ext_sort_free(ext_sort *s);   /* NULL ok; removes the temporary file */

#endif /* FNT_EXT_SORT_H */
