/*
** test_lod.c -- a calls file's level-of-detail chunk (lod.c, FORMAT.md
** "Level of detail"): the writer's bytes read back by the reader, in both
** layouts (with the groups' summaries, and tag 2's blocks only), and
** every malformed variant refused (-1), never read as figures.
*/
#include <stdint.h>

#include "util_test.h"
#include "calls.h"
#include "segment.h"

#define N 300                     /* rows of the group: 3 blocks of 128 */

static uint64_t thr[N], cid[N], sta[N], dur[N], fn[N];
static uint64_t offs[3][N/FNT_LOD_ROWS+1];

/* A fake segment of one row group of N rows, 3 threads, 4 functions. */
static fnt_segment fakeSeg(fnt_seg_rg *rg){
  fnt_segment s;
  memset(&s, 0, sizeof(s));
  memset(rg, 0, sizeof(*rg));
  rg->nrows = N;
  s.nrg = 1;
  s.rgs = rg;
  s.nthreads = 3;
  s.nfuncs = 4;
  return s;
}

/* The chunk of the rows above as fnt_lod_load leaves it. */
static void loadBytes(fnt_lod *l, const uint8_t *p, size_t n, int summed){
  fnt_rd r;
  fnt_lod_clear(l);
  fnt_buf_append(&l->raw, p, n);
  r.p = l->raw.data; r.end = r.p + n; r.ok = 1;
  l->rows = (uint32_t)fnt_get_varint(&r);
  (void)fnt_get_varint(&r);              /* one group */
  l->part = fnt_malloc(2*sizeof(size_t));
  l->part[0] = 0;
  l->part[1] = (size_t)fnt_get_varint(&r);
  l->body = (size_t)(r.p - l->raw.data);
  l->summed = summed;
}

/* The entries of block (or group) b, read to their end: checked (with
** check) against what rows [b.row, b.row+b.nrows) do: per thread its
** calls and its longest call, ties to the smallest call_id.
** @return the iterator's last answer: 0 at the end, -1 malformed. */
static int readEntries(fnt_lod_iter *it, const fnt_lod_block *b, int check){
  fnt_lod_entry e;
  uint64_t calls[3] = {0, 0, 0};
  size_t i;
  int r;
  if( check ){
    CHECK_EQ_INT(b->first, sta[b->row]);
    CHECK_EQ_INT(b->last, sta[b->row+b->nrows-1]);
    CHECK_EQ_INT(b->call_id, cid[b->row]);
    for(i=b->row; i<b->row+b->nrows; i++) calls[thr[i]]++;
  }
  while( (r = fnt_lod_next_entry(it, &e))==1 ){
    if( !check ) continue;
    CHECK_EQ_INT(e.calls, calls[e.thread]);
    for(i=b->row; i<b->row+b->nrows; i++){
      if( thr[i]!=e.thread ) continue;
      CHECK((int64_t)dur[i]<e.dur || ((int64_t)dur[i]==e.dur && (int64_t)cid[i]>=e.call_id));
      if( (int64_t)cid[i]==e.call_id ){
        CHECK_EQ_INT(dur[i], e.dur);
        CHECK_EQ_INT(sta[i], e.start);
        CHECK_EQ_INT(fn[i], e.fn);
      }
    }
  }
  return r;
}

/* Reads the group whole, its summary (when the layout has them) then its
** blocks: 0 when every one is well formed (and they say what the rows
** do), -1 at the first malformed. */
static int readAll(fnt_lod *l, const fnt_segment *s, int check){
  fnt_lod_iter it;
  fnt_lod_block b;
  int r = fnt_lod_group(l, s, 0, &it, &b);
  if( r<0 ) return -1;
  if( check ) CHECK_EQ_INT(r, l->summed);
  if( r==1 ){
    if( check ) CHECK_EQ_INT(b.nrows, s->rgs[0].nrows);
    if( readEntries(&it, &b, check)<0 ) return -1;
  }
  while( (r = fnt_lod_next_block(&it, &b))==1 ){
    if( check ) CHECK_EQ_INT(b.off[0], offs[0][b.row/FNT_LOD_ROWS]);
    if( readEntries(&it, &b, check)<0 ) return -1;
  }
  return r<0 ? -1 : 0;
}

/* One layout (summed: with the groups' summaries, section tag 3; else tag
** 2's blocks only): written, read back, every corruption refused. */
static void layout(int summed){
  fnt_lod_writer w;
  fnt_lod_rows g;
  fnt_buf raw = {0};
  fnt_lod l;
  fnt_seg_rg rg;
  fnt_segment s = fakeSeg(&rg);
  size_t i, bad = 0;

  memset(&l, 0, sizeof(l));
  CHECK_EQ_INT(fnt_lod_writer_init(&w, 3), FNT_OK);
  w.summed = summed;
  g.thr = thr; g.cid = cid; g.sta = sta; g.dur = dur; g.fn = fn;
  g.off_sta = offs[0]; g.off_cid = offs[1]; g.off_dur = offs[2];
  fnt_lod_write_group(&w, &g, N);
  fnt_lod_finish(&w, &raw);
  CHECK(!raw.failed);

  loadBytes(&l, raw.data, raw.len, summed);
  CHECK_EQ_INT(l.rows, FNT_LOD_ROWS);
  CHECK_EQ_INT(readAll(&l, &s, 1), 0);

  /* Every byte changed, and every length cut: refused, or read as some
  ** well-formed group (a changed count must still add up to the rows). */
  for(i=l.body; i<raw.len; i++){
    uint8_t *p = malloc(raw.len);
    int r;
    memcpy(p, raw.data, raw.len);
    p[i] ^= 0x41;
    loadBytes(&l, p, raw.len, summed);
    r = readAll(&l, &s, 0);
    bad += r<0;
    free(p);
  }
  CHECK(bad>0);
  for(i=l.body; i<raw.len; i++){
    loadBytes(&l, raw.data, i, summed);
    l.part[1] = i - l.body;
    CHECK_EQ_INT(readAll(&l, &s, 0), -1);
  }
  /* A group with more rows than the blocks (and summary) say: refused. */
  rg.nrows = N+1;
  loadBytes(&l, raw.data, raw.len, summed);
  CHECK_EQ_INT(readAll(&l, &s, 0), -1);

  fnt_lod_clear(&l);
  fnt_lod_writer_clear(&w);
  fnt_buf_free(&raw);
}

int main(void){
  size_t i, k;
  for(i=0; i<N; i++){
    thr[i] = (i*7) % 3;
    cid[i] = 1000 + (i*37) % 301;        /* not in row order */
    sta[i] = 50 + 10*i;
    dur[i] = 3 + i%4;                    /* ties everywhere */
    fn[i] = i%4;
  }
  for(k=0; k<3; k++) for(i=0; i<=N/FNT_LOD_ROWS; i++) offs[k][i] = 5*i + k;
  layout(1);
  layout(0);
  return t_finish("test_lod");
}
