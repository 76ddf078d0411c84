/* scr_halt.h - collective evaluation of the halt conditions that scr_halt and
 * SCR_HALT_SECONDS set; rank 0 reads the halt file, every rank gets the verdict. */
#ifndef SCR_HALT_H
#define SCR_HALT_H

/* collective; after_checkpoint counts a completed checkpoint against
 * CheckpointsLeft first. Returns 1 when the job should stop now (and remembers
 * it for SCR_Should_exit), 0 otherwise. */
int scr_halt_check(int after_checkpoint);
/* rank 0's verdict of scr_halt_check, without telling the others (0 on the
 * other ranks, and when halting is off): for a caller that carries it in a
 * collective of its own and then sets scr.should_exit */
int scr_halt_decide(int after_checkpoint);

#endif
