/* scr_io.h - file and directory helpers shared by the library and the commands:
 * full reads/writes, private directories, crash-safe copies with CRC32, rm -rf. */
#ifndef SCR_IO_H
#define SCR_IO_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* Unless said otherwise, functions return SCR_SUCCESS or an SCR_ERR_* code
 * and log one message naming the path; SCR_ERR_NOENT (missing file) is returned
 * without a message because callers often probe for optional files. */

/* read(2) until len bytes or end of file, retrying EINTR and short reads;
 * returns bytes read (less than len only at end of file), -1 with errno set */
ssize_t scr_io_read_full(int fd, void* buf, size_t len);
/* write(2) all len bytes, retrying EINTR and short writes; returns len, or -1 with errno set */
ssize_t scr_io_write_full(int fd, const void* buf, size_t len);
/* the same at an explicit offset (pread/pwrite), leaving the file offset alone */
ssize_t scr_io_pread_full(int fd, void* buf, size_t len, off_t offset);
ssize_t scr_io_pwrite_full(int fd, const void* buf, size_t len, off_t offset);

/* mkdir -p: create each missing component with mode (subject to umask);
 * an existing component that is not a directory is an error */
int scr_io_mkdir_p(const char* path, mode_t mode);
/* create each missing component with 0700; the final directory, new or old,
 * must be a real directory (not a symlink) owned by the effective uid, else
 * SCR_ERR_SECURITY: nothing is repaired silently */
int scr_io_mkdir_private(const char* path);

/* flush a directory's entries (after create/rename inside it) to stable storage */
int scr_io_fsync_dir(const char* dir);

/* copy src to dst through "<dst>.tmp.<pid>" + fsync + rename + fsync of the
 * directory, so dst is either the old file or the complete new one; missing
 * parents of dst are created with parent_mode; dst gets src's permission bits.
 * crc (zlib CRC32 of the content) and size may be NULL. */
int scr_io_copy_file(const char* src, const char* dst, mode_t parent_mode,
                     uint32_t* crc, uint64_t* size);
/* the same, calling pace(bytes copied so far, arg) after each buffer: it may
 * sleep (throttling), or return non-zero to abandon the copy (dst untouched,
 * SCR_ERR_FAILURE returned, nothing logged) */
int scr_io_copy_file_paced(const char* src, const char* dst, mode_t parent_mode, uint32_t* crc, uint64_t* size,
                           int (*pace)(uint64_t copied, void* arg), void* arg);
/* scr_io_copy_file, but when the content's CRC32 is not expect the copy is
 * removed before it takes dst's name (dst untouched): SCR_ERR_CORRUPT, with
 * *crc and *size those of what was read */
int scr_io_copy_file_expecting(const char* src, const char* dst, mode_t parent_mode, uint32_t expect,
                               uint32_t* crc, uint64_t* size);
/* scr_io_copy_file_paced, checked against *expect as scr_io_copy_file_expecting
 * does when expect is not NULL */
int scr_io_copy_file_paced_expecting(const char* src, const char* dst, mode_t parent_mode, const uint32_t* expect,
                                     uint32_t* crc, uint64_t* size, int (*pace)(uint64_t copied, void* arg),
                                     void* arg);
/* dst made a hard link of existing, the same way (a link at the temporary
 * name renamed over dst), so dst is either what it was or the other name of
 * existing; missing parents of dst are created with parent_mode. SCR_SUCCESS,
 * or an error with errno set (EXDEV across file systems) */
int scr_io_link_file(const char* existing, const char* dst, mode_t parent_mode);
/* an exclusive flock on path (created 0600 if missing, never through a
 * symlink), waiting for other holders through signals: SCR_SUCCESS with *fd
 * set, or SCR_ERR_IO (logged). flock rather than fcntl locks: they belong to
 * the open file, so a lock the library holds is not dropped when some other
 * code closes the same file. */
int scr_io_lock(const char* path, int* fd);

/* Names SCR writes, against files planted by someone else (issue 18):
 * scr_io_check_name: SCR_SUCCESS when path is free or a file of this user
 * (a symbolic link of this user's too when allow_own_link: a program's own
 * name on the prefix directory); else SCR_ERR_SECURITY and a message naming
 * the path. scr_io_check_own_dir: the same for a directory SCR made, which
 * must not be a symbolic link. scr_io_create_temp: open a new temporary file
 * (O_EXCL|O_NOFOLLOW), replacing only a stale one of this user's; -1 with a
 * message naming the path when something else is there. */
int scr_io_check_name(const char* path, int allow_own_link);
int scr_io_check_own_dir(const char* path);
int scr_io_create_temp(const char* tmp, mode_t mode);
/* releases a lock taken with scr_io_lock; fd < 0 is ignored */
void scr_io_unlock(int fd);

/* remove what a copy to dst killed before its rename left: "<dst>.tmp.<pid>" */
void scr_io_remove_stale_copies(const char* dst);
/* zlib CRC32 and size of a file's content; either output may be NULL */
int scr_io_crc32_file(const char* path, uint32_t* crc, uint64_t* size);
/* zlib CRC32 of a memory buffer of any length, continuing from crc (start with 0) */
uint32_t scr_io_crc32(uint32_t crc, const void* buf, size_t len);

/* rm -rf that never follows symbolic links: a link is removed, not its target;
 * a missing path is success */
int scr_io_remove_tree(const char* path);

/* size of a file in bytes (following symlinks) */
int scr_io_file_size(const char* path, uint64_t* size);
/* read a whole (small) file into a malloc'd buffer, NUL-terminated for text
 * use (the terminator is not counted in *len); len may be NULL */
int scr_io_read_file(const char* path, char** buf, size_t* len);

#endif
