/*
** test_store_corrupt.c -- damaged files: a flipped byte or a truncation in
** every kind of file (events segment, runs segment, profile segment,
** manifest, snapshot) gives a clear error naming the file, never a crash
** and never wrong rows; so does a flipped byte in a calls segment's
** functions chunk, for the readers that load it and for fnt_heat, which
** reads it to name a key.  fnt_segment_verify (what `fnt check` runs on
** every file) passes every file of the sound warehouse and names the part
** of a calls file that a flipped byte broke: a row group's chunk, its
** stacks chunk or its level-of-detail chunk, which no query reads whole.
** A sound calls file of another run under a run's name is refused, naming
** both runs (its rows would carry the other run_id).
*/
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "segment.h"
#include "util_test.h"

/* Reads every column of every table; returns a checksum of what was read,
** or sets *err to the first error code. */
static unsigned long long readAll(const char *dir, int *err, char *msg, size_t msgLen){
  fnt_store *st = 0;
  fnt_snapshot *s = 0;
  unsigned long long h = 1469598103934665603ull;
  int t, rc = fnt_open(dir, 0, &st);
  msg[0] = 0;
  if( rc==FNT_OK ) rc = fnt_snapshot_current(st, &s);
  for(t=0; rc==FNT_OK && t<3; t++){
    fnt_predicate p;
    fnt_scan *sc;
    fnt_predicate_init(&p);
    p.ordered = 1;
    rc = fnt_scan_open(s, (fnt_table)t, &p, &sc);
    if( rc ) break;
    while( (rc = fnt_scan_next(sc))==1 ){
      int c;
      for(c=0; c<fnt_table_ncol((fnt_table)t); c++){
        const char *v = fnt_scan_text(sc, c, 0);
        h = (h ^ (unsigned long long)fnt_scan_int(sc, c)) * 1099511628211ull;
        while( v && *v ) h = (h ^ (unsigned char)*v++) * 1099511628211ull;
      }
    }
    fnt_scan_close(sc);
  }
  if( rc && st ) snprintf(msg, msgLen, "%s", fnt_errmsg(st));
  fnt_snapshot_release(s);
  fnt_close(st);
  *err = rc;
  return h;
}

static void damage(const char *path, int mode){
  FILE *f = fopen(path, "r+b");
  struct stat sb;
  long pos;
  int c;
  stat(path, &sb);
  if( mode==3 ){                                /* truncate to half */
    if( truncate(path, sb.st_size/2) ) t_failures++;
    if( f ) fclose(f);
    return;
  }
  pos = mode==0 ? 0 : mode==1 ? (long)sb.st_size/2 : (long)sb.st_size-1;
  fseek(f, pos, SEEK_SET);
  c = fgetc(f);
  fseek(f, pos, SEEK_SET);
  fputc(c ^ 0x20, f);
  fclose(f);
}

/* xors the byte at `off` of `path` with 0x20. */
static void flipAt(const char *path, uint64_t off){
  FILE *f = fopen(path, "r+b");
  int c;
  if( f==0 ){ t_failures++; return; }
  fseek(f, (long)off, SEEK_SET);
  c = fgetc(f);
  fseek(f, (long)off, SEEK_SET);
  fputc(c ^ 0x20, f);
  fclose(f);
}

/* fnt_segment_verify of every file the current snapshot of `dir` lists,
** on a fresh handle (its cache holds no bytes read before a damage): the
** first error's code, its message in msg. */
static int verifyAll(const char *dir, char *msg, size_t msgLen){
  fnt_store *st = 0;
  fnt_snapshot *s = 0;
  size_t i, j;
  uint64_t size;
  int rc = fnt_open(dir, 0, &st);
  msg[0] = 0;
  if( rc==FNT_OK ) rc = fnt_snapshot_current(st, &s);
  for(i=0; rc==FNT_OK && i<s->n_manifests; i++){
    for(j=0; rc==FNT_OK && j<s->manifests[i]->n; j++){
      rc = fnt_segment_verify(st, &s->manifests[i]->entries[j], &size);
    }
  }
  if( rc && st ) snprintf(msg, msgLen, "%s", fnt_errmsg(st));
  fnt_snapshot_release(s);
  fnt_close(st);
  return rc;
}

/* Damages, in a fresh copy of `dir`, the middle byte of one part of the
** calls file of run `run` (0: row group 0's first chunk, 1: the stacks
** chunk, 2: the level-of-detail chunk), then expects fnt_segment_verify
** to fail naming the file and `part`. */
static void verifyDamage(const char *dir, const char *copy, const char *run,
                         int which, const char *part){
  char cmd[2048], path[1024], rel[1100], msg[1200];
  const char *base;
  fnt_store *st = 0;
  fnt_segment *seg = 0;
  const fnt_seg_chunk *c = 0;
  uint64_t off = 0;
  FILE *p;
  int rc;
  snprintf(cmd, sizeof(cmd), "rm -rf '%s' && cp -a '%s' '%s' && "
           "find '%s/data/fn_trace_calls/p=%s' -type f | sort | tail -1",
           copy, dir, copy, copy, run);
  p = popen(cmd, "r");
  if( !p || !fgets(path, sizeof(path), p) ){ t_failures++; if( p ) pclose(p); return; }
  pclose(p);
  path[strcspn(path, "\n")] = 0;
  base = strrchr(path, '/') ? strrchr(path, '/')+1 : path;
  snprintf(rel, sizeof(rel), "data/fn_trace_calls/p=%s/%s", run, base);
  CHECK_RC(st, fnt_open(copy, 0, &st), FNT_OK);
  CHECK_RC(st, fnt_segment_open(st, rel, &seg), FNT_OK);
  if( seg && which==0 ) CHECK_RC(st, fnt_segment_descs(st, seg, 0, &c), FNT_OK);
  if( seg && (which!=0 || c) ){
    if( which!=0 ) c = which==1 ? &seg->stacks : &seg->lod;
    CHECK(which!=1 || seg->has_stacks);
    CHECK(which!=2 || seg->has_lod);
    off = c->offset + c->stored_len/2;
    fnt_segment_release(st, seg);
  }
  fnt_close(st);
  flipAt(path, off);
  rc = verifyAll(copy, msg, sizeof(msg));
  if( rc!=FNT_E_CORRUPT || !strstr(msg, base) || !strstr(msg, part) ){
    fprintf(stderr, "verify, %s damaged: %d '%s' does not name the file and %s\n",
            part, rc, msg, part);
    t_failures++;
  }
}

int main(void){
  const char *dir = t_scratch_dir("corrupt");
  const char *copy = t_scratch_dir("corrupt-copy");
  static const char *kinds[] = {
    "data/fn_trace_events", "data/fn_trace_runs", "data/fn_profile",
    "metadata", "catalog/v0"
  };
  fnt_store *st = 0;
  t_chunk t;
  fnt_profile_row rows[1] = {{"parse", 0, 5, 9, 2, 4}};
  fnt_profile prof = {"prof-1", 1, "repo", 0, "bench", 4, 100, rows, 1};
  unsigned long long good;
  int err, k, mode, cases = 0;
  char msg[1200], cmd[2048];

  CHECK_RC(st, fnt_open(dir, FNT_OPEN_CREATE, &st), FNT_OK);
  t_chunk_make(&t, "repo", "run", 0, 1, 40000, 4, 0, 3);
  CHECK_RC(st, fnt_file_chunk(st, &t.c), 1);
  t_chunk_free(&t);
  /* 16 more small runs: the list is merged into a manifest file once, and
  ** the newest snapshot file holds its own entries (format 3). */
  for(k=0; k<16; k++){
    char run[32];
    snprintf(run, sizeof(run), "small-%02d", k);
    t_chunk_make(&t, "repo", run, 0, 1, 50, 1, 0, (unsigned)k);
    CHECK_RC(st, fnt_file_chunk(st, &t.c), 1);
    t_chunk_free(&t);
  }
  CHECK_RC(st, fnt_file_profile(st, &prof), 1);
  fnt_close(st);
  good = readAll(dir, &err, msg, sizeof(msg));
  CHECK_EQ_INT(err, 0);

  for(k=0; k<5; k++){
    for(mode=0; mode<4; mode++){
      char path[1024];
      FILE *p;
      unsigned long long h;
      snprintf(cmd, sizeof(cmd), "rm -rf '%s' && cp -a '%s' '%s' && "
               "find '%s/%s'* -type f | grep -v HEAD | sort | tail -1",
               copy, dir, copy, copy, kinds[k]);
      p = popen(cmd, "r");
      if( !p || !fgets(path, sizeof(path), p) ){ t_failures++; if( p ) pclose(p); continue; }
      pclose(p);
      path[strcspn(path, "\n")] = 0;
      damage(path, mode);
      h = readAll(copy, &err, msg, sizeof(msg));
      cases++;
      if( err==FNT_OK ){
        /* Never wrong rows: an undetected change must not alter a value. */
        if( h!=good ){
          fprintf(stderr, "%s mode %d: read wrong rows without an error\n", path, mode);
          t_failures++;
        }
      }else{
        const char *base = strrchr(path, '/') + 1;
        if( err!=FNT_E_CORRUPT || strstr(msg, base)==0 ){
          fprintf(stderr, "%s mode %d: error %d '%s' does not name the file\n",
                  path, mode, err, msg);
          t_failures++;
        }
      }
    }
  }
  CHECK_EQ_INT(cases, 20);

  /* The functions chunk of the run's calls file. */
  {
    char path[1024], rel[1100];
    const char *base;
    FILE *p;
    fnt_segment *seg = 0;
    fnt_snapshot *snap = 0;
    fnt_heat *h = 0;
    fnt_account *a = 0;
    uint64_t off = 0, len = 0;
    snprintf(cmd, sizeof(cmd), "rm -rf '%s' && cp -a '%s' '%s' && "
             "find '%s/data/fn_trace_calls/p=run' -type f | sort | tail -1",
             copy, dir, copy, copy);
    p = popen(cmd, "r");
    if( !p || !fgets(path, sizeof(path), p) ) t_failures++;
    if( p ) pclose(p);
    path[strcspn(path, "\n")] = 0;
    base = strrchr(path, '/') ? strrchr(path, '/')+1 : path;
    snprintf(rel, sizeof(rel), "data/fn_trace_calls/p=run/%s", base);
    CHECK_RC(st, fnt_open(copy, 0, &st), FNT_OK);
    CHECK_RC(st, fnt_segment_open_lazy(st, rel, &seg, 0), FNT_OK);
    if( seg ){
      CHECK_EQ_INT(seg->has_funcs_chunk, 1);
      CHECK_EQ_INT(seg->funcs_loaded, 0);
      off = seg->funcs_chunk.offset;
      len = seg->funcs_chunk.stored_len;
      fnt_segment_release(st, seg);
    }
    fnt_close(st);
    st = 0;
    if( len>0 ){
      FILE *f = fopen(path, "r+b");
      int c;
      fseek(f, (long)(off + len/2), SEEK_SET);
      c = fgetc(f);
      fseek(f, (long)(off + len/2), SEEK_SET);
      fputc(c ^ 0x20, f);
      fclose(f);
    }
    CHECK_RC(st, fnt_open(copy, 0, &st), FNT_OK);
    CHECK_RC(st, fnt_snapshot_current(st, &snap), FNT_OK);
    err = fnt_heat_compute(snap, "run", &h);
    CHECK_EQ_INT(err, FNT_E_CORRUPT);
    if( !strstr(fnt_errmsg(st), base) || !strstr(fnt_errmsg(st), "functions chunk") ){
      fprintf(stderr, "heat: '%s' does not name the file's functions chunk\n", fnt_errmsg(st));
      t_failures++;
    }
    err = fnt_account_compute(snap, "run", &a);
    CHECK_EQ_INT(err, FNT_E_CORRUPT);
    if( !strstr(fnt_errmsg(st), "functions chunk") ){
      fprintf(stderr, "account: '%s' does not name the functions chunk\n", fnt_errmsg(st));
      t_failures++;
    }
    /* Events stay readable: the damage is the calls file's alone. */
    fnt_snapshot_release(snap);
    fnt_close(st);
    st = 0;
    readAll(copy, &err, msg, sizeof(msg));
    CHECK_EQ_INT(err, 0);
  }
  /* A calls file that holds another run's calls (small-01's bytes under
  ** small-00's name, each file sound): its rows would hand out the wrong
  ** run_id (the file's own), so the read fails naming both runs. */
  {
    fnt_snapshot *snap = 0;
    fnt_call_predicate p;
    fnt_calls *sc = 0;
    const fnt_call *row;
    const char *run = "small-00";
    snprintf(cmd, sizeof(cmd), "rm -rf '%s' && cp -a '%s' '%s' && cd '%s/data/fn_trace_calls' && "
             "cp \"$(ls p=small-01/* | head -1)\" \"$(ls p=small-00/* | head -1)\"",
             copy, dir, copy, copy);
    CHECK_EQ_INT(system(cmd), 0);
    CHECK_RC(st, fnt_open(copy, 0, &st), FNT_OK);
    CHECK_RC(st, fnt_snapshot_current(st, &snap), FNT_OK);
    fnt_call_predicate_init(&p);
    p.run_ids = &run;
    p.n_run_ids = 1;
    CHECK_RC(st, fnt_calls_open(snap, &p, &sc), FNT_OK);
    err = fnt_calls_next(sc, &row);
    CHECK_EQ_INT(err, FNT_E_CORRUPT);
    if( !strstr(fnt_errmsg(st), "holds run 'small-01', the manifest says 'small-00'") ){
      fprintf(stderr, "calls of another run: '%s'\n", fnt_errmsg(st));
      t_failures++;
    }
    fnt_calls_close(sc);
    fnt_snapshot_release(snap);
    fnt_close(st);
    st = 0;
  }
  CHECK_EQ_INT(verifyAll(dir, msg, sizeof(msg)), FNT_OK);
  verifyDamage(dir, copy, "run", 0, "row group 0");
  verifyDamage(dir, copy, "run", 2, "level-of-detail chunk");
  verifyDamage(dir, copy, "small-00", 1, "stacks chunk");  /* a run that folds */
  t_remove_tree(copy);
  t_remove_tree(dir);
  return t_finish("test_store_corrupt");
}
