/*
 * mpi_collective.c — a toy model appending a 2-D field per time step from every MPI rank
 * with the collective append of the MPI layer (zarr_mpi.h), into a CF-annotated dataset.
 *
 * The ranks form a 2-D process grid over (y, x) with uneven subdomains, as a load-balanced
 * model has them; the blocks do not line up with the chunks. Every step each rank computes
 * its block and calls zarr_mpi_append: rank 0 grows the array once, the blocks go to
 * aggregator ranks (two-phase I/O) and each stored object (here one shard per step, holding
 * four chunks) is written once, by one rank, with no lock. The time coordinate is appended
 * in the same way, with rank 0 giving the only block. At the end rank 0 consolidates the
 * metadata (for xarray) and reads everything back to check it.
 *
 * Usage: mpirun -np 4 mpi_collective [directory] [steps]     (default mpi_collective.zarr, 12)
 */
#include <math.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <zarr.h>
#include <zarr_mpi.h>

enum { NY = 90, NX = 180 };

/* Aborts the job on a failure; the layer's message names the rank at fault. */
static void check(zarr_status_t status, const char *what) {
    if (status != ZARR_OK) {
        char message[1024];
        zarr_mpi_last_error(message, sizeof message, NULL);
        fprintf(stderr, "%s failed: %s: %s\n", what, zarr_status_str(status), message);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
}

/* Rank 0's libzarr calls (not collective): on failure, libzarr's message. */
static void check0(zarr_status_t status, const char *what) {
    if (status != ZARR_OK) {
        char message[1024];
        zarr_last_error(message, sizeof message, NULL);
        fprintf(stderr, "%s failed: %s: %s\n", what, zarr_status_str(status), message);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
}

/* The model's field at step t: a wave travelling east over a meridional gradient. */
static float temperature(uint64_t t, uint64_t y, uint64_t x) {
    double lat = -89.0 + 2.0 * (double)y, lon = 1.0 * (double)x;
    return (float)(288.0 - 30.0 * sin(lat * 3.14159265358979 / 180.0) *
                               sin(lat * 3.14159265358979 / 180.0) +
                   5.0 * cos((lon - 15.0 * (double)t) * 3.14159265358979 / 90.0));
}

/* Part `p` of `parts` of [0, n), uneven: part p gets a share proportional to p + 2. */
static void split(uint64_t n, int parts, int p, uint64_t *start, uint64_t *count) {
    uint64_t total = 0, before = 0;
    for (int q = 0; q < parts; q++) {
        total += (uint64_t)q + 2;
        if (q < p) before += (uint64_t)q + 2;
    }
    *start = n * before / total;
    *count = n * (before + (uint64_t)p + 2) / total - *start;
}

/* A builder on rank 0 (NULL elsewhere: only rank 0 creates). */
static zarr_array_builder_t *builder(int rank, zarr_dtype_t dtype, size_t ndim,
                                     const uint64_t *shape, const uint64_t *chunks,
                                     const char *const *names, const char *attributes) {
    zarr_array_builder_t *b = NULL;
    if (rank != 0) return NULL;
    check0(zarr_array_builder_new(dtype, ndim, shape, &b), "zarr_array_builder_new");
    check0(zarr_array_builder_set_chunk_shape(b, ndim, chunks), "chunk shape");
    check0(zarr_array_builder_set_dimension_names(b, ndim, names), "dimension names");
    check0(zarr_array_builder_set_attributes_json(b, attributes), "attributes");
    return b;
}

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    int rank = 0, size = 1;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    const char *dir = argc > 1 ? argv[1] : "mpi_collective.zarr";
    uint64_t steps = argc > 2 ? strtoull(argv[2], NULL, 10) : 12;
    zarr_set_num_threads(1); /* ranks x threads within the cores */

    /* This rank's block of (y, x). */
    int dims[2] = {0, 0}, periods[2] = {0, 0}, coords[2];
    MPI_Comm grid;
    MPI_Dims_create(size, 2, dims);
    MPI_Cart_create(MPI_COMM_WORLD, 2, dims, periods, 0, &grid);
    MPI_Cart_coords(grid, rank, 2, coords);
    uint64_t start[3] = {0, 0, 0}, count[3] = {1, 0, 0};
    split(NY, dims[0], coords[0], &start[1], &count[1]);
    split(NX, dims[1], coords[1], &start[2], &count[2]);

    /* Every rank opens the store; rank 0 makes the root group, then the arrays are created
     * collectively (rank 0 writes the metadata, the others open). */
    zarr_store_t *store = NULL;
    zarr_group_t *root = NULL;
    check0(zarr_store_open_fs(dir, ZARR_MODE_A, &store), "zarr_store_open_fs");
    if (rank == 0) {
        check0(zarr_group_create_with_attrs(store, "", ZARR_MODE_W, 3,
                                            "{\"Conventions\": \"CF-1.10\", "
                                            "\"title\": \"toy model, collective output\"}",
                                            &root),
               "zarr_group_create_with_attrs");
        zarr_group_free(root);
    }
    const uint64_t field_shape[3] = {0, NY, NX}, field_chunks[3] = {1, NY / 2, NX / 2},
                   field_shards[3] = {1, NY, NX};
    const char *field_names[3] = {"time", "lat", "lon"};
    zarr_array_builder_t *b =
        builder(rank, ZARR_DTYPE_FLOAT32, 3, field_shape, field_chunks, field_names,
                "{\"standard_name\": \"air_temperature\", \"long_name\": \"air temperature\", "
                "\"units\": \"K\"}");
    /* One shard per step: each step is one stored object, written by one rank. */
    if (b) check0(zarr_array_builder_set_shard_shape(b, 3, field_shards), "shard shape");
    zarr_array_t *field = NULL, *time = NULL, *lat = NULL, *lon = NULL;
    check(zarr_mpi_array_create(MPI_COMM_WORLD, b, store, "tas", ZARR_MODE_W, &field),
          "create tas");
    zarr_array_builder_free(b);
    const uint64_t time_shape[1] = {0}, time_chunks[1] = {1024};
    const char *time_names[1] = {"time"};
    b = builder(rank, ZARR_DTYPE_FLOAT64, 1, time_shape, time_chunks, time_names,
                "{\"standard_name\": \"time\", \"units\": \"hours since 2000-01-01 00:00:00\", "
                "\"calendar\": \"standard\", \"axis\": \"T\"}");
    check(zarr_mpi_array_create(MPI_COMM_WORLD, b, store, "time", ZARR_MODE_W, &time),
          "create time");
    zarr_array_builder_free(b);

    /* The coordinates of lat and lon, written by rank 0 (the others give empty blocks). */
    const uint64_t lat_shape[1] = {NY}, lon_shape[1] = {NX};
    const char *lat_names[1] = {"lat"}, *lon_names[1] = {"lon"};
    b = builder(rank, ZARR_DTYPE_FLOAT64, 1, lat_shape, lat_shape, lat_names,
                "{\"standard_name\": \"latitude\", \"units\": \"degrees_north\", \"axis\": \"Y\"}");
    check(zarr_mpi_array_create(MPI_COMM_WORLD, b, store, "lat", ZARR_MODE_W, &lat), "create lat");
    zarr_array_builder_free(b);
    b = builder(rank, ZARR_DTYPE_FLOAT64, 1, lon_shape, lon_shape, lon_names,
                "{\"standard_name\": \"longitude\", \"units\": \"degrees_east\", \"axis\": \"X\"}");
    check(zarr_mpi_array_create(MPI_COMM_WORLD, b, store, "lon", ZARR_MODE_W, &lon), "create lon");
    zarr_array_builder_free(b);
    double lats[NY], lons[NX];
    for (int i = 0; i < NY; i++) lats[i] = -89.0 + 2.0 * i;
    for (int i = 0; i < NX; i++) lons[i] = 1.0 * i;
    const uint64_t zero[1] = {0}, ny[1] = {rank == 0 ? NY : 0}, nx[1] = {rank == 0 ? NX : 0};
    check(zarr_mpi_write(MPI_COMM_WORLD, lat, 1, zero, ny, ZARR_DTYPE_FLOAT64, ZARR_ORDER_C, lats,
                         sizeof(double) * ny[0]),
          "write lat");
    check(zarr_mpi_write(MPI_COMM_WORLD, lon, 1, zero, nx, ZARR_DTYPE_FLOAT64, ZARR_ORDER_C, lons,
                         sizeof(double) * nx[0]),
          "write lon");

    /* The time loop: compute the block, append it collectively, with the step's time. */
    size_t n = (size_t)(count[1] * count[2]);
    float *block = malloc(sizeof(float) * (n ? n : 1));
    if (!block) MPI_Abort(MPI_COMM_WORLD, 1);
    uint64_t objects = 0;
    for (uint64_t t = 0; t < steps; t++) {
        for (uint64_t y = 0; y < count[1]; y++)
            for (uint64_t x = 0; x < count[2]; x++)
                block[y * count[2] + x] = temperature(t, start[1] + y, start[2] + x);
        check(zarr_mpi_append(MPI_COMM_WORLD, field, 0, 3, start, count, ZARR_DTYPE_FLOAT32,
                              ZARR_ORDER_C, block, sizeof(float) * n),
              "append tas");
        zarr_mpi_stats_t stats;
        check(zarr_mpi_last_stats(&stats), "stats");
        objects += stats.objects;
        double hours = 6.0 * (double)t;
        const uint64_t one[1] = {rank == 0 ? 1 : 0};
        check(zarr_mpi_append(MPI_COMM_WORLD, time, 0, 1, zero, one, ZARR_DTYPE_FLOAT64,
                              ZARR_ORDER_C, &hours, sizeof(double) * one[0]),
              "append time");
    }
    free(block);

    /* Rank 0 consolidates the metadata and checks every value. */
    int failures = 0;
    if (rank == 0) {
        check0(zarr_consolidate_metadata(store, ""), "zarr_consolidate_metadata");
        uint64_t shape[3];
        check0(zarr_array_shape(field, 3, shape), "shape");
        float *all = malloc(sizeof(float) * (size_t)(steps * NY * NX) + 1);
        double *times = malloc(sizeof(double) * (size_t)steps + 1);
        if (!all || !times) MPI_Abort(MPI_COMM_WORLD, 1);
        const uint64_t origin[3] = {0, 0, 0};
        check0(zarr_array_read(field, 3, origin, shape, ZARR_DTYPE_FLOAT32, ZARR_ORDER_C, all,
                               sizeof(float) * (size_t)(steps * NY * NX)),
               "read tas");
        check0(zarr_array_read(time, 1, origin, &steps, ZARR_DTYPE_FLOAT64, ZARR_ORDER_C, times,
                               sizeof(double) * (size_t)steps),
               "read time");
        failures += shape[0] != steps;
        for (uint64_t t = 0; t < steps; t++) {
            failures += times[t] != 6.0 * (double)t;
            for (uint64_t y = 0; y < NY; y++)
                for (uint64_t x = 0; x < NX; x++)
                    failures += all[(t * NY + y) * NX + x] != temperature(t, y, x);
        }
        printf("mpi_collective: %d ranks (%dx%d, uneven), %llu steps of %d x %d, %.1f stored "
               "objects per step: %s\n",
               size, dims[0], dims[1], (unsigned long long)steps, NY, NX,
               steps ? (double)objects / (double)steps : 0.0, failures ? "MISMATCH" : "verified");
        free(all);
        free(times);
    }
    zarr_array_free(field);
    zarr_array_free(time);
    zarr_array_free(lat);
    zarr_array_free(lon);
    zarr_store_free(store);
    MPI_Bcast(&failures, 1, MPI_INT, 0, MPI_COMM_WORLD);
    MPI_Comm_free(&grid);
    MPI_Finalize();
    return failures ? 1 : 0;
}
