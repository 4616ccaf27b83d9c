/*
 * mpi_rectilinear.c — uneven subdomains written as one Zarr array, one chunk per MPI rank.
 *
 * The ranks form a 2-D process grid whose subdomains differ in size (as a load-balanced
 * decomposition makes them). The array gets a rectilinear chunk grid (Zarr v3) whose edges
 * are the subdomains' extents, so each rank's block is exactly one chunk: every write
 * covers its chunk whole, so nothing is read back and merged, and no synchronizer is
 * needed. Rank 0 creates the array; after a barrier every rank checks that its block is
 * one chunk and writes it; rank 0 then reads the whole array back and checks it.
 *
 * Usage: mpirun -np N mpi_rectilinear <directory>
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <zarr.h>

static void check(zarr_status_t status, const char *what, int rank) {
    if (status != ZARR_OK) {
        char message[512];
        zarr_last_error(message, sizeof message, NULL);
        fprintf(stderr, "rank %d: %s failed: %s: %s\n", rank, what, zarr_status_str(status),
                message);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
}

/* The value every cell must hold: its global index, encoded. */
static double expected(uint64_t i, uint64_t j) { return (double)i * 1e4 + (double)j; }

/* The extent of subdomain `c` along a dimension: uneven on purpose. */
static uint64_t extent(int dim, int c) {
    return dim == 0 ? 10 + 7 * (uint64_t)c : 6 + 5 * (uint64_t)c;
}

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    int rank = 0, size = 1;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (argc < 2) {
        if (rank == 0) fprintf(stderr, "usage: mpi_rectilinear <directory>\n");
        MPI_Finalize();
        return 2;
    }
    int dims[2] = {0, 0}, periods[2] = {0, 0}, coords[2];
    MPI_Dims_create(size, 2, dims);
    MPI_Comm cart;
    MPI_Cart_create(MPI_COMM_WORLD, 2, dims, periods, 0, &cart);
    MPI_Cart_coords(cart, rank, 2, coords);

    /* Every subdomain's extents are the grid's edges; this rank's block starts after the
     * subdomains before it. */
    uint64_t *edges[2], shape[2] = {0, 0}, start[2] = {0, 0}, block[2];
    for (int d = 0; d < 2; d++) {
        edges[d] = malloc(sizeof(uint64_t) * (size_t)dims[d]);
        if (!edges[d]) MPI_Abort(MPI_COMM_WORLD, 1);
        for (int c = 0; c < dims[d]; c++) {
            edges[d][c] = extent(d, c);
            if (c < coords[d]) start[d] += edges[d][c];
            shape[d] += edges[d][c];
        }
        block[d] = extent(d, coords[d]);
    }

    zarr_store_t *store = NULL;
    zarr_array_t *array = NULL;
    check(zarr_store_open_fs(argv[1], ZARR_MODE_A, &store), "zarr_store_open_fs", rank);
    if (rank == 0) {
        zarr_array_builder_t *builder = NULL;
        check(zarr_array_builder_new(ZARR_DTYPE_FLOAT64, 2, shape, &builder), "builder", rank);
        check(zarr_array_builder_set_zarr_format(builder, 3), "format", rank);
        for (int d = 0; d < 2; d++)
            check(zarr_array_builder_set_chunk_edges(builder, (size_t)d, edges[d],
                                                     (size_t)dims[d]),
                  "chunk edges", rank);
        check(zarr_array_builder_set_fill_value_json(builder, "\"NaN\""), "fill", rank);
        check(zarr_array_create(builder, store, "field", ZARR_MODE_W, &array), "create", rank);
        zarr_array_builder_free(builder);
        zarr_array_free(array);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    check(zarr_array_open(store, "field", ZARR_MODE_R_PLUS, &array), "zarr_array_open", rank);

    /* The block is exactly the chunk at this rank's grid coordinates. */
    uint64_t chunk[2], chunk_start[2], chunk_count[2];
    size_t touched = 0;
    check(zarr_array_region_chunks(array, 2, start, block, chunk, 1, &touched),
          "zarr_array_region_chunks", rank);
    check(zarr_array_chunk_region(array, 2, chunk, chunk_start, chunk_count),
          "zarr_array_chunk_region", rank);
    int own = touched == 1 && chunk[0] == (uint64_t)coords[0] &&
              chunk[1] == (uint64_t)coords[1];
    for (int d = 0; d < 2; d++)
        own = own && chunk_start[d] == start[d] && chunk_count[d] == block[d];
    if (!own) {
        fprintf(stderr, "rank %d: its block is not one chunk of the grid\n", rank);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }

    double *local = malloc(sizeof(double) * block[0] * block[1]);
    if (!local) MPI_Abort(MPI_COMM_WORLD, 1);
    for (uint64_t i = 0; i < block[0]; i++)
        for (uint64_t j = 0; j < block[1]; j++)
            local[i * block[1] + j] = expected(start[0] + i, start[1] + j);
    check(zarr_array_write(array, 2, start, block, ZARR_DTYPE_FLOAT64, ZARR_ORDER_C, local,
                           sizeof(double) * block[0] * block[1]),
          "zarr_array_write", rank);
    free(local);
    MPI_Barrier(MPI_COMM_WORLD);

    int failures = 0;
    if (rank == 0) {
        size_t n = (size_t)(shape[0] * shape[1]);
        double *all = malloc(sizeof(double) * n);
        const uint64_t origin[2] = {0, 0};
        if (!all) MPI_Abort(MPI_COMM_WORLD, 1);
        check(zarr_array_read(array, 2, origin, shape, ZARR_DTYPE_FLOAT64, ZARR_ORDER_C, all,
                              sizeof(double) * n),
              "zarr_array_read", rank);
        for (uint64_t i = 0; i < shape[0]; i++)
            for (uint64_t j = 0; j < shape[1]; j++)
                failures += all[i * shape[1] + j] != expected(i, j);
        uint64_t nchunks = 0, initialized = 0;
        check(zarr_array_nchunks(array, &nchunks), "zarr_array_nchunks", rank);
        check(zarr_array_nchunks_initialized(array, &initialized), "nchunks_initialized", rank);
        failures += nchunks != (uint64_t)size || initialized != (uint64_t)size;
        printf("mpi_rectilinear: %d ranks (%dx%d), one uneven chunk each, shape %llux%llu: %s\n",
               size, dims[0], dims[1], (unsigned long long)shape[0],
               (unsigned long long)shape[1], failures ? "MISMATCH" : "verified");
        free(all);
    }
    free(edges[0]);
    free(edges[1]);
    zarr_array_free(array);
    zarr_store_free(store);
    MPI_Bcast(&failures, 1, MPI_INT, 0, MPI_COMM_WORLD);
    MPI_Comm_free(&cart);
    MPI_Finalize();
    return failures ? 1 : 0;
}
