! Without stat, a failure stops the program with the message: ctest expects the output
! "zarr_open_array: ZARR_ERR_NOT_FOUND: ... nothing/here" and never "reached".
program test_error_stop
  use zarr
  implicit none
  type(zarr_store) :: store
  type(zarr_array) :: arr
  call zarr_memory_store(store)
  call zarr_open_array(arr, store, "nothing/here")
  print "(a)", "reached"
end program test_error_stop
