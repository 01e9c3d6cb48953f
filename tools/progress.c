/*
** progress.c -- see progress.h.  "\r" + "\033[K" redraws the line in place.
*/
#include <stdio.h>
#include <time.h>
#include <unistd.h>

#include "fnt.h"
#include "progress.h"

static int64_t now_ms(void){
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (int64_t)ts.tv_sec*1000 + ts.tv_nsec/1000000;
}

static void draw(progress *pg){
  enum { WIDTH = 30 };
  double secs = (double)(now_ms() - pg->start_ms)/1000.0;
  if( pg->total ){
    uint64_t d = pg->done > pg->total ? pg->total : pg->done;
    int fill = (int)(d*WIDTH / pg->total), i;
    char bar[WIDTH+1];
    for(i=0; i<WIDTH; i++) bar[i] = i<fill ? '#' : '.';
    bar[WIDTH] = 0;
    fprintf(stderr, "\r\033[K%s [%s] %3d%%  %llu/%llu  %.1fs", pg->label, bar,
            (int)(d*100 / pg->total), (unsigned long long)d,
            (unsigned long long)pg->total, secs);
  }else if( pg->done ){
    fprintf(stderr, "\r\033[K%s %llu  %.1fs", pg->label,
            (unsigned long long)pg->done, secs);
  }else{
    fprintf(stderr, "\r\033[K%s...  %.1fs", pg->label, secs);
  }
  fflush(stderr);
  pg->last_ms = now_ms();
}

void progress_begin(progress *pg, const char *label, uint64_t total){
  pg->active = isatty(2) && !cli_g.quiet;
  pg->label = label;
  pg->total = total;
  pg->done = 0;
  pg->start_ms = pg->last_ms = now_ms();
  if( pg->active ) draw(pg);
}

void progress_update(progress *pg, uint64_t done){
  if( !pg->active ) return;
  pg->done = done;
  if( now_ms() - pg->last_ms >= 100 ) draw(pg);
}

void progress_stage(progress *pg, const char *label, uint64_t total){
  if( !pg->active ) return;
  pg->label = label;
  pg->total = total;
  pg->done = 0;
  draw(pg);
}

void progress_end(progress *pg){
  if( !pg->active ) return;
  fprintf(stderr, "\r\033[K");
  fflush(stderr);
  pg->active = 0;
}
