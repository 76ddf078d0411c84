/* scr_kvtree.h - the key-value tree ("hash" in the SCR developer guide): every
 * internal file and message is one. Keys are strings; each value is a subtree. */
#ifndef SCR_KVTREE_H
#define SCR_KVTREE_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

typedef struct scr_kvtree scr_kvtree;
typedef struct scr_kvtree_elem scr_kvtree_elem;

/* a count of every change to any tree of the process (children linked,
 * unlinked or replaced, trees cleared or sorted): equal before and after
 * means that no tree changed in between */
unsigned long scr_kvtree_changes(void);

/* --- construction --- */
scr_kvtree* scr_kvtree_new(void);
/* frees the tree and its subtrees, sets *tree to NULL; NULL-safe */
void scr_kvtree_delete(scr_kvtree** tree);
/* deep copy */
scr_kvtree* scr_kvtree_copy(const scr_kvtree* tree);
/* number of direct children */
int scr_kvtree_size(const scr_kvtree* tree);
/* remove every child */
void scr_kvtree_clear(scr_kvtree* tree);

/* --- single-level access --- */
/* subtree under key, or NULL */
scr_kvtree* scr_kvtree_get(const scr_kvtree* tree, const char* key);
/* attach value under key (the tree takes ownership; an existing subtree
 * under key is freed and replaced); returns value */
scr_kvtree* scr_kvtree_set(scr_kvtree* tree, const char* key, scr_kvtree* value);
/* subtree under key, created empty if missing */
scr_kvtree* scr_kvtree_get_or_create(scr_kvtree* tree, const char* key);
/* remove key and its subtree; SCR_SUCCESS even if absent */
int scr_kvtree_unset(scr_kvtree* tree, const char* key);

/* --- key/value pairs: tree[key] holds exactly one child, the value --- */
/* tree[key] = { value: {} }, replacing what was under key; returns the value subtree */
scr_kvtree* scr_kvtree_set_kv(scr_kvtree* tree, const char* key, const char* value);
scr_kvtree* scr_kvtree_set_kv_int(scr_kvtree* tree, const char* key, long long value);
scr_kvtree* scr_kvtree_set_kv_uint64(scr_kvtree* tree, const char* key, uint64_t value);
scr_kvtree* scr_kvtree_set_kv_double(scr_kvtree* tree, const char* key, double value);
scr_kvtree* scr_kvtree_set_kvf(scr_kvtree* tree, const char* key, const char* fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* first child key of tree[key], or NULL */
const char* scr_kvtree_get_val(const scr_kvtree* tree, const char* key);
/* parse the value; SCR_SUCCESS, SCR_ERR_NOENT if absent, SCR_ERR_INVALID if not a number */
int scr_kvtree_get_int(const scr_kvtree* tree, const char* key, long long* value);
int scr_kvtree_get_uint64(const scr_kvtree* tree, const char* key, uint64_t* value);
int scr_kvtree_get_double(const scr_kvtree* tree, const char* key, double* value);

/* --- multi-valued keys: tree[key] = { v1: {...}, v2: {...} } --- */
/* tree[key][value], or NULL */
scr_kvtree* scr_kvtree_get_kv(const scr_kvtree* tree, const char* key, const char* value);
scr_kvtree* scr_kvtree_get_kv_int(const scr_kvtree* tree, const char* key, long long value);
/* tree[key][value], created empty if missing; other values under key are kept */
scr_kvtree* scr_kvtree_add_kv(scr_kvtree* tree, const char* key, const char* value);
scr_kvtree* scr_kvtree_add_kv_int(scr_kvtree* tree, const char* key, long long value);
/* remove tree[key][value]; removes key too when it becomes empty */
int scr_kvtree_unset_kv(scr_kvtree* tree, const char* key, const char* value);
int scr_kvtree_unset_kv_int(scr_kvtree* tree, const char* key, long long value);

/* --- whole-tree operations --- */
/* deep-merge src into dst: keys of src override/extend dst (src unchanged) */
int scr_kvtree_merge(scr_kvtree* dst, const scr_kvtree* src);
/* order children by key: as strings, or as integers (non-numbers last) */
enum { SCR_KVTREE_SORT_ASCENDING = 0, SCR_KVTREE_SORT_DESCENDING = 1 };
void scr_kvtree_sort(scr_kvtree* tree, int direction);
void scr_kvtree_sort_int(scr_kvtree* tree, int direction);
/* largest / smallest integer key among children; SCR_ERR_NOENT if none */
int scr_kvtree_max_int_key(const scr_kvtree* tree, long long* key);
int scr_kvtree_min_int_key(const scr_kvtree* tree, long long* key);

/* --- iteration in insertion (or sorted) order --- */
scr_kvtree_elem* scr_kvtree_first(const scr_kvtree* tree);
scr_kvtree_elem* scr_kvtree_next(const scr_kvtree_elem* elem);
const char* scr_kvtree_elem_key(const scr_kvtree_elem* elem);
/* key parsed as integer (0 if it is not one) */
long long scr_kvtree_elem_key_int(const scr_kvtree_elem* elem);
scr_kvtree* scr_kvtree_elem_tree(const scr_kvtree_elem* elem);
/* first child key of the element's subtree (the "value" of a kv pair), or NULL */
const char* scr_kvtree_elem_val(const scr_kvtree_elem* elem);

/* --- serialisation (portable: fixed byte order, no pointers) --- */
/* bytes scr_kvtree_pack will write */
size_t scr_kvtree_pack_size(const scr_kvtree* tree);
/* writes into buf (at least pack_size bytes); returns bytes written */
size_t scr_kvtree_pack(const scr_kvtree* tree, void* buf);
/* merges the packed tree into tree; SCR_ERR_CORRUPT on malformed or short input,
 * never reads past buf+len. *used (may be NULL) gets the bytes consumed. */
int scr_kvtree_unpack(const void* buf, size_t len, scr_kvtree* tree, size_t* used);

/* --- files: header with magic, type, version, size, CRC32; atomic write --- */
/* write temp file in the same directory, fsync, rename, fsync directory; mode 0600.
 * A symbolic link or another user's file at path or at the temporary name is
 * refused with a message naming it (SCR_ERR_SECURITY), never followed. */
int scr_kvtree_write_file(const char* path, const scr_kvtree* tree);
/* the same; shared: mode 0666 less the umask, as the program's own files
 * get (SCR's files on the prefix directory), else 0600 */
int scr_kvtree_write_file_mode(const char* path, const scr_kvtree* tree, int shared);
/* merge the file into tree; SCR_ERR_NOENT if missing, SCR_ERR_CORRUPT on bad
 * magic/version/size/CRC (message logged naming the path) */
int scr_kvtree_read_file(const char* path, scr_kvtree* tree);
/* same, but when the file does not exist leaves tree untouched and returns SCR_SUCCESS */
int scr_kvtree_read_file_if_exists(const char* path, scr_kvtree* tree);

/* --- text --- */
/* indented tree, one key per line; a key whose subtree is a single leaf is
 * printed "KEY = VALUE" on one line */
void scr_kvtree_print(const scr_kvtree* tree, FILE* out);

#endif
