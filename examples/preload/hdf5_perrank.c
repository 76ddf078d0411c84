/* hdf5_perrank.c - an MPI application in C that checkpoints one HDF5 file per
 * rank with the serial HDF5 library: h5ckpt/step_<step>_rank_<rank>.h5 holds
 * a dataset "state" (64-bit unsigned integers) and on the root group the
 * attributes "step" and "rank". Rank 0 creates h5ckpt/ at start-up. On
 * start-up each rank probes its names from --steps downwards with access()
 * and H5Fis_hdf5() and takes the newest; the ranks agree on the smallest of
 * those (MPI_Allreduce MIN) and, should a rank fail to read it, look below it.
 * It knows nothing about checkpoint libraries. */
#include <errno.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <unistd.h>

#include <hdf5.h>

#include "app_common.h"

#define H5_DIR "h5ckpt"

static void ckpt_name(char* buf, size_t len, long step, int rank)
{
  snprintf(buf, len, H5_DIR "/step_%ld_rank_%d.h5", step, rank);
}

static void h5_check(herr_t rc, const char* what, const char* name)
{
  if (rc < 0) {
    app_fail(what, name, EIO);
  }
}

static void write_long_attr(hid_t loc, const char* attr, long value, const char* name)
{
  hid_t space = H5Screate(H5S_SCALAR);
  hid_t a = H5Acreate2(loc, attr, H5T_STD_I64LE, space, H5P_DEFAULT, H5P_DEFAULT);
  if (a < 0) {
    app_fail("H5Acreate2", name, EIO);
  }
  long long v = value;
  h5_check(H5Awrite(a, H5T_NATIVE_LLONG, &v), "H5Awrite", name);
  H5Aclose(a);
  H5Sclose(space);
}

static int read_long_attr(hid_t loc, const char* attr, long* value)
{
  hid_t a = H5Aopen(loc, attr, H5P_DEFAULT);
  if (a < 0) {
    return 0;
  }
  long long v = 0;
  int ok = H5Aread(a, H5T_NATIVE_LLONG, &v) >= 0;
  H5Aclose(a);
  *value = (long) v;
  return ok;
}

static void write_checkpoint(long step, int rank, const uint64_t* state, size_t words)
{
  char name[256];
  ckpt_name(name, sizeof(name), step, rank);
  hid_t file = H5Fcreate(name, H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
  if (file < 0) {
    app_fail("H5Fcreate", name, EIO);
  }
  hsize_t dims[1] = {words};
  hid_t space = H5Screate_simple(1, dims, NULL);
  hid_t dset = H5Dcreate2(file, "state", H5T_STD_U64LE, space, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
  if (dset < 0) {
    app_fail("H5Dcreate2", name, EIO);
  }
  h5_check(H5Dwrite(dset, H5T_NATIVE_UINT64, H5S_ALL, H5S_ALL, H5P_DEFAULT, state), "H5Dwrite", name);
  H5Dclose(dset);
  H5Sclose(space);
  write_long_attr(file, "step", step, name);
  write_long_attr(file, "rank", rank, name);
  h5_check(H5Fclose(file), "H5Fclose", name);
}

static int read_checkpoint(long step, int rank, uint64_t* state, size_t words)
{
  char name[256];
  ckpt_name(name, sizeof(name), step, rank);
  hid_t file = H5Fopen(name, H5F_ACC_RDONLY, H5P_DEFAULT);
  if (file < 0) {
    return 0;
  }
  long fstep = -1, frank = -1;
  int ok = read_long_attr(file, "step", &fstep) && read_long_attr(file, "rank", &frank) &&
           fstep == step && frank == rank;
  hid_t dset = ok ? H5Dopen2(file, "state", H5P_DEFAULT) : -1;
  if (dset >= 0) {
    hid_t space = H5Dget_space(dset);
    hsize_t dims[1] = {0};
    ok = H5Sget_simple_extent_ndims(space) == 1 && H5Sget_simple_extent_dims(space, dims, NULL) == 1 &&
         dims[0] == words &&
         H5Dread(dset, H5T_NATIVE_UINT64, H5S_ALL, H5S_ALL, H5P_DEFAULT, state) >= 0;
    H5Sclose(space);
    H5Dclose(dset);
  } else {
    ok = 0;
  }
  H5Fclose(file);
  return ok;
}

/* this rank's newest HDF5 checkpoint file at or below the bound, 0 for none */
static long newest_own(long bound, int rank)
{
  char name[256];
  for (long s = bound; s >= 1; s--) {
    ckpt_name(name, sizeof(name), s, rank);
    if (access(name, R_OK) == 0 && H5Fis_hdf5(name) > 0) {
      return s;
    }
  }
  return 0;
}

int main(int argc, char** argv)
{
  MPI_Init(&argc, &argv);
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  app_opts o;
  if (!app_parse(argc, argv, rank, &o, 0)) {
    MPI_Finalize();
    return 2;
  }
  /* a missing or damaged file is an expected answer here, not an error to print */
  H5Eset_auto2(H5E_DEFAULT, NULL, NULL);
  size_t words = app_words(&o);
  uint64_t* state = malloc(words * sizeof(uint64_t));
  if (state == NULL) {
    app_fail("malloc", "state", ENOMEM);
  }

  long start = 0;
  long bound = o.steps;
  while (bound > 0) {
    long mine = newest_own(bound, rank);
    long step = 0;
    MPI_Allreduce(&mine, &step, 1, MPI_LONG, MPI_MIN, MPI_COMM_WORLD);
    if (step == 0) {
      break;
    }
    int ok = read_checkpoint(step, rank, state, words);
    int all = 0;
    MPI_Allreduce(&ok, &all, 1, MPI_INT, MPI_LAND, MPI_COMM_WORLD);
    if (all) {
      start = step;
      break;
    }
    bound = step - 1;
  }
  if (start == 0) {
    app_init_state(state, words, rank);
  }
  app_say_start(start, rank);

  if (rank == 0 && mkdir(H5_DIR, 0755) != 0 && errno != EEXIST) {
    app_fail("mkdir", H5_DIR, errno);
  }
  MPI_Barrier(MPI_COMM_WORLD);

  for (long t = start + 1; t <= o.steps; t++) {
    app_step(state, words, t);
    if (t % o.every == 0) {
      write_checkpoint(t, rank, state, words);
      app_say_checkpoint(t, rank);
    }
    app_maybe_die(&o, t, rank);
  }

  app_result(state, words, rank);
  free(state);
  H5close();
  MPI_Finalize();
  return 0;
}
