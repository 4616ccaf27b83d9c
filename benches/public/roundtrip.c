/* Copies a benchmark array into a new array of the same metadata, re-encoding every chunk
 * (zarr_benchmarks' "round trip"): the output is created from the input's metadata
 * document, then filled a slab at a time, a slab being one row of stored objects (chunks,
 * or shards when sharded) along the last axis, so that libzarr has several to work on at
 * once. Written as libzarr writes by default (synced at the flush that ends it), or with
 * --unsynced not synced at all (ZARR_DURABILITY_NONE).
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

    uint64_t shape[3], slab[3];
    array_shape(input, shape);
    object_shape(input, slab);
    slab[2] = shape[2];
    void *buf = alloc_or_exit((size_t)(slab[0] * slab[1] * slab[2]) * 2);
    for (uint64_t s0 = 0; s0 < shape[0]; s0 += slab[0]) {
        for (uint64_t s1 = 0; s1 < shape[1]; s1 += slab[1]) {
            uint64_t start[3] = {s0, s1, 0};
            uint64_t count[3] = {slab[0] < shape[0] - s0 ? slab[0] : shape[0] - s0,
                                 slab[1] < shape[1] - s1 ? slab[1] : shape[1] - s1, shape[2]};
            size_t bytes = (size_t)(count[0] * count[1] * count[2]) * 2;
            CHECK(zarr_array_read(input, 3, start, count, ZARR_DTYPE_UINT16, ZARR_ORDER_C, buf,
                                  bytes));
            CHECK(zarr_array_write(output, 3, start, count, ZARR_DTYPE_UINT16, ZARR_ORDER_C, buf,
                                   bytes));
        }
    }
    free(buf);
    zarr_array_free(input);
    zarr_array_free(output);
    CHECK(zarr_store_flush(store));
    zarr_store_free(store);
    return 0;
}
