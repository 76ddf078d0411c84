/* scr_path.c - lexical path handling: join, normalize, relative names.
 * Purely textual so results do not depend on what exists on disk. */
#include "config.h"
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "scr_path.h"

char* scr_path_join(const char* a, const char* b)
{
  if (a == NULL || b == NULL) return NULL;
  if (b[0] == '/' || a[0] == '\0') return strdup(b);
  if (b[0] == '\0') return strdup(a);
  size_t la = strlen(a), lb = strlen(b);
  int slash = a[la - 1] != '/';
  char* out = malloc(la + (size_t) slash + lb + 1);
  if (out == NULL) return NULL;
  memcpy(out, a, la);
  if (slash) out[la] = '/';
  memcpy(out + la + (size_t) slash, b, lb + 1);
  return out;
}

char* scr_path_normalize(const char* path)
{
  if (path == NULL) return NULL;
  size_t len = strlen(path);
  int absolute = path[0] == '/';
  /* the result is never longer than the input, plus room for "." or "/" */
  char* out = malloc(len + 2);
  if (out == NULL) return NULL;
  size_t n = 0;      /* bytes of out in use, excluding the leading "/" */
  size_t floor = 0;  /* leading "../" components a relative path cannot drop */
  char* base = out + absolute;
  const char* p = path;
  while (*p) {
    while (*p == '/') p++;
    if (*p == '\0') break;
    const char* end = strchr(p, '/');
    size_t clen = end ? (size_t) (end - p) : strlen(p);
    if (clen == 1 && p[0] == '.') {
      /* "." adds nothing */
    } else if (clen == 2 && p[0] == '.' && p[1] == '.') {
      if (n > floor) {
        /* drop the last component */
        while (n > 0 && base[n - 1] != '/') n--;
        if (n > 0) n--;
      } else if (!absolute) {
        /* nothing left to cancel: a relative path keeps its ".." */
        if (n > 0) base[n++] = '/';
        memcpy(base + n, "..", 2);
        n += 2;
        floor = n;
      }
      /* absolute: ".." at the root stays at the root */
    } else {
      if (n > 0) base[n++] = '/';
      memcpy(base + n, p, clen);
      n += clen;
    }
    p += clen;
  }
  if (absolute) {
    out[0] = '/';
    out[1 + n] = '\0';
  } else if (n == 0) {
    strcpy(out, ".");
  } else {
    out[n] = '\0';
  }
  return out;
}

char* scr_path_absolute(const char* path)
{
  if (path == NULL) return NULL;
  if (path[0] == '/') return scr_path_normalize(path);
  char* cwd = getcwd(NULL, 0);
  if (cwd == NULL) return NULL;
  char* joined = scr_path_join(cwd, path);
  free(cwd);
  char* out = scr_path_normalize(joined);
  free(joined);
  return out;
}

int scr_path_is_safe_relative(const char* rel)
{
  if (rel == NULL || rel[0] == '\0' || rel[0] == '/') return 0;
  const char* p = rel;
  while (*p) {
    const char* end = strchr(p, '/');
    size_t clen = end ? (size_t) (end - p) : strlen(p);
    if (clen == 2 && p[0] == '.' && p[1] == '.') return 0;
    p += clen;
    while (*p == '/') p++;
  }
  return 1;
}

char* scr_path_relative_to(const char* base, const char* path)
{
  if (base == NULL || path == NULL) return NULL;
  if ((base[0] == '/') != (path[0] == '/')) return NULL;
  char* nbase = scr_path_normalize(base);
  char* npath = scr_path_normalize(path);
  char* out = NULL;
  if (nbase == NULL || npath == NULL) goto done;
  size_t lb = strlen(nbase);
  if (strcmp(nbase, npath) == 0) {
    out = strdup(".");
  } else if (strcmp(nbase, "/") == 0) {
    out = strdup(npath + 1);
  } else if (strcmp(nbase, ".") == 0) {
    /* every relative path is "under" the current directory, except ones that climb out */
    if (!(npath[0] == '.' && npath[1] == '.' && (npath[2] == '/' || npath[2] == '\0'))) {
      out = strdup(npath);
    }
  } else if (strncmp(nbase, npath, lb) == 0 && npath[lb] == '/') {
    out = strdup(npath + lb + 1);
  }
done:
  free(nbase);
  free(npath);
  return out;
}

int scr_path_is_within(const char* path, const char* base)
{
  char* rel = scr_path_relative_to(base, path);
  int within = rel != NULL;
  free(rel);
  return within;
}

char* scr_path_dirname(const char* path)
{
  char* norm = scr_path_normalize(path);
  if (norm == NULL) return NULL;
  char* slash = strrchr(norm, '/');
  if (slash == NULL) {
    free(norm);
    return strdup(".");
  }
  if (slash == norm) slash[1] = '\0';
  else *slash = '\0';
  return norm;
}

char* scr_path_basename(const char* path)
{
  char* norm = scr_path_normalize(path);
  if (norm == NULL) return NULL;
  char* slash = strrchr(norm, '/');
  if (slash == NULL || slash[1] == '\0') return norm;
  char* out = strdup(slash + 1);
  free(norm);
  return out;
}
