! zarr.f90 — module zarr, the Fortran binding of libzarr.
!
!   use zarr
!   type(zarr_store) :: store
!   type(zarr_array) :: arr
!   real(8) :: t(1200, 1000)
!   call zarr_open_store(store, "out.zarr", ZARR_MODE_A)
!   call zarr_create_array(arr, store, "temperature", ZARR_DTYPE_FLOAT64, shape(t), &
!                          chunks=[300, 250], dims=["lon", "lat"], missing_value=1.0e20)
!   call zarr_write(arr, t)                   ! or zarr_write(arr, block, start=[i, j])
!   call arr%close(stat=status)              ! flushes; stat= reports a failure
!   call store%close(stat=status)
!
! Conventions, as netcdf-fortran:
! - Dimensions are in Fortran order and start indices are 1-based. The binding reverses
!   shape, chunks, start and count and moves data in C order, so a contiguous Fortran array
!   goes to libzarr as is, with no copy, and the stored array is what zarr-python expects:
!   t(1200, 1000) above is stored with shape [1000, 1200] and read by numpy as t.T.
! - zarr_write(arr, data, start, stat, errmsg, count, dtype) and zarr_read(...) take data
!   of type integer(1/2/4/8), real(4/8), complex(4/8) or default logical, of any rank
!   (assumed rank). start defaults to all 1s, count to shape(data); both may be default or
!   64-bit integers. A non-contiguous section is copied in (and out) by the compiler. When
!   the data's numeric type is not the array's, values are converted as netCDF's
!   nf90_get_var/nf90_put_var do (reals to integers truncate; a value out of range gives
!   ZARR_ERR_RANGE: a read still converts every element, a write stores nothing); dtype=
!   names another memory type of the same size (for example ZARR_DTYPE_UINT8 to move an
!   unsigned array through integer(1) data).
! - Logical: a Fortran logical is 4 bytes while ZARR_DTYPE_BOOL elements are 1 byte, so
!   logical data goes through a temporary integer(1) array of the same size (a copy).
! - Errors: every procedure takes optional stat and errmsg. With stat, a failure sets stat
!   to the ZARR_ERR_* code and errmsg (if present) to libzarr's message; success sets stat
!   to ZARR_OK and leaves errmsg alone. Without stat, a failure stops the program with
!   `error stop` and the message.
! - Handles (zarr_store, zarr_group, zarr_array) are released by their close() binding, not
!   by finalization; close is idempotent, and handles may be closed in any order. An
!   array's close(stat, errmsg) stores what its appends buffered and flushes the store, a
!   store's close(stat, errmsg) finishes it (a zip's central directory); a failure is
!   reported as by any other procedure (the handle is released all the same).
! - CF arrays: zarr_create_array's missing_value= (the _FillValue; a real of any kind or an
!   integer: a float32 array takes the nearest float32, so 1.0e20 and 1d20 both give the
!   float32 1.0e20, the latter with a notice on standard error) and dims= (the dimension
!   names, Fortran order, stored reversed as xarray reads them). An array created with a
!   missing value but without dims gets a notice on standard error (ZARR_QUIET silences
!   it): xarray refuses a whole dataset holding an array without dimension names.
! - Paths, keys and names lose trailing blanks; JSON text and string values are passed as is.
! - Attributes: zarr_set_attr takes a string, or an integer(4/8) or real(4/8) scalar or
!   rank-1 array (libzarr writes the JSON: a real(4) as its shortest decimal, 0.1 not
!   0.100000001); zarr_get_attr gives such numbers back (ZARR_ERR_DTYPE_MISMATCH when the
!   attribute holds another type), or with character data the JSON text; zarr_get_attr_string
!   gives a string attribute's text. A rank-1 character array sets and gets a list of strings
!   (items lose trailing blanks; read back padded to the longest). zarr_set_attr_json sets
!   any JSON value.
! - Regions are checked here before libzarr sees them: a start, count, index or append step
!   that does not fit the array is refused with a message in Fortran order, 1-based
!   ("dimension 4: start 31 + count 1 - 1 is beyond the extent 30"). Errors found deeper in
!   libzarr (codecs, storage, metadata) keep libzarr's message, which speaks of the stored
!   (C-order, 0-based) array where it names dimensions.
! - zarr_append(arr, data, dim, stat, errmsg, count, dtype) appends along Fortran dimension
!   dim (default: the last, the slowest-varying one), data of any numeric type, converted
!   as zarr_write converts it (a real(8) field onto a float32 series; a value out of range
!   gives ZARR_ERR_RANGE and appends nothing); count
!   gives the step's extents for data of lower rank (a 2-D field onto a 3-D series:
!   count=[nx, ny, 1]). zarr_flush stores what appends buffered; zarr_refresh lets another
!   handle see it.
! - Variable-length strings (ZARR_DTYPE_STRING): zarr_write, zarr_read and zarr_append take
!   character data of any rank and length; items lose trailing blanks when written and are
!   padded with blanks when read; a stored string longer than the data's length is refused
!   (ZARR_ERR_BUFFER_SIZE), never cut.
! - zarr_inquire's shape and chunks are allocatable integer(8) arrays it allocates; copy
!   them into fixed-size arrays if needed.
! - zarr_iwrite(arr, data, req, ...) and zarr_iappend(arr, data, req, ...) are the
!   non-blocking forms (as MPI_Isend): they return a zarr_request at once; zarr_wait,
!   zarr_test or zarr_wait_all give the outcome as the blocking call would, and
!   zarr_request_free releases it. The data is copied at submission by default, so any
!   actual argument (an expression, whose temporary is gone when the call returns) is
!   safe; copy=.false. lends it instead until the wait: it must then be a variable (not
!   an expression) declared `target` or `asynchronous`, kept allocated and unchanged
!   until the wait. Either way it must be contiguous. zarr_iwrite and zarr_iappend convert
!   types as zarr_write and zarr_append do (a value out of range fails at the wait, nothing
!   stored).
module zarr
  use, intrinsic :: iso_c_binding
  use, intrinsic :: iso_fortran_env, only: error_unit
  use zarr_c
  implicit none
  private

  include 'zarr_constants.inc'

  ! What arrays and groups share: the C handle (a group's or an array's).
  type, public :: zarr_node
    type(c_ptr) :: ptr = c_null_ptr
  end type zarr_node

  type, public :: zarr_store
    type(c_ptr) :: ptr = c_null_ptr
  contains
    procedure :: close => store_close
  end type zarr_store

  type, extends(zarr_node), public :: zarr_group
  contains
    procedure :: close => group_close
  end type zarr_group

  type, extends(zarr_node), public :: zarr_array
  contains
    procedure :: close => array_close
  end type zarr_array

  ! A non-blocking write or append (zarr_iwrite, zarr_iappend), as an MPI request: wait for
  ! it (zarr_wait, zarr_test, zarr_wait_all), then release it (zarr_request_free).
  type, public :: zarr_request
    type(c_ptr) :: ptr = c_null_ptr
  end type zarr_request

  public :: zarr_open_store, zarr_open_zip, zarr_memory_store, zarr_open_url
  public :: zarr_create_array, zarr_open_array, zarr_open_group, zarr_members, zarr_node_kind
  public :: zarr_write, zarr_read, zarr_inquire, zarr_resize, zarr_set_dimension_names
  public :: zarr_set_missing_value, zarr_get_missing_value, zarr_chunk_edges, zarr_chunk_of
  public :: zarr_get_attrs, zarr_set_attrs, zarr_get_attr, zarr_set_attr, zarr_set_attr_json
  public :: zarr_delete_attr, zarr_get_attr_string, zarr_version, zarr_status_name
  public :: zarr_last_error, zarr_append, zarr_flush, zarr_refresh, zarr_set_synchronizer
  public :: zarr_set_append_lock
  public :: zarr_commit, zarr_discard, zarr_rebase, zarr_create_tag, zarr_create_branch
  public :: zarr_set_virtual_ref
  public :: zarr_export_changes, zarr_merge_changes
  public :: zarr_set_cache_bytes, zarr_set_num_threads, zarr_get_num_threads
  public :: zarr_consolidate, zarr_delete, zarr_get_dimension_names
  public :: zarr_iwrite, zarr_iappend, zarr_wait, zarr_test, zarr_wait_all, zarr_request_free
  public :: zarr_set_async_budget

  interface zarr_create_array
    module procedure create_array_in_store, create_array_in_group
  end interface
  interface zarr_open_array
    module procedure open_array_in_store, open_array_in_group
  end interface
  interface zarr_open_group
    module procedure open_group_in_store, open_group_in_group
  end interface
  interface zarr_node_kind
    module procedure node_kind_in_store, node_kind_in_group
  end interface
  interface zarr_write
    module procedure write_i1, write_i2, write_i4, write_i8, write_r4, write_r8, write_c4, &
                     write_c8, write_l, write_strings
  end interface
  interface zarr_read
    module procedure read_i1, read_i2, read_i4, read_i8, read_r4, read_r8, read_c4, &
                     read_c8, read_l, read_strings
  end interface
  interface zarr_append
    module procedure append_i1, append_i2, append_i4, append_i8, append_r4, append_r8, &
                     append_c4, append_c8, append_l, append_strings
  end interface
  interface zarr_iwrite
    module procedure iwrite_i1, iwrite_i2, iwrite_i4, iwrite_i8, iwrite_r4, iwrite_r8, &
                     iwrite_c4, iwrite_c8, iwrite_l
  end interface
  interface zarr_iappend
    module procedure iappend_i1, iappend_i2, iappend_i4, iappend_i8, iappend_r4, iappend_r8, &
                     iappend_c4, iappend_c8, iappend_l
  end interface
  interface zarr_flush
    module procedure flush_array, flush_store
  end interface
  interface zarr_get_missing_value
    module procedure get_missing_value_r8, get_missing_value_r4
  end interface
  interface zarr_set_attr
    module procedure set_attr_i4, set_attr_i8, set_attr_r4, set_attr_r8, set_attr_string, &
                     set_attr_i4s, set_attr_i8s, set_attr_r4s, set_attr_r8s, set_attr_strings
  end interface
  interface zarr_get_attr
    module procedure get_attr_json, get_attr_i4, get_attr_i8, get_attr_r4, get_attr_r8, &
                     get_attr_i4s, get_attr_i8s, get_attr_r4s, get_attr_r8s, get_attr_strings
  end interface

  ! libc's strlen, for the static strings libzarr returns.
  interface
    function c_strlen(s) bind(c, name="strlen") result(n)
      import :: c_ptr, c_size_t
      type(c_ptr), value :: s
      integer(c_size_t) :: n
    end function c_strlen
  end interface

  ! The C calls with a string output, for get_text.
  integer, parameter :: TEXT_LAST_ERROR = 1, TEXT_ARRAY_ATTRS = 2, TEXT_GROUP_ATTRS = 3, &
                        TEXT_ARRAY_ATTR = 4, TEXT_GROUP_ATTR = 5, TEXT_ARRAY_STRING = 6, &
                        TEXT_GROUP_STRING = 7

contains

  ! ---- errors ---------------------------------------------------------------------------

  ! The calling thread's last libzarr error message.
  function zarr_last_error() result(message)
    character(:), allocatable :: message
    integer(c_int32_t) :: rc
    call text_output(TEXT_LAST_ERROR, c_null_ptr, "", message, rc)
  end function zarr_last_error

  ! The name of a status code ("ZARR_ERR_NOT_FOUND").
  function zarr_status_name(status) result(name)
    integer, intent(in) :: status
    character(:), allocatable :: name
    type(c_ptr) :: p
    p = c_zarr_status_str(int(status, c_int32_t))
    name = string_at(p)
  end function zarr_status_name

  ! The library version ("0.1.0").
  function zarr_version() result(version)
    character(:), allocatable :: version
    type(c_ptr) :: p
    p = c_zarr_version_string()
    version = string_at(p)
  end function zarr_version

  ! Reports the status of a C call: see the module comment.
  subroutine report(rc, what, stat, errmsg)
    integer(c_int32_t), intent(in) :: rc
    character(*), intent(in) :: what
    integer, intent(out), optional :: stat
    character(*), intent(inout), optional :: errmsg
    if (rc == ZARR_OK) then
      if (present(stat)) stat = ZARR_OK
    else
      call fail(rc, zarr_last_error(), what, stat, errmsg)
    end if
  end subroutine report

  ! Reports a failure found here or in libzarr.
  subroutine fail(rc, message, what, stat, errmsg)
    integer(c_int32_t), intent(in) :: rc
    character(*), intent(in) :: message, what
    integer, intent(out), optional :: stat
    character(*), intent(inout), optional :: errmsg
    character(:), allocatable :: text
    if (present(errmsg)) errmsg = message
    if (present(stat)) then
      stat = rc
    else
      text = what // ": " // zarr_status_name(int(rc)) // ": " // message  ! (gfortran 12 fails
      error stop text                                                     ! on this inline)
    end if
  end subroutine fail

  ! ---- strings --------------------------------------------------------------------------

  ! `s` without trailing blanks, NUL-terminated, for a `const char *` argument.
  pure function c_str(s) result(c)
    character(*), intent(in) :: s
    character(:, kind=c_char), allocatable :: c
    c = trim(s) // c_null_char
  end function c_str

  ! A NUL-terminated C string (NULL gives "").
  function string_at(p) result(s)
    type(c_ptr), intent(in) :: p
    character(:), allocatable :: s
    character(kind=c_char), pointer :: chars(:)
    integer :: i
    if (.not. c_associated(p)) then
      s = ""
      return
    end if
    call c_f_pointer(p, chars, [c_strlen(p)])
    allocate(character(size(chars)) :: s)
    do i = 1, size(chars)
      s(i:i) = chars(i)
    end do
  end function string_at

  ! One C call with a (buf, len, needed) string output, chosen by `which`.
  function text_call(which, handle, key, buf, len, needed) result(rc)
    integer, intent(in) :: which
    type(c_ptr), intent(in) :: handle, buf
    character(*), intent(in) :: key
    integer(c_size_t), intent(in) :: len
    integer(c_size_t), intent(out) :: needed
    integer(c_int32_t) :: rc
    select case (which)
    case (TEXT_LAST_ERROR)
      rc = c_zarr_last_error(buf, len, needed)
    case (TEXT_ARRAY_ATTRS)
      rc = c_zarr_array_attrs_get(handle, buf, len, needed)
    case (TEXT_GROUP_ATTRS)
      rc = c_zarr_group_attrs_get(handle, buf, len, needed)
    case (TEXT_ARRAY_ATTR)
      rc = c_zarr_array_attr_get(handle, c_str(key), buf, len, needed)
    case (TEXT_ARRAY_STRING)
      rc = c_zarr_array_attr_get_string(handle, c_str(key), buf, len, needed)
    case (TEXT_GROUP_STRING)
      rc = c_zarr_group_attr_get_string(handle, c_str(key), buf, len, needed)
    case default
      rc = c_zarr_group_attr_get(handle, c_str(key), buf, len, needed)
    end select
  end function text_call

  ! Runs a string output call twice: for the size, then into a buffer of that size.
  subroutine text_output(which, handle, key, text, rc)
    integer, intent(in) :: which
    type(c_ptr), intent(in) :: handle
    character(*), intent(in) :: key
    character(:), allocatable, intent(out) :: text
    integer(c_int32_t), intent(out) :: rc
    character(kind=c_char), allocatable, target :: buf(:)
    integer(c_size_t) :: needed, nbuf
    integer :: i
    rc = text_call(which, handle, key, c_null_ptr, 0_c_size_t, needed)
    do while (rc == ZARR_ERR_BUFFER_SIZE .and. needed > 0)  ! again only if the text grew
      if (allocated(buf)) deallocate(buf)
      nbuf = needed
      allocate(buf(nbuf))
      rc = text_call(which, handle, key, c_loc(buf), nbuf, needed)
    end do
    if (which == TEXT_LAST_ERROR .and. rc == ZARR_ERR_BUFFER_SIZE) rc = ZARR_OK
    if (rc /= ZARR_OK .or. .not. allocated(buf)) then
      text = ""
      return
    end if
    allocate(character(needed - 1) :: text)
    do i = 1, int(needed) - 1
      text(i:i) = buf(i)
    end do
  end subroutine text_output

  ! ---- stores ---------------------------------------------------------------------------

  ! Opens a directory as a store (modes as zarr_store_open_fs in zarr.h).
  subroutine zarr_open_store(store, path, mode, stat, errmsg)
    type(zarr_store), intent(out) :: store
    character(*), intent(in) :: path
    integer, intent(in) :: mode
    integer, intent(out), optional :: stat
    character(*), intent(inout), optional :: errmsg
    call report(c_zarr_store_open_fs(c_str(path), int(mode, c_int32_t), store%ptr), &
                "zarr_open_store", stat, errmsg)
  end subroutine zarr_open_store

  ! Opens a zip file as a store; `deflate` compresses new entries (default: stored).
  subroutine zarr_open_zip(store, path, mode, deflate, stat, errmsg)
    type(zarr_store), intent(out) :: store
    character(*), intent(in) :: path
    integer, intent(in) :: mode
    logical, intent(in), optional :: deflate
    integer, intent(out), optional :: stat
    character(*), intent(inout), optional :: errmsg
    logical(c_bool) :: compress
    compress = .false.
    if (present(deflate)) compress = deflate
    call report(c_zarr_store_open_zip(c_str(path), int(mode, c_int32_t), compress, store%ptr), &
                "zarr_open_zip", stat, errmsg)
  end subroutine zarr_open_zip

  ! Opens a store by URL: a path, file://, memory://, zip://, s3://, gs://, az://, abfs://
  ! or http(s):// (read-only); `options` is a JSON object of settings (endpoint, region,
  ! credentials, timeouts, ...; see zarr_store_open_url in zarr.h).
  subroutine zarr_open_url(store, url, mode, options, stat, errmsg)
    type(zarr_store), intent(out) :: store
    character(*), intent(in) :: url
    integer, intent(in) :: mode
    character(*), intent(in), optional :: options
    integer, intent(out), optional :: stat
    character(*), intent(inout), optional :: errmsg
    if (present(options)) then
      call report(c_zarr_store_open_url(c_str(url), int(mode, c_int32_t), c_str(options), &
                                        store%ptr), "zarr_open_url", stat, errmsg)
    else
      call report(c_zarr_store_open_url(c_str(url), int(mode, c_int32_t), c_str("{}"), &
                                        store%ptr), "zarr_open_url", stat, errmsg)
    end if
  end subroutine zarr_open_url

  ! Creates an empty in-memory store.
  subroutine zarr_memory_store(store, stat, errmsg)
    type(zarr_store), intent(out) :: store
    integer, intent(out), optional :: stat
    character(*), intent(inout), optional :: errmsg
    call report(c_zarr_store_new_memory(store%ptr), "zarr_memory_store", stat, errmsg)
  end subroutine zarr_memory_store

  ! Finishes the store (a zip's central directory is written here, a directory store is
  ! flushed), reporting a failure, then releases it (also after a failure). Closing again
  ! does nothing.
  subroutine store_close(self, stat, errmsg)
    class(zarr_store), intent(inout) :: self
    integer, intent(out), optional :: stat
    character(*), intent(inout), optional :: errmsg
    integer(c_int32_t) :: rc
    rc = ZARR_OK
    if (c_associated(self%ptr)) rc = c_zarr_store_close(self%ptr)
    if (rc /= ZARR_OK) call fail(rc, zarr_last_error(), "zarr_store%close", stat, errmsg)
    call c_zarr_store_free(self%ptr)
    self%ptr = c_null_ptr
    if (rc == ZARR_OK .and. present(stat)) stat = ZARR_OK
  end subroutine store_close

  subroutine group_close(self)
    class(zarr_group), intent(inout) :: self
    call c_zarr_group_free(self%ptr)
    self%ptr = c_null_ptr
  end subroutine group_close

  ! Waits for the array's requests, stores what its appends buffered and flushes the store
  ! (zarr.h's zarr_array_close), reporting a failure, then releases the handle (also after
  ! a failure: what failed to store is then lost). Closing again does nothing.
  subroutine array_close(self, stat, errmsg)
    class(zarr_array), intent(inout) :: self
    integer, intent(out), optional :: stat
    character(*), intent(inout), optional :: errmsg
    integer(c_int32_t) :: rc
    rc = ZARR_OK
    if (c_associated(self%ptr)) rc = c_zarr_array_close(self%ptr)
    if (rc /= ZARR_OK) call fail(rc, zarr_last_error(), "zarr_array%close", stat, errmsg)
    call c_zarr_array_free(self%ptr)
    self%ptr = c_null_ptr
    if (rc == ZARR_OK .and. present(stat)) stat = ZARR_OK
  end subroutine array_close

  ! ---- indices --------------------------------------------------------------------------

  ! Integers of default or 64-bit kind as integer(c_int64_t); ok is false for other types.
  subroutine to_int64(x, y, ok)
    class(*), intent(in) :: x(:)
    integer(c_int64_t), allocatable, intent(out) :: y(:)
    logical, intent(out) :: ok
    ok = .true.
    select type (x)
    type is (integer(c_int32_t))
      y = int(x, c_int64_t)
    type is (integer(c_int64_t))
      y = x
    class default
      ok = .false.
      allocate(y(0))
    end select
  end subroutine to_int64

  ! A Fortran-order list of extents or indices in C order (reversed).
  pure function reversed(x) result(y)
    integer(c_int64_t), intent(in) :: x(:)
    integer(c_int64_t) :: y(size(x))
    y = x(size(x):1:-1)
  end function reversed

  ! A missing value given as a real of any kind or an integer, as the double libzarr takes;
  ! rc is ZARR_ERR_INVALID_ARG (with `message`) for another type or a 64-bit integer a
  ! double cannot hold exactly.
  subroutine missing_double(value, d, rc, message)
    class(*), intent(in) :: value
    real(c_double), intent(out) :: d
    integer(c_int32_t), intent(out) :: rc
    character(:), allocatable, intent(inout) :: message
    rc = ZARR_OK
    d = 0
    select type (value)
    type is (real(c_float))
      d = real(value, c_double)
    type is (real(c_double))
      d = value
    type is (integer(c_int8_t))
      d = real(value, c_double)
    type is (integer(c_int16_t))
      d = real(value, c_double)
    type is (integer(c_int32_t))
      d = real(value, c_double)
    type is (integer(c_int64_t))
      d = real(value, c_double)
      if (value > 2_c_int64_t**53 .or. value < -2_c_int64_t**53) then
        rc = ZARR_ERR_INVALID_ARG
        message = "missing value " // itoa(value) // " is beyond what a double holds exactly"
      end if
    class default
      rc = ZARR_ERR_INVALID_ARG
      message = "missing_value must be a real (any kind) or an integer"
    end select
  end subroutine missing_double

  ! Checks dimension names given in Fortran order: one per dimension of an array of rank
  ! `rank`, none blank (rc and message say what is wrong).
  subroutine check_names(names, rank, rc, message)
    character(*), intent(in) :: names(:)
    integer, intent(in) :: rank
    integer(c_int32_t), intent(out) :: rc
    character(:), allocatable, intent(inout) :: message
    integer :: i
    rc = ZARR_OK
    if (size(names) /= rank) then
      rc = ZARR_ERR_RANK_MISMATCH
      message = itoa(size(names)) // " dimension names for an array of rank " // itoa(rank)
      return
    end if
    do i = 1, size(names)
      if (len_trim(names(i)) == 0) then
        rc = ZARR_ERR_INVALID_ARG
        message = "dimension name " // itoa(i) // " is blank"
        return
      end if
    end do
  end subroutine check_names

  ! Fortran-order names as C strings in C order (reversed): `chars` holds them, `ptrs`
  ! points at each.
  subroutine c_names(names, chars, ptrs)
    character(*), intent(in) :: names(:)
    character(kind=c_char), allocatable, target, intent(out) :: chars(:, :)
    type(c_ptr), allocatable, intent(out) :: ptrs(:)
    integer :: i, j, n
    n = size(names)
    allocate(chars(len(names) + 1, n), ptrs(n))
    do i = 1, n
      chars(:, i) = c_null_char
      do j = 1, len_trim(names(i))
        chars(j, i) = names(i)(j:j)
      end do
      ptrs(n + 1 - i) = c_loc(chars(1, i))
    end do
  end subroutine c_names

  ! Sets the builder's dimension names (Fortran order).
  subroutine set_builder_names(b, names, rc)
    type(c_ptr), intent(in) :: b
    character(*), intent(in) :: names(:)
    integer(c_int32_t), intent(out) :: rc
    character(kind=c_char), allocatable, target :: chars(:, :)
    type(c_ptr), allocatable :: ptrs(:)
    call c_names(names, chars, ptrs)
    rc = c_zarr_array_builder_set_dimension_names(b, size(names, kind=c_size_t), ptrs)
  end subroutine set_builder_names

  ! A notice on standard error, prefixed "libzarr:" as libzarr's own; a non-empty
  ! ZARR_QUIET silences it.
  subroutine notice(message)
    character(*), intent(in) :: message
    integer :: length, status
    call get_environment_variable("ZARR_QUIET", length=length, status=status)
    if (status == 0 .and. length > 0) return
    write(error_unit, "(a)") "libzarr: " // message
  end subroutine notice

  ! ---- arrays ---------------------------------------------------------------------------

  ! Builder settings shared by both zarr_create_array forms; rc is the first failure.
  subroutine new_builder(b, dtype, shape, chunks, shards, fill_value, compressor, attributes, &
                         zarr_format, missing_value, edges_dim, edges, dims, rc, message)
    type(c_ptr), intent(out) :: b
    integer, intent(in) :: dtype
    class(*), intent(in) :: shape(:)
    class(*), intent(in), optional :: chunks(:), shards(:)
    character(*), intent(in), optional :: fill_value, compressor, attributes
    integer, intent(in), optional :: zarr_format
    class(*), intent(in), optional :: missing_value
    integer, intent(in), optional :: edges_dim
    class(*), intent(in), optional :: edges(:)
    character(*), intent(in), optional :: dims(:)
    integer(c_int32_t), intent(out) :: rc
    character(:), allocatable, intent(out) :: message
    integer(c_int64_t), allocatable :: s(:), c(:)
    real(c_double) :: missing
    logical :: ok
    message = ""
    b = c_null_ptr
    missing = 0
    call to_int64(shape, s, ok)
    if (ok .and. present(chunks)) call to_int64(chunks, c, ok)
    if (.not. ok) then
      rc = ZARR_ERR_INVALID_ARG
      message = "shape and chunks must be integer(4) or integer(8) arrays"
      return
    end if
    if (present(missing_value)) then
      call missing_double(missing_value, missing, rc, message)
      if (rc /= ZARR_OK) return
    end if
    if (present(dims)) then
      call check_names(dims, size(s), rc, message)
      if (rc /= ZARR_OK) return
    end if
    rc = c_zarr_array_builder_new(int(dtype, c_int32_t), size(s, kind=c_size_t), reversed(s), b)
    if (rc == ZARR_OK .and. present(zarr_format)) &
      rc = c_zarr_array_builder_set_zarr_format(b, int(zarr_format, c_int32_t))
    if (rc == ZARR_OK .and. present(chunks)) &
      rc = c_zarr_array_builder_set_chunk_shape(b, size(c, kind=c_size_t), reversed(c))
    if (rc == ZARR_OK .and. present(shards)) then
      call to_int64(shards, c, ok)
      if (.not. ok) then
        rc = ZARR_ERR_INVALID_ARG
        message = "shards must be an integer(4) or integer(8) array"
        return
      end if
      rc = c_zarr_array_builder_set_shard_shape(b, size(c, kind=c_size_t), reversed(c))
    end if
    if (rc == ZARR_OK .and. present(edges)) then
      call to_int64(edges, c, ok)
      if (.not. ok .or. .not. present(edges_dim)) then
        rc = ZARR_ERR_INVALID_ARG
        message = "edges must be an integer(4) or integer(8) array, given with edges_dim"
        return
      end if
      if (edges_dim < 1 .or. edges_dim > size(s)) then
        rc = ZARR_ERR_INVALID_ARG
        message = "edges_dim must be a dimension of the shape"
        return
      end if
      rc = c_zarr_array_builder_set_chunk_edges(b, int(size(s) - edges_dim, c_size_t), c, &
                                                size(c, kind=c_size_t))
    end if
    if (rc == ZARR_OK .and. present(fill_value)) &
      rc = c_zarr_array_builder_set_fill_value_json(b, fill_value // c_null_char)
    if (rc == ZARR_OK .and. present(missing_value)) &
      rc = c_zarr_array_builder_set_missing_value(b, missing)
    if (rc == ZARR_OK .and. present(dims)) call set_builder_names(b, dims, rc)
    if (rc == ZARR_OK .and. present(compressor)) &
      rc = c_zarr_array_builder_set_compressor_json(b, compressor // c_null_char)
    if (rc == ZARR_OK .and. present(attributes)) &
      rc = c_zarr_array_builder_set_attributes_json(b, attributes // c_null_char)
    if (rc /= ZARR_OK) message = zarr_last_error()
  end subroutine new_builder

  ! Creates an array of element type `dtype` (ZARR_DTYPE_*) and Fortran-order `shape`.
  ! Options: chunks and shards (Fortran order), fill_value, compressor and attributes as
  ! JSON, zarr_format (2 or 3), mode (ZARR_MODE_W, the default, ZARR_MODE_W_MINUS or
  ! ZARR_MODE_A), missing_value (the CF _FillValue, a real of any kind or an integer,
  ! written as xarray and netCDF read it; a float array takes the nearest value of its
  ! type: zarr.h's zarr_array_builder_set_missing_value), dims (the dimension names,
  ! Fortran order, as zarr_set_dimension_names), edges and edges_dim (the chunk edge
  ! lengths of Fortran dimension edges_dim: a rectilinear chunk grid, Zarr format 3).
  ! Defaults are zarr.h's zarr_array_builder_new. An array of rank 1 or more created with a
  ! missing value but no dims gets a notice on standard error (unless ZARR_QUIET is set):
  ! xarray opens no dataset holding an array without dimension names.
  subroutine create_array_in_store(arr, store, path, dtype, shape, chunks, shards, fill_value, &
                                   compressor, attributes, zarr_format, mode, stat, errmsg, &
                                   missing_value, edges_dim, edges, dims)
    type(zarr_array), intent(out) :: arr
    type(zarr_store), intent(in) :: store
    character(*), intent(in) :: path
    integer, intent(in) :: dtype
    class(*), intent(in) :: shape(:)
    class(*), intent(in), optional :: chunks(:), shards(:)
    character(*), intent(in), optional :: fill_value, compressor, attributes
    integer, intent(in), optional :: zarr_format, mode
    integer, intent(out), optional :: stat
    character(*), intent(inout), optional :: errmsg
    class(*), intent(in), optional :: missing_value
    integer, intent(in), optional :: edges_dim
    class(*), intent(in), optional :: edges(:)
    character(*), intent(in), optional :: dims(:)
    call create_array(arr, store%ptr, c_null_ptr, path, dtype, shape, chunks, shards, &
                      fill_value, compressor, attributes, zarr_format, mode, stat, errmsg, &
                      missing_value, edges_dim, edges, dims)
  end subroutine create_array_in_store

  subroutine create_array_in_group(arr, group, path, dtype, shape, chunks, shards, fill_value, &
                                   compressor, attributes, zarr_format, mode, stat, errmsg, &
                                   missing_value, edges_dim, edges, dims)
    type(zarr_array), intent(out) :: arr
    type(zarr_group), intent(in) :: group
    character(*), intent(in) :: path
    integer, intent(in) :: dtype
    class(*), intent(in) :: shape(:)
    class(*), intent(in), optional :: chunks(:), shards(:)
    character(*), intent(in), optional :: fill_value, compressor, attributes
    integer, intent(in), optional :: zarr_format, mode
    integer, intent(out), optional :: stat
    character(*), intent(inout), optional :: errmsg
    class(*), intent(in), optional :: missing_value
    integer, intent(in), optional :: edges_dim
    class(*), intent(in), optional :: edges(:)
    character(*), intent(in), optional :: dims(:)
    call create_array(arr, c_null_ptr, group%ptr, path, dtype, shape, chunks, shards, &
                      fill_value, compressor, attributes, zarr_format, mode, stat, errmsg, &
                      missing_value, edges_dim, edges, dims)
  end subroutine create_array_in_group

  ! zarr_create_array in a store (group NULL) or below a group (store NULL).
  subroutine create_array(arr, store, group, path, dtype, shape, chunks, shards, fill_value, &
                          compressor, attributes, zarr_format, mode, stat, errmsg, &
                          missing_value, edges_dim, edges, dims)
    type(zarr_array), intent(inout) :: arr
    type(c_ptr), intent(in) :: store, group
    character(*), intent(in) :: path
    integer, intent(in) :: dtype
    class(*), intent(in) :: shape(:)
    class(*), intent(in), optional :: chunks(:), shards(:)
    character(*), intent(in), optional :: fill_value, compressor, attributes
    integer, intent(in), optional :: zarr_format, mode
    integer, intent(out), optional :: stat
    character(*), intent(inout), optional :: errmsg
    class(*), intent(in), optional :: missing_value
    integer, intent(in), optional :: edges_dim
    class(*), intent(in), optional :: edges(:)
    character(*), intent(in), optional :: dims(:)
    type(c_ptr) :: b
    integer(c_int32_t) :: rc, m
    character(:), allocatable :: message
    m = ZARR_MODE_W
    if (present(mode)) m = int(mode, c_int32_t)
    call new_builder(b, dtype, shape, chunks, shards, fill_value, compressor, attributes, &
                     zarr_format, missing_value, edges_dim, edges, dims, rc, message)
    if (rc == ZARR_OK) then
      if (c_associated(group)) then
        rc = c_zarr_group_create_array(group, b, c_str(path), m, arr%ptr)
      else
        rc = c_zarr_array_create(b, store, c_str(path), m, arr%ptr)
      end if
      if (rc /= ZARR_OK) message = zarr_last_error()
    end if
    call c_zarr_array_builder_free(b)
    if (rc == ZARR_OK) then
      if (present(missing_value) .and. .not. present(dims) .and. size(shape) > 0) &
        call notice("array " // trim(path) // " has a missing value but no dimension names " &
                    // "(give dims= or call zarr_set_dimension_names): xarray opens no " &
                    // "dataset holding it")
      if (present(stat)) stat = ZARR_OK
    else
      call fail(rc, message, "zarr_create_array", stat, errmsg)
    end if
  end subroutine create_array

  ! Opens an array: mode ZARR_MODE_R (the default), ZARR_MODE_R_PLUS or ZARR_MODE_A.
  subroutine open_array_in_store(arr, store, path, mode, stat, errmsg)
    type(zarr_array), intent(out) :: arr
    type(zarr_store), intent(in) :: store
    character(*), intent(in) :: path
    integer, intent(in), optional :: mode
    integer, intent(out), optional :: stat
    character(*), intent(inout), optional :: errmsg
    integer(c_int32_t) :: m
    m = ZARR_MODE_R
    if (present(mode)) m = int(mode, c_int32_t)
    call report(c_zarr_array_open(store%ptr, c_str(path), m, arr%ptr), "zarr_open_array", &
                stat, errmsg)
  end subroutine open_array_in_store

  subroutine open_array_in_group(arr, group, path, mode, stat, errmsg)
    type(zarr_array), intent(out) :: arr
    type(zarr_group), intent(in) :: group
    character(*), intent(in) :: path
    integer, intent(in), optional :: mode
    integer, intent(out), optional :: stat
    character(*), intent(inout), optional :: errmsg
    integer(c_int32_t) :: m
    m = ZARR_MODE_R
    if (present(mode)) m = int(mode, c_int32_t)
    call report(c_zarr_group_open_array(group%ptr, c_str(path), m, arr%ptr), "zarr_open_array", &
                stat, errmsg)
  end subroutine open_array_in_group

  ! Rank, Fortran-order shape and chunks, element type and Zarr format of an array. shape
  ! and chunks are allocatable integer(8) arrays (allocated here to the rank): a fixed-size
  ! array cannot be passed; copy from an allocatable one (`s = inquired_shape`).
  subroutine zarr_inquire(arr, rank, shape, chunks, dtype, zarr_format, stat, errmsg)
    type(zarr_array), intent(in) :: arr
    integer, intent(out), optional :: rank, dtype, zarr_format
    integer(c_int64_t), allocatable, intent(out), optional :: shape(:), chunks(:)
    integer, intent(out), optional :: stat
    character(*), intent(inout), optional :: errmsg
    integer(c_size_t) :: n
    integer(c_int64_t), allocatable :: c(:)
    integer(c_int32_t) :: rc, value
    rc = c_zarr_array_rank(arr%ptr, n)
    ! The rank is an intent(out) argument: unset when the call fails.
    if (rc /= ZARR_OK) n = 0
    allocate(c(n))
    if (present(rank)) rank = int(n)
    if (rc == ZARR_OK .and. present(shape)) then
      rc = c_zarr_array_shape(arr%ptr, n, c)
      shape = reversed(c)
    end if
    if (rc == ZARR_OK .and. present(chunks)) then
      rc = c_zarr_array_chunk_shape(arr%ptr, n, c)
      chunks = reversed(c)
    end if
    if (rc == ZARR_OK .and. present(dtype)) then
      rc = c_zarr_array_dtype(arr%ptr, value)
      dtype = value
    end if
    if (rc == ZARR_OK .and. present(zarr_format)) then
      rc = c_zarr_array_zarr_format(arr%ptr, value)
      zarr_format = value
    end if
    call report(rc, "zarr_inquire", stat, errmsg)
  end subroutine zarr_inquire

  ! The chunk edge lengths along Fortran dimension `dim` (of the chunks holding elements):
  ! all the chunk shape's on a regular grid, each chunk's own on a rectilinear one.
  subroutine zarr_chunk_edges(arr, dim, edges, stat, errmsg)
    type(zarr_array), intent(in) :: arr
    integer, intent(in) :: dim
    integer(c_int64_t), allocatable, intent(out) :: edges(:)
    integer, intent(out), optional :: stat
    character(*), intent(inout), optional :: errmsg
    integer(c_size_t) :: rank, n, got
    integer(c_int64_t) :: none(1)
    integer(c_int32_t) :: rc
    rc = c_zarr_array_rank(arr%ptr, rank)
    if (rc /= ZARR_OK) rank = 0
    allocate(edges(0))
    if (rc == ZARR_OK .and. (dim < 1 .or. dim > rank)) then
      call fail(ZARR_ERR_INVALID_ARG, "dim must be a dimension of the array", &
                "zarr_chunk_edges", stat, errmsg)
      return
    end if
    n = 0
    if (rc == ZARR_OK) rc = c_zarr_array_chunk_edges(arr%ptr, rank - dim, none, 0_c_size_t, n)
    if (rc == ZARR_ERR_BUFFER_SIZE) then
      deallocate(edges)
      allocate(edges(n))
      got = 0
      rc = c_zarr_array_chunk_edges(arr%ptr, rank - dim, edges, n, got)
    end if
    call report(rc, "zarr_chunk_edges", stat, errmsg)
  end subroutine zarr_chunk_edges

  ! The index (1-based, Fortran order, as start indices) of the chunk holding the element at
  ! `index` (1-based, Fortran order).
  subroutine zarr_chunk_of(arr, index, chunk, stat, errmsg)
    type(zarr_array), intent(in) :: arr
    class(*), intent(in) :: index(:)
    integer(c_int64_t), allocatable, intent(out) :: chunk(:)
    integer, intent(out), optional :: stat
    character(*), intent(inout), optional :: errmsg
    integer(c_int64_t), allocatable :: i(:), c(:), ashape(:)
    integer(c_int32_t) :: rc
    integer :: d
    logical :: ok
    call to_int64(index, i, ok)
    if (.not. ok) then
      call fail(ZARR_ERR_INVALID_ARG, "index must be an integer(4) or integer(8) array", &
                "zarr_chunk_of", stat, errmsg)
      return
    end if
    allocate(c(size(i)))
    c = 0
    call array_shape(arr, ashape, rc)
    if (rc /= ZARR_OK) then
      call report(rc, "zarr_chunk_of", stat, errmsg)
      chunk = c
      return
    end if
    if (size(i) /= size(ashape)) then
      call fail(ZARR_ERR_RANK_MISMATCH, "index has " // itoa(size(i)) // &
                " entries but the array " // itoa(size(ashape)) // " dimensions", &
                "zarr_chunk_of", stat, errmsg)
      chunk = c
      return
    end if
    do d = 1, size(i)
      if (i(d) < 1 .or. i(d) > ashape(d)) then
        call fail(ZARR_ERR_OUT_OF_BOUNDS, "dimension " // itoa(d) // ": index " // itoa(i(d)) &
                  // " is outside 1 to " // itoa(ashape(d)), "zarr_chunk_of", stat, errmsg)
        chunk = c
        return
      end if
    end do
    call report(c_zarr_array_chunk_of(arr%ptr, size(i, kind=c_size_t), reversed(i - 1), c), &
                "zarr_chunk_of", stat, errmsg)
    chunk = reversed(c) + 1
  end subroutine zarr_chunk_of

  ! Changes the shape (Fortran order); chunks wholly outside it are erased.
  subroutine zarr_resize(arr, shape, stat, errmsg)
    type(zarr_array), intent(in) :: arr
    class(*), intent(in) :: shape(:)
    integer, intent(out), optional :: stat
    character(*), intent(inout), optional :: errmsg
    integer(c_int64_t), allocatable :: s(:)
    logical :: ok
    call to_int64(shape, s, ok)
    if (.not. ok) then
      call fail(ZARR_ERR_INVALID_ARG, "shape must be an integer(4) or integer(8) array", &
                "zarr_resize", stat, errmsg)
      return
    end if
    call report(c_zarr_array_resize(arr%ptr, size(s, kind=c_size_t), reversed(s)), &
                "zarr_resize", stat, errmsg)
  end subroutine zarr_resize

  ! Sets the dimension names, in Fortran order (stored reversed, as xarray reads them).
  subroutine zarr_set_dimension_names(arr, names, stat, errmsg)
    type(zarr_array), intent(in) :: arr
    character(*), intent(in) :: names(:)
    integer, intent(out), optional :: stat
    character(*), intent(inout), optional :: errmsg
    character(kind=c_char), allocatable, target :: chars(:, :)
    type(c_ptr), allocatable :: ptrs(:)
    call c_names(names, chars, ptrs)
    call report(c_zarr_array_set_dimension_names(arr%ptr, size(names, kind=c_size_t), ptrs), &
                "zarr_set_dimension_names", stat, errmsg)
  end subroutine zarr_set_dimension_names

  ! Makes `value` (a real of any kind or an integer) the CF missing value (_FillValue) as
  ! xarray and netCDF read it; a float array takes the nearest value of its type (zarr.h's
  ! zarr_array_set_missing_value).
  subroutine zarr_set_missing_value(arr, value, stat, errmsg)
    type(zarr_array), intent(in) :: arr
    class(*), intent(in) :: value
    integer, intent(out), optional :: stat
    character(*), intent(inout), optional :: errmsg
    real(c_double) :: d
    integer(c_int32_t) :: rc
    character(:), allocatable :: message
    call missing_double(value, d, rc, message)
    if (rc /= ZARR_OK) then
      call fail(rc, message, "zarr_set_missing_value", stat, errmsg)
      return
    end if
    call report(c_zarr_array_set_missing_value(arr%ptr, d), "zarr_set_missing_value", &
                stat, errmsg)
  end subroutine zarr_set_missing_value

  ! The CF missing value, whichever way the store holds it, as a real(8) or real(4) `value`
  ! (converted as Fortran's real()): `is_set` says whether there is one (zarr.h's
  ! zarr_array_missing_value).
  subroutine get_missing_value_r8(arr, value, is_set, stat, errmsg)
    type(zarr_array), intent(in) :: arr
    real(c_double), intent(out) :: value
    logical, intent(out) :: is_set
    integer, intent(out), optional :: stat
    character(*), intent(inout), optional :: errmsg
    logical(c_bool) :: set
    set = .false.
    value = 0
    call report(c_zarr_array_missing_value(arr%ptr, set, value), "zarr_get_missing_value", &
                stat, errmsg)
    is_set = set
  end subroutine get_missing_value_r8

  subroutine get_missing_value_r4(arr, value, is_set, stat, errmsg)
    type(zarr_array), intent(in) :: arr
    real(c_float), intent(out) :: value
    logical, intent(out) :: is_set
    integer, intent(out), optional :: stat
    character(*), intent(inout), optional :: errmsg
    real(c_double) :: d
    call get_missing_value_r8(arr, d, is_set, stat, errmsg)
    value = real(d, c_float)
  end subroutine get_missing_value_r4

  ! ---- regions --------------------------------------------------------------------------

  ! Start indices and extents of a region in Fortran order, 1-based: `count` (default
  ! `dshape`, the data's shape) and `start` (default all 1s) as 64-bit integers, checked
  ! against the array's rank and shape here so that a refusal names dimensions and indices
  ! as the caller gave them (rc is ZARR_OK or the failure, `message` says why).
  subroutine region_args(arr, dshape, start, count, first, extents, rc, message)
    type(zarr_array), intent(in) :: arr
    integer(c_int64_t), intent(in) :: dshape(:)
    class(*), intent(in), optional :: start(:), count(:)
    integer(c_int64_t), allocatable, intent(out) :: first(:), extents(:)
    integer(c_int32_t), intent(out) :: rc
    character(:), allocatable, intent(out) :: message
    integer(c_int64_t), allocatable :: ashape(:)
    logical :: ok
    ok = .true.
    extents = dshape
    if (present(count)) call to_int64(count, extents, ok)
    if (ok .and. present(start)) then
      call to_int64(start, first, ok)
    else if (ok) then
      allocate(first(size(extents)))
      first = 1
    end if
    message = ""
    rc = ZARR_OK
    if (.not. ok) then
      rc = ZARR_ERR_INVALID_ARG
      message = "start and count must be integer(4) or integer(8) arrays"
      return
    end if
    if (size(first) /= size(extents)) then
      rc = ZARR_ERR_RANK_MISMATCH
      message = "start has " // itoa(size(first)) // " indices but count (or the data) " // &
                itoa(size(extents)) // " extents"
      return
    end if
    call array_shape(arr, ashape, rc)
    if (rc /= ZARR_OK) then
      message = zarr_last_error()
      return
    end if
    call check_region(ashape, first, extents, rc, message)
  end subroutine region_args

  ! Checks a region (Fortran order, 1-based) against an array's Fortran-order shape.
  subroutine check_region(ashape, first, extents, rc, message)
    integer(c_int64_t), intent(in) :: ashape(:), first(:), extents(:)
    integer(c_int32_t), intent(out) :: rc
    character(:), allocatable, intent(out) :: message
    integer :: d
    rc = ZARR_OK
    message = ""
    if (size(first) /= size(ashape)) then
      rc = ZARR_ERR_RANK_MISMATCH
      message = "the region has " // itoa(size(first)) // " dimensions but the array " // &
                itoa(size(ashape))
      return
    end if
    do d = 1, size(first)
      if (first(d) < 1) then
        rc = ZARR_ERR_OUT_OF_BOUNDS
        message = "dimension " // itoa(d) // ": start " // itoa(first(d)) // &
                  " is below 1 (start indices are 1-based)"
      else if (extents(d) < 0) then
        rc = ZARR_ERR_INVALID_ARG
        message = "dimension " // itoa(d) // ": count " // itoa(extents(d)) // " is negative"
      else if (extents(d) > ashape(d) - (first(d) - 1)) then
        rc = ZARR_ERR_OUT_OF_BOUNDS
        message = "dimension " // itoa(d) // ": start " // itoa(first(d)) // " + count " // &
                  itoa(extents(d)) // " - 1 is beyond the extent " // itoa(ashape(d))
      end if
      if (rc /= ZARR_OK) return
    end do
  end subroutine check_region

  ! The array's shape in Fortran order.
  subroutine array_shape(arr, ashape, rc)
    type(zarr_array), intent(in) :: arr
    integer(c_int64_t), allocatable, intent(out) :: ashape(:)
    integer(c_int32_t), intent(out) :: rc
    integer(c_size_t) :: n
    integer(c_int64_t), allocatable :: c(:)
    rc = c_zarr_array_rank(arr%ptr, n)
    ! The rank is an intent(out) argument: unset when the call fails.
    if (rc /= ZARR_OK) n = 0
    allocate(c(n))
    if (rc == ZARR_OK) rc = c_zarr_array_shape(arr%ptr, n, c)
    ashape = reversed(c)
  end subroutine array_shape

  ! The decimal text of an integer.
  function itoa(i) result(s)
    class(*), intent(in) :: i
    character(:), allocatable :: s
    character(24) :: buf
    select type (i)
    type is (integer(c_int32_t))
      write (buf, "(i0)") i
    type is (integer(c_int64_t))
      write (buf, "(i0)") i
    class default
      buf = "?"
    end select
    s = trim(buf)
  end function itoa

  ! The C region call behind zarr_read and zarr_write: `dshape` is the data's shape, `buf`
  ! its address and `nbytes` its size. The region is checked here first (region_args).
  subroutine region(arr, writing, buf, nbytes, dtype, dshape, start, count, stat, errmsg)
    type(zarr_array), intent(in) :: arr
    logical, intent(in) :: writing
    type(c_ptr), intent(in) :: buf
    integer(c_size_t), intent(in) :: nbytes
    integer(c_int32_t), intent(in) :: dtype
    integer(c_int64_t), intent(in) :: dshape(:)
    class(*), intent(in), optional :: start(:), count(:)
    integer, intent(out), optional :: stat
    character(*), intent(inout), optional :: errmsg
    integer(c_int64_t), allocatable :: first(:), extents(:)
    character(:), allocatable :: what, message
    integer(c_int32_t) :: rc
    what = merge("zarr_write", "zarr_read ", writing)
    what = trim(what)
    call region_args(arr, dshape, start, count, first, extents, rc, message)
    if (rc /= ZARR_OK) then
      call fail(rc, message, what, stat, errmsg)
    else if (writing) then
      call report(c_zarr_array_write_from(arr%ptr, size(first, kind=c_size_t), &
                                          reversed(first - 1), reversed(extents), dtype, &
                                          ZARR_ORDER_C, buf, nbytes), &
                  what, stat, errmsg)
    else
      call report(c_zarr_array_read_as(arr%ptr, size(first, kind=c_size_t), &
                                       reversed(first - 1), reversed(extents), dtype, &
                                       ZARR_ORDER_C, buf, nbytes), &
                  what, stat, errmsg)
    end if
  end subroutine region

  ! The memory type: `natural`, or dtype= if given. A dtype of another element size gives -1,
  ! which libzarr refuses (ZARR_ERR_INVALID_ARG) before touching the data.
  function memory_dtype(natural, dtype) result(d)
    integer(c_int32_t), intent(in) :: natural
    integer, intent(in), optional :: dtype
    integer(c_int32_t) :: d
    d = natural
    if (present(dtype)) then
      d = int(dtype, c_int32_t)
      if (c_zarr_dtype_size(d) /= c_zarr_dtype_size(natural)) d = -1
    end if
  end function memory_dtype

  ! Writes `data` (any type, any rank) as elements of `dtype`.
  subroutine put(arr, data, dtype, dshape, start, count, stat, errmsg)
    type(zarr_array), intent(in) :: arr
    type(*), intent(in), target, contiguous :: data(..)
    integer(c_int32_t), intent(in) :: dtype
    integer(c_int64_t), intent(in) :: dshape(:)
    class(*), intent(in), optional :: start(:), count(:)
    integer, intent(out), optional :: stat
    character(*), intent(inout), optional :: errmsg
    type(c_ptr) :: buf
    buf = c_null_ptr  ! zero elements: NULL, as libzarr allows
    if (size(data) > 0) buf = c_loc(data)
    call region(arr, .true., buf, size(data, kind=c_size_t) * c_zarr_dtype_size(dtype), dtype, &
                dshape, start, count, stat, errmsg)
  end subroutine put

  ! Reads into `data` (any type, any rank) as elements of `dtype`.
  subroutine get(arr, data, dtype, dshape, start, count, stat, errmsg)
    type(zarr_array), intent(in) :: arr
    type(*), intent(inout), target, contiguous :: data(..)
    integer(c_int32_t), intent(in) :: dtype
    integer(c_int64_t), intent(in) :: dshape(:)
    class(*), intent(in), optional :: start(:), count(:)
    integer, intent(out), optional :: stat
    character(*), intent(inout), optional :: errmsg
    type(c_ptr) :: buf
    buf = c_null_ptr
    if (size(data) > 0) buf = c_loc(data)
    call region(arr, .false., buf, size(data, kind=c_size_t) * c_zarr_dtype_size(dtype), dtype, &
                dshape, start, count, stat, errmsg)
  end subroutine get

  ! One zarr_write and one zarr_read per element type; each passes its data on unchanged.
  subroutine write_i1(arr, data, start, stat, errmsg, count, dtype)
    type(zarr_array), intent(in) :: arr
    integer(c_int8_t), intent(in), target, contiguous :: data(..)
    class(*), intent(in), optional :: start(:), count(:)
    integer, intent(out), optional :: stat
    character(*), intent(inout), optional :: errmsg
    integer, intent(in), optional :: dtype
    call put(arr, data, memory_dtype(ZARR_DTYPE_INT8, dtype), shape(data, kind=c_int64_t), &
             start, count, stat, errmsg)
  end subroutine write_i1

  subroutine write_i2(arr, data, start, stat, errmsg, count, dtype)
    type(zarr_array), intent(in) :: arr
    integer(c_int16_t), intent(in), target, contiguous :: data(..)
    class(*), intent(in), optional :: start(:), count(:)
    integer, intent(out), optional :: stat
    character(*), intent(inout), optional :: errmsg
    integer, intent(in), optional :: dtype
    call put(arr, data, memory_dtype(ZARR_DTYPE_INT16, dtype), shape(data, kind=c_int64_t), &
             start, count, stat, errmsg)
  end subroutine write_i2

  subroutine write_i4(arr, data, start, stat, errmsg, count, dtype)
    type(zarr_array), intent(in) :: arr
    integer(c_int32_t), intent(in), target, contiguous :: data(..)
    class(*), intent(in), optional :: start(:), count(:)
    integer, intent(out), optional :: stat
    character(*), intent(inout), optional :: errmsg
    integer, intent(in), optional :: dtype
    call put(arr, data, memory_dtype(ZARR_DTYPE_INT32, dtype), shape(data, kind=c_int64_t), &
             start, count, stat, errmsg)
  end subroutine write_i4

  subroutine write_i8(arr, data, start, stat, errmsg, count, dtype)
    type(zarr_array), intent(in) :: arr
    integer(c_int64_t), intent(in), target, contiguous :: data(..)
    class(*), intent(in), optional :: start(:), count(:)
    integer, intent(out), optional :: stat
    character(*), intent(inout), optional :: errmsg
    integer, intent(in), optional :: dtype
    call put(arr, data, memory_dtype(ZARR_DTYPE_INT64, dtype), shape(data, kind=c_int64_t), &
             start, count, stat, errmsg)
  end subroutine write_i8

  subroutine write_r4(arr, data, start, stat, errmsg, count, dtype)
    type(zarr_array), intent(in) :: arr
    real(c_float), intent(in), target, contiguous :: data(..)
    class(*), intent(in), optional :: start(:), count(:)
    integer, intent(out), optional :: stat
    character(*), intent(inout), optional :: errmsg
    integer, intent(in), optional :: dtype
    call put(arr, data, memory_dtype(ZARR_DTYPE_FLOAT32, dtype), shape(data, kind=c_int64_t), &
             start, count, stat, errmsg)
  end subroutine write_r4

  subroutine write_r8(arr, data, start, stat, errmsg, count, dtype)
    type(zarr_array), intent(in) :: arr
    real(c_double), intent(in), target, contiguous :: data(..)
    class(*), intent(in), optional :: start(:), count(:)
    integer, intent(out), optional :: stat
    character(*), intent(inout), optional :: errmsg
    integer, intent(in), optional :: dtype
    call put(arr, data, memory_dtype(ZARR_DTYPE_FLOAT64, dtype), shape(data, kind=c_int64_t), &
             start, count, stat, errmsg)
  end subroutine write_r8

  subroutine write_c4(arr, data, start, stat, errmsg, count, dtype)
    type(zarr_array), intent(in) :: arr
    complex(c_float_complex), intent(in), target, contiguous :: data(..)
    class(*), intent(in), optional :: start(:), count(:)
    integer, intent(out), optional :: stat
    character(*), intent(inout), optional :: errmsg
    integer, intent(in), optional :: dtype
    call put(arr, data, memory_dtype(ZARR_DTYPE_COMPLEX64, dtype), shape(data, kind=c_int64_t), &
             start, count, stat, errmsg)
  end subroutine write_c4

  subroutine write_c8(arr, data, start, stat, errmsg, count, dtype)
    type(zarr_array), intent(in) :: arr
    complex(c_double_complex), intent(in), target, contiguous :: data(..)
    class(*), intent(in), optional :: start(:), count(:)
    integer, intent(out), optional :: stat
    character(*), intent(inout), optional :: errmsg
    integer, intent(in), optional :: dtype
    call put(arr, data, memory_dtype(ZARR_DTYPE_COMPLEX128, dtype), shape(data, kind=c_int64_t), &
             start, count, stat, errmsg)
  end subroutine write_c8

  ! Logical data goes through a 1-byte copy (ZARR_DTYPE_BOOL is 0 or 1 in one byte).
  subroutine write_l(arr, data, start, stat, errmsg, count, dtype)
    type(zarr_array), intent(in) :: arr
    logical, intent(in), target, contiguous :: data(..)
    class(*), intent(in), optional :: start(:), count(:)
    integer, intent(out), optional :: stat
    character(*), intent(inout), optional :: errmsg
    integer, intent(in), optional :: dtype
    logical, pointer :: flat(:)
    integer(c_int8_t), allocatable :: bytes(:)
    allocate(bytes(size(data)))
    if (size(data) > 0) then
      call c_f_pointer(c_loc(data), flat, [size(data)])
      bytes = merge(1_c_int8_t, 0_c_int8_t, flat)
    end if
    call put(arr, bytes, memory_dtype(ZARR_DTYPE_BOOL, dtype), shape(data, kind=c_int64_t), &
             start, count, stat, errmsg)
  end subroutine write_l

  subroutine read_i1(arr, data, start, stat, errmsg, count, dtype)
    type(zarr_array), intent(in) :: arr
    integer(c_int8_t), intent(inout), target, contiguous :: data(..)
    class(*), intent(in), optional :: start(:), count(:)
    integer, intent(out), optional :: stat
    character(*), intent(inout), optional :: errmsg
    integer, intent(in), optional :: dtype
    call get(arr, data, memory_dtype(ZARR_DTYPE_INT8, dtype), shape(data, kind=c_int64_t), &
             start, count, stat, errmsg)
  end subroutine read_i1

  subroutine read_i2(arr, data, start, stat, errmsg, count, dtype)
    type(zarr_array), intent(in) :: arr
    integer(c_int16_t), intent(inout), target, contiguous :: data(..)
    class(*), intent(in), optional :: start(:), count(:)
    integer, intent(out), optional :: stat
    character(*), intent(inout), optional :: errmsg
    integer, intent(in), optional :: dtype
    call get(arr, data, memory_dtype(ZARR_DTYPE_INT16, dtype), shape(data, kind=c_int64_t), &
             start, count, stat, errmsg)
  end subroutine read_i2

  subroutine read_i4(arr, data, start, stat, errmsg, count, dtype)
    type(zarr_array), intent(in) :: arr
    integer(c_int32_t), intent(inout), target, contiguous :: data(..)
    class(*), intent(in), optional :: start(:), count(:)
    integer, intent(out), optional :: stat
    character(*), intent(inout), optional :: errmsg
    integer, intent(in), optional :: dtype
    call get(arr, data, memory_dtype(ZARR_DTYPE_INT32, dtype), shape(data, kind=c_int64_t), &
             start, count, stat, errmsg)
  end subroutine read_i4

  subroutine read_i8(arr, data, start, stat, errmsg, count, dtype)
    type(zarr_array), intent(in) :: arr
    integer(c_int64_t), intent(inout), target, contiguous :: data(..)
    class(*), intent(in), optional :: start(:), count(:)
    integer, intent(out), optional :: stat
    character(*), intent(inout), optional :: errmsg
    integer, intent(in), optional :: dtype
    call get(arr, data, memory_dtype(ZARR_DTYPE_INT64, dtype), shape(data, kind=c_int64_t), &
             start, count, stat, errmsg)
  end subroutine read_i8

  subroutine read_r4(arr, data, start, stat, errmsg, count, dtype)
    type(zarr_array), intent(in) :: arr
    real(c_float), intent(inout), target, contiguous :: data(..)
    class(*), intent(in), optional :: start(:), count(:)
    integer, intent(out), optional :: stat
    character(*), intent(inout), optional :: errmsg
    integer, intent(in), optional :: dtype
    call get(arr, data, memory_dtype(ZARR_DTYPE_FLOAT32, dtype), shape(data, kind=c_int64_t), &
             start, count, stat, errmsg)
  end subroutine read_r4

  subroutine read_r8(arr, data, start, stat, errmsg, count, dtype)
    type(zarr_array), intent(in) :: arr
    real(c_double), intent(inout), target, contiguous :: data(..)
    class(*), intent(in), optional :: start(:), count(:)
    integer, intent(out), optional :: stat
    character(*), intent(inout), optional :: errmsg
    integer, intent(in), optional :: dtype
    call get(arr, data, memory_dtype(ZARR_DTYPE_FLOAT64, dtype), shape(data, kind=c_int64_t), &
             start, count, stat, errmsg)
  end subroutine read_r8

  subroutine read_c4(arr, data, start, stat, errmsg, count, dtype)
    type(zarr_array), intent(in) :: arr
    complex(c_float_complex), intent(inout), target, contiguous :: data(..)
    class(*), intent(in), optional :: start(:), count(:)
    integer, intent(out), optional :: stat
    character(*), intent(inout), optional :: errmsg
    integer, intent(in), optional :: dtype
    call get(arr, data, memory_dtype(ZARR_DTYPE_COMPLEX64, dtype), shape(data, kind=c_int64_t), &
             start, count, stat, errmsg)
  end subroutine read_c4

  subroutine read_c8(arr, data, start, stat, errmsg, count, dtype)
    type(zarr_array), intent(in) :: arr
    complex(c_double_complex), intent(inout), target, contiguous :: data(..)
    class(*), intent(in), optional :: start(:), count(:)
    integer, intent(out), optional :: stat
    character(*), intent(inout), optional :: errmsg
    integer, intent(in), optional :: dtype
    call get(arr, data, memory_dtype(ZARR_DTYPE_COMPLEX128, dtype), shape(data, kind=c_int64_t), &
             start, count, stat, errmsg)
  end subroutine read_c8

  subroutine read_l(arr, data, start, stat, errmsg, count, dtype)
    type(zarr_array), intent(in) :: arr
    logical, intent(inout), target, contiguous :: data(..)
    class(*), intent(in), optional :: start(:), count(:)
    integer, intent(out), optional :: stat
    character(*), intent(inout), optional :: errmsg
    integer, intent(in), optional :: dtype
    logical, pointer :: flat(:)
    integer(c_int8_t), allocatable :: bytes(:)
    allocate(bytes(size(data)))
    call get(arr, bytes, memory_dtype(ZARR_DTYPE_BOOL, dtype), shape(data, kind=c_int64_t), &
             start, count, stat, errmsg)
    if (present(stat)) then
      if (stat /= ZARR_OK) return  ! (without stat, a failure has stopped the program)
    end if
    if (size(data) > 0) then
      call c_f_pointer(c_loc(data), flat, [size(data)])
      flat = bytes /= 0
    end if
  end subroutine read_l

  ! ---- groups ---------------------------------------------------------------------------

  ! Opens or creates a group ("" is the root); modes as zarr_group_open: ZARR_MODE_R opens,
  ! ZARR_MODE_W_MINUS creates (refusing an existing node), ZARR_MODE_A requires (opens, or
  ! creates what is missing). With zarr_format, a group that has to be created gets that
  ! format (2 or 3). With consolidated=.true., the group opens through its consolidated
  ! metadata (zarr_consolidate; ZARR_ERR_NOT_FOUND without).
  subroutine open_group_in_store(group, store, path, mode, zarr_format, stat, errmsg, &
                                 consolidated)
    type(zarr_group), intent(out) :: group
    type(zarr_store), intent(in) :: store
    character(*), intent(in) :: path
    integer, intent(in) :: mode
    integer, intent(in), optional :: zarr_format
    integer, intent(out), optional :: stat
    character(*), intent(inout), optional :: errmsg
    logical, intent(in), optional :: consolidated
    integer(c_int32_t) :: rc
    logical :: through_consolidated
    through_consolidated = .false.
    if (present(consolidated)) through_consolidated = consolidated
    if (through_consolidated) then
      rc = c_zarr_group_open_consolidated(store%ptr, c_str(path), int(mode, c_int32_t), &
                                          group%ptr)
    else if (present(zarr_format)) then
      rc = c_zarr_group_create(store%ptr, c_str(path), int(mode, c_int32_t), &
                               int(zarr_format, c_int32_t), group%ptr)
    else
      rc = c_zarr_group_open(store%ptr, c_str(path), int(mode, c_int32_t), group%ptr)
    end if
    call report(rc, "zarr_open_group", stat, errmsg)
  end subroutine open_group_in_store

  ! Opens or creates the group at `path` below `parent`.
  subroutine open_group_in_group(group, parent, path, mode, stat, errmsg)
    type(zarr_group), intent(out) :: group
    type(zarr_group), intent(in) :: parent
    character(*), intent(in) :: path
    integer, intent(in) :: mode
    integer, intent(out), optional :: stat
    character(*), intent(inout), optional :: errmsg
    call report(c_zarr_group_open_group(parent%ptr, c_str(path), int(mode, c_int32_t), &
                                        group%ptr), "zarr_open_group", stat, errmsg)
  end subroutine open_group_in_group

  ! What is at `path`: ZARR_NODE_NONE, ZARR_NODE_ARRAY or ZARR_NODE_GROUP.
  subroutine node_kind_in_store(store, path, kind, stat, errmsg)
    type(zarr_store), intent(in) :: store
    character(*), intent(in) :: path
    integer, intent(out) :: kind
    integer, intent(out), optional :: stat
    character(*), intent(inout), optional :: errmsg
    integer(c_int32_t) :: k
    k = ZARR_NODE_NONE
    call report(c_zarr_node_kind_at(store%ptr, c_str(path), k), "zarr_node_kind", stat, errmsg)
    kind = k
  end subroutine node_kind_in_store

  subroutine node_kind_in_group(group, path, kind, stat, errmsg)
    type(zarr_group), intent(in) :: group
    character(*), intent(in) :: path
    integer, intent(out) :: kind
    integer, intent(out), optional :: stat
    character(*), intent(inout), optional :: errmsg
    integer(c_int32_t) :: k
    k = ZARR_NODE_NONE
    call report(c_zarr_group_contains(group%ptr, c_str(path), k), "zarr_node_kind", stat, errmsg)
    kind = k
  end subroutine node_kind_in_group

  ! The sorted names of the group's direct members of `kind` (default ZARR_NODE_NONE: all),
  ! as an array of strings as long as the longest name.
  subroutine zarr_members(group, names, kind, stat, errmsg)
    type(zarr_group), intent(in) :: group
    character(:), allocatable, intent(out) :: names(:)
    integer, intent(in), optional :: kind
    integer, intent(out), optional :: stat
    character(*), intent(inout), optional :: errmsg
    type(c_ptr) :: list, item
    integer(c_int32_t) :: k, rc
    integer :: i, n, longest
    k = ZARR_NODE_NONE
    if (present(kind)) k = int(kind, c_int32_t)
    rc = c_zarr_group_members(group%ptr, k, list)
    n = int(c_zarr_strings_count(list))  ! 0 for NULL
    longest = 0
    do i = 1, n
      item = c_zarr_strings_get(list, int(i - 1, c_size_t))
      longest = max(longest, int(c_strlen(item)))
    end do
    allocate(character(longest) :: names(n))
    do i = 1, n
      item = c_zarr_strings_get(list, int(i - 1, c_size_t))
      names(i) = string_at(item)
    end do
    call c_zarr_strings_free(list)
    call report(rc, "zarr_members", stat, errmsg)
  end subroutine zarr_members

  ! ---- attributes -----------------------------------------------------------------------

  ! All attributes of an array or group as one JSON object.
  subroutine zarr_get_attrs(node, json, stat, errmsg)
    class(zarr_node), intent(in) :: node
    character(:), allocatable, intent(out) :: json
    integer, intent(out), optional :: stat
    character(*), intent(inout), optional :: errmsg
    integer(c_int32_t) :: rc
    select type (node)
    type is (zarr_array)
      call text_output(TEXT_ARRAY_ATTRS, node%ptr, "", json, rc)
    class default
      call text_output(TEXT_GROUP_ATTRS, node%ptr, "", json, rc)
    end select
    call report(rc, "zarr_get_attrs", stat, errmsg)
  end subroutine zarr_get_attrs

  ! Replaces all attributes with the JSON object `json`.
  subroutine zarr_set_attrs(node, json, stat, errmsg)
    class(zarr_node), intent(in) :: node
    character(*), intent(in) :: json
    integer, intent(out), optional :: stat
    character(*), intent(inout), optional :: errmsg
    integer(c_int32_t) :: rc
    select type (node)
    type is (zarr_array)
      rc = c_zarr_array_attrs_set(node%ptr, json // c_null_char)
    class default
      rc = c_zarr_group_attrs_set(node%ptr, json // c_null_char)
    end select
    call report(rc, "zarr_set_attrs", stat, errmsg)
  end subroutine zarr_set_attrs

  ! zarr_get_attr with character data: the JSON value of attribute `key`; ZARR_ERR_NOT_FOUND
  ! if absent.
  subroutine get_attr_json(node, key, json, stat, errmsg)
    class(zarr_node), intent(in) :: node
    character(*), intent(in) :: key
    character(:), allocatable, intent(out) :: json
    integer, intent(out), optional :: stat
    character(*), intent(inout), optional :: errmsg
    integer(c_int32_t) :: rc
    select type (node)
    type is (zarr_array)
      call text_output(TEXT_ARRAY_ATTR, node%ptr, key, json, rc)
    class default
      call text_output(TEXT_GROUP_ATTR, node%ptr, key, json, rc)
    end select
    call report(rc, "zarr_get_attr", stat, errmsg)
  end subroutine get_attr_json

  ! The string attribute `key` holds; ZARR_ERR_DTYPE_MISMATCH if it is not a string.
  subroutine zarr_get_attr_string(node, key, value, stat, errmsg)
    class(zarr_node), intent(in) :: node
    character(*), intent(in) :: key
    character(:), allocatable, intent(out) :: value
    integer, intent(out), optional :: stat
    character(*), intent(inout), optional :: errmsg
    integer(c_int32_t) :: rc
    select type (node)
    type is (zarr_array)
      call text_output(TEXT_ARRAY_STRING, node%ptr, key, value, rc)
    class default
      call text_output(TEXT_GROUP_STRING, node%ptr, key, value, rc)
    end select
    call report(rc, "zarr_get_attr_string", stat, errmsg)
  end subroutine zarr_get_attr_string

  ! Sets attribute `key` to the JSON value `json`, keeping the others.
  subroutine zarr_set_attr_json(node, key, json, stat, errmsg)
    class(zarr_node), intent(in) :: node
    character(*), intent(in) :: key, json
    integer, intent(out), optional :: stat
    character(*), intent(inout), optional :: errmsg
    integer(c_int32_t) :: rc
    select type (node)
    type is (zarr_array)
      rc = c_zarr_array_attr_set(node%ptr, c_str(key), json // c_null_char)
    class default
      rc = c_zarr_group_attr_set(node%ptr, c_str(key), json // c_null_char)
    end select
    call report(rc, "zarr_set_attr", stat, errmsg)
  end subroutine zarr_set_attr_json

  ! Deletes attribute `key`; ZARR_ERR_NOT_FOUND if absent.
  subroutine zarr_delete_attr(node, key, stat, errmsg)
    class(zarr_node), intent(in) :: node
    character(*), intent(in) :: key
    integer, intent(out), optional :: stat
    character(*), intent(inout), optional :: errmsg
    integer(c_int32_t) :: rc
    select type (node)
    type is (zarr_array)
      rc = c_zarr_array_attr_delete(node%ptr, c_str(key))
    class default
      rc = c_zarr_group_attr_delete(node%ptr, c_str(key))
    end select
    call report(rc, "zarr_delete_attr", stat, errmsg)
  end subroutine zarr_delete_attr

  ! Sets attribute `key` to `n` numbers of `dtype` at `values`: one number when `scalar`,
  ! else a list. libzarr writes the JSON (a real(4) as the shortest decimal that reads back
  ! as the same real(4)).
  subroutine set_numbers(node, key, dtype, values, n, scalar, stat, errmsg)
    class(zarr_node), intent(in) :: node
    character(*), intent(in) :: key
    integer(c_int32_t), intent(in) :: dtype
    type(c_ptr), intent(in) :: values
    integer(c_size_t), intent(in) :: n
    logical, intent(in) :: scalar
    integer, intent(out), optional :: stat
    character(*), intent(inout), optional :: errmsg
    integer(c_int32_t) :: rc
    select type (node)
    type is (zarr_array)
      if (scalar) then
        rc = c_zarr_array_attr_set_number(node%ptr, c_str(key), dtype, values)
      else
        rc = c_zarr_array_attr_set_numbers(node%ptr, c_str(key), dtype, values, n)
      end if
    class default
      if (scalar) then
        rc = c_zarr_group_attr_set_number(node%ptr, c_str(key), dtype, values)
      else
        rc = c_zarr_group_attr_set_numbers(node%ptr, c_str(key), dtype, values, n)
      end if
    end select
    call report(rc, "zarr_set_attr", stat, errmsg)
  end subroutine set_numbers

  ! The C call storing attribute `key`'s numbers as `dtype` (room for `len`; `n` gets
  ! their count), or its one number when `scalar`.
  function numbers_call(node, key, dtype, values, len, n, scalar) result(rc)
    class(zarr_node), intent(in) :: node
    character(*), intent(in) :: key
    integer(c_int32_t), intent(in) :: dtype
    type(c_ptr), intent(in) :: values
    integer(c_size_t), intent(in) :: len
    integer(c_size_t), intent(out) :: n
    logical, intent(in) :: scalar
    integer(c_int32_t) :: rc
    n = 1
    select type (node)
    type is (zarr_array)
      if (scalar) then
        rc = c_zarr_array_attr_get_number(node%ptr, c_str(key), dtype, values)
      else
        rc = c_zarr_array_attr_get_numbers(node%ptr, c_str(key), dtype, values, len, n)
      end if
    class default
      if (scalar) then
        rc = c_zarr_group_attr_get_number(node%ptr, c_str(key), dtype, values)
      else
        rc = c_zarr_group_attr_get_numbers(node%ptr, c_str(key), dtype, values, len, n)
      end if
    end select
  end function numbers_call

  ! zarr_set_attr: a string, or a number or rank-1 array of integer(4/8) or real(4/8).
  subroutine set_attr_string(node, key, value, stat, errmsg)
    class(zarr_node), intent(in) :: node
    character(*), intent(in) :: key, value
    integer, intent(out), optional :: stat
    character(*), intent(inout), optional :: errmsg
    integer(c_int32_t) :: rc
    select type (node)
    type is (zarr_array)
      rc = c_zarr_array_attr_set_string(node%ptr, c_str(key), value // c_null_char)
    class default
      rc = c_zarr_group_attr_set_string(node%ptr, c_str(key), value // c_null_char)
    end select
    call report(rc, "zarr_set_attr", stat, errmsg)
  end subroutine set_attr_string

  subroutine set_attr_i4(node, key, value, stat, errmsg)
    class(zarr_node), intent(in) :: node
    character(*), intent(in) :: key
    integer(c_int32_t), intent(in), target :: value
    integer, intent(out), optional :: stat
    character(*), intent(inout), optional :: errmsg
    call set_numbers(node, key, ZARR_DTYPE_INT32, c_loc(value), 1_c_size_t, .true., stat, errmsg)
  end subroutine set_attr_i4

  subroutine set_attr_i4s(node, key, values, stat, errmsg)
    class(zarr_node), intent(in) :: node
    character(*), intent(in) :: key
    integer(c_int32_t), intent(in), target, contiguous :: values(:)
    integer, intent(out), optional :: stat
    character(*), intent(inout), optional :: errmsg
    type(c_ptr) :: p
    p = c_null_ptr
    if (size(values) > 0) p = c_loc(values)
    call set_numbers(node, key, ZARR_DTYPE_INT32, p, size(values, kind=c_size_t), .false., stat, errmsg)
  end subroutine set_attr_i4s

  subroutine set_attr_i8(node, key, value, stat, errmsg)
    class(zarr_node), intent(in) :: node
    character(*), intent(in) :: key
    integer(c_int64_t), intent(in), target :: value
    integer, intent(out), optional :: stat
    character(*), intent(inout), optional :: errmsg
    call set_numbers(node, key, ZARR_DTYPE_INT64, c_loc(value), 1_c_size_t, .true., stat, errmsg)
  end subroutine set_attr_i8

  subroutine set_attr_i8s(node, key, values, stat, errmsg)
    class(zarr_node), intent(in) :: node
    character(*), intent(in) :: key
    integer(c_int64_t), intent(in), target, contiguous :: values(:)
    integer, intent(out), optional :: stat
    character(*), intent(inout), optional :: errmsg
    type(c_ptr) :: p
    p = c_null_ptr
    if (size(values) > 0) p = c_loc(values)
    call set_numbers(node, key, ZARR_DTYPE_INT64, p, size(values, kind=c_size_t), .false., stat, errmsg)
  end subroutine set_attr_i8s

  subroutine set_attr_r4(node, key, value, stat, errmsg)
    class(zarr_node), intent(in) :: node
    character(*), intent(in) :: key
    real(c_float), intent(in), target :: value
    integer, intent(out), optional :: stat
    character(*), intent(inout), optional :: errmsg
    call set_numbers(node, key, ZARR_DTYPE_FLOAT32, c_loc(value), 1_c_size_t, .true., stat, errmsg)
  end subroutine set_attr_r4

  subroutine set_attr_r4s(node, key, values, stat, errmsg)
    class(zarr_node), intent(in) :: node
    character(*), intent(in) :: key
    real(c_float), intent(in), target, contiguous :: values(:)
    integer, intent(out), optional :: stat
    character(*), intent(inout), optional :: errmsg
    type(c_ptr) :: p
    p = c_null_ptr
    if (size(values) > 0) p = c_loc(values)
    call set_numbers(node, key, ZARR_DTYPE_FLOAT32, p, size(values, kind=c_size_t), .false., stat, errmsg)
  end subroutine set_attr_r4s

  subroutine set_attr_r8(node, key, value, stat, errmsg)
    class(zarr_node), intent(in) :: node
    character(*), intent(in) :: key
    real(c_double), intent(in), target :: value
    integer, intent(out), optional :: stat
    character(*), intent(inout), optional :: errmsg
    call set_numbers(node, key, ZARR_DTYPE_FLOAT64, c_loc(value), 1_c_size_t, .true., stat, errmsg)
  end subroutine set_attr_r8

  subroutine set_attr_r8s(node, key, values, stat, errmsg)
    class(zarr_node), intent(in) :: node
    character(*), intent(in) :: key
    real(c_double), intent(in), target, contiguous :: values(:)
    integer, intent(out), optional :: stat
    character(*), intent(inout), optional :: errmsg
    type(c_ptr) :: p
    p = c_null_ptr
    if (size(values) > 0) p = c_loc(values)
    call set_numbers(node, key, ZARR_DTYPE_FLOAT64, p, size(values, kind=c_size_t), .false., stat, errmsg)
  end subroutine set_attr_r8s

  ! A rank-1 character array as a list of strings, each without its trailing blanks.
  subroutine set_attr_strings(node, key, values, stat, errmsg)
    class(zarr_node), intent(in) :: node
    character(*), intent(in) :: key
    character(*), intent(in) :: values(:)
    integer, intent(out), optional :: stat
    character(*), intent(inout), optional :: errmsg
    character(kind=c_char), allocatable, target :: chars(:, :)
    type(c_ptr), allocatable :: ptrs(:)
    integer(c_int32_t) :: rc
    integer :: i, j, n
    n = size(values)
    allocate(chars(len(values) + 1, n), ptrs(n))
    do i = 1, n
      chars(:, i) = c_null_char
      do j = 1, len_trim(values(i))
        chars(j, i) = values(i)(j:j)
      end do
      ptrs(i) = c_loc(chars(1, i))
    end do
    select type (node)
    type is (zarr_array)
      rc = c_zarr_array_attr_set_strings(node%ptr, c_str(key), ptrs, int(n, c_size_t))
    class default
      rc = c_zarr_group_attr_set_strings(node%ptr, c_str(key), ptrs, int(n, c_size_t))
    end select
    call report(rc, "zarr_set_attr", stat, errmsg)
  end subroutine set_attr_strings

  ! zarr_get_attr with an allocatable rank-1 character array: the list of strings attribute
  ! `key` holds, each padded to the longest.
  subroutine get_attr_strings(node, key, values, stat, errmsg)
    class(zarr_node), intent(in) :: node
    character(*), intent(in) :: key
    character(:), allocatable, intent(out) :: values(:)
    integer, intent(out), optional :: stat
    character(*), intent(inout), optional :: errmsg
    type(c_ptr) :: list, item
    integer(c_int32_t) :: rc
    integer :: i, n, longest
    select type (node)
    type is (zarr_array)
      rc = c_zarr_array_attr_get_strings(node%ptr, c_str(key), list)
    class default
      rc = c_zarr_group_attr_get_strings(node%ptr, c_str(key), list)
    end select
    n = int(c_zarr_strings_count(list))  ! 0 for NULL
    longest = 0
    do i = 1, n
      item = c_zarr_strings_get(list, int(i - 1, c_size_t))
      longest = max(longest, int(c_strlen(item)))
    end do
    allocate(character(longest) :: values(n))
    do i = 1, n
      item = c_zarr_strings_get(list, int(i - 1, c_size_t))
      values(i) = string_at(item)
    end do
    call c_zarr_strings_free(list)
    call report(rc, "zarr_get_attr", stat, errmsg)
  end subroutine get_attr_strings

  ! zarr_get_attr with integer(4/8) or real(4/8) data: the number, or (an allocatable rank-1
  ! array) the list of numbers, attribute `key` holds. ZARR_ERR_DTYPE_MISMATCH when it holds
  ! something else (a float read as an integer), ZARR_ERR_RANGE when it does not fit.

  subroutine get_attr_i4(node, key, value, stat, errmsg)
    class(zarr_node), intent(in) :: node
    character(*), intent(in) :: key
    integer(c_int32_t), intent(out), target :: value
    integer, intent(out), optional :: stat
    character(*), intent(inout), optional :: errmsg
    integer(c_size_t) :: n
    value = 0
    call report(numbers_call(node, key, ZARR_DTYPE_INT32, c_loc(value), 1_c_size_t, n, .true.), &
                "zarr_get_attr", stat, errmsg)
  end subroutine get_attr_i4

  subroutine get_attr_i4s(node, key, values, stat, errmsg)
    class(zarr_node), intent(in) :: node
    character(*), intent(in) :: key
    integer(c_int32_t), allocatable, target, intent(out) :: values(:)
    integer, intent(out), optional :: stat
    character(*), intent(inout), optional :: errmsg
    integer(c_size_t) :: n, room
    integer(c_int32_t) :: rc
    n = 0
    rc = numbers_call(node, key, ZARR_DTYPE_INT32, c_null_ptr, 0_c_size_t, n, .false.)
    if (rc == ZARR_ERR_BUFFER_SIZE) then
      allocate(values(n))
      room = n
      rc = numbers_call(node, key, ZARR_DTYPE_INT32, c_loc(values), room, n, .false.)
    end if
    if (rc /= ZARR_OK .and. allocated(values)) deallocate(values)
    if (.not. allocated(values)) allocate(values(0))
    call report(rc, "zarr_get_attr", stat, errmsg)
  end subroutine get_attr_i4s

  subroutine get_attr_i8(node, key, value, stat, errmsg)
    class(zarr_node), intent(in) :: node
    character(*), intent(in) :: key
    integer(c_int64_t), intent(out), target :: value
    integer, intent(out), optional :: stat
    character(*), intent(inout), optional :: errmsg
    integer(c_size_t) :: n
    value = 0
    call report(numbers_call(node, key, ZARR_DTYPE_INT64, c_loc(value), 1_c_size_t, n, .true.), &
                "zarr_get_attr", stat, errmsg)
  end subroutine get_attr_i8

  subroutine get_attr_i8s(node, key, values, stat, errmsg)
    class(zarr_node), intent(in) :: node
    character(*), intent(in) :: key
    integer(c_int64_t), allocatable, target, intent(out) :: values(:)
    integer, intent(out), optional :: stat
    character(*), intent(inout), optional :: errmsg
    integer(c_size_t) :: n, room
    integer(c_int32_t) :: rc
    n = 0
    rc = numbers_call(node, key, ZARR_DTYPE_INT64, c_null_ptr, 0_c_size_t, n, .false.)
    if (rc == ZARR_ERR_BUFFER_SIZE) then
      allocate(values(n))
      room = n
      rc = numbers_call(node, key, ZARR_DTYPE_INT64, c_loc(values), room, n, .false.)
    end if
    if (rc /= ZARR_OK .and. allocated(values)) deallocate(values)
    if (.not. allocated(values)) allocate(values(0))
    call report(rc, "zarr_get_attr", stat, errmsg)
  end subroutine get_attr_i8s

  subroutine get_attr_r4(node, key, value, stat, errmsg)
    class(zarr_node), intent(in) :: node
    character(*), intent(in) :: key
    real(c_float), intent(out), target :: value
    integer, intent(out), optional :: stat
    character(*), intent(inout), optional :: errmsg
    integer(c_size_t) :: n
    value = 0
    call report(numbers_call(node, key, ZARR_DTYPE_FLOAT32, c_loc(value), 1_c_size_t, n, .true.), &
                "zarr_get_attr", stat, errmsg)
  end subroutine get_attr_r4

  subroutine get_attr_r4s(node, key, values, stat, errmsg)
    class(zarr_node), intent(in) :: node
    character(*), intent(in) :: key
    real(c_float), allocatable, target, intent(out) :: values(:)
    integer, intent(out), optional :: stat
    character(*), intent(inout), optional :: errmsg
    integer(c_size_t) :: n, room
    integer(c_int32_t) :: rc
    n = 0
    rc = numbers_call(node, key, ZARR_DTYPE_FLOAT32, c_null_ptr, 0_c_size_t, n, .false.)
    if (rc == ZARR_ERR_BUFFER_SIZE) then
      allocate(values(n))
      room = n
      rc = numbers_call(node, key, ZARR_DTYPE_FLOAT32, c_loc(values), room, n, .false.)
    end if
    if (rc /= ZARR_OK .and. allocated(values)) deallocate(values)
    if (.not. allocated(values)) allocate(values(0))
    call report(rc, "zarr_get_attr", stat, errmsg)
  end subroutine get_attr_r4s

  subroutine get_attr_r8(node, key, value, stat, errmsg)
    class(zarr_node), intent(in) :: node
    character(*), intent(in) :: key
    real(c_double), intent(out), target :: value
    integer, intent(out), optional :: stat
    character(*), intent(inout), optional :: errmsg
    integer(c_size_t) :: n
    value = 0
    call report(numbers_call(node, key, ZARR_DTYPE_FLOAT64, c_loc(value), 1_c_size_t, n, .true.), &
                "zarr_get_attr", stat, errmsg)
  end subroutine get_attr_r8

  subroutine get_attr_r8s(node, key, values, stat, errmsg)
    class(zarr_node), intent(in) :: node
    character(*), intent(in) :: key
    real(c_double), allocatable, target, intent(out) :: values(:)
    integer, intent(out), optional :: stat
    character(*), intent(inout), optional :: errmsg
    integer(c_size_t) :: n, room
    integer(c_int32_t) :: rc
    n = 0
    rc = numbers_call(node, key, ZARR_DTYPE_FLOAT64, c_null_ptr, 0_c_size_t, n, .false.)
    if (rc == ZARR_ERR_BUFFER_SIZE) then
      allocate(values(n))
      room = n
      rc = numbers_call(node, key, ZARR_DTYPE_FLOAT64, c_loc(values), room, n, .false.)
    end if
    if (rc /= ZARR_OK .and. allocated(values)) deallocate(values)
    if (.not. allocated(values)) allocate(values(0))
    call report(rc, "zarr_get_attr", stat, errmsg)
  end subroutine get_attr_r8s

  ! ---- appends --------------------------------------------------------------------------

  ! The Fortran dimension an append grows (`dim`, default the last, the slowest-varying one)
  ! and the step's extents (`count`, default `dshape`), checked here: the rank and every
  ! other extent must be the array's (rc and message as region_args gives them).
  subroutine append_args(arr, dshape, dim, count, axis, extents, rc, message)
    type(zarr_array), intent(in) :: arr
    integer(c_int64_t), intent(in) :: dshape(:)
    integer, intent(in), optional :: dim
    class(*), intent(in), optional :: count(:)
    integer, intent(out) :: axis
    integer(c_int64_t), allocatable, intent(out) :: extents(:)
    integer(c_int32_t), intent(out) :: rc
    character(:), allocatable, intent(out) :: message
    integer(c_int64_t), allocatable :: ashape(:)
    integer :: d
    logical :: ok
    message = ""
    ok = .true.
    extents = dshape
    if (present(count)) call to_int64(count, extents, ok)
    if (.not. ok) then
      rc = ZARR_ERR_INVALID_ARG
      message = "count must be an integer(4) or integer(8) array"
      return
    end if
    call array_shape(arr, ashape, rc)
    if (rc /= ZARR_OK) then
      message = zarr_last_error()
      return
    end if
    axis = size(ashape)
    if (present(dim)) axis = dim
    if (size(extents) /= size(ashape)) then
      rc = ZARR_ERR_RANK_MISMATCH
      message = "the step has " // itoa(size(extents)) // " dimensions but the array " // &
                itoa(size(ashape)) // " (give count= for data of lower rank)"
    else if (axis < 1 .or. axis > size(ashape)) then
      rc = ZARR_ERR_INVALID_ARG
      message = "dim " // itoa(axis) // " is not a dimension of the array (1 to " // &
                itoa(size(ashape)) // ")"
    end if
    if (rc /= ZARR_OK) return
    do d = 1, size(ashape)
      if (extents(d) < 0) then
        rc = ZARR_ERR_INVALID_ARG
        message = "dimension " // itoa(d) // ": count " // itoa(extents(d)) // " is negative"
      else if (d /= axis .and. extents(d) /= ashape(d)) then
        rc = ZARR_ERR_INVALID_ARG
        message = "dimension " // itoa(d) // ": the step's extent " // itoa(extents(d)) // &
                  " is not the array's " // itoa(ashape(d)) // " (only dim " // itoa(axis) // &
                  " grows)"
      end if
      if (rc /= ZARR_OK) return
    end do
  end subroutine append_args

  ! Appends `data` (any type, any rank, elements of `dtype`) along Fortran dimension `dim`;
  ! another numeric type than the array's is converted as zarr_write converts it.
  subroutine append_data(arr, data, dtype, dshape, dim, count, stat, errmsg)
    type(zarr_array), intent(in) :: arr
    type(*), intent(in), target, contiguous :: data(..)
    integer(c_int32_t), intent(in) :: dtype
    integer(c_int64_t), intent(in) :: dshape(:)
    integer, intent(in), optional :: dim
    class(*), intent(in), optional :: count(:)
    integer, intent(out), optional :: stat
    character(*), intent(inout), optional :: errmsg
    integer(c_int64_t), allocatable :: extents(:)
    character(:), allocatable :: message
    integer(c_int32_t) :: rc
    integer :: axis
    type(c_ptr) :: buf
    call append_args(arr, dshape, dim, count, axis, extents, rc, message)
    if (rc /= ZARR_OK) then
      call fail(rc, message, "zarr_append", stat, errmsg)
      return
    end if
    buf = c_null_ptr
    if (size(data) > 0) buf = c_loc(data)
    call report(c_zarr_array_append_from(arr%ptr, int(size(extents) - axis, c_size_t), &
                                         size(extents, kind=c_size_t), reversed(extents), &
                                         dtype, ZARR_ORDER_C, buf, &
                                         size(data, kind=c_size_t) * c_zarr_dtype_size(dtype)), &
                "zarr_append", stat, errmsg)
  end subroutine append_data

  ! One zarr_append per element type: `data` is one step (or several) along `dim`.
  subroutine append_i1(arr, data, dim, stat, errmsg, count, dtype)
    type(zarr_array), intent(in) :: arr
    integer(c_int8_t), intent(in), target, contiguous :: data(..)
    integer, intent(in), optional :: dim
    integer, intent(out), optional :: stat
    character(*), intent(inout), optional :: errmsg
    class(*), intent(in), optional :: count(:)
    integer, intent(in), optional :: dtype
    call append_data(arr, data, memory_dtype(ZARR_DTYPE_INT8, dtype), shape(data, kind=c_int64_t), dim, &
                     count, stat, errmsg)
  end subroutine append_i1

  subroutine append_i2(arr, data, dim, stat, errmsg, count, dtype)
    type(zarr_array), intent(in) :: arr
    integer(c_int16_t), intent(in), target, contiguous :: data(..)
    integer, intent(in), optional :: dim
    integer, intent(out), optional :: stat
    character(*), intent(inout), optional :: errmsg
    class(*), intent(in), optional :: count(:)
    integer, intent(in), optional :: dtype
    call append_data(arr, data, memory_dtype(ZARR_DTYPE_INT16, dtype), shape(data, kind=c_int64_t), dim, &
                     count, stat, errmsg)
  end subroutine append_i2

  subroutine append_i4(arr, data, dim, stat, errmsg, count, dtype)
    type(zarr_array), intent(in) :: arr
    integer(c_int32_t), intent(in), target, contiguous :: data(..)
    integer, intent(in), optional :: dim
    integer, intent(out), optional :: stat
    character(*), intent(inout), optional :: errmsg
    class(*), intent(in), optional :: count(:)
    integer, intent(in), optional :: dtype
    call append_data(arr, data, memory_dtype(ZARR_DTYPE_INT32, dtype), shape(data, kind=c_int64_t), dim, &
                     count, stat, errmsg)
  end subroutine append_i4

  subroutine append_i8(arr, data, dim, stat, errmsg, count, dtype)
    type(zarr_array), intent(in) :: arr
    integer(c_int64_t), intent(in), target, contiguous :: data(..)
    integer, intent(in), optional :: dim
    integer, intent(out), optional :: stat
    character(*), intent(inout), optional :: errmsg
    class(*), intent(in), optional :: count(:)
    integer, intent(in), optional :: dtype
    call append_data(arr, data, memory_dtype(ZARR_DTYPE_INT64, dtype), shape(data, kind=c_int64_t), dim, &
                     count, stat, errmsg)
  end subroutine append_i8

  subroutine append_r4(arr, data, dim, stat, errmsg, count, dtype)
    type(zarr_array), intent(in) :: arr
    real(c_float), intent(in), target, contiguous :: data(..)
    integer, intent(in), optional :: dim
    integer, intent(out), optional :: stat
    character(*), intent(inout), optional :: errmsg
    class(*), intent(in), optional :: count(:)
    integer, intent(in), optional :: dtype
    call append_data(arr, data, memory_dtype(ZARR_DTYPE_FLOAT32, dtype), shape(data, kind=c_int64_t), dim, &
                     count, stat, errmsg)
  end subroutine append_r4

  subroutine append_r8(arr, data, dim, stat, errmsg, count, dtype)
    type(zarr_array), intent(in) :: arr
    real(c_double), intent(in), target, contiguous :: data(..)
    integer, intent(in), optional :: dim
    integer, intent(out), optional :: stat
    character(*), intent(inout), optional :: errmsg
    class(*), intent(in), optional :: count(:)
    integer, intent(in), optional :: dtype
    call append_data(arr, data, memory_dtype(ZARR_DTYPE_FLOAT64, dtype), shape(data, kind=c_int64_t), dim, &
                     count, stat, errmsg)
  end subroutine append_r8

  subroutine append_c4(arr, data, dim, stat, errmsg, count, dtype)
    type(zarr_array), intent(in) :: arr
    complex(c_float_complex), intent(in), target, contiguous :: data(..)
    integer, intent(in), optional :: dim
    integer, intent(out), optional :: stat
    character(*), intent(inout), optional :: errmsg
    class(*), intent(in), optional :: count(:)
    integer, intent(in), optional :: dtype
    call append_data(arr, data, memory_dtype(ZARR_DTYPE_COMPLEX64, dtype), shape(data, kind=c_int64_t), dim, &
                     count, stat, errmsg)
  end subroutine append_c4

  subroutine append_c8(arr, data, dim, stat, errmsg, count, dtype)
    type(zarr_array), intent(in) :: arr
    complex(c_double_complex), intent(in), target, contiguous :: data(..)
    integer, intent(in), optional :: dim
    integer, intent(out), optional :: stat
    character(*), intent(inout), optional :: errmsg
    class(*), intent(in), optional :: count(:)
    integer, intent(in), optional :: dtype
    call append_data(arr, data, memory_dtype(ZARR_DTYPE_COMPLEX128, dtype), shape(data, kind=c_int64_t), dim, &
                     count, stat, errmsg)
  end subroutine append_c8

  subroutine append_l(arr, data, dim, stat, errmsg, count, dtype)
    type(zarr_array), intent(in) :: arr
    logical, intent(in), target, contiguous :: data(..)
    integer, intent(in), optional :: dim
    integer, intent(out), optional :: stat
    character(*), intent(inout), optional :: errmsg
    class(*), intent(in), optional :: count(:)
    integer, intent(in), optional :: dtype
    logical, pointer :: flat(:)
    integer(c_int8_t), allocatable :: bytes(:)
    allocate(bytes(size(data)))
    if (size(data) > 0) then
      call c_f_pointer(c_loc(data), flat, [size(data)])
      bytes = merge(1_c_int8_t, 0_c_int8_t, flat)
    end if
    call append_data(arr, bytes, memory_dtype(ZARR_DTYPE_BOOL, dtype), &
                     shape(data, kind=c_int64_t), dim, count, stat, errmsg)
  end subroutine append_l

  ! ---- non-blocking writes and appends ---------------------------------------------------

  ! The flags of a submission: ZARR_ASYNC_COPY unless copy=.false. (libzarr copies the data
  ! at once, so a compiler temporary of an expression may go when the call returns), 0 with
  ! copy=.false. (the data is lent until the request is done). Either way the data must be
  ! contiguous, as libzarr reads it at its address: a section's copy made by the compiler
  ! would be gone when the call returns. `ok` is false when refused (reported as `what`).
  subroutine async_flags(is_contiguous_data, copy, flags, ok, what, stat, errmsg)
    logical, intent(in) :: is_contiguous_data
    logical, intent(in), optional :: copy
    integer(c_int32_t), intent(out) :: flags
    logical, intent(out) :: ok
    character(*), intent(in) :: what
    integer, intent(out), optional :: stat
    character(*), intent(inout), optional :: errmsg
    flags = ZARR_ASYNC_COPY
    if (present(copy)) then
      if (.not. copy) flags = 0
    end if
    ok = is_contiguous_data
    if (.not. ok) call fail(ZARR_ERR_INVALID_ARG, "the data is not contiguous (a section " // &
                            "with strides): non-blocking calls take contiguous arrays only", &
                            what, stat, errmsg)
  end subroutine async_flags

  ! Refuses a request variable that still holds a request (rc and message say so).
  subroutine check_unused(req, rc, message)
    type(zarr_request), intent(in) :: req
    integer(c_int32_t), intent(inout) :: rc
    character(:), allocatable, intent(inout) :: message
    if (rc == ZARR_OK .and. c_associated(req%ptr)) then
      rc = ZARR_ERR_INVALID_ARG
      message = "req still holds a request: zarr_request_free it first"
    end if
  end subroutine check_unused

  ! Submits a non-blocking write of `data` (elements of `dtype`, shape `dshape`) into the
  ! region `start`/`count`, checked here as zarr_write checks it; another numeric type than
  ! the array's is converted when the request runs, as zarr_write converts it.
  subroutine submit_write(arr, data, dtype, dshape, flags, req, start, count, stat, errmsg)
    type(zarr_array), intent(in) :: arr
    type(*), intent(in), target :: data(..)  ! contiguous (async_flags checks it)
    integer(c_int32_t), intent(in) :: dtype, flags
    integer(c_int64_t), intent(in) :: dshape(:)
    type(zarr_request), intent(inout) :: req
    class(*), intent(in), optional :: start(:), count(:)
    integer, intent(out), optional :: stat
    character(*), intent(inout), optional :: errmsg
    integer(c_int64_t), allocatable :: first(:), extents(:)
    character(:), allocatable :: message
    integer(c_int32_t) :: rc
    type(c_ptr) :: buf
    call region_args(arr, dshape, start, count, first, extents, rc, message)
    call check_unused(req, rc, message)
    if (rc /= ZARR_OK) then
      call fail(rc, message, "zarr_iwrite", stat, errmsg)
      return
    end if
    buf = c_null_ptr
    if (size(data) > 0) buf = c_loc(data)
    call report(c_zarr_array_write_from_async(arr%ptr, size(first, kind=c_size_t), &
                                              reversed(first - 1), reversed(extents), &
                                              dtype, ZARR_ORDER_C, buf, &
                                              size(data, kind=c_size_t) * &
                                              c_zarr_dtype_size(dtype), flags, req%ptr), &
                "zarr_iwrite", stat, errmsg)
  end subroutine submit_write

  ! Submits a non-blocking append of `data` along Fortran dimension `dim`, checked here as
  ! zarr_append checks it; another numeric type than the array's is converted when the
  ! request runs, as zarr_append converts it.
  subroutine submit_append(arr, data, dtype, dshape, flags, req, dim, count, stat, errmsg)
    type(zarr_array), intent(in) :: arr
    type(*), intent(in), target :: data(..)  ! contiguous (async_flags checks it)
    integer(c_int32_t), intent(in) :: dtype, flags
    integer(c_int64_t), intent(in) :: dshape(:)
    type(zarr_request), intent(inout) :: req
    integer, intent(in), optional :: dim
    class(*), intent(in), optional :: count(:)
    integer, intent(out), optional :: stat
    character(*), intent(inout), optional :: errmsg
    integer(c_int64_t), allocatable :: extents(:)
    character(:), allocatable :: message
    integer(c_int32_t) :: rc
    integer :: axis
    type(c_ptr) :: buf
    call append_args(arr, dshape, dim, count, axis, extents, rc, message)
    call check_unused(req, rc, message)
    if (rc /= ZARR_OK) then
      call fail(rc, message, "zarr_iappend", stat, errmsg)
      return
    end if
    buf = c_null_ptr
    if (size(data) > 0) buf = c_loc(data)
    call report(c_zarr_array_append_from_async(arr%ptr, int(size(extents) - axis, c_size_t), &
                                               size(extents, kind=c_size_t), &
                                               reversed(extents), dtype, ZARR_ORDER_C, buf, &
                                               size(data, kind=c_size_t) * &
                                               c_zarr_dtype_size(dtype), flags, req%ptr), &
                "zarr_iappend", stat, errmsg)
  end subroutine submit_append

  ! One zarr_iwrite and one zarr_iappend per element type: `data` is copied at submission,
  ! or with copy=.false. lent to libzarr until the request is done.

  subroutine iwrite_i1(arr, data, req, start, stat, errmsg, count, dtype, copy)
    type(zarr_array), intent(in) :: arr
    integer(c_int8_t), intent(in), target, asynchronous :: data(..)
    type(zarr_request), intent(inout) :: req
    class(*), intent(in), optional :: start(:), count(:)
    integer, intent(out), optional :: stat
    character(*), intent(inout), optional :: errmsg
    integer, intent(in), optional :: dtype
    logical, intent(in), optional :: copy
    integer(c_int32_t) :: flags
    logical :: ok
    call async_flags(is_contiguous(data), copy, flags, ok, "zarr_iwrite", stat, errmsg)
    if (ok) call submit_write(arr, data, memory_dtype(ZARR_DTYPE_INT8, dtype), &
                              shape(data, kind=c_int64_t), flags, req, start, count, stat, errmsg)
  end subroutine iwrite_i1

  subroutine iappend_i1(arr, data, req, dim, stat, errmsg, count, dtype, copy)
    type(zarr_array), intent(in) :: arr
    integer(c_int8_t), intent(in), target, asynchronous :: data(..)
    type(zarr_request), intent(inout) :: req
    integer, intent(in), optional :: dim
    integer, intent(out), optional :: stat
    character(*), intent(inout), optional :: errmsg
    class(*), intent(in), optional :: count(:)
    integer, intent(in), optional :: dtype
    logical, intent(in), optional :: copy
    integer(c_int32_t) :: flags
    logical :: ok
    call async_flags(is_contiguous(data), copy, flags, ok, "zarr_iappend", stat, errmsg)
    if (ok) call submit_append(arr, data, memory_dtype(ZARR_DTYPE_INT8, dtype), &
                               shape(data, kind=c_int64_t), flags, req, dim, count, stat, errmsg)
  end subroutine iappend_i1

  subroutine iwrite_i2(arr, data, req, start, stat, errmsg, count, dtype, copy)
    type(zarr_array), intent(in) :: arr
    integer(c_int16_t), intent(in), target, asynchronous :: data(..)
    type(zarr_request), intent(inout) :: req
    class(*), intent(in), optional :: start(:), count(:)
    integer, intent(out), optional :: stat
    character(*), intent(inout), optional :: errmsg
    integer, intent(in), optional :: dtype
    logical, intent(in), optional :: copy
    integer(c_int32_t) :: flags
    logical :: ok
    call async_flags(is_contiguous(data), copy, flags, ok, "zarr_iwrite", stat, errmsg)
    if (ok) call submit_write(arr, data, memory_dtype(ZARR_DTYPE_INT16, dtype), &
                              shape(data, kind=c_int64_t), flags, req, start, count, stat, errmsg)
  end subroutine iwrite_i2

  subroutine iappend_i2(arr, data, req, dim, stat, errmsg, count, dtype, copy)
    type(zarr_array), intent(in) :: arr
    integer(c_int16_t), intent(in), target, asynchronous :: data(..)
    type(zarr_request), intent(inout) :: req
    integer, intent(in), optional :: dim
    integer, intent(out), optional :: stat
    character(*), intent(inout), optional :: errmsg
    class(*), intent(in), optional :: count(:)
    integer, intent(in), optional :: dtype
    logical, intent(in), optional :: copy
    integer(c_int32_t) :: flags
    logical :: ok
    call async_flags(is_contiguous(data), copy, flags, ok, "zarr_iappend", stat, errmsg)
    if (ok) call submit_append(arr, data, memory_dtype(ZARR_DTYPE_INT16, dtype), &
                               shape(data, kind=c_int64_t), flags, req, dim, count, stat, errmsg)
  end subroutine iappend_i2

  subroutine iwrite_i4(arr, data, req, start, stat, errmsg, count, dtype, copy)
    type(zarr_array), intent(in) :: arr
    integer(c_int32_t), intent(in), target, asynchronous :: data(..)
    type(zarr_request), intent(inout) :: req
    class(*), intent(in), optional :: start(:), count(:)
    integer, intent(out), optional :: stat
    character(*), intent(inout), optional :: errmsg
    integer, intent(in), optional :: dtype
    logical, intent(in), optional :: copy
    integer(c_int32_t) :: flags
    logical :: ok
    call async_flags(is_contiguous(data), copy, flags, ok, "zarr_iwrite", stat, errmsg)
    if (ok) call submit_write(arr, data, memory_dtype(ZARR_DTYPE_INT32, dtype), &
                              shape(data, kind=c_int64_t), flags, req, start, count, stat, errmsg)
  end subroutine iwrite_i4

  subroutine iappend_i4(arr, data, req, dim, stat, errmsg, count, dtype, copy)
    type(zarr_array), intent(in) :: arr
    integer(c_int32_t), intent(in), target, asynchronous :: data(..)
    type(zarr_request), intent(inout) :: req
    integer, intent(in), optional :: dim
    integer, intent(out), optional :: stat
    character(*), intent(inout), optional :: errmsg
    class(*), intent(in), optional :: count(:)
    integer, intent(in), optional :: dtype
    logical, intent(in), optional :: copy
    integer(c_int32_t) :: flags
    logical :: ok
    call async_flags(is_contiguous(data), copy, flags, ok, "zarr_iappend", stat, errmsg)
    if (ok) call submit_append(arr, data, memory_dtype(ZARR_DTYPE_INT32, dtype), &
                               shape(data, kind=c_int64_t), flags, req, dim, count, stat, errmsg)
  end subroutine iappend_i4

  subroutine iwrite_i8(arr, data, req, start, stat, errmsg, count, dtype, copy)
    type(zarr_array), intent(in) :: arr
    integer(c_int64_t), intent(in), target, asynchronous :: data(..)
    type(zarr_request), intent(inout) :: req
    class(*), intent(in), optional :: start(:), count(:)
    integer, intent(out), optional :: stat
    character(*), intent(inout), optional :: errmsg
    integer, intent(in), optional :: dtype
    logical, intent(in), optional :: copy
    integer(c_int32_t) :: flags
    logical :: ok
    call async_flags(is_contiguous(data), copy, flags, ok, "zarr_iwrite", stat, errmsg)
    if (ok) call submit_write(arr, data, memory_dtype(ZARR_DTYPE_INT64, dtype), &
                              shape(data, kind=c_int64_t), flags, req, start, count, stat, errmsg)
  end subroutine iwrite_i8

  subroutine iappend_i8(arr, data, req, dim, stat, errmsg, count, dtype, copy)
    type(zarr_array), intent(in) :: arr
    integer(c_int64_t), intent(in), target, asynchronous :: data(..)
    type(zarr_request), intent(inout) :: req
    integer, intent(in), optional :: dim
    integer, intent(out), optional :: stat
    character(*), intent(inout), optional :: errmsg
    class(*), intent(in), optional :: count(:)
    integer, intent(in), optional :: dtype
    logical, intent(in), optional :: copy
    integer(c_int32_t) :: flags
    logical :: ok
    call async_flags(is_contiguous(data), copy, flags, ok, "zarr_iappend", stat, errmsg)
    if (ok) call submit_append(arr, data, memory_dtype(ZARR_DTYPE_INT64, dtype), &
                               shape(data, kind=c_int64_t), flags, req, dim, count, stat, errmsg)
  end subroutine iappend_i8

  subroutine iwrite_r4(arr, data, req, start, stat, errmsg, count, dtype, copy)
    type(zarr_array), intent(in) :: arr
    real(c_float), intent(in), target, asynchronous :: data(..)
    type(zarr_request), intent(inout) :: req
    class(*), intent(in), optional :: start(:), count(:)
    integer, intent(out), optional :: stat
    character(*), intent(inout), optional :: errmsg
    integer, intent(in), optional :: dtype
    logical, intent(in), optional :: copy
    integer(c_int32_t) :: flags
    logical :: ok
    call async_flags(is_contiguous(data), copy, flags, ok, "zarr_iwrite", stat, errmsg)
    if (ok) call submit_write(arr, data, memory_dtype(ZARR_DTYPE_FLOAT32, dtype), &
                              shape(data, kind=c_int64_t), flags, req, start, count, stat, errmsg)
  end subroutine iwrite_r4

  subroutine iappend_r4(arr, data, req, dim, stat, errmsg, count, dtype, copy)
    type(zarr_array), intent(in) :: arr
    real(c_float), intent(in), target, asynchronous :: data(..)
    type(zarr_request), intent(inout) :: req
    integer, intent(in), optional :: dim
    integer, intent(out), optional :: stat
    character(*), intent(inout), optional :: errmsg
    class(*), intent(in), optional :: count(:)
    integer, intent(in), optional :: dtype
    logical, intent(in), optional :: copy
    integer(c_int32_t) :: flags
    logical :: ok
    call async_flags(is_contiguous(data), copy, flags, ok, "zarr_iappend", stat, errmsg)
    if (ok) call submit_append(arr, data, memory_dtype(ZARR_DTYPE_FLOAT32, dtype), &
                               shape(data, kind=c_int64_t), flags, req, dim, count, stat, errmsg)
  end subroutine iappend_r4

  subroutine iwrite_r8(arr, data, req, start, stat, errmsg, count, dtype, copy)
    type(zarr_array), intent(in) :: arr
    real(c_double), intent(in), target, asynchronous :: data(..)
    type(zarr_request), intent(inout) :: req
    class(*), intent(in), optional :: start(:), count(:)
    integer, intent(out), optional :: stat
    character(*), intent(inout), optional :: errmsg
    integer, intent(in), optional :: dtype
    logical, intent(in), optional :: copy
    integer(c_int32_t) :: flags
    logical :: ok
    call async_flags(is_contiguous(data), copy, flags, ok, "zarr_iwrite", stat, errmsg)
    if (ok) call submit_write(arr, data, memory_dtype(ZARR_DTYPE_FLOAT64, dtype), &
                              shape(data, kind=c_int64_t), flags, req, start, count, stat, errmsg)
  end subroutine iwrite_r8

  subroutine iappend_r8(arr, data, req, dim, stat, errmsg, count, dtype, copy)
    type(zarr_array), intent(in) :: arr
    real(c_double), intent(in), target, asynchronous :: data(..)
    type(zarr_request), intent(inout) :: req
    integer, intent(in), optional :: dim
    integer, intent(out), optional :: stat
    character(*), intent(inout), optional :: errmsg
    class(*), intent(in), optional :: count(:)
    integer, intent(in), optional :: dtype
    logical, intent(in), optional :: copy
    integer(c_int32_t) :: flags
    logical :: ok
    call async_flags(is_contiguous(data), copy, flags, ok, "zarr_iappend", stat, errmsg)
    if (ok) call submit_append(arr, data, memory_dtype(ZARR_DTYPE_FLOAT64, dtype), &
                               shape(data, kind=c_int64_t), flags, req, dim, count, stat, errmsg)
  end subroutine iappend_r8

  subroutine iwrite_c4(arr, data, req, start, stat, errmsg, count, dtype, copy)
    type(zarr_array), intent(in) :: arr
    complex(c_float_complex), intent(in), target, asynchronous :: data(..)
    type(zarr_request), intent(inout) :: req
    class(*), intent(in), optional :: start(:), count(:)
    integer, intent(out), optional :: stat
    character(*), intent(inout), optional :: errmsg
    integer, intent(in), optional :: dtype
    logical, intent(in), optional :: copy
    integer(c_int32_t) :: flags
    logical :: ok
    call async_flags(is_contiguous(data), copy, flags, ok, "zarr_iwrite", stat, errmsg)
    if (ok) call submit_write(arr, data, memory_dtype(ZARR_DTYPE_COMPLEX64, dtype), &
                              shape(data, kind=c_int64_t), flags, req, start, count, stat, errmsg)
  end subroutine iwrite_c4

  subroutine iappend_c4(arr, data, req, dim, stat, errmsg, count, dtype, copy)
    type(zarr_array), intent(in) :: arr
    complex(c_float_complex), intent(in), target, asynchronous :: data(..)
    type(zarr_request), intent(inout) :: req
    integer, intent(in), optional :: dim
    integer, intent(out), optional :: stat
    character(*), intent(inout), optional :: errmsg
    class(*), intent(in), optional :: count(:)
    integer, intent(in), optional :: dtype
    logical, intent(in), optional :: copy
    integer(c_int32_t) :: flags
    logical :: ok
    call async_flags(is_contiguous(data), copy, flags, ok, "zarr_iappend", stat, errmsg)
    if (ok) call submit_append(arr, data, memory_dtype(ZARR_DTYPE_COMPLEX64, dtype), &
                               shape(data, kind=c_int64_t), flags, req, dim, count, stat, errmsg)
  end subroutine iappend_c4

  subroutine iwrite_c8(arr, data, req, start, stat, errmsg, count, dtype, copy)
    type(zarr_array), intent(in) :: arr
    complex(c_double_complex), intent(in), target, asynchronous :: data(..)
    type(zarr_request), intent(inout) :: req
    class(*), intent(in), optional :: start(:), count(:)
    integer, intent(out), optional :: stat
    character(*), intent(inout), optional :: errmsg
    integer, intent(in), optional :: dtype
    logical, intent(in), optional :: copy
    integer(c_int32_t) :: flags
    logical :: ok
    call async_flags(is_contiguous(data), copy, flags, ok, "zarr_iwrite", stat, errmsg)
    if (ok) call submit_write(arr, data, memory_dtype(ZARR_DTYPE_COMPLEX128, dtype), &
                              shape(data, kind=c_int64_t), flags, req, start, count, stat, errmsg)
  end subroutine iwrite_c8

  subroutine iappend_c8(arr, data, req, dim, stat, errmsg, count, dtype, copy)
    type(zarr_array), intent(in) :: arr
    complex(c_double_complex), intent(in), target, asynchronous :: data(..)
    type(zarr_request), intent(inout) :: req
    integer, intent(in), optional :: dim
    integer, intent(out), optional :: stat
    character(*), intent(inout), optional :: errmsg
    class(*), intent(in), optional :: count(:)
    integer, intent(in), optional :: dtype
    logical, intent(in), optional :: copy
    integer(c_int32_t) :: flags
    logical :: ok
    call async_flags(is_contiguous(data), copy, flags, ok, "zarr_iappend", stat, errmsg)
    if (ok) call submit_append(arr, data, memory_dtype(ZARR_DTYPE_COMPLEX128, dtype), &
                               shape(data, kind=c_int64_t), flags, req, dim, count, stat, errmsg)
  end subroutine iappend_c8

  ! Logical data goes through a 1-byte copy, which libzarr copies again (ZARR_ASYNC_COPY):
  ! the caller may change `data` at once; `copy` changes nothing.
  subroutine iwrite_l(arr, data, req, start, stat, errmsg, count, dtype, copy)
    type(zarr_array), intent(in) :: arr
    logical, intent(in), target, contiguous :: data(..)
    type(zarr_request), intent(inout) :: req
    class(*), intent(in), optional :: start(:), count(:)
    integer, intent(out), optional :: stat
    character(*), intent(inout), optional :: errmsg
    integer, intent(in), optional :: dtype
    logical, intent(in), optional :: copy
    logical, pointer :: flat(:)
    integer(c_int8_t), allocatable :: bytes(:)
    if (present(copy)) continue  ! accepted as for the other types: the bytes are copied anyway
    allocate(bytes(size(data)))
    if (size(data) > 0) then
      call c_f_pointer(c_loc(data), flat, [size(data)])
      bytes = merge(1_c_int8_t, 0_c_int8_t, flat)
    end if
    call submit_write(arr, bytes, memory_dtype(ZARR_DTYPE_BOOL, dtype), &
                      shape(data, kind=c_int64_t), ZARR_ASYNC_COPY, req, start, count, stat, errmsg)
  end subroutine iwrite_l

  subroutine iappend_l(arr, data, req, dim, stat, errmsg, count, dtype, copy)
    type(zarr_array), intent(in) :: arr
    logical, intent(in), target, contiguous :: data(..)
    type(zarr_request), intent(inout) :: req
    integer, intent(in), optional :: dim
    integer, intent(out), optional :: stat
    character(*), intent(inout), optional :: errmsg
    class(*), intent(in), optional :: count(:)
    integer, intent(in), optional :: dtype
    logical, intent(in), optional :: copy
    logical, pointer :: flat(:)
    integer(c_int8_t), allocatable :: bytes(:)
    if (present(copy)) continue  ! accepted as for the other types: the bytes are copied anyway
    allocate(bytes(size(data)))
    if (size(data) > 0) then
      call c_f_pointer(c_loc(data), flat, [size(data)])
      bytes = merge(1_c_int8_t, 0_c_int8_t, flat)
    end if
    call submit_append(arr, bytes, memory_dtype(ZARR_DTYPE_BOOL, dtype), &
                       shape(data, kind=c_int64_t), ZARR_ASYNC_COPY, req, dim, count, stat, errmsg)
  end subroutine iappend_l

  ! Waits until the request is done; its failure is reported as a blocking call's (stat,
  ! errmsg, or error stop). Waiting again gives the same; a request variable that holds
  ! no request (never submitted, refused, or freed) is done at once.
  subroutine zarr_wait(req, stat, errmsg)
    type(zarr_request), intent(in) :: req
    integer, intent(out), optional :: stat
    character(*), intent(inout), optional :: errmsg
    if (.not. c_associated(req%ptr)) then
      if (present(stat)) stat = ZARR_OK
      return
    end if
    call report(c_zarr_request_wait(req%ptr), "zarr_wait", stat, errmsg)
  end subroutine zarr_wait

  ! Sets `done` to whether the request is done, without waiting; once done, its failure is
  ! reported as by zarr_wait.
  subroutine zarr_test(req, done, stat, errmsg)
    type(zarr_request), intent(in) :: req
    logical, intent(out) :: done
    integer, intent(out), optional :: stat
    character(*), intent(inout), optional :: errmsg
    logical(c_bool) :: flag
    done = .true.
    if (.not. c_associated(req%ptr)) then
      if (present(stat)) stat = ZARR_OK
      return
    end if
    flag = .false.
    call report(c_zarr_request_test(req%ptr, flag), "zarr_test", stat, errmsg)
    done = flag
  end subroutine zarr_test

  ! Waits for every request of `reqs` and reports the first that failed, in their order.
  subroutine zarr_wait_all(reqs, stat, errmsg)
    type(zarr_request), intent(in) :: reqs(:)
    integer, intent(out), optional :: stat
    character(*), intent(inout), optional :: errmsg
    type(c_ptr) :: ptrs(size(reqs))
    integer :: i
    do i = 1, size(reqs)
      ptrs(i) = reqs(i)%ptr
    end do
    call report(c_zarr_request_wait_all(ptrs, size(reqs, kind=c_size_t)), "zarr_wait_all", &
                stat, errmsg)
  end subroutine zarr_wait_all

  ! Releases the request (nothing when it holds none). A request not yet done runs on, but
  ! its error is lost: wait first.
  subroutine zarr_request_free(req)
    type(zarr_request), intent(inout) :: req
    call c_zarr_request_free(req%ptr)
    req%ptr = c_null_ptr
  end subroutine zarr_request_free

  ! Bounds the bytes that requests in flight hold, the whole process (0: no bound); a
  ! submission past it waits until enough requests are done.
  subroutine zarr_set_async_budget(bytes, stat, errmsg)
    integer(c_int64_t), intent(in) :: bytes
    integer, intent(out), optional :: stat
    character(*), intent(inout), optional :: errmsg
    if (bytes < 0) then
      call fail(ZARR_ERR_INVALID_ARG, "bytes " // itoa(bytes) // " is negative", &
                "zarr_set_async_budget", stat, errmsg)
      return
    end if
    call report(c_zarr_set_async_budget(int(bytes, c_size_t)), "zarr_set_async_budget", &
                stat, errmsg)
  end subroutine zarr_set_async_budget

  ! ---- variable-length strings ----------------------------------------------------------

  ! The bytes of character data of any rank, in array element order (`n` items of `length`).
  subroutine character_bytes(data, bytes, length, n)
    character(*), intent(in), target, contiguous :: data(..)
    character(kind=c_char), pointer, intent(out) :: bytes(:)
    integer, intent(out) :: length, n
    length = len(data)
    n = int(size(data))
    bytes => null()
    if (length > 0 .and. n > 0) call c_f_pointer(c_loc(data), bytes, [length * n])
  end subroutine character_bytes

  ! The items of character data as pointers and lengths (trailing blanks dropped).
  subroutine string_items(bytes, length, n, items, lengths)
    character(kind=c_char), pointer, intent(in) :: bytes(:)
    integer, intent(in) :: length, n
    type(c_ptr), allocatable, intent(out) :: items(:)
    integer(c_size_t), allocatable, intent(out) :: lengths(:)
    character(kind=c_char), save, target :: empty(1) = c_null_char
    integer :: i, used
    allocate(items(max(n, 1)), lengths(max(n, 1)))
    items = c_loc(empty)
    lengths = 0
    do i = 1, n
      if (length == 0) cycle
      used = length
      do while (used > 0)
        if (bytes((i - 1) * length + used) /= " ") exit
        used = used - 1
      end do
      items(i) = c_loc(bytes((i - 1) * length + 1))
      lengths(i) = int(used, c_size_t)
    end do
  end subroutine string_items

  ! zarr_write with character data of any rank: one string per element into an array of
  ! variable-length strings (v2 `|O` vlen-utf8, v3 `string`); items lose trailing blanks.
  subroutine write_strings(arr, data, start, stat, errmsg, count)
    type(zarr_array), intent(in) :: arr
    character(*), intent(in), target, contiguous :: data(..)
    class(*), intent(in), optional :: start(:), count(:)
    integer, intent(out), optional :: stat
    character(*), intent(inout), optional :: errmsg
    character(kind=c_char), pointer :: bytes(:)
    integer(c_int64_t), allocatable :: first(:), extents(:)
    type(c_ptr), allocatable :: items(:)
    integer(c_size_t), allocatable :: lengths(:)
    character(:), allocatable :: message
    integer(c_int32_t) :: rc
    integer :: length, n
    call region_args(arr, shape(data, kind=c_int64_t), start, count, first, extents, rc, &
                     message)
    if (rc == ZARR_OK .and. product(extents) /= size(data)) then
      rc = ZARR_ERR_BUFFER_SIZE
      message = "count has " // itoa(product(extents)) // " elements but the data " // &
                itoa(size(data, kind=c_int64_t))
    end if
    if (rc /= ZARR_OK) then
      call fail(rc, message, "zarr_write", stat, errmsg)
      return
    end if
    call character_bytes(data, bytes, length, n)
    call string_items(bytes, length, n, items, lengths)
    call report(c_zarr_array_write_vlen(arr%ptr, size(first, kind=c_size_t), &
                                        reversed(first - 1), reversed(extents), ZARR_ORDER_C, &
                                        items, lengths), "zarr_write", stat, errmsg)
  end subroutine write_strings

  ! zarr_read with character data of any rank: the strings of a variable-length string
  ! array, padded with blanks; a string longer than the data's length is refused
  ! (ZARR_ERR_BUFFER_SIZE) rather than cut, and the data is then left unchanged.
  subroutine read_strings(arr, data, start, stat, errmsg, count)
    type(zarr_array), intent(in) :: arr
    character(*), intent(inout), target, contiguous :: data(..)
    class(*), intent(in), optional :: start(:), count(:)
    integer, intent(out), optional :: stat
    character(*), intent(inout), optional :: errmsg
    character(kind=c_char), pointer :: bytes(:), item(:)
    integer(c_int64_t), allocatable :: first(:), extents(:)
    character(:), allocatable :: message
    type(c_ptr) :: list, p
    integer(c_size_t) :: got
    integer(c_int32_t) :: rc
    integer :: length, n, i, j
    call region_args(arr, shape(data, kind=c_int64_t), start, count, first, extents, rc, &
                     message)
    if (rc == ZARR_OK .and. product(extents) /= size(data)) then
      rc = ZARR_ERR_BUFFER_SIZE
      message = "count has " // itoa(product(extents)) // " elements but the data " // &
                itoa(size(data, kind=c_int64_t))
    end if
    if (rc /= ZARR_OK) then
      call fail(rc, message, "zarr_read", stat, errmsg)
      return
    end if
    list = c_null_ptr
    rc = c_zarr_array_read_vlen_list(arr%ptr, size(first, kind=c_size_t), reversed(first - 1), &
                                     reversed(extents), ZARR_ORDER_C, list)
    if (rc /= ZARR_OK) then
      call report(rc, "zarr_read", stat, errmsg)
      return
    end if
    call character_bytes(data, bytes, length, n)
    do i = 1, n  ! every item fits before any is copied
      p = c_zarr_vlen_list_item(list, int(i - 1, c_size_t), got)
      if (got > length) then
        call c_zarr_vlen_list_free(list)
        call fail(ZARR_ERR_BUFFER_SIZE, "element " // itoa(i) // " is a string of " // &
                  itoa(int(got, c_int64_t)) // " bytes, longer than the data's length " // &
                  itoa(length), "zarr_read", stat, errmsg)
        return
      end if
    end do
    do i = 1, n
      p = c_zarr_vlen_list_item(list, int(i - 1, c_size_t), got)
      if (length == 0) cycle
      bytes((i - 1) * length + 1:i * length) = " "
      if (got == 0) cycle
      call c_f_pointer(p, item, [got])
      do j = 1, int(got)
        bytes((i - 1) * length + j) = item(j)
      end do
    end do
    call c_zarr_vlen_list_free(list)
    call report(ZARR_OK, "zarr_read", stat, errmsg)
  end subroutine read_strings

  ! zarr_append with character data: strings appended along `dim` (as zarr_append).
  subroutine append_strings(arr, data, dim, stat, errmsg, count)
    type(zarr_array), intent(in) :: arr
    character(*), intent(in), target, contiguous :: data(..)
    integer, intent(in), optional :: dim
    integer, intent(out), optional :: stat
    character(*), intent(inout), optional :: errmsg
    class(*), intent(in), optional :: count(:)
    character(kind=c_char), pointer :: bytes(:)
    integer(c_int64_t), allocatable :: extents(:)
    type(c_ptr), allocatable :: items(:)
    integer(c_size_t), allocatable :: lengths(:)
    character(:), allocatable :: message
    integer(c_int32_t) :: rc
    integer :: axis, length, n
    call append_args(arr, shape(data, kind=c_int64_t), dim, count, axis, extents, rc, message)
    if (rc == ZARR_OK .and. product(extents) /= size(data)) then
      rc = ZARR_ERR_BUFFER_SIZE
      message = "count has " // itoa(product(extents)) // " elements but the data " // &
                itoa(size(data, kind=c_int64_t))
    end if
    if (rc /= ZARR_OK) then
      call fail(rc, message, "zarr_append", stat, errmsg)
      return
    end if
    call character_bytes(data, bytes, length, n)
    call string_items(bytes, length, n, items, lengths)
    call report(c_zarr_array_append_vlen(arr%ptr, int(size(extents) - axis, c_size_t), &
                                         size(extents, kind=c_size_t), reversed(extents), &
                                         ZARR_ORDER_C, items, lengths), &
                "zarr_append", stat, errmsg)
  end subroutine append_strings

  ! ---- handles: flush, refresh, synchronizer, cache, threads ----------------------------

  ! Stores what appends buffered on the handle and flushes the store: every step appended
  ! so far is then readable by other handles and processes (zarr_array_flush).
  subroutine flush_array(arr, stat, errmsg)
    type(zarr_array), intent(in) :: arr
    integer, intent(out), optional :: stat
    character(*), intent(inout), optional :: errmsg
    call report(c_zarr_array_flush(arr%ptr), "zarr_flush", stat, errmsg)
  end subroutine flush_array

  ! Makes what was written through the store durable (zarr_store_flush).
  subroutine flush_store(store, stat, errmsg)
    type(zarr_store), intent(in) :: store
    integer, intent(out), optional :: stat
    character(*), intent(inout), optional :: errmsg
    call report(c_zarr_store_flush(store%ptr), "zarr_flush", stat, errmsg)
  end subroutine flush_store

  ! Commits everything written through an Icechunk store (icechunk:///PATH) since its last
  ! commit as one snapshot, atomically (zarr_store_commit); `id` gets the snapshot's id (20
  ! characters). Another writer's commit meanwhile gives ZARR_ERR_CONFLICT: zarr_rebase,
  ! then commit again. A store freed without a commit commits nothing.
  subroutine zarr_commit(store, message, id, stat, errmsg)
    type(zarr_store), intent(in) :: store
    character(*), intent(in) :: message
    character(*), intent(out), optional :: id
    integer, intent(out), optional :: stat
    character(*), intent(inout), optional :: errmsg
    character(kind=c_char), target :: buf(ZARR_SNAPSHOT_ID_BYTES)
    integer :: i
    buf = c_null_char
    call report(c_zarr_store_commit(store%ptr, c_str(message), c_loc(buf), &
                                    int(size(buf), c_size_t)), "zarr_commit", stat, errmsg)
    if (present(id)) then
      id = ""
      do i = 1, min(len(id), size(buf) - 1)
        if (buf(i) == c_null_char) exit
        id(i:i) = buf(i)
      end do
    end if
  end subroutine zarr_commit

  ! Drops what was written through an Icechunk store since its last commit
  ! (zarr_store_discard).
  subroutine zarr_discard(store, stat, errmsg)
    type(zarr_store), intent(in) :: store
    integer, intent(out), optional :: stat
    character(*), intent(inout), optional :: errmsg
    call report(c_zarr_store_discard(store%ptr), "zarr_discard", stat, errmsg)
  end subroutine zarr_discard

  ! Moves the uncommitted changes onto the branch's newest snapshot when they do not overlap
  ! what was committed meanwhile (zarr_store_rebase; ZARR_ERR_CONFLICT when they do).
  subroutine zarr_rebase(store, stat, errmsg)
    type(zarr_store), intent(in) :: store
    integer, intent(out), optional :: stat
    character(*), intent(inout), optional :: errmsg
    call report(c_zarr_store_rebase(store%ptr), "zarr_rebase", stat, errmsg)
  end subroutine zarr_rebase

  ! What was written through an Icechunk store since its last commit, as bytes another store
  ! of the repository merges (zarr_store_changes_export): each MPI rank exports, rank 0
  ! merges every rank's bytes and commits once. The store keeps its changes.
  subroutine zarr_export_changes(store, bytes, stat, errmsg)
    type(zarr_store), intent(in) :: store
    integer(c_int8_t), allocatable, intent(out) :: bytes(:)
    integer, intent(out), optional :: stat
    character(*), intent(inout), optional :: errmsg
    type(c_ptr) :: buf
    integer(c_size_t) :: n
    integer(c_int8_t), pointer :: view(:)
    integer(c_int32_t) :: status
    status = c_zarr_store_changes_export(store%ptr, buf, n)
    if (status == ZARR_OK) then
      call c_f_pointer(buf, view, [n])
      bytes = view
      call c_zarr_bytes_free(buf)
    else
      allocate (bytes(0))
    end if
    call report(status, "zarr_export_changes", stat, errmsg)
  end subroutine zarr_export_changes

  ! Adds the changes another Icechunk store exported to this store's next commit
  ! (zarr_store_changes_merge): ZARR_ERR_CONFLICT when they were written on another snapshot
  ! or change an array this store changed differently, ZARR_ERR_INVALID_ARG for bytes that
  ! are no exported changes; nothing changes on an error.
  subroutine zarr_merge_changes(store, bytes, stat, errmsg)
    type(zarr_store), intent(in) :: store
    integer(c_int8_t), intent(in), target, contiguous :: bytes(:)
    integer, intent(out), optional :: stat
    character(*), intent(inout), optional :: errmsg
    type(c_ptr) :: start
    start = c_null_ptr
    if (size(bytes) > 0) start = c_loc(bytes)
    call report(c_zarr_store_changes_merge(store%ptr, start, int(size(bytes), c_size_t)), &
                "zarr_merge_changes", stat, errmsg)
  end subroutine zarr_merge_changes

  ! Creates a tag at the snapshot the Icechunk store reads (zarr_store_create_tag).
  subroutine zarr_create_tag(store, name, stat, errmsg)
    type(zarr_store), intent(in) :: store
    character(*), intent(in) :: name
    integer, intent(out), optional :: stat
    character(*), intent(inout), optional :: errmsg
    call report(c_zarr_store_create_tag(store%ptr, c_str(name)), "zarr_create_tag", stat, &
                errmsg)
  end subroutine zarr_create_tag

  ! Creates a branch at the snapshot the Icechunk store reads (zarr_store_create_branch).
  subroutine zarr_create_branch(store, name, stat, errmsg)
    type(zarr_store), intent(in) :: store
    character(*), intent(in) :: name
    integer, intent(out), optional :: stat
    character(*), intent(inout), optional :: errmsg
    call report(c_zarr_store_create_branch(store%ptr, c_str(name)), "zarr_create_branch", &
                stat, errmsg)
  end subroutine zarr_create_branch

  ! Makes the chunk at key (ARRAY/c/0/1) of an Icechunk store a virtual chunk: length bytes
  ! at offset of the local file location, read from there, never copied
  ! (zarr_store_set_virtual_ref; the file lies beneath a directory of the store's option
  ! virtual_chunk_containers).
  subroutine zarr_set_virtual_ref(store, key, location, offset, length, stat, errmsg)
    type(zarr_store), intent(in) :: store
    character(*), intent(in) :: key, location
    integer(c_int64_t), intent(in) :: offset, length
    integer, intent(out), optional :: stat
    character(*), intent(inout), optional :: errmsg
    call report(c_zarr_store_set_virtual_ref(store%ptr, c_str(key), c_str(location), &
                                             offset, length), &
                "zarr_set_virtual_ref", stat, errmsg)
  end subroutine zarr_set_virtual_ref

  ! Reads the array's metadata again, to see a shape another handle or MPI rank changed.
  subroutine zarr_refresh(arr, stat, errmsg)
    type(zarr_array), intent(in) :: arr
    integer, intent(out), optional :: stat
    character(*), intent(inout), optional :: errmsg
    call report(c_zarr_array_refresh(arr%ptr), "zarr_refresh", stat, errmsg)
  end subroutine zarr_refresh

  ! Coordinates writes to shared chunks: ZARR_SYNC_NONE, ZARR_SYNC_THREAD,
  ! ZARR_SYNC_PROCESS (lock files in `lock_dir`, required) or ZARR_SYNC_VERSIONED (object
  ! and memory stores). Set it before the handle's writes start.
  subroutine zarr_set_synchronizer(arr, sync, lock_dir, stat, errmsg)
    type(zarr_array), intent(in) :: arr
    integer, intent(in) :: sync
    character(*), intent(in), optional :: lock_dir
    integer, intent(out), optional :: stat
    character(*), intent(inout), optional :: errmsg
    if (present(lock_dir)) then
      call report(c_zarr_array_set_synchronizer(arr%ptr, int(sync, c_int32_t), &
                                                c_str(lock_dir)), &
                  "zarr_set_synchronizer", stat, errmsg)
    else
      call report(c_zarr_array_set_synchronizer(arr%ptr, int(sync, c_int32_t)), &
                  "zarr_set_synchronizer", stat, errmsg)
    end if
  end subroutine zarr_set_synchronizer

  ! Turns the array's append lock on (the default) or off for this handle: off only on
  ! handles of writers that coordinate by other means (MPI ranks of which one resizes).
  subroutine zarr_set_append_lock(arr, on, stat, errmsg)
    type(zarr_array), intent(in) :: arr
    logical, intent(in) :: on
    integer, intent(out), optional :: stat
    character(*), intent(inout), optional :: errmsg
    call report(c_zarr_array_set_append_lock(arr%ptr, logical(on, c_bool)), &
                "zarr_set_append_lock", stat, errmsg)
  end subroutine zarr_set_append_lock

  ! Keeps up to `bytes` of decoded chunks on the handle for later reads (0: none).
  subroutine zarr_set_cache_bytes(arr, bytes, stat, errmsg)
    type(zarr_array), intent(in) :: arr
    integer(c_int64_t), intent(in) :: bytes
    integer, intent(out), optional :: stat
    character(*), intent(inout), optional :: errmsg
    if (bytes < 0) then
      call fail(ZARR_ERR_INVALID_ARG, "bytes " // itoa(bytes) // " is negative", &
                "zarr_set_cache_bytes", stat, errmsg)
      return
    end if
    call report(c_zarr_array_set_cache_bytes(arr%ptr, int(bytes, c_size_t)), &
                "zarr_set_cache_bytes", stat, errmsg)
  end subroutine zarr_set_cache_bytes

  ! Sets the number of worker threads libzarr uses for chunk work (before the first call
  ! that uses them; under MPI, ranks x threads should not exceed the cores).
  subroutine zarr_set_num_threads(threads, stat, errmsg)
    integer, intent(in) :: threads
    integer, intent(out), optional :: stat
    character(*), intent(inout), optional :: errmsg
    if (threads < 0) then
      call fail(ZARR_ERR_INVALID_ARG, "threads " // itoa(threads) // " is negative", &
                "zarr_set_num_threads", stat, errmsg)
      return
    end if
    call report(c_zarr_set_num_threads(int(threads, c_size_t)), "zarr_set_num_threads", &
                stat, errmsg)
  end subroutine zarr_set_num_threads

  ! The number of worker threads libzarr uses.
  function zarr_get_num_threads() result(threads)
    integer :: threads
    threads = int(c_zarr_get_num_threads())
  end function zarr_get_num_threads

  ! ---- hierarchy: consolidation, deletion, dimension names -------------------------------

  ! Consolidates the metadata of the hierarchy at `path` ("" the root) as zarr-python does;
  ! zarr_open_group(..., consolidated=.true.) then reads it in one request.
  subroutine zarr_consolidate(store, path, stat, errmsg)
    type(zarr_store), intent(in) :: store
    character(*), intent(in) :: path
    integer, intent(out), optional :: stat
    character(*), intent(inout), optional :: errmsg
    call report(c_zarr_consolidate_metadata(store%ptr, c_str(path)), "zarr_consolidate", &
                stat, errmsg)
  end subroutine zarr_consolidate

  ! Deletes the array or group at `path` below `group` (with everything under it).
  subroutine zarr_delete(group, path, stat, errmsg)
    type(zarr_group), intent(in) :: group
    character(*), intent(in) :: path
    integer, intent(out), optional :: stat
    character(*), intent(inout), optional :: errmsg
    call report(c_zarr_group_delete(group%ptr, c_str(path)), "zarr_delete", stat, errmsg)
  end subroutine zarr_delete

  ! The dimension names in Fortran order (reversed from the stored order), padded to the
  ! longest; an unnamed dimension is "". ZARR_ERR_NOT_FOUND when the array has none.
  subroutine zarr_get_dimension_names(arr, names, stat, errmsg)
    type(zarr_array), intent(in) :: arr
    character(:), allocatable, intent(out) :: names(:)
    integer, intent(out), optional :: stat
    character(*), intent(inout), optional :: errmsg
    type(c_ptr) :: list, item
    integer(c_int32_t) :: rc
    integer :: i, n, longest
    list = c_null_ptr
    rc = c_zarr_array_dimension_names(arr%ptr, list)
    n = int(c_zarr_strings_count(list))  ! 0 for NULL
    longest = 0
    do i = 1, n
      item = c_zarr_strings_get(list, int(i - 1, c_size_t))
      if (c_associated(item)) longest = max(longest, int(c_strlen(item)))
    end do
    allocate(character(longest) :: names(n))
    do i = 1, n
      item = c_zarr_strings_get(list, int(i - 1, c_size_t))
      names(n + 1 - i) = string_at(item)  ! NULL (unnamed) gives ""
    end do
    call c_zarr_strings_free(list)
    call report(rc, "zarr_get_dimension_names", stat, errmsg)
  end subroutine zarr_get_dimension_names

end module zarr
