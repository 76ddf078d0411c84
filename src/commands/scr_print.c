/* scr_print.c - the scr_print command: shows SCR's internal key-value tree files
 * (index, halt, filemap, summary, rank2file...) as indented text. */
#include "config.h"
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include "scr_error.h"
#include "scr_log.h"
#include "scr_kvtree.h"

/* exit codes: 1 when a file could not be printed, 2 when the command line was wrong */
enum { SCR_PRINT_EXIT_FAILED = 1, SCR_PRINT_EXIT_USAGE = 2 };

static void scr_print_usage(FILE* out)
{
  fprintf(out,
    "Usage: scr_print [--help] FILE...\n"
    "Print SCR key-value tree files (such as .scr/index.scr or a filemap) as text.\n"
    "A key holding a single value is shown as KEY = VALUE.\n"
    "\n"
    "  -h, --help   print this help\n"
    "\n"
    "Exit status: 0 if every file was printed, 1 if a file is missing or corrupt,\n"
    "2 on a usage error.\n");
}

/* prints one file; the reader has already logged why a file is unusable */
static int scr_print_file(const char* path, int with_title)
{
  scr_kvtree* tree = scr_kvtree_new();
  int rc = scr_kvtree_read_file(path, tree);
  if (rc == SCR_SUCCESS) {
    if (with_title) printf("==> %s <==\n", path);
    scr_kvtree_print(tree, stdout);
  }
  scr_kvtree_delete(&tree);
  return rc;
}

int main(int argc, char** argv)
{
  static const struct option options[] = {
    {"help", no_argument, NULL, 'h'},
    {NULL, 0, NULL, 0},
  };
  scr_log_program = "scr_print";

  int c;
  while ((c = getopt_long(argc, argv, "h", options, NULL)) != -1) {
    switch (c) {
    case 'h':
      scr_print_usage(stdout);
      return 0;
    default:
      scr_print_usage(stderr);
      return SCR_PRINT_EXIT_USAGE;
    }
  }
  if (optind >= argc) {
    scr_err("no file given; try 'scr_print --help'");
    return SCR_PRINT_EXIT_USAGE;
  }

  int failed = 0;
  int with_title = argc - optind > 1;
  for (int i = optind; i < argc; i++) {
    /* keep going so that one bad file does not hide the others */
    if (scr_print_file(argv[i], with_title) != SCR_SUCCESS) failed = 1;
    if (with_title && i + 1 < argc) printf("\n");
  }
  if (fflush(stdout) != 0) {
    scr_err("cannot write to standard output");
    failed = 1;
  }
  return failed ? SCR_PRINT_EXIT_FAILED : 0;
}
