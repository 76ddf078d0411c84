/* scr_preload_engine.h - the checkpoint engine behind the hooks, a module
 * (libscr_preload_engine.so) loaded at MPI_Init so that the preload stays MPI-free. */
#ifndef SCR_PRELOAD_ENGINE_H
#define SCR_PRELOAD_ENGINE_H

#include <mpi.h>
#include "scr_preload_hooks.h"

/* What the module gives the preload layer. Every entry is called inside the
 * guard (scr_preload_real_enter), so the engine's own I/O and MPI calls go
 * straight to libc and to the MPI library. */
struct scr_preload_engine {
  /* after the real MPI_Init: SCR_Init (rebuild or fetch), then the rules;
   * returns SCR_SUCCESS, or an error after which the layer stays inert */
  int (*init)(void);
  /* before the real MPI_Finalize: complete what is pending, SCR_Finalize,
   * the summary line; the rules are gone afterwards */
  void (*finalize)(void);
  /* instead of the real MPI_Barrier (on MPI_COMM_WORLD): where other ranks'
   * directory renames reach this rank, and the BOUNDARY=BARRIER completion
   * point. Returns 1 when it synchronized every rank of the job (a
   * collective on all of them), which then stands for the barrier; 0 when
   * the real barrier must follow */
  int (*barrier)(MPI_Comm comm);

  /* the hooks of scr_preload_hooks.h, same contract */
  int (*open)(const scr_preload_target* target, int flags, mode_t mode, char* redirect, void** file,
              int* handled);
  int (*close)(int fd, void* file, int rc, int* handled);
  int (*rename)(const scr_preload_target* from, const scr_preload_target* to, unsigned int flags, int* handled);
  int (*link)(const scr_preload_target* from, const scr_preload_target* to, int flags, int* handled);
  int (*unlink)(const scr_preload_target* target, int at_flags, int* handled);
  int (*truncate)(const scr_preload_target* target, off64_t length, int* handled);
  int (*mkdir)(const scr_preload_target* target, mode_t mode, int* handled);
  int (*materialize)(const scr_preload_target* target, int* handled);
  int (*stat)(const scr_preload_target* target, int at_flags, char* redirect, int* handled);
  int (*access)(const scr_preload_target* target, int amode, int at_flags, char* redirect, int* handled);
  DIR* (*opendir)(const scr_preload_target* target, char* redirect, void** dir, int* handled);
  struct dirent64* (*readdir)(DIR* stream, void* dir, int* handled);
  void (*rewinddir)(DIR* stream, void* dir);
  int (*closedir)(DIR* stream, void* dir, int* handled);
};

/* the module's one export: its table */
#define SCR_PRELOAD_ENGINE_SYMBOL "scr_preload_engine_table"
#define SCR_PRELOAD_ENGINE_MODULE "libscr_preload_engine.so"

/* the read-only view a rank's child process gets (scr_preload_child_view.c:
 * init reads the parent that scr_preload_child_parent names, finalize
 * forgets it; no MPI), in a module of its own that does not load the MPI
 * library, so that a tool the program runs is not burdened with it */
#define SCR_PRELOAD_CHILD_SYMBOL "scr_preload_child_table"
#define SCR_PRELOAD_CHILD_MODULE "libscr_preload_child.so"

/* the table `symbol` of `module`, which lies beside libscr_preload.so,
 * loaded now if need be; NULL (and a message) when it cannot be had */
const struct scr_preload_engine* scr_preload_engine_module(const char* module, const char* symbol);

/* the table in force: NULL until MPI_Init loaded the module, and again
 * after MPI_Finalize; the hooks then route nothing. In a rank's child
 * process, the child view's table once its first hook call loaded it
 * (scr_preload_child.c) */
extern const struct scr_preload_engine* scr_preload_engine_active;

#endif
