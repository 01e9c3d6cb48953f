/*
** binary_check.h -- does the --binary given to `fnt import-xray` belong to
** the log?  An XRay log holds function ids, not names: read against
** another program's instrumentation map it would name every function
** wrongly and still import.  What can be checked is checked:
**   - every function id of the log is in the binary's xray_instr_map;
**   - every event has a sled of its kind in that function (an entry needs
**     an entry sled, an exit a return sled, a tail exit a tail-call sled):
**     this catches another binary whose map is merely large enough;
**   - the program the log's file name gives: compiler-rt names a log
**     BASE + basename(argv[0]) + "." + 6 random characters, so a name of
**     that shape (after a leading "xray-log.") must end in the binary's
**     file name before its last '.' (a log renamed otherwise, such as
**     "xray-log.NAME", is not checked; a binary run through a symlink of
**     another name needs --force);
**   - the binary's GNU build id is the one a run already filed under the
**     same run_id recorded (the log itself carries none).
** The checks are fed event by event, so a streaming reader can use them.
*/
#ifndef FNT_BINARY_CHECK_H
#define FNT_BINARY_CHECK_H

#include <stddef.h>
#include <stdint.h>

#include "elf_symbols.h"
#include "fnt_store.h"

typedef struct binary_check {
  elf_symbols *syms;
  int32_t  n_map;          /* functions in the map */
  int32_t  max_id;         /* the largest function id of the log */
  int32_t  outside_id;     /* the first id outside the map (0: none) */
  uint64_t outside;        /* events with an id outside the map */
  int32_t  unsled_id;      /* the first function with an event of a kind */
  uint8_t  unsled_kind;    /*   it has no sled for (FNT_KIND_*) */
  uint64_t unsled;         /* such events */
} binary_check;

void binary_check_init(binary_check *bc, elf_symbols *syms);

/* One event of the log: its function id and kind (FNT_KIND_*). */
static inline void binary_check_event(binary_check *bc, int32_t id, uint8_t kind){
  unsigned sleds, want;
  if( id>bc->max_id ) bc->max_id = id;
  sleds = elf_symbols_sleds(bc->syms, id);
  if( sleds==0 ){
    if( !bc->outside_id ) bc->outside_id = id;
    bc->outside++;
    return;
  }
  want = kind==FNT_KIND_EXIT ? 1u<<ELF_SLED_EXIT
       : kind==FNT_KIND_TAIL_EXIT ? 1u<<ELF_SLED_TAIL
       : (1u<<ELF_SLED_ENTRY) | (1u<<ELF_SLED_ARGS_ENTRY);
  if( !(sleds & want) ){
    if( !bc->unsled ){ bc->unsled_id = id; bc->unsled_kind = kind; }
    bc->unsled++;
  }
}

/* After the last event: 0 when the log fits the binary, else -1 with a
** message in err naming both files and what differs. */
int binary_check_finish(const binary_check *bc, const char *log_path,
                        const char *bin_path, char *err, size_t errlen);

/* The program named by the log's file name (see above) against the
** binary's file name: 0 when they agree or the name says nothing, -1 with
** a message naming both. */
int binary_check_name(const char *log_path, const char *bin_path, char *err, size_t errlen);

/* The build id recorded by the chunks of `run_id` already in the snapshot
** against `build_id` (NULL: the binary has none, nothing to compare).
** 0 when they agree or the run is new, -1 with a message naming the binary
** and the recorded build id, -2 when the warehouse cannot be read (the
** store's message in err). */
int binary_check_filed(fnt_store *st, const char *run_id, const char *bin_path,
                       const char *build_id, char *err, size_t errlen);

#endif /* FNT_BINARY_CHECK_H */
