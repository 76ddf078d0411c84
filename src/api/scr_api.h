/* scr_api.h - helpers shared by the files that implement the public API. */
#ifndef SCR_API_H
#define SCR_API_H

/* drop the dataset in progress (SCR_Finalize inside an output phase) */
void scr_api_abandon_output(void);

/* id of the newest complete checkpoint in cache, -1 if none (same on all ranks) */
int scr_api_latest_checkpoint(void);

/* 0 if the library may be called now; logs the problem otherwise */
int scr_api_check_ready(const char* function);

#endif
