/* scr_scavenge.h - the two ways scr_scavenge copies a job's cache to the prefix
 * directory: as a restart would (all ranks), or as the surviving nodes hold it. */
#ifndef SCR_SCAVENGE_H
#define SCR_SCAVENGE_H

/* collective, after scr_init_setup: the size of the job whose filemaps the
 * control directories of the nodes hold (recorded with each dataset's
 * redundancy, else its highest rank + 1), -1 when they hold none */
int scr_scavenge_job_ranks(void);

/* collective, after scr_init_setup, when fewer ranks run than the job had
 * (nodes were lost and no spare replaced them): each node's ranks copy
 * what its control directory's filemaps name, the files and, with
 * SCR_SCAVENGE_REDUNDANCY, the redundancy data, without moving or
 * rebuilding anything in cache; a dataset some ranks of which are missing
 * is recorded incomplete, for scr_index --build. The number of datasets
 * copied, -1 when one could not be. */
int scr_scavenge_survivors(int job_ranks);

#endif
