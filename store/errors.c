/*
** errors.c -- error codes, the per-handle message, the version.
*/
#include <stdio.h>

#include "internal.h"

const char *fnt_version(void){ return FNT_VERSION_STRING; }

const char *fnt_strerror(int code){
  switch( code ){
    case FNT_OK:         return "not an error";
    case FNT_E_IO:       return "I/O error";
    case FNT_E_NOMEM:    return "out of memory";
    case FNT_E_CORRUPT:  return "corrupt file";
    case FNT_E_INVALID:  return "invalid input";
    case FNT_E_CONFLICT: return "run_id filed under another repo";
    case FNT_E_NOTFOUND: return "not found";
    case FNT_E_BUSY:     return "too many concurrent commits, gave up";
    case FNT_E_FORMAT:   return "unsupported format version";
    case FNT_E_MISUSE:   return "API misuse";
    case FNT_E_EXPIRED:  return "snapshot expired while read, retry";
    case FNT_E_LIMIT:    return "memory limit reached";
    default:             return "unknown error";
  }
}

int fnt_err(fnt_store *st, int code, const char *fmt, ...){
  va_list ap;
  if( st==0 ) return code;
  va_start(ap, fmt);
  vsnprintf(st->errmsg, sizeof(st->errmsg), fmt, ap);
  va_end(ap);
  st->errcode = code;
  return code;
}

void fnt_err_clear(fnt_store *st){
  if( st ){
    st->errmsg[0] = 0;
    st->errcode = FNT_OK;
  }
}

const char *fnt_errmsg(const fnt_store *st){
  return st ? st->errmsg : "no store handle";
}
