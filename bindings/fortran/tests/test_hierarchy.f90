! Groups, members, attributes (JSON and the scalar setters), dimension names, resize, Zarr
! v3 groups and (sharded) arrays, and directory and zip stores, all checked exactly.
! Files go to the current directory (ctest gives the test its own).
program test_hierarchy
  use zarr
  use testing
  implicit none
  type(zarr_store) :: store, fs, zip
  type(zarr_group) :: root, sub, v3
  type(zarr_array) :: arr, other
  character(:), allocatable :: json, names(:)
  integer(8), allocatable :: got(:)
  integer :: kind, fmt, stat, i
  real(4) :: a(4, 3), b(4, 3)
  integer(2) :: s(6, 4), t(6, 4)
  real(8) :: missing
  logical :: is_set

  ! gfortran 12 at -O warns that the hidden length of an unallocated deferred-length
  ! array passed to an intent(out) argument may be used uninitialised (it is not read);
  ! allocating it empty first gives it a length.
  allocate(character(0) :: names(0))
  call zarr_memory_store(store)
  call zarr_open_group(root, store, "", ZARR_MODE_W, zarr_format=2)
  call zarr_open_group(sub, root, "sub/inner", ZARR_MODE_A)
  call zarr_create_array(arr, root, "x", ZARR_DTYPE_FLOAT32, [4, 3], chunks=[2, 2], &
                         fill_value="1.5", attributes='{"units": "K"}')
  call zarr_create_array(other, sub, "y", ZARR_DTYPE_INT16, [2])
  call other%close()

  ! Members and node kinds.
  call zarr_members(root, names)
  call check(size(names) == 2, "two members")
  if (size(names) == 2) call check(names(1) == "sub" .and. names(2) == "x", "member names")
  call zarr_members(root, names, kind=ZARR_NODE_ARRAY)
  call check(size(names) == 1, "one array member")
  call zarr_members(sub, names)
  call check(size(names) == 1, "one member below sub/inner")
  if (size(names) == 1) call check(names(1) == "y", "the member y")
  call zarr_node_kind(root, "sub/inner/y", kind)
  call check(kind == ZARR_NODE_ARRAY, "y is an array")
  call zarr_node_kind(store, "sub", kind)
  call check(kind == ZARR_NODE_GROUP, "sub is a group")
  call zarr_node_kind(store, "nothing", kind)
  call check(kind == ZARR_NODE_NONE, "nothing is there")

  ! The fill value, then data through the group.
  call zarr_read(arr, b)
  call check(all(b == 1.5), "fill value")
  a = reshape([(real(i) / 8, i = 1, 12)], shape(a))
  call zarr_write(arr, a)
  call arr%close()
  call zarr_open_array(arr, root, "x", ZARR_MODE_R_PLUS)
  call zarr_read(arr, b)
  call check(all(b == a), "read back through the group")

  ! Attributes: JSON text in and out, and the scalar setters.
  call zarr_get_attrs(arr, json)
  call check(json == '{"units":"K"}', "attributes from create")
  call zarr_set_attr(arr, "count", 42)
  call zarr_set_attr(arr, "big", 9007199254740993_8)
  call zarr_set_attr(arr, "half", 0.5d0)
  call zarr_set_attr(arr, "tenth", 0.1)
  call zarr_set_attr(arr, "name", 'say "hi" \ ok' // achar(9))
  call zarr_set_attr_json(arr, "list", "[1, 2, null]")
  call zarr_get_attr(arr, "count", json)
  call check(json == "42", "integer attribute")
  call zarr_get_attr(arr, "big", json)
  call check(json == "9007199254740993", "integer(8) attribute")
  call zarr_get_attr(arr, "half", json)
  call check(json == "0.5", "real(8) attribute")
  call zarr_get_attr(arr, "tenth", json)
  call check(json == "0.1", "real(4) attribute")
  call zarr_get_attr(arr, "name", json)
  call check(json == '"say \"hi\" \\ ok\t"', "string attribute")
  call zarr_get_attr(arr, "list", json)
  call check(json == "[1,2,null]", "JSON attribute")
  call zarr_delete_attr(arr, "list")
  call zarr_delete_attr(arr, "list", stat=stat)
  call check(stat == ZARR_ERR_NOT_FOUND, "deleting a missing attribute")
  call zarr_set_attrs(root, '{"title": "test", "version": 2}')
  call zarr_set_attr(root, "pi", 3.141592653589793d0)
  call zarr_get_attrs(root, json)
  call check(json == '{"title":"test","version":2,"pi":3.141592653589793}', &
             "group attributes")

  ! Dimension names in Fortran order are stored reversed (xarray's _ARRAY_DIMENSIONS).
  call zarr_set_dimension_names(arr, ["lon ", "lat "])
  call zarr_get_attr(arr, "_ARRAY_DIMENSIONS", json)
  call check(json == '["lat","lon"]', "dimension names")

  ! Resize in Fortran order.
  call zarr_resize(arr, [4, 5])
  call zarr_inquire(arr, shape=got)
  call check(all(got == [4, 5]), "resized shape")
  call zarr_read(arr, b, start=[1, 1])
  call check(all(b == a), "data kept by the resize")
  call arr%close()

  ! Zarr v3: a group and a sharded array in it.
  call zarr_open_group(v3, store, "v3", ZARR_MODE_W, zarr_format=3)
  call zarr_create_array(arr, v3, "s", ZARR_DTYPE_INT16, shape(s), chunks=[3, 2], &
                         shards=[6, 2], zarr_format=3)
  s = reshape([(int(i * 3 - 30, 2), i = 1, 24)], shape(s))
  call zarr_write(arr, s)
  call zarr_inquire(arr, zarr_format=fmt, shape=got)
  call check(fmt == 3 .and. all(got == [6, 4]), "v3 format and shape")
  call zarr_inquire(arr, chunks=got)
  call check(all(got == [3, 2]), "v3 inner chunks")
  call arr%close()
  call zarr_open_array(arr, v3, "s")
  call zarr_read(arr, t)
  call check(all(t == s), "v3 sharded read back")
  call zarr_set_attr(v3, "kind", "v3 group")
  call zarr_get_attr(v3, "kind", json)
  call check(json == '"v3 group"', "v3 group attribute")
  call arr%close()

  ! A directory store and a zip store in the working directory.
  call zarr_open_store(fs, "hierarchy.zarr", ZARR_MODE_W)
  call zarr_create_array(arr, fs, "d/a", ZARR_DTYPE_FLOAT32, shape(a))
  call zarr_write(arr, a)
  call arr%close()
  call fs%close()
  call zarr_open_store(fs, "hierarchy.zarr", ZARR_MODE_R)
  call zarr_open_array(arr, fs, "d/a")
  b = 0
  call zarr_read(arr, b)
  call check(all(b == a), "directory store")
  call arr%close()
  call fs%close()

  call zarr_open_zip(zip, "hierarchy.zip", ZARR_MODE_W, deflate=.true.)
  call zarr_create_array(arr, zip, "z", ZARR_DTYPE_INT16, shape(s))
  call zarr_write(arr, s)
  call arr%close()
  call zip%close()
  call zarr_open_zip(zip, "hierarchy.zip", ZARR_MODE_R)
  call zarr_open_array(arr, zip, "z")
  t = 0
  call zarr_read(arr, t)
  call check(all(t == s), "zip store")
  ! Handles close in any order: the store first, then the array still reads.
  call zip%close()
  t = 0
  call zarr_read(arr, t)
  call check(all(t == s), "array outlives its store")
  call arr%close()

  ! The CF missing value: set at creation (v3: fill value and xarray's attribute), read
  ! back, changed, and refused when the type cannot hold it.
  call zarr_create_array(arr, v3, "t2m", ZARR_DTYPE_FLOAT32, [4], missing_value=-9999d0)
  call zarr_get_missing_value(arr, missing, is_set)
  call check(is_set .and. missing == -9999d0, "missing value set at creation")
  call zarr_get_attr(arr, "_FillValue", json)
  call check(json == '"AAAAAICHw8A="', "xarray's _FillValue encoding")
  call zarr_set_missing_value(arr, 2d0**100, stat=stat)
  call check(stat == ZARR_OK, "2**100 is a float32")
  call zarr_set_missing_value(arr, 1d39, stat=stat)
  call check(stat == ZARR_ERR_INVALID_ARG, "1d39 is beyond float32's range")
  call zarr_get_missing_value(arr, missing, is_set)
  call check(is_set .and. missing == 2d0**100, "the refused value changed nothing")
  call zarr_set_missing_value(arr, 0.1d0)
  call zarr_get_missing_value(arr, missing, is_set)
  call check(is_set .and. missing == real(0.1, 8), "0.1d0 stored as the nearest float32")
  call arr%close()
  call zarr_create_array(arr, root, "count", ZARR_DTYPE_INT16, [4])
  call zarr_get_missing_value(arr, missing, is_set)
  call check(.not. is_set, "a v2 integer array has no missing value by default")
  call arr%close()

  call sub%close()
  call v3%close()
  call root%close()
  call store%close()
  call check(len(zarr_version()) >= 5, "version string")
  call finish("test_hierarchy")
end program test_hierarchy
