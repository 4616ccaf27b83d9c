! zarr_mpi.f90 — module zarr_mpi, the collective writes, appends and Icechunk commits of
! include/zarr_mpi.h from Fortran, over mpi_f08 communicators.
!
!   use mpi_f08
!   use zarr
!   use zarr_mpi
!   type(zarr_array) :: tas
!   real(4) :: block(nx_local, ny_local)
!   call zarr_mpi_create_array(tas, MPI_COMM_WORLD, store, "tas", ZARR_DTYPE_FLOAT32, &
!                              [360, 180, 0], chunks=[360, 180, 1], shards=[360, 180, 24], &
!                              dims=[character(4) :: "lon", "lat", "time"], missing_value=1.0e20)
!   do step = 1, nsteps
!     call zarr_mpi_append(tas, MPI_COMM_WORLD, block, start=[i0, j0, 1], count=[nxl, nyl, 1])
!   end do
!   call tas%close()
!
! Conventions are module zarr's: dimensions in Fortran order, 1-based starts, integer(4) or
! integer(8) start and count, optional stat and errmsg (without stat a failure stops the
! program). Every procedure here is collective over `comm`: every rank calls it, with its
! own block (an empty block is a count with a zero). A failure on any rank, an argument
! refused here included, is returned on every rank with the message of the lowest failing
! rank, prefixed by "rank N: ". The data is the array's own type (integer(4/8), real(4/8)),
! contiguous, in Fortran order, as the C layer takes it.
module zarr_mpi
  use, intrinsic :: iso_c_binding
  use mpi_f08, only: MPI_Comm, MPI_Comm_rank, MPI_Allreduce, MPI_Bcast, MPI_INTEGER, &
                     MPI_CHARACTER, MPI_MIN, MPI_IN_PLACE
  use zarr
  use zarr_c, only: c_zarr_dtype_size
  implicit none
  private

  public :: zarr_mpi_create_array, zarr_mpi_open_array, zarr_mpi_write, zarr_mpi_append
  public :: zarr_mpi_set_aggregators, zarr_mpi_set_buffer_bytes, zarr_mpi_last_error
  public :: zarr_mpi_set_encode_where_held, zarr_mpi_commit

  ! zarr_mpi_write(arr, comm, data, start, count, stat, errmsg): every rank's block of a
  ! region, written with two-phase I/O (zarr_mpi.h's zarr_mpi_write).
  interface zarr_mpi_write
    module procedure write_i4, write_i8, write_r4, write_r8
  end interface zarr_mpi_write

  ! zarr_mpi_append(arr, comm, data, dim, start, count, stat, errmsg): every rank's block of
  ! a step appended along Fortran dimension `dim` (default the last); `start` is where the
  ! block starts inside the step (default all 1s); `count` gives the block's extents for
  ! data of lower rank (a 2-D field onto a 3-D series: count=[nx, ny, 1]).
  interface zarr_mpi_append
    module procedure append_i4, append_i8, append_r4, append_r8
  end interface zarr_mpi_append

  ! The C layer, with communicators as Fortran handles (zarr_mpi.h's *_f calls).
  interface
    function c_open(comm, store, path, mode, out_array) &
        bind(c, name="zarr_mpi_array_open_f") result(res)
      import
      integer(c_int), value :: comm
      type(c_ptr), value :: store
      character(kind=c_char), intent(in) :: path(*)
      integer(c_int32_t), value :: mode
      type(c_ptr), intent(out) :: out_array
      integer(c_int32_t) :: res
    end function c_open

    function c_write(comm, array, ndim, start, count, dtype, order, buf, bytes) &
        bind(c, name="zarr_mpi_write_f") result(res)
      import
      integer(c_int), value :: comm
      type(c_ptr), value :: array
      integer(c_size_t), value :: ndim
      integer(c_int64_t), intent(in) :: start(*), count(*)
      integer(c_int32_t), value :: dtype, order
      type(c_ptr), value :: buf
      integer(c_size_t), value :: bytes
      integer(c_int32_t) :: res
    end function c_write

    function c_append(comm, array, axis, ndim, start, count, dtype, order, buf, bytes) &
        bind(c, name="zarr_mpi_append_f") result(res)
      import
      integer(c_int), value :: comm
      type(c_ptr), value :: array
      integer(c_size_t), value :: axis, ndim
      integer(c_int64_t), intent(in) :: start(*), count(*)
      integer(c_int32_t), value :: dtype, order
      type(c_ptr), value :: buf
      integer(c_size_t), value :: bytes
      integer(c_int32_t) :: res
    end function c_append

    function c_commit(comm, store, message, id, id_len) bind(c, name="zarr_mpi_commit_f") &
        result(res)
      import
      integer(c_int), value :: comm
      type(c_ptr), value :: store
      character(kind=c_char), intent(in) :: message(*)
      character(kind=c_char), intent(out) :: id(*)
      integer(c_size_t), value :: id_len
      integer(c_int32_t) :: res
    end function c_commit

    function c_set_aggregators(count) bind(c, name="zarr_mpi_set_aggregators") result(res)
      import
      integer(c_int), value :: count
      integer(c_int32_t) :: res
    end function c_set_aggregators

    function c_set_buffer_bytes(bytes) bind(c, name="zarr_mpi_set_buffer_bytes") result(res)
      import
      integer(c_size_t), value :: bytes
      integer(c_int32_t) :: res
    end function c_set_buffer_bytes

    function c_set_encode_where_held(on) bind(c, name="zarr_mpi_set_encode_where_held") &
        result(res)
      import
      integer(c_int), value :: on
      integer(c_int32_t) :: res
    end function c_set_encode_where_held

    function c_last_error(buf, len, needed) bind(c, name="zarr_mpi_last_error") result(res)
      import
      type(c_ptr), value :: buf
      integer(c_size_t), value :: len
      integer(c_size_t), intent(out) :: needed
      integer(c_int32_t) :: res
    end function c_last_error
  end interface

  ! The longest message a rank's local refusal carries to the others.
  integer, parameter :: MESSAGE_LEN = 1024

contains

  ! ---- errors ---------------------------------------------------------------------------

  ! The calling thread's last message of a zarr_mpi call ("rank N: ..."), or "".
  function zarr_mpi_last_error() result(message)
    character(:), allocatable :: message
    character(kind=c_char), allocatable, target :: buf(:)
    integer(c_size_t) :: needed, again
    integer :: i
    message = ""
    needed = 0
    again = 0
    ! Asked with no buffer, the size comes back with ZARR_ERR_BUFFER_SIZE.
    if (c_last_error(c_null_ptr, 0_c_size_t, needed) == ZARR_ERR_NULL_ARG .or. needed <= 1) return
    allocate(buf(needed))
    if (c_last_error(c_loc(buf), needed, again) /= ZARR_OK) return
    allocate(character(int(needed) - 1) :: message)
    do i = 1, int(needed) - 1
      message(i:i) = buf(i)
    end do
  end function zarr_mpi_last_error

  ! Reports `rc` (with `message`) as module zarr does: stat and errmsg when present, else
  ! an error stop naming `what`.
  subroutine report(rc, message, what, stat, errmsg)
    integer(c_int32_t), intent(in) :: rc
    character(*), intent(in) :: message, what
    integer, intent(out), optional :: stat
    character(*), intent(inout), optional :: errmsg
    character(:), allocatable :: text
    if (present(stat)) stat = rc
    if (rc == ZARR_OK) return
    if (present(errmsg)) errmsg = message
    if (.not. present(stat)) then
      text = what // ": " // zarr_status_name(int(rc)) // ": " // message
      error stop text
    end if
  end subroutine report

  ! Makes a refusal found here on some ranks the outcome of every rank (rc and message of
  ! the lowest failing rank, its message prefixed by "rank N: "), so that no rank goes on
  ! into a collective call the others left.
  subroutine agree(comm, rc, message)
    type(MPI_Comm), intent(in) :: comm
    integer(c_int32_t), intent(inout) :: rc
    character(:), allocatable, intent(inout) :: message
    integer :: rank, lowest, code
    character(len=MESSAGE_LEN) :: text
    call MPI_Comm_rank(comm, rank)
    lowest = huge(lowest)
    if (rc /= ZARR_OK) lowest = rank
    call MPI_Allreduce(MPI_IN_PLACE, lowest, 1, MPI_INTEGER, MPI_MIN, comm)
    if (lowest == huge(lowest)) return
    code = int(rc)
    text = message
    call MPI_Bcast(code, 1, MPI_INTEGER, lowest, comm)
    call MPI_Bcast(text, MESSAGE_LEN, MPI_CHARACTER, lowest, comm)
    rc = int(code, c_int32_t)
    message = "rank " // itoa(lowest) // ": " // trim(text)
  end subroutine agree

  pure function itoa(i) result(s)
    integer, intent(in) :: i
    character(:), allocatable :: s
    character(len=24) :: buf
    write(buf, '(i0)') i
    s = trim(buf)
  end function itoa

  ! ---- settings -------------------------------------------------------------------------

  ! The number of aggregator ranks of later collective writes (0: the default, one per
  ! node); as zarr_mpi_set_aggregators (not collective: a setting of this process).
  subroutine zarr_mpi_set_aggregators(count, stat, errmsg)
    integer, intent(in) :: count
    integer, intent(out), optional :: stat
    character(*), intent(inout), optional :: errmsg
    integer(c_int32_t) :: rc
    rc = c_set_aggregators(int(count, c_int))
    call report(rc, zarr_mpi_last_error(), "zarr_mpi_set_aggregators", stat, errmsg)
  end subroutine zarr_mpi_set_aggregators

  ! The bytes of objects an aggregator assembles in one round (0: the default, 64 MiB); as
  ! zarr_mpi_set_buffer_bytes (not collective: a setting of this process).
  subroutine zarr_mpi_set_buffer_bytes(bytes, stat, errmsg)
    integer(c_int64_t), intent(in) :: bytes
    integer, intent(out), optional :: stat
    character(*), intent(inout), optional :: errmsg
    integer(c_int32_t) :: rc
    rc = ZARR_ERR_INVALID_ARG
    if (bytes >= 0) rc = c_set_buffer_bytes(int(bytes, c_size_t))
    call report(rc, zarr_mpi_last_error(), "zarr_mpi_set_buffer_bytes", stat, errmsg)
  end subroutine zarr_mpi_set_buffer_bytes

  ! Whether later collective writes encode each chunk on the rank holding most of it and send
  ! the encoded bytes to the aggregators; as zarr_mpi_set_encode_where_held (not collective:
  ! a setting of this process; a collective call uses rank 0's).
  subroutine zarr_mpi_set_encode_where_held(on, stat, errmsg)
    logical, intent(in) :: on
    integer, intent(out), optional :: stat
    character(*), intent(inout), optional :: errmsg
    integer(c_int32_t) :: rc
    rc = c_set_encode_where_held(merge(1_c_int, 0_c_int, on))
    call report(rc, zarr_mpi_last_error(), "zarr_mpi_set_encode_where_held", stat, errmsg)
  end subroutine zarr_mpi_set_encode_where_held

  ! ---- Icechunk ---------------------------------------------------------------------------

  ! Commits what every rank of `comm` wrote through its own `store` (an Icechunk repository
  ! on a branch) as one snapshot: rank 0 merges the others' changes and commits with
  ! `message`, the others discard theirs and rebase; `id` (20 characters) gets the new
  ! snapshot's id on every rank. As zarr_mpi.h's zarr_mpi_commit.
  subroutine zarr_mpi_commit(comm, store, message, id, stat, errmsg)
    type(MPI_Comm), intent(in) :: comm
    type(zarr_store), intent(in) :: store
    character(*), intent(in) :: message
    character(*), intent(out), optional :: id
    integer, intent(out), optional :: stat
    character(*), intent(inout), optional :: errmsg
    character(kind=c_char) :: buf(ZARR_SNAPSHOT_ID_BYTES)
    integer(c_int32_t) :: rc
    integer :: i
    buf = c_null_char
    rc = c_commit(int(comm%MPI_VAL, c_int), store%ptr, trim(message) // c_null_char, buf, &
                  int(ZARR_SNAPSHOT_ID_BYTES, c_size_t))
    if (present(id)) then
      id = ""
      do i = 1, min(len(id), ZARR_SNAPSHOT_ID_BYTES - 1)
        if (buf(i) == c_null_char) exit
        id(i:i) = buf(i)
      end do
    end if
    call report(rc, zarr_mpi_last_error(), "zarr_mpi_commit", stat, errmsg)
  end subroutine zarr_mpi_commit

  ! ---- open and create ------------------------------------------------------------------

  ! Opens the array at `path` on every rank of `comm` (ZARR_MODE_R_PLUS by default), each
  ! through its own `store`, which must reach the same storage; as zarr_mpi_array_open.
  subroutine zarr_mpi_open_array(arr, comm, store, path, mode, stat, errmsg)
    type(zarr_array), intent(out) :: arr
    type(MPI_Comm), intent(in) :: comm
    type(zarr_store), intent(in) :: store
    character(*), intent(in) :: path
    integer, intent(in), optional :: mode
    integer, intent(out), optional :: stat
    character(*), intent(inout), optional :: errmsg
    integer(c_int32_t) :: rc, how
    how = ZARR_MODE_R_PLUS
    if (present(mode)) how = int(mode, c_int32_t)
    rc = c_open(int(comm%MPI_VAL, c_int), store%ptr, trim(path) // c_null_char, how, arr%ptr)
    call report(rc, zarr_mpi_last_error(), "zarr_mpi_open_array", stat, errmsg)
  end subroutine zarr_mpi_open_array

  ! Creates an array collectively: rank 0 creates it as zarr_create_array does (the same
  ! arguments; those of other ranks are not used), then every rank opens it
  ! (ZARR_MODE_R_PLUS). On a failure no rank keeps a handle.
  subroutine zarr_mpi_create_array(arr, comm, store, path, dtype, shape, chunks, shards, &
                                   fill_value, compressor, attributes, zarr_format, mode, &
                                   missing_value, edges_dim, edges, dims, stat, errmsg)
    type(zarr_array), intent(out) :: arr
    type(MPI_Comm), intent(in) :: comm
    type(zarr_store), intent(in) :: store
    character(*), intent(in) :: path
    integer, intent(in) :: dtype
    class(*), intent(in) :: shape(:)
    class(*), intent(in), optional :: chunks(:), shards(:)
    character(*), intent(in), optional :: fill_value, compressor, attributes
    integer, intent(in), optional :: zarr_format, mode
    class(*), intent(in), optional :: missing_value
    integer, intent(in), optional :: edges_dim
    class(*), intent(in), optional :: edges(:)
    character(*), intent(in), optional :: dims(:)
    integer, intent(out), optional :: stat
    character(*), intent(inout), optional :: errmsg
    type(zarr_array) :: made
    integer :: rank, st
    integer(c_int32_t) :: rc
    character(len=MESSAGE_LEN) :: text
    character(:), allocatable :: message
    call MPI_Comm_rank(comm, rank)
    st = ZARR_OK
    text = ""
    if (rank == 0) then
      call zarr_create_array(made, store, path, dtype, shape, chunks=chunks, shards=shards, &
                             fill_value=fill_value, compressor=compressor, &
                             attributes=attributes, zarr_format=zarr_format, mode=mode, &
                             missing_value=missing_value, edges_dim=edges_dim, edges=edges, &
                             dims=dims, stat=st, errmsg=text)
      if (st == ZARR_OK) call made%close(stat=st, errmsg=text)
    end if
    rc = int(st, c_int32_t)
    message = trim(text)
    call agree(comm, rc, message)
    if (rc /= ZARR_OK) then
      call report(rc, message, "zarr_mpi_create_array", stat, errmsg)
      return
    end if
    call zarr_mpi_open_array(arr, comm, store, path, ZARR_MODE_R_PLUS, stat, errmsg)
  end subroutine zarr_mpi_create_array

  ! ---- writes and appends ---------------------------------------------------------------

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

  ! A collective write, or append along Fortran dimension `dim` (default the last), of the
  ! `bytes` at `buf` (items of `dtype`): this rank's block, of Fortran shape `dshape` (or
  ! `count`) at `start` (1-based). Refusals found here are agreed on before the C layer.
  subroutine collective(arr, comm, buf, bytes, dtype, dshape, start, count, dim, append, &
                        what, stat, errmsg)
    type(zarr_array), intent(in) :: arr
    type(MPI_Comm), intent(in) :: comm
    type(c_ptr), intent(in) :: buf
    integer(c_size_t), intent(in) :: bytes
    integer(c_int32_t), intent(in) :: dtype
    integer(c_int64_t), intent(in) :: dshape(:)
    class(*), intent(in), optional :: start(:), count(:)
    integer, intent(in), optional :: dim
    logical, intent(in) :: append
    character(*), intent(in) :: what
    integer, intent(out), optional :: stat
    character(*), intent(inout), optional :: errmsg
    integer(c_int64_t), allocatable :: first(:), extents(:)
    integer(c_int32_t) :: rc
    character(:), allocatable :: message
    logical :: ok
    integer :: axis
    rc = ZARR_OK
    message = ""
    extents = dshape
    ok = .true.
    if (present(count)) call to_int64(count, extents, ok)
    if (ok .and. present(start)) then
      call to_int64(start, first, ok)
    else if (ok) then
      allocate(first(size(extents)))
      first = 1
    end if
    axis = size(extents)
    if (present(dim)) axis = dim
    if (.not. ok) then
      rc = ZARR_ERR_INVALID_ARG
      message = "start and count must be integer(4) or integer(8) arrays"
    else if (size(first) /= size(extents)) then
      rc = ZARR_ERR_RANK_MISMATCH
      message = "start has " // itoa(size(first)) // " indices but count (or the data) " // &
                itoa(size(extents)) // " extents"
    else if (any(first < 1)) then
      rc = ZARR_ERR_OUT_OF_BOUNDS
      message = "start indices are 1-based: got a start below 1"
    else if (append .and. (axis < 1 .or. axis > size(extents))) then
      rc = ZARR_ERR_INVALID_ARG
      message = "dim " // itoa(axis) // " is not a dimension of a block of rank " // &
                itoa(size(extents))
    end if
    call agree(comm, rc, message)
    if (rc == ZARR_OK) then
      ! Fortran order, 1-based, to C order, 0-based: the data goes as it lies.
      first = first(size(first):1:-1) - 1
      extents = extents(size(extents):1:-1)
      if (append) then
        rc = c_append(int(comm%MPI_VAL, c_int), arr%ptr, int(size(extents) - axis, c_size_t), &
                      int(size(extents), c_size_t), first, extents, dtype, ZARR_ORDER_C, buf, &
                      bytes)
      else
        rc = c_write(int(comm%MPI_VAL, c_int), arr%ptr, int(size(extents), c_size_t), first, &
                     extents, dtype, ZARR_ORDER_C, buf, bytes)
      end if
      message = zarr_mpi_last_error()
    end if
    call report(rc, message, what, stat, errmsg)
  end subroutine collective

  ! Passes `data` (any of the types below, any rank) on to `collective`.
  subroutine put(arr, comm, data, dtype, start, count, dim, append, what, stat, errmsg)
    type(zarr_array), intent(in) :: arr
    type(MPI_Comm), intent(in) :: comm
    type(*), intent(in), target, contiguous :: data(..)
    integer(c_int32_t), intent(in) :: dtype
    class(*), intent(in), optional :: start(:), count(:)
    integer, intent(in), optional :: dim
    logical, intent(in) :: append
    character(*), intent(in) :: what
    integer, intent(out), optional :: stat
    character(*), intent(inout), optional :: errmsg
    type(c_ptr) :: buf
    buf = c_null_ptr  ! an empty block: NULL, as the C layer allows
    if (size(data) > 0) buf = c_loc(data)
    call collective(arr, comm, buf, size(data, kind=c_size_t) * c_zarr_dtype_size(dtype), &
                    dtype, shape(data, kind=c_int64_t), start, count, dim, append, what, &
                    stat, errmsg)
  end subroutine put

  subroutine write_i4(arr, comm, data, start, count, stat, errmsg)
    type(zarr_array), intent(in) :: arr
    type(MPI_Comm), intent(in) :: comm
    integer(c_int32_t), intent(in), target, contiguous :: data(..)
    class(*), intent(in), optional :: start(:), count(:)
    integer, intent(out), optional :: stat
    character(*), intent(inout), optional :: errmsg
    call put(arr, comm, data, ZARR_DTYPE_INT32, start, count, append=.false., &
             what="zarr_mpi_write", stat=stat, errmsg=errmsg)
  end subroutine write_i4

  subroutine write_i8(arr, comm, data, start, count, stat, errmsg)
    type(zarr_array), intent(in) :: arr
    type(MPI_Comm), intent(in) :: comm
    integer(c_int64_t), intent(in), target, contiguous :: data(..)
    class(*), intent(in), optional :: start(:), count(:)
    integer, intent(out), optional :: stat
    character(*), intent(inout), optional :: errmsg
    call put(arr, comm, data, ZARR_DTYPE_INT64, start, count, append=.false., &
             what="zarr_mpi_write", stat=stat, errmsg=errmsg)
  end subroutine write_i8

  subroutine write_r4(arr, comm, data, start, count, stat, errmsg)
    type(zarr_array), intent(in) :: arr
    type(MPI_Comm), intent(in) :: comm
    real(c_float), intent(in), target, contiguous :: data(..)
    class(*), intent(in), optional :: start(:), count(:)
    integer, intent(out), optional :: stat
    character(*), intent(inout), optional :: errmsg
    call put(arr, comm, data, ZARR_DTYPE_FLOAT32, start, count, append=.false., &
             what="zarr_mpi_write", stat=stat, errmsg=errmsg)
  end subroutine write_r4

  subroutine write_r8(arr, comm, data, start, count, stat, errmsg)
    type(zarr_array), intent(in) :: arr
    type(MPI_Comm), intent(in) :: comm
    real(c_double), intent(in), target, contiguous :: data(..)
    class(*), intent(in), optional :: start(:), count(:)
    integer, intent(out), optional :: stat
    character(*), intent(inout), optional :: errmsg
    call put(arr, comm, data, ZARR_DTYPE_FLOAT64, start, count, append=.false., &
             what="zarr_mpi_write", stat=stat, errmsg=errmsg)
  end subroutine write_r8

  subroutine append_i4(arr, comm, data, dim, start, count, stat, errmsg)
    type(zarr_array), intent(in) :: arr
    type(MPI_Comm), intent(in) :: comm
    integer(c_int32_t), intent(in), target, contiguous :: data(..)
    integer, intent(in), optional :: dim
    class(*), intent(in), optional :: start(:), count(:)
    integer, intent(out), optional :: stat
    character(*), intent(inout), optional :: errmsg
    call put(arr, comm, data, ZARR_DTYPE_INT32, start, count, dim, .true., &
             "zarr_mpi_append", stat, errmsg)
  end subroutine append_i4

  subroutine append_i8(arr, comm, data, dim, start, count, stat, errmsg)
    type(zarr_array), intent(in) :: arr
    type(MPI_Comm), intent(in) :: comm
    integer(c_int64_t), intent(in), target, contiguous :: data(..)
    integer, intent(in), optional :: dim
    class(*), intent(in), optional :: start(:), count(:)
    integer, intent(out), optional :: stat
    character(*), intent(inout), optional :: errmsg
    call put(arr, comm, data, ZARR_DTYPE_INT64, start, count, dim, .true., &
             "zarr_mpi_append", stat, errmsg)
  end subroutine append_i8

  subroutine append_r4(arr, comm, data, dim, start, count, stat, errmsg)
    type(zarr_array), intent(in) :: arr
    type(MPI_Comm), intent(in) :: comm
    real(c_float), intent(in), target, contiguous :: data(..)
    integer, intent(in), optional :: dim
    class(*), intent(in), optional :: start(:), count(:)
    integer, intent(out), optional :: stat
    character(*), intent(inout), optional :: errmsg
    call put(arr, comm, data, ZARR_DTYPE_FLOAT32, start, count, dim, .true., &
             "zarr_mpi_append", stat, errmsg)
  end subroutine append_r4

  subroutine append_r8(arr, comm, data, dim, start, count, stat, errmsg)
    type(zarr_array), intent(in) :: arr
    type(MPI_Comm), intent(in) :: comm
    real(c_double), intent(in), target, contiguous :: data(..)
    integer, intent(in), optional :: dim
    class(*), intent(in), optional :: start(:), count(:)
    integer, intent(out), optional :: stat
    character(*), intent(inout), optional :: errmsg
    call put(arr, comm, data, ZARR_DTYPE_FLOAT64, start, count, dim, .true., &
             "zarr_mpi_append", stat, errmsg)
  end subroutine append_r8

end module zarr_mpi
