/* scr_preload_real.h - the one table of functions the preload layer wraps and
 * the pointers to their real versions, plus the guard for the library's own I/O. */
#ifndef SCR_PRELOAD_REAL_H
#define SCR_PRELOAD_REAL_H

#include <dirent.h>
#include <ftw.h>
#include <spawn.h>
#include <glob.h>
#include <setjmp.h>
#include <signal.h>
#include <sys/statfs.h>
#include <sys/statvfs.h>
#include <sys/time.h>
#include <utime.h>
#include <errno.h>
#include <stdio.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <mpi.h>

/* Symbol versions, for the symbols where plain dlsym could hand back an old
 * ABI: glibc 2.33 added real stat/lstat/fstatat symbols (older programs call
 * __xstat and friends, which take a version number); i386 keeps a 2.0 libio
 * fopen/fclose and 2.1 readdir64/scandir64 beside the current ones. Where the
 * version is not found (another architecture or libc), or dlsym finds the
 * symbol in another interposer, the resolver keeps dlsym's answer. */
#define SCR_PRELOAD_STAT_VERSION "GLIBC_2.33"
/* realpath that allocates when given no buffer (2.3), not the 2.0 one */
#define SCR_PRELOAD_REALPATH_VERSION "GLIBC_2.3"
/* glob that stats through gl_lstat under GLOB_ALTDIRFUNC (2.27) */
#define SCR_PRELOAD_GLOB_VERSION "GLIBC_2.27"
#if defined(__i386__)
#define SCR_PRELOAD_LIBIO_VERSION "GLIBC_2.1"
#define SCR_PRELOAD_DIRENT64_VERSION "GLIBC_2.2"
#else
#define SCR_PRELOAD_LIBIO_VERSION NULL
#define SCR_PRELOAD_DIRENT64_VERSION NULL
#endif

typedef int (*scr_preload_scandir_filter)(const struct dirent*);
typedef int (*scr_preload_scandir_compare)(const struct dirent**, const struct dirent**);
typedef int (*scr_preload_scandir64_filter)(const struct dirent64*);
typedef int (*scr_preload_scandir64_compare)(const struct dirent64**, const struct dirent64**);

/* X(name, symbol, version, return type, parameters): every function the layer
 * wraps, whether or not its wrapper exists yet. The MPI entries resolve the
 * profiling names, so that the wrapper of MPI_Init calls PMPI_Init. */
#define SCR_PRELOAD_REAL_FUNCTIONS(X) \
  /* opening: route matching files to the cache */ \
  X(open, "open", NULL, int, (const char*, int, ...)) \
  X(open64, "open64", NULL, int, (const char*, int, ...)) \
  X(openat, "openat", NULL, int, (int, const char*, int, ...)) \
  X(openat64, "openat64", NULL, int, (int, const char*, int, ...)) \
  X(creat, "creat", NULL, int, (const char*, mode_t)) \
  X(creat64, "creat64", NULL, int, (const char*, mode_t)) \
  /* _FORTIFY_SOURCE builds call these instead of open */ \
  X(__open_2, "__open_2", NULL, int, (const char*, int)) \
  X(__open64_2, "__open64_2", NULL, int, (const char*, int)) \
  X(__openat_2, "__openat_2", NULL, int, (int, const char*, int)) \
  X(__openat64_2, "__openat64_2", NULL, int, (int, const char*, int)) \
  /* glibc's fopen does not go through the open symbol */ \
  X(fopen, "fopen", SCR_PRELOAD_LIBIO_VERSION, FILE*, (const char*, const char*)) \
  X(fopen64, "fopen64", NULL, FILE*, (const char*, const char*)) \
  X(freopen, "freopen", NULL, FILE*, (const char*, const char*, FILE*)) \
  X(freopen64, "freopen64", NULL, FILE*, (const char*, const char*, FILE*)) \
  /* keeping the dataset's file list exact */ \
  X(close, "close", NULL, int, (int)) \
  X(fclose, "fclose", SCR_PRELOAD_LIBIO_VERSION, int, (FILE*)) \
  /* glibc 2.34; closefrom does not go through the close_range symbol */ \
  X(close_range, "close_range", NULL, int, (unsigned int, unsigned int, int)) \
  X(closefrom, "closefrom", NULL, void, (int)) \
  X(rename, "rename", NULL, int, (const char*, const char*)) \
  X(renameat, "renameat", NULL, int, (int, const char*, int, const char*)) \
  X(renameat2, "renameat2", NULL, int, (int, const char*, int, const char*, unsigned int)) \
  X(unlink, "unlink", NULL, int, (const char*)) \
  X(unlinkat, "unlinkat", NULL, int, (int, const char*, int)) \
  X(rmdir, "rmdir", NULL, int, (const char*)) \
  X(remove, "remove", NULL, int, (const char*)) \
  X(truncate, "truncate", NULL, int, (const char*, off_t)) \
  X(truncate64, "truncate64", NULL, int, (const char*, off64_t)) \
  X(dup, "dup", NULL, int, (int)) \
  X(dup2, "dup2", NULL, int, (int, int)) \
  X(dup3, "dup3", NULL, int, (int, int, int)) \
  X(fcntl, "fcntl", NULL, int, (int, int, ...)) \
  X(fcntl64, "fcntl64", NULL, int, (int, int, ...)) \
  /* links: a cached file's second name, symbolic links at rule paths */ \
  X(link, "link", NULL, int, (const char*, const char*)) \
  X(linkat, "linkat", NULL, int, (int, const char*, int, const char*, int)) \
  X(symlink, "symlink", NULL, int, (const char*, const char*)) \
  X(symlinkat, "symlinkat", NULL, int, (const char*, int, const char*)) \
  X(readlink, "readlink", NULL, ssize_t, (const char*, char*, size_t)) \
  X(readlinkat, "readlinkat", NULL, ssize_t, (int, const char*, char*, size_t)) \
  /* _FORTIFY_SOURCE builds call these instead of readlink */ \
  X(__readlink_chk, "__readlink_chk", NULL, ssize_t, (const char*, char*, size_t, size_t)) \
  X(__readlinkat_chk, "__readlinkat_chk", NULL, ssize_t, (int, const char*, char*, size_t, size_t)) \
  /* special files, made on the file system (mknod, mknodat: glibc 2.33, as stat) */ \
  X(mkfifo, "mkfifo", NULL, int, (const char*, mode_t)) \
  X(mkfifoat, "mkfifoat", NULL, int, (int, const char*, mode_t)) \
  X(mknod, "mknod", SCR_PRELOAD_STAT_VERSION, int, (const char*, mode_t, dev_t)) \
  X(mknodat, "mknodat", SCR_PRELOAD_STAT_VERSION, int, (int, const char*, mode_t, dev_t)) \
  /* processes started with an environment of the program's own */ \
  X(execve, "execve", NULL, int, (const char*, char* const*, char* const*)) \
  X(execvpe, "execvpe", NULL, int, (const char*, char* const*, char* const*)) \
  X(fexecve, "fexecve", NULL, int, (int, char* const*, char* const*)) \
  X(execveat, "execveat", NULL, int, (int, const char*, char* const*, char* const*, int)) \
  X(posix_spawn, "posix_spawn", NULL, int, (pid_t*, const char*, const posix_spawn_file_actions_t*, \
                                            const posix_spawnattr_t*, char* const*, char* const*)) \
  X(posix_spawnp, "posix_spawnp", NULL, int, (pid_t*, const char*, const posix_spawn_file_actions_t*, \
                                              const posix_spawnattr_t*, char* const*, char* const*)) \
  /* virtual dataset directories */ \
  X(mkdir, "mkdir", NULL, int, (const char*, mode_t)) \
  X(mkdirat, "mkdirat", NULL, int, (int, const char*, mode_t)) \
  /* calls that are not routed but need such a directory on the file system */ \
  X(chdir, "chdir", NULL, int, (const char*)) \
  X(fchdir, "fchdir", NULL, int, (int)) \
  X(mkstemp, "mkstemp", NULL, int, (char*)) \
  X(mkstemp64, "mkstemp64", NULL, int, (char*)) \
  X(mkostemp, "mkostemp", NULL, int, (char*, int)) \
  X(mkostemp64, "mkostemp64", NULL, int, (char*, int)) \
  X(mkstemps, "mkstemps", NULL, int, (char*, int)) \
  X(mkstemps64, "mkstemps64", NULL, int, (char*, int)) \
  X(mkostemps, "mkostemps", NULL, int, (char*, int, int)) \
  X(mkostemps64, "mkostemps64", NULL, int, (char*, int, int)) \
  X(mkdtemp, "mkdtemp", NULL, char*, (char*)) \
  /* restored files visible at their original paths */ \
  X(stat, "stat", SCR_PRELOAD_STAT_VERSION, int, (const char*, struct stat*)) \
  X(lstat, "lstat", SCR_PRELOAD_STAT_VERSION, int, (const char*, struct stat*)) \
  X(fstatat, "fstatat", SCR_PRELOAD_STAT_VERSION, int, (int, const char*, struct stat*, int)) \
  X(stat64, "stat64", SCR_PRELOAD_STAT_VERSION, int, (const char*, struct stat64*)) \
  X(lstat64, "lstat64", SCR_PRELOAD_STAT_VERSION, int, (const char*, struct stat64*)) \
  X(fstatat64, "fstatat64", SCR_PRELOAD_STAT_VERSION, int, (int, const char*, struct stat64*, int)) \
  X(statx, "statx", NULL, int, (int, const char*, int, unsigned int, struct statx*)) \
  /* what programs built against glibc before 2.33 call for stat and friends */ \
  X(__xstat, "__xstat", NULL, int, (int, const char*, struct stat*)) \
  X(__lxstat, "__lxstat", NULL, int, (int, const char*, struct stat*)) \
  X(__fxstatat, "__fxstatat", NULL, int, (int, int, const char*, struct stat*, int)) \
  X(__xstat64, "__xstat64", NULL, int, (int, const char*, struct stat64*)) \
  X(__lxstat64, "__lxstat64", NULL, int, (int, const char*, struct stat64*)) \
  X(__fxstatat64, "__fxstatat64", NULL, int, (int, int, const char*, struct stat64*, int)) \
  X(access, "access", NULL, int, (const char*, int)) \
  X(faccessat, "faccessat", NULL, int, (int, const char*, int, int)) \
  X(realpath, "realpath", SCR_PRELOAD_REALPATH_VERSION, char*, (const char*, char*)) \
  X(statvfs, "statvfs", NULL, int, (const char*, struct statvfs*)) \
  X(statvfs64, "statvfs64", NULL, int, (const char*, struct statvfs64*)) \
  X(statfs, "statfs", NULL, int, (const char*, struct statfs*)) \
  X(statfs64, "statfs64", NULL, int, (const char*, struct statfs64*)) \
  /* a cached file's mode, owner and times: its cache file's */ \
  X(chmod, "chmod", NULL, int, (const char*, mode_t)) \
  X(fchmodat, "fchmodat", NULL, int, (int, const char*, mode_t, int)) \
  X(chown, "chown", NULL, int, (const char*, uid_t, gid_t)) \
  X(lchown, "lchown", NULL, int, (const char*, uid_t, gid_t)) \
  X(fchownat, "fchownat", NULL, int, (int, const char*, uid_t, gid_t, int)) \
  X(utime, "utime", NULL, int, (const char*, const struct utimbuf*)) \
  X(utimes, "utimes", NULL, int, (const char*, const struct timeval*)) \
  X(utimensat, "utimensat", NULL, int, (int, const char*, const struct timespec*, int)) \
  X(getxattr, "getxattr", NULL, ssize_t, (const char*, const char*, void*, size_t)) \
  X(lgetxattr, "lgetxattr", NULL, ssize_t, (const char*, const char*, void*, size_t)) \
  X(listxattr, "listxattr", NULL, ssize_t, (const char*, char*, size_t)) \
  X(llistxattr, "llistxattr", NULL, ssize_t, (const char*, char*, size_t)) \
  X(setxattr, "setxattr", NULL, int, (const char*, const char*, const void*, size_t, int)) \
  X(lsetxattr, "lsetxattr", NULL, int, (const char*, const char*, const void*, size_t, int)) \
  X(removexattr, "removexattr", NULL, int, (const char*, const char*)) \
  X(lremovexattr, "lremovexattr", NULL, int, (const char*, const char*)) \
  X(canonicalize_file_name, "canonicalize_file_name", NULL, char*, (const char*)) \
  /* listings of the rules' directories */ \
  X(opendir, "opendir", NULL, DIR*, (const char*)) \
  X(fdopendir, "fdopendir", NULL, DIR*, (int)) \
  X(rewinddir, "rewinddir", NULL, void, (DIR*)) \
  X(readdir, "readdir", NULL, struct dirent*, (DIR*)) \
  X(readdir64, "readdir64", SCR_PRELOAD_DIRENT64_VERSION, struct dirent64*, (DIR*)) \
  X(closedir, "closedir", NULL, int, (DIR*)) \
  X(glob, "glob", SCR_PRELOAD_GLOB_VERSION, int, (const char*, int, int (*)(const char*, int), glob_t*)) \
  X(glob64, "glob64", SCR_PRELOAD_GLOB_VERSION, int, (const char*, int, int (*)(const char*, int), glob64_t*)) \
  X(nftw, "nftw", NULL, int, (const char*, int (*)(const char*, const struct stat*, int, struct FTW*), int, int)) \
  X(nftw64, "nftw64", NULL, int, (const char*, int (*)(const char*, const struct stat64*, int, struct FTW*), int, int)) \
  X(ftw, "ftw", NULL, int, (const char*, int (*)(const char*, const struct stat*, int), int)) \
  X(ftw64, "ftw64", NULL, int, (const char*, int (*)(const char*, const struct stat64*, int), int)) \
  X(scandir, "scandir", NULL, int, (const char*, struct dirent***, scr_preload_scandir_filter, \
                                    scr_preload_scandir_compare)) \
  X(scandir64, "scandir64", SCR_PRELOAD_DIRENT64_VERSION, int, (const char*, struct dirent64***, \
                                    scr_preload_scandir64_filter, scr_preload_scandir64_compare)) \
  X(scandirat, "scandirat", NULL, int, (int, const char*, struct dirent***, scr_preload_scandir_filter, \
                                        scr_preload_scandir_compare)) \
  X(scandirat64, "scandirat64", NULL, int, (int, const char*, struct dirent64***, scr_preload_scandir64_filter, \
                                            scr_preload_scandir64_compare)) \
  /* the program's signal handlers, run inside the guard, and a longjmp out of one */ \
  X(sigaction, "sigaction", NULL, int, (int, const struct sigaction*, struct sigaction*)) \
  X(signal, "signal", NULL, sighandler_t, (int, sighandler_t)) \
  X(bsd_signal, "bsd_signal", NULL, sighandler_t, (int, sighandler_t)) \
  X(ssignal, "ssignal", NULL, sighandler_t, (int, sighandler_t)) \
  X(sysv_signal, "sysv_signal", NULL, sighandler_t, (int, sighandler_t)) \
  X(__sysv_signal, "__sysv_signal", NULL, sighandler_t, (int, sighandler_t)) \
  X(sigset, "sigset", NULL, sighandler_t, (int, sighandler_t)) \
  X(longjmp, "longjmp", NULL, void, (struct __jmp_buf_tag*, int)) \
  X(_longjmp, "_longjmp", NULL, void, (struct __jmp_buf_tag*, int)) \
  X(siglongjmp, "siglongjmp", NULL, void, (struct __jmp_buf_tag*, int)) \
  X(__longjmp_chk, "__longjmp_chk", NULL, void, (struct __jmp_buf_tag*, int)) \
  /* MPI: the profiling interface, absent outside MPI programs */ \
  X(MPI_Init, "PMPI_Init", NULL, int, (int*, char***)) \
  X(MPI_Init_thread, "PMPI_Init_thread", NULL, int, (int*, char***, int, int*)) \
  X(MPI_Finalize, "PMPI_Finalize", NULL, int, (void)) \
  X(MPI_Barrier, "PMPI_Barrier", NULL, int, (MPI_Comm)) \
  X(MPI_File_open, "PMPI_File_open", NULL, int, (MPI_Comm, const char*, int, MPI_Info, MPI_File*))

/* scr_preload_real.open and so on: NULL until resolved */
typedef struct {
#define SCR_PRELOAD_REAL_MEMBER(name, symbol, version, type, parameters) type (*name) parameters;
  SCR_PRELOAD_REAL_FUNCTIONS(SCR_PRELOAD_REAL_MEMBER)
#undef SCR_PRELOAD_REAL_MEMBER
} scr_preload_real_table;

extern scr_preload_real_table scr_preload_real;

/* SCR_PRELOAD_REAL_INDEX_open and so on, in table order */
enum {
#define SCR_PRELOAD_REAL_ENUM(name, symbol, version, type, parameters) SCR_PRELOAD_REAL_INDEX_##name,
  SCR_PRELOAD_REAL_FUNCTIONS(SCR_PRELOAD_REAL_ENUM)
#undef SCR_PRELOAD_REAL_ENUM
  SCR_PRELOAD_REAL_COUNT
};

/* the real function, resolved on first use: SCR_REAL(open)(path, flags, mode).
 * NULL when the symbol does not exist, or when asked for while this thread is
 * inside dlsym (dlsym may call calloc, and an allocator may open files);
 * callers then fall back to the system call or fail with ENOSYS. */
#define SCR_REAL(name) \
  __extension__({ \
    __typeof__(scr_preload_real.name) scr_real_ = __atomic_load_n(&scr_preload_real.name, __ATOMIC_RELAXED); \
    if (__builtin_expect(scr_real_ == NULL, 0)) { \
      scr_preload_real_resolve(SCR_PRELOAD_REAL_INDEX_##name); \
      scr_real_ = __atomic_load_n(&scr_preload_real.name, __ATOMIC_RELAXED); \
    } \
    scr_real_; \
  })

/* look up one entry on RTLD_NEXT: dlsym, or dlvsym with the entry's version
 * when both find the same object (so that another interposer between this
 * library and libc stays in the chain); returns 1 when the pointer is set.
 * Thread-safe: racing threads store the same value. */
int scr_preload_real_resolve(int index);
/* look up every entry; the library's constructor calls it once */
void scr_preload_real_resolve_all(void);

/* the table's columns, for messages and tests */
const char* scr_preload_real_name(int index);
const char* scr_preload_real_symbol(int index);
const char* scr_preload_real_version(int index);
/* the pointer as resolved so far, NULL when not (yet) found */
void* scr_preload_real_address(int index);

/* Guard around the library's own I/O: while a thread is inside, the wrappers
 * pass every call straight to the real function, so that the cache, the
 * configuration and the log never re-enter the routing logic, and never call
 * the engine, which may hold its lock on this very thread (the descriptor
 * table still follows what such calls do to tracked numbers). Nests. */
extern __thread int scr_preload_real_internal_depth __attribute__((tls_model("initial-exec")));
static inline void scr_preload_real_enter(void) { scr_preload_real_internal_depth++; }
static inline void scr_preload_real_leave(void) { scr_preload_real_internal_depth--; }
static inline int scr_preload_real_is_internal(void) { return scr_preload_real_internal_depth > 0; }

#ifndef SCR_PRELOAD_API
#define SCR_PRELOAD_API __attribute__((visibility("default")))
#endif
/* the calling thread is inside the guard for the rest of its life: for the
 * threads the library starts (the cache's reaper), whose every call is the
 * library's own; given to libscr as scr.thread_start */
SCR_PRELOAD_API void scr_preload_real_own_thread(void);

/* this thread's errno, found once: errno is a call into libc
 * (__errno_location) that the pass-through path of the stat wrappers,
 * which must save it, would otherwise pay on every call */
extern __thread int* scr_preload_real_errno_address __attribute__((tls_model("initial-exec")));
static inline int* scr_preload_real_errno(void)
{
  int* p = scr_preload_real_errno_address;
  if (__builtin_expect(p == NULL, 0)) p = scr_preload_real_errno_address = &errno;
  return p;
}

#endif
