/*
** perf_script.c -- the parser and folder of `perf script` text
** (perf_script.h says what it accepts and how it names things).
**
** One pass, line by line, with memory proportional to the number of
** distinct symbols and comms, not to the number of samples: a sample's
** frames are counted as they are read, "once per sample" being kept by
** remembering in each symbol the last sample that counted it.
*/
#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <xxhash.h>

#include "perf_script.h"

/* ------------------------------------------------------------------------
** Interning: name -> index into a caller's array of structs whose first
** member is the `char *name`.  Open addressing, linear probing; slots hold
** index+1 so that 0 is empty.
*/
typedef struct intern {
  size_t *slot;
  size_t  cap;              /* a power of two, or 0 */
  size_t  n;
} intern;

static const char *name_at(const void *base, size_t stride, size_t i){
  return *(char *const *)(const void *)((const char *)base + i*stride);
}

/* The index of `name` in base[0..t->n), or t->n when absent; *pos gets the
** slot where it would go. */
static size_t intern_find(const intern *t, const void *base, size_t stride,
                          const char *name, size_t len, size_t *pos){
  size_t mask = t->cap - 1;
  size_t i = (size_t)XXH3_64bits(name, len) & mask;
  while( t->slot[i] ){
    const char *s = name_at(base, stride, t->slot[i]-1);
    if( strncmp(s, name, len)==0 && s[len]==0 ){
      *pos = i;
      return t->slot[i]-1;
    }
    i = (i+1) & mask;
  }
  *pos = i;
  return t->n;
}

/* Makes room for one more entry (load <= 1/2).  0 ok, -1 no memory. */
static int intern_reserve(intern *t, const void *base, size_t stride){
  size_t cap, i, j;
  size_t *slot;
  if( (t->n+1)*2 <= t->cap ) return 0;
  cap = t->cap ? t->cap*2 : 256;
  while( (t->n+1)*2 > cap ) cap *= 2;
  slot = calloc(cap, sizeof(*slot));
  if( !slot ) return -1;
  for(i=0; i<t->n; i++){
    const char *s = name_at(base, stride, i);
    j = (size_t)XXH3_64bits(s, strlen(s)) & (cap-1);
    while( slot[j] ) j = (j+1) & (cap-1);
    slot[j] = i+1;
  }
  free(t->slot);
  t->slot = slot;
  t->cap = cap;
  return 0;
}

/* ------------------------------------------------------------------------
** The folder's state.
*/
typedef struct comm_count {
  char   *name;
  int64_t samples;
} comm_count;

typedef struct folder {
  const char   *name;       /* of the input, for messages */
  perf_profile *p;
  size_t        sym_cap;
  intern        syms;
  comm_count   *comms;
  size_t        n_comms, comm_cap;
  intern        comm_idx;
  int64_t       lineno;
  int           in_sample;  /* a header was read and no blank line since */
  int           last_was_frame;
  int           in_header_block;   /* between the "# ========" lines */
  int64_t       period;     /* of the current sample */
  int64_t       depth;      /* frames of the current sample so far */
  int64_t       sample_no;  /* of the current sample, for once-per-sample totals */
  size_t        empty_cap;
  int           leaf_pass;  /* perf_script_add_leaves(): one line per sample */
  int64_t       ordinal;    /* leaf pass: samples seen */
  size_t        next_empty; /* leaf pass: the next of p->empty_samples */
  int64_t       ts_captured;   /* "# captured on", -1 when absent */
  int64_t       ts_reference;  /* "# reference time", -1 when absent */
  char         *err;
  size_t        errlen;
} folder;

static int fail(folder *f, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
static int fail(folder *f, const char *fmt, ...){
  va_list ap;
  int n = snprintf(f->err, f->errlen, "%s:%lld: ", f->name, (long long)f->lineno);
  if( n>=0 && (size_t)n < f->errlen ){
    va_start(ap, fmt);
    vsnprintf(f->err+n, f->errlen-(size_t)n, fmt, ap);
    va_end(ap);
  }
  return -1;
}

static int fail_nomem(folder *f){
  snprintf(f->err, f->errlen, "%s: out of memory at line %lld", f->name,
           (long long)f->lineno);
  return -1;
}

/* At most the first 60 bytes of a line, for messages. */
static const char *excerpt(const char *s, size_t len, char *buf, size_t n){
  size_t k = len < n-1 ? len : n-1;
  memcpy(buf, s, k);
  buf[k] = 0;
  return buf;
}

static char *dup_n(const char *s, size_t len){
  char *d = malloc(len+1);
  if( d ){
    memcpy(d, s, len);
    d[len] = 0;
  }
  return d;
}

/* The index of symbol `name`, added when new; -1 no memory. */
static long long symbol_index(folder *f, const char *name, size_t len){
  perf_profile *p = f->p;
  size_t pos, i;
  if( intern_reserve(&f->syms, p->symbols, sizeof(perf_symbol)) ) return -1;
  i = intern_find(&f->syms, p->symbols, sizeof(perf_symbol), name, len, &pos);
  if( i < p->n_symbols ) return (long long)i;
  if( p->n_symbols == f->sym_cap ){
    size_t cap = f->sym_cap ? f->sym_cap*2 : 256;
    perf_symbol *s = realloc(p->symbols, cap*sizeof(*s));
    if( !s ) return -1;
    p->symbols = s;
    f->sym_cap = cap;
  }
  memset(&p->symbols[i], 0, sizeof(p->symbols[i]));
  p->symbols[i].name = dup_n(name, len);
  if( !p->symbols[i].name ) return -1;
  p->symbols[i].last_sample = -1;
  p->n_symbols++;
  f->syms.n++;
  f->syms.slot[pos] = i+1;
  return (long long)i;
}

static int count_comm(folder *f, const char *name, size_t len){
  size_t pos, i;
  if( intern_reserve(&f->comm_idx, f->comms, sizeof(comm_count)) ) return -1;
  i = intern_find(&f->comm_idx, f->comms, sizeof(comm_count), name, len, &pos);
  if( i == f->n_comms ){
    if( f->n_comms == f->comm_cap ){
      size_t cap = f->comm_cap ? f->comm_cap*2 : 16;
      comm_count *c = realloc(f->comms, cap*sizeof(*c));
      if( !c ) return -1;
      f->comms = c;
      f->comm_cap = cap;
    }
    f->comms[i].name = dup_n(name, len);
    if( !f->comms[i].name ) return -1;
    f->comms[i].samples = 0;
    f->n_comms++;
    f->comm_idx.n++;
    f->comm_idx.slot[pos] = i+1;
  }
  f->comms[i].samples++;
  return 0;
}

/* ------------------------------------------------------------------------
** Tokens.
*/
static int is_blank(int c){ return c==' ' || c=='\t'; }

static int all_digits(const char *s, size_t n){
  size_t i;
  if( n==0 ) return 0;
  for(i=0; i<n; i++) if( !isdigit((unsigned char)s[i]) ) return 0;
  return 1;
}

static int all_hex(const char *s, size_t n){
  size_t i;
  if( n==0 ) return 0;
  for(i=0; i<n; i++) if( !isxdigit((unsigned char)s[i]) ) return 0;
  return 1;
}

/* A tid: "123", "-1", or "pid/tid". */
static int is_tid(const char *s, size_t n){
  const char *slash = memchr(s, '/', n);
  if( n>0 && s[0]=='-' ){ s++; n--; }
  if( slash ){
    size_t a = (size_t)(slash - s);
    return all_digits(s, a) && all_digits(slash+1, n-a-1);
  }
  return all_digits(s, n);
}

/* A cpu: "[001]". */
static int is_cpu(const char *s, size_t n){
  return n>=3 && s[0]=='[' && s[n-1]==']' && all_digits(s+1, n-2);
}

/* A time: "376.850539:". */
static int is_time(const char *s, size_t n){
  const char *dot;
  if( n<4 || s[n-1]!=':' ) return 0;
  dot = memchr(s, '.', n);
  if( !dot ) return 0;
  return all_digits(s, (size_t)(dot-s)) && all_digits(dot+1, (size_t)(s+n-1-dot-1));
}

/* Decimal digits to int64; -1 on overflow. */
static int64_t parse_i64(const char *s, size_t n){
  int64_t v = 0;
  size_t i;
  for(i=0; i<n; i++){
    int d = s[i]-'0';
    if( v > (INT64_MAX - d)/10 ) return -1;
    v = v*10 + d;
  }
  return v;
}

typedef struct tok { const char *s; size_t n; } tok;

/* Splits off up to `max` blank-separated tokens; returns how many. */
static size_t tokenize(const char *s, size_t len, tok *t, size_t max){
  size_t k = 0, i = 0;
  while( k<max ){
    while( i<len && is_blank(s[i]) ) i++;
    if( i>=len ) break;
    t[k].s = s+i;
    while( i<len && !is_blank(s[i]) ) i++;
    t[k].n = (size_t)(s+i - t[k].s);
    k++;
  }
  return k;
}

/* ------------------------------------------------------------------------
** Frames.
*/

/* Counts one frame named `sym` (len bytes, may be empty) from `dso`. */
static int add_frame(folder *f, const char *sym, size_t len,
                     const char *dso, size_t dlen){
  perf_profile *p = f->p;
  perf_symbol *s;
  long long i;
  char buf[512];
  if( len==0 || (len==9 && memcmp(sym, "[unknown]", 9)==0) ){
    /* Unsymbolised: keep the library it is in, when perf knows it. */
    const char *base = dso;
    size_t blen = dlen, k;
    for(k=0; k<dlen; k++) if( dso[k]=='/' ){ base = dso+k+1; blen = dlen-k-1; }
    if( blen==0 || (blen==9 && memcmp(base, "[unknown]", 9)==0)
     || (blen==7 && memcmp(base, "inlined", 7)==0) || blen > sizeof(buf)-16 ){
      sym = "[unknown]";
      len = 9;
    }else{
      len = (size_t)snprintf(buf, sizeof(buf), "[unknown] (%.*s)", (int)blen, base);
      sym = buf;
    }
  }
  i = symbol_index(f, sym, len);
  if( i<0 ) return fail_nomem(f);
  s = &p->symbols[i];
  if( f->depth==0 ){
    s->self_samples++;
    s->self_ns += f->period;
  }
  if( s->last_sample != f->sample_no ){
    s->last_sample = f->sample_no;
    s->total_samples++;
    s->total_ns += f->period;
  }
  f->depth++;
  return 0;
}

/* Parses "<hex ip> <symbol>[+0x<off>] (<dso>)" (leading blanks skipped).
** 1 a frame, 0 not a frame (no hex ip first), -1 error. */
static int parse_frame(folder *f, const char *s, size_t len){
  size_t i = 0, ip0, sym0, end, k;
  const char *dso = "";
  size_t dlen = 0;
  while( i<len && is_blank(s[i]) ) i++;
  ip0 = i;
  while( i<len && !is_blank(s[i]) ) i++;
  if( !all_hex(s+ip0, i-ip0) ) return 0;
  while( i<len && is_blank(s[i]) ) i++;
  sym0 = i;
  end = len;
  while( end>sym0 && is_blank(s[end-1]) ) end--;
  /* The dso: in the parentheses that close the line, opened after a
  ** blank.  The '(' is the one that balances the final ')', so that a
  ** path like "/opt/app (x86)/bin/app" stays whole; when the parentheses
  ** do not balance, the last " (" is taken. */
  if( end>sym0 && s[end-1]==')' ){
    size_t open = 0, last = 0;
    int depth = 0;
    for(k=end; k>sym0+1; k--){
      char c = s[k-1];
      if( c==')' ) depth++;
      else if( c=='(' ){
        if( is_blank(s[k-2]) && !last ) last = k;
        if( --depth==0 ){
          if( is_blank(s[k-2]) ) open = k;
          break;
        }
      }
    }
    if( !open ) open = last;
    if( open ){
      dso = s+open;
      dlen = end-1-open;
      end = open-1;
      while( end>sym0 && is_blank(s[end-1]) ) end--;
    }
    /* "(dso)" with no symbol before it (no '(' was found after the symbol:
    ** with one found, as in "( ()", the span is not "(dso)" at all). */
    if( !open && s[sym0]=='(' ){
      dso = s+sym0+1;
      dlen = end-sym0-2;
      end = sym0;
    }
  }
  /* Strip only a trailing "+0x<hex>". */
  for(k=end; k>sym0+2; k--){
    if( !isxdigit((unsigned char)s[k-1]) ) break;
  }
  if( k<end && k>=sym0+3 && s[k-1]=='x' && s[k-2]=='0' && s[k-3]=='+' && k-3>sym0 ){
    end = k-3;
  }
  if( add_frame(f, s+sym0, end-sym0, dso, dlen) ) return -1;
  return 1;
}

/* ------------------------------------------------------------------------
** Sample headers.
*/

/* Closes the open sample: one whose chain came out empty is remembered
** for perf_script_add_leaves(). */
static int end_sample(folder *f){
  perf_profile *p = f->p;
  if( f->in_sample && !f->leaf_pass && f->depth==0 ){
    if( p->n_empty == f->empty_cap ){
      size_t cap = f->empty_cap ? f->empty_cap*2 : 64;
      int64_t *e = realloc(p->empty_samples, cap*sizeof(*e));
      if( e ) p->empty_samples = e;
      e = e ? realloc(p->empty_periods, cap*sizeof(*e)) : 0;
      if( !e ) return fail_nomem(f);
      p->empty_periods = e;
      f->empty_cap = cap;
    }
    p->empty_samples[p->n_empty] = p->samples-1;
    p->empty_periods[p->n_empty++] = f->period;
  }
  f->in_sample = 0;
  f->last_was_frame = 0;
  return 0;
}

/* Parses a sample header; 0 ok (the sample is open), -1 error.  With
** `quiet`, a line without the `tid time:` fields returns 1, no error. */
static int parse_header(folder *f, const char *s, size_t len, int quiet){
  perf_profile *p = f->p;
  tok t[24];
  size_t nt = tokenize(s, len, t, 24);
  size_t i, itid = 0, itime = 0, iev, comm_len;
  const char *rest;
  int64_t period;
  char buf[64];

  /* The time is the first "N.N:" token right after a tid (or tid [cpu]),
  ** with at least one comm token before: the comm may hold spaces and
  ** digits, but never shifts the fields after it. */
  for(i=2; i<nt && !itime; i++){
    if( !is_time(t[i].s, t[i].n) ) continue;
    if( is_tid(t[i-1].s, t[i-1].n) ){
      itid = i-1;
      itime = i;
    }else if( i>=3 && is_cpu(t[i-1].s, t[i-1].n) && is_tid(t[i-2].s, t[i-2].n) ){
      itid = i-2;
      itime = i;
    }
  }
  if( !itime ){
    if( quiet ) return 1;
    return fail(f, "expected a sample header 'comm tid time: period event:', got \"%s\"",
                excerpt(s, len, buf, sizeof(buf)));
  }
  iev = itime+1;
  if( iev<nt && all_digits(t[iev].s, t[iev].n) ){
    period = parse_i64(t[iev].s, t[iev].n);
    if( period<0 ) return fail(f, "period %.*s is too large", (int)t[iev].n, t[iev].s);
    iev++;
  }else{
    return fail(f, "sample header has no period (run perf script with -F ...,period,...)");
  }
  if( iev>=nt || t[iev].n<2 || t[iev].s[t[iev].n-1]!=':' ){
    return fail(f, "sample header has no event after the period");
  }

  /* One event per profile: periods of different events do not add up. */
  if( !p->event ){
    p->event = dup_n(t[iev].s, t[iev].n-1);
    if( !p->event ) return fail_nomem(f);
  }else if( strlen(p->event)!=t[iev].n-1 || memcmp(p->event, t[iev].s, t[iev].n-1)!=0 ){
    return fail(f, "sample of event '%.*s' in a profile of '%s' (record one event,"
                " or select one with perf script --event)",
                (int)(t[iev].n-1), t[iev].s, p->event);
  }
  if( end_sample(f) ) return -1;
  rest = t[iev].s + t[iev].n;
  if( f->leaf_pass ){
    /* Only the samples whose chain was empty; each line is one sample. */
    int64_t ord = f->ordinal++;
    f->in_sample = 1;
    if( f->next_empty < p->n_empty && p->empty_samples[f->next_empty]==ord ){
      /* Its period is known: a different one means other data. */
      if( period != p->empty_periods[f->next_empty] ){
        return fail(f, "sample %lld has period %lld here and %lld in the first pass",
                    (long long)ord, (long long)period,
                    (long long)p->empty_periods[f->next_empty]);
      }
      f->next_empty++;
      f->period = period;
      f->depth = 0;
      f->sample_no = p->samples + 1 + ord;
      if( parse_frame(f, rest, (size_t)(s+len-rest)) < 0 ) return -1;
    }
    return 0;
  }
  if( p->profile_ns > INT64_MAX - period ){
    return fail(f, "the sum of the periods overflows");
  }

  comm_len = (size_t)(t[itid].s - s);
  while( comm_len>0 && is_blank(s[comm_len-1]) ) comm_len--;
  if( count_comm(f, s, comm_len) ) return fail_nomem(f);

  p->samples++;
  p->profile_ns += period;
  f->period = period;
  f->depth = 0;
  f->sample_no = p->samples;
  f->in_sample = 1;
  f->last_was_frame = 0;

  /* Recorded without -g: the one frame is on the header line. */
  if( parse_frame(f, rest, (size_t)(s+len-rest)) < 0 ) return -1;
  return 0;
}

/* ------------------------------------------------------------------------
** Header comments (perf script --header): the recording time.
*/
static void parse_comment(folder *f, const char *s){
  const char *v;
  if( strncmp(s, "# captured on", 13)==0 && (v = strchr(s, ':'))!=0 ){
    /* ctime() of the file's mtime, in the local time zone. */
    struct tm tm;
    memset(&tm, 0, sizeof(tm));
    v++;
    while( is_blank(*v) ) v++;
    if( strptime(v, "%a %b %d %H:%M:%S %Y", &tm) ){
      time_t tt;
      tm.tm_isdst = -1;
      tt = mktime(&tm);
      if( tt!=(time_t)-1 ) f->ts_captured = (int64_t)tt * 1000000;
    }
  }else if( strncmp(s, "# reference time", 16)==0 && (v = strstr(s, " = "))!=0 ){
    /* "# reference time: 2020-08-06 09:40:21.619290 = 1596699621.619290 (TOD) = ..." */
    char *e;
    long long sec;
    v += 3;
    errno = 0;
    sec = strtoll(v, &e, 10);
    if( errno==0 && e!=v && sec>=0 && sec < INT64_MAX/1000000 ){
      int64_t us = 0, scale = 100000;
      if( *e=='.' ){
        for(e++; isdigit((unsigned char)*e) && scale>0; e++, scale /= 10){
          us += (*e-'0')*scale;
        }
      }
      f->ts_reference = (int64_t)sec*1000000 + us;
    }
  }
}

/* ------------------------------------------------------------------------
** The driver.
*/
static int fold_line(folder *f, const char *s, size_t len){
  if( len==0 || (size_t)strspn(s, " \t")==len ){
    return end_sample(f);
  }
  if( f->p->samples==0 && strncmp(s, "# ========", 10)==0 ){
    /* perf script --header frames its header block with these lines; the
    ** block may hold lines without '#' (a recorded command line with
    ** newlines in it), which are not samples. */
    f->in_header_block = !f->in_header_block;
    return 0;
  }
  if( f->in_header_block || (s[0]=='#' && !f->in_sample) ){
    if( s[0]=='#' ) parse_comment(f, s);
    return 0;
  }
  if( s[0]==' ' ){
    /* Space-indented: a header with a right-aligned comm (older perf), or
    ** the srcline under a frame (`-F +srcline`). */
    int rc = parse_header(f, s, len, 1);
    if( rc<=0 ) return rc;
  }
  if( is_blank(s[0]) ){
    int rc;
    if( !f->in_sample ){
      char buf[64];
      return fail(f, "expected a sample header, got a frame \"%s\"",
                  excerpt(s, len, buf, sizeof(buf)));
    }
    if( f->leaf_pass ){
      return fail(f, "expected one line per sample (perf script -G), got a frame");
    }
    rc = parse_frame(f, s, len);
    if( rc<0 ) return -1;
    if( rc==0 ){
      char buf[64];
      if( s[0]==' ' && f->last_was_frame ) return 0;   /* a srcline */
      return fail(f, "expected a frame '<hex ip> <symbol> (<dso>)', got \"%s\"",
                  excerpt(s, len, buf, sizeof(buf)));
    }
    f->last_was_frame = 1;
    return 0;
  }
  /* A new header also ends a sample: without -g, samples are not
  ** separated by blank lines. */
  return parse_header(f, s, len, 0);
}

static void folder_free(folder *f){
  size_t i;
  for(i=0; i<f->n_comms; i++) free(f->comms[i].name);
  free(f->comms);
  free(f->syms.slot);
  free(f->comm_idx.slot);
}

void perf_profile_free(perf_profile *p){
  size_t i;
  if( !p ) return;
  for(i=0; i<p->n_symbols; i++) free(p->symbols[i].name);
  free(p->symbols);
  free(p->empty_samples);
  free(p->empty_periods);
  free(p->event);
  free(p->top_comm);
  free(p);
}

/* Reads `in` to its end through fold_line(), hashing what it reads into
** `hs` (when not NULL).  0 ok, -1 error (in f->err). */
static int fold_stream(folder *f, FILE *in, XXH3_state_t *hs){
  char *line = 0;
  size_t cap = 0;
  ssize_t n;
  int rc = 0;
  while( (n = getline(&line, &cap, in)) > 0 ){
    size_t len = (size_t)n;
    if( hs ) XXH3_64bits_update(hs, line, len);
    f->lineno++;
    if( memchr(line, 0, len) ){
      if( f->lineno==1 && len>=8 && memcmp(line, "PERFILE2", 8)==0 ){
        rc = fail(f, "this is a perf.data (magic PERFILE2), not `perf script` text:"
                  " give its file name");
      }else{
        rc = fail(f, "NUL byte in the text (is this `perf script` output?)");
      }
      break;
    }
    while( len>0 && (line[len-1]=='\n' || line[len-1]=='\r') ) len--;
    line[len] = 0;
    if( fold_line(f, line, len) ){
      rc = -1;
      break;
    }
  }
  if( rc==0 && ferror(in) ){
    snprintf(f->err, f->errlen, "%s: read error after line %lld", f->name,
             (long long)f->lineno);
    rc = -1;
  }
  if( rc==0 ) rc = end_sample(f);
  free(line);
  return rc;
}

int perf_script_fold(FILE *in, const char *name, perf_profile **out,
                     char *err, size_t errlen){
  folder f;
  int rc = 0;
  XXH3_state_t *hs = XXH3_createState();
  perf_profile *p = calloc(1, sizeof(*p));

  *out = 0;
  memset(&f, 0, sizeof(f));
  f.name = name;
  f.p = p;
  f.err = err;
  f.errlen = errlen;
  f.ts_captured = f.ts_reference = -1;
  if( !p || !hs ){
    rc = fail_nomem(&f);
    goto done;
  }
  XXH3_64bits_reset(hs);
  rc = fold_stream(&f, in, hs);
  if( rc ) goto done;
  p->lines = f.lineno;
  p->text_hash = XXH3_64bits_digest(hs);
  p->ts_micros = f.ts_reference>=0 ? f.ts_reference : f.ts_captured;
  if( f.n_comms ){
    size_t i, best = 0;
    for(i=1; i<f.n_comms; i++) if( f.comms[i].samples > f.comms[best].samples ) best = i;
    p->top_comm = f.comms[best].name;
    f.comms[best].name = 0;
  }

done:
  XXH3_freeState(hs);
  folder_free(&f);
  if( rc ){
    perf_profile_free(p);
    return -1;
  }
  *out = p;
  return 0;
}

int perf_script_add_leaves(perf_profile *p, FILE *in, const char *name,
                           char *err, size_t errlen){
  folder f;
  int rc;
  memset(&f, 0, sizeof(f));
  f.name = name;
  f.p = p;
  f.err = err;
  f.errlen = errlen;
  f.ts_captured = f.ts_reference = -1;
  f.leaf_pass = 1;
  f.sym_cap = p->n_symbols;
  f.syms.n = p->n_symbols;
  if( intern_reserve(&f.syms, p->symbols, sizeof(perf_symbol)) ){
    rc = fail_nomem(&f);
  }else{
    rc = fold_stream(&f, in, 0);
  }
  if( rc==0 && f.ordinal != p->samples ){
    snprintf(err, errlen, "%s: %lld samples, where the first pass read %lld",
             name, (long long)f.ordinal, (long long)p->samples);
    rc = -1;
  }
  folder_free(&f);
  return rc;
}
