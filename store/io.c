/*
** io.c -- every system call of the store that touches the disk.
**
** Kept in one small layer so that tests can inject faults: fail the Nth
** write, fsync, link or rename with EIO or ENOSPC, write half a buffer first,
** or _exit() at that instant to simulate a crash.  The fault can also be set
** from the environment, FNT_FAULT="ops=write|fsync,nth=3,err=ENOSPC,crash=1",
** so that a test can kill a separate process at an exact step.
*/
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "internal.h"

static fnt_io_fault g_fault;
static long g_count;
static int g_env_read;

/* The power-loss journal: what was written or named, and whether it has
** been made durable since (file data by fsync of the file, a name by fsync
** of its folder).  Kept only while a power-loss fault is set. */
typedef struct io_record {
  char *path;
  int is_name;         /* 0: the file's data, 1: its name in its folder */
  int durable;
} io_record;
static io_record *g_journal;
static size_t g_nJournal, g_capJournal;

static void journalAdd(const char *path, int isName){
  io_record *r;
  if( !g_fault.power_loss ) return;
  if( g_nJournal==g_capJournal ){
    size_t cap = g_capJournal ? g_capJournal*2 : 64;
    io_record *a = realloc(g_journal, cap*sizeof(*a));  /* test-only: not */
    if( a==0 ) return;                                  /* the store's hook */
    g_journal = a;
    g_capJournal = cap;
  }
  r = &g_journal[g_nJournal++];
  r->path = strdup(path);
  r->is_name = isName;
  r->durable = 0;
}

/* fsync of a file (isName 0) or of a folder (the names in it). */
static void journalSync(const char *path, int isDir){
  size_t i, n = strlen(path);
  for(i=0; i<g_nJournal; i++){
    io_record *r = &g_journal[i];
    if( r->path==0 ) continue;
    if( !isDir ){
      if( !r->is_name && strcmp(r->path, path)==0 ) r->durable = 1;
    }else if( r->is_name && strncmp(r->path, path, n)==0 && r->path[n]=='/'
           && strchr(r->path+n+1, '/')==0 ){
      r->durable = 1;
    }
  }
}

/* The power goes: unsynced data is cut to half, unsynced names vanish
** (a folder's with everything under it). */
static void powerLoss(void){
  size_t i;
  for(i=0; i<g_nJournal; i++){
    io_record *r = &g_journal[i];
    struct stat sb;
    if( r->path && !r->durable && !r->is_name && stat(r->path, &sb)==0 ){
      if( truncate(r->path, sb.st_size/2) ){}
    }
  }
  for(i=g_nJournal; i>0; i--){
    io_record *r = &g_journal[i-1];
    if( r->path && !r->durable && r->is_name ){
      char cmd[4200];
      snprintf(cmd, sizeof(cmd), "rm -rf '%s'", r->path);
      if( system(cmd) ){}
    }
  }
}

static void readEnvFault(void){
  const char *e;
  g_env_read = 1;
  e = getenv("FNT_FAULT");
  if( e==0 || e[0]==0 ) return;
  memset(&g_fault, 0, sizeof(g_fault));
  g_fault.err = EIO;
  if( strstr(e, "open") )   g_fault.ops |= FNT_IO_OPEN;
  if( strstr(e, "write") )  g_fault.ops |= FNT_IO_WRITE;
  if( strstr(e, "fsync") )  g_fault.ops |= FNT_IO_FSYNC;
  if( strstr(e, "link") )   g_fault.ops |= FNT_IO_LINK;
  if( strstr(e, "rename") ) g_fault.ops |= FNT_IO_RENAME;
  if( strstr(e, "mkdir") )  g_fault.ops |= FNT_IO_MKDIR;
  if( strstr(e, "nth=") )   g_fault.nth = atol(strstr(e, "nth=")+4);
  if( strstr(e, "ENOSPC") ) g_fault.err = ENOSPC;
  if( strstr(e, "short=1") ) g_fault.short_write = 1;
  if( strstr(e, "crash=1") ) g_fault.crash = 1;
  if( strstr(e, "power=1") ) g_fault.power_loss = 1;
}

void fnt_io_set_fault(const fnt_io_fault *f){
  size_t i;
  g_env_read = 1;
  g_count = 0;
  for(i=0; i<g_nJournal; i++) free(g_journal[i].path);
  g_nJournal = 0;
  if( f ) g_fault = *f; else memset(&g_fault, 0, sizeof(g_fault));
}

long fnt_io_count(void){ return __atomic_load_n(&g_count, __ATOMIC_RELAXED); }

/* Returns 1 when this call must fail (errno set), after counting it. */
static int faultHere(unsigned op){
  long k;
  if( !g_env_read ) readEnvFault();
  if( (g_fault.ops & op)==0 ) return 0;
  /* Atomic: `fnt check` reads on two threads, each with a handle. */
  k = __atomic_add_fetch(&g_count, 1, __ATOMIC_RELAXED);
  if( g_fault.nth<=0 || k!=g_fault.nth ) return 0;
  if( g_fault.stall ){ g_fault.stall(); return 0; }
  if( g_fault.power_loss ) powerLoss();
  if( g_fault.crash || g_fault.power_loss ) _exit(99);
  errno = g_fault.err ? g_fault.err : EIO;
  return 1;
}

static int writeAll(int fd, const uint8_t *p, size_t n){
  if( faultHere(FNT_IO_WRITE) ){
    int e = errno;
    if( g_fault.short_write && n>1 ){
      ssize_t w = write(fd, p, n/2);
      (void)w;
    }
    errno = e;
    return -1;
  }
  while( n>0 ){
    ssize_t w = write(fd, p, n);
    if( w<0 ){
      if( errno==EINTR ) continue;
      return -1;
    }
    p += w;
    n -= (size_t)w;
  }
  return 0;
}

/* fdatasync: the data and what is needed to read it back (the size); the
** timestamps that fsync would also flush are of no use here. */
static int syncFd(int fd){
  if( faultHere(FNT_IO_FSYNC) ) return -1;
  return fdatasync(fd);
}

int fnt_io_write_file(const char *path, const void *data, size_t n, int excl){
  int fd, e;
  if( faultHere(FNT_IO_OPEN) ) return -1;
  fd = open(path, O_WRONLY|O_CREAT|O_CLOEXEC|(excl ? O_EXCL : O_TRUNC), 0644);
  if( fd<0 ) return -1;
  journalAdd(path, 1);
  journalAdd(path, 0);
  if( writeAll(fd, data, n) || syncFd(fd) ){
    e = errno;
    close(fd);
    errno = e;
    return -1;
  }
  journalSync(path, 0);
  return close(fd);
}

int fnt_io_open_read(const char *path){
  if( faultHere(FNT_IO_OPEN) ) return -1;
  return open(path, O_RDONLY|O_CLOEXEC);
}

int fnt_io_pread(int fd, void *buf, size_t n, uint64_t off){
  uint8_t *p = buf;
  if( faultHere(FNT_IO_READ) ) return -1;
  while( n>0 ){
    ssize_t r = pread(fd, p, n, (off_t)off);
    if( r<0 ){
      if( errno==EINTR ) continue;
      return -1;
    }
    if( r==0 ){ errno = 0; return -1; }   /* short file */
    p += r;
    n -= (size_t)r;
    off += (uint64_t)r;
  }
  return 0;
}

int fnt_io_file_size(int fd, uint64_t *size){
  struct stat sb;
  if( fstat(fd, &sb) ) return -1;
  *size = (uint64_t)sb.st_size;
  return 0;
}

void fnt_io_close(int fd){
  if( fd>=0 ) close(fd);
}

int fnt_io_read_file(const char *path, uint8_t **data, size_t *n){
  uint64_t size;
  uint8_t *buf;
  int fd = fnt_io_open_read(path), e;
  *data = 0;
  *n = 0;
  if( fd<0 ) return -1;
  if( fnt_io_file_size(fd, &size) ) goto fail;
  buf = fnt_malloc((size_t)size + 1);
  if( buf==0 ){ errno = ENOMEM; goto fail; }
  if( size>0 && fnt_io_pread(fd, buf, (size_t)size, 0) ){
    e = errno;
    fnt_free(buf);
    errno = e;
    goto fail;
  }
  close(fd);
  *data = buf;
  *n = (size_t)size;
  return 0;
fail:
  e = errno;
  close(fd);
  errno = e;
  return -1;
}

int fnt_io_fsync_dir(const char *dir){
  int fd, rc, e;
  fd = open(dir, O_RDONLY|O_DIRECTORY|O_CLOEXEC);
  if( fd<0 ) return -1;
  rc = faultHere(FNT_IO_FSYNC) ? -1 : fsync(fd);   /* a folder's entries */
  e = errno;
  close(fd);
  if( rc==0 ) journalSync(dir, 1);
  errno = e;
  return rc;
}

int fnt_io_link(const char *from, const char *to){
  if( faultHere(FNT_IO_LINK) ) return -1;
  if( link(from, to) ) return -1;
  journalAdd(to, 1);
  return 0;
}

int fnt_io_rename(const char *from, const char *to){
  if( faultHere(FNT_IO_RENAME) ) return -1;
  if( rename(from, to) ) return -1;
  journalAdd(to, 1);
  return 0;
}

int fnt_io_unlink(const char *path){
  if( faultHere(FNT_IO_UNLINK) ) return -1;
  return unlink(path);
}

int fnt_io_mkdirs(const char *path){
  char *tmp;
  size_t i, n;
  int made = 0;
  if( faultHere(FNT_IO_MKDIR) ) return -1;
  n = strlen(path);
  tmp = fnt_malloc(n+1);
  if( tmp==0 ){ errno = ENOMEM; return -1; }
  memcpy(tmp, path, n+1);
  for(i=1; i<=n; i++){
    if( tmp[i]=='/' || tmp[i]==0 ){
      char c = tmp[i];
      tmp[i] = 0;
      if( mkdir(tmp, 0755)==0 ){
        made++;
        journalAdd(tmp, 1);
      }else if( errno!=EEXIST ){
        int e = errno;
        fnt_free(tmp);
        errno = e;
        return -1;
      }
      tmp[i] = c;
    }
  }
  fnt_free(tmp);
  return made;
}

int fnt_io_exists(const char *path){
  struct stat sb;
  if( stat(path, &sb)==0 ) return 1;
  return errno==ENOENT ? 0 : -1;
}

int fnt_io_lock_dir(const char *dir){
  int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC), e;
  if( fd<0 ) return -1;
  while( flock(fd, LOCK_EX) ){
    if( errno==EINTR ) continue;
    e = errno;
    close(fd);
    errno = e;
    return -1;
  }
  return fd;
}

void fnt_io_unlock(int fd){
  if( fd>=0 ) close(fd);             /* closing the fd drops its flock */
}

/* One folder of fnt_io_walk: `name` relative to the folder fd `at`.  A
** warehouse holds a folder per run and table, so a walk opens tens of
** thousands: each relative to its parent (no walk of the whole path) and
** read with getdents64 (opendir adds an fstat), its files' types taken
** from their entries where the file system gives them. */
static int walkFolder(int at, const char *name, const char *rel, unsigned flags,
                      fnt_io_walk_fn fn, void *ctx){
  union { struct dirent64 align; char b[16384]; } buf;
  ssize_t got;
  int rc = 0, fd = openat(at, name, O_RDONLY|O_DIRECTORY|O_CLOEXEC);
  if( fd<0 ) return -1;
  while( rc==0 && (got = getdents64(fd, buf.b, sizeof(buf.b)))>0 ){
    ssize_t off = 0;
    while( rc==0 && off<got ){
      const struct dirent64 *e = (const struct dirent64*)(buf.b + off);
      char child[1200];
      int type = e->d_type, n;
      off += e->d_reclen;
      if( strcmp(e->d_name, ".")==0 || strcmp(e->d_name, "..")==0 ) continue;
      if( e->d_name[0]=='.' && !(flags & FNT_WALK_HIDDEN) ) continue;
      n = snprintf(child, sizeof(child), "%s/%s", rel, e->d_name);
      if( n<0 || (size_t)n>=sizeof(child) ){       /* no store path is as long */
        if( flags & FNT_WALK_ON ) continue;
        errno = ENAMETOOLONG;
        rc = -1;
        break;
      }
      if( type==DT_UNKNOWN ){
        struct stat sb;
        if( fstatat(fd, e->d_name, &sb, AT_SYMLINK_NOFOLLOW) ) continue;  /* gone */
        type = S_ISDIR(sb.st_mode) ? DT_DIR : S_ISREG(sb.st_mode) ? DT_REG : DT_UNKNOWN;
      }
      if( type==DT_DIR ){
        int r = walkFolder(fd, e->d_name, child, flags, fn, ctx);
        /* gone meanwhile: fine; unreadable: the walk stops, or goes on */
        if( r>0 || (r<0 && errno!=ENOENT && !(flags & FNT_WALK_ON)) ) rc = r;
      }else{
        rc = fn(ctx, fd, e->d_name, child, type==DT_REG);
      }
    }
  }
  if( rc==0 && got<0 && !(flags & FNT_WALK_ON) ) rc = -1;
  close(fd);
  return rc;
}

int fnt_io_walk(const char *root, const char *rel, unsigned flags,
                fnt_io_walk_fn fn, void *ctx){
  int rc, at = open(root, O_RDONLY|O_DIRECTORY|O_CLOEXEC);
  if( at<0 ) return -1;
  rc = walkFolder(at, rel, rel, flags, fn, ctx);
  close(at);
  return rc;
}
