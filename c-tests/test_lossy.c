/*
 * The zfp and pcodec codecs from C: arrays created through the builder with each codec's
 * JSON (numcodecs' and Zarr v3's forms), read back exactly in the lossless modes and
 * within the tolerance in fixed-accuracy mode; zarr_features() and zarr_codec_supported()
 * report them; a type the codec cannot encode is refused with nothing written.
 */
#include "check.h"

#include <math.h>

enum { N0 = 12, N1 = 10, COUNT = N0 * N1 };

/* Creates "a" (12x10 in 5x4 chunks) of `dtype` with `codec` in `format`, writes `data`,
 * reopens it and reads it back into `back`. */
static void round_trip(int format, zarr_dtype_t dtype, const char *codec, const void *data,
                       void *back, size_t bytes) {
    zarr_store_t *s = NULL;
    zarr_array_builder_t *b = NULL;
    zarr_array_t *a = NULL;
    const uint64_t shape[2] = {N0, N1}, chunks[2] = {5, 4}, origin[2] = {0, 0};
    CHECK_OK(zarr_store_new_memory(&s));
    CHECK_OK(zarr_array_builder_new(dtype, 2, shape, &b));
    CHECK_OK(zarr_array_builder_set_chunk_shape(b, 2, chunks));
    CHECK_OK(zarr_array_builder_set_zarr_format(b, format));
    CHECK_OK(zarr_array_builder_set_compressor_json(b, codec));
    CHECK_OK(zarr_array_create(b, s, "a", ZARR_MODE_W_MINUS, &a));
    zarr_array_builder_free(b);
    CHECK_OK(zarr_array_write(a, 2, origin, shape, dtype, ZARR_ORDER_C, data, bytes));
    zarr_array_free(a);
    CHECK_OK(zarr_array_open(s, "a", ZARR_MODE_R, &a));
    CHECK_OK(zarr_array_read(a, 2, origin, shape, dtype, ZARR_ORDER_C, back, bytes));
    zarr_array_free(a);
    zarr_store_free(s);
}

static void codecs(void) {
    float field[COUNT], back[COUNT];
    int64_t counts[COUNT], counts_back[COUNT];
    for (int i = 0; i < COUNT; i++) {
        field[i] = 20.0f + 5.0f * sinf((float)i / 9.0f) + 0.01f * (float)(i % 7);
        counts[i] = (int64_t)i * i * 1000 - 12345;
    }
    const char *lossless[] = {
        "{\"id\": \"zfpy\", \"mode\": 5}",
        "{\"name\": \"zfp\", \"configuration\": {\"mode\": \"reversible\"}}",
        "{\"id\": \"pcodec\", \"level\": 8}",
        "{\"name\": \"numcodecs.pcodec\", \"configuration\": {\"mode_spec\": \"classic\"}}",
    };
    for (size_t k = 0; k < sizeof lossless / sizeof lossless[0]; k++) {
        for (int format = 2; format <= 3; format++) {
            round_trip(format, ZARR_DTYPE_FLOAT32, lossless[k], field, back, sizeof field);
            CHECK(memcmp(back, field, sizeof field) == 0);
            round_trip(format, ZARR_DTYPE_INT64, lossless[k], counts, counts_back, sizeof counts);
            CHECK(memcmp(counts_back, counts, sizeof counts) == 0);
        }
    }
    const char *accurate[] = {
        "{\"id\": \"zfpy\", \"mode\": 4, \"tolerance\": 0.001}",
        "{\"name\": \"zfp\", \"configuration\": {\"mode\": \"fixed_accuracy\", \"tolerance\": 0.001}}",
    };
    for (size_t k = 0; k < 2; k++) {
        round_trip(3, ZARR_DTYPE_FLOAT32, accurate[k], field, back, sizeof field);
        float worst = 0.0f;
        for (int i = 0; i < COUNT; i++) {
            worst = fmaxf(worst, fabsf(back[i] - field[i]));
        }
        CHECK(worst <= 0.001f);
    }
}

static void reported_and_refused(void) {
    CHECK((zarr_features() & (ZARR_HAS_ZFP | ZARR_HAS_PCODEC)) == (ZARR_HAS_ZFP | ZARR_HAS_PCODEC));
    CHECK(zarr_codec_supported("zfpy"));
    CHECK(zarr_codec_supported("zfp"));
    CHECK(zarr_codec_supported("pcodec"));
    zarr_store_t *s = NULL;
    zarr_array_builder_t *b = NULL;
    zarr_array_t *a = NULL;
    const uint64_t shape[1] = {8};
    CHECK_OK(zarr_store_new_memory(&s));
    CHECK_OK(zarr_array_builder_new(ZARR_DTYPE_INT8, 1, shape, &b));
    CHECK_OK(zarr_array_builder_set_compressor_json(b, "{\"id\": \"zfpy\", \"mode\": 5}"));
    CHECK_STATUS(zarr_array_create(b, s, "a", ZARR_MODE_W_MINUS, &a), ZARR_ERR_CODEC_UNSUPPORTED);
    CHECK_ERROR_CONTAINS("int8");
    CHECK(a == NULL);
    bool found = true;
    CHECK_OK(zarr_store_contains(s, "a/.zarray", &found));
    CHECK(!found);
    CHECK_OK(zarr_store_contains(s, "a/zarr.json", &found));
    CHECK(!found);
    zarr_array_builder_free(b);
    zarr_store_free(s);
}

int main(void) {
    if ((zarr_features() & ZARR_HAS_ZFP) == 0 || (zarr_features() & ZARR_HAS_PCODEC) == 0) {
        printf("test_lossy: built without zfp or pcodec, skipped\n");
        return 77;
    }
    codecs();
    reported_and_refused();
    return CHECK_DONE();
}
