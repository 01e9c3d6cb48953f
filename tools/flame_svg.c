/*
** flame_svg.c -- `fnt flame RUN -o flame.svg`: a flame graph drawn by
** fntrace from fnt_flame's rows, and `fnt flame --diff RUN_A RUN_B`: the
** differential one (red: slower in RUN_B, blue: faster; widths by RUN_B,
** as difffolded.pl + flamegraph.pl draw it).
**
** One rectangle per node of the stack tree (width by inclusive time, the
** root at the bottom), its tooltip the symbol, self and inclusive time and
** calls; colours hashed from the symbol, so a function keeps its colour
** from one graph to the next.  A small embedded script zooms on click and
** searches (a regular expression; matches turn purple, their share of the
** time shown), as flamegraph.pl's SVGs do; flame.svg#zoom=NAME&search=RE
** opens zoomed on the first NAME and searching RE.  Above FLAME_MAX_NODES nodes the
** thinnest are merged into their callers (their time stays in the caller's
** width) and the graph says how many.
*/
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "fnt.h"
#include "folded.h"
#include "writer.h"

#define FLAME_MAX_NODES 10000
#define FLAME_WIDTH     1200      /* px */
#define FLAME_ROW       16        /* px per frame */
#define FLAME_PAD       10        /* px left and right */
#define FLAME_TOP       56        /* px above the frames: title, notes */

typedef struct fnode {
  char *name;
  uint32_t parent, depth;           /* parent UINT32_MAX: a root */
  int64_t self, incl, calls;        /* of the graph's run (RUN_B with --diff) */
  int64_t self_a, incl_a, calls_a;  /* --diff: of RUN_A */
  int64_t x;                        /* start, in ns from the left */
  int keep;
} fnode;

struct cli_flame {
  fnode *n;
  uint32_t nn, cap;
  uint32_t *slot, mask;             /* (parent, name) -> node + 1 */
  uint32_t maxdepth;
  uint64_t dropped;                 /* stacks too thin, left on disk (folded.h) */
  int diff;                         /* RUN_A's rows are there too */
};
typedef cli_flame ftree;

static uint32_t nodeHash(uint32_t parent, const char *z, size_t len){
  uint32_t h = 2166136261u ^ parent*0x9E3779B1u;
  size_t i;
  for(i=0; i<len; i++) h = (h ^ (unsigned char)z[i]) * 16777619u;
  return h;
}

/* The node (parent, z[0..len)), added when new if `add`; UINT32_MAX out of
** memory (or not there). */
static uint32_t treeChild(ftree *t, uint32_t parent, const char *z, size_t len, int add){
  uint32_t h, i;
  if( !add && t->slot==0 ) return UINT32_MAX;      /* an empty tree */
  if( add && (t->nn+1)*2 > (t->slot ? t->mask+1 : 0) ){
    uint32_t nSlot = t->slot ? (t->mask+1)*2 : 4096;
    uint32_t *a = calloc(nSlot, sizeof(uint32_t));
    if( a==0 ) return UINT32_MAX;
    for(i=0; i<t->nn; i++){
      h = nodeHash(t->n[i].parent, t->n[i].name, strlen(t->n[i].name)) & (nSlot-1);
      while( a[h] ) h = (h+1) & (nSlot-1);
      a[h] = i+1;
    }
    free(t->slot);
    t->slot = a;
    t->mask = nSlot-1;
  }
  for(h = nodeHash(parent, z, len) & t->mask; t->slot[h]; h = (h+1) & t->mask){
    fnode *x = &t->n[t->slot[h]-1];
    if( x->parent==parent && strncmp(x->name, z, len)==0 && x->name[len]==0 ) return t->slot[h]-1;
  }
  if( !add ) return UINT32_MAX;
  if( t->nn==t->cap ){
    uint32_t nNew = t->cap ? t->cap*2 : 1024;
    fnode *a = realloc(t->n, nNew*sizeof(*a));
    if( a==0 ) return UINT32_MAX;
    t->n = a;
    t->cap = nNew;
  }
  memset(&t->n[t->nn], 0, sizeof(fnode));
  t->n[t->nn].name = strndup(z, len);
  if( t->n[t->nn].name==0 ) return UINT32_MAX;
  t->n[t->nn].parent = parent;
  t->n[t->nn].depth = parent==UINT32_MAX ? 0 : t->n[parent].depth+1;
  if( t->n[t->nn].depth>t->maxdepth ) t->maxdepth = t->n[t->nn].depth;
  t->slot[h] = ++t->nn;
  return t->nn-1;
}

/* Rows into the tree (folded_row_fn): side 0 the graph's run, a node per
** frame of each stack; side 1 RUN_A of --diff, added to the nodes RUN_B
** has (the others are not drawn).  A node's inclusive time comes from the
** fold when it knows it, else adds up the self times of the rows under it. */
typedef struct tree_rows { ftree *t; int side; } tree_rows;
static int treeRow(void *ctx, const char *stack, size_t len, int64_t self,
                   int64_t calls, int64_t incl){
  const tree_rows *r = ctx;
  ftree *t = r->t;
  const char *s = stack, *end = stack+len;
  uint32_t at = UINT32_MAX;
  fnode *x;
  for(;;){
    const char *e = memchr(s, ';', (size_t)(end-s));
    at = treeChild(t, at, s, e ? (size_t)(e-s) : (size_t)(end-s), r->side==0);
    if( at==UINT32_MAX ) return r->side==0;     /* side 0: out of memory */
    if( incl<0 && r->side==0 ) t->n[at].incl += self;
    if( incl<0 && r->side==1 ) t->n[at].incl_a += self;
    if( e==0 ) break;
    s = e+1;
  }
  x = &t->n[at];
  if( r->side==0 ){
    if( incl>=0 ) x->incl = incl;
    x->self += self;
    x->calls += calls;
  }else{
    if( incl>=0 ) x->incl_a = incl;
    x->self_a += self;
    x->calls_a += calls;
  }
  return 0;
}

void cli_flame_free(cli_flame *t){
  uint32_t i;
  if( t==0 ) return;
  for(i=0; i<t->nn; i++) free(t->n[i].name);
  free(t->n);
  free(t->slot);
  free(t);
}

cli_flame *cli_flame_load(const char *cmd, fnt_store *st, fnt_snapshot *snap,
                          const char *run, const char *run_a,
                          const fnt_flame_window *w, size_t mem){
  ftree *t = calloc(1, sizeof(*t));
  tree_rows r = { t, 0 };
  int rc;
  if( t==0 ){ cli_error(cmd, "out of memory"); return 0; }
  rc = folded_each(cmd, st, snap, run, w, mem, FLAME_MAX_NODES, &t->dropped, treeRow, &r);
  if( rc==0 && run_a ){
    t->diff = r.side = 1;
    rc = folded_each(cmd, st, snap, run_a, w, mem, 0, 0, treeRow, &r);
  }
  if( rc>0 ) cli_error(cmd, "out of memory");
  if( rc ){ cli_flame_free(t); return 0; }
  return t;
}

uint64_t cli_flame_stacks(const cli_flame *t){
  uint64_t n = t->dropped;
  uint32_t i;
  for(i=0; i<t->nn; i++) n += t->n[i].calls>0;
  return n;
}

static ftree *sortTree;       /* qsort has no context */
static int cmpThickest(const void *a, const void *b){
  const fnode *x = &sortTree->n[*(const uint32_t*)a], *y = &sortTree->n[*(const uint32_t*)b];
  if( x->incl!=y->incl ) return x->incl>y->incl ? -1 : 1;
  if( x->depth!=y->depth ) return x->depth<y->depth ? -1 : 1;   /* callers first */
  return *(const uint32_t*)a<*(const uint32_t*)b ? -1 : 1;
}
static int cmpDrawn(const void *a, const void *b){
  const fnode *x = &sortTree->n[*(const uint32_t*)a], *y = &sortTree->n[*(const uint32_t*)b];
  if( x->depth!=y->depth ) return x->depth<y->depth ? -1 : 1;
  if( x->x!=y->x ) return x->x<y->x ? -1 : 1;
  return strcmp(x->name, y->name);
}
static int cmpName(const void *a, const void *b){
  const fnode *x = &sortTree->n[*(const uint32_t*)a], *y = &sortTree->n[*(const uint32_t*)b];
  if( x->parent!=y->parent ) return x->parent<y->parent ? -1 : 1;
  return strcmp(x->name, y->name);
}

/* Marks the nodes drawn (width > 0, the FLAME_MAX_NODES thickest: a caller
** is at least as thick as its callees, so they keep their callers) and lays
** them out: callees side by side from their caller's left edge, by name.
** @return the nodes with width that were merged, or -1 out of memory. */
static int64_t treeLayout(ftree *t){
  uint32_t *ix = malloc(((size_t)t->nn+1)*sizeof(uint32_t)), i, n = 0, d;
  int64_t merged = 0, *next = calloc((size_t)t->nn+1, sizeof(int64_t));
  int64_t rootNext = 0;
  if( ix==0 || next==0 ){ free(ix); free(next); return -1; }
  for(i=0; i<t->nn; i++) if( t->n[i].incl>0 ) ix[n++] = i;
  sortTree = t;
  qsort(ix, n, sizeof(uint32_t), cmpThickest);
  for(i=0; i<n; i++){
    if( i<FLAME_MAX_NODES ) t->n[ix[i]].keep = 1;
    else merged++;
  }
  /* The kept nodes by (parent, name): siblings together, in name order;
  ** placed depth by depth, so that a parent's x is known before its
  ** callees' (depth x nodes is small next to reading the run). */
  for(i=n=0; i<t->nn; i++){
    if( t->n[i].keep ){ ix[n++] = i; next[i] = -1; }
  }
  qsort(ix, n, sizeof(uint32_t), cmpName);
  for(d=0; d<=t->maxdepth; d++){
    for(i=0; i<n; i++){
      fnode *x = &t->n[ix[i]];
      if( x->depth!=d ) continue;
      if( x->parent==UINT32_MAX ){
        x->x = rootNext;
        rootNext += x->incl;
      }else{
        if( next[x->parent]<0 ) next[x->parent] = t->n[x->parent].x;
        x->x = next[x->parent];
        next[x->parent] += x->incl;
      }
    }
  }
  free(next);
  free(ix);
  return merged;
}

/* ------------------------------------------------------------ drawing */

void cli_xml_text(FILE *f, const char *z){
  for(; z && *z; z++){
    switch( *z ){
      case '<': fputs("&lt;", f); break;
      case '>': fputs("&gt;", f); break;
      case '&': fputs("&amp;", f); break;
      case '"': fputs("&quot;", f); break;
      default:
        if( (unsigned char)*z>=0x20 ) fputc(*z, f);
    }
  }
}

/* "1.234 ms" */
static void fmtTime(char *buf, size_t n, int64_t ns){
  double a = fabs((double)ns);
  if( a>=1e9 ) snprintf(buf, n, "%.3f s", (double)ns/1e9);
  else if( a>=1e6 ) snprintf(buf, n, "%.3f ms", (double)ns/1e6);
  else if( a>=1e3 ) snprintf(buf, n, "%.3f us", (double)ns/1e3);
  else snprintf(buf, n, "%lld ns", (long long)ns);
}

/* A warm colour from the symbol (flamegraph.pl's "hot" palette). */
void cli_hot_colour(const char *z, int *r, int *g, int *b){
  uint32_t h = nodeHash(0, z, strlen(z));
  *r = 205 + (int)(h % 51);
  *g = (int)((h>>8) % 231);
  *b = (int)((h>>16) % 56);
}

/* --diff: white to red as RUN_B's self time grows, to blue as it shrinks,
** relative to the largest change of any node; near-white when unchanged. */
static void diffColour(int64_t delta, int64_t maxAbs, int *r, int *g, int *b){
  /* Any change shows (at least a tint); the largest is the deepest. */
  int v = maxAbs>0 ? 20 + (int)(190.0 * (double)(delta<0 ? -delta : delta) / (double)maxAbs) : 0;
  if( delta>0 ){ *r = 255; *g = *b = 255-v; }
  else if( delta<0 ){ *r = *g = 255-v; *b = 255; }
  else{ *r = *g = *b = 250; }
}

static const char flameScript[] =
"<script type=\"text/ecmascript\"><![CDATA[\n"
"'use strict';\n"
"var W, PAD, details, matchedTxt, frames, zoomed = null;\n"
"function init(){\n"
"  var svg = document.getElementById('fntflame');\n"
"  W = +svg.getAttribute('width'); PAD = +svg.getAttribute('data-pad');\n"
"  details = document.getElementById('details');\n"
"  matchedTxt = document.getElementById('matched');\n"
"  frames = Array.prototype.slice.call(document.querySelectorAll('g.f'));\n"
"  frames.forEach(function(g){\n"
"    g.addEventListener('click', function(){ zoom(g); });\n"
"    g.addEventListener('mouseover', function(){ details.textContent = g.querySelector('title').textContent; });\n"
"    g.addEventListener('mouseout', function(){ details.textContent = ' '; });\n"
"  });\n"
"  document.getElementById('unzoom').addEventListener('click', function(){ zoom(null); });\n"
"  document.getElementById('search').addEventListener('click', function(){\n"
"    var re = prompt('Search for (a regular expression):', '');\n"
"    search(re);\n"
"  });\n"
"  draw(0, +svg.getAttribute('data-total'), -1);\n"
"  /* flame.svg#zoom=NAME&search=RE: a link to a view */\n"
"  location.hash.slice(1).split('&').forEach(function(kv){\n"
"    var i = kv.indexOf('='), k = kv.slice(0, i), v = decodeURIComponent(kv.slice(i + 1));\n"
"    if( k == 'search' ) search(v);\n"
"    if( k == 'zoom' ) frames.some(function(g){ return g.getAttribute('data-name') == v && (zoom(g), true); });\n"
"  });\n"
"}\n"
"function num(g, k){ return +g.getAttribute('data-' + k); }\n"
"function fit(g, w){\n"
"  var t = g.querySelector('text'), name = g.getAttribute('data-name');\n"
"  var n = Math.floor((w - 6) / 7);\n"
"  t.textContent = n < 3 ? '' : (name.length <= n ? name : name.substring(0, n - 2) + '..');\n"
"}\n"
"function draw(x0, w0, d0){\n"
"  var scale = (W - 2 * PAD) / w0;\n"
"  frames.forEach(function(g){\n"
"    var x = num(g, 'x'), w = num(g, 'w'), d = num(g, 'd');\n"
"    var inside = x >= x0 && x + w <= x0 + w0 && d >= d0;\n"
"    var below = d < d0 && x <= x0 && x + w >= x0 + w0;\n"
"    var r = g.querySelector('rect');\n"
"    if( !(inside || below) || w * scale < 0.1 ){ g.style.display = 'none'; return; }\n"
"    g.style.display = '';\n"
"    var a = Math.max(x, x0), b = Math.min(x + w, x0 + w0);\n"
"    r.setAttribute('x', PAD + (a - x0) * scale);\n"
"    r.setAttribute('width', Math.max(0, (b - a) * scale - 0.5));\n"
"    g.querySelector('text').setAttribute('x', PAD + (a - x0) * scale + 3);\n"
"    fit(g, (b - a) * scale);\n"
"  });\n"
"}\n"
"function zoom(g){\n"
"  var svg = document.getElementById('fntflame');\n"
"  zoomed = g;\n"
"  document.getElementById('unzoom').style.opacity = g ? 1 : 0;\n"
"  if( g ) draw(num(g, 'x'), num(g, 'w'), num(g, 'd'));\n"
"  else draw(0, +svg.getAttribute('data-total'), -1);\n"
"}\n"
"function search(re){\n"
"  var total = +document.getElementById('fntflame').getAttribute('data-total'), hit = 0, seen = [];\n"
"  var rx = re ? new RegExp(re) : null;\n"
"  frames.forEach(function(g){\n"
"    var r = g.querySelector('rect');\n"
"    if( !r.hasAttribute('data-fill') ) r.setAttribute('data-fill', r.getAttribute('fill'));\n"
"    if( rx && rx.test(g.getAttribute('data-name')) ){\n"
"      r.setAttribute('fill', 'rgb(230,0,230)');\n"
"      var x = num(g, 'x'), w = num(g, 'w');\n"
"      if( !seen.some(function(s){ return x >= s[0] && x + w <= s[1]; }) ){ seen.push([x, x + w]); hit += w; }\n"
"    }else r.setAttribute('fill', r.getAttribute('data-fill'));\n"
"  });\n"
"  matchedTxt.textContent = rx ? 'Matched: ' + (100 * hit / total).toFixed(1) + '%' : ' ';\n"
"}\n"
"window.addEventListener('load', init);\n"
"]]></script>\n";

/* Writes the SVG of t (inside an HTML page: no XML prolog).  @return 0, or
** -1 out of memory. */
static int drawFlame(FILE *f, ftree *t, const char *title, const char *subtitle,
                     int diff, int inHtml){
  int64_t total = 0, maxAbs = 0, merged;
  uint64_t nstacks = cli_flame_stacks(t);
  uint32_t i, k, n, shown = 0, *order;
  int height;
  double scale;
  merged = treeLayout(t);
  if( merged<0 ) return -1;
  merged += (int64_t)t->dropped;
  for(i=0; i<t->nn; i++){
    if( t->n[i].parent==UINT32_MAX ) total += t->n[i].incl;
    if( t->n[i].keep ) shown++;
    if( diff && t->n[i].keep ){
      int64_t d = t->n[i].self - t->n[i].self_a;
      if( (d<0 ? -d : d)>maxAbs ) maxAbs = d<0 ? -d : d;
    }
  }
  height = FLAME_TOP + ((int)t->maxdepth+1)*FLAME_ROW + 30;
  scale = total>0 ? (double)(FLAME_WIDTH-2*FLAME_PAD) / (double)total : 0;
  if( !inHtml ) fputs("<?xml version=\"1.0\" standalone=\"no\"?>\n", f);
  fprintf(f, "<svg id=\"fntflame\" version=\"1.1\" width=\"%d\" height=\"%d\" viewBox=\"0 0 %d %d\" "
             "xmlns=\"http://www.w3.org/2000/svg\" data-pad=\"%d\" data-total=\"%lld\" "
             "data-stacks=\"%llu\" data-shown=\"%u\" data-merged=\"%lld\">\n",
          FLAME_WIDTH, height, FLAME_WIDTH, height, FLAME_PAD, (long long)total,
          (unsigned long long)nstacks, shown, (long long)merged);
  fputs("<style>text { font-family: Verdana, sans-serif; font-size: 12px; fill: #000; }\n"
        "g.f:hover rect { stroke: #000; stroke-width: 0.5; cursor: pointer; }\n"
        "#title { font-size: 17px; text-anchor: middle; }\n"
        "#unzoom, #search { cursor: pointer; }</style>\n", f);
  fputs(flameScript, f);
  fprintf(f, "<rect x=\"0\" y=\"0\" width=\"%d\" height=\"%d\" fill=\"#f8f8f0\"/>\n",
          FLAME_WIDTH, height);
  fprintf(f, "<text id=\"title\" x=\"%d\" y=\"24\">", FLAME_WIDTH/2);
  cli_xml_text(f, title);
  fprintf(f, "</text>\n<text id=\"subtitle\" x=\"%d\" y=\"42\" text-anchor=\"middle\">",
          FLAME_WIDTH/2);
  cli_xml_text(f, subtitle);
  if( merged>0 ){
    fprintf(f, "; %lld of %llu stacks too thin to draw merged into their callers",
            (long long)merged, (unsigned long long)nstacks);
  }
  fprintf(f, "</text>\n<text id=\"unzoom\" x=\"%d\" y=\"24\" style=\"opacity:0\">Reset Zoom</text>\n"
             "<text id=\"search\" x=\"%d\" y=\"24\" text-anchor=\"end\">Search</text>\n"
             "<text id=\"matched\" x=\"%d\" y=\"%d\" text-anchor=\"end\"> </text>\n"
             "<text id=\"details\" x=\"%d\" y=\"%d\"> </text>\n",
          FLAME_PAD, FLAME_WIDTH-FLAME_PAD, FLAME_WIDTH-FLAME_PAD, height-10,
          FLAME_PAD, height-10);
  /* Drawn depth by depth, left to right: the same bytes whatever order the
  ** stacks came in. */
  order = malloc(((size_t)shown+1)*sizeof(uint32_t));
  if( order==0 ) return -1;
  for(i=n=0; i<t->nn; i++) if( t->n[i].keep ) order[n++] = i;
  sortTree = t;
  qsort(order, n, sizeof(uint32_t), cmpDrawn);
  for(k=0; k<n; k++){
    const fnode *x = &t->n[order[k]];
    char self[32], incl[32];
    int r, g, b;
    double y = height - 30 - (double)(x->depth+1)*FLAME_ROW;
    fmtTime(self, sizeof(self), x->self);
    fmtTime(incl, sizeof(incl), x->incl);
    if( diff ) diffColour(x->self - x->self_a, maxAbs, &r, &g, &b);
    else cli_hot_colour(x->name, &r, &g, &b);
    fprintf(f, "<g class=\"f\" data-x=\"%lld\" data-w=\"%lld\" data-d=\"%u\" data-name=\"",
            (long long)x->x, (long long)x->incl, x->depth);
    cli_xml_text(f, x->name);
    fputs("\"><title>", f);
    cli_xml_text(f, x->name);
    fprintf(f, " (self %s, inclusive %s, %.2f%%, %lld calls", self, incl,
            total ? 100.0*(double)x->incl/(double)total : 0.0, (long long)x->calls);
    if( diff ){
      char sa[32], ia[32];
      fmtTime(sa, sizeof(sa), x->self - x->self_a);
      fmtTime(ia, sizeof(ia), x->incl - x->incl_a);
      fprintf(f, "; against RUN_A: self %s%s, inclusive %s%s, calls %+lld",
              x->self>=x->self_a ? "+" : "", sa, x->incl>=x->incl_a ? "+" : "", ia,
              (long long)(x->calls - x->calls_a));
    }
    fprintf(f, ")</title><rect x=\"%.2f\" y=\"%.1f\" width=\"%.2f\" height=\"%d\" "
               "fill=\"rgb(%d,%d,%d)\" rx=\"2\"/><text x=\"%.2f\" y=\"%.1f\"></text></g>\n",
            FLAME_PAD + (double)x->x*scale, y, fmax(0, (double)x->incl*scale - 0.5),
            FLAME_ROW-1, r, g, b, FLAME_PAD + (double)x->x*scale + 3, y + FLAME_ROW - 4.5);
  }
  free(order);
  fputs("</svg>\n", f);
  return 0;
}

int cli_flame_svg(FILE *f, cli_flame *t, const char *title, const char *subtitle,
                  int inHtml){
  return drawFlame(f, t, title, subtitle, t->diff, inHtml);
}

/* ------------------------------------------------------------ fnt flame */

static const char flameUsage[] =
  "usage: fnt flame [-w DIR] RUN_ID [--from NS --to NS [--thread T]] [-o FILE]\n"
  "       fnt flame [-w DIR] --diff RUN_A RUN_B [--from NS --to NS] [-o FILE]\n\n"
  "A flame graph of a run as an SVG (fnt_flame's stacks): one box per stack,\n"
  "as wide as its inclusive time, callers below callees; hover for the\n"
  "symbol, self and inclusive time and calls; click to zoom, Search to\n"
  "highlight symbols matching a regular expression.  Colours stay with a\n"
  "symbol.  Above 10,000 stacks the thinnest are merged into their callers\n"
  "(the graph says how many).  With a window, calls are clipped to it.\n"
  "A summary goes to stderr unless -q (--json: a JSON object on stdout, when\n"
  "-o names a file).\n\n"
  "--diff: RUN_B's graph coloured by the change of each stack's self time\n"
  "from RUN_A: red slower, blue faster, white unchanged (difffolded.pl +\n"
  "flamegraph.pl's colours); the tooltip gives the changes.\n\n"
  "options:\n"
  CLI_WINDOW_HELP
  "  --diff          compare RUN_B with RUN_A\n"
  CLI_MEMORY_HELP
  "  -h, --help      this text\n";

int cmd_flame(int argc, char **argv){
  cli_export o;
  fnt_store *st;
  fnt_snapshot *snap = 0;
  cli_flame *t = 0;
  writer *w;
  FILE *f;
  char title[512], subtitle[256];
  int rc, status;
  status = cli_export_opts("flame", argc, argv, flameUsage, &o);
  if( status==0 ){
    fputs("\nexamples:\n  fnt flame demo -o demo.svg\n"
          "  fnt flame --diff run-before run-after -o diff.svg\n", stdout);
  }
  if( status>=0 ) return status;
  st = cli_open(cli_warehouse(0), 0);
  if( st==0 ) return 1;
  if( cli_run_filed(st, "flame", o.run)<=0
   || (o.diff && cli_run_filed(st, "flame", o.run_b)<=0) ){
    fnt_close(st);
    return 1;
  }
  rc = fnt_snapshot_current(st, &snap);
  if( rc!=FNT_OK ){
    cli_error("flame", "%s", fnt_errmsg(st)[0] ? fnt_errmsg(st) : fnt_strerror(rc));
    status = 1;
    goto done;
  }
  /* --diff: the graph is RUN_B's, RUN_A is compared. */
  t = cli_flame_load("flame", st, snap, o.diff ? o.run_b : o.run, o.diff ? o.run : 0,
                     o.has_win ? &o.win : 0, o.memory);
  fnt_snapshot_release(snap);
  if( t==0 ){ status = 1; goto done; }
  if( o.diff ) snprintf(title, sizeof(title), "Differential flame graph: %s against %s", o.run_b, o.run);
  else snprintf(title, sizeof(title), "Flame graph: %s", o.run);
  if( o.has_win && o.thread>=0 ){
    snprintf(subtitle, sizeof(subtitle), "[%lld, %lld) ns, thread %lld",
             (long long)o.win.t0, (long long)o.win.t1, (long long)o.thread);
  }else if( o.has_win ){
    snprintf(subtitle, sizeof(subtitle), "[%lld, %lld) ns",
             (long long)o.win.t0, (long long)o.win.t1);
  }else{
    snprintf(subtitle, sizeof(subtitle), "whole run");
  }
  if( (w = writer_open("flame", o.out))==0 ){ status = 1; goto done; }
  if( (f = writer_stream(w))==0 ){
    status = 1;
  }else if( cli_flame_svg(f, t, title, subtitle, 0) ){
    cli_error("flame", "out of memory");
    status = 1;
  }else{
    status = 0;
  }
  status = writer_close(w, status);
  if( status==0 ) cli_export_summary("flame", o.diff ? o.run_b : o.run, "svg",
                                     cli_flame_stacks(t), "stacks", o.out);
done:
  cli_flame_free(t);
  fnt_close(st);
  return status;
}
