/* index-write.c - test helper: writes <prefix>/.scr/index.scr from a compact
 * description, so shell tests of scr_index need no MPI job to produce one. */
#include "config.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "scr_error.h"
#include "scr_kvtree.h"
#include "scr_dataset.h"
#include "scr_index_file.h"

/* one dataset as given on the command line */
struct dataset_spec {
  int id;
  char name[256];
  int flags;
  unsigned long long files, size;
  int complete;
  long long flushed, failed, fetched;  /* 0: not set */
};

static void usage(void)
{
  fprintf(stderr,
    "usage: index-write PREFIX [current=NAME] DATASET...\n"
    "  DATASET: id=N,name=S[,flags=CKPT|OUTPUT|CKPT+OUTPUT][,files=N][,size=BYTES]\n"
    "           [,complete=0|1][,flushed=EPOCH][,failed=EPOCH][,fetched=EPOCH]\n");
  exit(2);
}

static int parse_spec(char* text, struct dataset_spec* spec)
{
  memset(spec, 0, sizeof(*spec));
  spec->id = -1;
  spec->flags = SCR_FLAG_CHECKPOINT;
  spec->complete = 1;
  for (char* field = strtok(text, ","); field; field = strtok(NULL, ",")) {
    char* value = strchr(field, '=');
    if (value == NULL) return -1;
    *value++ = '\0';
    if (strcmp(field, "id") == 0) spec->id = atoi(value);
    else if (strcmp(field, "name") == 0) snprintf(spec->name, sizeof(spec->name), "%s", value);
    else if (strcmp(field, "flags") == 0) {
      spec->flags = 0;
      if (strstr(value, "CKPT")) spec->flags |= SCR_FLAG_CHECKPOINT;
      if (strstr(value, "OUTPUT")) spec->flags |= SCR_FLAG_OUTPUT;
    }
    else if (strcmp(field, "files") == 0) spec->files = strtoull(value, NULL, 10);
    else if (strcmp(field, "size") == 0) spec->size = strtoull(value, NULL, 10);
    else if (strcmp(field, "complete") == 0) spec->complete = atoi(value);
    else if (strcmp(field, "flushed") == 0) spec->flushed = atoll(value);
    else if (strcmp(field, "failed") == 0) spec->failed = atoll(value);
    else if (strcmp(field, "fetched") == 0) spec->fetched = atoll(value);
    else return -1;
  }
  return (spec->id >= 0 && spec->name[0] != '\0') ? 0 : -1;
}

int main(int argc, char** argv)
{
  if (argc < 2) usage();
  const char* prefix = argv[1];
  const char* current = NULL;
  scr_kvtree* index = scr_kvtree_new();

  for (int i = 2; i < argc; i++) {
    if (strncmp(argv[i], "current=", 8) == 0) {
      current = argv[i] + 8;
      continue;
    }
    struct dataset_spec spec;
    if (parse_spec(argv[i], &spec) != 0) usage();
    scr_kvtree* desc = scr_dataset_new(spec.id, spec.name, spec.flags, spec.id, "tester", "job", "1");
    scr_dataset_set_complete(desc, spec.complete, spec.files, spec.size);
    scr_index_file_add(index, spec.id, spec.name, desc, spec.complete);
    scr_kvtree_delete(&desc);
    if (spec.flushed) scr_index_file_set_flushed(index, spec.id, (time_t) spec.flushed);
    if (spec.failed) scr_index_file_mark_failed(index, spec.id, (time_t) spec.failed, "test");
    if (spec.fetched) scr_index_file_mark_fetched(index, spec.id, (time_t) spec.fetched);
  }

  /* written directly, not through set_current, so tests can build any state */
  if (current != NULL) scr_kvtree_set_kv(index, SCR_INDEX_KEY_CURRENT, current);

  int rc = scr_index_file_write(prefix, index);
  scr_kvtree_delete(&index);
  if (rc != SCR_SUCCESS) {
    fprintf(stderr, "index-write: cannot write the index in %s: %s\n", prefix, scr_error_string(rc));
    return 1;
  }
  return 0;
}
