/*
** strtab.c -- strings interned to dense ids (strtab.h).
*/
#include <stdlib.h>
#include <string.h>

#include "strtab.h"

static uint32_t strHash(const char *z, size_t n){
  uint32_t h = 2166136261u;
  size_t i;
  for(i=0; i<n; i++) h = (h ^ (unsigned char)z[i]) * 16777619u;
  return h;
}

/* Doubles the slots when half full.  @return 0, or -1 out of memory. */
static int grow(strtab *t){
  uint32_t nSlot, i, h, *a;
  if( (t->n+1)*2 <= (t->slot ? t->mask+1 : 0) ) return 0;
  nSlot = t->slot ? (t->mask+1)*2 : 1024;
  a = calloc(nSlot, sizeof(uint32_t));
  if( a==0 ) return -1;
  for(i=0; i<t->n; i++){
    h = strHash(t->name[i], strlen(t->name[i])) & (nSlot-1);
    while( a[h] ) h = (h+1) & (nSlot-1);
    a[h] = i+1;
  }
  free(t->slot);
  t->slot = a;
  t->mask = nSlot-1;
  return 0;
}

int64_t strtab_intern(strtab *t, const char *z, size_t n){
  uint32_t h;
  char *copy;
  if( grow(t) ) return -1;
  for(h = strHash(z, n) & t->mask; t->slot[h]; h = (h+1) & t->mask){
    const char *x = t->name[t->slot[h]-1];
    if( strncmp(x, z, n)==0 && x[n]==0 ) return t->slot[h]-1;
  }
  if( t->n>=(1u<<31)-1 ) return -1;
  if( t->n==t->cap ){
    uint32_t nNew = t->cap ? t->cap*2 : 256;
    char **a = realloc(t->name, nNew*sizeof(char*));
    if( a==0 ) return -1;
    t->name = a;
    t->cap = nNew;
  }
  if( (copy = malloc(n+1))==0 ) return -1;
  memcpy(copy, z, n);
  copy[n] = 0;
  t->name[t->n] = copy;
  t->slot[h] = ++t->n;
  return t->n-1;
}

void strtab_clear(strtab *t){
  uint32_t i;
  for(i=0; i<t->n; i++) free(t->name[i]);
  free(t->name);
  free(t->slot);
  memset(t, 0, sizeof(*t));
}
