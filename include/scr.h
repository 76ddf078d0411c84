/* scr.h - public API of the SCR checkpoint/restart library.
 * Source-compatible with LLNL SCR 3.x: a program written for it compiles unchanged. */
#ifndef SCR_H
#define SCR_H

#ifdef __cplusplus
extern "C" {
#endif

/* Version of this library (not of LLNL SCR) */
#define SCR_MAJOR_VERSION "0"
#define SCR_MINOR_VERSION "1"
#define SCR_PATCH_VERSION "0"
#define SCR_VERSION "v0.1.0"

/* return codes of every SCR function */
#define SCR_SUCCESS (0)
#define SCR_FAILURE (1)

/* size of the buffers that SCR fills with file and dataset names */
#define SCR_MAX_FILENAME 1024

/* bit flags for SCR_Start_output */
#define SCR_FLAG_NONE       (0 << 0) /* empty flags */
#define SCR_FLAG_CHECKPOINT (1 << 0) /* the job can restart from this dataset */
#define SCR_FLAG_OUTPUT     (1 << 1) /* the dataset must reach the prefix directory */

/* Init and finalize (collective, after MPI_Init and before MPI_Finalize) */
int SCR_Init(void);
int SCR_Finalize(void);

/* Configuration before SCR_Init: "KEY=VALUE" sets, "KEY=" unsets, and
 * "KEY" returns the current value in a string the caller frees. */
const char* SCR_Config(const char* config);
const char* SCR_Configf(const char* format, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 1, 2)))
#endif
    ;

/* File registration: where to open name (not collective) */
int SCR_Route_file(const char* name, char* file);

/* Restart */
int SCR_Have_restart(int* flag, char* name);
int SCR_Start_restart(char* name);
int SCR_Complete_restart(int valid);

/* Checkpoint */
int SCR_Need_checkpoint(int* flag);
int SCR_Start_checkpoint(void);
int SCR_Complete_checkpoint(int valid);

/* Output datasets (checkpoint, output, or both through flags) */
int SCR_Start_output(const char* name, int flags);
int SCR_Complete_output(int valid);

/* Dataset management */
int SCR_Current(const char* name);
int SCR_Drop(const char* name);
int SCR_Delete(const char* name);

/* Environment */
int SCR_Should_exit(int* flag);
char* SCR_Get_version(void);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* SCR_H */
