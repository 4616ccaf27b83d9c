! quickstart.f90 — the C quickstart with the Fortran binding (module zarr): write a 2-D field
! to a Zarr v3 array on local disk, read it back and print a summary. Dimensions are in
! Fortran order: t(nx, ny) is stored with shape [ny, nx], so zarr-python reads it as t.T:
!
!     python -c "import zarr; print(zarr.open('quickstart.zarr/temperature')[:2, :3])"
!
! Usage: quickstart_fortran [directory]   (default: quickstart.zarr)
program quickstart
  use zarr
  implicit none
  integer, parameter :: nx = 1200, ny = 1000
  real(8), allocatable :: t(:, :), back(:, :)
  type(zarr_store) :: store
  type(zarr_array) :: arr
  character(1024) :: dir
  character(:), allocatable :: attrs
  integer(8), allocatable :: shape_f(:)
  integer :: x, y

  dir = "quickstart.zarr"
  if (command_argument_count() > 0) call get_command_argument(1, dir)

  ! A smooth temperature field: t(x, y), x varying fastest.
  allocate(t(nx, ny), back(nx, ny))
  do y = 1, ny
    do x = 1, nx
      t(x, y) = 15 + 10 * sin((y - 1) / 80d0) * cos((x - 1) / 120d0)
    end do
  end do

  call zarr_open_store(store, trim(dir), ZARR_MODE_A)
  call zarr_create_array(arr, store, "temperature", ZARR_DTYPE_FLOAT64, shape(t), &
                         chunks=[300, 250], fill_value='"NaN"', &
                         compressor='{"id": "blosc", "cname": "zstd", "clevel": 5, "shuffle": 2}')
  call zarr_set_attr(arr, "units", "degC")
  call zarr_set_attr(arr, "long_name", "air temperature")
  call zarr_set_dimension_names(arr, ["x", "y"])
  call zarr_write(arr, t)
  call arr%close()

  ! Reopen read-only and read everything back.
  call zarr_open_array(arr, store, "temperature", ZARR_MODE_R)
  call zarr_read(arr, back)
  call zarr_inquire(arr, shape=shape_f)
  call zarr_get_attrs(arr, attrs)
  call arr%close()
  call store%close()

  print "(a)", "libzarr " // zarr_version() // " quickstart (Fortran)"
  print "(a)", "  array       " // trim(dir) // "/temperature"
  print "(a, i0, ' x ', i0, a)", "  shape       ", shape_f(1), shape_f(2), &
        " (Fortran order; stored reversed)"
  print "(a)", "  attributes  " // attrs
  print "(a, f0.4, a, f0.4)", "  sample      t(1,1)=", back(1, 1), " t(601,501)=", back(601, 501)
  if (any(back /= t)) error stop "  read back   MISMATCH"
  print "(a)", "  read back   identical"
end program quickstart
