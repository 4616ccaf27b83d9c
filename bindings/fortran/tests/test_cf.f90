! CF-style use: typed attributes (strings, numbers and rank-1 arrays of them, read back
! exactly, refused when of another type) and data read and written through another numeric
! type than the array's, as netCDF-Fortran's nf90_get_var/nf90_put_var do.
program test_cf
  use, intrinsic :: iso_c_binding, only: c_int8_t, c_int16_t
  use zarr
  use testing
  implicit none
  type(zarr_store) :: store
  type(zarr_array) :: arr
  type(zarr_group) :: group
  character(:), allocatable :: text, json
  character(:), allocatable :: names(:)
  character(200) :: msg
  integer :: stat
  real(4) :: r4
  real(8) :: r8
  integer(4) :: i4
  integer(8) :: i8
  real(4), allocatable :: r4s(:)
  real(8), allocatable :: r8s(:)
  integer(4), allocatable :: i4s(:)
  integer(8), allocatable :: i8s(:)
  real(8) :: d(3, 2)
  real(4) :: f(3, 2)
  integer(c_int16_t) :: h(3, 2)
  integer(c_int8_t) :: b(3, 2)

  ! gfortran 12 at -O warns that the hidden length of an unallocated deferred-length
  ! array passed to an intent(out) argument may be used uninitialised (it is not read);
  ! allocating it empty first gives it a length.
  allocate(character(0) :: names(0))
  call zarr_memory_store(store)
  call zarr_create_array(arr, store, "t", ZARR_DTYPE_INT16, [3, 2])

  ! Attributes: set typed, read back exactly.
  call zarr_set_attr(arr, "units", "K")
  call zarr_set_attr(arr, "history", 'made by "f" \ x')
  call zarr_set_attr(arr, "scale_factor", 0.1)
  call zarr_set_attr(arr, "add_offset", 273.15d0)
  call zarr_set_attr(arr, "count", 42)
  call zarr_set_attr(arr, "big", 9007199254740993_8)
  call zarr_set_attr(arr, "valid_range", [-1.5, 0.3])
  call zarr_set_attr(arr, "weights", [0.25d0, 0.5d0])
  call zarr_set_attr(arr, "levels", [1, 2, 3])
  call zarr_set_attr(arr, "ids", [10_8, 20_8])
  call zarr_get_attr(arr, "scale_factor", json)
  call check(json == "0.1", "real(4) written as its shortest decimal")
  call zarr_get_attr(arr, "scale_factor", r4)
  call check(r4 == 0.1, "real(4) read back exactly")
  call zarr_get_attr(arr, "scale_factor", r8)
  call check(r8 == 0.1d0, "real(4) read as real(8) is the decimal meant")
  call zarr_get_attr(arr, "add_offset", r8)
  call check(r8 == 273.15d0, "real(8)")
  call zarr_get_attr(arr, "count", i4)
  call check(i4 == 42, "integer(4)")
  call zarr_get_attr(arr, "big", i8)
  call check(i8 == 9007199254740993_8, "integer(8) exactly")
  call zarr_get_attr(arr, "valid_range", r4s)
  call check(size(r4s) == 2 .and. all(r4s == [-1.5, 0.3]), "real(4) array")
  call zarr_get_attr(arr, "weights", r8s)
  call check(size(r8s) == 2 .and. all(r8s == [0.25d0, 0.5d0]), "real(8) array")
  call zarr_get_attr(arr, "levels", i4s)
  call check(size(i4s) == 3 .and. all(i4s == [1, 2, 3]), "integer(4) array")
  call zarr_get_attr(arr, "ids", i8s)
  call check(size(i8s) == 2 .and. all(i8s == [10_8, 20_8]), "integer(8) array")
  call zarr_set_attr(arr, "flag_meanings", [character(6) :: "low", "medium", 'a "q"'])
  call zarr_get_attr(arr, "flag_meanings", names)
  call check(size(names) == 3 .and. len(names) == 6, "string list: shape")
  call check(names(1) == "low" .and. names(2) == "medium" .and. names(3) == 'a "q"', &
             "string list: items without trailing blanks")
  call zarr_get_attr(arr, "flag_meanings", json)
  call check(json == '["low","medium","a \"q\""]', "string list: JSON")
  call zarr_get_attr(arr, "levels", names, stat=stat)
  call check(stat == ZARR_ERR_DTYPE_MISMATCH .and. size(names) == 0, "numbers read as strings")
  call zarr_get_attr_string(arr, "history", text)
  call check(text == 'made by "f" \ x', "string read back")

  ! Types that do not fit are refused, naming the attribute.
  call zarr_get_attr(arr, "units", r8, stat=stat, errmsg=msg)
  call check(stat == ZARR_ERR_DTYPE_MISMATCH, "string read as real(8)")
  call check(index(msg, '"units" is a string') > 0, "message names the attribute")
  call zarr_get_attr(arr, "scale_factor", i4, stat=stat)
  call check(stat == ZARR_ERR_DTYPE_MISMATCH, "float read as integer")
  call zarr_get_attr(arr, "big", i4, stat=stat)
  call check(stat == ZARR_ERR_RANGE, "integer(8) value read as integer(4)")
  call zarr_get_attr(arr, "units", r4s, stat=stat)
  call check(stat == ZARR_ERR_DTYPE_MISMATCH .and. size(r4s) == 0, "string read as array")
  call zarr_get_attr_string(arr, "count", text, stat=stat)
  call check(stat == ZARR_ERR_DTYPE_MISMATCH, "number read as string")

  ! Groups too.
  call zarr_open_group(group, store, "g", mode=ZARR_MODE_A)
  call zarr_set_attr(group, "title", "T")
  call zarr_set_attr(group, "version", 1.5)
  call zarr_get_attr(group, "version", r4)
  call check(r4 == 1.5, "group real(4)")
  call zarr_get_attr_string(group, "title", text)
  call check(text == "T", "group string")

  ! Data through another numeric type.
  d = reshape([1.9d0, -1.9d0, 32767d0, -32768.5d0, 0d0, 7d0], [3, 2])
  call zarr_write(arr, d)
  call zarr_read(arr, h)
  call check(all(h == reshape([integer(c_int16_t) :: 1, -1, 32767, -32768, 0, 7], [3, 2])), &
             "real(8) into int16: truncated")
  call zarr_read(arr, f)
  call check(all(f == reshape([1., -1., 32767., -32768., 0., 7.], [3, 2])), "int16 read as real(4)")
  d(3, 1) = 40000d0
  call zarr_write(arr, d, stat=stat, errmsg=msg)
  call check(stat == ZARR_ERR_RANGE, "real(8) out of int16's range")
  call zarr_read(arr, h)
  call check(h(3, 1) == 32767, "nothing written when out of range")
  call zarr_read(arr, b, stat=stat)
  call check(stat == ZARR_ERR_RANGE, "int16 read as integer(1): out of range")
  call check(b(1, 1) == 1 .and. b(2, 1) == -1 .and. b(3, 2) == 7, "the others converted")

  call arr%close()
  call group%close()
  call store%close()
  call finish("test_cf")
end program test_cf
