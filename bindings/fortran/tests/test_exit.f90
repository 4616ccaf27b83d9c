! A program that ends without closing its handles (`end program` without `close`, as
! Fortran handles have no finalizer) still stores every step it appended: libzarr finishes
! open handles at normal process exit. The test runs itself as a child with the argument
! "write": the child appends 25 steps to a series sharded by 10 steps and ends without
! closing anything; the parent then reads all 25 steps back exactly. Files go to the
! current directory (ctest gives the test its own).
program test_exit
  use zarr
  use testing
  implicit none
  integer, parameter :: nx = 6, nt = 25
  character(1024) :: self
  character(16) :: mode
  integer :: status

  call get_command_argument(1, mode)
  if (mode == "write") then
    call write_without_closing()
  else
    call get_command_argument(0, self)
    call execute_command_line(trim(self) // " write", exitstat=status)
    call check(status == 0, "the writer ended normally")
    call check_steps()
    call second_appender()
    call finish("test_exit")
  end if

contains

  ! The value of element i of step t.
  pure real(8) function value(i, t)
    integer, intent(in) :: i, t
    value = real(1000 * t + i, 8) + 0.5d0
  end function value

  subroutine write_without_closing()
    type(zarr_store) :: store
    type(zarr_array) :: arr
    real(8) :: step(nx)
    integer :: i, t
    call zarr_open_store(store, "series.zarr", ZARR_MODE_W)
    call zarr_create_array(arr, store, "t", ZARR_DTYPE_FLOAT64, [nx, 0], chunks=[nx, 1], &
                           shards=[nx, 10])
    do t = 1, nt
      step = [(value(i, t), i = 1, nx)]
      call zarr_append(arr, step, count=[nx, 1])
    end do
    ! No arr%close(), no store%close().
  end subroutine write_without_closing

  subroutine check_steps()
    type(zarr_store) :: store
    type(zarr_array) :: arr
    integer(8), allocatable :: got_shape(:)
    real(8) :: back(nx, nt)
    integer :: i, t
    call zarr_open_store(store, "series.zarr", ZARR_MODE_R)
    call zarr_open_array(arr, store, "t", ZARR_MODE_R)
    call zarr_inquire(arr, shape=got_shape)
    call check(all(got_shape == [nx, nt]), "all 25 steps stored")
    if (all(got_shape == [nx, nt])) then
      call zarr_read(arr, back)
      call check(all(back == reshape([((value(i, t), i = 1, nx), t = 1, nt)], [nx, nt])), &
                 "every step exact")
    end if
    call arr%close()
    call store%close()
  end subroutine check_steps

  ! A second handle that appends while the first holds the append lock is refused; one
  ! whose writers coordinate turns the lock off.
  subroutine second_appender()
    type(zarr_store) :: store
    type(zarr_array) :: first, second
    integer(8), allocatable :: got_shape(:)
    character(300) :: msg
    integer :: stat
    call zarr_open_store(store, "series.zarr", ZARR_MODE_R_PLUS)
    call zarr_open_array(first, store, "t", ZARR_MODE_R_PLUS)
    call zarr_open_array(second, store, "t", ZARR_MODE_R_PLUS)
    call zarr_resize(first, [nx, nt + 1])
    call zarr_resize(second, [nx, nt + 2], stat=stat, errmsg=msg)
    call check(stat == ZARR_ERR_CONFLICT .and. index(msg, "another handle") > 0, &
               "a second appender is refused (" // trim(msg) // ")")
    call zarr_set_append_lock(second, .false.)
    call zarr_resize(second, [nx, nt + 2], stat=stat)
    call check(stat == ZARR_OK, "a coordinated writer resizes without the lock")
    call zarr_inquire(second, shape=got_shape)
    call check(all(got_shape == [nx, nt + 2]), "its shape")
    call first%close()
    call second%close()
    call store%close()
  end subroutine second_appender
end program test_exit
