/* scr_preload_engine.c - turns the opens and closes of an unmodified program into
 * SCR datasets: start at the first matching open, completion at the rule's boundary. */
#include "config.h"
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <mpi.h>
#include "scr.h"
#include "scr_error.h"
#include "scr_log.h"
#include "scr_path.h"
#include "scr_io.h"
#include "scr_filemap.h"
#include "scr_globals.h"
#include "scr_mpi.h"
#include "scr_cache.h"
#include "scr_flush.h"
#include "scr_api.h"
#include "scr_preload_engine.h"
#include "scr_preload_engine_impl.h"
#include "scr_preload_state.h"

pthread_mutex_t scr_engine_lock = PTHREAD_MUTEX_INITIALIZER;

/* A rank has at most one dataset in progress (scr.in_output). Every rank
 * starts the same sequence of datasets, so ids agree without talking; the
 * name is agreed at completion. */
static struct {
  int active;              /* a dataset is in progress on this rank */
  long long step;          /* its {step}; -1 while not known (its name is provisional) */
  int boundary;            /* enum scr_preload_rule_boundary */
  long long expected;      /* files to close before a CLOSE completion */
  int opened, closed;      /* routed opens of the dataset, and their last closes */
  int broken;              /* a file could not be routed: the dataset is invalid */
  long long done_step;     /* {step} of the last completed dataset, -1 if none */
  int done_id;             /* id of the newest dataset completed in this run, -1 */
  int barrier_rules;       /* some rule completes at MPI_Barrier */
  const scr_preload_rule* rule;       /* the rule that began the dataset */
  const scr_preload_rule* done_rule;  /* the one that began the last completed dataset */
} engine = { .step = -1, .done_step = -1, .done_id = -1 };

/* a routed open, kept by the preload with the descriptor (the hooks' *file) */
struct engine_file {
  int dataset;             /* id of the dataset it belongs to */
  int attached;            /* attached to a complete dataset (a pointer file) */
  char* orig;              /* the path the application opened */
  char* relpath;           /* the same relative to the prefix directory */
  char* cache;             /* the file actually opened */
};

/* the rule a target matched, or NULL */
static const scr_preload_rule* scr_engine_rule(const scr_preload_target* target)
{
  return target->rules ? scr_preload_rules_at(target->rules, target->match.rule) : NULL;
}

static void engine_file_free(struct engine_file* f)
{
  if (!f) return;
  free(f->orig);
  free(f->relpath);
  free(f->cache);
  free(f);
}

/* ---- datasets */

/* The dataset name: the path up to the component that holds {step}, with
 * the rank digits, when they are in it, spelled "{rank}" so that every rank
 * proposes the same name ("ckpt.12", "restart_{rank}_000012.dat"). */
static char* engine_dataset_name(const scr_preload_target* t, const char* relpath)
{
  size_t rel_start = strlen(t->path) - strlen(relpath);
  size_t end = t->match.step_offset + t->match.step_length;
  while (end < t->length && t->path[end] != '/') end++;
  if (end <= rel_start) return strdup(relpath);
  size_t rank_at = t->match.rank_length ? t->match.rank_offset : (size_t) -1;
  size_t length = end - rel_start + 8;
  char* name = malloc(length + 1);
  if (!name) return NULL;
  size_t out = 0;
  for (size_t i = rel_start; i < end; i++) {
    if (i == rank_at) {
      memcpy(name + out, "{rank}", 6);
      out += 6;
      i += t->match.rank_length - 1;
    } else {
      name[out++] = t->path[i];
    }
  }
  name[out] = '\0';
  return name;
}

/* begin a dataset on this rank, without waiting for the others */
static void engine_begin(const char* name, const scr_preload_rule* rule, long long step)
{
  int flags = rule && rule->type == SCR_PRELOAD_TYPE_OUTPUT ? SCR_FLAG_OUTPUT : SCR_FLAG_CHECKPOINT;
  if (scr_output_begin(name, flags, 0) != SCR_SUCCESS) engine.broken = 1;
  engine.active = 1;
  engine.step = step;
  engine.boundary = rule ? rule->boundary : SCR_PRELOAD_BOUNDARY_CLOSE;
  engine.expected = rule && rule->files > 0 ? rule->files : 1;
  engine.opened = engine.closed = 0;
  engine.rule = rule;
  scr_dbg(1, "preload: dataset %d (%s) begins", scr.dataset_id, name ? name : "name not known yet");
}

/* Collective: complete the dataset in progress (ranks that have none take
 * part with an empty one). The name, flags and creation time are those of
 * the lowest rank that knows the dataset's {step}. */
static void engine_complete(void)
{
  double start = scr_log_seconds();
  if (!engine.active) engine_begin(NULL, NULL, -1);
  /* who names the dataset, and whether a rank never reached its FILES= */
  int short_of_files = engine.boundary == SCR_PRELOAD_BOUNDARY_CLOSE && engine.opened > 0 &&
                       engine.closed < engine.expected;
  int mine[2] = { engine.step >= 0 ? scr.rank : INT_MAX, -short_of_files }, all[2];
  MPI_Allreduce(mine, all, 2, MPI_INT, MPI_MIN, scr.comm_world);
  int root = all[0] == INT_MAX ? 0 : all[0];
  /* a local begin always leaves the rank in output (scr_output_begin), so
   * every rank runs the same collectives below */
  int id = scr.output_id;
  scr_output_agree(root);
  if (all[1] < 0 && scr.rank == 0)
    scr_warn("dataset %d (%s) completed late: a rank closed fewer files than PRELOAD=%s (%s) expects "
             "(FILES=%lld); set FILES= to the number every rank writes, or BOUNDARY=", id, scr.output_name,
             engine.rule ? engine.rule->pattern : "?",
             engine.rule && engine.rule->origin ? engine.rule->origin : "configuration", engine.expected);
  /* a new version of a cached step keeps the files it does not rewrite */
  if (scr.output_name && engine.step >= 0) scr_version_inherit(id, scr.output_name);
  /* a dataset that failed is gone: later files of its step must not join
   * the one before it */
  int done = SCR_Complete_output(!engine.broken) == SCR_SUCCESS;
  if (done) engine.done_id = id;
  scr_dbg(2, "preload: completing dataset %d took %.6f s", id, scr_log_seconds() - start);
  engine.done_step = done ? engine.step : -1;
  engine.done_rule = done ? engine.rule : NULL;
  engine.active = 0;
  engine.broken = 0;
  engine.step = -1;
}

/* Collective where every rank may or may not have something pending (a
 * barrier, MPI_Finalize): complete when any rank has a dataset in progress
 * whose boundary is `boundary` or earlier. */
static void engine_complete_if_pending(int boundary)
{
  int pending = engine.active && engine.boundary <= boundary, any = 0;
  MPI_Allreduce(&pending, &any, 1, MPI_INT, MPI_MAX, scr.comm_world);
  if (any) engine_complete();
}

/* ---- routing */

/* a new cache file holding what the descriptor in reads, with its mode: 0 or -1 */
static int engine_copy_from(int in, const char* cache)
{
  struct stat st;
  int out = fstat(in, &st) == 0 ? open(cache, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600) : -1;
  if (out < 0) return -1;
  char buf[65536];
  off_t offset = 0;
  ssize_t n;
  int rc = 0;
  while ((n = pread(in, buf, sizeof(buf), offset)) > 0) {
    if (scr_io_write_full(out, buf, (size_t) n) != n) {
      rc = -1;
      break;
    }
    offset += n;
  }
  if (n < 0 || fchmod(out, st.st_mode & 07777) != 0) rc = -1;
  if (close(out) != 0) rc = -1;
  return rc;
}

static int engine_open_cache(const char* cache, int flags, mode_t mode, int* handled)
{
  int fd = open(cache, flags, mode);  /* inside the guard: the real open */
  *handled = SCR_PRELOAD_HANDLED;
  return fd;
}

static struct engine_file* engine_file_new(int dataset, int attached, const char* orig, const char* relpath,
                                           const char* cache)
{
  struct engine_file* f = calloc(1, sizeof(*f));
  if (!f) return NULL;
  f->dataset = dataset;
  f->attached = attached;
  f->orig = strdup(orig);
  f->relpath = strdup(relpath);
  f->cache = strdup(cache);
  if (!f->orig || !f->relpath || !f->cache) {
    engine_file_free(f);
    return NULL;
  }
  return f;
}

/* a file without {step} written once the dataset completed (the pointer to the
 * newest checkpoint): kept with that dataset, outside its redundancy */
static int engine_attach(const char* orig, const char* relpath, char* cache, size_t length)
{
  char* dir = scr_cache_dataset_dir(engine.done_id);
  char* path = dir ? scr_path_join(dir, relpath) : NULL;
  char* parent = path ? scr_path_dirname(path) : NULL;
  int rc = parent && strlen(path) < length ? scr_io_mkdir_p(parent, 0700) : SCR_ERR_NOMEM;
  if (rc == SCR_SUCCESS) {
    scr_kvtree* mine = scr_kvtree_add_kv_int(scr_filemap_get_dataset(scr.filemap, engine.done_id), "RANK", scr.rank);
    scr_kvtree* meta = scr_kvtree_add_kv(mine, "ATTACHED", path);
    scr_kvtree_set_kv(meta, "ORIG", orig);
    scr_kvtree_set_kv(meta, "RELPATH", relpath);
    rc = scr_cache_save_filemap();
    snprintf(cache, length, "%s", path);
  }
  free(parent);
  free(path);
  free(dir);
  return rc;
}

/* the attached file is closed: record it, and keep a copy on the prefix
 * directory, where every rank and a later run find it even if this node is
 * lost; once the dataset is on the prefix directory, the file is too */
static void engine_attach_done(const struct engine_file* f)
{
  scr_kvtree* dset = scr_filemap_get_dataset(scr.filemap, f->dataset);
  scr_kvtree* meta = scr_kvtree_get(scr_kvtree_get(scr_kvtree_get_kv_int(dset, "RANK", scr.rank), "ATTACHED"),
                                    f->cache);
  uint32_t crc = 0;
  uint64_t size = 0;
  if (!meta || scr_io_crc32_file(f->cache, &crc, &size) != SCR_SUCCESS) return;
  scr_kvtree_set_kv_uint64(meta, "SIZE", size);
  scr_kvtree_set_kvf(meta, "CRC", "0x%08x", crc);
  scr_cache_save_filemap();
  char* store = scr_cache_attached_store(f->dataset, f->relpath);
  if (!store || scr_io_copy_file(f->cache, store, 0700, NULL, NULL) != SCR_SUCCESS)
    scr_err("cannot keep a copy of %s in %s: a restart on another node will not see it", f->orig,
            store ? store : "the prefix directory");
  free(store);
  if (scr_flush_is_flushed(f->dataset) && scr_io_copy_file(f->cache, f->orig, 0755, NULL, NULL) != SCR_SUCCESS)
    scr_err("cannot copy %s to the prefix directory: %s", f->orig, strerror(errno));
}

/* a new file for the dataset this target belongs to; returns the cache path
 * to open (in cache) and whether it is attached, or SCR_FAILURE to pass */
static int engine_route_new(const scr_preload_target* t, const scr_preload_rule* rule, const char* relpath,
                            char* cache, size_t length, int* attached)
{
  *attached = 0;
  if (rule->has_step) {
    if (engine.active && engine.step >= 0 && engine.step != t->match.step) engine_complete();
    int existing = -1;
    free(scr_view_find(t->path, &existing));
    if (!engine.active && t->match.step == engine.done_step && engine.done_rule &&
        engine.done_rule->type == rule->type && engine.done_id >= 0 && existing != engine.done_id &&
        scr_filemap_get_dataset(scr.filemap, engine.done_id)) {
      /* a new file of the step that just completed, of the same type,
       * later than FILES= or the boundary waited for: it joins that dataset
       * as a pointer file does, where a second dataset of the same step
       * would evict the first (an output file of a checkpoint's step, or the
       * other way round, starts its own; so does a file of the dataset
       * written again, which must not change the protected one in place) */
      static int warned_id = -1;
      if (warned_id != engine.done_id) {
        warned_id = engine.done_id;
        const scr_preload_rule* first = engine.done_rule;
        scr_warn("%s is a file of step %lld, which completed when PRELOAD=%s (%s) had its FILES=%lld: it is kept "
                 "with that checkpoint outside its redundancy (in cache, and a copy on the prefix directory); set "
                 "FILES= to the number of files each rank writes per step, or BOUNDARY= (said once per "
                 "checkpoint)", t->path, t->match.step, first->pattern,
                 first->origin ? first->origin : "configuration", first->files > 0 ? first->files : 1);
      }
      *attached = 1;
      return engine_attach(t->path, relpath, cache, length);
    }
    char* name = engine_dataset_name(t, relpath);
    if (!engine.active) {
      engine_begin(name, rule, t->match.step);
    } else if (engine.step < 0) {
      /* the dataset began under a name without {step}: now it is known */
      free(scr.output_name);
      scr.output_name = strdup(name);
      engine.step = t->match.step;
    }
    free(name);
  } else if (!engine.active && !rule->has_rank && engine.done_id >= 0 &&
             scr_filemap_get_dataset(scr.filemap, engine.done_id)) {
    *attached = 1;
    return engine_attach(t->path, relpath, cache, length);
  } else if (!engine.active) {
    engine_begin(NULL, rule, -1);
  }
  /* a later rule of the same dataset can only move its completion later,
   * and a checkpoint file makes an output dataset a checkpoint too */
  if (rule->boundary > engine.boundary) engine.boundary = rule->boundary;
  scr_output_add_flags(rule->type == SCR_PRELOAD_TYPE_OUTPUT ? SCR_FLAG_OUTPUT : SCR_FLAG_CHECKPOINT);
  if (!scr.in_output) return SCR_FAILURE;
  return scr_cache_route_file(scr.output_id, t->path, relpath, cache, length);
}

/* a virtual directory opened as a descriptor (the real open found
 * nothing): the descriptor is its mirror, filled with what the view shows */
static int engine_open_directory(const scr_preload_target* t, char* redirect, int* handled)
{
  if (!scr.initialized || !scr_path_is_within(t->path, scr.prefix)) return -1;
  pthread_mutex_lock(&scr_engine_lock);
  char* mirror = scr_view_is_directory(t->path) ? scr_mirror_directory(t->path, 1) : NULL;
  if (mirror) {
    snprintf(redirect, PATH_MAX, "%s", mirror);
    *handled = SCR_PRELOAD_REDIRECT;
  }
  free(mirror);
  pthread_mutex_unlock(&scr_engine_lock);
  return -1;
}

static int engine_open(const scr_preload_target* t, int flags, mode_t mode, char* redirect, void** file,
                       int* handled)
{
  if (t->directory) return engine_open_directory(t, redirect, handled);
  const scr_preload_rule* rule = scr_engine_rule(t);
  int creating = (flags & O_ACCMODE) != O_RDONLY && (flags & (O_CREAT | O_TRUNC)) &&
                 (flags & O_TMPFILE) != O_TMPFILE;
  if (!rule || t->directory || !scr.initialized) return -1;
  pthread_mutex_lock(&scr_engine_lock);
  int fd = -1, dataset = -1;
  char* shown = scr_view_find(t->path, &dataset);
  if (shown && (!creating || (engine.active && dataset == scr.output_id))) {
    /* an existing file of a cached dataset: read it, or write the one in progress */
    snprintf(redirect, PATH_MAX, "%s", shown);
    *handled = SCR_PRELOAD_REDIRECT;
  } else if (creating && shown && (flags & (O_CREAT | O_EXCL)) == (O_CREAT | O_EXCL)) {
    /* the file exists, if only in the cache */
    *handled = SCR_PRELOAD_HANDLED;
    errno = EEXIST;
  } else if (creating) {
    char* relpath = scr_path_relative_to(scr.prefix, t->path);
    char cache[SCR_MAX_FILENAME];
    int attached = 0;
    /* an existing file opened for writing without O_TRUNC keeps its bytes
     * (and its mode) in its new version; opened now, since beginning the
     * new dataset may evict the one that holds it */
    int keep = shown && !(flags & O_TRUNC) ? open(shown, O_RDONLY | O_CLOEXEC) : -1;
    static int warned_outside = 0;
    if (!relpath || strcmp(relpath, ".") == 0) {
      if (!warned_outside++)
        scr_warn("%s matches PRELOAD=%s but lies outside the prefix directory %s: written there unprotected "
                 "(said once)", t->path, rule->pattern, scr.prefix);
    } else if (engine_route_new(t, rule, relpath, cache, sizeof(cache), &attached) == SCR_SUCCESS) {
      int id = attached ? engine.done_id : scr.output_id;
      if (keep >= 0 && strcmp(shown, cache) != 0 && engine_copy_from(keep, cache) != 0)
        scr_err("cannot copy %s to %s for %s opened without O_TRUNC: it starts empty", shown, cache, t->path);
      fd = engine_open_cache(cache, flags, mode, handled);
      if (fd >= 0) {
        *file = engine_file_new(id, attached, t->path, relpath, cache);
        if (!attached) engine.opened++;
        scr_dbg(2, "preload: %s -> %s (dataset %d%s)", t->path, cache, id, attached ? ", attached" : "");
      } else if (!attached) {
        int saved_errno = errno;
        scr_err("cannot create %s in cache for %s: %s", cache, t->path, strerror(errno));
        engine.broken = 1;
        errno = saved_errno;
      }
    } else if (scr.in_output && engine.active) {
      engine.broken = 1;
    }
    if (keep >= 0) close(keep);
    free(relpath);
  }
  free(shown);
  pthread_mutex_unlock(&scr_engine_lock);
  return fd;
}

static int engine_close(int fd, void* file, int rc, int* handled)
{
  (void) fd;
  (void) handled;
  struct engine_file* f = file;
  if (!f) return rc;
  int saved_errno = errno;
  pthread_mutex_lock(&scr_engine_lock);
  if (f->attached) {
    engine_attach_done(f);
  } else if (engine.active && f->dataset == scr.output_id) {
    engine.closed++;
    if (engine.boundary == SCR_PRELOAD_BOUNDARY_CLOSE && engine.closed >= engine.expected &&
        engine.closed == engine.opened)
      engine_complete();
  }
  pthread_mutex_unlock(&scr_engine_lock);
  engine_file_free(f);
  errno = saved_errno;
  return rc;
}

/* ---- renames, unlinks, truncation, directories */

/* rename within the cache: the entry of this rank's filemap follows the file */
static int engine_rename_cached(const char* cache_from, int dataset, const scr_preload_target* to,
                                const char* relpath)
{
  char cache_to[SCR_MAX_FILENAME];
  scr_kvtree* files = scr_filemap_get_files(scr.filemap, dataset, scr.rank);
  scr_kvtree* old = files ? scr_kvtree_get(files, cache_from) : NULL;
  int rc;
  if (old && engine.active && dataset == scr.output_id) {
    /* a file of the dataset in progress: its new name may give the {step} */
    int attached = 0;
    rc = engine_route_new(to, scr_engine_rule(to), relpath, cache_to, sizeof(cache_to), &attached);
    if (rc == SCR_SUCCESS && attached) rc = SCR_FAILURE;
    dataset = scr.output_id;
  } else {
    char* dir = scr_cache_dataset_dir(dataset);
    char* path = dir ? scr_path_join(dir, relpath) : NULL;
    char* parent = path ? scr_path_dirname(path) : NULL;
    rc = parent && scr_io_mkdir_p(parent, 0700) == SCR_SUCCESS ? SCR_SUCCESS : SCR_FAILURE;
    if (rc == SCR_SUCCESS) snprintf(cache_to, sizeof(cache_to), "%s", path);
    free(parent);
    free(path);
    free(dir);
  }
  if (rc != SCR_SUCCESS || rename(cache_from, cache_to) != 0) return SCR_FAILURE;
  scr_kvtree* mine = scr_kvtree_get_kv_int(scr_filemap_get_dataset(scr.filemap, dataset), "RANK", scr.rank);
  for (int list = 0; list < 2; list++) {
    scr_kvtree* entries = scr_kvtree_get(mine, list ? "ATTACHED" : "FILE");
    scr_kvtree* entry = scr_kvtree_get(entries, cache_from);
    if (!entry) continue;
    scr_kvtree* moved = scr_kvtree_copy(entry);
    const char* old_relpath = scr_kvtree_get_val(entry, "RELPATH");
    char* old_store = list && old_relpath ? scr_cache_attached_store(dataset, old_relpath) : NULL;
    if (old_store) unlink(old_store);
    free(old_store);
    /* the copy under the old name on the prefix directory goes, as with a real rename */
    const char* old_orig = scr_kvtree_get_val(entry, "ORIG");
    if (list && old_orig && scr_flush_is_flushed(dataset)) unlink(old_orig);
    scr_kvtree_unset(entries, cache_from);
    scr_kvtree_set_kv(moved, "ORIG", to->path);
    scr_kvtree_set_kv(moved, "RELPATH", relpath);
    scr_kvtree_set(entries, cache_to, moved);
    if (list == 1) {
      /* a renamed pointer file: its prefix-directory copy follows */
      const struct engine_file f = { dataset, 1, (char*) to->path, (char*) relpath, cache_to };
      engine_attach_done(&f);
    }
  }
  scr_filemap_set_file_count(scr.filemap, dataset, scr.rank,
                             scr_kvtree_size(scr_filemap_get_files(scr.filemap, dataset, scr.rank)));
  return scr_cache_save_filemap();
}

/* path left the view: its directory stays, empty, until the application
 * removes it, as on a file system (unless the file system has it anyway) */
static void engine_keep_parent(const char* path)
{
  char* parent = scr_path_dirname(path);
  struct stat st;
  if (parent && scr_path_is_within(parent, scr.prefix) && strcmp(parent, scr.prefix) != 0 &&
      !scr_view_is_directory(parent) && lstat(parent, &st) != 0)
    scr_view_add_directory(parent);
  free(parent);
}

/* this rank's cached file of dataset, shown at orig, leaves the cache and the
 * dataset, and its copy on the prefix directory goes too: 0, or -1 with
 * errno when neither existed. The dataset keeps its count of files, so a
 * complete one that lost a file no longer checks as complete here, and no
 * restart picks what the application took apart. */
static int engine_drop_cached(const char* cached, int dataset, const char* orig)
{
  scr_kvtree* mine = scr_kvtree_get_kv_int(scr_filemap_get_dataset(scr.filemap, dataset), "RANK", scr.rank);
  int rc = unlink(cached);
  int saved_errno = errno;
  scr_kvtree_unset(scr_kvtree_get(mine, "FILE"), cached);
  scr_kvtree_unset(scr_kvtree_get(mine, "ATTACHED"), cached);
  scr_cache_save_filemap();
  scr_mirror_forget(orig);
  if (unlink(orig) == 0) rc = 0;
  engine_keep_parent(orig);
  if (rc != 0) errno = saved_errno;
  return rc;
}

/* a cached file (this rank's, or its copy of another rank's) renamed to a
 * name no rule matches leaves the cache for the file system, where rename
 * would have put it: copied under a temporary name beside the target and
 * renamed over it, so the target is replaced whole or not at all, and only
 * then taken from the cache. The target's directory must exist, on the file
 * system or in the view (then it is made); errors are rename's. */
static int engine_rename_out(const char* cached, int dataset, int shared, const scr_preload_target* from,
                             const scr_preload_target* to)
{
  char* parent = scr_path_dirname(to->path);
  struct stat st, source;
  int error = 0;
  if (!parent) {
    error = ENOMEM;
  } else if (stat(parent, &st) == 0) {
    if (!S_ISDIR(st.st_mode)) error = ENOTDIR;
    else if (faccessat(AT_FDCWD, parent, W_OK | X_OK, AT_EACCESS) != 0) error = errno;
  } else {
    error = errno;
    if (error == ENOENT && scr_view_is_directory(parent)) error = 0;
  }
  /* rename replaces a symbolic link, even one to a directory */
  if (!error && lstat(to->path, &st) == 0 && S_ISDIR(st.st_mode)) error = EISDIR;
  if (!error && stat(cached, &source) != 0) error = errno;
  if (!error && scr_io_copy_file(cached, to->path, 0777, NULL, NULL) != SCR_SUCCESS) error = EIO;
  /* rename keeps every mode bit, the umask notwithstanding */
  if (!error) chmod(to->path, source.st_mode & 07777);
  free(parent);
  if (error) {
    errno = error;
    return -1;
  }
  /* renamed: the old name is gone, whatever remains to tidy */
  if (shared) {
    scr_share_drop(cached);
    scr_mirror_forget(from->path);
    engine_keep_parent(from->path);
  } else {
    engine_drop_cached(cached, dataset, from->path);
  }
  return 0;
}

static int engine_rename(const scr_preload_target* from, const scr_preload_target* to, unsigned int flags,
                         int* handled)
{
  if (!scr.initialized || from->directory || to->directory || !to->path || flags != 0) return -1;
  pthread_mutex_lock(&scr_engine_lock);
  int rc = -1, dataset = -1;
  char* cached = from->path ? scr_view_find(from->path, &dataset) : NULL;
  char* relpath = scr_path_relative_to(scr.prefix, to->path);
  const scr_preload_rule* rule = scr_engine_rule(to);
  /* a shown file may be in this rank's cache, a copy of a file another rank
   * wrote, or the prefix-directory copy of a file attached by another rank or
   * run (then it is copied, not moved) */
  int shared = cached && scr_share_holds(cached);
  int in_cache = cached && !shared && scr_path_is_within(cached, scr.cache_dir);
  const char* source = cached ? cached : from->path;
  if (in_cache && rule && relpath) {
    /* write-temp-then-rename inside the cache */
    *handled = SCR_PRELOAD_HANDLED;
    rc = engine_rename_cached(cached, dataset, to, relpath) == SCR_SUCCESS ? 0 : -1;
    if (rc != 0) errno = EIO;
  } else if ((in_cache || shared) && !rule) {
    /* no longer a checkpoint file: out of the cache */
    *handled = SCR_PRELOAD_HANDLED;
    rc = engine_rename_out(cached, dataset, shared, from, to);
  } else if (rule && relpath && source && access(source, F_OK) == 0) {
    /* a file written on the prefix directory, or a copy of another rank's,
     * becomes a checkpoint file: copy it into the cache under its new name,
     * then remove the original */
    char cache[SCR_MAX_FILENAME];
    int attached = 0;
    *handled = SCR_PRELOAD_HANDLED;
    if (engine_route_new(to, rule, relpath, cache, sizeof(cache), &attached) == SCR_SUCCESS &&
        scr_io_copy_file(source, cache, 0700, NULL, NULL) == SCR_SUCCESS) {
      if (shared) {
        rc = scr_share_drop(source) ? 0 : -1;
        scr_mirror_forget(from->path);
        engine_keep_parent(from->path);
      } else {
        rc = unlink(source);
      }
      struct engine_file f = { attached ? engine.done_id : scr.output_id, attached, (char*) to->path,
                               relpath, cache };
      if (attached) engine_attach_done(&f);
    } else {
      errno = EIO;
    }
  }
  free(relpath);
  free(cached);
  pthread_mutex_unlock(&scr_engine_lock);
  return rc;
}

/* rmdir of a rule directory: one that exists only in the view (made by
 * mkdir, or emptied by removals) goes when nothing shown is left in it; a
 * directory that shows cached files is not empty, whatever the file system
 * holds, and a shown file is not a directory; the file system decides the
 * rest (the view is changed only when the answer is the view's) */
static int engine_rmdir(const scr_preload_target* t, int* handled)
{
  if (!scr_path_is_within(t->path, scr.prefix)) return -1;
  pthread_mutex_lock(&scr_engine_lock);
  int rc = -1, dataset = -1;
  struct stat st;
  char* file = scr_view_find(t->path, &dataset);
  int state = file || !t->directory ? SCR_VIEW_DIRECTORY_UNKNOWN : scr_view_remove_directory(t->path, 0);
  if (file) {
    *handled = SCR_PRELOAD_HANDLED;
    errno = ENOTDIR;
  } else if (state == SCR_VIEW_DIRECTORY_NOT_EMPTY) {
    *handled = SCR_PRELOAD_HANDLED;
    errno = ENOTEMPTY;
  } else if (state == SCR_VIEW_DIRECTORY_REMOVED && lstat(t->path, &st) != 0) {
    scr_view_remove_directory(t->path, 1);
    scr_mirror_forget(t->path);
    engine_keep_parent(t->path);
    *handled = SCR_PRELOAD_HANDLED;
    rc = 0;
  }
  free(file);
  pthread_mutex_unlock(&scr_engine_lock);
  return rc;
}

static int engine_unlink(const scr_preload_target* t, int at_flags, int* handled)
{
  if (!scr.initialized) return -1;
  if (at_flags & AT_REMOVEDIR) return engine_rmdir(t, handled);
  if (t->directory) return -1;
  pthread_mutex_lock(&scr_engine_lock);
  int rc = -1, dataset = -1;
  char* cached = scr_view_find(t->path, &dataset);
  scr_kvtree* mine = cached ? scr_kvtree_get_kv_int(scr_filemap_get_dataset(scr.filemap, dataset), "RANK",
                                                    scr.rank) : NULL;
  if (cached && scr_share_drop(cached)) {
    /* another rank's file, shown here: gone for this rank, and from the
     * prefix directory if it was flushed (the writer's cached file is the
     * writer's to delete) */
    *handled = SCR_PRELOAD_HANDLED;
    rc = 0;
    scr_mirror_forget(t->path);
    unlink(t->path);
    engine_keep_parent(t->path);
  } else if (mine) {
    /* the application drops an old checkpoint file: so does the cache, and
     * the copy on the prefix directory goes as the application asked */
    *handled = SCR_PRELOAD_HANDLED;
    rc = engine_drop_cached(cached, dataset, t->path);
  }
  free(cached);
  pthread_mutex_unlock(&scr_engine_lock);
  return rc;
}

static int engine_truncate(const scr_preload_target* t, off64_t length, int* handled)
{
  if (!scr.initialized || t->directory) return -1;
  pthread_mutex_lock(&scr_engine_lock);
  int rc = -1, dataset = -1;
  char* cached = scr_view_find(t->path, &dataset);
  if (cached) {
    *handled = SCR_PRELOAD_HANDLED;
    rc = truncate(cached, (off_t) length);
  }
  free(cached);
  pthread_mutex_unlock(&scr_engine_lock);
  return rc;
}

/* a rule directory exists virtually until the dataset is flushed */
static int engine_mkdir(const scr_preload_target* t, mode_t mode, int* handled)
{
  (void) mode;
  /* outside the prefix directory nothing is routed, so nothing is virtual */
  if (!scr.initialized || !t->directory || !scr_path_is_within(t->path, scr.prefix)) return -1;
  pthread_mutex_lock(&scr_engine_lock);
  struct stat st;
  *handled = SCR_PRELOAD_HANDLED;
  int rc = 0;
  if (scr_view_is_directory(t->path) || lstat(t->path, &st) == 0) {
    errno = EEXIST;
    rc = -1;
  } else {
    char* parent = scr_path_dirname(t->path);
    if (parent && !scr_view_is_directory(parent) && stat(parent, &st) != 0) {
      errno = ENOENT;
      rc = -1;
    } else {
      scr_view_add_directory(t->path);
    }
    free(parent);
  }
  pthread_mutex_unlock(&scr_engine_lock);
  return rc;
}

/* a call that is not routed is about to use a rule directory on the file
 * system: one that exists only in the view is made there now, with the
 * permissions mkdir would give it */
static int engine_materialize(const scr_preload_target* t, int* handled)
{
  if (!scr.initialized || !t->directory || !scr_path_is_within(t->path, scr.prefix)) return -1;
  pthread_mutex_lock(&scr_engine_lock);
  struct stat st;
  int rc = -1;
  if (lstat(t->path, &st) != 0 && scr_view_is_directory(t->path)) {
    *handled = SCR_PRELOAD_HANDLED;
    rc = scr_io_mkdir_p(t->path, 0777) == SCR_SUCCESS ? 0 : -1;
    if (rc == 0) scr_dbg(1, "preload: %s made %s on the file system (it was virtual)", t->call, t->path);
    else errno = EIO;
  }
  pthread_mutex_unlock(&scr_engine_lock);
  return rc;
}

/* ---- start and end */

/* the rank of a directory "<stem>.<rank>" of the cache directory, or -1 */
static int engine_stray_rank(const char* name)
{
  static const char* const stems[] = { SCR_MIRROR_DIRECTORY ".", SCR_SHARE_DIRECTORY "." };
  for (size_t i = 0; i < sizeof(stems) / sizeof(stems[0]); i++) {
    size_t n = strlen(stems[i]);
    char* end = NULL;
    if (strncmp(name, stems[i], n) != 0 || name[n] < '0' || name[n] > '9') continue;
    long rank = strtol(name + n, &end, 10);
    if (*end == '\0' && rank <= 0x7fffffff) return (int) rank;
  }
  return -1;
}

/* A run that died leaves each rank's mirrors and shared copies in its
 * node's cache; every rank clears its own at start, but the next run may
 * place that rank on another node, or have fewer ranks. The node's first
 * rank removes those of ranks that are not on this node now (the others
 * only ever touch their own, so nothing races). */
static void engine_remove_strays(void)
{
  int* ranks = malloc((size_t) scr.node_ranks * sizeof(int));
  /* every rank of the node takes part in the same collectives, or none */
  int ok = scr_mpi_all_true(ranks != NULL, scr.comm_node) &&
           MPI_Allgather(&scr.rank, 1, MPI_INT, ranks, 1, MPI_INT, scr.comm_node) == MPI_SUCCESS;
  DIR* dir = ok && scr.node_rank == 0 ? opendir(scr.cache_dir) : NULL;
  struct dirent* e;
  while (dir && (e = readdir(dir)) != NULL) {
    int rank = engine_stray_rank(e->d_name), here = 0;
    for (int i = 0; rank >= 0 && i < scr.node_ranks; i++) here |= ranks[i] == rank;
    if (rank < 0 || here) continue;
    char* path = scr_path_join(scr.cache_dir, e->d_name);
    if (path && scr_io_remove_tree(path) == SCR_SUCCESS) scr_dbg(1, "preload: removed %s, left by an earlier run", path);
    free(path);
  }
  if (dir) closedir(dir);
  free(ranks);
}

static int engine_init(void)
{
  /* the preload loaded the rules: there is at least one */
  const scr_preload_ruleset* rules = scr_preload_state_current();
  for (int i = 0; i < scr_preload_rules_count(rules); i++)
    if (scr_preload_rules_at(rules, i)->boundary == SCR_PRELOAD_BOUNDARY_BARRIER) engine.barrier_rules = 1;

  if (SCR_Init() != SCR_SUCCESS) return SCR_FAILURE;
  if (!scr.enabled) {
    SCR_Finalize();
    return SCR_ERR_NOENT;
  }
  engine_remove_strays();
  scr_mirror_init();
  scr_share_clear();
  /* the restored dataset is visible at once; it is read through the view */
  int have = 0;
  char name[SCR_MAX_FILENAME];
  if (SCR_Have_restart(&have, name) == SCR_SUCCESS && have && SCR_Start_restart(name) == SCR_SUCCESS) {
    engine.done_id = scr.restart_id;
    SCR_Complete_restart(1);
    pthread_mutex_lock(&scr_engine_lock);
    scr_share_restored(engine.done_id);
    pthread_mutex_unlock(&scr_engine_lock);
    if (scr.rank == 0) scr_info("preload: the application sees checkpoint '%s' at its original paths", name);
  }
  scr_preload_hooks_virtual_directories(1);
  return SCR_SUCCESS;
}

static void engine_finalize(void)
{
  pthread_mutex_lock(&scr_engine_lock);
  engine_complete_if_pending(SCR_PRELOAD_BOUNDARY_FINALIZE);
  scr_preload_hooks_virtual_directories(0);
  scr_mirror_finalize();
  scr_share_clear();
  scr_preload_state_install(NULL);
  /* SCR_Finalize may still flush the newest checkpoint: the summary comes
   * after it, over the MPI library's world, which is still there */
  int rank = scr.rank;
  SCR_Finalize();
  unsigned long long bytes = scr.stat_bytes, total = 0;
  PMPI_Reduce(&bytes, &total, 1, MPI_UNSIGNED_LONG_LONG, MPI_SUM, 0, MPI_COMM_WORLD);
  double mib = (double) total / (1024.0 * 1024.0), seconds = scr.stat_output_seconds;
  scr_log_rank = rank; /* SCR_Finalize forgot it; the line still says who speaks */
  if (rank == 0)
    scr_info("preload summary: %d datasets, %.1f MiB, %.3f s in checkpoints (redundancy %.3f s, flush %.3f s), "
             "%.1f MiB/s", scr.stat_datasets, mib, seconds, scr.stat_redundancy_seconds, scr.stat_flush_seconds,
             seconds > 0 ? mib / seconds : 0.0);
  pthread_mutex_unlock(&scr_engine_lock);
}

static void engine_barrier(MPI_Comm comm)
{
  if (!engine.barrier_rules || comm != MPI_COMM_WORLD) return;
  pthread_mutex_lock(&scr_engine_lock);
  engine_complete_if_pending(SCR_PRELOAD_BOUNDARY_BARRIER);
  pthread_mutex_unlock(&scr_engine_lock);
}

__attribute__((visibility("default"))) const struct scr_preload_engine scr_preload_engine_table = {
  .init = engine_init,
  .finalize = engine_finalize,
  .barrier = engine_barrier,
  .open = engine_open,
  .close = engine_close,
  .rename = engine_rename,
  .unlink = engine_unlink,
  .truncate = engine_truncate,
  .mkdir = engine_mkdir,
  .materialize = engine_materialize,
  .stat = scr_view_stat,
  .access = scr_view_access,
  .opendir = scr_view_opendir,
  .readdir = scr_view_readdir,
  .closedir = scr_view_closedir,
};
