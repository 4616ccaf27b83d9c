/*
 * CF-style use from C: reading and writing an array through a buffer of another numeric
 * type with netCDF's conversion rules (range errors, truncation, NaN), and attributes set
 * and read as strings, numbers and lists of them; converting and strided appends, dimension
 * names at creation, and closing an array with the errors its buffered appends meet.
 */
#include "check.h"

#include <math.h>
#include <string.h>

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

/* Typed attributes on an array (v2 and v3) and a group: the library writes the JSON. */
static void typed_attributes(int format) {
    zarr_store_t *s = memory();
    zarr_array_t *a = make(s, ZARR_DTYPE_INT16, format, 4);
    const char *history = "made by \"tool\" \\ 2024\n\xc3\xa9t\xc3\xa9 \xe2\x98\x83";
    CHECK_OK(zarr_array_attr_set_string(a, "history", history));
    CHECK_OK(zarr_array_attr_set_string(a, "units", "K"));
    const float scale = 0.1f;
    const double offset = 273.15;
    const int64_t big = INT64_C(-9007199254740993);
    const int32_t small = 7;
    CHECK_OK(zarr_array_attr_set_number(a, "scale_factor", ZARR_DTYPE_FLOAT32, &scale));
    CHECK_OK(zarr_array_attr_set_number(a, "add_offset", ZARR_DTYPE_FLOAT64, &offset));
    CHECK_OK(zarr_array_attr_set_number(a, "big", ZARR_DTYPE_INT64, &big));
    CHECK_OK(zarr_array_attr_set_number(a, "small", ZARR_DTYPE_INT32, &small));
    const float range[2] = {-1.5f, 0.3f};
    CHECK_OK(zarr_array_attr_set_numbers(a, "valid_range", ZARR_DTYPE_FLOAT32, range, 2));
    const char *flags[3] = {"low", "mid \"q\"", "high"};
    CHECK_OK(zarr_array_attr_set_strings(a, "flag_meanings", flags, 3));

    /* The JSON the library wrote: escaped strings, float32 as its shortest decimal. */
    char json[512];
    CHECK_OK(zarr_array_attr_get(a, "scale_factor", json, sizeof json, NULL));
    CHECK_STR(json, "0.1");
    CHECK_OK(zarr_array_attr_get(a, "valid_range", json, sizeof json, NULL));
    CHECK_STR(json, "[-1.5,0.3]");
    CHECK_OK(zarr_array_attr_get(a, "history", json, sizeof json, NULL));
    CHECK_STR(json, "\"made by \\\"tool\\\" \\\\ 2024\\n\xc3\xa9t\xc3\xa9 \xe2\x98\x83\"");

    /* Read back exactly, and kinds. */
    char text[128];
    size_t needed = 0;
    CHECK_OK(zarr_array_attr_get_string(a, "history", text, sizeof text, &needed));
    CHECK_STR(text, history);
    CHECK_EQ(needed, strlen(history) + 1);
    float f = 0;
    double d = 0;
    int64_t i64 = 0;
    int32_t i32 = 0;
    CHECK_OK(zarr_array_attr_get_number(a, "scale_factor", ZARR_DTYPE_FLOAT32, &f));
    CHECK(f == scale);
    CHECK_OK(zarr_array_attr_get_number(a, "scale_factor", ZARR_DTYPE_FLOAT64, &d));
    CHECK(d == 0.1);
    CHECK_OK(zarr_array_attr_get_number(a, "big", ZARR_DTYPE_INT64, &i64));
    CHECK(i64 == big);
    CHECK_OK(zarr_array_attr_get_number(a, "small", ZARR_DTYPE_FLOAT64, &d));
    CHECK(d == 7.0);
    float got[2] = {0, 0};
    size_t n = 0;
    CHECK_OK(zarr_array_attr_get_numbers(a, "valid_range", ZARR_DTYPE_FLOAT32, got, 2, &n));
    CHECK(n == 2 && got[0] == range[0] && got[1] == range[1]);
    CHECK_STATUS(zarr_array_attr_get_numbers(a, "valid_range", ZARR_DTYPE_FLOAT32, NULL, 0, &n),
                 ZARR_ERR_BUFFER_SIZE);
    CHECK_EQ(n, 2);
    zarr_strings_t *list = NULL;
    CHECK_OK(zarr_array_attr_get_strings(a, "flag_meanings", &list));
    CHECK_EQ(zarr_strings_count(list), 3);
    CHECK_STR(zarr_strings_get(list, 1), "mid \"q\"");
    zarr_strings_free(list);
    const struct {
        const char *key;
        zarr_attr_kind_t kind;
        size_t count;
    } kinds[] = {{"history", ZARR_ATTR_STRING, 1},    {"big", ZARR_ATTR_INTEGER, 1},
                 {"scale_factor", ZARR_ATTR_FLOAT, 1}, {"valid_range", ZARR_ATTR_FLOATS, 2},
                 {"flag_meanings", ZARR_ATTR_STRINGS, 3}};
    for (size_t k = 0; k < sizeof kinds / sizeof kinds[0]; k++) {
        zarr_attr_kind_t kind = 0;
        size_t count = 0;
        CHECK_OK(zarr_array_attr_kind(a, kinds[k].key, &kind, &count));
        CHECK_EQ(kind, kinds[k].kind);
        CHECK_EQ(count, kinds[k].count);
    }

    /* NaN and infinities are Python's bare tokens, and read back as floats. */
    const float odd[3] = {NAN, INFINITY, -INFINITY};
    CHECK_OK(zarr_array_attr_set_numbers(a, "odd", ZARR_DTYPE_FLOAT32, odd, 3));
    CHECK_OK(zarr_array_attr_get(a, "odd", json, sizeof json, NULL));
    CHECK_STR(json, "[NaN,Infinity,-Infinity]");
    double odd_back[3];
    CHECK_OK(zarr_array_attr_get_numbers(a, "odd", ZARR_DTYPE_FLOAT64, odd_back, 3, &n));
    CHECK(isnan(odd_back[0]) && odd_back[1] == INFINITY && odd_back[2] == -INFINITY);
    zarr_attr_kind_t odd_kind = 0;
    CHECK_OK(zarr_array_attr_kind(a, "odd", &odd_kind, NULL));
    CHECK_EQ(odd_kind, ZARR_ATTR_FLOATS);
    CHECK_STATUS(zarr_array_attr_get_strings(a, "odd", &list), ZARR_ERR_DTYPE_MISMATCH);
    CHECK_OK(zarr_array_attr_delete(a, "odd"));

    /* Types that do not fit are refused, naming the attribute. */
    CHECK_STATUS(zarr_array_attr_get_number(a, "units", ZARR_DTYPE_FLOAT64, &d),
                 ZARR_ERR_DTYPE_MISMATCH);
    CHECK_ERROR_CONTAINS("attribute \"units\" is a string, not a number");
    CHECK_STATUS(zarr_array_attr_get_number(a, "scale_factor", ZARR_DTYPE_INT64, &i64),
                 ZARR_ERR_DTYPE_MISMATCH);
    CHECK_ERROR_CONTAINS("\"scale_factor\" is a float");
    CHECK_STATUS(zarr_array_attr_get_number(a, "big", ZARR_DTYPE_INT32, &i32), ZARR_ERR_RANGE);
    CHECK_STATUS(zarr_array_attr_get_string(a, "big", text, sizeof text, NULL),
                 ZARR_ERR_DTYPE_MISMATCH);
    CHECK_STATUS(zarr_array_attr_get_strings(a, "valid_range", &list), ZARR_ERR_DTYPE_MISMATCH);
    CHECK(list == NULL);
    CHECK_STATUS(zarr_array_attr_get_number(a, "missing", ZARR_DTYPE_FLOAT64, &d),
                 ZARR_ERR_NOT_FOUND);
    CHECK_STATUS(zarr_array_attr_get_number(a, "big", ZARR_DTYPE_INT16, &i32),
                 ZARR_ERR_INVALID_ARG);

    /* Arguments from outside: NULLs, invalid UTF-8, NaN, sizes that overflow. */
    CHECK_STATUS(zarr_array_attr_set_string(a, "k", NULL), ZARR_ERR_NULL_ARG);
    CHECK_STATUS(zarr_array_attr_set_string(a, NULL, "v"), ZARR_ERR_NULL_ARG);
    CHECK_STATUS(zarr_array_attr_set_string(a, "k", "\xff\xfe"), ZARR_ERR_INVALID_ARG);
    const char *bad[2] = {"ok", "\xc3"};
    CHECK_STATUS(zarr_array_attr_set_strings(a, "k", bad, 2), ZARR_ERR_INVALID_ARG);
    CHECK_ERROR_CONTAINS("values[1]");
    const char *with_null[2] = {"ok", NULL};
    CHECK_STATUS(zarr_array_attr_set_strings(a, "k", with_null, 2), ZARR_ERR_NULL_ARG);
    CHECK_STATUS(zarr_array_attr_set_string(a, "k", "\xef\xa3\xbfNaN"), ZARR_ERR_INVALID_ARG);
    CHECK_STATUS(zarr_array_attr_set_number(a, "k", ZARR_DTYPE_FLOAT64, NULL), ZARR_ERR_NULL_ARG);
    CHECK_STATUS(zarr_array_attr_set_numbers(a, "k", ZARR_DTYPE_FLOAT64, range, SIZE_MAX / 4),
                 ZARR_ERR_OVERFLOW);
    CHECK_STATUS(zarr_array_attr_get_numbers(a, "valid_range", ZARR_DTYPE_FLOAT64, got,
                                             SIZE_MAX / 4, &n),
                 ZARR_ERR_OVERFLOW);
    CHECK_STATUS(zarr_array_attr_kind(a, "k", NULL, NULL), ZARR_ERR_NULL_ARG);
    /* None of the refused calls wrote anything. */
    zarr_attr_kind_t kind = 0;
    CHECK_STATUS(zarr_array_attr_kind(a, "k", &kind, NULL), ZARR_ERR_NOT_FOUND);
    zarr_array_free(a);

    /* Groups have the same calls. */
    zarr_group_t *g = NULL;
    CHECK_OK(zarr_group_create(s, "g", ZARR_MODE_W, format, &g));
    CHECK_OK(zarr_group_attr_set_string(g, "title", "a \"title\""));
    CHECK_OK(zarr_group_attr_get_string(g, "title", text, sizeof text, NULL));
    CHECK_STR(text, "a \"title\"");
    const int64_t years[3] = {2001, 2002, 2003};
    CHECK_OK(zarr_group_attr_set_numbers(g, "years", ZARR_DTYPE_INT64, years, 3));
    int32_t y[3];
    CHECK_OK(zarr_group_attr_get_numbers(g, "years", ZARR_DTYPE_INT32, y, 3, &n));
    CHECK(n == 3 && y[2] == 2003);
    CHECK_OK(zarr_group_attr_set_number(g, "version", ZARR_DTYPE_FLOAT32, &scale));
    CHECK_OK(zarr_group_attr_get_number(g, "version", ZARR_DTYPE_FLOAT32, &f));
    CHECK(f == scale);
    CHECK_OK(zarr_group_attr_set_strings(g, "names", flags, 3));
    CHECK_OK(zarr_group_attr_get_strings(g, "names", &list));
    CHECK_EQ(zarr_strings_count(list), 3);
    zarr_strings_free(list);
    CHECK_OK(zarr_group_attr_kind(g, "years", &kind, &n));
    CHECK(kind == ZARR_ATTR_INTEGERS && n == 3);
    CHECK_OK(zarr_group_attr_get_number(g, "version", ZARR_DTYPE_FLOAT64, &d));
    CHECK(d == 0.1);
    zarr_group_free(g);
    zarr_store_free(s);
}

/* A float32 series of steps of 3, unsharded (format 2) or sharded by 4 steps (format 3,
   where appends are buffered), with dimension names set at creation. */
static zarr_array_t *series(zarr_store_t *s, int format) {
    zarr_array_builder_t *b = NULL;
    zarr_array_t *a = NULL;
    const uint64_t shape[2] = {0, 3}, chunk[2] = {1, 3}, shard[2] = {4, 3};
    const char *names[2] = {"time", "x"};
    CHECK_OK(zarr_array_builder_new(ZARR_DTYPE_FLOAT32, 2, shape, &b));
    CHECK_OK(zarr_array_builder_set_chunk_shape(b, 2, chunk));
    CHECK_OK(zarr_array_builder_set_zarr_format(b, format));
    if (format == 3)
        CHECK_OK(zarr_array_builder_set_shard_shape(b, 2, shard));
    CHECK_OK(zarr_array_builder_set_dimension_names(b, 2, names));
    CHECK_OK(zarr_array_create(b, s, "tas", ZARR_MODE_W, &a));
    zarr_array_builder_free(b);
    return a;
}

/* Doubles appended to a float32 series (zarr_array_append_from and its non-blocking form)
   are stored as the nearest float32s; a value beyond float32's range appends nothing. A
   strided step (a column of a larger block) is appended as is. */
static void append_converted(int format) {
    zarr_store_t *s = memory();
    zarr_array_t *a = series(s, format);
    const uint64_t step[2] = {1, 3};
    const double d[3] = {0.1, -2.5, 1e20};
    CHECK_OK(zarr_array_append_from(a, 0, 2, step, ZARR_DTYPE_FLOAT64, ZARR_ORDER_C, d,
                                    sizeof d));
    zarr_request_t *r = NULL;
    CHECK_OK(zarr_array_append_from_async(a, 0, 2, step, ZARR_DTYPE_FLOAT64, ZARR_ORDER_C, d,
                                          sizeof d, ZARR_ASYNC_COPY, &r));
    CHECK_OK(zarr_request_wait(r));
    zarr_request_free(r);
    /* Column 1 of a 3x2 block: elements 1, 3, 5. */
    const float block[6] = {9, 7, 9, 8, 9, 6};
    const int64_t strides[2] = {6, 2};
    CHECK_OK(zarr_array_append_strided(a, 0, 2, step, strides, ZARR_DTYPE_FLOAT32, block + 1,
                                       sizeof block - sizeof(float)));
    CHECK_OK(zarr_array_append_strided_async(a, 0, 2, step, strides, ZARR_DTYPE_FLOAT32,
                                             block + 1, sizeof block - sizeof(float), 0, &r));
    CHECK_OK(zarr_request_wait(r));
    zarr_request_free(r);
    /* Out of range: nothing appended, blocking or not. */
    const double far[3] = {1, 1e39, 1};
    CHECK_STATUS(zarr_array_append_from(a, 0, 2, step, ZARR_DTYPE_FLOAT64, ZARR_ORDER_C, far,
                                        sizeof far),
                 ZARR_ERR_RANGE);
    CHECK_ERROR_CONTAINS("float32");
    CHECK_OK(zarr_array_append_from_async(a, 0, 2, step, ZARR_DTYPE_FLOAT64, ZARR_ORDER_C, far,
                                          sizeof far, ZARR_ASYNC_COPY, &r));
    CHECK_STATUS(zarr_request_wait(r), ZARR_ERR_RANGE);
    zarr_request_free(r);
    /* The plain append still takes the array's own type only. */
    CHECK_STATUS(zarr_array_append(a, 0, 2, step, ZARR_DTYPE_FLOAT64, ZARR_ORDER_C, d,
                                   sizeof d),
                 ZARR_ERR_DTYPE_MISMATCH);
    CHECK_OK(zarr_array_close(a));
    uint64_t shape[2] = {0, 0};
    CHECK_OK(zarr_array_shape(a, 2, shape));
    CHECK(shape[0] == 4 && shape[1] == 3);
    float got[12];
    const float want[12] = {0.1f, -2.5f, 1e20f, 0.1f, -2.5f, 1e20f, 7, 8, 6, 7, 8, 6};
    CHECK_OK(zarr_array_read(a, 2, (uint64_t[]){0, 0}, shape, ZARR_DTYPE_FLOAT32, ZARR_ORDER_C,
                             got, sizeof got));
    CHECK_MEM(got, want, sizeof want);
    /* Dimension names given to the builder: v3 metadata, v2 xarray's attribute. */
    char text[4096];
    if (format == 2) {
        CHECK_OK(zarr_array_attr_get(a, "_ARRAY_DIMENSIONS", text, sizeof text, NULL));
        CHECK_STR(text, "[\"time\",\"x\"]");
    } else {
        CHECK_OK(zarr_array_metadata_json(a, text, sizeof text, NULL));
        CHECK_CONTAINS(text, "\"dimension_names\"");
    }
    zarr_array_free(a);
    zarr_store_free(s);
}

/* The builder's dimension names outside v3: every dimension needs one, their count is the
   rank; refused at creation, creating nothing. */
static void builder_names_refused(void) {
    zarr_store_t *s = memory();
    const uint64_t shape[2] = {2, 3};
    const char *one[1] = {"x"}, *unnamed[2] = {"x", NULL};
    for (int i = 0; i < 2; i++) {
        zarr_array_builder_t *b = NULL;
        zarr_array_t *a = NULL;
        CHECK_OK(zarr_array_builder_new(ZARR_DTYPE_FLOAT32, 2, shape, &b));
        CHECK_OK(zarr_array_builder_set_zarr_format(b, 2));
        if (i == 0)
            CHECK_OK(zarr_array_builder_set_dimension_names(b, 1, one));
        else
            CHECK_OK(zarr_array_builder_set_dimension_names(b, 2, unnamed));
        CHECK_STATUS(zarr_array_create(b, s, "bad", ZARR_MODE_W, &a), ZARR_ERR_INVALID_ARG);
        CHECK_ERROR_CONTAINS(i == 0 ? "1 dimension names for an array of rank 2"
                                    : "every dimension needs a name");
        bool exists = true;
        CHECK_OK(zarr_store_contains(s, "bad/.zarray", &exists));
        CHECK(!exists);
        zarr_array_builder_free(b);
    }
    zarr_store_free(s);
}

/* zarr_array_close reports buffered appends that cannot be stored (the array's directory
   replaced by a file), which zarr_array_free would lose; a read-only handle closes with
   nothing to store. */
static void close_reports(void) {
    char *dir = check_mkdtemp();
    zarr_store_t *s = NULL;
    CHECK_OK(zarr_store_open_fs(dir, ZARR_MODE_W, &s));
    zarr_array_t *a = series(s, 3);
    const uint64_t step[2] = {1, 3};
    const float f[3] = {1, 2, 3};
    CHECK_OK(zarr_array_append(a, 0, 2, step, ZARR_DTYPE_FLOAT32, ZARR_ORDER_C, f, sizeof f));
    zarr_array_t *reader = NULL;
    CHECK_OK(zarr_array_open(s, "tas", ZARR_MODE_R, &reader));
    CHECK_OK(zarr_array_close(reader));
    zarr_array_free(reader);
    char *path = check_join(dir, "tas");
    char *tree = strdup(path);
    check_rmtree(tree);
    FILE *file = fopen(path, "w");
    CHECK(file != NULL);
    if (file != NULL)
        fclose(file);
    CHECK_STATUS(zarr_array_close(a), ZARR_ERR_STORAGE_IO);
    zarr_array_free(a);
    zarr_store_free(s);
    free(path);
    check_rmtree(dir);
}

int main(void) {
    read_float_as_double_and_short();
    append_converted(2);
    append_converted(3);
    builder_names_refused();
    close_reports();
    write_double_into_short_and_bool();
    fortran_order();
    typed_attributes(2);
    typed_attributes(3);
    return CHECK_DONE();
}
