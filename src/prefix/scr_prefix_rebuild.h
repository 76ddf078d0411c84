/* scr_prefix_rebuild.h - scr_index --build: a dataset on the prefix directory that lacks
 * some ranks' files gets them back from the redundancy data flushed beside it. MPI-free. */
#ifndef SCR_PREFIX_REBUILD_H
#define SCR_PREFIX_REBUILD_H

#include <stddef.h>

/* Checks every rank's files of dataset id on the prefix directory (present,
 * the size rank2file records); rebuilds those of the ranks that lack one
 * from the XOR or RS parity or the PARTNER copies under the dataset's
 * directory in <prefix>/.scr, each checked by CRC32 before it is used and
 * the rebuilt files by CRC32 before they take their names; then marks the
 * dataset complete in the summary and the index (current when it is the
 * newest checkpoint there), so that a restart fetches it.
 * SCR_SUCCESS when every rank's files are there; otherwise an error after
 * messages naming the ranks that cannot be rebuilt and why, with nothing
 * marked complete. *rebuilt (may be NULL): how many ranks were rebuilt. */
int scr_prefix_rebuild(const char* prefix, int id, int* rebuilt);

/* the ranks marked among n, as "2, 3 and 5", into buf (what the messages
 * of a rebuild and of the scavenge before it name them by) */
void scr_prefix_rebuild_ranks_text(const int* marked, int n, char* buf, size_t len);

#endif
