/* scr_dataset.h - the dataset descriptor: id, name, flags, sizes and who wrote it.
 * Stored in the filemap, the summary file and the index. MPI-free. */
#ifndef SCR_DATASET_H
#define SCR_DATASET_H

#include <stdint.h>
#include "scr_kvtree.h"

/* flags as in scr.h: SCR_FLAG_CHECKPOINT, SCR_FLAG_OUTPUT */
scr_kvtree* scr_dataset_new(int id, const char* name, int flags, int checkpoint_id,
                            const char* user, const char* job_name, const char* job_id);

int scr_dataset_get_id(const scr_kvtree* desc);
const char* scr_dataset_get_name(const scr_kvtree* desc);
/* a dataset renamed after it was made (its files moved) */
void scr_dataset_set_name(scr_kvtree* desc, const char* name);
int scr_dataset_get_flags(const scr_kvtree* desc);
int scr_dataset_is_checkpoint(const scr_kvtree* desc);
int scr_dataset_is_output(const scr_kvtree* desc);
int scr_dataset_is_complete(const scr_kvtree* desc);

/* set when the dataset completes: validity, total files and bytes over all ranks */
void scr_dataset_set_complete(scr_kvtree* desc, int complete, uint64_t files, uint64_t bytes);

#endif
