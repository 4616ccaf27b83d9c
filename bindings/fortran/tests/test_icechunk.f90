! Icechunk repositories from Fortran: an array written, committed (with its snapshot id),
! tagged, changed and discarded, a branch made, a second writer's changes exported and
! merged into the first's commit, and the statuses of an empty commit and of
! a store that keeps no history. Exits 77 (skipped) in builds without Icechunk. The
! repository goes to the current directory (ctest gives the test its own), named by its
! absolute path as icechunk:// URLs require.
program test_icechunk
  use, intrinsic :: iso_c_binding, only: c_int8_t
  use zarr
  use zarr_c, only: c_zarr_features
  use testing
  implicit none
  type(zarr_store) :: store, memory, tagged, second
  type(zarr_array) :: arr, old, other, created, merged
  integer(c_int8_t), allocatable :: changes(:)
  character(20) :: id
  character(200) :: msg
  character(4096) :: cwd
  character(:), allocatable :: url
  integer :: stat, back(4)

  if (iand(c_zarr_features(), ZARR_HAS_ICECHUNK) == 0) then
    write (*, "(a)") "test_icechunk: built without Icechunk, skipped"
    stop 77
  end if
  call getcwd(cwd, stat)
  call check(stat == 0, "the working directory")
  url = "icechunk://" // trim(cwd) // "/repo"
  call zarr_open_url(store, url, ZARR_MODE_A)
  call zarr_create_array(arr, store, "a", ZARR_DTYPE_INT32, [4], zarr_format=3)
  call zarr_write(arr, [1, 2, 3, 4])
  call zarr_commit(store, "first", id)
  call check(len_trim(id) == 20, "a 20-character snapshot id")
  call zarr_create_tag(store, "v1")

  ! Uncommitted changes are dropped by discard; a commit of nothing is refused.
  call zarr_write(arr, [9, 9, 9, 9])
  call zarr_discard(store)
  call zarr_read(arr, back)
  call check(all(back == [1, 2, 3, 4]), "discarded values")
  call zarr_commit(store, "nothing", stat=stat, errmsg=msg)
  call check(stat == ZARR_ERR_INVALID_ARG, "an empty commit")

  ! The tag keeps the first commit while the branch moves on.
  call zarr_write(arr, [5, 6, 7, 8])
  call zarr_commit(store, "second")
  call zarr_open_url(tagged, url // "?tag=v1", ZARR_MODE_R)
  call zarr_open_array(old, tagged, "a", ZARR_MODE_R)
  call zarr_read(old, back)
  call check(all(back == [1, 2, 3, 4]), "the tagged values")
  call zarr_create_branch(tagged, "rerun")
  call zarr_rebase(store)

  ! A second writer's changes, exported and merged, go into the first writer's commit.
  call zarr_create_array(created, store, "b", ZARR_DTYPE_INT32, [4], zarr_format=3)
  call zarr_commit(store, "b")
  call zarr_open_url(second, url, ZARR_MODE_R_PLUS)
  call zarr_open_array(other, second, "b", ZARR_MODE_R_PLUS)
  call zarr_write(other, [40, 41, 42, 43])
  call zarr_write(arr, [10, 11, 12, 13])
  call zarr_export_changes(second, changes)
  call check(size(changes) > 0, "exported changes")
  call zarr_merge_changes(store, changes(1:size(changes) / 2), stat=stat, errmsg=msg)
  call check(stat == ZARR_ERR_INVALID_ARG, "truncated changes")
  call zarr_merge_changes(store, changes)
  call zarr_commit(store, "both")
  call zarr_open_array(merged, store, "b", ZARR_MODE_R)
  call zarr_read(merged, back)
  call check(all(back == [40, 41, 42, 43]), "the merged values")
  call zarr_read(arr, back)
  call check(all(back == [10, 11, 12, 13]), "the first writer's values")
  call zarr_export_changes(tagged, changes, stat=stat)
  call check(stat == ZARR_ERR_READ_ONLY .and. size(changes) == 0, "export from a tag")

  ! Stores that keep no history.
  call zarr_memory_store(memory)
  call zarr_commit(memory, "m", stat=stat)
  call check(stat == ZARR_ERR_UNSUPPORTED, "commit on a memory store")
  call zarr_create_tag(memory, "t", stat=stat)
  call check(stat == ZARR_ERR_UNSUPPORTED, "tag on a memory store")
  call finish("test_icechunk")
end program test_icechunk
