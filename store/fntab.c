/*
** fntab.c -- the functions of a run, interned: (symbol, stable_id) pairs to
** dense ids, and their keys (SPEC §5: the stable_id, or "?" followed by the
** symbol) to dense key ids, so the replay and the aggregates work on
** integers and compare no strings per event.
*/
#include <string.h>

#include "calls.h"

/* XXH3: symbols are long (C++ names, stable ids of 100 bytes and more),
** and a run's functions are interned again by every file read. */
static uint32_t strHash(const char *z){
  return (uint32_t)fnt_hash(z, strlen(z));
}

static uint32_t fnHash(const char *symbol, const char *sid){
  uint32_t h = strHash(symbol);
  return sid ? h ^ (strHash(sid)*0x9E3779B1u + 1) : h;
}

static int sameStr(const char *a, const char *b){
  return a==b || (a && b && strcmp(a, b)==0);
}

/* The texts are copied into blocks freed together: a run's thousands of
** functions cost a few allocations, not three each. */
struct fnt_fntab_text {
  struct fnt_fntab_text *next;
  size_t used, cap;
  char z[];
};
#define FNTAB_TEXT_BLOCK 65536

/* A copy of z[0..n) and a NUL in t's blocks; NULL: out of memory. */
static char *textCopy(fnt_fntab *t, const char *z, size_t n){
  struct fnt_fntab_text *b = t->text;
  char *out;
  if( b==0 || b->cap - b->used < n+1 ){
    size_t cap = n+1>FNTAB_TEXT_BLOCK ? n+1 : FNTAB_TEXT_BLOCK;
    b = fnt_malloc(sizeof(*b) + cap);
    if( b==0 ) return 0;
    b->next = t->text;
    b->used = 0;
    b->cap = cap;
    t->text = b;
  }
  out = b->z + b->used;
  memcpy(out, z, n);
  out[n] = 0;
  b->used += n+1;
  return out;
}

void fnt_fntab_clear(fnt_fntab *t){
  while( t->text ){
    struct fnt_fntab_text *b = t->text;
    t->text = b->next;
    fnt_free(b);
  }
  fnt_free(t->fn);
  fnt_free(t->key);
  fnt_free(t->keys);
  fnt_free(t->fnslot);
  fnt_free(t->keyslot);
  memset(t, 0, sizeof(*t));
}

/* Rebuilds an id hash of `n` ids with room for `want` at most half full;
** hashOf(i) rehashes. */
static int rehash(uint32_t **slots, uint32_t *mask, uint32_t n, uint64_t want,
                  uint32_t (*hashOf)(const fnt_fntab*, uint32_t),
                  const fnt_fntab *t){
  uint32_t nNew = 64, i, *a;
  if( want > UINT32_MAX/4 ) return FNT_E_NOMEM;
  while( nNew < 2*want ) nNew *= 2;
  a = fnt_calloc(nNew, sizeof(uint32_t));
  if( a==0 ) return FNT_E_NOMEM;
  for(i=0; i<n; i++){
    uint32_t h = hashOf(t, i) & (nNew-1);
    while( a[h] ) h = (h+1) & (nNew-1);
    a[h] = i+1;
  }
  fnt_free(*slots);
  *slots = a;
  *mask = nNew-1;
  return FNT_OK;
}

static uint32_t fnHashOf(const fnt_fntab *t, uint32_t i){
  return fnHash(t->fn[i].symbol, t->fn[i].stable_id);
}
static uint32_t keyHashOf(const fnt_fntab *t, uint32_t i){
  return strHash(t->keys[i]);
}

/* Room for cap functions, and for cap keys.  @return FNT_OK or
** FNT_E_NOMEM. */
static int growFns(fnt_fntab *t, uint32_t cap){
  fnt_function *a = fnt_realloc(t->fn, (size_t)cap*sizeof(fnt_function));
  uint32_t *b;
  if( a==0 ) return FNT_E_NOMEM;
  t->fn = a;
  b = fnt_realloc(t->key, (size_t)cap*sizeof(uint32_t));
  if( b==0 ) return FNT_E_NOMEM;
  t->key = b;
  t->capfn = cap;
  return FNT_OK;
}
static int growKeys(fnt_fntab *t, uint32_t cap){
  char **a = fnt_realloc(t->keys, (size_t)cap*sizeof(char*));
  if( a==0 ) return FNT_E_NOMEM;
  t->keys = a;
  t->capkey = cap;
  return FNT_OK;
}

/* The capacity to grow cap to for `want`: at least double, so that many
** small reservations (a run's files each naming a few new keys) do not
** copy the arrays each time. */
static uint32_t grownCap(uint32_t cap, uint64_t want){
  uint64_t c = (uint64_t)cap*2 > want ? (uint64_t)cap*2 : want;
  return c > UINT32_MAX/4 ? (uint32_t)want : (uint32_t)c;
}

int fnt_fntab_reserve(fnt_fntab *t, uint32_t n){
  uint64_t want = (uint64_t)t->nfn + n, wantKeys = (uint64_t)t->nkey + n;
  if( want > UINT32_MAX/4 ) return FNT_E_NOMEM;
  if( (want>t->capfn && growFns(t, grownCap(t->capfn, want)))
   || (wantKeys>t->capkey && growKeys(t, grownCap(t->capkey, wantKeys))) ){
    return FNT_E_NOMEM;
  }
  if( (t->fnslot==0 || want*2 > (uint64_t)t->fnmask+1)
   && rehash(&t->fnslot, &t->fnmask, t->nfn, want, fnHashOf, t) ){
    return FNT_E_NOMEM;
  }
  if( (t->keyslot==0 || wantKeys*2 > (uint64_t)t->keymask+1)
   && rehash(&t->keyslot, &t->keymask, t->nkey, wantKeys, keyHashOf, t) ){
    return FNT_E_NOMEM;
  }
  return FNT_OK;
}

/* The key id of key z (n bytes, NUL-terminated), copied when new unless
** `borrow`. */
static int internKey(fnt_fntab *t, const char *z, size_t n, int borrow,
                     uint32_t *id){
  uint32_t h;
  char *key;
  if( t->keyslot==0 && rehash(&t->keyslot, &t->keymask, 0, 0, keyHashOf, t) ){
    return FNT_E_NOMEM;
  }
  h = (uint32_t)fnt_hash(z, n) & t->keymask;
  while( t->keyslot[h] ){
    uint32_t k = t->keyslot[h]-1;
    if( strcmp(t->keys[k], z)==0 ){ *id = k; return FNT_OK; }
    h = (h+1) & t->keymask;
  }
  if( t->nkey==t->capkey && growKeys(t, t->capkey ? t->capkey*2 : 64) ){
    return FNT_E_NOMEM;
  }
  key = borrow ? (char*)z : textCopy(t, z, n);
  if( key==0 ) return FNT_E_NOMEM;
  t->keys[t->nkey] = key;
  t->keyslot[h] = t->nkey+1;
  *id = t->nkey++;
  if( (uint64_t)t->nkey*2 > (uint64_t)t->keymask+1 ){
    return rehash(&t->keyslot, &t->keymask, t->nkey, t->nkey, keyHashOf, t);
  }
  return FNT_OK;
}

static int intern(fnt_fntab *t, const char *symbol, const char *sid,
                  int borrow, uint32_t *id){
  uint32_t h, k;
  fnt_function *f;
  int rc;
  if( symbol==0 ) symbol = "";
  if( sid && sid[0]==0 ) sid = 0;
  if( t->fnslot==0 && rehash(&t->fnslot, &t->fnmask, 0, 0, fnHashOf, t) ) return FNT_E_NOMEM;
  h = fnHash(symbol, sid) & t->fnmask;
  while( t->fnslot[h] ){
    uint32_t i = t->fnslot[h]-1;
    if( strcmp(t->fn[i].symbol, symbol)==0 && sameStr(t->fn[i].stable_id, sid) ){
      *id = i;
      return FNT_OK;
    }
    h = (h+1) & t->fnmask;
  }
  if( t->nfn==UINT32_MAX-1 ) return FNT_E_NOMEM;
  if( t->nfn==t->capfn && growFns(t, t->capfn ? t->capfn*2 : 64) ) return FNT_E_NOMEM;
  if( sid ){
    rc = internKey(t, sid, strlen(sid), borrow, &k);
  }else{
    /* "?" and the symbol, built on the stack unless long */
    size_t n = strlen(symbol);
    char buf[256], *z = n+2<=sizeof(buf) ? buf : fnt_malloc(n+2);
    if( z==0 ) return FNT_E_NOMEM;
    z[0] = '?';
    memcpy(z+1, symbol, n+1);
    rc = internKey(t, z, n+1, 0, &k);
    if( z!=buf ) fnt_free(z);
  }
  if( rc ) return rc;
  /* The texts share the key's copy: a stable_id is its key, and a
  ** symbol without one is its key after the "?". */
  f = &t->fn[t->nfn];
  memset(f, 0, sizeof(*f));
  f->symbol = !sid ? t->keys[k]+1 : borrow ? symbol : textCopy(t, symbol, strlen(symbol));
  f->stable_id = sid ? t->keys[k] : 0;
  if( f->symbol==0 ) return FNT_E_NOMEM;
  t->key[t->nfn] = k;
  t->fnslot[h] = t->nfn+1;
  *id = t->nfn++;
  if( (uint64_t)t->nfn*2 > (uint64_t)t->fnmask+1 ){
    return rehash(&t->fnslot, &t->fnmask, t->nfn, t->nfn, fnHashOf, t);
  }
  return FNT_OK;
}

int fnt_fntab_intern(fnt_fntab *t, const char *symbol, const char *sid,
                     uint32_t *id){
  return intern(t, symbol, sid, 0, id);
}

int fnt_fntab_intern_borrowed(fnt_fntab *t, const char *symbol, const char *sid,
                              uint32_t *id){
  return intern(t, symbol, sid, 1, id);
}

int fnt_fntab_intern_key(fnt_fntab *t, const char *key, uint32_t *id){
  return internKey(t, key, strlen(key), 0, id);
}
