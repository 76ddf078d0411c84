/* scr_reddesc.h - redundancy descriptors: which scheme protects which checkpoint,
 * over which failure groups, and the sets of ranks each rank belongs to. */
#ifndef SCR_REDDESC_H
#define SCR_REDDESC_H

#include <mpi.h>
#include "scr_kvtree.h"
#include "scr_reddesc_type.h"

struct scr_reddesc {
  int index;            /* CKPT=<index> */
  int interval;         /* applies to checkpoints whose number it divides */
  int output;           /* OUTPUT=1: also used for output-only datasets */
  enum scr_copy_type type;
  char* group;          /* failure group name: NODE or a GROUPS attribute */
  int set_size;         /* wanted members per set */
  int set_failures;     /* RS: parity blocks per set */
  int hop_distance;     /* PARTNER: how far along the ring the copy goes */

  /* the set this rank belongs to (MPI_COMM_NULL for SINGLE) */
  MPI_Comm set_comm;
  int set_id;           /* world rank of the set's first member */
  int set_rank, set_ranks;
  int* set_members;     /* world rank of each member, in set order */
};

/* collective: build descriptors from CKPT descriptors (or SCR_COPY_TYPE,
 * SCR_SET_SIZE, SCR_SET_FAILURES, SCR_GROUP, SCR_HOP_DISTANCE) and form sets.
 * A descriptor whose sets cannot be formed is reported by one line on rank 0
 * and replaced by SINGLE. */
int scr_reddesc_init(void);
void scr_reddesc_finalize(void);

/* descriptor for a new dataset: the one with the largest INTERVAL dividing the
 * checkpoint number (output-only datasets: flags without SCR_FLAG_CHECKPOINT) */
const struct scr_reddesc* scr_reddesc_select(int checkpoint_id, int flags);

/* what gets recorded with a dataset so a later run rebuilds with the scheme that
 * wrote it: TYPE, CKPT, RANKS (of the job), GROUP, SET/ID, SET/SIZE, SET/FAILURES,
 * SET/MEMBER/<i> = rank, HOP */
void scr_reddesc_record(const struct scr_reddesc* desc, scr_kvtree* reddesc_tree);


#endif
