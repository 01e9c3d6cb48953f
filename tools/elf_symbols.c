/*
** elf_symbols.c -- xray_instr_map + ELF symbol table -> function names.
**
** Every offset and size read from the file is checked against the file's
** size before use: a binary is input like any other.  The id numbering
** follows llvm/lib/XRay/InstrumentationMap.cpp (which copies compiler-rt):
** version-2 entries hold addresses relative to the entry's own fields, and
** version-1 entries of a position-independent binary are 0 in the file,
** their value being an R_*_RELATIVE relocation's addend.
*/
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "elf_symbols.h"

/* libstdc++'s demangler (the binary links libstdc++ for it). */
char *__cxa_demangle(const char *mangled, char *buf, size_t *len, int *status);

#define SLED_SIZE 32

typedef struct sym { uint64_t addr, size; const char *name; int global; } sym;

struct elf_symbols {
  uint64_t *fn_addr;      /* fn_addr[id-1] */
  uint8_t *fn_sleds;      /* fn_sleds[id-1]: bit k set = a sled of kind k */
  char **fn_name;         /* fn_name[id-1], malloc'd, or NULL until asked */
  int32_t n_fn;
  sym *syms; size_t n_syms;
  char *build_id;
  void *map; size_t size;
  char scratch[32];
};

static int bad(char *err, size_t errlen, const char *msg){
  snprintf(err, errlen, "%s", msg);
  return -1;
}

static int in_file(const elf_symbols *s, uint64_t off, uint64_t len){
  return off <= s->size && len <= s->size - off;
}

static int cmp_sym(const void *a, const void *b){
  const sym *x = a, *y = b;
  if( x->addr!=y->addr ) return x->addr<y->addr ? -1 : 1;
  if( x->global!=y->global ) return y->global - x->global;   /* global first */
  return 0;
}

typedef struct reloc { uint64_t where, addend; } reloc;

static int cmp_reloc(const void *a, const void *b){
  const reloc *x = a, *y = b;
  return x->where<y->where ? -1 : x->where>y->where;
}

/* The R_*_RELATIVE relocations of the file, sorted by address, so that
** version-1 entries of a PIE binary resolve in O(log n) each. */
static reloc *relative_relocs(const elf_symbols *s, const Elf64_Ehdr *eh,
                              const Elf64_Shdr *sh, size_t *n_out){
  unsigned rel_type = eh->e_machine==EM_AARCH64 ? R_AARCH64_RELATIVE : R_X86_64_RELATIVE;
  reloc *out = 0;
  size_t n = 0, cap = 0;
  int i;
  for(i=0; i<eh->e_shnum; i++){
    uint64_t j, m;
    if( sh[i].sh_type!=SHT_RELA || !in_file(s, sh[i].sh_offset, sh[i].sh_size) ) continue;
    m = sh[i].sh_size / sizeof(Elf64_Rela);
    for(j=0; j<m; j++){
      Elf64_Rela r;
      memcpy(&r, (const char*)s->map + sh[i].sh_offset + j*sizeof(r), sizeof(r));
      if( ELF64_R_TYPE(r.r_info)!=rel_type ) continue;
      if( n==cap ){
        size_t ncap = cap ? cap*2 : 256;
        reloc *nr = realloc(out, ncap*sizeof(*nr));
        if( !nr ){ free(out); *n_out = 0; return 0; }
        out = nr; cap = ncap;
      }
      out[n].where = r.r_offset;
      out[n].addend = (uint64_t)r.r_addend;
      n++;
    }
  }
  if( n ) qsort(out, n, sizeof(*out), cmp_reloc);
  *n_out = n;
  return out;
}

static uint64_t relocated(const reloc *rel, size_t n, uint64_t where){
  size_t lo = 0, hi = n;
  while( lo<hi ){
    size_t mid = lo + (hi-lo)/2;
    if( rel[mid].where < where ) lo = mid+1; else hi = mid;
  }
  return lo<n && rel[lo].where==where ? rel[lo].addend : 0;
}

static int load_symtab(elf_symbols *s, const Elf64_Ehdr *eh, const Elf64_Shdr *sh,
                       int want, char *err, size_t errlen){
  int i;
  for(i=0; i<eh->e_shnum; i++){
    const Elf64_Shdr *str;
    uint64_t j, n;
    sym *grown;
    if( sh[i].sh_type!=(Elf64_Word)want ) continue;
    if( !in_file(s, sh[i].sh_offset, sh[i].sh_size) || sh[i].sh_link>=eh->e_shnum ){
      return bad(err, errlen, "symbol table outside the file");
    }
    str = &sh[sh[i].sh_link];
    if( !in_file(s, str->sh_offset, str->sh_size) || str->sh_size==0 ){
      return bad(err, errlen, "symbol string table outside the file");
    }
    n = sh[i].sh_size / sizeof(Elf64_Sym);
    grown = realloc(s->syms, (s->n_syms + n + 1)*sizeof(sym));
    if( !grown ) return bad(err, errlen, "out of memory");
    s->syms = grown;
    for(j=0; j<n; j++){
      Elf64_Sym y;
      const char *strtab = (const char*)s->map + str->sh_offset;
      memcpy(&y, (const char*)s->map + sh[i].sh_offset + j*sizeof(y), sizeof(y));
      if( ELF64_ST_TYPE(y.st_info)!=STT_FUNC || y.st_value==0 ) continue;
      if( y.st_name>=str->sh_size || !memchr(strtab + y.st_name, 0, str->sh_size - y.st_name) ){
        continue;   /* a name running off its table: ignore the symbol */
      }
      if( strtab[y.st_name]==0 ) continue;
      s->syms[s->n_syms].addr = y.st_value;
      s->syms[s->n_syms].size = y.st_size;
      s->syms[s->n_syms].name = strtab + y.st_name;
      s->syms[s->n_syms].global = ELF64_ST_BIND(y.st_info)!=STB_LOCAL;
      s->n_syms++;
    }
  }
  return 0;
}

static void load_build_id(elf_symbols *s, const Elf64_Ehdr *eh, const Elf64_Shdr *sh){
  int i;
  for(i=0; i<eh->e_shnum && !s->build_id; i++){
    uint64_t off, end;
    if( sh[i].sh_type!=SHT_NOTE || !in_file(s, sh[i].sh_offset, sh[i].sh_size) ) continue;
    off = sh[i].sh_offset;
    end = off + sh[i].sh_size;
    while( end - off >= sizeof(Elf64_Nhdr) ){
      Elf64_Nhdr nh;
      uint64_t name_off, desc_off, next;
      memcpy(&nh, (const char*)s->map + off, sizeof(nh));
      name_off = off + sizeof(nh);
      desc_off = name_off + ((nh.n_namesz + 3u) & ~3u);
      next = desc_off + ((nh.n_descsz + 3u) & ~3u);
      if( next > end ) break;
      if( nh.n_type==NT_GNU_BUILD_ID && nh.n_namesz==4
       && memcmp((const char*)s->map + name_off, "GNU", 4)==0 && nh.n_descsz>0 ){
        const unsigned char *d = (const unsigned char*)s->map + desc_off;
        uint32_t k;
        s->build_id = malloc(nh.n_descsz*2 + 1);
        if( !s->build_id ) return;
        for(k=0; k<nh.n_descsz; k++) sprintf(s->build_id + 2*k, "%02x", d[k]);
        return;
      }
      off = next;
    }
  }
}

int elf_symbols_load(const char *path, elf_symbols **out, char *err, size_t errlen){
  elf_symbols *s;
  struct stat sb;
  const Elf64_Ehdr *eh;
  const Elf64_Shdr *sh;
  const Elf64_Shdr *map_sec = 0;
  const char *shstr;
  int fd, i;
  uint64_t j, n_sleds, cur = 0;
  size_t cap = 0, n_rel = 0;
  reloc *rel = 0;

  *out = 0;
  s = calloc(1, sizeof(*s));
  if( !s ) return bad(err, errlen, "out of memory");
  s->map = MAP_FAILED;
  fd = open(path, O_RDONLY | O_CLOEXEC);
  if( fd<0 || fstat(fd, &sb)!=0 ){
    snprintf(err, errlen, "%s", strerror(errno));
    if( fd>=0 ) close(fd);
    goto fail;
  }
  s->size = (size_t)sb.st_size;
  if( S_ISREG(sb.st_mode) && s->size >= sizeof(Elf64_Ehdr) ){
    s->map = mmap(0, s->size, PROT_READ, MAP_PRIVATE, fd, 0);
  }
  close(fd);
  if( s->map==MAP_FAILED ){
    bad(err, errlen, "not an ELF file (too small or unreadable)");
    goto fail;
  }
  eh = s->map;
  if( memcmp(eh->e_ident, ELFMAG, SELFMAG)!=0 ){
    bad(err, errlen, "not an ELF file");
    goto fail;
  }
  if( eh->e_ident[EI_CLASS]!=ELFCLASS64 || eh->e_ident[EI_DATA]!=ELFDATA2LSB ){
    bad(err, errlen, "only 64-bit little-endian ELF binaries are supported");
    goto fail;
  }
  if( eh->e_shentsize!=sizeof(Elf64_Shdr)
   || !in_file(s, eh->e_shoff, (uint64_t)eh->e_shnum*sizeof(Elf64_Shdr))
   || eh->e_shstrndx>=eh->e_shnum ){
    bad(err, errlen, "ELF section headers outside the file");
    goto fail;
  }
  sh = (const Elf64_Shdr*)((const char*)s->map + eh->e_shoff);
  if( !in_file(s, sh[eh->e_shstrndx].sh_offset, sh[eh->e_shstrndx].sh_size) ){
    bad(err, errlen, "ELF section names outside the file");
    goto fail;
  }
  shstr = (const char*)s->map + sh[eh->e_shstrndx].sh_offset;
  for(i=0; i<eh->e_shnum; i++){
    uint64_t nm = sh[i].sh_name;
    if( nm < sh[eh->e_shstrndx].sh_size
     && sh[eh->e_shstrndx].sh_size - nm > strlen("xray_instr_map")
     && strcmp(shstr + nm, "xray_instr_map")==0 ){
      map_sec = &sh[i];
    }
  }
  if( !map_sec ){
    bad(err, errlen, "no xray_instr_map section: not built with -fxray-instrument?");
    goto fail;
  }
  if( map_sec->sh_type==SHT_NOBITS || !in_file(s, map_sec->sh_offset, map_sec->sh_size)
   || map_sec->sh_size % SLED_SIZE ){
    snprintf(err, errlen, "xray_instr_map: %llu bytes is not a whole number of %d-byte entries",
             (unsigned long long)map_sec->sh_size, SLED_SIZE);
    goto fail;
  }
  n_sleds = map_sec->sh_size / SLED_SIZE;
  for(j=0; j<n_sleds; j++){
    const unsigned char *e = (const unsigned char*)s->map + map_sec->sh_offset + j*SLED_SIZE;
    uint64_t fn;
    uint8_t version = e[18];
    memcpy(&fn, e+8, 8);
    if( version>=2 ){
      fn += map_sec->sh_addr + j*SLED_SIZE + 8;
    }else if( fn==0 ){
      if( !rel ) rel = relative_relocs(s, eh, sh, &n_rel);
      fn = relocated(rel, n_rel, map_sec->sh_addr + j*SLED_SIZE + 8);
    }
    if( j==0 || fn!=cur ){
      if( (size_t)s->n_fn==cap ){
        size_t ncap = cap ? cap*2 : 256;
        uint64_t *na = realloc(s->fn_addr, ncap*sizeof(*na));
        uint8_t *nk = na ? realloc(s->fn_sleds, ncap) : 0;
        if( na ) s->fn_addr = na;
        if( !nk ){ bad(err, errlen, "out of memory"); goto fail; }
        s->fn_sleds = nk;
        cap = ncap;
      }
      s->fn_sleds[s->n_fn] = 0;
      s->fn_addr[s->n_fn++] = fn;
      cur = fn;
    }
    if( e[16]<8 ) s->fn_sleds[s->n_fn-1] |= (uint8_t)(1u << e[16]);
  }
  s->fn_name = calloc((size_t)s->n_fn + 1, sizeof(char*));
  if( !s->fn_name ){ bad(err, errlen, "out of memory"); goto fail; }
  if( load_symtab(s, eh, sh, SHT_SYMTAB, err, errlen) ) goto fail;
  if( s->n_syms==0 && load_symtab(s, eh, sh, SHT_DYNSYM, err, errlen) ) goto fail;
  if( s->n_syms ) qsort(s->syms, s->n_syms, sizeof(sym), cmp_sym);  /* syms may be NULL */
  load_build_id(s, eh, sh);
  free(rel);
  *out = s;
  return 0;
fail:
  free(rel);
  elf_symbols_free(s);
  return -1;
}

int32_t elf_symbols_count(const elf_symbols *s){ return s->n_fn; }

int elf_symbols_has(const elf_symbols *s, int32_t id){
  return id>=1 && id<=s->n_fn;
}

const char *elf_symbols_build_id(const elf_symbols *s){ return s->build_id; }

unsigned elf_symbols_sleds(const elf_symbols *s, int32_t id){
  return elf_symbols_has(s, id) ? s->fn_sleds[id-1] : 0;
}

/* The symbol at addr: exact start preferred (global over local), else the
** function whose [addr, addr+size) covers it. */
static const sym *find_sym(const elf_symbols *s, uint64_t addr){
  size_t lo = 0, hi = s->n_syms;
  while( lo<hi ){
    size_t mid = lo + (hi-lo)/2;
    if( s->syms[mid].addr < addr ) lo = mid+1; else hi = mid;
  }
  if( lo<s->n_syms && s->syms[lo].addr==addr ) return &s->syms[lo];
  while( lo-- > 0 ){
    const sym *y = &s->syms[lo];
    if( addr - y->addr < y->size ) return y;
    if( addr - y->addr > (1u<<24) ) break;   /* no function is that long */
  }
  return 0;
}

const char *elf_symbols_name(elf_symbols *s, int32_t id){
  const sym *y;
  char *name;
  if( !elf_symbols_has(s, id) ){
    snprintf(s->scratch, sizeof(s->scratch), "#%d", (int)id);
    return s->scratch;
  }
  if( s->fn_name[id-1] ) return s->fn_name[id-1];
  y = find_sym(s, s->fn_addr[id-1]);
  if( !y ){
    char buf[40];
    snprintf(buf, sizeof(buf), "@(%llx)", (unsigned long long)s->fn_addr[id-1]);
    name = strdup(buf);
  }else{
    int status = -1;
    name = 0;
    if( y->name[0]=='_' && y->name[1]=='Z' ) name = __cxa_demangle(y->name, 0, 0, &status);
    if( status!=0 ){
      free(name);
      name = strdup(y->name);
    }
  }
  if( !name ) return "";   /* out of memory: an empty symbol, still valid */
  s->fn_name[id-1] = name;
  return name;
}

void elf_symbols_free(elf_symbols *s){
  int32_t i;
  if( !s ) return;
  if( s->fn_name ){
    for(i=0; i<s->n_fn; i++) free(s->fn_name[i]);
  }
  free(s->fn_name);
  free(s->fn_addr);
  free(s->fn_sleds);
  free(s->syms);
  free(s->build_id);
  if( s->map!=MAP_FAILED && s->map ) munmap(s->map, s->size);
  free(s);
}
