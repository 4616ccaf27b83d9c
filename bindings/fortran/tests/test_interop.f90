! The Fortran side of the zarr-python interop check (interop.py runs it):
!   test_interop write DIR   writes arrays in DIR for zarr-python to check
!   test_interop read DIR    reads DIR/from_python (written by zarr-python) and checks it
! Values are formulas of the 1-based Fortran indices, which interop.py evaluates with the
! indices reversed: a(i, j, k) here is arr[k-1, j-1, i-1] in numpy.
program test_interop
  use zarr
  use testing
  implicit none
  character(4096) :: mode, dir
  type(zarr_store) :: store
  type(zarr_array) :: arr
  real(8) :: f8(4, 3, 2)
  real(4) :: f4(4, 3, 2), scalar
  integer(2) :: i2(5, 7)
  logical :: flags(3, 2)
  complex(8) :: c8(3)
  integer(8), allocatable :: shp(:)
  integer :: i, j, k

  call get_command_argument(1, mode)
  call get_command_argument(2, dir)
  call zarr_open_store(store, trim(dir), ZARR_MODE_A)

  if (mode == "write") then
    do k = 1, 2
      do j = 1, 3
        do i = 1, 4
          f8(i, j, k) = 100 * i + 10 * j + k + 0.5d0
        end do
      end do
    end do
    call zarr_create_array(arr, store, "f8", ZARR_DTYPE_FLOAT64, shape(f8), chunks=[3, 2, 1], zarr_format=2)
    call zarr_write(arr, f8)
    call zarr_set_dimension_names(arr, ["x", "y", "z"])
    call zarr_set_attr(arr, "units", "K")
    call zarr_set_attr(arr, "scale", 0.25d0)
    call zarr_set_attr(arr, "count", 7)
    call arr%close()

    do j = 1, 7
      do i = 1, 5
        i2(i, j) = int(i * 1000 - j * 3, 2)
      end do
    end do
    call zarr_create_array(arr, store, "i2", ZARR_DTYPE_INT16, shape(i2), chunks=[2, 3], &
                           compressor='{"id": "zstd", "level": 1}', zarr_format=2)
    call zarr_write(arr, i2)
    call arr%close()

    do j = 1, 2
      do i = 1, 3
        flags(i, j) = mod(i + j, 2) == 0
      end do
    end do
    call zarr_create_array(arr, store, "flags", ZARR_DTYPE_BOOL, shape(flags), zarr_format=2)
    call zarr_write(arr, flags)
    call arr%close()

    c8 = [(cmplx(i, -2 * i, 8), i = 1, 3)]
    call zarr_create_array(arr, store, "c8", ZARR_DTYPE_COMPLEX128, shape(c8), zarr_format=2)
    call zarr_write(arr, c8)
    call arr%close()

    scalar = 2.75
    call zarr_create_array(arr, store, "scalar", ZARR_DTYPE_FLOAT32, [integer ::], zarr_format=2)
    call zarr_write(arr, scalar)
    call arr%close()
    print "(a)", "test_interop: wrote f8, i2, flags, c8, scalar"
  else
    ! zarr-python wrote numpy shape (2, 3, 4) float32 with arr[k, j, i] = 100k + 10j + i
    ! (0-based), which is f4(i+1, j+1, k+1) here.
    call zarr_open_array(arr, store, "from_python")
    call zarr_inquire(arr, shape=shp)
    call check(all(shp == [4, 3, 2]), "from_python: shape in Fortran order")
    call zarr_read(arr, f4)
    do k = 1, 2
      do j = 1, 3
        do i = 1, 4
          call check(f4(i, j, k) == 100 * (k - 1) + 10 * (j - 1) + (i - 1), "from_python value")
        end do
      end do
    end do
    call arr%close()
    call finish("test_interop read")
  end if
  call store%close()
end program test_interop
