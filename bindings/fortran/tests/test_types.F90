! zarr_write and zarr_read for every supported element type at ranks 0 to 5, whole arrays
! and blocks at 1-based offsets, compared exactly (the body is roundtrip.inc, included once
! per type by the C preprocessor).
module roundtrips
  use, intrinsic :: iso_c_binding
  use zarr
  use testing
  implicit none
contains

#define SAME(a, b) ((a) == (b))

#define NAME roundtrip_i1
#define LABEL "i1"
#define TYPE integer(c_int8_t)
#define DTYPE ZARR_DTYPE_INT8
#define VAL(i) int(mod(i * 37, 256) - 128, c_int8_t)
#include "roundtrip.inc"
#undef NAME
#undef LABEL
#undef TYPE
#undef DTYPE
#undef VAL

#define NAME roundtrip_i2
#define LABEL "i2"
#define TYPE integer(c_int16_t)
#define DTYPE ZARR_DTYPE_INT16
#define VAL(i) int(i * 211 - 15000, c_int16_t)
#include "roundtrip.inc"
#undef NAME
#undef LABEL
#undef TYPE
#undef DTYPE
#undef VAL

#define NAME roundtrip_i4
#define LABEL "i4"
#define TYPE integer(c_int32_t)
#define DTYPE ZARR_DTYPE_INT32
#define VAL(i) int(i, c_int32_t) * 14000000 - 1000000000
#include "roundtrip.inc"
#undef NAME
#undef LABEL
#undef TYPE
#undef DTYPE
#undef VAL

#define NAME roundtrip_i8
#define LABEL "i8"
#define TYPE integer(c_int64_t)
#define DTYPE ZARR_DTYPE_INT64
#define VAL(i) int(i, c_int64_t) * 60000000000000000_c_int64_t - 4000000000000000000_c_int64_t
#include "roundtrip.inc"
#undef NAME
#undef LABEL
#undef TYPE
#undef DTYPE
#undef VAL

#define NAME roundtrip_r4
#define LABEL "r4"
#define TYPE real(c_float)
#define DTYPE ZARR_DTYPE_FLOAT32
#define VAL(i) real(i, c_float) * 0.25_c_float - 7.5_c_float
#include "roundtrip.inc"
#undef NAME
#undef LABEL
#undef TYPE
#undef DTYPE
#undef VAL

#define NAME roundtrip_r8
#define LABEL "r8"
#define TYPE real(c_double)
#define DTYPE ZARR_DTYPE_FLOAT64
#define VAL(i) real(i, c_double) / 1024.0_c_double - 1.0e10_c_double
#include "roundtrip.inc"
#undef NAME
#undef LABEL
#undef TYPE
#undef DTYPE
#undef VAL

#define NAME roundtrip_c4
#define LABEL "c4"
#define TYPE complex(c_float_complex)
#define DTYPE ZARR_DTYPE_COMPLEX64
#define VAL(i) cmplx(real(i, c_float) * 0.5_c_float, -real(i, c_float), c_float_complex)
#include "roundtrip.inc"
#undef NAME
#undef LABEL
#undef TYPE
#undef DTYPE
#undef VAL

#define NAME roundtrip_c8
#define LABEL "c8"
#define TYPE complex(c_double_complex)
#define DTYPE ZARR_DTYPE_COMPLEX128
#define VAL(i) cmplx(real(i, c_double) * 1.5_c_double, 1.0_c_double / real(i, c_double), c_double_complex)
#include "roundtrip.inc"
#undef NAME
#undef LABEL
#undef TYPE
#undef DTYPE
#undef VAL
#undef SAME

#define SAME(a, b) ((a) .eqv. (b))
#define NAME roundtrip_l
#define LABEL "l"
#define TYPE logical
#define DTYPE ZARR_DTYPE_BOOL
#define VAL(i) (mod(i, 3) == 1)
#include "roundtrip.inc"

end module roundtrips

program test_types
  use zarr
  use testing
  use roundtrips
  implicit none
  type(zarr_store) :: store
  type(zarr_array) :: arr
  real(8) :: grid(6, 5), section(3, 5)
  integer :: i

  call zarr_memory_store(store)
  call roundtrip_i1(store)
  call roundtrip_i2(store)
  call roundtrip_i4(store)
  call roundtrip_i8(store)
  call roundtrip_r4(store)
  call roundtrip_r8(store)
  call roundtrip_c4(store)
  call roundtrip_c8(store)
  call roundtrip_l(store)

  ! A non-contiguous section (every other row) is copied in and out by the compiler.
  grid = reshape([(real(i, 8), i = 1, 30)], shape(grid))
  call zarr_create_array(arr, store, "section", ZARR_DTYPE_FLOAT64, [3, 5], chunks=[2, 2])
  call zarr_write(arr, grid(1:6:2, :))
  call zarr_read(arr, section)
  call check(all(section == grid(1:6:2, :)), "write from a strided section")
  grid = 0
  call zarr_read(arr, grid(2:6:2, :))
  call check(all(grid(2:6:2, :) == section) .and. all(grid(1:6:2, :) == 0), &
             "read into a strided section")

  ! count= writes a lower-rank block: one row of the 3 x 5 array, as a 1-D vector.
  call zarr_write(arr, [10d0, 20d0, 30d0, 40d0, 50d0], start=[2, 1], count=[1, 5])
  call zarr_read(arr, section)
  call check(all(section(2, :) == [10d0, 20d0, 30d0, 40d0, 50d0]) .and. &
             all(section(1, :) == grid(2, :)), "count= with data of lower rank")
  call arr%close()

  call store%close()
  call finish("test_types")
end program test_types
