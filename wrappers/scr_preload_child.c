/* scr_preload_child.c - a rank's children (system, popen, posix_spawn, fork, and theirs)
 * load its rules and, at their first matching call, the engine's read-only child view. */
#include "config.h"
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "scr_error.h"
#include "scr_io.h"
#include "scr_log.h"
#include "scr_preload_child.h"
#include "scr_preload_engine.h"
#include "scr_preload_real.h"
#include "scr_preload_state.h"

/* Why an environment variable, and a view made from files on disk: a
 * child is not always started through a call the layer sees (glibc 2.36's
 * system and popen clone and exec through internal names), and an exec'd
 * one shares no memory with its parent; only the environment and the file
 * system reach every kind of child. The rank saves its filemap whenever a
 * routed file is created, renamed or deleted and whenever a dataset
 * completes (for its own crash recovery), so the filemap is the child's
 * source. A child made by fork without exec has a copy of the rank's
 * engine, but another thread of the rank may have been changing it at the
 * fork: it too starts the view from disk. */

int scr_preload_child_chosen = 0;
static struct scr_preload_parent child_parent;
/* the view is to be loaded at the first hook call */
int scr_preload_child_pending = 0;
/* the table the view loaded, while it is the engine in force */
static const struct scr_preload_engine* child_table = NULL;
static pthread_mutex_t child_lock = PTHREAD_MUTEX_INITIALIZER;

/* ---- the variable: "1:PID:RANK:RESTORED:PREFIX:CNTL:CACHE:USERFILE", each
 * path with '%' and ':' written as %25 and %3A (a path may hold either) */

static int child_put_path(char* out, size_t size, size_t* used, const char* path)
{
  for (const char* p = path; *p; p++) {
    const char* piece = *p == '%' ? "%25" : *p == ':' ? "%3A" : NULL;
    int n = piece ? snprintf(out + *used, size - *used, "%s", piece) : snprintf(out + *used, size - *used, "%c", *p);
    if (n < 0 || (size_t) n >= size - *used) return 0;
    *used += (size_t) n;
  }
  return 1;
}

/* the field at *p up to the next ':' (or the end) into out, decoded */
static int child_get_path(const char** p, char* out, size_t size)
{
  size_t n = 0;
  const char* s = *p;
  while (*s && *s != ':') {
    char c = *s++;
    if (c == '%') {
      if (strncmp(s, "25", 2) == 0) c = '%';
      else if (strncmp(s, "3A", 2) == 0) c = ':';
      else return 0;
      s += 2;
    }
    if (n + 1 >= size) return 0;
    out[n++] = c;
  }
  out[n] = '\0';
  *p = *s == ':' ? s + 1 : s;
  return 1;
}

static int child_get_number(const char** p, long long* value)
{
  char* end = NULL;
  errno = 0;
  *value = strtoll(*p, &end, 10);
  if (errno || end == *p || *end != ':') return 0;
  *p = end + 1;
  return 1;
}

/* value decoded into parent: 1, or 0 when it is not the layer's (another
 * version, or damaged). No allocation: a fork handler calls this. */
static int child_parse(const char* value, struct scr_preload_parent* parent)
{
  long long version = 0, pid = 0, rank = 0, restored = 0;
  const char* p = value;
  if (!child_get_number(&p, &version) || version != 1 || !child_get_number(&p, &pid) ||
      !child_get_number(&p, &rank) || !child_get_number(&p, &restored) || pid <= 0 || rank < 0 ||
      rank > 0x7fffffff || restored < -1 || restored > 0x7fffffff)
    return 0;
  if (!child_get_path(&p, parent->prefix, sizeof(parent->prefix)) ||
      !child_get_path(&p, parent->cntl_dir, sizeof(parent->cntl_dir)) ||
      !child_get_path(&p, parent->cache_dir, sizeof(parent->cache_dir)) ||
      !child_get_path(&p, parent->user_file, sizeof(parent->user_file)) || *p != '\0')
    return 0;
  if (parent->prefix[0] != '/' || parent->cntl_dir[0] != '/' || parent->cache_dir[0] != '/') return 0;
  parent->pid = (pid_t) pid;
  parent->rank = (int) rank;
  parent->restored = (int) restored;
  return 1;
}

/* the rank's copy of its configuration file, which its children read */
static char child_conf_copy[PATH_MAX] = "";

/* The children read the rank's user configuration file from a copy in the
 * control directory: node-local storage (a shell script that runs a
 * thousand commands does not read the prefix directory's .scrconf on the
 * parallel file system a thousand times), and the rules the rank loaded,
 * whatever becomes of the file later. "" for none; the file itself when the
 * copy cannot be made. */
static const char* child_conf(int rank, const char* cntl_dir)
{
  const char* file = scr_preload_state_user_file();
  if (!file[0]) return file;
  int n = snprintf(child_conf_copy, sizeof(child_conf_copy), "%s/preload.scrconf.%d", cntl_dir, rank);
  if (n > 0 && (size_t) n < sizeof(child_conf_copy) &&
      scr_io_copy_file(file, child_conf_copy, 0700, NULL, NULL) == SCR_SUCCESS)
    return child_conf_copy;
  child_conf_copy[0] = '\0';
  return file;
}

void scr_preload_child_export(int rank, int restored, const char* prefix, const char* cntl_dir,
                              const char* cache_dir)
{
  if (!prefix) {
    unsetenv(SCR_PRELOAD_PARENT_VARIABLE);
    if (child_conf_copy[0]) unlink(child_conf_copy);
    child_conf_copy[0] = '\0';
    return;
  }
  scr_preload_exec_prepare();
  size_t size = 4 * PATH_MAX + 64, used = 0;
  char* value = malloc(size);
  int n = value ? snprintf(value, size, "1:%ld:%d:%d:", (long) getpid(), rank, restored) : -1;
  int ok = n > 0 && (size_t) n < size;
  if (ok) used = (size_t) n;
  const char* paths[4] = { prefix, cntl_dir, cache_dir, child_conf(rank, cntl_dir) };
  for (int i = 0; ok && i < 4; i++) {
    ok = child_put_path(value, size, &used, paths[i]);
    if (ok && i < 3) {
      ok = used + 1 < size;
      if (ok) value[used++] = ':';
    }
  }
  if (ok) value[used] = '\0';
  /* a child that cannot be told sees the file system, as before */
  if (!ok || setenv(SCR_PRELOAD_PARENT_VARIABLE, value, 1) != 0)
    scr_warn("cannot pass the checkpoint files to the program's child processes: they see the file system only");
  free(value);
}

const struct scr_preload_parent* scr_preload_child_parent(void)
{
  return scr_preload_child_view() ? &child_parent : NULL;
}

/* ---- choosing and loading the view */

void scr_preload_child_start(void)
{
  const char* value = getenv(SCR_PRELOAD_PARENT_VARIABLE);
  if (!value || !child_parse(value, &child_parent) || child_parent.pid == getpid()) return;
  /* the rules first: without any, the process is inert as before */
  char errbuf[1024] = "";
  __atomic_store_n(&scr_preload_child_pending, 1, __ATOMIC_RELAXED);
  __atomic_store_n(&scr_preload_child_chosen, 1, __ATOMIC_RELAXED);
  if (scr_preload_state_load_child(child_parent.user_file, child_parent.prefix, errbuf, sizeof(errbuf)) !=
          SCR_SUCCESS ||
      !scr_preload_state_rules() || scr_preload_state_dryrun()) {
    /* the rank read the same files without complaint: they changed since */
    if (errbuf[0]) scr_dbg(1, "preload: rank %d's checkpoint files are not shown here: %s", child_parent.rank, errbuf);
    scr_preload_state_install(NULL);
    __atomic_store_n(&scr_preload_child_pending, 0, __ATOMIC_RELAXED);
    __atomic_store_n(&scr_preload_child_chosen, 0, __ATOMIC_RELAXED);
    return;
  }
  if (scr_log_rank < 0) scr_log_rank = child_parent.rank;
  child_parent.debug = scr_log_debug_level;
  scr_preload_exec_prepare();
  /* a rank's restored checkpoint directory may be missing on the file
   * system: shown, as in the rank */
  scr_preload_hooks_virtual_directories(1);
}

void scr_preload_child_forked(void)
{
  pthread_mutex_init(&child_lock, NULL);
  int shown = __atomic_load_n(&scr_preload_engine_active, __ATOMIC_RELAXED) != NULL || scr_preload_child_view();
  __atomic_store_n(&scr_preload_engine_active, NULL, __ATOMIC_RELAXED);
  child_table = NULL;
  const char* value = shown && scr_preload_state_rules() ? getenv(SCR_PRELOAD_PARENT_VARIABLE) : NULL;
  if (value && child_parse(value, &child_parent) && child_parent.pid != getpid()) {
    /* the parent's rules, owned here now; the descriptors it tracked were
     * dropped (scr_preload_fd_atfork_child), and so is its mirror: the
     * view has none */
    scr_preload_state_adopt();
    scr_preload_hooks_view_mirror(NULL, NULL);
    child_parent.debug = scr_log_debug_level;
    __atomic_store_n(&scr_preload_child_pending, 1, __ATOMIC_RELAXED);
    __atomic_store_n(&scr_preload_child_chosen, 1, __ATOMIC_RELAXED);
    return;
  }
  /* not freed: the parent's copy is what other threads were reading */
  __atomic_store_n(&scr_preload_child_pending, 0, __ATOMIC_RELAXED);
  __atomic_store_n(&scr_preload_child_chosen, 0, __ATOMIC_RELAXED);
  scr_preload_state_install(NULL);
}

const struct scr_preload_engine* scr_preload_child_engine(void)
{
  pthread_mutex_lock(&child_lock);
  const struct scr_preload_engine* engine = __atomic_load_n(&scr_preload_engine_active, __ATOMIC_ACQUIRE);
  if (!engine && __atomic_load_n(&scr_preload_child_pending, __ATOMIC_RELAXED)) {
    /* pending until the table is in force: another thread's hook waits
     * for the lock meanwhile, rather than passing */
    int saved_errno = errno;
    const struct scr_preload_engine* table =
        scr_preload_engine_module(SCR_PRELOAD_CHILD_MODULE, SCR_PRELOAD_CHILD_SYMBOL);
    if (table && table->init() == SCR_SUCCESS) {
      engine = child_table = table;
      __atomic_store_n(&scr_preload_engine_active, table, __ATOMIC_RELEASE);
      __atomic_store_n(&scr_preload_child_pending, 0, __ATOMIC_RELAXED);
    } else {
      __atomic_store_n(&scr_preload_child_pending, 0, __ATOMIC_RELAXED);
      scr_preload_hooks_virtual_directories(0);
      __atomic_store_n(&scr_preload_child_chosen, 0, __ATOMIC_RELAXED);
      scr_preload_state_install(NULL);
    }
    errno = saved_errno;
  }
  pthread_mutex_unlock(&child_lock);
  return engine;
}

void scr_preload_child_stop(void)
{
  if (!scr_preload_child_view()) return;
  pthread_mutex_lock(&child_lock);
  __atomic_store_n(&scr_preload_child_pending, 0, __ATOMIC_RELAXED);
  __atomic_store_n(&scr_preload_child_chosen, 0, __ATOMIC_RELAXED);
  const struct scr_preload_engine* table = child_table;
  child_table = NULL;
  if (table && __atomic_load_n(&scr_preload_engine_active, __ATOMIC_ACQUIRE) == table) {
    __atomic_store_n(&scr_preload_engine_active, NULL, __ATOMIC_RELEASE);
    table->finalize();
  }
  scr_preload_hooks_virtual_directories(0);
  scr_preload_state_install(NULL);
  pthread_mutex_unlock(&child_lock);
}

