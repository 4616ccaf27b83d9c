/*
 * mpi_write.c — a 3-D domain decomposition writing one Zarr array from every MPI rank.
 *
 * Each rank owns a block of the global grid and keeps it in memory with a one-cell halo
 * (as a stencil code would); it writes only the interior, straight from the haloed buffer,
 * through zarr_array_write_strided. Rank 0 creates the array; after a barrier every rank
 * opens it and writes its block; rank 0 then reads the whole array back and checks it.
 *
 * Usage: mpirun -np N mpi_write <directory> [aligned|unaligned]
 *   aligned    blocks are whole chunks: no two ranks touch one chunk, no locking needed.
 *   unaligned  blocks straddle chunks: ranks share chunks, so writes are synchronised with
 *              per-chunk lock files in <directory>.locks (ZARR_SYNC_PROCESS).
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
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
static double expected(uint64_t i, uint64_t j, uint64_t k) {
    return (double)i * 1e6 + (double)j * 1e3 + (double)k;
}

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    int rank = 0, size = 1;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (argc < 2) {
        if (rank == 0) fprintf(stderr, "usage: mpi_write <directory> [aligned|unaligned]\n");
        MPI_Finalize();
        return 2;
    }
    const char *dir = argv[1];
    int aligned = argc < 3 || strcmp(argv[2], "unaligned") != 0;

    int dims[3] = {0, 0, 0}, periods[3] = {0, 0, 0}, coords[3];
    MPI_Dims_create(size, 3, dims);
    MPI_Comm cart;
    MPI_Cart_create(MPI_COMM_WORLD, 3, dims, periods, 0, &cart);
    MPI_Cart_coords(cart, rank, 3, coords);

    /* Block sizes: whole chunks when aligned, odd sizes straddling chunks otherwise. */
    const uint64_t block[3] = {aligned ? 16 : 15, aligned ? 12 : 11, aligned ? 10 : 9};
    const uint64_t chunks[3] = {aligned ? 16 : 8, aligned ? 12 : 8, aligned ? 10 : 8};
    const uint64_t shape[3] = {block[0] * dims[0], block[1] * dims[1], block[2] * dims[2]};

    zarr_store_t *store = NULL;
    zarr_array_t *array = NULL;
    check(zarr_store_open_fs(dir, ZARR_MODE_A, &store), "zarr_store_open_fs", rank);
    if (rank == 0) {
        zarr_array_builder_t *builder = NULL;
        check(zarr_array_builder_new(ZARR_DTYPE_FLOAT64, 3, shape, &builder), "builder", rank);
        check(zarr_array_builder_set_chunk_shape(builder, 3, chunks), "chunks", rank);
        check(zarr_array_builder_set_fill_value_json(builder, "\"NaN\""), "fill", rank);
        check(zarr_array_create(builder, store, "field", ZARR_MODE_W, &array), "create", rank);
        zarr_array_builder_free(builder);
        zarr_array_free(array);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    check(zarr_array_open(store, "field", ZARR_MODE_R_PLUS, &array), "zarr_array_open", rank);
    if (!aligned) {
        char lock_dir[4096];
        snprintf(lock_dir, sizeof lock_dir, "%s.locks", dir);
        check(zarr_array_set_synchronizer(array, ZARR_SYNC_PROCESS, lock_dir), "synchronizer",
              rank);
    }

    /* The local block with a one-cell halo on every side; the halo holds garbage. */
    const uint64_t hx = block[0] + 2, hy = block[1] + 2, hz = block[2] + 2;
    double *local = malloc(sizeof(double) * hx * hy * hz);
    if (!local) MPI_Abort(MPI_COMM_WORLD, 1);
    for (uint64_t n = 0; n < hx * hy * hz; n++) local[n] = -1e300;
    uint64_t start[3];
    for (int d = 0; d < 3; d++) start[d] = (uint64_t)coords[d] * block[d];
    for (uint64_t i = 0; i < block[0]; i++)
        for (uint64_t j = 0; j < block[1]; j++)
            for (uint64_t k = 0; k < block[2]; k++)
                local[((i + 1) * hy + (j + 1)) * hz + (k + 1)] =
                    expected(start[0] + i, start[1] + j, start[2] + k);

    /* Interior only: start at (1,1,1) of the haloed buffer, step over the halo. */
    const int64_t strides[3] = {(int64_t)(hy * hz), (int64_t)hz, 1};
    const size_t offset = (size_t)((1 * hy + 1) * hz + 1);
    check(zarr_array_write_strided(array, 3, start, block, strides, ZARR_DTYPE_FLOAT64,
                                   local + offset, sizeof(double) * (hx * hy * hz - offset)),
          "zarr_array_write_strided", rank);
    free(local);
    MPI_Barrier(MPI_COMM_WORLD);

    int failures = 0;
    if (rank == 0) {
        size_t n = (size_t)(shape[0] * shape[1] * shape[2]);
        double *all = malloc(sizeof(double) * n);
        const uint64_t origin[3] = {0, 0, 0};
        if (!all) MPI_Abort(MPI_COMM_WORLD, 1);
        check(zarr_array_read(array, 3, origin, shape, ZARR_DTYPE_FLOAT64, ZARR_ORDER_C, all,
                              sizeof(double) * n),
              "zarr_array_read", rank);
        for (uint64_t i = 0; i < shape[0]; i++)
            for (uint64_t j = 0; j < shape[1]; j++)
                for (uint64_t k = 0; k < shape[2]; k++)
                    failures += all[(i * shape[1] + j) * shape[2] + k] != expected(i, j, k);
        printf("mpi_write: %d ranks (%dx%dx%d), %s blocks, shape %llux%llux%llu: %s\n", size,
               dims[0], dims[1], dims[2], aligned ? "aligned" : "unaligned",
               (unsigned long long)shape[0], (unsigned long long)shape[1],
               (unsigned long long)shape[2], failures ? "MISMATCH" : "verified");
        free(all);
    }
    zarr_array_free(array);
    zarr_store_free(store);
    MPI_Bcast(&failures, 1, MPI_INT, 0, MPI_COMM_WORLD);
    MPI_Comm_free(&cart);
    MPI_Finalize();
    return failures ? 1 : 0;
}
