/* scr_preload_child.h - what the processes a rank starts (system, popen, posix_spawn,
 * fork) learn of it through SCR_PRELOAD_PARENT, so that they see its checkpoint files. */
#ifndef SCR_PRELOAD_CHILD_H
#define SCR_PRELOAD_CHILD_H

#include <limits.h>
#include <sys/types.h>
#include "scr_preload_rules.h"

/* A rank's files live in its node-local cache, where a program it runs on
 * them (gzip, a script, a forked reader) would not find them. The rank's
 * engine names what such a process needs in the environment, which every
 * child and grandchild inherits however it was started (glibc's system and
 * popen clone without a call any wrapper sees); libscr_preload.so in a
 * process whose variable names another process id loads the same rules
 * and, at the first call on a path they match, the engine module's child
 * view (scr_preload_child_view.c): the rank's files, read-only, from its
 * filemap on disk. */
#define SCR_PRELOAD_PARENT_VARIABLE "SCR_PRELOAD_PARENT"

/* the variable's contents, decoded */
struct scr_preload_parent {
  pid_t pid;                  /* the rank's process */
  int rank;                   /* its rank in MPI_COMM_WORLD */
  int restored;               /* the dataset its MPI_Init restored, -1 for none */
  char prefix[PATH_MAX];      /* the prefix directory (the rules are relative to it) */
  char cntl_dir[PATH_MAX];    /* the control directory: its filemap */
  char cache_dir[PATH_MAX];   /* the cache directory: its copies of files other ranks wrote */
  char user_file[PATH_MAX];   /* the user configuration file its rules came from (the rank's
                               * copy in cntl_dir), "" for none */
  int debug;                  /* not in the variable: SCR_DEBUG as this process read it with the
                               * rules (the engine module keeps a log level of its own) */
};

/* Called by the engine, not a hook: at the end of a rank's start-up, what
 * its children need (the process id and the configuration file are the
 * preload's to add); prefix NULL when it stops (MPI_Finalize): a process
 * started later sees the file system only, as the rank does then. */
SCR_PRELOAD_API void scr_preload_child_export(int rank, int restored, const char* prefix, const char* cntl_dir,
                                              const char* cache_dir);

/* find this library's file, for the LD_PRELOAD of processes started with an
 * environment of the program's own (scr_preload_exec.c); called where a
 * view begins to be shown, never in a vfork child */
void scr_preload_exec_prepare(void);

/* Called by the engine's child view: the parent this process shows the
 * files of, NULL when it is none's child */
SCR_PRELOAD_API const struct scr_preload_parent* scr_preload_child_parent(void);

/* ---- inside libscr_preload.so */

/* before main (the library's constructor): a process whose variable names
 * another process loads the rules and waits for its first hook call */
void scr_preload_child_start(void);

/* in a child made by fork (the pthread_atfork handler, one thread): the
 * rules stay when the parent showed files (a rank, or a child view) and the
 * variable names another process, and the view is made anew from disk at
 * the first hook call; otherwise the child is inert, as it was before */
void scr_preload_child_forked(void);

/* 1 while the child view is chosen (loaded or not yet) */
extern int scr_preload_child_chosen;
static inline int scr_preload_child_view(void)
{
  return __atomic_load_n(&scr_preload_child_chosen, __ATOMIC_RELAXED);
}

/* the view waits for the first hook call to load it */
extern int scr_preload_child_pending;

/* the hooks' engine in a child: the view's table, loaded now if need be
 * (called inside the guard); NULL when it cannot be, and the layer is then
 * inert */
struct scr_preload_engine;
const struct scr_preload_engine* scr_preload_child_engine(void);

/* at MPI_Init, before the process's own engine: a child that becomes a rank
 * of a job of its own drops the view and its parent's rules */
void scr_preload_child_stop(void);

#endif
