/* scr_preload_mpi.c - MPI_Init, MPI_Finalize and MPI_Barrier (C and MPICH's
 * Fortran names) through the profiling interface: where the engine starts, stops and completes. */
#include "config.h"
#include <dlfcn.h>
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <mpi.h>
#include "scr_error.h"
#include "scr_log.h"
#include "scr_preload_child.h"
#include "scr_preload_engine.h"
#include "scr_preload_real.h"
#include "scr_preload_rules.h"
#include "scr_preload_state.h"
#include "scr_preload_wrap.h"

/* Python loads extension modules RTLD_LOCAL, and with mpi4py the MPI library
 * it links: RTLD_NEXT then finds no PMPI_Init. The module that called the
 * wrapper links that library, so its handle finds the symbols among its
 * dependencies; it is kept for every later lookup. */
static void* mpi_library;

static void* mpi_symbol(const char* name, const void* caller)
{
  void* symbol = dlsym(RTLD_NEXT, name);
  if (symbol) return symbol;
  void* handle = __atomic_load_n(&mpi_library, __ATOMIC_ACQUIRE);
  Dl_info info;
  if (!handle && caller && dladdr(caller, &info) && info.dli_fname) {
    handle = dlopen(info.dli_fname, RTLD_LAZY | RTLD_NOLOAD);
    void* none = NULL;
    if (handle && (!dlsym(handle, "PMPI_Init") ||
                   !__atomic_compare_exchange_n(&mpi_library, &none, handle, 0, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))) {
      dlclose(handle);
      handle = __atomic_load_n(&mpi_library, __ATOMIC_ACQUIRE);
    }
  }
  return handle ? dlsym(handle, name) : NULL;
}

/* the real MPI function of a wrapper: the table's, else found through the
 * caller (the first time; kept in a static of the wrapper) */
#define SCR_MPI_REAL(name, symbol) \
  __extension__({ \
    static __typeof__(scr_preload_real.name) mpi_found_; \
    __typeof__(scr_preload_real.name) mpi_real_ = SCR_REAL(name); \
    if (!mpi_real_) mpi_real_ = __atomic_load_n(&mpi_found_, __ATOMIC_RELAXED); \
    if (!mpi_real_) { \
      mpi_real_ = (__typeof__(mpi_real_)) mpi_symbol(symbol, __builtin_return_address(0)); \
      __atomic_store_n(&mpi_found_, mpi_real_, __ATOMIC_RELAXED); \
    } \
    mpi_real_; \
  })

/* the engine runs once per process, after the first successful init */
static pthread_mutex_t mpi_lock = PTHREAD_MUTEX_INITIALIZER;
static const struct scr_preload_engine* mpi_engine = NULL;
static int mpi_started = 0;

/* this process's rank in MPI_COMM_WORLD, through the MPI library already loaded */
static int mpi_world_rank(void)
{
  int rank = 0;
  int (*comm_rank)(MPI_Comm, int*) = (int (*)(MPI_Comm, int*)) mpi_symbol("PMPI_Comm_rank", NULL);
  if (comm_rank) comm_rank(MPI_COMM_WORLD, &rank);
  return rank;
}

/* The rules first: with none (or SCR_ENABLE=0) the job runs exactly as
 * without the library, and a dry run only reports; so the engine, which
 * creates the cache, is loaded only when there is something to route. A bad
 * rule is reported once and leaves the job running unprotected. */
static void mpi_start_engine(void)
{
  pthread_mutex_lock(&mpi_lock);
  if (!mpi_started) {
    mpi_started = 1;
    scr_preload_real_enter();
    int saved_errno = errno;
    /* a rank's child that is a rank of its own job: its own rules, its
     * own cache (the variable is its own from here on) */
    scr_preload_child_stop();
    char errbuf[1024] = "";
    if (mpi_symbol("ompi_mpi_comm_world", NULL)) {
      /* another MPI's handles would crash this MPICH build: stay out of the way */
      const char* rank = getenv("OMPI_COMM_WORLD_RANK");   /* said once, by rank 0 */
      if ((!rank || strcmp(rank, "0") == 0) && scr_preload_state_load(errbuf, sizeof(errbuf)) == SCR_SUCCESS &&
          scr_preload_state_rules())
        scr_err("the program uses Open MPI, and libscr_preload.so was built for MPICH: the job runs without "
                "checkpoint protection");
      scr_preload_state_install(NULL);
      errno = saved_errno;
      scr_preload_real_leave();
      pthread_mutex_unlock(&mpi_lock);
      return;
    }
    scr_log_rank = mpi_world_rank();
    if (scr_preload_state_load(errbuf, sizeof(errbuf)) != SCR_SUCCESS) {
      if (scr_log_rank == 0) scr_err("%s: the job runs without checkpoint protection", errbuf);
    } else if (scr_preload_state_rules() && !scr_preload_state_dryrun()) {
      const struct scr_preload_engine* engine =
          scr_preload_engine_module(SCR_PRELOAD_ENGINE_MODULE, SCR_PRELOAD_ENGINE_SYMBOL);
      if (engine && engine->init() == SCR_SUCCESS) {
        mpi_engine = engine;
        __atomic_store_n(&scr_preload_engine_active, engine, __ATOMIC_RELEASE);
      } else {
        scr_preload_state_install(NULL);
      }
    }
    errno = saved_errno;
    scr_preload_real_leave();
  }
  pthread_mutex_unlock(&mpi_lock);
}

static void mpi_stop_engine(void)
{
  /* files whose end the engine has not heard of yet are closed files of
   * the datasets it completes now, those closed behind every wrapper too */
  scr_preload_fd_sweep();
  scr_preload_wrap_deliver();
  pthread_mutex_lock(&mpi_lock);
  const struct scr_preload_engine* engine = mpi_engine;
  mpi_engine = NULL;
  if (engine) {
    scr_preload_real_enter();
    int saved_errno = errno;
    engine->finalize();
    __atomic_store_n(&scr_preload_engine_active, NULL, __ATOMIC_RELEASE);
    errno = saved_errno;
    scr_preload_real_leave();
  }
  pthread_mutex_unlock(&mpi_lock);
}

/* no MPI library behind us (a program that defines MPI_Init itself?) */
static int mpi_missing(const char* name)
{
  scr_err("%s: the MPI library's PMPI entry point is missing", name);
  return MPI_ERR_OTHER;
}

SCR_PRELOAD_API int MPI_Init(int* argc, char*** argv)
{
  int (*real)(int*, char***) = SCR_MPI_REAL(MPI_Init, "PMPI_Init");
  if (!real) return mpi_missing("MPI_Init");
  int rc = real(argc, argv);
  if (rc == MPI_SUCCESS && !scr_preload_real_is_internal()) mpi_start_engine();
  return rc;
}

SCR_PRELOAD_API int MPI_Init_thread(int* argc, char*** argv, int required, int* provided)
{
  int (*real)(int*, char***, int, int*) = SCR_MPI_REAL(MPI_Init_thread, "PMPI_Init_thread");
  if (!real) return mpi_missing("MPI_Init_thread");
  int rc = real(argc, argv, required, provided);
  if (rc == MPI_SUCCESS && !scr_preload_real_is_internal()) mpi_start_engine();
  return rc;
}

SCR_PRELOAD_API int MPI_Finalize(void)
{
  int (*real)(void) = SCR_MPI_REAL(MPI_Finalize, "PMPI_Finalize");
  if (!real) return mpi_missing("MPI_Finalize");
  if (!scr_preload_real_is_internal()) mpi_stop_engine();
  return real();
}

/* a barrier: the engine's meeting point (BOUNDARY=BARRIER completes there,
 * other ranks' directory renames arrive); 1 when the engine's collectives
 * synchronized every rank, which then stands for the barrier */
static int mpi_barrier_engine(MPI_Comm comm)
{
  const struct scr_preload_engine* engine = __atomic_load_n(&scr_preload_engine_active, __ATOMIC_ACQUIRE);
  if (!engine) return 0;
  /* a file closed behind every wrapper ends here on every rank, wherever
   * its number came back (or did not) before: at a barrier every rank
   * makes, where the completion it may bring meets every rank's */
  if (comm == MPI_COMM_WORLD) scr_preload_fd_sweep();
  scr_preload_wrap_deliver();
  scr_preload_real_enter();
  int saved_errno = errno;
  int synchronized = engine->barrier(comm);
  errno = saved_errno;
  scr_preload_real_leave();
  scr_preload_wrap_deliver();
  return synchronized;
}

/* MPI_Comm is an int in MPICH's ABI and a pointer in Open MPI's. Where the
 * argument travels in a register (x86-64, AArch64), the wrapper takes the
 * register whole and hands it on as it came, so that an Open MPI program
 * that inherits LD_PRELOAD runs as without it (the engine, MPICH's, never
 * starts there: see mpi_start_engine). */
#if defined(__linux__) && (defined(__x86_64__) || defined(__aarch64__))
typedef uintptr_t mpi_comm_word;
SCR_PRELOAD_API int scr_preload_wrapper_MPI_Barrier(mpi_comm_word comm) __asm__("MPI_Barrier");
SCR_PRELOAD_API int scr_preload_wrapper_MPI_Barrier(mpi_comm_word comm)
#else
typedef MPI_Comm mpi_comm_word;
SCR_PRELOAD_API int MPI_Barrier(mpi_comm_word comm)
#endif
{
  int (*real)(mpi_comm_word) = (int (*)(mpi_comm_word)) (void (*)(void)) SCR_MPI_REAL(MPI_Barrier, "PMPI_Barrier");
  if (!real) return mpi_missing("MPI_Barrier");
  if (!scr_preload_real_is_internal() && mpi_barrier_engine((MPI_Comm) comm)) return MPI_SUCCESS;
  return real(comm);
}

/* ROMIO's MPI_File_open creates a file with open(O_CREAT), closes it at once
 * and opens it again: the first close is no end of the file for the engine
 * (scr_preload_mpi_file_opening), whose checkpoint would complete empty. */
static __thread int mpi_file_opening __attribute__((tls_model("initial-exec")));

SCR_PRELOAD_API int scr_preload_mpi_file_opening(void)
{
  return mpi_file_opening > 0;
}

SCR_PRELOAD_API int MPI_File_open(MPI_Comm comm, const char* filename, int amode, MPI_Info info, MPI_File* fh)
{
  int (*real)(MPI_Comm, const char*, int, MPI_Info, MPI_File*) = SCR_MPI_REAL(MPI_File_open, "PMPI_File_open");
  if (!real) return mpi_missing("MPI_File_open");
  mpi_file_opening++;
  int rc = real(comm, filename, amode, info, fh);
  mpi_file_opening--;
  return rc;
}

/* ---- MPICH's Fortran bindings. "use mpi" and mpif.h reach the C functions
 * above through the PLT, but "use mpi_f08" calls PMPI_Init, PMPI_Finalize
 * and PMPI_Barrier directly (MPICH 4.0.2: mpi_init_f08_ and the others), so
 * without these wrappers such a program would run unprotected without a
 * word. The legacy names are wrapped as well, for a build whose bindings do
 * the same. Starting and stopping the engine twice is harmless; a barrier
 * calls the real one inside the library guard, so that a C MPI_Barrier
 * underneath does not complete a second time. An ierror may be NULL: it is
 * optional in mpi_f08. */

static void* mpi_fortran_real(const char* name, const void* caller)
{
  void* real = mpi_symbol(name, caller);
  if (!real) scr_err("%s: not found in the MPI library", name);
  return real;
}

/* the Fortran functions' types */
typedef void mpi_fortran_ierr(MPI_Fint* ierr);
typedef void mpi_fortran_init_thread(MPI_Fint* required, MPI_Fint* provided, MPI_Fint* ierr);
typedef void mpi_fortran_barrier(MPI_Fint* comm, MPI_Fint* ierr);

/* the real Fortran function NAME of type TYPE in `real`, or an error in
 * *ierr (when given) and a return; `status` is where it is to store its error */
#define MPI_FORTRAN_REAL(type, name, ierr) \
  static type* resolved = NULL; \
  type* real = __atomic_load_n(&resolved, __ATOMIC_RELAXED); \
  if (!real) __atomic_store_n(&resolved, real = (type*) mpi_fortran_real(name, __builtin_return_address(0)), __ATOMIC_RELAXED); \
  if (!real) { \
    if (ierr) *(ierr) = MPI_ERR_OTHER; \
    return; \
  } \
  MPI_Fint local_ierr = MPI_SUCCESS; \
  MPI_Fint* status = (ierr) ? (ierr) : &local_ierr

#define SCR_PRELOAD_FORTRAN_INIT(name) \
  SCR_PRELOAD_API void name(MPI_Fint* ierr); \
  SCR_PRELOAD_API void name(MPI_Fint* ierr) \
  { \
    MPI_FORTRAN_REAL(mpi_fortran_ierr, #name, ierr); \
    real(status); \
    if (*status == MPI_SUCCESS && !scr_preload_real_is_internal()) mpi_start_engine(); \
  }

#define SCR_PRELOAD_FORTRAN_INIT_THREAD(name) \
  SCR_PRELOAD_API void name(MPI_Fint* required, MPI_Fint* provided, MPI_Fint* ierr); \
  SCR_PRELOAD_API void name(MPI_Fint* required, MPI_Fint* provided, MPI_Fint* ierr) \
  { \
    MPI_FORTRAN_REAL(mpi_fortran_init_thread, #name, ierr); \
    real(required, provided, status); \
    if (*status == MPI_SUCCESS && !scr_preload_real_is_internal()) mpi_start_engine(); \
  }

#define SCR_PRELOAD_FORTRAN_FINALIZE(name) \
  SCR_PRELOAD_API void name(MPI_Fint* ierr); \
  SCR_PRELOAD_API void name(MPI_Fint* ierr) \
  { \
    MPI_FORTRAN_REAL(mpi_fortran_ierr, #name, ierr); \
    if (!scr_preload_real_is_internal()) mpi_stop_engine(); \
    real(status); \
  }

/* comm is the handle's integer (type(MPI_Comm)'s MPI_VAL in mpi_f08) */
#define SCR_PRELOAD_FORTRAN_BARRIER(name) \
  SCR_PRELOAD_API void name(MPI_Fint* comm, MPI_Fint* ierr); \
  SCR_PRELOAD_API void name(MPI_Fint* comm, MPI_Fint* ierr) \
  { \
    MPI_FORTRAN_REAL(mpi_fortran_barrier, #name, ierr); \
    if (!scr_preload_real_is_internal() && mpi_barrier_engine(MPI_Comm_f2c(*comm))) { \
      *status = MPI_SUCCESS; \
      return; \
    } \
    scr_preload_real_enter(); \
    real(comm, status); \
    scr_preload_real_leave(); \
  }

/* mpi_f08's MPI_File_open calls PMPI_File_open itself (the legacy bindings
 * reach the C wrapper above): comm, filename, amode, info, fh, ierror and
 * the filename's hidden length, handed on as they came */
typedef void mpi_fortran_file_open(void* comm, void* filename, void* amode, void* info, void* fh, MPI_Fint* ierr,
                                   size_t filename_length);
SCR_PRELOAD_API void mpi_file_open_f08_(void* comm, void* filename, void* amode, void* info, void* fh, MPI_Fint* ierr,
                                        size_t filename_length);
SCR_PRELOAD_API void mpi_file_open_f08_(void* comm, void* filename, void* amode, void* info, void* fh, MPI_Fint* ierr,
                                        size_t filename_length)
{
  static mpi_fortran_file_open* resolved = NULL;
  mpi_fortran_file_open* real = __atomic_load_n(&resolved, __ATOMIC_RELAXED);
  if (!real)
    __atomic_store_n(&resolved, real = (mpi_fortran_file_open*) mpi_fortran_real("mpi_file_open_f08_",
                                                                                __builtin_return_address(0)),
                     __ATOMIC_RELAXED);
  if (!real) {
    if (ierr) *ierr = MPI_ERR_OTHER;
    return;
  }
  mpi_file_opening++;
  real(comm, filename, amode, info, fh, ierr, filename_length);
  mpi_file_opening--;
}

SCR_PRELOAD_FORTRAN_INIT(mpi_init_)
SCR_PRELOAD_FORTRAN_INIT(mpi_init__)
SCR_PRELOAD_FORTRAN_INIT(mpi_init)
SCR_PRELOAD_FORTRAN_INIT(MPI_INIT)
SCR_PRELOAD_FORTRAN_INIT(mpi_init_f08_)
SCR_PRELOAD_FORTRAN_INIT_THREAD(mpi_init_thread_)
SCR_PRELOAD_FORTRAN_INIT_THREAD(mpi_init_thread__)
SCR_PRELOAD_FORTRAN_INIT_THREAD(mpi_init_thread)
SCR_PRELOAD_FORTRAN_INIT_THREAD(MPI_INIT_THREAD)
SCR_PRELOAD_FORTRAN_INIT_THREAD(mpi_init_thread_f08_)
SCR_PRELOAD_FORTRAN_FINALIZE(mpi_finalize_)
SCR_PRELOAD_FORTRAN_FINALIZE(mpi_finalize__)
SCR_PRELOAD_FORTRAN_FINALIZE(mpi_finalize)
SCR_PRELOAD_FORTRAN_FINALIZE(MPI_FINALIZE)
SCR_PRELOAD_FORTRAN_FINALIZE(mpi_finalize_f08_)
SCR_PRELOAD_FORTRAN_BARRIER(mpi_barrier_)
SCR_PRELOAD_FORTRAN_BARRIER(mpi_barrier__)
SCR_PRELOAD_FORTRAN_BARRIER(mpi_barrier)
SCR_PRELOAD_FORTRAN_BARRIER(MPI_BARRIER)
SCR_PRELOAD_FORTRAN_BARRIER(mpi_barrier_f08_)
