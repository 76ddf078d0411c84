/* scr_cache.h - datasets in node-local cache: where files go, the filemap that
 * records them, validation of what a new run finds, and eviction. */
#ifndef SCR_CACHE_H
#define SCR_CACHE_H

#include <stddef.h>
#include <stdint.h>
#include "scr_kvtree.h"

/* "<prefix>/.scr/attached.<id>/<relpath>", malloc'd: where a file attached to a
 * complete dataset (by the preload layer) is also kept, for every rank and
 * every later run; removed with the dataset unless the dataset was flushed */
char* scr_cache_attached_store(int id, const char* relpath);
/* "<cache_dir>/scr.dataset.<id>", malloc'd */
char* scr_cache_dataset_dir(int id);

/* load this rank's filemap from the control directory (empty if none) */
int scr_cache_load_filemap(void);
/* persist this rank's filemap atomically (and empty the journal of routed files) */
int scr_cache_save_filemap(void);
/* the journal of files routed into the dataset in progress but not yet in
 * the filemap on disk (scr_cache_route_file): merge rank's into map (only
 * into datasets there that are not complete; returns how many files),
 * remove it, and close this rank's at SCR_Finalize */
int scr_cache_journal_merge(int rank, scr_kvtree* map);
void scr_cache_journal_remove(int rank);
void scr_cache_journal_close(void);

/* register a file of a dataset and give the path to open: under the
 * dataset's cache directory at relpath (parents created). A file of the
 * dataset in progress reaches the filemap on disk at the latest when the
 * dataset completes; until then the journal names it */
int scr_cache_route_file(int id, const char* orig_path, const char* relpath,
                         char* file, size_t len);

/* local check of this rank's part of a dataset: complete and every file present
 * with its recorded size (and CRC when recorded); 1 if usable */
int scr_cache_check_dataset(int id);

/* record size (and CRC when SCR_CRC_ON_COPY) of every file of the dataset;
 * sets COMPLETE per file; returns 1 if all files of this rank are valid */
int scr_cache_complete_files(int id, int valid, uint64_t* files, uint64_t* bytes);

/* number of datasets in this rank's filemap */
int scr_cache_count_datasets(void);
/* the newest complete checkpoint in this rank's filemap, -1 if none */
int scr_cache_newest_checkpoint(void);

/* remove a dataset from cache and filemap without waiting: the directory is
 * renamed into a trash area that a background thread empties */
int scr_cache_delete_dataset(int id);

/* datasets never evicted, beyond SCR_CACHE_SIZE, because the program may
 * resume from them (the preload layer): those holding a file the program
 * reads to find its checkpoint (a pointer), and the newest checkpoint it
 * renamed into place after it completed. Each kind is a list of its own (at
 * most SCR_CACHE_PINS_MAX), replaced whole by each call. Every rank must pin
 * the same ones: set them where no rank can be starting a dataset alone. */
#define SCR_CACHE_PINS_MAX 8
enum scr_cache_pin_kind { SCR_CACHE_PIN_POINTERS, SCR_CACHE_PIN_RENAMED, SCR_CACHE_PIN_KINDS };
void scr_cache_pin(enum scr_cache_pin_kind kind, const int* ids, int count);

/* the dataset eviction removes first: the oldest with an id above `above`
 * that is not `keep`, `newest`, pinned, being flushed or unflushed output;
 * -1 if none */
int scr_cache_evictable_oldest(int keep, int newest, int above);

/* Collective, at every dataset's completion and at SCR_Init: predicts from
 * the newest dataset's size on each node whether the next one fits in the
 * free space of the cache; if not on some node, scr.cache_full is set and
 * the next dataset is written to the prefix directory (scr_cache_space.c) */
void scr_cache_predict_next(int id);
/* its two halves, for a caller that agrees on the verdict in a collective
 * of its own: collective over the node, 1 when this node's cache is too
 * small for the next dataset; then, with the verdict of every node (any),
 * on every rank */
int scr_cache_predict_node(int id);
void scr_cache_predict_agreed(int full, int any);
/* 1 when dataset id is written to the prefix directory (SCR_CACHE_BYPASS,
 * or a cache predicted full when it began) */
int scr_cache_dataset_bypassed(int id);

/* collective: delete oldest datasets until fewer than SCR_CACHE_SIZE remain,
 * keeping `keep` (-1: none), datasets being flushed, output not yet flushed,
 * the newest complete checkpoint (the restart point) and the pinned ones.
 * The filemap is not written: the caller's next write records it (see
 * scr_cache.c for why that is safe) */
int scr_cache_make_room(int keep);
/* the same on this rank alone, without telling the others */
int scr_cache_make_room_local(int keep);

/* collective: the same down to SCR_CACHE_SIZE datasets, once a dataset
 * completed; the filemap is written when a dataset left */
int scr_cache_trim(void);
/* the same on this rank alone: every rank evicts the same datasets */
int scr_cache_trim_local(void);

/* the trash of the node's cache directory, and its emptying here and now,
 * when space it holds is needed (the reaper may be emptying it too) */
char* scr_cache_trash_path(void);
void scr_cache_reap_now(void);

/* start / stop the background thread that empties the trash */
void scr_cache_start_reaper(void);
void scr_cache_stop_reaper(void);

#endif
