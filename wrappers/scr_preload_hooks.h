/* scr_preload_hooks.h - the seam between the wrappers and the checkpoint engine:
 * what a wrapper calls when a path matches a rule, and when such a file closes. */
#ifndef SCR_PRELOAD_HOOKS_H
#define SCR_PRELOAD_HOOKS_H

#include <dirent.h>
#include <limits.h>
#include <sys/types.h>
#include "scr_preload_rules.h"

/* The contract, common to every hook (answered by the rank's engine, or in
 * a process a rank started by the read-only child view, scr_preload_child.c;
 * the contract is the same):
 *
 * When. A wrapper calls its hook only while rules are loaded, outside dry run
 * (SCR_PRELOAD_DRYRUN=1 calls no hook), not for the library's own I/O, and
 * only for a path that matched: after a plain call has been ruled out by the
 * rule set's prefix check, never on the zero-cost path. Opens also passed
 * the rule's CALLER= check. Hooks run inside the library's guard
 * (scr_preload_real_enter), so every file call they make goes straight to
 * libc; they may be called from many threads at once. No hook is called
 * while the guard is up on the calling thread (the engine may hold its lock
 * there): the one event that cannot wait for another time, a tracked file's
 * last descriptor ending inside the guard, reaches scr_preload_hook_close at
 * the next hook call the application makes, just before or after it.
 *
 * *handled is SCR_PRELOAD_PASS on entry. The hook answers with one of:
 *   SCR_PRELOAD_PASS      the wrapper makes the real call with the
 *                         application's own arguments, as if no hook existed;
 *                         the return value is ignored.
 *   SCR_PRELOAD_HANDLED   the return value is the call's result; the hook did
 *                         (or refused) the work itself.
 *   SCR_PRELOAD_REDIRECT  (hooks with a redirect buffer) the wrapper makes the
 *                         real call on the absolute path the hook wrote into
 *                         redirect (PATH_MAX bytes), other arguments unchanged.
 *
 * errno. The wrapper saves errno before the hook. After PASS and REDIRECT it
 * restores it before the real call, so the application sees exactly what the
 * real call leaves. After HANDLED with a success value it restores it too
 * (a successful call leaves errno alone); after HANDLED with a failure value
 * (-1, NULL) errno is what the hook set, and the hook must set it.
 *
 * Paths are absolute and normalized ("//", "." and ".." removed lexically),
 * as the rules see them; symbolic links are not resolved. */

enum scr_preload_hook_answer {
  SCR_PRELOAD_PASS = 0,
  SCR_PRELOAD_HANDLED = 1,
  SCR_PRELOAD_REDIRECT = 2
};

/* Called by the engine, not a hook: whether rule directories may be
 * virtual (absent from the file system, shown by the hooks). Only while
 * enabled does a stat, lstat, fstatat, statx, __xstat... or access/faccessat
 * that failed with ENOENT or ENOTDIR, on a path that is no rule's file, look
 * the path up as a rule directory and ask scr_preload_hook_stat/_access.
 * Disabled by default, so that a failing stat of a foreign path costs no
 * lookup and stays a tail call into libc. */
SCR_PRELOAD_API void scr_preload_hooks_virtual_directories(int enabled);

/* Called by the engine, not a hook: the real directory `mirror` stands for
 * `shown_as` (both absolute, normalized). A relative path resolved against a
 * descriptor or a current directory inside the mirror is matched under the
 * name it has below shown_as, so that openat, fstatat, unlinkat... relative
 * to a virtual rule directory opened as a descriptor reach the hooks as if
 * the application had named the path in full. NULL: no mirror. */
SCR_PRELOAD_API void scr_preload_hooks_view_mirror(const char* mirror, const char* shown_as);

/* Called by the engine, not a hook: 1 while the calling thread is inside
 * MPI_File_open, whose ROMIO creates a file, closes it at once and opens it
 * again: that close is no end of the file (scr_preload_mpi.c) */
SCR_PRELOAD_API int scr_preload_mpi_file_opening(void);

/* the file a call names, as matched */
typedef struct {
  const char* call;                   /* the wrapped function: "open", "fopen64", "__xstat", ... */
  const char* path;                   /* absolute, normalized; NULL only for the other side of a
                                       * rename when it cannot be resolved (longer than PATH_MAX) */
  size_t length;                      /* strlen(path) */
  const scr_preload_ruleset* rules;   /* the rule set match.rule indexes (scr_preload_rules_at) */
  scr_preload_match match;            /* match.rule is -1 for the non-matching side of a rename */
  int directory;                      /* 1: path matched as a directory of the rule (where its
                                       * files go: scr_preload_rules_match_directory); 0: as a file */
} scr_preload_target;

/* open, open64, openat, openat64, creat, creat64, the __open*_2 family, and
 * fopen, fopen64, freopen, freopen64 (flags from the stdio mode: "w" is
 * O_WRONLY|O_CREAT|O_TRUNC, "a+" O_RDWR|O_CREAT|O_APPEND, 'x' O_EXCL, 'e'
 * O_CLOEXEC; mode 0666). Before the real open. mode is meaningful only with
 * O_CREAT or O_TMPFILE in flags. Also, like scr_preload_hook_stat, for a rule
 * directory (target->directory set) after the real open, fopen excepted,
 * failed with ENOENT or ENOTDIR while virtual directories are in force: only
 * REDIRECT (a real directory to open instead) counts then.
 * HANDLED: return a real descriptor opened with flags (the cache file), or
 *   -1 with errno; stdio wrappers wrap it with fdopen (freopen through
 *   /proc/self/fd). REDIRECT: the real open of redirect instead.
 * *file: with HANDLED and a descriptor, an opaque pointer the hook may set;
 *   it is kept with the open file (every descriptor dup'd from it) and given
 *   back to scr_preload_hook_close; after PASS or REDIRECT that gets NULL.
 * Every successful open of a matching path is tracked, whatever the answer,
 * so scr_preload_hook_close follows every call of this hook that ended in a
 * descriptor, once, when the last descriptor of that open file is closed;
 * a failed open gets no scr_preload_hook_close. */
SCR_PRELOAD_API int scr_preload_hook_open(const scr_preload_target* target, int flags, mode_t mode, char* redirect,
                          void** file, int* handled);

/* the last descriptor of a tracked open file was closed: by close, fclose,
 * closedir (of an fdopendir stream), freopen of its stream, or dup2 or dup3
 * onto it. Called after the real close, whose result is rc
 * (errno as it left it; 0 when the close was implicit). HANDLED: the return
 * value replaces rc (with errno when -1); ignored for the implicit closes,
 * whose call has another result. fd is the descriptor closed last. Not
 * called in a forked child (which drops every mark), nor for a descriptor
 * beyond the table (RLIMIT_NOFILE's hard limit, at most 2^20: a warning is
 * printed once), nor when the application closes with a raw system call. */
SCR_PRELOAD_API int scr_preload_hook_close(int fd, void* file, int rc, int* handled);

/* rename, renameat, renameat2 (flags: RENAME_NOREPLACE ...; 0 for the first
 * two), when from or to matches, as a file or as a rule directory. HANDLED:
 * 0 or -1 with errno. */
SCR_PRELOAD_API int scr_preload_hook_rename(const scr_preload_target* from, const scr_preload_target* to,
                            unsigned int flags, int* handled);

/* link, linkat (flags: AT_SYMLINK_FOLLOW or 0, the link already followed
 * into from->path when it leads into the view), when from or to matches a
 * rule's file (the other side's target resolved, with match.rule -1).
 * HANDLED: 0 (the new name made: a second name of a cached file) or -1 with
 * errno, as a file system would refuse it (EEXIST, ENOENT, EXDEV between the
 * cache and the file system...); PASS: the real link. */
SCR_PRELOAD_API int scr_preload_hook_link(const scr_preload_target* from, const scr_preload_target* to, int flags,
                                          int* handled);

/* unlink, unlinkat (at_flags: 0 or AT_REMOVEDIR, in which case target may be
 * a rule directory). HANDLED: 0 or -1 with errno. */
SCR_PRELOAD_API int scr_preload_hook_unlink(const scr_preload_target* target, int at_flags, int* handled);

/* truncate, truncate64. HANDLED: 0 or -1 with errno. */
SCR_PRELOAD_API int scr_preload_hook_truncate(const scr_preload_target* target, off64_t length, int* handled);

/* mkdir, mkdirat of a rule directory or of a rule's file name, before the
 * real mkdir. HANDLED: -1 with errno (EEXIST: the view shows a file or a
 * directory there that the file system lacks); PASS: the real mkdir. */
SCR_PRELOAD_API int scr_preload_hook_mkdir(const scr_preload_target* target, mode_t mode, int* handled);

/* chdir, and mkstemp and its kin (their template's directory): calls the
 * layer does not route (glibc's mk*temp open through names no wrapper sees)
 * are about to use the rule directory target on the file system. HANDLED: 0
 * once it is there (made now when it existed only in the view), or -1 with
 * errno; PASS: nothing to do. The wrapper then makes the real call, whose
 * result and errno the application gets either way. */
SCR_PRELOAD_API int scr_preload_hook_materialize(const scr_preload_target* target, int* handled);

/* stat, lstat, fstatat, stat64, lstat64, fstatat64, statx, __xstat,
 * __lxstat, __fxstatat, __xstat64, __lxstat64, __fxstatat64 (at_flags:
 * AT_SYMLINK_NOFOLLOW for the l-variants, else the caller's flags).
 * A file that matches: before the real call. A rule directory: only after the
 * real call failed with ENOENT or ENOTDIR (a directory on the file system
 * answers for itself), with target->directory set, and only while
 * scr_preload_hooks_virtual_directories(1) is in force; PASS keeps that failure.
 * unlink asks the same way whether a name it could not find is a virtual
 * directory (a REDIRECT makes it fail with EISDIR).
 * REDIRECT: the real call on redirect (the normal way to show a cached file:
 * the buffer is filled by libc). HANDLED: only -1 with errno (ENOENT for a
 * file that must not be seen); any other value is treated as PASS. */
SCR_PRELOAD_API int scr_preload_hook_stat(const scr_preload_target* target, int at_flags, char* redirect, int* handled);

/* access, faccessat (amode R_OK|W_OK|X_OK or F_OK; at_flags as given). When
 * as for stat. HANDLED: 0 or -1 with errno. */
SCR_PRELOAD_API int scr_preload_hook_access(const scr_preload_target* target, int amode, int at_flags, char* redirect,
                            int* handled);

/* opendir, scandir, scandir64 of a rule directory, before the real opendir.
 * HANDLED: return the DIR* (the hook may open another directory with
 * SCR_REAL(opendir)), or NULL with errno. REDIRECT: the real opendir of
 * redirect. *dir: when the hook sets it and a DIR* results, the stream is
 * tracked: its readdir, readdir64 and closedir call the two hooks below
 * (scandir reads through them too). */
SCR_PRELOAD_API DIR* scr_preload_hook_opendir(const scr_preload_target* target, char* redirect, void** dir, int* handled);

/* readdir, readdir64 of a tracked stream, before the real readdir. HANDLED:
 * the return value is the entry (the hook's storage, valid until the next
 * call on the stream; NULL for the end, errno unchanged, or an error with
 * errno); the hook may call SCR_REAL(readdir64) itself to merge or filter.
 * On 64-bit Linux struct dirent and struct dirent64 are the same. */
SCR_PRELOAD_API struct dirent64* scr_preload_hook_readdir(DIR* stream, void* dir, int* handled);

/* rewinddir of a tracked stream, after the real rewinddir: the next readdir
 * starts over (no return value, errno untouched) */
SCR_PRELOAD_API void scr_preload_hook_rewinddir(DIR* stream, void* dir);

/* closedir of a tracked stream, before the real closedir: the last call for
 * dir. HANDLED: the stream is closed by the hook; the return value is
 * closedir's result. */
SCR_PRELOAD_API int scr_preload_hook_closedir(DIR* stream, void* dir, int* handled);

#endif
