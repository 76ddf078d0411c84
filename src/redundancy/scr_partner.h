/* scr_partner.h - PARTNER redundancy: a full copy of each rank's files on a rank
 * HOP_DISTANCE further along its set, in another failure group. */
#ifndef SCR_PARTNER_H
#define SCR_PARTNER_H

#include "scr_kvtree.h"
#include "scr_reddesc.h"

/* collective over the set: send our files to the right partner, keep the left's; 1 if ok */
int scr_partner_apply(int id, const struct scr_reddesc* d);
/* the same for the members marked in only[set_rank] alone: each receives the
 * copy it holds from its partner on the left, which sends it; the others
 * keep theirs (collective over d->set_comm all the same) */
int scr_partner_apply_to(int id, const struct scr_reddesc* d, const int* only);

/* 1 if the partner copies this rank holds for dataset id are intact (or it holds none) */
int scr_partner_check_local(int id);

/* collective over comm (the set, ranked by set index): members with lost != 0 get
 * their metadata (into my_meta: FILE/<i>/{PATH, ORIG, RELPATH, SIZE, CRC}) and
 * files back from the member holding their copy; 1 if this rank is ok */
int scr_partner_restore(int id, MPI_Comm comm, int hop, const int* lost, scr_kvtree* my_meta);

#endif
