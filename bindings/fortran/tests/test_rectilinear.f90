! Rectilinear chunk grids: an array created with chunk edges along one Fortran dimension,
! written and read back exactly, its edges and the chunk holding an element queried.
program test_rectilinear
  use zarr
  use testing
  implicit none
  type(zarr_store) :: store
  type(zarr_array) :: arr
  integer(8), allocatable :: edges(:), chunk(:)
  real(8) :: a(3, 10), b(3, 10)
  integer :: i, stat
  character(100) :: msg

  call zarr_memory_store(store)
  ! Fortran dimension 2 (the slow one) in chunks of 1, 2, 3 and 4.
  call zarr_create_array(arr, store, "r", ZARR_DTYPE_FLOAT64, [3, 10], chunks=[3, 4], &
                         zarr_format=3, edges_dim=2, edges=[1, 2, 3, 4])
  a = reshape([(real(i, 8) / 4, i = 1, 30)], shape(a))
  call zarr_write(arr, a)
  call zarr_read(arr, b)
  call check(all(a == b), "the whole array reads back")
  call zarr_read(arr, b(:, 3:7), start=[1, 3])
  call check(all(b(:, 3:7) == a(:, 3:7)), "a region across three chunks reads back")

  call zarr_chunk_edges(arr, 2, edges)
  call check(size(edges) == 4, "four edges along dimension 2")
  if (size(edges) == 4) call check(all(edges == [1, 2, 3, 4]), "the edges given")
  call zarr_chunk_edges(arr, 1, edges)
  call check(size(edges) == 1, "one chunk along dimension 1")
  if (size(edges) == 1) call check(edges(1) == 3, "of the chunk shape's length")
  call zarr_chunk_edges(arr, 3, edges, stat=stat)
  call check(stat == ZARR_ERR_INVALID_ARG, "no dimension 3")

  call zarr_chunk_of(arr, [3, 7], chunk)
  call check(all(chunk == [1, 4]), "element (3, 7) lies in chunk (1, 4)")
  call zarr_chunk_of(arr, [1, 11], chunk, stat=stat, errmsg=msg)
  call check(stat == ZARR_ERR_OUT_OF_BOUNDS .and. &
             msg == "dimension 2: index 11 is outside 1 to 10", "index 11 is outside")
  call zarr_chunk_of(arr, [1, 1, 1], chunk, stat=stat)
  call check(stat == ZARR_ERR_RANK_MISMATCH, "three indices for two dimensions")

  call zarr_create_array(arr, store, "bad", ZARR_DTYPE_FLOAT64, [3, 10], zarr_format=3, &
                         edges_dim=2, edges=[4, 4], stat=stat)
  call check(stat == ZARR_ERR_INVALID_ARG, "edges short of the extent are refused")
  call finish("test_rectilinear")
end program test_rectilinear
