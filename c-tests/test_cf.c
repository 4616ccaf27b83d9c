/*
 * CF-style use from C: reading and writing an array through a buffer of another numeric
 * type with netCDF's conversion rules (range errors, truncation, NaN).
 */
#include "check.h"

#include <math.h>

static zarr_store_t *memory(void) {
    zarr_store_t *s = NULL;
    CHECK_OK(zarr_store_new_memory(&s));
    return s;
}

/* A 1-d array of `n` elements of `dtype`, in chunks of 3, of zarr format `format`. */
static zarr_array_t *make(zarr_store_t *s, zarr_dtype_t dtype, int format, uint64_t n) {
    zarr_array_builder_t *b = NULL;
    zarr_array_t *a = NULL;
    const uint64_t chunk = 3;
    CHECK_OK(zarr_array_builder_new(dtype, 1, &n, &b));
    CHECK_OK(zarr_array_builder_set_chunk_shape(b, 1, &chunk));
    CHECK_OK(zarr_array_builder_set_zarr_format(b, format));
    CHECK_OK(zarr_array_create(b, s, "a", ZARR_MODE_W, &a));
    zarr_array_builder_free(b);
    return a;
}

static void read_float_as_double_and_short(void) {
    zarr_store_t *s = memory();
    zarr_array_t *a = make(s, ZARR_DTYPE_FLOAT32, 2, 6);
    const uint64_t start = 0, count = 6;
    const float values[6] = {1.5f, -2.75f, 0.1f, 40000.0f, NAN, -7.9f};
    CHECK_OK(zarr_array_write(a, 1, &start, &count, ZARR_DTYPE_FLOAT32, ZARR_ORDER_C, values,
                              sizeof values));
    double d[6];
    CHECK_OK(zarr_array_read_as(a, 1, &start, &count, ZARR_DTYPE_FLOAT64, ZARR_ORDER_C, d,
                                sizeof d));
    for (int i = 0; i < 6; i++)
        CHECK(i == 4 ? isnan(d[i]) : d[i] == (double)values[i]);
    /* To int16: truncation toward zero; 40000 and NaN do not fit, all others converted. */
    short h[6] = {9, 9, 9, 9, 9, 9};
    CHECK_STATUS(zarr_array_read_as(a, 1, &start, &count, ZARR_DTYPE_INT16, ZARR_ORDER_C, h,
                                    sizeof h),
                 ZARR_ERR_RANGE);
    CHECK_ERROR_CONTAINS("2 of 6 elements of float32 do not fit in int16 (the first at element 3)");
    CHECK(h[0] == 1 && h[1] == -2 && h[2] == 0 && h[5] == -7);
    CHECK(h[3] == 32767 && h[4] == 0);
    /* The buffer must hold the region in the buffer's type; unknown types are refused. */
    CHECK_STATUS(zarr_array_read_as(a, 1, &start, &count, ZARR_DTYPE_FLOAT64, ZARR_ORDER_C, d,
                                    sizeof d - 1),
                 ZARR_ERR_BUFFER_SIZE);
    CHECK_STATUS(zarr_array_read_as(a, 1, &start, &count, ZARR_DTYPE_COMPLEX64, ZARR_ORDER_C, d,
                                    sizeof d),
                 ZARR_ERR_DTYPE_MISMATCH);
    CHECK_ERROR_CONTAINS("complex64");
    CHECK_STATUS(zarr_array_read_as(a, 1, &start, &count, 99, ZARR_ORDER_C, d, sizeof d),
                 ZARR_ERR_INVALID_ARG);
    CHECK_STATUS(zarr_array_read_as(a, 1, &start, &count, ZARR_DTYPE_FLOAT64, ZARR_ORDER_C, NULL,
                                    sizeof d),
                 ZARR_ERR_NULL_ARG);
    const uint64_t far = 5;
    CHECK_STATUS(zarr_array_read_as(a, 1, &far, &count, ZARR_DTYPE_FLOAT64, ZARR_ORDER_C, d,
                                    sizeof d),
                 ZARR_ERR_OUT_OF_BOUNDS);
    zarr_array_free(a);
    zarr_store_free(s);
}

static void write_double_into_short_and_bool(void) {
    zarr_store_t *s = memory();
    zarr_array_t *a = make(s, ZARR_DTYPE_INT16, 3, 4);
    const uint64_t start = 0, count = 4;
    const double ok[4] = {1.9, -1.9, 32767.0, -32768.5};
    CHECK_OK(zarr_array_write_from(a, 1, &start, &count, ZARR_DTYPE_FLOAT64, ZARR_ORDER_C, ok,
                                   sizeof ok));
    short h[4];
    CHECK_OK(zarr_array_read(a, 1, &start, &count, ZARR_DTYPE_INT16, ZARR_ORDER_C, h, sizeof h));
    CHECK(h[0] == 1 && h[1] == -1 && h[2] == 32767 && h[3] == -32768);
    /* One value out of range: nothing is written. */
    const double bad[4] = {5.0, 6.0, 32768.0, 7.0};
    CHECK_STATUS(zarr_array_write_from(a, 1, &start, &count, ZARR_DTYPE_FLOAT64, ZARR_ORDER_C,
                                       bad, sizeof bad),
                 ZARR_ERR_RANGE);
    CHECK_ERROR_CONTAINS("1 of 4 elements of float64 do not fit in int16 (the first at element 2)");
    CHECK_OK(zarr_array_read(a, 1, &start, &count, ZARR_DTYPE_INT16, ZARR_ORDER_C, h, sizeof h));
    CHECK(h[0] == 1 && h[1] == -1 && h[2] == 32767 && h[3] == -32768);
    /* Bool buffers: 0/1 both ways. */
    const bool flags[4] = {true, false, true, true};
    CHECK_OK(zarr_array_write_from(a, 1, &start, &count, ZARR_DTYPE_BOOL, ZARR_ORDER_C, flags,
                                   sizeof flags));
    bool back[4];
    CHECK_OK(zarr_array_read_as(a, 1, &start, &count, ZARR_DTYPE_BOOL, ZARR_ORDER_C, back,
                                sizeof back));
    CHECK(back[0] && !back[1] && back[2] && back[3]);
    const short two = 2;
    const uint64_t one = 1;
    CHECK_OK(zarr_array_write(a, 1, &start, &one, ZARR_DTYPE_INT16, ZARR_ORDER_C, &two,
                              sizeof two));
    CHECK_STATUS(zarr_array_read_as(a, 1, &start, &count, ZARR_DTYPE_BOOL, ZARR_ORDER_C, back,
                                    sizeof back),
                 ZARR_ERR_RANGE);
    /* A read-only handle refuses before converting. */
    zarr_array_t *ro = NULL;
    CHECK_OK(zarr_array_open(s, "a", ZARR_MODE_R, &ro));
    CHECK_STATUS(zarr_array_write_from(ro, 1, &start, &count, ZARR_DTYPE_FLOAT64, ZARR_ORDER_C,
                                       ok, sizeof ok),
                 ZARR_ERR_READ_ONLY);
    zarr_array_free(ro);
    zarr_array_free(a);
    zarr_store_free(s);
}

/* Fortran order: element i of the buffer is element i of the same-type read. */
static void fortran_order(void) {
    zarr_store_t *s = memory();
    zarr_array_builder_t *b = NULL;
    zarr_array_t *a = NULL;
    const uint64_t shape[2] = {2, 3};
    CHECK_OK(zarr_array_builder_new(ZARR_DTYPE_INT32, 2, shape, &b));
    CHECK_OK(zarr_array_create(b, s, "m", ZARR_MODE_W, &a));
    zarr_array_builder_free(b);
    const uint64_t start[2] = {0, 0};
    const int32_t v[6] = {1, 2, 3, 4, 5, 6};
    CHECK_OK(zarr_array_write(a, 2, start, shape, ZARR_DTYPE_INT32, ZARR_ORDER_C, v, sizeof v));
    int32_t same[6];
    double conv[6];
    CHECK_OK(zarr_array_read(a, 2, start, shape, ZARR_DTYPE_INT32, ZARR_ORDER_F, same, sizeof same));
    CHECK_OK(zarr_array_read_as(a, 2, start, shape, ZARR_DTYPE_FLOAT64, ZARR_ORDER_F, conv,
                                sizeof conv));
    for (int i = 0; i < 6; i++)
        CHECK(conv[i] == (double)same[i]);
    CHECK(same[1] == 4);
    zarr_array_free(a);
    zarr_store_free(s);
}

int main(void) {
    read_float_as_double_and_short();
    write_double_into_short_and_bool();
    fortran_order();
    return CHECK_DONE();
}
