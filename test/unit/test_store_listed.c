/*
** test_store_listed.c -- a successful commit leaves no file behind that no
** snapshot lists: after many filings (the manifest list grows past the
** merge threshold, so commits merge the tail of small manifests into the
** one they write), after compaction, and after refiling, every file in
** metadata/ and data/ is listed by a snapshot and tmp/ is empty.
*/
#include <dirent.h>
#include <sys/stat.h>

#include "internal.h"
#include "util_test.h"

/* Every file snapshot 1..newest lists. */
static char **listed(fnt_store *st, size_t *n){
  uint64_t newest = 0, id;
  char **v = 0;
  size_t cap = 0, i, j;
  *n = 0;
  CHECK_RC(st, fnt_snapshot_newest_id(st, &newest), FNT_OK);
  for(id=1; id<=newest; id++){
    fnt_snapshot *s = 0;
    if( fnt_snapshot_at(st, id, &s) ){ t_failures++; continue; }
    for(i=0; i<s->n_manifests; i++){
      const fnt_manifest *m = s->manifests[i];
      for(j=0; j<=m->n; j++){
        if( *n==cap ){ cap = cap ? cap*2 : 256; v = realloc(v, cap*sizeof(char*)); }
        v[(*n)++] = strdup(j==m->n ? m->path : m->entries[j].path);
      }
    }
    fnt_snapshot_release(s);
  }
  return v;
}

/* Counts the files under DIR/rel that `v` does not hold, printing them. */
static int unlisted(const char *dir, const char *rel, char **v, size_t n){
  char full[1024];
  DIR *d;
  struct dirent *e;
  int bad = 0;
  snprintf(full, sizeof(full), "%s/%s", dir, rel);
  d = opendir(full);
  if( d==0 ) return 0;
  while( (e = readdir(d))!=0 ){
    char child[1024], cf[2100];
    struct stat sb;
    size_t i;
    int found = 0;
    if( e->d_name[0]=='.' ) continue;
    snprintf(child, sizeof(child), "%s/%s", rel, e->d_name);
    snprintf(cf, sizeof(cf), "%s/%s", dir, child);
    if( stat(cf, &sb) ) continue;
    if( S_ISDIR(sb.st_mode) ){ bad += unlisted(dir, child, v, n); continue; }
    for(i=0; i<n && !found; i++) found = strcmp(v[i], child)==0;
    if( !found ){ fprintf(stderr, "unlisted: %s\n", child); bad++; }
  }
  closedir(d);
  return bad;
}

static void checkAllListed(fnt_store *st, const char *dir, const char *when){
  size_t n = 0, i;
  char **v = listed(st, &n);
  int bad = unlisted(dir, FNT_DIR_METADATA, v, n) + unlisted(dir, FNT_DIR_DATA, v, n)
          + unlisted(dir, FNT_DIR_TMP, v, n);
  if( bad ) fprintf(stderr, "after %s: %d unlisted file(s)\n", when, bad);
  CHECK_EQ_INT(bad, 0);
  for(i=0; i<n; i++) free(v[i]);
  free(v);
}

int main(void){
  const char *dir = t_scratch_dir("listed");
  fnt_store *st = 0;
  fnt_snapshot *s = 0;
  int k;
  CHECK_RC(st, fnt_open(dir, FNT_OPEN_CREATE, &st), FNT_OK);
  /* 40 commits: the list passes 16 manifests, and merging starts. */
  for(k=0; k<40; k++){
    t_chunk t;
    t_chunk_make(&t, "acme/widget", "many", k, 40, 50, 2, (uint64_t)k*50, (unsigned)k+1);
    CHECK_RC(st, fnt_file_chunk(st, &t.c), 1);
    CHECK_RC(st, fnt_file_chunk(st, &t.c), 0);
    t_chunk_free(&t);
  }
  CHECK_RC(st, fnt_snapshot_current(st, &s), FNT_OK);
  CHECK(s->n_manifests < 40);              /* the tail was merged */
  fnt_snapshot_release(s);
  checkAllListed(st, dir, "40 filings");
  CHECK_RC(st, fnt_compact(st, 0), 1);
  checkAllListed(st, dir, "compaction");
  fnt_close(st);
  t_remove_tree(dir);
  return t_finish("test_store_listed");
}
