/* scr_env.h - who and where we are: user name, job id, host name.
 * MPI-free, so the commands compute the same directories as the library. */
#ifndef SCR_ENV_H
#define SCR_ENV_H

/* SCR_USER, else $USER, else the password database; malloc'd */
char* scr_env_user(void);

/* SCR_JOB_ID, else the resource manager's id (SLURM_JOBID, FLUX_JOB_ID,
 * LSB_JOBID, PBS_JOBID, COBALT_JOBID), else NULL */
char* scr_env_job_id(void);

/* the id used when no resource manager gives one: "prefix-<crc32 of the prefix path>",
 * so that runs in the same prefix find each other's cache */
char* scr_env_default_job_id(const char* prefix);

/* host name, cut at sizeof(buf) */
void scr_env_hostname(char* buf, unsigned int len);

#endif
