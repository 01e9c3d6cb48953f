/*
** room.h -- a code room: the map from a function's symbol to its stable_id,
** read from a TSV file given to the importers with --room FILE.
**
** File format: one `symbol<TAB>stable_id` a line; the symbol is everything
** before the first tab, the stable_id everything after it (a trailing CR
** is dropped).  Blank lines and lines starting with '#' are skipped.  When
** a symbol appears twice, the later line wins.  A function's own stable_id
** (none for XRay) wins over the room's.
*/
#ifndef FNT_ROOM_H
#define FNT_ROOM_H

#include <stddef.h>

typedef struct fnt_room fnt_room;

/* Loads a TSV of `symbol<TAB>stable_id` lines (blank lines and lines starting
** with '#' skipped; a line without a tab is an error naming FILE:LINE).
** Returns 0, or -1 with a message in err. */
int room_load(const char *path, fnt_room **out, char *err, size_t errlen);

/* The stable_id for symbol, or NULL (empty stable_ids in the file count as
** absent).  Owned by the room. */
const char *room_lookup(const fnt_room *room, const char *symbol);

/* The number of symbols with a non-empty stable_id. */
size_t room_size(const fnt_room *room);

void room_free(fnt_room *room);   /* NULL ok */

#endif /* FNT_ROOM_H */
