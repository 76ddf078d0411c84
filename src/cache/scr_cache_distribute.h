/* scr_cache_distribute.h - a new run may place ranks on other nodes: move each
 * rank's cached files (data, redundancy, partner copies) to the node it runs on now. */
#ifndef SCR_CACHE_DISTRIBUTE_H
#define SCR_CACHE_DISTRIBUTE_H

/* collective; after each rank loaded its own filemap */
int scr_cache_distribute(void);

#endif
