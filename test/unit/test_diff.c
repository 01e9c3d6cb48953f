/*
** test_diff.c -- fnt_diff (SPEC §9) against fnt_account of each run.
**
** Random pairs of runs (several threads, deep nesting, multi-chunk runs,
** functions renamed on one side so that some keys are in one run only) are
** filed; for each pair, fnt_diff(a, b) must hold one row per key of either
** run's account, in strictly ascending key order, each side equal to that
** run's account row (calls, inclusive, self, p50, symbol from a first) or
** 0s with in_x = 0 when the run does not call the key.  Also: a run against
** itself, against an unknown run, two unknown runs, NULL arguments.
*/
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "fnt_store.h"
#include "util_test.h"

/* The account row of `key` in `a`, or NULL. */
static const fnt_account_row *findKey(const fnt_account *a, const char *key){
  size_t i, n = fnt_account_count(a);
  for(i=0; i<n; i++){
    if( strcmp(fnt_account_rows(a)[i].key, key)==0 ) return &fnt_account_rows(a)[i];
  }
  return 0;
}

/* One side of a diff row against the run's account row (NULL: none). */
static void checkSide(const char *what, const char *key, const fnt_account_row *r,
                      int in, int64_t calls, int64_t incl, int64_t self,
                      int64_t p50){
  if( r==0 ){
    if( in || calls || incl || self ){
      fprintf(stderr, "%s: key '%s' not in the run, yet in=%d calls=%lld\n",
              what, key, in, (long long)calls);
      t_failures++;
    }
    return;
  }
  if( !in || calls!=r->calls || incl!=r->inclusive_ns || self!=r->self_ns
   || p50!=r->p50_ns ){
    fprintf(stderr, "%s: key '%s': in=%d calls %lld incl %lld self %lld p50 "
            "%lld, account says %lld %lld %lld %lld\n", what, key, in,
            (long long)calls, (long long)incl, (long long)self, (long long)p50,
            (long long)r->calls, (long long)r->inclusive_ns,
            (long long)r->self_ns, (long long)r->p50_ns);
    t_failures++;
  }
}

/* fnt_diff(a, b) against the accounts of a and b. */
static void checkDiff(fnt_store *st, const char *zA, const char *zB){
  fnt_snapshot *snap = 0;
  fnt_account *pA = 0, *pB = 0;
  fnt_diff *d = 0;
  size_t i, n, nWant;
  char what[128];
  snprintf(what, sizeof(what), "diff(%s, %s)", zA, zB);
  CHECK_RC(st, fnt_snapshot_current(st, &snap), FNT_OK);
  CHECK_RC(st, fnt_account_compute(snap, zA, &pA), FNT_OK);
  CHECK_RC(st, fnt_account_compute(snap, zB, &pB), FNT_OK);
  CHECK_RC(st, fnt_diff_compute(snap, zA, zB, &d), FNT_OK);
  n = fnt_diff_count(d);
  /* Every key of either account, once. */
  nWant = fnt_account_count(pA);
  for(i=0; i<fnt_account_count(pB); i++){
    nWant += findKey(pA, fnt_account_rows(pB)[i].key)==0;
  }
  if( n!=nWant ){
    fprintf(stderr, "%s: %zu rows, want %zu\n", what, n, nWant);
    t_failures++;
  }
  for(i=0; i<n; i++){
    const fnt_diff_row *r = &fnt_diff_rows(d)[i];
    const fnt_account_row *ra = findKey(pA, r->key), *rb = findKey(pB, r->key);
    if( i>0 && strcmp(fnt_diff_rows(d)[i-1].key, r->key)>=0 ){
      fprintf(stderr, "%s: row %zu: key '%s' not after '%s'\n", what, i,
              r->key, fnt_diff_rows(d)[i-1].key);
      t_failures++;
    }
    if( ra==0 && rb==0 ){
      fprintf(stderr, "%s: key '%s' is in neither run\n", what, r->key);
      t_failures++;
      continue;
    }
    CHECK_STR(r->symbol, ra ? ra->symbol : rb->symbol);
    checkSide(what, r->key, ra, r->in_a, r->calls_a, r->inclusive_a, r->self_a, r->p50_a);
    checkSide(what, r->key, rb, r->in_b, r->calls_b, r->inclusive_b, r->self_b, r->p50_b);
  }
  fnt_diff_free(d);
  fnt_account_free(pA);
  fnt_account_free(pB);
  fnt_snapshot_release(snap);
}

/* Files run `zRun`: `chunks` chunks of random nested calls; with bRename,
** two of its functions get other names (keys of this run only). */
static void fileRun(fnt_store *st, const char *zRun, int chunks, unsigned seed,
                    int bRename){
  int c;
  for(c=0; c<chunks; c++){
    t_chunk t;
    t_chunk_make(&t, "acme/diff", zRun, c, chunks, 3000, 1 + seed%4,
                 (uint64_t)c*3000, seed*7 + (unsigned)c);
    if( bRename ){
      t.fns[1].symbol = "parse_v2";             /* key "?parse_v2" */
      t.fns[2].stable_id = "lex, rewritten";
    }
    CHECK_RC(st, fnt_file_chunk(st, &t.c), 1);
    t_chunk_free(&t);
  }
}

int main(void){
  const char *dir = t_scratch_dir("diff");
  fnt_store *st = 0;
  fnt_snapshot *snap = 0;
  fnt_diff *d = 0;
  unsigned k;
  CHECK_RC(st, fnt_open(dir, FNT_OPEN_CREATE, &st), FNT_OK);
  if( st==0 ) return t_finish("test_diff");

  for(k=0; k<12; k++){
    char zA[32], zB[32];
    snprintf(zA, sizeof(zA), "a-%u", k);
    snprintf(zB, sizeof(zB), "b-%u", k);
    fileRun(st, zA, 1 + (int)(k%3), 100 + k, 0);
    fileRun(st, zB, 1 + (int)((k+1)%3), 200 + k, k%2);
    checkDiff(st, zA, zB);
    checkDiff(st, zB, zA);
  }
  checkDiff(st, "a-0", "a-0");
  checkDiff(st, "a-1", "no-such-run");
  checkDiff(st, "no-such-run", "b-1");

  CHECK_RC(st, fnt_snapshot_current(st, &snap), FNT_OK);
  CHECK_RC(st, fnt_diff_compute(snap, "nope", "nope-either", &d), FNT_OK);
  CHECK_EQ_INT(fnt_diff_count(d), 0);
  fnt_diff_free(d);
  d = 0;
  CHECK_RC(st, fnt_diff_compute(snap, "a-0", 0, &d), FNT_E_MISUSE);
  CHECK(d==0 && strstr(fnt_errmsg(st), "run_b")!=0);
  CHECK(fnt_diff_count(0)==0 && fnt_diff_rows(0)==0);
  fnt_diff_free(0);
  fnt_snapshot_release(snap);

  /* One renamed pair has keys on one side only: the test covered them. */
  CHECK_RC(st, fnt_snapshot_current(st, &snap), FNT_OK);
  CHECK_RC(st, fnt_diff_compute(snap, "a-1", "b-1", &d), FNT_OK);
  {
    size_t i, nOnlyA = 0, nOnlyB = 0;
    for(i=0; i<fnt_diff_count(d); i++){
      const fnt_diff_row *r = &fnt_diff_rows(d)[i];
      nOnlyA += r->in_a && !r->in_b;
      nOnlyB += r->in_b && !r->in_a;
    }
    CHECK(nOnlyA>0 && nOnlyB>0);
  }
  fnt_diff_free(d);
  fnt_snapshot_release(snap);

  fnt_close(st);
  t_remove_tree(dir);
  return t_finish("test_diff");
}
