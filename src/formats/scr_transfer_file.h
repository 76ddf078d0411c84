/* scr_transfer_file.h - <cntl_dir>/transfer.scr: the files a node's scr_transfer
 * daemon copies to the prefix directory in the background, its limits and its progress. MPI-free. */
#ifndef SCR_TRANSFER_FILE_H
#define SCR_TRANSFER_FILE_H

#include "scr_kvtree.h"

/* Layout (key names as LLNL SCR's transfer file; CRC, EXPECT and ERROR are ours):
 *   FILES/<cache path>/DESTINATION = <path in the prefix directory>
 *                     /SIZE        = <bytes>
 *                     /EXPECT      = 0x<crc32 recorded when its dataset completed>,
 *                                    optional: a copy of other bytes never takes
 *                                    DESTINATION's name (ERROR instead)
 *                     /WRITTEN     = <bytes copied and synced>: SIZE once done
 *                     /CRC         = 0x<crc32 of the bytes copied>, once done
 *                     /ERROR       = <why the copy failed>, instead
 *   BW      = <bytes per second the daemon may write; 0: no limit>
 *   PERCENT = <percent of a CPU it may use; 0: no limit>
 *   COMMAND = RUN | STOP | EXIT      (written by the library)
 *   STATE   = RUNNING | STOPPED      (written by the daemon)
 *   FLAG    = DONE                   (the daemon: every file has been copied)
 * The ranks of a node and the daemon change it under an exclusive lock on
 * <file>.lock; each write replaces the file atomically, so reading needs no lock. */
#define SCR_TRANSFER_KEY_FILES       "FILES"
#define SCR_TRANSFER_KEY_DESTINATION "DESTINATION"
#define SCR_TRANSFER_KEY_SIZE        "SIZE"
#define SCR_TRANSFER_KEY_WRITTEN     "WRITTEN"
#define SCR_TRANSFER_KEY_CRC         "CRC"
#define SCR_TRANSFER_KEY_EXPECT      "EXPECT"
#define SCR_TRANSFER_KEY_ERROR       "ERROR"
#define SCR_TRANSFER_KEY_BW          "BW"
#define SCR_TRANSFER_KEY_PERCENT     "PERCENT"
#define SCR_TRANSFER_KEY_COMMAND     "COMMAND"
#define SCR_TRANSFER_KEY_STATE       "STATE"
#define SCR_TRANSFER_KEY_FLAG        "FLAG"

#define SCR_TRANSFER_COMMAND_RUN  "RUN"
#define SCR_TRANSFER_COMMAND_STOP "STOP"
#define SCR_TRANSFER_COMMAND_EXIT "EXIT"
#define SCR_TRANSFER_STATE_RUNNING "RUNNING"
#define SCR_TRANSFER_STATE_STOPPED "STOPPED"
#define SCR_TRANSFER_FLAG_DONE "DONE"

/* "<cntl_dir>/transfer.scr", malloc'd */
char* scr_transfer_file_path(const char* cntl_dir);

/* read-modify-write under the lock: modify edits the tree read from path
 * (empty when there is none); unless it returns an error, the tree is written
 * back (an empty tree removes the file). SCR_ERR_NOENT from modify leaves the
 * file as it was and is returned. */
int scr_transfer_file_update(const char* path, int (*modify)(scr_kvtree* transfer, void* arg), void* arg);

/* merges the file into tree; SCR_ERR_NOENT when there is none */
int scr_transfer_file_read(const char* path, scr_kvtree* transfer);

#endif
