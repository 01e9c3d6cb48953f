/*
** test_store_threads.c -- filing with and without its worker thread.
**
** fnt_file_chunk encodes a chunk's events on a second thread while it
** derives the calls (store/worker.c).  The same chunks filed into two
** warehouses, one opened with FNT_OPEN_NO_THREADS, must give byte for byte
** the same segment files (events, run rows, calls), chunks in order and
** out of order alike, calls files small enough for one thread and large
** enough that segment_write.c encodes their row groups in two parts on two
** threads.  An allocator that notes the thread of every
** allocation shows that the default handle does allocate on another
** thread, and that FNT_OPEN_NO_THREADS and FNT_THREADS=0 never do.
*/
#include <dirent.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "fnt_store.h"
#include "util_test.h"

/* ---- an allocator that notes allocations off the main thread */
static pthread_t g_main;
static _Atomic long g_offMain;

static void noteThread(void){
  if( !pthread_equal(pthread_self(), g_main) ) g_offMain++;
}
static void *tMalloc(void *o, size_t n){ (void)o; noteThread(); return malloc(n ? n : 1); }
static void *tRealloc(void *o, void *p, size_t n){ (void)o; noteThread(); return realloc(p, n ? n : 1); }
static void tFree(void *o, void *p){ (void)o; free(p); }
static const fnt_allocator g_alloc = { tMalloc, tRealloc, tFree, 0 };

/* ---- the segment files of a warehouse, as sorted (size, hash) pairs */
typedef struct fileset { uint64_t *h; size_t n, cap; } fileset;

static uint64_t hashFile(const char *path, uint64_t *size){
  FILE *f = fopen(path, "rb");
  uint64_t h = 1469598103934665603ull;
  int ch;
  *size = 0;
  if( f==0 ) return 0;
  while( (ch = getc(f))!=EOF ){ h = (h ^ (uint64_t)ch) * 1099511628211ull; (*size)++; }
  fclose(f);
  return h;
}

static void collect(const char *dir, fileset *fs){
  DIR *d = opendir(dir);
  struct dirent *e;
  if( d==0 ) return;
  while( (e = readdir(d))!=0 ){
    char path[4096];
    struct stat sb;
    if( e->d_name[0]=='.' ) continue;
    snprintf(path, sizeof(path), "%s/%s", dir, e->d_name);
    if( stat(path, &sb) ) continue;
    if( S_ISDIR(sb.st_mode) ){
      collect(path, fs);
    }else{
      uint64_t size, h = hashFile(path, &size);
      if( fs->n+2>fs->cap ){
        fs->cap = fs->cap ? fs->cap*2 : 64;
        fs->h = realloc(fs->h, fs->cap*sizeof(uint64_t));
      }
      fs->h[fs->n++] = h ^ (size<<1);
    }
  }
  closedir(d);
}

static int cmpU64(const void *a, const void *b){
  uint64_t x = *(const uint64_t*)a, y = *(const uint64_t*)b;
  return x<y ? -1 : x>y;
}

/* Files chunks in the order given (a late one re-derives the calls). */
static void fileChunks(const char *dir, int flags, const int64_t *order, int n){
  fnt_store *st = 0;
  int i;
  CHECK_RC(st, fnt_open(dir, FNT_OPEN_CREATE | flags, &st), FNT_OK);
  for(i=0; i<n; i++){
    t_chunk t;
    int64_t k = order[i];
    t_chunk_make(&t, "acme/widget", "r1", k, 5, 150000, 6, (uint64_t)k*150000,
                 7 + (unsigned)k);
    CHECK_RC(st, fnt_file_chunk(st, &t.c), 1);
    t_chunk_free(&t);
  }
  /* A second run, its chunks in order, each of many row groups. */
  t_file_run(st, "acme/widget", "r2", 2, 200000, 3, 40);
  fnt_close(st);
}

static void compareWarehouses(const char *a, const char *b){
  char da[4096], db[4096];
  fileset fa = {0}, fb = {0};
  size_t i;
  snprintf(da, sizeof(da), "%s/data", a);
  snprintf(db, sizeof(db), "%s/data", b);
  collect(da, &fa);
  collect(db, &fb);
  CHECK(fa.n>=5+2+2);
  CHECK_EQ_INT(fa.n, fb.n);
  qsort(fa.h, fa.n, sizeof(uint64_t), cmpU64);
  qsort(fb.h, fb.n, sizeof(uint64_t), cmpU64);
  for(i=0; i<fa.n && i<fb.n; i++){
    if( fa.h[i]!=fb.h[i] ){
      fprintf(stderr, "segment files differ between %s and %s\n", a, b);
      t_failures++;
      break;
    }
  }
  free(fa.h);
  free(fb.h);
}

int main(void){
  static const int64_t inOrder[] = {0, 1, 2, 3, 4};
  static const int64_t late[] = {0, 2, 4, 1, 3};
  const char *d1 = t_scratch_dir("threads_off");
  const char *d2 = t_scratch_dir("threads_on");
  const char *d3 = t_scratch_dir("threads_env");
  int pass;

  g_main = pthread_self();
  fnt_set_allocator(&g_alloc);
  for(pass=0; pass<2; pass++){
    const int64_t *order = pass ? late : inOrder;
    t_remove_tree(d1); t_remove_tree(d2); t_remove_tree(d3);

    g_offMain = 0;
    fileChunks(d1, FNT_OPEN_NO_THREADS, order, 5);
    CHECK_EQ_INT(g_offMain, 0);

    g_offMain = 0;
    unsetenv("FNT_THREADS");
    fileChunks(d2, 0, order, 5);
    CHECK(g_offMain>0);               /* the events were encoded elsewhere */

    g_offMain = 0;
    setenv("FNT_THREADS", "0", 1);
    fileChunks(d3, 0, order, 5);
    unsetenv("FNT_THREADS");
    CHECK_EQ_INT(g_offMain, 0);

    compareWarehouses(d1, d2);
    compareWarehouses(d1, d3);
  }
  t_remove_tree(d1); t_remove_tree(d2); t_remove_tree(d3);
  fnt_set_allocator(0);
  return t_finish("test_store_threads");
}
