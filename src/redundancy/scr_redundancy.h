/* scr_redundancy.h - protect a completed dataset with its redundancy scheme and,
 * at restart, rebuild the members a failure took, with the scheme that wrote them. */
#ifndef SCR_REDUNDANCY_H
#define SCR_REDUNDANCY_H

#include "scr_reddesc.h"

/* collective over world: apply desc to dataset id (records it in the filemap) */
int scr_redundancy_apply(int id, const struct scr_reddesc* desc);

/* 1 if this rank's files of the dataset and its redundancy files are intact */
int scr_redundancy_check_local(int id);

/* collective over world: make every rank's part of dataset id intact, rebuilding
 * lost or damaged members; SCR_SUCCESS only if the result is exact everywhere */
int scr_redundancy_recover(int id);

#endif
