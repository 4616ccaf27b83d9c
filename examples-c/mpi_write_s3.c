/*
 * mpi_write_s3.c — MPI ranks writing one sharded Zarr v3 array in object storage (S3,
 * GCS, Azure; any URL zarr_store_open_url takes).
 *
 * Rank 0 creates a (time, y, x) float32 array of 1x16x16 chunks in 4x32x32 shards. Every
 * rank asks which shards the array holds (zarr_array_region_chunks), takes every size-th
 * of them, and writes each whole shard: one PUT per shard, no two ranks touching one, so
 * no synchronizer is needed. Rank 0 then appends four time steps by resizing; after a
 * barrier every rank re-reads the metadata (zarr_array_refresh) and writes its shards of
 * the new steps. Rank 0 consolidates the metadata and reads everything back.
 *
 * With "shared", ranks write column bands of 16 instead, so two ranks share every shard:
 * writes use ZARR_SYNC_VERSIONED (ETag-checked conditional PUTs, retried when another rank
 * changed the shard in between), and no update is lost.
 *
 * Usage: mpirun -np N mpi_write_s3 <store-url> <options-json|""> [owned|shared]
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zarr.h>

enum { NY = 64, NX = 64, STEPS = 4 };

static void check(zarr_status_t status, const char *what, int rank) {
    if (status != ZARR_OK) {
        char message[1024];
        zarr_last_error(message, sizeof message, NULL);
        fprintf(stderr, "rank %d: %s failed: %s: %s\n", rank, what, zarr_status_str(status),
                message);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
}

/* The value every cell must hold: its global index, encoded (exact in float32). */
static float expected(uint64_t t, uint64_t y, uint64_t x) {
    return (float)(t * 10000 + y * 100 + x);
}

/* Writes the block start/count with the values it must hold. */
static void write_block(zarr_array_t *array, const uint64_t start[3], const uint64_t count[3],
                        int rank) {
    size_t n = (size_t)(count[0] * count[1] * count[2]);
    float *block = malloc(sizeof(float) * (n ? n : 1));
    if (!block) MPI_Abort(MPI_COMM_WORLD, 1);
    size_t i = 0;
    for (uint64_t t = 0; t < count[0]; t++)
        for (uint64_t y = 0; y < count[1]; y++)
            for (uint64_t x = 0; x < count[2]; x++)
                block[i++] = expected(start[0] + t, start[1] + y, start[2] + x);
    check(zarr_array_write(array, 3, start, count, ZARR_DTYPE_FLOAT32, ZARR_ORDER_C, block,
                           sizeof(float) * n),
          "zarr_array_write", rank);
    free(block);
}

/* Writes this rank's part of time steps [t0, t0 + steps): its shards when `shared` is 0,
 * else its column bands of 16 (which every shard shares with another rank). */
static void write_steps(zarr_array_t *array, uint64_t t0, uint64_t steps, int shared,
                        int rank, int size) {
    if (shared) {
        for (uint64_t band = (uint64_t)rank; band < NX / 16; band += (uint64_t)size) {
            const uint64_t start[3] = {t0, 0, band * 16}, count[3] = {steps, NY, 16};
            write_block(array, start, count, rank);
        }
        return;
    }
    /* The shards the steps touch, in C order; this rank owns every size-th. */
    const uint64_t start[3] = {t0, 0, 0}, count[3] = {steps, NY, NX};
    size_t n = 0;
    zarr_status_t status = zarr_array_region_chunks(array, 3, start, count, NULL, 0, &n);
    if (status != ZARR_ERR_BUFFER_SIZE) check(status, "zarr_array_region_chunks", rank);
    uint64_t *shards = malloc(sizeof(uint64_t) * 3 * (n ? n : 1));
    if (!shards) MPI_Abort(MPI_COMM_WORLD, 1);
    check(zarr_array_region_chunks(array, 3, start, count, shards, n, &n),
          "zarr_array_region_chunks", rank);
    for (size_t s = (size_t)rank; s < n; s += (size_t)size) {
        uint64_t first[3], extent[3];
        check(zarr_array_chunk_region(array, 3, shards + 3 * s, first, extent),
              "zarr_array_chunk_region", rank);
        write_block(array, first, extent, rank);
    }
    free(shards);
}

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    int rank = 0, size = 1;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (argc < 3) {
        if (rank == 0)
            fprintf(stderr, "usage: mpi_write_s3 <store-url> <options-json|\"\"> [owned|shared]\n");
        MPI_Finalize();
        return 2;
    }
    const char *url = argv[1];
    const char *options = argv[2][0] ? argv[2] : NULL;
    int shared = argc > 3 && strcmp(argv[3], "shared") == 0;

    zarr_store_t *store = NULL;
    zarr_array_t *array = NULL;
    check(zarr_store_open_url(url, ZARR_MODE_A, options, &store), "zarr_store_open_url", rank);
    if (rank == 0) {
        const uint64_t shape[3] = {STEPS, NY, NX}, chunks[3] = {1, 16, 16},
                       shard[3] = {STEPS, 32, 32};
        zarr_array_builder_t *builder = NULL;
        check(zarr_array_builder_new(ZARR_DTYPE_FLOAT32, 3, shape, &builder), "builder", rank);
        check(zarr_array_builder_set_zarr_format(builder, 3), "format", rank);
        check(zarr_array_builder_set_chunk_shape(builder, 3, chunks), "chunks", rank);
        check(zarr_array_builder_set_shard_shape(builder, 3, shard), "shards", rank);
        check(zarr_array_builder_set_fill_value_json(builder, "\"NaN\""), "fill", rank);
        check(zarr_array_create(builder, store, "field", ZARR_MODE_W, &array), "create", rank);
        zarr_array_builder_free(builder);
        zarr_array_free(array);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    check(zarr_array_open(store, "field", ZARR_MODE_R_PLUS, &array), "zarr_array_open", rank);
    if (shared)
        check(zarr_array_set_synchronizer(array, ZARR_SYNC_VERSIONED, NULL), "synchronizer",
              rank);
    write_steps(array, 0, STEPS, shared, rank, size);
    MPI_Barrier(MPI_COMM_WORLD);

    /* Rank 0 appends STEPS time steps; the others see the new shape once it is written. */
    if (rank == 0) {
        const uint64_t grown[3] = {2 * STEPS, NY, NX};
        check(zarr_array_resize(array, 3, grown), "zarr_array_resize", rank);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    check(zarr_array_refresh(array), "zarr_array_refresh", rank);
    write_steps(array, STEPS, STEPS, shared, rank, size);
    MPI_Barrier(MPI_COMM_WORLD);

    int failures = 0;
    if (rank == 0) {
        check(zarr_consolidate_metadata(store, ""), "zarr_consolidate_metadata", rank);
        const uint64_t origin[3] = {0, 0, 0}, all_shape[3] = {2 * STEPS, NY, NX};
        size_t n = 2 * STEPS * NY * NX;
        float *all = malloc(sizeof(float) * n);
        if (!all) MPI_Abort(MPI_COMM_WORLD, 1);
        check(zarr_array_read(array, 3, origin, all_shape, ZARR_DTYPE_FLOAT32, ZARR_ORDER_C, all,
                              sizeof(float) * n),
              "zarr_array_read", rank);
        size_t i = 0;
        for (uint64_t t = 0; t < 2 * STEPS; t++)
            for (uint64_t y = 0; y < NY; y++)
                for (uint64_t x = 0; x < NX; x++) failures += all[i++] != expected(t, y, x);
        printf("mpi_write_s3: %d ranks, %s shards, shape %dx%dx%d: %s\n", size,
               shared ? "shared" : "owned", 2 * STEPS, NY, NX,
               failures ? "MISMATCH" : "verified");
        free(all);
    }
    zarr_array_free(array);
    zarr_store_free(store);
    MPI_Bcast(&failures, 1, MPI_INT, 0, MPI_COMM_WORLD);
    MPI_Finalize();
    return failures ? 1 : 0;
}
