/* scr_env.c - user, job and host identity from the environment and the system.
 * A missing $USER is normal in batch and container environments: never fatal. */
#include "config.h"
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>
#include "scr_env.h"

static char* scr_env_nonempty(const char* name)
{
  const char* v = getenv(name);
  return (v && *v) ? strdup(v) : NULL;
}

char* scr_env_user(void)
{
  char* user = scr_env_nonempty("SCR_USER");
  if (!user) user = scr_env_nonempty("USER");
  if (!user) {
    struct passwd pw, *result = NULL;
    char buf[4096];
    if (getpwuid_r(geteuid(), &pw, buf, sizeof(buf), &result) == 0 && result)
      user = strdup(pw.pw_name);
  }
  if (!user && asprintf(&user, "uid%u", (unsigned) geteuid()) < 0) user = NULL;
  return user;
}

char* scr_env_job_id(void)
{
  static const char* names[] = {
    "SCR_JOB_ID", "SLURM_JOBID", "SLURM_JOB_ID", "FLUX_JOB_ID", "LSB_JOBID",
    "PBS_JOBID", "COBALT_JOBID", NULL
  };
  for (int i = 0; names[i]; i++) {
    char* id = scr_env_nonempty(names[i]);
    if (id) return id;
  }
  return NULL;
}

char* scr_env_default_job_id(const char* prefix)
{
  char* id = NULL;
  unsigned long crc = crc32(0L, (const Bytef*) prefix, (uInt) strlen(prefix));
  if (asprintf(&id, "prefix-%08lx", crc) < 0) return NULL;
  return id;
}

void scr_env_hostname(char* buf, unsigned int len)
{
  if (gethostname(buf, len) != 0) snprintf(buf, len, "unknown");
  buf[len - 1] = '\0';
}
