/* scr_api_fortran.c - the Fortran binding of the SCR API (libscrf), under the
 * names LLNL SCR 3.x gives it, so a Fortran code written for it links unchanged. */
#include "config.h"
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "scr.h"
#include "scr_api.h"

/* Fortran compilers on Linux (gfortran, ifx, flang) call a procedure by its
 * lower-case name with one trailing underscore and pass a default INTEGER as
 * a pointer to a C int; each CHARACTER argument's length follows the declared
 * arguments, as a size_t since gfortran 8 (a 64-bit register either way). */
typedef size_t fortran_length;

/* a CHARACTER argument as a C string in `out` (SCR_MAX_FILENAME bytes),
 * without its trailing blanks; SCR_FAILURE when it does not fit */
static int fortran_to_c(const char* text, fortran_length length, char* out)
{
  while (length > 0 && text[length - 1] == ' ') length--;
  if (length >= SCR_MAX_FILENAME) return SCR_FAILURE;
  memcpy(out, text, length);
  out[length] = '\0';
  return SCR_SUCCESS;
}

/* a C string into a CHARACTER argument, padded with blanks; SCR_FAILURE when
 * it is longer than the argument (which then holds as much as fits) */
static int c_to_fortran(const char* text, char* out, fortran_length length)
{
  size_t n = strlen(text);
  if (n > length) {
    memcpy(out, text, length);
    return SCR_FAILURE;
  }
  memcpy(out, text, n);
  memset(out + n, ' ', length - n);
  return SCR_SUCCESS;
}

/* the calls that take a name and return a code */
#define SCR_FORTRAN_NAMED(fortran_name, c_function) \
  void fortran_name(const char* name, int* ierror, fortran_length name_length) \
  { \
    char c_name[SCR_MAX_FILENAME]; \
    *ierror = fortran_to_c(name, name_length, c_name); \
    if (*ierror == SCR_SUCCESS) *ierror = c_function(c_name); \
  }

/* the calls that take nothing, or an INTEGER in or out, and return a code */
#define SCR_FORTRAN_PLAIN(fortran_name, c_function) \
  void fortran_name(int* ierror) { *ierror = c_function(); }
#define SCR_FORTRAN_VALUE(fortran_name, c_function) \
  void fortran_name(const int* value, int* ierror) { *ierror = c_function(*value); }
#define SCR_FORTRAN_FLAG(fortran_name, c_function) \
  void fortran_name(int* flag, int* ierror) { *ierror = c_function(flag); }

/* (prototypes keep -Wmissing-prototypes quiet: these are called from Fortran) */
void scr_init_(int* ierror);
void scr_finalize_(int* ierror);
void scr_start_checkpoint_(int* ierror);
void scr_complete_checkpoint_(const int* valid, int* ierror);
void scr_complete_restart_(const int* valid, int* ierror);
void scr_complete_output_(const int* valid, int* ierror);
void scr_need_checkpoint_(int* flag, int* ierror);
void scr_should_exit_(int* flag, int* ierror);
void scr_current_(const char* name, int* ierror, fortran_length name_length);
void scr_drop_(const char* name, int* ierror, fortran_length name_length);
void scr_delete_(const char* name, int* ierror, fortran_length name_length);
void scr_start_output_(const char* name, const int* flags, int* ierror, fortran_length name_length);
void scr_route_file_(const char* name, char* file, int* ierror, fortran_length name_length,
                     fortran_length file_length);
void scr_have_restart_(int* flag, char* name, int* ierror, fortran_length name_length);
void scr_start_restart_(char* name, int* ierror, fortran_length name_length);
void scr_config_(const char* config, char* value, int* ierror, fortran_length config_length,
                 fortran_length value_length);

SCR_FORTRAN_PLAIN(scr_init_, SCR_Init)
SCR_FORTRAN_PLAIN(scr_finalize_, SCR_Finalize)
SCR_FORTRAN_PLAIN(scr_start_checkpoint_, SCR_Start_checkpoint)
SCR_FORTRAN_VALUE(scr_complete_checkpoint_, SCR_Complete_checkpoint)
SCR_FORTRAN_VALUE(scr_complete_restart_, SCR_Complete_restart)
SCR_FORTRAN_VALUE(scr_complete_output_, SCR_Complete_output)
SCR_FORTRAN_FLAG(scr_need_checkpoint_, SCR_Need_checkpoint)
SCR_FORTRAN_FLAG(scr_should_exit_, SCR_Should_exit)
SCR_FORTRAN_NAMED(scr_current_, SCR_Current)
SCR_FORTRAN_NAMED(scr_drop_, SCR_Drop)
SCR_FORTRAN_NAMED(scr_delete_, SCR_Delete)

void scr_start_output_(const char* name, const int* flags, int* ierror, fortran_length name_length)
{
  char c_name[SCR_MAX_FILENAME];
  *ierror = fortran_to_c(name, name_length, c_name);
  if (*ierror == SCR_SUCCESS) *ierror = SCR_Start_output(c_name, *flags);
}

void scr_route_file_(const char* name, char* file, int* ierror, fortran_length name_length,
                     fortran_length file_length)
{
  char c_name[SCR_MAX_FILENAME], c_file[SCR_MAX_FILENAME];
  *ierror = fortran_to_c(name, name_length, c_name);
  if (*ierror == SCR_SUCCESS) *ierror = SCR_Route_file(c_name, c_file);
  if (*ierror == SCR_SUCCESS) *ierror = c_to_fortran(c_file, file, file_length);
}

/* the name is set only when there is a restart, as in C */
void scr_have_restart_(int* flag, char* name, int* ierror, fortran_length name_length)
{
  char c_name[SCR_MAX_FILENAME];
  *flag = 0;
  *ierror = SCR_Have_restart(flag, c_name);
  if (*ierror == SCR_SUCCESS && *flag) *ierror = c_to_fortran(c_name, name, name_length);
}

void scr_start_restart_(char* name, int* ierror, fortran_length name_length)
{
  char c_name[SCR_MAX_FILENAME];
  *ierror = SCR_Start_restart(c_name);
  if (*ierror == SCR_SUCCESS) *ierror = c_to_fortran(c_name, name, name_length);
}

/* value gets a query's answer (blanks after a setting); ierror fails for a
 * line SCR refused and for a key that has no value */
void scr_config_(const char* config, char* value, int* ierror, fortran_length config_length,
                 fortran_length value_length)
{
  char c_config[SCR_MAX_FILENAME];
  char* answer = NULL;
  *ierror = fortran_to_c(config, config_length, c_config);
  if (*ierror == SCR_SUCCESS) *ierror = scr_api_config(c_config, &answer);
  int fits = c_to_fortran(answer ? answer : "", value, value_length);
  if (*ierror == SCR_SUCCESS) *ierror = fits;
  free(answer);
}
