/* scr_preload_caller.c - walks the stack with libunwind for CALLER= rules; the
 * symbol lookup is the slow part, so each return address is looked up once. */
#include "config.h"
#define UNW_LOCAL_ONLY
#include <dlfcn.h>
#include <errno.h>
#include <fnmatch.h>
#include <libunwind.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include "scr_preload_caller.h"
#include "scr_preload_real.h"

/* deeper stacks than this are not searched further */
#define CALLER_MAX_FRAMES 256
/* direct-mapped cache of return addresses: 2^CALLER_CACHE_BITS entries */
#define CALLER_CACHE_BITS 10
/* rules beyond this index are not cached (a mask holds one bit per rule) */
#define CALLER_CACHE_RULES 64

/* for one return address under one rule set: which rules' CALLER= globs the
 * function holding it matches. An address belongs to one function for the
 * life of the process, unless its library is unloaded and another loaded in
 * its place; a stale entry then answers for the old function. */
typedef struct {
  uintptr_t ip;
  const scr_preload_ruleset* rules;
  uint64_t mask;
} caller_entry;

static pthread_mutex_t caller_lock = PTHREAD_MUTEX_INITIALIZER;
/* allocated at the first CALLER= check: most processes never make one, and
 * 24 KiB of .bss would push the wrappers' hot variables apart */
static caller_entry* caller_cache = NULL;

static size_t caller_slot(uintptr_t ip)
{
  return (size_t) (((uint64_t) ip * 0x9E3779B97F4A7C15ull) >> (64 - CALLER_CACHE_BITS));
}

static int caller_cached(uintptr_t ip, const scr_preload_ruleset* rules, uint64_t* mask)
{
  pthread_mutex_lock(&caller_lock);
  if (!caller_cache) caller_cache = calloc((size_t) 1 << CALLER_CACHE_BITS, sizeof(*caller_cache));
  const caller_entry* e = caller_cache ? &caller_cache[caller_slot(ip)] : NULL;
  int hit = e && e->ip == ip && e->rules == rules;
  if (hit) *mask = e->mask;
  pthread_mutex_unlock(&caller_lock);
  return hit;
}

static void caller_remember(uintptr_t ip, const scr_preload_ruleset* rules, uint64_t mask)
{
  pthread_mutex_lock(&caller_lock);
  if (caller_cache) {
    caller_entry* e = &caller_cache[caller_slot(ip)];
    e->ip = ip;
    e->rules = rules;
    e->mask = mask;
  }
  pthread_mutex_unlock(&caller_lock);
}

/* 1 when ip lies in this library: its wrappers ("open") must not satisfy
 * CALLER=open* on behalf of the application's function */
static int caller_is_ours(uintptr_t ip)
{
  static void* base = NULL;
  Dl_info info;
  if (!base && dladdr((void*) &scr_preload_caller_on_stack, &info)) base = info.dli_fbase;
  return dladdr((void*) ip, &info) && info.dli_fbase == base;
}

/* the rules (below CALLER_CACHE_RULES, plus `rule` itself) whose glob the
 * function at the cursor matches */
static uint64_t caller_frame_mask(unw_cursor_t* cursor, uintptr_t ip, const scr_preload_ruleset* rules,
                                  int rule, int* matches_rule)
{
  *matches_rule = 0;
  char name[512];
  unw_word_t offset;
  int rc = unw_get_proc_name(cursor, name, sizeof(name), &offset);
  /* -UNW_ENOMEM: the name was cut to fit, still worth matching */
  if ((rc != 0 && rc != -UNW_ENOMEM) || caller_is_ours(ip)) return 0;
  uint64_t mask = 0;
  int count = scr_preload_rules_count(rules);
  for (int i = 0; i < count; i++) {
    if (i >= CALLER_CACHE_RULES && i != rule) continue;
    const scr_preload_rule* r = scr_preload_rules_at(rules, i);
    if (!r->caller || fnmatch(r->caller, name, 0) != 0) continue;
    if (i < CALLER_CACHE_RULES) mask |= 1ull << i;
    if (i == rule) *matches_rule = 1;
  }
  return mask;
}

int scr_preload_caller_on_stack(const scr_preload_ruleset* rules, int rule)
{
  const scr_preload_rule* r = scr_preload_rules_at(rules, rule);
  if (!r || !r->caller) return 1;
  int saved_errno = errno;
  /* libunwind reads /proc/self/maps and the ELF files through open */
  scr_preload_real_enter();
  int found = 0;
  unw_context_t context;
  unw_cursor_t cursor;
  if (unw_getcontext(&context) == 0 && unw_init_local(&cursor, &context) == 0) {
    for (int depth = 0; !found && depth < CALLER_MAX_FRAMES && unw_step(&cursor) > 0; depth++) {
      unw_word_t ip_word;
      if (unw_get_reg(&cursor, UNW_REG_IP, &ip_word) != 0) break;
      uintptr_t ip = (uintptr_t) ip_word;
      uint64_t mask = 0;
      if (rule < CALLER_CACHE_RULES && caller_cached(ip, rules, &mask)) {
        found = (int) ((mask >> rule) & 1);
        continue;
      }
      mask = caller_frame_mask(&cursor, ip, rules, rule, &found);
      caller_remember(ip, rules, mask);
    }
  }
  scr_preload_real_leave();
  errno = saved_errno;
  return found;
}

void scr_preload_caller_atfork_prepare(void)
{
  pthread_mutex_lock(&caller_lock);
}

void scr_preload_caller_atfork_parent(void)
{
  pthread_mutex_unlock(&caller_lock);
}

void scr_preload_caller_atfork_child(void)
{
  pthread_mutex_init(&caller_lock, NULL);
}
