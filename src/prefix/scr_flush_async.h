/* scr_flush_async.h - flush in the background (SCR_FLUSH_ASYNC=1): each node's
 * scr_transfer daemon copies its ranks' files; the library completes the flush when all are copied. */
#ifndef SCR_FLUSH_ASYNC_H
#define SCR_FLUSH_ASYNC_H

/* collective, at SCR_Init after the filemap is loaded: forget what a killed
 * run left (the node's transfer file, datasets marked FLUSHING) */
void scr_flush_async_init(void);

/* collective: hand the checkpoint to the daemons, after finishing a flush in
 * flight. SCR_SUCCESS when it was handed over; otherwise (SCR_FLUSH_ASYNC=0,
 * cache bypass, no daemon) nothing was done and the caller flushes itself. */
int scr_flush_async_start(int id);

/* collective: completes the flush in flight once every rank's files are
 * copied (summary, index; the dataset is marked flushed) or one failed (it
 * stays in cache, with an error). 1 when no flush is in flight afterwards. */
int scr_flush_async_progress(void);

/* collective: progress until no flush is in flight */
void scr_flush_async_wait(void);

/* collective, at SCR_Finalize: wait, then stop this node's daemon */
void scr_flush_async_finalize(void);

#endif
