! The netCDF-like conveniences of a model's output loop: missing_value= of any real kind
! (a float32 array takes the nearest float32, as netCDF does for a double _FillValue),
! dims= at creation (Fortran order, stored reversed), real(8) fields appended to a float32
! series (blocking and not; a value out of range appends nothing), and close(stat=,
! errmsg=) reporting what fails to store, idempotently. The test runs itself as a child
! (argument "nodims") to see the notice an array without dimension names gets. Files go
! to the current directory (ctest gives the test its own).
program test_netcdf_like
  use zarr
  use testing
  implicit none
  character(1024) :: self
  character(16) :: mode

  call get_command_argument(1, mode)
  if (mode == "nodims") then
    call create_without_dims()
  else
    call get_command_argument(0, self)
    call missing_values()
    call dimension_names()
    call notice_without_dims()
    call converting_appends()
    call closing()
    call finish("test_netcdf_like")
  end if

contains

  ! CMIP's 1.0e20 (a default real) and 1d20 for float32 arrays in both formats: the float32
  ! 1.0e20 is stored (unwritten cells read as it, bit for bit) and given back; values a
  ! type cannot hold are refused and create nothing.
  subroutine missing_values()
    type(zarr_store) :: store
    type(zarr_array) :: arr
    character(200) :: msg
    character(:), allocatable :: json
    real(4) :: cells(2, 3), m4
    real(8) :: m8
    logical :: is_set
    integer :: stat, fmt, k
    call zarr_open_store(store, "missing.zarr", ZARR_MODE_W)
    do fmt = 2, 3
      do k = 1, 2
        if (k == 1) then
          call zarr_create_array(arr, store, "t", ZARR_DTYPE_FLOAT32, [2, 3], zarr_format=fmt, &
                                 missing_value=1.0e20, dims=["x", "y"])
        else
          call zarr_create_array(arr, store, "t", ZARR_DTYPE_FLOAT32, [2, 3], zarr_format=fmt, &
                                 missing_value=1d20, dims=["x", "y"])
        end if
        cells = 0
        call zarr_read(arr, cells)
        call check(all(transfer(cells, 0, 6) == transfer(1.0e20, 0)), "the float32 1.0e20 stored")
        call zarr_get_missing_value(arr, m8, is_set)
        call check(is_set .and. m8 == real(1.0e20, 8), "the float32 1.0e20 given back as real(8)")
        call check(m8 /= 1d20, "not the double 1d20")
        call zarr_get_missing_value(arr, m4, is_set)
        call check(is_set .and. m4 == 1.0e20, "given back as real(4)")
        call zarr_get_attr(arr, "_FillValue", json)
        if (fmt == 3) then
          call check(json == '"AAAAgB2vFUQ="', "xarray's _FillValue: the float32's double bytes")
        else
          call check(json == "1.0000000200408773e+20", "NCZarr's _FillValue: " // json)
        end if
        call arr%close()
      end do
    end do
    ! Other kinds: an integer for an int16 array, a real(4) for a float64 one.
    call zarr_create_array(arr, store, "i", ZARR_DTYPE_INT16, [2], missing_value=-32767, &
                           dims=["x"])
    call zarr_get_missing_value(arr, m8, is_set)
    call check(is_set .and. m8 == -32767d0, "integer missing value")
    call zarr_set_missing_value(arr, 2.5, stat=stat, errmsg=msg)
    call check(stat == ZARR_ERR_INVALID_ARG .and. index(msg, "2.5") > 0, "2.5 is no int16")
    call arr%close()
    call zarr_create_array(arr, store, "d", ZARR_DTYPE_FLOAT64, [2], missing_value=0.1, &
                           dims=["x"])
    call zarr_get_missing_value(arr, m8, is_set)
    call check(m8 == real(0.1, 8), "a real(4) for a float64 array: its exact value")
    call arr%close()
    ! Refused, naming what is wrong, creating nothing.
    msg = ""
    call zarr_create_array(arr, store, "bad", ZARR_DTYPE_FLOAT32, [2], missing_value=1d39, &
                           dims=["x"], stat=stat, errmsg=msg)
    call check(stat == ZARR_ERR_INVALID_ARG .and. index(msg, "beyond the range of float32") > 0, &
               "1d39 is beyond float32: " // trim(msg))
    call zarr_create_array(arr, store, "bad", ZARR_DTYPE_INT16, [2], missing_value=0.5d0, &
                           dims=["x"], stat=stat)
    call check(stat == ZARR_ERR_INVALID_ARG, "0.5 is no int16")
    msg = ""
    call zarr_create_array(arr, store, "bad", ZARR_DTYPE_FLOAT32, [2], missing_value="1e20", &
                           dims=["x"], stat=stat, errmsg=msg)
    call check(stat == ZARR_ERR_INVALID_ARG .and. index(msg, "missing_value must be") > 0, &
               "a string missing value: " // trim(msg))
    call zarr_open_array(arr, store, "bad", stat=stat)
    call check(stat == ZARR_ERR_NOT_FOUND, "nothing created")
    call store%close()
  end subroutine missing_values

  ! dims= in Fortran order, stored in C order, in both formats; wrong counts and blank
  ! names are refused before anything is created.
  subroutine dimension_names()
    type(zarr_store) :: store
    type(zarr_array) :: arr
    character(200) :: msg
    character(:), allocatable :: json, names(:)
    integer :: stat, fmt
    allocate(character(0) :: names(0))
    call zarr_open_store(store, "dims.zarr", ZARR_MODE_W)
    do fmt = 2, 3
      call zarr_create_array(arr, store, "t", ZARR_DTYPE_FLOAT32, [4, 3, 0], zarr_format=fmt, &
                             dims=["lon ", "lat ", "time"])
      call zarr_get_dimension_names(arr, names)
      call check(size(names) == 3, "three names")
      if (size(names) == 3) &
        call check(names(1) == "lon" .and. names(2) == "lat" .and. names(3) == "time", &
                   "names in Fortran order")
      if (fmt == 2) then
        call zarr_get_attr(arr, "_ARRAY_DIMENSIONS", json)
        call check(json == '["time","lat","lon"]', "v2: xarray's attribute in C order: " // json)
      end if
      call arr%close()
    end do
    msg = ""
    call zarr_create_array(arr, store, "bad", ZARR_DTYPE_FLOAT32, [4, 3], dims=["lon"], &
                           stat=stat, errmsg=msg)
    call check(stat == ZARR_ERR_RANK_MISMATCH .and. &
               index(msg, "1 dimension names for an array of rank 2") > 0, &
               "one name for two: " // trim(msg))
    msg = ""
    call zarr_create_array(arr, store, "bad", ZARR_DTYPE_FLOAT32, [4, 3], dims=["lon", "   "], &
                           stat=stat, errmsg=msg)
    call check(stat == ZARR_ERR_INVALID_ARG .and. index(msg, "dimension name 2 is blank") > 0, &
               "a blank name: " // trim(msg))
    call zarr_open_array(arr, store, "bad", stat=stat)
    call check(stat == ZARR_ERR_NOT_FOUND, "nothing created")
    call store%close()
  end subroutine dimension_names

  ! The child: an array with a missing value but no dimension names.
  subroutine create_without_dims()
    type(zarr_store) :: store
    type(zarr_array) :: arr
    call zarr_memory_store(store)
    call zarr_create_array(arr, store, "tas", ZARR_DTYPE_FLOAT32, [4, 3], missing_value=1.0e20)
    call arr%close()
    call zarr_create_array(arr, store, "ok", ZARR_DTYPE_FLOAT32, [4, 3], missing_value=1.0e20, &
                           dims=["lon", "lat"])
    call arr%close()
    call store%close()
  end subroutine create_without_dims

  ! The notice names the array, once (the array with dims gets none); ZARR_QUIET silences it.
  subroutine notice_without_dims()
    integer :: status, unit, n, ios
    character(400) :: line
    call execute_command_line(trim(self) // " nodims 2> notice.txt", exitstat=status)
    call check(status == 0, "the child ran")
    open(newunit=unit, file="notice.txt", action="read")
    n = 0
    do
      read(unit, "(a)", iostat=ios) line
      if (ios /= 0) exit
      n = n + 1
      call check(line == "libzarr: array tas has a missing value but no dimension names " // &
                 "(give dims= or call zarr_set_dimension_names): xarray opens no dataset " // &
                 "holding it", "the notice: " // trim(line))
    end do
    close(unit)
    call check(n == 1, "one notice")
    call execute_command_line("ZARR_QUIET=1 " // trim(self) // " nodims 2> quiet.txt", &
                              exitstat=status)
    open(newunit=unit, file="quiet.txt", action="read")
    read(unit, "(a)", iostat=ios) line
    close(unit)
    call check(status == 0 .and. ios /= 0, "ZARR_QUIET silences it")
  end subroutine notice_without_dims

  ! real(8) fields appended to float32 series (v2 unsharded, v3 sharded: buffered), blocking
  ! and not: stored as the nearest float32s; a value out of float32's range appends nothing.
  subroutine converting_appends()
    type(zarr_store) :: store
    type(zarr_array) :: arr
    type(zarr_request) :: req
    real(8) :: field(2, 3)
    real(4) :: series(2, 3, 3)
    integer(8), allocatable :: shp(:)
    character(200) :: msg
    integer :: stat, fmt, t, i
    call zarr_open_store(store, "series.zarr", ZARR_MODE_W)
    do fmt = 2, 3
      if (fmt == 2) then
        call zarr_create_array(arr, store, "tas", ZARR_DTYPE_FLOAT32, [2, 3, 0], &
                               chunks=[2, 3, 1], zarr_format=2, dims=["x", "y", "t"])
      else
        call zarr_create_array(arr, store, "tas", ZARR_DTYPE_FLOAT32, [2, 3, 0], &
                               chunks=[2, 3, 1], shards=[2, 3, 4], zarr_format=3, &
                               dims=["x", "y", "t"])
      end if
      do t = 1, 3
        field = reshape([(0.1d0 * (10 * t + i), i = 1, 6)], [2, 3])
        if (t < 3) then
          call zarr_append(arr, field, count=[2, 3, 1])
        else
          call zarr_iappend(arr, field, req, count=[2, 3, 1])
          call zarr_wait(req)
          call zarr_request_free(req)
        end if
      end do
      field(2, 2) = 1d39
      msg = ""
      call zarr_append(arr, field, count=[2, 3, 1], stat=stat, errmsg=msg)
      call check(stat == ZARR_ERR_RANGE .and. index(msg, "float32") > 0, &
                 "out of float32's range: " // trim(msg))
      call zarr_iappend(arr, field, req, count=[2, 3, 1])
      call zarr_wait(req, stat=stat)
      call check(stat == ZARR_ERR_RANGE, "out of range at the wait")
      call zarr_request_free(req)
      call zarr_inquire(arr, shape=shp)
      call check(all(shp == [2, 3, 3]), "nothing appended when out of range")
      call zarr_read(arr, series)
      do t = 1, 3
        call check(all(series(:, :, t) == &
                       real(reshape([(0.1d0 * (10 * t + i), i = 1, 6)], [2, 3]), 4)), &
                   "step stored as the nearest float32s")
      end do
      call arr%close(stat=stat)
      call check(stat == ZARR_OK, "close")
    end do
    call store%close()
  end subroutine converting_appends

  ! close(stat=, errmsg=): an array's buffered appends that cannot be stored (the array's
  ! directory replaced by a file), a zip whose directory is gone; closing again is a no-op.
  subroutine closing()
    type(zarr_store) :: store
    type(zarr_array) :: arr
    character(200) :: msg
    real(4) :: field(2, 3)
    integer :: stat
    field = 1.5
    call zarr_open_store(store, "close.zarr", ZARR_MODE_W)
    call zarr_create_array(arr, store, "tas", ZARR_DTYPE_FLOAT32, [2, 3, 0], chunks=[2, 3, 1], &
                           shards=[2, 3, 4], zarr_format=3, dims=["x", "y", "t"])
    call zarr_append(arr, field, count=[2, 3, 1])
    call execute_command_line("rm -rf close.zarr/tas && touch close.zarr/tas", exitstat=stat)
    call check(stat == 0, "the array's directory replaced")
    msg = ""
    call arr%close(stat=stat, errmsg=msg)
    call check(stat == ZARR_ERR_STORAGE_IO .and. len_trim(msg) > 0, &
               "a buffered append that cannot be stored: " // trim(msg))
    call arr%close(stat=stat)
    call check(stat == ZARR_OK, "closing again does nothing")
    call store%close(stat=stat)
    call check(stat == ZARR_OK, "the store closes")

    call execute_command_line("mkdir -p zipdir", exitstat=stat)
    call zarr_open_zip(store, "zipdir/out.zip", ZARR_MODE_W)
    call zarr_create_array(arr, store, "tas", ZARR_DTYPE_FLOAT32, [2, 3], dims=["x", "y"])
    call zarr_write(arr, field)
    call arr%close()
    call execute_command_line("rm -rf zipdir", exitstat=stat)
    msg = ""
    call store%close(stat=stat, errmsg=msg)
    call check(stat == ZARR_ERR_STORAGE_IO .and. index(msg, "out.zip") > 0, &
               "a zip that cannot be written: " // trim(msg))
    call store%close(stat=stat)
    call check(stat == ZARR_OK, "closing again does nothing")
  end subroutine closing
end program test_netcdf_like
