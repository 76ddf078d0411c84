/* scr_summary_file.h - per-dataset files in the prefix directory: the summary
 * (descriptor, completeness) and the rank2file map (which rank has which files). MPI-free. */
#ifndef SCR_SUMMARY_FILE_H
#define SCR_SUMMARY_FILE_H

#include "scr_kvtree.h"

/* Layout of <prefix>/.scr/scr.dataset.<id>/summary.scr:
 *   VERSION = 1, DSETDESC/... (scr_dataset.h), RANKS = n
 *   MISSING_RANKS = m   a scavenge from the surviving nodes found no files of
 *                       m ranks (DSETDESC/COMPLETE = 0 then): scr_index --build
 *                       may rebuild them from the redundancy data
 * Layout of <prefix>/.scr/scr.dataset.<id>/rank2file.scr:
 *   RANKS = n
 *   RANK/<r>/FILES = n
 *   RANK/<r>/FILE/<path relative to the prefix>/SIZE, CRC (0x%08x)
 * and, when the redundancy data came along (SCR_FLUSH_REDUNDANCY, a scavenge),
 * what scr_index --build decodes it with:
 *   RANK/<r>/REDDESC/...                  the dataset's scheme and rank r's set
 *                                         (scr_reddesc_record)
 *   RANK/<r>/REDFILE/<name>/SIZE, CRC     rank r's parity file (XOR, RS)
 *   RANK/<r>/PARTNER/<s>/FILE/<i>/{RELPATH, SIZE, CRC, LINK}
 *                                         the copy rank r holds of rank s's files
 * Names of redundancy data are relative to the dataset directory, under
 * SCR_SUMMARY_REDUNDANCY_DIR; a partner copy lies at
 * redundancy/partner.<s>/<RELPATH>.
 */
#define SCR_SUMMARY_REDUNDANCY_DIR "redundancy"

/* "<prefix>/.scr/scr.dataset.<id>", malloc'd */
char* scr_summary_dataset_dir(const char* prefix, int id);
/* "<prefix>/.scr/scr.dataset.<id>/<name>", malloc'd; NULL for a name that
 * is absolute or climbs out (names read back from rank2file are not trusted) */
char* scr_summary_dataset_file(const char* prefix, int id, const char* name);
/* the name of the copy of rank s's file relpath that a PARTNER holds */
char* scr_summary_partner_name(int s, const char* relpath);

int scr_summary_file_write(const char* prefix, int id, const scr_kvtree* dsetdesc, int ranks);
/* the same with MISSING_RANKS = missing when it is not 0 */
int scr_summary_file_write_missing(const char* prefix, int id, const scr_kvtree* dsetdesc, int ranks, int missing);
/* SCR_ERR_NOENT if missing, SCR_ERR_CORRUPT if unreadable or of another version */
int scr_summary_file_read(const char* prefix, int id, scr_kvtree* summary);

int scr_rank2file_write(const char* prefix, int id, const scr_kvtree* rank2file);
/* also rejects any file name that is absolute or climbs out of the prefix */
int scr_rank2file_read(const char* prefix, int id, scr_kvtree* rank2file);

#endif
