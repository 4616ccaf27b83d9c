! Error paths through stat and errmsg: libzarr's own failures (status and message), the
! binding's argument checks, errmsg truncation, success leaving errmsg alone, closed handles.
program test_errors
  use, intrinsic :: iso_c_binding, only: c_int8_t, c_float_complex
  use zarr
  use testing
  implicit none
  type(zarr_store) :: store
  type(zarr_array) :: arr, ro, bytes
  type(zarr_group) :: group
  character(200) :: msg
  character(10) :: short
  character(:), allocatable :: json
  integer :: stat
  real(8) :: r8(4, 3)
  integer :: i4(4, 3), i4small(2)
  integer(c_int8_t) :: u8(3)

  call zarr_memory_store(store)
  call zarr_create_array(arr, store, "grid", ZARR_DTYPE_INT32, [4, 3], chunks=[2, 2])
  i4 = 7
  call zarr_write(arr, i4)

  ! Success sets stat to ZARR_OK and leaves errmsg alone.
  msg = "untouched"
  call zarr_read(arr, i4, stat=stat, errmsg=msg)
  call check(stat == ZARR_OK .and. msg == "untouched", "success keeps errmsg")

  ! libzarr's errors: the status and the message naming what is at fault.
  call zarr_open_array(ro, store, "missing/array", stat=stat, errmsg=msg)
  call check(stat == ZARR_ERR_NOT_FOUND, "missing array: status")
  call check(index(msg, "missing/array") > 0, "missing array: message names the path")
  call check(msg == zarr_last_error(), "errmsg is zarr_last_error")
  call check(zarr_status_name(stat) == "ZARR_ERR_NOT_FOUND", "status name")

  r8 = -2.75d0
  call zarr_write(arr, r8, stat=stat, errmsg=msg)
  call check(stat == ZARR_OK, "real(8) into an int32 array: converted")
  call zarr_read(arr, i4)
  call check(all(i4 == -2), "real(8) into an int32 array: truncated")
  r8(2, 2) = 3d9
  call zarr_write(arr, r8, stat=stat, errmsg=msg)
  call check(stat == ZARR_ERR_RANGE .and. index(msg, "do not fit in int32") > 0, &
             "real(8) out of int32's range")
  call zarr_write(arr, reshape([(1, 0)], [1, 1]) * (1.0_4, 0.0_4), stat=stat, errmsg=msg)
  call check(stat == ZARR_ERR_DTYPE_MISMATCH, "complex(4) into an int32 array")

  ! Stores by URL: an unknown scheme and an unknown option are refused with a message.
  block
    type(zarr_store) :: by_url
    call zarr_open_url(by_url, "ftp://host/x", ZARR_MODE_R, stat=stat, errmsg=msg)
    call check(stat == ZARR_ERR_INVALID_ARG, "unknown URL scheme: status")
    call check(index(msg, "unknown URL scheme") > 0, "unknown URL scheme: message")
    call zarr_open_url(by_url, "memory://", ZARR_MODE_A, options='{"region": "x"}', &
                       stat=stat, errmsg=msg)
    call check(stat == ZARR_ERR_INVALID_ARG, "option of another store kind")
    call zarr_open_url(by_url, "memory://", ZARR_MODE_A, stat=stat)
    call check(stat == ZARR_OK, "memory:// by URL")
    call by_url%close()
  end block

  call zarr_read(arr, i4small, start=[4, 3], count=[1, 2], stat=stat, errmsg=msg)
  call check(stat == ZARR_ERR_OUT_OF_BOUNDS, "block past the end: status")

  call zarr_read(arr, i4small, stat=stat, errmsg=msg)
  call check(stat == ZARR_ERR_RANK_MISMATCH, "1-D data for a 2-D array")

  call zarr_read(arr, i4small, start=[1, 1], count=[2, 2], stat=stat, errmsg=msg)
  call check(stat == ZARR_ERR_BUFFER_SIZE, "count larger than the data")

  call zarr_create_array(ro, store, "grid", ZARR_DTYPE_INT32, [4, 3], mode=ZARR_MODE_W_MINUS, &
                         stat=stat, errmsg=msg)
  call check(stat == ZARR_ERR_EXISTS .and. index(msg, "grid") > 0, "create over an array (w-)")

  call zarr_create_array(ro, store, "bad", ZARR_DTYPE_INT32, [4], compressor="{oops", &
                         stat=stat, errmsg=msg)
  call check(stat == ZARR_ERR_INVALID_ARG .and. index(msg, "not valid JSON") > 0, &
             "bad compressor JSON")

  call zarr_open_array(ro, store, "grid", ZARR_MODE_R)
  call zarr_write(ro, i4, stat=stat, errmsg=msg)
  call check(stat == ZARR_ERR_READ_ONLY, "write through a read-only handle")
  call ro%close()

  call zarr_get_attr(arr, "absent", json, stat=stat, errmsg=msg)
  call check(stat == ZARR_ERR_NOT_FOUND .and. index(msg, "absent") > 0, "missing attribute")

  call zarr_open_group(group, store, "grid", ZARR_MODE_R, stat=stat, errmsg=msg)
  call check(stat == ZARR_ERR_NODE_TYPE, "a group where an array is")

  ! The binding's own checks, before any C call.
  call zarr_read(arr, i4, start=[0, 1], stat=stat, errmsg=msg)
  call check(stat == ZARR_ERR_OUT_OF_BOUNDS .and. index(msg, "1-based") > 0, "start 0")
  call zarr_read(arr, i4, start=[1, 1, 1], stat=stat, errmsg=msg)
  call check(stat == ZARR_ERR_RANK_MISMATCH, "start longer than the rank")
  call zarr_read(arr, i4, start=[1.0, 1.0], stat=stat, errmsg=msg)
  call check(stat == ZARR_ERR_INVALID_ARG .and. index(msg, "integer") > 0, "real start")

  ! errmsg shorter than the message gets its beginning.
  call zarr_open_array(ro, store, "missing/array", stat=stat, errmsg=short)
  json = zarr_last_error()
  call check(stat == ZARR_ERR_NOT_FOUND .and. short == json(1:10) .and. len(json) > 10, &
             "short errmsg")

  ! dtype= moves an unsigned array through integer(1) data, bit for bit; another size fails.
  call zarr_create_array(bytes, store, "u8", ZARR_DTYPE_UINT8, [3])
  u8 = [integer(c_int8_t) :: 1, -56, -1]  ! the bits of 1, 200, 255
  call zarr_write(bytes, u8, dtype=ZARR_DTYPE_UINT8)
  u8 = 0
  call zarr_read(bytes, u8, dtype=ZARR_DTYPE_UINT8)
  call check(all(u8 == [integer(c_int8_t) :: 1, -56, -1]), "uint8 through integer(1)")
  call zarr_read(bytes, u8, stat=stat)
  call check(stat == ZARR_ERR_RANGE, "uint8 array read as int8: 200 and 255 out of range")
  call check(all(u8 == [integer(c_int8_t) :: 1, 127, 127]), "in-range values converted")
  call zarr_read(bytes, u8, dtype=ZARR_DTYPE_UINT16, stat=stat)
  call check(stat == ZARR_ERR_INVALID_ARG, "dtype= of another size")
  call bytes%close()

  ! Closed handles: close is idempotent, and a closed handle gives ZARR_ERR_NULL_ARG.
  call arr%close()
  call arr%close()
  call zarr_read(arr, i4, stat=stat, errmsg=msg)
  call check(stat == ZARR_ERR_NULL_ARG, "read through a closed array")
  call store%close(stat=stat)
  call check(stat == ZARR_OK, "store close")
  call store%close(stat=stat)
  call check(stat == ZARR_OK, "second store close")
  call zarr_open_array(arr, store, "grid", stat=stat)
  call check(stat == ZARR_ERR_NULL_ARG, "open in a closed store")

  call finish("test_errors")
end program test_errors
