/* scr_flush_redundancy.h - a flush's copy of the redundancy data to the prefix directory,
 * beside the dataset, for scr_index --build (SCR_FLUSH_REDUNDANCY, SCR_SCAVENGE_REDUNDANCY). */
#ifndef SCR_FLUSH_REDUNDANCY_H
#define SCR_FLUSH_REDUNDANCY_H

#include <stdint.h>
#include "scr_kvtree.h"

/* this rank's redundancy data of dataset id (its XOR or RS parity file, or
 * the PARTNER copies it holds) copied under the dataset's directory in
 * <prefix>/.scr, each checked against the CRC32 recorded when it was made,
 * and recorded in mine, its rank2file entry (scr_summary_file.h); nothing
 * for SINGLE or for redundancy a change of the files made stale. 1 when
 * done, 0 after a warning: the flush of the files stands either way, and
 * scr_index --build then knows nothing of this rank's part. *bytes (may be
 * NULL) gets the bytes copied. Not collective. */
int scr_flush_redundancy_copy(int id, scr_kvtree* mine, uint64_t* bytes);
/* the same for rank's part as its filemap map records it (scr_scavenge
 * copies the part of each rank whose filemap its node holds) */
int scr_flush_redundancy_copy_of(const scr_kvtree* map, int rank, int id, scr_kvtree* mine, uint64_t* bytes);

/* a background flush: this rank's redundancy files of dataset id added to
 * list as the node's scr_transfer takes them (FILES/<cache path>/
 * {DESTINATION, SIZE, EXPECT}, scr_transfer_file.h) */
void scr_flush_redundancy_list(int id, scr_kvtree* list);
/* when it ends: each file's copy as scr_transfer left it (copied:
 * DST/<destination>/{WRITTEN, CRC, ERROR}; NULL for none) taken when whole
 * and as made, the others copied now; recorded in mine as by
 * scr_flush_redundancy_copy, with its outcome */
int scr_flush_redundancy_take(int id, const scr_kvtree* copied, scr_kvtree* mine);

#endif
