! The calls of module zarr beyond create/read/write: appends of every kind (ranks 1 to 7,
! lower-rank steps with count=, strings), flush and refresh between two handles,
! synchronizers, the chunk cache, the thread count, consolidated metadata, deletion,
! dimension names read back in Fortran order, variable-length strings, stores by URL, and
! errors that name dimensions and indices in Fortran order, 1-based. All checked exactly.
! Files go to the current directory (ctest gives the test its own).
program test_parity
  use zarr
  use zarr_c, only: c_zarr_array_dimension_names, c_zarr_strings_get, c_zarr_strings_free
  use testing
  use, intrinsic :: iso_c_binding, only: c_ptr, c_null_ptr, c_size_t, c_char, c_null_char, &
                                         c_f_pointer
  implicit none
  type(zarr_store) :: store, fs
  type(zarr_group) :: root, group
  type(zarr_array) :: arr, other
  character(200) :: msg
  character(:), allocatable :: names(:)
  integer(8), allocatable :: got_shape(:)
  integer :: stat, i, j, kind
  integer(8) :: fixed_shape(3)

  ! gfortran 12 at -O warns that the hidden length of an unallocated deferred-length
  ! array passed to an intent(out) argument may be used uninitialised (it is not read);
  ! allocating it empty first gives it a length.
  allocate(character(0) :: names(0))

  ! The thread count (process-wide, before any chunk work).
  call zarr_set_num_threads(2)
  call check(zarr_get_num_threads() == 2, "two worker threads")
  call zarr_set_num_threads(-1, stat=stat, errmsg=msg)
  call check(stat == ZARR_ERR_INVALID_ARG .and. index(msg, "negative") > 0, "negative threads")
  call zarr_set_num_threads(5000, stat=stat)
  call check(stat == ZARR_ERR_INVALID_ARG, "too many threads (libzarr's check)")

  call zarr_memory_store(store)
  call zarr_open_group(root, store, "", ZARR_MODE_W, zarr_format=3)

  call region_errors()
  call appends()
  call string_arrays()
  call names_and_hierarchy()
  call shared_handles()

  ! zarr_inquire's shape is allocatable; a fixed-size array takes a copy of it.
  call zarr_create_array(arr, store, "fixed", ZARR_DTYPE_INT8, [4, 5, 6])
  call zarr_inquire(arr, shape=got_shape)
  fixed_shape = got_shape
  call check(all(fixed_shape == [4, 5, 6]), "shape copied into a fixed-size array")
  call arr%close()

  call root%close()
  call store%close()
  call finish("test_parity")

contains

  ! Region checks speak Fortran order, 1-based.
  subroutine region_errors()
    real(8) :: block(1, 1, 1, 1), field(2, 3)
    call zarr_create_array(arr, store, "four", ZARR_DTYPE_FLOAT64, [2, 3, 4, 30])
    call zarr_read(arr, block, start=[1, 1, 1, 31], stat=stat, errmsg=msg)
    call check(stat == ZARR_ERR_OUT_OF_BOUNDS, "start past the end: status")
    call check(msg == "dimension 4: start 31 + count 1 - 1 is beyond the extent 30", &
               "start past the end: Fortran order, 1-based (" // trim(msg) // ")")
    call zarr_write(arr, block, start=[1, 1, 4, 30], count=[1, 1, 2, 1], stat=stat, errmsg=msg)
    call check(stat == ZARR_ERR_OUT_OF_BOUNDS .and. &
               msg == "dimension 3: start 4 + count 2 - 1 is beyond the extent 4", &
               "count past the end (" // trim(msg) // ")")
    call zarr_read(arr, block, start=[1, 0, 1, 1], stat=stat, errmsg=msg)
    call check(stat == ZARR_ERR_OUT_OF_BOUNDS .and. index(msg, "dimension 2: start 0") == 1, &
               "start 0 (" // trim(msg) // ")")
    call zarr_read(arr, field, stat=stat, errmsg=msg)
    call check(stat == ZARR_ERR_RANK_MISMATCH .and. &
               msg == "the region has 2 dimensions but the array 4", &
               "rank of the data (" // trim(msg) // ")")
    call zarr_read(arr, block, start=[1, 1, 4, 30], count=[1, 1, 1, -1], stat=stat, errmsg=msg)
    call check(stat == ZARR_ERR_INVALID_ARG .and. index(msg, "dimension 4: count -1") == 1, &
               "negative count (" // trim(msg) // ")")
    ! Within bounds, libzarr still checks the data's size against count.
    call zarr_read(arr, block, start=[1, 1, 1, 30], count=[2, 1, 1, 1], stat=stat)
    call check(stat == ZARR_ERR_BUFFER_SIZE, "count larger than the data")
    call zarr_read(arr, block, start=[2, 3, 4, 30], stat=stat)
    call check(stat == ZARR_OK .and. block(1, 1, 1, 1) == 0, "the last element")
    call arr%close()
  end subroutine region_errors

  ! Appends: time steps of a 2-D field onto a 3-D array, every kind, rank 7, dim=.
  subroutine appends()
    real(8) :: step(3, 2), all_steps(3, 2, 5)
    integer(4) :: cols(2, 3), grid(5, 3)
    integer(1) :: i1(2), i1_back(3)
    integer(2) :: seven(1, 2, 1, 1, 1, 1, 3), seven_back(1, 2, 1, 1, 1, 1, 6)
    integer(8) :: i8(2), i8_back(4)
    real(4) :: r4(3), r4_back(3)
    complex(8) :: c8(2), c8_back(2)
    logical :: flags(3), flags_back(6)
    integer :: t

    call zarr_create_array(arr, root, "series", ZARR_DTYPE_FLOAT64, [3, 2, 0], chunks=[3, 2, 2])
    do t = 1, 5
      step = reshape([(real(100 * t + i, 8), i = 1, 6)], shape(step))
      call zarr_append(arr, step, count=[3, 2, 1])
      all_steps(:, :, t) = step
    end do
    call zarr_inquire(arr, shape=got_shape)
    call check(all(got_shape == [3, 2, 5]), "five steps appended along the last dimension")
    step = 0
    call zarr_read(arr, step, start=[1, 1, 4], count=[3, 2, 1])
    call check(all(step == all_steps(:, :, 4)), "step 4 read back")
    all_steps = 0
    call zarr_read(arr, all_steps)
    call check(all(all_steps(2, 1, :) == [(real(100 * t + 2, 8), t = 1, 5)]), "every step")
    ! A step whose other extents differ, a wrong dim, a wrong rank: Fortran terms.
    call zarr_append(arr, cols, count=[2, 3, 1], stat=stat, errmsg=msg)
    call check(stat == ZARR_ERR_INVALID_ARG .and. &
               index(msg, "dimension 1: the step's extent 2 is not the array's 3") == 1, &
               "append of another extent (" // trim(msg) // ")")
    call zarr_append(arr, step, dim=4, count=[3, 2, 1], stat=stat, errmsg=msg)
    call check(stat == ZARR_ERR_INVALID_ARG .and. &
               msg == "dim 4 is not a dimension of the array (1 to 3)", &
               "append along dim 4 (" // trim(msg) // ")")
    call zarr_append(arr, step, stat=stat, errmsg=msg)
    call check(stat == ZARR_ERR_RANK_MISMATCH .and. index(msg, "count=") > 0, &
               "2-D step without count (" // trim(msg) // ")")
    call zarr_inquire(arr, shape=got_shape)
    call check(all(got_shape == [3, 2, 5]), "refused appends change nothing")
    call arr%close()

    ! dim=1 grows the first (fastest) dimension.
    call zarr_create_array(arr, root, "rows", ZARR_DTYPE_INT32, [0, 3], chunks=[2, 3])
    grid = reshape([(i, i = 1, 15)], shape(grid))
    call zarr_append(arr, grid(1:2, :), dim=1)
    call zarr_append(arr, grid(3:5, :), dim=1)
    grid = 0
    call zarr_read(arr, grid)
    call check(all(grid == reshape([(i, i = 1, 15)], shape(grid))), "appends along dim 1")
    call arr%close()

    ! Every kind, rank 1 (and conversion: integer(1) data into an int16 array).
    call zarr_create_array(arr, root, "i8", ZARR_DTYPE_INT64, [0])
    i8 = [-9007199254740993_8, 7_8]
    call zarr_append(arr, i8)
    call zarr_append(arr, i8 * 2)
    call zarr_read(arr, i8_back)
    call check(all(i8_back == [i8, i8 * 2]), "integer(8) appends")
    call arr%close()
    call zarr_create_array(arr, root, "i1", ZARR_DTYPE_INT8, [1])
    i1 = [-127_1 - 1_1, 127_1]
    call zarr_append(arr, i1)
    call zarr_read(arr, i1_back)
    call check(all(i1_back == [0_1, i1]), "integer(1) appended after the fill value")
    call arr%close()
    ! Another numeric type is converted, as zarr_write converts it; complex data is refused.
    call zarr_create_array(arr, root, "i2", ZARR_DTYPE_INT16, [1])
    call zarr_append(arr, i1)
    i1_back = 0
    call zarr_read(arr, i1_back)
    call check(all(i1_back == [0_1, i1]), "integer(1) onto an int16 array")
    call zarr_append(arr, [(1d0, 0d0)], stat=stat)
    call check(stat == ZARR_ERR_DTYPE_MISMATCH, "complex(8) onto an int16 array")
    call arr%close()
    call zarr_create_array(arr, root, "r4", ZARR_DTYPE_FLOAT32, [0])
    r4 = [0.1, -2.5, huge(1.0)]
    call zarr_append(arr, r4)
    call zarr_read(arr, r4_back)
    call check(all(r4_back == r4), "real(4) appends")
    call arr%close()
    call zarr_create_array(arr, root, "c8", ZARR_DTYPE_COMPLEX128, [0])
    c8 = [(1.5d0, -2d0), (0d0, 1d300)]
    call zarr_append(arr, c8)
    call zarr_read(arr, c8_back)
    call check(all(c8_back == c8), "complex(8) appends")
    call arr%close()
    call zarr_create_array(arr, root, "flags", ZARR_DTYPE_BOOL, [0])
    flags = [.true., .false., .true.]
    call zarr_append(arr, flags)
    call zarr_append(arr, .not. flags)
    call zarr_read(arr, flags_back)
    call check(all(flags_back .eqv. [flags, .not. flags]), "logical appends")
    call arr%close()

    ! Rank 7, growing the last dimension.
    call zarr_create_array(arr, root, "seven", ZARR_DTYPE_INT16, [1, 2, 1, 1, 1, 1, 0])
    seven = reshape([(int(i, 2), i = 1, 6)], shape(seven))
    call zarr_append(arr, seven)
    call zarr_append(arr, -seven)
    call zarr_read(arr, seven_back)
    call check(all(seven_back(:, :, :, :, :, :, 1:3) == seven) .and. &
               all(seven_back(:, :, :, :, :, :, 4:6) == -seven), "rank-7 appends")
    call arr%close()
  end subroutine appends

  ! Variable-length strings as character arrays.
  subroutine string_arrays()
    character(5) :: words(3, 2)
    character(8) :: back(3, 2), more(3, 3)
    character(2) :: narrow(3, 2)
    character(8) :: one(1, 1)
    character(7) :: longer(3)
    call zarr_create_array(arr, root, "words", ZARR_DTYPE_STRING, [3, 2])
    words = reshape([character(5) :: "a", "bb  c", "", "ünï", "12345", " lead"], shape(words))
    call zarr_write(arr, words)
    back = "x"
    call zarr_read(arr, back)
    call check(all(back == words), "strings read back (padded to the data's length)")
    one = "zz"
    call zarr_write(arr, one, start=[2, 2])
    call zarr_read(arr, back)
    call check(back(2, 2) == "zz" .and. back(3, 2) == " lead", "one string written at an offset")
    narrow = "?"
    call zarr_read(arr, narrow, stat=stat, errmsg=msg)
    call check(stat == ZARR_ERR_BUFFER_SIZE .and. &
               index(msg, "element 2 is a string of 5 bytes") == 1 .and. all(narrow == "?"), &
               "strings longer than the data: refused, data unchanged (" // trim(msg) // ")")
    call zarr_read(arr, one, start=[3, 3], stat=stat, errmsg=msg)
    call check(stat == ZARR_ERR_OUT_OF_BOUNDS .and. index(msg, "dimension 2: start 3") == 1, &
               "string read past the end (" // trim(msg) // ")")
    longer = [character(7) :: "seventh", "x", ""]
    call zarr_append(arr, longer, count=[3, 1])
    call zarr_read(arr, more)
    call check(all(more(:, 3) == longer) .and. more(1, 1) == "a", "strings appended")
    call zarr_append(arr, longer(1:2), count=[2, 1], stat=stat, errmsg=msg)
    call check(stat == ZARR_ERR_INVALID_ARG .and. index(msg, "dimension 1") == 1, &
               "string append of another extent")
    call arr%close()
    ! Numbers are not strings: libzarr refuses.
    call zarr_create_array(arr, root, "numbers", ZARR_DTYPE_INT32, [3, 2])
    call zarr_write(arr, words, stat=stat)
    call check(stat == ZARR_ERR_DTYPE_MISMATCH, "strings into an int32 array")
    call arr%close()
  end subroutine string_arrays

  ! Dimension names, groups created/required/deleted, consolidated metadata.
  subroutine names_and_hierarchy()
    type(c_ptr) :: list
    character(kind=c_char), pointer :: first_stored(:)
    call zarr_create_array(arr, root, "named", ZARR_DTYPE_INT8, [4, 3, 2])
    call zarr_get_dimension_names(arr, names, stat=stat)
    call check(stat == ZARR_ERR_NOT_FOUND .and. size(names) == 0, "no dimension names yet")
    call zarr_set_dimension_names(arr, ["lon ", "lat ", "time"])
    call zarr_get_dimension_names(arr, names)
    call check(size(names) == 3, "three names")
    if (size(names) == 3) call check(names(1) == "lon" .and. names(2) == "lat" .and. &
                                     names(3) == "time", "names in Fortran order")
    list = c_null_ptr
    call check(c_zarr_array_dimension_names(arr%ptr, list) == ZARR_OK, "C names")
    call c_f_pointer(c_zarr_strings_get(list, 0_c_size_t), first_stored, [5])
    call check(all(first_stored == ["t", "i", "m", "e", c_null_char]), "stored in C order")
    call c_zarr_strings_free(list)
    call arr%close()

    ! Create (w-: refuses an existing node), require (a: opens or creates), delete.
    call zarr_open_group(group, root, "made/deep", ZARR_MODE_W_MINUS)
    call group%close()
    call zarr_open_group(group, root, "made/deep", ZARR_MODE_W_MINUS, stat=stat)
    call check(stat == ZARR_ERR_EXISTS, "create refuses an existing group")
    call zarr_open_group(group, root, "made/deep", ZARR_MODE_A)
    call group%close()
    call zarr_open_group(group, root, "made", ZARR_MODE_R)
    call zarr_members(group, names)
    call check(size(names) == 1, "required group is there once")
    call group%close()
    call zarr_delete(root, "made")
    call zarr_node_kind(root, "made/deep", kind)
    call check(kind == ZARR_NODE_NONE, "deleted with what is below it")
    call zarr_delete(root, "made", stat=stat)
    call check(stat == ZARR_ERR_NOT_FOUND, "nothing left to delete")

    ! Consolidated metadata, in a directory store opened by URL.
    call zarr_open_store(fs, "cons.zarr", ZARR_MODE_W)
    call zarr_open_group(group, fs, "", ZARR_MODE_W, zarr_format=2)
    call zarr_create_array(other, group, "a", ZARR_DTYPE_INT8, [2])
    call other%close()
    call group%close()
    call zarr_open_group(group, fs, "", ZARR_MODE_R, consolidated=.true., stat=stat)
    call check(stat == ZARR_ERR_NOT_FOUND, "not consolidated yet")
    call zarr_consolidate(fs, "")
    call zarr_open_group(group, fs, "", ZARR_MODE_R, consolidated=.true.)
    call zarr_members(group, names)
    call check(size(names) == 1, "consolidated members")
    if (size(names) == 1) call check(names(1) == "a", "the consolidated member a")
    call group%close()
    call fs%close()
    call zarr_open_url(fs, "cons.zarr", ZARR_MODE_R)
    call zarr_open_array(other, fs, "a", ZARR_MODE_R)
    call zarr_inquire(other, shape=got_shape)
    call check(all(got_shape == [2]), "a store opened by URL (a path)")
    call other%close()
    call fs%close()
  end subroutine names_and_hierarchy

  ! Two handles on one array: flush and refresh; synchronizers; the chunk cache.
  subroutine shared_handles()
    real(4) :: row(4), rows(4, 3)
    call zarr_open_store(fs, "shared.zarr", ZARR_MODE_W)
    call zarr_create_array(arr, fs, "t", ZARR_DTYPE_FLOAT32, [4, 0], chunks=[4, 2], &
                           shards=[4, 4])
    call zarr_open_array(other, fs, "t", ZARR_MODE_R)
    do j = 1, 3
      row = [(real(10 * j + i), i = 1, 4)]
      call zarr_append(arr, row, count=[4, 1])
    end do
    call zarr_flush(arr)
    call zarr_refresh(other)
    call zarr_inquire(other, shape=got_shape)
    call check(all(got_shape == [4, 3]), "the other handle sees three steps after refresh")
    call zarr_read(other, rows)
    call check(all(rows(:, 3) == [31., 32., 33., 34.]), "the other handle reads them")
    call zarr_flush(other, stat=stat)
    call check(stat == ZARR_ERR_READ_ONLY, "flush on a read-only handle")
    call zarr_flush(fs)

    ! The cache keeps decoded chunks; reads give the same values.
    call zarr_set_cache_bytes(other, 1048576_8)
    rows = 0
    call zarr_read(other, rows)
    call zarr_read(other, rows)
    call check(all(rows(:, 1) == [11., 12., 13., 14.]), "cached reads")
    call zarr_set_cache_bytes(other, -1_8, stat=stat)
    call check(stat == ZARR_ERR_INVALID_ARG, "negative cache size")
    call other%close()

    ! Synchronizers: lock files for a directory store; versioned writes are refused there.
    call zarr_set_synchronizer(arr, ZARR_SYNC_PROCESS, stat=stat)
    call check(stat == ZARR_ERR_NULL_ARG, "process locks need a directory")
    call zarr_set_synchronizer(arr, ZARR_SYNC_VERSIONED, stat=stat)
    call check(stat == ZARR_ERR_UNSUPPORTED, "versioned writes on a directory store")
    call zarr_set_synchronizer(arr, ZARR_SYNC_PROCESS, lock_dir="shared.locks")
    row = -1
    call zarr_write(arr, row(1:2), start=[2, 2], count=[2, 1])
    call zarr_read(arr, rows)
    call check(all(rows(:, 2) == [21., -1., -1., 24.]), "a locked write")
    call zarr_set_synchronizer(arr, ZARR_SYNC_NONE)
    call arr%close()
    call fs%close()
  end subroutine shared_handles

end program test_parity
