/* scr_api.h - helpers shared by the files that implement the public API. */
#ifndef SCR_API_H
#define SCR_API_H

/* SCR_Init in two halves, for scr_scavenge, which looks at the control
 * directories between them. The first (communicators, configuration,
 * directories; done, with scr.initialized set, when SCR_ENABLE=0) reads
 * and moves nothing in the cache; the second loads the filemaps, places
 * the cached files on their ranks and chooses the restart. A caller that
 * stops after the first lets go of what it made with scr_init_release. */
int scr_init_setup(void);
int scr_init_restore(void);
void scr_init_release(void);

/* drop the dataset in progress (SCR_Finalize inside an output phase) */
void scr_api_abandon_output(void);

/* id of the newest complete checkpoint in cache, -1 if none (same on all ranks) */
int scr_api_latest_checkpoint(void);
/* the Young/Daly interval in seconds for SCR_MTBF and this run's measured
 * checkpoint cost; 0 without SCR_MTBF or before the first checkpoint */
double scr_api_optimal_interval(void);
/* rank 0, at SCR_Finalize: one line of advice on the checkpoint interval */
void scr_api_interval_advice(void);

/* SCR_Config's work, with the outcome apart from the value (for the Fortran
 * binding): SCR_SUCCESS for a setting taken or a query answered, in *value,
 * which the caller frees; SCR_FAILURE for a line refused (rank 0 says why) or
 * a key without a value (*value NULL) */
int scr_api_config(const char* config, char** value);

/* 0 if the library may be called now; logs the problem otherwise */
int scr_api_check_ready(const char* function);

/* open a dataset on this rank (SCR_Start_output's work); collective = 0: no
 * communication, for the preload layer, which then agrees on the creation
 * time and name before completing (scr_output_agree) */
int scr_output_begin(const char* name, int flags, int collective);

/* add SCR_FLAG_CHECKPOINT / SCR_FLAG_OUTPUT to the dataset in progress on
 * this rank (a file of another kind joined it); local */
int scr_output_add_flags(int flags);

/* collective, before SCR_Complete_output of a dataset begun locally: every
 * rank takes the name, flags and creation time of `root` (ranks that wrote
 * nothing may have begun it under a provisional name); in memory only:
 * SCR_Complete_output writes it */
int scr_output_agree(int root);

/* What this rank would have every rank take in scr_output_agree: flags,
 * checkpoint number, creation time, checkpoint counter. The preload layer
 * carries them (and a hash of the name) in a collective it makes anyway;
 * when every rank proposes the same, scr_output_agree_known(created) takes
 * them without scr_output_agree's broadcasts (local, in memory only) */
#define SCR_OUTPUT_PROPOSAL 4
void scr_output_proposal(long long values[SCR_OUTPUT_PROPOSAL]);
int scr_output_agree_known(long long created);

#endif
