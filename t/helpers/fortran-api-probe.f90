! fortran-api-probe.f90 - checks of the SCR Fortran binding's argument handling
! (blank padding, short buffers, SCR_CONFIG answers), one "ok"/"not ok" line each.
program fortran_api_probe
  use mpi
  implicit none
  include 'scrf.h'
  integer :: ierr, have, rank, unit
  character(len=SCR_MAX_FILENAME) :: value, path, name
  character(len=8) :: short

  call mpi_init(ierr)
  call mpi_comm_rank(MPI_COMM_WORLD, rank, ierr)

  call scr_config('SCR_FLUSH=0', value, ierr)
  call check(ierr == SCR_SUCCESS, 'SCR_CONFIG sets a key')
  call scr_config('SCR_FLUSH', value, ierr)
  call check(ierr == SCR_SUCCESS .and. value == '0', 'SCR_CONFIG answers a query, blank-padded')

  call scr_init(ierr)
  call check(ierr == SCR_SUCCESS, 'SCR_INIT')
  name = 'unchanged'
  call scr_have_restart(have, name, ierr)
  call check(ierr == SCR_SUCCESS .and. have == 0 .and. name == 'unchanged', 'SCR_HAVE_RESTART without one')

  call scr_start_output('probe.1   ', SCR_FLAG_CHECKPOINT, ierr)
  call check(ierr == SCR_SUCCESS, 'SCR_START_OUTPUT with a blank-padded name')
  write (name, '(a,i0,a)') 'probe.1/data_', rank, '   '
  call scr_route_file(name, path, ierr)
  call check(ierr == SCR_SUCCESS .and. index(path, trim(name)) > 0 .and. &
             path(len_trim(path) - len_trim(name) + 1:) == trim(name), 'SCR_ROUTE_FILE returns the path, blank-padded')
  open (newunit=unit, file=trim(path), form='unformatted', access='stream', status='replace')
  write (unit) rank
  close (unit)
  call scr_route_file(name, short, ierr)
  call check(ierr /= SCR_SUCCESS, 'SCR_ROUTE_FILE into a too short CHARACTER fails')
  call scr_complete_output(1, ierr)
  call check(ierr == SCR_SUCCESS, 'SCR_COMPLETE_OUTPUT')

  call scr_have_restart(have, name, ierr)
  call check(ierr == SCR_SUCCESS .and. have == 0, 'SCR_HAVE_RESTART is 0 after the first checkpoint of a run')
  call scr_config('SCR_FLUSH=1', value, ierr)
  call check(ierr /= SCR_SUCCESS, 'SCR_CONFIG after SCR_INIT fails')
  call scr_finalize(ierr)
  call check(ierr == SCR_SUCCESS, 'SCR_FINALIZE')
  call mpi_finalize(ierr)

contains

  subroutine check(passed, what)
    logical, intent(in) :: passed
    character(len=*), intent(in) :: what
    if (rank /= 0) return
    if (passed) then
      print '(a,a)', 'ok ', what
    else
      print '(a,a)', 'not ok ', what
    end if
  end subroutine check

end program fortran_api_probe
