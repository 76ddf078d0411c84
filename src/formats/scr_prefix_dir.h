/* scr_prefix_dir.h - the hidden ".scr" directory inside the prefix directory:
 * names of its files, creating it, and the lock files that serialise updates. */
#ifndef SCR_PREFIX_DIR_H
#define SCR_PREFIX_DIR_H

/* name of the hidden directory inside the prefix */
#define SCR_PREFIX_DIR_NAME ".scr"

/* "<prefix>/.scr/<name>" (name NULL: "<prefix>/.scr"), malloc'd; NULL when
 * prefix is NULL or empty or memory runs out */
char* scr_prefix_dir_file(const char* prefix, const char* name);

/* "<prefix>/.scr/attached.<id>/<relpath>": the copy of a file attached to
 * dataset id (the preload layer's pointer files) that every rank and a
 * later run find; relpath NULL: the directory of those copies. malloc'd,
 * NULL as for scr_prefix_dir_file */
char* scr_prefix_dir_attached(const char* prefix, int id, const char* relpath);
/* the record of the CRC32s of those copies, in that directory (see
 * wrappers/scr_preload_pointers.c): no attached file, SCR's own */
#define SCR_PREFIX_DIR_ATTACHED_RECORD ".scr_crc"

/* creates <prefix>/.scr (mode 0755 minus umask) unless it exists; the prefix
 * itself must exist. SCR_ERR_IO (logged) otherwise. */
int scr_prefix_dir_create(const char* prefix);

/* takes an exclusive flock on <prefix>/.scr/<lock_name> (created 0600,
 * creating .scr if missing), waiting for other holders; *fd gets the
 * descriptor to hand to scr_prefix_dir_unlock */
int scr_prefix_dir_lock(const char* prefix, const char* lock_name, int* fd);

/* releases a lock taken with scr_prefix_dir_lock; fd < 0 is ignored */
void scr_prefix_dir_unlock(int fd);

#endif
