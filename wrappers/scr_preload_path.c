/* scr_preload_path.c - lexical path normalization into a fixed buffer for the
 * wrappers' match path, where allocating is not allowed. */
#include "config.h"
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>
#include "scr_preload_hooks.h"
#include "scr_preload_path.h"
#include "scr_preload_rules.h"

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

/* the engine's mirror of virtual directories and the directory it shows
 * (scr_preload_hooks_view_mirror); mirror_length 0: none. Set at MPI_Init
 * and cleared at MPI_Finalize, so a reader sees either nothing or both. */
static char mirror_path[PATH_MAX], mirror_shown_as[PATH_MAX];
static size_t mirror_length = 0;

void scr_preload_hooks_view_mirror(const char* mirror, const char* shown_as)
{
  __atomic_store_n(&mirror_length, 0, __ATOMIC_RELEASE);
  if (!mirror || !shown_as || strlen(mirror) >= sizeof(mirror_path) || strlen(shown_as) >= sizeof(mirror_shown_as))
    return;
  strcpy(mirror_path, mirror);
  strcpy(mirror_shown_as, shown_as);
  __atomic_store_n(&mirror_length, strlen(mirror), __ATOMIC_RELEASE);
}

size_t scr_preload_path_mirror(char* out, size_t size)
{
  size_t m = __atomic_load_n(&mirror_length, __ATOMIC_ACQUIRE);
  if (m == 0 || m >= size) return 0;
  memcpy(out, mirror_path, m);
  out[m] = '\0';
  return m;
}

/* 1 when the absolute path out[0 .. used) lies in the mirror */
static int path_in_mirror(const char* out, size_t used)
{
  size_t m = __atomic_load_n(&mirror_length, __ATOMIC_ACQUIRE);
  return m != 0 && used >= m && memcmp(out, mirror_path, m) == 0 && (out[m] == '/' || out[m] == '\0');
}

/* a resolved path inside the mirror named back as the application knows it
 * (a descriptor of a mirrored directory, or a current directory inside one) */
static size_t path_unmirror(char* out, size_t used, size_t size)
{
  if (!path_in_mirror(out, used)) return used;
  size_t m = __atomic_load_n(&mirror_length, __ATOMIC_ACQUIRE);
  size_t shown = strlen(mirror_shown_as), rest = used - m;
  if (shown + rest + 1 > size) return 0;
  memmove(out + shown, out + m, rest + 1);
  memcpy(out, mirror_shown_as, shown);
  return shown + rest;
}

/* the directory a relative path starts from, as the kernel names it, into
 * out: the current one or dirfd's; its length, 0 when it cannot be had */
static size_t path_base(int dirfd, char* out, size_t size)
{
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
  return length > 0 && out[0] == '/' ? length : 0;
}

/* resolve, and *mirrored = 1 when the directory a relative path starts
 * from lies in the mirror. That directory is named back before path is
 * applied, so that ".." out of the mirror's top leads where it does from the
 * directory the mirror stands for (the prefix directory's parent), not into
 * the cache. */
static size_t path_resolve(int dirfd, const char* path, char* out, size_t size, int* mirrored)
{
  *mirrored = 0;
  if (!path || path[0] == '\0') return 0;
  if (path[0] == '/') return scr_preload_path_normalize(NULL, path, out, size);

  /* the base goes into out first, then is normalized together with path;
   * normalizing never makes the text longer than base + '/' + path */
  size_t base = path_base(dirfd, out, size);
  if (base == 0) return 0;
  *mirrored = path_in_mirror(out, base);
  if (*mirrored && path_unmirror(out, base, size) == 0) return 0;

  size_t used = 1;
  if (!path_append(out, &used, size, out + 1) || !path_append(out, &used, size, path)) return 0;
  out[used] = '\0';
  return path_unmirror(out, used, size);
}

size_t scr_preload_path_resolve(int dirfd, const char* path, char* out, size_t size)
{
  int mirrored;
  return path_resolve(dirfd, path, out, size, &mirrored);
}

size_t scr_preload_path_resolve_mirrored(int dirfd, const char* path, char* out, size_t size)
{
  int mirrored;
  size_t length = path_resolve(dirfd, path, out, size, &mirrored);
  return mirrored ? length : 0;
}

/* the link out[0 .. used) names (lstat said it is one) spliced into the path
 * still to walk, rest: rest becomes target + '/' + rest. 0 when it does
 * not fit or cannot be read */
static int follow_splice(const char* link, char* rest, size_t rest_size)
{
  char target[PATH_MAX];
  ssize_t n = readlink(link, target, sizeof(target) - 1);
  if (n <= 0) return 0;
  size_t tail = strlen(rest);
  if ((size_t) n + 1 + tail + 1 > rest_size) return 0;
  memmove(rest + n + 1, rest, tail + 1);
  memcpy(rest, target, (size_t) n);
  rest[n] = '/';
  return 1;
}

size_t scr_preload_path_follow(int dirfd, const char* path, int follow_last, const char* trusted, char* out,
                               size_t size)
{
  size_t trusted_length = trusted ? strlen(trusted) : 0;
  if (!path || path[0] == '\0' || size < 2) return 0;
  size_t used = 1;
  out[0] = '/';
  if (path[0] != '/' && (used = path_base(dirfd, out, size)) == 0) return 0;
  char rest[2 * PATH_MAX];
  size_t length = strlen(path);
  if (length >= sizeof(rest)) return 0;
  memcpy(rest, path, length + 1);
  int saved_errno = errno, links = 0, exists = 1;
  const char* s = rest;
  while (*s) {
    while (*s == '/') s++;
    const char* end = s;
    while (*end && *end != '/') end++;
    size_t n = (size_t) (end - s);
    if (n == 0) break;
    const char* after = end;
    while (*after == '/') after++;
    if (n == 1 && s[0] == '.') {
      s = end;
      continue;
    }
    if (n == 2 && s[0] == '.' && s[1] == '.') {
      while (used > 1 && out[used - 1] != '/') used--;
      if (used > 1) used--;
      s = end;
      continue;
    }
    size_t holder = used; /* the directory that holds this component */
    if (used + 1 + n + 1 > size) break;
    if (used > 1) out[used++] = '/';
    memcpy(out + used, s, n);
    used += n;
    out[used] = '\0';
    s = end;
    /* a trailing '/' asks for a directory: the link is followed */
    if (!exists || (*after == '\0' && *end == '\0' && !follow_last)) continue;
    /* a directory on the way to the trusted one */
    if (used < trusted_length && memcmp(out, trusted, used) == 0 && trusted[used] == '/') continue;
    struct stat st;
    if (syscall(SYS_newfstatat, AT_FDCWD, out, &st, AT_SYMLINK_NOFOLLOW) != 0) {
      exists = 0;
      continue;
    }
    if (!S_ISLNK(st.st_mode)) continue;
    /* the link's target replaces it: from the root when absolute, else
     * from the directory that holds the link; the rest follows */
    memmove(rest, after, strlen(after) + 1);
    if (++links > 40 || !follow_splice(out, rest, sizeof(rest))) {
      links = 0;
      break;
    }
    used = rest[0] == '/' ? 1 : holder;
    s = rest;
  }
  /* a '/' that ends the path asks for a directory, of the call made again too */
  if (!*s && used > 1 && path[length - 1] == '/' && used + 1 < size) out[used++] = '/';
  out[used] = '\0';
  errno = saved_errno;
  if (links == 0 || *s) return 0;
  return path_unmirror(out, used, size);
}

/* the high bit of each byte of w that equals c, exactly (no borrow between
 * bytes, so that every match counts, not only the first) */
static inline uint64_t scan_bytes(uint64_t w, unsigned char c)
{
  const uint64_t low7 = 0x7f7f7f7f7f7f7f7full;
  uint64_t x = w ^ (0x0101010101010101ull * c);
  return ~(((x & low7) + low7) | x | low7);
}

/* reads whole aligned words, up to 7 bytes past the terminating NUL but
 * never past the page that holds it: a sanitizer would call that an overflow */
__attribute__((no_sanitize_address)) SCR_PRELOAD_HOT size_t scr_preload_path_scan(const char* path, size_t* name,
                                                                                  int* odd)
{
  uintptr_t address = (uintptr_t) path;
  const uint64_t* word = (const uint64_t*) (address & ~(uintptr_t) 7);
  size_t skip = address & 7;   /* bytes of the first word before path */
  uint64_t w = *word;
  if (skip) {
    /* those bytes read as ordinary characters */
    uint64_t before = ~(~0ull << (8 * skip));
    w = (w & ~before) | (0x4141414141414141ull & before);
  }
  size_t base = 0;             /* offset of the word's first byte from the word path starts in */
  size_t last_slash = (size_t) -1;
  uint64_t strange = 0, carry = 0;
  for (;;) {
    uint64_t zero = scan_bytes(w, 0), slash = scan_bytes(w, '/'), dot = scan_bytes(w, '.');
    if (zero) {
      /* only the bytes before the first NUL count */
      uint64_t valid = ((zero & -zero) >> 7) - 1;
      slash &= valid;
      dot &= valid;
    }
    strange |= ((slash << 8) | carry) & (slash | dot);
    carry = (slash >> 56) & 0x80;
    if (slash) last_slash = base + (size_t) (63 - __builtin_clzll(slash)) / 8;
    if (zero) {
      size_t length = base + (size_t) __builtin_ctzll(zero) / 8 - skip;
      *name = last_slash == (size_t) -1 ? 0 : last_slash - skip + 1;
      *odd = strange != 0 || (length > 1 && path[length - 1] == '/');
      return length;
    }
    base += 8;
    w = *++word;
  }
}
