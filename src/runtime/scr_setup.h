/* scr_setup.h - SCR_Init's first half: configuration (rank 0 reads, all receive),
 * parameters into the global state, identity and the control/cache directories. */
#ifndef SCR_SETUP_H
#define SCR_SETUP_H

/* collective; SCR_SUCCESS, or SCR_ERR_CONFIG after rank 0 printed the one-line reason */
int scr_setup_config(void);

/* collective; creates the control and cache directories (0700, checked) */
int scr_setup_directories(void);

/* releases what setup allocated */
void scr_setup_finalize(void);

/* set by SCR_Config when a line it was given was invalid, so SCR_Init can fail */
extern int scr_setup_app_config_error;

#endif
