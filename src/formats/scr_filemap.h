/* scr_filemap.h - what a rank has in cache: datasets, their files and metadata.
 * One file per rank in the control directory, updated before a file is created. MPI-free. */
#ifndef SCR_FILEMAP_H
#define SCR_FILEMAP_H

#include <stdint.h>
#include "scr_kvtree.h"

/* Layout:
 *   DSET/<id>/DSETDESC/...           dataset descriptor (scr_dataset.h)
 *   DSET/<id>/REDDESC/...            redundancy applied to the dataset
 *   DSET/<id>/FLUSHED = 0|1          copy on the prefix directory is complete
 *   DSET/<id>/REDUNDANCY_STALE = 1   this rank changed a file of the complete
 *                                    dataset in place (the preload layer) and
 *                                    its redundancy is not encoded again yet:
 *                                    nothing may be rebuilt from it
 *   DSET/<id>/TAKEN_APART = 1        the program deleted a file of the
 *                                    complete dataset on this rank (its own
 *                                    or another rank's, the preload layer):
 *                                    no restart restores or rebuilds it
 *   DSET/<id>/RENAMED_INTO_PLACE = 1 the program renamed a file (or a
 *                                    directory holding one) of the complete
 *                                    checkpoint while it was the newest (the
 *                                    preload layer): a checkpoint the
 *                                    program committed by renaming it into
 *                                    place (tmp.12/ -> step.12/), which it
 *                                    resumes from rather than a newer one
 *                                    it did not rename yet
 *   DSET/<id>/RANK/<rank>/FILES = n  files rank wrote in the dataset
 *   DSET/<id>/RANK/<rank>/FILE/<cache path>/ORIG = original absolute path
 *                                            /RELPATH = path relative to the prefix
 *                                            /SIZE, CRC (0x%08x), COMPLETE = 0|1
 *                                            /UPDATING = n, BEFORE_SIZE, BEFORE_CTIME, BEFORE_CRC
 *        (UPDATING: the preload layer has the file of the complete dataset
 *        open for update n times; BEFORE_*: its size and change time, "s.ns"
 *        (and CRC, when that time was too recent for a coarse clock to tell
 *        a change by), as it was last known whole: unchanged since, it is)
 *                                            /REDPATH: the cache path its dataset's
 *        redundancy knows it by, when it was renamed since that was encoded
 *                                            /FLUSHED_COPY: "dev:ino:mtime" of the copy
 *        its last flush made on the prefix directory, kept while the cached
 *        bytes are the ones it copied
 *                                            /LINK: the files of the rank in the dataset
 *        with the same LINK are names of one file (the preload layer's link(2)):
 *        hard links of each other in cache and on the prefix directory, made
 *        again after a rebuild, a fetch or a move to another node
 *                                            /REDALIAS/<path>: more cache paths its
 *        dataset's redundancy knows it by (a hard link of it encoded there was
 *        deleted since), besides REDPATH or its own
 *                                            /STAGE: where a background flush
 *        copies it in the stage on the prefix directory (scr_publish.h), set
 *        when it was handed over and dropped when its bytes change after
 *        that; the key follows the file's renames, as the whole entry does
 *   DSET/<id>/RANK/<rank>/REDFILE/<cache path>/SIZE, CRC    redundancy data
 *   DSET/<id>/RANK/<rank>/ATTACHED/<cache path>/ORIG, RELPATH, SIZE, CRC
 *        files the preload layer attached to the complete dataset (a pointer
 *        file written after it): not part of its redundancy or file count
 */

#define SCR_FILEMAP_KEY_REDUNDANCY_STALE "REDUNDANCY_STALE"
#define SCR_FILEMAP_KEY_TAKEN_APART "TAKEN_APART"
#define SCR_FILEMAP_KEY_RENAMED_INTO_PLACE "RENAMED_INTO_PLACE"
#define SCR_FILEMAP_KEY_UPDATING "UPDATING"
#define SCR_FILEMAP_KEY_BEFORE_SIZE "BEFORE_SIZE"
#define SCR_FILEMAP_KEY_BEFORE_CTIME "BEFORE_CTIME"
#define SCR_FILEMAP_KEY_BEFORE_CRC "BEFORE_CRC"
#define SCR_FILEMAP_KEY_REDUNDANCY_PATH "REDPATH"
#define SCR_FILEMAP_KEY_FLUSHED_COPY "FLUSHED_COPY"
#define SCR_FILEMAP_KEY_LINK "LINK"
#define SCR_FILEMAP_KEY_REDUNDANCY_ALIAS "REDALIAS"
#define SCR_FILEMAP_KEY_STAGE "STAGE"

/* "<cntl_dir>/filemap_<rank>.scr", malloc'd */
char* scr_filemap_path(const char* cntl_dir, int rank);

/* dataset subtree, or NULL / created */
scr_kvtree* scr_filemap_get_dataset(const scr_kvtree* map, int id);
scr_kvtree* scr_filemap_add_dataset(scr_kvtree* map, int id);
void scr_filemap_remove_dataset(scr_kvtree* map, int id);

/* Metadata read back from disk (filemap, journal) names paths SCR will read,
 * delete and hand to the program: every dataset whose files (FILE, REDFILE,
 * ATTACHED, PARTNER DIR) are not inside cache_dir (a bypass dataset's: inside
 * prefix), whose RELPATH is not a plain relative path ("../", absolute), or
 * whose cached files are reached through a symbolic link below cache_dir, is
 * dropped from map with a message naming the file and `what`. Returns the
 * number dropped. Nothing is deleted on disk: the names are not trusted. */
int scr_filemap_drop_unsafe(scr_kvtree* map, const char* what, const char* cache_dir, const char* prefix);

/* files of a rank in a dataset: FILE subtree (children are cache paths), or NULL */
scr_kvtree* scr_filemap_get_files(const scr_kvtree* map, int id, int rank);
/* register a file; returns its metadata subtree (existing one if already there) */
scr_kvtree* scr_filemap_add_file(scr_kvtree* map, int id, int rank, const char* cache_path,
                                 const char* orig_path, const char* relpath);
/* FILES count of the rank in the dataset (the number it is expected to have) */
void scr_filemap_set_file_count(scr_kvtree* map, int id, int rank, int count);
int scr_filemap_get_file_count(const scr_kvtree* map, int id, int rank);

/* largest dataset id in the map; -1 if none */
int scr_filemap_latest_dataset(const scr_kvtree* map);
/* largest dataset id strictly below `below` (-1: no bound); -1 if none */
int scr_filemap_previous_dataset(const scr_kvtree* map, int below);

#endif
