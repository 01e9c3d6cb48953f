/*
** check.c -- `fnt check`: verifies every checksum and every reference of a
** warehouse's current snapshot (with --all, of every retained snapshot).
**
**   fnt check -w ./fnt-warehouse            # exit 0 sound, 1 problems, 2 usage
**
** What is verified, per snapshot: its catalog file (checksum, decodes, its id
** matches its name); each manifest it lists (present, checksum, decodes);
** each segment those list, read once (present, the listed size, footer
** checksum, the table and row count the manifest claims, every column
** chunk of every row group checksummed, decompressed and decoded by the
** table's reader as a query would, a calls file's stacks and level of
** detail parsed).  Problems are printed one per line, naming
** the file.  Files that no retained snapshot references are listed with
** their sizes and where they come from, but are not problems (they are
** never read): left by a failed or crashed commit (anything in tmp/, a
** manifest written for a snapshot that does not list it, a segment no
** manifest lists), listed only by expired snapshots (a manifest written
** for a snapshot older than the oldest retained one, and its segments,
** or a segment older than the oldest retained snapshot: an expired
** snapshot file held its entry (format 3), and `fnt expire` removes them
** once old enough), or not a fntrace file.  A
** commit in progress in another process shows as a failed one.
**
** The store has no public "list what a snapshot references" or "verify a
** segment completely" call, so this file uses the store's internal headers
** (metadata decoding, fnt_segment_verify): a maintenance tool bound to the
** format, like FORMAT.md itself.
*/
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <getopt.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "fnt.h"
#include "segment.h"     /* internal: footers and column chunks */

static const char zCmd[] = "check";

/* A set of relative paths: an array (sorted on demand, for output in
** order) and a hash index of its strings (open addressing), so that adding
** and testing cost the same however many snapshots a warehouse keeps. */
typedef struct path_set {
  char **v;
  size_t n, cap;
  char **slot;
  size_t nslot;
} path_set;

static int cmpStr(const void *a, const void *b){
  return strcmp(*(char *const*)a, *(char *const*)b);
}
static size_t pathHash(const char *p){
  return (size_t)fnt_hash(p, strlen(p));
}
static void noMem(void){ fprintf(stderr, "fnt check: out of memory\n"); exit(1); }
/* The slot of p: where it is, or the empty one where it would go. */
static char **setSlot(const path_set *s, const char *p){
  size_t k = pathHash(p) & (s->nslot-1);
  while( s->slot[k] && strcmp(s->slot[k], p)!=0 ) k = (k+1) & (s->nslot-1);
  return &s->slot[k];
}
static void setAdd(path_set *s, const char *p){
  size_t i;
  if( 2*(s->n+1) > s->nslot ){            /* at most half full */
    free(s->slot);
    s->nslot = s->nslot ? 2*s->nslot : 512;
    s->slot = calloc(s->nslot, sizeof(char*));
    if( s->slot==0 ) noMem();
    for(i=0; i<s->n; i++) *setSlot(s, s->v[i]) = s->v[i];
  }
  if( *setSlot(s, p) ) return;            /* already there */
  if( s->n==s->cap ){
    s->cap = s->cap ? s->cap*2 : 256;
    s->v = realloc(s->v, s->cap*sizeof(char*));
    if( s->v==0 ) noMem();
  }
  s->v[s->n] = strdup(p);
  if( s->v[s->n]==0 ) noMem();
  *setSlot(s, p) = s->v[s->n];
  s->n++;
}
static void setSort(path_set *s){
  if( s->n>1 ) qsort(s->v, s->n, sizeof(char*), cmpStr);
}
static int setHas(const path_set *s, const char *p){
  return s->nslot && *setSlot(s, p)!=0;
}
/* Adds to dst the strings of src that it lacks. */
static void setMerge(path_set *dst, path_set *src){
  size_t i;
  for(i=0; i<src->n; i++){
    if( !setHas(dst, src->v[i]) ) setAdd(dst, src->v[i]);
  }
}

static void setFree(path_set *s){
  size_t i;
  for(i=0; i<s->n; i++) free(s->v[i]);
  free(s->v);
  free(s->slot);
  memset(s, 0, sizeof(*s));
}

/* Snapshot files decoded ahead of their turn: a snapshot lists the
** files of up to 16 snapshots before it as manifests (their own entries,
** until merged), and checking newest first reads those first. */
#define CHECK_EARLY 64

typedef struct checker {
  fnt_store *st;
  const char *dir;
  long problems;
  path_set referenced;       /* every file a decodable snapshot lists */
  path_set verified;         /* segments and manifests already verified */
  path_set seenMan;          /* manifests read (every snapshot repeats most) */
  path_set expired;          /* unreferenced files of expired snapshots */
  fnt_catalog early[CHECK_EARLY];  /* snapshot files read as a newer one's
                             ** manifest, kept for their own turn */
  size_t nEarly;
  uint64_t oldest;           /* the oldest retained snapshot id */
  struct timespec oldest_mtime;   /* when that snapshot was committed */
  int has_oldest_mtime;
  uint64_t strays[3];        /* unreferenced files by origin (stray_origin) */
  uint64_t segments, manifests, snapshots, bytes, rows;
} checker;

static void problem(checker *c, const char *rel, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* Prints one problem: "PROBLEM <where>: <what>", or its JSON object. */
static void report(checker *c, const char *where, const char *what){
  if( cli_g.json ){
    cli_json_begin();
    cli_json_str("problem", what);
    cli_json_str("file", where);
    cli_json_end();
  }else{
    printf("PROBLEM %s: %s\n", where, what);
  }
  c->problems++;
}

static void problem(checker *c, const char *rel, const char *fmt, ...){
  va_list ap;
  char where[1200], what[1200];
  snprintf(where, sizeof(where), "%s/%s", c->dir, rel);
  va_start(ap, fmt);
  vsnprintf(what, sizeof(what), fmt, ap);
  va_end(ap);
  report(c, where, what);
}

static int readRel(checker *c, const char *rel, uint8_t **data, size_t *n){
  char *full = fnt_path_join(c->st, rel);
  int rc;
  if( full==0 ) return -1;
  rc = fnt_io_read_file(full, data, n);
  fnt_free(full);
  return rc;
}

/* The store's message without the warehouse prefix it may carry. */
static const char *why(checker *c){
  const char *m = fnt_errmsg(c->st);
  size_t n = strlen(c->dir);
  if( strncmp(m, c->dir, n)==0 && m[n]=='/' ){
    const char *colon = strstr(m, ": ");
    if( colon ) return colon+2;
  }
  return m;
}

/* Verifies one segment completely, in one open (fnt_segment_verify):
** present, of the listed size, its footer, table and rows, every chunk
** read and decoded as a query would. */
static void checkSegment(checker *c, const fnt_entry *e){
  uint64_t size = 0;
  int rc;
  if( setHas(&c->verified, e->path) ) return;
  setAdd(&c->verified, e->path);
  c->segments++;
  rc = fnt_segment_verify(c->st, e, &size);
  if( rc ){
    /* What the file is on disk, the store's message aside: a missing
    ** file that only an older snapshot lists reads as expired under a
    ** reader, but expire never removes what a retained snapshot lists. */
    char *full = fnt_path_join(c->st, e->path);
    struct stat sb;
    int found = full ? stat(full, &sb) : -1, gone = found!=0 && errno==ENOENT;
    if( found==0 && size==0 ) size = (uint64_t)sb.st_size;
    fnt_free(full);
    if( gone ){
      problem(c, e->path, "listed segment is missing");
      return;
    }
  }
  c->rows += e->rows;
  c->bytes += size;
  if( size!=e->file_size ){
    problem(c, e->path, "%llu bytes, the manifest lists %llu",
            (unsigned long long)size, (unsigned long long)e->file_size);
  }
  if( rc ) problem(c, e->path, "%s", why(c));
}

/* Notes manifest m, read from `rel`, and what it lists as referenced;
** verifies its segments when `verify`. */
static void listManifest(checker *c, const char *rel, const fnt_manifest *m,
                         int verify){
  size_t i;
  setAdd(&c->seenMan, rel);
  setAdd(&c->referenced, rel);
  for(i=0; i<m->n; i++) setAdd(&c->referenced, m->entries[i].path);
  if( verify ){
    c->manifests++;
    for(i=0; i<m->n; i++) checkSegment(c, &m->entries[i]);
  }
}

/* Reads and decodes snapshot file `rel`: 0, or -1 (a problem when
** `verify`). */
static int readCatalog(checker *c, const char *rel, fnt_catalog *cat, int verify){
  uint8_t *data = 0;
  size_t n = 0;
  if( readRel(c, rel, &data, &n) ){
    if( verify ) problem(c, rel, "cannot be read: %s", strerror(errno));
    return -1;
  }
  if( fnt_catalog_decode(c->st, rel, data, n, cat) ){
    if( verify ) problem(c, rel, "%s", why(c));
    fnt_free(data);
    return -1;
  }
  fnt_free(data);
  return 0;
}

/* A snapshot file listed as a manifest (format 3: the entries it adds
** itself) is decoded whole, and kept for its own turn when it has one. */
static void checkListedCatalog(checker *c, const char *rel, int verify){
  fnt_catalog cat;
  if( readCatalog(c, rel, &cat, verify) ) return;
  if( cat.delta==0 || strcmp(cat.delta->path, rel)!=0 ){
    if( verify ){
      problem(c, rel, "is listed as a manifest but does not hold the entries "
              "of snapshot %s", rel);
    }
    fnt_catalog_clear(&cat);
    return;
  }
  listManifest(c, rel, cat.delta, verify);
  if( cat.id>=c->oldest && c->nEarly<CHECK_EARLY ){
    c->early[c->nEarly++] = cat;
  }else{
    fnt_catalog_clear(&cat);
  }
}

/* Decodes a manifest; verifies its segments when `verify`.  Each manifest
** is read once: snapshots are checked newest first, and a verified one
** comes before any that is not (only the newest, without --all). */
static void checkManifest(checker *c, const char *rel, int verify){
  uint8_t *data = 0;
  size_t n = 0;
  fnt_manifest *m = 0;
  if( setHas(&c->seenMan, rel) ) return;
  setAdd(&c->seenMan, rel);
  setAdd(&c->referenced, rel);
  if( strncmp(rel, FNT_DIR_CATALOG "/", sizeof(FNT_DIR_CATALOG))==0 ){
    checkListedCatalog(c, rel, verify);
    return;
  }
  if( readRel(c, rel, &data, &n) ){
    if( verify ) problem(c, rel, "listed manifest cannot be read: %s", strerror(errno));
    return;
  }
  if( fnt_manifest_decode(c->st, rel, data, n, &m) ){
    if( verify ) problem(c, rel, "%s", why(c));
    fnt_free(data);
    return;
  }
  fnt_free(data);
  listManifest(c, rel, m, verify);
  fnt_manifest_free(m);
}

/* Decodes catalog version `id`; verifies it and what it lists when `verify`. */
static void checkCatalog(checker *c, uint64_t id, int verify){
  char rel[64];
  size_t i;
  fnt_catalog cat;
  fnt_catalog_name(id, rel);
  setAdd(&c->referenced, rel);
  for(i=0; i<c->nEarly && c->early[i].id!=id; i++){}
  if( i<c->nEarly ){
    cat = c->early[i];                       /* decoded ahead of its turn */
    c->early[i] = c->early[--c->nEarly];
  }else if( readCatalog(c, rel, &cat, verify) ){
    return;
  }
  if( verify ){
    c->snapshots++;
    if( cat.id!=id ){
      problem(c, rel, "holds snapshot id %llu", (unsigned long long)cat.id);
    }
  }
  for(i=0; i<cat.n_manifests; i++){
    /* The entries the snapshot adds itself (format 3) are listed as a
    ** manifest named after it: decoded already, not read again. */
    const char *man = cat.manifest_paths[i];
    if( cat.delta && strcmp(man, rel)==0 ){
      if( !setHas(&c->seenMan, man) ) listManifest(c, man, cat.delta, verify);
    }else{
      checkManifest(c, man, verify);
    }
  }
  fnt_catalog_clear(&cat);
}

/* The files under data/, metadata/ and tmp/, as a walk found them. */
typedef struct file_list {
  char **path;               /* relative to the warehouse */
  uint8_t *regular;          /* per file: 1 for a regular file */
  size_t n, cap;
} file_list;

static int listVisit(void *ctx, int dirfd, const char *name, const char *rel,
                     int regular){
  file_list *l = ctx;
  (void)dirfd; (void)name;
  if( l->n==l->cap ){
    l->cap = l->cap ? 2*l->cap : 1024;
    l->path = realloc(l->path, l->cap*sizeof(char*));
    l->regular = realloc(l->regular, l->cap);
    if( l->path==0 || l->regular==0 ) noMem();
  }
  l->path[l->n] = strdup(rel);
  if( l->path[l->n]==0 ) noMem();
  l->regular[l->n++] = (uint8_t)regular;
  return 0;
}

static void listFiles(const char *dir, file_list *l){
  static const char *const top[] = {FNT_DIR_DATA, FNT_DIR_METADATA, FNT_DIR_TMP};
  int i;
  /* Every file, hidden ones too; a folder that cannot be read is skipped
  ** (tmp/ may be absent). */
  for(i=0; i<3; i++) fnt_io_walk(dir, top[i], FNT_WALK_HIDDEN|FNT_WALK_ON, listVisit, l);
}

static void listFree(file_list *l){
  size_t i;
  for(i=0; i<l->n; i++) free(l->path[i]);
  free(l->path);
  free(l->regular);
  memset(l, 0, sizeof(*l));
}

/* The references of the snapshots that are not verified, collected on a
** thread of their own (with a handle of its own) while the verified one's
** files are read, and the warehouse's files listed after them: at 20,000
** runs, verifying the 40,000 segments, reading 20,000 snapshot files and
** walking 40,000 folders take about a second each, mostly in the kernel. */
typedef struct refs_job {
  checker c;
  const uint64_t *ids;      /* the snapshots, ascending */
  size_t n;
  file_list files;
} refs_job;

static void *collectRefs(void *arg){
  refs_job *j = arg;
  size_t i;
  for(i=j->n; i>0; i--) checkCatalog(&j->c, j->ids[i-1], 0);
  listFiles(j->c.dir, &j->files);
  return 0;
}

/* Frees what a checker holds but its handle. */
static void checkerFree(checker *c){
  size_t i;
  setFree(&c->referenced);
  setFree(&c->verified);
  setFree(&c->seenMan);
  setFree(&c->expired);
  for(i=0; i<c->nEarly; i++) fnt_catalog_clear(&c->early[i]);
  c->nEarly = 0;
}

/* Verifies the newest snapshot (or all of them), collects what every
** retained snapshot references, so that none of their files counts as
** stray, and lists the files there are into *files.  ids[0..n) ascending. */
static void checkSnapshots(checker *c, const uint64_t *ids, size_t n, int all,
                           file_list *files){
  refs_job job;
  pthread_t th;
  int threaded = 0;
  size_t i;
  memset(&job, 0, sizeof(job));
  if( !all && n>1 && fnt_open(c->dir, 0, &job.c.st)==FNT_OK ){
    job.c.dir = c->dir;
    job.c.oldest = c->oldest;
    job.ids = ids;
    job.n = n-1;
    threaded = pthread_create(&th, 0, collectRefs, &job)==0;
  }
  for(i=n; i>0; i--){
    if( threaded && i<n ) break;              /* the others are the job's */
    checkCatalog(c, ids[i-1], all || i==n);
  }
  if( threaded ){
    pthread_join(th, 0);
    setMerge(&c->referenced, &job.c.referenced);
    *files = job.files;
  }else{
    listFiles(c->dir, files);
  }
  checkerFree(&job.c);
  fnt_close(job.c.st);
}

/* The ids of catalog/v<20 digits>, ascending; other names go to `odd`. */
static uint64_t *listCatalog(checker *c, size_t *nOut, path_set *odd){
  char *full = fnt_path_join(c->st, FNT_DIR_CATALOG);
  DIR *d = full ? opendir(full) : 0;
  struct dirent *e;
  uint64_t *ids = 0;
  size_t n = 0, cap = 0;
  *nOut = 0;
  fnt_free(full);
  if( d==0 ){
    problem(c, FNT_DIR_CATALOG, "cannot be listed: %s", strerror(errno));
    return 0;
  }
  while( (e = readdir(d))!=0 ){
    const char *nm = e->d_name;
    char *end;
    unsigned long long id;
    if( strcmp(nm, ".")==0 || strcmp(nm, "..")==0 || strcmp(nm, "HEAD")==0
     || strcmp(nm, "EXPIRED")==0 ) continue;
    if( nm[0]=='v' && strlen(nm)==21 && strspn(nm+1, "0123456789")==20 ){
      id = strtoull(nm+1, &end, 10);
      if( n==cap ){
        cap = cap ? cap*2 : 64;
        ids = realloc(ids, cap*sizeof(uint64_t));
        if( ids==0 ){ fprintf(stderr, "fnt check: out of memory\n"); exit(1); }
      }
      ids[n++] = id;
    }else{
      char rel[600];
      snprintf(rel, sizeof(rel), FNT_DIR_CATALOG "/%s", nm);
      setAdd(odd, rel);
    }
  }
  closedir(d);
  {
    /* insertion sort: catalogs are few */
    size_t i, j;
    for(i=1; i<n; i++){
      uint64_t v = ids[i];
      for(j=i; j>0 && ids[j-1]>v; j--) ids[j] = ids[j-1];
      ids[j] = v;
    }
  }
  *nOut = n;
  return ids;
}

/* Where an unreferenced file comes from. */
typedef enum stray_origin { STRAY_FAILED, STRAY_EXPIRED, STRAY_FOREIGN } stray_origin;
static const char *const strayWhy[] = {
  "left by a failed or crashed commit",
  "listed only by expired snapshots (fnt expire removes it)",
  "not a fntrace file",
};

/* 1 when the last path component is <32 hex digits><suffix>. */
static int isStoreName(const char *rel, const char *suffix){
  const char *b = strrchr(rel, '/');
  b = b ? b+1 : rel;
  return strlen(b)==32+strlen(suffix) && strspn(b, "0123456789abcdef")==32
      && strcmp(b+32, suffix)==0;
}

/* Every unreferenced manifest written for a snapshot older than the oldest
** retained one goes, with the segments it lists, into c->expired: those
** files were listed by snapshots since expired.  Other unreferenced
** manifests were written by commits that never published them. */
static void findExpired(checker *c){
  char *full = fnt_path_join(c->st, FNT_DIR_METADATA);
  DIR *d = full ? opendir(full) : 0;
  struct dirent *e;
  fnt_free(full);
  if( d==0 ) return;
  while( (e = readdir(d))!=0 ){
    char rel[600];
    uint8_t *data = 0;
    size_t n = 0, i;
    uint64_t target = 0;
    fnt_manifest *m = 0;
    snprintf(rel, sizeof(rel), FNT_DIR_METADATA "/%s", e->d_name);
    if( !isStoreName(rel, ".fnman") || setHas(&c->referenced, rel) ) continue;
    if( readRel(c, rel, &data, &n) ) continue;
    if( fnt_manifest_decode(c->st, rel, data, n, &m)==FNT_OK ){
      for(i=0; i<m->n; i++) if( m->entries[i].snapshot_id>target ) target = m->entries[i].snapshot_id;
      if( target>0 && target<c->oldest ){
        setAdd(&c->expired, rel);
        for(i=0; i<m->n; i++) setAdd(&c->expired, m->entries[i].path);
      }
      fnt_manifest_free(m);
    }
    fnt_free(data);
  }
  closedir(d);
  setSort(&c->expired);
}

/* A segment that an expired snapshot file listed itself (format 3) is
** known by its age only: written before the oldest retained snapshot was
** committed.  (A commit that failed before then looks the same; expire
** treats both alike.) */
static int olderThanRetained(const checker *c, const struct stat *sb){
  return c->has_oldest_mtime
      && (sb->st_mtim.tv_sec < c->oldest_mtime.tv_sec
          || (sb->st_mtim.tv_sec==c->oldest_mtime.tv_sec
              && sb->st_mtim.tv_nsec < c->oldest_mtime.tv_nsec));
}

static stray_origin strayOrigin(const checker *c, const char *rel,
                                const struct stat *sb){
  int isData = strncmp(rel, FNT_DIR_DATA "/", sizeof(FNT_DIR_DATA))==0;
  if( strncmp(rel, FNT_DIR_TMP "/", sizeof(FNT_DIR_TMP))==0 ) return STRAY_FAILED;
  if( !isStoreName(rel, isData ? ".fnseg" : ".fnman") ) return STRAY_FOREIGN;
  if( setHas(&c->expired, rel) || (isData && olderThanRetained(c, sb)) ){
    return STRAY_EXPIRED;
  }
  return STRAY_FAILED;
}

/* Prints one unreferenced file and counts it. */
static void strayFound(checker *c, const char *rel, const struct stat *sb,
                       uint64_t *count, uint64_t *bytes){
  stray_origin o = strayOrigin(c, rel, sb);
  if( cli_g.quiet ){
    /* -q: problems only */
  }else if( cli_g.json ){
    char path[1400];
    snprintf(path, sizeof(path), "%s/%s", c->dir, rel);
    cli_json_begin();
    cli_json_str("unreferenced", path);
    cli_json_int("bytes", (long long)sb->st_size);
    cli_json_str("origin", o==STRAY_FAILED ? "failed-commit"
                 : o==STRAY_EXPIRED ? "expired-snapshot" : "foreign");
    cli_json_str("why", strayWhy[o]);
    cli_json_end();
  }else{
    printf("unreferenced %s/%s (%lld bytes): %s\n", c->dir, rel,
           (long long)sb->st_size, strayWhy[o]);
  }
  c->strays[o]++;
  (*count)++;
  *bytes += (uint64_t)sb->st_size;
}

/* Prints the listed files that nothing references: a referenced one
** needs no stat (most of a warehouse's files are). */
static void listStray(checker *c, const file_list *l, uint64_t *count,
                      uint64_t *bytes){
  size_t i;
  for(i=0; i<l->n; i++){
    char *full;
    struct stat sb;
    if( l->regular[i] && setHas(&c->referenced, l->path[i]) ) continue;
    full = fnt_path_join(c->st, l->path[i]);
    if( full && lstat(full, &sb)==0 && !setHas(&c->referenced, l->path[i]) ){
      strayFound(c, l->path[i], &sb, count, bytes);
    }
    fnt_free(full);
  }
}

static void usage(FILE *out){
  fprintf(out,
    "usage: fnt check [-w DIR] [--json] [-q] [--all]\n"
    "\n"
    "Verifies every checksum and every reference of the warehouse's current\n"
    "snapshot: the catalog file, each manifest it lists, each segment those\n"
    "list, each read once (present, of the listed size, footer and every\n"
    "chunk checksummed, every column of every row decoded as a query would,\n"
    "a calls file's stacks and level of detail parsed).  Problems are\n"
    "printed as `PROBLEM <file>: <what>`.  Files no retained snapshot\n"
    "references are listed as `unreferenced <file> (<n> bytes): <origin>`,\n"
    "the origin one of:\n"
    "  left by a failed or crashed commit   (also a commit in progress now)\n"
    "  listed only by expired snapshots (fnt expire removes it)\n"
    "  not a fntrace file\n"
    "They are never read and are not problems: a successful commit leaves\n"
    "none behind.\n"
    "\n"
    "--json: one object a line: {\"problem\", \"file\"}, {\"unreferenced\", \"bytes\",\n"
    "\"origin\" (failed-commit, expired-snapshot or foreign), \"why\"}, then the\n"
    "summary {\"warehouse\", ..., \"sound\"}.  -q: the problems only.\n"
    "\n"
    "options:\n"
    "  -a, --all            verify every retained snapshot, not only the current one\n"
    "  -h, --help           this text\n");
  cli_globals_help(out);
  fprintf(out,
    "\n"
    "exit status: 0 sound, 1 problems found, 2 usage error\n"
    "\n"
    "example:\n"
    "  fnt check -w ./fnt-warehouse --all\n");
}

int cmd_check(int argc, char **argv){
  static const struct option opts[] = {
    {"all",       no_argument,       0, 'a'},
    {"help",      no_argument,       0, 'h'},
    {0, 0, 0, 0}
  };
  int all = 0, ch, rc;
  checker c;
  uint64_t *ids, strayN = 0, strayBytes = 0;
  size_t nIds, i;
  path_set odd = {0};
  file_list files = {0};
  optind = 1;
  while( (ch = getopt_long(argc, argv, "ah", opts, 0))!=-1 ){
    switch( ch ){
      case 'a': all = 1; break;
      case 'h': usage(stdout); return 0;
      default:  usage(stderr); return 2;
    }
  }
  if( optind<argc ){
    cli_error(zCmd, "unexpected argument '%s'", argv[optind]);
    usage(stderr);
    return 2;
  }
  memset(&c, 0, sizeof(c));
  c.dir = cli_warehouse(0);
  rc = fnt_open(c.dir, 0, &c.st);       /* never create what we check */
  if( rc!=FNT_OK ){
    cli_open_failed(zCmd, c.dir, c.st, rc);
    return 1;
  }
  ids = listCatalog(&c, &nIds, &odd);
  {
    /* Snapshot files at or below the expiry floor are kept only for the
    ** entries newer ones list: not retained snapshots. */
    uint64_t expiredTo = fnt_snapshot_floor(c.st);
    char rel[64], *cf;
    struct stat sb;
    size_t k = 0;
    while( k<nIds && ids[k]<=expiredTo ) k++;
    /* From here on ids[] holds the retained snapshots only. */
    if( k>0 ){
      memmove(ids, ids+k, (nIds-k)*sizeof(*ids));
      nIds -= k;
      k = 0;
    }
    c.oldest = k<nIds ? ids[k] : 0;
    fnt_catalog_name(c.oldest, rel);
    cf = k<nIds ? fnt_path_join(c.st, rel) : 0;
    if( cf && stat(cf, &sb)==0 ){
      c.oldest_mtime = sb.st_mtim;
      c.has_oldest_mtime = 1;
    }
    fnt_free(cf);
  }
  checkSnapshots(&c, ids, nIds, all, &files);
  findExpired(&c);
  for(i=0; i<odd.n && !cli_g.quiet; i++){
    if( cli_g.json ){
      char path[1400];
      snprintf(path, sizeof(path), "%s/%s", c.dir, odd.v[i]);
      cli_json_begin();
      cli_json_str("unreferenced", path);
      cli_json_str("origin", "foreign");
      cli_json_str("why", "not a snapshot file");
      cli_json_end();
    }else{
      printf("unreferenced %s/%s (not a snapshot file)\n", c.dir, odd.v[i]);
    }
  }
  listStray(&c, &files, &strayN, &strayBytes);
  listFree(&files);
  if( cli_g.quiet ){
    /* -q: problems only; the exit status says the rest */
  }else if( cli_g.json ){
    cli_json_begin();
    cli_json_str("warehouse", c.dir);
    cli_json_int("snapshots_verified", (long long)c.snapshots);
    cli_json_int("snapshots", (long long)nIds);
    cli_json_int("manifests", (long long)c.manifests);
    cli_json_int("segments", (long long)c.segments);
    cli_json_int("bytes", (long long)c.bytes);
    cli_json_int("rows", (long long)c.rows);
    cli_json_int("unreferenced", (long long)strayN);
    cli_json_int("unreferenced_bytes", (long long)strayBytes);
    cli_json_int("unreferenced_failed_commit", (long long)c.strays[STRAY_FAILED]);
    cli_json_int("unreferenced_expired_snapshot", (long long)c.strays[STRAY_EXPIRED]);
    cli_json_int("unreferenced_foreign", (long long)c.strays[STRAY_FOREIGN]);
    cli_json_int("problems", c.problems);
    cli_json_bool("sound", c.problems==0);
    cli_json_end();
  }else{
    printf("%s: %llu snapshot(s) of %zu verified, %llu manifest(s), %llu segment(s), "
           "%llu bytes, %llu rows; %llu unreferenced file(s), %llu bytes",
           c.dir, (unsigned long long)c.snapshots, nIds,
           (unsigned long long)c.manifests, (unsigned long long)c.segments,
           (unsigned long long)c.bytes, (unsigned long long)c.rows,
           (unsigned long long)strayN, (unsigned long long)strayBytes);
    if( strayN ){
      printf(" (%llu of failed or crashed commits, %llu of expired snapshots, %llu foreign)",
             (unsigned long long)c.strays[STRAY_FAILED], (unsigned long long)c.strays[STRAY_EXPIRED],
             (unsigned long long)c.strays[STRAY_FOREIGN]);
    }
    printf(": %s\n", c.problems ? "PROBLEMS" : "sound");
    if( c.problems ) printf("%ld problem(s)\n", c.problems);
  }
  free(ids);
  setFree(&odd);
  checkerFree(&c);
  fnt_close(c.st);
  return c.problems ? 1 : 0;
}
