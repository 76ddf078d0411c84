/* scr_publish.h - a flush staged under <prefix>/.scr/ and published by renames:
 * the staging area, the record that commits it, and the recovery after a crash. MPI-free. */
#ifndef SCR_PUBLISH_H
#define SCR_PUBLISH_H

#include "scr_kvtree.h"

/* A flush that publishes (the preload layer's, where the program renames and
 * deletes its checkpoint files itself at any time) copies each file into
 * <prefix>/.scr/stage.<id>/<relpath>, a place no path of the program names,
 * on the same file system as the file's own place. Once every rank's copies
 * are there, rank 0 writes <prefix>/.scr/publish.<id>.scr atomically: the
 * commit. Then every file is renamed into place, the dataset's metadata
 * written, and the stage and the record removed. So at any moment the
 * program's paths show the state before the flush (no record: the stage is
 * removed by the next recovery) or, once the record exists, the state after
 * it, which a recovery completes if the job died in the middle.
 *
 * Record layout (a key-value tree):
 *   VERSION = 1
 *   DSETDESC/...               the dataset descriptor (scr_dataset.h)
 *   CURRENT = 0|1              a checkpoint becomes the index's current one
 *   COMPLETE = 0|1             every rank's files are whole (0: the program
 *                              deleted some: indexed, not offered for restart)
 *   RANK2FILE/...              the rank2file map (scr_summary_file.h), each
 *                              FILE/<relpath> with STAGE = <relpath in the
 *                              stage> when its bytes wait there, and LINK
 *                              when it is another name of a file of the rank */
#define SCR_PUBLISH_KEY_STAGE "STAGE"

/* "<prefix>/.scr/stage.<id>" and "<prefix>/.scr/stage.<id>/<relpath>", malloc'd */
char* scr_publish_stage_dir(const char* prefix, int id);
char* scr_publish_stage_path(const char* prefix, int id, const char* relpath);

/* the stage directory made, and locked (flock of the directory) for as long
 * as *fd stays open, so that a recovery run by another job at the same
 * prefix leaves it alone */
int scr_publish_stage_open(const char* prefix, int id, int* fd);

/* the commit: the record written atomically (synced). Then read back */
int scr_publish_record_write(const char* prefix, int id, const scr_kvtree* record);
int scr_publish_record_read(const char* prefix, int id, scr_kvtree* record);

/* the files of one rank's entry of a rank2file map (RANK/<r>) moved from
 * the stage into place: each staged file renamed (copied, across file
 * systems), each other name of a file linked to it. Idempotent: a file no
 * longer in the stage was moved before. *failed counts files that could not
 * be (may be NULL). SCR_SUCCESS when all could. */
int scr_publish_move_rank(const char* prefix, int id, const scr_kvtree* rank, int* failed);

/* the dataset recorded on the prefix directory: rank2file map (without the
 * STAGE keys), summary, index entry (current and complete as said), flush
 * file. Shared by every flush. */
int scr_publish_metadata(const char* prefix, int id, const scr_kvtree* desc, const scr_kvtree* rank2file,
                         int current, int complete);

/* after every rank moved its files: the metadata from the record, then the
 * stage and the record removed (the record last). Idempotent. */
int scr_publish_finish(const char* prefix, int id, const scr_kvtree* record);

/* The same off the caller's way: in a thread of the process (started by
 * calling thread_start first, when not NULL), which takes record and
 * releases the stage's lock (lock_fd, of scr_publish_stage_open). Until it
 * is done, the record on the prefix directory says the publish committed;
 * every update of the index or the flush file waits for it first
 * (scr_publish_settle), so that nothing the process records after the
 * publish comes before it. */
void scr_publish_finish_later(const char* prefix, int id, scr_kvtree* record, int lock_fd,
                               void (*thread_start)(void));
/* The finish begins when the caller releases it, once it has given the
 * program back what it was doing (or a second later, or at the next
 * settle): idempotent, no-op when none waits. */
void scr_publish_release(void);
/* wait for a finish started by scr_publish_finish_later (none: at once;
 * on the finisher's own thread: never) */
void scr_publish_settle(void);

/* a stage without a record (a flush that did not commit) removed, with what
 * the flush file said of it */
void scr_publish_abandon(const char* prefix, int id, const char* name);

/* what scr_index shows of the flushes under way: DSET/<id>/LOCATION =
 * FLUSHING for a stage, PUBLISHING for a committed record (and NAME, the
 * record's, when the entry has none), added to where
 * (no file of SCR's is written for either: the stage and the record say it) */
void scr_publish_list(const char* prefix, scr_kvtree* where);

/* Before anything reads the prefix directory (SCR_Init, and so scr_scavenge):
 * each committed publish completed, each stage without a record removed,
 * except those another running job holds. The ids completed are added to
 * published as DSET/<id>/NAME = <name>, those of the stages removed as
 * ABANDONED/<id> (published may be NULL). */
int scr_publish_recover(const char* prefix, scr_kvtree* published);

#endif
