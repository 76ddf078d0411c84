/* scr_path.h - lexical path handling: join, normalize, relative names, and the
 * check that a name read from a file cannot escape the directory it belongs to. */
#ifndef SCR_PATH_H
#define SCR_PATH_H

/* Every char* returned is malloc'd (free it) and NULL only on bad input or
 * out of memory; nothing here touches the file system except scr_path_absolute
 * (which asks for the current directory). */

/* a/b; b when b is absolute; the other one when either is empty */
char* scr_path_join(const char* a, const char* b);
/* collapse "//", drop ".", resolve ".." lexically without going above "/";
 * a relative path stays relative and keeps leading ".."; "" and "a/.." give "." */
char* scr_path_normalize(const char* path);
/* path made absolute against the current directory, then normalized */
char* scr_path_absolute(const char* path);
/* 1 if rel is non-empty, not absolute and has no ".." component, else 0 */
int scr_path_is_safe_relative(const char* rel);
/* path relative to base when path is base or lies under it ("." for base
 * itself), else NULL; both are normalized first and must both be absolute
 * or both relative */
char* scr_path_relative_to(const char* base, const char* path);
/* 1 if path is base or lies under it (scr_path_relative_to succeeds), else 0 */
int scr_path_is_within(const char* path, const char* base);
/* directory part and last component of the normalized path, as dirname(1)
 * and basename(1): "a" -> "." and "a", "/" -> "/" and "/" */
char* scr_path_dirname(const char* path);
char* scr_path_basename(const char* path);

#endif
