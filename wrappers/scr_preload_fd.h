/* scr_preload_fd.h - which descriptors belong to files that matched a rule: a
 * table indexed by descriptor, read without a lock, so a foreign close costs a load. */
#ifndef SCR_PRELOAD_FD_H
#define SCR_PRELOAD_FD_H

#include <stdint.h>
#include "scr_preload_rules.h"
#include "scr_preload_hot.h"

/* Each tracked open file (one successful open of a matching path) is a
 * record with a count of the descriptors that refer to it; marks[fd] holds
 * its record number + 1, 0 for a descriptor that is not ours. dup, dup2,
 * dup3 and fcntl(F_DUPFD*) add a descriptor to a record; close, fclose,
 * closedir, close_range, closefrom and the implicit close of dup2/dup3 and
 * freopen remove one; the file is closed when its count reaches 0. Changes
 * take one mutex; reads take none. Only the process that made the table
 * changes it (a vfork child, which shares the memory but not the
 * descriptors, cannot).
 *
 * A file whose last descriptor ended where the engine could not be told
 * (the library's own code was running on the thread: an engine file given
 * the number of a descriptor the program closed behind every wrapper, a
 * signal handler that interrupted the library) is deferred: its record waits
 * on a list until the wrappers next call the engine (scr_preload_wrap.h). */

enum scr_preload_fd_kind {
  SCR_PRELOAD_FD_FILE = 1,   /* from an open or fopen: scr_preload_hook_close at its end */
  SCR_PRELOAD_FD_DIR = 2,    /* the descriptor of a tracked DIR stream */
  SCR_PRELOAD_FD_MIRROR = 3  /* an open of a virtual directory, answered with its mirror
                              * (scr_preload_wrap_unmirror): nothing happens at its close */
};

/* what a record carries, handed back when its last descriptor goes */
typedef struct {
  int kind;                  /* enum scr_preload_fd_kind */
  int rule;                  /* the rule the path matched */
  int hooked;                /* 1 when scr_preload_hook_open (or _opendir) was called */
  void* cookie;              /* what that hook asked to keep */
} scr_preload_fd_file;

/* set (never cleared, except in a forked child) once any descriptor has
 * been marked: until then no descriptor call looks further */

/* the record number + 1 of fd, 0 when fd is not ours: one load, none at all
 * in a process that never opened a matching file */
static inline uint32_t scr_preload_fd_mark(int fd)
{
  if (__builtin_expect(!__atomic_load_n(&scr_preload_hot.fd_active, __ATOMIC_ACQUIRE), 1)) return 0;
  if ((unsigned) fd >= (unsigned) scr_preload_hot.fd_capacity) return 0;
  return __atomic_load_n(&scr_preload_hot.fd_marks[fd], __ATOMIC_RELAXED);
}

/* size the table from RLIMIT_NOFILE (the hard limit, capped, so that a soft
 * limit raised later is covered); the memory is reserved, not touched. The
 * rule set's installation calls it; idempotent; 0 on success. */
int scr_preload_fd_init(void);

/* a new record for fd, freshly opened; a stale mark on fd (its close went
 * around the wrappers) is dropped first, its record deferred when that was
 * its last descriptor. Returns 0, or -1 when fd lies beyond the table or the
 * table could not be made (the file is then not tracked). */
int scr_preload_fd_track(int fd, const scr_preload_fd_file* file);

/* fd is being closed: unmark it. Returns 1 and fills *last when it was the
 * last descriptor of its record (which is freed), 0 when others remain or fd
 * was not ours. */
int scr_preload_fd_release(int fd, scr_preload_fd_file* last);

/* the record of fd, copied into *file: 1, or 0 when fd is not ours */
SCR_PRELOAD_API int scr_preload_fd_lookup(int fd, scr_preload_fd_file* file);

/* records set aside, in the order their descriptors ended */
typedef struct {
  uint32_t head, tail;       /* record number + 1, 0 when empty */
} scr_preload_fd_list;

/* the descriptors first..last (close_range, closefrom) are being closed:
 * unmark every one; the records that lose their last descriptor are
 * appended to *ended, for scr_preload_fd_next. Nothing in a process that
 * does not own the table (a vfork child). */
void scr_preload_fd_release_range(unsigned int first, unsigned int last, scr_preload_fd_list* ended);

/* the first record of *list taken off and freed: 1 with *file and *fd (the
 * descriptor that was its last) filled, 0 when the list is empty */
int scr_preload_fd_next(scr_preload_fd_list* list, int* fd, scr_preload_fd_file* file);

/* fd was the last descriptor of *file, and its end cannot be told now: keep
 * the record on the deferred list. (A record dropped because its descriptor
 * was tracked again goes there too.) */
void scr_preload_fd_defer(int fd, const scr_preload_fd_file* file);

/* every marked descriptor that is no longer its record's open file (closed
 * behind every wrapper, its number maybe another file's now) is unmarked,
 * and a record that loses its last descriptor so is deferred: a raw close
 * is otherwise seen only when its number is tracked or closed again, which
 * need not happen at the same call on every rank. One fstat per marked
 * descriptor; MPI_Barrier on MPI_COMM_WORLD and MPI_Finalize call it
 * before they deliver. */
void scr_preload_fd_sweep(void);
/* the oldest deferred record, as scr_preload_fd_next; 0 also in a process
 * that does not own the table */
int scr_preload_fd_next_deferred(int* fd, scr_preload_fd_file* file);

/* records on the deferred list; read without the lock, so that a wrapper
 * about to call the engine knows in one load that nothing waits */
extern int scr_preload_fd_deferred_count;
static inline int scr_preload_fd_any_deferred(void)
{
  return __atomic_load_n(&scr_preload_fd_deferred_count, __ATOMIC_RELAXED) != 0;
}

/* newfd now refers to oldfd's open file (dup, dup2, dup3, fcntl F_DUPFD):
 * mark it with oldfd's record. A record newfd had before (dup2 closed it)
 * loses a descriptor: returns 1 and fills *last when that was its last. */
int scr_preload_fd_share(int oldfd, int newfd, scr_preload_fd_file* last);

/* for tests and messages: descriptors marked, and records in use */
SCR_PRELOAD_API int scr_preload_fd_count_marked(void);
SCR_PRELOAD_API int scr_preload_fd_count_files(void);

/* fork: the prepare/parent pair holds the mutex across fork; the child
 * forgets every mark (see scr_preload_wrap.c for why) */
void scr_preload_fd_atfork_prepare(void);
void scr_preload_fd_atfork_parent(void);
void scr_preload_fd_atfork_child(void);

#endif
