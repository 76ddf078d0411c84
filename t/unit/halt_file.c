/* halt_file.c - unit tests of the halt file: each halt condition at a fixed
 * time, TIME parsing, and the locked update/count-down on a scratch prefix. */
#include "config.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include "tap.h"
#include "scr_error.h"
#include "scr_kvtree.h"
#include "scr_halt_file.h"

/* 2024-06-15 12:00:00 UTC */
static const time_t NOW = 1718452800;

static void test_check_conditions(void)
{
  char reason[256];
  scr_kvtree* halt = scr_kvtree_new();

  is_int(scr_halt_file_check(halt, NOW, 0, reason, sizeof(reason)), 0, "no conditions: keep running");

  scr_kvtree_set_kv(halt, "ExitReason", "SCR_HALT");
  is_int(scr_halt_file_check(halt, NOW, 0, reason, sizeof(reason)), 1, "ExitReason set: halt");
  is_str(reason, "halt requested: SCR_HALT", "ExitReason is given as the reason");
  is_int(scr_halt_file_is_immediate(halt), 0, "SCR_HALT is not an immediate halt");
  scr_kvtree_set_kv(halt, "ExitReason", SCR_HALT_REASON_IMMEDIATE);
  is_int(scr_halt_file_is_immediate(halt), 1, "SCR_HALT_IMMEDIATE is an immediate halt");
  scr_kvtree_clear(halt);

  scr_kvtree_set_kv_int(halt, "CheckpointsLeft", 2);
  is_int(scr_halt_file_check(halt, NOW, 0, reason, sizeof(reason)), 0, "checkpoints left: keep running");
  scr_kvtree_set_kv_int(halt, "CheckpointsLeft", 0);
  is_int(scr_halt_file_check(halt, NOW, 0, reason, sizeof(reason)), 1, "CheckpointsLeft 0: halt");
  is_str(reason, "no checkpoints left", "reason names the checkpoint count");
  scr_kvtree_clear(halt);

  scr_kvtree_set_kv_int(halt, "ExitAfter", NOW + 1);
  is_int(scr_halt_file_check(halt, NOW, 0, reason, sizeof(reason)), 0, "before ExitAfter: keep running");
  scr_kvtree_set_kv_int(halt, "ExitAfter", NOW);
  is_int(scr_halt_file_check(halt, NOW, 0, reason, sizeof(reason)), 1, "at ExitAfter: halt");
  is_str(reason, "time is past ExitAfter 2024-06-15 12:00:00", "reason gives the ExitAfter date");
  scr_kvtree_clear(halt);

  scr_kvtree_set_kv_int(halt, "ExitBefore", NOW + 100);
  is_int(scr_halt_file_check(halt, NOW, 50, reason, sizeof(reason)), 0,
         "ExitBefore beyond the margin: keep running");
  is_int(scr_halt_file_check(halt, NOW, 100, reason, sizeof(reason)), 1,
         "within SCR_HALT_SECONDS of ExitBefore: halt");
  is_str(reason, "less than 100 seconds before ExitBefore 2024-06-15 12:01:40",
         "reason gives the margin and the ExitBefore date");
  scr_kvtree_set_kv_int(halt, "HaltSeconds", 200);
  is_int(scr_halt_file_check(halt, NOW, 0, reason, sizeof(reason)), 1,
         "HaltSeconds in the file overrides the argument");
  scr_kvtree_set_kv_int(halt, "HaltSeconds", 10);
  is_int(scr_halt_file_check(halt, NOW, 500, reason, sizeof(reason)), 0,
         "a smaller HaltSeconds in the file also overrides the argument");
  scr_kvtree_clear(halt);

  scr_kvtree_set_kv_int(halt, "ExitAfter", NOW);
  is_int(scr_halt_file_check(halt, NOW, 0, NULL, 0), 1, "a NULL reason buffer is allowed");
  scr_kvtree_delete(&halt);
}

static void test_parse_time(void)
{
  time_t when = 0;

  ok(scr_halt_file_parse_time("@1718452800", NOW, &when) == SCR_SUCCESS && when == 1718452800,
     "@EPOCH is taken as is");
  ok(scr_halt_file_parse_time("+30m", NOW, &when) == SCR_SUCCESS && when == NOW + 1800, "+30m is 30 minutes on");
  ok(scr_halt_file_parse_time("+2h", NOW, &when) == SCR_SUCCESS && when == NOW + 7200, "+2h is 2 hours on");
  ok(scr_halt_file_parse_time("+90s", NOW, &when) == SCR_SUCCESS && when == NOW + 90, "+90s is 90 seconds on");
  ok(scr_halt_file_parse_time("+1d", NOW, &when) == SCR_SUCCESS && when == NOW + 86400, "+1d is a day on");
  ok(scr_halt_file_parse_time("2024-06-15 13:30", NOW, &when) == SCR_SUCCESS && when == NOW + 5400,
     "YYYY-MM-DD HH:MM is local time");
  ok(scr_halt_file_parse_time("2024-06-16T13:30:15", NOW, &when) == SCR_SUCCESS &&
     when == NOW + 86400 + 5415, "YYYY-MM-DDTHH:MM:SS with seconds");
  ok(scr_halt_file_parse_time("13:00", NOW, &when) == SCR_SUCCESS && when == NOW + 3600,
     "HH:MM later today is today");
  ok(scr_halt_file_parse_time("11:00", NOW, &when) == SCR_SUCCESS && when == NOW + 23 * 3600,
     "HH:MM already past is tomorrow");
  ok(scr_halt_file_parse_time("12:00", NOW, &when) == SCR_SUCCESS && when == NOW + 86400,
     "HH:MM equal to now is tomorrow");

  static const char* const bad[] = {
    "", "tomorrow", "+30", "+m", "+30x", "+-5m", "2024-02-30 10:00", "2024-13-01 10:00",
    "2024-06-15", "25:00", "12:60", "12:00 ", "@", "@12x", "2024-06-15 12:00:00:00",
    "+99999999999999999999d"
  };
  for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
    time_t untouched = 42;
    ok(scr_halt_file_parse_time(bad[i], NOW, &untouched) == SCR_ERR_INVALID && untouched == 42,
       "'%s' is rejected", bad[i]);
  }
}

static int set_conditions(scr_kvtree* halt, void* arg)
{
  (void) arg;
  scr_kvtree_set_kv(halt, "ExitReason", "testing");
  scr_kvtree_set_kv_int(halt, "CheckpointsLeft", 2);
  return SCR_SUCCESS;
}

static int refuse(scr_kvtree* halt, void* arg)
{
  (void) arg;
  scr_kvtree_clear(halt);
  return SCR_ERR_INVALID;
}

static int unset_reason(scr_kvtree* halt, void* arg)
{
  (void) arg;
  scr_kvtree_unset(halt, "ExitReason");
  return SCR_SUCCESS;
}

static int clear_all(scr_kvtree* halt, void* arg)
{
  (void) arg;
  scr_kvtree_clear(halt);
  return SCR_SUCCESS;
}

static void test_file(const char* prefix)
{
  struct stat st;
  long long value = -1;
  char* path = scr_halt_file_path(prefix);
  char scr_dir[4096];
  snprintf(scr_dir, sizeof(scr_dir), "%s/.scr", prefix);

  char expected[4096];
  snprintf(expected, sizeof(expected), "%s/.scr/halt.scr", prefix);
  is_str(path, expected, "halt file lives in <prefix>/.scr");

  scr_kvtree* halt = scr_kvtree_new();
  is_int(scr_halt_file_read(prefix, halt), SCR_SUCCESS, "reading a missing halt file succeeds");
  is_int(scr_kvtree_size(halt), 0, "a missing halt file reads as no conditions");

  is_int(scr_halt_file_count_checkpoint(prefix), SCR_SUCCESS, "counting without a halt file succeeds");
  ok(stat(scr_dir, &st) != 0, "counting without a halt file creates nothing");

  is_int(scr_halt_file_update(prefix, set_conditions, NULL), SCR_SUCCESS, "update writes conditions");
  scr_kvtree_clear(halt);
  is_int(scr_halt_file_read(prefix, halt), SCR_SUCCESS, "the updated file reads back");
  is_str(scr_kvtree_get_val(halt, "ExitReason"), "testing", "ExitReason survives the round trip");
  char lock[4096];
  snprintf(lock, sizeof(lock), "%s/.scr/halt.scr.lock", prefix);
  ok(stat(lock, &st) == 0 && (st.st_mode & 0777) == 0600, "lock file is created with mode 0600");

  is_int(scr_halt_file_update(prefix, refuse, NULL), SCR_ERR_INVALID,
         "update returns the callback's error");
  scr_kvtree_clear(halt);
  scr_halt_file_read(prefix, halt);
  is_int(scr_kvtree_size(halt), 2, "a refused update leaves the file as it was");

  is_int(scr_halt_file_count_checkpoint(prefix), SCR_SUCCESS, "counting a checkpoint succeeds");
  scr_kvtree_clear(halt);
  scr_halt_file_read(prefix, halt);
  scr_kvtree_get_int(halt, "CheckpointsLeft", &value);
  is_int(value, 1, "counting a checkpoint decrements CheckpointsLeft");
  scr_halt_file_count_checkpoint(prefix);
  scr_halt_file_count_checkpoint(prefix);
  scr_kvtree_clear(halt);
  scr_halt_file_read(prefix, halt);
  scr_kvtree_get_int(halt, "CheckpointsLeft", &value);
  is_int(value, 0, "CheckpointsLeft stops at 0");

  scr_halt_file_update(prefix, unset_reason, NULL);
  scr_kvtree_clear(halt);
  scr_halt_file_read(prefix, halt);
  ok(scr_kvtree_get(halt, "ExitReason") == NULL && scr_kvtree_get(halt, "CheckpointsLeft") != NULL,
     "update can unset one condition and keep the others");

  is_int(scr_halt_file_update(prefix, clear_all, NULL), SCR_SUCCESS, "clearing every condition succeeds");
  ok(stat(path, &st) != 0, "an empty halt tree removes the file");

  scr_kvtree_delete(&halt);
  free(path);
  unlink(lock);
  rmdir(scr_dir);
}

int main(void)
{
  /* dates in reasons and TIME arguments are local time: pin the zone */
  setenv("TZ", "UTC", 1);
  tzset();

  test_check_conditions();
  test_parse_time();

  char prefix[] = "/tmp/scr-halt-file.XXXXXX";
  if (mkdtemp(prefix) == NULL) {
    perror("mkdtemp");
    return 1;
  }
  test_file(prefix);
  rmdir(prefix);
  return tap_done();
}
