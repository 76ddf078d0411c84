/* scr_flush_file.h - <prefix>/.scr/flush.scr: where each cached dataset stands
 * with respect to the prefix directory, read by scr_postrun to decide what to scavenge. */
#ifndef SCR_FLUSH_FILE_H
#define SCR_FLUSH_FILE_H

/* Layout: DSET/<id>/NAME = <name>, LOCATION = CACHE | FLUSHING | PFS */
#define SCR_FLUSH_FILE_CACHE    "CACHE"
#define SCR_FLUSH_FILE_FLUSHING "FLUSHING"
#define SCR_FLUSH_FILE_PFS      "PFS"

int scr_flush_file_set_location(const char* prefix, int id, const char* name, const char* location);
/* forget a dataset that left the cache */
int scr_flush_file_remove(const char* prefix, int id);

#endif
