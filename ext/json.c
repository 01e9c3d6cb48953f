/*
** json.c -- reads the JSON of fnt_file_chunk() and fnt_file_profile()
** (SPEC §4) into the structs of fnt_store.h.
**
** Why a parser of our own rather than a Debian JSON library: the libraries
** packaged for C (jansson, json-c, cJSON, yajl) build a tree with a
** malloc per value -- six per event, so 6M allocations for a 1M-event chunk
** -- and then the tree must be walked again into fnt_event structs; and
** their integers are either doubles (cJSON: t_ns above 2^53 comes back
** wrong) or signed 64-bit values that accept negatives and need separate
** checks.  SQLite's own JSON functions would mean a json_each() row per
** value.  The shapes here are fixed and small, so this file reads them in
** one pass: events go straight into one reused array, integers are read
** from their digits with exact overflow checks, the event kinds are matched
** in place, and every check names its field ("events[3][1]: ...").
** Strings are decoded into one arena sized from the input (a decoded
** string plus its NUL is never longer than its quoted source).  The arena
** and the arrays are kept from call to call (up to 8 MB each), so a
** connection filing chunks of usual sizes does not allocate at all.
**
** What is accepted, beyond RFC 8259:
**   - unknown keys, at the top level and in function and row objects, are
**     skipped (still checked to be well-formed), so producers can add fields;
**   - booleans (truncated, local) may also be written 0 or 1;
**   - optional fields may be null, meaning absent.
** What is refused, beyond malformed JSON: a repeated key of the shape;
** "\u0000" (store strings are NUL-terminated) and unpaired surrogates;
** integers that are negative, fractional, written with an exponent or
** larger than 2^63-1.  Invalid UTF-8 inside strings passes through as bytes.
*/
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "sqlite3ext.h"
SQLITE_EXTENSION_INIT3

#include "json.h"

/* Buffers bigger than this are freed by fntJsonTrim(). */
#define FNT_JSON_KEEP_BYTES (8u<<20)

/* Deepest nesting skipped inside an unknown value (recursion bound). */
#define FNT_JSON_MAX_DEPTH 256

/* The parse in progress.  zField/iElem/zSub/iSub say where the reader is,
** only so that an error can name it: "functions[2].symbol". */
typedef struct JsonCtx {
  FntJson *pJ;
  const unsigned char *zStart;   /* first byte of the input */
  const unsigned char *p;        /* next byte to read */
  const unsigned char *e;        /* one past the last byte */
  char *zOut;                    /* next free byte of pJ->zArena */
  const char *zField;            /* top-level key being read, or NULL */
  int64_t iElem;                 /* index in that key's array, or -1 */
  const char *zSub;              /* key inside that element, or NULL */
  int iSub;                      /* index inside that element, or -1 */
  char zFieldBuf[48];            /* copy of an unknown top-level key */
} JsonCtx;

static const char *const azEventPart[5] = {
  "thread", "seq_no", "t_ns", "function_index", "kind"
};

void fntJsonClear(FntJson *pJ){
  sqlite3_free(pJ->zArena);
  sqlite3_free(pJ->aEvent);
  sqlite3_free(pJ->aFunc);
  sqlite3_free(pJ->aRow);
  memset(pJ, 0, sizeof(*pJ));
}

void fntJsonTrim(FntJson *pJ){
  if( pJ->nArena>FNT_JSON_KEEP_BYTES ){
    sqlite3_free(pJ->zArena);
    pJ->zArena = 0;
    pJ->nArena = 0;
  }
  if( pJ->nEventAlloc*sizeof(fnt_event)>FNT_JSON_KEEP_BYTES ){
    sqlite3_free(pJ->aEvent);
    pJ->aEvent = 0;
    pJ->nEventAlloc = 0;
  }
  if( pJ->nFuncAlloc*sizeof(fnt_function)>FNT_JSON_KEEP_BYTES ){
    sqlite3_free(pJ->aFunc);
    pJ->aFunc = 0;
    pJ->nFuncAlloc = 0;
  }
  if( pJ->nRowAlloc*sizeof(fnt_profile_row)>FNT_JSON_KEEP_BYTES ){
    sqlite3_free(pJ->aRow);
    pJ->aRow = 0;
    pJ->nRowAlloc = 0;
  }
}

/* ------------------------------------------------------------------------
** Errors.  Every error ends the parse; the message goes to pJ->zErr.
*/

/* Writes "<path>: " (nothing when at the top) into zBuf. */
static size_t jsonPath(const JsonCtx *x, char *zBuf, size_t nBuf){
  int n = 0;
  if( x->zField==0 ) return 0;
  n = snprintf(zBuf, nBuf, "%s", x->zField);
  if( x->iElem>=0 && (size_t)n<nBuf ){
    n += snprintf(zBuf+n, nBuf-n, "[%lld]", (long long)x->iElem);
  }
  if( x->zSub && (size_t)n<nBuf ){
    n += snprintf(zBuf+n, nBuf-n, ".%s", x->zSub);
  }
  if( x->iSub>=0 && (size_t)n<nBuf ){
    n += snprintf(zBuf+n, nBuf-n, "[%d]", x->iSub);
  }
  if( (size_t)n<nBuf ) n += snprintf(zBuf+n, nBuf-n, ": ");
  return (size_t)n<nBuf ? (size_t)n : nBuf-1;
}

static int jsonError(JsonCtx *x, const char *zFmt, ...)
    __attribute__((format(printf, 2, 3)));
static int jsonError(JsonCtx *x, const char *zFmt, ...){
  char *z = x->pJ->zErr;
  size_t n = jsonPath(x, z, sizeof(x->pJ->zErr));
  va_list ap;
  va_start(ap, zFmt);
  vsnprintf(z+n, sizeof(x->pJ->zErr)-n, zFmt, ap);
  va_end(ap);
  return SQLITE_ERROR;
}

static int jsonNomem(JsonCtx *x){
  snprintf(x->pJ->zErr, sizeof(x->pJ->zErr), "out of memory");
  return SQLITE_NOMEM;
}

/* Malformed JSON: names the byte offset and what is there. */
static int jsonSyntax(JsonCtx *x, const char *zWant){
  size_t iOff = (size_t)(x->p - x->zStart);
  if( x->p>=x->e ){
    return jsonError(x, "malformed JSON at byte %zu: %s, found the end "
                     "of the input", iOff, zWant);
  }
  if( *x->p>=0x20 && *x->p<0x7f ){
    return jsonError(x, "malformed JSON at byte %zu: %s, found '%c'",
                     iOff, zWant, *x->p);
  }
  return jsonError(x, "malformed JSON at byte %zu: %s, found byte 0x%02x",
                   iOff, zWant, *x->p);
}

/* What the value starting at x->p is, for "expected X, got Y". */
static const char *jsonTypeName(const JsonCtx *x){
  if( x->p>=x->e ) return "the end of the input";
  switch( *x->p ){
    case '"': return "a string";
    case '{': return "an object";
    case '[': return "an array";
    case 't': case 'f': return "a boolean";
    case 'n': return "null";
    case '-': case '0': case '1': case '2': case '3': case '4':
    case '5': case '6': case '7': case '8': case '9': return "a number";
    default: return "malformed JSON";
  }
}

static int jsonTypeError(JsonCtx *x, const char *zName, const char *zWant){
  if( jsonTypeName(x)[0]=='m' ) return jsonSyntax(x, "expected a value");
  if( zName ){
    return jsonError(x, "%s: expected %s, got %s", zName, zWant,
                     jsonTypeName(x));
  }
  return jsonError(x, "expected %s, got %s", zWant, jsonTypeName(x));
}

/* ------------------------------------------------------------------------
** Lexing.
*/

static inline void jsonWs(JsonCtx *x){
  const unsigned char *p = x->p, *e = x->e;
  while( p<e && (*p==' ' || *p=='\n' || *p=='\r' || *p=='\t') ) p++;
  x->p = p;
}

static int jsonLiteral(JsonCtx *x, const char *zLit){
  size_t n = strlen(zLit);
  if( (size_t)(x->e - x->p)<n || memcmp(x->p, zLit, n)!=0 ){
    return jsonSyntax(x, "expected a value");
  }
  x->p += n;
  return SQLITE_OK;
}

static int jsonHex4(const unsigned char *p, unsigned *pv){
  unsigned v = 0;
  for(int i=0; i<4; i++){
    unsigned c = p[i], d;
    if( c>='0' && c<='9' ) d = c-'0';
    else if( c>='a' && c<='f' ) d = c-'a'+10;
    else if( c>='A' && c<='F' ) d = c-'A'+10;
    else return 0;
    v = v*16 + d;
  }
  *pv = v;
  return 1;
}

/* Reads the string at x->p (which is '"') into the arena, NUL-terminated.
** Never overflows the arena: the decoded bytes plus the NUL take no more
** room than the source from quote to quote (an escape shrinks or keeps its
** length, the NUL takes a quote's place), and the arena holds the whole
** input and more. */
static int jsonString(JsonCtx *x, const char **pz, size_t *pn){
  const unsigned char *p = x->p + 1, *e = x->e;
  char *o = x->zOut, *z = x->zOut;
  for(;;){
    const unsigned char *s = p;
    while( p<e && *p!='"' && *p!='\\' && *p>=0x20 ) p++;
    memcpy(o, s, (size_t)(p-s));
    o += p-s;
    if( p>=e ){
      x->p = p;
      return jsonSyntax(x, "unterminated string");
    }
    if( *p=='"' ){ p++; break; }
    if( *p!='\\' ){
      x->p = p;
      return jsonSyntax(x, "control character in a string (escape it)");
    }
    if( e-p<2 ){ x->p = p+1; return jsonSyntax(x, "unterminated string"); }
    switch( p[1] ){
      case '"':  *o++ = '"';  p += 2; break;
      case '\\': *o++ = '\\'; p += 2; break;
      case '/':  *o++ = '/';  p += 2; break;
      case 'b':  *o++ = '\b'; p += 2; break;
      case 'f':  *o++ = '\f'; p += 2; break;
      case 'n':  *o++ = '\n'; p += 2; break;
      case 'r':  *o++ = '\r'; p += 2; break;
      case 't':  *o++ = '\t'; p += 2; break;
      case 'u': {
        unsigned cp, lo;
        if( e-p<6 || !jsonHex4(p+2, &cp) ){
          x->p = p;
          return jsonSyntax(x, "bad \\u escape (want 4 hex digits)");
        }
        if( cp==0 ){
          x->p = p;
          return jsonError(x, "\\u0000 at byte %zu: strings cannot hold NUL",
                           (size_t)(p - x->zStart));
        }
        if( cp>=0xdc00 && cp<=0xdfff ){
          x->p = p;
          return jsonError(x, "unpaired surrogate \\u%04x at byte %zu", cp,
                           (size_t)(p - x->zStart));
        }
        if( cp>=0xd800 && cp<=0xdbff ){
          if( e-p<12 || p[6]!='\\' || p[7]!='u' || !jsonHex4(p+8, &lo)
           || lo<0xdc00 || lo>0xdfff ){
            x->p = p;
            return jsonError(x, "unpaired surrogate \\u%04x at byte %zu", cp,
                             (size_t)(p - x->zStart));
          }
          cp = 0x10000 + ((cp-0xd800)<<10) + (lo-0xdc00);
          p += 6;
        }
        p += 6;
        if( cp<0x80 ){
          *o++ = (char)cp;
        }else if( cp<0x800 ){
          *o++ = (char)(0xc0 | (cp>>6));
          *o++ = (char)(0x80 | (cp & 0x3f));
        }else if( cp<0x10000 ){
          *o++ = (char)(0xe0 | (cp>>12));
          *o++ = (char)(0x80 | ((cp>>6) & 0x3f));
          *o++ = (char)(0x80 | (cp & 0x3f));
        }else{
          *o++ = (char)(0xf0 | (cp>>18));
          *o++ = (char)(0x80 | ((cp>>12) & 0x3f));
          *o++ = (char)(0x80 | ((cp>>6) & 0x3f));
          *o++ = (char)(0x80 | (cp & 0x3f));
        }
        break;
      }
      default:
        x->p = p;
        return jsonSyntax(x, "unknown escape in a string");
    }
  }
  *o++ = 0;
  *pz = z;
  if( pn ) *pn = (size_t)(o - z - 1);
  x->zOut = o;
  x->p = p;
  return SQLITE_OK;
}

/* Checks and skips a string without decoding it. */
static int jsonSkipString(JsonCtx *x){
  const unsigned char *p = x->p + 1, *e = x->e;
  unsigned v;
  for(;;){
    while( p<e && *p!='"' && *p!='\\' && *p>=0x20 ) p++;
    if( p>=e ){ x->p = p; return jsonSyntax(x, "unterminated string"); }
    if( *p=='"' ) break;
    if( *p!='\\' ){
      x->p = p;
      return jsonSyntax(x, "control character in a string (escape it)");
    }
    if( e-p<2 || strchr("\"\\/bfnrtu", p[1])==0 || p[1]==0 ){
      x->p = p;
      return jsonSyntax(x, "unknown escape in a string");
    }
    if( p[1]=='u' ){
      if( e-p<6 || !jsonHex4(p+2, &v) ){
        x->p = p;
        return jsonSyntax(x, "bad \\u escape (want 4 hex digits)");
      }
      p += 6;
    }else{
      p += 2;
    }
  }
  x->p = p+1;
  return SQLITE_OK;
}

static int isDigit(unsigned c){ return c-'0'<10u; }

/* Checks and skips a number: -?(0|[1-9][0-9]*)(.[0-9]+)?([eE][+-]?[0-9]+)? */
static int jsonSkipNumber(JsonCtx *x){
  const unsigned char *p = x->p, *e = x->e;
  if( p<e && *p=='-' ) p++;
  if( p>=e || !isDigit(*p) ){ x->p = p; return jsonSyntax(x, "bad number"); }
  if( *p=='0' ) p++; else while( p<e && isDigit(*p) ) p++;
  if( p<e && *p=='.' ){
    p++;
    if( p>=e || !isDigit(*p) ){ x->p = p; return jsonSyntax(x, "bad number"); }
    while( p<e && isDigit(*p) ) p++;
  }
  if( p<e && (*p=='e' || *p=='E') ){
    p++;
    if( p<e && (*p=='+' || *p=='-') ) p++;
    if( p>=e || !isDigit(*p) ){ x->p = p; return jsonSyntax(x, "bad number"); }
    while( p<e && isDigit(*p) ) p++;
  }
  x->p = p;
  return SQLITE_OK;
}

/* Checks and skips any value (of an unknown key, or the binaries array). */
static int jsonSkipValue(JsonCtx *x, int depth){
  int rc;
  jsonWs(x);
  if( x->p>=x->e ) return jsonSyntax(x, "expected a value");
  switch( *x->p ){
    case '"': return jsonSkipString(x);
    case 't': return jsonLiteral(x, "true");
    case 'f': return jsonLiteral(x, "false");
    case 'n': return jsonLiteral(x, "null");
    case '[': case '{': {
      int isObj = *x->p=='{';
      if( depth>=FNT_JSON_MAX_DEPTH ){
        return jsonError(x, "JSON nested deeper than %d at byte %zu",
                         FNT_JSON_MAX_DEPTH, (size_t)(x->p - x->zStart));
      }
      x->p++;
      jsonWs(x);
      if( x->p<x->e && *x->p==(isObj ? '}' : ']') ){ x->p++; return SQLITE_OK; }
      for(;;){
        if( isObj ){
          jsonWs(x);
          if( x->p>=x->e || *x->p!='"' ) return jsonSyntax(x, "expected a key");
          if( (rc = jsonSkipString(x))!=SQLITE_OK ) return rc;
          jsonWs(x);
          if( x->p>=x->e || *x->p!=':' ) return jsonSyntax(x, "expected ':'");
          x->p++;
        }
        if( (rc = jsonSkipValue(x, depth+1))!=SQLITE_OK ) return rc;
        jsonWs(x);
        if( x->p<x->e && *x->p==',' ){ x->p++; continue; }
        if( x->p<x->e && *x->p==(isObj ? '}' : ']') ){ x->p++; break; }
        return jsonSyntax(x, isObj ? "expected ',' or '}'" : "expected ',' or ']'");
      }
      return SQLITE_OK;
    }
    default:
      return jsonSkipNumber(x);
  }
}

/* ------------------------------------------------------------------------
** Values of the shape.
*/

/* The text of the number-like token at x->p, for messages. */
static void jsonToken(const JsonCtx *x, char *zBuf, size_t nBuf){
  const unsigned char *p = x->p;
  size_t n = 0;
  while( p+n<x->e && n+1<nBuf
      && (isDigit(p[n]) || strchr("+-.eE", p[n])!=0) && p[n]!=0 ){
    zBuf[n] = (char)p[n];
    n++;
  }
  zBuf[n] = 0;
  if( n+1==nBuf && n>3 ) memcpy(zBuf+n-3, "...", 3);
}

/* jsonUInt() for every case: all checks, all messages. */
static int jsonUIntSlow(JsonCtx *x, const char *zName, uint64_t *pv)
    __attribute__((noinline));
static int jsonUIntSlow(JsonCtx *x, const char *zName, uint64_t *pv){
  const unsigned char *p = x->p, *e = x->e, *s = p;
  uint64_t v = 0;
  char zTok[48];
  while( p<e && isDigit(*p) ) p++;
  size_t n = (size_t)(p - s);
  if( n==0 || (n>1 && *s=='0')
   || (p<e && (*p=='.' || *p=='e' || *p=='E')) ){
    const char *zN = zName ? zName : "";
    const char *zSp = zName ? " " : "";
    if( s<e && *s=='-' && s+1<e && isDigit(s[1]) ){
      jsonToken(x, zTok, sizeof(zTok));
      return jsonError(x, "%s%s%s is negative (integers here are >= 0)",
                       zN, zSp, zTok);
    }
    if( n==0 ) return jsonTypeError(x, zName, "an integer");
    if( n>1 && *s=='0' ){
      x->p = s+1;
      return jsonSyntax(x, "a number cannot have leading zeros");
    }
    jsonToken(x, zTok, sizeof(zTok));
    return jsonError(x, "%s%s%s is not an integer (no fractions or "
                     "exponents)", zN, zSp, zTok);
  }
  if( n>19 || (n==19 && memcmp(s, "9223372036854775807", 19)>0) ){
    jsonToken(x, zTok, sizeof(zTok));
    return jsonError(x, "%s%s%s is larger than 2^63-1",
                     zName ? zName : "", zName ? " " : "", zTok);
  }
  for(size_t i=0; i<n; i++) v = v*10 + (s[i]-'0');
  *pv = v;
  x->p = p;
  return SQLITE_OK;
}

/* Reads a non-negative integer <= 2^63-1, exactly (never through double).
** zName (or NULL) names the value in messages: "seq_no -3 is negative".
** Inlined into the event loop: one pass over at most 18 digits, which
** cannot overflow; anything else (19 digits, a sign, a fraction, the last
** bytes of the input, an error) goes to jsonUIntSlow(). */
static inline __attribute__((always_inline))
int jsonUInt(JsonCtx *x, const char *zName, uint64_t *pv){
  const unsigned char *p = x->p;
  if( x->e - p>=20 ){
    unsigned d = (unsigned)p[0] - '0';
    if( d<10 ){
      const unsigned char *q = p+1;
      uint64_t v = d;
      if( d!=0 ){
        while( (d = (unsigned)*q - '0')<10 && q-p<18 ){ v = v*10 + d; q++; }
      }
      unsigned c = *q;
      if( c-'0'>=10u && c!='.' && (c|0x20)!='e' ){
        x->p = q;
        *pv = v;
        return SQLITE_OK;
      }
    }
  }
  return jsonUIntSlow(x, zName, pv);
}

/* An integer field: null (when allowed) gives dflt. */
static int jsonIntField(JsonCtx *x, int64_t *pv, int bNullable, int64_t dflt){
  uint64_t v = 0;
  int rc;
  if( x->p<x->e && *x->p=='n' && bNullable ){
    *pv = dflt;
    return jsonLiteral(x, "null");
  }
  rc = jsonUInt(x, 0, &v);
  if( rc==SQLITE_OK ) *pv = (int64_t)v;
  return rc;
}

/* A string field: null (when allowed) gives NULL. */
static int jsonStrField(JsonCtx *x, const char **pz, int bNullable){
  if( x->p<x->e && *x->p=='"' ) return jsonString(x, pz, 0);
  if( x->p<x->e && *x->p=='n' && bNullable ){
    *pz = 0;
    return jsonLiteral(x, "null");
  }
  return jsonTypeError(x, 0, bNullable ? "a string or null" : "a string");
}

/* A boolean: true/false, or 0/1. */
static int jsonBoolField(JsonCtx *x, int *pv){
  if( x->p<x->e ){
    switch( *x->p ){
      case 't': *pv = 1; return jsonLiteral(x, "true");
      case 'f': *pv = 0; return jsonLiteral(x, "false");
      case '0': case '1':
        if( x->e - x->p==1 || !isDigit(x->p[1]) ){
          const unsigned char *s = x->p;
          uint64_t v = 0;
          int rc = jsonUInt(x, 0, &v);
          if( rc==SQLITE_OK ){ *pv = (int)v; return rc; }
          x->p = s;
        }
        break;
    }
  }
  return jsonTypeError(x, 0, "true or false");
}

/* Reads a key and the ':' after it.  The key is decoded into the arena
** only for the time of the match (the arena is rewound by the caller). */
static int jsonKey(JsonCtx *x, const char **pz, size_t *pn){
  int rc;
  jsonWs(x);
  if( x->p>=x->e || *x->p!='"' ) return jsonSyntax(x, "expected a key");
  if( (rc = jsonString(x, pz, pn))!=SQLITE_OK ) return rc;
  jsonWs(x);
  if( x->p>=x->e || *x->p!=':' ) return jsonSyntax(x, "expected ':'");
  x->p++;
  jsonWs(x);
  return SQLITE_OK;
}

/* After a member or element: 1 when another follows (',' read), 0 at the
** end (the closing bracket read); an error otherwise. */
static int jsonNext(JsonCtx *x, char cClose, int *pMore){
  jsonWs(x);
  if( x->p<x->e && *x->p==',' ){ x->p++; *pMore = 1; return SQLITE_OK; }
  if( x->p<x->e && *x->p==(unsigned char)cClose ){
    x->p++;
    *pMore = 0;
    return SQLITE_OK;
  }
  return jsonSyntax(x, cClose=='}' ? "expected ',' or '}'" : "expected ',' or ']'");
}

/* Finds zKey among azKey[0..nKey); -1 when absent. */
static int jsonFindKey(const char *const *azKey, int nKey, const char *z,
                       size_t n){
  for(int i=0; i<nKey; i++){
    if( strlen(azKey[i])==n && memcmp(azKey[i], z, n)==0 ) return i;
  }
  return -1;
}

/* Opens an object; *pEmpty = 1 when it is {}. */
static int jsonOpenObject(JsonCtx *x, const char *zWhat, int *pEmpty){
  jsonWs(x);
  if( x->p>=x->e || *x->p!='{' ) return jsonTypeError(x, 0, zWhat);
  x->p++;
  jsonWs(x);
  *pEmpty = 0;
  if( x->p<x->e && *x->p=='}' ){ x->p++; *pEmpty = 1; }
  return SQLITE_OK;
}

static int jsonOpenArray(JsonCtx *x, const char *zWhat, int *pEmpty){
  jsonWs(x);
  if( x->p>=x->e || *x->p!='[' ) return jsonTypeError(x, 0, zWhat);
  x->p++;
  jsonWs(x);
  *pEmpty = 0;
  if( x->p<x->e && *x->p==']' ){ x->p++; *pEmpty = 1; }
  return SQLITE_OK;
}

/* Makes room for one more element of a reused array. */
static int jsonGrow(void **pa, size_t *pnAlloc, size_t nUsed, size_t szElem){
  if( nUsed<*pnAlloc ) return SQLITE_OK;
  size_t nNew = *pnAlloc ? *pnAlloc*2 : 256;
  void *aNew = sqlite3_realloc64(*pa, (sqlite3_uint64)nNew*szElem);
  if( aNew==0 ) return SQLITE_NOMEM;
  *pa = aNew;
  *pnAlloc = nNew;
  return SQLITE_OK;
}

/* The arena: room for every string of an n-byte input (see jsonString). */
static int jsonBegin(JsonCtx *x, FntJson *pJ, const char *z, size_t n){
  memset(x, 0, sizeof(*x));
  x->pJ = pJ;
  x->zStart = x->p = (const unsigned char*)z;
  x->e = x->zStart + n;
  x->iElem = -1;
  x->iSub = -1;
  pJ->zErr[0] = 0;
  if( pJ->nArena<n+64 ){
    sqlite3_free(pJ->zArena);
    pJ->nArena = 0;
    pJ->zArena = sqlite3_malloc64(n+64);
    if( pJ->zArena==0 ) return jsonNomem(x);
    pJ->nArena = n+64;
  }
  x->zOut = pJ->zArena;
  return SQLITE_OK;
}

/* After the top-level object: nothing but white space. */
static int jsonEnd(JsonCtx *x){
  x->zField = 0;
  x->iElem = -1;
  x->zSub = 0;
  x->iSub = -1;
  jsonWs(x);
  if( x->p<x->e ) return jsonSyntax(x, "expected the end after the object");
  return SQLITE_OK;
}

/* Where an error names the key being read. */
static void jsonAt(JsonCtx *x, const char *zField){
  x->zField = zField;
  x->iElem = -1;
  x->zSub = 0;
  x->iSub = -1;
}

/* Skips the value of an unknown top-level key, which errors then name. */
static int jsonSkipUnknown(JsonCtx *x, const char *zKey){
  snprintf(x->zFieldBuf, sizeof(x->zFieldBuf), "%s", zKey);
  jsonAt(x, x->zFieldBuf);
  return jsonSkipValue(x, 0);
}

/* Reads the key of an object's next member.  A known key: *piKey is its
** index in azKey, errors now name it, and a repeated one is an error.  An
** unknown key: its value is skipped and *piKey is -1.  bTop: a member of
** the top-level object (errors name "key"), else of an array element
** (errors name "array[i].key"). */
static int jsonMember(JsonCtx *x, const char *const *azKey, int nKeys,
                      int bTop, unsigned *pSeen, int *piKey){
  const char *zKey;
  size_t nKey;
  char *zMark = x->zOut;
  int rc, iKey;
  if( bTop ) jsonAt(x, 0);
  if( (rc = jsonKey(x, &zKey, &nKey)) ) return rc;
  iKey = jsonFindKey(azKey, nKeys, zKey, nKey);
  *piKey = iKey;
  if( iKey<0 ){
    if( bTop ){
      rc = jsonSkipUnknown(x, zKey);     /* copies the key before the mark */
      x->zOut = zMark;
    }else{
      x->zOut = zMark;
      rc = jsonSkipValue(x, 0);
    }
    return rc;
  }
  x->zOut = zMark;
  if( bTop ) jsonAt(x, azKey[iKey]); else x->zSub = azKey[iKey];
  if( *pSeen & (1u<<iKey) ) return jsonError(x, "repeated key");
  *pSeen |= 1u<<iKey;
  return SQLITE_OK;
}

/* An error naming the first key of mRequired that was not seen. */
static int jsonRequire(JsonCtx *x, const char *const *azKey, int nKeys,
                       unsigned mRequired, unsigned seen){
  int i;
  for(i=0; i<nKeys; i++){
    if( (mRequired & (1u<<i)) && (seen & (1u<<i))==0 ){
      return jsonError(x, "missing required field '%s'", azKey[i]);
    }
  }
  return SQLITE_OK;
}

/* ------------------------------------------------------------------------
** The chunk.
*/

enum {
  CK_REPO, CK_COMMIT, CK_RUN_ID, CK_TS_MICROS, CK_TARGET, CK_SOURCE,
  CK_CHUNK, CK_CHUNKS, CK_TOTAL_EVENTS, CK_DURATION_NS, CK_TRUNCATED,
  CK_THREADS, CK_BINARIES, CK_FUNCTIONS, CK_EVENTS, CK_N
};
static const char *const azChunkKey[CK_N] = {
  "repo", "commit", "run_id", "ts_micros", "target", "source", "chunk",
  "chunks", "total_events", "duration_ns", "truncated", "threads",
  "binaries", "functions", "events"
};
#define CK_REQUIRED ( (1u<<CK_REPO) | (1u<<CK_RUN_ID) | (1u<<CK_TARGET) \
  | (1u<<CK_SOURCE) | (1u<<CK_CHUNK) | (1u<<CK_CHUNKS) \
  | (1u<<CK_TOTAL_EVENTS) | (1u<<CK_DURATION_NS) | (1u<<CK_TRUNCATED) \
  | (1u<<CK_FUNCTIONS) | (1u<<CK_EVENTS) )

enum { FN_SYMBOL, FN_STABLE_ID, FN_LOCAL, FN_N };
static const char *const azFuncKey[FN_N] = { "symbol", "stable_id", "local" };

/* functions: [{"symbol": str, "stable_id": str|null, "local": bool}, ...] */
static int jsonFunctions(JsonCtx *x, size_t *pnFunc){
  FntJson *pJ = x->pJ;
  size_t nFunc = 0;
  int rc, bEmpty, bMore = 1;
  if( (rc = jsonOpenArray(x, "an array of functions", &bEmpty)) ) return rc;
  while( !bEmpty && bMore ){
    fnt_function *pF;
    unsigned seen = 0;
    int bEmptyObj, bMoreKeys = 1;
    if( jsonGrow((void**)&pJ->aFunc, &pJ->nFuncAlloc, nFunc,
                 sizeof(fnt_function)) ){
      return jsonNomem(x);
    }
    pF = &pJ->aFunc[nFunc];
    memset(pF, 0, sizeof(*pF));
    x->iElem = (int64_t)nFunc;
    x->zSub = 0;
    if( (rc = jsonOpenObject(x, "an object {\"symbol\", \"stable_id\", "
                             "\"local\"}", &bEmptyObj)) ){
      return rc;
    }
    while( !bEmptyObj && bMoreKeys ){
      int iKey;
      if( (rc = jsonMember(x, azFuncKey, FN_N, 0, &seen, &iKey)) ) return rc;
      if( iKey>=0 ){
        switch( iKey ){
          case FN_SYMBOL:    rc = jsonStrField(x, &pF->symbol, 0); break;
          case FN_STABLE_ID: rc = jsonStrField(x, &pF->stable_id, 1); break;
          default:           rc = jsonBoolField(x, &pF->local); break;
        }
        if( rc ) return rc;
        x->zSub = 0;
      }
      if( (rc = jsonNext(x, '}', &bMoreKeys)) ) return rc;
    }
    rc = jsonRequire(x, azFuncKey, FN_N, (1u<<FN_SYMBOL)|(1u<<FN_LOCAL), seen);
    if( rc ) return rc;
    nFunc++;
    if( (rc = jsonNext(x, ']', &bMore)) ) return rc;
  }
  *pnFunc = nFunc;
  return SQLITE_OK;
}

/* The event's kind, matched in place for the usual spellings. */
static int jsonKind(JsonCtx *x, uint8_t *pKind){
  const unsigned char *p = x->p;
  size_t nLeft = (size_t)(x->e - p);
  const char *z;
  size_t n;
  int rc;
  if( nLeft>=7 && memcmp(p, "\"entry\"", 7)==0 ){
    *pKind = FNT_KIND_ENTRY; x->p += 7; return SQLITE_OK;
  }
  if( nLeft>=6 && memcmp(p, "\"exit\"", 6)==0 ){
    *pKind = FNT_KIND_EXIT; x->p += 6; return SQLITE_OK;
  }
  if( nLeft>=11 && memcmp(p, "\"tail_exit\"", 11)==0 ){
    *pKind = FNT_KIND_TAIL_EXIT; x->p += 11; return SQLITE_OK;
  }
  if( nLeft==0 || *p!='"' ){
    return jsonTypeError(x, "kind", "\"entry\", \"exit\" or \"tail_exit\"");
  }
  /* Escaped spellings ("\u0065ntry") are rare: decode, compare, rewind. */
  char *zMark = x->zOut;
  if( (rc = jsonString(x, &z, &n))!=SQLITE_OK ) return rc;
  x->zOut = zMark;
  if( n==5 && memcmp(z, "entry", 5)==0 ){ *pKind = FNT_KIND_ENTRY; return 0; }
  if( n==4 && memcmp(z, "exit", 4)==0 ){ *pKind = FNT_KIND_EXIT; return 0; }
  if( n==9 && memcmp(z, "tail_exit", 9)==0 ){
    *pKind = FNT_KIND_TAIL_EXIT;
    return SQLITE_OK;
  }
  return jsonError(x, "unknown kind '%.40s%s' (want entry, exit or tail_exit)",
                   z, n>40 ? "..." : "");
}

/* An event takes at least 16 bytes of text ([0,0,0,0,"exit"] and a
** comma): the events array is sized once from the text left, up to this
** many events (128 MB of address space, touched only as events fill it),
** not doubled and copied as a chunk's million events arrive.  The text
** left may be mostly other keys: where that guess cannot be allocated (a
** heap limit), the array grows as before instead of failing. */
#define FNT_JSON_EVENTS_AHEAD ((size_t)4 << 20)

/* events: [[thread, seq_no, t_ns, function_index, kind], ...] -- the hot
** loop: one reused array, no allocation, no copy. */
static int jsonEvents(JsonCtx *x, size_t *pnEvent){
  FntJson *pJ = x->pJ;
  size_t nEv = 0, nAhead = (size_t)(x->e - x->p)/16 + 1;
  int rc, bEmpty, bMore = 1;
  if( (rc = jsonOpenArray(x, "an array of events", &bEmpty)) ) return rc;
  if( nAhead>FNT_JSON_EVENTS_AHEAD ) nAhead = FNT_JSON_EVENTS_AHEAD;
  if( !bEmpty && pJ->nEventAlloc<nAhead ){
    sqlite3_free(pJ->aEvent);              /* nothing in it to keep */
    pJ->nEventAlloc = 0;
    pJ->aEvent = sqlite3_malloc64((sqlite3_uint64)nAhead*sizeof(fnt_event));
    if( pJ->aEvent ) pJ->nEventAlloc = nAhead;   /* else jsonGrow's doubling */
  }
  while( !bEmpty && bMore ){
    uint64_t v[4];
    uint8_t kind = 0;
    if( nEv==pJ->nEventAlloc
     && jsonGrow((void**)&pJ->aEvent, &pJ->nEventAlloc, nEv,
                 sizeof(fnt_event)) ){
      return jsonNomem(x);
    }
    x->iElem = (int64_t)nEv;
    jsonWs(x);
    if( x->p>=x->e || *x->p!='[' ){
      return jsonTypeError(x, 0, "an array [thread, seq_no, t_ns, "
                           "function_index, kind]");
    }
    x->p++;
    for(int j=0; j<4; j++){
      jsonWs(x);
      x->iSub = j;
      if( (rc = jsonUInt(x, azEventPart[j], &v[j])) ) return rc;
      jsonWs(x);
      if( x->p<x->e && *x->p==',' ){
        x->p++;
      }else if( x->p<x->e && *x->p==']' ){
        x->iSub = -1;
        return jsonError(x, "has %d elements, expected 5: [thread, seq_no, "
                         "t_ns, function_index, kind]", j+1);
      }else{
        return jsonSyntax(x, "expected ','");
      }
    }
    x->iSub = -1;
    jsonWs(x);
    if( (rc = jsonKind(x, &kind)) ) return rc;
    jsonWs(x);
    if( x->p>=x->e || *x->p!=']' ){
      if( x->p<x->e && *x->p==',' ){
        return jsonError(x, "has more than 5 elements, expected 5: [thread, "
                         "seq_no, t_ns, function_index, kind]");
      }
      return jsonSyntax(x, "expected ']'");
    }
    x->p++;
    if( v[0]>UINT32_MAX ){
      x->iSub = 0;
      return jsonError(x, "thread %llu is out of range 0..4294967295",
                       (unsigned long long)v[0]);
    }
    if( v[3]>UINT32_MAX ){
      x->iSub = 3;
      return jsonError(x, "function_index %llu is not an index of functions",
                       (unsigned long long)v[3]);
    }
    fnt_event *pEv = &pJ->aEvent[nEv++];
    pEv->thread = (uint32_t)v[0];
    pEv->seq_no = v[1];
    pEv->t_ns = v[2];
    pEv->function = (uint32_t)v[3];
    pEv->kind = kind;
    jsonWs(x);
    if( x->p<x->e && *x->p==',' ){ x->p++; continue; }
    if( x->p<x->e && *x->p==']' ){ x->p++; bMore = 0; continue; }
    x->iElem = -1;
    return jsonSyntax(x, "expected ',' or ']' after an event");
  }
  *pnEvent = nEv;
  return SQLITE_OK;
}

/* "binaries": any JSON array, passed through as its text. */
static int jsonBinaries(JsonCtx *x, const char **pz){
  const unsigned char *s;
  int rc;
  if( x->p<x->e && *x->p=='n' ){ *pz = 0; return jsonLiteral(x, "null"); }
  if( x->p>=x->e || *x->p!='[' ) return jsonTypeError(x, 0, "an array");
  s = x->p;
  if( (rc = jsonSkipValue(x, 0)) ) return rc;
  memcpy(x->zOut, s, (size_t)(x->p - s));
  *pz = x->zOut;
  x->zOut += x->p - s;
  *x->zOut++ = 0;
  return SQLITE_OK;
}

int fntJsonParseChunk(FntJson *pJ, const char *z, size_t n, fnt_chunk *pOut){
  JsonCtx x;
  unsigned seen = 0;
  int rc, bEmpty, bMore = 1;
  size_t nFunc = 0, nEvent = 0;

  memset(pOut, 0, sizeof(*pOut));
  pOut->ts_micros = -1;
  pOut->threads = -1;
  if( (rc = jsonBegin(&x, pJ, z, n)) ) return rc;
  if( (rc = jsonOpenObject(&x, "a JSON object (the chunk)", &bEmpty)) ){
    return rc;
  }
  while( !bEmpty && bMore ){
    int iKey;
    if( (rc = jsonMember(&x, azChunkKey, CK_N, 1, &seen, &iKey)) ) return rc;
    if( iKey>=0 ){
      switch( iKey ){
        case CK_REPO:     rc = jsonStrField(&x, &pOut->repo, 0); break;
        case CK_COMMIT:   rc = jsonStrField(&x, &pOut->commit, 1); break;
        case CK_RUN_ID:   rc = jsonStrField(&x, &pOut->run_id, 0); break;
        case CK_TARGET:   rc = jsonStrField(&x, &pOut->target, 0); break;
        case CK_SOURCE:   rc = jsonStrField(&x, &pOut->source, 0); break;
        case CK_TS_MICROS:
          rc = jsonIntField(&x, &pOut->ts_micros, 1, -1); break;
        case CK_CHUNK:    rc = jsonIntField(&x, &pOut->chunk, 0, 0); break;
        case CK_CHUNKS:   rc = jsonIntField(&x, &pOut->chunks, 0, 0); break;
        case CK_TOTAL_EVENTS:
          rc = jsonIntField(&x, &pOut->total_events, 0, 0); break;
        case CK_DURATION_NS:
          rc = jsonIntField(&x, &pOut->duration_ns, 0, 0); break;
        case CK_THREADS:
          rc = jsonIntField(&x, &pOut->threads, 1, -1); break;
        case CK_TRUNCATED: rc = jsonBoolField(&x, &pOut->truncated); break;
        case CK_BINARIES: rc = jsonBinaries(&x, &pOut->binaries_json); break;
        case CK_FUNCTIONS: rc = jsonFunctions(&x, &nFunc); break;
        default:          rc = jsonEvents(&x, &nEvent); break;
      }
      if( rc ) return rc;
    }
    jsonAt(&x, 0);
    if( (rc = jsonNext(&x, '}', &bMore)) ) return rc;
  }
  if( (rc = jsonEnd(&x)) ) return rc;

  if( (rc = jsonRequire(&x, azChunkKey, CK_N, CK_REQUIRED, seen)) ) return rc;
  /* The store checks these too; here the messages name the JSON. */
  if( pOut->repo[0]==0 ){
    jsonAt(&x, "repo");
    return jsonError(&x, "must not be empty");
  }
  if( pOut->run_id[0]==0 ){
    jsonAt(&x, "run_id");
    return jsonError(&x, "must not be empty");
  }
  if( pOut->chunks<1 ){
    jsonAt(&x, "chunks");
    return jsonError(&x, "must be at least 1, not %lld", (long long)pOut->chunks);
  }
  if( pOut->chunk>=pOut->chunks ){
    jsonAt(&x, "chunk");
    return jsonError(&x, "%lld is not below chunks (%lld)",
                     (long long)pOut->chunk, (long long)pOut->chunks);
  }
  /* functions may follow events in the object: indexes are checked now. */
  for(size_t i=0; i<nEvent; i++){
    if( pJ->aEvent[i].function>=nFunc ){
      jsonAt(&x, "events");
      x.iElem = (int64_t)i;
      x.iSub = 3;
      return jsonError(&x, "function_index %u is not an index of functions "
                       "(%zu entries)", pJ->aEvent[i].function, nFunc);
    }
  }
  pOut->functions = pJ->aFunc;
  pOut->n_functions = nFunc;
  pOut->events = pJ->aEvent;
  pOut->n_events = nEvent;
  return SQLITE_OK;
}

/* ------------------------------------------------------------------------
** The profile.
*/

enum {
  PK_RUN_ID, PK_TS_MICROS, PK_REPO, PK_COMMIT, PK_TARGET, PK_SAMPLES,
  PK_PROFILE_NS, PK_ROWS, PK_N
};
static const char *const azProfileKey[PK_N] = {
  "run_id", "ts_micros", "repo", "commit", "target", "samples",
  "profile_ns", "rows"
};
#define PK_REQUIRED ( (1u<<PK_RUN_ID) | (1u<<PK_REPO) | (1u<<PK_TARGET) \
  | (1u<<PK_SAMPLES) | (1u<<PK_PROFILE_NS) | (1u<<PK_ROWS) )

enum {
  RK_SYMBOL, RK_STABLE_ID, RK_SELF_NS, RK_TOTAL_NS, RK_SELF_SAMPLES,
  RK_TOTAL_SAMPLES, RK_N
};
static const char *const azRowKey[RK_N] = {
  "symbol", "stable_id", "self_ns", "total_ns", "self_samples",
  "total_samples"
};
#define RK_REQUIRED ( (1u<<RK_SYMBOL) | (1u<<RK_SELF_NS) | (1u<<RK_TOTAL_NS) \
  | (1u<<RK_SELF_SAMPLES) | (1u<<RK_TOTAL_SAMPLES) )

/* rows: [{"symbol", "stable_id", "self_ns", "total_ns", "self_samples",
** "total_samples"}, ...] */
static int jsonRows(JsonCtx *x, size_t *pnRow){
  FntJson *pJ = x->pJ;
  size_t nRow = 0;
  int rc, bEmpty, bMore = 1;
  if( (rc = jsonOpenArray(x, "an array of rows", &bEmpty)) ) return rc;
  while( !bEmpty && bMore ){
    fnt_profile_row *pR;
    unsigned seen = 0;
    int bEmptyObj, bMoreKeys = 1;
    if( jsonGrow((void**)&pJ->aRow, &pJ->nRowAlloc, nRow,
                 sizeof(fnt_profile_row)) ){
      return jsonNomem(x);
    }
    pR = &pJ->aRow[nRow];
    memset(pR, 0, sizeof(*pR));
    x->iElem = (int64_t)nRow;
    x->zSub = 0;
    if( (rc = jsonOpenObject(x, "an object (a profile row)", &bEmptyObj)) ){
      return rc;
    }
    while( !bEmptyObj && bMoreKeys ){
      int iKey;
      if( (rc = jsonMember(x, azRowKey, RK_N, 0, &seen, &iKey)) ) return rc;
      if( iKey>=0 ){
        switch( iKey ){
          case RK_SYMBOL:    rc = jsonStrField(x, &pR->symbol, 0); break;
          case RK_STABLE_ID: rc = jsonStrField(x, &pR->stable_id, 1); break;
          case RK_SELF_NS:   rc = jsonIntField(x, &pR->self_ns, 0, 0); break;
          case RK_TOTAL_NS:  rc = jsonIntField(x, &pR->total_ns, 0, 0); break;
          case RK_SELF_SAMPLES:
            rc = jsonIntField(x, &pR->self_samples, 0, 0); break;
          default:
            rc = jsonIntField(x, &pR->total_samples, 0, 0); break;
        }
        if( rc ) return rc;
        x->zSub = 0;
      }
      if( (rc = jsonNext(x, '}', &bMoreKeys)) ) return rc;
    }
    if( (rc = jsonRequire(x, azRowKey, RK_N, RK_REQUIRED, seen)) ) return rc;
    nRow++;
    if( (rc = jsonNext(x, ']', &bMore)) ) return rc;
  }
  *pnRow = nRow;
  return SQLITE_OK;
}

int fntJsonParseProfile(FntJson *pJ, const char *z, size_t n,
                        fnt_profile *pOut){
  JsonCtx x;
  unsigned seen = 0;
  int rc, bEmpty, bMore = 1;
  size_t nRow = 0;

  memset(pOut, 0, sizeof(*pOut));
  pOut->ts_micros = -1;
  if( (rc = jsonBegin(&x, pJ, z, n)) ) return rc;
  if( (rc = jsonOpenObject(&x, "a JSON object (the profile)", &bEmpty)) ){
    return rc;
  }
  while( !bEmpty && bMore ){
    int iKey;
    if( (rc = jsonMember(&x, azProfileKey, PK_N, 1, &seen, &iKey)) ) return rc;
    if( iKey>=0 ){
      switch( iKey ){
        case PK_RUN_ID:  rc = jsonStrField(&x, &pOut->run_id, 0); break;
        case PK_REPO:    rc = jsonStrField(&x, &pOut->repo, 0); break;
        case PK_COMMIT:  rc = jsonStrField(&x, &pOut->commit, 1); break;
        case PK_TARGET:  rc = jsonStrField(&x, &pOut->target, 0); break;
        case PK_TS_MICROS:
          rc = jsonIntField(&x, &pOut->ts_micros, 1, -1); break;
        case PK_SAMPLES: rc = jsonIntField(&x, &pOut->samples, 0, 0); break;
        case PK_PROFILE_NS:
          rc = jsonIntField(&x, &pOut->profile_ns, 0, 0); break;
        default:         rc = jsonRows(&x, &nRow); break;
      }
      if( rc ) return rc;
    }
    jsonAt(&x, 0);
    if( (rc = jsonNext(&x, '}', &bMore)) ) return rc;
  }
  if( (rc = jsonEnd(&x)) ) return rc;
  if( (rc = jsonRequire(&x, azProfileKey, PK_N, PK_REQUIRED, seen)) ) return rc;
  if( pOut->repo[0]==0 ){
    jsonAt(&x, "repo");
    return jsonError(&x, "must not be empty");
  }
  if( pOut->run_id[0]==0 ){
    jsonAt(&x, "run_id");
    return jsonError(&x, "must not be empty");
  }
  pOut->rows = pJ->aRow;
  pOut->n_rows = nRow;
  return SQLITE_OK;
}
