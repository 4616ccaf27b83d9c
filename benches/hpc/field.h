/*
 * What the parallel-output benchmarks share (bench_hpc_netcdf.c, bench_hpc_zarr.c): the
 * field each rank writes, its decomposition, the command line, timing and the result row.
 *
 * The global field is steps x nz x ny x nx float32 (C order); rank r of n owns the rows
 * y in [y_start(r), y_start(r + 1)) of every step, where y_start(r) = r * ny / n shifted by
 * ny / (4 n) for the inner boundaries: uneven blocks (at 4 ranks 120, 96, 96 and 72 of 384
 * rows) whose boundaries do not line up with the shared chunk shape nz x (ny / 4) x nx
 * (`chunk_y`), so ranks share chunks.
 * The values are a smooth temperature-like field with a little deterministic noise (as a
 * model's output, neither constant nor random), recomputed exactly at read-back.
 */
#ifndef BENCH_HPC_FIELD_H
#define BENCH_HPC_FIELD_H

#include <math.h>
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

/* The run's shape and this rank's part of it. */
struct run {
    const char *path;    /* output file or directory */
    const char *mode;    /* the program's variant (collective, blocking, ...) */
    const char *codec;   /* none, zlib (+shuffle), blosc */
    int steps;           /* time steps written */
    size_t nz, ny, nx;   /* global extents of one step */
    int rank, ranks;
    size_t chunk_y;      /* rows of y in a shared chunk: ny / 4 */
    size_t ny_rank;      /* rows of y this rank owns */
    size_t y0;           /* its first row */
    size_t block;        /* elements of its block of one step */
    float *base;         /* the time-independent part of its block */
};

#define NOISE 4099 /* a prime: the noise repeats neither along x nor across steps */
static float noise_table[NOISE];

/* The first row of y that rank `rank` of `ranks` owns (`ranks` for the end). */
static inline size_t y_start(size_t rank, size_t ranks, size_t ny) {
    if (rank == 0 || rank == ranks)
        return rank == 0 ? 0 : ny;
    return rank * ny / ranks + ny / (4 * ranks);
}

/* Parses `program PATH MODE CODEC STEPS NZ NY NX`; exits with usage on anything else. */
static inline void run_init(struct run *r, int argc, char **argv) {
    if (argc != 8) {
        fprintf(stderr, "usage: %s PATH MODE CODEC STEPS NZ NY NX\n", argv[0]);
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    r->path = argv[1];
    r->mode = argv[2];
    r->codec = argv[3];
    r->steps = atoi(argv[4]);
    r->nz = (size_t)strtoul(argv[5], NULL, 10);
    r->ny = (size_t)strtoul(argv[6], NULL, 10);
    r->nx = (size_t)strtoul(argv[7], NULL, 10);
    MPI_Comm_rank(MPI_COMM_WORLD, &r->rank);
    MPI_Comm_size(MPI_COMM_WORLD, &r->ranks);
    if (r->steps <= 0 || r->nz == 0 || r->nx == 0 || r->ny == 0 ||
        r->ny % (4 * (size_t)r->ranks) != 0) {
        fprintf(stderr, "steps and extents must be positive, ny a multiple of 4 x ranks\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    r->chunk_y = r->ny / 4;
    r->y0 = y_start((size_t)r->rank, (size_t)r->ranks, r->ny);
    r->ny_rank = y_start((size_t)r->rank + 1, (size_t)r->ranks, r->ny) - r->y0;
    r->block = r->nz * r->ny_rank * r->nx;
    r->base = malloc(r->block * sizeof(float));
    if (!r->base) {
        fprintf(stderr, "out of memory\n");
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    const double pi = 3.14159265358979323846;
    for (size_t z = 0; z < r->nz; z++)
        for (size_t y = 0; y < r->ny_rank; y++)
            for (size_t x = 0; x < r->nx; x++) {
                double yy = (double)(r->y0 + y) / (double)r->ny;
                double xx = (double)x / (double)r->nx;
                double zz = (double)z / (double)r->nz;
                r->base[(z * r->ny_rank + y) * r->nx + x] =
                    (float)(250.0 + 30.0 * cos(pi * yy) + 5.0 * sin(2 * pi * xx) * cos(pi * zz) -
                            6.5 * zz);
            }
    uint32_t h = 2463534242u;
    for (int i = 0; i < NOISE; i++) {
        h ^= h << 13, h ^= h >> 17, h ^= h << 5;
        noise_table[i] = (float)((double)(h & 0xffff) / 65536.0 - 0.5) * 0.02f;
    }
}

/* This rank's block of step `t`. */
static inline void fill_step(const struct run *r, int t, float *out) {
    float drift = 0.01f * (float)t;
    size_t offset = ((size_t)t * 7919u + (size_t)r->rank * 104729u) % NOISE;
    for (size_t i = 0; i < r->block; i++)
        out[i] = r->base[i] + drift + noise_table[(i + offset) % NOISE];
}

/* Elements of `got` that are not step `t`'s values, bit for bit. */
static inline size_t check_step(const struct run *r, int t, const float *got, float *scratch) {
    fill_step(r, t, scratch);
    size_t bad = 0;
    for (size_t i = 0; i < r->block; i++)
        bad += memcmp(&got[i], &scratch[i], sizeof(float)) != 0;
    return bad;
}

/* Spins for `seconds` (the simulated computation of a step). */
static inline void busy(double seconds) {
    double until = MPI_Wtime() + seconds;
    volatile double x = 1.0;
    while (MPI_Wtime() < until)
        for (int i = 0; i < 1000; i++)
            x = x * 1.0000001 + 1e-9;
}

/* The largest of every rank's `value`. */
static inline double max_over_ranks(double value) {
    double out = 0;
    MPI_Allreduce(&value, &out, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    return out;
}

/* The largest peak resident memory of any rank so far, in MiB (collective). */
static inline double peak_rss_mib(void) {
    struct rusage usage;
    getrusage(RUSAGE_SELF, &usage);
    return max_over_ranks((double)usage.ru_maxrss / 1024.0);
}

/*
 * Prints the result row (rank 0): variant, ranks, wall seconds, MiB/s of raw data, the
 * output seconds per step (the slowest rank's mean), the simulated computation's seconds
 * per step and the fraction of the step the computation waited on output (non-blocking
 * only, else -1), the largest peak RSS of a rank after writing (MiB), the largest block of
 * a rank (MiB), and the values found wrong at read-back.
 */
static inline void print_row(const struct run *r, const char *library, double wall,
                             double output, double compute, double wait_fraction,
                             double rss_mib, size_t bad) {
    double block_mib = max_over_ranks((double)r->block * 4.0 / 1048576.0);
    if (r->rank != 0)
        return;
    double mib = (double)r->steps * (double)r->nz * (double)r->ny * (double)r->nx * 4.0 /
                 1048576.0;
    printf("ROW|%s|%s|%s|%d|%.2f|%.1f|%.4f|%.4f|%.3f|%.0f|%.1f|%zu\n", library, r->mode,
           r->codec, r->ranks, wall, mib / wall, output / r->steps, compute, wait_fraction,
           rss_mib, block_mib, bad);
}

#endif
