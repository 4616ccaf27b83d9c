! collective_f.f90 — the Fortran module zarr_mpi on any number of ranks: a field written
! collectively (real(8), blocks that do not line up with the chunks, one rank's block
! empty from 3 ranks on; again in chunks of a row, encoded where held), a series appended step by step (real(4), sharded, dimension
! names and a missing value), and a refusal on one rank returned on every rank. Rank 0
! reads everything back through module zarr and compares each value. Given an Icechunk
! repository's directory too: steps written with zarr_mpi_write, each committed as one
! snapshot by zarr_mpi_commit (the same id on every rank), read back exact by every rank.
!
! Usage: mpirun -np N collective_f <directory> [<absolute directory of a new repository>]
! Prints "collective_f (N ranks): P passed, F failed" from rank 0; exits 1 on a failure.
program collective_f
  use, intrinsic :: iso_c_binding
  use mpi_f08
  use zarr
  use zarr_mpi
  implicit none
  integer, parameter :: nx = 37, ny = 29, nsteps = 5
  type(zarr_store) :: store
  type(zarr_array) :: field, series
  integer :: rank, nranks, passed, failed, j0, nj, t, i, j, st, bad
  real(8), allocatable :: block8(:, :), all8(:, :)
  real(4), allocatable :: block4(:, :), all4(:, :, :)
  integer(c_int64_t), allocatable :: shape(:)
  character(len=256) :: dir, msg, repo

  call MPI_Init()
  call MPI_Comm_rank(MPI_COMM_WORLD, rank)
  call MPI_Comm_size(MPI_COMM_WORLD, nranks)
  passed = 0
  failed = 0
  call get_command_argument(1, dir)
  call zarr_set_num_threads(1)
  call zarr_open_store(store, trim(dir), ZARR_MODE_A)
  call band(rank, nranks, j0, nj)

  ! A field written by every rank's band of rows.
  call zarr_mpi_create_array(field, MPI_COMM_WORLD, store, "orography", ZARR_DTYPE_FLOAT64, &
                             [nx, ny], chunks=[10, 8], dims=[character(3) :: "lon", "lat"])
  allocate(block8(nx, nj))
  do j = 1, nj
    do i = 1, nx
      block8(i, j) = value8(i, j0 + j - 1)
    end do
  end do
  call zarr_mpi_write(field, MPI_COMM_WORLD, block8, start=[1, j0])
  bad = 0
  if (rank == 0) then
    allocate(all8(nx, ny))
    call zarr_read(field, all8)
    do j = 1, ny
      do i = 1, nx
        if (all8(i, j) /= value8(i, j)) bad = bad + 1
      end do
    end do
  end if
  call verdict("write", bad)
  call field%close()

  ! The same field in chunks of one row, each encoded by the rank whose band holds it.
  call zarr_mpi_set_encode_where_held(.true.)
  call zarr_mpi_create_array(field, MPI_COMM_WORLD, store, "orography_rows", &
                             ZARR_DTYPE_FLOAT64, [nx, ny], chunks=[nx, 1], &
                             dims=[character(3) :: "lon", "lat"])
  call zarr_mpi_write(field, MPI_COMM_WORLD, block8, start=[1, j0])
  call zarr_mpi_set_encode_where_held(.false.)
  bad = 0
  if (rank == 0) then
    call zarr_read(field, all8)
    do j = 1, ny
      do i = 1, nx
        if (all8(i, j) /= value8(i, j)) bad = bad + 1
      end do
    end do
  end if
  call verdict("encoded_where_held", bad)
  call field%close()

  ! A series appended step by step: the array grows once per step on every handle.
  call zarr_mpi_create_array(series, MPI_COMM_WORLD, store, "tas", ZARR_DTYPE_FLOAT32, &
                             [nx, ny, 0], chunks=[nx, 8, 1], shards=[nx, 16, 2], &
                             dims=[character(4) :: "lon", "lat", "time"], missing_value=1.0e20)
  allocate(block4(nx, nj))
  do t = 1, nsteps
    do j = 1, nj
      do i = 1, nx
        block4(i, j) = value4(i, j0 + j - 1, t)
      end do
    end do
    call zarr_mpi_append(series, MPI_COMM_WORLD, block4, start=[1, j0, 1], count=[nx, nj, 1])
  end do
  bad = 0
  if (rank == 0) then
    allocate(all4(nx, ny, nsteps))
    call zarr_read(series, all4)
    do t = 1, nsteps
      do j = 1, ny
        do i = 1, nx
          if (all4(i, j, t) /= value4(i, j, t)) bad = bad + 1
        end do
      end do
    end do
  end if
  call verdict("append", bad)

  ! A start below 1 on the last rank only: every rank gets the refusal, naming that rank,
  ! and the series keeps its steps.
  bad = 0
  msg = ""
  if (rank == nranks - 1) then
    call zarr_mpi_append(series, MPI_COMM_WORLD, block4, start=[0, j0, 1], &
                         count=[nx, nj, 1], stat=st, errmsg=msg)
  else
    call zarr_mpi_append(series, MPI_COMM_WORLD, block4, start=[1, j0, 1], &
                         count=[nx, nj, 1], stat=st, errmsg=msg)
  end if
  if (st /= ZARR_ERR_OUT_OF_BOUNDS) bad = bad + 1
  if (index(msg, "rank " // itoa(nranks - 1) // ": ") /= 1) bad = bad + 1
  call zarr_inquire(series, shape=shape)
  if (shape(3) /= nsteps) bad = bad + 1
  call verdict("refused", bad)
  call series%close()

  call store%close()

  call get_command_argument(2, repo)
  if (len_trim(repo) > 0) call commit_case("icechunk://" // trim(repo))

  if (rank == 0) print '(a, i0, a, i0, a, i0, a)', "collective_f (", nranks, " ranks): ", passed, &
    " passed, ", failed, " failed"
  call MPI_Finalize()
  if (failed > 0) error stop 1

contains

  ! Steps of a field written collectively into an Icechunk repository, one snapshot each.
  subroutine commit_case(url)
    character(*), intent(in) :: url
    type(zarr_store) :: repo_store
    type(zarr_array) :: arr
    character(len=20) :: id
    character(len=20), allocatable :: ids(:)
    real(8), allocatable :: mine(:, :, :), back(:, :, :)
    integer :: step, k
    if (rank == 0) then
      call zarr_open_url(repo_store, url, ZARR_MODE_W_MINUS)
      call zarr_create_array(arr, repo_store, "field", ZARR_DTYPE_FLOAT64, [nx, ny, 2], &
                             chunks=[10, 8, 1], shards=[20, 16, 1])
      call arr%close()
      call zarr_commit(repo_store, "setup")
      call repo_store%close()
    end if
    call MPI_Barrier(MPI_COMM_WORLD)
    call zarr_open_url(repo_store, url, ZARR_MODE_R_PLUS)
    call zarr_mpi_open_array(arr, MPI_COMM_WORLD, repo_store, "field")
    allocate(mine(nx, nj, 1), back(nx, ny, 2), ids(nranks))
    bad = 0
    do step = 1, 2
      do j = 1, nj
        do i = 1, nx
          mine(i, j, 1) = value8(i, j0 + j - 1) + step
        end do
      end do
      call zarr_mpi_write(arr, MPI_COMM_WORLD, mine, start=[1, j0, step])
      call zarr_mpi_commit(MPI_COMM_WORLD, repo_store, "step " // itoa(step), id)
      call MPI_Allgather(id, 20, MPI_CHARACTER, ids, 20, MPI_CHARACTER, MPI_COMM_WORLD)
      do k = 1, nranks
        if (ids(k) /= id .or. len_trim(id) /= 20) bad = bad + 1
      end do
    end do
    call zarr_read(arr, back)
    do step = 1, 2
      do j = 1, ny
        do i = 1, nx
          if (back(i, j, step) /= value8(i, j) + step) bad = bad + 1
        end do
      end do
    end do
    call verdict("commit", bad)
    call arr%close()
    call repo_store%close()
  end subroutine commit_case

  ! Rank `r`'s band of rows of `ny`: uneven, rank 1 empty from 3 ranks on.
  subroutine band(r, n, first, count)
    integer, intent(in) :: r, n
    integer, intent(out) :: first, count
    integer :: weights(0:63), total, before, q
    total = 0
    before = 0
    do q = 0, n - 1
      weights(q) = (q + 1) * (q + 1)
      if (n >= 3 .and. q == 1) weights(q) = 0
      total = total + weights(q)
      if (q < r) before = before + weights(q)
    end do
    first = 1 + ny * before / total
    count = ny * (before + weights(r)) / total - (first - 1)
  end subroutine band

  pure real(8) function value8(i, j)
    integer, intent(in) :: i, j
    value8 = real(i, 8) * 1000 + real(j, 8) + 0.25d0
  end function value8

  pure real(4) function value4(i, j, t)
    integer, intent(in) :: i, j, t
    value4 = real(t * 10000 + j * 100 + i, 4)
  end function value4

  ! Records a case: it passes when it passed on every rank.
  subroutine verdict(name, bad)
    character(*), intent(in) :: name
    integer, intent(in) :: bad
    integer :: any
    call MPI_Allreduce(bad, any, 1, MPI_INTEGER, MPI_MAX, MPI_COMM_WORLD)
    if (any == 0) then
      passed = passed + 1
      if (rank == 0) print '(2a)', "ok   ", name
    else
      failed = failed + 1
      if (rank == 0) print '(2a)', "FAIL ", name
    end if
  end subroutine verdict

  pure function itoa(n) result(s)
    integer, intent(in) :: n
    character(:), allocatable :: s
    character(len=12) :: buf
    write(buf, '(i0)') n
    s = trim(buf)
  end function itoa
end program collective_f
