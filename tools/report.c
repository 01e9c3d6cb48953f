/*
** report.c -- `fnt report RUN -o run.html`: one self-contained HTML page
** about a run (no network: styles and scripts inline): the run's summary
** (its runs-table rows), the hottest functions (fnt_account: calls,
** inclusive and self time, p50/p90/p99, max; the table sorts by any
** column on a click), a timeline overview per thread (fnt_timeline of
** the whole run) and its flame graph (flame_svg.c, inline).  Given two
** runs, RUN_A RUN_B, the page is RUN_B's with a comparison: fnt_diff's
** largest changes and the differential flame graph.
*/
#include <stdlib.h>
#include <string.h>

#include "fnt.h"
#include "writer.h"

#define REPORT_TOP 200     /* functions in the table */
#define REPORT_DIFF_TOP 50 /* functions in the comparison's table */
#define TL_COLUMNS 800     /* the timeline overview's buckets, one a pixel */
#define TL_DEPTHS 16       /* ...and the depths it draws */
#define TL_ROW 11          /* pixels a depth */
#define TL_LABEL 90        /* pixels left of the lanes, for "thread N" */

/* The run's summary: its chunks' rows added up.  @return FNT_OK or a code. */
typedef struct run_info {
  char *repo, *commit, *target, *source;
  int64_t chunks_filed, chunks, events, total_events, duration_ns, threads;
} run_info;

static char *dupText(const fnt_scan *sc, int col){
  const char *z = fnt_scan_text(sc, col, 0);
  return z ? strdup(z) : 0;
}

static int runInfo(fnt_store *st, const char *run, run_info *ri){
  fnt_snapshot *snap;
  fnt_scan *sc;
  unsigned cols = 1u<<FNT_RUN_REPO | 1u<<FNT_RUN_COMMIT | 1u<<FNT_RUN_TARGET
                | 1u<<FNT_RUN_SOURCE | 1u<<FNT_RUN_CHUNKS | 1u<<FNT_RUN_EVENTS
                | 1u<<FNT_RUN_TOTAL_EVENTS | 1u<<FNT_RUN_DURATION_NS | 1u<<FNT_RUN_THREADS;
  int rc = cli_run_scan(st, FNT_TABLE_RUNS, run, cols, &snap, &sc);
  memset(ri, 0, sizeof(*ri));
  while( rc==FNT_OK && (rc = fnt_scan_next(sc))==1 ){
    rc = FNT_OK;
    if( ri->chunks_filed++==0 ){
      ri->repo = dupText(sc, FNT_RUN_REPO);
      ri->commit = dupText(sc, FNT_RUN_COMMIT);
      ri->target = dupText(sc, FNT_RUN_TARGET);
      ri->source = dupText(sc, FNT_RUN_SOURCE);
    }
    ri->chunks = fnt_scan_int(sc, FNT_RUN_CHUNKS);
    ri->events += fnt_scan_int(sc, FNT_RUN_EVENTS);
    ri->total_events = fnt_scan_int(sc, FNT_RUN_TOTAL_EVENTS);
    if( fnt_scan_int(sc, FNT_RUN_DURATION_NS)>ri->duration_ns ) ri->duration_ns = fnt_scan_int(sc, FNT_RUN_DURATION_NS);
    if( fnt_scan_int(sc, FNT_RUN_THREADS)>ri->threads ) ri->threads = fnt_scan_int(sc, FNT_RUN_THREADS);
  }
  fnt_scan_close(sc);
  fnt_snapshot_release(snap);
  return rc<0 ? rc : FNT_OK;
}

static void runInfoFree(run_info *ri){
  free(ri->repo); free(ri->commit); free(ri->target); free(ri->source);
}

static int cmpInclusive(const void *a, const void *b){
  const fnt_account_row *x = *(const fnt_account_row *const*)a;
  const fnt_account_row *y = *(const fnt_account_row *const*)b;
  if( x->inclusive_ns!=y->inclusive_ns ) return x->inclusive_ns>y->inclusive_ns ? -1 : 1;
  return strcmp(x->key, y->key);
}

static const char reportStyle[] =
  "<style>\n"
  "body { font-family: Verdana, sans-serif; margin: 24px; color: #222; }\n"
  "h1 { font-size: 22px; } h2 { font-size: 17px; margin-top: 28px; }\n"
  "dl.summary { display: grid; grid-template-columns: max-content auto; gap: 4px 16px; }\n"
  "dl.summary dt { color: #666; } dl.summary dd { margin: 0; }\n"
  "table { border-collapse: collapse; font-size: 13px; }\n"
  "th, td { padding: 3px 8px; border-bottom: 1px solid #ddd; text-align: right; }\n"
  "th { cursor: pointer; background: #f0f0e8; position: sticky; top: 0; }\n"
  "td.sym, th.sym { text-align: left; max-width: 520px; overflow: hidden; "
  "text-overflow: ellipsis; white-space: nowrap; }\n"
  "tr:hover td { background: #fafad2; }\n"
  ".note { color: #666; font-size: 13px; }\n"
  "</style>\n";

/* Sorting the table: a click on a header sorts by it (again: the other
** way); report.html#sort=COLUMN opens sorted. */
static const char reportScript[] =
  "<script>\n"
  "'use strict';\n"
  "function sortBy(col, desc){\n"
  "  var t = document.getElementById('functions'), body = t.tBodies[0];\n"
  "  var rows = Array.prototype.slice.call(body.rows);\n"
  "  var ths = t.tHead.rows[0].cells, i = -1;\n"
  "  for(var k = 0; k < ths.length; k++) if( ths[k].getAttribute('data-col') == col ) i = k;\n"
  "  if( i < 0 ) return;\n"
  "  rows.sort(function(a, b){\n"
  "    var x = a.cells[i].getAttribute('data-v'), y = b.cells[i].getAttribute('data-v');\n"
  "    var c = isNaN(+x) ? x.localeCompare(y) : (+x) - (+y);\n"
  "    return desc ? -c : c;\n"
  "  });\n"
  "  rows.forEach(function(r){ body.appendChild(r); });\n"
  "  t.setAttribute('data-sorted', col + (desc ? ' desc' : ' asc'));\n"
  "}\n"
  "window.addEventListener('load', function(){\n"
  "  var t = document.getElementById('functions');\n"
  "  Array.prototype.forEach.call(t.tHead.rows[0].cells, function(th){\n"
  "    th.addEventListener('click', function(){\n"
  "      var col = th.getAttribute('data-col'), cur = t.getAttribute('data-sorted') || '';\n"
  "      sortBy(col, cur != col + ' desc');\n"
  "    });\n"
  "  });\n"
  "  var m = /sort=([a-z0-9_]+)/.exec(location.hash);\n"
  "  if( m ) sortBy(m[1], true);\n"
  "});\n"
  "</script>\n";

/* The timeline overview: fnt_timeline of the whole run, TL_COLUMNS wide,
** one band per thread and a lane per depth (the first TL_DEPTHS); each
** bucket's longest call is drawn from its start for its duration (at least
** a pixel), coloured as in the flame graph, with a tooltip.  tl spans
** [first, first + span). */
static void reportTimeline(FILE *f, const fnt_timeline *tl, int64_t first,
                           int64_t span){
  const fnt_timeline_row *r;
  int64_t prev = -1, y = 0, band = 0;
  size_t i, n = fnt_timeline_count(tl);
  r = fnt_timeline_rows(tl);
  /* Rows come by thread, then depth: a band is as deep as its thread. */
  for(i=0; i<n; i++){
    if( r[i].thread!=prev ){ y += band + TL_ROW; band = 0; prev = r[i].thread; }
    if( r[i].depth<TL_DEPTHS && (r[i].depth+1)*TL_ROW > band ) band = (r[i].depth+1)*TL_ROW;
  }
  y += band;
  fprintf(f, "<svg id=\"timeline\" xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" "
             "height=\"%lld\" font-family=\"Verdana\" font-size=\"11\">\n",
          TL_LABEL + TL_COLUMNS, (long long)y + 4);
  prev = -1; y = 0; band = 0;
  for(i=0; i<n; i++){
    double x0, w;
    int cr, cg, cb;
    char dur[32];
    if( r[i].thread!=prev ){
      int64_t d = 0;
      size_t j;
      y += band + TL_ROW;
      for(j=i; j<n && r[j].thread==r[i].thread; j++){
        if( r[j].depth<TL_DEPTHS && (r[j].depth+1)*TL_ROW > d ) d = (r[j].depth+1)*TL_ROW;
      }
      band = d;
      prev = r[i].thread;
      fprintf(f, "<text x=\"0\" y=\"%lld\">thread %lld</text>\n",
              (long long)y + TL_ROW - 2, (long long)r[i].thread);
    }
    if( r[i].depth>=TL_DEPTHS ) continue;
    x0 = (double)(r[i].start_ns - first) * TL_COLUMNS / (double)span;
    w = (double)r[i].dur_ns * TL_COLUMNS / (double)span;
    if( x0<0 ){ w += x0; x0 = 0; }
    if( w<1 ) w = 1;
    if( x0 + w > TL_COLUMNS ) w = TL_COLUMNS - x0;
    cli_hot_colour(r[i].symbol, &cr, &cg, &cb);
    snprintf(dur, sizeof(dur), "%.3f ms", (double)r[i].dur_ns/1e6);
    fprintf(f, "<rect class=\"call\" x=\"%.1f\" y=\"%lld\" width=\"%.1f\" height=\"%d\" "
               "fill=\"rgb(%d,%d,%d)\"><title>", TL_LABEL + x0,
            (long long)(y + r[i].depth*TL_ROW), w, TL_ROW - 1, cr, cg, cb);
    cli_xml_text(f, r[i].symbol);
    fprintf(f, " (%s; %lld call%s in this column)</title></rect>\n", dur,
            (long long)r[i].calls, r[i].calls==1 ? "" : "s");
  }
  fputs("</svg>\n", f);
}

static void cellNs(FILE *f, int64_t ns){
  fprintf(f, "<td data-v=\"%lld\">%.3f</td>", (long long)ns, (double)ns/1e6);
}

static int64_t absChange(const fnt_diff_row *r){
  int64_t d = r->inclusive_b - r->inclusive_a;
  return d<0 ? -d : d;
}
static int cmpChange(const void *a, const void *b){
  const fnt_diff_row *x = *(const fnt_diff_row *const*)a;
  const fnt_diff_row *y = *(const fnt_diff_row *const*)b;
  if( absChange(x)!=absChange(y) ) return absChange(x)>absChange(y) ? -1 : 1;
  return strcmp(x->key, y->key);
}

/* The comparison with run_a: fnt_diff's rows of the largest inclusive
** changes.  (The page's flame graph is then the differential one: one
** graph a page, since its script works on the document.)
** @return 0, or 1 out of memory. */
static int reportCompare(FILE *f, const char *run_a, const fnt_diff *df){
  size_t i, n = fnt_diff_count(df);
  const fnt_diff_row **rows = malloc((n+1)*sizeof(*rows));
  if( rows==0 ) return 1;
  for(i=0; i<n; i++) rows[i] = &fnt_diff_rows(df)[i];
  if( n>1 ) qsort(rows, n, sizeof(*rows), cmpChange);
  fputs("<h2>Compared with ", f);
  cli_xml_text(f, run_a);
  fprintf(f, "</h2>\n<p class=\"note\">fnt_diff: %s by the change of inclusive "
             "time (ms); a function one run does not call counts 0 there.</p>\n",
          n>REPORT_DIFF_TOP ? "the 50 functions that changed most," : "every function,");
  fputs("<table id=\"diff\"><thead><tr><th class=\"sym\">function</th>"
        "<th>calls before</th><th>calls</th><th>inclusive before</th><th>inclusive</th>"
        "<th>change</th><th>p50 before</th><th>p50</th></tr></thead><tbody>\n", f);
  for(i=0; i<n && i<REPORT_DIFF_TOP; i++){
    const fnt_diff_row *r = rows[i];
    fputs("<tr><td class=\"sym\" data-v=\"", f);
    cli_xml_text(f, r->symbol);
    fputs("\">", f);
    cli_xml_text(f, r->symbol);
    fprintf(f, "</td><td data-v=\"%lld\">%lld</td><td data-v=\"%lld\">%lld</td>",
            (long long)r->calls_a, (long long)r->calls_a,
            (long long)r->calls_b, (long long)r->calls_b);
    cellNs(f, r->inclusive_a); cellNs(f, r->inclusive_b);
    fprintf(f, "<td data-v=\"%lld\">%+.3f</td>", (long long)(r->inclusive_b - r->inclusive_a),
            (double)(r->inclusive_b - r->inclusive_a)/1e6);
    if( r->in_a ) cellNs(f, r->p50_a); else fputs("<td data-v=\"\">-</td>", f);
    if( r->in_b ) cellNs(f, r->p50_b); else fputs("<td data-v=\"\">-</td>", f);
    fputs("</tr>\n", f);
  }
  free(rows);
  fputs("</tbody></table>\n", f);
  return 0;
}

static const char reportUsage[] =
  "usage: fnt report [-w DIR] RUN_ID [-o FILE]\n"
  "       fnt report [-w DIR] RUN_A RUN_B [-o FILE]\n\n"
  "One self-contained HTML page about a run, to open from disk in a browser\n"
  "(no network): the run's summary, its hottest functions (calls,\n"
  "inclusive and self time, p50/p90/p99 and max from fnt_account; click a\n"
  "column to sort; report.html#sort=p99_ns opens sorted), a timeline\n"
  "overview per thread (fnt_timeline of the whole run, 800 columns, the\n"
  "first 16 depths) and its flame graph (as fnt flame draws it).\n"
  "Given two runs, the page is RUN_B's, with a comparison with RUN_A: the\n"
  "functions whose inclusive time changed most (fnt_diff) and the\n"
  "differential flame graph (as fnt flame --diff draws it).\n\n"
  "options:\n"
  "  -o, --output F  write to F (default: stdout)\n"
  CLI_MEMORY_HELP
  "  -h, --help      this text\n";

int cmd_report(int argc, char **argv){
  cli_export o;
  fnt_store *st;
  fnt_snapshot *snap = 0;
  fnt_account *acc = 0;
  cli_flame *fl = 0;
  fnt_diff *df = 0;
  fnt_timeline *tl = 0;
  const char *run;
  int64_t first = 0, last = 0;
  const fnt_account_row **top = 0;
  run_info ri;
  size_t i, n = 0;
  writer *w;
  FILE *f;
  char title[512];
  int rc, status;
  status = cli_export_opts("report", argc, argv, reportUsage, &o);
  if( status==0 ) fputs("\nexamples:\n  fnt report demo -o demo.html\n"
                        "  fnt report run-before run-after -o after.html\n", stdout);
  if( status>=0 ) return status;
  run = o.diff ? o.run_b : o.run;
  if( o.has_win ){
    cli_error("report", "--from/--to/--thread are not options of fnt report");
    return 2;
  }
  st = cli_open(cli_warehouse(0), 0);
  if( st==0 ) return 1;
  if( cli_run_filed(st, "report", run)<=0
   || (o.diff && cli_run_filed(st, "report", o.run)<=0) ){ fnt_close(st); return 1; }
  rc = runInfo(st, run, &ri);
  if( rc==FNT_OK ) rc = fnt_snapshot_current(st, &snap);
  if( rc==FNT_OK ) rc = fnt_account_compute(snap, run, &acc);
  if( rc==FNT_OK ) rc = fnt_timeline_span(snap, run, &first, &last);
  if( rc==FNT_OK ) rc = fnt_timeline_compute(snap, run, first, last + 1, TL_COLUMNS, -1, &tl);
  if( rc==FNT_OK && o.diff ) rc = fnt_diff_compute(snap, o.run, run, &df);
  if( rc==FNT_OK ) fl = cli_flame_load("report", st, snap, run, o.diff ? o.run : 0, 0, o.memory);
  fnt_snapshot_release(snap);
  if( rc==FNT_OK && fl==0 ){ status = 1; goto done; }   /* reported */
  if( rc==FNT_OK ){
    n = fnt_account_count(acc);
    top = malloc((n+1)*sizeof(*top));
    if( top==0 ) rc = FNT_E_NOMEM;
    for(i=0; top && i<n; i++) top[i] = &fnt_account_rows(acc)[i];
    if( top && n>1 ) qsort(top, n, sizeof(*top), cmpInclusive);
  }
  if( rc!=FNT_OK ){
    cli_error("report", "%s", fnt_errmsg(st)[0] ? fnt_errmsg(st) : fnt_strerror(rc));
    status = 1;
    goto done;
  }
  if( (w = writer_open("report", o.out))==0 ){ status = 1; goto done; }
  if( (f = writer_stream(w))==0 ){
    status = writer_close(w, 1);
    goto done;
  }
  fputs("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n<title>", f);
  cli_xml_text(f, run);
  fputs(" - fntrace report</title>\n", f);
  fputs(reportStyle, f);
  fputs(reportScript, f);
  fputs("</head><body>\n<h1>Run ", f);
  cli_xml_text(f, run);
  fputs("</h1>\n<dl class=\"summary\" id=\"summary\">\n", f);
  fputs("<dt>repo</dt><dd>", f); cli_xml_text(f, ri.repo); fputs("</dd>\n", f);
  fputs("<dt>commit</dt><dd>", f); cli_xml_text(f, ri.commit ? ri.commit : "-"); fputs("</dd>\n", f);
  fputs("<dt>target</dt><dd>", f); cli_xml_text(f, ri.target); fputs("</dd>\n", f);
  fputs("<dt>source</dt><dd>", f); cli_xml_text(f, ri.source); fputs("</dd>\n", f);
  fprintf(f, "<dt>chunks</dt><dd>%lld of %lld filed</dd>\n", (long long)ri.chunks_filed, (long long)ri.chunks);
  fprintf(f, "<dt>events</dt><dd>%lld (of %lld traced)</dd>\n", (long long)ri.events, (long long)ri.total_events);
  fprintf(f, "<dt>threads</dt><dd>%lld</dd>\n", (long long)ri.threads);
  fprintf(f, "<dt>duration</dt><dd>%.3f ms</dd>\n", (double)ri.duration_ns/1e6);
  fprintf(f, "<dt>functions</dt><dd>%zu</dd>\n<dt>stacks</dt><dd>%llu</dd>\n</dl>\n",
          n, (unsigned long long)cli_flame_stacks(fl));
  fprintf(f, "<h2>Hottest functions</h2>\n<p class=\"note\">By inclusive time "
             "(recursion counted once); times in ms; %s. Click a column to sort.</p>\n",
          n>REPORT_TOP ? "the 200 hottest" : "every function");
  fputs("<table id=\"functions\"><thead><tr>"
        "<th class=\"sym\" data-col=\"symbol\">function</th><th data-col=\"calls\">calls</th>"
        "<th data-col=\"inclusive_ns\">inclusive</th><th data-col=\"self_ns\">self</th>"
        "<th data-col=\"p50_ns\">p50</th><th data-col=\"p90_ns\">p90</th>"
        "<th data-col=\"p99_ns\">p99</th><th data-col=\"max_ns\">max</th>"
        "</tr></thead><tbody>\n", f);
  for(i=0; i<n && i<REPORT_TOP; i++){
    const fnt_account_row *r = top[i];
    fputs("<tr><td class=\"sym\" data-v=\"", f);
    cli_xml_text(f, r->symbol);
    fputs("\" title=\"", f);
    cli_xml_text(f, r->key);
    fputs("\">", f);
    cli_xml_text(f, r->symbol);
    fprintf(f, "</td><td data-v=\"%lld\">%lld</td>", (long long)r->calls, (long long)r->calls);
    cellNs(f, r->inclusive_ns); cellNs(f, r->self_ns); cellNs(f, r->p50_ns);
    cellNs(f, r->p90_ns); cellNs(f, r->p99_ns); cellNs(f, r->max_ns);
    fputs("</tr>\n", f);
  }
  fprintf(f, "</tbody></table>\n<h2>Timeline</h2>\n<p class=\"note\">The whole run "
             "in %d columns, a lane per depth (the first %d): each column's longest "
             "call, as fnt_timeline gives it.</p>\n", TL_COLUMNS, TL_DEPTHS);
  reportTimeline(f, tl, first, last + 1 - first);
  if( o.diff && reportCompare(f, o.run, df) ){
    cli_error("report", "out of memory");
    status = 1;
    goto write_end;
  }
  fprintf(f, "<h2>Flame graph</h2>\n<p class=\"note\">Click a box to zoom, "
             "Search to highlight functions.%s</p>\n", o.diff ? "  Widths by this run, "
             "red where a stack's self time grew, blue where it shrank." : "");
  if( o.diff ) snprintf(title, sizeof(title), "Differential flame graph: %s against %s", run, o.run);
  else snprintf(title, sizeof(title), "Flame graph: %s", run);
  if( cli_flame_svg(f, fl, title, "whole run", 1) ){
    cli_error("report", "out of memory");
    status = 1;
  }else{
    status = 0;
  }
write_end:
  fputs("\n</body></html>\n", f);
  status = writer_close(w, status);
  if( status==0 ) cli_export_summary("report", run, "html", n, "functions", o.out);
done:
  fnt_timeline_free(tl);
  free(top);
  fnt_account_free(acc);
  cli_flame_free(fl);
  fnt_diff_free(df);
  runInfoFree(&ri);
  fnt_close(st);
  return status;
}
