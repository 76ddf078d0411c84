/* scr_flush_async.h - flush in the background (SCR_FLUSH_ASYNC=1): each node's
 * scr_transfer daemon copies its ranks' files; the library completes the flush when all are copied. */
#ifndef SCR_FLUSH_ASYNC_H
#define SCR_FLUSH_ASYNC_H

/* collective, at SCR_Init after the filemap is loaded: forget what a killed
 * run left (the node's transfer file, datasets marked FLUSHING) */
void scr_flush_async_init(void);

/* 1 while dataset id is flushed in the background (handed over, not yet
 * completed or, under the preload layer, published) */
int scr_flush_async_in_flight(int id);

/* the program renamed this rank's file `from` of the dataset in flight to
 * `to` (cache paths): the background copy takes it from there (under its
 * place in the stage as handed over); told to the daemon by the next
 * scr_flush_async_tell_moves, which the caller makes once its renames are
 * done (a directory's files at once), and every progress makes first */
void scr_flush_async_moved(const char* from, const char* to);
/* the same for this rank's file `cache` of it deleted: the daemon copies it
 * no more */
void scr_flush_async_dropped(const char* cache);
void scr_flush_async_tell_moves(void);

/* collective: hand the checkpoint to the daemons, after finishing a flush in
 * flight. SCR_SUCCESS when it was handed over; otherwise (SCR_FLUSH_ASYNC=0,
 * cache bypass, no daemon) nothing was done and the caller flushes itself. */
int scr_flush_async_start(int id);

/* the preload layer's flush in flight, as this rank sees it: -1 none, 1 the
 * daemon has not copied all of this rank's files yet, 0 it has (then a
 * progress, collective, publishes it). Local; reads the node's transfer
 * file at most ten times a second. */
int scr_flush_async_copied(void);

/* collective, where every rank found scr_flush_async_copied() 0 and the
 * ranks agreed on it in a collective of their own: the flush in flight is
 * published without another agreement */
void scr_flush_async_publish(void);

/* collective: completes the flush in flight once every rank's files are
 * copied (summary, index; the dataset is marked flushed) or one failed (it
 * stays in cache, with an error). 1 when no flush is in flight afterwards. */
int scr_flush_async_progress(void);

/* the preload layer, when the program has back the call in which a flush
 * was handed over or published: the node's daemon is woken for the files
 * handed over, and the publish's metadata written (scr_publish_release).
 * Before, neither takes a core or the disk from a rank on its way back.
 * Not collective; nothing to do when nothing waits. */
void scr_flush_async_release(void);

/* collective: progress until no flush is in flight (the preload layer's:
 * the daemons are stopped and the ranks copy the rest themselves) */
void scr_flush_async_wait(void);

/* collective: completes the flush in flight, or, when the preload layer's
 * (scr.flush_publish) has not finished copying and the newer checkpoint
 * `newer` is about to be flushed, gives it up for that one */
void scr_flush_async_finish(int newer);

/* collective, at SCR_Finalize: wait, then stop this node's daemon */
void scr_flush_async_finalize(void);

#endif
