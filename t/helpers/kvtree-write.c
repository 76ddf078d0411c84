/* kvtree-write.c - test helper: writes a key-value tree file from KEY=VALUE
 * arguments, nesting on '.' (A.B=C makes A { B = C }), for the shell tests. */
#include "config.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "scr_error.h"
#include "scr_log.h"
#include "scr_kvtree.h"

int main(int argc, char** argv)
{
  scr_log_program = "kvtree-write";
  if (argc < 2) {
    fprintf(stderr, "usage: kvtree-write FILE [KEY[.KEY...]=VALUE]...\n");
    return 2;
  }
  scr_kvtree* tree = scr_kvtree_new();
  for (int i = 2; i < argc; i++) {
    char* arg = strdup(argv[i]);
    char* eq = strchr(arg, '=');
    if (eq == NULL) {
      fprintf(stderr, "kvtree-write: '%s' is not KEY=VALUE\n", argv[i]);
      return 2;
    }
    *eq = '\0';
    scr_kvtree* node = tree;
    char* save = NULL;
    char* key = strtok_r(arg, ".", &save);
    char* next;
    while (key && (next = strtok_r(NULL, ".", &save)) != NULL) {
      node = scr_kvtree_get_or_create(node, key);
      key = next;
    }
    if (key) scr_kvtree_add_kv(node, key, eq + 1);
    free(arg);
  }
  int rc = scr_kvtree_write_file(argv[1], tree);
  scr_kvtree_delete(&tree);
  return rc == SCR_SUCCESS ? 0 : 1;
}
