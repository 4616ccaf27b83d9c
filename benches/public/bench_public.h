/* What the programs of benches/public share: an exit on any libzarr error naming the call,
 * and the shape of the benchmark arrays. */
#ifndef BENCH_PUBLIC_H
#define BENCH_PUBLIC_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "zarr.h"

/** Exits with status 1 and libzarr's message when `call` does not return ZARR_OK. */
#define CHECK(call)                                                                    \
    do {                                                                               \
        zarr_status_t status_ = (call);                                                \
        if (status_ != ZARR_OK) {                                                      \
            char message_[1024] = "";                                                  \
            zarr_last_error(message_, sizeof message_, NULL);                          \
            fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #call, message_);  \
            exit(1);                                                                   \
        }                                                                              \
    } while (0)

/** Opens the array at the root of the directory `path` read-only. */
static inline zarr_array_t *open_array(const char *path) {
    zarr_store_t *store = NULL;
    zarr_array_t *array = NULL;
    CHECK(zarr_store_open_fs(path, ZARR_MODE_R, &store));
    CHECK(zarr_array_open(store, "", ZARR_MODE_R, &array));
    zarr_store_free(store);
    return array;
}

/** Sets `out[0..3]` to the array's shape. */
static inline void array_shape(const zarr_array_t *array, uint64_t out[3]) {
    CHECK(zarr_array_shape(array, 3, out));
}

/** Sets `out[0..3]` to the shape of the array's stored objects: its shards when sharded,
 * else its chunks (what zarr_benchmarks reads "chunk by chunk"). */
static inline void object_shape(const zarr_array_t *array, uint64_t out[3]) {
    if (zarr_array_shard_shape(array, 3, out) != ZARR_OK) {
        CHECK(zarr_array_chunk_shape(array, 3, out));
    }
}

/** Allocates `bytes` bytes or exits naming the size. */
static inline void *alloc_or_exit(size_t bytes) {
    void *buf = malloc(bytes);
    if (buf == NULL) {
        fprintf(stderr, "out of memory allocating %zu bytes\n", bytes);
        exit(1);
    }
    return buf;
}

#endif
