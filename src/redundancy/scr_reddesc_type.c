/* scr_reddesc_type.c - the names of the redundancy schemes, as configuration files and
 * the records of datasets spell them (case does not matter when reading). */
#include "config.h"
#include <strings.h>
#include "scr_error.h"
#include "scr_reddesc_type.h"

const char* scr_reddesc_type_name(enum scr_copy_type type)
{
  switch (type) {
  case SCR_COPY_PARTNER: return "PARTNER";
  case SCR_COPY_XOR:     return "XOR";
  case SCR_COPY_RS:      return "RS";
  default:               return "SINGLE";
  }
}

int scr_reddesc_type_from_name(const char* name, enum scr_copy_type* type)
{
  static const enum scr_copy_type all[] = { SCR_COPY_SINGLE, SCR_COPY_PARTNER, SCR_COPY_XOR,
                                            SCR_COPY_RS };
  for (unsigned i = 0; name && i < sizeof(all) / sizeof(all[0]); i++)
    if (strcasecmp(name, scr_reddesc_type_name(all[i])) == 0) {
      *type = all[i];
      return SCR_SUCCESS;
    }
  return SCR_ERR_INVALID;
}
