/*
** elf_symbols.h -- names the function ids of an XRay-instrumented binary.
**
** Reads the ELF file itself (no libelf, no llvm-xray): the xray_instr_map
** section gives each function id its address (ids are 1-based in the
** section's order, and increase whenever an entry's function changes, as
** compiler-rt numbers them), the symbol table gives the address its name,
** demangled with libstdc++'s __cxa_demangle.  Also reads the GNU build id.
** 64-bit little-endian ELF only (x86-64, AArch64, ...).
*/
#ifndef FNT_ELF_SYMBOLS_H
#define FNT_ELF_SYMBOLS_H

#include <stddef.h>
#include <stdint.h>

typedef struct elf_symbols elf_symbols;

/* Loads the instrumentation map, symbols and build id of the binary at
** `path`.  @return 0, or -1 with a message in err naming what is wrong
** ("no xray_instr_map section: not built with -fxray-instrument"). */
int elf_symbols_load(const char *path, elf_symbols **out, char *err, size_t errlen);

/* The number of function ids in the map (ids 1 .. count). */
int32_t elf_symbols_count(const elf_symbols *s);

/* The name of function `id`, demangled where possible; like llvm-xray's
** symbolizer, "@(hex address)" for an address no symbol covers and "#id"
** for an id outside the map.  Owned by s (until elf_symbols_free), except
** that the "#id" text is rewritten by the next such call. */
const char *elf_symbols_name(elf_symbols *s, int32_t id);

/* 1 when `id` is in the map (its function belongs to the binary). */
int elf_symbols_has(const elf_symbols *s, int32_t id);

/* The kinds of sleds function `id` has in the map, as a bit mask: bit k
** set when it has a sled of kind k (ELF_SLED_ENTRY, ...); 0 outside it. */
#define ELF_SLED_ENTRY      0   /* function entry */
#define ELF_SLED_EXIT       1   /* return */
#define ELF_SLED_TAIL       2   /* tail call */
#define ELF_SLED_ARGS_ENTRY 3   /* entry logging its first argument */
unsigned elf_symbols_sleds(const elf_symbols *s, int32_t id);

/* The NT_GNU_BUILD_ID note as lowercase hex, or NULL when the binary has
** none.  Owned by s. */
const char *elf_symbols_build_id(const elf_symbols *s);

void elf_symbols_free(elf_symbols *s);   /* NULL ok */

#endif /* FNT_ELF_SYMBOLS_H */
