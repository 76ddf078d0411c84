/* scr_flush.h - copy a cached dataset to the prefix directory and record it:
 * files at their original paths, summary, rank2file map, index entry. */
#ifndef SCR_FLUSH_H
#define SCR_FLUSH_H

/* collective; 1 if the dataset must be flushed now (output, or every SCR_FLUSH checkpoints) */
int scr_flush_is_due(int id);

/* collective synchronous flush; SCR_SUCCESS when the dataset is complete on the prefix */
int scr_flush_dataset(int id);

/* 1 if this rank's filemap says the dataset is on the prefix directory */
int scr_flush_is_flushed(int id);

#endif
