/* scr_preload_mmap.c - mmap and mmap64: note when a descriptor of a routed file is mapped
 * shared and writable, so that a completion reads /proc/self/maps only when one may be. */
#include "config.h"
#include <errno.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <unistd.h>
#include "scr_preload_fd.h"
#include "scr_preload_hooks.h"
#include "scr_preload_real.h"

/* A completion looks for files of its dataset still mapped writable
 * (scr_preload_engine_mapped.c) in /proc/self/maps, whose text the kernel
 * makes anew for every read: for a rank writing one empty file, 40% of
 * what a checkpoint cost. Only a descriptor of a routed file (one the table
 * marks) mapped MAP_SHARED with PROT_WRITE can leave such a mapping, so the
 * wrapper notes that much, and a completion that finds no note reads
 * nothing. The MPI library's own shared segments are not routed files. */
static int mapped_since_taken = 0;

static void mmap_note(int prot, int flags, int fd)
{
  if (fd >= 0 && (flags & MAP_SHARED) && (prot & PROT_WRITE) && scr_preload_fd_mark(fd))
    __atomic_store_n(&mapped_since_taken, 1, __ATOMIC_RELAXED);
}

SCR_PRELOAD_API int scr_preload_mapped_take(void)
{
  return __atomic_exchange_n(&mapped_since_taken, 0, __ATOMIC_RELAXED);
}

/* the system call itself, while dlsym is resolving the real function on
 * this thread (an allocator may map memory from inside it) */
static void* mmap_direct(void* addr, size_t length, int prot, int flags, int fd, off_t offset)
{
#ifdef SYS_mmap
  return (void*) syscall(SYS_mmap, addr, length, prot, flags, fd, offset);
#else
  (void) addr, (void) length, (void) prot, (void) flags, (void) fd, (void) offset;
  errno = ENOSYS;
  return MAP_FAILED;
#endif
}

SCR_PRELOAD_API void* mmap(void* addr, size_t length, int prot, int flags, int fd, off_t offset)
{
  mmap_note(prot, flags, fd);
  void* (*real)(void*, size_t, int, int, int, off_t) = SCR_REAL(mmap);
  return real ? real(addr, length, prot, flags, fd, offset) : mmap_direct(addr, length, prot, flags, fd, offset);
}

SCR_PRELOAD_API void* mmap64(void* addr, size_t length, int prot, int flags, int fd, off64_t offset)
{
  mmap_note(prot, flags, fd);
  void* (*real)(void*, size_t, int, int, int, off64_t) = SCR_REAL(mmap64);
  if (real) return real(addr, length, prot, flags, fd, offset);
  if ((off_t) offset != offset) {
    errno = EOVERFLOW;
    return MAP_FAILED;
  }
  return mmap_direct(addr, length, prot, flags, fd, (off_t) offset);
}
