/* scr_flush.h - copy a cached dataset to the prefix directory and record it:
 * files at their original paths, summary, rank2file map, index entry. */
#ifndef SCR_FLUSH_H
#define SCR_FLUSH_H

#include <stdint.h>
#include "scr_kvtree.h"

/* collective; 1 if the dataset must be flushed now (output, or every SCR_FLUSH checkpoints) */
int scr_flush_is_due(int id);

/* collective synchronous flush; SCR_SUCCESS when the dataset is complete on the prefix */
int scr_flush_dataset(int id);

/* collective: the dataset flushed again after its files were renamed, the
 * program's own rename having moved their copies on the prefix directory:
 * a file whose copy there is the one flushed before (same device, inode
 * and modification time) is recorded as it is, the others are copied.
 * current: as scr_flush_finish's (0 for a dataset older than the newest).
 * *copied: how many files were copied, over all ranks. */
int scr_flush_dataset_again(int id, int current, uint64_t* copied);

/* 1 if this rank's filemap says the dataset is on the prefix directory */
int scr_flush_is_flushed(int id);

/* collective: 1 when any rank's filemap says so, which then says so on every
 * rank. A flush marks every rank at once, but a rank whose entry was rebuilt
 * from redundancy after a node loss knows nothing of it; a flush that rank
 * then started alone would wait for the others forever. */
int scr_flush_agree_flushed(int id);

/* the steps a flush is made of, shared with the asynchronous flush
 * (scr_flush_async.c) */
/* collective: the dataset directory on the prefix, and FLUSHING in the flush file */
int scr_flush_prepare(int id);
/* the same, rank 0's part alone (its outcome is the caller's to agree on) */
int scr_flush_prepare_local(int id);
/* where a cached file goes: <prefix>/<RELPATH>, malloc'd (NULL without RELPATH) */
char* scr_flush_destination(const scr_kvtree* meta);
/* this rank's RANK/<rank> entry in rank2file */
scr_kvtree* scr_flush_rank2file_start(int id, scr_kvtree* rank2file);
/* how copying src (filemap entry meta) to dst ended: rc, and size and crc of
 * the bytes copied, checked against the filemap; a good copy goes into mine.
 * Returns 1 when good, 0 after an error message. */
int scr_flush_check_copy(int id, const char* src, const char* dst, scr_kvtree* meta, int rc, uint64_t size,
                         uint32_t crc, scr_kvtree* mine);
/* this rank's files attached to the dataset (a pointer file), copied now */
void scr_flush_copy_attached(int id);
/* collective: with ok from every rank, rank 0 writes rank2file, summary, index
 * entry and flush file; the dataset is marked flushed. start: when it began;
 * current: a checkpoint becomes the one the index offers first. */
/* mode ("sync" or "async") goes into the event log's FLUSH_COMPLETE */
int scr_flush_finish(int id, int ok, const scr_kvtree* rank2file, double start, int current, const char* mode);
/* after a flush's collective outcome rc: the dataset marked flushed, the
 * event log's and the user's lines; returns rc */
int scr_flush_recorded(int id, int rc, double start, const char* mode);
/* meta's copy is the file at dst now (FLUSHED_COPY: see scr_filemap.h) */
void scr_flush_note_copy(scr_kvtree* meta, const char* dst);
/* 1 when dst is the copy meta's file's last flush made, moved there since */
int scr_flush_copy_is_in_place(const scr_kvtree* meta, const char* dst);
/* rank 0: the event log's line for a flush of dataset id that begins now */
void scr_flush_log_start(int id, const char* mode);

#endif
