/*
** util_test.c -- helpers shared by the C unit tests (util_test.h).
*/
#include <stdint.h>
#include <string.h>
#include <unistd.h>

#include "util_test.h"

int t_failures;

const char *t_scratch_dir(const char *name){
  static char buf[8][512];
  static int slot;
  const char *base = getenv("FNT_TEST_TMP");
  char *out = buf[slot++ % 8];
  char cmd[600];
  if( base==0 || base[0]==0 ) base = "/tmp";
  snprintf(cmd, sizeof(cmd), "mkdir -p '%s'", base);
  if( system(cmd) ) {}
  snprintf(out, 512, "%s/%s-%d", base, name, (int)getpid());
  t_remove_tree(out);
  return out;
}

void t_remove_tree(const char *path){
  char cmd[600];
  snprintf(cmd, sizeof(cmd), "rm -rf '%s'", path);
  if( system(cmd) ) {}
}

int t_finish(const char *name){
  if( t_failures ){
    printf("%s: %d check(s) failed\n", name, t_failures);
    return 1;
  }
  printf("%s: all checks passed\n", name);
  return 0;
}

static uint64_t rnd(uint64_t *s){
  *s ^= *s << 13; *s ^= *s >> 7; *s ^= *s << 17;
  return *s;
}

void t_chunk_make(t_chunk *t, const char *repo, const char *run_id,
                  int64_t chunk, int64_t chunks, size_t n, uint32_t threads,
                  uint64_t seq0, unsigned seed){
  static const char *syms[] = {"main", "parse", "lex", "emit", "alloc", "free_all"};
  uint64_t s = seed*2654435761u + 1;
  uint32_t depth[64] = {0};
  uint32_t stack[64][64];
  uint64_t tns = 1000;
  size_t i;
  memset(t, 0, sizeof(*t));
  t->fns = calloc(6, sizeof(fnt_function));
  t->ev = calloc(n ? n : 1, sizeof(fnt_event));
  for(i=0; i<6; i++){
    t->fns[i].symbol = syms[i];
    t->fns[i].stable_id = i%2 ? 0 : syms[i];
    t->fns[i].local = i<4;
  }
  if( threads==0 ) threads = 1;
  if( threads>64 ) threads = 64;
  for(i=0; i<n; i++){
    uint32_t th = (uint32_t)(rnd(&s) % threads);
    fnt_event *e = &t->ev[i];
    tns += 1 + rnd(&s) % 500;
    e->seq_no = seq0 + i;
    e->t_ns = tns;
    e->thread = th + 100;
    if( depth[th]>0 && (depth[th]>=60 || rnd(&s)%2) ){
      e->kind = FNT_KIND_EXIT;
      e->function = stack[th][--depth[th]];
    }else{
      e->kind = FNT_KIND_ENTRY;
      e->function = (uint32_t)(rnd(&s) % 6);
      stack[th][depth[th]++] = e->function;
    }
  }
  t->c.repo = repo;
  t->c.commit = "c0ffee";
  t->c.run_id = run_id;
  t->c.ts_micros = 1764680000000000;
  t->c.target = "widget_tests";
  t->c.source = "synthetic";
  t->c.chunk = chunk;
  t->c.chunks = chunks;
  t->c.total_events = (int64_t)n * chunks;
  t->c.duration_ns = (int64_t)tns;
  t->c.threads = -1;
  t->c.functions = t->fns;
  t->c.n_functions = 6;
  t->c.events = t->ev;
  t->c.n_events = n;
}

void t_chunk_free(t_chunk *t){
  free(t->fns);
  free(t->ev);
  memset(t, 0, sizeof(*t));
}

void t_file_run(fnt_store *st, const char *repo, const char *run_id,
                int64_t chunks, size_t n, uint32_t threads, unsigned seed0){
  int64_t k;
  for(k=0; k<chunks; k++){
    t_chunk t;
    t_chunk_make(&t, repo, run_id, k, chunks, n, threads, (uint64_t)k*n,
                 seed0 + (unsigned)k);
    CHECK_RC(st, fnt_file_chunk(st, &t.c), 1);
    t_chunk_free(&t);
  }
}
