/*
** test_store_pruning.c -- a window scan on a 1M-event run decodes only the
** row groups that overlap the window, and files of other runs are never
** opened (counted with fnt_scan_stats).
*/
#include <string.h>

#include "util_test.h"

#define RG 16384   /* FNT_RG_ROWS */

static void scanWindow(fnt_snapshot *s, const char *run, int64_t tlo, int64_t thi,
                       int64_t after, int64_t limit, long *rows, fnt_scan_stats *stats,
                       int64_t *firstSeq){
  fnt_predicate p;
  fnt_scan *sc;
  const char *r[1];
  r[0] = run;
  fnt_predicate_init(&p);
  p.run_ids = r; p.n_run_ids = 1;
  p.t_min = tlo; p.t_max = thi;
  p.seq_min = after+1;
  p.ordered = 1;
  p.limit = limit;
  p.columns = (1u<<FNT_EV_THREAD)|(1u<<FNT_EV_SEQ_NO)|(1u<<FNT_EV_T_NS)|(1u<<FNT_EV_KIND);
  *rows = 0;
  *firstSeq = -1;
  if( fnt_scan_open(s, FNT_TABLE_EVENTS, &p, &sc) ){ t_failures++; return; }
  while( fnt_scan_next(sc)==1 ){
    int64_t t = fnt_scan_int(sc, FNT_EV_T_NS);
    if( *firstSeq<0 ) *firstSeq = fnt_scan_int(sc, FNT_EV_SEQ_NO);
    CHECK(t>=tlo && t<=thi);
    (*rows)++;
  }
  fnt_scan_stats_get(sc, stats);
  fnt_scan_close(sc);
}

int main(void){
  const char *dir = t_scratch_dir("pruning");
  fnt_store *st = 0;
  fnt_snapshot *s;
  fnt_scan_stats stats;
  t_chunk t;
  long rows;
  int64_t first, tlo, thi;
  int k;

  CHECK_RC(st, fnt_open(dir, FNT_OPEN_CREATE, &st), FNT_OK);
  /* The run: 4 chunks of 250,000 events; and two other runs. */
  for(k=0; k<4; k++){
    t_chunk_make(&t, "repo", "big", k, 4, 250000, 8, (uint64_t)k*250000, (unsigned)k);
    {
      size_t i;   /* t_ns = 10 * seq_no: windows map to seq ranges */
      for(i=0; i<t.c.n_events; i++) t.ev[i].t_ns = t.ev[i].seq_no*10;
    }
    CHECK_RC(st, fnt_file_chunk(st, &t.c), 1);
    t_chunk_free(&t);
  }
  for(k=0; k<2; k++){
    t_chunk_make(&t, "repo", k ? "other-b" : "other-a", 0, 1, 50000, 2, 0, 9);
    CHECK_RC(st, fnt_file_chunk(st, &t.c), 1);
    t_chunk_free(&t);
  }
  CHECK_RC(st, fnt_snapshot_current(st, &s), FNT_OK);

  /* A 10,000-event window inside one chunk: one file, at most 2 groups. */
  tlo = 600000*10; thi = tlo + 9999*10;
  scanWindow(s, "big", tlo, thi, -1, -1, &rows, &stats, &first);
  CHECK_EQ_INT(rows, 10000);
  CHECK_EQ_INT(first, 600000);
  CHECK_EQ_INT(stats.files_opened, 1);
  CHECK(stats.files_skipped==5);          /* 3 chunks of big, 2 other runs */
  CHECK(stats.row_groups_read<=2);
  CHECK(stats.row_groups_skipped<=(250000/RG)+1);
  printf("window of 10,000 in 1M: files opened %llu, skipped %llu; row groups read %llu, skipped %llu; rows decoded %llu\n",
         (unsigned long long)stats.files_opened, (unsigned long long)stats.files_skipped,
         (unsigned long long)stats.row_groups_read, (unsigned long long)stats.row_groups_skipped,
         (unsigned long long)stats.rows_decoded);

  /* A window straddling two chunks, with seq_no > after and a LIMIT. */
  tlo = 249000*10; thi = 252000*10;
  scanWindow(s, "big", tlo, thi, 249500, 1000, &rows, &stats, &first);
  CHECK_EQ_INT(rows, 1000);
  CHECK_EQ_INT(first, 249501);
  CHECK(stats.files_opened<=2);
  CHECK(stats.row_groups_read<=3);

  /* A window past the run's end reads nothing. */
  scanWindow(s, "big", 20000000, 30000000, -1, -1, &rows, &stats, &first);
  CHECK_EQ_INT(rows, 0);
  CHECK_EQ_INT(stats.files_opened, 0);

  fnt_snapshot_release(s);
  fnt_close(st);
  t_remove_tree(dir);
  return t_finish("test_store_pruning");
}
