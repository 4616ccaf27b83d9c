/*
 * Data types beyond numbers from C: fixed-width strings and raw bytes moved as raw items,
 * structured records described field by field, and variable-length strings, bytes and
 * arrays through caller buffers and library-owned lists — with every error these calls add.
 */
#include "check.h"

static zarr_store_t *memory(void) {
    zarr_store_t *s = NULL;
    CHECK_OK(zarr_store_new_memory(&s));
    return s;
}

/* A 1-d array of `n` elements in chunks of `chunk` with the type `dtype_name`. */
static zarr_array_t *make(zarr_store_t *s, const char *dtype_name, int format, uint64_t n,
                          uint64_t chunk) {
    zarr_array_builder_t *b = NULL;
    zarr_array_t *a = NULL;
    CHECK_OK(zarr_array_builder_new(ZARR_DTYPE_RAW, 1, &n, &b));
    CHECK_OK(zarr_array_builder_set_dtype_name(b, dtype_name));
    CHECK_OK(zarr_array_builder_set_chunk_shape(b, 1, &chunk));
    CHECK_OK(zarr_array_builder_set_zarr_format(b, format));
    CHECK_OK(zarr_array_create(b, s, "a", ZARR_MODE_W, &a));
    zarr_array_builder_free(b);
    return a;
}

static void raw_items(void) {
    zarr_store_t *s = memory();
    const char *types[] = {"|S3", "<U2", "|V5", "r40"};
    const size_t sizes[] = {3, 8, 5, 5};
    for (int t = 0; t < 4; t++) {
        zarr_array_t *a = make(s, types[t], t == 3 ? 3 : 2, 4, 3);
        const uint64_t start = 0, count = 4;
        size_t item = 0;
        zarr_dtype_t dtype = 0;
        CHECK_OK(zarr_array_item_size(a, &item));
        CHECK(item == sizes[t]);
        CHECK_OK(zarr_array_dtype(a, &dtype));
        CHECK(dtype == ZARR_DTYPE_RAW);
        unsigned char data[64], back[64];
        for (size_t i = 0; i < 4 * item; i++) data[i] = (unsigned char)(i * 7 + 1);
        CHECK_OK(zarr_array_write(a, 1, &start, &count, ZARR_DTYPE_RAW, ZARR_ORDER_C, data, 4 * item));
        CHECK_OK(zarr_array_read(a, 1, &start, &count, ZARR_DTYPE_RAW, ZARR_ORDER_C, back, 4 * item));
        CHECK(memcmp(data, back, 4 * item) == 0);
        /* A numeric memory type, or a buffer not a whole number of items, is refused. */
        CHECK_STATUS(zarr_array_read(a, 1, &start, &count, ZARR_DTYPE_UINT8, ZARR_ORDER_C, back, 4 * item),
                     ZARR_ERR_DTYPE_MISMATCH);
        CHECK_STATUS(zarr_array_read(a, 1, &start, &count, ZARR_DTYPE_RAW, ZARR_ORDER_C, back, 4 * item - 1),
                     ZARR_ERR_BUFFER_SIZE);
        size_t nfields = 99;
        CHECK_OK(zarr_array_nfields(a, &nfields));
        CHECK(nfields == 0);
        zarr_array_free(a);
    }
    char name[64];
    zarr_dtype_t code = 0;
    CHECK_OK(zarr_dtype_from_name("|S7", &code));
    CHECK(code == ZARR_DTYPE_RAW);
    CHECK_OK(zarr_dtype_from_name("string", &code));
    CHECK(code == ZARR_DTYPE_STRING);
    CHECK(zarr_dtype_size(ZARR_DTYPE_RAW) == 0);
    CHECK_STR(zarr_dtype_name(ZARR_DTYPE_BYTES), "bytes");
    /* Bad type names. */
    zarr_array_builder_t *b = NULL;
    const uint64_t n = 4;
    CHECK_OK(zarr_array_builder_new(ZARR_DTYPE_RAW, 1, &n, &b));
    CHECK_STATUS(zarr_array_builder_set_dtype_name(b, "|S0"), ZARR_ERR_INVALID_ARG);
    CHECK_STATUS(zarr_array_builder_set_dtype_name(b, "|U4"), ZARR_ERR_INVALID_ARG);
    CHECK_STATUS(zarr_array_builder_set_dtype_name(b, "[[\"a\", \"<i4\"], [\"a\", \"<i2\"]]"),
                 ZARR_ERR_INVALID_ARG);
    CHECK_STATUS(zarr_array_builder_set_dtype_name(b, "{\"id\": \"vlen-nope\"}"), ZARR_ERR_CODEC_UNSUPPORTED);
    CHECK_STATUS(zarr_array_builder_set_fill_value_json(b, "\"not base64!\""), ZARR_OK);
    CHECK_OK(zarr_array_builder_set_dtype_name(b, "|S4"));
    zarr_array_t *a = NULL;
    CHECK_STATUS(zarr_array_create(b, s, "bad", ZARR_MODE_W, &a), ZARR_ERR_INVALID_ARG);
    CHECK(strstr(check_last_error(), "base64") != NULL);
    CHECK_OK(zarr_store_contains(s, "bad/.zarray", &(bool){false}));
    zarr_array_builder_free(b);
    (void)name;
    zarr_store_free(s);
}

static void structured(void) {
    zarr_store_t *s = memory();
    zarr_array_t *a =
        make(s, "[[\"id\", \"<i4\"], [\"pos\", \">f8\", [2, 3]], [\"tag\", [[\"c\", \"|S2\"]]]]", 2, 3, 2);
    size_t n = 0, item = 0;
    CHECK_OK(zarr_array_nfields(a, &n));
    CHECK(n == 3);
    CHECK_OK(zarr_array_item_size(a, &item));
    CHECK(item == 4 + 48 + 2);
    char text[64];
    size_t needed = 0, offset = 0, size = 0, ndim = 0;
    uint64_t shape[4] = {0};
    CHECK_OK(zarr_array_field_name(a, 1, text, sizeof text, &needed));
    CHECK_STR(text, "pos");
    CHECK_OK(zarr_array_field_dtype_name(a, 1, text, sizeof text, &needed));
    CHECK_STR(text, ">f8");
    CHECK_OK(zarr_array_field_layout(a, 1, &offset, &size, &ndim, shape, 4));
    CHECK(offset == 4 && size == 48 && ndim == 2 && shape[0] == 2 && shape[1] == 3);
    CHECK_OK(zarr_array_field_name(a, 2, text, sizeof text, &needed));
    CHECK_STR(text, "tag.c");
    CHECK_OK(zarr_array_field_layout(a, 2, &offset, &size, &ndim, shape, 4));
    CHECK(offset == 52 && size == 2 && ndim == 0);
    CHECK_STATUS(zarr_array_field_layout(a, 1, &offset, &size, &ndim, shape, 1), ZARR_ERR_BUFFER_SIZE);
    CHECK(ndim == 2);
    CHECK_STATUS(zarr_array_field_name(a, 3, text, sizeof text, &needed), ZARR_ERR_OUT_OF_BOUNDS);
    CHECK_STATUS(zarr_array_nfields(a, NULL), ZARR_ERR_NULL_ARG);
    CHECK_STATUS(zarr_array_dtype_name(a, text, 16, &needed), ZARR_ERR_BUFFER_SIZE);
    CHECK_OK(zarr_array_dtype_name(a, text, sizeof text, &needed));
    CHECK_STR(text, "[[\"id\",\"<i4\"],[\"pos\",\">f8\",[2,3]],[\"tag\",[[\"c\",\"|S2\"]]]]");
    /* Records move as raw bytes: write three, read them back. */
    unsigned char data[3 * 54], back[3 * 54];
    for (size_t i = 0; i < sizeof data; i++) data[i] = (unsigned char)(i ^ 0x5a);
    const uint64_t start = 0, count = 3;
    CHECK_OK(zarr_array_write(a, 1, &start, &count, ZARR_DTYPE_RAW, ZARR_ORDER_C, data, sizeof data));
    CHECK_OK(zarr_array_read(a, 1, &start, &count, ZARR_DTYPE_RAW, ZARR_ORDER_C, back, sizeof back));
    CHECK(memcmp(data, back, sizeof data) == 0);
    zarr_array_free(a);
    zarr_store_free(s);
}

/* Records with fields of both byte orders, read and written in native order. */
static void records_in_native_order(void) {
    zarr_store_t *s = memory();
    zarr_array_t *a = make(s, "[[\"b\", \">i4\"], [\"l\", \"<u2\"], [\"z\", \">c8\"], "
                              "[\"u\", \">U2\"], [\"in\", [[\"d\", \">f8\", [2]]]], [\"s\", \"|S3\"]]",
                           2, 2, 2);
    /* One record in native order: b, l, z (re, im), u (2 code units), in.d[2], s. */
    struct {
        int32_t b;
        uint16_t l;
        float z[2];
        uint32_t u[2];
        double d[2];
        char s[3];
    } native = {-123456, 0xBEEF, {1.5f, -2.25f}, {0x41, 0x1F600}, {3.0, -0.5}, {'a', 'b', 'c'}};
    size_t item = 0;
    CHECK_OK(zarr_array_item_size(a, &item));
    CHECK(item == 4 + 2 + 8 + 8 + 16 + 3);
    unsigned char rec[41], back[41], stored[41];
    memcpy(rec, &native.b, 4);
    memcpy(rec + 4, &native.l, 2);
    memcpy(rec + 6, native.z, 8);
    memcpy(rec + 14, native.u, 8);
    memcpy(rec + 22, native.d, 16);
    memcpy(rec + 38, native.s, 3);
    memcpy(stored, rec, sizeof rec);
    CHECK_OK(zarr_array_records_to_stored(a, stored, sizeof stored));
    /* Stored order, checked byte by byte: big-endian fields swapped, "<u2" and "|S3" kept. */
    const unsigned char b_be[4] = {0xFF, 0xFE, 0x1D, 0xC0}; /* -123456 */
    CHECK(memcmp(stored, b_be, 4) == 0);
    CHECK(memcmp(stored + 4, rec + 4, 2) == 0);
    const unsigned char re_be[4] = {0x3F, 0xC0, 0x00, 0x00}; /* 1.5f */
    CHECK(memcmp(stored + 6, re_be, 4) == 0);
    const unsigned char u1_be[4] = {0x00, 0x01, 0xF6, 0x00}; /* U+1F600 */
    CHECK(memcmp(stored + 18, u1_be, 4) == 0);
    const unsigned char d0_be[8] = {0x40, 0x08, 0, 0, 0, 0, 0, 0}; /* 3.0 */
    CHECK(memcmp(stored + 22, d0_be, 8) == 0);
    CHECK(memcmp(stored + 38, "abc", 3) == 0);
    /* Written in stored order, read raw, converted back: the native record again. */
    const uint64_t start = 1, count = 1;
    CHECK_OK(zarr_array_write(a, 1, &start, &count, ZARR_DTYPE_RAW, ZARR_ORDER_C, stored, sizeof stored));
    CHECK_OK(zarr_array_read(a, 1, &start, &count, ZARR_DTYPE_RAW, ZARR_ORDER_C, back, sizeof back));
    CHECK(memcmp(back, stored, sizeof back) == 0);
    CHECK_OK(zarr_array_records_to_native(a, back, sizeof back));
    CHECK(memcmp(back, rec, sizeof rec) == 0);
    /* Whole records only; arguments; other types are left alone. */
    CHECK_STATUS(zarr_array_records_to_native(a, back, sizeof back - 1), ZARR_ERR_BUFFER_SIZE);
    CHECK_STATUS(zarr_array_records_to_native(a, NULL, sizeof back), ZARR_ERR_NULL_ARG);
    CHECK_STATUS(zarr_array_records_to_native(NULL, back, sizeof back), ZARR_ERR_NULL_ARG);
    zarr_store_t *other = memory();
    zarr_array_t *numbers = make(other, ">i4", 2, 2, 2);
    int32_t values[2] = {1, 2};
    CHECK_OK(zarr_array_records_to_native(numbers, values, sizeof values));
    CHECK(values[0] == 1 && values[1] == 2);
    zarr_array_free(numbers);
    zarr_store_free(other);
    zarr_array_free(a);
    zarr_store_free(s);
}

static void strings(int format) {
    zarr_store_t *s = memory();
    zarr_array_t *a = make(s, "string", format, 5, 2);
    zarr_dtype_t dtype = 0;
    CHECK_OK(zarr_array_dtype(a, &dtype));
    CHECK(dtype == ZARR_DTYPE_STRING);
    char fill[8];
    bool is_null = true;
    CHECK_STATUS(zarr_array_fill_value(a, fill, 0, &is_null), ZARR_ERR_DTYPE_MISMATCH);
    CHECK_OK(zarr_array_fill_value_json(a, fill, sizeof fill, NULL));
    /* v2: null, as xarray writes (it masks a v2 ""); v3: "". */
    CHECK_STR(fill, format == 2 ? "null" : "\"\"");
    const char *words[5] = {"", "alpha", "h\xc3\xa9llo", "\xf0\x9f\x98\x80", "nul\0in"};
    const size_t lengths[5] = {0, 5, 6, 4, 6};
    const void *items[5];
    for (int i = 0; i < 5; i++) items[i] = words[i];
    const uint64_t start = 0, count = 5;
    CHECK_OK(zarr_array_write_vlen(a, 1, &start, &count, ZARR_ORDER_C, items, lengths));

    /* Sizes first, then caller buffers. */
    uint64_t offsets[6];
    size_t needed = 0;
    CHECK_STATUS(zarr_array_read_vlen(a, 1, &start, &count, ZARR_ORDER_C, offsets, 6, NULL, 0, &needed),
                 ZARR_ERR_BUFFER_SIZE);
    CHECK(needed == 21);
    char data[21];
    CHECK_OK(zarr_array_read_vlen(a, 1, &start, &count, ZARR_ORDER_C, offsets, 6, data, sizeof data, &needed));
    for (int i = 0; i < 5; i++) {
        CHECK(offsets[i + 1] - offsets[i] == lengths[i]);
        CHECK(memcmp(data + offsets[i], words[i], lengths[i]) == 0);
    }
    CHECK_STATUS(zarr_array_read_vlen(a, 1, &start, &count, ZARR_ORDER_C, offsets, 5, data, sizeof data, &needed),
                 ZARR_ERR_BUFFER_SIZE);
    /* The items a size query read are kept for the next call, but never past a change: a
       write between the two calls is seen. */
    CHECK_STATUS(zarr_array_read_vlen(a, 1, &start, &count, ZARR_ORDER_C, offsets, 6, NULL, 0, &needed),
                 ZARR_ERR_BUFFER_SIZE);
    const void *changed[1] = {"ALPHA"};
    const size_t changed_len[1] = {5};
    const uint64_t one = 1;
    CHECK_OK(zarr_array_write_vlen(a, 1, &one, &one, ZARR_ORDER_C, changed, changed_len));
    CHECK_OK(zarr_array_read_vlen(a, 1, &start, &count, ZARR_ORDER_C, offsets, 6, data, sizeof data, &needed));
    CHECK(memcmp(data + offsets[1], "ALPHA", 5) == 0);
    CHECK_OK(zarr_array_write_vlen(a, 1, &one, &one, ZARR_ORDER_C, (const void *[]){"alpha"}, changed_len));

    /* A library-owned list, items NUL-terminated. */
    zarr_vlen_list_t *list = NULL;
    CHECK_OK(zarr_array_read_vlen_list(a, 1, &start, &count, ZARR_ORDER_C, &list));
    CHECK(zarr_vlen_list_count(list) == 5);
    size_t len = 0;
    CHECK_STR((const char *)zarr_vlen_list_item(list, 1, &len), "alpha");
    CHECK(len == 5);
    CHECK(zarr_vlen_list_item(list, 4, &len) != NULL && len == 6);
    CHECK(zarr_vlen_list_item(list, 5, &len) == NULL);
    CHECK(zarr_vlen_list_count(NULL) == 0);
    zarr_vlen_list_free(list);
    zarr_vlen_list_free(NULL);

    /* NUL-terminated strings without lengths; a partial rewrite keeps the neighbours. */
    const void *two[2] = {"x", "yz"};
    const uint64_t mid = 1, pair = 2;
    CHECK_OK(zarr_array_write_vlen(a, 1, &mid, &pair, ZARR_ORDER_C, two, NULL));
    CHECK_OK(zarr_array_read_vlen_list(a, 1, &start, &count, ZARR_ORDER_C, &list));
    CHECK_STR((const char *)zarr_vlen_list_item(list, 0, NULL), "");
    CHECK_STR((const char *)zarr_vlen_list_item(list, 1, NULL), "x");
    CHECK_STR((const char *)zarr_vlen_list_item(list, 2, NULL), "yz");
    CHECK_STR((const char *)zarr_vlen_list_item(list, 3, NULL), "\xf0\x9f\x98\x80");
    zarr_vlen_list_free(list);

    /* Invalid UTF-8 is refused and nothing changes; NULL items and wrong calls too. */
    const void *bad[2] = {"ok", "\xff\xfe"};
    CHECK_STATUS(zarr_array_write_vlen(a, 1, &mid, &pair, ZARR_ORDER_C, bad, NULL), ZARR_ERR_INVALID_ARG);
    CHECK(strstr(check_last_error(), "item 1") != NULL);
    const void *nulls[2] = {"ok", NULL};
    CHECK_STATUS(zarr_array_write_vlen(a, 1, &mid, &pair, ZARR_ORDER_C, nulls, NULL), ZARR_ERR_NULL_ARG);
    CHECK_OK(zarr_array_read_vlen_list(a, 1, &mid, &pair, ZARR_ORDER_C, &list));
    CHECK_STR((const char *)zarr_vlen_list_item(list, 0, NULL), "x");
    zarr_vlen_list_free(list);
    char buf[8];
    CHECK_STATUS(zarr_array_read(a, 1, &start, &count, ZARR_DTYPE_UINT8, ZARR_ORDER_C, buf, 5),
                 ZARR_ERR_DTYPE_MISMATCH);
    CHECK_STATUS(zarr_array_read_vlen_list(a, 2, &start, &count, ZARR_ORDER_C, &list), ZARR_ERR_RANK_MISMATCH);
    CHECK(list == NULL);
    CHECK_STATUS(zarr_array_read_vlen_list(a, 1, &start, &count, 7, &list), ZARR_ERR_INVALID_ARG);
    CHECK_STATUS(zarr_array_write_vlen(a, 1, &start, &count, ZARR_ORDER_C, NULL, NULL), ZARR_ERR_NULL_ARG);
    const uint64_t past = 6;
    CHECK_STATUS(zarr_array_read_vlen_list(a, 1, &start, &past, ZARR_ORDER_C, &list), ZARR_ERR_OUT_OF_BOUNDS);

    /* Appending items grows the array; a rejected item leaves it as it was. */
    const void *more[2] = {"six", "s\xc3\xa9ven"};
    CHECK_OK(zarr_array_append_vlen(a, 0, 1, &pair, ZARR_ORDER_C, more, NULL));
    uint64_t grown = 0;
    CHECK_OK(zarr_array_shape(a, 1, &grown));
    CHECK(grown == 7);
    const uint64_t tail = 4, three = 3;
    CHECK_OK(zarr_array_read_vlen_list(a, 1, &tail, &three, ZARR_ORDER_C, &list));
    CHECK_STR((const char *)zarr_vlen_list_item(list, 0, NULL), "nul");
    CHECK_STR((const char *)zarr_vlen_list_item(list, 1, NULL), "six");
    CHECK_STR((const char *)zarr_vlen_list_item(list, 2, NULL), "s\xc3\xa9ven");
    zarr_vlen_list_free(list);
    CHECK_STATUS(zarr_array_append_vlen(a, 0, 1, &pair, ZARR_ORDER_C, bad, NULL), ZARR_ERR_INVALID_ARG);
    CHECK_OK(zarr_array_shape(a, 1, &grown));
    CHECK(grown == 7);
    CHECK_STATUS(zarr_array_append_vlen(a, 1, 1, &pair, ZARR_ORDER_C, more, NULL), ZARR_ERR_INVALID_ARG);
    CHECK_STATUS(zarr_array_append_vlen(a, 0, 2, &pair, ZARR_ORDER_C, more, NULL), ZARR_ERR_RANK_MISMATCH);
    CHECK_STATUS(zarr_array_append_vlen(a, 0, 1, &pair, ZARR_ORDER_C, NULL, NULL), ZARR_ERR_NULL_ARG);
    CHECK_STATUS(zarr_array_append_vlen(NULL, 0, 1, &pair, ZARR_ORDER_C, more, NULL), ZARR_ERR_NULL_ARG);

    /* A corrupt stored chunk: a length running past the end. */
    const unsigned char corrupt[] = {2, 0, 0, 0, 1, 0, 0, 0, 'a', 200, 0, 0, 0, 'b'};
    zarr_array_t *raw = NULL;
    zarr_array_builder_t *b = NULL;
    const uint64_t n2 = 2;
    CHECK_OK(zarr_array_builder_new(ZARR_DTYPE_STRING, 1, &n2, &b));
    CHECK_OK(zarr_array_builder_set_zarr_format(b, 2));
    CHECK_OK(zarr_array_builder_set_compressor_json(b, "null"));
    CHECK_OK(zarr_array_create(b, s, "raw", ZARR_MODE_W, &raw));
    CHECK_OK(zarr_store_set(s, "raw/0", corrupt, sizeof corrupt));
    CHECK_STATUS(zarr_array_read_vlen_list(raw, 1, &start, &n2, ZARR_ORDER_C, &list), ZARR_ERR_CODEC);
    CHECK(strstr(check_last_error(), "raw/0") != NULL);
    zarr_dtype_t item = 0;
    size_t item_size = 0;
    CHECK_OK(zarr_array_vlen_item_dtype(raw, &item, &item_size));
    CHECK(item == ZARR_DTYPE_STRING && item_size == 1);
    /* Fixed-size items have no item type of their own. */
    zarr_array_t *fixed = NULL;
    zarr_array_builder_free(b);
    CHECK_OK(zarr_array_builder_new(ZARR_DTYPE_INT16, 1, &n2, &b));
    CHECK_OK(zarr_array_create(b, s, "fixed", ZARR_MODE_W, &fixed));
    CHECK_STATUS(zarr_array_vlen_item_dtype(fixed, &item, NULL), ZARR_ERR_DTYPE_MISMATCH);
    CHECK(strstr(check_last_error(), "fixed") != NULL);
    zarr_array_free(fixed);
    zarr_array_builder_free(b);
    zarr_array_free(raw);
    zarr_array_free(a);
    zarr_store_free(s);
}

static void arrays_of_numbers(void) {
    zarr_store_t *s = memory();
    zarr_array_t *a = make(s, "{\"id\": \"vlen-array\", \"dtype\": \">i4\"}", 2, 2, 2);
    zarr_dtype_t dtype = 0;
    CHECK_OK(zarr_array_dtype(a, &dtype));
    CHECK(dtype == ZARR_DTYPE_BYTES);
    /* The items' own type: int32, given in native byte order although stored ">i4". */
    size_t item_size = 0;
    CHECK_OK(zarr_array_vlen_item_dtype(a, &dtype, &item_size));
    CHECK(dtype == ZARR_DTYPE_INT32 && item_size == 4);
    CHECK_OK(zarr_array_vlen_item_dtype(a, &dtype, NULL));
    CHECK_STATUS(zarr_array_vlen_item_dtype(a, NULL, NULL), ZARR_ERR_NULL_ARG);
    const int32_t first[3] = {1, -2, 300000};
    const void *items[2] = {first, first};
    const size_t lengths[2] = {sizeof first, 4};
    const uint64_t start = 0, count = 2;
    CHECK_OK(zarr_array_write_vlen(a, 1, &start, &count, ZARR_ORDER_C, items, lengths));
    zarr_vlen_list_t *list = NULL;
    CHECK_OK(zarr_array_read_vlen_list(a, 1, &start, &count, ZARR_ORDER_C, &list));
    size_t len = 0;
    const int32_t *got = zarr_vlen_list_item(list, 0, &len);
    CHECK(len == sizeof first && got[0] == 1 && got[1] == -2 && got[2] == 300000);
    zarr_vlen_list_free(list);
    const size_t odd[2] = {5, 4};
    CHECK_STATUS(zarr_array_write_vlen(a, 1, &start, &count, ZARR_ORDER_C, items, odd), ZARR_ERR_INVALID_ARG);
    zarr_array_free(a);
    zarr_store_free(s);
}

/* The extension types of Zarr v3: each has its own code and moves as its bits; bfloat16
 * also as float; int4 is sign-extended on read and range-checked on write; a NaN with a
 * payload is written and read back as hex bits. */
static void extension_types(void) {
    zarr_store_t *s = memory();
    zarr_dtype_t code = 0;
    CHECK_OK(zarr_dtype_from_name("float8_e4m3fn", &code));
    CHECK(code == ZARR_DTYPE_FLOAT8_E4M3FN);
    CHECK(zarr_dtype_size(ZARR_DTYPE_BFLOAT16) == 2);
    CHECK(zarr_dtype_size(ZARR_DTYPE_FLOAT4_E2M1FN) == 1);
    CHECK(strcmp(zarr_dtype_name(ZARR_DTYPE_UINT4), "uint4") == 0);

    zarr_array_t *a = make(s, "bfloat16", 3, 4, 4);
    zarr_dtype_t dtype = 0;
    CHECK_OK(zarr_array_dtype(a, &dtype));
    CHECK(dtype == ZARR_DTYPE_BFLOAT16);
    const uint64_t start = 0, count = 4;
    const float in[4] = {1.0f, -2.5f, 0.1f, 3.0f};
    CHECK_OK(zarr_array_write(a, 1, &start, &count, ZARR_DTYPE_FLOAT32, ZARR_ORDER_C, in, sizeof in));
    uint16_t bits[4] = {0};
    CHECK_OK(zarr_array_read(a, 1, &start, &count, ZARR_DTYPE_BFLOAT16, ZARR_ORDER_C, bits, sizeof bits));
    CHECK(bits[0] == 0x3f80 && bits[1] == 0xc020 && bits[2] == 0x3dcd && bits[3] == 0x4040);
    float out[4] = {0};
    CHECK_OK(zarr_array_read(a, 1, &start, &count, ZARR_DTYPE_FLOAT32, ZARR_ORDER_C, out, sizeof out));
    CHECK(out[0] == 1.0f && out[1] == -2.5f && out[2] == 0.10009765625f && out[3] == 3.0f);
    CHECK_STATUS(zarr_array_read(a, 1, &start, &count, ZARR_DTYPE_FLOAT64, ZARR_ORDER_C, out, sizeof out),
                 ZARR_ERR_DTYPE_MISMATCH);
    zarr_array_free(a);

    a = make(s, "int4", 3, 4, 4);
    int8_t nibbles[4] = {-8, 7, 0, -1};
    CHECK_OK(zarr_array_write(a, 1, &start, &count, ZARR_DTYPE_INT4, ZARR_ORDER_C, nibbles, sizeof nibbles));
    int8_t back[4] = {0};
    CHECK_OK(zarr_array_read(a, 1, &start, &count, ZARR_DTYPE_INT4, ZARR_ORDER_C, back, sizeof back));
    CHECK(memcmp(back, nibbles, sizeof back) == 0);
    nibbles[2] = 8;
    CHECK_STATUS(zarr_array_write(a, 1, &start, &count, ZARR_DTYPE_INT4, ZARR_ORDER_C, nibbles, sizeof nibbles),
                 ZARR_ERR_INVALID_ARG);
    CHECK_ERROR_CONTAINS("element 2");
    zarr_array_free(a);

    zarr_array_builder_t *b = NULL;
    const uint64_t n = 2;
    CHECK_OK(zarr_array_builder_new(ZARR_DTYPE_FLOAT32, 1, &n, &b));
    CHECK_OK(zarr_array_builder_set_fill_value_json(b, "\"0x7fc00001\""));
    CHECK_OK(zarr_array_builder_set_zarr_format(b, 3));
    CHECK_OK(zarr_array_create(b, s, "nan", ZARR_MODE_W, &a));
    char json[64];
    CHECK_OK(zarr_array_fill_value_json(a, json, sizeof json, NULL));
    CHECK(strcmp(json, "\"0x7fc00001\"") == 0);
    uint32_t fill_bits[2] = {0};
    CHECK_OK(zarr_array_read(a, 1, &start, &n, ZARR_DTYPE_FLOAT32, ZARR_ORDER_C, fill_bits, sizeof fill_bits));
    CHECK(fill_bits[0] == 0x7fc00001u && fill_bits[1] == 0x7fc00001u);
    zarr_array_free(a);
    CHECK_OK(zarr_array_builder_set_zarr_format(b, 2));
    CHECK_STATUS(zarr_array_create(b, s, "nan2", ZARR_MODE_W, &a), ZARR_ERR_INVALID_ARG);
    CHECK_ERROR_CONTAINS("payload");
    zarr_array_builder_free(b);
    zarr_store_free(s);
}

int main(void) {
    raw_items();
    structured();
    records_in_native_order();
    strings(2);
    strings(3);
    arrays_of_numbers();
    extension_types();
    return CHECK_DONE();
}
