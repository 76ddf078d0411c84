/* scr_reddesc.c - read CKPT descriptors and form redundancy sets whose members all
 * come from different failure groups (NODE: same host name; others from GROUPS=). */
#include "config.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <zlib.h>
#include "scr.h"
#include "scr_error.h"
#include "scr_log.h"
#include "scr_param.h"
#include "scr_globals.h"
#include "scr_mpi.h"
#include "scr_reddesc.h"

static struct scr_reddesc* scr_reddescs = NULL;
/* the built-in default cannot form sets on one node: that is no news to report */
static int scr_reddesc_quiet = 0;
static int scr_reddesc_count = 0;

/* failure group value of this rank for group name: host name for NODE, else
 * the GROUPS descriptor of this host; NULL when the host has none */
static const char* scr_reddesc_group_value(const char* group)
{
  if (strcasecmp(group, "NODE") == 0) return scr.hostname;
  if (strcasecmp(group, "WORLD") == 0) return NULL;
  const scr_kvtree* groups = scr_param_get_descriptors("GROUPS");
  return scr_kvtree_get_val(scr_kvtree_get(groups, scr.hostname), group);
}

/* collective over world: split into sets; returns 1 on this rank if its set is
 * usable, with a reason otherwise */
static int scr_reddesc_form_sets(struct scr_reddesc* d, char* reason, size_t len)
{
  int ok = 1;
  const char* value = scr_reddesc_group_value(d->group);
  if (!value) {
    snprintf(reason, len, "host %s has no %s in the GROUPS descriptors", scr.hostname, d->group);
    ok = 0;
    value = "";
  }

  /* ranks of one failure group: hash split, then exact names (as for nodes) */
  MPI_Comm group_comm;
  scr_mpi_split_by_host(scr.comm_world, value, &group_comm);
  int local_index;
  MPI_Comm_rank(group_comm, &local_index);

  /* number the groups by their first rank */
  MPI_Comm leaders;
  int group_index = 0;
  MPI_Comm_split(scr.comm_world, local_index == 0 ? 0 : MPI_UNDEFINED, scr.rank, &leaders);
  if (leaders != MPI_COMM_NULL) {
    MPI_Comm_rank(leaders, &group_index);
    MPI_Comm_free(&leaders);
  }
  MPI_Bcast(&group_index, 1, MPI_INT, 0, group_comm);
  MPI_Comm_free(&group_comm);

  /* ranks with the same index inside their group, one per group, ordered by group */
  MPI_Comm ring;
  MPI_Comm_split(scr.comm_world, local_index, group_index, &ring);
  int pos, count;
  MPI_Comm_rank(ring, &pos);
  MPI_Comm_size(ring, &count);

  int wanted = d->set_size > 1 ? d->set_size : 2;
  int sets = count / wanted;
  if (sets < 1) sets = 1;
  int set = (int) ((long long) pos * sets / count);
  MPI_Comm_split(ring, set, pos, &d->set_comm);
  MPI_Comm_free(&ring);
  MPI_Comm_rank(d->set_comm, &d->set_rank);
  MPI_Comm_size(d->set_comm, &d->set_ranks);
  d->set_members = malloc(sizeof(int) * d->set_ranks);
  MPI_Allgather(&scr.rank, 1, MPI_INT, d->set_members, 1, MPI_INT, d->set_comm);
  d->set_id = d->set_members[0];

  if (ok && d->set_ranks < 2) {
    snprintf(reason, len, "rank %d is the only member of its %s set: it needs ranks in at least "
             "2 different %s failure groups with the same number of ranks each", scr.rank,
             scr_reddesc_type_name(d->type), d->group);
    ok = 0;
  } else if (ok && d->type == SCR_COPY_RS && d->set_failures >= d->set_ranks) {
    snprintf(reason, len, "RS set of rank %d has %d members, too few for SET_FAILURES=%d "
             "(needs more members than failures)", scr.rank, d->set_ranks, d->set_failures);
    ok = 0;
  } else if (ok && d->type == SCR_COPY_PARTNER && d->hop_distance % d->set_ranks == 0) {
    snprintf(reason, len, "HOP_DISTANCE=%d puts rank %d's partner copy on itself (set of %d)",
             d->hop_distance, scr.rank, d->set_ranks);
    ok = 0;
  }
  return ok;
}

/* collective: form the sets of d; on failure (on any rank) d becomes SINGLE */
static void scr_reddesc_setup(struct scr_reddesc* d)
{
  d->set_comm = MPI_COMM_NULL;
  if (d->type == SCR_COPY_SINGLE) return;
  char reason[512] = "";
  int ok = scr_reddesc_form_sets(d, reason, sizeof(reason));
  /* the lowest failing rank explains, once */
  int first_bad = ok ? scr.ranks : scr.rank, reporter = scr.ranks;
  MPI_Allreduce(&first_bad, &reporter, 1, MPI_INT, MPI_MIN, scr.comm_world);
  if (reporter < scr.ranks) {
    /* said without SCR_DEBUG: a user who did not choose a scheme believes
     * the default protects checkpoints against a lost node */
    if (scr.rank == reporter && scr_reddesc_quiet)
      scr_info("checkpoints are not protected against the loss of a node: the default %s cannot be used (%s); "
               "they get SINGLE (set SCR_COPY_TYPE=SINGLE to say that is meant, or run on more nodes)",
               scr_reddesc_type_name(d->type), reason);
    else if (scr.rank == reporter)
      scr_warn("CKPT=%d TYPE=%s cannot be used: %s; checkpoints it covers get SINGLE",
               d->index, scr_reddesc_type_name(d->type), reason);
    MPI_Comm_free(&d->set_comm);
    free(d->set_members);
    d->set_members = NULL;
    d->type = SCR_COPY_SINGLE;
  } else if (d->type == SCR_COPY_XOR || d->type == SCR_COPY_RS) {
    /* fewer failure groups than the set size asks: smaller sets, more
     * parity per byte; said, as the user asked for something else */
    int smallest = d->set_ranks;
    MPI_Allreduce(&d->set_ranks, &smallest, 1, MPI_INT, MPI_MIN, scr.comm_world);
    if (scr.rank == 0 && smallest < d->set_size)
      scr_info("CKPT=%d TYPE=%s: sets of as few as %d ranks, fewer than SET_SIZE=%d: the job spans too few %s "
               "failure groups", d->index, scr_reddesc_type_name(d->type), smallest, d->set_size, d->group);
  }
}

static long long scr_reddesc_attr_int(const scr_kvtree* attrs, const char* name, long long dflt)
{
  long long v = dflt;
  if (scr_kvtree_get_int(attrs, name, &v) != SCR_SUCCESS) v = dflt;
  return v;
}

static void scr_reddesc_fill(struct scr_reddesc* d, int index, const scr_kvtree* attrs)
{
  long long set_size = 8, failures = 2, hop = 1;
  scr_param_get_int("SCR_SET_SIZE", &set_size);
  scr_param_get_int("SCR_SET_FAILURES", &failures);
  scr_param_get_int("SCR_HOP_DISTANCE", &hop);
  const char* type = scr_kvtree_get_val(attrs, "TYPE");
  if (!type) type = scr_param_get("SCR_COPY_TYPE");
  if (!type || strcasecmp(type, "FILE") == 0) type = "XOR";
  const char* group = scr_kvtree_get_val(attrs, "GROUP");
  if (!group) group = scr_param_get("SCR_GROUP");

  memset(d, 0, sizeof(*d));
  d->index = index;
  d->interval = (int) scr_reddesc_attr_int(attrs, "INTERVAL", 1);
  if (d->interval < 1) d->interval = 1;
  d->output = (int) scr_reddesc_attr_int(attrs, "OUTPUT", 0);
  d->type = SCR_COPY_SINGLE;
  if (type) scr_reddesc_type_from_name(type, &d->type);
  d->group = strdup(group ? group : "NODE");
  d->set_size = (int) scr_reddesc_attr_int(attrs, "SET_SIZE", set_size);
  d->set_failures = (int) scr_reddesc_attr_int(attrs, "SET_FAILURES", failures);
  d->hop_distance = (int) scr_reddesc_attr_int(attrs, "HOP_DISTANCE", hop);
  if (d->set_failures < 1) d->set_failures = 1;
  if (d->hop_distance < 1) d->hop_distance = 1;
}

int scr_reddesc_init(void)
{
  const scr_kvtree* ckpts = scr_param_get_descriptors("CKPT");
  const char* copy_type = scr_param_get("SCR_COPY_TYPE");
  int explicit_type = strcmp(scr_param_origin("SCR_COPY_TYPE"), "default") != 0;
  int n = scr_kvtree_size(ckpts);
  if (explicit_type && copy_type && strcasecmp(copy_type, "FILE") != 0) n = 0;
  scr_reddesc_quiet = !explicit_type && n == 0;
  scr_reddesc_count = n > 0 ? n : 1;
  scr_reddescs = calloc(scr_reddesc_count, sizeof(*scr_reddescs));
  if (n == 0) {
    scr_reddesc_fill(&scr_reddescs[0], 0, NULL);
  } else {
    /* every rank sees the same descriptors in the same order (broadcast config) */
    int i = 0;
    for (scr_kvtree_elem* e = scr_kvtree_first(ckpts); e; e = scr_kvtree_next(e), i++)
      scr_reddesc_fill(&scr_reddescs[i], (int) scr_kvtree_elem_key_int(e), scr_kvtree_elem_tree(e));
  }
  for (int i = 0; i < scr_reddesc_count; i++) scr_reddesc_setup(&scr_reddescs[i]);
  return SCR_SUCCESS;
}

void scr_reddesc_finalize(void)
{
  for (int i = 0; i < scr_reddesc_count; i++) {
    if (scr_reddescs[i].set_comm != MPI_COMM_NULL) MPI_Comm_free(&scr_reddescs[i].set_comm);
    free(scr_reddescs[i].set_members);
    free(scr_reddescs[i].group);
  }
  free(scr_reddescs);
  scr_reddescs = NULL;
  scr_reddesc_count = 0;
}

const struct scr_reddesc* scr_reddesc_select(int checkpoint_id, int flags)
{
  const struct scr_reddesc* best = NULL;
  for (int i = 0; i < scr_reddesc_count; i++) {
    const struct scr_reddesc* d = &scr_reddescs[i];
    int applies = (flags & SCR_FLAG_CHECKPOINT) ? checkpoint_id % d->interval == 0
                                                : (d->output || d->interval == 1);
    if (applies && (!best || d->interval > best->interval)) best = d;
  }
  return best ? best : &scr_reddescs[0];
}

void scr_reddesc_record(const struct scr_reddesc* d, scr_kvtree* tree)
{
  scr_kvtree_set_kv(tree, "TYPE", scr_reddesc_type_name(d->type));
  scr_kvtree_set_kv_int(tree, "CKPT", d->index);
  /* the job's size: a scavenge from fewer nodes tells by it which ranks are missing */
  scr_kvtree_set_kv_int(tree, "RANKS", scr.ranks);
  if (d->type == SCR_COPY_SINGLE) return;
  scr_kvtree_set_kv(tree, "GROUP", d->group);
  scr_kvtree_set_kv_int(tree, "HOP", d->hop_distance);
  scr_kvtree* set = scr_kvtree_get_or_create(tree, "SET");
  scr_kvtree_set_kv_int(set, "ID", d->set_id);
  scr_kvtree_set_kv_int(set, "SIZE", d->set_ranks);
  scr_kvtree_set_kv_int(set, "FAILURES", d->type == SCR_COPY_RS ? d->set_failures : 1);
  scr_kvtree* members = scr_kvtree_get_or_create(set, "MEMBER");
  for (int i = 0; i < d->set_ranks; i++) {
    char key[16];
    snprintf(key, sizeof(key), "%d", i);
    scr_kvtree_set_kv_int(members, key, d->set_members[i]);
  }
}
