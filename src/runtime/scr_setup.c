/* scr_setup.c - read the configuration once on rank 0, broadcast it, and derive
 * every setting and directory the library uses from it. */
#include "config.h"
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <sys/file.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "scr_error.h"
#include "scr_log.h"
#include "scr_config.h"
#include "scr_param.h"
#include "scr_interval.h"
#include "scr_path.h"
#include "scr_io.h"
#include "scr_env.h"
#include "scr_globals.h"
#include "scr_mpi.h"
#include "scr_setup.h"

/* the job id was derived from the prefix (no SCR_JOB_ID, no batch system):
 * see scr_setup_claim_job_id */
static int scr_setup_job_id_derived = 0;

int scr_setup_app_config_error = 0;

/* rank 0: parse system and user files, check the environment; errbuf gets the reason */
static int scr_setup_read_files(scr_kvtree* system, scr_kvtree* user, char* errbuf, size_t len)
{
  int rc = scr_param_read_files(user, system, errbuf, len);
  if (rc == SCR_SUCCESS) rc = scr_param_check_environment(errbuf, len);
  return rc;
}

static char* scr_setup_string(const char* name, const char* fallback)
{
  const char* v = scr_param_get(name);
  if (!v || !*v) v = fallback;
  return v ? strdup(v) : NULL;
}

static long long scr_setup_int(const char* name, long long fallback, int* rc)
{
  long long v = fallback;
  int r = scr_param_get_int(name, &v);
  if (r == SCR_ERR_CONFIG) *rc = r;
  return r == SCR_SUCCESS ? v : fallback;
}

static int scr_setup_bool(const char* name, int fallback, int* rc)
{
  int v = fallback;
  int r = scr_param_get_bool(name, &v);
  if (r == SCR_ERR_CONFIG) *rc = r;
  return r == SCR_SUCCESS ? v : fallback;
}

/* every rank: parameters into the global state */
static int scr_setup_params(void)
{
  int rc = SCR_SUCCESS;
  scr.enabled = scr_setup_bool("SCR_ENABLE", 1, &rc);
  scr.debug = (int) scr_setup_int("SCR_DEBUG", 0, &rc);
  scr_log_debug_level = scr.debug;
  scr.cache_bypass = scr_setup_bool("SCR_CACHE_BYPASS", 0, &rc);
  scr.cache_size = scr_setup_int("SCR_CACHE_SIZE", 1, &rc);
  scr.flush = scr_setup_int("SCR_FLUSH", 10, &rc);
  scr.fetch = scr_setup_bool("SCR_FETCH", 1, &rc);
  scr.crc_on_flush = scr_setup_bool("SCR_CRC_ON_FLUSH", 1, &rc);
  scr.crc_on_copy = scr_setup_bool("SCR_CRC_ON_COPY", 0, &rc);
  scr.checkpoint_interval = scr_setup_int("SCR_CHECKPOINT_INTERVAL", 0, &rc);
  scr.checkpoint_seconds = scr_setup_int("SCR_CHECKPOINT_SECONDS", 0, &rc);
  scr.checkpoint_overhead = 0.0;
  if (scr_param_get_double("SCR_CHECKPOINT_OVERHEAD", &scr.checkpoint_overhead) == SCR_ERR_CONFIG)
    rc = SCR_ERR_CONFIG;
  scr.mtbf = 0;
  const char* mtbf = scr_param_get("SCR_MTBF");
  if (mtbf && *mtbf && scr_interval_parse(mtbf, &scr.mtbf) != 0) {
    if (scr.rank == 0)
      scr_err("SCR_MTBF=%s (%s) is not a duration: give seconds or a number with s, m, h or d (6h)", mtbf,
              scr_param_origin("SCR_MTBF"));
    scr.mtbf = 0;
    rc = SCR_ERR_CONFIG;
  }
  scr.halt_seconds = scr_setup_int("SCR_HALT_SECONDS", 0, &rc);
  scr.end_time = scr_setup_int("SCR_END_TIME", 0, &rc);
  scr.halt_exit = scr_setup_bool("SCR_HALT_EXIT", 0, &rc);
  /* the table's default is for programs that can ask SCR_Should_exit */
  const char* halt_exit_origin = scr_param_origin("SCR_HALT_EXIT");
  if (scr.halt_exit_by_default && (!halt_exit_origin || strcmp(halt_exit_origin, "default") == 0)) scr.halt_exit = 1;
  scr.halt_enabled = scr_setup_bool("SCR_HALT_ENABLED", 1, &rc);
  scr.flush_on_restart = scr_setup_bool("SCR_FLUSH_ON_RESTART", 0, &rc);
  scr.flush_async = scr_setup_bool("SCR_FLUSH_ASYNC", 0, &rc);
  unsigned long long bw = 0;
  if (scr_param_get_bytes("SCR_FLUSH_ASYNC_BW", &bw) == SCR_ERR_CONFIG) rc = SCR_ERR_CONFIG;
  scr.flush_async_bw = (double) bw;
  scr.flush_async_percent = 0.0;
  if (scr_param_get_double("SCR_FLUSH_ASYNC_PERCENT", &scr.flush_async_percent) == SCR_ERR_CONFIG)
    rc = SCR_ERR_CONFIG;
  if (scr.flush_async_percent < 0 || scr.flush_async_percent > 100) {
    if (scr.rank == 0)
      scr_err("SCR_FLUSH_ASYNC_PERCENT=%g (%s): give a percentage of one CPU, 0 to 100", scr.flush_async_percent,
              scr_param_origin("SCR_FLUSH_ASYNC_PERCENT"));
    rc = SCR_ERR_CONFIG;
  }
  unsigned long long buf = 1024 * 1024;
  if (scr_param_get_bytes("SCR_FILE_BUF_SIZE", &buf) == SCR_ERR_CONFIG) rc = SCR_ERR_CONFIG;
  scr.file_buf_size = buf ? buf : 1024 * 1024;
  scr.copy_type = scr_setup_string("SCR_COPY_TYPE", "SINGLE");
  if (scr.cache_size < 1) {
    if (scr.rank == 0)
      scr_err("SCR_CACHE_SIZE=%lld (%s): the cache must hold at least one dataset",
              scr.cache_size, scr_param_origin("SCR_CACHE_SIZE"));
    rc = SCR_ERR_CONFIG;
  }

  char* prefix = scr_setup_string("SCR_PREFIX", ".");
  scr.prefix = scr_path_absolute(prefix);
  free(prefix);
  scr.prefix_scr = scr_path_join(scr.prefix, ".scr");
  /* SCR_USER and SCR_JOB_ID may come from any layer; the environment's own
   * USER and resource-manager variables come after them */
  scr.user = scr_setup_string("SCR_USER", NULL);
  if (!scr.user) scr.user = scr_env_user();
  scr.job_id = scr_setup_string("SCR_JOB_ID", NULL);
  if (!scr.job_id) scr.job_id = scr_env_job_id();
  scr_setup_job_id_derived = 0;
  if (!scr.job_id) {
    scr.job_id = scr_env_default_job_id(scr.prefix);
    scr_setup_job_id_derived = 1;
  }
  scr.job_name = scr_setup_string("SCR_JOB_NAME", NULL);

  char* cntl_base = scr_setup_string("SCR_CNTL_BASE", "/dev/shm");
  char* cache_base = scr_setup_string("SCR_CACHE_BASE", "/dev/shm");
  if (asprintf(&scr.cntl_dir, "%s/%s/scr.%s", cntl_base, scr.user, scr.job_id) < 0 ||
      asprintf(&scr.cache_dir, "%s/%s/scr.%s", cache_base, scr.user, scr.job_id) < 0)
    rc = SCR_ERR_NOMEM;
  free(cntl_base);
  free(cache_base);
  return rc;
}

/* Outside a batch system the job id is derived from the prefix, so that a
 * new run finds the cache of the last one; two jobs of one user running in
 * one prefix at once would then share their control and cache directories
 * and each delete the other's datasets as incomplete. A job holds a lock
 * (flock, released by the kernel when the job ends however it ends) on
 * <cntl_base>/<user>/scr.<id>.lock on every node; a job that finds it held
 * takes the next id, <id>.1, <id>.2, ... The descriptor of the lock held. */
static int scr_setup_job_lock_fd = -1;

/* node leaders: take the lock of one candidate id; 1 when held */
static int scr_setup_lock_job_id(const char* cntl_user, const char* id)
{
  char* path = NULL;
  if (asprintf(&path, "%s/scr.%s.lock", cntl_user, id) < 0) return 0;
  int fd = open(path, O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600);
  if (fd < 0) scr_err("cannot open the job lock %s: %s", path, strerror(errno));
  free(path);
  if (fd < 0) return 0;
  if (flock(fd, LOCK_EX | LOCK_NB) != 0) {
    close(fd);
    return 0;
  }
  scr_setup_job_lock_fd = fd;
  return 1;
}

/* collective: the first derived id no running job holds on any node, set
 * in scr.job_id, scr.cntl_dir and scr.cache_dir */
static int scr_setup_claim_job_id(const char* cntl_user)
{
  char* base = scr.job_id;
  char* id = NULL;
  int rc = SCR_ERR_IO;
  for (int k = 0; k < 100 && rc != SCR_SUCCESS; k++) {
    free(id);
    id = NULL;
    if ((k ? asprintf(&id, "%s.%d", base, k) : asprintf(&id, "%s", base)) < 0) return SCR_ERR_NOMEM;
    int mine = scr.node_rank != 0 || scr_setup_lock_job_id(cntl_user, id);
    if (scr_mpi_all_true(mine, scr.comm_world)) {
      rc = SCR_SUCCESS;
    } else if (scr_setup_job_lock_fd >= 0) {
      close(scr_setup_job_lock_fd);
      scr_setup_job_lock_fd = -1;
    }
  }
  if (rc != SCR_SUCCESS) {
    if (scr.rank == 0) scr_err("100 jobs hold the job ids %s to %s.99: set SCR_JOB_ID", base, base);
    free(id);
    return rc;
  }
  if (strcmp(id, base) != 0) {
    if (scr.rank == 0)
      scr_warn("another job of %s runs in the prefix directory %s with job id %s: this one uses %s, and its own "
               "control and cache directories (set SCR_JOB_ID to choose)", scr.user, scr.prefix, base, id);
    char* cache_user = scr_path_dirname(scr.cache_dir);
    char *cntl = NULL, *cache = NULL;
    if (asprintf(&cntl, "%s/scr.%s", cntl_user, id) < 0) cntl = NULL;
    if (asprintf(&cache, "%s/scr.%s", cache_user, id) < 0) cache = NULL;
    free(cache_user);
    if (!cntl || !cache) {
      free(cntl);
      free(cache);
      free(id);
      return SCR_ERR_NOMEM;
    }
    free(scr.cntl_dir);
    free(scr.cache_dir);
    scr.cntl_dir = cntl;
    scr.cache_dir = cache;
  }
  free(base);
  scr.job_id = id;
  return SCR_SUCCESS;
}

int scr_setup_config(void)
{
  scr_kvtree* system = scr_kvtree_new();
  scr_kvtree* user = scr_kvtree_new();
  char errbuf[1024] = "";
  int rc = SCR_SUCCESS;

  if (scr.rank == 0) {
    rc = scr_setup_read_files(system, user, errbuf, sizeof(errbuf));
    if (rc != SCR_SUCCESS) scr_err("%s", errbuf[0] ? errbuf : scr_error_string(rc));
    else if (scr_setup_app_config_error) rc = SCR_ERR_CONFIG;
  }
  MPI_Bcast(&rc, 1, MPI_INT, 0, scr.comm_world);
  if (rc == SCR_SUCCESS) {
    scr_mpi_bcast_kvtree(system, 0, scr.comm_world);
    scr_mpi_bcast_kvtree(user, 0, scr.comm_world);
    rc = scr_param_init(user, scr_param_app_tree(), system);
  }
  scr_kvtree_delete(&system);
  scr_kvtree_delete(&user);
  if (rc == SCR_SUCCESS) rc = scr_setup_params();
  if (rc == SCR_SUCCESS && scr.rank == 0) scr_param_report_ineffective();
  return scr_mpi_all_true(rc == SCR_SUCCESS, scr.comm_world) ? SCR_SUCCESS : SCR_ERR_CONFIG;
}

int scr_setup_directories(void)
{
  /* both levels we own, <base>/<user> and <base>/<user>/scr.<job>, are checked:
   * a foreign or symlinked user directory could redirect everything below it */
  char* cntl_user = scr_path_dirname(scr.cntl_dir);
  char* cache_user = scr_path_dirname(scr.cache_dir);
  int rc = scr_io_mkdir_private(cntl_user);
  if (scr_setup_job_id_derived) {
    rc = scr_mpi_all_true(rc == SCR_SUCCESS, scr.comm_world) ? scr_setup_claim_job_id(cntl_user) : rc;
    free(cache_user);
    cache_user = scr_path_dirname(scr.cache_dir);
  }
  if (rc == SCR_SUCCESS) rc = scr_io_mkdir_private(scr.cntl_dir);
  if (rc == SCR_SUCCESS) rc = scr_io_mkdir_private(cache_user);
  if (rc == SCR_SUCCESS) rc = scr_io_mkdir_private(scr.cache_dir);
  free(cntl_user);
  free(cache_user);
  if (rc != SCR_SUCCESS)
    scr_err("cannot use the control directory %s or cache directory %s: set SCR_CNTL_BASE "
            "and SCR_CACHE_BASE to directories you own", scr.cntl_dir, scr.cache_dir);
  if (rc == SCR_SUCCESS && scr.rank == 0) {
    /* the mode of the program's own directories (0777 less the umask); one
     * that is a symbolic link or someone else's is refused: SCR's files in
     * it would go where they say */
    if (scr_io_check_own_dir(scr.prefix_scr) != SCR_SUCCESS) {
      rc = SCR_ERR_SECURITY;
    } else if (scr_io_mkdir_p(scr.prefix_scr, 0777) != SCR_SUCCESS) {
      scr_err("cannot create %s (%s): check SCR_PREFIX=%s", scr.prefix_scr, strerror(errno),
              scr.prefix);
      rc = SCR_ERR_IO;
    }
  }
  return scr_mpi_all_true(rc == SCR_SUCCESS, scr.comm_world) ? SCR_SUCCESS : SCR_ERR_IO;
}

void scr_setup_finalize(void)
{
  if (scr_setup_job_lock_fd >= 0) close(scr_setup_job_lock_fd);
  scr_setup_job_lock_fd = -1;
  free(scr.user);
  free(scr.job_id);
  free(scr.job_name);
  free(scr.prefix);
  free(scr.prefix_scr);
  free(scr.cntl_dir);
  free(scr.cache_dir);
  free(scr.copy_type);
  scr.user = scr.job_id = scr.job_name = scr.prefix = scr.prefix_scr = NULL;
  scr.cntl_dir = scr.cache_dir = scr.copy_type = NULL;
  scr_param_finalize();
}
