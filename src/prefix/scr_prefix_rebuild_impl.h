/* scr_prefix_rebuild_impl.h - what the parts of scr_index --build share: the dataset being
 * rebuilt on the prefix directory, and the steps per scheme (scr_prefix_rebuild*.c). */
#ifndef SCR_PREFIX_REBUILD_IMPL_H
#define SCR_PREFIX_REBUILD_IMPL_H

#include <stdint.h>
#include "scr_kvtree.h"
#include "scr_prefix_rebuild.h"

struct scr_prefix_rebuild {
  const char* prefix;
  int id;
  const char* name;        /* the dataset's name, from its summary */
  int ranks;               /* of the job that wrote it */
  int check_crc;           /* whole when written: every file's CRC32 is checked */
  scr_kvtree* summary;     /* summary.scr, rewritten complete at the end */
  scr_kvtree* rank2file;   /* rank2file.scr, completed with the rebuilt ranks */
  int* lost;               /* per rank: a file of it missing or of the wrong size */
  int* unrebuilt;          /* per rank: lost, and the redundancy data cannot bring it back */
  char* work;              /* <dataset dir>/rebuild: files being rebuilt, renamed when right */
  uint64_t bytes_read, bytes_written;
};

/* rank r's entry in rank2file, created when missing */
scr_kvtree* scr_prefix_rebuild_entry(struct scr_prefix_rebuild* b, int r);
/* <prefix>/<relpath>, malloc'd; NULL (said) for a name that is absolute or climbs out */
char* scr_prefix_rebuild_file(struct scr_prefix_rebuild* b, const char* relpath);
/* <work>/<rank>/<name>, malloc'd */
char* scr_prefix_rebuild_temp(struct scr_prefix_rebuild* b, int rank, const char* name);
/* the temporary file takes dst's name (parents made); SCR_SUCCESS or said */
int scr_prefix_rebuild_commit(struct scr_prefix_rebuild* b, const char* tmp, const char* dst);
/* the survivor whose rank2file entry records a REDDESC naming rank r in
 * its set, or -1; *index gets r's place in that set */
int scr_prefix_rebuild_set_of(struct scr_prefix_rebuild* b, int r, int* index);

/* each rebuilds the lost ranks its scheme covers, or marks them unrebuilt
 * after saying why; SCR_SUCCESS when none is left unrebuilt */
int scr_prefix_rebuild_erasure(struct scr_prefix_rebuild* b);
int scr_prefix_rebuild_partner(struct scr_prefix_rebuild* b);

#endif
