/* scr_halt.c - the scr_halt command: sets, lists and clears the conditions in
 * <prefix>/.scr/halt.scr under which a running or future SCR job stops. */
#include "config.h"
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include "scr_error.h"
#include "scr_log.h"
#include "scr_kvtree.h"
#include "scr_halt_file.h"
#include "scr_param.h"

/* exit codes: 1 when the work failed, 2 when the command line was wrong,
 * 3 when --check finds no condition met (1 would hide a broken halt file) */
enum { SCR_HALT_EXIT_FAILED = 1, SCR_HALT_EXIT_USAGE = 2, SCR_HALT_EXIT_NOT_MET = 3 };

/* what the command line asks of the halt file */
struct scr_halt_request {
  const char* reason;          /* ExitReason to set, or NULL */
  int set_checkpoints;
  long long checkpoints;
  int set_before;
  time_t before;
  int set_after;
  time_t after;
  int set_seconds;
  long long seconds;
  int unset_reason;
  int unset_checkpoints;
  int unset_before;
  int unset_after;
  int unset_seconds;
  int remove;
  int list;
  int check;
};

static void scr_halt_usage(FILE* out)
{
  fprintf(out,
    "Usage: scr_halt [options] [PREFIX]\n"
    "Set, list or clear the conditions under which an SCR job in PREFIX halts\n"
    "(default: $SCR_PREFIX, else the current directory).\n"
    "Without a condition option, the job halts after its next checkpoint.\n"
    "\n"
    "  -c, --checkpoints N     halt after N more checkpoints\n"
    "  -b, --before TIME       halt before TIME (less --seconds, or SCR_HALT_SECONDS)\n"
    "  -a, --after TIME        halt once TIME is reached\n"
    "  -s, --seconds N         margin in seconds kept before --before TIME\n"
    "  -i, --immediate         halt at the job's next SCR call, without waiting\n"
    "                          for a checkpoint\n"
    "  -l, --list              print the conditions now set\n"
    "  -k, --check             exit 0 when a condition is met now (a job would\n"
    "                          halt: scr_run does not launch again), else 3\n"
    "      --unset-checkpoints, --unset-before, --unset-after,\n"
    "      --unset-seconds, --unset-reason\n"
    "                          clear one condition\n"
    "  -r, --remove            delete the halt file (clears every condition)\n"
    "  -h, --help              print this help\n"
    "\n"
    "TIME is \"YYYY-MM-DD HH:MM[:SS]\", \"HH:MM[:SS]\" (its next occurrence),\n"
    "\"@EPOCH\" (seconds since 1970), or \"+N\" with unit s, m, h or d (\"+2h\").\n"
    "\n"
    "Exit status: 0 on success, 1 when the halt file could not be read or written,\n"
    "2 on a usage error, 3 when --check finds no condition met.\n");
}

/* a non-negative integer option value, or -1 */
static long long scr_halt_parse_count(const char* text)
{
  char* end = NULL;
  if (text[0] < '0' || text[0] > '9') return -1;
  errno = 0;
  long long value = strtoll(text, &end, 10);
  if (errno != 0 || *end != '\0') return -1;
  return value;
}

static int scr_halt_apply(scr_kvtree* halt, void* arg)
{
  const struct scr_halt_request* request = arg;

  if (request->remove) {
    scr_kvtree_clear(halt);
    return SCR_SUCCESS;
  }

  if (request->unset_reason) scr_kvtree_unset(halt, SCR_HALT_KEY_EXIT_REASON);
  if (request->unset_checkpoints) scr_kvtree_unset(halt, SCR_HALT_KEY_CHECKPOINTS_LEFT);
  if (request->unset_before) scr_kvtree_unset(halt, SCR_HALT_KEY_EXIT_BEFORE);
  if (request->unset_after) scr_kvtree_unset(halt, SCR_HALT_KEY_EXIT_AFTER);
  if (request->unset_seconds) scr_kvtree_unset(halt, SCR_HALT_KEY_HALT_SECONDS);

  if (request->reason) scr_kvtree_set_kv(halt, SCR_HALT_KEY_EXIT_REASON, request->reason);
  if (request->set_checkpoints) {
    scr_kvtree_set_kv_int(halt, SCR_HALT_KEY_CHECKPOINTS_LEFT, request->checkpoints);
  }
  if (request->set_before) scr_kvtree_set_kv_int(halt, SCR_HALT_KEY_EXIT_BEFORE, (long long) request->before);
  if (request->set_after) scr_kvtree_set_kv_int(halt, SCR_HALT_KEY_EXIT_AFTER, (long long) request->after);
  if (request->set_seconds) scr_kvtree_set_kv_int(halt, SCR_HALT_KEY_HALT_SECONDS, request->seconds);
  return SCR_SUCCESS;
}

/* one "  Key: value" line with the time spelled out for epoch values */
static void scr_halt_print_time(const scr_kvtree* halt, const char* key)
{
  long long value;
  const char* text = scr_kvtree_get_val(halt, key);
  if (text == NULL) return;
  if (scr_kvtree_get_int(halt, key, &value) == SCR_SUCCESS) {
    char when[64];
    scr_halt_file_format_time((time_t) value, when, sizeof(when));
    printf("  %-16s %s (@%lld)\n", key, when, value);
  } else {
    printf("  %-16s %s (not a time)\n", key, text);
  }
}

static void scr_halt_print_value(const scr_kvtree* halt, const char* key)
{
  const char* text = scr_kvtree_get_val(halt, key);
  if (text != NULL) printf("  %-16s %s\n", key, text);
}

/* margin before ExitBefore the job in prefix would use: SCR_HALT_SECONDS as
 * the library resolves it (environment, the prefix's .scrconf, system file) */
static long long scr_halt_default_seconds(const char* prefix)
{
  char* saved = getenv("SCR_PREFIX") ? strdup(getenv("SCR_PREFIX")) : NULL;
  setenv("SCR_PREFIX", prefix, 1);
  long long seconds = 0;
  char error[1024];
  scr_kvtree* user = scr_kvtree_new();
  scr_kvtree* system = scr_kvtree_new();
  if (scr_param_read_files(user, system, error, sizeof(error)) == SCR_SUCCESS &&
      scr_param_init(user, NULL, system) == SCR_SUCCESS) {
    if (scr_param_get_int("SCR_HALT_SECONDS", &seconds) != SCR_SUCCESS) seconds = 0;
    scr_param_finalize();
  }
  scr_kvtree_delete(&user);
  scr_kvtree_delete(&system);
  if (saved) setenv("SCR_PREFIX", saved, 1);
  else unsetenv("SCR_PREFIX");
  free(saved);
  return seconds > 0 ? seconds : 0;
}

static int scr_halt_list(const char* prefix, const char* path)
{
  scr_kvtree* halt = scr_kvtree_new();
  int rc = scr_halt_file_read(prefix, halt);
  if (rc != SCR_SUCCESS) {
    scr_kvtree_delete(&halt);
    return rc;
  }

  if (scr_kvtree_size(halt) == 0) {
    printf("No halt conditions set in %s\n", path);
  } else {
    printf("Halt conditions in %s:\n", path);
    scr_halt_print_value(halt, SCR_HALT_KEY_EXIT_REASON);
    scr_halt_print_value(halt, SCR_HALT_KEY_CHECKPOINTS_LEFT);
    scr_halt_print_time(halt, SCR_HALT_KEY_EXIT_AFTER);
    scr_halt_print_time(halt, SCR_HALT_KEY_EXIT_BEFORE);
    scr_halt_print_value(halt, SCR_HALT_KEY_HALT_SECONDS);

    char reason[256];
    if (scr_halt_file_check(halt, time(NULL), scr_halt_default_seconds(prefix), reason, sizeof(reason))) {
      printf("Halt condition met: %s\n", reason);
    }
  }
  scr_kvtree_delete(&halt);
  return SCR_SUCCESS;
}

/* --check: the exit status says whether a job would halt now */
static int scr_halt_check_now(const char* prefix, const char* path)
{
  scr_kvtree* halt = scr_kvtree_new();
  int rc = scr_halt_file_read(prefix, halt);
  char reason[256];
  if (rc != SCR_SUCCESS) {
    scr_err("cannot read halt file %s: %s", path, scr_error_string(rc));
    rc = SCR_HALT_EXIT_FAILED;
  } else if (scr_halt_file_check(halt, time(NULL), scr_halt_default_seconds(prefix), reason, sizeof(reason))) {
    printf("Halt condition met: %s\n", reason);
    rc = 0;
  } else {
    rc = SCR_HALT_EXIT_NOT_MET;
  }
  scr_kvtree_delete(&halt);
  return rc;
}

/* PREFIX argument, else $SCR_PREFIX, else the current directory (malloc'd) */
static char* scr_halt_choose_prefix(const char* argument)
{
  const char* env = getenv("SCR_PREFIX");
  if (argument != NULL) return strdup(argument);
  if (env != NULL && env[0] != '\0') return strdup(env);
  return getcwd(NULL, 0);
}

/* the command line, parsed into request; SCR_HALT_EXIT_USAGE on bad input */
static int scr_halt_parse_options(int argc, char** argv, struct scr_halt_request* request,
                                  const char** prefix_argument)
{
  enum { OPT_UNSET_CHECKPOINTS = 256, OPT_UNSET_BEFORE, OPT_UNSET_AFTER,
         OPT_UNSET_SECONDS, OPT_UNSET_REASON };
  static const struct option options[] = {
    {"checkpoints", required_argument, NULL, 'c'},
    {"before", required_argument, NULL, 'b'},
    {"after", required_argument, NULL, 'a'},
    {"seconds", required_argument, NULL, 's'},
    {"immediate", no_argument, NULL, 'i'},
    {"list", no_argument, NULL, 'l'},
    {"check", no_argument, NULL, 'k'},
    {"remove", no_argument, NULL, 'r'},
    {"unset-checkpoints", no_argument, NULL, OPT_UNSET_CHECKPOINTS},
    {"unset-before", no_argument, NULL, OPT_UNSET_BEFORE},
    {"unset-after", no_argument, NULL, OPT_UNSET_AFTER},
    {"unset-seconds", no_argument, NULL, OPT_UNSET_SECONDS},
    {"unset-reason", no_argument, NULL, OPT_UNSET_REASON},
    {"help", no_argument, NULL, 'h'},
    {NULL, 0, NULL, 0}
  };
  time_t now = time(NULL);
  int opt;

  /* report bad options ourselves, in one line and the usual format */
  opterr = 0;
  while ((opt = getopt_long(argc, argv, ":c:b:a:s:ilkrh", options, NULL)) != -1) {
    switch (opt) {
    case 'c':
      request->checkpoints = scr_halt_parse_count(optarg);
      if (request->checkpoints < 0 || request->checkpoints > INT_MAX) {
        scr_err("invalid --checkpoints '%s': expected a count of checkpoints (0 or more)", optarg);
        return SCR_HALT_EXIT_USAGE;
      }
      request->set_checkpoints = 1;
      break;
    case 'b':
    case 'a': {
      time_t when;
      if (scr_halt_file_parse_time(optarg, now, &when) != SCR_SUCCESS) {
        scr_err("invalid TIME '%s' for --%s: use \"YYYY-MM-DD HH:MM[:SS]\", \"HH:MM\", \"@EPOCH\" or \"+N[smhd]\"",
                optarg, opt == 'b' ? "before" : "after");
        return SCR_HALT_EXIT_USAGE;
      }
      if (opt == 'b') {
        request->before = when;
        request->set_before = 1;
      } else {
        request->after = when;
        request->set_after = 1;
      }
      break;
    }
    case 's':
      request->seconds = scr_halt_parse_count(optarg);
      if (request->seconds < 0) {
        scr_err("invalid --seconds '%s': expected a number of seconds (0 or more)", optarg);
        return SCR_HALT_EXIT_USAGE;
      }
      request->set_seconds = 1;
      break;
    case 'i': request->reason = SCR_HALT_REASON_IMMEDIATE; break;
    case 'l': request->list = 1; break;
    case 'k': request->check = 1; break;
    case 'r': request->remove = 1; break;
    case OPT_UNSET_CHECKPOINTS: request->unset_checkpoints = 1; break;
    case OPT_UNSET_BEFORE: request->unset_before = 1; break;
    case OPT_UNSET_AFTER: request->unset_after = 1; break;
    case OPT_UNSET_SECONDS: request->unset_seconds = 1; break;
    case OPT_UNSET_REASON: request->unset_reason = 1; break;
    case 'h':
      scr_halt_usage(stdout);
      exit(0);
    case ':':
      scr_err("option '%s' needs a value: see scr_halt --help", argv[optind - 1]);
      return SCR_HALT_EXIT_USAGE;
    default:
      scr_err("unknown option '%s': see scr_halt --help", argv[optind - 1]);
      return SCR_HALT_EXIT_USAGE;
    }
  }

  if (argc - optind > 1) {
    scr_err("too many arguments: give at most one PREFIX directory");
    return SCR_HALT_EXIT_USAGE;
  }
  *prefix_argument = (optind < argc) ? argv[optind] : NULL;

  if ((request->set_checkpoints && request->unset_checkpoints) ||
      (request->set_before && request->unset_before) ||
      (request->set_after && request->unset_after) ||
      (request->set_seconds && request->unset_seconds) ||
      (request->reason && request->unset_reason)) {
    scr_err("an option sets a condition that another option unsets: give only one of them");
    return SCR_HALT_EXIT_USAGE;
  }
  return SCR_SUCCESS;
}

int main(int argc, char** argv)
{
  struct scr_halt_request request;
  const char* prefix_argument = NULL;
  scr_log_program = "scr_halt";

  memset(&request, 0, sizeof(request));
  int rc = scr_halt_parse_options(argc, argv, &request, &prefix_argument);
  if (rc != SCR_SUCCESS) return rc;

  int sets = request.reason || request.set_checkpoints || request.set_before ||
             request.set_after || request.set_seconds;
  int unsets = request.unset_reason || request.unset_checkpoints || request.unset_before ||
               request.unset_after || request.unset_seconds;
  if (request.check && (sets || unsets || request.remove || request.list)) {
    scr_err("--check only reads the halt file: give it alone");
    return SCR_HALT_EXIT_USAGE;
  }
  if (request.remove && (sets || unsets)) {
    scr_err("--remove clears every condition: do not combine it with other conditions");
    return SCR_HALT_EXIT_USAGE;
  }
  /* plain "scr_halt": stop after the next checkpoint, as LLNL SCR does */
  if (!sets && !unsets && !request.remove && !request.list && !request.check) request.reason = SCR_HALT_REASON_HALT;
  int update = request.reason || sets || unsets || request.remove;

  char* prefix = scr_halt_choose_prefix(prefix_argument);
  if (prefix == NULL) {
    scr_err("cannot determine the prefix directory: %s", strerror(errno));
    return SCR_HALT_EXIT_FAILED;
  }
  struct stat st;
  if (stat(prefix, &st) != 0 || !S_ISDIR(st.st_mode)) {
    scr_err("prefix directory %s does not exist: give an existing directory or set SCR_PREFIX", prefix);
    free(prefix);
    return SCR_HALT_EXIT_FAILED;
  }
  char* path = scr_halt_file_path(prefix);

  if (request.check) {
    rc = scr_halt_check_now(prefix, path);
    free(path);
    free(prefix);
    return rc;
  }
  rc = SCR_SUCCESS;
  if (update) {
    rc = scr_halt_file_update(prefix, scr_halt_apply, &request);
    if (rc != SCR_SUCCESS) scr_err("halt file %s not updated: %s", path, scr_error_string(rc));
    else if (request.remove) printf("Removed halt file %s\n", path);
  }
  /* after a change, show the outcome so the user sees what the job will see */
  if (rc == SCR_SUCCESS && (request.list || (update && !request.remove))) {
    rc = scr_halt_list(prefix, path);
    if (rc != SCR_SUCCESS) scr_err("cannot read halt file %s: %s", path, scr_error_string(rc));
  }

  free(path);
  free(prefix);
  return rc == SCR_SUCCESS ? 0 : SCR_HALT_EXIT_FAILED;
}
