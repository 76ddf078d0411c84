/* scr_flush_publish.h - the preload layer's flush: each file copied into the stage on
 * the prefix directory (by the background copy or now), committed, then renamed into place. */
#ifndef SCR_FLUSH_PUBLISH_H
#define SCR_FLUSH_PUBLISH_H

#include <stdint.h>
#include "scr_kvtree.h"

/* rank 0, from scr_flush_prepare: the dataset's stage made and held (see
 * scr_publish_stage_open) until it is published or abandoned */
int scr_flush_publish_open(int id);

/* Collective: dataset id published. copied: what the background copy left
 * in the stage, DST/<stage path>/{WRITTEN, CRC, ERROR} (this rank's files;
 * NULL: nothing); a file it did not leave there whole, or whose bytes
 * changed since it was handed over, is copied now. moved (NULL, or as
 * scr_flush_dataset_again's): a file whose earlier copy now lies at its
 * place is taken as it is, and counted. current, start, mode: as
 * scr_flush_finish's. SCR_SUCCESS once the dataset is in place and indexed;
 * otherwise the prefix directory is as it was and the dataset in cache. */
int scr_flush_publish(int id, const scr_kvtree* copied, int current, double start, const char* mode,
                      uint64_t* moved);

/* Collective: the stage of dataset id given up (the flush in flight is
 * cancelled): removed, and the dataset is in cache only */
void scr_flush_publish_abandon(int id);
/* the same, rank 0's part alone: the stage and its lock */
void scr_flush_publish_abandon_local(int id);

/* rank 0, at SCR_Init before anything reads the prefix directory: what a
 * job that died left (scr_publish_recover) */
void scr_flush_publish_recover(void);
/* collective, once every rank holds its filemap: a dataset whose publish the
 * recovery completed is marked flushed where the cache holds it */
void scr_flush_publish_adopt(void);
/* collective, at the end of SCR_Init: the checkpoint restored, when a flush
 * of it was under way as the job died (its stage removed by the recovery),
 * is flushed again (in the background with SCR_FLUSH_ASYNC=1) */
void scr_flush_publish_resume(void);

#endif
