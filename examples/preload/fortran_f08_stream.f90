! fortran_f08_stream.f90 - an MPI application in modern Fortran (use mpi_f08,
! no ierror arguments) that checkpoints with stream access, one file per rank
! and step: step<step>.rank<rank>.stream (step and rank as I0), a header
! (magic, step, rank, words) then the state. After each checkpoint the ranks
! meet in MPI_Barrier and each deletes its own file two checkpoints back
! (close with status='delete'), so only the two newest remain. On start-up
! rank 0 alone looks for the newest step it has a whole file of, and
! broadcasts it; every rank reads that step, and should any fail, rank 0
! looks below it. It computes exactly what the C programs compute and knows
! nothing about checkpoint libraries.
program fortran_f08_stream
  use, intrinsic :: iso_fortran_env, only: int64, output_unit, error_unit
  use, intrinsic :: iso_c_binding, only: c_int
  use mpi_f08
  implicit none

  include 'app_common_declarations.inc'

  integer(int64), parameter :: magic = int(z'3846305352545346', int64)
  integer :: start, bound, step, t, ok, all_ok

  call MPI_Init()
  call MPI_Comm_rank(MPI_COMM_WORLD, rank)
  if (.not. parse_args()) then
    call MPI_Finalize()
    stop 2
  end if
  nwords = max(1, bytes / 8)
  allocate(state(nwords))

  ! the newest step rank 0 has, if every rank can read it
  start = 0
  bound = steps
  do while (bound > 0)
    if (rank == 0) step = newest_whole(bound)
    call MPI_Bcast(step, 1, MPI_INTEGER, 0, MPI_COMM_WORLD)
    if (step == 0) exit
    ok = merge(1, 0, read_checkpoint(step))
    call MPI_Allreduce(ok, all_ok, 1, MPI_INTEGER, MPI_MIN, MPI_COMM_WORLD)
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
      call MPI_Barrier(MPI_COMM_WORLD)
      call delete_checkpoint(t - 2 * every)
      call announce_checkpoint(t)
    end if
    if (t == die_at) call die(t)
  end do

  call print_result()
  deallocate(state)
  call MPI_Finalize()

contains

  include 'app_common.inc'

  function ckpt_name(s) result(name)
    integer, intent(in) :: s
    character(len=64) :: name
    write(name, '(a,i0,a,i0,a)') 'step', s, '.rank', rank, '.stream'
  end function ckpt_name

  subroutine write_checkpoint(s)
    integer, intent(in) :: s
    integer :: u, ios
    character(len=64) :: name
    name = ckpt_name(s)
    open(newunit=u, file=trim(name), access='stream', form='unformatted', &
         status='replace', action='write', iostat=ios)
    if (ios /= 0) call fail('cannot open', name)
    write(u, iostat=ios) magic, int(s, int64), int(rank, int64), int(nwords, int64), state
    if (ios /= 0) call fail('cannot write', name)
    close(u, iostat=ios)
    if (ios /= 0) call fail('cannot close', name)
  end subroutine write_checkpoint

  ! the header of this rank's file of step s, and whether the file is whole
  logical function header_ok(u, s)
    integer, intent(in) :: u, s
    integer :: ios
    integer(int64) :: hmagic, hstep, hrank, hwords, size
    header_ok = .false.
    inquire(unit=u, size=size)
    if (size /= 8_int64 * (4 + nwords)) return
    read(u, pos=1, iostat=ios) hmagic, hstep, hrank, hwords
    header_ok = ios == 0 .and. hmagic == magic .and. hstep == s .and. hrank == rank .and. hwords == nwords
  end function header_ok

  logical function read_checkpoint(s)
    integer, intent(in) :: s
    integer :: u, ios
    read_checkpoint = .false.
    open(newunit=u, file=trim(ckpt_name(s)), access='stream', form='unformatted', &
         status='old', action='read', iostat=ios)
    if (ios /= 0) return
    if (header_ok(u, s)) then
      read(u, pos=33, iostat=ios) state
      read_checkpoint = ios == 0
    end if
    close(u)
  end function read_checkpoint

  ! rank 0: its newest step at or below the bound with a whole file, 0 for none
  integer function newest_whole(upto)
    integer, intent(in) :: upto
    integer :: s, u, ios
    logical :: whole
    newest_whole = 0
    do s = upto, 1, -1
      open(newunit=u, file=trim(ckpt_name(s)), access='stream', form='unformatted', &
           status='old', action='read', iostat=ios)
      if (ios /= 0) cycle
      whole = header_ok(u, s)
      close(u)
      if (whole) then
        newest_whole = s
        return
      end if
    end do
  end function newest_whole

  ! this rank's file of step s, if there is one
  subroutine delete_checkpoint(s)
    integer, intent(in) :: s
    integer :: u, ios
    if (s < 1) return
    open(newunit=u, file=trim(ckpt_name(s)), access='stream', form='unformatted', &
         status='old', action='read', iostat=ios)
    if (ios == 0) close(u, status='delete')
  end subroutine delete_checkpoint

end program fortran_f08_stream
