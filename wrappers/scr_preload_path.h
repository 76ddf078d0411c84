/* scr_preload_path.h - absolute, normalized file names built in the caller's
 * buffer, so that a wrapper can match a path against the rules without malloc. */
#ifndef SCR_PRELOAD_PATH_H
#define SCR_PRELOAD_PATH_H

#include <stddef.h>

/* path made absolute against base when it is relative (base must then be
 * absolute), with "//" and "." dropped and ".." applied lexically, written
 * NUL-terminated into out. Returns its length, or 0 when path is NULL or
 * empty, or the result does not fit in size bytes. */
size_t scr_preload_path_normalize(const char* base, const char* path, char* out, size_t size);

/* the same with relative paths taken from the current directory (dirfd is
 * AT_FDCWD) or from the directory open as dirfd, as openat does; 0 when that
 * directory cannot be found. Calls getcwd or readlink, never malloc; keeps errno. */
size_t scr_preload_path_resolve(int dirfd, const char* path, char* out, size_t size);

/* the same, but only for a relative path whose directory (dirfd's, or the
 * current one) lies in the engine's mirror of virtual directories; 0 for
 * any other. The result is the original path the mirror stands for. */
size_t scr_preload_path_resolve_mirrored(int dirfd, const char* path, char* out, size_t size);

/* the engine's mirror of virtual directories (a directory in node-local
 * storage) into out, and its length; 0 when there is none (outside MPI) */
size_t scr_preload_path_mirror(char* out, size_t size);

/* (dirfd, path) with the symbolic links the file system has on its way
 * followed, as the kernel would, and the rest (from the first name the file
 * system lacks: a directory that exists only in the view) taken lexically;
 * the last component is followed only when follow_last is 1 or a '/' ends
 * the path. Returns the length of the result, absolute and normal, in out,
 * or 0 when no link was followed (or on ELOOP, or when it does not fit).
 * Starts from the directory a relative path is relative to (physical, as
 * getcwd says), and takes the directories on the way to trusted (an
 * absolute directory ending in '/', or NULL: the rules' common directory,
 * which they match lexically) as they stand; so it costs an lstat per other
 * component, and a readlink per link. A trailing '/' is kept. Keeps errno;
 * never allocates. */
size_t scr_preload_path_follow(int dirfd, const char* path, int follow_last, const char* trusted, char* out,
                               size_t size);

/* one pass over a path as the application passed it: its length, where its
 * last component starts (after the last '/'), and whether normalizing
 * could change its text ("//", a component starting with '.', a trailing
 * '/' other than the root's: *odd = 1). Eight bytes at a time, any length;
 * the wrappers' screen (scr_preload_screen.c) reads the first 64 bytes its
 * own way and comes here for longer paths. path must not be NULL. */
size_t scr_preload_path_scan(const char* path, size_t* name, int* odd);

#endif
