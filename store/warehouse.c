/*
** warehouse.c -- opening and closing a warehouse, and its folder layout:
**
**   DIR/fntrace-warehouse        marker: "fntrace warehouse, format 1"
**   DIR/catalog/vNNNNNNNNNNNNNNNNNNNN   one file per snapshot, published by link()
**   DIR/catalog/HEAD             the newest id known (a hint; readers probe past it)
**   DIR/metadata/NAME.fnman      manifests
**   DIR/data/TABLE/PART/NAME.fnseg  segments; PART from fnt_partition_dir()
**   DIR/tmp/                     files being written; never read
*/
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>
#include <unistd.h>

#include "internal.h"

char *fnt_path_join(const fnt_store *st, const char *rel){
  size_t a = strlen(st->dir), b = strlen(rel);
  char *p = fnt_malloc(a + b + 2);
  if( p==0 ) return 0;
  memcpy(p, st->dir, a);
  p[a] = '/';
  memcpy(p+a+1, rel, b+1);
  return p;
}

/* Bytes kept as they are in a folder name; everything else is %XX.  '.' is
** escaped too, so no name can be "." or ".."; a long value is cut and its
** hash appended, so a name stays under NAME_MAX. */
static int keepByte(unsigned char c){
  return (c>='a' && c<='z') || (c>='A' && c<='Z') || (c>='0' && c<='9')
      || c=='-' || c=='_';
}

/* Writes value's folder name at out (room for partDirMax(strlen(value))
** bytes) and returns its length. */
#define partDirMax(n) (3*(n) + 2 + 24)
static size_t partDirInto(char *out, const char *value){
  static const char hex[] = "0123456789abcdef";
  size_t i, n = strlen(value), o = 0;
  out[o++] = 'p';                 /* never empty, never starts with '.' */
  out[o++] = '=';
  for(i=0; i<n && o<100; i++){
    unsigned char c = (unsigned char)value[i];
    if( keepByte(c) ){
      out[o++] = (char)c;
    }else{
      out[o++] = '%';
      out[o++] = hex[c>>4];
      out[o++] = hex[c&15];
    }
  }
  if( i<n ){
    o += (size_t)snprintf(out+o, 24, "~%016llx",
                          (unsigned long long)fnt_hash(value, n));
  }
  out[o] = 0;
  return o;
}

char *fnt_partition_dir(const char *value){
  char *out = fnt_malloc(partDirMax(strlen(value)));
  if( out ) partDirInto(out, value);
  return out;
}

/* One allocation, no printf: manifests derive a folder for every entry
** they decode. */
char *fnt_partition_path(fnt_table t, const char *value, const char *name){
  const char *table = fnt_table_name(t);
  size_t nt = strlen(table), nn = name ? strlen(name)+1 : 0, o;
  char *out = fnt_malloc(sizeof(FNT_DIR_DATA) + nt + 1 + partDirMax(strlen(value)) + nn);
  if( out==0 ) return 0;
  memcpy(out, FNT_DIR_DATA "/", sizeof(FNT_DIR_DATA));
  o = sizeof(FNT_DIR_DATA);
  memcpy(out+o, table, nt);
  o += nt;
  out[o++] = '/';
  o += partDirInto(out+o, value);
  if( name ){
    out[o++] = '/';
    memcpy(out+o, name, nn);      /* with its terminator */
  }
  return out;
}

char *fnt_partition_folder(fnt_table t, const char *value){
  return fnt_partition_path(t, value, 0);
}

const char *fnt_entry_partition(int table, const char *run_id, const char *repo){
  return table==FNT_TABLE_EVENTS || table==FNT_TABLE_CALLS ? run_id : repo;
}

void fnt_random_name(char out[33]){
  static const char hex[] = "0123456789abcdef";
  static _Atomic uint64_t counter;   /* filing names files on two threads */
  uint8_t r[16];
  int i;
  if( getrandom(r, sizeof(r), 0)!=(ssize_t)sizeof(r) ){
    /* No entropy: time and a counter still make names unique per process;
    ** the pid keeps processes apart. */
    struct timespec ts;
    uint64_t a, b;
    clock_gettime(CLOCK_REALTIME, &ts);
    a = (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
    b = ((uint64_t)getpid() << 32) ^ ++counter;
    memcpy(r, &a, 8);
    memcpy(r+8, &b, 8);
  }
  for(i=0; i<16; i++){
    out[2*i] = hex[r[i]>>4];
    out[2*i+1] = hex[r[i]&15];
  }
  out[32] = 0;
}

int64_t fnt_now_micros(void){
  struct timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  return (int64_t)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

static const char markerText[] = "fntrace warehouse, format 1\n";

static const char *const subdirs[] = {
  FNT_DIR_CATALOG, FNT_DIR_METADATA, FNT_DIR_DATA, FNT_DIR_TMP
};
#define NSUBDIRS (sizeof(subdirs)/sizeof(subdirs[0]))

/* 1 when `dir` holds something other than the warehouse's own subfolders
** (which a creation that crashed before its marker leaves), 0 when it is
** absent or holds nothing else, -1 on error. */
static int holdsOtherFiles(const char *dir){
  DIR *d = opendir(dir);
  struct dirent *de;
  int other = 0;
  size_t i;
  if( d==0 ) return errno==ENOENT ? 0 : -1;
  while( !other && (de = readdir(d))!=0 ){
    if( strcmp(de->d_name, ".")==0 || strcmp(de->d_name, "..")==0 ) continue;
    /* The marker too: another process may have just made the warehouse
    ** (concurrent filers of a new one); writing it again is harmless. */
    other = strcmp(de->d_name, FNT_MARKER)!=0;
    for(i=0; i<NSUBDIRS; i++) if( strcmp(de->d_name, subdirs[i])==0 ) other = 0;
  }
  closedir(d);
  return other;
}

int fnt_open(const char *dir, int flags, fnt_store **out){
  fnt_store *st;
  char *marker = 0, *sub = 0;
  int rc = FNT_OK, exists, other;
  size_t i;

  if( out==0 ) return FNT_E_MISUSE;
  *out = 0;
  if( dir==0 || dir[0]==0 ) return FNT_E_MISUSE;
  st = fnt_calloc(1, sizeof(*st));
  if( st==0 ) return FNT_E_NOMEM;
  st->dir = fnt_strdup(dir);
  if( st->dir==0 ){ fnt_free(st); return FNT_E_NOMEM; }
  st->cache_budget = FNT_CACHE_BUDGET_DEFAULT;
  st->segment_files = FNT_SEGMENT_CACHE_FILES;
  st->segment_budget = FNT_SEGMENT_CACHE_BYTES;
  st->threads = fnt_threads_wanted(flags);
  *out = st;

  marker = fnt_path_join(st, FNT_MARKER);
  if( marker==0 ) return fnt_err(st, FNT_E_NOMEM, "out of memory");
  exists = fnt_io_exists(marker);
  if( exists<0 ){
    rc = fnt_err(st, FNT_E_IO, "%s: %s", marker, strerror(errno));
    goto done;
  }
  if( !exists ){
    if( (flags & FNT_OPEN_CREATE)==0 ){
      int folder = fnt_io_exists(dir);
      rc = folder==0
         ? fnt_err(st, FNT_E_NOTFOUND, "%s: not a fntrace warehouse (no such "
                   "folder)", dir)
         : fnt_err(st, FNT_E_NOTFOUND, "%s: not a fntrace warehouse (no %s)",
                   dir, FNT_MARKER);
      goto done;
    }
    /* A typo in a path must not turn a folder of other things into a
    ** warehouse: only an absent or empty folder becomes one. */
    other = holdsOtherFiles(dir);
    if( other ){
      rc = other<0 ? fnt_err(st, FNT_E_IO, "%s: %s", dir, strerror(errno))
         : fnt_err(st, FNT_E_NOTFOUND, "%s: not a fntrace warehouse (no %s) "
                   "and not empty: a warehouse is made only in an absent or "
                   "empty folder", dir, FNT_MARKER);
      goto done;
    }
    if( fnt_io_mkdirs(dir)<0 ){
      rc = fnt_err(st, errno==ENOMEM ? FNT_E_NOMEM : FNT_E_IO,
                   "%s: cannot create: %s", dir, strerror(errno));
      goto done;
    }
  }
  for(i=0; i<NSUBDIRS; i++){
    sub = fnt_path_join(st, subdirs[i]);
    if( sub==0 ){ rc = fnt_err(st, FNT_E_NOMEM, "out of memory"); goto done; }
    if( fnt_io_mkdirs(sub)<0 ){
      rc = fnt_err(st, errno==ENOMEM ? FNT_E_NOMEM : FNT_E_IO,
                   "%s: cannot create: %s", sub, strerror(errno));
      goto done;
    }
    fnt_free(sub);
    sub = 0;
  }
  if( !exists ){
    /* Written last: a folder with the marker has every subfolder. */
    if( fnt_io_write_file(marker, markerText, sizeof(markerText)-1, 0)
     || fnt_io_fsync_dir(dir) ){
      rc = fnt_err(st, FNT_E_IO, "%s: cannot write: %s", marker, strerror(errno));
      goto done;
    }
  }
done:
  fnt_free(marker);
  fnt_free(sub);
  return rc;
}

void fnt_close(fnt_store *st){
  if( st==0 ) return;
  fnt_store_caches_free(st);
  fnt_flame_keep_free(st);
  fnt_scan_keep_free(st);
  fnt_block_ctx_free(&st->zdctx);
  fnt_free(st->dir);
  fnt_free(st);
}

const char *fnt_path(const fnt_store *st){
  return st ? st->dir : 0;
}
