! fortran_unformatted.f90 - an MPI application in Fortran 2003 that checkpoints
! with unformatted sequential files, one per rank: restart_<rank>_<step>.dat
! with the rank zero-padded to 4 digits and the step to 6 (I0.4, I0.6), e.g.
! restart_0003_000010.dat. Each file holds two records: a header (magic, step,
! rank, words) and the state. On start-up each rank asks inquire(exist=) for
! its names from --steps downwards and takes the newest; the ranks agree on
! the smallest of those (MPI_Allreduce MIN) and, should a rank fail to read
! it, look below it. It computes exactly what the C programs compute (see
! app_common.h) and knows nothing about checkpoint libraries.
program fortran_unformatted
  use, intrinsic :: iso_fortran_env, only: int64, output_unit, error_unit
  use, intrinsic :: iso_c_binding, only: c_int
  use mpi
  implicit none

  interface
    function c_raise(sig) bind(C, name='raise') result(rc)
      import :: c_int
      integer(c_int), value :: sig
      integer(c_int) :: rc
    end function c_raise
  end interface

  integer(int64), parameter :: magic = int(z'31544B4350505841', int64)
  integer(c_int), parameter :: sigkill = 9_c_int

  integer :: ierr, rank, steps, every, bytes, die_at, nwords
  integer :: start, bound, mine, step, t, ok, all_ok
  integer(int64), allocatable :: state(:)

  call MPI_Init(ierr)
  call MPI_Comm_rank(MPI_COMM_WORLD, rank, ierr)
  if (.not. parse_args()) then
    call MPI_Finalize(ierr)
    stop 2
  end if
  nwords = max(1, bytes / 8)
  allocate(state(nwords))

  ! the newest step whose checkpoint every rank can read
  start = 0
  bound = steps
  do while (bound > 0)
    mine = newest_own(bound)
    call MPI_Allreduce(mine, step, 1, MPI_INTEGER, MPI_MIN, MPI_COMM_WORLD, ierr)
    if (step == 0) exit
    ! 1 where the read worked; every MPI_Allreduce here passes default integers
    ok = merge(1, 0, read_checkpoint(step))
    call MPI_Allreduce(ok, all_ok, 1, MPI_INTEGER, MPI_MIN, MPI_COMM_WORLD, ierr)
    if (all_ok == 1) then
      start = step
      exit
    end if
    bound = step - 1
  end do
  if (start == 0) call init_state()
  if (rank == 0) then
    if (start > 0) then
      write(output_unit, '(a,i0)') 'resumed from step ', start
    else
      write(output_unit, '(a)') 'starting from step 0'
    end if
    flush(output_unit)
  end if

  do t = start + 1, steps
    call advance(t)
    if (mod(t, every) == 0) then
      call write_checkpoint(t)
      if (rank == 0) then
        write(output_unit, '(a,i0,a)') 'checkpoint ', t, ' written'
        flush(output_unit)
      end if
    end if
    if (t == die_at) call die(t)
  end do

  call print_result()
  deallocate(state)
  call MPI_Finalize(ierr)

contains

  logical function parse_args()
    integer :: i, n, ios, value
    character(len=64) :: opt, arg
    steps = 20
    every = 5
    bytes = 4096
    die_at = -1
    parse_args = .false.
    n = command_argument_count()
    i = 1
    do while (i <= n)
      call get_command_argument(i, opt)
      if (i + 1 > n) then
        call usage()
        return
      end if
      call get_command_argument(i + 1, arg)
      read(arg, *, iostat=ios) value
      if (ios /= 0 .or. verify(trim(arg), '0123456789') /= 0) then
        call usage()
        return
      end if
      select case (trim(opt))
      case ('--steps')
        steps = value
      case ('--every')
        every = value
      case ('--bytes')
        bytes = value
      case ('--die-at')
        die_at = value
      case default
        call usage()
        return
      end select
      if (value < 1 .and. trim(opt) /= '--steps') then
        call usage()
        return
      end if
      i = i + 2
    end do
    parse_args = .true.
  end function parse_args

  subroutine usage()
    character(len=256) :: prog
    if (rank /= 0) return
    call get_command_argument(0, prog)
    write(error_unit, '(3a)') 'usage: ', trim(prog), ' [--steps N] [--every K] [--bytes B] [--die-at STEP]'
  end subroutine usage

  ! xorshift64: shifts are logical, so nothing overflows
  pure function xs(x) result(y)
    integer(int64), intent(in) :: x
    integer(int64) :: y
    y = ieor(x, ishft(x, 13))
    y = ieor(y, ishft(y, -7))
    y = ieor(y, ishft(y, 17))
  end function xs

  subroutine init_state()
    integer :: i
    do i = 1, nwords
      state(i) = xs(xs(ieor(ishft(int(rank + 1, int64), 32), int(i, int64))))
    end do
  end subroutine init_state

  subroutine advance(tstep)
    integer, intent(in) :: tstep
    integer :: i
    integer(int64) :: prev, cur
    prev = state(nwords)
    do i = 1, nwords
      cur = state(i)
      state(i) = xs(ieor(ieor(cur, int(tstep, int64)), ishft(prev, -1)))
      prev = cur
    end do
  end subroutine advance

  subroutine print_result()
    character(len=16), parameter :: digits = '0123456789abcdef'
    integer(int64) :: h, global
    integer :: i, d
    character(len=16) :: hex
    h = xs(ieor(ishft(int(rank + 1, int64), 40), int(z'1E3779B97F4A7C15', int64)))
    do i = 1, nwords
      h = xs(ieor(h, state(i)))
    end do
    global = 0
    call MPI_Reduce(h, global, 1, MPI_INTEGER8, MPI_BXOR, 0, MPI_COMM_WORLD, ierr)
    if (rank == 0) then
      do i = 1, 16
        d = int(iand(ishft(global, -4 * (16 - i)), 15_int64)) + 1
        hex(i:i) = digits(d:d)
      end do
      write(output_unit, '(2a)') 'result: ', hex
      flush(output_unit)
    end if
  end subroutine print_result

  function ckpt_name(s) result(name)
    integer, intent(in) :: s
    character(len=64) :: name
    write(name, '(a,i0.4,a,i0.6,a)') 'restart_', rank, '_', s, '.dat'
  end function ckpt_name

  subroutine write_checkpoint(s)
    integer, intent(in) :: s
    integer :: u, ios
    character(len=64) :: name
    name = ckpt_name(s)
    open(newunit=u, file=trim(name), form='unformatted', access='sequential', &
         status='replace', action='write', iostat=ios)
    if (ios /= 0) call fail('cannot open', name)
    write(u, iostat=ios) magic, int(s, int64), int(rank, int64), int(nwords, int64)
    if (ios /= 0) call fail('cannot write', name)
    write(u, iostat=ios) state
    if (ios /= 0) call fail('cannot write', name)
    close(u, iostat=ios)
    if (ios /= 0) call fail('cannot close', name)
  end subroutine write_checkpoint

  logical function read_checkpoint(s)
    integer, intent(in) :: s
    integer :: u, ios
    integer(int64) :: hmagic, hstep, hrank, hwords
    integer(int64), allocatable :: buf(:)
    read_checkpoint = .false.
    open(newunit=u, file=trim(ckpt_name(s)), form='unformatted', access='sequential', &
         status='old', action='read', iostat=ios)
    if (ios /= 0) return
    read(u, iostat=ios) hmagic, hstep, hrank, hwords
    if (ios == 0 .and. hmagic == magic .and. hstep == s .and. hrank == rank .and. hwords == nwords) then
      allocate(buf(nwords))
      read(u, iostat=ios) buf
      if (ios == 0) then
        state = buf
        read_checkpoint = .true.
      end if
    end if
    close(u)
  end function read_checkpoint

  ! this rank's newest checkpoint at or below the bound, 0 for none
  integer function newest_own(upto)
    integer, intent(in) :: upto
    integer :: s
    logical :: there
    newest_own = 0
    do s = upto, 1, -1
      inquire(file=trim(ckpt_name(s)), exist=there)
      if (there) then
        newest_own = s
        return
      end if
    end do
  end function newest_own

  ! the simulated node crash: every rank is past the step, then all die at once
  subroutine die(s)
    integer, intent(in) :: s
    integer(c_int) :: rc
    if (rank == 0) write(output_unit, '(a,i0)') 'dying at step ', s
    flush(output_unit)
    call MPI_Barrier(MPI_COMM_WORLD, ierr)
    rc = c_raise(sigkill)
  end subroutine die

  subroutine fail(what, name)
    character(len=*), intent(in) :: what, name
    write(error_unit, '(4a)') 'error: ', what, ' ', trim(name)
    flush(error_unit)
    call MPI_Abort(MPI_COMM_WORLD, 1, ierr)
  end subroutine fail

end program fortran_unformatted
