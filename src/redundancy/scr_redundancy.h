/* scr_redundancy.h - protect a completed dataset with its redundancy scheme and,
 * at restart, rebuild the members a failure took, with the scheme that wrote them. */
#ifndef SCR_REDUNDANCY_H
#define SCR_REDUNDANCY_H

#include <stdint.h>
#include "scr_reddesc.h"
#include "scr_stream.h"

/* collective over world: apply desc to dataset id (records it in the filemap) */
int scr_redundancy_apply(int id, const struct scr_reddesc* desc);
/* the same without writing the filemap nor agreeing on the outcome (the
 * scheme's own collectives still run): this rank's ok flag. For a caller
 * that writes the filemap and agrees once for several steps
 * (SCR_Complete_output) */
int scr_redundancy_apply_unsaved(int id, const struct scr_reddesc* desc);

/* collective over world: dataset id, encoded with desc (XOR or RS), had
 * files renamed since, their bytes unchanged (the filemap keeps the old
 * cache path as REDPATH): the parity files' headers get the new names, in
 * the order the parity was computed in, without reading the data.
 * SCR_SUCCESS, or an error when any rank cannot (another scheme, a file
 * gone, new or changed): then scr_redundancy_apply encodes it anew. */
int scr_redundancy_rename(int id, const struct scr_reddesc* desc);

/* 1 if this rank's files of the dataset and its redundancy files are intact */
int scr_redundancy_check_local(int id);
/* the second half of that: the redundancy files it records are whole (not
 * checked: that the scheme was applied at all) */
int scr_redundancy_check_parity_local(int id);

/* collective over world: make every rank's part of dataset id intact, rebuilding
 * lost or damaged members; SCR_SUCCESS only if the result is exact everywhere,
 * SCR_ERR_INVALID (said once, by rank 0) when a rank's filemap marks it taken
 * apart by the program (TAKEN_APART): nothing of it is to come back */
int scr_redundancy_recover(int id);

/* the record of a parity file (scr_parity_file.h) in the filemap, shared by
 * the encoding and the rebuild */
/* RANK/<rank>/REDFILE/<path>: SIZE, CRC of the file, PARITY_CRC of its parity bytes */
void scr_redundancy_register(int id, const char* path, uint64_t size, uint32_t crc, uint32_t parity_crc);

#endif
