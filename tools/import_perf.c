/*
** import_perf.c -- `fnt import-perf`: files a sampled profile (perf record -g)
** as fn_profile rows, one per symbol.
**
** Input: a perf.data (recognised by its magic "PERFILE2"; read by running
** `perf script --header --no-inline -F comm,tid,time,period,event,ip,sym,dso`),
** or the text of `perf script`, or `-` for that text on stdin (text made
** with inline expansion keeps its "(inlined)" frames, counted as frames
** of the inlined function).  When perf printed some call chains empty, a
** second `perf script -G` gives those samples' own frames, as perf report
** counts them (perf_script.h).  The parsing and folding are perf_script.c's;
** this file picks the defaults, runs perf, and files the result with
** fnt_file_profile().  Nothing is filed unless the whole input folds.
**
** Defaults, when not given:
**   --run-id   "<file name>-<16 hex digits>", the digits the XXH3-64 of
**              the file's bytes (the perf.data, or the text): the same
**              recording imported again (or copied elsewhere under the same
**              name) gets the same id and files nothing, while a new
**              recording written over the old file gets a new one, which a
**              name or mtime alone would not promise.  stdin is "stdin".
**   --repo     "local" (as import-xray).
**   --target   the comm with the most samples, else the file name.
**   ts_micros  the recording time from perf's header ("reference time"
**              when perf recorded clock data, else "captured on"), else
**              the file's mtime, else now (stdin from a pipe).
**   stable_id  from --room FILE (room.h), else NULL.
*/
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <xxhash.h>

#include "fnt.h"
#include "import_opts.h"
#include "perf_script.h"
#include "room.h"

#define CMD "import-perf"

/* What `perf script` is asked to print: the fields perf_script.c needs
** and no others, so that no optional column can shift them.  With
** --no-inline every frame is a function of the symbol table, the same
** names as XRay's and a code room's, and the rows equal those of
** `perf report --no-inline` (inline expansion also costs perf an addr2line
** per address). */
#define PERF_FIELDS "comm,tid,time,period,event,ip,sym,dso"

static void usage(FILE *out){
  fprintf(out,
    "usage: fnt import-perf [-w DIR] [--json] [-q] [--repo REPO] [--commit SHA]\n"
    "                       [--run-id ID] [--target NAME] [--room FILE] FILE\n"
    "\n"
    "Files a sampled profile as fn_profile rows, one per symbol: self and\n"
    "total (anywhere in the call chain, once per sample) samples and\n"
    "nanoseconds.  FILE is a perf.data, the text of `perf script`, or - for\n"
    "that text on stdin.  Record with cpu-clock, whose periods are ns.\n"
    "\n"
    "  --repo REPO      the repository the profile belongs to (default \"local\")\n"
    "  --commit SHA     the commit profiled (default none)\n"
    "  --run-id ID      the profile's id (default FILENAME-<hash of its bytes>);\n"
    "                   importing the same id again files nothing\n"
    "  --target NAME    what was profiled (default the most sampled command)\n"
    "  --room FILE      TSV of symbol<TAB>stable_id giving the rows' stable_id\n"
    "\n"
    "Unsymbolised frames are filed as \"[unknown] (libfoo.so)\", or \"[unknown]\"\n"
    "when perf does not know the library either.\n"
    "\n"
    "example:\n"
    "  perf record -e cpu-clock -F 2000 -g -o perf.data -- ./widget_bench\n"
    "  fnt import-perf --repo acme/widget --commit 9f1c2e0 perf.data\n");
  cli_globals_help(out);
}

/* The file name part of a path. */
/* XXH3-64 of the whole of fd (from its current offset); 0 ok, -1 errno. */
static int hash_fd(int fd, uint64_t *out){
  char buf[1<<16];
  ssize_t n;
  XXH3_state_t *hs = XXH3_createState();
  if( !hs ){
    errno = ENOMEM;
    return -1;
  }
  XXH3_64bits_reset(hs);
  while( (n = read(fd, buf, sizeof(buf))) != 0 ){
    if( n<0 ){
      if( errno==EINTR ) continue;
      XXH3_freeState(hs);
      return -1;
    }
    XXH3_64bits_update(hs, buf, (size_t)n);
  }
  *out = XXH3_64bits_digest(hs);
  XXH3_freeState(hs);
  return 0;
}

/* Runs `perf script <opts> -F PERF_FIELDS -i path` and feeds its output
** to perf_script_fold() (*prof NULL) or perf_script_add_leaves() (the
** second pass over *prof).  0 ok, else 1 with the error printed. */
static int run_perf_script(const char *path, const char *opt1, const char *opt2,
                           perf_profile **prof){
  int fds[2];
  pid_t pid;
  FILE *in;
  int rc, status;
  char err[512];

  if( pipe(fds) ){
    cli_error(CMD, "pipe: %s", strerror(errno));
    return 1;
  }
  pid = fork();
  if( pid<0 ){
    cli_error(CMD, "fork: %s", strerror(errno));
    close(fds[0]);
    close(fds[1]);
    return 1;
  }
  if( pid==0 ){
    /* The child: perf's stderr stays ours, so its warnings are seen. */
    char *argv[] = {"perf", "script", (char *)opt1, (char *)opt2, "-F", PERF_FIELDS,
                    "-i", (char *)path, 0};
    close(fds[0]);
    if( dup2(fds[1], 1)<0 ) _exit(127);
    close(fds[1]);
    execvp("perf", argv);
    fprintf(stderr, "fnt " CMD ": cannot run perf: %s\n", strerror(errno));
    _exit(127);
  }
  close(fds[1]);
  in = fdopen(fds[0], "r");
  if( !in ){
    cli_error(CMD, "fdopen: %s", strerror(errno));
    close(fds[0]);
    waitpid(pid, &status, 0);
    return 1;
  }
  if( *prof ){
    rc = perf_script_add_leaves(*prof, in, path, err, sizeof(err));
  }else{
    rc = perf_script_fold(in, path, prof, err, sizeof(err));
  }
  fclose(in);   /* perf gets SIGPIPE if it was still writing */
  while( waitpid(pid, &status, 0)<0 ){
    if( errno!=EINTR ){
      status = -1;
      break;
    }
  }
  if( rc ){
    /* Reported first: perf may have died of the pipe closed after it. */
    cli_error(CMD, "%s (in `perf script %s %s` output)", err, opt1, opt2);
    return 1;
  }
  if( status!=0 ){
    /* perf's own message is already on stderr. */
    if( WIFEXITED(status) ){
      cli_error(CMD, "%s: `perf script` failed (exit status %d)%s", path,
                WEXITSTATUS(status),
                WEXITSTATUS(status)==127 ? ": is perf installed?" : "");
    }else{
      cli_error(CMD, "%s: `perf script` failed (%s)", path,
                status<0 ? "lost track of it" : "killed by a signal");
    }
    return 1;
  }
  return 0;
}

/* Folds a perf.data: the call chains, then, when perf printed some chains
** empty, the leaves of those samples (perf_script_add_leaves() says why).
** 0 ok, else 1 with the error printed and *out NULL. */
static int fold_perf_data(const char *path, perf_profile **out){
  *out = 0;
  if( run_perf_script(path, "--header", "--no-inline", out)
   || ((*out)->n_empty && run_perf_script(path, "--no-inline", "-G", out)) ){
    perf_profile_free(*out);
    *out = 0;
    return 1;
  }
  return 0;
}

static int is_opt(const char *arg, const char *name, int argc, char **argv,
                  int *i, const char **val){
  size_t n = strlen(name);
  if( strncmp(arg, name, n)!=0 ) return 0;
  if( arg[n]=='=' ){
    *val = arg+n+1;
    return 1;
  }
  if( arg[n]==0 ){
    if( *i+1 >= argc ){
      *val = 0;
      return 1;
    }
    *val = argv[++*i];
    return 1;
  }
  return 0;
}

int cmd_import_perf(int argc, char **argv){
  const char *warehouse = 0, *repo = "local", *commit = 0, *run_id = 0;
  const char *target = 0, *room_path = 0, *path = 0;
  const char *name, *event;
  perf_profile *prof = 0;
  fnt_room *room = 0;
  fnt_store *st = 0;
  fnt_profile_row *rows = 0;
  fnt_profile fp;
  char run_buf[512], err[512];
  uint64_t hash = 0;
  int64_t ts = -1, mtime = -1;
  int i, rc = 1, filed;
  size_t k, mapped = 0;
  struct timespec t0, t1;

  clock_gettime(CLOCK_MONOTONIC, &t0);
  for(i=1; i<argc; i++){
    const char *a = argv[i], *v = 0;
    if( strcmp(a, "--help")==0 || strcmp(a, "-h")==0 ){
      usage(stdout);
      return 0;
    }
    if( is_opt(a, "--repo", argc, argv, &i, &v) ) repo = v;
    else if( is_opt(a, "--commit", argc, argv, &i, &v) ) commit = v;
    else if( is_opt(a, "--run-id", argc, argv, &i, &v) ) run_id = v;
    else if( is_opt(a, "--target", argc, argv, &i, &v) ) target = v;
    else if( is_opt(a, "--room", argc, argv, &i, &v) ) room_path = v;
    else if( a[0]=='-' && a[1] ){
      cli_error(CMD, "unknown option '%s' (see fnt import-perf --help)", a);
      return 2;
    }else if( path ){
      cli_error(CMD, "one FILE only, got '%s' and '%s'", path, a);
      return 2;
    }else{
      path = a;
      continue;
    }
    if( !v ){
      cli_error(CMD, "%s needs a value", a);
      return 2;
    }
  }
  if( !path ){
    usage(stderr);
    return 2;
  }
  if( repo[0]==0 ){
    cli_error(CMD, "--repo must not be empty");
    return 2;
  }
  if( run_id && run_id[0]==0 ){
    cli_error(CMD, "--run-id must not be empty");
    return 2;
  }
  if( room_path && room_load(room_path, &room, err, sizeof(err)) ){
    cli_error(CMD, "%s", err);
    return 1;
  }

  /* Read and fold: nothing is filed unless the whole input is good. */
  if( strcmp(path, "-")==0 ){
    struct stat sb;
    name = "stdin";
    if( fstat(0, &sb)==0 && S_ISREG(sb.st_mode) ){
      mtime = (int64_t)sb.st_mtim.tv_sec*1000000 + sb.st_mtim.tv_nsec/1000;
    }
    if( perf_script_fold(stdin, "<stdin>", &prof, err, sizeof(err)) ){
      cli_error(CMD, "%s", err);
      goto done;
    }
    hash = prof->text_hash;
  }else{
    char magic[8];
    struct stat sb;
    ssize_t n;
    int fd = open(path, O_RDONLY);
    name = import_base_name(path);
    if( fd<0 ){
      cli_error(CMD, "%s: %s", path, strerror(errno));
      goto done;
    }
    if( fstat(fd, &sb)==0 ){
      mtime = (int64_t)sb.st_mtim.tv_sec*1000000 + sb.st_mtim.tv_nsec/1000;
    }
    n = read(fd, magic, sizeof(magic));
    if( n==(ssize_t)sizeof(magic) && memcmp(magic, "PERFILE2", 8)==0 ){
      int r = lseek(fd, 0, SEEK_SET)<0 ? -1 : hash_fd(fd, &hash);
      if( r ){
        cli_error(CMD, "%s: %s", path, strerror(errno));
        close(fd);
        goto done;
      }
      close(fd);
      if( fold_perf_data(path, &prof) ) goto done;
    }else{
      FILE *in = 0;
      if( n<0 || lseek(fd, 0, SEEK_SET)<0 || (in = fdopen(fd, "r"))==0 ){
        cli_error(CMD, "%s: %s", path, strerror(errno));
        close(fd);
        goto done;
      }
      int r = perf_script_fold(in, path, &prof, err, sizeof(err));
      fclose(in);
      if( r ){
        cli_error(CMD, "%s", err);
        goto done;
      }
      hash = prof->text_hash;
    }
  }
  if( prof->samples==0 || prof->n_symbols==0 ){
    cli_error(CMD, "%s: no samples with a call chain (%lld lines read): nothing to file",
              path, (long long)prof->lines);
    goto done;
  }
  event = prof->event ? prof->event : "";
  if( strncmp(event, "cpu-clock", 9)!=0 && strncmp(event, "task-clock", 10)!=0 ){
    fprintf(stderr, "fnt " CMD ": warning: %s: the samples are of event '%s', whose "
            "periods are not nanoseconds; self_ns and total_ns hold its periods "
            "(record with -e cpu-clock)\n", path, event);
  }

  if( !run_id ){
    snprintf(run_buf, sizeof(run_buf), "%s-%016llx", name, (unsigned long long)hash);
    run_id = run_buf;
  }
  if( !target ){
    target = prof->top_comm && prof->top_comm[0] ? prof->top_comm : name;
  }
  ts = prof->ts_micros>=0 ? prof->ts_micros : mtime;

  rows = calloc(prof->n_symbols, sizeof(*rows));
  if( !rows ){
    cli_error(CMD, "out of memory for %zu rows", prof->n_symbols);
    goto done;
  }
  for(k=0; k<prof->n_symbols; k++){
    const perf_symbol *s = &prof->symbols[k];
    rows[k].symbol = s->name;
    rows[k].stable_id = room ? room_lookup(room, s->name) : 0;
    if( rows[k].stable_id ) mapped++;
    rows[k].self_ns = s->self_ns;
    rows[k].total_ns = s->total_ns;
    rows[k].self_samples = s->self_samples;
    rows[k].total_samples = s->total_samples;
  }
  memset(&fp, 0, sizeof(fp));
  fp.run_id = run_id;
  fp.ts_micros = ts;
  fp.repo = repo;
  fp.commit = commit;
  fp.target = target;
  fp.samples = prof->samples;
  fp.profile_ns = prof->profile_ns;
  fp.rows = rows;
  fp.n_rows = prof->n_symbols;

  warehouse = cli_warehouse(0);    /* -w/--warehouse: a global option (cli.c) */
  st = cli_open(warehouse, 1);
  if( !st ) goto done;
  if( cli_check_repo(st, CMD, FNT_TABLE_PROFILE, run_id, repo) ) goto done;
  filed = fnt_file_profile(st, &fp);
  if( filed<0 ){
    const char *msg = fnt_errmsg(st);
    cli_error(CMD, "%s: filing run %s: %s", warehouse, run_id,
              msg && msg[0] ? msg : fnt_strerror(filed));
    goto done;
  }
  clock_gettime(CLOCK_MONOTONIC, &t1);
  if( cli_g.quiet ){
    /* -q: the exit status says it */
  }else if( cli_g.json ){
    cli_json_begin();
    cli_json_str("run_id", run_id);
    cli_json_str("source", "perf");
    cli_json_str("repo", repo);
    cli_json_str("target", target);
    cli_json_str("input", strcmp(path, "-")==0 ? "<stdin>" : path);
    cli_json_int("samples", (long long)prof->samples);
    cli_json_int("symbols", (long long)prof->n_symbols);
    cli_json_int("symbols_mapped", (long long)mapped);
    cli_json_int("samples_without_chain", (long long)prof->n_empty);
    cli_json_int("profile_ns", (long long)prof->profile_ns);
    cli_json_bool("filed", filed>0);
    cli_json_str("warehouse", warehouse);
    cli_json_num("seconds", (double)(t1.tv_sec-t0.tv_sec) + (double)(t1.tv_nsec-t0.tv_nsec)/1e9);
    cli_json_end();
  }else{
    printf("%s: %lld samples, %zu symbols", strcmp(path, "-")==0 ? "<stdin>" : path,
           (long long)prof->samples, prof->n_symbols);
    if( room ) printf(" (%zu with a stable_id)", mapped);
    if( prof->n_empty ) printf(", %zu samples with no call chain", prof->n_empty);
    printf(", profile_ns %lld, run %s: %s in %.2f s\n", (long long)prof->profile_ns,
           run_id, filed ? "filed" : "already filed",
           (double)(t1.tv_sec-t0.tv_sec) + (double)(t1.tv_nsec-t0.tv_nsec)/1e9);
  }
  rc = 0;

done:
  fnt_close(st);
  free(rows);
  perf_profile_free(prof);
  room_free(room);
  return rc;
}
