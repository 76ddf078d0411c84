/* mpi-local-loader.c - a program without MPI that loads MODULE with RTLD_LOCAL
 * (as Python loads an extension such as mpi4py) and runs its mpi_local_run. */
#include <dlfcn.h>
#include <stdio.h>

int main(int argc, char** argv)
{
  if (argc != 2) {
    fprintf(stderr, "usage: %s MODULE.so\n", argv[0]);
    return 2;
  }
  void* module = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
  if (!module) {
    fprintf(stderr, "%s\n", dlerror());
    return 2;
  }
  int (*run)(void) = (int (*)(void)) dlsym(module, "mpi_local_run");
  return run ? run() : 2;
}
