/* scr_dataset.c - build and read dataset descriptors (see scr_dataset.h).
 * FLAG holds one child per flag so that readers need no bit arithmetic. */
#include "config.h"
#include <stdlib.h>
#include <sys/time.h>
#include "scr_error.h"
#include "scr_dataset.h"

scr_kvtree* scr_dataset_new(int id, const char* name, int flags, int checkpoint_id,
                            const char* user, const char* job_name, const char* job_id)
{
  struct timeval tv;
  scr_kvtree* desc = scr_kvtree_new();
  gettimeofday(&tv, NULL);
  scr_kvtree_set_kv_int(desc, "ID", id);
  scr_kvtree_set_kv(desc, "NAME", name);
  if (flags & SCR_FLAG_CHECKPOINT) {
    scr_kvtree_add_kv(desc, "FLAG", "CHECKPOINT");
    scr_kvtree_set_kv_int(desc, "CKPT", checkpoint_id);
  }
  if (flags & SCR_FLAG_OUTPUT) scr_kvtree_add_kv(desc, "FLAG", "OUTPUT");
  scr_kvtree_set_kv_int(desc, "CREATED", (long long) tv.tv_sec * 1000000LL + tv.tv_usec);
  if (user) scr_kvtree_set_kv(desc, "USER", user);
  if (job_name) scr_kvtree_set_kv(desc, "JOBNAME", job_name);
  if (job_id) scr_kvtree_set_kv(desc, "JOBID", job_id);
  scr_kvtree_set_kv_int(desc, "COMPLETE", 0);
  return desc;
}

int scr_dataset_get_id(const scr_kvtree* desc)
{
  long long id = -1;
  scr_kvtree_get_int(desc, "ID", &id);
  return (int) id;
}

const char* scr_dataset_get_name(const scr_kvtree* desc)
{
  return scr_kvtree_get_val(desc, "NAME");
}

void scr_dataset_set_name(scr_kvtree* desc, const char* name)
{
  scr_kvtree_unset(desc, "NAME");
  scr_kvtree_set_kv(desc, "NAME", name);
}

int scr_dataset_get_flags(const scr_kvtree* desc)
{
  int flags = 0;
  if (scr_kvtree_get_kv(desc, "FLAG", "CHECKPOINT")) flags |= SCR_FLAG_CHECKPOINT;
  if (scr_kvtree_get_kv(desc, "FLAG", "OUTPUT")) flags |= SCR_FLAG_OUTPUT;
  return flags;
}

int scr_dataset_is_checkpoint(const scr_kvtree* desc)
{
  return (scr_dataset_get_flags(desc) & SCR_FLAG_CHECKPOINT) != 0;
}

int scr_dataset_is_output(const scr_kvtree* desc)
{
  return (scr_dataset_get_flags(desc) & SCR_FLAG_OUTPUT) != 0;
}

int scr_dataset_is_complete(const scr_kvtree* desc)
{
  long long complete = 0;
  scr_kvtree_get_int(desc, "COMPLETE", &complete);
  return complete == 1;
}

void scr_dataset_set_complete(scr_kvtree* desc, int complete, uint64_t files, uint64_t bytes)
{
  scr_kvtree_set_kv_int(desc, "COMPLETE", complete ? 1 : 0);
  scr_kvtree_set_kv_uint64(desc, "FILES", files);
  scr_kvtree_set_kv_uint64(desc, "SIZE", bytes);
}
