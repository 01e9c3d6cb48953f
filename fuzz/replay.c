/*
** replay.c -- the main() of a fuzz target built without libFuzzer.
**
** Runs LLVMFuzzerTestOneInput over every file of the folders (or files)
** named on the command line, so that ctest replays each target's corpus and
** its regressions on every test run, under ASan+UBSan in a sanitizer build.
** A crash is the failure; a folder that holds no file is one too (a corpus
** that silently vanished would make the test pass while testing nothing).
*/
#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerInitialize(int *argc, char ***argv);

static int runFile(const char *path){
  FILE *f = fopen(path, "rb");
  uint8_t *buf = 0;
  size_t n = 0, cap = 0;
  if( f==0 ){ perror(path); return -1; }
  for(;;){
    size_t got;
    if( n==cap ){
      uint8_t *nb = realloc(buf, cap ? cap*2 : 4096);
      if( nb==0 ){ fclose(f); free(buf); fprintf(stderr, "%s: no memory\n", path); return -1; }
      buf = nb; cap = cap ? cap*2 : 4096;
    }
    got = fread(buf+n, 1, cap-n, f);
    if( got==0 ) break;
    n += got;
  }
  if( ferror(f) ){ perror(path); fclose(f); free(buf); return -1; }
  fclose(f);
  /* An exact-size copy, so that ASan catches a read one past the input. */
  {
    uint8_t *exact = malloc(n ? n : 1);
    if( exact==0 ){ free(buf); return -1; }
    if( n ) memcpy(exact, buf, n);
    free(buf);
    LLVMFuzzerTestOneInput(exact, n);
    free(exact);
  }
  return 0;
}

static int cmpStr(const void *a, const void *b){
  return strcmp(*(char *const*)a, *(char *const*)b);
}

/* Runs every regular file of `dir` in name order; returns how many, or -1. */
static long runDir(const char *dir){
  DIR *d = opendir(dir);
  struct dirent *e;
  char **names = 0;
  size_t n = 0, cap = 0, i;
  long ran = 0;
  if( d==0 ){ perror(dir); return -1; }
  while( (e = readdir(d))!=0 ){
    if( e->d_name[0]=='.' ) continue;
    if( n==cap ){
      char **nn = realloc(names, (cap ? cap*2 : 64)*sizeof(char*));
      if( nn==0 ){ closedir(d); return -1; }
      names = nn; cap = cap ? cap*2 : 64;
    }
    names[n] = malloc(strlen(dir) + strlen(e->d_name) + 2);
    if( names[n]==0 ){ closedir(d); return -1; }
    sprintf(names[n], "%s/%s", dir, e->d_name);
    n++;
  }
  closedir(d);
  qsort(names, n, sizeof(char*), cmpStr);
  for(i=0; i<n; i++){
    struct stat sb;
    if( stat(names[i], &sb)==0 && S_ISREG(sb.st_mode) ){
      if( runFile(names[i]) ) ran = -1;
      else if( ran>=0 ) ran++;
    }
    free(names[i]);
  }
  free(names);
  return ran;
}

int main(int argc, char **argv){
  int i, bad = 0;
  long total = 0;
  LLVMFuzzerInitialize(&argc, &argv);
  for(i=1; i<argc; i++){
    struct stat sb;
    long ran;
    if( stat(argv[i], &sb) ){
      /* A target may have no regressions yet: a missing folder is fine. */
      continue;
    }
    ran = S_ISDIR(sb.st_mode) ? runDir(argv[i]) : (runFile(argv[i]) ? -1 : 1);
    if( ran<0 ){ bad = 1; continue; }
    total += ran;
  }
  if( total==0 ){
    fprintf(stderr, "%s: no input files replayed\n", argv[0]);
    return 1;
  }
  printf("%s: %ld inputs replayed\n", argv[0], total);
  return bad;
}
