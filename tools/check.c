/*
** check.c -- `fnt check`: verifies every checksum and every reference of a
** warehouse's current snapshot (with --all, of every retained snapshot).
**
**   fnt check -w ./fnt-warehouse            # exit 0 sound, 1 problems, 2 usage
**
** What is verified, per snapshot: its catalog file (checksum, decodes, its id
** matches its name); each manifest it lists (present, checksum, decodes);
** each segment those list (present, the listed size, footer checksum, the
** table and row count the manifest claims, and the checksum and
** decompression of every column chunk of every row group); then a full scan
** of every column of the three tables through the public API, which decodes
** every chunk as a query would.  Problems are printed one per line, naming
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
** segment completely" call, so this file reads the store's internal headers
** (metadata decoding, segment footers): a maintenance tool bound to the
** format, like FORMAT.md itself.
*/
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <getopt.h>
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
  uint64_t h = 0xcbf29ce484222325ULL;
  for(; *p; p++){ h ^= (unsigned char)*p; h *= 0x100000001b3ULL; }
  return (size_t)(h ^ (h >> 31));
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
static void setFree(path_set *s){
  size_t i;
  for(i=0; i<s->n; i++) free(s->v[i]);
  free(s->v);
  free(s->slot);
  memset(s, 0, sizeof(*s));
}

typedef struct checker {
  fnt_store *st;
  const char *dir;
  long problems;
  path_set referenced;       /* every file a decodable snapshot lists */
  path_set verified;         /* segments and manifests already verified */
  path_set seenMan;          /* manifests read (every snapshot repeats most) */
  path_set scannedMan;       /* manifests whose segments a full scan has read */
  path_set snapMan;          /* the manifests of the snapshot being checked */
  path_set expired;          /* unreferenced files of expired snapshots */
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

/* Verifies one segment completely: presence, size, footer, every chunk. */
static void checkSegment(checker *c, const fnt_entry *e){
  char *full;
  struct stat sb;
  fnt_segment *seg = 0;
  fnt_buf scratch = {0}, raw = {0};
  uint32_t g, k;
  if( setHas(&c->verified, e->path) ) return;
  setAdd(&c->verified, e->path);
  c->segments++;
  full = fnt_path_join(c->st, e->path);
  if( full==0 ){ problem(c, e->path, "out of memory"); return; }
  if( stat(full, &sb)!=0 ){
    problem(c, e->path, "listed segment %s", errno==ENOENT ? "is missing" : strerror(errno));
    fnt_free(full);
    return;
  }
  fnt_free(full);
  c->bytes += (uint64_t)sb.st_size;
  c->rows += e->rows;
  if( (uint64_t)sb.st_size!=e->file_size ){
    problem(c, e->path, "%lld bytes, the manifest lists %llu",
            (long long)sb.st_size, (unsigned long long)e->file_size);
  }
  if( fnt_segment_open(c->st, e->path, &seg) ){
    problem(c, e->path, "%s", why(c));
    return;
  }
  if( seg->table!=e->table ){
    problem(c, e->path, "holds table %u, the manifest says %u", seg->table, e->table);
  }
  if( seg->nrows!=e->rows ){
    problem(c, e->path, "holds %llu rows, the manifest says %llu",
            (unsigned long long)seg->nrows, (unsigned long long)e->rows);
  }
  for(g=0; g<seg->nrg; g++){
    for(k=0; k<seg->ncols; k++){
      const fnt_seg_col *col = &seg->cols[k];
      if( col->chunk_index<0 ) continue;
      if( fnt_segment_read_chunk(c->st, seg, g, col, &scratch, &raw) ){
        problem(c, e->path, "%s", why(c));
      }
    }
  }
  fnt_buf_free(&scratch);
  fnt_buf_free(&raw);
  fnt_segment_release(c->st, seg);
}

/* Decodes a manifest; verifies its segments when `verify`.  Each manifest
** is read once: snapshots are checked newest first, and a verified one
** comes before any that is not (only the newest, without --all). */
static void checkManifest(checker *c, const char *rel, int verify){
  uint8_t *data = 0;
  size_t n = 0, i;
  fnt_manifest *m = 0;
  if( verify ) setAdd(&c->snapMan, rel);
  if( setHas(&c->seenMan, rel) ) return;
  setAdd(&c->seenMan, rel);
  setAdd(&c->referenced, rel);
  if( readRel(c, rel, &data, &n) ){
    if( verify ) problem(c, rel, "listed manifest cannot be read: %s", strerror(errno));
    return;
  }
  if( fnt_manifest_decode_listed(c->st, rel, rel, data, n, &m) ){
    if( verify ) problem(c, rel, "%s", why(c));
    fnt_free(data);
    return;
  }
  fnt_free(data);
  for(i=0; i<m->n; i++) setAdd(&c->referenced, m->entries[i].path);
  if( verify ){
    c->manifests++;
    for(i=0; i<m->n; i++) checkSegment(c, &m->entries[i]);
  }
  fnt_manifest_free(m);
}

/* Reads every row, every column, of every table of snapshot `id` through
** the public API: the decoders run over every chunk, as a query's would. */
static void scanSnapshot(checker *c, uint64_t id, const char *catRel){
  fnt_snapshot *snap = 0;
  int t;
  if( fnt_snapshot_at(c->st, id, &snap) ){
    problem(c, catRel, "snapshot %llu does not load: %s", (unsigned long long)id, why(c));
    return;
  }
  for(t=0; t<3; t++){
    fnt_predicate p;
    fnt_scan *sc = 0;
    int rc;
    fnt_predicate_init(&p);
    p.ordered = 1;
    rc = fnt_scan_open(snap, (fnt_table)t, &p, &sc);
    while( rc==FNT_OK && (rc = fnt_scan_next(sc))==1 ) rc = FNT_OK;
    if( rc<0 ){
      const char *m = fnt_errmsg(c->st);
      char where[64];
      snprintf(where, sizeof(where), "snapshot %llu, %s", (unsigned long long)id,
               fnt_table_name((fnt_table)t));
      report(c, where, m[0] ? m : fnt_strerror(rc));
    }
    fnt_scan_close(sc);
  }
  fnt_snapshot_release(snap);
}

/* Decodes catalog version `id`; verifies it and what it lists when `verify`. */
static void checkCatalog(checker *c, uint64_t id, int verify){
  char rel[64];
  uint8_t *data = 0;
  size_t n = 0, i;
  fnt_catalog cat;
  fnt_catalog_name(id, rel);
  setAdd(&c->referenced, rel);
  if( readRel(c, rel, &data, &n) ){
    if( verify ) problem(c, rel, "cannot be read: %s", strerror(errno));
    return;
  }
  if( fnt_catalog_decode(c->st, rel, data, n, &cat) ){
    if( verify ) problem(c, rel, "%s", why(c));
    fnt_free(data);
    return;
  }
  fnt_free(data);
  if( verify ){
    c->snapshots++;
    if( cat.id!=id ){
      problem(c, rel, "holds snapshot id %llu", (unsigned long long)cat.id);
    }
  }
  for(i=0; i<cat.n_manifests; i++) checkManifest(c, cat.manifest_paths[i], verify);
  fnt_catalog_clear(&cat);
  if( verify ){
    /* Scanning is the costly part: a snapshot all of whose manifests a newer
    ** snapshot's scan has read (a commit usually adds one manifest to its
    ** parent's list) is not scanned again -- its files are verified chunk
    ** by chunk all the same. */
    int fresh = c->snapMan.n==0;
    for(i=0; i<c->snapMan.n && !fresh; i++) fresh = !setHas(&c->scannedMan, c->snapMan.v[i]);
    if( fresh ){
      scanSnapshot(c, id, rel);
      for(i=0; i<c->snapMan.n; i++) setAdd(&c->scannedMan, c->snapMan.v[i]);
    }
    setFree(&c->snapMan);
  }
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

/* Lists, recursively, the files under `rel` that nothing references. */
static void listStray(checker *c, const char *rel, uint64_t *count, uint64_t *bytes){
  char *full = fnt_path_join(c->st, rel);
  DIR *d = full ? opendir(full) : 0;
  struct dirent *e;
  fnt_free(full);
  if( d==0 ) return;             /* tmp/ may be absent: nothing to list */
  while( (e = readdir(d))!=0 ){
    char child[1200];
    struct stat sb;
    if( strcmp(e->d_name, ".")==0 || strcmp(e->d_name, "..")==0 ) continue;
    snprintf(child, sizeof(child), "%s/%s", rel, e->d_name);
    /* A listed file needs no stat (most of a warehouse's files are): an
    ** entry's type comes from readdir where the file system gives it, else
    ** from a stat relative to the folder, not a walk of the whole path. */
    if( e->d_type==DT_REG && setHas(&c->referenced, child) ) continue;
    if( e->d_type==DT_DIR ){
      listStray(c, child, count, bytes);
      continue;
    }
    if( fstatat(dirfd(d), e->d_name, &sb, AT_SYMLINK_NOFOLLOW)==0 ){
      if( S_ISDIR(sb.st_mode) ){
        listStray(c, child, count, bytes);
      }else if( !setHas(&c->referenced, child) ){
        stray_origin o = strayOrigin(c, child, &sb);
        if( cli_g.quiet ){
          /* -q: problems only */
        }else if( cli_g.json ){
          char path[1400];
          snprintf(path, sizeof(path), "%s/%s", c->dir, child);
          cli_json_begin();
          cli_json_str("unreferenced", path);
          cli_json_int("bytes", (long long)sb.st_size);
          cli_json_str("origin", o==STRAY_FAILED ? "failed-commit"
                       : o==STRAY_EXPIRED ? "expired-snapshot" : "foreign");
          cli_json_str("why", strayWhy[o]);
          cli_json_end();
        }else{
          printf("unreferenced %s/%s (%lld bytes): %s\n", c->dir, child,
                 (long long)sb.st_size, strayWhy[o]);
        }
        c->strays[o]++;
        (*count)++;
        *bytes += (uint64_t)sb.st_size;
      }
    }
  }
  closedir(d);
}

static void usage(FILE *out){
  fprintf(out,
    "usage: fnt check [-w DIR] [--json] [-q] [--all]\n"
    "\n"
    "Verifies every checksum and every reference of the warehouse's current\n"
    "snapshot: the catalog file, each manifest it lists, each segment those\n"
    "list (present, of the listed size, footer and every column chunk\n"
    "checksummed), then reads every column of every row.  Problems are\n"
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
  /* Verify the newest (or all), and collect the references of every
  ** retained snapshot, so that none of their files counts as stray. */
  for(i=nIds; i>0; i--){
    int verify = all || i==nIds;
    checkCatalog(&c, ids[i-1], verify);
  }
  setSort(&c.referenced);   /* once: lookups go through the hash index */
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
  listStray(&c, FNT_DIR_DATA, &strayN, &strayBytes);
  listStray(&c, FNT_DIR_METADATA, &strayN, &strayBytes);
  listStray(&c, FNT_DIR_TMP, &strayN, &strayBytes);
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
  setFree(&c.referenced);
  setFree(&c.verified);
  setFree(&c.seenMan);
  setFree(&c.scannedMan);
  setFree(&c.snapMan);
  setFree(&c.expired);
  fnt_close(c.st);
  return c.problems ? 1 : 0;
}
