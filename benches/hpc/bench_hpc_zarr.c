/*
 * libzarr side of scripts/bench-hpc.sh: every rank writes its block of each step of a
 * (time, z, y, x) float32 array in a directory store through the C API, in one of the
 * patterns below; then reads everything back and checks it bit for bit.
 *
 *   mpirun -n N bench_hpc_zarr OUT.zarr MODE none|blosc|zlib STEPS NZ NY NX
 *
 * The ranks' blocks are uneven and their boundaries do not line up with the chunks of the
 * shared layouts (field.h). Modes:
 *
 * - blocking: each rank's block of a step is a chunk of its own (a rectilinear chunk grid
 *   whose y edges are the blocks), written with zarr_array_write; no two ranks share a
 *   chunk, so no synchronizer; one file per rank per step.
 * - nonblocking: the same with zarr_array_write_async from one of two buffers, then the
 *   rank computes the next step: a busy loop as long as encoding one step takes (measured
 *   first by writing steps to a memory store), so output may overlap it. The output time
 *   is then what the rank spends in the submit and wait calls.
 * - band-append: the array grows by a step at a time as the guides' second pattern does:
 *   rank 0 resizes it, a barrier, the others refresh their handle, every rank writes its
 *   band (chunks as in blocking).
 * - gather: the guides' first pattern: MPI_Gatherv of the blocks to rank 0, which lays
 *   them out as the step and appends it (zarr_array_append_async, two buffers in turn)
 *   into an array sharded one shard per step of inner chunks nz x ny / 4 x nx.
 * - collective-write: the MPI layer's zarr_mpi_write of each step into an array of every
 *   step, chunks nz x ny / 4 x nx shared by the ranks (zarr_mpi.h: two-phase I/O).
 * - collective: the MPI layer's zarr_mpi_append of each step into the array of gather
 *   (one shard per step): the blocks go to aggregators, which write each shard once.
 *
 * Codecs: none; blosc, the default compressor (zstd level 1, byte shuffle); zlib level 1
 * after the shuffle filter (what netCDF-4's zlib + shuffle does). Each rank uses
 * cores / ranks worker threads (at least one). The store does not sync at close
 * (ZARR_DURABILITY_NONE), as HDF5 does not.
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

/* The layouts of the modes (see the header comment). */
enum layout { OWN_CHUNKS, SHARED_CHUNKS, SHARD_PER_STEP };

/* The builder of the (time, z, y, x) array in `layout`, `steps` long (0 to append to). */
static zarr_array_builder_t *builder(const struct run *r, enum layout layout, uint64_t steps) {
    uint64_t shape[4] = {steps, r->nz, r->ny, r->nx};
    uint64_t chunks[4] = {1, r->nz, r->chunk_y, r->nx}, shards[4] = {1, r->nz, r->ny, r->nx};
    zarr_array_builder_t *b = NULL;
    Z(zarr_array_builder_new(ZARR_DTYPE_FLOAT32, 4, shape, &b));
    Z(zarr_array_builder_set_chunk_shape(b, 4, chunks));
    if (layout == SHARD_PER_STEP)
        Z(zarr_array_builder_set_shard_shape(b, 4, shards));
    if (layout == OWN_CHUNKS) {
        /* One chunk edge along y per rank: its block. */
        uint64_t *edges = malloc(sizeof *edges * (size_t)r->ranks);
        if (!edges)
            MPI_Abort(MPI_COMM_WORLD, 1);
        for (int q = 0; q < r->ranks; q++)
            edges[q] = y_start((size_t)q + 1, (size_t)r->ranks, r->ny) -
                       y_start((size_t)q, (size_t)r->ranks, r->ny);
        Z(zarr_array_builder_set_chunk_edges(b, 2, edges, (size_t)r->ranks));
        free(edges);
    }
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

/* Creates the array at `path` of `store` (one rank). */
static zarr_array_t *create(const struct run *r, zarr_store_t *store, enum layout layout,
                            uint64_t steps) {
    zarr_array_builder_t *b = builder(r, layout, steps);
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
    zarr_array_t *a = create(&one, memory, OWN_CHUNKS, (uint64_t)one.steps);
    write_step(&one, a, 0, buf); /* warm-up */
    double s = MPI_Wtime();
    for (int t = 1; t < one.steps; t++)
        write_step(&one, a, t, buf);
    double seconds = (MPI_Wtime() - s) / (one.steps - 1);
    zarr_array_free(a);
    zarr_store_free(memory);
    return seconds;
}

/* Waits for the request of buffer `slot` (its previous step, two steps back) and frees it,
 * so that the buffer can be refilled. */
static void free_slot(zarr_request_t **pending, int slot) {
    if (!pending[slot])
        return;
    Z(zarr_request_wait(pending[slot]));
    zarr_request_free(pending[slot]);
    pending[slot] = NULL;
}

/* The guides' first pattern, rank 0's side of a step: gathers the blocks into `staging`,
 * lays them out in `step` (C order: each rank's rows of every z) and submits its append. */
struct gather {
    int *counts, *displs; /* elements per rank, for MPI_Gatherv */
    float *staging;       /* the blocks, one after another */
    float *steps[2];      /* two step buffers in turn */
};

static void gather_init(const struct run *r, struct gather *g) {
    memset(g, 0, sizeof *g);
    if (r->rank != 0)
        return;
    size_t step = r->nz * r->ny * r->nx;
    g->counts = malloc(sizeof(int) * 2 * (size_t)r->ranks);
    g->staging = malloc(step * sizeof(float));
    g->steps[0] = malloc(step * sizeof(float));
    g->steps[1] = malloc(step * sizeof(float));
    if (!g->counts || !g->staging || !g->steps[0] || !g->steps[1])
        MPI_Abort(MPI_COMM_WORLD, 1);
    g->displs = g->counts + r->ranks;
    for (int q = 0, at = 0; q < r->ranks; q++) {
        size_t rows = y_start((size_t)q + 1, (size_t)r->ranks, r->ny) -
                      y_start((size_t)q, (size_t)r->ranks, r->ny);
        g->counts[q] = (int)(r->nz * rows * r->nx);
        g->displs[q] = at;
        at += g->counts[q];
    }
}

static void gather_step(const struct run *r, struct gather *g, zarr_array_t *a, int t,
                        const float *block, zarr_request_t **pending) {
    MPI_Gatherv(block, (int)r->block, MPI_FLOAT, g->staging, g->counts, g->displs, MPI_FLOAT, 0,
                MPI_COMM_WORLD);
    if (r->rank != 0)
        return;
    float *step = g->steps[t % 2];
    free_slot(pending, t % 2);
    for (int q = 0; q < r->ranks; q++) {
        size_t y0 = y_start((size_t)q, (size_t)r->ranks, r->ny);
        size_t rows = y_start((size_t)q + 1, (size_t)r->ranks, r->ny) - y0;
        const float *from = g->staging + g->displs[q];
        for (size_t z = 0; z < r->nz; z++)
            memcpy(step + (z * r->ny + y0) * r->nx, from + z * rows * r->nx,
                   rows * r->nx * sizeof(float));
    }
    uint64_t count[4] = {1, r->nz, r->ny, r->nx};
    Z(zarr_array_append_async(a, 0, 4, count, ZARR_DTYPE_FLOAT32, ZARR_ORDER_C, step,
                              r->nz * r->ny * r->nx * sizeof(float), 0, &pending[t % 2]));
}

static void gather_free(struct gather *g) {
    free(g->counts);
    free(g->staging);
    free(g->steps[0]);
    free(g->steps[1]);
}

/* Opens the array through `store`: created by rank 0 in `layout` (`steps` long), then
 * opened read-write by the others; the MPI layer's collective create for the collective
 * modes. */
static zarr_array_t *open_output(const struct run *r, zarr_store_t *store, enum layout layout,
                                 uint64_t steps, int collective) {
    zarr_array_t *a = NULL;
    if (collective) {
        zarr_array_builder_t *b = r->rank == 0 ? builder(r, layout, steps) : NULL;
        M(zarr_mpi_array_create(MPI_COMM_WORLD, b, store, "temperature", ZARR_MODE_W, &a));
        zarr_array_builder_free(b);
        return a;
    }
    if (r->rank == 0)
        a = create(r, store, layout, steps);
    MPI_Barrier(MPI_COMM_WORLD);
    if (r->rank != 0)
        Z(zarr_array_open(store, "temperature", ZARR_MODE_R_PLUS, &a));
    return a;
}

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    struct run r;
    run_init(&r, argc, argv);
    const char *modes[] = {"blocking", "nonblocking",      "band-append",
                           "gather",   "collective-write", "collective"};
    int mode = -1;
    for (int i = 0; i < 6; i++)
        if (strcmp(r.mode, modes[i]) == 0)
            mode = i;
    if (mode < 0) {
        fprintf(stderr, "unknown mode %s\n", r.mode);
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    enum { BLOCKING, NONBLOCKING, BAND_APPEND, GATHER, COLLECTIVE_WRITE, COLLECTIVE };
    const enum layout layouts[] = {OWN_CHUNKS,     OWN_CHUNKS,     OWN_CHUNKS,
                                   SHARD_PER_STEP, SHARED_CHUNKS, SHARD_PER_STEP};
    const int appends = mode == BAND_APPEND || mode == GATHER || mode == COLLECTIVE;
    long cores = sysconf(_SC_NPROCESSORS_ONLN);
    size_t threads = cores > r.ranks ? (size_t)(cores / r.ranks) : 1;
    Z(zarr_set_num_threads(threads));
    float *bufs[2] = {malloc(r.block * sizeof(float)), malloc(r.block * sizeof(float))};
    float *scratch = malloc(r.block * sizeof(float));
    if (!bufs[0] || !bufs[1] || !scratch)
        MPI_Abort(MPI_COMM_WORLD, 1);
    double compute = 0;
    if (mode == NONBLOCKING) {
        fill_step(&r, 0, bufs[0]);
        compute = max_over_ranks(encoding_seconds(&r, bufs[0]));
    }
    struct gather g;
    if (mode == GATHER)
        gather_init(&r, &g);

    MPI_Barrier(MPI_COMM_WORLD);
    double t0 = MPI_Wtime(), output = 0;
    zarr_store_t *store = NULL;
    Z(zarr_store_open_fs(r.path, ZARR_MODE_A, &store));
    Z(zarr_store_set_durability(store, ZARR_DURABILITY_NONE));
    zarr_array_t *a = open_output(&r, store, layouts[mode], appends ? 0 : (uint64_t)r.steps,
                                  mode == COLLECTIVE_WRITE || mode == COLLECTIVE);
    double loop = MPI_Wtime();
    zarr_request_t *pending[2] = {NULL, NULL};
    uint64_t start[4] = {0, 0, r.y0, 0}, count[4] = {1, r.nz, r.ny_rank, r.nx};
    for (int t = 0; t < r.steps; t++) {
        float *buf = bufs[t % 2];
        if (mode == NONBLOCKING) {
            double s = MPI_Wtime();
            free_slot(pending, t % 2);
            output += MPI_Wtime() - s;
        }
        fill_step(&r, t, buf);
        double s = MPI_Wtime();
        start[0] = (uint64_t)t;
        switch (mode) {
        case BLOCKING:
            write_step(&r, a, t, buf);
            break;
        case NONBLOCKING:
            Z(zarr_array_write_async(a, 4, start, count, ZARR_DTYPE_FLOAT32, ZARR_ORDER_C, buf,
                                     r.block * sizeof(float), 0, &pending[t % 2]));
            break;
        case BAND_APPEND: {
            uint64_t shape[4] = {(uint64_t)t + 1, r.nz, r.ny, r.nx};
            if (r.rank == 0)
                Z(zarr_array_resize(a, 4, shape));
            MPI_Barrier(MPI_COMM_WORLD);
            if (r.rank != 0)
                Z(zarr_array_refresh(a));
            write_step(&r, a, t, buf);
            break;
        }
        case GATHER:
            gather_step(&r, &g, a, t, buf, pending);
            break;
        case COLLECTIVE_WRITE:
            M(zarr_mpi_write(MPI_COMM_WORLD, a, 4, start, count, ZARR_DTYPE_FLOAT32,
                             ZARR_ORDER_C, buf, r.block * sizeof(float)));
            break;
        default:
            start[0] = 0;
            M(zarr_mpi_append(MPI_COMM_WORLD, a, 0, 4, start, count, ZARR_DTYPE_FLOAT32,
                              ZARR_ORDER_C, buf, r.block * sizeof(float)));
        }
        output += MPI_Wtime() - s;
        if (mode == NONBLOCKING)
            busy(compute);
    }
    double s = MPI_Wtime();
    Z(zarr_request_wait_all(pending, 2));
    zarr_request_free(pending[0]);
    zarr_request_free(pending[1]);
    Z(zarr_array_close(a));
    zarr_array_free(a);
    Z(zarr_store_close(store));
    zarr_store_free(store);
    output += MPI_Wtime() - s;
    double loop_seconds = MPI_Wtime() - loop;
    MPI_Barrier(MPI_COMM_WORLD);
    double wall = max_over_ranks(MPI_Wtime() - t0);
    double wait_fraction = mode == NONBLOCKING ? max_over_ranks(output / loop_seconds) : -1;
    output = max_over_ranks(output);
    double rss = peak_rss_mib();
    if (mode == GATHER)
        gather_free(&g);

    /* Read-back: every rank its own blocks, every value exact. */
    size_t bad = 0;
    Z(zarr_store_open_fs(r.path, ZARR_MODE_R, &store));
    Z(zarr_array_open(store, "temperature", ZARR_MODE_R, &a));
    for (int t = 0; t < r.steps; t++) {
        start[0] = (uint64_t)t;
        Z(zarr_array_read(a, 4, start, count, ZARR_DTYPE_FLOAT32, ZARR_ORDER_C, bufs[0],
                          r.block * sizeof(float)));
        bad += check_step(&r, t, bufs[0], scratch);
    }
    zarr_array_free(a);
    zarr_store_free(store);
    unsigned long long total = 0, mine = bad;
    MPI_Allreduce(&mine, &total, 1, MPI_UNSIGNED_LONG_LONG, MPI_SUM, MPI_COMM_WORLD);
    print_row(&r, "libzarr", wall, output, mode == NONBLOCKING ? compute : -1, wait_fraction,
              rss, (size_t)total);
    free(bufs[0]);
    free(bufs[1]);
    free(scratch);
    free(r.base);
    MPI_Finalize();
    return total != 0;
}
