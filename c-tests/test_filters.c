/*
 * Filters from C: arrays created with numcodecs filters through the builder
 * (zarr_array_builder_set_filters_json) and from a .zarray document
 * (zarr_array_create_json), in Zarr v2 and v3, read back exactly; the stored bytes of a
 * delta-filtered chunk; and the errors: a filter for the wrong type, an unknown filter,
 * a corrupt checksum — with nothing written for rejected settings. The Zarr v3 array codecs
 * registered in zarr-extensions (scale_offset, cast_value) through the builder's filters:
 * exact stored bytes in v3, refused in v2.
 */
#include "check.h"

static zarr_store_t *memory(void) {
    zarr_store_t *s = NULL;
    CHECK_OK(zarr_store_new_memory(&s));
    return s;
}

static bool exists(zarr_store_t *s, const char *key) {
    bool found = false;
    CHECK_OK(zarr_store_contains(s, key, &found));
    return found;
}

/* A 6x5 int32 array in 3x3 chunks, written whole except the first chunk (fill 0). */
static void builder_round_trip(int format, const char *filters, const char *compressor) {
    zarr_store_t *s = memory();
    const uint64_t shape[2] = {6, 5}, chunks[2] = {3, 3}, origin[2] = {0, 0};
    zarr_array_builder_t *b = NULL;
    zarr_array_t *a = NULL;
    CHECK_OK(zarr_array_builder_new(ZARR_DTYPE_INT32, 2, shape, &b));
    CHECK_OK(zarr_array_builder_set_chunk_shape(b, 2, chunks));
    CHECK_OK(zarr_array_builder_set_zarr_format(b, format));
    CHECK_OK(zarr_array_builder_set_filters_json(b, filters));
    CHECK_OK(zarr_array_builder_set_compressor_json(b, compressor));
    CHECK_OK(zarr_array_builder_set_fill_value_json(b, "0")); /* v2's default is null */
    CHECK_OK(zarr_array_create(b, s, "a", ZARR_MODE_W_MINUS, &a));
    zarr_array_builder_free(b);
    int32_t data[30], back[30];
    for (int i = 0; i < 30; i++) {
        int r = i / 5, c = i % 5;
        data[i] = (r < 3 && c < 3) ? 0 : i * i * 1000 - 7;
    }
    CHECK_OK(zarr_array_write(a, 2, origin, shape, ZARR_DTYPE_INT32, ZARR_ORDER_C, data, sizeof data));
    zarr_array_free(a);
    CHECK(!exists(s, format == 2 ? "a/0.0" : "a/c/0/0"));
    CHECK_OK(zarr_array_open(s, "a", ZARR_MODE_R, &a));
    CHECK_OK(zarr_array_read(a, 2, origin, shape, ZARR_DTYPE_INT32, ZARR_ORDER_C, back, sizeof back));
    CHECK(memcmp(back, data, sizeof data) == 0);
    zarr_array_free(a);
    zarr_store_free(s);
}

static void builder(void) {
    const char *chains[] = {
        "[{\"id\": \"delta\", \"dtype\": \"<i4\"}]",
        "[{\"id\": \"delta\", \"dtype\": \"<i4\", \"astype\": \"<i8\"}, {\"id\": \"shuffle\", \"elementsize\": 0}, {\"id\": \"crc32\"}]",
        "[{\"id\": \"astype\", \"encode_dtype\": \"<i8\", \"decode_dtype\": \"<i4\"}, {\"id\": \"fletcher32\"}, {\"id\": \"jenkins_lookup3\"}]",
        "[{\"id\": \"fixedscaleoffset\", \"offset\": 7, \"scale\": 1, \"dtype\": \"<i4\"}, {\"id\": \"adler32\", \"location\": \"end\"}]",
    };
    const char *compressors[] = {
        "null",
        "{\"id\": \"blosc\", \"cname\": \"zstd\", \"clevel\": 3, \"shuffle\": 2, \"blocksize\": 0}",
        "{\"id\": \"crc32\"}",
    };
    for (size_t i = 0; i < sizeof chains / sizeof *chains; i++)
        for (size_t j = 0; j < sizeof compressors / sizeof *compressors; j++)
            for (int format = 2; format <= 3; format++) builder_round_trip(format, chains[i], compressors[j]);
    CHECK(zarr_codec_supported("delta"));
    CHECK(zarr_codec_supported("jenkins_lookup3"));
    CHECK(!zarr_codec_supported("categorize-nope"));
}

/* The stored bytes of a delta-filtered chunk, and a .zarray with filters. */
static void stored_bytes(void) {
    zarr_store_t *s = memory();
    zarr_array_t *a = NULL;
    const char *zarray =
        "{\"zarr_format\": 2, \"shape\": [4], \"chunks\": [4], \"dtype\": \"<i4\", \"order\": \"C\","
        " \"fill_value\": null, \"compressor\": null,"
        " \"filters\": [{\"id\": \"delta\", \"dtype\": \"<i4\", \"astype\": \"<i2\"}]}";
    CHECK_OK(zarr_array_create_json(s, "d", zarray, ZARR_MODE_W_MINUS, &a));
    const uint64_t start[1] = {0}, count[1] = {4};
    const int32_t data[4] = {1000, 1003, 990, -5};
    CHECK_OK(zarr_array_write(a, 1, start, count, ZARR_DTYPE_INT32, ZARR_ORDER_C, data, sizeof data));
    unsigned char raw[16];
    size_t n = 0;
    CHECK_OK(zarr_store_get(s, "d/0", raw, sizeof raw, &n));
    /* int16 little-endian: 1000, +3, -13, -995 */
    const unsigned char want[8] = {0xe8, 0x03, 0x03, 0x00, 0xf3, 0xff, 0x1d, 0xfc};
    CHECK(n == 8 && memcmp(raw, want, 8) == 0);
    int32_t back[4];
    CHECK_OK(zarr_array_read(a, 1, start, count, ZARR_DTYPE_INT32, ZARR_ORDER_C, back, sizeof back));
    CHECK(memcmp(back, data, sizeof data) == 0);
    zarr_array_free(a);

    /* fixedscaleoffset at a scale where the values are exact, with a crc32 compressor. */
    const char *scaled =
        "{\"zarr_format\": 2, \"shape\": [5], \"chunks\": [2], \"dtype\": \"<f8\", \"order\": \"C\","
        " \"fill_value\": 0, \"compressor\": {\"id\": \"crc32\"},"
        " \"filters\": [{\"id\": \"fixedscaleoffset\", \"offset\": 0, \"scale\": 4, \"dtype\": \"<f8\", \"astype\": \"<i2\"}]}";
    CHECK_OK(zarr_array_create_json(s, "f", scaled, ZARR_MODE_W_MINUS, &a));
    const uint64_t count5[1] = {5};
    const double values[5] = {0.25, -1.5, 1000.75, 2.0, -0.5};
    double got[5];
    CHECK_OK(zarr_array_write(a, 1, start, count5, ZARR_DTYPE_FLOAT64, ZARR_ORDER_C, values, sizeof values));
    CHECK_OK(zarr_array_read(a, 1, start, count5, ZARR_DTYPE_FLOAT64, ZARR_ORDER_C, got, sizeof got));
    CHECK(memcmp(got, values, sizeof values) == 0);
    zarr_array_free(a);

    /* A corrupt checksum is a codec error naming the chunk. */
    CHECK_OK(zarr_store_get(s, "f/1", raw, sizeof raw, &n));
    raw[n - 1] ^= 0x10;
    CHECK_OK(zarr_store_set(s, "f/1", raw, n));
    CHECK_OK(zarr_array_open(s, "f", ZARR_MODE_R, &a));
    CHECK_STATUS(zarr_array_read(a, 1, start, count5, ZARR_DTYPE_FLOAT64, ZARR_ORDER_C, got, sizeof got),
                 ZARR_ERR_CODEC);
    CHECK(strstr(check_last_error(), "f/1") != NULL && strstr(check_last_error(), "crc32") != NULL);
    zarr_array_free(a);
    zarr_store_free(s);
}

static void errors(void) {
    zarr_store_t *s = memory();
    const uint64_t shape[1] = {8};
    zarr_array_builder_t *b = NULL;
    zarr_array_t *a = NULL;
    CHECK_OK(zarr_array_builder_new(ZARR_DTYPE_FLOAT32, 1, shape, &b));
    /* A filter for another type: the filter and both types are named; nothing is written. */
    CHECK_OK(zarr_array_builder_set_filters_json(b, "[{\"id\": \"delta\", \"dtype\": \"<i4\"}]"));
    CHECK_STATUS(zarr_array_create(b, s, "x", ZARR_MODE_W, &a), ZARR_ERR_INVALID_ARG);
    CHECK(a == NULL);
    CHECK(strstr(check_last_error(), "delta") != NULL && strstr(check_last_error(), "<f4") != NULL);
    CHECK(!exists(s, "x/.zarray") && !exists(s, ".zgroup"));
    /* An unknown filter is named. */
    CHECK_OK(zarr_array_builder_set_filters_json(b, "[{\"id\": \"no_such_filter\"}]"));
    CHECK_STATUS(zarr_array_create(b, s, "x", ZARR_MODE_W, &a), ZARR_ERR_CODEC_UNSUPPORTED);
    CHECK(strstr(check_last_error(), "no_such_filter") != NULL);
    /* packbits needs bool data; categorize labels need a unicode type. */
    CHECK_OK(zarr_array_builder_set_filters_json(b, "[{\"id\": \"packbits\"}]"));
    CHECK_STATUS(zarr_array_create(b, s, "x", ZARR_MODE_W, &a), ZARR_ERR_INVALID_ARG);
    CHECK_OK(zarr_array_builder_set_filters_json(
        b, "[{\"id\": \"categorize\", \"labels\": [\"a\"], \"dtype\": \"<U1\"}]"));
    CHECK_STATUS(zarr_array_create(b, s, "x", ZARR_MODE_W, &a), ZARR_ERR_INVALID_ARG);
    CHECK(strstr(check_last_error(), "categorize") != NULL);
    CHECK(!exists(s, "x/.zarray") && !exists(s, ".zgroup"));
    zarr_array_builder_free(b);
    /* A stored .zarray whose filter does not match the array's type fails to open. */
    const char *zarray =
        "{\"zarr_format\": 2, \"shape\": [4], \"chunks\": [4], \"dtype\": \"<f4\", \"order\": \"C\","
        " \"fill_value\": 0, \"compressor\": null, \"filters\": [{\"id\": \"quantize\", \"digits\": 2, \"dtype\": \"<f8\"}]}";
    CHECK_STATUS(zarr_array_create_json(s, "y", zarray, ZARR_MODE_W, &a), ZARR_ERR_METADATA);
    CHECK(strstr(check_last_error(), "quantize") != NULL);
    CHECK(!exists(s, "y/.zarray"));
    zarr_store_free(s);
}

/* scale_offset then cast_value to int8 (clamped): x - 100 stored as one byte. */
static void registered_codecs(void) {
    const char *filters =
        "[{\"name\": \"scale_offset\", \"configuration\": {\"offset\": 100}},"
        " {\"name\": \"cast_value\", \"configuration\": {\"data_type\": \"int8\", \"out_of_range\": \"clamp\"}}]";
    const uint64_t shape[1] = {5}, start[1] = {0};
    const int32_t data[5] = {100, 101, 90, 227, 500};
    for (int format = 2; format <= 3; format++) {
        zarr_store_t *s = memory();
        zarr_array_builder_t *b = NULL;
        zarr_array_t *a = NULL;
        CHECK_OK(zarr_array_builder_new(ZARR_DTYPE_INT32, 1, shape, &b));
        CHECK_OK(zarr_array_builder_set_zarr_format(b, format));
        CHECK_OK(zarr_array_builder_set_filters_json(b, filters));
        CHECK_OK(zarr_array_builder_set_compressor_json(b, "null"));
        CHECK_OK(zarr_array_builder_set_fill_value_json(b, "100"));
        if (format == 2) {
            /* Zarr v2 has no form for them: nothing is written. */
            CHECK_STATUS(zarr_array_create(b, s, "a", ZARR_MODE_W_MINUS, &a), ZARR_ERR_UNSUPPORTED);
            CHECK(strstr(check_last_error(), "scale_offset") != NULL);
            CHECK(!exists(s, "a/.zarray"));
        } else {
            CHECK_OK(zarr_array_create(b, s, "a", ZARR_MODE_W_MINUS, &a));
            CHECK_OK(zarr_array_write(a, 1, start, shape, ZARR_DTYPE_INT32, ZARR_ORDER_C, data, sizeof data));
            unsigned char raw[8];
            size_t n = 0;
            CHECK_OK(zarr_store_get(s, "a/c/0", raw, sizeof raw, &n));
            /* 0, 1, -10, 127, 400 clamped to 127 */
            const unsigned char want[5] = {0x00, 0x01, 0xf6, 0x7f, 0x7f};
            CHECK(n == 5 && memcmp(raw, want, 5) == 0);
            int32_t back[5];
            CHECK_OK(zarr_array_read(a, 1, start, shape, ZARR_DTYPE_INT32, ZARR_ORDER_C, back, sizeof back));
            const int32_t expected[5] = {100, 101, 90, 227, 227};
            CHECK(memcmp(back, expected, sizeof back) == 0);
            zarr_array_free(a);
        }
        zarr_array_builder_free(b);
        zarr_store_free(s);
    }
    CHECK(zarr_codec_supported("scale_offset"));
    CHECK(zarr_codec_supported("cast_value"));
    CHECK(zarr_codec_supported("reshape"));
}

int main(void) {
    builder();
    registered_codecs();
    stored_bytes();
    errors();
    return CHECK_DONE();
}
