! mpi_rectilinear.f90 — uneven subdomains written as one Zarr array, one chunk per MPI rank,
! from Fortran (the Fortran version of mpi_rectilinear.c).
!
! The ranks form a 2-D process grid. Along Fortran dimension 2 the subdomains differ in size
! (as a load-balanced decomposition makes them): the array gets a rectilinear chunk grid
! (Zarr v3) whose edges there are the subdomains' extents; along dimension 1 they are equal
! and so are the chunks. Each rank's block is then exactly one chunk: every write covers its
! chunk whole, nothing is read back and merged, and no synchronizer is needed. Rank 0
! creates the array; after a barrier every rank checks that its block is one chunk and
! writes it; rank 0 then reads the whole array back and checks every value.
!
! Usage: mpirun -np N mpi_rectilinear_f <directory>
program mpi_rectilinear_f
  use mpi
  use zarr
  implicit none
  integer, parameter :: rows = 12  ! extent of every subdomain along dimension 1
  type(zarr_store) :: store
  type(zarr_array) :: arr
  character(4096) :: directory
  integer :: rank, nranks, ierr, cart, dims(2), coords(2), c, i, j, failures
  integer(8) :: shape(2), start(2), block(2)
  integer(8), allocatable :: edges(:), grid_edges(:), first(:), last(:)
  real(8), allocatable :: local(:, :), whole(:, :)
  logical :: own

  call mpi_init(ierr)
  call mpi_comm_rank(MPI_COMM_WORLD, rank, ierr)
  call mpi_comm_size(MPI_COMM_WORLD, nranks, ierr)
  if (command_argument_count() < 1) then
    if (rank == 0) print "(a)", "usage: mpi_rectilinear_f <directory>"
    call mpi_finalize(ierr)
    stop 2
  end if
  call get_command_argument(1, directory)
  dims = 0
  call mpi_dims_create(nranks, 2, dims, ierr)
  call mpi_cart_create(MPI_COMM_WORLD, 2, dims, [.false., .false.], .false., cart, ierr)
  call mpi_cart_coords(cart, rank, 2, coords, ierr)
  coords = coords + 1  ! 1-based, as chunk indices are

  ! Dimension 2's edges are the subdomains' uneven extents; this rank's block starts after
  ! the subdomains before it.
  allocate(edges(dims(2)))
  edges = [(extent(c), c = 1, dims(2))]
  shape = [int(rows * dims(1), 8), sum(edges)]
  block = [int(rows, 8), edges(coords(2))]
  start = [int(rows * (coords(1) - 1) + 1, 8), sum(edges(1:coords(2) - 1)) + 1]

  call zarr_set_num_threads(1)
  call zarr_open_store(store, trim(directory), ZARR_MODE_A)
  if (rank == 0) then
    call zarr_create_array(arr, store, "field", ZARR_DTYPE_FLOAT64, shape, chunks=[rows, 1], &
                           fill_value='"NaN"', zarr_format=3, mode=ZARR_MODE_W, &
                           edges_dim=2, edges=edges)
    call arr%close()
  end if
  call mpi_barrier(MPI_COMM_WORLD, ierr)
  call zarr_open_array(arr, store, "field", ZARR_MODE_R_PLUS)

  ! The block is exactly the chunk at this rank's grid coordinates: its first and last
  ! elements lie in that chunk, and the chunk's edges are the block's extents.
  call zarr_chunk_of(arr, start, first)
  call zarr_chunk_of(arr, start + block - 1, last)
  call zarr_chunk_edges(arr, 2, grid_edges)
  own = all(first == coords) .and. all(last == coords) .and. size(grid_edges) == dims(2)
  if (own) own = grid_edges(coords(2)) == block(2)
  if (.not. own) then
    print "(a, i0, a)", "rank ", rank, ": its block is not one chunk of the grid"
    call mpi_abort(MPI_COMM_WORLD, 1, ierr)
  end if

  allocate(local(block(1), block(2)))
  do j = 1, int(block(2))
    do i = 1, int(block(1))
      local(i, j) = expected(start(1) + i - 1, start(2) + j - 1)
    end do
  end do
  call zarr_write(arr, local, start=start)
  call mpi_barrier(MPI_COMM_WORLD, ierr)

  failures = 0
  if (rank == 0) then
    allocate(whole(shape(1), shape(2)))
    call zarr_read(arr, whole)
    do j = 1, int(shape(2))
      do i = 1, int(shape(1))
        if (whole(i, j) /= expected(int(i, 8), int(j, 8))) failures = failures + 1
      end do
    end do
    print "(a, i0, a, i0, a, i0, a, i0, a, i0, a, a)", "mpi_rectilinear_f: ", nranks, &
          " ranks (", dims(1), "x", dims(2), "), one uneven chunk each, shape ", shape(1), &
          "x", shape(2), ": ", merge("verified", "MISMATCH", failures == 0)
  end if
  call arr%close()
  call store%close()
  call mpi_bcast(failures, 1, MPI_INTEGER, 0, MPI_COMM_WORLD, ierr)
  call mpi_comm_free(cart, ierr)
  call mpi_finalize(ierr)
  if (failures /= 0) error stop 1

contains

  ! The extent of subdomain `c` along dimension 2: uneven on purpose.
  pure integer(8) function extent(c)
    integer, intent(in) :: c
    extent = 6 + 5 * int(c - 1, 8)
  end function extent

  ! The value every element must hold: its global (1-based) index, encoded.
  pure real(8) function expected(i, j)
    integer(8), intent(in) :: i, j
    expected = real(i, 8) * 1d4 + real(j, 8)
  end function expected

end program mpi_rectilinear_f
