/* scr_index_file.h - <prefix>/.scr/index.scr: every dataset flushed to the prefix
 * directory, which one to restart from, and what fetching them did. MPI-free. */
#ifndef SCR_INDEX_FILE_H
#define SCR_INDEX_FILE_H

#include <time.h>
#include "scr_kvtree.h"

/* Layout:
 *   VERSION = 1
 *   CURRENT = <name>                  dataset to restart from (optional)
 *   NAME/<name>/DSET = <id>           lookup by name
 *   DSET/<id>/NAME = <name>
 *            /DSETDESC/...            the dataset descriptor (scr_dataset.h)
 *            /COMPLETE = 0|1          every rank's files reached the prefix
 *            /FLUSHED = <epoch>       when the flush finished
 *            /FETCHED/<epoch>         one entry per fetch that succeeded
 *            /FAILED/<epoch>/REASON = <text>   one entry per fetch that failed
 * Names are unique, and so are ids: adding a dataset replaces any entry with
 * the same id or name, including its fetch history.
 */
#define SCR_INDEX_FILE_VERSION 1

#define SCR_INDEX_KEY_VERSION  "VERSION"
#define SCR_INDEX_KEY_CURRENT  "CURRENT"
#define SCR_INDEX_KEY_NAME     "NAME"
#define SCR_INDEX_KEY_DSET     "DSET"
#define SCR_INDEX_KEY_DSETDESC "DSETDESC"
#define SCR_INDEX_KEY_COMPLETE "COMPLETE"
#define SCR_INDEX_KEY_FLUSHED  "FLUSHED"
#define SCR_INDEX_KEY_FETCHED  "FETCHED"
#define SCR_INDEX_KEY_FAILED   "FAILED"
#define SCR_INDEX_KEY_REASON   "REASON"

/* "<prefix>/.scr/index.scr", malloc'd (NULL on an empty prefix) */
char* scr_index_file_path(const char* prefix);

/* merges the index into tree; a missing file leaves tree untouched
 * (SCR_SUCCESS); SCR_ERR_CORRUPT for an unreadable file or a newer VERSION */
int scr_index_file_read(const char* prefix, scr_kvtree* tree);

/* writes tree atomically, setting VERSION if the tree lacks it; creates
 * <prefix>/.scr (0755 minus umask) if missing */
int scr_index_file_write(const char* prefix, const scr_kvtree* tree);

/* read-modify-write under an exclusive lock on <prefix>/.scr/index.scr.lock;
 * when modify returns anything but SCR_SUCCESS nothing is written and that
 * code is returned */
int scr_index_file_update(const char* prefix, int (*modify)(scr_kvtree* tree, void* arg), void* arg);

/* records dataset id under name with a copy of its descriptor, replacing any
 * entry with the same id or the same name; SCR_ERR_INVALID for id < 0 or an
 * empty name */
int scr_index_file_add(scr_kvtree* tree, int id, const char* name,
                       const scr_kvtree* dsetdesc, int complete);

/* the following return SCR_ERR_NOENT when id is not indexed */
int scr_index_file_set_flushed(scr_kvtree* tree, int id, time_t when);
/* the copy of dataset id on the prefix directory is no longer whole (it is
 * about to be written again): COMPLETE = 0 until a flush adds it anew */
int scr_index_file_mark_incomplete(scr_kvtree* tree, int id);
int scr_index_file_mark_fetched(scr_kvtree* tree, int id, time_t when);
/* reason may be NULL */
int scr_index_file_mark_failed(scr_kvtree* tree, int id, time_t when, const char* reason);

/* SCR_ERR_NOENT when name is not indexed */
int scr_index_file_get_id_by_name(const scr_kvtree* tree, const char* name, int* id);
/* name of dataset id, or NULL */
const char* scr_index_file_get_name(const scr_kvtree* tree, int id);
/* descriptor of dataset id, or NULL */
const scr_kvtree* scr_index_file_get_dsetdesc(const scr_kvtree* tree, int id);

/* 1 if dataset id is flagged CHECKPOINT, 0 if not or not indexed */
int scr_index_file_is_checkpoint(const scr_kvtree* tree, int id);
/* 1 if dataset id is marked COMPLETE */
int scr_index_file_is_complete(const scr_kvtree* tree, int id);
/* 1 if some fetch of dataset id failed */
int scr_index_file_is_failed(const scr_kvtree* tree, int id);
/* 1 if dataset id was fetched at least once */
int scr_index_file_is_fetched(const scr_kvtree* tree, int id);

/* marks name as the dataset to restart from: SCR_ERR_NOENT if not indexed,
 * SCR_ERR_INVALID if it is not a complete checkpoint */
int scr_index_file_set_current(scr_kvtree* tree, const char* name);
/* name of the current dataset, or NULL */
const char* scr_index_file_get_current(const scr_kvtree* tree);
void scr_index_file_unset_current(scr_kvtree* tree);

/* drops name from the index (its files are not touched) and clears CURRENT
 * if it named it; SCR_ERR_NOENT if not indexed */
int scr_index_file_remove(scr_kvtree* tree, const char* name);

/* newest (largest id) complete checkpoint with id < before_id (before_id -1:
 * no bound) whose fetch never failed; SCR_ERR_NOENT if there is none */
int scr_index_file_most_recent_checkpoint(const scr_kvtree* tree, int before_id, int* id);

#endif
