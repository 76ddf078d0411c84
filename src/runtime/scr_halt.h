/* scr_halt.h - collective evaluation of the halt conditions that scr_halt and
 * SCR_HALT_SECONDS set; rank 0 reads the halt file, every rank gets the verdict. */
#ifndef SCR_HALT_H
#define SCR_HALT_H

/* collective; after_checkpoint counts a completed checkpoint against
 * CheckpointsLeft first. Returns 1 when the job should stop now (and remembers
 * it for SCR_Should_exit), 0 otherwise. */
int scr_halt_check(int after_checkpoint);

#endif
