/*
** test_perf_script.c -- unit tests of the `perf script` parser and folder
** (tools/perf_script.c) on small texts shaped like perf 6.1's output.
**
** Unit tests link only the store library, so the parser's one source file
** is compiled in here; it needs nothing but libc and xxhash.
*/
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../tools/perf_script.c"

#include "util_test.h"

/* Folds `text`; returns the profile, or NULL with the message in err. */
static perf_profile *fold(const char *text, char *err, size_t errlen){
  perf_profile *p = 0;
  FILE *in = fmemopen((void *)text, strlen(text), "r");
  if( !in ){
    perror("fmemopen");
    exit(1);
  }
  err[0] = 0;
  if( perf_script_fold(in, "t.txt", &p, err, errlen) ) p = 0;
  fclose(in);
  return p;
}

static const perf_symbol *sym(const perf_profile *p, const char *name){
  size_t i;
  for(i=0; i<p->n_symbols; i++){
    if( strcmp(p->symbols[i].name, name)==0 ) return &p->symbols[i];
  }
  fprintf(stderr, "no symbol \"%s\" among:", name);
  for(i=0; i<p->n_symbols; i++) fprintf(stderr, " \"%s\"", p->symbols[i].name);
  fputc('\n', stderr);
  return 0;
}

/* Checks one symbol's four counts. */
static void expect(const perf_profile *p, const char *name, long long self_s,
                   long long total_s, long long self_ns, long long total_ns, int line){
  const perf_symbol *s = sym(p, name);
  if( !s ){
    fprintf(stderr, "%s:%d: symbol \"%s\" missing\n", __FILE__, line, name);
    t_failures++;
    return;
  }
  if( s->self_samples!=self_s || s->total_samples!=total_s
   || s->self_ns!=self_ns || s->total_ns!=total_ns ){
    fprintf(stderr, "%s:%d: \"%s\": self %lld/%lld ns, total %lld/%lld ns; expected "
            "self %lld/%lld ns, total %lld/%lld ns\n", __FILE__, line, name,
            (long long)s->self_samples, (long long)s->self_ns,
            (long long)s->total_samples, (long long)s->total_ns,
            self_s, self_ns, total_s, total_ns);
    t_failures++;
  }
}
#define EXPECT(p, name, ss, ts, sn, tn) expect(p, name, ss, ts, sn, tn, __LINE__)

/* The error of folding `text` must start with `prefix`. */
static void expect_error(const char *text, const char *prefix, int line){
  char err[512];
  perf_profile *p = fold(text, err, sizeof(err));
  if( p ){
    fprintf(stderr, "%s:%d: folded, expected error \"%s...\"\n", __FILE__, line, prefix);
    t_failures++;
    perf_profile_free(p);
  }else if( strncmp(err, prefix, strlen(prefix))!=0 ){
    fprintf(stderr, "%s:%d: error \"%s\", expected \"%s...\"\n", __FILE__, line, err, prefix);
    t_failures++;
  }
}
#define EXPECT_ERROR(text, prefix) expect_error(text, prefix, __LINE__)

static void test_basic_and_recursion(void){
  char err[256];
  const char *text =
    "bench  4721   376.850539:     500000 cpu-clock: \n"
    "\t            1130 leaf (/tmp/bench)\n"
    "\t            1170 mid+0x20 (/tmp/bench)\n"
    "\t            1190 main+0x10 (/tmp/bench)\n"
    "\n"
    /* recursion: rec appears three times, counts once for total */
    "bench  4721   376.851039:     250000 cpu-clock: \n"
    "\t            1200 rec+0x4 (/tmp/bench)\n"
    "\t            1210 rec+0x14 (/tmp/bench)\n"
    "\t            1170 mid+0x20 (/tmp/bench)\n"
    "\t            1210 rec+0x14 (/tmp/bench)\n"
    "\t            1190 main+0x10 (/tmp/bench)\n"
    "\n";
  perf_profile *p = fold(text, err, sizeof(err));
  CHECK(p);
  if( !p ){ fprintf(stderr, "%s\n", err); return; }
  CHECK_EQ_INT(p->samples, 2);
  CHECK_EQ_INT(p->profile_ns, 750000);
  CHECK_EQ_INT(p->n_symbols, 4);
  CHECK_EQ_INT(p->lines, 12);
  CHECK_STR(p->event, "cpu-clock");
  CHECK_STR(p->top_comm, "bench");
  CHECK_EQ_INT(p->ts_micros, -1);
  CHECK(p->text_hash == XXH3_64bits(text, strlen(text)));
  EXPECT(p, "leaf", 1, 1, 500000, 500000);
  EXPECT(p, "mid",  0, 2, 0, 750000);
  EXPECT(p, "main", 0, 2, 0, 750000);
  EXPECT(p, "rec",  1, 1, 250000, 250000);
  /* first-appearance order */
  CHECK_STR(p->symbols[0].name, "leaf");
  CHECK_STR(p->symbols[3].name, "rec");
  perf_profile_free(p);
}

static void test_comm_event_tid_forms(void){
  char err[256];
  perf_profile *p = fold(
    /* comm with spaces and digits, pid/tid, cpu, event modifiers */
    "Web Content 2 12  3001/3007 [001]  9.000001:  1000 cpu-clock:ppp: \n"
    "\t    10 a (/x)\n"
    "\n"
    "Web Content 2 12  3001/3008 [000]  9.000002:  1000 cpu-clock:ppp: \n"
    "\t    10 a (/x)\n"
    "\n"
    "sh 77 9.000003: 1000 cpu-clock:ppp:\n"
    "\t    10 b (/bin/sh)\n"
    "\n"
    /* an older perf right-aligns the comm */
    "            perf    -1 [001]  9.000004:  1000 cpu-clock:ppp: \n"
    "\tffffffff8225bc41 do_syscall_64+0x41 ([kernel.kallsyms])\n"
    "\n", err, sizeof(err));
  CHECK(p);
  if( !p ){ fprintf(stderr, "%s\n", err); return; }
  CHECK_EQ_INT(p->samples, 4);
  CHECK_STR(p->event, "cpu-clock:ppp");
  CHECK_STR(p->top_comm, "Web Content 2 12");
  EXPECT(p, "a", 2, 2, 2000, 2000);
  EXPECT(p, "b", 1, 1, 1000, 1000);
  EXPECT(p, "do_syscall_64", 1, 1, 1000, 1000);
  perf_profile_free(p);

  /* Ties for the most samples go to the first comm seen. */
  p = fold("z 1 1.0: 5 cpu-clock:\n\t1 f (/x)\n\ny 2 1.1: 5 cpu-clock:\n\t1 f (/x)\n",
           err, sizeof(err));
  CHECK(p);
  if( p ) CHECK_STR(p->top_comm, "z");
  perf_profile_free(p);
}

static void test_names(void){
  char err[256];
  perf_profile *p = fold(
    "app 1 1.5: 100 cpu-clock: \n"
    /* kernel frames keep their names */
    "\tffffffff822575e7 clear_page_erms ([kernel.kallsyms])\n"
    "\tffffffff81000c82 asm_exc_page_fault+0x22 ([kernel.kallsyms])\n"
    /* unsymbolised in a known dso, and with no dso */
    "\t           16932 [unknown] (/usr/lib/x86_64-linux-gnu/liblzma.so.5.4.1)\n"
    "\t               0 [unknown] ([unknown])\n"
    "\t      1e00000000 [unknown] ([unknown])\n"
    /* (inlined) frames are the inlined function's */
    "\t           14f38 intel_check_word (inlined)\n"
    "\t           150f8 handle_intel+0x78 (inlined)\n"
    "\t            1a30 [unknown] (inlined)\n"
    /* real names that look like decorations */
    "\t            4010 memcmp@plt+0x0 (/usr/bin/app)\n"
    "\t            4020 x@@GLIBC_2.2.5 (/lib/libc.so.6)\n"
    "\t            4030 f.isra.0+0x1f (/usr/bin/app)\n"
    "\t            4040 deadbeef (/usr/bin/app)\n"
    "\t            4050 g+0x (/usr/bin/app)\n"
    "\t            4060 std::vector<int, std::allocator<int> >::push_back(int const&)+0x2a (/usr/bin/app)\n"
    "\t            4070 (anonymous namespace)::Run::operator()(int) const (/usr/bin/app)\n"
    "\t            4080 run (/opt/my app (x86)/bin/app)\n"
    "\t            4090 nodso+0x10\n"
    "\t            40a0\n"
    "\t            40b0 (/usr/lib/libz.so.1)\n"
    "\n", err, sizeof(err));
  CHECK(p);
  if( !p ){ fprintf(stderr, "%s\n", err); return; }
  EXPECT(p, "clear_page_erms", 1, 1, 100, 100);
  EXPECT(p, "asm_exc_page_fault", 0, 1, 0, 100);
  EXPECT(p, "[unknown] (liblzma.so.5.4.1)", 0, 1, 0, 100);
  EXPECT(p, "[unknown]", 0, 1, 0, 100);   /* three frames, one sample */
  EXPECT(p, "intel_check_word", 0, 1, 0, 100);
  EXPECT(p, "handle_intel", 0, 1, 0, 100);
  EXPECT(p, "memcmp@plt", 0, 1, 0, 100);
  EXPECT(p, "x@@GLIBC_2.2.5", 0, 1, 0, 100);
  EXPECT(p, "f.isra.0", 0, 1, 0, 100);
  EXPECT(p, "deadbeef", 0, 1, 0, 100);
  EXPECT(p, "g+0x", 0, 1, 0, 100);
  EXPECT(p, "std::vector<int, std::allocator<int> >::push_back(int const&)", 0, 1, 0, 100);
  EXPECT(p, "(anonymous namespace)::Run::operator()(int) const", 0, 1, 0, 100);
  EXPECT(p, "run", 0, 1, 0, 100);
  EXPECT(p, "nodso", 0, 1, 0, 100);
  EXPECT(p, "[unknown] (libz.so.1)", 0, 1, 0, 100);
  CHECK_EQ_INT(p->n_symbols, 16);
  perf_profile_free(p);
}

static void test_no_callchain_and_srcline(void){
  char err[256];
  /* Recorded without -g: the frame is on the header line, no blank lines. */
  perf_profile *p = fold(
    "xz 9 2.000001: 500000 cpu-clock:      16932 lzma_mf_bt4_find+0x12 (/usr/lib/liblzma.so.5)\n"
    "xz 9 2.000002: 500000 cpu-clock:      16932 lzma_mf_bt4_find+0x12 (/usr/lib/liblzma.so.5)\n"
    "xz 9 2.000003: 500000 cpu-clock:      ffff [unknown] ([unknown])\n",
    err, sizeof(err));
  CHECK(p);
  if( p ){
    CHECK_EQ_INT(p->samples, 3);
    EXPECT(p, "lzma_mf_bt4_find", 2, 2, 1000000, 1000000);
    EXPECT(p, "[unknown]", 1, 1, 500000, 500000);
  }else{
    fprintf(stderr, "%s\n", err);
  }
  perf_profile_free(p);

  /* -F +srcline: a "  file:line" line under each frame. */
  p = fold(
    "inl 5 4.5: 10 cpu-clock: \n"
    "\t           14f38 intel_check_word+0x158\n"
    "  dl-cacheinfo.h:158 (inlined)\n"
    "\t           1a303 _dl_sysdep_start+0x33 (/usr/lib/ld-linux-x86-64.so.2)\n"
    "  dl-sysdep.c:140\n"
    "\n", err, sizeof(err));
  CHECK(p);
  if( p ){
    EXPECT(p, "intel_check_word", 1, 1, 10, 10);
    EXPECT(p, "_dl_sysdep_start", 0, 1, 0, 10);
    CHECK_EQ_INT(p->n_symbols, 2);
  }else{
    fprintf(stderr, "%s\n", err);
  }
  perf_profile_free(p);

  /* Windows line ends, samples that end at EOF without a blank line. */
  p = fold("a 1 1.0: 7 cpu-clock:\r\n\t1 f (/x)\r\n\r\na 1 1.1: 7 cpu-clock:\r\n\t1 f (/x)",
           err, sizeof(err));
  CHECK(p);
  if( p ) EXPECT(p, "f", 2, 2, 14, 14);
  perf_profile_free(p);
}

static void test_header_times(void){
  char err[256];
  perf_profile *p;
  setenv("TZ", "UTC", 1);
  tzset();
  p = fold(
    "# ========\n"
    "# captured on    : Wed Dec  2 13:55:15 2026\n"
    "# header version : 1\n"
    "# ========\n"
    "#\n"
    "a 1 1.0: 7 cpu-clock:\n\t1 f (/x)\n", err, sizeof(err));
  CHECK(p);
  if( p ) CHECK_EQ_INT(p->ts_micros, 1796219715LL*1000000);
  perf_profile_free(p);
  /* a recorded command line with newlines breaks the '#' prefix */
  p = fold(
    "# ========\n"
    "# captured on    : Wed Dec  2 13:55:15 2026\n"
    "# cmdline : /usr/bin/perf record -g -- python3 -c import json\n"
    "d=[{\"k\":i} for i in range(9)]\n"
    "\tprint(d) \n"
    "# ========\n"
    "#\n"
    "a 1 1.0: 7 cpu-clock:\n\t1 f (/x)\n", err, sizeof(err));
  CHECK(p);
  if( p ){
    CHECK_EQ_INT(p->ts_micros, 1796219715LL*1000000);
    CHECK_EQ_INT(p->samples, 1);
    CHECK_EQ_INT(p->n_symbols, 1);
  }else{
    fprintf(stderr, "%s\n", err);
  }
  perf_profile_free(p);
  /* clock data, when recorded, is the more precise start time */
  p = fold(
    "# captured on    : Wed Dec  2 13:55:15 2026\n"
    "# clockid: monotonic (1)\n"
    "# reference time: 2026-12-02 13:55:14.250001 = 1796219714.250001 (TOD) = 376.1 (monotonic)\n"
    "a 1 1.0: 7 cpu-clock:\n\t1 f (/x)\n", err, sizeof(err));
  CHECK(p);
  if( p ) CHECK_EQ_INT(p->ts_micros, 1796219714250001LL);
  perf_profile_free(p);
}

/* Samples whose chain perf printed empty get their leaf from a second,
** -G pass (perf_script_add_leaves). */
static void test_empty_chains(void){
  char err[256];
  FILE *in;
  static const char leaves[] =
    "py 8 1.0: 10 cpu-clock:     10 main (/x)\n"
    "py 8 1.1: 20 cpu-clock:     5a014a _PyEval_SliceIndex (/usr/bin/python3.11)\n"
    "py 8 1.2: 30 cpu-clock:     20 main (/x)\n"
    "py 8 1.3: 40 cpu-clock:     30 fresh+0x3 (/x)\n";
  perf_profile *p = fold(
    "py 8 1.0: 10 cpu-clock:\n\t10 main (/x)\n\n"
    "py 8 1.1: 20 cpu-clock:\n\n"
    "py 8 1.2: 30 cpu-clock:\n\t20 main (/x)\n\n"
    "py 8 1.3: 40 cpu-clock:\n", err, sizeof(err));
  CHECK(p);
  if( !p ){ fprintf(stderr, "%s\n", err); return; }
  CHECK_EQ_INT(p->n_empty, 2);
  if( p->n_empty==2 ){
    CHECK_EQ_INT(p->empty_samples[0], 1);
    CHECK_EQ_INT(p->empty_samples[1], 3);
  }
  EXPECT(p, "main", 2, 2, 40, 40);
  CHECK_EQ_INT(p->n_symbols, 1);
  in = fmemopen((void *)leaves, sizeof(leaves)-1, "r");
  CHECK(perf_script_add_leaves(p, in, "pass2", err, sizeof(err))==0);
  fclose(in);
  EXPECT(p, "main", 2, 2, 40, 40);                 /* not counted twice */
  EXPECT(p, "_PyEval_SliceIndex", 1, 1, 20, 20);
  EXPECT(p, "fresh", 1, 1, 40, 40);
  CHECK_EQ_INT(p->samples, 4);
  CHECK_EQ_INT(p->profile_ns, 100);
  /* a second pass of another length is refused */
  in = fmemopen((void *)leaves, 100, "r");
  CHECK(perf_script_add_leaves(p, in, "pass2", err, sizeof(err))==-1);
  CHECK(strncmp(err, "pass2: 2 samples, where the first pass read 4", 46)==0);
  fclose(in);
  perf_profile_free(p);
  /* a second pass whose periods differ is other data */
  p = fold("py 8 1.0: 15 cpu-clock:\n\npy 8 1.1: 20 cpu-clock:\n\t1 f (/x)\n",
           err, sizeof(err));
  CHECK(p);
  if( !p ) return;
  in = fmemopen((void *)leaves, sizeof(leaves)-1, "r");
  CHECK(perf_script_add_leaves(p, in, "pass2", err, sizeof(err))==-1);
  CHECK_STR(err, "pass2:1: sample 0 has period 10 here and 15 in the first pass");
  fclose(in);
  perf_profile_free(p);
}

static void test_malformed(void){
  /* a frame before any header */
  EXPECT_ERROR("\t  1130 leaf (/tmp/bench)\n", "t.txt:1: expected a sample header");
  /* a frame after the blank line that ended its sample */
  EXPECT_ERROR("a 1 1.0: 7 cpu-clock:\n\t1 f (/x)\n\n\t2 g (/x)\n",
               "t.txt:4: expected a sample header");
  /* a line that is no header */
  EXPECT_ERROR("a 1 1.0: 7 cpu-clock:\n\t1 f (/x)\n\nhello world\n",
               "t.txt:4: expected a sample header");
  EXPECT_ERROR("# comment\n\nPERFILE2\x01\x02 garbage\n", "t.txt:3: expected a sample header");
  /* a frame line without its address */
  EXPECT_ERROR("a 1 1.0: 7 cpu-clock:\n\t1 f (/x)\n\tg (/x)\n",
               "t.txt:3: expected a frame");
  /* no period, no event */
  EXPECT_ERROR("a 1 1.0: cpu-clock:\n", "t.txt:1: sample header has no period");
  EXPECT_ERROR("a 1 1.0: 77\n", "t.txt:1: sample header has no event");
  EXPECT_ERROR("a 1 1.0: 99999999999999999999 cpu-clock:\n", "t.txt:1: period");
  /* two events do not fold into one profile */
  EXPECT_ERROR("a 1 1.0: 7 cpu-clock:\n\t1 f (/x)\n\na 1 1.1: 7 page-faults:\n",
               "t.txt:4: sample of event 'page-faults' in a profile of 'cpu-clock'");
  /* binary data */
  {
    char err[256];
    static const char bin[] = "a 1 1.0: 7 cpu-clock:\n\t1 f\0 (/x)\n";
    perf_profile *p = 0;
    FILE *in = fmemopen((void *)bin, sizeof(bin)-1, "r");
    CHECK(perf_script_fold(in, "t.txt", &p, err, sizeof(err))==-1);
    CHECK(p==0);
    CHECK(strncmp(err, "t.txt:2: NUL byte", 17)==0);
    fclose(in);
  }
  {
    char err[256];
    static const char data[] = "PERFILE2h\0\0\0\0\0\0\0\n\1\2";
    perf_profile *p = 0;
    FILE *in = fmemopen((void *)data, sizeof(data)-1, "r");
    CHECK(perf_script_fold(in, "t.txt", &p, err, sizeof(err))==-1);
    CHECK(strncmp(err, "t.txt:1: this is a perf.data", 28)==0);
    fclose(in);
  }
}

static void test_empty(void){
  char err[256];
  perf_profile *p = fold("# only comments\n\n", err, sizeof(err));
  CHECK(p);
  if( p ){
    CHECK_EQ_INT(p->samples, 0);
    CHECK_EQ_INT(p->n_symbols, 0);
    CHECK(p->event==0);
    CHECK(p->top_comm==0);
  }
  perf_profile_free(p);
}

/* Many distinct symbols: the intern table grows and stays exact. */
static void test_many_symbols(void){
  char err[256];
  size_t cap = 1<<20, n = 0;
  char *text = malloc(cap);
  int i;
  perf_profile *p;
  CHECK(text);
  if( !text ) return;
  for(i=0; i<3000; i++){
    n += (size_t)snprintf(text+n, cap-n, "t %d 1.%d: 3 cpu-clock:\n\t1 s%d (/x)\n"
                          "\t2 s%d (/x)\n\t3 common (/x)\n\n", i%7, i, i, i/2);
  }
  p = fold(text, err, sizeof(err));
  CHECK(p);
  if( p ){
    CHECK_EQ_INT(p->samples, 3000);
    CHECK_EQ_INT(p->n_symbols, 3001);
    EXPECT(p, "common", 0, 3000, 0, 9000);
    EXPECT(p, "s0", 1, 2, 3, 6);        /* leaf of sample 0, caller in samples 0 and 1 */
    EXPECT(p, "s1", 1, 3, 3, 9);        /* leaf of 1, caller in 2 and 3 */
    EXPECT(p, "s2999", 1, 1, 3, 3);
    CHECK_STR(p->top_comm, "t");
  }
  perf_profile_free(p);
  free(text);
}

int main(void){
  test_basic_and_recursion();
  test_comm_event_tid_forms();
  test_names();
  test_no_callchain_and_srcline();
  test_header_times();
  test_empty_chains();
  test_malformed();
  test_empty();
  test_many_symbols();
  return t_finish("test_perf_script");
}
