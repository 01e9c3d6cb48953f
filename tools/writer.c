/*
** writer.c -- an export's output written on its own thread (writer.h).
**
** A queue of filled buffers between the formatting thread and the writer
** thread, under one mutex: the writer takes the oldest, writes it with the
** lock released, and gives it back to the free list.  WRITER_NBUF buffers
** bound the memory and how far formatting may run ahead.  After the first
** failed write the writer drops what is queued (so the formatter never
** waits on a dead output) and keeps the errno for writer_close's message.
** A stdio stream (fopencookie) copies what is printed to it into a buffer
** and puts the buffer when full.
*/
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fnt.h"
#include "writer.h"

#define WRITER_NBUF 4              /* buffers: 1 being filled, 3 queued */
#define WRITER_NJOB WRITER_NBUF    /* queued buffers */

typedef struct writer_job {
  char *buf;                       /* a buffer to write */
  size_t n;
} writer_job;

struct writer {
  const char *cmd;
  char *path;                      /* the output's name (NULL: stdout) */
  char *tmp;                       /* its temporary name, or NULL */
  int fd;
  pthread_t thread;
  int started;
  pthread_mutex_t mu;
  pthread_cond_t has_job, has_room;  /* a job queued; a job or buffer freed */
  writer_job job[WRITER_NJOB];
  size_t head, njob;
  char *bufs[WRITER_NBUF];         /* every buffer, freed at the end */
  char *free[WRITER_NBUF];
  size_t nfree;
  FILE *stream;                    /* writer_stream's, or NULL */
  char *sbuf;                      /* the buffer the stream fills */
  size_t sn;                       /* bytes in it */
  int closing;
  int err;                         /* errno of the first failure; 0 none */
};

/* ------------------------------------------------------------ the writes */

static int writeAll(int fd, const char *p, size_t n){
  while( n>0 ){
    ssize_t k = write(fd, p, n>(size_t)SSIZE_MAX ? (size_t)SSIZE_MAX : n);
    if( k<0 && errno==EINTR ) continue;
    if( k<0 ) return errno;
    if( k==0 ) return EIO;         /* a write that takes nothing: no progress */
    p += k;
    n -= (size_t)k;
  }
  return 0;
}

static void *writerMain(void *arg){
  writer *w = arg;
  pthread_mutex_lock(&w->mu);
  for(;;){
    writer_job j;
    int rc = 0;
    while( w->njob==0 && !w->closing ) pthread_cond_wait(&w->has_job, &w->mu);
    if( w->njob==0 ) break;
    j = w->job[w->head];
    pthread_mutex_unlock(&w->mu);
    if( w->err==0 ){
      rc = writeAll(w->fd, j.buf, j.n);
    }
    pthread_mutex_lock(&w->mu);
    if( rc && w->err==0 ) w->err = rc;
    w->free[w->nfree++] = j.buf;
    w->head = (w->head+1) % WRITER_NJOB;
    w->njob--;
    pthread_cond_signal(&w->has_room);
  }
  pthread_mutex_unlock(&w->mu);
  return 0;
}

/* Queues j, waiting for room (the lock held). */
static void queueJob(writer *w, writer_job j){
  while( w->njob==WRITER_NJOB ) pthread_cond_wait(&w->has_room, &w->mu);
  w->job[(w->head+w->njob) % WRITER_NJOB] = j;
  w->njob++;
  pthread_cond_signal(&w->has_job);
}

/* ------------------------------------------------------------ the API */

/* The path itself, truncated.  @return 0 or an errno. */
static int openInPlace(writer *w){
  w->fd = open(w->path, O_WRONLY|O_CREAT|O_TRUNC|O_CLOEXEC, 0666);
  return w->fd<0 ? errno : 0;
}

/* Opens w->fd for w->path: a temporary file beside a regular file (or a
** new name), the path itself for anything else -- or for a file that may
** be written where no file may be made (a read-only folder), as before
** there was a temporary file.  @return 0 or an errno. */
static int openOutput(writer *w){
  struct stat sb;
  int exists = stat(w->path, &sb)==0;
  char *real;
  mode_t mask;
  if( w->path[0]==0 ) return ENOENT;
  if( exists && !S_ISREG(sb.st_mode) ) return openInPlace(w);
  /* A symlink's target is what gets replaced, as writing through it would. */
  if( exists && (real = realpath(w->path, 0))!=0 ){
    free(w->path);
    w->path = real;
  }
  if( asprintf(&w->tmp, "%s.fnt-XXXXXX", w->path)<0 ){ w->tmp = 0; return ENOMEM; }
  w->fd = mkostemp(w->tmp, O_CLOEXEC);
  if( w->fd<0 ){
    int e = errno;
    free(w->tmp);
    w->tmp = 0;
    return exists && (e==EACCES || e==EPERM || e==EROFS) ? openInPlace(w) : e;
  }
  /* mkstemp's 0600 would narrow what fopen(path, "w") gives: the old
  ** file's mode, or 0666 less the umask for a new one. */
  mask = umask(0);
  umask(mask);
  if( fchmod(w->fd, exists ? sb.st_mode & 07777 : 0666 & ~mask) ){
    int e = errno;
    close(w->fd);
    w->fd = -1;
    unlink(w->tmp);
    return e;
  }
  return 0;
}

static void writerFree(writer *w){
  int i;
  for(i=0; i<WRITER_NBUF; i++) free(w->bufs[i]);
  free(w->path);
  free(w->tmp);
  free(w);
}

writer *writer_open(const char *cmd, const char *path){
  writer *w = calloc(1, sizeof(*w));
  int i, rc = 0;
  if( w==0 ){ cli_error(cmd, "out of memory"); return 0; }
  w->cmd = cmd;
  w->fd = -1;
  for(i=0; i<WRITER_NBUF; i++){
    if( (w->bufs[i] = malloc(WRITER_BUF))==0 ){ cli_error(cmd, "out of memory"); writerFree(w); return 0; }
    w->free[w->nfree++] = w->bufs[i];
  }
  if( path==0 || strcmp(path, "-")==0 ){
    w->fd = STDOUT_FILENO;
  }else if( (w->path = strdup(path))==0 ){
    rc = ENOMEM;
  }else{
    rc = openOutput(w);
  }
  if( rc ){
    cli_error(cmd, "%s: cannot write: %s", path, strerror(rc));
    writerFree(w);
    return 0;
  }
  pthread_mutex_init(&w->mu, 0);
  pthread_cond_init(&w->has_job, 0);
  pthread_cond_init(&w->has_room, 0);
  if( (rc = pthread_create(&w->thread, 0, writerMain, w))!=0 ){
    cli_error(cmd, "%s: cannot start the writer thread: %s", w->path ? w->path : "stdout",
              strerror(rc));
    w->err = rc;
    writer_close(w, 1);
    return 0;
  }
  w->started = 1;
  return w;
}

char *writer_buffer(writer *w){
  char *b;
  pthread_mutex_lock(&w->mu);
  while( w->nfree==0 ) pthread_cond_wait(&w->has_room, &w->mu);
  b = w->free[--w->nfree];
  pthread_mutex_unlock(&w->mu);
  return b;
}

/* Queues the first n bytes of buf, a buffer of w's. */
static void queueBuffer(writer *w, char *buf, size_t n){
  writer_job j;
  j.buf = buf;
  j.n = n;
  pthread_mutex_lock(&w->mu);
  queueJob(w, j);
  pthread_mutex_unlock(&w->mu);
}

char *writer_put(writer *w, char *buf, size_t n){
  if( n==0 ) return buf;
  queueBuffer(w, buf, n);
  return writer_buffer(w);
}

/* The stream's write: it takes every byte (a failed write is the
** writer's to report, at writer_close). */
static ssize_t streamWrite(void *cookie, const char *p, size_t n){
  writer *w = cookie;
  size_t left = n;
  while( left>0 ){
    size_t k = WRITER_BUF - w->sn < left ? WRITER_BUF - w->sn : left;
    memcpy(w->sbuf + w->sn, p, k);
    w->sn += k;
    p += k;
    left -= k;
    if( w->sn==WRITER_BUF ){
      w->sbuf = writer_put(w, w->sbuf, w->sn);
      w->sn = 0;
    }
  }
  return (ssize_t)n;
}

FILE *writer_stream(writer *w){
  static const cookie_io_functions_t io = { .write = streamWrite };
  if( w->stream ) return w->stream;
  w->sbuf = writer_buffer(w);
  w->sn = 0;
  w->stream = fopencookie(w, "w", io);
  if( w->stream==0 ) cli_error(w->cmd, "out of memory");
  return w->stream;
}

int writer_failed(writer *w){
  int e;
  pthread_mutex_lock(&w->mu);
  e = w->err;
  pthread_mutex_unlock(&w->mu);
  return e!=0;
}

int writer_close(writer *w, int status){
  const char *name = w->path ? w->path : "stdout";
  int err, serr = 0, ferr = 0;
  /* The stream's last bytes: its own buffer (fclose), then sbuf's. */
  if( w->stream ){
    if( fclose(w->stream) ) serr = errno;
    if( w->sn>0 ) queueBuffer(w, w->sbuf, w->sn);
  }
  if( w->started ){
    pthread_mutex_lock(&w->mu);
    w->closing = 1;
    pthread_cond_signal(&w->has_job);
    pthread_mutex_unlock(&w->mu);
    pthread_join(w->thread, 0);
  }
  pthread_mutex_destroy(&w->mu);
  pthread_cond_destroy(&w->has_job);
  pthread_cond_destroy(&w->has_room);
  err = w->err ? w->err : serr;
  /* The bytes reach the disk before the rename publishes them: renamed
  ** first, a power loss could leave the name on an empty file. */
  if( w->tmp && err==0 && status==0 && fsync(w->fd) ) ferr = errno;
  if( w->fd!=STDOUT_FILENO && w->fd>=0 && close(w->fd) && err==0 ) err = errno;
  if( err==0 && ferr ){
    err = ferr;
    cli_error(w->cmd, "%s: write failed: %s", name, strerror(err));
  }else if( err && w->started ){
    cli_error(w->cmd, "%s: write failed: %s", name, strerror(err));
  }
  if( err ) status = 1;
  if( w->tmp && status==0 && rename(w->tmp, w->path) ){
    cli_error(w->cmd, "%s: cannot rename %s to it: %s", name, w->tmp, strerror(errno));
    status = 1;
  }
  if( w->tmp && status!=0 ) unlink(w->tmp);
  writerFree(w);
  return status;
}
