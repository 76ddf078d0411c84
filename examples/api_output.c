/* api_output.c - example MPI program writing a pure output dataset (not a
 * checkpoint) through the SCR API, which SCR must copy to the prefix directory. */
#include <stdio.h>
#include <string.h>

#include <mpi.h>
#include "scr.h"

int main(int argc, char** argv)
{
  int rank, ranks;
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &ranks);

  /* all ranks must pass the same dataset name */
  const char* dataset = argc > 1 ? argv[1] : "viz.1";

  if (SCR_Init() != SCR_SUCCESS) {
    if (rank == 0)
      fprintf(stderr, "api_output: SCR_Init failed\n");
    MPI_Abort(MPI_COMM_WORLD, 1);
  }

  /* Output only: SCR may cache and protect it, but the dataset is complete
   * only once it reaches the prefix directory, and it is never restarted from. */
  int rc = 1;
  if (SCR_Start_output(dataset, SCR_FLAG_OUTPUT) == SCR_SUCCESS) {
    char name[SCR_MAX_FILENAME], path[SCR_MAX_FILENAME];
    snprintf(name, sizeof(name), "%s/field_%d.txt", dataset, rank);
    int valid = 0;
    if (SCR_Route_file(name, path) == SCR_SUCCESS) {
      FILE* f = fopen(path, "w");
      if (f != NULL) {
        valid = 1;
        for (int i = 0; i < 16; i++)
          if (fprintf(f, "%d %d %g\n", rank, i, (double)(rank * 16 + i) / ranks) < 0)
            valid = 0;
        if (fclose(f) != 0)
          valid = 0;
      }
    }
    if (!valid)
      fprintf(stderr, "api_output: rank %d could not write %s\n", rank, name);
    if (SCR_Complete_output(valid) == SCR_SUCCESS)
      rc = 0;
  }

  if (rank == 0) {
    if (rc == 0)
      printf("output dataset %s written: %d files\n", dataset, ranks);
    else
      fprintf(stderr, "api_output: output dataset %s failed\n", dataset);
  }

  SCR_Finalize();
  MPI_Finalize();
  return rc;
}
