/* fault.c - unit tests of SCR_FAULT_KILL: the parser, and that a process dies by
 * SIGKILL exactly at the N-th time it reaches the point, on the rank named only;
 * and of SCR_FAULT_CORRUPT: its parser, and the files it damages there. */
#include "config.h"
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include "scr_fault.h"
#include "tap.h"

static void parses(const char* text, int want, const char* name)
{
  struct scr_fault_spec specs[4];
  is_int(scr_fault_parse(text, specs, 4), want, "%s: '%s'", name, text ? text : "(null)");
}

/* in a child with SCR_FAULT_KILL=spec (and rank `rank` when >= 0): reach
 * `where` up to `times` times; the parent gets the number of times reached
 * before the end and how the child ended (its SIGKILL or its exit) */
static int reach(const char* spec, int rank, const char* pmi, const char* where, int times, int* reached)
{
  int fds[2];
  if (pipe(fds) != 0) return -1;
  pid_t pid = fork();
  if (pid == 0) {
    close(fds[0]);
    setenv("SCR_FAULT_KILL", spec, 1);
    if (pmi) setenv("PMI_RANK", pmi, 1);
    else unsetenv("PMI_RANK");
    if (rank >= 0) scr_fault_set_rank(rank);
    for (int i = 0; i < times; i++) {
      /* one byte per time survived, written before the next point */
      scr_fault_point("other");
      scr_fault_point(where);
      if (write(fds[1], "x", 1) != 1) _exit(3);
    }
    _exit(0);
  }
  close(fds[1]);
  char buf[64];
  ssize_t n;
  *reached = 0;
  while ((n = read(fds[0], buf, sizeof(buf))) > 0) *reached += (int) n;
  close(fds[0]);
  int status = 0;
  waitpid(pid, &status, 0);
  return WIFSIGNALED(status) ? WTERMSIG(status) : 1000 + WEXITSTATUS(status);
}

int main(void)
{
  struct scr_fault_spec s[4];
  is_int(scr_fault_parse("encode:3", s, 4), 1, "one entry");
  is_str(s[0].where, "encode", "its point");
  is_int(s[0].count, 3, "its count");
  is_int(s[0].rank, -1, "no @RANK: every rank");
  is_int(scr_fault_parse("flush:1@5,close:12,complete_x-2:7@0", s, 4), 3, "three entries");
  is_str(s[0].where, "flush", "first point");
  is_int(s[0].rank, 5, "first @RANK");
  is_str(s[1].where, "close", "second point");
  is_int(s[1].count, 12, "second count");
  is_int(s[1].rank, -1, "second without @RANK");
  is_str(s[2].where, "complete_x-2", "names with _ and -");
  is_int(s[2].count, 7, "third count");
  is_int(s[2].rank, 0, "@0 is rank 0");
  parses("", 0, "empty: nothing");
  parses(NULL, 0, "unset: nothing");
  parses("encode", -1, "no count");
  parses("encode:", -1, "empty count");
  parses("encode:0", -1, "count 0");
  parses("encode:-1", -1, "negative count");
  parses("encode:2x", -1, "junk after the count");
  parses("encode:2@", -1, "empty rank");
  parses("encode:2@r", -1, "rank not a number");
  parses(":2", -1, "no name");
  parses("en code:2", -1, "space in the name");
  parses("encode:2,", -1, "trailing comma");
  parses("encode:1234567890", -1, "a count too large");
  parses("a:1,b:1,c:1,d:1,e:1", -1, "more entries than room");
  parses("a_name_that_is_far_too_long_to_fit:1", -1, "name too long");

  int n = 0;
  is_int(reach("open:3", -1, NULL, "open", 10, &n), SIGKILL, "killed by SIGKILL");
  is_int(n, 2, "at the third time, having survived two");
  is_int(reach("open:1", -1, NULL, "open", 10, &n), SIGKILL, "open:1 kills");
  is_int(n, 0, "at the first time");
  is_int(reach("open:11", -1, NULL, "open", 10, &n), 1000, "a count never reached: the process lives");
  is_int(n, 10, "and passed every point");
  is_int(reach("close:2", -1, NULL, "open", 10, &n), 1000, "another point's name does not kill");
  is_int(reach("open:2@3", 3, NULL, "open", 10, &n), SIGKILL, "@3 kills rank 3 (scr_fault_set_rank)");
  is_int(n, 1, "at the second time");
  is_int(reach("open:2@3", 2, NULL, "open", 10, &n), 1000, "@3 spares rank 2");
  is_int(reach("open:2@3", -1, "3", "open", 10, &n), SIGKILL, "@3 kills PMI_RANK=3 before the rank is set");
  is_int(reach("open:2@3", -1, "1", "open", 10, &n), 1000, "@3 spares PMI_RANK=1");
  is_int(reach("open:2@3", -1, NULL, "open", 10, &n), 1000, "@3 spares a process of no known rank");
  is_int(reach("open:5@1,open:3@0", 0, NULL, "open", 10, &n), SIGKILL, "of two entries for a point, the one of this rank");
  is_int(n, 2, "with its own count");
  is_int(reach("open", -1, NULL, "open", 10, &n), 1000, "a malformed value is ignored (and said)");

  is_int(scr_fault_parse_corrupt("encoded:2@1:*/ckpt.3/rank_1.dat,flush:1:*.xor", s, 4), 2, "corrupt: two entries");
  is_str(s[0].where, "encoded", "corrupt: its point");
  is_int(s[0].count, 2, "corrupt: its count");
  is_int(s[0].rank, 1, "corrupt: its rank");
  is_str(s[0].pattern, "*/ckpt.3/rank_1.dat", "corrupt: its pattern");
  is_str(s[1].pattern, "*.xor", "corrupt: the second pattern");
  is_int(s[1].rank, -1, "corrupt: no rank");
  is_int(scr_fault_parse_corrupt("encoded:2", s, 4), -1, "corrupt: a pattern is needed");
  is_int(scr_fault_parse_corrupt("encoded:2:", s, 4), -1, "corrupt: an empty pattern is refused");

  /* a file under a root that the pattern names gets one byte changed, its
   * size kept; another file under it is left alone; the 2nd time only */
  char dir[] = "/tmp/scr-fault-unit.XXXXXX";
  int made = mkdtemp(dir) != NULL;
  ok(made, "a scratch directory");
  if (made) {
    char hit[64], miss[64];
    snprintf(hit, sizeof(hit), "%s/a.dat", dir);
    snprintf(miss, sizeof(miss), "%s/b.dat", dir);
    FILE* f = fopen(hit, "w");
    if (f) { fputs("0123456789", f); fclose(f); }
    f = fopen(miss, "w");
    if (f) { fputs("0123456789", f); fclose(f); }
    const char* roots[] = { dir };
    scr_fault_set_roots(roots, 1);
    pid_t pid = fork();
    if (pid == 0) {
      setenv("SCR_FAULT_CORRUPT", "here:2:*/a.dat", 1);
      unsetenv("SCR_FAULT_KILL");
      scr_fault_point("here");
      _exit(0);
    }
    int status = 0;
    waitpid(pid, &status, 0);
    char got[32] = "";
    f = fopen(hit, "r");
    if (f) { if (!fgets(got, sizeof(got), f)) got[0] = '\0'; fclose(f); }
    is_str(got, "0123456789", "corrupt: not the first time");
    pid = fork();
    if (pid == 0) {
      setenv("SCR_FAULT_CORRUPT", "here:2:*/a.dat", 1);
      scr_fault_point("here");
      scr_fault_point("here");
      _exit(0);
    }
    waitpid(pid, &status, 0);
    f = fopen(hit, "r");
    if (f) { if (!fgets(got, sizeof(got), f)) got[0] = '\0'; fclose(f); }
    is_str(got, "0123446789", "corrupt: the middle byte flipped the second time");
    f = fopen(miss, "r");
    if (f) { if (!fgets(got, sizeof(got), f)) got[0] = '\0'; fclose(f); }
    is_str(got, "0123456789", "corrupt: a file the pattern does not name is left alone");
    unlink(hit);
    unlink(miss);
    rmdir(dir);
  }

  unsetenv("SCR_FAULT_KILL");
  unsetenv("SCR_FAULT_CORRUPT");
  scr_fault_point("open");
  is_int(scr_fault_armed, 0, "unset: after the first point, a point is one untaken branch");
  return tap_done();
}
