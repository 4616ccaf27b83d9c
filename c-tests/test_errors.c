/*
 * Errors: a negative test for every status code reachable from C, checking the status, the
 * message (it names the key, field, chunk or argument) and that handle outputs are NULL
 * after a failure. PANIC, POISONED and INTERNAL are not reachable through a correct build.
 */
#include "check.h"

/* A non-NULL pointer to preset handle outputs with, so that clearing them is visible. */
static int sentinel_storage;
#define SENTINEL(T) ((T *)(void *)&sentinel_storage)

/* `call` (which writes the handle output `out`) must fail with `status` and leave it NULL. */
#define CHECK_FAILS_NULL(call, status, out)                                                \
    do {                                                                                   \
        (out) = (void *)&sentinel_storage;                                                 \
        CHECK_STATUS(call, status);                                                        \
        CHECK((out) == NULL);                                                              \
    } while (0)

static const uint64_t SHAPE[2] = {6, 8};
static const uint64_t CHUNKS[2] = {4, 3};
static const uint64_t ORIGIN[2] = {0, 0};

static zarr_store_t *memory_store(void) {
    zarr_store_t *s = NULL;
    CHECK_OK(zarr_store_new_memory(&s));
    return s;
}

/* A 6 x 8 float32 array with 4 x 3 chunks, filled with 0..47. */
static zarr_array_t *float_array(zarr_store_t *s, const char *path, const char *compressor) {
    zarr_array_builder_t *b = NULL;
    CHECK_OK(zarr_array_builder_new(ZARR_DTYPE_FLOAT32, 2, SHAPE, &b));
    CHECK_OK(zarr_array_builder_set_zarr_format(b, 2));
    CHECK_OK(zarr_array_builder_set_chunk_shape(b, 2, CHUNKS));
    if (compressor)
        CHECK_OK(zarr_array_builder_set_compressor_json(b, compressor));
    zarr_array_t *a = NULL;
    CHECK_OK(zarr_array_create(b, s, path, ZARR_MODE_W, &a));
    zarr_array_builder_free(b);
    if (a == NULL) {
        fprintf(stderr, "cannot create %s, stopping\n", path);
        exit(1);
    }
    float data[48];
    for (int i = 0; i < 48; i++)
        data[i] = (float)i;
    CHECK_OK(zarr_array_write(a, 2, ORIGIN, SHAPE, ZARR_DTYPE_FLOAT32, ZARR_ORDER_C, data, sizeof data));
    return a;
}

/* ---- ZARR_ERR_NULL_ARG ---- */

static void test_null_arg(void) {
    zarr_store_t *s = memory_store();
    zarr_array_t *a = float_array(s, "a", NULL);
    zarr_array_builder_t *b = NULL;
    CHECK_OK(zarr_array_builder_new(ZARR_DTYPE_FLOAT32, 2, SHAPE, &b));
    CHECK_OK(zarr_array_builder_set_zarr_format(b, 2));
    float buf[48];
    char text[64];
    size_t n = 0;
    uint64_t u64[2];
    bool flag = false;
    zarr_array_t *out_a = NULL;
    zarr_store_t *out_s = NULL;
    zarr_strings_t *out_l = NULL, *out_p = NULL;
    zarr_array_builder_t *out_b = NULL;

    /* Stores. */
    CHECK_STATUS(zarr_store_new_memory(NULL), ZARR_ERR_NULL_ARG);
    CHECK_ERROR_CONTAINS("out_store");
    CHECK_FAILS_NULL(zarr_store_open_fs(NULL, ZARR_MODE_R, &out_s), ZARR_ERR_NULL_ARG, out_s);
    CHECK_ERROR_CONTAINS("path");
    CHECK_STATUS(zarr_store_open_fs(".", ZARR_MODE_R, NULL), ZARR_ERR_NULL_ARG);
    CHECK_STATUS(zarr_store_set(NULL, "k", "v", 1), ZARR_ERR_NULL_ARG);
    CHECK_ERROR_CONTAINS("store");
    CHECK_STATUS(zarr_store_set(s, NULL, "v", 1), ZARR_ERR_NULL_ARG);
    CHECK_ERROR_CONTAINS("key");
    CHECK_STATUS(zarr_store_set(s, "k", NULL, 1), ZARR_ERR_NULL_ARG);
    CHECK_ERROR_CONTAINS("value");
    CHECK_OK(zarr_store_set(s, "k", "abc", 3));
    CHECK_STATUS(zarr_store_get(NULL, "k", text, sizeof text, &n), ZARR_ERR_NULL_ARG);
    CHECK_STATUS(zarr_store_get(s, NULL, text, sizeof text, &n), ZARR_ERR_NULL_ARG);
    CHECK_STATUS(zarr_store_get(s, "k", NULL, 10, &n), ZARR_ERR_NULL_ARG);
    CHECK_ERROR_CONTAINS("buf");
    CHECK_STATUS(zarr_store_contains(NULL, "k", &flag), ZARR_ERR_NULL_ARG);
    CHECK_STATUS(zarr_store_contains(s, NULL, &flag), ZARR_ERR_NULL_ARG);
    CHECK_STATUS(zarr_store_contains(s, "k", NULL), ZARR_ERR_NULL_ARG);
    CHECK_ERROR_CONTAINS("out_exists");
    CHECK_STATUS(zarr_store_erase(NULL, "k"), ZARR_ERR_NULL_ARG);
    CHECK_STATUS(zarr_store_erase(s, NULL), ZARR_ERR_NULL_ARG);
    CHECK_STATUS(zarr_store_erase_prefix(NULL, ""), ZARR_ERR_NULL_ARG);
    CHECK_STATUS(zarr_store_erase_prefix(s, NULL), ZARR_ERR_NULL_ARG);
    CHECK_ERROR_CONTAINS("prefix");
    CHECK_FAILS_NULL(zarr_store_list(NULL, "", &out_l), ZARR_ERR_NULL_ARG, out_l);
    CHECK_FAILS_NULL(zarr_store_list(s, NULL, &out_l), ZARR_ERR_NULL_ARG, out_l);
    CHECK_STATUS(zarr_store_list(s, "", NULL), ZARR_ERR_NULL_ARG);
    CHECK_ERROR_CONTAINS("out_keys");
    out_p = SENTINEL(zarr_strings_t);
    CHECK_FAILS_NULL(zarr_store_list_dir(NULL, "", &out_l, &out_p), ZARR_ERR_NULL_ARG, out_l);
    CHECK(out_p == NULL);
    CHECK_STATUS(zarr_store_list_dir(s, "", NULL, &out_p), ZARR_ERR_NULL_ARG);
    CHECK_STATUS(zarr_store_list_dir(s, "", &out_l, NULL), ZARR_ERR_NULL_ARG);
    CHECK_ERROR_CONTAINS("out_prefixes");
    CHECK_FAILS_NULL(zarr_store_list_dir(s, NULL, &out_l, &out_p), ZARR_ERR_NULL_ARG, out_l);
    bool still_there = false;
    CHECK_OK(zarr_store_contains(s, "k", &still_there));
    CHECK(still_there);

    /* Builder. */
    CHECK_FAILS_NULL(zarr_array_builder_new(ZARR_DTYPE_INT8, 2, NULL, &out_b), ZARR_ERR_NULL_ARG, out_b);
    CHECK_ERROR_CONTAINS("shape");
    CHECK_STATUS(zarr_array_builder_new(ZARR_DTYPE_INT8, 2, SHAPE, NULL), ZARR_ERR_NULL_ARG);
    CHECK_ERROR_CONTAINS("out_builder");
    CHECK_STATUS(zarr_array_builder_set_dtype_name(NULL, "<f4"), ZARR_ERR_NULL_ARG);
    CHECK_ERROR_CONTAINS("builder");
    CHECK_STATUS(zarr_array_builder_set_dtype_name(b, NULL), ZARR_ERR_NULL_ARG);
    CHECK_STATUS(zarr_array_builder_set_chunk_shape(NULL, 2, CHUNKS), ZARR_ERR_NULL_ARG);
    CHECK_STATUS(zarr_array_builder_set_chunk_shape(b, 2, NULL), ZARR_ERR_NULL_ARG);
    CHECK_ERROR_CONTAINS("chunks");
    const float one = 1.0f;
    CHECK_STATUS(zarr_array_builder_set_fill_value(NULL, ZARR_DTYPE_FLOAT32, &one, 4), ZARR_ERR_NULL_ARG);
    CHECK_STATUS(zarr_array_builder_set_fill_value(b, ZARR_DTYPE_FLOAT32, NULL, 4), ZARR_ERR_NULL_ARG);
    CHECK_ERROR_CONTAINS("value");
    CHECK_STATUS(zarr_array_builder_set_fill_value_json(NULL, "0"), ZARR_ERR_NULL_ARG);
    CHECK_STATUS(zarr_array_builder_set_fill_value_json(b, NULL), ZARR_ERR_NULL_ARG);
    CHECK_STATUS(zarr_array_builder_set_order(NULL, ZARR_ORDER_C), ZARR_ERR_NULL_ARG);
    CHECK_STATUS(zarr_array_builder_set_dimension_separator(NULL, "/"), ZARR_ERR_NULL_ARG);
    CHECK_STATUS(zarr_array_builder_set_dimension_separator(b, NULL), ZARR_ERR_NULL_ARG);
    CHECK_ERROR_CONTAINS("separator");
    CHECK_STATUS(zarr_array_builder_set_compressor_json(NULL, "null"), ZARR_ERR_NULL_ARG);
    CHECK_STATUS(zarr_array_builder_set_compressor_json(b, NULL), ZARR_ERR_NULL_ARG);
    CHECK_STATUS(zarr_array_builder_set_filters_json(NULL, "null"), ZARR_ERR_NULL_ARG);
    CHECK_STATUS(zarr_array_builder_set_filters_json(b, NULL), ZARR_ERR_NULL_ARG);
    CHECK_STATUS(zarr_array_builder_set_attributes_json(NULL, "{}"), ZARR_ERR_NULL_ARG);
    CHECK_STATUS(zarr_array_builder_set_attributes_json(b, NULL), ZARR_ERR_NULL_ARG);
    CHECK_STATUS(zarr_array_builder_set_zarr_format(NULL, 2), ZARR_ERR_NULL_ARG);

    /* Creating and opening. */
    CHECK_FAILS_NULL(zarr_array_create(NULL, s, "x", ZARR_MODE_W, &out_a), ZARR_ERR_NULL_ARG, out_a);
    CHECK_ERROR_CONTAINS("builder");
    CHECK_FAILS_NULL(zarr_array_create(b, NULL, "x", ZARR_MODE_W, &out_a), ZARR_ERR_NULL_ARG, out_a);
    CHECK_ERROR_CONTAINS("store");
    CHECK_FAILS_NULL(zarr_array_create(b, s, NULL, ZARR_MODE_W, &out_a), ZARR_ERR_NULL_ARG, out_a);
    CHECK_ERROR_CONTAINS("path");
    CHECK_STATUS(zarr_array_create(b, s, "x", ZARR_MODE_W, NULL), ZARR_ERR_NULL_ARG);
    CHECK_ERROR_CONTAINS("out_array");
    const char *doc = "{\"zarr_format\":2,\"shape\":[2],\"chunks\":[2],\"dtype\":\"|u1\","
                      "\"compressor\":null,\"fill_value\":0,\"order\":\"C\",\"filters\":null}";
    CHECK_FAILS_NULL(zarr_array_create_json(NULL, "x", doc, ZARR_MODE_W, &out_a), ZARR_ERR_NULL_ARG, out_a);
    CHECK_FAILS_NULL(zarr_array_create_json(s, NULL, doc, ZARR_MODE_W, &out_a), ZARR_ERR_NULL_ARG, out_a);
    CHECK_FAILS_NULL(zarr_array_create_json(s, "x", NULL, ZARR_MODE_W, &out_a), ZARR_ERR_NULL_ARG, out_a);
    CHECK_ERROR_CONTAINS("zarray_json");
    CHECK_STATUS(zarr_array_create_json(s, "x", doc, ZARR_MODE_W, NULL), ZARR_ERR_NULL_ARG);
    CHECK_FAILS_NULL(zarr_array_open(NULL, "a", ZARR_MODE_R, &out_a), ZARR_ERR_NULL_ARG, out_a);
    CHECK_FAILS_NULL(zarr_array_open(s, NULL, ZARR_MODE_R, &out_a), ZARR_ERR_NULL_ARG, out_a);
    CHECK_STATUS(zarr_array_open(s, "a", ZARR_MODE_R, NULL), ZARR_ERR_NULL_ARG);
    /* Nothing was created by the failed calls. */
    CHECK_OK(zarr_store_contains(s, "x/.zarray", &flag));
    CHECK(!flag);

    /* Region I/O. */
    CHECK_STATUS(zarr_array_read(NULL, 2, ORIGIN, SHAPE, ZARR_DTYPE_FLOAT32, ZARR_ORDER_C, buf, sizeof buf), ZARR_ERR_NULL_ARG);
    CHECK_ERROR_CONTAINS("array");
    CHECK_STATUS(zarr_array_read(a, 2, NULL, SHAPE, ZARR_DTYPE_FLOAT32, ZARR_ORDER_C, buf, sizeof buf), ZARR_ERR_NULL_ARG);
    CHECK_ERROR_CONTAINS("start");
    CHECK_STATUS(zarr_array_read(a, 2, ORIGIN, NULL, ZARR_DTYPE_FLOAT32, ZARR_ORDER_C, buf, sizeof buf), ZARR_ERR_NULL_ARG);
    CHECK_ERROR_CONTAINS("count");
    CHECK_STATUS(zarr_array_read(a, 2, ORIGIN, SHAPE, ZARR_DTYPE_FLOAT32, ZARR_ORDER_C, NULL, sizeof buf), ZARR_ERR_NULL_ARG);
    CHECK_ERROR_CONTAINS("buf");
    CHECK_STATUS(zarr_array_write(NULL, 2, ORIGIN, SHAPE, ZARR_DTYPE_FLOAT32, ZARR_ORDER_C, buf, sizeof buf), ZARR_ERR_NULL_ARG);
    CHECK_STATUS(zarr_array_write(a, 2, NULL, SHAPE, ZARR_DTYPE_FLOAT32, ZARR_ORDER_C, buf, sizeof buf), ZARR_ERR_NULL_ARG);
    CHECK_STATUS(zarr_array_write(a, 2, ORIGIN, NULL, ZARR_DTYPE_FLOAT32, ZARR_ORDER_C, buf, sizeof buf), ZARR_ERR_NULL_ARG);
    CHECK_STATUS(zarr_array_write(a, 2, ORIGIN, SHAPE, ZARR_DTYPE_FLOAT32, ZARR_ORDER_C, NULL, sizeof buf), ZARR_ERR_NULL_ARG);
    CHECK_STATUS(zarr_array_resize(NULL, 2, SHAPE), ZARR_ERR_NULL_ARG);
    CHECK_STATUS(zarr_array_resize(a, 2, NULL), ZARR_ERR_NULL_ARG);
    CHECK_ERROR_CONTAINS("shape");
    CHECK_STATUS(zarr_array_append(NULL, 0, 2, SHAPE, ZARR_DTYPE_FLOAT32, ZARR_ORDER_C, buf, sizeof buf), ZARR_ERR_NULL_ARG);
    CHECK_STATUS(zarr_array_append(a, 0, 2, NULL, ZARR_DTYPE_FLOAT32, ZARR_ORDER_C, buf, sizeof buf), ZARR_ERR_NULL_ARG);
    CHECK_STATUS(zarr_array_append(a, 0, 2, SHAPE, ZARR_DTYPE_FLOAT32, ZARR_ORDER_C, NULL, sizeof buf), ZARR_ERR_NULL_ARG);
    uint64_t shape_now[2] = {0, 0};
    CHECK_OK(zarr_array_shape(a, 2, shape_now));
    CHECK(shape_now[0] == 6 && shape_now[1] == 8); /* the failed append did not grow it */

    /* Queries. */
    CHECK_STATUS(zarr_array_rank(NULL, &n), ZARR_ERR_NULL_ARG);
    CHECK_STATUS(zarr_array_rank(a, NULL), ZARR_ERR_NULL_ARG);
    CHECK_ERROR_CONTAINS("out_rank");
    CHECK_STATUS(zarr_array_shape(NULL, 2, u64), ZARR_ERR_NULL_ARG);
    CHECK_STATUS(zarr_array_shape(a, 2, NULL), ZARR_ERR_NULL_ARG);
    CHECK_STATUS(zarr_array_chunk_shape(NULL, 2, u64), ZARR_ERR_NULL_ARG);
    CHECK_STATUS(zarr_array_chunk_shape(a, 2, NULL), ZARR_ERR_NULL_ARG);
    zarr_dtype_t dt;
    CHECK_STATUS(zarr_array_dtype(NULL, &dt), ZARR_ERR_NULL_ARG);
    CHECK_STATUS(zarr_array_dtype(a, NULL), ZARR_ERR_NULL_ARG);
    CHECK_STATUS(zarr_array_dtype_name(NULL, text, sizeof text, &n), ZARR_ERR_NULL_ARG);
    CHECK_STATUS(zarr_array_dtype_name(a, NULL, 10, &n), ZARR_ERR_NULL_ARG);
    CHECK_STATUS(zarr_array_item_size(NULL, &n), ZARR_ERR_NULL_ARG);
    CHECK_STATUS(zarr_array_item_size(a, NULL), ZARR_ERR_NULL_ARG);
    float fv;
    CHECK_STATUS(zarr_array_fill_value(NULL, &fv, 4, &flag), ZARR_ERR_NULL_ARG);
    CHECK_STATUS(zarr_array_fill_value(a, NULL, 4, &flag), ZARR_ERR_NULL_ARG);
    CHECK_STATUS(zarr_array_fill_value(a, &fv, 4, NULL), ZARR_ERR_NULL_ARG);
    CHECK_ERROR_CONTAINS("out_is_null");
    CHECK_STATUS(zarr_array_fill_value_json(NULL, text, sizeof text, &n), ZARR_ERR_NULL_ARG);
    CHECK_STATUS(zarr_array_fill_value_json(a, NULL, 5, &n), ZARR_ERR_NULL_ARG);
    zarr_order_t ord;
    CHECK_STATUS(zarr_array_order(NULL, &ord), ZARR_ERR_NULL_ARG);
    CHECK_STATUS(zarr_array_order(a, NULL), ZARR_ERR_NULL_ARG);
    int32_t fmt;
    CHECK_STATUS(zarr_array_zarr_format(NULL, &fmt), ZARR_ERR_NULL_ARG);
    CHECK_STATUS(zarr_array_zarr_format(a, NULL), ZARR_ERR_NULL_ARG);
    CHECK_STATUS(zarr_array_nbytes(NULL, u64), ZARR_ERR_NULL_ARG);
    CHECK_STATUS(zarr_array_nbytes(a, NULL), ZARR_ERR_NULL_ARG);
    CHECK_STATUS(zarr_array_nbytes_stored(NULL, u64), ZARR_ERR_NULL_ARG);
    CHECK_STATUS(zarr_array_nbytes_stored(a, NULL), ZARR_ERR_NULL_ARG);
    CHECK_STATUS(zarr_array_nchunks(NULL, u64), ZARR_ERR_NULL_ARG);
    CHECK_STATUS(zarr_array_nchunks(a, NULL), ZARR_ERR_NULL_ARG);
    CHECK_STATUS(zarr_array_nchunks_initialized(NULL, u64), ZARR_ERR_NULL_ARG);
    CHECK_STATUS(zarr_array_nchunks_initialized(a, NULL), ZARR_ERR_NULL_ARG);
    CHECK_STATUS(zarr_array_metadata_json(NULL, text, sizeof text, &n), ZARR_ERR_NULL_ARG);
    CHECK_STATUS(zarr_array_metadata_json(a, NULL, 5, &n), ZARR_ERR_NULL_ARG);

    /* Attributes. */
    CHECK_STATUS(zarr_array_attrs_get(NULL, text, sizeof text, &n), ZARR_ERR_NULL_ARG);
    CHECK_STATUS(zarr_array_attrs_get(a, NULL, 5, &n), ZARR_ERR_NULL_ARG);
    CHECK_STATUS(zarr_array_attrs_set(NULL, "{}"), ZARR_ERR_NULL_ARG);
    CHECK_STATUS(zarr_array_attrs_set(a, NULL), ZARR_ERR_NULL_ARG);
    CHECK_ERROR_CONTAINS("json");
    CHECK_STATUS(zarr_array_attr_get(NULL, "k", text, sizeof text, &n), ZARR_ERR_NULL_ARG);
    CHECK_STATUS(zarr_array_attr_get(a, NULL, text, sizeof text, &n), ZARR_ERR_NULL_ARG);
    CHECK_ERROR_CONTAINS("key");
    CHECK_OK(zarr_array_attr_set(a, "k", "1"));
    CHECK_STATUS(zarr_array_attr_get(a, "k", NULL, 5, &n), ZARR_ERR_NULL_ARG);
    CHECK_STATUS(zarr_array_attr_set(NULL, "k", "1"), ZARR_ERR_NULL_ARG);
    CHECK_STATUS(zarr_array_attr_set(a, NULL, "1"), ZARR_ERR_NULL_ARG);
    CHECK_STATUS(zarr_array_attr_set(a, "k", NULL), ZARR_ERR_NULL_ARG);
    CHECK_STATUS(zarr_array_attr_delete(NULL, "k"), ZARR_ERR_NULL_ARG);
    CHECK_STATUS(zarr_array_attr_delete(a, NULL), ZARR_ERR_NULL_ARG);
    CHECK_OK(zarr_array_attrs_get(a, text, sizeof text, NULL));
    CHECK_STR(text, "{\"k\":1}");

    /* Library-wide calls. */
    CHECK_STATUS(zarr_dtype_from_name(NULL, &dt), ZARR_ERR_NULL_ARG);
    CHECK_STATUS(zarr_dtype_from_name("int8", NULL), ZARR_ERR_NULL_ARG);
    CHECK_ERROR_CONTAINS("out_dtype");
    CHECK_STATUS(zarr_last_error(NULL, 10, &n), ZARR_ERR_NULL_ARG);

    /* Zero-length arrays may be NULL. */
    CHECK_OK(zarr_store_set(s, "empty", NULL, 0));
    zarr_array_builder_free(b);
    zarr_array_free(a);
    zarr_store_free(s);
}

/* ---- ZARR_ERR_INVALID_ARG ---- */

static void test_invalid_arg(void) {
    zarr_store_t *s = memory_store();
    zarr_array_t *a = float_array(s, "a", NULL);
    float buf[48];
    const int32_t bad_enums[] = {99, -1, INT32_MIN, INT32_MAX};
    zarr_array_builder_t *b = NULL;
    zarr_array_t *out_a = NULL;
    zarr_store_t *out_s = NULL;

    for (size_t i = 0; i < sizeof bad_enums / sizeof bad_enums[0]; i++) {
        int32_t v = bad_enums[i];
        char num[16];
        snprintf(num, sizeof num, "%d", (int)v);
        /* dtype */
        CHECK_FAILS_NULL(zarr_array_builder_new(v, 2, SHAPE, &b), ZARR_ERR_INVALID_ARG, b);
        CHECK_ERROR_CONTAINS(num);
        CHECK_STATUS(zarr_array_read(a, 2, ORIGIN, SHAPE, v, ZARR_ORDER_C, buf, sizeof buf), ZARR_ERR_INVALID_ARG);
        CHECK_ERROR_CONTAINS("zarr_dtype_t");
        CHECK_STATUS(zarr_array_write(a, 2, ORIGIN, SHAPE, v, ZARR_ORDER_C, buf, sizeof buf), ZARR_ERR_INVALID_ARG);
        /* order */
        CHECK_STATUS(zarr_array_read(a, 2, ORIGIN, SHAPE, ZARR_DTYPE_FLOAT32, v, buf, sizeof buf), ZARR_ERR_INVALID_ARG);
        CHECK_ERROR_CONTAINS("zarr_order_t");
        CHECK_STATUS(zarr_array_write(a, 2, ORIGIN, SHAPE, ZARR_DTYPE_FLOAT32, v, buf, sizeof buf), ZARR_ERR_INVALID_ARG);
        CHECK_STATUS(zarr_array_append(a, 0, 2, SHAPE, ZARR_DTYPE_FLOAT32, v, buf, sizeof buf), ZARR_ERR_INVALID_ARG);
        /* mode */
        CHECK_FAILS_NULL(zarr_store_open_fs(".", v, &out_s), ZARR_ERR_INVALID_ARG, out_s);
        CHECK_ERROR_CONTAINS("zarr_mode_t");
        CHECK_FAILS_NULL(zarr_array_open(s, "a", v, &out_a), ZARR_ERR_INVALID_ARG, out_a);
        CHECK_OK(zarr_array_builder_new(ZARR_DTYPE_FLOAT32, 2, SHAPE, &b));
        CHECK_OK(zarr_array_builder_set_zarr_format(b, 2));
        CHECK_FAILS_NULL(zarr_array_create(b, s, "new", v, &out_a), ZARR_ERR_INVALID_ARG, out_a);
        CHECK_STATUS(zarr_array_builder_set_order(b, v), ZARR_ERR_INVALID_ARG);
        CHECK_STATUS(zarr_array_builder_set_fill_value(b, v, buf, 4), ZARR_ERR_INVALID_ARG);
        CHECK_STATUS(zarr_array_builder_set_zarr_format(b, v), ZARR_ERR_INVALID_ARG);
        zarr_array_builder_free(b);
    }
    CHECK_FAILS_NULL(zarr_array_builder_new(0, 1, SHAPE, &b), ZARR_ERR_INVALID_ARG, b);
    CHECK_FAILS_NULL(zarr_array_builder_new(ZARR_DTYPE_UINT4 + 1, 1, SHAPE, &b), ZARR_ERR_INVALID_ARG, b);

    CHECK_OK(zarr_array_builder_new(ZARR_DTYPE_FLOAT32, 2, SHAPE, &b));
    CHECK_OK(zarr_array_builder_set_zarr_format(b, 2));
    /* Malformed JSON arguments. */
    CHECK_STATUS(zarr_array_builder_set_compressor_json(b, "{"), ZARR_ERR_INVALID_ARG);
    CHECK_ERROR_CONTAINS("not valid JSON");
    CHECK_STATUS(zarr_array_builder_set_fill_value_json(b, "nan"), ZARR_ERR_INVALID_ARG);
    CHECK_STATUS(zarr_array_builder_set_filters_json(b, "["), ZARR_ERR_INVALID_ARG);
    CHECK_STATUS(zarr_array_builder_set_attributes_json(b, "{x}"), ZARR_ERR_INVALID_ARG);
    CHECK_STATUS(zarr_array_builder_set_attributes_json(b, "[]"), ZARR_ERR_INVALID_ARG);
    CHECK_STATUS(zarr_array_attrs_set(a, "{"), ZARR_ERR_INVALID_ARG);
    CHECK_STATUS(zarr_array_attrs_set(a, "[1, 2]"), ZARR_ERR_INVALID_ARG);
    CHECK_STATUS(zarr_array_attrs_set(a, "\"str\""), ZARR_ERR_INVALID_ARG);
    CHECK_STATUS(zarr_array_attr_set(a, "k", "not json"), ZARR_ERR_INVALID_ARG);
    CHECK_STATUS(zarr_array_attr_set(a, "k", ""), ZARR_ERR_INVALID_ARG);
    char text[16];
    CHECK_OK(zarr_array_attrs_get(a, text, sizeof text, NULL));
    CHECK_STR(text, "{}"); /* nothing was stored */
    /* Bad separators. */
    const char *seps[] = {"", "-", "//", "./", "\\"};
    for (size_t i = 0; i < sizeof seps / sizeof seps[0]; i++) {
        CHECK_STATUS(zarr_array_builder_set_dimension_separator(b, seps[i]), ZARR_ERR_INVALID_ARG);
        CHECK_ERROR_CONTAINS("separator");
    }
    /* Bad format versions and dtype names. */
    CHECK_STATUS(zarr_array_builder_set_zarr_format(b, 0), ZARR_ERR_INVALID_ARG);
    CHECK_STATUS(zarr_array_builder_set_zarr_format(b, 4), ZARR_ERR_INVALID_ARG);
    CHECK_STATUS(zarr_array_builder_set_dtype_name(b, "nope"), ZARR_ERR_INVALID_ARG);
    CHECK_ERROR_CONTAINS("nope");
    CHECK_STATUS(zarr_array_builder_set_dtype_name(b, "<f3"), ZARR_ERR_INVALID_ARG);
    CHECK_STATUS(zarr_array_builder_set_dtype_name(b, "|f8"), ZARR_ERR_INVALID_ARG);
    CHECK_STATUS(zarr_dtype_from_name("float128", &(zarr_dtype_t){0}), ZARR_ERR_INVALID_ARG);
    /* Strings that are not UTF-8. */
    CHECK_STATUS(zarr_store_set(s, "bad\xff", "v", 1), ZARR_ERR_INVALID_ARG);
    CHECK_ERROR_CONTAINS("UTF-8");
    CHECK_FAILS_NULL(zarr_array_open(s, "\xc3\x28", ZARR_MODE_R, &out_a), ZARR_ERR_INVALID_ARG, out_a);
    /* Thread counts above the limit. */
    CHECK_STATUS(zarr_set_num_threads(4097), ZARR_ERR_INVALID_ARG);
    CHECK_STATUS(zarr_set_num_threads((size_t)-1), ZARR_ERR_INVALID_ARG);

    /* Settings checked at creation: each failure leaves *out_array NULL, nothing stored. */
    static const uint64_t rank1[1] = {2}, zero_chunk[2] = {2, 0}, huge_chunk[2] = {1ull << 32, 1ull << 32};
    static const struct {
        const char *what;
        const char *compressor;
        const char *fill;
        const uint64_t *chunks;
        size_t chunk_ndim;
        const char *filters;
        const char *message;
    } bad_settings[] = {
        {"compressor not an object", "[1]", NULL, NULL, 0, NULL, "compressor"},
        {"compressor a string", "\"zlib\"", NULL, NULL, 0, NULL, "compressor"},
        {"compressor without id", "{\"level\": 1}", NULL, NULL, 0, NULL, "id"},
        {"compressor level out of range", "{\"id\": \"zlib\", \"level\": 12}", NULL, NULL, 0, NULL, "level"},
        {"blosc with a bad cname", "{\"id\": \"blosc\", \"cname\": \"xx\"}", NULL, NULL, 0, NULL, "cname"},
        {"fill value not a number", NULL, "\"abc\"", NULL, 0, NULL, "fill_value"},
        {"fill value an object", NULL, "{}", NULL, 0, NULL, "fill_value"},
        {"chunks of rank 1", NULL, NULL, rank1, 1, NULL, "chunks"},
        {"a zero chunk", NULL, NULL, zero_chunk, 2, NULL, "chunks[1]"},
        {"chunks too big", NULL, NULL, huge_chunk, 2, NULL, "chunks"},
        {"filters not a list", NULL, NULL, NULL, 0, "5", "filters"},
        {"filters an object", NULL, NULL, NULL, 0, "{}", "filters"},
    };
    for (size_t i = 0; i < sizeof bad_settings / sizeof bad_settings[0]; i++) {
        zarr_array_builder_t *bb = NULL;
        CHECK_OK(zarr_array_builder_new(ZARR_DTYPE_FLOAT32, 2, SHAPE, &bb));
        CHECK_OK(zarr_array_builder_set_zarr_format(bb, 2));
        if (bad_settings[i].compressor)
            CHECK_OK(zarr_array_builder_set_compressor_json(bb, bad_settings[i].compressor));
        if (bad_settings[i].fill)
            CHECK_OK(zarr_array_builder_set_fill_value_json(bb, bad_settings[i].fill));
        if (bad_settings[i].chunks)
            CHECK_OK(zarr_array_builder_set_chunk_shape(bb, bad_settings[i].chunk_ndim, bad_settings[i].chunks));
        if (bad_settings[i].filters)
            CHECK_OK(zarr_array_builder_set_filters_json(bb, bad_settings[i].filters));
        CHECK_FAILS_NULL(zarr_array_create(bb, s, "bad", ZARR_MODE_W, &out_a), ZARR_ERR_INVALID_ARG, out_a);
        const char *msg = check_last_error();
        if (strstr(msg, bad_settings[i].message) == NULL) {
            check_failed++;
            fprintf(stderr, "%s:%d: %s: message lacks \"%s\": %s\n", __FILE__, __LINE__,
                    bad_settings[i].what, bad_settings[i].message, msg);
        } else {
            check_passed++;
        }
        zarr_array_builder_free(bb);
    }
    bool exists = true;
    CHECK_OK(zarr_store_contains(s, "bad/.zarray", &exists));
    CHECK(!exists);

    /* Modes that do not fit the call. */
    CHECK_FAILS_NULL(zarr_array_open(s, "a", ZARR_MODE_W, &out_a), ZARR_ERR_INVALID_ARG, out_a);
    CHECK_FAILS_NULL(zarr_array_open(s, "a", ZARR_MODE_W_MINUS, &out_a), ZARR_ERR_INVALID_ARG, out_a);
    CHECK_FAILS_NULL(zarr_array_create(b, s, "new", ZARR_MODE_R, &out_a), ZARR_ERR_INVALID_ARG, out_a);
    CHECK_FAILS_NULL(zarr_array_create(b, s, "new", ZARR_MODE_R_PLUS, &out_a), ZARR_ERR_INVALID_ARG, out_a);

    /* Append: an axis beyond the rank, other extents not matching. */
    const uint64_t rows[2] = {1, 8}, wrong[2] = {1, 7};
    CHECK_STATUS(zarr_array_append(a, 2, 2, rows, ZARR_DTYPE_FLOAT32, ZARR_ORDER_C, buf, 8 * sizeof(float)), ZARR_ERR_INVALID_ARG);
    CHECK_ERROR_CONTAINS("axis");
    CHECK_STATUS(zarr_array_append(a, 0, 2, wrong, ZARR_DTYPE_FLOAT32, ZARR_ORDER_C, buf, 7 * sizeof(float)), ZARR_ERR_INVALID_ARG);
    CHECK_ERROR_CONTAINS("dimension 1");
    uint64_t shape_now[2];
    CHECK_OK(zarr_array_shape(a, 2, shape_now));
    CHECK(shape_now[0] == 6 && shape_now[1] == 8);

    zarr_array_builder_free(b);
    zarr_array_free(a);
    zarr_store_free(s);
}

/* ---- RANK_MISMATCH, OUT_OF_BOUNDS, DTYPE_MISMATCH, BUFFER_SIZE ---- */

static void test_region_checks(void) {
    zarr_store_t *s = memory_store();
    zarr_array_t *a = float_array(s, "a", NULL);
    float buf[64];
    uint64_t u64[3];
    const uint64_t start3[3] = {0, 0, 0}, count3[3] = {1, 1, 1};

    /* Rank. */
    CHECK_STATUS(zarr_array_read(a, 1, ORIGIN, SHAPE, ZARR_DTYPE_FLOAT32, ZARR_ORDER_C, buf, 6 * 4), ZARR_ERR_RANK_MISMATCH);
    CHECK_ERROR_CONTAINS("rank 2");
    CHECK_STATUS(zarr_array_read(a, 3, start3, count3, ZARR_DTYPE_FLOAT32, ZARR_ORDER_C, buf, 4), ZARR_ERR_RANK_MISMATCH);
    CHECK_STATUS(zarr_array_read(a, 0, NULL, NULL, ZARR_DTYPE_FLOAT32, ZARR_ORDER_C, buf, 4), ZARR_ERR_RANK_MISMATCH);
    CHECK_STATUS(zarr_array_write(a, 3, start3, count3, ZARR_DTYPE_FLOAT32, ZARR_ORDER_C, buf, 4), ZARR_ERR_RANK_MISMATCH);
    CHECK_STATUS(zarr_array_shape(a, 1, u64), ZARR_ERR_RANK_MISMATCH);
    CHECK_STATUS(zarr_array_shape(a, 3, u64), ZARR_ERR_RANK_MISMATCH);
    CHECK_STATUS(zarr_array_chunk_shape(a, 1, u64), ZARR_ERR_RANK_MISMATCH);
    CHECK_STATUS(zarr_array_resize(a, 3, count3), ZARR_ERR_RANK_MISMATCH);
    CHECK_STATUS(zarr_array_append(a, 0, 3, count3, ZARR_DTYPE_FLOAT32, ZARR_ORDER_C, buf, 4), ZARR_ERR_RANK_MISMATCH);
    /* With the wrong rank, pointers are not even looked at. */
    CHECK_STATUS(zarr_array_read(a, 5, NULL, NULL, ZARR_DTYPE_FLOAT32, ZARR_ORDER_C, NULL, 4), ZARR_ERR_RANK_MISMATCH);

    /* Bounds: past the end, start past the end with count 0, start + count overflowing. */
    const uint64_t s1[2] = {5, 0}, c1[2] = {2, 1};
    CHECK_STATUS(zarr_array_read(a, 2, s1, c1, ZARR_DTYPE_FLOAT32, ZARR_ORDER_C, buf, 8), ZARR_ERR_OUT_OF_BOUNDS);
    CHECK_ERROR_CONTAINS("dimension 0");
    CHECK_STATUS(zarr_array_write(a, 2, s1, c1, ZARR_DTYPE_FLOAT32, ZARR_ORDER_C, buf, 8), ZARR_ERR_OUT_OF_BOUNDS);
    const uint64_t s2[2] = {0, 9}, c2[2] = {1, 0};
    CHECK_STATUS(zarr_array_read(a, 2, s2, c2, ZARR_DTYPE_FLOAT32, ZARR_ORDER_C, NULL, 0), ZARR_ERR_OUT_OF_BOUNDS);
    CHECK_ERROR_CONTAINS("dimension 1");
    const uint64_t s3[2] = {UINT64_MAX, 0}, c3[2] = {2, 1};
    CHECK_STATUS(zarr_array_read(a, 2, s3, c3, ZARR_DTYPE_FLOAT32, ZARR_ORDER_C, buf, 8), ZARR_ERR_OUT_OF_BOUNDS);
    const uint64_t c4[2] = {7, 8};
    CHECK_STATUS(zarr_array_read(a, 2, ORIGIN, c4, ZARR_DTYPE_FLOAT32, ZARR_ORDER_C, buf, 56 * 4), ZARR_ERR_OUT_OF_BOUNDS);

    /* Element type. */
    CHECK_STATUS(zarr_array_read(a, 2, ORIGIN, SHAPE, ZARR_DTYPE_FLOAT64, ZARR_ORDER_C, buf, 0), ZARR_ERR_DTYPE_MISMATCH);
    CHECK_STATUS(zarr_array_read(a, 2, ORIGIN, SHAPE, ZARR_DTYPE_INT32, ZARR_ORDER_C, buf, 48 * 4), ZARR_ERR_DTYPE_MISMATCH);
    CHECK_ERROR_CONTAINS("float32");
    CHECK_STATUS(zarr_array_write(a, 2, ORIGIN, SHAPE, ZARR_DTYPE_UINT32, ZARR_ORDER_C, buf, 48 * 4), ZARR_ERR_DTYPE_MISMATCH);
    const uint64_t row[2] = {1, 8};
    CHECK_STATUS(zarr_array_append(a, 0, 2, row, ZARR_DTYPE_INT32, ZARR_ORDER_C, buf, 8 * 4), ZARR_ERR_DTYPE_MISMATCH);
    zarr_array_builder_t *b = NULL;
    zarr_array_t *out_a = NULL;
    CHECK_OK(zarr_array_builder_new(ZARR_DTYPE_FLOAT32, 2, SHAPE, &b));
    CHECK_OK(zarr_array_builder_set_zarr_format(b, 2));
    const int32_t ifill = 3;
    CHECK_OK(zarr_array_builder_set_fill_value(b, ZARR_DTYPE_INT32, &ifill, sizeof ifill));
    CHECK_FAILS_NULL(zarr_array_create(b, s, "x", ZARR_MODE_W, &out_a), ZARR_ERR_DTYPE_MISMATCH, out_a);
    zarr_array_builder_free(b);

    /* Buffer sizes: one byte and one element too short or too long. */
    const size_t sizes[] = {48 * 4 - 1, 48 * 4 + 1, 47 * 4, 49 * 4, 0};
    for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
        float big[64];
        CHECK_STATUS(zarr_array_read(a, 2, ORIGIN, SHAPE, ZARR_DTYPE_FLOAT32, ZARR_ORDER_C, sizes[i] ? big : NULL, sizes[i]), ZARR_ERR_BUFFER_SIZE);
        CHECK_ERROR_CONTAINS("192");
        CHECK_STATUS(zarr_array_write(a, 2, ORIGIN, SHAPE, ZARR_DTYPE_FLOAT32, ZARR_ORDER_C, sizes[i] ? big : NULL, sizes[i]), ZARR_ERR_BUFFER_SIZE);
    }
    CHECK_STATUS(zarr_array_append(a, 0, 2, row, ZARR_DTYPE_FLOAT32, ZARR_ORDER_C, buf, 7 * 4), ZARR_ERR_BUFFER_SIZE);
    uint64_t shape_now[2];
    CHECK_OK(zarr_array_shape(a, 2, shape_now));
    CHECK(shape_now[0] == 6); /* a failed append does not grow the array */
    double d;
    bool is_null;
    CHECK_STATUS(zarr_array_fill_value(a, &d, sizeof d, &is_null), ZARR_ERR_BUFFER_SIZE);
    CHECK_STATUS(zarr_array_fill_value(a, &d, 2, &is_null), ZARR_ERR_BUFFER_SIZE);
    CHECK_OK(zarr_array_builder_new(ZARR_DTYPE_FLOAT32, 2, SHAPE, &b));
    CHECK_OK(zarr_array_builder_set_zarr_format(b, 2));
    CHECK_OK(zarr_array_builder_set_fill_value(b, ZARR_DTYPE_FLOAT32, &d, 3));
    CHECK_FAILS_NULL(zarr_array_create(b, s, "x", ZARR_MODE_W, &out_a), ZARR_ERR_BUFFER_SIZE, out_a);
    zarr_array_builder_free(b);

    /* The data is unchanged by all the failed writes. */
    float back[48];
    CHECK_OK(zarr_array_read(a, 2, ORIGIN, SHAPE, ZARR_DTYPE_FLOAT32, ZARR_ORDER_C, back, sizeof back));
    int same = 0;
    for (int i = 0; i < 48; i++)
        same += back[i] == (float)i;
    CHECK_EQ(same, 48);
    zarr_array_free(a);
    zarr_store_free(s);
}

/* ---- NOT_FOUND, NODE_TYPE, EXISTS ---- */

static void test_not_found_and_exists(void) {
    zarr_store_t *s = memory_store();
    zarr_array_t *a = float_array(s, "grp/a", NULL);
    zarr_array_t *out_a = NULL;

    CHECK_FAILS_NULL(zarr_array_open(s, "missing", ZARR_MODE_R, &out_a), ZARR_ERR_NOT_FOUND, out_a);
    CHECK_ERROR_CONTAINS("missing");
    CHECK_FAILS_NULL(zarr_array_open(s, "missing", ZARR_MODE_R_PLUS, &out_a), ZARR_ERR_NOT_FOUND, out_a);
    CHECK_FAILS_NULL(zarr_array_open(s, "missing", ZARR_MODE_A, &out_a), ZARR_ERR_NOT_FOUND, out_a);
    /* A group is not an array. */
    CHECK_FAILS_NULL(zarr_array_open(s, "grp", ZARR_MODE_R, &out_a), ZARR_ERR_NODE_TYPE, out_a);
    CHECK_ERROR_CONTAINS("group");
    CHECK_FAILS_NULL(zarr_array_open(s, "", ZARR_MODE_R, &out_a), ZARR_ERR_NODE_TYPE, out_a);
    char text[16];
    CHECK_STATUS(zarr_array_attr_get(a, "nope", text, sizeof text, NULL), ZARR_ERR_NOT_FOUND);
    CHECK_ERROR_CONTAINS("nope");
    CHECK_STATUS(zarr_array_attr_delete(a, "nope"), ZARR_ERR_NOT_FOUND);
    CHECK_STATUS(zarr_store_get(s, "grp/a/9.9", text, sizeof text, NULL), ZARR_ERR_NOT_FOUND);
    CHECK_STATUS(zarr_store_erase(s, "grp/a/9.9"), ZARR_ERR_NOT_FOUND);

    /* EXISTS: create w- twice, below an array; NODE_TYPE: an array where a group is. */
    zarr_array_builder_t *b = NULL;
    CHECK_OK(zarr_array_builder_new(ZARR_DTYPE_UINT8, 1, SHAPE, &b));
    CHECK_OK(zarr_array_builder_set_zarr_format(b, 2));
    CHECK_OK(zarr_array_create(b, s, "once", ZARR_MODE_W_MINUS, &out_a));
    zarr_array_free(out_a);
    CHECK_FAILS_NULL(zarr_array_create(b, s, "once", ZARR_MODE_W_MINUS, &out_a), ZARR_ERR_EXISTS, out_a);
    CHECK_ERROR_CONTAINS("once");
    CHECK_FAILS_NULL(zarr_array_create(b, s, "grp", ZARR_MODE_W_MINUS, &out_a), ZARR_ERR_NODE_TYPE, out_a);
    CHECK_FAILS_NULL(zarr_array_create(b, s, "grp", ZARR_MODE_A, &out_a), ZARR_ERR_NODE_TYPE, out_a);
    CHECK_FAILS_NULL(zarr_array_create(b, s, "grp/a/child", ZARR_MODE_W, &out_a), ZARR_ERR_EXISTS, out_a);
    CHECK_ERROR_CONTAINS("grp/a");
    CHECK_FAILS_NULL(zarr_array_create(b, s, "grp/a/x/y", ZARR_MODE_W_MINUS, &out_a), ZARR_ERR_EXISTS, out_a);
    CHECK_FAILS_NULL(zarr_array_create(b, s, "", ZARR_MODE_W_MINUS, &out_a), ZARR_ERR_NODE_TYPE, out_a);
    const char *doc = "{\"zarr_format\":2,\"shape\":[2],\"chunks\":[2],\"dtype\":\"|u1\","
                      "\"compressor\":null,\"fill_value\":0,\"order\":\"C\",\"filters\":null}";
    CHECK_FAILS_NULL(zarr_array_create_json(s, "once", doc, ZARR_MODE_W_MINUS, &out_a), ZARR_ERR_EXISTS, out_a);
    CHECK_FAILS_NULL(zarr_array_create_json(s, "grp/a/c", doc, ZARR_MODE_W, &out_a), ZARR_ERR_EXISTS, out_a);
    /* Mode W inside an array checks the ancestors before erasing anything: the chunks
     * named like the new node ("n/0/..." nested, "one/0" flat) survive. */
    const uint64_t sq[2] = {4, 4}, half[2] = {2, 2};
    zarr_array_builder_t *nb = NULL;
    CHECK_OK(zarr_array_builder_new(ZARR_DTYPE_INT8, 2, sq, &nb));
    CHECK_OK(zarr_array_builder_set_zarr_format(nb, 2));
    CHECK_OK(zarr_array_builder_set_chunk_shape(nb, 2, half));
    CHECK_OK(zarr_array_builder_set_dimension_separator(nb, "/"));
    zarr_array_t *nested = NULL;
    CHECK_OK(zarr_array_create(nb, s, "n", ZARR_MODE_W, &nested));
    zarr_array_builder_free(nb);
    int8_t ones[16];
    memset(ones, 1, sizeof ones);
    CHECK_OK(zarr_array_write(nested, 2, ORIGIN, sq, ZARR_DTYPE_INT8, ZARR_ORDER_C, ones, sizeof ones));
    CHECK_FAILS_NULL(zarr_array_create(b, s, "n/0", ZARR_MODE_W, &out_a), ZARR_ERR_EXISTS, out_a);
    zarr_group_t *out_g = NULL;
    CHECK_FAILS_NULL(zarr_group_open(s, "n/1", ZARR_MODE_W, &out_g), ZARR_ERR_EXISTS, out_g);
    uint64_t kept = 0;
    CHECK_OK(zarr_array_nchunks_initialized(nested, &kept));
    CHECK_EQ(kept, 4);
    zarr_array_free(nested);
    CHECK_OK(zarr_array_create(b, s, "one", ZARR_MODE_W, &out_a)); /* 1-d: chunk key "one/0" */
    CHECK_OK(zarr_array_write(out_a, 1, ORIGIN, SHAPE, ZARR_DTYPE_UINT8, ZARR_ORDER_C, ones, 6));
    zarr_array_free(out_a);
    CHECK_FAILS_NULL(zarr_array_create(b, s, "one/0", ZARR_MODE_W, &out_a), ZARR_ERR_EXISTS, out_a);
    bool chunk_kept = false;
    CHECK_OK(zarr_store_contains(s, "one/0", &chunk_kept));
    CHECK(chunk_kept);
    zarr_array_builder_free(b);
    /* Nothing below the array was written, and the array is intact. */
    zarr_strings_t *l = NULL;
    CHECK_OK(zarr_store_list(s, "grp/a/", &l));
    bool clean = true;
    for (size_t i = 0; i < zarr_strings_count(l); i++)
        if (strstr(zarr_strings_get(l, i), "child") || strstr(zarr_strings_get(l, i), "/x/") ||
            strstr(zarr_strings_get(l, i), "/c/"))
            clean = false;
    CHECK(clean);
    zarr_strings_free(l);
    uint64_t n = 0;
    CHECK_OK(zarr_array_nchunks_initialized(a, &n));
    CHECK_EQ(n, 6);
    zarr_array_free(a);
    zarr_store_free(s);
}

/* ---- METADATA ---- */

struct field {
    const char *key;
    const char *value;
};

static const struct field BASE_DOC[] = {
    {"zarr_format", "2"},
    {"shape", "[10, 20]"},
    {"chunks", "[5, 7]"},
    {"dtype", "\"<f8\""},
    {"compressor", "{\"id\": \"zlib\", \"level\": 1}"},
    {"fill_value", "\"NaN\""},
    {"order", "\"C\""},
    {"filters", "null"},
};
#define NFIELDS (sizeof BASE_DOC / sizeof BASE_DOC[0])

/* The base document without `skip` and with `key` set to `value` (either may be NULL). */
static void make_doc(char *out, size_t len, const char *skip, const char *key, const char *value) {
    snprintf(out, len, "{");
    bool replaced = false;
    for (size_t i = 0; i < NFIELDS; i++) {
        if (skip && strcmp(BASE_DOC[i].key, skip) == 0)
            continue;
        const char *v = BASE_DOC[i].value;
        if (key && strcmp(BASE_DOC[i].key, key) == 0) {
            v = value;
            replaced = true;
        }
        size_t used = strlen(out);
        snprintf(out + used, len - used, "%s\"%s\": %s", used > 1 ? ", " : "", BASE_DOC[i].key, v);
    }
    if (key && !replaced) {
        size_t used = strlen(out);
        snprintf(out + used, len - used, ", \"%s\": %s", key, value);
    }
    size_t used = strlen(out);
    snprintf(out + used, len - used, "}");
}

/* Stores `doc` as m/.zarray; opening it and creating from it must fail with `status`. */
static void expect_bad_doc(zarr_store_t *s, const char *doc, zarr_status_t status,
                           const char *named, int line) {
    zarr_array_t *out_a = SENTINEL(zarr_array_t);
    CHECK_OK(zarr_store_set(s, "m/.zarray", doc, strlen(doc)));
    zarr_status_t st = zarr_array_open(s, "m", ZARR_MODE_R, &out_a);
    const char *msg = check_last_error();
    if (st != status || out_a != NULL || strstr(msg, named) == NULL) {
        check_failed++;
        fprintf(stderr, "%s:%d: open of %s\n    gave %s, expected %s naming \"%s\": %s\n",
                __FILE__, line, doc, zarr_status_str(st), zarr_status_str(status), named, msg);
    } else {
        check_passed++;
    }
    out_a = SENTINEL(zarr_array_t);
    st = zarr_array_create_json(s, "n", doc, ZARR_MODE_W, &out_a);
    msg = check_last_error();
    if (st != status || out_a != NULL || strstr(msg, named) == NULL) {
        check_failed++;
        fprintf(stderr, "%s:%d: create_json of %s\n    gave %s, expected %s naming \"%s\": %s\n",
                __FILE__, line, doc, zarr_status_str(st), zarr_status_str(status), named, msg);
    } else {
        check_passed++;
    }
}

static void test_metadata(void) {
    zarr_store_t *s = memory_store();
    char doc[1024];
    /* The base document is valid. */
    make_doc(doc, sizeof doc, NULL, NULL, NULL);
    zarr_array_t *a = NULL;
    CHECK_OK(zarr_store_set(s, "m/.zarray", doc, strlen(doc)));
    CHECK_OK(zarr_array_open(s, "m", ZARR_MODE_R, &a));
    zarr_array_free(a);

    /* Each required key missing. */
    for (size_t i = 0; i < NFIELDS; i++) {
        make_doc(doc, sizeof doc, BASE_DOC[i].key, NULL, NULL);
        expect_bad_doc(s, doc, ZARR_ERR_METADATA, BASE_DOC[i].key, __LINE__);
    }
    /* Wrong types and values; the message names the field. */
    static const struct {
        const char *key, *value, *named;
    } bad[] = {
        {"zarr_format", "4", "zarr_format"},
        {"zarr_format", "\"2\"", "zarr_format"},
        {"zarr_format", "null", "zarr_format"},
        {"shape", "\"x\"", "shape"},
        {"shape", "[-1, 20]", "shape"},
        {"shape", "[1.5, 20]", "shape"},
        {"shape", "{\"a\": 1}", "shape"},
        {"shape", "[18446744073709551615, 18446744073709551615]", "shape"},
        {"chunks", "[0, 7]", "chunks[0]"},
        {"chunks", "[5, 0]", "chunks[1]"},
        {"chunks", "[5]", "chunks"},
        {"chunks", "[5, -7]", "chunks"},
        {"chunks", "null", "chunks"},
        {"chunks", "[4294967296, 4294967296]", "chunks"},
        {"dtype", "5", "dtype"},
        {"dtype", "\"<q9\"", "<q9"},
        {"dtype", "\"<f3\"", "<f3"},
        {"dtype", "\"f8\"", "f8"},
        {"dtype", "\"|f8\"", "|f8"},
        {"order", "\"X\"", "order"},
        {"order", "1", "order"},
        {"compressor", "5", "compressor"},
        {"compressor", "\"zlib\"", "compressor"},
        {"compressor", "{\"level\": 1}", "id"},
        {"compressor", "{\"id\": \"zlib\", \"level\": 12}", "level"},
        {"compressor", "{\"id\": \"blosc\", \"cname\": \"xx\"}", "cname"},
        {"compressor", "{\"id\": \"blosc\", \"shuffle\": 3}", "shuffle"},
        {"filters", "5", "filters"},
        {"filters", "{}", "filters"},
        {"fill_value", "\"abc\"", "fill_value"},
        {"fill_value", "[1, 2]", "fill_value"},
        {"dimension_separator", "\"-\"", "dimension_separator"},
        {"dimension_separator", "5", "dimension_separator"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        make_doc(doc, sizeof doc, NULL, bad[i].key, bad[i].value);
        expect_bad_doc(s, doc, ZARR_ERR_METADATA, bad[i].named, __LINE__);
    }
    /* Not JSON, not an object. */
    expect_bad_doc(s, "{\"zarr_format\": 2,", ZARR_ERR_METADATA, ".zarray", __LINE__);
    expect_bad_doc(s, "[]", ZARR_ERR_METADATA, ".zarray", __LINE__);
    expect_bad_doc(s, "", ZARR_ERR_METADATA, ".zarray", __LINE__);
    /* A fill value out of the type's range. */
    make_doc(doc, sizeof doc, NULL, "dtype", "\"|i1\"");
    char doc2[1024];
    snprintf(doc2, sizeof doc2, "%s", doc);
    char *fv = strstr(doc2, "\"NaN\"");
    if (fv)
        memcpy(fv, "  128", 5);
    expect_bad_doc(s, doc2, ZARR_ERR_METADATA, "fill_value", __LINE__);

    /* Malformed attributes surface when read. */
    make_doc(doc, sizeof doc, NULL, NULL, NULL);
    CHECK_OK(zarr_store_set(s, "m/.zarray", doc, strlen(doc)));
    CHECK_OK(zarr_store_set(s, "m/.zattrs", "[1]", 3));
    CHECK_OK(zarr_array_open(s, "m", ZARR_MODE_R, &a));
    char text[64];
    CHECK_STATUS(zarr_array_attrs_get(a, text, sizeof text, NULL), ZARR_ERR_METADATA);
    CHECK_ERROR_CONTAINS(".zattrs");
    CHECK_OK(zarr_store_set(s, "m/.zattrs", "{", 1));
    CHECK_STATUS(zarr_array_attr_get(a, "k", text, sizeof text, NULL), ZARR_ERR_METADATA);
    zarr_array_free(a);
    zarr_store_free(s);
}

/* ---- CODEC_UNSUPPORTED, UNSUPPORTED ---- */

static void test_unsupported(void) {
    zarr_store_t *s = memory_store();
    zarr_array_builder_t *b = NULL;
    zarr_array_t *out_a = NULL;
    CHECK_OK(zarr_array_builder_new(ZARR_DTYPE_FLOAT64, 2, SHAPE, &b));
    CHECK_OK(zarr_array_builder_set_zarr_format(b, 2));
    CHECK_OK(zarr_array_builder_set_compressor_json(b, "{\"id\": \"nope\", \"level\": 1}"));
    CHECK_FAILS_NULL(zarr_array_create(b, s, "x", ZARR_MODE_W, &out_a), ZARR_ERR_CODEC_UNSUPPORTED, out_a);
    CHECK_ERROR_CONTAINS("nope");
    CHECK_OK(zarr_array_builder_set_compressor_json(b, "null"));
    CHECK_OK(zarr_array_builder_set_filters_json(b, "[{\"id\": \"zfpy\", \"mode\": 4}]"));
    CHECK_FAILS_NULL(zarr_array_create(b, s, "x", ZARR_MODE_W, &out_a), ZARR_ERR_CODEC_UNSUPPORTED, out_a);
    CHECK_ERROR_CONTAINS("zfpy");
    CHECK_OK(zarr_array_builder_set_filters_json(b, "[]"));
    CHECK_OK(zarr_array_create(b, s, "x", ZARR_MODE_W, &out_a)); /* no filters is fine */
    zarr_array_free(out_a);
    CHECK_OK(zarr_array_builder_set_filters_json(b, "null"));
    /* Formats other than 2 and 3 do not exist. */
    CHECK_STATUS(zarr_array_builder_set_zarr_format(b, 4), ZARR_ERR_INVALID_ARG);
    CHECK_ERROR_CONTAINS("4");
    CHECK_OK(zarr_array_builder_set_zarr_format(b, 2));
    /* Malformed type names: an object type without its object codec, a unicode type
     * without byte order, a zero-size string. */
    CHECK_STATUS(zarr_array_builder_set_dtype_name(b, "|O"), ZARR_ERR_INVALID_ARG);
    CHECK_ERROR_CONTAINS("vlen-utf8");
    CHECK_STATUS(zarr_array_builder_set_dtype_name(b, "|U5"), ZARR_ERR_INVALID_ARG);
    CHECK_ERROR_CONTAINS("|U5");
    CHECK_STATUS(zarr_array_builder_set_dtype_name(b, "|S0"), ZARR_ERR_INVALID_ARG);
    zarr_array_builder_free(b);

    char doc[1024];
    make_doc(doc, sizeof doc, NULL, "compressor", "{\"id\": \"snappy-nope\"}");
    expect_bad_doc(s, doc, ZARR_ERR_CODEC_UNSUPPORTED, "snappy-nope", __LINE__);
    make_doc(doc, sizeof doc, NULL, "filters", "[{\"id\": \"zfpy\", \"mode\": 4}]");
    expect_bad_doc(s, doc, ZARR_ERR_CODEC_UNSUPPORTED, "zfpy", __LINE__);
    /* An object array whose object codec libzarr does not implement. */
    expect_bad_doc(s,
                   "{\"zarr_format\": 2, \"shape\": [4], \"chunks\": [2], \"dtype\": \"|O\", "
                   "\"compressor\": null, \"fill_value\": null, \"order\": \"C\", "
                   "\"filters\": [{\"id\": \"pickle\"}]}",
                   ZARR_ERR_CODEC_UNSUPPORTED, "pickle", __LINE__);
    zarr_store_free(s);
}

/* ---- CODEC: garbage and wrongly sized chunks ---- */

static const char *const COMPRESSORS[] = {
    "{\"id\":\"blosc\",\"cname\":\"lz4\",\"clevel\":5,\"shuffle\":1}",
    "{\"id\":\"blosc\",\"cname\":\"zstd\",\"clevel\":3,\"shuffle\":2}",
    "{\"id\":\"zlib\",\"level\":1}",
    "{\"id\":\"gzip\",\"level\":1}",
    "{\"id\":\"bz2\",\"level\":1}",
    "{\"id\":\"lzma\"}",
    "{\"id\":\"zstd\",\"level\":1,\"checksum\":true}",
    "{\"id\":\"lz4\"}",
    "null",
};
#define NCOMPRESSORS (sizeof COMPRESSORS / sizeof COMPRESSORS[0])

static void test_codec_garbage(void) {
    zarr_store_t *s = memory_store();
    for (size_t c = 0; c < NCOMPRESSORS; c++) {
        char path[16], key[32];
        snprintf(path, sizeof path, "g%zu", c);
        snprintf(key, sizeof key, "g%zu/0.1", c);
        zarr_array_t *a = float_array(s, path, COMPRESSORS[c]);
        /* Chunk 0.1 (rows 0..3, columns 3..5) replaced by garbage. */
        const char garbage[] = "garbage garbage garbage garbage!";
        CHECK_OK(zarr_store_set(s, key, garbage, sizeof garbage - 1));
        float all[48];
        CHECK_STATUS(zarr_array_read(a, 2, ORIGIN, SHAPE, ZARR_DTYPE_FLOAT32, ZARR_ORDER_C, all, sizeof all), ZARR_ERR_CODEC);
        CHECK_ERROR_CONTAINS(key);
        /* Other chunks still read: chunk 0.0 alone, and rows 4..5 (chunks 1.x). */
        float part[12];
        const uint64_t c00[2] = {4, 3};
        CHECK_OK(zarr_array_read(a, 2, ORIGIN, c00, ZARR_DTYPE_FLOAT32, ZARR_ORDER_C, part, sizeof part));
        CHECK(part[0] == 0.0f && part[4] == 9.0f && part[11] == 26.0f);
        const uint64_t s1[2] = {4, 0}, n1[2] = {2, 8};
        float rows[16];
        CHECK_OK(zarr_array_read(a, 2, s1, n1, ZARR_DTYPE_FLOAT32, ZARR_ORDER_C, rows, sizeof rows));
        CHECK(rows[0] == 32.0f && rows[15] == 47.0f);
        /* A partial write into the bad chunk must decode it: fails, chunk untouched. */
        const uint64_t at[2] = {0, 3}, one[2] = {1, 1};
        const float v = -1.0f;
        CHECK_STATUS(zarr_array_write(a, 2, at, one, ZARR_DTYPE_FLOAT32, ZARR_ORDER_C, &v, sizeof v), ZARR_ERR_CODEC);
        CHECK_ERROR_CONTAINS(key);
        char raw[64];
        size_t needed = 0;
        CHECK_OK(zarr_store_get(s, key, raw, sizeof raw, &needed));
        CHECK_EQ(needed, sizeof garbage - 1);
        /* Rewriting the whole chunk repairs it without reading it. */
        const uint64_t s01[2] = {0, 3};
        float chunk[12];
        for (int i = 0; i < 4; i++)
            for (int j = 0; j < 3; j++)
                chunk[i * 3 + j] = (float)(i * 8 + 3 + j);
        CHECK_OK(zarr_array_write(a, 2, s01, c00, ZARR_DTYPE_FLOAT32, ZARR_ORDER_C, chunk, sizeof chunk));
        CHECK_OK(zarr_array_read(a, 2, ORIGIN, SHAPE, ZARR_DTYPE_FLOAT32, ZARR_ORDER_C, all, sizeof all));
        int same = 0;
        for (int i = 0; i < 48; i++)
            same += all[i] == (float)i;
        CHECK_EQ(same, 48);
        /* An append that must merge into a bad chunk fails and leaves the shape as it was. */
        char key2[32];
        snprintf(key2, sizeof key2, "g%zu/1.2", c);
        CHECK_OK(zarr_store_set(s, key2, garbage, sizeof garbage - 1));
        const uint64_t row[2] = {1, 8};
        float extra[8] = {0};
        CHECK_STATUS(zarr_array_append(a, 0, 2, row, ZARR_DTYPE_FLOAT32, ZARR_ORDER_C, extra, sizeof extra), ZARR_ERR_CODEC);
        CHECK_ERROR_CONTAINS(key2);
        uint64_t now[2];
        CHECK_OK(zarr_array_shape(a, 2, now));
        CHECK(now[0] == 6 && now[1] == 8);
        zarr_array_t *reopened = NULL;
        CHECK_OK(zarr_array_open(s, path, ZARR_MODE_R, &reopened));
        CHECK_OK(zarr_array_shape(reopened, 2, now));
        CHECK(now[0] == 6 && now[1] == 8); /* the stored metadata too */
        zarr_array_free(reopened);
        zarr_array_free(a);
    }
    zarr_store_free(s);
}

/* A chunk whose data decodes to another size than the chunk's: CODEC, nothing overrun. */
static void test_codec_wrong_size(void) {
    zarr_store_t *s = memory_store();
    for (size_t c = 0; c < NCOMPRESSORS; c++) {
        /* Valid chunks of 3, 4 and 5 int32 encoded by the codec. */
        const uint64_t sizes[3] = {3, 4, 5};
        for (int k = 0; k < 3; k++) {
            char path[32];
            snprintf(path, sizeof path, "src%zu_%d", c, k);
            zarr_array_builder_t *b = NULL;
            CHECK_OK(zarr_array_builder_new(ZARR_DTYPE_INT32, 1, &sizes[k], &b));
            CHECK_OK(zarr_array_builder_set_zarr_format(b, 2));
            CHECK_OK(zarr_array_builder_set_compressor_json(b, COMPRESSORS[c]));
            zarr_array_t *a = NULL;
            CHECK_OK(zarr_array_create(b, s, path, ZARR_MODE_W, &a));
            zarr_array_builder_free(b);
            const int32_t v[5] = {11, 22, 33, 44, 55};
            const uint64_t zero[1] = {0};
            CHECK_OK(zarr_array_write(a, 1, zero, &sizes[k], ZARR_DTYPE_INT32, ZARR_ORDER_C, v, sizes[k] * 4));
            zarr_array_free(a);
        }
        /* The target: shape 8, chunks of 4. Chunk 0 gets the 3- and 5-element encodings. */
        char path[16];
        snprintf(path, sizeof path, "dst%zu", c);
        zarr_array_builder_t *b = NULL;
        const uint64_t shape[1] = {8}, chunks[1] = {4};
        CHECK_OK(zarr_array_builder_new(ZARR_DTYPE_INT32, 1, shape, &b));
        CHECK_OK(zarr_array_builder_set_zarr_format(b, 2));
        CHECK_OK(zarr_array_builder_set_chunk_shape(b, 1, chunks));
        CHECK_OK(zarr_array_builder_set_compressor_json(b, COMPRESSORS[c]));
        zarr_array_t *a = NULL;
        CHECK_OK(zarr_array_create(b, s, path, ZARR_MODE_W, &a));
        zarr_array_builder_free(b);
        for (int k = 0; k < 3; k += 2) {
            char src[48], dst[48];
            snprintf(src, sizeof src, "src%zu_%d/0", c, k);
            snprintf(dst, sizeof dst, "dst%zu/0", c);
            unsigned char raw[512];
            size_t len = 0;
            CHECK_OK(zarr_store_get(s, src, raw, sizeof raw, &len));
            CHECK_OK(zarr_store_set(s, dst, raw, len));
            /* Guard bytes around the caller's buffer must stay intact. */
            struct {
                int32_t before[4];
                int32_t buf[8];
                int32_t after[4];
            } g;
            for (int i = 0; i < 4; i++)
                g.before[i] = g.after[i] = 0x7a7a7a7a;
            /* Whole chunk (decoded straight into the caller's buffer) and a part of it. */
            const uint64_t zero[1] = {0}, two[1] = {2};
            CHECK_STATUS(zarr_array_read(a, 1, zero, chunks, ZARR_DTYPE_INT32, ZARR_ORDER_C, g.buf, 16), ZARR_ERR_CODEC);
            CHECK_ERROR_CONTAINS(dst);
            CHECK_STATUS(zarr_array_read(a, 1, zero, shape, ZARR_DTYPE_INT32, ZARR_ORDER_C, g.buf, 32), ZARR_ERR_CODEC);
            CHECK_STATUS(zarr_array_read(a, 1, zero, two, ZARR_DTYPE_INT32, ZARR_ORDER_C, g.buf, 8), ZARR_ERR_CODEC);
            int intact = 0;
            for (int i = 0; i < 4; i++)
                intact += (g.before[i] == 0x7a7a7a7a) + (g.after[i] == 0x7a7a7a7a);
            CHECK_EQ(intact, 8);
        }
        /* The 4-element encoding is right for the chunk and reads back. */
        char src[48], dst[48];
        snprintf(src, sizeof src, "src%zu_1/0", c);
        snprintf(dst, sizeof dst, "dst%zu/0", c);
        unsigned char raw[512];
        size_t len = 0;
        CHECK_OK(zarr_store_get(s, src, raw, sizeof raw, &len));
        CHECK_OK(zarr_store_set(s, dst, raw, len));
        int32_t back[4];
        const uint64_t zero[1] = {0};
        CHECK_OK(zarr_array_read(a, 1, zero, chunks, ZARR_DTYPE_INT32, ZARR_ORDER_C, back, sizeof back));
        CHECK(back[0] == 11 && back[3] == 44);
        zarr_array_free(a);
    }
    zarr_store_free(s);
}

/* ---- Oversized chunks, NO_MEMORY's name, mode W beside other keys ---- */

static void test_oversized_chunk_and_foreign_keys(void) {
    zarr_store_t *s = memory_store();
    zarr_array_t *a = float_array(s, "a", NULL);
    /* 1 MiB stored for an uncompressed chunk of 48 bytes: refused unread. */
    size_t big = (size_t)1 << 20;
    unsigned char *junk = calloc(big, 1);
    CHECK(junk != NULL);
    CHECK_OK(zarr_store_set(s, "a/0.0", junk, big));
    free(junk);
    float one = 0;
    const uint64_t count[2] = {1, 1};
    CHECK_STATUS(zarr_array_read(a, 2, ORIGIN, count, ZARR_DTYPE_FLOAT32, ZARR_ORDER_C, &one, sizeof one),
                 ZARR_ERR_CODEC);
    CHECK_ERROR_CONTAINS("a/0.0");
    CHECK_ERROR_CONTAINS("more than any valid encoding");
    CHECK_STR(zarr_status_str(ZARR_ERR_NO_MEMORY), "ZARR_ERR_NO_MEMORY");
    zarr_array_free(a);

    /* Mode W on the root replaces the Zarr nodes and keeps keys that belong to none. */
    CHECK_OK(zarr_store_set(s, "notes.txt", "mine", 4));
    CHECK_OK(zarr_store_set(s, "g/x.bin", "x", 1));
    zarr_group_t *g = NULL;
    CHECK_OK(zarr_group_open(s, "", ZARR_MODE_W, &g));
    bool has = false;
    CHECK_OK(zarr_store_contains(s, "notes.txt", &has));
    CHECK(has);
    CHECK_OK(zarr_store_contains(s, "g/x.bin", &has));
    CHECK(has);
    CHECK_OK(zarr_store_contains(s, "a/1.1", &has));
    CHECK(!has);
    zarr_group_free(g);
    zarr_store_free(s);
}

/* ---- STORAGE_IO ---- */

static void test_storage_io(void) {
    char *tmp = check_mkdtemp();
    char *file = check_join(tmp, "plain-file");
    FILE *f = fopen(file, "wb");
    CHECK(f != NULL);
    if (f) {
        fputs("not a directory", f);
        fclose(f);
    }
    zarr_store_t *s = NULL;
    const zarr_mode_t modes[] = {ZARR_MODE_R, ZARR_MODE_R_PLUS, ZARR_MODE_A, ZARR_MODE_W, ZARR_MODE_W_MINUS};
    for (size_t i = 0; i < 5; i++) {
        CHECK_FAILS_NULL(zarr_store_open_fs(file, modes[i], &s), ZARR_ERR_STORAGE_IO, s);
        CHECK_ERROR_CONTAINS("plain-file");
    }
    char *below = check_join(tmp, "plain-file/sub");
    CHECK_FAILS_NULL(zarr_store_open_fs(below, ZARR_MODE_A, &s), ZARR_ERR_STORAGE_IO, s);
    CHECK_FAILS_NULL(zarr_store_open_fs(below, ZARR_MODE_R, &s), ZARR_ERR_STORAGE_IO, s);

    /* A key below a value, and a chunk whose path is a directory. */
    CHECK_OK(zarr_store_open_fs(tmp, ZARR_MODE_R_PLUS, &s));
    CHECK_OK(zarr_store_set(s, "leaf", "x", 1));
    CHECK_STATUS(zarr_store_set(s, "leaf/below", "y", 1), ZARR_ERR_STORAGE_IO);
    CHECK_ERROR_CONTAINS("leaf/below");
    zarr_array_builder_t *b = NULL;
    const uint64_t shape[1] = {4};
    CHECK_OK(zarr_array_builder_new(ZARR_DTYPE_INT32, 1, shape, &b));
    CHECK_OK(zarr_array_builder_set_zarr_format(b, 2));
    zarr_array_t *a = NULL;
    CHECK_OK(zarr_array_create(b, s, "arr", ZARR_MODE_W, &a));
    zarr_array_builder_free(b);
    CHECK_OK(zarr_store_set(s, "arr/0/inside", "z", 1)); /* makes arr/0 a directory */
    const int32_t v[4] = {1, 2, 3, 4};
    const uint64_t zero[1] = {0};
    CHECK_STATUS(zarr_array_write(a, 1, zero, shape, ZARR_DTYPE_INT32, ZARR_ORDER_C, v, sizeof v), ZARR_ERR_STORAGE_IO);
    CHECK_ERROR_CONTAINS("arr/0");
    zarr_array_free(a);
    zarr_store_free(s);
    free(below);
    free(file);
    check_rmtree(tmp);
}

/* ---- READ_ONLY ---- */

/* All keys and values of a store as text "key=hex;" (malloc'd). */
static char *snapshot(const zarr_store_t *s) {
    zarr_strings_t *l = NULL;
    CHECK_OK(zarr_store_list(s, "", &l));
    size_t cap = 1 << 16, used = 0;
    char *out = (char *)calloc(1, cap);
    unsigned char value[2048];
    for (size_t i = 0; i < zarr_strings_count(l); i++) {
        const char *k = zarr_strings_get(l, i);
        size_t n = 0;
        CHECK_OK(zarr_store_get(s, k, value, sizeof value, &n));
        if (used + strlen(k) + 2 * n + 3 >= cap)
            break;
        used += (size_t)snprintf(out + used, cap - used, "%s=", k);
        for (size_t j = 0; j < n; j++)
            used += (size_t)snprintf(out + used, cap - used, "%02x", value[j]);
        out[used++] = ';';
    }
    zarr_strings_free(l);
    return out;
}

static void test_read_only(void) {
    char *tmp = check_mkdtemp();
    zarr_store_t *rw = NULL;
    CHECK_OK(zarr_store_open_fs(tmp, ZARR_MODE_R_PLUS, &rw));
    zarr_array_t *a = float_array(rw, "a", NULL);
    CHECK_OK(zarr_array_attr_set(a, "k", "1"));
    zarr_array_free(a);
    char *before = snapshot(rw);

    /* An array opened read-only through a writable store. */
    CHECK_OK(zarr_array_open(rw, "a", ZARR_MODE_R, &a));
    float buf[48] = {0};
    const uint64_t row[2] = {1, 8}, bigger[2] = {10, 10};
    CHECK_STATUS(zarr_array_write(a, 2, ORIGIN, SHAPE, ZARR_DTYPE_FLOAT32, ZARR_ORDER_C, buf, sizeof buf), ZARR_ERR_READ_ONLY);
    CHECK_ERROR_CONTAINS("read-only");
    CHECK_STATUS(zarr_array_resize(a, 2, bigger), ZARR_ERR_READ_ONLY);
    CHECK_STATUS(zarr_array_resize(a, 2, ORIGIN), ZARR_ERR_READ_ONLY);
    CHECK_STATUS(zarr_array_append(a, 0, 2, row, ZARR_DTYPE_FLOAT32, ZARR_ORDER_C, buf, 8 * 4), ZARR_ERR_READ_ONLY);
    CHECK_STATUS(zarr_array_attrs_set(a, "{}"), ZARR_ERR_READ_ONLY);
    CHECK_STATUS(zarr_array_attr_set(a, "k", "2"), ZARR_ERR_READ_ONLY);
    CHECK_STATUS(zarr_array_attr_delete(a, "k"), ZARR_ERR_READ_ONLY);
    CHECK_STATUS(zarr_array_attr_delete(a, "missing"), ZARR_ERR_READ_ONLY);
    uint64_t shape_now[2];
    CHECK_OK(zarr_array_shape(a, 2, shape_now));
    CHECK(shape_now[0] == 6 && shape_now[1] == 8);
    CHECK_OK(zarr_array_read(a, 2, ORIGIN, SHAPE, ZARR_DTYPE_FLOAT32, ZARR_ORDER_C, buf, sizeof buf));
    CHECK(buf[47] == 47.0f);
    zarr_array_free(a);

    /* A read-only store: no array may be opened for writing or created. */
    zarr_store_t *ro = NULL;
    CHECK_OK(zarr_store_open_fs(tmp, ZARR_MODE_R, &ro));
    zarr_array_t *out_a = NULL;
    CHECK_FAILS_NULL(zarr_array_open(ro, "a", ZARR_MODE_R_PLUS, &out_a), ZARR_ERR_READ_ONLY, out_a);
    CHECK_FAILS_NULL(zarr_array_open(ro, "a", ZARR_MODE_A, &out_a), ZARR_ERR_READ_ONLY, out_a);
    zarr_array_builder_t *b = NULL;
    CHECK_OK(zarr_array_builder_new(ZARR_DTYPE_FLOAT32, 2, SHAPE, &b));
    CHECK_OK(zarr_array_builder_set_zarr_format(b, 2));
    CHECK_FAILS_NULL(zarr_array_create(b, ro, "a", ZARR_MODE_W, &out_a), ZARR_ERR_READ_ONLY, out_a);
    CHECK_FAILS_NULL(zarr_array_create(b, ro, "b", ZARR_MODE_W_MINUS, &out_a), ZARR_ERR_READ_ONLY, out_a);
    CHECK_FAILS_NULL(zarr_array_create(b, ro, "a", ZARR_MODE_A, &out_a), ZARR_ERR_READ_ONLY, out_a);
    zarr_array_builder_free(b);
    const char *doc = "{\"zarr_format\":2,\"shape\":[2],\"chunks\":[2],\"dtype\":\"|u1\","
                      "\"compressor\":null,\"fill_value\":0,\"order\":\"C\",\"filters\":null}";
    CHECK_FAILS_NULL(zarr_array_create_json(ro, "c", doc, ZARR_MODE_W, &out_a), ZARR_ERR_READ_ONLY, out_a);
    CHECK_OK(zarr_array_open(ro, "a", ZARR_MODE_R, &a));
    CHECK_STATUS(zarr_array_write(a, 2, ORIGIN, SHAPE, ZARR_DTYPE_FLOAT32, ZARR_ORDER_C, buf, sizeof buf), ZARR_ERR_READ_ONLY);
    zarr_array_free(a);

    /* Every key and value is unchanged. */
    char *after = snapshot(rw);
    CHECK_STR(after, before);
    CHECK_CONTAINS(before, "a/.zattrs=");
    CHECK_CONTAINS(before, "a/1.2=");
    free(after);
    free(before);
    zarr_store_free(ro);
    zarr_store_free(rw);
    check_rmtree(tmp);
}

/* ---- INVALID_KEY ---- */

static void test_invalid_key(void) {
    zarr_store_t *s = memory_store();
    zarr_array_builder_t *b = NULL;
    const uint64_t shape[1] = {2};
    CHECK_OK(zarr_array_builder_new(ZARR_DTYPE_INT8, 1, shape, &b));
    CHECK_OK(zarr_array_builder_set_zarr_format(b, 2));
    zarr_array_t *out_a = NULL;
    /* Bad as keys and as node paths; the last three are only bad as node paths (metadata
     * document names are keys, not node names). */
    static const char *const paths[] = {"../x", "a/./b", "a\\..\\b", "a/..", "C:/x", "a/\xe2\x80\xa6/../..",
                                        "a/.zarray", ".zgroup", "a/.zattrs/b"};
    const size_t bad_keys = 6;
    const char *doc = "{\"zarr_format\":2,\"shape\":[2],\"chunks\":[2],\"dtype\":\"|u1\","
                      "\"compressor\":null,\"fill_value\":0,\"order\":\"C\",\"filters\":null}";
    for (size_t i = 0; i < sizeof paths / sizeof paths[0]; i++) {
        CHECK_FAILS_NULL(zarr_array_create(b, s, paths[i], ZARR_MODE_W, &out_a), ZARR_ERR_INVALID_KEY, out_a);
        CHECK_FAILS_NULL(zarr_array_create_json(s, paths[i], doc, ZARR_MODE_W, &out_a), ZARR_ERR_INVALID_KEY, out_a);
        CHECK_FAILS_NULL(zarr_array_open(s, paths[i], ZARR_MODE_R, &out_a), ZARR_ERR_INVALID_KEY, out_a);
        if (i < bad_keys)
            CHECK_STATUS(zarr_store_set(s, paths[i], "v", 1), ZARR_ERR_INVALID_KEY);
    }
    CHECK_FAILS_NULL(zarr_array_create(b, s, "../x", ZARR_MODE_W, &out_a), ZARR_ERR_INVALID_KEY, out_a);
    CHECK_ERROR_CONTAINS("../x");
    /* Metadata document names are not node names. */
    zarr_group_t *out_g = NULL;
    CHECK_FAILS_NULL(zarr_group_open(s, "g/.zarray", ZARR_MODE_A, &out_g), ZARR_ERR_INVALID_KEY, out_g);
    CHECK_ERROR_CONTAINS(".zarray");
    CHECK_OK(zarr_array_create(b, s, "arr", ZARR_MODE_W, &out_a));
    zarr_array_free(out_a);
    CHECK_FAILS_NULL(zarr_array_create(b, s, "arr/.zarray", ZARR_MODE_W, &out_a), ZARR_ERR_INVALID_KEY, out_a);
    CHECK_OK(zarr_array_open(s, "arr", ZARR_MODE_R, &out_a)); /* intact */
    zarr_array_free(out_a);
    CHECK_OK(zarr_store_erase_prefix(s, ""));
    zarr_array_builder_free(b);
    zarr_strings_t *l = NULL;
    CHECK_OK(zarr_store_list(s, "", &l));
    CHECK_EQ(zarr_strings_count(l), 0);
    zarr_strings_free(l);
    zarr_store_free(s);
}

/* ---- OVERFLOW ---- */

static void test_overflow(void) {
    zarr_store_t *s = memory_store();
    /* Appending past 2^64 elements along an axis. */
    const uint64_t shape[1] = {1}, chunks[1] = {1};
    zarr_array_builder_t *b = NULL;
    CHECK_OK(zarr_array_builder_new(ZARR_DTYPE_INT8, 1, shape, &b));
    CHECK_OK(zarr_array_builder_set_zarr_format(b, 2));
    CHECK_OK(zarr_array_builder_set_chunk_shape(b, 1, chunks));
    zarr_array_t *a = NULL;
    CHECK_OK(zarr_array_create(b, s, "o", ZARR_MODE_W, &a));
    zarr_array_builder_free(b);
    const uint64_t huge[1] = {UINT64_MAX};
    int8_t byte = 1;
    CHECK_STATUS(zarr_array_append(a, 0, 1, huge, ZARR_DTYPE_INT8, ZARR_ORDER_C, &byte, 1), ZARR_ERR_OVERFLOW);
    CHECK_ERROR_CONTAINS("64 bits");
    uint64_t now[1];
    CHECK_OK(zarr_array_shape(a, 1, now));
    CHECK_EQ(now[0], 1);
    zarr_array_free(a);

    /* 2-d: shape {2^40, 2} grown along axis 0 by 2^64 - 2^40. */
    const uint64_t shape2[2] = {1ull << 40, 2}, chunks2[2] = {1ull << 20, 2};
    CHECK_OK(zarr_array_builder_new(ZARR_DTYPE_UINT8, 2, shape2, &b));
    CHECK_OK(zarr_array_builder_set_zarr_format(b, 2));
    CHECK_OK(zarr_array_builder_set_chunk_shape(b, 2, chunks2));
    CHECK_OK(zarr_array_create(b, s, "o2", ZARR_MODE_W, &a));
    zarr_array_builder_free(b);
    const uint64_t count[2] = {UINT64_MAX - (1ull << 40) + 1, 2};
    CHECK_STATUS(zarr_array_append(a, 0, 2, count, ZARR_DTYPE_UINT8, ZARR_ORDER_C, &byte, 1), ZARR_ERR_OVERFLOW);
    uint64_t n = 0;
    CHECK_OK(zarr_array_nbytes(a, &n));
    CHECK_EQ(n, 1ull << 41);
    CHECK_OK(zarr_array_nchunks(a, &n));
    CHECK_EQ(n, 1ull << 20);
    /* A huge array reads and writes small regions without allocating it. */
    const uint64_t far[2] = {(1ull << 40) - 1, 0}, two[2] = {1, 2};
    const uint8_t pair[2] = {5, 6};
    CHECK_OK(zarr_array_write(a, 2, far, two, ZARR_DTYPE_UINT8, ZARR_ORDER_C, pair, 2));
    uint8_t back[2] = {0, 0};
    CHECK_OK(zarr_array_read(a, 2, far, two, ZARR_DTYPE_UINT8, ZARR_ORDER_C, back, 2));
    CHECK(back[0] == 5 && back[1] == 6);
    /* Resizing to a shape whose size overflows is refused; the shape stays. */
    const uint64_t huge2[2] = {1ull << 40, 1ull << 40};
    CHECK_STATUS(zarr_array_resize(a, 2, huge2), ZARR_ERR_INVALID_ARG);
    CHECK_ERROR_CONTAINS("shape");
    uint64_t now2[2];
    CHECK_OK(zarr_array_shape(a, 2, now2));
    CHECK(now2[0] == 1ull << 40 && now2[1] == 2);
    zarr_array_free(a);
    CHECK_OK(zarr_array_builder_new(ZARR_DTYPE_UINT8, 2, huge2, &b));
    CHECK_OK(zarr_array_builder_set_zarr_format(b, 2));
    CHECK_FAILS_NULL(zarr_array_create(b, s, "huge", ZARR_MODE_W, &a), ZARR_ERR_INVALID_ARG, a);
    zarr_array_builder_free(b);

    /* A zero extent anywhere means zero elements, whatever the other extents. */
    const uint64_t zero_first[3] = {0, 1ull << 40, 1ull << 40}, zero_last[3] = {1ull << 40, 1ull << 40, 0};
    const uint64_t ones[3] = {1, 1, 1};
    const uint64_t *zero_shapes[2] = {zero_first, zero_last};
    for (int i = 0; i < 2; i++) {
        CHECK_OK(zarr_array_builder_new(ZARR_DTYPE_UINT8, 3, zero_shapes[i], &b));
        CHECK_OK(zarr_array_builder_set_zarr_format(b, 2));
        CHECK_OK(zarr_array_builder_set_chunk_shape(b, 3, ones));
        CHECK_OK(zarr_array_create(b, s, "empty", ZARR_MODE_W, &a));
        zarr_array_builder_free(b);
        CHECK_OK(zarr_array_nbytes(a, &n));
        CHECK_EQ(n, 0);
        CHECK_OK(zarr_array_nchunks(a, &n));
        CHECK_EQ(n, 0);
        /* The whole (empty) region reads and writes without overflowing. */
        const uint64_t origin3[3] = {0, 0, 0};
        CHECK_OK(zarr_array_read(a, 3, origin3, zero_shapes[i], ZARR_DTYPE_UINT8, ZARR_ORDER_C, NULL, 0));
        CHECK_OK(zarr_array_write(a, 3, origin3, zero_shapes[i], ZARR_DTYPE_UINT8, ZARR_ORDER_F, NULL, 0));
        zarr_array_free(a);
    }
    zarr_store_free(s);
}

int main(void) {
    test_null_arg();
    test_invalid_arg();
    test_region_checks();
    test_not_found_and_exists();
    test_metadata();
    test_unsupported();
    test_codec_garbage();
    test_codec_wrong_size();
    test_oversized_chunk_and_foreign_keys();
    test_storage_io();
    test_read_only();
    test_invalid_key();
    test_overflow();
    return CHECK_DONE();
}
