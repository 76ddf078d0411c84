/* path.c - unit tests of lexical path handling, with the ".." tricks a hostile
 * filemap or index could use to escape the prefix or cache directory. */
#include "config.h"
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "scr_path.h"
#include "tap.h"

/* compare a malloc'd result (NULL allowed) with want (NULL allowed), then free it */
static void check(char* got, const char* want, const char* name)
{
  if (want == NULL) {
    if (!ok(got == NULL, "%s", name)) printf("#   got '%s', want NULL\n", got);
  } else {
    is_str(got, want, "%s", name);
  }
  free(got);
}

int main(void)
{
  check(scr_path_join("a", "b"), "a/b", "join adds one slash");
  check(scr_path_join("a/", "b"), "a/b", "join does not double a trailing slash");
  check(scr_path_join("a", "/etc/passwd"), "/etc/passwd", "join with an absolute second part gives it");
  check(scr_path_join("", "b"), "b", "join with an empty first part gives the second");
  check(scr_path_join("a", ""), "a", "join with an empty second part gives the first");

  check(scr_path_normalize("/a//b/./c/"), "/a/b/c", "normalize collapses //, drops . and a trailing slash");
  check(scr_path_normalize("/a/b/../c"), "/a/c", "normalize resolves ..");
  check(scr_path_normalize("/../../x"), "/x", "normalize never climbs above /");
  check(scr_path_normalize("/"), "/", "normalize keeps the root");
  check(scr_path_normalize("///"), "/", "normalize collapses a root of slashes");
  check(scr_path_normalize("a/../../etc"), "../etc", "normalize keeps a relative path's escaping ..");
  check(scr_path_normalize("../../a/.."), "../..", "normalize keeps leading .. components");
  check(scr_path_normalize("a/.."), ".", "normalize of a path that cancels out is .");
  check(scr_path_normalize(""), ".", "normalize of the empty path is .");
  check(scr_path_normalize("./a/./b"), "a/b", "normalize drops leading ./");
  check(scr_path_normalize("a/...b/..."), "a/...b/...", "names made of dots are ordinary names");

  char* cwd = getcwd(NULL, 0);
  char* want = scr_path_join(cwd, "x/y");
  check(scr_path_absolute("./x//y/z/.."), want, "absolute resolves against the current directory");
  check(scr_path_absolute("/p/../q"), "/q", "absolute of an absolute path normalizes it");
  free(want);
  free(cwd);

  is_int(scr_path_is_safe_relative("a/b.txt"), 1, "a plain relative name is safe");
  is_int(scr_path_is_safe_relative("./a"), 1, "a leading ./ is safe");
  is_int(scr_path_is_safe_relative("a/..b/c.."), 1, "names containing dots are safe");
  is_int(scr_path_is_safe_relative(""), 0, "the empty name is not safe");
  is_int(scr_path_is_safe_relative("/etc/passwd"), 0, "an absolute name is not safe");
  is_int(scr_path_is_safe_relative(".."), 0, "a bare .. is not safe");
  is_int(scr_path_is_safe_relative("a/../../etc"), 0, "an embedded .. is not safe");
  is_int(scr_path_is_safe_relative("a/b/.."), 0, "a trailing .. is not safe");
  is_int(scr_path_is_safe_relative("a//../b"), 0, "a .. after a doubled slash is not safe");

  check(scr_path_relative_to("/p/q", "/p/q/r/s"), "r/s", "relative_to gives the remainder under base");
  check(scr_path_relative_to("/p/q", "/p/q"), ".", "relative_to of base itself is .");
  check(scr_path_relative_to("/p/q/", "/p//q/./r"), "r", "relative_to normalizes both sides");
  check(scr_path_relative_to("/p/q", "/p/qr"), NULL, "a sibling sharing a prefix is not under base");
  check(scr_path_relative_to("/p/q", "/p/q/../x"), NULL, "a path climbing out of base is not under it");
  check(scr_path_relative_to("/p/q", "/p/q/a/../../q/b"), "b", "a path climbing back in is under base");
  check(scr_path_relative_to("/", "/etc/x"), "etc/x", "everything absolute is under /");
  check(scr_path_relative_to("/p", "p/x"), NULL, "a relative path is not under an absolute base");
  check(scr_path_relative_to(".", "a/b"), "a/b", "a relative path is under .");
  check(scr_path_relative_to(".", "a/../../b"), NULL, "a relative path climbing out is not under .");

  check(scr_path_dirname("/a/b/c"), "/a/b", "dirname drops the last component");
  check(scr_path_dirname("/a"), "/", "dirname of a top-level name is /");
  check(scr_path_dirname("a"), ".", "dirname of a bare name is .");
  check(scr_path_dirname("a/b/"), "a", "dirname ignores a trailing slash");
  check(scr_path_dirname("/"), "/", "dirname of / is /");
  check(scr_path_basename("/a/b/c.txt"), "c.txt", "basename gives the last component");
  check(scr_path_basename("a/b/"), "b", "basename ignores a trailing slash");
  check(scr_path_basename("/"), "/", "basename of / is /");
  check(scr_path_basename("name"), "name", "basename of a bare name is itself");
  return tap_done();
}
