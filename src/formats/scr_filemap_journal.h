/* scr_filemap_journal.h - the journal beside a rank's filemap: files routed into the dataset in
 * progress that the filemap on disk does not name yet. The format only; MPI-free. */
#ifndef SCR_FILEMAP_JOURNAL_H
#define SCR_FILEMAP_JOURNAL_H

#include <stddef.h>
#include "scr_kvtree.h"

/* <cntl_dir>/filemap_<rank>.journal (malloc'd), NULL when out of memory */
char* scr_filemap_journal_path(const char* cntl_dir, int rank);

/* one record for a file of dataset id: written into buf when it fits in
 * size bytes; returns its length either way (a record is appended with one
 * write(2), so a process that dies leaves it whole or absent) */
size_t scr_filemap_journal_encode(char* buf, size_t size, int id, const char* cache, const char* orig,
                                  const char* relpath);

/* add the files of the journal at path to rank's files in map, only in
 * datasets that are not complete in map (a completion wrote the filemap,
 * which names what it kept); a dataset map lacks is added, without a
 * descriptor, so incomplete; a record cut short ends the journal. Returns
 * how many files were added, 0 when there is no journal */
int scr_filemap_journal_merge(const char* path, int rank, scr_kvtree* map);

#endif
