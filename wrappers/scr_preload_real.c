/* scr_preload_real.c - fills the table of real functions with dlvsym/dlsym on
 * RTLD_NEXT, safely when dlsym's own allocations lead back into a wrapper. */
#include "config.h"
#include <dlfcn.h>
#include <errno.h>
#include <stddef.h>
#include "scr_preload_real.h"

scr_preload_real_table scr_preload_real;

__thread int scr_preload_real_internal_depth __attribute__((tls_model("initial-exec")));
__thread int* scr_preload_real_errno_address __attribute__((tls_model("initial-exec")));

/* set while this thread is inside dlsym: a wrapper reached from there (an
 * allocator that opens a file during calloc) must not call dlsym again, or
 * startup would recurse without end. Initial-exec TLS needs no allocation. */
static __thread int real_resolving __attribute__((tls_model("initial-exec")));

typedef struct {
  const char* name;
  const char* symbol;
  const char* version;
  size_t offset;          /* of the pointer in scr_preload_real */
} real_entry;

static const real_entry real_entries[SCR_PRELOAD_REAL_COUNT] = {
#define SCR_PRELOAD_REAL_ENTRY(name, symbol, version, type, parameters) \
  { #name, symbol, version, offsetof(scr_preload_real_table, name) },
  SCR_PRELOAD_REAL_FUNCTIONS(SCR_PRELOAD_REAL_ENTRY)
#undef SCR_PRELOAD_REAL_ENTRY
};

/* function pointers are stored as void*, which POSIX guarantees for dlsym */
static void** real_slot(int index)
{
  return (void**) ((char*) &scr_preload_real + real_entries[index].offset);
}

/* 1 when both addresses lie in the same loaded object */
static int real_same_object(void* a, void* b)
{
  Dl_info ia, ib;
  return dladdr(a, &ia) && dladdr(b, &ib) && ia.dli_fbase == ib.dli_fbase;
}

int scr_preload_real_resolve(int index)
{
  if (index < 0 || index >= SCR_PRELOAD_REAL_COUNT) return 0;
  void** slot = real_slot(index);
  if (__atomic_load_n(slot, __ATOMIC_RELAXED)) return 1;
  if (real_resolving) return 0;

  /* dlsym and dlvsym report failure through dlerror, which allocates and
   * would show our miss to an application that calls dlerror: clear it */
  int saved_errno = errno;
  real_resolving = 1;
  scr_preload_real_enter();
  const real_entry* entry = &real_entries[index];
  void* address = dlsym(RTLD_NEXT, entry->symbol);
  if (!address) dlerror();
  if (entry->version) {
    /* the versioned symbol, unless dlsym found another interposer (a
     * sanitizer, a tracer) between us and libc: dlvsym would skip it */
    void* versioned = dlvsym(RTLD_NEXT, entry->symbol, entry->version);
    if (!versioned) dlerror();
    if (versioned && (!address || real_same_object(address, versioned))) address = versioned;
  }
  scr_preload_real_leave();
  real_resolving = 0;
  errno = saved_errno;

  if (!address) return 0;
  __atomic_store_n(slot, address, __ATOMIC_RELAXED);
  return 1;
}

void scr_preload_real_own_thread(void)
{
  scr_preload_real_enter();
}

void scr_preload_real_resolve_all(void)
{
  for (int i = 0; i < SCR_PRELOAD_REAL_COUNT; i++) scr_preload_real_resolve(i);
}

const char* scr_preload_real_name(int index)
{
  return index >= 0 && index < SCR_PRELOAD_REAL_COUNT ? real_entries[index].name : NULL;
}

const char* scr_preload_real_symbol(int index)
{
  return index >= 0 && index < SCR_PRELOAD_REAL_COUNT ? real_entries[index].symbol : NULL;
}

const char* scr_preload_real_version(int index)
{
  return index >= 0 && index < SCR_PRELOAD_REAL_COUNT ? real_entries[index].version : NULL;
}

void* scr_preload_real_address(int index)
{
  if (index < 0 || index >= SCR_PRELOAD_REAL_COUNT) return NULL;
  return __atomic_load_n(real_slot(index), __ATOMIC_RELAXED);
}
