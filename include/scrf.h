! scrf.h - constants of the SCR API for Fortran, as LLNL SCR 3.x defines
! them: INCLUDE 'scrf.h' and link with -lscrf -lscr (fixed or free form).
      INTEGER SCR_SUCCESS
      PARAMETER (SCR_SUCCESS=0)
      INTEGER SCR_FAILURE
      PARAMETER (SCR_FAILURE=1)

! the length of a CHARACTER that holds any name SCR returns
      INTEGER SCR_MAX_FILENAME
      PARAMETER (SCR_MAX_FILENAME=1024)

! flags for SCR_START_OUTPUT
      INTEGER SCR_FLAG_NONE
      PARAMETER (SCR_FLAG_NONE=0)
      INTEGER SCR_FLAG_CHECKPOINT
      PARAMETER (SCR_FLAG_CHECKPOINT=1)
      INTEGER SCR_FLAG_OUTPUT
      PARAMETER (SCR_FLAG_OUTPUT=2)
