/* scr_preload_engine_impl.h - shared by the engine's parts: writing datasets through
 * the hooks (engine, names) and showing cached ones at their paths (view, mirror, share). */
#ifndef SCR_PRELOAD_ENGINE_IMPL_H
#define SCR_PRELOAD_ENGINE_IMPL_H

#include <pthread.h>
#include <mpi.h>
#include <stdint.h>
#include <sys/types.h>
#include "scr_kvtree.h"
#include "scr_preload_hooks.h"

/* one lock for the engine's state and the library's: hooks come from any thread */
extern pthread_mutex_t scr_engine_lock;

/* ---- the view (scr_preload_view.c), called with scr_engine_lock held */

/* the cached file shown at the absolute path orig: the newest dataset of this
 * rank's filemap that holds it (its files, then files attached to it), or the
 * copy of an attached file kept on the prefix directory; *dataset gets the
 * dataset id. NULL when nothing is shown there (malloc'd otherwise). */
char* scr_view_find(const char* orig, int* dataset);
/* the same without the copies on the prefix directory (no system call) */
char* scr_view_find_cached(const char* orig, int* dataset);
/* a file (orig) just routed into the dataset in progress (id) as cache, whose route changed
 * no tree but its own entry in the filemap since scr_kvtree_changes() was
 * `before`: the view's index of shown files takes it in place of being
 * made anew (which costs a pass over every cached file) */
void scr_view_routed(unsigned long before, const char* orig, const char* cache, int id);

/* remember a directory the view shows though the file system lacks it and
 * nothing shown is below it (shown by stat and listings) */
void scr_view_add_directory(const char* path);
/* 1 when path is such a directory or holds a file shown by the view */
int scr_view_is_directory(const char* path);
/* rmdir of a directory in the view: SCR_VIEW_DIRECTORY_REMOVED when it is
 * one made by mkdir (or kept after removals) and holds nothing shown (with
 * remove set, it is then gone from the view), _NOT_EMPTY when it holds a
 * shown file or such a directory, _UNKNOWN otherwise */
enum { SCR_VIEW_DIRECTORY_UNKNOWN, SCR_VIEW_DIRECTORY_REMOVED, SCR_VIEW_DIRECTORY_NOT_EMPTY };
int scr_view_remove_directory(const char* path, int remove);
/* directories made by mkdir at or below from are named below to instead */
void scr_view_rename_directories(const char* from, const char* to);
/* directories made by mkdir at or below path leave the view: all of them,
 * or with only_real those the file system has (which list themselves) */
void scr_view_forget_directories(const char* path, int only_real);

/* a child process made by fork (scr_preload_child_view.c): the
 * directories its parent's view held are forgotten, not freed (another
 * thread of the parent may have been changing them at the fork) */
void scr_view_forget_inherited(void);

/* call visit(orig, shown, is_directory, arg) for every file the view shows
 * (newest dataset first; shown: the file to read) and every directory made
 * by mkdir (shown NULL); stops at and returns the first non-zero result */
int scr_view_each_entry(int (*visit)(const char* orig, const char* shown, int is_directory, void* arg), void* arg);

/* ---- one routed file (scr_preload_engine_file.c): its record, what its path
 * says, its other names, its directory; no state of its own */

/* a routed open, kept by the preload with the descriptor (the hooks' *file) */
struct scr_engine_file {
  int dataset;             /* id of the dataset it belongs to */
  int attached;            /* attached to a complete dataset (a pointer file) */
  char* orig;              /* the path the application opened */
  char* relpath;           /* the same relative to the prefix directory */
  char* cache;             /* the file actually opened */
  int updating;            /* a file of a completed dataset opened to change it in place */
  uint64_t before_size;    /* ... its size and change time ("s.ns") before, and its CRC when */
  char before_ctime[32];   /* that time was too recent to tell a change by (before_crc_known) */
  uint32_t before_crc;
  int before_crc_known;
  int mapped;              /* stored through a mapping: changed, whatever its size and times say */
};

/* a record for a routed open (NULL when memory is short), and its end */
struct scr_engine_file* scr_engine_file_new(int dataset, int attached, const char* orig, const char* relpath,
                                            const char* cache);
void scr_engine_file_free(struct scr_engine_file* f);

/* the rule a target matched, or NULL */
const scr_preload_rule* scr_engine_rule(const scr_preload_target* target);
/* the name of the dataset a file of target's rule belongs to (malloc'd) */
char* scr_engine_dataset_name(const scr_preload_target* t, const char* relpath);
/* visit(cache, meta, arg) for this rank's file `cache` of dataset id and
 * each other name of it there (its hard links: the same LINK, scr_filemap.h);
 * stops at and returns the first non-zero result */
int scr_engine_link_each(int id, const char* cache, int (*visit)(const char* cache, scr_kvtree* meta, void* arg),
                         void* arg);
/* another name (its cache path) of this rank's file `cache` of dataset id, or NULL */
const char* scr_engine_link_other(int id, const char* cache);
/* 1 when cache paths a and b of dataset id are names of one file */
int scr_engine_link_same(int id, const char* a, const char* b);
/* 1, with errno ENOENT or ENOTDIR, when the directory a new name path would
 * go in is neither on the file system nor shown by the view; else 0, errno
 * kept, and *nlink (when not NULL) the directory's st_nlink there, or 0 */
int scr_engine_parent_missing(const char* path, nlink_t* nlink);
/* 1 with errno EISDIR when a new file at path, in a directory of st_nlink
 * nlink, would stand in front of a directory the program made there */
int scr_engine_name_is_directory(const char* path, nlink_t nlink);

/* ---- the dataset in progress (scr_preload_engine_dataset.c), lock held
 * unless said otherwise */

/* 1 when routing a new file for target would first complete the dataset
 * in progress (another {step}): a collective, which a rename on one rank
 * must not start */
int scr_engine_would_complete(const scr_preload_target* target);
/* a new file for the dataset target belongs to: the cache path to open and
 * whether it is attached; SCR_FAILURE to leave it to the file system */
int scr_engine_route_new(const scr_preload_target* t, const scr_preload_rule* rule, const char* relpath, char* cache,
                         size_t length, int* attached);
/* 1 when dataset is the one this rank is writing */
int scr_engine_writing(int dataset);
/* a file routed by scr_engine_route_new came in whole (renamed from a name no
 * rule matches): it counts as opened and closed, which may complete the
 * dataset (lock held) */
void scr_engine_file_joined(void);
/* the newest dataset completed in this run (or restored), -1 if none */
int scr_engine_done_id(void);
/* scr_engine_route_new for a target whose dataset the caller has just
 * looked up in the view: existing is the dataset that shows it, -1 for
 * none, or SCR_ENGINE_UNKNOWN */
#define SCR_ENGINE_UNKNOWN (-2)
int scr_engine_route_new_shown(const scr_preload_target* t, const scr_preload_rule* rule, const char* relpath,
                               char* cache, size_t length, int* attached, int existing);
/* what the hooks (scr_preload_engine.c) tell it: the rules in force, at
 * start-up; the dataset restored (the newest done); a routed file opened,
 * closed, or not routed when it had to be (the dataset is invalid) */
void scr_engine_dataset_start(const scr_preload_ruleset* rules);
void scr_engine_dataset_restored(int id);
void scr_engine_dataset_file_opened(void);
void scr_engine_dataset_file_closed(void);
void scr_engine_dataset_broken(void);
/* ROMIO's MPI_File_open closes the file it created and opens it again: the
 * close counts for nothing (reopen_later), the reopen of path in dataset
 * (reopening: 1 when it is that one) as the same open (reopened, with
 * whether it opened) */
void scr_engine_dataset_reopen_later(const char* path);
int scr_engine_dataset_reopening(int dataset, const char* path);
void scr_engine_dataset_reopened(int opened);
/* collective: MPI_Finalize completes a dataset still in progress on any rank */
void scr_engine_dataset_finalize(void);
/* collective over comm, without the lock held: a barrier of MPI_COMM_WORLD
 * as a meeting point, which completes a dataset of a BOUNDARY=BARRIER rule */
void scr_engine_dataset_meet_at_barrier(MPI_Comm comm);

/* after cached left this rank's cache: its directories there that are
 * empty now go, up to its dataset's (a name once a directory of cached
 * files may be a file's next) */
void scr_engine_prune_cache_dirs(const char* cached);
/* the engine's moves of one name (scr_preload_engine_names.c), lock held:
 * within the cache, the filemap entry following the file (alone: no other
 * rank renames with this one, so no collective may start); out of the cache
 * to a name no rule matches (copied, then taken from the cache); and the
 * directory a name left, kept as the file system would keep it */
int scr_engine_rename_cached(const char* cache_from, int dataset, const scr_preload_target* to, const char* relpath,
                             int alone);
int scr_engine_rename_out(const char* cached, int dataset, int shared, const scr_preload_target* from,
                          const scr_preload_target* to);
void scr_engine_keep_parent(const char* path);

/* rank 0: the index no longer offers dataset id for a restart (its files on
 * the prefix directory are not whole any more) */
void scr_engine_index_incomplete(int id);
/* rank 0: a file of target's rule that is not in cache was deleted: the
 * complete checkpoint the index names after its step, if any, is not whole */
void scr_engine_index_file_deleted(const scr_preload_target* target);
/* a file of target's rule (with {step}) that is not in cache: the id of the
 * index entry named after its step that lists it (a flushed checkpoint the
 * cache let go), else -1. Reads the index and that entry's file list. */
int scr_engine_index_listing(const scr_preload_target* target);

/* ---- pointer files (scr_preload_pointers.c), lock held */

/* a file without {step} written once dataset completed (the pointer to the
 * newest checkpoint) is kept with it, outside its redundancy: the cache path
 * to open for orig, recorded in the filemap */
int scr_pointers_attach(int dataset, const char* orig, const char* relpath, char* cache, size_t length);
/* such a file closed: its size and CRC recorded, and a copy kept on the
 * prefix directory (and at orig once the dataset is flushed) */
void scr_pointers_closed(const struct scr_engine_file* f);
/* collective: the datasets holding the newest copy of each pointer file are
 * pinned in cache (scr_cache_pin) */
void scr_pointers_pin(void);
/* the same in two halves, for a caller that carries the first agreement in
 * a collective of its own: this rank's newest such dataset (-1: none),
 * local; then, collective, with the maximum over ranks of that */
int scr_pointers_pin_local(void);
void scr_pointers_pin_finish(int first);
/* this rank's attached files whose copy in cache or on the prefix directory
 * fails its CRC32 made again from the other copy, or removed when both do;
 * every rank calls it before scr_pointers_pin, whose agreement then orders
 * the repairs before any rank reads a copy */
void scr_pointers_verify(void);
/* this rank's newest complete checkpoint that the program renamed a file or
 * directory of while it was the newest (RENAMED_INTO_PLACE), -1 for none;
 * and the one pinned in cache now, the same on every rank */
int scr_pointers_renamed_newest(void);
int scr_pointers_renamed_pinned(void);
/* a meeting point agreed on the newest (the maximum of every rank's): kept
 * for the next completion, and pinned at once when may_move (no rank has
 * begun a dataset, whose start evicts by the pins on each rank alone) */
void scr_pointers_renamed_agreed(int newest, int may_move);
/* collective, at a completion before it trims the cache: the one the
 * meeting that began it agreed on is pinned; at start-up, agreed and pinned */
void scr_pointers_pin_renamed(void);
void scr_pointers_pin_renamed_start(void);

/* ---- files written through a mapping (scr_preload_engine_mapped.c), lock held */

/* after dataset id completed: its files of this rank still mapped writable
 * and shared (/proc/self/maps) are watched as opened for update in place */
void scr_engine_mapped_watch(int id);
/* a routed file was opened with these flags (only O_RDWR matters: see
 * scr_preload_engine_mapped.c) */
void scr_engine_mapped_may(int flags);
/* at a meeting point, before the in-place changes are counted: the watched
 * files no longer mapped end their update; all of them when last_point
 * names a point after which none may wait (a completion, MPI_Finalize) */
void scr_engine_mapped_release(const char* last_point);

/* ---- files of completed datasets changed in place (scr_preload_engine_update.c), lock held */

/* `cache`, this rank's file of the completed dataset `dataset`, is about to
 * be changed in place: its entry is marked incomplete and the dataset's
 * redundancy stale, on disk, first. Returns the record to keep with the
 * descriptor, or NULL (not a file of this rank's part: nothing done). */
struct scr_engine_file* scr_engine_update_begin(int dataset, const char* orig, const char* relpath,
                                                const char* cache);
/* its descriptor closed: size and CRC read again, the entry complete; a
 * dataset whose bytes changed waits for scr_engine_update_reprotect */
void scr_engine_update_end(struct scr_engine_file* f);
/* this rank's file cache_from of dataset moved to cache_to (a rename, its
 * directory's or its own): a completed dataset's redundancy names the old
 * path, so it is protected again at the next meeting point; a record open
 * for update follows the file */
void scr_engine_update_moved(int dataset, const char* cache_from, const char* cache_to, const char* orig);
/* a flushed copy of dataset's files is about to move on the prefix
 * directory: its index entry is marked not whole (once per rank until the
 * dataset is protected again, which flushes the new names) */
void scr_engine_update_prefix_moving(int dataset);
/* truncate of such a file, between the two; truncate's result and errno */
int scr_engine_update_truncate(int dataset, const char* orig, const char* cache, off64_t length);
/* the newest dataset this rank changed in place and closed, -1 for none */
int scr_engine_update_pending(void);
/* collective, where every rank is anyway: encode again (and flush again)
 * each dataset some rank changed in place */
void scr_engine_update_reprotect(void);
/* dataset id, restored at start-up, was changed in place by the run before
 * and not protected again: protect it at the next collective point */
void scr_engine_update_adopt(int id);

/* the names of dataset's files changed on this rank (a hard link made, or
 * one name of a file with several deleted: linked set), not their bytes:
 * its redundancy takes them at the next meeting point, and its flushed copy */
void scr_engine_update_names(int dataset, int linked);

/* ---- names of one file, hard links (scr_preload_engine_links.c), lock held */

/* the hook (takes the lock) */
int scr_engine_link(const scr_preload_target* from, const scr_preload_target* to, int flags, int* handled);
/* at start-up, after a rebuild or a move to another node, which make each
 * name a file of its own: the names of one file are hard links again */
void scr_engine_links_restore(void);

/* ---- calls that change names (scr_preload_engine_names.c), the hooks */
/* rename of a name the view shows as a file (the hooks' rename takes the
 * directories to scr_engine_rename_directory) */
int scr_engine_rename_file(const scr_preload_target* from, const scr_preload_target* to, unsigned int flags,
                           int* handled);
/* after a call the engine handled (*handled): the files it moved or deleted
 * told to the background copy; rc and errno as the call left them */
int scr_engine_tell_background_copy(int rc, const int* handled);
int scr_engine_unlink(const scr_preload_target* t, int at_flags, int* handled);
int scr_engine_truncate(const scr_preload_target* t, off64_t length, int* handled);
int scr_engine_mkdir(const scr_preload_target* t, mode_t mode, int* handled);
int scr_engine_materialize(const scr_preload_target* t, int* handled);
/* collective, lock held, called by every rank once some rank has renamed a
 * directory (scr_engine_rename_pending, agreed at a meeting point): the
 * directories other ranks renamed since the last call are renamed in this
 * rank's view and cache too */
void scr_engine_rename_sync(void);
/* rename of a directory the view shows (scr_preload_engine_rename_dir.c):
 * this rank's files below it move at once, the other ranks' at the next
 * meeting point; *handled as for scr_engine_rename_file */
int scr_engine_rename_directory(const scr_preload_target* from, const scr_preload_target* to, int* handled);
/* 1 when this rank renamed a directory since the last sync */
int scr_engine_rename_pending(void);
/* collective, after a meeting point followed renames or protected changed
 * datasets again: the journal of renames goes once no rank has a dataset
 * left to protect again (until then a rebuilt node's files carry the names
 * the redundancy was encoded with, and only the journal has the new ones) */
void scr_engine_rename_journal_settle(void);
/* collective, at start-up: the directory renames a run that died made on
 * the file system before every rank had followed them are followed now
 * (the journal <prefix>/.scr/renamed.<rank>.scr) */
void scr_engine_rename_recover(void);
/* collective, lock held, at MPI_Finalize before SCR_Finalize flushes the
 * newest checkpoint: the cached ones whose files the program deleted on
 * some rank are marked incomplete (in cache, and in the index when flushed),
 * so that the newest whole one is flushed and restored instead */
void scr_engine_deletions_settle(void);

/* each rank's directories in the cache directory, "<name>.<rank>": the
 * mirrors of virtual directories, the copies of files other ranks wrote, and
 * the placeholders stat shows for other ranks' files */
#define SCR_MIRROR_DIRECTORY ".scr_view"
#define SCR_SHARE_DIRECTORY ".scr_shared"
#define SCR_PEER_DIRECTORY ".scr_peers"

/* ---- other ranks' files of completed datasets, lock held: the list
 * (scr_preload_peers.c, MPI-free: a rank's child process shows it too) */

/* call visit(orig, id, arg) for every other rank's file shown; stops at and
 * returns the first non-zero result */
int scr_peers_each(int (*visit)(const char* orig, int id, void* arg), void* arg);
/* 1 when another rank's file is shown at orig */
int scr_peers_shows(const char* orig);
/* a placeholder with the size, mode and time of another rank's file shown at
 * orig, for stat and access (malloc'd; never to be read), NULL if none */
char* scr_peers_stat_path(const char* orig);
/* orig is another rank's file shown here: it leaves this rank's view, its
 * owner deletes it at the next meeting point; 1 and *dataset, else 0 */
int scr_peers_unlink(const char* orig, int* dataset);
/* this rank deleted (renamed, gave another name: a hard link) its own file
 * of complete dataset id: the other ranks learn it at the next meeting point */
void scr_peers_note_deleted(int id, const char* orig);
void scr_peers_note_renamed(int id, const char* from, const char* to);
void scr_peers_note_linked(int id, const char* from, const char* to);
/* a directory was renamed (here, or by another rank: scr_engine_rename_sync) */
void scr_peers_rename_directory(const char* from, const char* to);
/* 1 when this rank has changes to tell */
int scr_peers_pending(void);
/* every entry and recorded change forgotten (freed); the placeholders removed */
void scr_peers_forget(void);
void scr_peers_remove_placeholders(void);
/* a child process made by fork: what it copied of the parent's entries is
 * forgotten, not freed, and no placeholder is touched (they are the parent's) */
void scr_peers_forget_inherited(void);

/* for the exchanges: this rank's files of dataset id as records (size,
 * mode, mtime s, ns as 8 bytes each, then orig and a NUL; malloc'd, *bytes);
 * the records rank owner sent for dataset id, shown from now; the changes
 * recorded since the last call ("D\0id\0owner\0orig\0" for a deletion,
 * "R\0id\0owner\0from\0to\0" for a rename, "L" alike for a link; malloc'd, taken); owner's
 * file deleted or renamed; entries of datasets no longer cached, and
 * deleted ones, dropped */
char* scr_peers_pack(int id, int* bytes);
void scr_peers_add_packed(const char* records, size_t bytes, int id, int owner);
char* scr_peers_take_pending(size_t* bytes);
void scr_peers_drop(const char* orig, int owner);
void scr_peers_move(const char* from, const char* to, int owner);
/* a second name of owner's file from, as a hard link gives it */
void scr_peers_link(const char* from, const char* to, int owner);
void scr_peers_compact(void);

/* the node's file of every name its ranks show, in the control directory,
 * for the processes they start: written by the node's first rank (every
 * name it shows, its own files of complete datasets too), and in a child
 * process read instead of what was known, but for the parent's own files
 * (which its filemap gives); the first rank removes it at MPI_Finalize */
#define SCR_PEERS_PUBLISHED "preload.peers"
void scr_peers_write_published(void);
void scr_peers_load(void);
void scr_peers_unpublish(void);

/* ---- the same, exchanged (scr_preload_peers_exchange.c, MPI), lock held */

/* collective, at start-up: ready for the exchanges below */
void scr_peers_init(void);
/* collective: the ranks' files of dataset id (complete, or failed: then
 * never shown) become known to every other rank, and the node's file is
 * written anew (a collective must follow before a rank returns to the
 * program, for its children to find it: scr_peers_publish) */
void scr_peers_gather(int id);
/* The same in one collective (an MPI_Allgather of equal slots), for a caller
 * that agreed beforehand on the largest scr_peers_pack of the ranks (bytes)
 * and made sure that every rank has room for it: scr_peers_slot_room()
 * bytes of pack, in a buffer kept between completions (0 before a
 * scr_peers_gather sized it; the fast way needs more than 0). mine, bytes:
 * this rank's pack */
size_t scr_peers_slot_room(void);
void scr_peers_gather_slots(int id, const char* mine, int bytes, int largest);
/* collective, at start-up: the same for every dataset in cache */
void scr_peers_gather_cached(void);
/* the collective that tells every rank's changes */
void scr_peers_sync(void);
/* the node's file written anew after the names changed, by the node's
 * first rank; with wait, collective on the node: its ranks wait for it (a
 * barrier), where no later collective makes them (a meeting point) */
void scr_peers_publish(int wait);
/* forget every entry and remove the placeholders (start-up, MPI_Finalize) */
void scr_peers_clear(void);
/* (scr_preload_engine_names.c) another rank deleted this rank's file orig of
 * dataset id: this rank deletes it too, as an unlink of its own would */
void scr_engine_delete_own(int id, const char* orig);

/* ---- mirrors of virtual directories (scr_preload_mirror.c), lock held */

/* at SCR_Init and SCR_Finalize: the mirror root, which the preload learns */
int scr_mirror_init(void);
void scr_mirror_finalize(void);
/* a child process: no mirror (the parent's root, which a fork copied, is the
 * parent's to fill); scr_mirror_directory then makes none */
void scr_mirror_forget_inherited(void);
/* the real directory that stands for the virtual directory dir (made when
 * missing), filled anew with the view's entries below dir when fill is set;
 * malloc'd, NULL on failure */
char* scr_mirror_directory(const char* dir, int fill);
/* the mirror of the virtual directory dir gets the time the view gives
 * dir (scr_preload_view.c) */
void scr_view_stamp_mirror(const char* dir, const char* mirror);
/* orig left the view (deleted file, removed directory): its mirror entry goes */
void scr_mirror_forget(const char* orig);

/* ---- files one rank wrote for all, lock held: the copying at restart
 * (scr_preload_share_restart.c, MPI) */

/* collective: the files of the restored dataset id that exactly one rank
 * wrote through a rule without {rank} become visible to every rank */
void scr_share_restored(int id);

/* ---- and the copies kept (scr_preload_share.c, MPI-free) */

/* where this rank keeps its copy of orig (its directories made; malloc'd),
 * NULL when it cannot; the copy made there, shown at orig for dataset id
 * (shown taken; removed when it cannot be listed) */
char* scr_share_copy_path(const char* orig);
void scr_share_add(const char* orig, char* shown, int id);
/* call visit(orig, shown, id, arg) for each such file of dataset id; stops at
 * and returns the first non-zero result */
/* changes of the list of copies, counted: unchanged means the same list */
extern unsigned long scr_share_changes;
int scr_share_each(int id, int (*visit)(const char* orig, const char* shown, int id, void* arg), void* arg);
/* forget the shared file shown at `shown` (the application deleted it): 1 if
 * it was one */
int scr_share_drop(const char* shown);
/* 1 when shown is one of this rank's copies of another rank's file */
int scr_share_holds(const char* shown);
/* remove every copy (at start-up, what a run that died left; at the end) */
void scr_share_clear(void);
/* a child process of the rank: the copies the rank keeps for dataset id
 * (the one its MPI_Init restored; -1: none), found in their directory; the
 * list held before is freed, or with forget_inherited first, forgotten */
void scr_share_load(int id);
void scr_share_forget_inherited(void);

/* the view's hooks */
int scr_view_stat(const scr_preload_target* target, int at_flags, char* redirect, int* handled);
int scr_view_access(const scr_preload_target* target, int amode, int at_flags, char* redirect, int* handled);
DIR* scr_view_opendir(const scr_preload_target* target, char* redirect, void** dir, int* handled);
struct dirent64* scr_view_readdir(DIR* stream, void* dir, int* handled);
void scr_view_rewinddir(DIR* stream, void* dir);
int scr_view_closedir(DIR* stream, void* dir, int* handled);

#endif
