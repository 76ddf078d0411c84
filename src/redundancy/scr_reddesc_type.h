/* scr_reddesc_type.h - the redundancy schemes by name, without MPI: what a dataset's
 * recorded REDDESC/TYPE says, for the library and for scr_index --build alike. */
#ifndef SCR_REDDESC_TYPE_H
#define SCR_REDDESC_TYPE_H

enum scr_copy_type { SCR_COPY_SINGLE, SCR_COPY_PARTNER, SCR_COPY_XOR, SCR_COPY_RS };

const char* scr_reddesc_type_name(enum scr_copy_type type);
int scr_reddesc_type_from_name(const char* name, enum scr_copy_type* type);

#endif
