/*
** test_timeline.c -- fnt_timeline_compute and fnt_timeline_span (SPEC §8)
** through the C API, on a run worked out by hand (times in ns):
**
**   thread 1: main [0,100] { a [10,20], b [30,40], c [45,95] }
**   thread 2: w [5,60]
**
** filed in two chunks, the second first.  test_timeline.py compares SQL
** and `fnt timeline` (this API) with a reference on random runs.
*/
#include <stdint.h>

#include "util_test.h"

static const fnt_function fns[] = {
  {"main", "c acme * main().", 1}, {"a", NULL, 1}, {"b", NULL, 1},
  {"c", NULL, 1}, {"w", NULL, 1}
};
#define E(th, seq, t, fn, kind) {(seq), (t), (th), (fn), FNT_KIND_##kind}
static const fnt_event evs[] = {
  E(1, 0, 0, 0, ENTRY), E(1, 1, 10, 1, ENTRY), E(1, 2, 20, 1, EXIT),
  E(1, 3, 30, 2, ENTRY), E(1, 4, 40, 2, EXIT), E(1, 5, 45, 3, ENTRY),
  E(2, 6, 5, 4, ENTRY), E(2, 7, 60, 4, EXIT),
  E(1, 8, 95, 3, EXIT), E(1, 9, 100, 0, EXIT),
};
#define NEV (sizeof(evs)/sizeof(evs[0]))

static void fileChunk(fnt_store *st, size_t from, size_t to, int64_t chunk){
  fnt_chunk c;
  memset(&c, 0, sizeof(c));
  c.repo = "acme/tl"; c.run_id = "r"; c.ts_micros = -1;
  c.target = "t"; c.source = "xray-basic"; c.chunk = chunk; c.chunks = 2;
  c.total_events = (int64_t)NEV; c.threads = -1;
  c.functions = fns; c.n_functions = sizeof(fns)/sizeof(fns[0]);
  c.events = evs + from; c.n_events = to - from;
  CHECK_RC(st, fnt_file_chunk(st, &c), 1);
}

/* The rows as "thread/depth/bucket:symbol*calls" joined by spaces. */
static const char *render(const fnt_timeline *t){
  static char out[1024];
  size_t i, used = 0;
  out[0] = 0;
  for(i=0; i<fnt_timeline_count(t); i++){
    const fnt_timeline_row *r = &fnt_timeline_rows(t)[i];
    used += (size_t)snprintf(out+used, sizeof(out)-used, "%s%lld/%lld/%lld:%s*%lld",
                             i ? " " : "", (long long)r->thread, (long long)r->depth,
                             (long long)r->bucket, r->symbol, (long long)r->calls);
    if( used>=sizeof(out) ) break;
  }
  return out;
}

static void expect(fnt_store *st, fnt_snapshot *snap, int64_t t0, int64_t t1,
                   int64_t buckets, int64_t thread, const char *want){
  fnt_timeline *t = 0;
  CHECK_RC(st, fnt_timeline_compute(snap, "r", t0, t1, buckets, thread, &t), FNT_OK);
  CHECK_STR(render(t), want);
  fnt_timeline_free(t);
}

int main(void){
  const char *dir = t_scratch_dir("timeline");
  fnt_store *st = 0;
  fnt_snapshot *snap = 0;
  fnt_timeline *t = (fnt_timeline*)&t;
  const fnt_timeline_row *r;
  int64_t first = -1, last = -1;

  CHECK_RC(st, fnt_open(dir, FNT_OPEN_CREATE, &st), FNT_OK);
  fileChunk(st, 6, NEV, 1);
  fileChunk(st, 0, 6, 0);
  CHECK_RC(st, fnt_snapshot_current(st, &snap), FNT_OK);

  CHECK_RC(st, fnt_timeline_span(snap, "r", &first, &last), FNT_OK);
  CHECK_EQ_INT(first, 0);
  CHECK_EQ_INT(last, 100);

  /* w = 20: [10,30) holds a; [30,50) b and c, c the longer. */
  expect(st, snap, 10, 50, 2, -1,
         "1/0/-1:main*1 1/1/0:a*1 1/1/1:c*2 2/0/-1:w*1");
  /* a and b tie at 10 ns: the smaller call_id, a. */
  expect(st, snap, 10, 45, 1, 1, "1/0/-1:main*1 1/1/0:a*2");
  /* more buckets than ns: w = 1 */
  expect(st, snap, 0, 11, 1000, 1, "1/0/0:main*1 1/1/10:a*1");
  /* the whole run in one bucket, thread 2 only */
  expect(st, snap, 0, 101, 1, 2, "2/0/0:w*1");
  /* a window that ends where a call ends: not running at t0 = 60 */
  expect(st, snap, 60, 70, 5, 2, "");
  expect(st, snap, 1000, 2000, 3, -1, "");

  /* The row's fields. */
  CHECK_RC(st, fnt_timeline_compute(snap, "r", 0, 101, 1, 1, &t), FNT_OK);
  CHECK_EQ_INT(fnt_timeline_count(t), 2);
  r = fnt_timeline_rows(t);
  CHECK_EQ_INT(r[0].call_id, 0);
  CHECK_EQ_INT(r[0].start_ns, 0);
  CHECK_EQ_INT(r[0].dur_ns, 100);
  CHECK_STR(r[0].key, "c acme * main().");
  CHECK_EQ_INT(r[1].call_id, 5);
  CHECK_EQ_INT(r[1].dur_ns, 50);
  CHECK_STR(r[1].key, "?c");
  CHECK_EQ_INT(r[1].calls, 3);
  fnt_timeline_free(t);

  /* Bad arguments: an error with a message, *out NULL. */
  t = (fnt_timeline*)&t;
  CHECK_RC(st, fnt_timeline_compute(snap, "r", 10, 10, 5, -1, &t), FNT_E_INVALID);
  CHECK(t==0);
  CHECK_STR(fnt_errmsg(st), "t1 (10) must be greater than t0 (10)");
  CHECK_RC(st, fnt_timeline_compute(snap, "r", 0, 10, 0, -1, &t), FNT_E_INVALID);
  CHECK_STR(fnt_errmsg(st), "buckets (0) must be at least 1");
  CHECK_RC(st, fnt_timeline_compute(snap, "nope", 0, 10, 5, -1, &t), FNT_E_NOTFOUND);
  CHECK(strstr(fnt_errmsg(st), "no run 'nope'")!=0);
  CHECK_RC(st, fnt_timeline_span(snap, "nope", &first, &last), FNT_E_NOTFOUND);
  CHECK_RC(st, fnt_timeline_compute(snap, 0, 0, 10, 5, -1, &t), FNT_E_MISUSE);
  CHECK_RC(st, fnt_timeline_compute(0, "r", 0, 10, 5, -1, &t), FNT_E_MISUSE);
  CHECK_RC(st, fnt_timeline_compute(snap, "r", 0, 10, 5, -1, 0), FNT_E_MISUSE);
  /* The widest window an int64 allows: no overflow in the bucket width. */
  expect(st, snap, INT64_MIN, INT64_MAX, 3, 2, "2/0/1:w*1");
  fnt_timeline_free(0);
  CHECK_EQ_INT(fnt_timeline_count(0), 0);

  /* A run filed without events is a run: it spans [0, 0] and draws
  ** nothing, where an unknown one is an error. */
  {
    fnt_chunk c;
    memset(&c, 0, sizeof(c));
    c.repo = "acme/tl"; c.run_id = "empty"; c.ts_micros = -1;
    c.target = "t"; c.source = "xray-basic"; c.chunk = 0; c.chunks = 1;
    c.threads = -1; c.functions = fns; c.n_functions = 1;
    CHECK_RC(st, fnt_file_chunk(st, &c), 1);
    fnt_snapshot_release(snap);
    CHECK_RC(st, fnt_snapshot_current(st, &snap), FNT_OK);
    first = last = -1;
    CHECK_RC(st, fnt_timeline_span(snap, "empty", &first, &last), FNT_OK);
    CHECK_EQ_INT(first, 0);
    CHECK_EQ_INT(last, 0);
    CHECK_RC(st, fnt_timeline_compute(snap, "empty", 0, 1, 100, -1, &t), FNT_OK);
    CHECK_EQ_INT(fnt_timeline_count(t), 0);
    fnt_timeline_free(t);
    /* the other run keeps its span */
    CHECK_RC(st, fnt_timeline_span(snap, "r", &first, &last), FNT_OK);
    CHECK_EQ_INT(last, 100);
  }
  CHECK(fnt_timeline_rows(0)==0);

  fnt_snapshot_release(snap);
  fnt_close(st);
  t_remove_tree(dir);
  return t_finish("test_timeline");
}
