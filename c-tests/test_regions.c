/*
 * Regions: reads and writes of sub-regions against a dense model of the array, for ranks
 * 0, 1, 2, 3 and 5, C and F buffers, C and F chunk order, both key separators, edge chunks,
 * zero-length dimensions, fill values (missing chunks, NaN, null, erasure), resize, append,
 * big-endian and datetime types, and every element type with every compressor.
 */
#include "check.h"

#include <math.h>

#define MAXRANK 8

static bool little_endian(void) {
    const uint16_t one = 1;
    unsigned char first;
    memcpy(&first, &one, 1);
    return first == 1;
}

static zarr_store_t *memory_store(void) {
    zarr_store_t *s = NULL;
    CHECK_OK(zarr_store_new_memory(&s));
    return s;
}

/* Settings of a test array; unset strings keep the builder's defaults. */
struct spec {
    zarr_dtype_t dtype;
    size_t ndim;
    const uint64_t *shape;
    const uint64_t *chunks;
    zarr_order_t chunk_order;
    const char *separator;
    const char *compressor;
    const char *fill_json;
    const char *dtype_name;
};

static zarr_array_t *create(zarr_store_t *s, const char *path, const struct spec *sp) {
    zarr_array_builder_t *b = NULL;
    CHECK_OK(zarr_array_builder_new(sp->dtype, sp->ndim, sp->shape, &b));
    CHECK_OK(zarr_array_builder_set_zarr_format(b, 2));
    if (sp->chunks)
        CHECK_OK(zarr_array_builder_set_chunk_shape(b, sp->ndim, sp->chunks));
    CHECK_OK(zarr_array_builder_set_order(b, sp->chunk_order));
    if (sp->separator)
        CHECK_OK(zarr_array_builder_set_dimension_separator(b, sp->separator));
    if (sp->compressor)
        CHECK_OK(zarr_array_builder_set_compressor_json(b, sp->compressor));
    if (sp->fill_json)
        CHECK_OK(zarr_array_builder_set_fill_value_json(b, sp->fill_json));
    if (sp->dtype_name)
        CHECK_OK(zarr_array_builder_set_dtype_name(b, sp->dtype_name));
    zarr_array_t *a = NULL;
    CHECK_OK(zarr_array_create(b, s, path, ZARR_MODE_W, &a));
    zarr_array_builder_free(b);
    if (a == NULL) {
        fprintf(stderr, "cannot create %s, stopping\n", path);
        exit(1);
    }
    return a;
}

/* ---- a dense model: the whole array in C order ---- */

struct model {
    size_t ndim;
    uint64_t shape[MAXRANK];
    size_t elem;
    unsigned char *data;
    size_t n;
};

static size_t product(size_t ndim, const uint64_t *v) {
    size_t n = 1;
    for (size_t d = 0; d < ndim; d++)
        n *= (size_t)v[d];
    return n;
}

static struct model model_new(size_t ndim, const uint64_t *shape, size_t elem,
                              const void *fill) {
    struct model m = {.ndim = ndim, .elem = elem};
    memcpy(m.shape, shape, ndim * sizeof(uint64_t));
    m.n = product(ndim, shape);
    m.data = (unsigned char *)malloc(m.n * elem + 1);
    for (size_t i = 0; i < m.n; i++)
        memcpy(m.data + i * elem, fill, elem);
    return m;
}

/* Offset (in elements) of `idx` in a dense array of `shape` in `order`. */
static size_t offset_of(size_t ndim, const uint64_t *shape, const uint64_t *idx,
                        zarr_order_t order) {
    size_t off = 0, stride = 1;
    for (size_t k = 0; k < ndim; k++) {
        size_t d = order == ZARR_ORDER_C ? ndim - 1 - k : k;
        off += (size_t)idx[d] * stride;
        stride *= (size_t)shape[d];
    }
    return off;
}

/* Copies between the model and a region buffer in `order`; `to_model` picks the direction. */
static void model_copy(struct model *m, const uint64_t *start, const uint64_t *count,
                       zarr_order_t order, unsigned char *buf, bool to_model) {
    size_t n = product(m->ndim, count);
    uint64_t idx[MAXRANK] = {0}, abs[MAXRANK];
    for (size_t i = 0; i < n; i++) {
        for (size_t d = 0; d < m->ndim; d++)
            abs[d] = start[d] + idx[d];
        unsigned char *model_at = m->data + offset_of(m->ndim, m->shape, abs, ZARR_ORDER_C) * m->elem;
        unsigned char *buf_at = buf + offset_of(m->ndim, count, idx, order) * m->elem;
        if (to_model)
            memcpy(model_at, buf_at, m->elem);
        else
            memcpy(buf_at, model_at, m->elem);
        /* next index, last dimension fastest */
        for (size_t k = m->ndim; k-- > 0;) {
            if (++idx[k] < count[k])
                break;
            idx[k] = 0;
        }
    }
}

/* Reads a region in `order` and compares it with the model. */
static void expect_region(const zarr_array_t *a, struct model *m, zarr_dtype_t dtype,
                          const uint64_t *start, const uint64_t *count, zarr_order_t order,
                          int line) {
    size_t bytes = product(m->ndim, count) * m->elem;
    unsigned char *got = (unsigned char *)malloc(bytes + 1);
    unsigned char *want = (unsigned char *)malloc(bytes + 1);
    memset(got, 0xa5, bytes);
    model_copy(m, start, count, order, want, false);
    zarr_status_t st = zarr_array_read(a, m->ndim, start, count, dtype, order, got, bytes);
    CHECK_OK(st);
    if (st != ZARR_OK || memcmp(got, want, bytes) != 0) {
        check_failed++;
        fprintf(stderr, "  region read at line %d (order %s) differs from the model\n", line,
                order == ZARR_ORDER_C ? "C" : "F");
    } else {
        check_passed++;
    }
    free(got);
    free(want);
}

/* Writes a region from a buffer in `order` and applies it to the model. */
static void write_region(const zarr_array_t *a, struct model *m, zarr_dtype_t dtype,
                         const uint64_t *start, const uint64_t *count, zarr_order_t order,
                         unsigned char *buf) {
    size_t bytes = product(m->ndim, count) * m->elem;
    CHECK_OK(zarr_array_write(a, m->ndim, start, count, dtype, order, buf, bytes));
    model_copy(m, start, count, order, buf, true);
}

static uint32_t rng_state = 12345;
static uint32_t rng(void) {
    rng_state = rng_state * 1103515245u + 12345u;
    return rng_state >> 8;
}

/* A random region of the array (possibly empty along a dimension when `allow_empty`). */
static void random_region(const struct model *m, uint64_t *start, uint64_t *count,
                          bool allow_empty) {
    for (size_t d = 0; d < m->ndim; d++) {
        uint64_t s = m->shape[d];
        start[d] = s ? rng() % s : 0;
        uint64_t max = s - start[d];
        count[d] = max ? (allow_empty ? rng() % (max + 1) : 1 + rng() % max) : 0;
    }
}

/*
 * Random writes (C and F buffers) of int32 values, each followed by a full read in C order
 * and a random region read in F order, all compared with the model.
 */
static void random_round_trips(const struct spec *sp, const char *label) {
    static int calls = 0;
    zarr_store_t *s = memory_store();
    zarr_array_t *a = create(s, label, sp);
    /* Every other array reads through a decoded-chunk cache: its writes must show. */
    const bool cached = calls++ % 2 == 1;
    if (cached) CHECK_OK(zarr_array_set_cache_bytes(a, 1 << 20));
    CHECK_STATUS(zarr_array_set_cache_bytes(NULL, 1), ZARR_ERR_NULL_ARG);
    const int32_t fill = -7;
    struct model m = model_new(sp->ndim, sp->shape, sizeof(int32_t), &fill);
    const uint64_t zero[MAXRANK] = {0};

    expect_region(a, &m, ZARR_DTYPE_INT32, zero, sp->shape, ZARR_ORDER_C, __LINE__);
    int32_t next = 1;
    for (int round = 0; round < 12; round++) {
        uint64_t start[MAXRANK], count[MAXRANK];
        random_region(&m, start, count, round % 4 == 3);
        size_t n = product(m.ndim, count);
        int32_t *buf = (int32_t *)malloc(n * sizeof(int32_t) + 1);
        for (size_t i = 0; i < n; i++)
            buf[i] = next++;
        write_region(a, &m, ZARR_DTYPE_INT32, start, count,
                     round % 2 ? ZARR_ORDER_F : ZARR_ORDER_C, (unsigned char *)buf);
        free(buf);
        expect_region(a, &m, ZARR_DTYPE_INT32, zero, sp->shape, ZARR_ORDER_C, __LINE__);
        random_region(&m, start, count, false);
        expect_region(a, &m, ZARR_DTYPE_INT32, start, count, ZARR_ORDER_F, __LINE__);
        expect_region(a, &m, ZARR_DTYPE_INT32, start, count, ZARR_ORDER_C, __LINE__);
    }
    /* The same data through a second handle opened read-only. */
    zarr_array_t *r = NULL;
    CHECK_OK(zarr_array_open(s, label, ZARR_MODE_R, &r));
    if (cached) CHECK_OK(zarr_array_set_cache_bytes(r, 1 << 20));
    expect_region(r, &m, ZARR_DTYPE_INT32, zero, sp->shape, ZARR_ORDER_F, __LINE__);
    /* A write through the first handle after the second one kept chunks. */
    {
        uint64_t start[MAXRANK], count[MAXRANK];
        random_region(&m, start, count, false);
        size_t n = product(m.ndim, count);
        int32_t *buf = (int32_t *)malloc(n * sizeof(int32_t) + 1);
        for (size_t i = 0; i < n; i++)
            buf[i] = -1000 - (int32_t)i;
        write_region(a, &m, ZARR_DTYPE_INT32, start, count, ZARR_ORDER_C, (unsigned char *)buf);
        free(buf);
    }
    expect_region(r, &m, ZARR_DTYPE_INT32, zero, sp->shape, ZARR_ORDER_C, __LINE__);
    zarr_array_free(r);
    free(m.data);
    zarr_array_free(a);
    zarr_store_free(s);
}

static void test_ranks(void) {
    const uint64_t s1[] = {10}, c1[] = {3};
    const uint64_t s2[] = {7, 9}, c2[] = {3, 4};
    const uint64_t s3[] = {5, 6, 7}, c3[] = {2, 3, 4};
    const uint64_t s5[] = {3, 4, 2, 5, 3}, c5[] = {2, 3, 1, 2, 2};
    const struct spec specs[] = {
        {ZARR_DTYPE_INT32, 1, s1, c1, ZARR_ORDER_C, NULL, NULL, "-7", NULL},
        {ZARR_DTYPE_INT32, 2, s2, c2, ZARR_ORDER_C, NULL, NULL, "-7", NULL},
        {ZARR_DTYPE_INT32, 3, s3, c3, ZARR_ORDER_C, NULL, "{\"id\":\"zlib\",\"level\":1}", "-7", NULL},
        {ZARR_DTYPE_INT32, 5, s5, c5, ZARR_ORDER_C, NULL, "null", "-7", NULL},
        /* chunk order F, and nested keys */
        {ZARR_DTYPE_INT32, 2, s2, c2, ZARR_ORDER_F, NULL, NULL, "-7", NULL},
        {ZARR_DTYPE_INT32, 3, s3, c3, ZARR_ORDER_F, "/", "null", "-7", NULL},
        {ZARR_DTYPE_INT32, 5, s5, c5, ZARR_ORDER_F, "/", NULL, "-7", NULL},
        /* one chunk bigger than the array, and chunks of one element */
        {ZARR_DTYPE_INT32, 2, s2, (const uint64_t[]){8, 16}, ZARR_ORDER_C, NULL, NULL, "-7", NULL},
        {ZARR_DTYPE_INT32, 3, s3, (const uint64_t[]){1, 1, 1}, ZARR_ORDER_C, "/", NULL, "-7", NULL},
        /* big-endian storage */
        {ZARR_DTYPE_INT32, 3, s3, c3, ZARR_ORDER_F, NULL, NULL, "-7", ">i4"},
    };
    for (size_t i = 0; i < sizeof specs / sizeof specs[0]; i++) {
        char label[32];
        snprintf(label, sizeof label, "case%zu", i);
        random_round_trips(&specs[i], label);
    }
}

/* Rank 0: one element, chunk key "0". */
static void test_scalar(void) {
    zarr_store_t *s = memory_store();
    const struct spec sp = {ZARR_DTYPE_FLOAT64, 0, NULL, NULL, ZARR_ORDER_C, NULL, NULL, "2.5", NULL};
    zarr_array_t *a = create(s, "scalar", &sp);
    double v = 0;
    CHECK_OK(zarr_array_read(a, 0, NULL, NULL, ZARR_DTYPE_FLOAT64, ZARR_ORDER_C, &v, sizeof v));
    CHECK(v == 2.5);
    bool exists = true;
    CHECK_OK(zarr_store_contains(s, "scalar/0", &exists));
    CHECK(!exists);
    const double w = -1.25;
    CHECK_OK(zarr_array_write(a, 0, NULL, NULL, ZARR_DTYPE_FLOAT64, ZARR_ORDER_F, &w, sizeof w));
    CHECK_OK(zarr_store_contains(s, "scalar/0", &exists));
    CHECK(exists);
    v = 0;
    CHECK_OK(zarr_array_read(a, 0, NULL, NULL, ZARR_DTYPE_FLOAT64, ZARR_ORDER_F, &v, sizeof v));
    CHECK(v == -1.25);
    uint64_t n = 0;
    CHECK_OK(zarr_array_nchunks(a, &n));
    CHECK_EQ(n, 1);
    CHECK_OK(zarr_array_nchunks_initialized(a, &n));
    CHECK_EQ(n, 1);
    size_t rank = 9;
    CHECK_OK(zarr_array_rank(a, &rank));
    CHECK_EQ(rank, 0);
    /* Writing the fill value erases the only chunk. */
    const double fill = 2.5;
    CHECK_OK(zarr_array_write(a, 0, NULL, NULL, ZARR_DTYPE_FLOAT64, ZARR_ORDER_C, &fill, sizeof fill));
    CHECK_OK(zarr_store_contains(s, "scalar/0", &exists));
    CHECK(!exists);
    zarr_array_free(a);
    zarr_store_free(s);
}

/* An F-order buffer holds the transpose of the C-order one. */
static void test_f_buffer_is_transpose(void) {
    zarr_store_t *s = memory_store();
    const uint64_t shape[2] = {4, 6}, chunks[2] = {3, 4};
    const struct spec sp = {ZARR_DTYPE_UINT16, 2, shape, chunks, ZARR_ORDER_C, NULL, NULL, NULL, NULL};
    zarr_array_t *a = create(s, "t", &sp);
    uint16_t c[24], f[24];
    for (int i = 0; i < 24; i++)
        c[i] = (uint16_t)(100 + i);
    const uint64_t start[2] = {0, 0};
    CHECK_OK(zarr_array_write(a, 2, start, shape, ZARR_DTYPE_UINT16, ZARR_ORDER_C, c, sizeof c));
    CHECK_OK(zarr_array_read(a, 2, start, shape, ZARR_DTYPE_UINT16, ZARR_ORDER_F, f, sizeof f));
    int bad = 0;
    for (int i = 0; i < 4; i++)
        for (int j = 0; j < 6; j++)
            bad += f[j * 4 + i] != c[i * 6 + j];
    CHECK_EQ(bad, 0);
    /* A sub-region crossing chunk boundaries: rows 1..3, columns 2..5. */
    const uint64_t s2[2] = {1, 2}, n2[2] = {3, 4};
    uint16_t sub[12];
    CHECK_OK(zarr_array_read(a, 2, s2, n2, ZARR_DTYPE_UINT16, ZARR_ORDER_F, sub, sizeof sub));
    bad = 0;
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 4; j++)
            bad += sub[j * 3 + i] != c[(i + 1) * 6 + (j + 2)];
    CHECK_EQ(bad, 0);
    /* Writing an F buffer stores the same array as writing its C transpose. */
    CHECK_OK(zarr_array_write(a, 2, start, shape, ZARR_DTYPE_UINT16, ZARR_ORDER_F, f, sizeof f));
    uint16_t again[24];
    CHECK_OK(zarr_array_read(a, 2, start, shape, ZARR_DTYPE_UINT16, ZARR_ORDER_C, again, sizeof again));
    CHECK_MEM(again, c, sizeof c);
    zarr_array_free(a);
    zarr_store_free(s);
}

/* Chunk order F: the stored (uncompressed) chunk holds its elements column-major. */
static void test_chunk_order_f(void) {
    zarr_store_t *s = memory_store();
    const uint64_t shape[2] = {2, 3};
    const struct spec sp = {ZARR_DTYPE_UINT8, 2, shape, shape, ZARR_ORDER_F, NULL, "null", NULL, NULL};
    zarr_array_t *a = create(s, "f", &sp);
    const uint8_t c[6] = {1, 2, 3, 4, 5, 6};
    const uint64_t start[2] = {0, 0};
    CHECK_OK(zarr_array_write(a, 2, start, shape, ZARR_DTYPE_UINT8, ZARR_ORDER_C, c, sizeof c));
    uint8_t raw[16];
    size_t needed = 0;
    CHECK_OK(zarr_store_get(s, "f/0.0", raw, sizeof raw, &needed));
    CHECK_EQ(needed, 6);
    const uint8_t col_major[6] = {1, 4, 2, 5, 3, 6};
    CHECK_MEM(raw, col_major, 6);
    zarr_order_t order = -1;
    CHECK_OK(zarr_array_order(a, &order));
    CHECK_EQ(order, ZARR_ORDER_F);
    char meta[1024];
    CHECK_OK(zarr_array_metadata_json(a, meta, sizeof meta, NULL));
    CHECK_CONTAINS(meta, "\"order\": \"F\"");
    uint8_t back[6];
    CHECK_OK(zarr_array_read(a, 2, start, shape, ZARR_DTYPE_UINT8, ZARR_ORDER_C, back, sizeof back));
    CHECK_MEM(back, c, 6);
    zarr_array_free(a);
    zarr_store_free(s);
}

/* Separator "/": nested keys in the store and directories on disk. */
static void test_nested_keys(void) {
    char *tmp = check_mkdtemp();
    zarr_store_t *s = NULL;
    CHECK_OK(zarr_store_open_fs(tmp, ZARR_MODE_R_PLUS, &s));
    const uint64_t shape[2] = {4, 5}, chunks[2] = {2, 2};
    const struct spec sp = {ZARR_DTYPE_INT16, 2, shape, chunks, ZARR_ORDER_C, "/", NULL, NULL, NULL};
    zarr_array_t *a = create(s, "a", &sp);
    int16_t data[20];
    for (int i = 0; i < 20; i++)
        data[i] = (int16_t)(i + 1);
    const uint64_t start[2] = {0, 0};
    CHECK_OK(zarr_array_write(a, 2, start, shape, ZARR_DTYPE_INT16, ZARR_ORDER_C, data, sizeof data));
    zarr_strings_t *keys = NULL;
    CHECK_OK(zarr_store_list(s, "a/", &keys));
    const char *expected[] = {"a/.zarray", "a/0/0", "a/0/1", "a/0/2",
                              "a/1/0", "a/1/1", "a/1/2"};
    bool same = check_strings_equal(keys, expected, 7);
    CHECK(same);
    if (!same)
        check_print_strings("keys", keys);
    zarr_strings_free(keys);
    CHECK(check_path_exists(tmp, "a/0/1"));
    CHECK(!check_path_exists(tmp, "a/0.1"));
    uint64_t n = 0;
    CHECK_OK(zarr_array_nchunks_initialized(a, &n));
    CHECK_EQ(n, 6);
    char meta[1024];
    CHECK_OK(zarr_array_metadata_json(a, meta, sizeof meta, NULL));
    CHECK_CONTAINS(meta, "\"dimension_separator\": \"/\"");
    /* Reopened, the separator comes from the metadata. */
    zarr_array_t *r = NULL;
    CHECK_OK(zarr_array_open(s, "a", ZARR_MODE_R, &r));
    int16_t back[20];
    CHECK_OK(zarr_array_read(r, 2, start, shape, ZARR_DTYPE_INT16, ZARR_ORDER_C, back, sizeof back));
    CHECK_MEM(back, data, sizeof data);
    /* Resizing erases nested chunks outside the new shape. */
    const uint64_t smaller[2] = {2, 3};
    CHECK_OK(zarr_array_resize(a, 2, smaller));
    CHECK_OK(zarr_store_list(s, "a/", &keys));
    /* The resizing handle holds the array's append lock until it is freed. */
    const char *after[] = {"a/.zarr-append.lock", "a/.zarray", "a/0/0", "a/0/1"};
    same = check_strings_equal(keys, after, 4);
    CHECK(same);
    if (!same)
        check_print_strings("keys after resize", keys);
    zarr_strings_free(keys);
    zarr_array_free(r);
    zarr_array_free(a);
    zarr_store_free(s);
    check_rmtree(tmp);
}

/* Zero-length dimensions: no chunks, empty reads and writes. */
static void test_zero_length(void) {
    zarr_store_t *s = memory_store();
    const uint64_t shape[2] = {0, 5}, chunks[2] = {2, 2};
    const struct spec sp = {ZARR_DTYPE_FLOAT32, 2, shape, chunks, ZARR_ORDER_C, NULL, NULL, NULL, NULL};
    zarr_array_t *a = create(s, "z", &sp);
    uint64_t n = 99;
    CHECK_OK(zarr_array_nchunks(a, &n));
    CHECK_EQ(n, 0);
    CHECK_OK(zarr_array_nbytes(a, &n));
    CHECK_EQ(n, 0);
    const uint64_t start[2] = {0, 0}, count[2] = {0, 5}, count2[2] = {0, 3}, start2[2] = {0, 2};
    CHECK_OK(zarr_array_read(a, 2, start, count, ZARR_DTYPE_FLOAT32, ZARR_ORDER_C, NULL, 0));
    CHECK_OK(zarr_array_read(a, 2, start2, count2, ZARR_DTYPE_FLOAT32, ZARR_ORDER_F, NULL, 0));
    CHECK_OK(zarr_array_write(a, 2, start, count, ZARR_DTYPE_FLOAT32, ZARR_ORDER_C, NULL, 0));
    CHECK_OK(zarr_array_nchunks_initialized(a, &n));
    CHECK_EQ(n, 0);
    /* Appending rows to an empty array. */
    const uint64_t rows[2] = {3, 5};
    float data[15];
    for (int i = 0; i < 15; i++)
        data[i] = (float)i * 0.5f;
    CHECK_OK(zarr_array_append(a, 0, 2, rows, ZARR_DTYPE_FLOAT32, ZARR_ORDER_C, data, sizeof data));
    uint64_t got[2];
    CHECK_OK(zarr_array_shape(a, 2, got));
    CHECK_EQ(got[0], 3);
    CHECK_EQ(got[1], 5);
    float back[15];
    CHECK_OK(zarr_array_read(a, 2, start, rows, ZARR_DTYPE_FLOAT32, ZARR_ORDER_C, back, sizeof back));
    CHECK_MEM(back, data, sizeof data);
    /* An empty region of a non-empty array. */
    const uint64_t mid[2] = {1, 5}, none[2] = {2, 0};
    CHECK_OK(zarr_array_read(a, 2, mid, none, ZARR_DTYPE_FLOAT32, ZARR_ORDER_C, NULL, 0));
    zarr_array_free(a);
    zarr_store_free(s);
}

/* Missing chunks read as the fill value: NaN, null (zeros), a number. */
static void test_fill_values(void) {
    zarr_store_t *s = memory_store();
    const uint64_t shape[1] = {10}, chunks[1] = {4};
    const struct spec nan_spec = {ZARR_DTYPE_FLOAT64, 1, shape, chunks, ZARR_ORDER_C, NULL, NULL, "\"NaN\"", NULL};
    zarr_array_t *a = create(s, "nan", &nan_spec);
    double d[10];
    const uint64_t start[1] = {0};
    CHECK_OK(zarr_array_read(a, 1, start, shape, ZARR_DTYPE_FLOAT64, ZARR_ORDER_C, d, sizeof d));
    int nans = 0;
    for (int i = 0; i < 10; i++)
        nans += isnan(d[i]) ? 1 : 0;
    CHECK_EQ(nans, 10);
    /* A partial write keeps NaN around it. */
    const uint64_t s3[1] = {3}, n3[1] = {2};
    const double two[2] = {1.0, 2.0};
    CHECK_OK(zarr_array_write(a, 1, s3, n3, ZARR_DTYPE_FLOAT64, ZARR_ORDER_C, two, sizeof two));
    CHECK_OK(zarr_array_read(a, 1, start, shape, ZARR_DTYPE_FLOAT64, ZARR_ORDER_C, d, sizeof d));
    CHECK(isnan(d[2]) && d[3] == 1.0 && d[4] == 2.0 && isnan(d[5]));
    /* Writing NaN back erases the chunks (the NaN bit pattern equals the fill). */
    double fill = 0;
    bool is_null = true;
    CHECK_OK(zarr_array_fill_value(a, &fill, sizeof fill, &is_null));
    CHECK(isnan(fill) && !is_null);
    double fills[2];
    fills[0] = fill;
    fills[1] = fill;
    CHECK_OK(zarr_array_write(a, 1, s3, n3, ZARR_DTYPE_FLOAT64, ZARR_ORDER_C, fills, sizeof fills));
    uint64_t n = 9;
    CHECK_OK(zarr_array_nchunks_initialized(a, &n));
    CHECK_EQ(n, 0);
    zarr_array_free(a);

    /* Null fill: missing chunks read as zeros; zeros written are kept (no fill to erase). */
    const struct spec null_spec = {ZARR_DTYPE_INT32, 1, shape, chunks, ZARR_ORDER_C, NULL, NULL, "null", NULL};
    a = create(s, "null", &null_spec);
    int32_t v[10];
    memset(v, 0x5a, sizeof v);
    CHECK_OK(zarr_array_read(a, 1, start, shape, ZARR_DTYPE_INT32, ZARR_ORDER_C, v, sizeof v));
    const int32_t zeros[10] = {0};
    CHECK_MEM(v, zeros, sizeof v);
    CHECK_OK(zarr_array_write(a, 1, start, shape, ZARR_DTYPE_INT32, ZARR_ORDER_C, zeros, sizeof zeros));
    CHECK_OK(zarr_array_nchunks_initialized(a, &n));
    CHECK_EQ(n, 3);
    zarr_array_free(a);

    /* A fill value set from native bytes. */
    zarr_array_builder_t *b = NULL;
    CHECK_OK(zarr_array_builder_new(ZARR_DTYPE_INT64, 1, shape, &b));
    CHECK_OK(zarr_array_builder_set_zarr_format(b, 2));
    CHECK_OK(zarr_array_builder_set_chunk_shape(b, 1, chunks));
    const int64_t big = -1234567890123LL;
    CHECK_OK(zarr_array_builder_set_fill_value(b, ZARR_DTYPE_INT64, &big, sizeof big));
    CHECK_OK(zarr_array_create(b, s, "native", ZARR_MODE_W, &a));
    zarr_array_builder_free(b);
    int64_t w[10];
    CHECK_OK(zarr_array_read(a, 1, start, shape, ZARR_DTYPE_INT64, ZARR_ORDER_C, w, sizeof w));
    int same = 0;
    for (int i = 0; i < 10; i++)
        same += w[i] == big;
    CHECK_EQ(same, 10);
    char json[64];
    CHECK_OK(zarr_array_fill_value_json(a, json, sizeof json, NULL));
    CHECK_STR(json, "-1234567890123");
    zarr_array_free(a);
    zarr_store_free(s);
}

/* Writing fill-valued data erases chunks; partial writes keep their neighbours. */
static void test_erase_and_read_modify_write(void) {
    zarr_store_t *s = memory_store();
    const uint64_t shape[2] = {4, 4}, chunks[2] = {2, 2};
    /* Fill 0 given: a v2 integer array made without one has null, which erases nothing. */
    const struct spec sp = {ZARR_DTYPE_INT32, 2, shape, chunks, ZARR_ORDER_C, NULL, NULL, "0", NULL};
    zarr_array_t *a = create(s, "e", &sp);
    int32_t data[16];
    for (int i = 0; i < 16; i++)
        data[i] = i + 1;
    const uint64_t start[2] = {0, 0};
    CHECK_OK(zarr_array_write(a, 2, start, shape, ZARR_DTYPE_INT32, ZARR_ORDER_C, data, sizeof data));
    uint64_t n = 0;
    CHECK_OK(zarr_array_nchunks_initialized(a, &n));
    CHECK_EQ(n, 4);
    /* Zero (the fill) over chunk 0.0 erases it. */
    const int32_t zeros[4] = {0};
    CHECK_OK(zarr_array_write(a, 2, start, chunks, ZARR_DTYPE_INT32, ZARR_ORDER_C, zeros, sizeof zeros));
    CHECK_OK(zarr_array_nchunks_initialized(a, &n));
    CHECK_EQ(n, 3);
    bool exists = true;
    CHECK_OK(zarr_store_contains(s, "e/0.0", &exists));
    CHECK(!exists);
    /* One element of chunk 1.1 set to zero: the chunk stays, its neighbours are kept. */
    const uint64_t at[2] = {3, 3}, one[2] = {1, 1};
    CHECK_OK(zarr_array_write(a, 2, at, one, ZARR_DTYPE_INT32, ZARR_ORDER_C, zeros, sizeof(int32_t)));
    CHECK_OK(zarr_store_contains(s, "e/1.1", &exists));
    CHECK(exists);
    int32_t back[16];
    CHECK_OK(zarr_array_read(a, 2, start, shape, ZARR_DTYPE_INT32, ZARR_ORDER_C, back, sizeof back));
    int32_t expected[16];
    memcpy(expected, data, sizeof data);
    expected[0] = expected[1] = expected[4] = expected[5] = 0;
    expected[15] = 0;
    CHECK_MEM(back, expected, sizeof back);
    /* The rest of chunk 1.1 set to zero, element by element: erased at the last one. */
    const uint64_t cells[3][2] = {{2, 2}, {2, 3}, {3, 2}};
    for (int i = 0; i < 3; i++)
        CHECK_OK(zarr_array_write(a, 2, cells[i], one, ZARR_DTYPE_INT32, ZARR_ORDER_C, zeros, sizeof(int32_t)));
    CHECK_OK(zarr_store_contains(s, "e/1.1", &exists));
    CHECK(!exists);
    CHECK_OK(zarr_array_nchunks_initialized(a, &n));
    CHECK_EQ(n, 2);
    expected[10] = expected[11] = expected[14] = 0;
    /* A region across all four chunks: the untouched parts are preserved. */
    const uint64_t mid[2] = {1, 1}, two[2] = {2, 2};
    const int32_t vals[4] = {-1, -2, -3, -4};
    CHECK_OK(zarr_array_write(a, 2, mid, two, ZARR_DTYPE_INT32, ZARR_ORDER_C, vals, sizeof vals));
    expected[5] = -1;
    expected[6] = -2;
    expected[9] = -3;
    expected[10] = -4;
    CHECK_OK(zarr_array_read(a, 2, start, shape, ZARR_DTYPE_INT32, ZARR_ORDER_C, back, sizeof back));
    CHECK_MEM(back, expected, sizeof back);
    CHECK_OK(zarr_array_nchunks_initialized(a, &n));
    CHECK_EQ(n, 4);
    zarr_array_free(a);
    zarr_store_free(s);
}

/* Edge chunks: a shape that is not a multiple of the chunks. */
static void test_edge_chunks(void) {
    zarr_store_t *s = memory_store();
    const uint64_t shape[2] = {5, 7}, chunks[2] = {2, 3};
    const struct spec sp = {ZARR_DTYPE_UINT32, 2, shape, chunks, ZARR_ORDER_C, NULL, "null", "9", NULL};
    zarr_array_t *a = create(s, "edge", &sp);
    /* Write only the corner element (4, 6): it lives in edge chunk 2.2. */
    const uint64_t at[2] = {4, 6}, one[2] = {1, 1};
    const uint32_t v = 77;
    CHECK_OK(zarr_array_write(a, 2, at, one, ZARR_DTYPE_UINT32, ZARR_ORDER_C, &v, sizeof v));
    /* The stored chunk is full-size (2 x 3), padded with the fill value. */
    uint32_t raw[6];
    size_t needed = 0;
    CHECK_OK(zarr_store_get(s, "edge/2.2", raw, sizeof raw, &needed));
    CHECK_EQ(needed, sizeof raw);
    if (little_endian()) {
        const uint32_t expect[6] = {77, 9, 9, 9, 9, 9};
        CHECK_MEM(raw, expect, sizeof raw);
    }
    uint32_t all[35];
    const uint64_t start[2] = {0, 0};
    CHECK_OK(zarr_array_read(a, 2, start, shape, ZARR_DTYPE_UINT32, ZARR_ORDER_C, all, sizeof all));
    int nines = 0;
    for (int i = 0; i < 34; i++)
        nines += all[i] == 9;
    CHECK_EQ(nines, 34);
    CHECK_EQ(all[34], 77);
    zarr_array_free(a);
    zarr_store_free(s);
}

/* Resize: shrinking erases chunks wholly outside; growing reads the fill value there. */
static void test_resize(void) {
    zarr_store_t *s = memory_store();
    const uint64_t shape[2] = {6, 6}, chunks[2] = {2, 2};
    const struct spec sp = {ZARR_DTYPE_INT8, 2, shape, chunks, ZARR_ORDER_C, NULL, NULL, "-1", NULL};
    zarr_array_t *a = create(s, "r", &sp);
    int8_t data[36];
    for (int i = 0; i < 36; i++)
        data[i] = (int8_t)i;
    const uint64_t start[2] = {0, 0};
    CHECK_OK(zarr_array_write(a, 2, start, shape, ZARR_DTYPE_INT8, ZARR_ORDER_C, data, sizeof data));
    uint64_t n = 0;
    CHECK_OK(zarr_array_nchunks_initialized(a, &n));
    CHECK_EQ(n, 9);
    const uint64_t small[2] = {3, 3};
    CHECK_OK(zarr_array_resize(a, 2, small));
    zarr_strings_t *keys = NULL;
    CHECK_OK(zarr_store_list(s, "r/", &keys));
    const char *left[] = {"r/.zarr-append.lock", "r/.zarray", "r/0.0", "r/0.1", "r/1.0",
                          "r/1.1"};
    bool same = check_strings_equal(keys, left, 6);
    CHECK(same);
    if (!same)
        check_print_strings("keys after shrink", keys);
    zarr_strings_free(keys);
    CHECK_OK(zarr_array_nchunks_initialized(a, &n));
    CHECK_EQ(n, 4);
    CHECK_OK(zarr_array_nchunks(a, &n));
    CHECK_EQ(n, 4);
    uint64_t got[2];
    CHECK_OK(zarr_array_shape(a, 2, got));
    CHECK(got[0] == 3 && got[1] == 3);
    int8_t small_back[9];
    CHECK_OK(zarr_array_read(a, 2, start, small, ZARR_DTYPE_INT8, ZARR_ORDER_C, small_back, sizeof small_back));
    const int8_t small_expect[9] = {0, 1, 2, 6, 7, 8, 12, 13, 14};
    CHECK_MEM(small_back, small_expect, 9);
    /* The new shape is in the stored metadata. */
    zarr_array_t *r = NULL;
    CHECK_OK(zarr_array_open(s, "r", ZARR_MODE_R, &r));
    CHECK_OK(zarr_array_shape(r, 2, got));
    CHECK(got[0] == 3 && got[1] == 3);
    zarr_array_free(r);
    /* Grow to 6 x 8: the erased chunks and the new columns read the fill value. */
    const uint64_t big[2] = {6, 8};
    CHECK_OK(zarr_array_resize(a, 2, big));
    int8_t grown[48];
    CHECK_OK(zarr_array_read(a, 2, start, big, ZARR_DTYPE_INT8, ZARR_ORDER_C, grown, sizeof grown));
    int fill = 0, kept = 0;
    for (int i = 0; i < 6; i++)
        for (int j = 0; j < 8; j++) {
            if (i >= 4 || j >= 4)
                fill += grown[i * 8 + j] == -1;
            if (i < 3 && j < 3)
                kept += grown[i * 8 + j] == data[i * 6 + j];
        }
    CHECK_EQ(fill, 48 - 16);
    CHECK_EQ(kept, 9);
    CHECK_OK(zarr_array_nchunks(a, &n));
    CHECK_EQ(n, 12);
    zarr_array_free(a);
    zarr_store_free(s);
}

/* Append along axis 0 and axis 1, from C and F buffers. */
static void test_append(void) {
    zarr_store_t *s = memory_store();
    const uint64_t shape[2] = {2, 3}, chunks[2] = {2, 2};
    const struct spec sp = {ZARR_DTYPE_INT32, 2, shape, chunks, ZARR_ORDER_C, NULL, NULL, NULL, NULL};
    zarr_array_t *a = create(s, "ap", &sp);
    const int32_t first[6] = {1, 2, 3, 4, 5, 6};
    const uint64_t start[2] = {0, 0};
    CHECK_OK(zarr_array_write(a, 2, start, shape, ZARR_DTYPE_INT32, ZARR_ORDER_C, first, sizeof first));
    /* Axis 0: three more rows. */
    const uint64_t rows[2] = {3, 3};
    const int32_t more[9] = {7, 8, 9, 10, 11, 12, 13, 14, 15};
    CHECK_OK(zarr_array_append(a, 0, 2, rows, ZARR_DTYPE_INT32, ZARR_ORDER_C, more, sizeof more));
    uint64_t got[2];
    CHECK_OK(zarr_array_shape(a, 2, got));
    CHECK(got[0] == 5 && got[1] == 3);
    int32_t all[25];
    const uint64_t s53[2] = {5, 3};
    CHECK_OK(zarr_array_read(a, 2, start, s53, ZARR_DTYPE_INT32, ZARR_ORDER_C, all, 15 * sizeof(int32_t)));
    const int32_t e53[15] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15};
    CHECK_MEM(all, e53, sizeof e53);
    /* Axis 1: two more columns, given column-major. */
    const uint64_t cols[2] = {5, 2};
    const int32_t colf[10] = {101, 102, 103, 104, 105, 201, 202, 203, 204, 205};
    CHECK_OK(zarr_array_append(a, 1, 2, cols, ZARR_DTYPE_INT32, ZARR_ORDER_F, colf, sizeof colf));
    CHECK_OK(zarr_array_shape(a, 2, got));
    CHECK(got[0] == 5 && got[1] == 5);
    const uint64_t s55[2] = {5, 5};
    CHECK_OK(zarr_array_read(a, 2, start, s55, ZARR_DTYPE_INT32, ZARR_ORDER_C, all, sizeof all));
    const int32_t e55[25] = {1,  2,  3,  101, 201, 4,  5,  6,  102, 202, 7,  8,  9,
                             103, 203, 10, 11, 12, 104, 204, 13, 14, 15, 105, 205};
    CHECK_MEM(all, e55, sizeof e55);
    /* The stored metadata has the new shape. */
    char meta[1024];
    CHECK_OK(zarr_array_metadata_json(a, meta, sizeof meta, NULL));
    CHECK_CONTAINS(meta, "\"shape\": [\n        5,\n        5\n    ]");
    zarr_array_free(a);
    zarr_store_free(s);
}

/* Big-endian storage: values round-trip and the stored bytes are big-endian. */
static void test_big_endian(void) {
    zarr_store_t *s = memory_store();
    const uint64_t shape[1] = {4};
    const struct spec sp = {ZARR_DTYPE_FLOAT64, 1, shape, shape, ZARR_ORDER_C, NULL, "null", NULL, ">f8"};
    zarr_array_t *a = create(s, "be", &sp);
    char name[16];
    CHECK_OK(zarr_array_dtype_name(a, name, sizeof name, NULL));
    CHECK_STR(name, ">f8");
    zarr_dtype_t dt = 0;
    CHECK_OK(zarr_array_dtype(a, &dt));
    CHECK_EQ(dt, ZARR_DTYPE_FLOAT64);
    const double v[4] = {1.5, -2.0, 3.25, 1e300};
    const uint64_t start[1] = {0};
    CHECK_OK(zarr_array_write(a, 1, start, shape, ZARR_DTYPE_FLOAT64, ZARR_ORDER_C, v, sizeof v));
    double back[4];
    CHECK_OK(zarr_array_read(a, 1, start, shape, ZARR_DTYPE_FLOAT64, ZARR_ORDER_C, back, sizeof back));
    CHECK_MEM(back, v, sizeof v);
    unsigned char raw[32], expected[32];
    size_t needed = 0;
    CHECK_OK(zarr_store_get(s, "be/0", raw, sizeof raw, &needed));
    CHECK_EQ(needed, 32);
    for (int i = 0; i < 4; i++) {
        unsigned char bytes[8];
        memcpy(bytes, &v[i], 8);
        for (int k = 0; k < 8; k++)
            expected[i * 8 + k] = little_endian() ? bytes[7 - k] : bytes[k];
    }
    CHECK_MEM(raw, expected, 32);
    /* 1.5 as a big-endian double is 3f f8 00 ... */
    CHECK(raw[0] == 0x3f && raw[1] == 0xf8 && raw[7] == 0x00);
    /* A partial write into a big-endian chunk (read, swap, merge, swap, write). */
    const uint64_t s1[1] = {1}, n2[1] = {2};
    const double mid[2] = {-0.5, 42.0};
    CHECK_OK(zarr_array_write(a, 1, s1, n2, ZARR_DTYPE_FLOAT64, ZARR_ORDER_C, mid, sizeof mid));
    CHECK_OK(zarr_array_read(a, 1, start, shape, ZARR_DTYPE_FLOAT64, ZARR_ORDER_C, back, sizeof back));
    CHECK(back[0] == 1.5 && back[1] == -0.5 && back[2] == 42.0 && back[3] == 1e300);
    zarr_array_free(a);

    /* Big-endian int16 and complex64 (each half swapped) with a fill value. */
    const struct spec sp2 = {ZARR_DTYPE_INT16, 1, shape, shape, ZARR_ORDER_C, NULL, "null", "-2", ">i2"};
    a = create(s, "be16", &sp2);
    const uint64_t one[1] = {1};
    const int16_t x = 0x0102;
    CHECK_OK(zarr_array_write(a, 1, start, one, ZARR_DTYPE_INT16, ZARR_ORDER_C, &x, sizeof x));
    unsigned char raw16[8];
    CHECK_OK(zarr_store_get(s, "be16/0", raw16, sizeof raw16, &needed));
    const unsigned char e16[8] = {0x01, 0x02, 0xff, 0xfe, 0xff, 0xfe, 0xff, 0xfe};
    CHECK_EQ(needed, 8);
    CHECK_MEM(raw16, e16, 8);
    zarr_array_free(a);

    const struct spec sp3 = {ZARR_DTYPE_COMPLEX64, 1, shape, shape, ZARR_ORDER_C, NULL, "null", NULL, ">c8"};
    a = create(s, "bec", &sp3);
    const float c[2] = {1.0f, -2.0f}; /* 1 - 2i */
    CHECK_OK(zarr_array_write(a, 1, start, one, ZARR_DTYPE_COMPLEX64, ZARR_ORDER_C, c, sizeof c));
    unsigned char rawc[32];
    CHECK_OK(zarr_store_get(s, "bec/0", rawc, sizeof rawc, &needed));
    const unsigned char ec[8] = {0x3f, 0x80, 0, 0, 0xc0, 0x00, 0, 0};
    CHECK_MEM(rawc, ec, 8);
    float cb[2];
    CHECK_OK(zarr_array_read(a, 1, start, one, ZARR_DTYPE_COMPLEX64, ZARR_ORDER_C, cb, sizeof cb));
    CHECK(cb[0] == 1.0f && cb[1] == -2.0f);
    zarr_array_free(a);
    zarr_store_free(s);
}

/* datetime64 and timedelta64 are moved as int64. */
static void test_datetime(void) {
    zarr_store_t *s = memory_store();
    const uint64_t shape[1] = {3};
    const struct spec sp = {ZARR_DTYPE_INT64, 1, shape, shape, ZARR_ORDER_C, NULL, NULL, "\"NaT\"", "<M8[ns]"};
    zarr_array_t *a = create(s, "dt", &sp);
    zarr_dtype_t dt = 0;
    CHECK_OK(zarr_array_dtype(a, &dt));
    CHECK_EQ(dt, ZARR_DTYPE_INT64);
    char name[16];
    CHECK_OK(zarr_array_dtype_name(a, name, sizeof name, NULL));
    CHECK_STR(name, "<M8[ns]");
    int64_t v[3];
    const uint64_t start[1] = {0};
    CHECK_OK(zarr_array_read(a, 1, start, shape, ZARR_DTYPE_INT64, ZARR_ORDER_C, v, sizeof v));
    CHECK(v[0] == INT64_MIN && v[2] == INT64_MIN); /* NaT */
    const int64_t t[3] = {1700000000000000000LL, 0, -86400000000000LL};
    CHECK_OK(zarr_array_write(a, 1, start, shape, ZARR_DTYPE_INT64, ZARR_ORDER_C, t, sizeof t));
    CHECK_OK(zarr_array_read(a, 1, start, shape, ZARR_DTYPE_INT64, ZARR_ORDER_C, v, sizeof v));
    CHECK_MEM(v, t, sizeof t);
    double wrong[3];
    CHECK_STATUS(zarr_array_read(a, 1, start, shape, ZARR_DTYPE_FLOAT64, ZARR_ORDER_C, wrong, sizeof wrong),
                 ZARR_ERR_DTYPE_MISMATCH);
    zarr_array_free(a);
    const struct spec sp2 = {ZARR_DTYPE_INT64, 1, shape, shape, ZARR_ORDER_C, NULL, NULL, NULL, ">m8[10s]"};
    a = create(s, "td", &sp2);
    CHECK_OK(zarr_array_dtype_name(a, name, sizeof name, NULL));
    CHECK_STR(name, ">m8[10s]");
    CHECK_OK(zarr_array_write(a, 1, start, shape, ZARR_DTYPE_INT64, ZARR_ORDER_C, t, sizeof t));
    CHECK_OK(zarr_array_read(a, 1, start, shape, ZARR_DTYPE_INT64, ZARR_ORDER_C, v, sizeof v));
    CHECK_MEM(v, t, sizeof t);
    zarr_array_free(a);
    zarr_store_free(s);
}

/* Every element type with every compressor round-trips, whole and in parts. */
static void test_dtypes_by_compressors(void) {
    static const char *const compressors[] = {
        "{\"id\":\"blosc\",\"cname\":\"lz4\",\"clevel\":5,\"shuffle\":1,\"blocksize\":0}",
        "{\"id\":\"blosc\",\"cname\":\"zstd\",\"clevel\":3,\"shuffle\":2,\"blocksize\":0}",
        "{\"id\":\"blosc\",\"cname\":\"snappy\",\"clevel\":5,\"shuffle\":0}",
        "{\"id\":\"zlib\",\"level\":6}",
        "{\"id\":\"gzip\",\"level\":1}",
        "{\"id\":\"bz2\",\"level\":9}",
        "{\"id\":\"lzma\"}",
        "{\"id\":\"zstd\",\"level\":3,\"checksum\":true}",
        "{\"id\":\"lz4\",\"acceleration\":1}",
        "null",
    };
    static const char *const ids[] = {"\"blosc\"", "\"zstd\"", "\"snappy\"", "\"zlib\"", "\"gzip\"",
                                      "\"bz2\"", "\"lzma\"", "\"checksum\": true", "\"lz4\"",
                                      "\"compressor\": null"};
    const uint64_t shape[2] = {37, 11}, chunks[2] = {8, 5};
    zarr_store_t *s = memory_store();
    int cases = 0;
    for (zarr_dtype_t dt = ZARR_DTYPE_BOOL; dt <= ZARR_DTYPE_COMPLEX128; dt++) {
        size_t elem = zarr_dtype_size(dt);
        const size_t n = 37 * 11;
        unsigned char *data = (unsigned char *)malloc(n * elem);
        for (size_t i = 0; i < n * elem; i++)
            data[i] = dt == ZARR_DTYPE_BOOL ? (unsigned char)(rng() % 2) : (unsigned char)(rng() % 7 * 37);
        for (size_t c = 0; c < sizeof compressors / sizeof compressors[0]; c++) {
            const struct spec sp = {dt, 2, shape, chunks, (zarr_order_t)(c % 2), NULL, compressors[c], NULL, NULL};
            char path[64];
            snprintf(path, sizeof path, "%s/c%zu", zarr_dtype_name(dt), c);
            zarr_array_t *a = create(s, path, &sp);
            const uint8_t zero[16] = {0};
            struct model m = model_new(2, shape, elem, zero);
            const uint64_t start[2] = {0, 0};
            write_region(a, &m, dt, start, shape, ZARR_ORDER_C, data);
            expect_region(a, &m, dt, start, shape, ZARR_ORDER_C, __LINE__);
            const uint64_t s2[2] = {3, 2}, n2[2] = {27, 7};
            expect_region(a, &m, dt, s2, n2, ZARR_ORDER_F, __LINE__);
            /* a partial overwrite from an F buffer */
            unsigned char *part = (unsigned char *)malloc(27 * 7 * elem);
            for (size_t i = 0; i < 27 * 7 * elem; i++)
                part[i] = dt == ZARR_DTYPE_BOOL ? 1 : (unsigned char)(i * 13 + 1);
            write_region(a, &m, dt, s2, n2, ZARR_ORDER_F, part);
            free(part);
            expect_region(a, &m, dt, start, shape, ZARR_ORDER_C, __LINE__);
            char meta[2048];
            CHECK_OK(zarr_array_metadata_json(a, meta, sizeof meta, NULL));
            CHECK_CONTAINS(meta, ids[c]);
            uint64_t init = 0;
            CHECK_OK(zarr_array_nchunks_initialized(a, &init));
            CHECK(init > 0 && init <= 15);
            /* Reopened from the stored metadata, the data reads the same. */
            zarr_array_t *r = NULL;
            CHECK_OK(zarr_array_open(s, path, ZARR_MODE_R, &r));
            expect_region(r, &m, dt, start, shape, ZARR_ORDER_F, __LINE__);
            zarr_array_free(r);
            free(m.data);
            zarr_array_free(a);
            cases++;
        }
        free(data);
    }
    CHECK_EQ(cases, 140);
    zarr_store_free(s);
}

/* Strided buffers (netCDF's imap): a block read into and written from the interior of a
 * haloed buffer, permuted strides, and the checks on strides. */
static void test_strided(void) {
    zarr_store_t *s = memory_store();
    const uint64_t shape[3] = {6, 7, 5}, chunks[3] = {4, 3, 2};
    const struct spec sp = {ZARR_DTYPE_INT32, 3, shape, chunks, ZARR_ORDER_C, NULL, NULL, "-1", NULL};
    zarr_array_t *a = create(s, "st", &sp);
    const int32_t fill = -1;
    struct model m = model_new(3, shape, sizeof(int32_t), &fill);

    /* A block {1..5, 2..6, 1..4} (4 x 5 x 3) lives inside a buffer with a halo of 1. */
    const uint64_t start[3] = {1, 2, 1}, count[3] = {4, 5, 3};
    enum { H0 = 6, H1 = 7, H2 = 5 }; /* haloed extents: count + 2 */
    int32_t halo[H0 * H1 * H2];
    for (int i = 0; i < H0 * H1 * H2; i++)
        halo[i] = 1000 + i;
    const int64_t strides[3] = {H1 * H2, H2, 1};
    const int32_t *interior = &halo[1 * H1 * H2 + 1 * H2 + 1];
    size_t reach = (size_t)(((count[0] - 1) * H1 * H2 + (count[1] - 1) * H2 + count[2]) * sizeof(int32_t));
    CHECK_OK(zarr_array_write_strided(a, 3, start, count, strides, ZARR_DTYPE_INT32, interior, reach));
    /* The model gets the same block, gathered densely. */
    int32_t dense[4 * 5 * 3];
    for (int i = 0; i < 4; i++)
        for (int j = 0; j < 5; j++)
            for (int k = 0; k < 3; k++)
                dense[(i * 5 + j) * 3 + k] = interior[i * strides[0] + j * strides[1] + k];
    model_copy(&m, start, count, ZARR_ORDER_C, (unsigned char *)dense, true);
    const uint64_t zero[3] = {0, 0, 0};
    expect_region(a, &m, ZARR_DTYPE_INT32, zero, shape, ZARR_ORDER_C, __LINE__);

    /* Read back into another haloed buffer: the interior matches, the halo is untouched. */
    int32_t back[H0 * H1 * H2];
    for (int i = 0; i < H0 * H1 * H2; i++)
        back[i] = -555;
    int32_t *back_interior = &back[1 * H1 * H2 + 1 * H2 + 1];
    CHECK_OK(zarr_array_read_strided(a, 3, start, count, strides, ZARR_DTYPE_INT32, back_interior,
                                     sizeof back - (size_t)(back_interior - back) * sizeof(int32_t)));
    int interior_ok = 0, halo_ok = 0;
    for (int i = 0; i < H0; i++)
        for (int j = 0; j < H1; j++)
            for (int k = 0; k < H2; k++) {
                int at = (i * H1 + j) * H2 + k;
                bool inside = i >= 1 && i <= 4 && j >= 1 && j <= 5 && k >= 1 && k <= 3;
                if (inside)
                    interior_ok += back[at] == halo[at];
                else
                    halo_ok += back[at] == -555;
            }
    CHECK_EQ(interior_ok, 4 * 5 * 3);
    CHECK_EQ(halo_ok, H0 * H1 * H2 - 4 * 5 * 3);

    /* Permuted strides: column-major strides give the F-order buffer. */
    const int64_t fstrides[3] = {1, 4, 20};
    int32_t fbuf[60], fwant[60];
    CHECK_OK(zarr_array_read_strided(a, 3, start, count, fstrides, ZARR_DTYPE_INT32, fbuf, sizeof fbuf));
    CHECK_OK(zarr_array_read(a, 3, start, count, ZARR_DTYPE_INT32, ZARR_ORDER_F, fwant, sizeof fwant));
    CHECK_MEM(fbuf, fwant, sizeof fbuf);
    /* Dense C strides equal a plain C read, here of the whole array (whole chunks). */
    int32_t *whole = (int32_t *)malloc(sizeof(int32_t) * 210), *plain = (int32_t *)malloc(sizeof(int32_t) * 210);
    const int64_t cstrides[3] = {35, 5, 1};
    CHECK_OK(zarr_array_read_strided(a, 3, zero, shape, cstrides, ZARR_DTYPE_INT32, whole, 210 * sizeof(int32_t)));
    CHECK_OK(zarr_array_read(a, 3, zero, shape, ZARR_DTYPE_INT32, ZARR_ORDER_C, plain, 210 * sizeof(int32_t)));
    CHECK_MEM(whole, plain, 210 * sizeof(int32_t));
    /* Writing with F strides then reading in C order transposes as expected. */
    for (int i = 0; i < 60; i++)
        fbuf[i] = 5000 + i;
    CHECK_OK(zarr_array_write_strided(a, 3, start, count, fstrides, ZARR_DTYPE_INT32, fbuf, sizeof fbuf));
    model_copy(&m, start, count, ZARR_ORDER_F, (unsigned char *)fbuf, true);
    expect_region(a, &m, ZARR_DTYPE_INT32, zero, shape, ZARR_ORDER_C, __LINE__);
    /* A zero stride is fine along a dimension of extent 1 (elements do not overlap). */
    const uint64_t one_row[3] = {1, 5, 3};
    const int64_t zstrides[3] = {0, 3, 1};
    int32_t row[15];
    CHECK_OK(zarr_array_read_strided(a, 3, start, one_row, zstrides, ZARR_DTYPE_INT32, row, sizeof row));
    CHECK_EQ(row[0], fbuf[0]);

    /* Stride checks, before any I/O. */
    const int64_t negative[3] = {-15, 3, 1}, overlap[3] = {1, 1, 1}, huge[3] = {INT64_MAX, 3, 1};
    CHECK_STATUS(zarr_array_read_strided(a, 3, start, count, negative, ZARR_DTYPE_INT32, fbuf, sizeof fbuf), ZARR_ERR_INVALID_ARG);
    CHECK_ERROR_CONTAINS("negative");
    CHECK_STATUS(zarr_array_write_strided(a, 3, start, count, overlap, ZARR_DTYPE_INT32, fbuf, sizeof fbuf), ZARR_ERR_INVALID_ARG);
    CHECK_ERROR_CONTAINS("overlap");
    CHECK_STATUS(zarr_array_read_strided(a, 3, start, count, huge, ZARR_DTYPE_INT32, fbuf, sizeof fbuf), ZARR_ERR_OVERFLOW);
    /* The buffer must reach the last element (it may be longer). */
    CHECK_STATUS(zarr_array_read_strided(a, 3, start, count, fstrides, ZARR_DTYPE_INT32, fbuf, sizeof fbuf - 1), ZARR_ERR_BUFFER_SIZE);
    CHECK_STATUS(zarr_array_write_strided(a, 3, start, count, strides, ZARR_DTYPE_INT32, interior, reach - 4), ZARR_ERR_BUFFER_SIZE);
    CHECK_OK(zarr_array_read_strided(a, 3, start, count, fstrides, ZARR_DTYPE_INT32, back, sizeof back));
    CHECK_STATUS(zarr_array_read_strided(a, 3, start, count, NULL, ZARR_DTYPE_INT32, fbuf, sizeof fbuf), ZARR_ERR_NULL_ARG);
    CHECK_ERROR_CONTAINS("mem_strides");
    CHECK_STATUS(zarr_array_write_strided(a, 2, start, count, fstrides, ZARR_DTYPE_INT32, fbuf, sizeof fbuf), ZARR_ERR_RANK_MISMATCH);
    CHECK_STATUS(zarr_array_write_strided(a, 3, start, count, fstrides, ZARR_DTYPE_FLOAT32, fbuf, sizeof fbuf), ZARR_ERR_DTYPE_MISMATCH);
    CHECK_STATUS(zarr_array_read_strided(a, 3, start, shape, fstrides, ZARR_DTYPE_INT32, fbuf, sizeof fbuf), ZARR_ERR_OUT_OF_BOUNDS);
    CHECK_STATUS(zarr_array_read_strided(NULL, 3, start, count, fstrides, ZARR_DTYPE_INT32, fbuf, sizeof fbuf), ZARR_ERR_NULL_ARG);
    CHECK_STATUS(zarr_array_write_strided(a, 3, start, count, fstrides, ZARR_DTYPE_INT32, NULL, sizeof fbuf), ZARR_ERR_NULL_ARG);
    /* An empty region needs no buffer. */
    const uint64_t none[3] = {0, 5, 3};
    CHECK_OK(zarr_array_write_strided(a, 3, start, none, fstrides, ZARR_DTYPE_INT32, NULL, 0));
    /* Nothing changed by the failures. */
    expect_region(a, &m, ZARR_DTYPE_INT32, zero, shape, ZARR_ORDER_C, __LINE__);
    free(whole);
    free(plain);
    free(m.data);
    zarr_array_free(a);
    zarr_store_free(s);
}

int main(void) {
    test_strided();
    test_ranks();
    test_scalar();
    test_f_buffer_is_transpose();
    test_chunk_order_f();
    test_nested_keys();
    test_zero_length();
    test_fill_values();
    test_erase_and_read_modify_write();
    test_edge_chunks();
    test_resize();
    test_append();
    test_big_endian();
    test_datetime();
    test_dtypes_by_compressors();
    return CHECK_DONE();
}
