/* scr_preload_path.c - lexical path normalization into a fixed buffer for the
 * wrappers' match path, where allocating is not allowed. */
#include "config.h"
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include "scr_preload_path.h"

/* append the components of s to the absolute path out[0 .. *used), which has
 * no trailing '/' except for the root; 0 when it does not fit. One pass, byte
 * by byte: paths are short, and this runs on every open while rules are loaded.
 * s may lie inside out (resolve), since writing never overtakes reading. */
static int path_append(char* out, size_t* used, size_t size, const char* s)
{
  size_t n = *used;
  while (*s) {
    if (*s == '/') {
      s++;
    } else if (s[0] == '.' && (s[1] == '/' || s[1] == '\0')) {
      s++;
    } else if (s[0] == '.' && s[1] == '.' && (s[2] == '/' || s[2] == '\0')) {
      while (n > 1 && out[n - 1] != '/') n--;
      if (n > 1) n--;   /* the '/' before the dropped component, unless it is the root */
      s += 2;
    } else {
      if (n > 1) {
        if (n + 1 >= size) return 0;
        out[n++] = '/';
      }
      while (*s && *s != '/') {
        if (n + 1 >= size) return 0;
        out[n++] = *s++;
      }
    }
  }
  *used = n;
  return 1;
}

size_t scr_preload_path_normalize(const char* base, const char* path, char* out, size_t size)
{
  if (!path || path[0] == '\0' || size < 2) return 0;
  size_t used = 1;
  out[0] = '/';
  if (path[0] != '/') {
    if (!base || base[0] != '/' || !path_append(out, &used, size, base)) return 0;
  }
  if (!path_append(out, &used, size, path)) return 0;
  out[used] = '\0';
  return used;
}

size_t scr_preload_path_resolve(int dirfd, const char* path, char* out, size_t size)
{
  if (!path || path[0] == '\0') return 0;
  if (path[0] == '/') return scr_preload_path_normalize(NULL, path, out, size);

  /* the base goes into out first, then is normalized together with path;
   * normalizing never makes the text longer than base + '/' + path */
  int saved_errno = errno;
  size_t length = 0;
  if (dirfd == AT_FDCWD) {
    if (getcwd(out, size)) length = strlen(out);
  } else {
    char link[32];
    snprintf(link, sizeof(link), "/proc/self/fd/%d", dirfd);
    ssize_t n = readlink(link, out, size - 1);
    if (n > 0) {
      out[n] = '\0';
      length = (size_t) n;
    }
  }
  errno = saved_errno;
  if (length == 0 || out[0] != '/') return 0;

  size_t used = 1;
  if (!path_append(out, &used, size, out + 1) || !path_append(out, &used, size, path)) return 0;
  out[used] = '\0';
  return used;
}
