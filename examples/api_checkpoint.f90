! api_checkpoint.f90 - the Fortran twin of api_checkpoint.c: checkpoints through
! the SCR API's Fortran binding (INCLUDE 'scrf.h', -lscrf -lscr) and resumes after a crash.
!
! usage: api_checkpoint_f [--steps N] [--values N] [--crash-at STEP]
! Prints "result: <sum>" computed from the final state of every rank, so an
! interrupted run and an uninterrupted one can be compared.
program api_checkpoint_f
  use mpi
  use, intrinsic :: iso_c_binding, only: c_int
  implicit none
  include 'scrf.h'

  interface
    ! a crash that runs no exit handler, as SIGKILL of a node would
    function c_raise(signal) bind(c, name='raise')
      import :: c_int
      integer(c_int), value :: signal
      integer(c_int) :: c_raise
    end function c_raise
  end interface

  integer :: ierr, rank, ranks, step, steps, values, crash_at, have, valid, need, stop_now, i
  character(len=SCR_MAX_FILENAME) :: dataset
  double precision, allocatable :: x(:), tmp(:), sums(:)

  call mpi_init(ierr)
  call mpi_comm_rank(MPI_COMM_WORLD, rank, ierr)
  call mpi_comm_size(MPI_COMM_WORLD, ranks, ierr)
  call parse_arguments()
  allocate(x(values), tmp(values), sums(ranks))

  call scr_init(ierr)
  if (ierr /= SCR_SUCCESS) call fail('SCR_INIT failed')

  ! the newest checkpoint first; if some rank cannot read its part, SCR
  ! offers the next older one
  step = 0
  do
    call scr_have_restart(have, dataset, ierr)
    if (ierr /= SCR_SUCCESS .or. have == 0) exit
    call scr_start_restart(dataset, ierr)
    if (ierr /= SCR_SUCCESS) exit
    valid = read_checkpoint(dataset)
    call scr_complete_restart(valid, ierr)
    if (ierr == SCR_SUCCESS) exit
    step = 0
  end do
  if (step == 0) then
    do i = 1, values
      x(i) = dble(rank + 1) + dble(i - 1) / dble(values)
    end do
    if (rank == 0) print '(a)', 'starting from step 0'
  else if (rank == 0) then
    print '(a,i0,a,a,a)', 'resumed from step ', step, ' (checkpoint ', trim(dataset), ')'
  end if

  do while (step < steps)
    call evolve()
    step = step + 1
    call scr_need_checkpoint(need, ierr)
    if (need == 0) cycle
    call write_checkpoint()
    if (crash_at >= 0 .and. step >= crash_at) then
      call mpi_barrier(MPI_COMM_WORLD, ierr)
      if (rank == 0) print '(a,i0)', 'simulated crash after checkpoint ckpt.', step
      flush(6)
      i = c_raise(9_c_int)
    end if
    call scr_should_exit(stop_now, ierr)
    if (stop_now /= 0) exit
  end do

  ! each rank's sum in a fixed order, gathered and added in rank order: equal
  ! results mean the same final state
  call mpi_gather(sum(x), 1, MPI_DOUBLE_PRECISION, sums, 1, MPI_DOUBLE_PRECISION, 0, MPI_COMM_WORLD, ierr)
  if (rank == 0) then
    if (step >= steps) print '(a,i0,a)', 'completed ', steps, ' steps'
    print '(a,es24.16)', 'result: ', sum(sums)
  end if
  call scr_finalize(ierr)
  call mpi_finalize(ierr)

contains

  subroutine parse_arguments()
    character(len=64) :: arg, value
    integer :: n, status
    steps = 10
    values = 4096
    crash_at = -1
    n = 1
    do while (n <= command_argument_count())
      call get_command_argument(n, arg)
      call get_command_argument(n + 1, value)
      select case (arg)
      case ('--steps')
        read (value, *, iostat=status) steps
      case ('--values')
        read (value, *, iostat=status) values
      case ('--crash-at')
        read (value, *, iostat=status) crash_at
      case default
        status = 1
      end select
      if (status /= 0) call fail('usage: api_checkpoint_f [--steps N] [--values N] [--crash-at STEP]')
      n = n + 2
    end do
  end subroutine parse_arguments

  ! one step of a diffusion on a ring of ranks: the result depends on every rank
  subroutine evolve()
    double precision :: from_left, from_right, left, right
    integer :: k, status(MPI_STATUS_SIZE)
    call mpi_sendrecv(x(values), 1, MPI_DOUBLE_PRECISION, mod(rank + 1, ranks), 0, &
                      from_left, 1, MPI_DOUBLE_PRECISION, mod(rank + ranks - 1, ranks), 0, &
                      MPI_COMM_WORLD, status, ierr)
    call mpi_sendrecv(x(1), 1, MPI_DOUBLE_PRECISION, mod(rank + ranks - 1, ranks), 1, &
                      from_right, 1, MPI_DOUBLE_PRECISION, mod(rank + 1, ranks), 1, &
                      MPI_COMM_WORLD, status, ierr)
    do k = 1, values
      left = from_left
      if (k > 1) left = x(k - 1)
      right = from_right
      if (k < values) right = x(k + 1)
      tmp(k) = 0.5d0 * x(k) + 0.25d0 * (left + right) + dble(mod(step * 31 + k * 7 + rank, 101)) * 1.0d-3
    end do
    x = tmp
  end subroutine evolve

  subroutine write_checkpoint()
    character(len=SCR_MAX_FILENAME) :: name, path
    integer :: unit, status
    write (dataset, '(a,i0)') 'ckpt.', step
    write (name, '(a,i0,a,i0,a)') 'ckpt.', step, '/rank_', rank, '.dat'
    call scr_start_output(dataset, SCR_FLAG_CHECKPOINT, ierr)
    if (ierr /= SCR_SUCCESS) call fail('SCR_START_OUTPUT failed')
    valid = 0
    call scr_route_file(name, path, ierr)
    if (ierr == SCR_SUCCESS) then
      open (newunit=unit, file=trim(path), form='unformatted', access='stream', status='replace', iostat=status)
      if (status == 0) write (unit, iostat=status) step, rank, ranks, values, x
      if (status == 0) close (unit, iostat=status)
      if (status == 0) valid = 1
    end if
    call scr_complete_output(valid, ierr)
    if (rank == 0 .and. ierr == SCR_SUCCESS) print '(a,a,a)', 'checkpoint ', trim(dataset), ' written'
  end subroutine write_checkpoint

  ! 1 when this rank's file of the dataset is complete and from this run's shape
  integer function read_checkpoint(name_of_dataset)
    character(len=*), intent(in) :: name_of_dataset
    character(len=SCR_MAX_FILENAME) :: name, path
    integer :: unit, status, saved_step, saved_rank, saved_ranks, saved_values
    read_checkpoint = 0
    read (name_of_dataset(6:), *, iostat=status) saved_step
    if (name_of_dataset(1:5) /= 'ckpt.' .or. status /= 0) return
    write (name, '(a,i0,a,i0,a)') 'ckpt.', saved_step, '/rank_', rank, '.dat'
    call scr_route_file(name, path, ierr)
    if (ierr /= SCR_SUCCESS) return
    open (newunit=unit, file=trim(path), form='unformatted', access='stream', status='old', &
          action='read', iostat=status)
    if (status /= 0) return
    read (unit, iostat=status) saved_step, saved_rank, saved_ranks, saved_values
    if (status == 0 .and. saved_rank == rank .and. saved_ranks == ranks .and. saved_values == values) then
      read (unit, iostat=status) x
      if (status == 0) then
        step = saved_step
        read_checkpoint = 1
      end if
    end if
    close (unit)
  end function read_checkpoint

  subroutine fail(message)
    character(len=*), intent(in) :: message
    if (rank == 0) write (0, '(a)') message
    call mpi_abort(MPI_COMM_WORLD, 1, ierr)
  end subroutine fail

end program api_checkpoint_f
