/* scr_fetch.h - bring a checkpoint from the prefix directory into cache at SCR_Init,
 * verifying every file, and fall back to older checkpoints when one is damaged. */
#ifndef SCR_FETCH_H
#define SCR_FETCH_H

/* collective: fetch the index's current checkpoint, else the newest complete one,
 * falling back to older ones (each failure is marked FAILED in the index).
 * *id gets the dataset now in cache, or -1 when nothing could be fetched. */
int scr_fetch_latest(int* id);

/* collective: as scr_fetch_latest, among checkpoints older than dataset below */
int scr_fetch_older(int below, int* id);

/* collective: fetch the dataset of that name (for SCR_Current); *id as above */
int scr_fetch_by_name(const char* name, int* id);

#endif
