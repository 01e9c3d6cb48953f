/*
** fuzz_json.c -- libFuzzer target: the chunk and profile JSON reader of the
** filing functions (ext/json.c), the first thing hostile SQL arguments meet.
**
** Input: byte 0 picks the shape (even: chunk, odd: profile), the rest is
** the JSON text (not NUL-terminated, as SQLite may hand it over).  Each
** input is parsed twice through one FntJson, as a connection filing chunk
** after chunk reuses its buffers, and what a successful parse returns is
** walked completely, so that a pointer into freed or unfilled memory shows.
*/
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "sqlite3.h"
#include "json.h"

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerInitialize(int *argc, char ***argv){
  (void)argc; (void)argv;
  return 0;
}

static volatile size_t g_sink;

static void touch(const char *z){
  if( z ) g_sink += strlen(z);
}

static void walkChunk(const fnt_chunk *c){
  size_t i;
  touch(c->repo); touch(c->commit); touch(c->run_id); touch(c->target);
  touch(c->source); touch(c->binaries_json);
  if( c->chunk<0 || c->chunk>=c->chunks ) abort();   /* the reader checks it */
  for(i=0; i<c->n_functions; i++){
    touch(c->functions[i].symbol);
    touch(c->functions[i].stable_id);
    if( c->functions[i].symbol==0 ) abort();          /* required */
  }
  for(i=0; i<c->n_events; i++){
    const fnt_event *e = &c->events[i];
    if( e->function>=c->n_functions ) abort();        /* checked index */
    if( fnt_kind_name(e->kind)==0 ) abort();
    if( e->seq_no>(uint64_t)INT64_MAX || e->t_ns>(uint64_t)INT64_MAX ) abort();
    g_sink += e->thread;
  }
}

static void walkProfile(const fnt_profile *p){
  size_t i;
  touch(p->run_id); touch(p->repo); touch(p->commit); touch(p->target);
  for(i=0; i<p->n_rows; i++){
    const fnt_profile_row *r = &p->rows[i];
    touch(r->symbol); touch(r->stable_id);
    if( r->symbol==0 ) abort();
    if( r->self_ns<0 || r->total_ns<0 || r->self_samples<0 || r->total_samples<0 ) abort();
  }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size){
  FntJson j;
  int pass;
  if( size<1 ) return 0;
  memset(&j, 0, sizeof(j));
  for(pass=0; pass<2; pass++){
    const char *z = (const char*)data + 1;
    size_t n = size - 1;
    int rc;
    if( data[0] & 1 ){
      fnt_profile p;
      rc = fntJsonParseProfile(&j, z, n, &p);
      if( rc==SQLITE_OK ) walkProfile(&p);
    }else{
      fnt_chunk c;
      rc = fntJsonParseChunk(&j, z, n, &c);
      if( rc==SQLITE_OK ) walkChunk(&c);
    }
    /* A failure must say why, as the SQL error text. */
    if( rc==SQLITE_ERROR && j.zErr[0]==0 ) abort();
    if( rc!=SQLITE_OK && rc!=SQLITE_ERROR && rc!=SQLITE_NOMEM ) abort();
    if( pass==0 ) fntJsonTrim(&j);
  }
  fntJsonClear(&j);
  return 0;
}
