/* scr_preload_hot.c - the one line of state every wrapped call reads first
 * (scr_preload_hot.h), kept in the MPI-free core with the screen and the table. */
#include "config.h"
#include "scr_preload_hot.h"

scr_preload_hot_state scr_preload_hot = { .screen = scr_preload_screen_baseline };
