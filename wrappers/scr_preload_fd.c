/* scr_preload_fd.c - the descriptor table behind scr_preload_fd_mark: records of
 * tracked open files with descriptor counts, changed under one mutex. */
#include "config.h"
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stddef.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>
#include "scr_preload_fd.h"

/* a table covers at most this many descriptors: the hard limit is often
 * 2^20 or unlimited, and the reservation grows with it (44 bytes a descriptor,
 * only touched where descriptors are used) */
#define FD_CAPACITY_MAX (1 << 20)
#define FD_CAPACITY_MIN 1024

typedef struct {
  int refs;                  /* descriptors marked with this record; 0 when free or on a list */
  uint32_t next_free;        /* free list or scr_preload_fd_list link, record number + 1 */
  int ended_fd;              /* on a list: the descriptor that was its last */
  dev_t dev;                 /* the open file's identity, for scr_preload_fd_sweep */
  ino_t ino;
  scr_preload_fd_file file;
} fd_record;


static pthread_mutex_t fd_lock = PTHREAD_MUTEX_INITIALIZER;
/* the process the marks belong to: a vfork child shares this memory but not
 * the descriptor table, and must leave the marks alone (it runs no
 * pthread_atfork handler to drop them) */
static pid_t fd_owner = 0;
static fd_record* fd_records = NULL;
static uint32_t fd_free = 0;        /* head of the free list, record number + 1 */
static uint32_t fd_unused = 0;      /* records [fd_unused, capacity) were never used */
static int fd_files = 0;            /* records in use by descriptors */
/* the highest descriptor ever marked: close_range and closefrom look no
 * further, whatever range they were given */
static int fd_high = -1;
static scr_preload_fd_list fd_deferred = { 0, 0 };
int scr_preload_fd_deferred_count = 0;
static size_t fd_marks_bytes = 0, fd_records_bytes = 0;

static void* fd_reserve(size_t bytes)
{
  void* p = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  return p == MAP_FAILED ? NULL : p;
}

#if defined(__SANITIZE_ADDRESS__)
#include <sanitizer/lsan_interface.h>
/* The records hold the engine's files, and LeakSanitizer looks for pointers
 * in mapped memory only where told: a file whose descriptor a raw system
 * call closed (or that a program never closed) before MPI_Finalize was
 * reported as leaked at exit. Never unregistered: a forked child that drops
 * the table must not take the sanitizer's lock, and a region that is no
 * longer mapped is not scanned. */
static void fd_lsan_root(void* p, size_t bytes)
{
  __lsan_register_root_region(p, bytes);
}
#else
static void fd_lsan_root(void* p, size_t bytes)
{
  (void) p;
  (void) bytes;
}
#endif

#if defined(__SANITIZE_THREAD__)
/* ThreadSanitizer keeps a state per descriptor and (GCC 12) does not
 * intercept close_range: a routed file's number closed by close_range or
 * closefrom and taken by another thread's file (the publish finisher's
 * directories) was reported as a race on that state. Its hook for system
 * calls made without libc tells it of each close the table knows of. */
void __sanitizer_syscall_pre_impl_close(long fd);
static void fd_tsan_closing(int fd)
{
  __sanitizer_syscall_pre_impl_close(fd);
}
/* the sweep's look at a marked descriptor, which may be closed: the
 * runtime counts its fstat as a use of the number, and the publish
 * finisher's dup of that number the moment after was a race to it; a
 * system call it does not see is no use (struct stat is the kernel's on
 * the 64-bit targets a sanitizer build runs on) */
static int fd_probe(int fd, struct stat* st)
{
  return (int) syscall(SYS_fstat, fd, st);
}
#else
static void fd_tsan_closing(int fd)
{
  (void) fd;
}
static int fd_probe(int fd, struct stat* st)
{
  return fstat(fd, st);
}
#endif

/* mmap, not malloc: this runs while the rule set is installed, and a
 * forked child can drop the table with munmap, which is async-signal-safe */
static int fd_init_locked(void)
{
  if (scr_preload_hot.fd_marks) return 0;
  struct rlimit limit;
  rlim_t n = FD_CAPACITY_MIN;
  if (getrlimit(RLIMIT_NOFILE, &limit) == 0) {
    rlim_t hard = limit.rlim_max == RLIM_INFINITY ? FD_CAPACITY_MAX : limit.rlim_max;
    n = limit.rlim_cur == RLIM_INFINITY ? FD_CAPACITY_MAX : limit.rlim_cur;
    if (hard > n) n = hard;
    if (n > FD_CAPACITY_MAX) n = FD_CAPACITY_MAX;
    if (n < FD_CAPACITY_MIN) n = FD_CAPACITY_MIN;
  }
  size_t marks_bytes = (size_t) n * sizeof(uint32_t), records_bytes = (size_t) n * sizeof(fd_record);
  uint32_t* marks = fd_reserve(marks_bytes);
  fd_record* records = marks ? fd_reserve(records_bytes) : NULL;
  if (!records) {
    if (marks) munmap(marks, marks_bytes);
    return -1;
  }
  fd_lsan_root(records, records_bytes);
  fd_records = records;
  fd_records_bytes = records_bytes;
  fd_marks_bytes = marks_bytes;
  fd_free = 0;
  fd_unused = 0;
  fd_files = 0;
  fd_high = -1;
  scr_preload_hot.fd_marks = marks;
  scr_preload_hot.fd_capacity = (int) n;
  fd_owner = getpid();
  return 0;
}

/* 1 when the table may be changed by this process (one system call: only
 * ever made for descriptors that are marked) */
static int fd_owned(void)
{
  return getpid() == fd_owner;
}

/* the table's lock with every signal blocked: a handler that writes a
 * checkpoint file (codes that checkpoint on SIGTERM or a timer) would
 * otherwise wait forever for the lock its own thread holds; taken only for
 * tracked descriptors, never on the pass-through path */
static void fd_lock_take(sigset_t* saved)
{
  sigset_t all;
  sigfillset(&all);
  pthread_sigmask(SIG_BLOCK, &all, saved);
  pthread_mutex_lock(&fd_lock);
}

static void fd_lock_give(const sigset_t* saved)
{
  pthread_mutex_unlock(&fd_lock);
  pthread_sigmask(SIG_SETMASK, saved, NULL);
}

int scr_preload_fd_init(void)
{
  int saved_errno = errno;
  sigset_t saved;
  fd_lock_take(&saved);
  int rc = fd_init_locked();
  fd_lock_give(&saved);
  errno = saved_errno;
  return rc;
}

/* a free record's number + 1, counted as a file; 0 when every record is
 * taken (as many as descriptors, plus those on lists: only a flood of
 * deferred ones could exhaust them) */
static uint32_t fd_alloc_locked(void)
{
  uint32_t id;
  if (fd_free) {
    id = fd_free;
    fd_free = fd_records[id - 1].next_free;
  } else if (fd_unused < (uint32_t) scr_preload_hot.fd_capacity) {
    id = ++fd_unused;
  } else {
    return 0;
  }
  fd_files++;
  return id;
}

static void fd_free_locked(uint32_t id)
{
  fd_records[id - 1].next_free = fd_free;
  fd_free = id;
}

/* one descriptor less for record id (number + 1); 1 when it was the last,
 * the record then no longer a file but not freed yet */
static int fd_unref_locked(uint32_t id)
{
  if (--fd_records[id - 1].refs > 0) return 0;
  fd_files--;
  return 1;
}

/* the same, the record freed and copied into *last when it was the last */
static int fd_drop_locked(uint32_t id, scr_preload_fd_file* last)
{
  if (!fd_unref_locked(id)) return 0;
  if (last) *last = fd_records[id - 1].file;
  fd_free_locked(id);
  return 1;
}

static void fd_append_locked(scr_preload_fd_list* list, uint32_t id, int fd)
{
  fd_record* r = &fd_records[id - 1];
  r->ended_fd = fd;
  r->next_free = 0;
  if (list->tail) fd_records[list->tail - 1].next_free = id;
  else list->head = id;
  list->tail = id;
}

static int fd_take_locked(scr_preload_fd_list* list, int* fd, scr_preload_fd_file* file)
{
  uint32_t id = list->head;
  if (!id) return 0;
  fd_record* r = &fd_records[id - 1];
  list->head = r->next_free;
  if (!list->head) list->tail = 0;
  *fd = r->ended_fd;
  *file = r->file;
  fd_free_locked(id);
  return 1;
}

/* record id, no longer a file, whose end the engine must still hear of:
 * onto the deferred list; a record the engine never heard of is freed */
static void fd_defer_locked(uint32_t id, int fd)
{
  const scr_preload_fd_file* f = &fd_records[id - 1].file;
  if (f->kind != SCR_PRELOAD_FD_FILE || !f->hooked) {
    fd_free_locked(id);
    return;
  }
  fd_append_locked(&fd_deferred, id, fd);
  __atomic_store_n(&scr_preload_fd_deferred_count, scr_preload_fd_deferred_count + 1, __ATOMIC_RELAXED);
}

int scr_preload_fd_track(int fd, const scr_preload_fd_file* file)
{
  int saved_errno = errno;
  int rc = -1;
  /* what the descriptor is, so that a sweep can tell it no longer is: one
   * fstat per tracked open, none for the program's other files */
  struct stat st;
  if (fstat(fd, &st) != 0) st.st_dev = 0, st.st_ino = 0;
  sigset_t saved;
  fd_lock_take(&saved);
  if (fd_init_locked() == 0 && fd >= 0 && fd < scr_preload_hot.fd_capacity && fd_owned()) {
    /* a descriptor is never shared by two records: a mark still here means
     * the previous file's descriptor was closed behind our back (a raw
     * system call); that record can only lose it, and the engine hears of
     * its end later */
    uint32_t stale = scr_preload_hot.fd_marks[fd];
    if (stale && fd_unref_locked(stale)) fd_defer_locked(stale, fd);
    uint32_t id = fd_alloc_locked();
    __atomic_store_n(&scr_preload_hot.fd_marks[fd], id, __ATOMIC_RELAXED);
    if (id) {
      fd_record* r = &fd_records[id - 1];
      r->refs = 1;
      r->next_free = 0;
      r->dev = st.st_dev;
      r->ino = st.st_ino;
      r->file = *file;
      if (fd > fd_high) fd_high = fd;
      /* release: a reader that sees active also sees the table pointers */
      __atomic_store_n(&scr_preload_hot.fd_active, 1, __ATOMIC_RELEASE);
      rc = 0;
    }
  }
  fd_lock_give(&saved);
  errno = saved_errno;
  return rc;
}

int scr_preload_fd_release(int fd, scr_preload_fd_file* last)
{
  int rc = 0;
  sigset_t saved;
  fd_lock_take(&saved);
  if (scr_preload_hot.fd_marks && fd >= 0 && fd < scr_preload_hot.fd_capacity && fd_owned()) {
    uint32_t id = scr_preload_hot.fd_marks[fd];
    if (id) {
      __atomic_store_n(&scr_preload_hot.fd_marks[fd], 0, __ATOMIC_RELAXED);
      rc = fd_drop_locked(id, last);
    }
  }
  fd_lock_give(&saved);
  return rc;
}

int scr_preload_fd_lookup(int fd, scr_preload_fd_file* file)
{
  int rc = 0;
  sigset_t saved;
  fd_lock_take(&saved);
  if (scr_preload_hot.fd_marks && fd >= 0 && fd < scr_preload_hot.fd_capacity && scr_preload_hot.fd_marks[fd]) {
    *file = fd_records[scr_preload_hot.fd_marks[fd] - 1].file;
    rc = 1;
  }
  fd_lock_give(&saved);
  return rc;
}

int scr_preload_fd_share(int oldfd, int newfd, scr_preload_fd_file* last)
{
  int rc = 0;
  sigset_t saved;
  fd_lock_take(&saved);
  if (scr_preload_hot.fd_marks && newfd >= 0 && newfd < scr_preload_hot.fd_capacity && oldfd != newfd && fd_owned()) {
    uint32_t id = oldfd >= 0 && oldfd < scr_preload_hot.fd_capacity ? scr_preload_hot.fd_marks[oldfd] : 0;
    uint32_t previous = scr_preload_hot.fd_marks[newfd];
    if (id != previous) {
      if (id) fd_records[id - 1].refs++;
      if (id && newfd > fd_high) fd_high = newfd;
      __atomic_store_n(&scr_preload_hot.fd_marks[newfd], id, __ATOMIC_RELAXED);
      if (previous) rc = fd_drop_locked(previous, last);
    }
  }
  fd_lock_give(&saved);
  return rc;
}

/* 1 when fd is still the open file of record id: not closed, nor a number
 * the kernel gave to another file since */
static int fd_still_locked(int fd, uint32_t id)
{
  struct stat st;
  if (fd_probe(fd, &st) != 0) return errno != EBADF;
  return st.st_dev == fd_records[id - 1].dev && st.st_ino == fd_records[id - 1].ino;
}

void scr_preload_fd_sweep(void)
{
  if (!__atomic_load_n(&scr_preload_hot.fd_active, __ATOMIC_ACQUIRE)) return;
  int saved_errno = errno;
  sigset_t saved;
  fd_lock_take(&saved);
  for (int fd = 0; fd_files > 0 && fd <= fd_high && fd_owned(); fd++) {
    uint32_t id = scr_preload_hot.fd_marks[fd];
    if (!id || fd_still_locked(fd, id)) continue;
    __atomic_store_n(&scr_preload_hot.fd_marks[fd], 0, __ATOMIC_RELAXED);
    if (fd_unref_locked(id)) fd_defer_locked(id, fd);
  }
  fd_lock_give(&saved);
  errno = saved_errno;
}

void scr_preload_fd_release_range(unsigned int first, unsigned int last, scr_preload_fd_list* ended)
{
  sigset_t saved;
  fd_lock_take(&saved);
  if (scr_preload_hot.fd_marks && fd_owned() && fd_high >= 0 && first <= (unsigned int) fd_high) {
    unsigned int end = last < (unsigned int) fd_high ? last : (unsigned int) fd_high;
    for (unsigned int fd = first; fd <= end; fd++) {
      uint32_t id = scr_preload_hot.fd_marks[fd];
      if (!id) continue;
      __atomic_store_n(&scr_preload_hot.fd_marks[fd], 0, __ATOMIC_RELAXED);
      fd_tsan_closing((int) fd);
      if (fd_unref_locked(id)) fd_append_locked(ended, id, (int) fd);
    }
  }
  fd_lock_give(&saved);
}

int scr_preload_fd_next(scr_preload_fd_list* list, int* fd, scr_preload_fd_file* file)
{
  if (!list->head) return 0;
  sigset_t saved;
  fd_lock_take(&saved);
  int rc = fd_take_locked(list, fd, file);
  fd_lock_give(&saved);
  return rc;
}

void scr_preload_fd_defer(int fd, const scr_preload_fd_file* file)
{
  sigset_t saved;
  fd_lock_take(&saved);
  uint32_t id = scr_preload_hot.fd_marks && fd_owned() ? fd_alloc_locked() : 0;
  if (id) {
    fd_files--;   /* not a file of any descriptor */
    fd_records[id - 1].refs = 0;
    fd_records[id - 1].file = *file;
    fd_defer_locked(id, fd);
  }
  fd_lock_give(&saved);
}

int scr_preload_fd_next_deferred(int* fd, scr_preload_fd_file* file)
{
  if (!scr_preload_fd_any_deferred()) return 0;
  sigset_t saved;
  fd_lock_take(&saved);
  int rc = fd_owned() && fd_take_locked(&fd_deferred, fd, file);
  if (rc) __atomic_store_n(&scr_preload_fd_deferred_count, scr_preload_fd_deferred_count - 1, __ATOMIC_RELAXED);
  fd_lock_give(&saved);
  return rc;
}

int scr_preload_fd_count_marked(void)
{
  int n = 0;
  pthread_mutex_lock(&fd_lock);
  for (int fd = 0; scr_preload_hot.fd_marks && fd < scr_preload_hot.fd_capacity; fd++) n += scr_preload_hot.fd_marks[fd] != 0;
  pthread_mutex_unlock(&fd_lock);
  return n;
}

int scr_preload_fd_count_files(void)
{
  pthread_mutex_lock(&fd_lock);
  int n = fd_files;
  pthread_mutex_unlock(&fd_lock);
  return n;
}

void scr_preload_fd_atfork_prepare(void)
{
  pthread_mutex_lock(&fd_lock);
}

void scr_preload_fd_atfork_parent(void)
{
  pthread_mutex_unlock(&fd_lock);
}

/* the child's descriptors are copies that the parent's files must not lose
 * a count to: the child starts with no marks and no table */
void scr_preload_fd_atfork_child(void)
{
  __atomic_store_n(&scr_preload_hot.fd_active, 0, __ATOMIC_RELAXED);
  if (scr_preload_hot.fd_marks) munmap(scr_preload_hot.fd_marks, fd_marks_bytes);
  if (fd_records) munmap(fd_records, fd_records_bytes);
  scr_preload_hot.fd_marks = NULL;
  fd_records = NULL;
  scr_preload_hot.fd_capacity = 0;
  fd_owner = 0;
  fd_free = 0;
  fd_unused = 0;
  fd_files = 0;
  fd_high = -1;
  fd_deferred.head = fd_deferred.tail = 0;
  __atomic_store_n(&scr_preload_fd_deferred_count, 0, __ATOMIC_RELAXED);
  pthread_mutex_init(&fd_lock, NULL);
}
