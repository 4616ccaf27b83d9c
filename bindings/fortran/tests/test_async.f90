! Non-blocking writes and appends (zarr_iwrite, zarr_iappend) and their requests: many in
! flight at once, waited for in any order (zarr_wait, zarr_test, zarr_wait_all), a failing
! write's error given at the wait, refusals at submission in Fortran order, appends in
! submission order, lending (copy=.false.) and the default copy (an expression's temporary
! gone before the wait), logical data, ranks 1 and 7. Every value read back exactly.
! Files go to the current directory (ctest gives the test its own).
program test_async
  use zarr
  use testing
  implicit none
  type(zarr_store) :: store
  character(200) :: msg
  integer :: stat

  call zarr_open_store(store, "async.zarr", ZARR_MODE_W)
  call many_in_flight()
  call wait_all_and_test()
  call failures()
  call ordered_appends()
  call other_kinds()
  call store%close()
  call finish("test_async")

contains

  ! Ten slabs in flight at once (lent, copy=.false.), waited for in reverse order, then
  ! read back.
  subroutine many_in_flight()
    integer, parameter :: nx = 40, ny = 24, nt = 10
    real(4), allocatable, target, asynchronous :: slabs(:, :, :)
    real(4) :: back(nx, ny, nt)
    type(zarr_request) :: reqs(nt)
    type(zarr_array) :: arr
    integer :: i, j, t
    allocate(slabs(nx, ny, nt))
    do t = 1, nt
      do j = 1, ny
        do i = 1, nx
          slabs(i, j, t) = real(t * 100000 + j * 100 + i, 4) + 0.25
        end do
      end do
    end do
    call zarr_create_array(arr, store, "slabs", ZARR_DTYPE_FLOAT32, [nx, ny, nt], &
                           chunks=[16, 8, 1])
    do t = 1, nt
      call zarr_iwrite(arr, slabs(:, :, t), reqs(t), start=[1, 1, t], count=[nx, ny, 1], &
                       copy=.false., stat=stat)
      call check(stat == ZARR_OK, "slab submitted")
    end do
    do t = nt, 1, -1
      call zarr_wait(reqs(t), stat=stat)
      call check(stat == ZARR_OK, "slab written (waited in reverse order)")
      call zarr_wait(reqs(t), stat=stat)
      call check(stat == ZARR_OK, "a second wait gives the same")
      call zarr_request_free(reqs(t))
    end do
    call zarr_read(arr, back)
    call check(all(back == slabs), "ten slabs read back exactly")

    ! A request variable still holding a request is refused; a freed one takes a new one.
    call zarr_iwrite(arr, slabs(:, :, 1), reqs(1), start=[1, 1, 1], count=[nx, ny, 1])
    call zarr_iwrite(arr, slabs(:, :, 2), reqs(1), start=[1, 1, 2], count=[nx, ny, 1], &
                     stat=stat, errmsg=msg)
    call check(stat == ZARR_ERR_INVALID_ARG .and. index(msg, "zarr_request_free") > 0, &
               "a request variable in use is refused (" // trim(msg) // ")")
    call zarr_wait(reqs(1))
    call zarr_request_free(reqs(1))
    call zarr_request_free(reqs(1))  ! freeing an empty request does nothing
    call zarr_wait(reqs(1), stat=stat)
    call check(stat == ZARR_OK, "waiting for an empty request returns at once")
    call arr%close()
  end subroutine many_in_flight

  ! Blocks of an integer array written together: zarr_wait_all, then zarr_test polling.
  subroutine wait_all_and_test()
    integer, allocatable, target :: blocks(:, :, :)
    integer :: back(30, 20)
    type(zarr_request) :: reqs(6), one
    type(zarr_array) :: arr
    logical :: done
    integer :: b, i, j, polls
    allocate(blocks(10, 10, 6))
    do b = 1, 6
      do j = 1, 10
        do i = 1, 10
          blocks(i, j, b) = b * 1000 + j * 10 + i
        end do
      end do
    end do
    call zarr_create_array(arr, store, "blocks", ZARR_DTYPE_INT32, [30, 20], chunks=[10, 10])
    do b = 1, 6
      call zarr_iwrite(arr, blocks(:, :, b), reqs(b), &
                       start=[1 + 10 * mod(b - 1, 3), 1 + 10 * ((b - 1) / 3)])
    end do
    call zarr_wait_all(reqs, stat=stat)
    call check(stat == ZARR_OK, "six blocks written (zarr_wait_all)")
    call zarr_read(arr, back)
    do b = 1, 6
      call check(all(back(1 + 10 * mod(b - 1, 3):10 + 10 * mod(b - 1, 3), &
                          1 + 10 * ((b - 1) / 3):10 + 10 * ((b - 1) / 3)) == blocks(:, :, b)), &
                 "block read back exactly")
      call zarr_request_free(reqs(b))
    end do

    ! zarr_test until done; the values are then there.
    blocks(:, :, 1) = -blocks(:, :, 1)
    call zarr_iwrite(arr, blocks(:, :, 1), one, start=[21, 11])
    polls = 0
    done = .false.
    do while (.not. done)
      call zarr_test(one, done, stat=stat)
      polls = polls + 1
    end do
    call check(stat == ZARR_OK .and. polls >= 1, "zarr_test says done")
    call zarr_request_free(one)
    call zarr_read(arr, back)
    call check(all(back(21:30, 11:20) == blocks(:, :, 1)), "the tested write read back")
    call arr%close()
  end subroutine wait_all_and_test

  ! Refusals at submission (Fortran order, 1-based), a failure found at the wait, and the
  ! requests after a failure still running.
  subroutine failures()
    real(4), target :: field(8, 6), strided(16, 6), back(8, 6)
    real(8), target :: wide(8, 6)
    type(zarr_request) :: req, bad, after, reqs(3)
    type(zarr_array) :: arr
    field = 1.5
    wide = 2.5d0
    call zarr_create_array(arr, store, "failures", ZARR_DTYPE_FLOAT32, [8, 6, 4], &
                           chunks=[4, 3, 1])
    call zarr_iwrite(arr, field, req, start=[1, 1, 5], count=[8, 6, 1], stat=stat, errmsg=msg)
    call check(stat == ZARR_ERR_OUT_OF_BOUNDS, "start past the end: status")
    call check(msg == "dimension 3: start 5 + count 1 - 1 is beyond the extent 4", &
               "start past the end: Fortran order, 1-based (" // trim(msg) // ")")
    call zarr_wait(req, stat=stat)
    call check(stat == ZARR_OK, "a refused submission leaves no request")

    ! A section with strides is refused: libzarr reads the data after the call returns.
    strided = 3.5
    call zarr_iwrite(arr, strided(1:16:2, :), req, start=[1, 1, 1], count=[8, 6, 1], &
                     stat=stat, errmsg=msg)
    call check(stat == ZARR_ERR_INVALID_ARG .and. index(msg, "not contiguous") > 0, &
               "a strided section is refused (" // trim(msg) // ")")
    call zarr_iwrite(arr, strided(1:16:2, :), req, start=[1, 1, 1], count=[8, 6, 1], &
                     copy=.true., stat=stat)
    call check(stat == ZARR_ERR_INVALID_ARG, "copy= does not take a strided section either")

    ! real(8) data for a float32 array is converted, as by zarr_write.
    call zarr_iwrite(arr, wide, req, start=[1, 1, 1], count=[8, 6, 1], stat=stat)
    call zarr_wait(req, stat=stat)
    call check(stat == ZARR_OK, "real(8) data written into a float32 array")
    call zarr_request_free(req)
    call zarr_read(arr, back, start=[1, 1, 1], count=[8, 6, 1])
    call check(all(back == 2.5), "converted values read back")

    ! A value beyond float32: the submission succeeds, the wait reports the error, the
    ! write stores nothing, and the next request still runs.
    wide(3, 4) = 1d300
    call zarr_iwrite(arr, wide, bad, start=[1, 1, 2], count=[8, 6, 1], stat=stat)
    call check(stat == ZARR_OK, "a write that cannot be converted is submitted")
    call zarr_iwrite(arr, field, after, start=[1, 1, 3], count=[8, 6, 1], stat=stat)
    call zarr_wait(bad, stat=stat, errmsg=msg)
    call check(stat == ZARR_ERR_RANGE, "the failure is given at the wait (" // &
               trim(msg) // ")")
    call zarr_wait(after, stat=stat)
    call check(stat == ZARR_OK, "the request after a failure runs")
    call zarr_read(arr, back, start=[1, 1, 3], count=[8, 6, 1])
    call check(all(back == 1.5), "its values read back")
    call zarr_read(arr, back, start=[1, 1, 2], count=[8, 6, 1])
    call check(all(back == 0.0), "the failed write stored nothing")

    ! zarr_wait_all reports the first failure in the order given, after waiting for all.
    call zarr_request_free(after)
    call zarr_iwrite(arr, field, reqs(1), start=[1, 1, 1], count=[8, 6, 1])
    call zarr_iwrite(arr, field, reqs(3), start=[1, 1, 4], count=[8, 6, 1])
    reqs(2) = bad
    call zarr_wait_all(reqs, stat=stat, errmsg=msg)
    call check(stat == ZARR_ERR_RANGE, "zarr_wait_all gives the failure")
    call zarr_read(arr, back, start=[1, 1, 4], count=[8, 6, 1])
    call check(all(back == 1.5), "the requests around the failure ran")
    call zarr_request_free(reqs(1))
    call zarr_request_free(reqs(3))
    call zarr_request_free(bad)
    call arr%close()
  end subroutine failures

  ! Steps appended without waiting, from buffers lent (copy=.false.) and changed only after
  ! their wait, onto a sharded series: every step lands in submission order.
  subroutine ordered_appends()
    integer, parameter :: nx = 12, ny = 5, steps = 23
    integer(2), target :: buffers(nx, ny, 2)
    integer(2) :: back(nx, ny, steps)
    type(zarr_request) :: reqs(2)
    type(zarr_array) :: arr
    integer(8), allocatable :: got(:)
    integer :: t, slot, i, j
    call zarr_create_array(arr, store, "series", ZARR_DTYPE_INT16, [nx, ny, 0], &
                           chunks=[nx, ny, 1], shards=[nx, ny, 4])
    do t = 1, steps
      slot = 1 + mod(t, 2)
      call zarr_wait(reqs(slot))        ! the buffer's previous step is stored
      call zarr_request_free(reqs(slot))
      do j = 1, ny
        do i = 1, nx
          buffers(i, j, slot) = int(t * 1000 + j * 20 + i, 2)
        end do
      end do
      call zarr_iappend(arr, buffers(:, :, slot), reqs(slot), count=[nx, ny, 1], &
                        copy=.false., stat=stat)
      call check(stat == ZARR_OK, "step submitted")
    end do
    call zarr_wait_all(reqs)
    call zarr_request_free(reqs(1))
    call zarr_request_free(reqs(2))
    call zarr_flush(arr)
    call zarr_inquire(arr, shape=got)
    call check(all(got == [nx, ny, steps]), "23 steps appended")
    call zarr_read(arr, back)
    do t = 1, steps
      do j = 1, ny
        do i = 1, nx
          if (back(i, j, t) /= int(t * 1000 + j * 20 + i, 2)) then
            call check(.false., "step read back in submission order")
            return
          end if
        end do
      end do
    end do
    call check(.true., "every step read back in submission order")

    ! An append step whose other extents are not the array's is refused in Fortran terms.
    call zarr_iappend(arr, buffers(:, 1:4, 1), reqs(1), count=[nx, 4, 1], stat=stat, &
                      errmsg=msg)
    call check(stat == ZARR_ERR_INVALID_ARG .and. &
               msg == "dimension 2: the step's extent 4 is not the array's 5 (only dim 3 grows)", &
               "a step of the wrong extent is refused (" // trim(msg) // ")")
    call arr%close()
  end subroutine ordered_appends

  ! copy=.true. and the default copy (the buffer reused at once; an expression whose
  ! temporary is gone before the wait), logical data, rank 1 and rank 7.
  subroutine other_kinds()
    integer(8), target :: line(50), line_back(50)
    real(8) :: halves_back(50)
    complex(8), target, allocatable :: seven(:, :, :, :, :, :, :)
    complex(8), allocatable :: seven_back(:, :, :, :, :, :, :)
    logical :: flags(7, 3), flags_back(7, 3)
    type(zarr_request) :: req
    type(zarr_array) :: arr
    integer :: i

    line = [(int(i, 8) * 10000000000_8, i = 1, 50)]
    call zarr_create_array(arr, store, "line", ZARR_DTYPE_INT64, [50], chunks=[7])
    call zarr_iwrite(arr, line, req, copy=.true.)
    line = -1  ! libzarr took a copy
    call zarr_wait(req)
    call zarr_request_free(req)
    call zarr_read(arr, line_back)
    call check(all(line_back == [(int(i, 8) * 10000000000_8, i = 1, 50)]), &
               "copy=: the values at submission are stored")
    call arr%close()

    ! An expression without copy=: its temporary is freed when the call returns and the
    ! memory reused before the wait; the default copy stores the values given.
    line = [(int(i, 8), i = 1, 50)]
    call zarr_create_array(arr, store, "halves", ZARR_DTYPE_FLOAT64, [50], chunks=[7])
    call zarr_iwrite(arr, real(line, 8) * 0.5_8 + 1, req)
    call scribble()
    line = -1
    call zarr_wait(req)
    call zarr_request_free(req)
    call zarr_read(arr, halves_back)
    call check(all(halves_back == [(real(i, 8) * 0.5_8 + 1, i = 1, 50)]), &
               "an expression's values are stored (copied by default)")
    call arr%close()

    ! The default copy for a variable too: changed at once after the submission.
    line = [(int(i, 8) * 3, i = 1, 50)]
    call zarr_open_array(arr, store, "line", ZARR_MODE_R_PLUS)
    call zarr_iwrite(arr, line, req)
    line = -1
    call zarr_wait(req)
    call zarr_request_free(req)
    call zarr_read(arr, line_back)
    call check(all(line_back == [(int(i, 8) * 3, i = 1, 50)]), &
               "without copy=: the values at submission are stored")
    call arr%close()

    flags = reshape([(mod(i, 3) == 0, i = 1, 21)], [7, 3])
    call zarr_create_array(arr, store, "flags", ZARR_DTYPE_BOOL, [7, 3])
    call zarr_iwrite(arr, flags, req)
    flags_back = .not. flags
    call zarr_wait(req)
    call zarr_request_free(req)
    call zarr_read(arr, flags_back)
    call check(all(flags_back .eqv. flags), "logical data read back")
    call arr%close()

    allocate(seven(2, 3, 2, 2, 1, 2, 3), seven_back(2, 3, 2, 2, 1, 2, 3))
    seven = reshape([(cmplx(i, -i, 8), i = 1, size(seven))], shape(seven))
    call zarr_create_array(arr, store, "seven", ZARR_DTYPE_COMPLEX128, shape(seven), &
                           chunks=[2, 2, 2, 1, 1, 2, 2])
    call zarr_iwrite(arr, seven, req)
    call zarr_wait(req)
    call zarr_request_free(req)
    call zarr_read(arr, seven_back)
    call check(all(seven_back == seven), "rank 7 read back")
    call arr%close()
  end subroutine other_kinds

  ! Fills freshly allocated memory of the size of a freed temporary with other values, so a
  ! lent temporary would be read back wrong.
  subroutine scribble()
    real(8), allocatable :: junk(:, :)
    integer :: k
    do k = 1, 8
      allocate(junk(50, k))
      junk = -7
      call check(all(junk == -7), "scribbled")
      deallocate(junk)
    end do
  end subroutine scribble

end program test_async
