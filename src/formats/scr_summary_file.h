/* scr_summary_file.h - per-dataset files in the prefix directory: the summary
 * (descriptor, completeness) and the rank2file map (which rank has which files). MPI-free. */
#ifndef SCR_SUMMARY_FILE_H
#define SCR_SUMMARY_FILE_H

#include "scr_kvtree.h"

/* Layout of <prefix>/.scr/scr.dataset.<id>/summary.scr:
 *   VERSION = 1, DSETDESC/... (scr_dataset.h), RANKS = n
 * Layout of <prefix>/.scr/scr.dataset.<id>/rank2file.scr:
 *   RANKS = n
 *   RANK/<r>/FILES = n
 *   RANK/<r>/FILE/<path relative to the prefix>/SIZE, CRC (0x%08x)
 */

/* "<prefix>/.scr/scr.dataset.<id>", malloc'd */
char* scr_summary_dataset_dir(const char* prefix, int id);

int scr_summary_file_write(const char* prefix, int id, const scr_kvtree* dsetdesc, int ranks);
/* SCR_ERR_NOENT if missing, SCR_ERR_CORRUPT if unreadable or of another version */
int scr_summary_file_read(const char* prefix, int id, scr_kvtree* summary);

int scr_rank2file_write(const char* prefix, int id, const scr_kvtree* rank2file);
/* also rejects any file name that is absolute or climbs out of the prefix */
int scr_rank2file_read(const char* prefix, int id, scr_kvtree* rank2file);

#endif
