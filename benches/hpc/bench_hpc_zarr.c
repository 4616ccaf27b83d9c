/*
 * libzarr side of scripts/bench-hpc.sh: every rank writes its block of each step as one
 * chunk of a (time, z, y, x) float32 array in a directory store (no synchronizer: no two
 * ranks share a chunk), through the C API, blocking or non-blocking; then reads
 * everything back and checks it bit for bit.
 *
 *   mpirun -n N bench_hpc_zarr OUT.zarr blocking|nonblocking|collective none|blosc|zlib STEPS NZ NY NX
 *
 * Codecs: none; blosc, the default compressor (zstd level 1, byte shuffle); zlib level 1
 * after the shuffle filter (what netCDF-4's zlib + shuffle does). Each rank uses
 * cores / ranks worker threads (at least one). The store does not sync at close
 * (ZARR_DURABILITY_NONE), as HDF5 does not.
 *
 * Non-blocking: each step is submitted with zarr_array_write_async from one of two buffers,
 * then the rank computes the next step: a busy loop as long as encoding one step takes
 * (measured first by writing steps to a memory store), so output may overlap it. The
 * output time is then what the rank spends in the submit and wait calls.
 *
 * Collective: the array starts empty, sharded one shard per step (inner chunks as above),
 * and every step is appended with the MPI layer's zarr_mpi_append (zarr_mpi.h): the blocks
 * go to aggregators, which write each shard once; one file per step instead of one per
 * rank.
 */
#include "field.h"

#include <unistd.h>
#include <zarr.h>
#include <zarr_mpi.h>

/* Stops every rank on a libzarr error, naming the call and giving libzarr's message. */
static void z_check(zarr_status_t status, const char *call) {
    if (status == ZARR_OK)
        return;
    char message[1024] = "";
    size_t needed = 0;
    zarr_last_error(message, sizeof message, &needed);
    fprintf(stderr, "%s: %s\n", call, message);
    MPI_Abort(MPI_COMM_WORLD, 1);
}
#define Z(call) z_check((call), #call)

/* The builder of the (time, z, y, x) array, chunked one block per rank; `collective`:
 * no steps yet, and one shard per step. */
static zarr_array_builder_t *builder(const struct run *r, int collective) {
    uint64_t shape[4] = {collective ? 0 : (uint64_t)r->steps, r->nz, r->ny, r->nx};
    uint64_t chunks[4] = {1, r->nz, r->ny_rank, r->nx}, shards[4] = {1, r->nz, r->ny, r->nx};
    zarr_array_builder_t *b = NULL;
    Z(zarr_array_builder_new(ZARR_DTYPE_FLOAT32, 4, shape, &b));
    Z(zarr_array_builder_set_chunk_shape(b, 4, chunks));
    if (collective)
        Z(zarr_array_builder_set_shard_shape(b, 4, shards));
    if (strcmp(r->codec, "none") == 0) {
        Z(zarr_array_builder_set_compressor_json(b, "null"));
    } else if (strcmp(r->codec, "zlib") == 0) {
        Z(zarr_array_builder_set_filters_json(b, "[{\"id\": \"shuffle\", \"elementsize\": 4}]"));
        Z(zarr_array_builder_set_compressor_json(b, "{\"id\": \"zlib\", \"level\": 1}"));
    } else if (strcmp(r->codec, "blosc") != 0) {
        fprintf(stderr, "unknown codec %s (none, blosc, zlib)\n", r->codec);
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    return b;
}

/* Creates the (time, z, y, x) array at `path` of `store`, chunked one block per rank. */
static zarr_array_t *create(const struct run *r, zarr_store_t *store) {
    zarr_array_builder_t *b = builder(r, 0);
    zarr_array_t *a = NULL;
    Z(zarr_array_create(b, store, "temperature", ZARR_MODE_W, &a));
    zarr_array_builder_free(b);
    return a;
}

/* A failure of the MPI layer: every rank has the same message, naming the rank at fault. */
static void m_check(zarr_status_t status, const char *call) {
    if (status == ZARR_OK)
        return;
    char message[1024] = "";
    zarr_mpi_last_error(message, sizeof message, NULL);
    fprintf(stderr, "%s: %s\n", call, message);
    MPI_Abort(MPI_COMM_WORLD, 1);
}
#define M(call) m_check((call), #call)

/* Writes this rank's block of step `t` (blocking). */
static void write_step(const struct run *r, zarr_array_t *a, int t, const float *buf) {
    uint64_t start[4] = {(uint64_t)t, 0, r->y0, 0}, count[4] = {1, r->nz, r->ny_rank, r->nx};
    Z(zarr_array_write(a, 4, start, count, ZARR_DTYPE_FLOAT32, ZARR_ORDER_C, buf,
                       r->block * sizeof(float)));
}

/* Seconds that encoding one block takes: the mean of writes to an array in memory. */
static double encoding_seconds(const struct run *r, const float *buf) {
    zarr_store_t *memory = NULL;
    Z(zarr_store_new_memory(&memory));
    struct run one = *r;
    one.ranks = 1;
    one.rank = 0;
    one.y0 = 0;
    one.ny = r->ny_rank;
    one.steps = 4;
    zarr_array_t *a = create(&one, memory);
    write_step(&one, a, 0, buf); /* warm-up */
    double s = MPI_Wtime();
    for (int t = 1; t < one.steps; t++)
        write_step(&one, a, t, buf);
    double seconds = (MPI_Wtime() - s) / (one.steps - 1);
    zarr_array_free(a);
    zarr_store_free(memory);
    return seconds;
}

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    struct run r;
    run_init(&r, argc, argv);
    int nonblocking = strcmp(r.mode, "nonblocking") == 0;
    int collective = strcmp(r.mode, "collective") == 0;
    long cores = sysconf(_SC_NPROCESSORS_ONLN);
    size_t threads = cores > r.ranks ? (size_t)(cores / r.ranks) : 1;
    Z(zarr_set_num_threads(threads));
    float *bufs[2] = {malloc(r.block * sizeof(float)), malloc(r.block * sizeof(float))};
    float *scratch = malloc(r.block * sizeof(float));
    if (!bufs[0] || !bufs[1] || !scratch)
        MPI_Abort(MPI_COMM_WORLD, 1);
    double compute = 0;
    if (nonblocking) {
        fill_step(&r, 0, bufs[0]);
        compute = max_over_ranks(encoding_seconds(&r, bufs[0]));
    }

    MPI_Barrier(MPI_COMM_WORLD);
    double t0 = MPI_Wtime(), output = 0;
    zarr_store_t *store = NULL;
    zarr_array_t *a = NULL;
    Z(zarr_store_open_fs(r.path, ZARR_MODE_A, &store));
    Z(zarr_store_set_durability(store, ZARR_DURABILITY_NONE));
    if (collective) {
        zarr_array_builder_t *b = r.rank == 0 ? builder(&r, 1) : NULL;
        M(zarr_mpi_array_create(MPI_COMM_WORLD, b, store, "temperature", ZARR_MODE_W, &a));
        zarr_array_builder_free(b);
    } else {
        if (r.rank == 0)
            a = create(&r, store);
        MPI_Barrier(MPI_COMM_WORLD);
        if (r.rank != 0)
            Z(zarr_array_open(store, "temperature", ZARR_MODE_R_PLUS, &a));
    }
    double loop = MPI_Wtime();
    zarr_request_t *pending[2] = {NULL, NULL};
    for (int t = 0; t < r.steps; t++) {
        float *buf = bufs[t % 2];
        if (pending[t % 2]) {
            /* The buffer's previous step (t - 2) must be stored before it is refilled. */
            double s = MPI_Wtime();
            Z(zarr_request_wait(pending[t % 2]));
            zarr_request_free(pending[t % 2]);
            pending[t % 2] = NULL;
            output += MPI_Wtime() - s;
        }
        fill_step(&r, t, buf);
        double s = MPI_Wtime();
        if (collective) {
            uint64_t start[4] = {0, 0, r.y0, 0}, count[4] = {1, r.nz, r.ny_rank, r.nx};
            M(zarr_mpi_append(MPI_COMM_WORLD, a, 0, 4, start, count, ZARR_DTYPE_FLOAT32,
                              ZARR_ORDER_C, buf, r.block * sizeof(float)));
        } else if (nonblocking) {
            uint64_t start[4] = {(uint64_t)t, 0, r.y0, 0};
            uint64_t count[4] = {1, r.nz, r.ny_rank, r.nx};
            Z(zarr_array_write_async(a, 4, start, count, ZARR_DTYPE_FLOAT32, ZARR_ORDER_C, buf,
                                     r.block * sizeof(float), 0, &pending[t % 2]));
        } else {
            write_step(&r, a, t, buf);
        }
        output += MPI_Wtime() - s;
        if (nonblocking)
            busy(compute);
    }
    double s = MPI_Wtime();
    if (nonblocking) {
        Z(zarr_request_wait_all(pending, 2));
        zarr_request_free(pending[0]);
        zarr_request_free(pending[1]);
    }
    zarr_array_free(a);
    Z(zarr_store_close(store));
    zarr_store_free(store);
    output += MPI_Wtime() - s;
    double loop_seconds = MPI_Wtime() - loop;
    MPI_Barrier(MPI_COMM_WORLD);
    double wall = max_over_ranks(MPI_Wtime() - t0);
    double wait_fraction = nonblocking ? max_over_ranks(output / loop_seconds) : -1;
    output = max_over_ranks(output);

    /* Read-back: every rank its own blocks, every value exact. */
    size_t bad = 0;
    Z(zarr_store_open_fs(r.path, ZARR_MODE_R, &store));
    Z(zarr_array_open(store, "temperature", ZARR_MODE_R, &a));
    for (int t = 0; t < r.steps; t++) {
        uint64_t start[4] = {(uint64_t)t, 0, r.y0, 0}, count[4] = {1, r.nz, r.ny_rank, r.nx};
        Z(zarr_array_read(a, 4, start, count, ZARR_DTYPE_FLOAT32, ZARR_ORDER_C, bufs[0],
                          r.block * sizeof(float)));
        bad += check_step(&r, t, bufs[0], scratch);
    }
    zarr_array_free(a);
    zarr_store_free(store);
    unsigned long long total = 0, mine = bad;
    MPI_Allreduce(&mine, &total, 1, MPI_UNSIGNED_LONG_LONG, MPI_SUM, MPI_COMM_WORLD);
    print_row(&r, "libzarr", wall, output, nonblocking ? compute : -1, wait_fraction,
              (size_t)total);
    free(bufs[0]);
    free(bufs[1]);
    free(scratch);
    free(r.base);
    MPI_Finalize();
    return total != 0;
}
