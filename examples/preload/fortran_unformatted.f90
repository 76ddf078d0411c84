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

  include 'app_common_declarations.inc'

  integer(int64), parameter :: magic = int(z'31544B4350505841', int64)
  integer :: start, bound, mine, step, t, ok, all_ok

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
  call begin(start)

  do t = start + 1, steps
    call advance(t)
    if (mod(t, every) == 0) then
      call write_checkpoint(t)
      call announce_checkpoint(t)
    end if
    if (t == die_at) call die(t)
  end do

  call print_result()
  deallocate(state)
  call MPI_Finalize(ierr)

contains

  include 'app_common.inc'

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

end program fortran_unformatted
