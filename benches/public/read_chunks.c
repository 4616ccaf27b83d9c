/* Reads a benchmark array one stored object at a time, one after another, into one
 * buffer (zarr_benchmarks' "read chunk by chunk" at a concurrency of 1): its chunks, or
 * its shards when sharded; with --inner, its chunks also when sharded (the inner chunks,
 * zarr_benchmarks' "read inner chunk by inner chunk").
 *
 *   read_chunks [--inner] PATH */
#include <string.h>

#include "bench_public.h"

int main(int argc, char **argv) {
    bool inner = argc == 3 && strcmp(argv[1], "--inner") == 0;
    if (argc != 2 && !inner) {
        fprintf(stderr, "usage: read_chunks [--inner] PATH\n");
        return 2;
    }
    zarr_array_t *array = open_array(argv[argc - 1]);
    uint64_t shape[3], unit[3];
    array_shape(array, shape);
    if (inner) {
        CHECK(zarr_array_chunk_shape(array, 3, unit));
    } else {
        object_shape(array, unit);
    }
    void *buf = alloc_or_exit((size_t)(unit[0] * unit[1] * unit[2]) * 2);
    for (uint64_t s0 = 0; s0 < shape[0]; s0 += unit[0]) {
        for (uint64_t s1 = 0; s1 < shape[1]; s1 += unit[1]) {
            for (uint64_t s2 = 0; s2 < shape[2]; s2 += unit[2]) {
                uint64_t start[3] = {s0, s1, s2};
                uint64_t count[3] = {unit[0] < shape[0] - s0 ? unit[0] : shape[0] - s0,
                                     unit[1] < shape[1] - s1 ? unit[1] : shape[1] - s1,
                                     unit[2] < shape[2] - s2 ? unit[2] : shape[2] - s2};
                size_t bytes = (size_t)(count[0] * count[1] * count[2]) * 2;
                CHECK(zarr_array_read(array, 3, start, count, ZARR_DTYPE_UINT16, ZARR_ORDER_C,
                                      buf, bytes));
            }
        }
    }
    free(buf);
    zarr_array_free(array);
    return 0;
}
