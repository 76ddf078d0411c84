/* scr_error.h - internal return codes shared by every module.
 * Public functions map these onto SCR_SUCCESS/SCR_FAILURE from scr.h. */
#ifndef SCR_ERROR_H
#define SCR_ERROR_H

#include "scr.h"

/* SCR_SUCCESS (0) comes from scr.h; every failure is non-zero */
enum {
  SCR_ERR_FAILURE = SCR_FAILURE, /* generic failure, message already logged */
  SCR_ERR_NOENT   = 2,           /* file or entry does not exist */
  SCR_ERR_IO      = 3,           /* read/write/fsync/rename failed (errno kept) */
  SCR_ERR_CORRUPT = 4,           /* bad magic, version, CRC, truncated file */
  SCR_ERR_CONFIG  = 5,           /* invalid configuration */
  SCR_ERR_INVALID = 6,           /* invalid argument or state */
  SCR_ERR_NOMEM   = 7,           /* allocation failed */
  SCR_ERR_SECURITY = 8           /* unsafe path, foreign-owned or symlinked directory */
};

/* short description of an internal return code */
const char* scr_error_string(int rc);

#endif
