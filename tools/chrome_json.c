/*
** chrome_json.c -- the streaming Chrome Trace Event reader (chrome_json.h).
**
** Why a tokenizer of our own: a trace can be gigabytes, so it must be read
** as a stream, one event at a time, in fixed memory.  Of the C JSON
** libraries Debian packages, jansson, json-c and cJSON build a tree of the
** whole document (json-c's incremental tokener still returns whole values:
** the one "traceEvents" array), simdjson (C++) parses a document held
** whole in memory (iterate_many streams documents, not one array's
** elements), and yajl, the one streaming C parser, is unmaintained
** upstream since 2014 and hands numbers over as doubles or longs.  ext/json.c, the project's reader, parses a chunk's fixed shape
** from one buffer in memory.  The six members read here are few and known,
** so this file scans the bytes once through a 1 MiB buffer: the members it
** needs are decoded, every other value is skipped with a bracket stack
** (still checked to be well-formed), and times are converted to ns from
** their digits, never through a double (µs with three decimals are exact).
*/
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "chrome_json.h"

#define BUF_SIZE  (1u << 20)
#define MAX_DEPTH 512          /* nesting of the values skipped */

struct chrome_reader {
  FILE *in;
  const char *name;
  unsigned char *buf;
  size_t pos, len;
  uint64_t base;             /* file offset of buf[0] */
  int started, ended, first, array_form, in_event;
  uint64_t index;            /* events handed out */
  char *s;                   /* the last string decoded (keys, values) */
  size_t slen, scap;
  char *nm;                  /* the current event's name */
  size_t ncap;
  char err[512];
};

static int fail(chrome_reader *r, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
static int fail(chrome_reader *r, const char *fmt, ...){
  va_list ap;
  int n;
  if( r->in_event ){
    n = snprintf(r->err, sizeof(r->err), "%s: byte %llu (traceEvents[%llu]): ", r->name,
                 (unsigned long long)(r->base + r->pos), (unsigned long long)r->index);
  }else{
    n = snprintf(r->err, sizeof(r->err), "%s: byte %llu: ", r->name,
                 (unsigned long long)(r->base + r->pos));
  }
  if( n<0 ) n = 0;
  if( (size_t)n < sizeof(r->err) ){
    va_start(ap, fmt);
    vsnprintf(r->err + n, sizeof(r->err) - (size_t)n, fmt, ap);
    va_end(ap);
  }
  return -1;
}

/* The next byte without consuming it; -1 at the end of the input. */
static int peek(chrome_reader *r){
  if( r->pos==r->len ){
    r->base += r->len;
    r->pos = 0;
    r->len = fread(r->buf, 1, BUF_SIZE, r->in);
    if( r->len==0 ) return -1;
  }
  return r->buf[r->pos];
}

static int skip_ws(chrome_reader *r){
  int c;
  while( (c = peek(r))==' ' || c=='\n' || c=='\r' || c=='\t' ) r->pos++;
  return c;
}

static int push_s(chrome_reader *r, char c){
  if( r->slen+1 >= r->scap ){
    size_t ncap = r->scap ? r->scap*2 : 256;
    char *ns = realloc(r->s, ncap);
    if( !ns ) return fail(r, "out of memory");
    r->s = ns; r->scap = ncap;
  }
  r->s[r->slen++] = c;
  return 0;
}

static int hex4(chrome_reader *r, unsigned *out){
  int k, c;
  *out = 0;
  for(k=0; k<4; k++){
    c = peek(r);
    if( c>='0' && c<='9' ) *out = *out*16 + (unsigned)(c-'0');
    else if( c>='a' && c<='f' ) *out = *out*16 + (unsigned)(c-'a'+10);
    else if( c>='A' && c<='F' ) *out = *out*16 + (unsigned)(c-'A'+10);
    else return fail(r, "bad \\u escape");
    r->pos++;
  }
  return 0;
}

/* A string (at its opening quote); decoded into r->s when keep. */
static int read_string(chrome_reader *r, int keep){
  r->slen = 0;
  r->pos++;
  for(;;){
    int c;
    /* the plain bytes up to a quote, a backslash or the buffer's end */
    size_t i = r->pos;
    while( i<r->len && r->buf[i]!='"' && r->buf[i]!='\\' && r->buf[i]>=0x20 ) i++;
    if( keep && i>r->pos ){
      size_t n = i - r->pos;
      if( r->slen + n + 1 > r->scap ){
        size_t ncap = r->scap ? r->scap : 256;
        char *ns;
        while( ncap < r->slen + n + 1 ) ncap *= 2;
        ns = realloc(r->s, ncap);
        if( !ns ) return fail(r, "out of memory");
        r->s = ns; r->scap = ncap;
      }
      memcpy(r->s + r->slen, r->buf + r->pos, n);
      r->slen += n;
    }
    r->pos = i;
    c = peek(r);
    if( c<0 ) return fail(r, "unterminated string");
    if( c=='"' ){ r->pos++; break; }
    if( c<0x20 ) return fail(r, "control character in a string");
    if( c!='\\' ) continue;      /* the buffer ended: refilled by peek */
    r->pos++;
    {
      unsigned u, lo;
      c = peek(r);
      if( c<0 ) return fail(r, "unterminated string");
      r->pos++;
      switch( c ){
        case '"': case '\\': case '/': break;
        case 'b': c = '\b'; break;
        case 'f': c = '\f'; break;
        case 'n': c = '\n'; break;
        case 'r': c = '\r'; break;
        case 't': c = '\t'; break;
        case 'u':
          if( hex4(r, &u) ) return -1;
          if( u>=0xD800 && u<0xDC00 ){
            if( peek(r)!='\\' ) return fail(r, "unpaired surrogate in a string");
            r->pos++;
            if( peek(r)!='u' ) return fail(r, "unpaired surrogate in a string");
            r->pos++;
            if( hex4(r, &lo) ) return -1;
            if( lo<0xDC00 || lo>=0xE000 ) return fail(r, "unpaired surrogate in a string");
            u = 0x10000 + ((u-0xD800)<<10) + (lo-0xDC00);
          }else if( u>=0xDC00 && u<0xE000 ){
            return fail(r, "unpaired surrogate in a string");
          }
          if( !keep ) continue;
          if( u==0 ) return fail(r, "\\u0000 in a string");
          if( u<0x80 ){ if( push_s(r, (char)u) ) return -1; }
          else if( u<0x800 ){
            if( push_s(r, (char)(0xC0 | u>>6)) || push_s(r, (char)(0x80 | (u & 0x3F))) ) return -1;
          }else if( u<0x10000 ){
            if( push_s(r, (char)(0xE0 | u>>12)) || push_s(r, (char)(0x80 | ((u>>6) & 0x3F)))
             || push_s(r, (char)(0x80 | (u & 0x3F))) ) return -1;
          }else{
            if( push_s(r, (char)(0xF0 | u>>18)) || push_s(r, (char)(0x80 | ((u>>12) & 0x3F)))
             || push_s(r, (char)(0x80 | ((u>>6) & 0x3F))) || push_s(r, (char)(0x80 | (u & 0x3F))) ) return -1;
          }
          continue;
        default:
          return fail(r, "bad escape in a string");
      }
    }
    if( keep && push_s(r, (char)c) ) return -1;
  }
  if( keep ){
    if( push_s(r, 0) ) return -1;
    r->slen--;
  }
  return 0;
}

/* A number's text into tok (checked against JSON's grammar). */
static int read_number(chrome_reader *r, char *tok, size_t cap){
  size_t n = 0, i = 0;
  int c;
  while( (c = peek(r))>=0 && ((c>='0' && c<='9') || c=='-' || c=='+' || c=='.' || c=='e' || c=='E') ){
    if( n+1>=cap ) return fail(r, "number too long");
    tok[n++] = (char)c;
    r->pos++;
  }
  tok[n] = 0;
  if( tok[i]=='-' ) i++;
  if( tok[i]=='0' ) i++;
  else if( tok[i]>='1' && tok[i]<='9' ){ while( tok[i]>='0' && tok[i]<='9' ) i++; }
  else return fail(r, "malformed number '%s'", tok);
  if( tok[i]=='.' ){
    i++;
    if( !(tok[i]>='0' && tok[i]<='9') ) return fail(r, "malformed number '%s'", tok);
    while( tok[i]>='0' && tok[i]<='9' ) i++;
  }
  if( tok[i]=='e' || tok[i]=='E' ){
    i++;
    if( tok[i]=='+' || tok[i]=='-' ) i++;
    if( !(tok[i]>='0' && tok[i]<='9') ) return fail(r, "malformed number '%s'", tok);
    while( tok[i]>='0' && tok[i]<='9' ) i++;
  }
  if( tok[i] ) return fail(r, "malformed number '%s'", tok);
  return 0;
}

/* µs as text -> ns, rounded half away from zero: exact from the digits
** (the fourth decimal decides), through a double only with an exponent.
** 0, or -1 when out of range. */
static int us_to_ns(const char *tok, int64_t *out){
  const char *p = tok;
  int neg = 0, k;
  uint64_t us = 0, ns = 0;
  if( strpbrk(tok, "eE") ){
    double d = strtod(tok, 0) * 1000.0;
    if( !(fabs(d) < 9.0e18) ) return -1;
    *out = (int64_t)llround(d);
    return 0;
  }
  if( *p=='-' ){ neg = 1; p++; }
  for(; *p>='0' && *p<='9'; p++){
    if( us > (UINT64_C(9000000000000000) - 9)/10 ) return -1;
    us = us*10 + (uint64_t)(*p-'0');
  }
  if( *p=='.' ) p++;
  for(k=0; k<3; k++){
    ns = ns*10;
    if( *p>='0' && *p<='9' ) ns += (uint64_t)(*p++ - '0');
  }
  if( *p>='5' && *p<='9' ) ns++;
  ns += us*1000;
  *out = neg ? -(int64_t)ns : (int64_t)ns;
  return 0;
}

/* An integer's text -> int64; 0, or -1 when not an integer or too big. */
static int to_int(const char *tok, int64_t *out){
  char *end;
  long long v;
  if( strpbrk(tok, ".eE") ) return -1;
  v = strtoll(tok, &end, 10);
  if( *end || v==LLONG_MAX || v==LLONG_MIN ) return -1;
  *out = v;
  return 0;
}

static int read_literal(chrome_reader *r){
  static const char *const lits[] = {"true", "false", "null"};
  int c = peek(r), k;
  const char *l = c=='t' ? lits[0] : c=='f' ? lits[1] : lits[2];
  for(k=0; l[k]; k++){
    if( peek(r)!=l[k] ) return fail(r, "expected a value");
    r->pos++;
  }
  return 0;
}

/* Skips one value, checking that it is well-formed. */
static int skip_value(chrome_reader *r){
  enum { VALUE, KEY, AFTER } state = VALUE;
  char stack[MAX_DEPTH];
  int depth = 0;
  char tok[64];
  for(;;){
    int c = skip_ws(r);
    if( state==AFTER ){
      if( depth==0 ) return 0;
      if( c==',' ){ r->pos++; state = stack[depth-1]=='}' ? KEY : VALUE; }
      else if( c==stack[depth-1] ){ r->pos++; depth--; }
      else return fail(r, "expected ',' or '%c'", stack[depth-1]);
    }else if( state==KEY ){
      if( c!='"' ) return fail(r, "expected a key");
      if( read_string(r, 0) ) return -1;
      if( skip_ws(r)!=':' ) return fail(r, "expected ':' after a key");
      r->pos++;
      state = VALUE;
    }else if( c=='{' || c=='[' ){
      char close = c=='{' ? '}' : ']';
      r->pos++;
      if( skip_ws(r)==close ){ r->pos++; state = AFTER; continue; }
      if( depth==MAX_DEPTH ) return fail(r, "values nested more than %d deep", MAX_DEPTH);
      stack[depth++] = close;
      state = close=='}' ? KEY : VALUE;
    }else if( c=='"' ){
      if( read_string(r, 0) ) return -1;
      state = AFTER;
    }else if( c=='-' || (c>='0' && c<='9') ){
      if( read_number(r, tok, sizeof(tok)) ) return -1;
      state = AFTER;
    }else if( c=='t' || c=='f' || c=='n' ){
      if( read_literal(r) ) return -1;
      state = AFTER;
    }else{
      return fail(r, c<0 ? "unexpected end of the input" : "expected a value");
    }
  }
}

/* A number member of an event: ns (ts, dur) or an integer (pid, tid). */
static int number_member(chrome_reader *r, chrome_event *ev, const char *key,
                         int64_t *out, int *has, int is_time){
  char tok[64];
  int c = skip_ws(r);
  if( c!='-' && !(c>='0' && c<='9') ){
    if( !ev->bad ) ev->bad = is_time ? (key[0]=='t' ? "ts is not a number" : "dur is not a number")
                                     : (key[0]=='p' ? "pid is not an integer" : "tid is not an integer");
    return skip_value(r);
  }
  if( read_number(r, tok, sizeof(tok)) ) return -1;
  if( is_time ? us_to_ns(tok, out) : to_int(tok, out) ){
    return fail(r, "%s %s is out of range", key, tok);
  }
  *has = 1;
  return 0;
}

/* One event object (at its '{'). */
static int read_event(chrome_reader *r, chrome_event *ev){
  memset(ev, 0, sizeof(*ev));
  ev->index = r->index;
  r->pos++;
  if( skip_ws(r)=='}' ){ r->pos++; return 0; }
  for(;;){
    int c = skip_ws(r);
    char key[8];
    if( c!='"' ) return fail(r, "expected a key");
    if( read_string(r, 1) ) return -1;
    /* the members read have short names: a longer key is none of them */
    if( r->slen<sizeof(key) ) memcpy(key, r->s, r->slen+1);
    else key[0] = 0;
    if( skip_ws(r)!=':' ) return fail(r, "expected ':' after a key");
    r->pos++;
    c = skip_ws(r);
    if( strcmp(key, "ph")==0 || strcmp(key, "name")==0 ){
      if( c!='"' ){
        if( !ev->bad ) ev->bad = key[0]=='p' ? "ph is not a string" : "name is not a string";
        if( skip_value(r) ) return -1;
      }else{
        if( read_string(r, 1) ) return -1;
        if( key[0]=='p' ) ev->ph = r->s[0];
        else{
          if( r->slen+1 > r->ncap ){
            char *nn = realloc(r->nm, r->slen+1);
            if( !nn ) return fail(r, "out of memory");
            r->nm = nn; r->ncap = r->slen+1;
          }
          memcpy(r->nm, r->s, r->slen+1);
          ev->name = r->nm;
        }
      }
    }else if( strcmp(key, "ts")==0 ){
      if( number_member(r, ev, key, &ev->ts_ns, &ev->has_ts, 1) ) return -1;
    }else if( strcmp(key, "dur")==0 ){
      if( number_member(r, ev, key, &ev->dur_ns, &ev->has_dur, 1) ) return -1;
    }else if( strcmp(key, "pid")==0 ){
      if( number_member(r, ev, key, &ev->pid, &ev->has_pid, 0) ) return -1;
    }else if( strcmp(key, "tid")==0 ){
      if( number_member(r, ev, key, &ev->tid, &ev->has_tid, 0) ) return -1;
    }else if( skip_value(r) ){
      return -1;
    }
    c = skip_ws(r);
    if( c==',' ){ r->pos++; continue; }
    if( c=='}' ){ r->pos++; return 0; }
    return fail(r, c<0 ? "unexpected end of the input" : "expected ',' or '}'");
  }
}

/* Up to the events array: '[' at the top, or the "traceEvents" member. */
static int start(chrome_reader *r){
  int c = skip_ws(r);
  r->started = 1;
  r->first = 1;
  if( c=='[' ){ r->pos++; r->array_form = 1; return 0; }
  if( c!='{' ) return fail(r, "not a Chrome trace: expected '[' or '{'");
  r->pos++;
  for(;;){
    int found;
    c = skip_ws(r);
    if( c=='}' ) return fail(r, "no \"traceEvents\" member in the trace object");
    if( c!='"' ) return fail(r, "expected a key");
    if( read_string(r, 1) ) return -1;
    found = strcmp(r->s, "traceEvents")==0;
    if( skip_ws(r)!=':' ) return fail(r, "expected ':' after a key");
    r->pos++;
    if( found ){
      if( skip_ws(r)!='[' ) return fail(r, "\"traceEvents\" is not an array");
      r->pos++;
      return 0;
    }
    if( skip_value(r) ) return -1;
    c = skip_ws(r);
    if( c==',' ) r->pos++;
    else if( c!='}' ) return fail(r, "expected ',' or '}'");
  }
}

/* After the events array: the object's other members, then only space. */
static int finish(chrome_reader *r){
  int c;
  r->ended = 1;
  if( !r->array_form ){
    for(;;){
      c = skip_ws(r);
      if( c=='}' ){ r->pos++; break; }
      if( c!=',' ) return fail(r, "expected ',' or '}'");
      r->pos++;
      if( skip_ws(r)!='"' || read_string(r, 0) ) return fail(r, "expected a key");
      if( skip_ws(r)!=':' ) return fail(r, "expected ':' after a key");
      r->pos++;
      if( skip_value(r) ) return -1;
    }
  }
  if( skip_ws(r)>=0 ) return fail(r, "unexpected text after the trace");
  return 0;
}

int chrome_reader_next(chrome_reader *r, chrome_event *ev){
  int c;
  if( !r->started && start(r) ) return -1;
  if( r->ended ) return 0;
  c = skip_ws(r);
  if( !r->first && c==',' ){
    r->pos++;
    c = skip_ws(r);
  }else if( !r->first && c!=']' && c>=0 ){
    return fail(r, "expected ',' or ']' after traceEvents[%llu]", (unsigned long long)(r->index-1));
  }
  /* the array form may end without its ']' (or after a last ','), as
  ** the format allows for traces cut short */
  if( c<0 && r->array_form ){ r->ended = 1; return ferror(r->in) ? fail(r, "read error") : 0; }
  if( c<0 ) return fail(r, ferror(r->in) ? "read error" : "unexpected end of the input");
  if( c==']' ){
    r->pos++;
    return finish(r) ? -1 : 0;
  }
  if( c!='{' ) return fail(r, "traceEvents[%llu] is not an object", (unsigned long long)r->index);
  r->in_event = 1;
  if( read_event(r, ev) ) return -1;
  r->in_event = 0;
  r->first = 0;
  r->index++;
  return 1;
}

chrome_reader *chrome_reader_new(FILE *in, const char *name){
  chrome_reader *r = calloc(1, sizeof(*r));
  if( !r ) return 0;
  r->buf = malloc(BUF_SIZE);
  if( !r->buf ){ free(r); return 0; }
  r->in = in;
  r->name = name;
  return r;
}

const char *chrome_reader_error(const chrome_reader *r){ return r->err; }

uint64_t chrome_reader_offset(const chrome_reader *r){ return r->base + r->pos; }

void chrome_reader_free(chrome_reader *r){
  if( !r ) return;
  free(r->buf); free(r->s); free(r->nm); free(r);
}
