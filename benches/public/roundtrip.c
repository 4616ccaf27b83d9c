/* Copies a benchmark array into a new array of the same metadata, re-encoding every chunk
 * (zarr_benchmarks' "round trip"): the output is created from the input's metadata
 * document, then filled one stored object (chunk, or shard when sharded) at a time, each
 * written without blocking (zarr_array_write_async) while the next is read, through two
 * buffers of one object each. Written as libzarr writes by default (synced at the flush
 * that ends it), or with --unsynced not synced at all (ZARR_DURABILITY_NONE).
 *
 *   roundtrip [--unsynced] INPUT OUTPUT */
#include <string.h>

#include "bench_public.h"

int main(int argc, char **argv) {
    bool unsynced = argc == 4 && strcmp(argv[1], "--unsynced") == 0;
    if (argc != 3 && !unsynced) {
        fprintf(stderr, "usage: roundtrip [--unsynced] INPUT OUTPUT\n");
        return 2;
    }
    argv += argc - 3;
    zarr_array_t *input = open_array(argv[1]);
    size_t needed = 0;
    zarr_array_metadata_json(input, NULL, 0, &needed);
    char *metadata = alloc_or_exit(needed);
    CHECK(zarr_array_metadata_json(input, metadata, needed, NULL));
    zarr_store_t *store = NULL;
    zarr_array_t *output = NULL;
    CHECK(zarr_store_open_fs(argv[2], ZARR_MODE_A, &store));
    if (unsynced) {
        CHECK(zarr_store_set_durability(store, ZARR_DURABILITY_NONE));
    }
    CHECK(zarr_array_create_json(store, "", metadata, ZARR_MODE_W, &output));
    free(metadata);

    uint64_t shape[3], unit[3];
    array_shape(input, shape);
    object_shape(input, unit);
    size_t unit_bytes = (size_t)(unit[0] * unit[1] * unit[2]) * 2;
    void *bufs[2] = {alloc_or_exit(unit_bytes), alloc_or_exit(unit_bytes)};
    zarr_request_t *writing[2] = {NULL, NULL};
    unsigned turn = 0;
    for (uint64_t s0 = 0; s0 < shape[0]; s0 += unit[0]) {
        for (uint64_t s1 = 0; s1 < shape[1]; s1 += unit[1]) {
            for (uint64_t s2 = 0; s2 < shape[2]; s2 += unit[2], turn ^= 1) {
                uint64_t start[3] = {s0, s1, s2};
                uint64_t count[3] = {unit[0] < shape[0] - s0 ? unit[0] : shape[0] - s0,
                                     unit[1] < shape[1] - s1 ? unit[1] : shape[1] - s1,
                                     unit[2] < shape[2] - s2 ? unit[2] : shape[2] - s2};
                size_t bytes = (size_t)(count[0] * count[1] * count[2]) * 2;
                /* The buffer's previous write must be done before it is read into. */
                if (writing[turn] != NULL) {
                    CHECK(zarr_request_wait(writing[turn]));
                    zarr_request_free(writing[turn]);
                }
                CHECK(zarr_array_read(input, 3, start, count, ZARR_DTYPE_UINT16, ZARR_ORDER_C,
                                      bufs[turn], bytes));
                CHECK(zarr_array_write_async(output, 3, start, count, ZARR_DTYPE_UINT16,
                                             ZARR_ORDER_C, bufs[turn], bytes, 0, &writing[turn]));
            }
        }
    }
    for (unsigned i = 0; i < 2; i++) {
        if (writing[i] != NULL) {
            CHECK(zarr_request_wait(writing[i]));
            zarr_request_free(writing[i]);
        }
    }
    free(bufs[0]);
    free(bufs[1]);
    zarr_array_free(input);
    zarr_array_free(output);
    CHECK(zarr_store_flush(store));
    zarr_store_free(store);
    return 0;
}
