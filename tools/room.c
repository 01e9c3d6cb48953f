/*
** room.c -- the code room TSV (see room.h): the whole file is read into one
** buffer, cut in place into NUL-terminated symbols and stable_ids, and
** indexed by an open-addressing hash table of pointers into that buffer.
*/
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "room.h"

typedef struct entry { const char *symbol, *stable_id; } entry;

struct fnt_room {
  char *text;            /* the file, cut into strings */
  entry *slot;           /* capacity a power of two; symbol NULL = empty */
  size_t cap, n;
};

static uint64_t hash_str(const char *s){
  uint64_t h = 1469598103934665603ull;     /* FNV-1a */
  while( *s ){ h ^= (unsigned char)*s++; h *= 1099511628211ull; }
  return h;
}

/* Inserts or replaces (the later line wins). */
static void put(fnt_room *r, const char *symbol, const char *stable_id){
  size_t i = (size_t)hash_str(symbol) & (r->cap-1);
  while( r->slot[i].symbol ){
    if( strcmp(r->slot[i].symbol, symbol)==0 ){
      r->slot[i].stable_id = stable_id;
      return;
    }
    i = (i+1) & (r->cap-1);
  }
  r->slot[i].symbol = symbol;
  r->slot[i].stable_id = stable_id;
  r->n++;
}

int room_load(const char *path, fnt_room **out, char *err, size_t errlen){
  fnt_room *r;
  FILE *f;
  long len;
  size_t lines = 1, lineno = 0, got;
  char *p, *end;

  *out = 0;
  r = calloc(1, sizeof(*r));
  if( !r ){ snprintf(err, errlen, "%s: out of memory", path); return -1; }
  f = fopen(path, "rb");
  if( !f ){
    snprintf(err, errlen, "%s: %s", path, strerror(errno));
    free(r);
    return -1;
  }
  if( fseek(f, 0, SEEK_END)!=0 || (len = ftell(f))<0 || fseek(f, 0, SEEK_SET)!=0 ){
    snprintf(err, errlen, "%s: cannot read: %s", path, strerror(errno));
    fclose(f); free(r);
    return -1;
  }
  r->text = malloc((size_t)len + 1);
  if( !r->text ){
    snprintf(err, errlen, "%s: out of memory", path);
    fclose(f); free(r);
    return -1;
  }
  got = fread(r->text, 1, (size_t)len, f);
  fclose(f);
  if( got!=(size_t)len ){
    snprintf(err, errlen, "%s: short read", path);
    room_free(r);
    return -1;
  }
  r->text[len] = 0;
  end = r->text + len;
  for(p=r->text; p<end; p++) if( *p=='\n' ) lines++;
  for(r->cap=16; r->cap < lines*2; r->cap*=2){}
  r->slot = calloc(r->cap, sizeof(entry));
  if( !r->slot ){
    snprintf(err, errlen, "%s: out of memory", path);
    room_free(r);
    return -1;
  }
  for(p=r->text; p<end; ){
    char *nl = memchr(p, '\n', (size_t)(end-p)), *tab;
    char *eol = nl ? nl : end;
    lineno++;
    *eol = 0;
    if( eol>p && eol[-1]=='\r' ) eol[-1] = 0;
    if( p[0]!=0 && p[0]!='#' ){
      tab = strchr(p, '\t');
      if( !tab ){
        snprintf(err, errlen, "%s:%zu: no tab (lines are symbol<TAB>stable_id)", path, lineno);
        room_free(r);
        return -1;
      }
      *tab = 0;
      put(r, p, tab+1);
    }
    p = eol + 1;
  }
  *out = r;
  return 0;
}

const char *room_lookup(const fnt_room *room, const char *symbol){
  size_t i;
  if( !room || !symbol ) return 0;
  i = (size_t)hash_str(symbol) & (room->cap-1);
  while( room->slot[i].symbol ){
    if( strcmp(room->slot[i].symbol, symbol)==0 ){
      const char *id = room->slot[i].stable_id;
      return id[0] ? id : 0;
    }
    i = (i+1) & (room->cap-1);
  }
  return 0;
}

size_t room_size(const fnt_room *room){
  size_t i, n = 0;
  if( !room ) return 0;
  for(i=0; i<room->cap; i++){
    if( room->slot[i].symbol && room->slot[i].stable_id[0] ) n++;
  }
  return n;
}

void room_free(fnt_room *room){
  if( !room ) return;
  free(room->slot);
  free(room->text);
  free(room);
}
