/*
 * Queries: rank, shapes, types, fill value, order, format, sizes, chunk counts and the
 * metadata document, for arrays made by the builder and by zarr_array_create_json.
 */
#include "check.h"
#include <math.h>
#include <string.h>

static bool little_endian(void) {
    const uint16_t one = 1;
    unsigned char first;
    memcpy(&first, &one, 1);
    return first == 1;
}

/* The stored size of `key` (0 when missing). */
static size_t stored_size(const zarr_store_t *s, const char *key) {
    size_t needed = 0;
    zarr_status_t st = zarr_store_get(s, key, NULL, 0, &needed);
    if (st == ZARR_ERR_NOT_FOUND)
        return 0;
    return needed;
}

static void test_builder_array(void) {
    zarr_store_t *s = NULL;
    CHECK_OK(zarr_store_new_memory(&s));
    const uint64_t shape[2] = {100, 50}, chunks[2] = {30, 20};
    zarr_array_builder_t *b = NULL;
    CHECK_OK(zarr_array_builder_new(ZARR_DTYPE_FLOAT32, 2, shape, &b));
    CHECK_OK(zarr_array_builder_set_zarr_format(b, 2));
    CHECK_OK(zarr_array_builder_set_chunk_shape(b, 2, chunks));
    const float fill = 1.5f;
    CHECK_OK(zarr_array_builder_set_fill_value(b, ZARR_DTYPE_FLOAT32, &fill, sizeof fill));
    zarr_array_t *a = NULL;
    CHECK_OK(zarr_array_create(b, s, "grp/q", ZARR_MODE_W_MINUS, &a));
    zarr_array_builder_free(b);

    size_t rank = 0;
    CHECK_OK(zarr_array_rank(a, &rank));
    CHECK_EQ(rank, 2);
    uint64_t got[2] = {0, 0};
    CHECK_OK(zarr_array_shape(a, 2, got));
    CHECK(got[0] == 100 && got[1] == 50);
    CHECK_OK(zarr_array_chunk_shape(a, 2, got));
    CHECK(got[0] == 30 && got[1] == 20);
    zarr_dtype_t dt = 0;
    CHECK_OK(zarr_array_dtype(a, &dt));
    CHECK_EQ(dt, ZARR_DTYPE_FLOAT32);
    char name[16];
    size_t needed = 0;
    CHECK_OK(zarr_array_dtype_name(a, name, sizeof name, &needed));
    CHECK_STR(name, little_endian() ? "<f4" : ">f4");
    CHECK_EQ(needed, 4);
    size_t item = 0;
    CHECK_OK(zarr_array_item_size(a, &item));
    CHECK_EQ(item, 4);
    float fv = 0;
    bool is_null = true;
    CHECK_OK(zarr_array_fill_value(a, &fv, sizeof fv, &is_null));
    CHECK(fv == 1.5f);
    CHECK(is_null == false);
    char json[64];
    CHECK_OK(zarr_array_fill_value_json(a, json, sizeof json, &needed));
    CHECK_STR(json, "1.5");
    CHECK_EQ(needed, 4);
    zarr_order_t order = -1;
    CHECK_OK(zarr_array_order(a, &order));
    CHECK_EQ(order, ZARR_ORDER_C);
    int32_t format = 0;
    CHECK_OK(zarr_array_zarr_format(a, &format));
    CHECK_EQ(format, 2);
    uint64_t n = 0;
    CHECK_OK(zarr_array_nbytes(a, &n));
    CHECK_EQ(n, 100 * 50 * 4);
    CHECK_OK(zarr_array_nchunks(a, &n));
    CHECK_EQ(n, 4 * 3);
    CHECK_OK(zarr_array_nchunks_initialized(a, &n));
    CHECK_EQ(n, 0);

    /* Bytes stored: the metadata only, then growing by each chunk written. */
    uint64_t stored = 0;
    CHECK_OK(zarr_array_nbytes_stored(a, &stored));
    CHECK(stored > 0);
    CHECK_EQ(stored, stored_size(s, "grp/q/.zarray"));
    float block[30 * 20];
    for (int i = 0; i < 600; i++)
        block[i] = (float)i;
    const uint64_t start[2] = {0, 0};
    CHECK_OK(zarr_array_write(a, 2, start, chunks, ZARR_DTYPE_FLOAT32, ZARR_ORDER_C, block, sizeof block));
    uint64_t stored2 = 0;
    CHECK_OK(zarr_array_nbytes_stored(a, &stored2));
    CHECK(stored2 > stored);
    CHECK_EQ(stored2, stored + stored_size(s, "grp/q/0.0"));
    CHECK_OK(zarr_array_nchunks_initialized(a, &n));
    CHECK_EQ(n, 1);
    /* Attributes count too. */
    CHECK_OK(zarr_array_attr_set(a, "k", "\"v\""));
    uint64_t stored3 = 0;
    CHECK_OK(zarr_array_nbytes_stored(a, &stored3));
    CHECK_EQ(stored3, stored2 + stored_size(s, "grp/q/.zattrs"));
    /* Keys of other nodes do not. */
    CHECK_OK(zarr_store_set(s, "grp/qq/x", "12345", 5));
    CHECK_OK(zarr_store_set(s, "grp/other", "12345", 5));
    CHECK_OK(zarr_array_nbytes_stored(a, &n));
    CHECK_EQ(n, stored3);
    /* The whole array written: every chunk stored. */
    float *all = (float *)malloc(sizeof(float) * 5000);
    for (int i = 0; i < 5000; i++)
        all[i] = (float)(i % 17);
    CHECK_OK(zarr_array_write(a, 2, start, shape, ZARR_DTYPE_FLOAT32, ZARR_ORDER_C, all, sizeof(float) * 5000));
    free(all);
    CHECK_OK(zarr_array_nchunks_initialized(a, &n));
    CHECK_EQ(n, 12);

    /* The metadata document, as stored. */
    char meta[2048];
    CHECK_OK(zarr_array_metadata_json(a, meta, sizeof meta, &needed));
    CHECK_EQ(needed, strlen(meta) + 1);
    CHECK_CONTAINS(meta, "\"dimension_separator\": \".\"");
    CHECK_CONTAINS(meta, "\"zarr_format\": 2");
    CHECK_CONTAINS(meta, "\"fill_value\": 1.5");
    CHECK_CONTAINS(meta, "\"order\": \"C\"");
    CHECK_CONTAINS(meta, "\"filters\": null");
    CHECK_CONTAINS(meta, little_endian() ? "\"dtype\": \"<f4\"" : "\"dtype\": \">f4\"");
    CHECK_CONTAINS(meta, "\"cname\": \"zstd\""); /* the default compressor: blosc zstd */
    char raw[2048];
    size_t raw_len = 0;
    CHECK_OK(zarr_store_get(s, "grp/q/.zarray", raw, sizeof raw - 1, &raw_len));
    raw[raw_len] = '\0';
    CHECK_STR(meta, raw);
    /* The parent group was created. */
    bool exists = false;
    CHECK_OK(zarr_store_contains(s, "grp/.zgroup", &exists));
    CHECK(exists);
    CHECK_OK(zarr_store_contains(s, ".zgroup", &exists));
    CHECK(exists);

    /* A read-only handle answers the same. */
    zarr_array_t *r = NULL;
    CHECK_OK(zarr_array_open(s, "/grp//q/", ZARR_MODE_R, &r)); /* paths are normalised */
    CHECK_OK(zarr_array_nchunks_initialized(r, &n));
    CHECK_EQ(n, 12);
    CHECK_OK(zarr_array_chunk_shape(r, 2, got));
    CHECK(got[0] == 30 && got[1] == 20);
    zarr_array_free(r);
    zarr_array_free(a);
    zarr_store_free(s);
}

static void test_null_fill_and_f_order(void) {
    zarr_store_t *s = NULL;
    CHECK_OK(zarr_store_new_memory(&s));
    const uint64_t shape[3] = {3, 4, 5};
    zarr_array_builder_t *b = NULL;
    CHECK_OK(zarr_array_builder_new(ZARR_DTYPE_UINT16, 3, shape, &b));
    CHECK_OK(zarr_array_builder_set_zarr_format(b, 2));
    CHECK_OK(zarr_array_builder_set_fill_value_json(b, "null"));
    CHECK_OK(zarr_array_builder_set_order(b, ZARR_ORDER_F));
    CHECK_OK(zarr_array_builder_set_dtype_name(b, ">u2"));
    zarr_array_t *a = NULL;
    CHECK_OK(zarr_array_create(b, s, "", ZARR_MODE_W, &a)); /* at the root */
    zarr_array_builder_free(b);
    uint16_t fv = 0xffff;
    bool is_null = false;
    CHECK_OK(zarr_array_fill_value(a, &fv, sizeof fv, &is_null));
    CHECK(is_null == true);
    CHECK_EQ(fv, 0);
    char json[16];
    CHECK_OK(zarr_array_fill_value_json(a, json, sizeof json, NULL));
    CHECK_STR(json, "null");
    zarr_order_t order = -1;
    CHECK_OK(zarr_array_order(a, &order));
    CHECK_EQ(order, ZARR_ORDER_F);
    size_t perm[3] = {9, 9, 9};
    CHECK_OK(zarr_array_chunk_permutation(a, 3, perm));
    CHECK(perm[0] == 2 && perm[1] == 1 && perm[2] == 0);
    CHECK_STATUS(zarr_array_chunk_permutation(a, 2, perm), ZARR_ERR_RANK_MISMATCH);
    CHECK_STATUS(zarr_array_chunk_permutation(a, 3, NULL), ZARR_ERR_NULL_ARG);
    char name[8];
    CHECK_OK(zarr_array_dtype_name(a, name, sizeof name, NULL));
    CHECK_STR(name, ">u2");
    /* Default chunks for a small array: the whole array. */
    uint64_t chunks[3];
    CHECK_OK(zarr_array_chunk_shape(a, 3, chunks));
    CHECK(chunks[0] == 3 && chunks[1] == 4 && chunks[2] == 5);
    uint64_t n = 0;
    CHECK_OK(zarr_array_nchunks(a, &n));
    CHECK_EQ(n, 1);
    CHECK_OK(zarr_array_nbytes(a, &n));
    CHECK_EQ(n, 120);
    bool exists = false;
    CHECK_OK(zarr_store_contains(s, ".zarray", &exists));
    CHECK(exists);
    zarr_array_free(a);
    zarr_store_free(s);
}

/* Any chunk permutation from the builder: written as a v3 transpose, given back by
   zarr_array_chunk_permutation, data exact; v2 refuses what it cannot hold. */
static void test_builder_chunk_permutation(void) {
    zarr_store_t *s = NULL;
    CHECK_OK(zarr_store_new_memory(&s));
    const uint64_t shape[3] = {4, 3, 2}, chunks[3] = {2, 3, 2};
    const size_t perm[3] = {1, 2, 0}, not_perm[3] = {0, 0, 1};
    zarr_array_builder_t *b = NULL;
    CHECK_OK(zarr_array_builder_new(ZARR_DTYPE_INT32, 3, shape, &b));
    CHECK_OK(zarr_array_builder_set_zarr_format(b, 3));
    CHECK_OK(zarr_array_builder_set_chunk_shape(b, 3, chunks));
    CHECK_OK(zarr_array_builder_set_compressor_json(b, "null"));
    CHECK_OK(zarr_array_builder_set_chunk_permutation(b, 3, perm));
    CHECK_STATUS(zarr_array_builder_set_chunk_permutation(b, 3, NULL), ZARR_ERR_NULL_ARG);
    zarr_array_t *a = NULL;
    CHECK_OK(zarr_array_create(b, s, "t", ZARR_MODE_W, &a));
    char json[2048];
    CHECK_OK(zarr_array_metadata_json(a, json, sizeof json, NULL));
    CHECK(strstr(json, "\"transpose\"") != NULL);
    size_t got[3] = {9, 9, 9};
    CHECK_OK(zarr_array_chunk_permutation(a, 3, got));
    CHECK(got[0] == 1 && got[1] == 2 && got[2] == 0);
    int32_t data[24], back[24];
    for (int i = 0; i < 24; i++) data[i] = i * 11 - 100;
    const uint64_t start[3] = {0, 0, 0};
    CHECK_OK(zarr_array_write(a, 3, start, shape, ZARR_DTYPE_INT32, ZARR_ORDER_C, data, sizeof data));
    CHECK_OK(zarr_array_read(a, 3, start, shape, ZARR_DTYPE_INT32, ZARR_ORDER_C, back, sizeof back));
    CHECK(memcmp(data, back, sizeof data) == 0);
    /* The first chunk as stored: items in the permuted dimension order (1, 2, 0). */
    uint8_t stored[48];
    size_t len = 0;
    CHECK_OK(zarr_store_get(s, "t/c/0/0/0", stored, sizeof stored, &len));
    CHECK_EQ(len, 48);
    int32_t first[12];
    memcpy(first, stored, sizeof first);
    if (little_endian()) {
        CHECK_EQ(first[0], data[0]); /* (0, 0, 0) */
        CHECK_EQ(first[1], data[6]); /* (1, 0, 0): dimension 0 varies fastest */
        CHECK_EQ(first[2], data[1]); /* (0, 0, 1) */
    }
    zarr_array_free(a);
    /* A list that is not a permutation, and a permutation v2 cannot hold. */
    CHECK_OK(zarr_array_builder_set_chunk_permutation(b, 3, not_perm));
    CHECK_STATUS(zarr_array_create(b, s, "bad", ZARR_MODE_W, &a), ZARR_ERR_INVALID_ARG);
    CHECK(a == NULL);
    CHECK_OK(zarr_array_builder_set_chunk_permutation(b, 3, perm));
    CHECK_OK(zarr_array_builder_set_zarr_format(b, 2));
    CHECK_STATUS(zarr_array_create(b, s, "v2", ZARR_MODE_W, &a), ZARR_ERR_UNSUPPORTED);
    /* set_order replaces the permutation: F order is a v2 order. */
    CHECK_OK(zarr_array_builder_set_order(b, ZARR_ORDER_F));
    CHECK_OK(zarr_array_create(b, s, "v2", ZARR_MODE_W, &a));
    zarr_array_free(a);
    zarr_array_builder_free(b);
    zarr_store_free(s);
}

/* Fill values of each kind as metadata JSON. */
static void test_fill_json_forms(void) {
    static const struct {
        zarr_dtype_t dtype;
        const char *in;
        const char *out;
    } cases[] = {
        {ZARR_DTYPE_INT16, "-5", "-5"},
        {ZARR_DTYPE_UINT64, "18446744073709551615", "18446744073709551615"},
        {ZARR_DTYPE_INT64, "-9223372036854775808", "-9223372036854775808"},
        {ZARR_DTYPE_BOOL, "true", "true"},
        {ZARR_DTYPE_FLOAT64, "\"-Infinity\"", "\"-Infinity\""},
        {ZARR_DTYPE_FLOAT32, "\"Infinity\"", "\"Infinity\""},
        {ZARR_DTYPE_FLOAT16, "0.5", "0.5"},
        {ZARR_DTYPE_COMPLEX128, "[1.0, \"NaN\"]", "[1.0,\"NaN\"]"},
        {ZARR_DTYPE_INT32, "7.0", "7"},
        {ZARR_DTYPE_UINT8, "255", "255"},
    };
    zarr_store_t *s = NULL;
    CHECK_OK(zarr_store_new_memory(&s));
    const uint64_t shape[1] = {4};
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        zarr_array_builder_t *b = NULL;
        CHECK_OK(zarr_array_builder_new(cases[i].dtype, 1, shape, &b));
        CHECK_OK(zarr_array_builder_set_zarr_format(b, 2));
        CHECK_OK(zarr_array_builder_set_fill_value_json(b, cases[i].in));
        zarr_array_t *a = NULL;
        CHECK_OK(zarr_array_create(b, s, "f", ZARR_MODE_W, &a));
        char json[64];
        size_t needed = 0;
        CHECK_OK(zarr_array_fill_value_json(a, json, sizeof json, &needed));
        CHECK_STR(json, cases[i].out);
        CHECK_EQ(needed, strlen(cases[i].out) + 1);
        zarr_array_free(a);
        zarr_array_builder_free(b);
    }
    /* A binary fill value, read back as bytes. */
    zarr_array_builder_t *b = NULL;
    CHECK_OK(zarr_array_builder_new(ZARR_DTYPE_COMPLEX64, 1, shape, &b));
    CHECK_OK(zarr_array_builder_set_zarr_format(b, 2));
    const float c[2] = {2.0f, -0.25f};
    CHECK_OK(zarr_array_builder_set_fill_value(b, ZARR_DTYPE_COMPLEX64, c, sizeof c));
    zarr_array_t *a = NULL;
    CHECK_OK(zarr_array_create(b, s, "c", ZARR_MODE_W, &a));
    float back[2] = {0, 0};
    bool is_null = true;
    CHECK_OK(zarr_array_fill_value(a, back, sizeof back, &is_null));
    CHECK(back[0] == 2.0f && back[1] == -0.25f && !is_null);
    char json[64];
    CHECK_OK(zarr_array_fill_value_json(a, json, sizeof json, NULL));
    CHECK_STR(json, "[2.0,-0.25]");
    zarr_array_free(a);
    zarr_array_builder_free(b);
    zarr_store_free(s);
}

/* An array from a complete .zarray document. */
static void test_create_json(void) {
    zarr_store_t *s = NULL;
    CHECK_OK(zarr_store_new_memory(&s));
    const char *doc =
        "{\"zarr_format\": 2, \"shape\": [10, 20, 30], \"chunks\": [5, 7, 30],"
        " \"dtype\": \">i8\", \"compressor\": {\"id\": \"zstd\", \"level\": 1},"
        " \"fill_value\": 42, \"order\": \"F\", \"filters\": [],"
        " \"dimension_separator\": \"/\", \"extra\": {\"ignored\": true}}";
    zarr_array_t *a = NULL;
    CHECK_OK(zarr_array_create_json(s, "j", doc, ZARR_MODE_W_MINUS, &a));
    size_t rank = 0;
    CHECK_OK(zarr_array_rank(a, &rank));
    CHECK_EQ(rank, 3);
    uint64_t v[3];
    CHECK_OK(zarr_array_shape(a, 3, v));
    CHECK(v[0] == 10 && v[1] == 20 && v[2] == 30);
    CHECK_OK(zarr_array_chunk_shape(a, 3, v));
    CHECK(v[0] == 5 && v[1] == 7 && v[2] == 30);
    zarr_dtype_t dt = 0;
    CHECK_OK(zarr_array_dtype(a, &dt));
    CHECK_EQ(dt, ZARR_DTYPE_INT64);
    char text[2048];
    CHECK_OK(zarr_array_dtype_name(a, text, sizeof text, NULL));
    CHECK_STR(text, ">i8");
    int64_t fill = 0;
    bool is_null = true;
    CHECK_OK(zarr_array_fill_value(a, &fill, sizeof fill, &is_null));
    CHECK_EQ(fill, 42);
    zarr_order_t order = -1;
    CHECK_OK(zarr_array_order(a, &order));
    CHECK_EQ(order, ZARR_ORDER_F);
    uint64_t n = 0;
    CHECK_OK(zarr_array_nchunks(a, &n));
    CHECK_EQ(n, 2 * 3 * 1);
    CHECK_OK(zarr_array_nbytes(a, &n));
    CHECK_EQ(n, 6000 * 8);
    CHECK_OK(zarr_array_metadata_json(a, text, sizeof text, NULL));
    CHECK_CONTAINS(text, "\"dimension_separator\": \"/\"");
    CHECK_CONTAINS(text, "\"id\": \"zstd\"");
    CHECK_CONTAINS(text, "\"fill_value\": 42");
    CHECK(strstr(text, "extra") == NULL); /* unknown keys are not kept */
    /* Writes use the document's nested keys. */
    const int64_t one = 1;
    const uint64_t at[3] = {9, 19, 29}, cnt[3] = {1, 1, 1};
    CHECK_OK(zarr_array_write(a, 3, at, cnt, ZARR_DTYPE_INT64, ZARR_ORDER_C, &one, sizeof one));
    bool exists = false;
    CHECK_OK(zarr_store_contains(s, "j/1/2/0", &exists));
    CHECK(exists);
    zarr_array_free(a);
    /* Mode A on an existing array opens it (the document is not rewritten). */
    CHECK_OK(zarr_array_create_json(s, "j", doc, ZARR_MODE_A, &a));
    int64_t back = 0;
    CHECK_OK(zarr_array_read(a, 3, at, cnt, ZARR_DTYPE_INT64, ZARR_ORDER_C, &back, sizeof back));
    CHECK_EQ(back, 1);
    zarr_array_free(a);
    zarr_store_free(s);
}

/* Rank 0 queries. */
static void test_scalar_queries(void) {
    zarr_store_t *s = NULL;
    CHECK_OK(zarr_store_new_memory(&s));
    zarr_array_builder_t *b = NULL;
    CHECK_OK(zarr_array_builder_new(ZARR_DTYPE_COMPLEX128, 0, NULL, &b));
    CHECK_OK(zarr_array_builder_set_zarr_format(b, 2));
    zarr_array_t *a = NULL;
    CHECK_OK(zarr_array_create(b, s, "s", ZARR_MODE_W, &a));
    zarr_array_builder_free(b);
    size_t rank = 9;
    CHECK_OK(zarr_array_rank(a, &rank));
    CHECK_EQ(rank, 0);
    CHECK_OK(zarr_array_shape(a, 0, NULL));
    CHECK_OK(zarr_array_chunk_shape(a, 0, NULL));
    uint64_t n = 0;
    CHECK_OK(zarr_array_nbytes(a, &n));
    CHECK_EQ(n, 16);
    CHECK_OK(zarr_array_nchunks(a, &n));
    CHECK_EQ(n, 1);
    char meta[1024];
    CHECK_OK(zarr_array_metadata_json(a, meta, sizeof meta, NULL));
    CHECK_CONTAINS(meta, "\"shape\": []");
    CHECK_CONTAINS(meta, "\"chunks\": []");
    zarr_array_free(a);
    zarr_store_free(s);
}

/* The CF missing value by one call: what each format stores, the query, the refusals
 * (naming the array, writing nothing), and the v2 defaults (NaN floats, null integers). */
static void test_missing_value(void) {
    zarr_store_t *s = NULL;
    CHECK_OK(zarr_store_new_memory(&s));
    const uint64_t shape[1] = {4};
    char doc[1024];
    bool is_set = false;
    double value = 0;
    for (int32_t format = 2; format <= 3; format++) {
        zarr_array_builder_t *b = NULL;
        CHECK_OK(zarr_array_builder_new(ZARR_DTYPE_FLOAT32, 1, shape, &b));
        CHECK_OK(zarr_array_builder_set_zarr_format(b, format));
        CHECK_OK(zarr_array_builder_set_missing_value(b, -9999.0));
        zarr_array_t *a = NULL;
        CHECK_OK(zarr_array_create(b, s, format == 2 ? "t2" : "t3", ZARR_MODE_W, &a));
        CHECK_OK(zarr_array_missing_value(a, &is_set, &value));
        CHECK(is_set && value == -9999.0);
        float cells[4] = {0, 0, 0, 0};
        CHECK_OK(zarr_array_read(a, 1, (uint64_t[]){0}, shape, ZARR_DTYPE_FLOAT32, ZARR_ORDER_C,
                                 cells, sizeof cells));
        CHECK(cells[0] == -9999.0f && cells[3] == -9999.0f);
        CHECK_OK(zarr_array_metadata_json(a, doc, sizeof doc, NULL));
        if (format == 3)
            CHECK_CONTAINS(doc, "\"_FillValue\": \"AAAAAICHw8A=\"");
        else {
            CHECK_CONTAINS(doc, "\"fill_value\": -9999.0");
            /* And the attribute NCZarr reads, its type recorded. */
            CHECK_OK(zarr_array_attr_get(a, "_FillValue", doc, sizeof doc, NULL));
            CHECK(strcmp(doc, "-9999.0") == 0);
            CHECK_OK(zarr_array_attr_get(a, "_NCZARR_ATTR", doc, sizeof doc, NULL));
            CHECK_CONTAINS(doc, "\"_FillValue\":\"<f4\"");
        }
        /* Beyond float32's range: refused, naming the array, and the value stays. */
        CHECK_STATUS(zarr_array_set_missing_value(a, 1e39), ZARR_ERR_INVALID_ARG);
        CHECK_ERROR_CONTAINS(format == 2 ? "\"t2\"" : "\"t3\"");
        CHECK_ERROR_CONTAINS("beyond the range of float32");
        CHECK_OK(zarr_array_missing_value(a, &is_set, &value));
        CHECK(is_set && value == -9999.0);
        /* Not exactly a float32: the nearest one is stored and given back. */
        CHECK_OK(zarr_array_set_missing_value(a, 0.1));
        CHECK_OK(zarr_array_missing_value(a, &is_set, &value));
        CHECK(is_set && value == (double)0.1f);
        zarr_array_free(a);
        zarr_array_builder_free(b);
        /* CMIP's 1e20, as a double, at creation: the float32 1e20 stored (unwritten cells read
           as it) and given back. */
        CHECK_OK(zarr_array_builder_new(ZARR_DTYPE_FLOAT32, 1, shape, &b));
        CHECK_OK(zarr_array_builder_set_zarr_format(b, format));
        CHECK_OK(zarr_array_builder_set_missing_value(b, 1e20));
        CHECK_OK(zarr_array_create(b, s, "cmip", ZARR_MODE_W, &a));
        CHECK_OK(zarr_array_missing_value(a, &is_set, &value));
        CHECK(is_set && value == (double)1e20f && value != 1e20);
        CHECK_OK(zarr_array_read(a, 1, (uint64_t[]){0}, shape, ZARR_DTYPE_FLOAT32, ZARR_ORDER_C,
                                 cells, sizeof cells));
        CHECK(memcmp(&cells[0], &(float){1e20f}, sizeof(float)) == 0 && cells[3] == 1e20f);
        zarr_array_free(a);
        zarr_array_builder_free(b);
    }
    /* Values the type cannot hold: refused at creation, naming the array, nothing created. */
    const struct {
        zarr_dtype_t dtype;
        double value;
    } bad[] = {{ZARR_DTYPE_UINT8, 300}, {ZARR_DTYPE_FLOAT32, 1e40}, {ZARR_DTYPE_INT32, 2.5}};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        for (int32_t format = 2; format <= 3; format++) {
            zarr_array_builder_t *b = NULL;
            CHECK_OK(zarr_array_builder_new(bad[i].dtype, 1, shape, &b));
            CHECK_OK(zarr_array_builder_set_zarr_format(b, format));
            CHECK_OK(zarr_array_builder_set_missing_value(b, bad[i].value));
            zarr_array_t *a = NULL;
            CHECK_STATUS(zarr_array_create(b, s, "bad", ZARR_MODE_W, &a), ZARR_ERR_INVALID_ARG);
            CHECK_ERROR_CONTAINS("\"bad\"");
            bool exists = true;
            CHECK_OK(zarr_store_contains(s, format == 2 ? "bad/.zarray" : "bad/zarr.json",
                                         &exists));
            CHECK(!exists);
            zarr_array_builder_free(b);
        }
    }
    /* NaN for an integer array: refused at creation, nothing created. */
    zarr_array_builder_t *b = NULL;
    CHECK_OK(zarr_array_builder_new(ZARR_DTYPE_INT16, 1, shape, &b));
    CHECK_OK(zarr_array_builder_set_missing_value(b, NAN));
    zarr_array_t *a = NULL;
    CHECK_STATUS(zarr_array_create(b, s, "n", ZARR_MODE_W, &a), ZARR_ERR_INVALID_ARG);
    CHECK_ERROR_CONTAINS("\"n\"");
    bool exists = true;
    CHECK_OK(zarr_store_contains(s, "n/zarr.json", &exists));
    CHECK(!exists);
    zarr_array_builder_free(b);
    /* v2 defaults: no missing value on an integer array. */
    CHECK_OK(zarr_array_builder_new(ZARR_DTYPE_INT16, 1, shape, &b));
    CHECK_OK(zarr_array_builder_set_zarr_format(b, 2));
    CHECK_OK(zarr_array_create(b, s, "i", ZARR_MODE_W, &a));
    CHECK_OK(zarr_array_missing_value(a, &is_set, &value));
    CHECK(!is_set && value == 0);
    /* Setting a _FillValue attribute that is no int16 is refused, naming the array and the
     * attribute, and nothing is written. */
    const char *bad_fills[] = {"\"zz\"", "40000", "2.5"};
    for (size_t i = 0; i < sizeof bad_fills / sizeof bad_fills[0]; i++) {
        CHECK_STATUS(zarr_array_attr_set(a, "_FillValue", bad_fills[i]), ZARR_ERR_INVALID_ARG);
        CHECK_ERROR_CONTAINS("\"i\"");
        CHECK_ERROR_CONTAINS("_FillValue");
        CHECK_STATUS(zarr_array_attr_get(a, "_FillValue", doc, sizeof doc, NULL),
                     ZARR_ERR_NOT_FOUND);
    }
    /* One a peer wrote: the query fails, and the outputs say "none". */
    const char *peer = "{\"_FillValue\": \"zz\"}";
    CHECK_OK(zarr_store_set(s, "i/.zattrs", peer, strlen(peer)));
    is_set = true;
    value = 5;
    CHECK_STATUS(zarr_array_missing_value(a, &is_set, &value), ZARR_ERR_METADATA);
    CHECK(!is_set && value == 0);
    zarr_array_free(a);
    zarr_array_builder_free(b);
    zarr_store_free(s);
}

/* Which chunks (shards, when sharded) a region touches, each one's region, and a handle
 * that sees another handle's resize after zarr_array_refresh. */
static void test_region_chunks_and_refresh(void) {
    zarr_store_t *s = NULL;
    CHECK_OK(zarr_store_new_memory(&s));
    uint64_t shape[2] = {100, 50}, inner[2] = {5, 5}, shard[2] = {20, 25};
    zarr_array_builder_t *b = NULL;
    CHECK_OK(zarr_array_builder_new(ZARR_DTYPE_INT16, 2, shape, &b));
    CHECK_OK(zarr_array_builder_set_zarr_format(b, 3));
    CHECK_OK(zarr_array_builder_set_chunk_shape(b, 2, inner));
    CHECK_OK(zarr_array_builder_set_shard_shape(b, 2, shard));
    zarr_array_t *a = NULL;
    CHECK_OK(zarr_array_create(b, s, "grid", ZARR_MODE_W, &a));
    zarr_array_builder_free(b);

    /* Rows 15..44, columns 20..29: shards (0..2) x (0..1), in C order. */
    uint64_t start[2] = {15, 20}, count[2] = {30, 10};
    size_t n = 99;
    CHECK_STATUS(zarr_array_region_chunks(a, 2, start, count, NULL, 0, &n),
                 ZARR_ERR_BUFFER_SIZE);
    CHECK_EQ(n, 6);
    uint64_t indices[12];
    CHECK_OK(zarr_array_region_chunks(a, 2, start, count, indices, 6, &n));
    const uint64_t want[12] = {0, 0, 0, 1, 1, 0, 1, 1, 2, 0, 2, 1};
    for (int i = 0; i < 12; i++) CHECK_EQ(indices[i], want[i]);
    uint64_t empty[2] = {0, 0};
    CHECK_OK(zarr_array_region_chunks(a, 2, start, empty, NULL, 0, &n));
    CHECK_EQ(n, 0);
    uint64_t past[2] = {90, 0}, big[2] = {11, 1};
    CHECK_STATUS(zarr_array_region_chunks(a, 2, past, big, indices, 6, &n),
                 ZARR_ERR_OUT_OF_BOUNDS);
    CHECK_STATUS(zarr_array_region_chunks(a, 3, start, count, indices, 6, &n),
                 ZARR_ERR_RANK_MISMATCH);

    /* The last shard of each row is clipped to the shape. */
    uint64_t last[2] = {4, 1}, first[2], extent[2];
    CHECK_OK(zarr_array_chunk_region(a, 2, last, first, extent));
    CHECK_EQ(first[0], 80);
    CHECK_EQ(first[1], 25);
    CHECK_EQ(extent[0], 20);
    CHECK_EQ(extent[1], 25);
    uint64_t outside[2] = {5, 0};
    CHECK_STATUS(zarr_array_chunk_region(a, 2, outside, first, extent), ZARR_ERR_OUT_OF_BOUNDS);

    /* Another handle grows the array; this one sees it once refreshed. */
    zarr_array_t *other = NULL;
    CHECK_OK(zarr_array_open(s, "grid", ZARR_MODE_R_PLUS, &other));
    uint64_t grown[2] = {130, 50};
    CHECK_OK(zarr_array_resize(other, 2, grown));
    uint64_t now[2];
    CHECK_OK(zarr_array_shape(a, 2, now));
    CHECK_EQ(now[0], 100);
    CHECK_OK(zarr_array_refresh(a));
    CHECK_OK(zarr_array_shape(a, 2, now));
    CHECK_EQ(now[0], 130);
    CHECK_OK(zarr_array_chunk_region(a, 2, outside, first, extent));
    CHECK_EQ(extent[0], 20);
    zarr_array_free(other);
    zarr_array_free(a);
    zarr_store_free(s);
}

int main(void) {
    test_region_chunks_and_refresh();
    test_builder_array();
    test_null_fill_and_f_order();
    test_builder_chunk_permutation();
    test_fill_json_forms();
    test_create_json();
    test_scalar_queries();
    test_missing_value();
    return CHECK_DONE();
}
