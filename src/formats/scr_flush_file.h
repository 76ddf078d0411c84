/* scr_flush_file.h - <prefix>/.scr/flush.scr: where each cached dataset stands
 * with respect to the prefix directory, read by scr_postrun to decide what to scavenge. */
#ifndef SCR_FLUSH_FILE_H
#define SCR_FLUSH_FILE_H

#include "scr_kvtree.h"

/* Layout: DSET/<id>/NAME = <name>, LOCATION = CACHE | FLUSHING | PUBLISHING | PFS.
 * What the file promises, after any crash: some dataset is listed as CACHE or
 * FLUSHING whenever the cache holds one that is not on the prefix directory,
 * and a dataset is FLUSHING exactly while a flush of it is under way. The rest
 * may lag (a dataset evicted from cache may still be listed, one that
 * completed in cache while an older one was there may not be yet): it is
 * written out with the next change a reader would see, and exact after
 * scr_flush_file_match. */
#define SCR_FLUSH_FILE_CACHE    "CACHE"
#define SCR_FLUSH_FILE_FLUSHING "FLUSHING"
#define SCR_FLUSH_FILE_PFS      "PFS"
/* committed, being moved into place (scr_publish.h): the next SCR_Init or
 * scr_postrun completes it */
#define SCR_FLUSH_FILE_PUBLISHING "PUBLISHING"

int scr_flush_file_set_location(const char* prefix, int id, const char* name, const char* location);
/* 1 when the file says a flush of dataset id began and never ended (FLUSHING) */
int scr_flush_file_was_flushing(const char* prefix, int id);
/* forget a dataset that left the cache (written out with the next change
 * that matters, see above) */
int scr_flush_file_remove(const char* prefix, int id);
/* make the file list exactly the datasets of filemap (a rank's, at start-up):
 * CACHE, or PFS for those marked FLUSHED; entries of datasets a lost
 * allocation took are dropped. Written only when it changes. */
int scr_flush_file_match(const char* prefix, const scr_kvtree* filemap);

#endif
