/* scr_error.c - text for the internal return codes of scr_error.h. */
#include "config.h"
#include "scr_error.h"

const char* scr_error_string(int rc)
{
  switch (rc) {
  case SCR_SUCCESS:      return "success";
  case SCR_ERR_FAILURE:  return "failure";
  case SCR_ERR_NOENT:    return "no such file or entry";
  case SCR_ERR_IO:       return "I/O error";
  case SCR_ERR_CORRUPT:  return "corrupt or truncated file";
  case SCR_ERR_CONFIG:   return "invalid configuration";
  case SCR_ERR_INVALID:  return "invalid argument";
  case SCR_ERR_NOMEM:    return "out of memory";
  case SCR_ERR_SECURITY: return "unsafe path or directory";
  default:               return "unknown error";
  }
}
