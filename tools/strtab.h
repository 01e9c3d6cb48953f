/*
** strtab.h -- strings interned to dense ids 0, 1, 2... (the frames of
** speedscope and pprof, the symbols of a fold): an open-addressing table
** over an array of copies.
**
**   strtab t = {0};
**   int64_t id = strtab_intern(&t, "main", 4);   (-1: out of memory)
**   t.name[id] ...   strtab_clear(&t);
*/
#ifndef FNT_STRTAB_H
#define FNT_STRTAB_H

#include <stddef.h>
#include <stdint.h>

typedef struct strtab {
  char **name;                 /* NUL-terminated copies, by id */
  uint32_t n, cap;
  uint32_t *slot, mask;        /* id + 1, 0 empty */
} strtab;

/* The id of the n bytes at z (interned on first sight, fewer than 2^31
** ids), or -1 out of memory. */
int64_t strtab_intern(strtab *t, const char *z, size_t n);
void strtab_clear(strtab *t);

#endif /* FNT_STRTAB_H */
