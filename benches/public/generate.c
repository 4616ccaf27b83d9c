/* Writes, or checks, a benchmark array of zarr_benchmarks: uint16 values
 * (x2 + x1 * x1 / 32 + x0 * x0 * x0) mod 65536 at the global index (x0, x1, x2), x2 the
 * fastest axis, in 64-bit integer arithmetic (the formula of zarr_benchmarks'
 * generate_benchmark_array.rs).
 *
 *   generate create PATH ENCODING D0,D1,D2 CHUNK   # chunks CHUNK^3; ENCODING: none, zstd
 *                                                  # (level 0) or sharded (shards CHUNK^3
 *                                                  # of (CHUNK/4)^3 zstd level 0 chunks)
 *   generate check PATH                            # exit 1 at the first wrong value
 *
 * The array is written (and checked) a row of chunk-high slabs at a time. */
#include <inttypes.h>
#include <string.h>

#include "bench_public.h"

/** The benchmark value at the global index (x0, x1, x2). */
static uint16_t value_at(uint64_t x0, uint64_t x1, uint64_t x2) {
    return (uint16_t)((x2 + (x1 * x1) / 32 + x0 * x0 * x0) % 65536);
}

/** Fills `buf` with the values of the region `start`/`count` (C order). */
static void fill(uint16_t *buf, const uint64_t start[3], const uint64_t count[3]) {
    size_t i = 0;
    for (uint64_t a = 0; a < count[0]; a++)
        for (uint64_t b = 0; b < count[1]; b++)
            for (uint64_t c = 0; c < count[2]; c++)
                buf[i++] = value_at(start[0] + a, start[1] + b, start[2] + c);
}

/** Parses "D0,D1,D2" into `shape`, or exits naming the argument. */
static void parse_shape(const char *text, uint64_t shape[3]) {
    if (sscanf(text, "%" SCNu64 ",%" SCNu64 ",%" SCNu64, &shape[0], &shape[1], &shape[2]) != 3 ||
        shape[0] == 0 || shape[1] == 0 || shape[2] == 0) {
        fprintf(stderr, "generate: shape '%s' is not three positive extents D0,D1,D2\n", text);
        exit(2);
    }
}

/** Creates the array at the root of the directory `path` (replacing one there). */
static zarr_array_t *create(const char *path, const char *encoding, const uint64_t shape[3],
                            uint64_t chunk) {
    const char *zstd = "{\"name\": \"zstd\", \"configuration\": {\"level\": 0, \"checksum\": false}}";
    zarr_store_t *store = NULL;
    zarr_array_builder_t *builder = NULL;
    zarr_array_t *array = NULL;
    uint64_t outer[3] = {chunk, chunk, chunk};
    uint64_t inner[3] = {chunk / 4, chunk / 4, chunk / 4};
    CHECK(zarr_store_open_fs(path, ZARR_MODE_A, &store));
    CHECK(zarr_store_set_durability(store, ZARR_DURABILITY_NONE));
    CHECK(zarr_array_builder_new(ZARR_DTYPE_UINT16, 3, shape, &builder));
    CHECK(zarr_array_builder_set_fill_value_json(builder, "0"));
    if (strcmp(encoding, "none") == 0) {
        CHECK(zarr_array_builder_set_chunk_shape(builder, 3, outer));
        CHECK(zarr_array_builder_set_compressor_json(builder, "null"));
    } else if (strcmp(encoding, "zstd") == 0) {
        CHECK(zarr_array_builder_set_chunk_shape(builder, 3, outer));
        CHECK(zarr_array_builder_set_compressor_json(builder, zstd));
    } else if (strcmp(encoding, "sharded") == 0 && chunk % 4 == 0) {
        CHECK(zarr_array_builder_set_chunk_shape(builder, 3, inner));
        CHECK(zarr_array_builder_set_shard_shape(builder, 3, outer));
        CHECK(zarr_array_builder_set_compressor_json(builder, zstd));
    } else {
        fprintf(stderr, "generate: encoding '%s' is not none, zstd or sharded (with CHUNK a "
                        "multiple of 4)\n", encoding);
        exit(2);
    }
    CHECK(zarr_array_create(builder, store, "", ZARR_MODE_W, &array));
    zarr_array_builder_free(builder);
    zarr_store_free(store);
    return array;
}

int main(int argc, char **argv) {
    bool creating = argc == 6 && strcmp(argv[1], "create") == 0;
    if (!creating && !(argc == 3 && strcmp(argv[1], "check") == 0)) {
        fprintf(stderr, "usage: generate create PATH none|zstd|sharded D0,D1,D2 CHUNK\n"
                        "       generate check PATH\n");
        return 2;
    }
    uint64_t shape[3], slab[3];
    zarr_array_t *array;
    if (creating) {
        uint64_t chunk = strtoull(argv[5], NULL, 10);
        if (chunk == 0) {
            fprintf(stderr, "generate: CHUNK '%s' is not a positive integer\n", argv[5]);
            return 2;
        }
        parse_shape(argv[4], shape);
        array = create(argv[2], argv[3], shape, chunk);
    } else {
        array = open_array(argv[2]);
        array_shape(array, shape);
    }
    object_shape(array, slab);
    slab[2] = shape[2];
    size_t slab_len = (size_t)(slab[0] * slab[1] * slab[2]);
    uint16_t *want = alloc_or_exit(slab_len * 2);
    uint16_t *got = creating ? NULL : alloc_or_exit(slab_len * 2);
    for (uint64_t s0 = 0; s0 < shape[0]; s0 += slab[0]) {
        for (uint64_t s1 = 0; s1 < shape[1]; s1 += slab[1]) {
            uint64_t start[3] = {s0, s1, 0};
            uint64_t count[3] = {slab[0] < shape[0] - s0 ? slab[0] : shape[0] - s0,
                                 slab[1] < shape[1] - s1 ? slab[1] : shape[1] - s1, shape[2]};
            size_t bytes = (size_t)(count[0] * count[1] * count[2]) * 2;
            fill(want, start, count);
            if (creating) {
                CHECK(zarr_array_write(array, 3, start, count, ZARR_DTYPE_UINT16, ZARR_ORDER_C,
                                       want, bytes));
                continue;
            }
            CHECK(zarr_array_read(array, 3, start, count, ZARR_DTYPE_UINT16, ZARR_ORDER_C, got,
                                  bytes));
            if (memcmp(want, got, bytes) != 0) {
                size_t i = 0;
                while (want[i] == got[i]) i++;
                uint64_t x2 = i % count[2], x1 = i / count[2] % count[1], x0 = i / count[2] / count[1];
                fprintf(stderr, "generate: %s at (%" PRIu64 ", %" PRIu64 ", %" PRIu64
                                ") holds %u, not %u\n", argv[2], s0 + x0, s1 + x1, x2,
                        got[i], want[i]);
                return 1;
            }
        }
    }
    free(want);
    free(got);
    zarr_array_free(array);
    return 0;
}
