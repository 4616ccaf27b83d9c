/*
 * collective.c — tests of the MPI layer (include/zarr_mpi.h): collective writes and appends
 * with two-phase I/O, at any number of ranks.
 *
 * Every case writes through zarr_mpi_write or zarr_mpi_append from every rank, then every
 * rank reads the whole array back through libzarr and compares each value. Cases:
 *   write      regular and uneven decompositions (one rank with an empty block from 3
 *              ranks on), blocks not aligned with chunks, sharded and not, C and F order;
 *              every object written once (the ranks' counts add up to the objects);
 *   partial    blocks covering parts of objects with gaps between ranks: elements outside
 *              the blocks keep their values (libzarr's merge, or the aggregator's own);
 *   encoded    blocks of whole chunks, with zarr_mpi_set_encode_where_held (none encoded
 *              where held without it): each chunk encoded by the rank holding it and its
 *              object stored by the aggregator from the encodings (shards of every
 *              rank's chunks, and chunks, C and F order, chunks equal to the fill value);
 *              chunks across the array's edge: encoded by the aggregators as before;
 *              blocks not aligned with the chunks: each chunk encoded by the rank holding
 *              most of it, after the other holders sent it their parts;
 *   rounds     one aggregator with a buffer of 1 KiB: many rounds, same values;
 *   append     steps of a 2-D field from an uneven 2-D decomposition, sharded and not, one
 *              append of two steps; every handle sees each new shape;
 *   open       collective open and create, and their errors (nobody keeps a handle);
 *   errors     one rank's wrong buf_bytes (write) or count (append): every rank gets the
 *              error naming that rank, nothing written, the shape unchanged; a write
 *              that fails on an aggregator (a read-only handle): the step is taken back;
 *              one rank's handle on another array chunked otherwise: refused, naming it.
 *
 * Usage: mpirun -np N collective <directory | store URL>  (a URL's options, such as an S3
 * endpoint and keys, come from the environment variable COLLECTIVE_STORE_OPTIONS)
 * Prints "collective (N ranks): P passed, F failed" from rank 0; exits 1 on a failure.
 *
 * A killed job: `mpirun -np N collective --kill-at K <directory>` appends steps of a sharded
 * series ("killed") until the last rank kills itself (SIGKILL) while the others are in the
 * collective append of step K, so the job dies; then `mpirun -np 1 collective --check-killed
 * K <directory>` checks that the K steps completed before are all there, exact, and that the
 * array reads whole (the step being written, if the array grew to it, holds fill values or
 * part of its data, never an error).
 *
 * A full disk: `mpirun -np N collective --full <directory>` on a small file system (a tmpfs
 * of a few hundred KiB) appends steps until an aggregator's write fails for want of space:
 * every rank gets ZARR_ERR_STORAGE_IO naming that rank, and the steps before are intact.
 */
#define _XOPEN_SOURCE 700 /* nftw */
#include <ftw.h>
#include <math.h>
#include <mpi.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zarr.h>
#include <zarr_mpi.h>

static int rank_, size_;
static int passed, failed;

static void die(const char *what, zarr_status_t status) {
    char message[1024];
    /* The layer's message for its calls, libzarr's for the others. */
    if (strncmp(what, "zarr_mpi_", 9) == 0) zarr_mpi_last_error(message, sizeof message, NULL);
    else zarr_last_error(message, sizeof message, NULL);
    fprintf(stderr, "rank %d: %s failed: %s: %s\n", rank_, what, zarr_status_str(status),
            message);
    MPI_Abort(MPI_COMM_WORLD, 1);
}
#define CHECK(call)                                                     \
    do {                                                                \
        zarr_status_t st_ = (call);                                     \
        if (st_ != ZARR_OK) die(#call, st_);                            \
    } while (0)

/* Records a case's result: it passes when it passed on every rank. */
static void verdict(const char *name, int bad, const char *format, ...) {
    int any = 0;
    MPI_Allreduce(&bad, &any, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    if (rank_ == 0) {
        char detail[512];
        va_list args;
        va_start(args, format);
        vsnprintf(detail, sizeof detail, format, args);
        va_end(args);
        printf("%s %s (%s)\n", any ? "FAIL" : "ok  ", name, detail);
    }
    if (any) failed++;
    else passed++;
}

static void *xmalloc(size_t n) {
    void *p = malloc(n ? n : 1);
    if (!p) MPI_Abort(MPI_COMM_WORLD, 1);
    return p;
}

/* Part `p` of `parts` of [0, n): even, or uneven (part 1 empty from 3 parts on). */
static void split(uint64_t n, int parts, int p, int uneven, uint64_t *start, uint64_t *count) {
    if (!uneven) {
        *start = n * (uint64_t)p / (uint64_t)parts;
        *count = n * (uint64_t)(p + 1) / (uint64_t)parts - *start;
        return;
    }
    /* Weights 1, 0, 3, 4, ... (part 1 empty when there are 3 parts or more), then 2 for 2 parts. */
    uint64_t weights[64], total = 0, before = 0;
    for (int q = 0; q < parts; q++) {
        weights[q] = parts >= 3 && q == 1 ? 0 : (uint64_t)(q + 1) * (uint64_t)(q + 1);
        total += weights[q];
    }
    for (int q = 0; q < p; q++) before += weights[q];
    *start = n * before / total;
    *count = n * (before + weights[p]) / total - *start;
}

static double value3(uint64_t t, uint64_t y, uint64_t x) {
    return (double)t * 1e6 + (double)y * 1e3 + (double)x;
}

/* The array at `path`, created collectively: shape, chunks and (when not NULL) shards. */
static zarr_array_t *create(zarr_store_t *store, const char *path, zarr_dtype_t dtype,
                            const uint64_t *shape, const uint64_t *chunks,
                            const uint64_t *shards) {
    zarr_array_builder_t *builder = NULL;
    if (rank_ == 0) {
        CHECK(zarr_array_builder_new(dtype, 3, shape, &builder));
        CHECK(zarr_array_builder_set_chunk_shape(builder, 3, chunks));
        if (shards) CHECK(zarr_array_builder_set_shard_shape(builder, 3, shards));
        CHECK(zarr_array_builder_set_fill_value_json(builder, "\"NaN\""));
    }
    zarr_array_t *array = NULL;
    CHECK(zarr_mpi_array_create(MPI_COMM_WORLD, builder, store, path, ZARR_MODE_W, &array));
    zarr_array_builder_free(builder);
    return array;
}

/* This rank's block of a 3-D shape: dimension 0 whole, 1 and 2 over a process grid. */
static void block3(const uint64_t *shape, int uneven, uint64_t *start, uint64_t *count) {
    int dims[2] = {0, 0};
    MPI_Dims_create(size_, 2, dims);
    int row = rank_ / dims[1], col = rank_ % dims[1];
    start[0] = 0;
    count[0] = shape[0];
    split(shape[1], dims[0], row, uneven, &start[1], &count[1]);
    split(shape[2], dims[1], col, uneven, &start[2], &count[2]);
}

/* Reads the whole float64 array and counts the values that differ from `expect`. */
static int compare_all(const zarr_array_t *array, const uint64_t *shape,
                       double (*expect)(uint64_t, uint64_t, uint64_t, const void *),
                       const void *extra) {
    size_t n = (size_t)(shape[0] * shape[1] * shape[2]);
    double *all = xmalloc(sizeof(double) * n);
    const uint64_t origin[3] = {0, 0, 0};
    CHECK(zarr_array_read(array, 3, origin, shape, ZARR_DTYPE_FLOAT64, ZARR_ORDER_C, all,
                          sizeof(double) * n));
    int bad = 0;
    size_t i = 0;
    for (uint64_t t = 0; t < shape[0]; t++)
        for (uint64_t y = 0; y < shape[1]; y++)
            for (uint64_t x = 0; x < shape[2]; x++, i++) {
                double want = expect(t, y, x, extra), got = all[i];
                if (!(want == got || (want != want && got != got))) bad++;
            }
    free(all);
    return bad;
}

static double expect_value3(uint64_t t, uint64_t y, uint64_t x, const void *extra) {
    (void)extra;
    return value3(t, y, x);
}

/* Fills a block's buffer with value3 (negated when `negate`) in C or F order. */
static double *fill_block(const uint64_t *start, const uint64_t *count, zarr_order_t order,
                          int negate) {
    double *buf = xmalloc(sizeof(double) * (size_t)(count[0] * count[1] * count[2]));
    for (uint64_t t = 0; t < count[0]; t++)
        for (uint64_t y = 0; y < count[1]; y++)
            for (uint64_t x = 0; x < count[2]; x++) {
                size_t at = order == ZARR_ORDER_C
                                ? (size_t)((t * count[1] + y) * count[2] + x)
                                : (size_t)((x * count[1] + y) * count[0] + t);
                double v = value3(start[0] + t, start[1] + y, start[2] + x);
                buf[at] = negate ? -v : v;
            }
    return buf;
}

/* The objects of the grid (chunks or shards). */
static uint64_t grid_objects(const zarr_array_t *array) {
    uint64_t grid[3];
    CHECK(zarr_array_chunk_grid_shape(array, 3, grid));
    return grid[0] * grid[1] * grid[2];
}

static void case_write(zarr_store_t *store, int sharded, int uneven, zarr_order_t order) {
    const uint64_t shape[3] = {5, 37, 29}, chunks[3] = {2, 8, 6}, inner[3] = {1, 8, 6},
                   shards[3] = {2, 16, 12};
    char path[64];
    snprintf(path, sizeof path, "write_%d_%d_%d", sharded, uneven, (int)order);
    zarr_array_t *array = create(store, path, ZARR_DTYPE_FLOAT64, shape,
                                 sharded ? inner : chunks, sharded ? shards : NULL);
    uint64_t start[3], count[3];
    block3(shape, uneven, start, count);
    double *buf = fill_block(start, count, order, 0);
    CHECK(zarr_mpi_write(MPI_COMM_WORLD, array, 3, start, count, ZARR_DTYPE_FLOAT64, order, buf,
                         sizeof(double) * (size_t)(count[0] * count[1] * count[2])));
    free(buf);
    zarr_mpi_stats_t stats;
    CHECK(zarr_mpi_last_stats(&stats));
    uint64_t written = stats.objects_written, merged = stats.objects_merged;
    MPI_Allreduce(MPI_IN_PLACE, &written, 1, MPI_UINT64_T, MPI_SUM, MPI_COMM_WORLD);
    MPI_Allreduce(MPI_IN_PLACE, &merged, 1, MPI_UINT64_T, MPI_SUM, MPI_COMM_WORLD);
    uint64_t objects = grid_objects(array);
    int bad = compare_all(array, shape, expect_value3, NULL);
    bad += stats.objects != objects || written != objects || merged != 0;
    verdict(path, bad,
            "%s, %s, %s order: %llu objects, %llu writes, %u aggregators, %u rounds",
            sharded ? "sharded" : "chunks", uneven ? "uneven" : "regular",
            order == ZARR_ORDER_C ? "C" : "F", (unsigned long long)objects,
            (unsigned long long)written, stats.aggregators, stats.rounds);
    zarr_array_free(array);
}

/* The encoded case's values: value3, but the fill value (NaN) at t = 3, so that whole
 * chunks equal the fill value. */
static double value_or_fill(uint64_t t, uint64_t y, uint64_t x, const void *extra) {
    (void)extra;
    return t == 3 ? NAN : value3(t, y, x);
}

/*
 * Blocks of whole chunks: rank r holds rows 16r to 16r + 15 (two inner chunks of 8) of
 * every t and x. Variant 0: shards of all ranks' rows, C order; 1: chunks (no shards), F
 * order; every chunk of variant 0 (from 2 ranks on) is encoded where it is, of variant 1
 * those whose aggregator is another rank. Variant 2: 22 columns, so the last
 * chunks cross the array's edge: no object is encoded at the source, the aggregators
 * encode as usual. Variant 3: as variant 0 with the inner boundaries between the ranks'
 * blocks moved 3 rows down (rank 0 holds 19 rows, the last 13), so chunks are split
 * between ranks: every chunk is encoded by the rank holding most of it. The values are
 * read back either way.
 */
static void case_encoded(zarr_store_t *store, int variant) {
    const uint64_t shape[3] = {4, 16 * (uint64_t)size_, variant == 2 ? 22 : 24},
                   inner[3] = {1, 8, 6}, shards[3] = {2, 16 * (uint64_t)size_, 24};
    zarr_order_t order = variant == 1 ? ZARR_ORDER_F : ZARR_ORDER_C;
    uint64_t y0 = 16 * (uint64_t)rank_, y1 = y0 + 16;
    if (variant == 3) {
        y0 += rank_ > 0 ? 3 : 0;
        y1 += rank_ < size_ - 1 ? 3 : 0;
    }
    char path[64];
    snprintf(path, sizeof path, "encoded_%d", variant);
    zarr_array_t *array = create(store, path, ZARR_DTYPE_FLOAT64, shape, inner,
                                 variant == 1 ? NULL : shards);
    const uint64_t start[3] = {0, y0, 0}, count[3] = {shape[0], y1 - y0, shape[2]};
    double *buf = fill_block(start, count, order, 0);
    for (uint64_t t = 0; t < count[0]; t++)
        for (uint64_t y = 0; y < count[1]; y++)
            for (uint64_t x = 0; x < count[2]; x++)
                if (t == 3)
                    buf[order == ZARR_ORDER_C ? (t * count[1] + y) * count[2] + x
                                              : (x * count[1] + y) * count[0] + t] = NAN;
    /* Off by default: nothing encoded where it is. */
    CHECK(zarr_mpi_write(MPI_COMM_WORLD, array, 3, start, count, ZARR_DTYPE_FLOAT64, order, buf,
                         sizeof(double) * (size_t)(count[0] * count[1] * count[2])));
    zarr_mpi_stats_t stats;
    CHECK(zarr_mpi_last_stats(&stats));
    uint64_t by_default = stats.chunks_encoded;
    CHECK(zarr_mpi_set_encode_where_held(1));
    CHECK(zarr_mpi_write(MPI_COMM_WORLD, array, 3, start, count, ZARR_DTYPE_FLOAT64, order, buf,
                         sizeof(double) * (size_t)(count[0] * count[1] * count[2])));
    CHECK(zarr_mpi_set_encode_where_held(0));
    free(buf);
    CHECK(zarr_mpi_last_stats(&stats));
    uint64_t encoded = stats.chunks_encoded, written = stats.objects_written;
    MPI_Allreduce(MPI_IN_PLACE, &by_default, 1, MPI_UINT64_T, MPI_SUM, MPI_COMM_WORLD);
    MPI_Allreduce(MPI_IN_PLACE, &encoded, 1, MPI_UINT64_T, MPI_SUM, MPI_COMM_WORLD);
    MPI_Allreduce(MPI_IN_PLACE, &written, 1, MPI_UINT64_T, MPI_SUM, MPI_COMM_WORLD);
    /* One rank: every object is all in its aggregator's block, written as usual. Variant 1
     * (an object per chunk): only the chunks whose aggregator is another rank (some, not
     * all, as the objects are dealt out in ranges of the grid's C order, t first). */
    uint64_t chunks = 4 * 2 * (uint64_t)size_ * 4, want = variant == 2 || size_ == 1 ? 0 : chunks;
    int bad = compare_all(array, shape, value_or_fill, NULL);
    if (variant == 1 && size_ > 1) bad += encoded == 0 || encoded >= chunks;
    else bad += encoded != want;
    bad += written != grid_objects(array) || by_default != 0;
    if (variant == 1) {
        /* The chunks at t = 3 equal the fill value: not stored. */
        uint64_t stored = 0;
        zarr_status_t st = zarr_array_nchunks_initialized(array, &stored);
        bad += st != ZARR_OK || stored != 3 * 2 * (uint64_t)size_ * 4;
    }
    verdict(path, bad, "%s: %llu of %llu chunks encoded where they are, %llu objects",
            variant == 1   ? "chunks, F order"
            : variant == 0 ? "shards of all ranks"
            : variant == 2 ? "edge"
                           : "split chunks",
            (unsigned long long)encoded, (unsigned long long)chunks, (unsigned long long)written);
    zarr_array_free(array);
}

/* The partial case: inside rank r's band, -value3; elsewhere value3. */
typedef struct {
    uint64_t y0, rows, gap, x0, cols;
    int ranks;
} bands_t;

static int in_band(const bands_t *b, int r, uint64_t y, uint64_t x) {
    uint64_t first = b->y0 + (uint64_t)r * (b->rows + b->gap);
    uint64_t left = b->x0 + (uint64_t)r;
    return y >= first && y < first + b->rows && x >= left && x < left + b->cols;
}

static double expect_partial(uint64_t t, uint64_t y, uint64_t x, const void *extra) {
    const bands_t *b = extra;
    for (int r = 0; r < b->ranks; r++)
        if (t >= 1 && t < 4 && in_band(b, r, y, x)) return -value3(t, y, x);
    return value3(t, y, x);
}

static void case_partial(zarr_store_t *store, int sharded) {
    const uint64_t shape[3] = {5, 37, 29}, chunks[3] = {2, 8, 6}, inner[3] = {1, 8, 6},
                   shards[3] = {2, 16, 12};
    char path[64];
    snprintf(path, sizeof path, "partial_%d", sharded);
    zarr_array_t *array = create(store, path, ZARR_DTYPE_FLOAT64, shape,
                                 sharded ? inner : chunks, sharded ? shards : NULL);
    uint64_t start[3], count[3];
    block3(shape, 0, start, count);
    double *buf = fill_block(start, count, ZARR_ORDER_C, 0);
    CHECK(zarr_mpi_write(MPI_COMM_WORLD, array, 3, start, count, ZARR_DTYPE_FLOAT64,
                         ZARR_ORDER_C, buf,
                         sizeof(double) * (size_t)(count[0] * count[1] * count[2])));
    free(buf);
    /* Bands of 3 rows with a gap of 1 between ranks, shifted by one column each. */
    bands_t bands = {2, 3, 1, 3, 17, size_}; /* rows 2 + 4r .. 5 + 4r, columns 3 + r .. 20 + r */
    start[0] = 1;
    count[0] = 3;
    start[1] = bands.y0 + (uint64_t)rank_ * (bands.rows + bands.gap);
    count[1] = bands.rows;
    start[2] = bands.x0 + (uint64_t)rank_;
    count[2] = bands.cols;
    buf = fill_block(start, count, ZARR_ORDER_C, 1);
    CHECK(zarr_mpi_write(MPI_COMM_WORLD, array, 3, start, count, ZARR_DTYPE_FLOAT64,
                         ZARR_ORDER_C, buf,
                         sizeof(double) * (size_t)(count[0] * count[1] * count[2])));
    free(buf);
    zarr_mpi_stats_t stats;
    CHECK(zarr_mpi_last_stats(&stats));
    uint64_t merged = stats.objects_merged;
    MPI_Allreduce(MPI_IN_PLACE, &merged, 1, MPI_UINT64_T, MPI_SUM, MPI_COMM_WORLD);
    int bad = compare_all(array, shape, expect_partial, &bands);
    /* With two ranks or more, bands with a gap meet in some object: merged by the aggregator. */
    bad += size_ >= 2 && merged == 0;
    verdict(path, bad, "%s: %llu objects touched, %llu merged by their aggregator",
            sharded ? "sharded" : "chunks", (unsigned long long)stats.objects,
            (unsigned long long)merged);
    zarr_array_free(array);
}

static void case_rounds(zarr_store_t *store) {
    const uint64_t shape[3] = {5, 37, 29}, chunks[3] = {2, 8, 6};
    CHECK(zarr_mpi_set_aggregators(1));
    CHECK(zarr_mpi_set_buffer_bytes(1024));
    zarr_array_t *array = create(store, "rounds", ZARR_DTYPE_FLOAT64, shape, chunks, NULL);
    uint64_t start[3], count[3];
    block3(shape, 1, start, count);
    double *buf = fill_block(start, count, ZARR_ORDER_C, 0);
    CHECK(zarr_mpi_write(MPI_COMM_WORLD, array, 3, start, count, ZARR_DTYPE_FLOAT64,
                         ZARR_ORDER_C, buf,
                         sizeof(double) * (size_t)(count[0] * count[1] * count[2])));
    free(buf);
    zarr_mpi_stats_t stats;
    CHECK(zarr_mpi_last_stats(&stats));
    uint64_t written = stats.objects_written;
    MPI_Allreduce(MPI_IN_PLACE, &written, 1, MPI_UINT64_T, MPI_SUM, MPI_COMM_WORLD);
    int bad = compare_all(array, shape, expect_value3, NULL);
    /* 1 KiB holds one whole chunk of 2 x 8 x 6 doubles (768 bytes), or two edge chunks. */
    bad += stats.aggregators != 1 || stats.rounds < stats.objects / 2 || written != stats.objects ||
           (rank_ != 0 && stats.objects_written != 0);
    verdict("rounds", bad, "1 aggregator, 1 KiB: %u rounds for %llu objects", stats.rounds,
            (unsigned long long)stats.objects);
    CHECK(zarr_mpi_set_aggregators(0));
    CHECK(zarr_mpi_set_buffer_bytes(0));
    zarr_array_free(array);
}

/* A 2-D field (y, x) appended along t: the block of this rank, and its values at step t. */
static float step_value(uint64_t t, uint64_t y, uint64_t x) {
    return (float)(t * 10000 + y * 100 + x);
}

static void fill_step(float *buf, uint64_t t0, uint64_t steps, const uint64_t *start,
                      const uint64_t *count) {
    size_t i = 0;
    for (uint64_t t = 0; t < steps; t++)
        for (uint64_t y = 0; y < count[1]; y++)
            for (uint64_t x = 0; x < count[2]; x++)
                buf[i++] = step_value(t0 + t, start[1] + y, start[2] + x);
}

static int check_steps(const zarr_array_t *array, uint64_t steps, uint64_t ny, uint64_t nx) {
    uint64_t shape[3];
    CHECK(zarr_array_shape(array, 3, shape));
    if (shape[0] != steps || shape[1] != ny || shape[2] != nx) return 1;
    size_t n = (size_t)(steps * ny * nx);
    float *all = xmalloc(sizeof(float) * n);
    const uint64_t origin[3] = {0, 0, 0};
    CHECK(zarr_array_read(array, 3, origin, shape, ZARR_DTYPE_FLOAT32, ZARR_ORDER_C, all,
                          sizeof(float) * n));
    int bad = 0;
    size_t i = 0;
    for (uint64_t t = 0; t < steps; t++)
        for (uint64_t y = 0; y < ny; y++)
            for (uint64_t x = 0; x < nx; x++, i++) bad += all[i] != step_value(t, y, x);
    free(all);
    return bad;
}

static void case_append(zarr_store_t *store, int sharded) {
    const uint64_t ny = 23, nx = 19, shape[3] = {0, 23, 19}, chunks[3] = {1, 8, 7},
                   shards[3] = {2, 16, 14};
    char path[64];
    snprintf(path, sizeof path, "append_%d", sharded);
    zarr_array_t *array = create(store, path, ZARR_DTYPE_FLOAT32, shape, chunks,
                                 sharded ? shards : NULL);
    uint64_t start[3], count[3];
    block3(shape, 1, start, count);
    int bad = 0;
    uint64_t steps = 0, files = 0;
    for (int call = 0; call < 5; call++) {
        uint64_t n = call == 2 ? 2 : 1; /* the third call appends two steps at once */
        start[0] = 0;
        count[0] = n;
        float *buf = xmalloc(sizeof(float) * (size_t)(n * count[1] * count[2]));
        fill_step(buf, steps, n, start, count);
        CHECK(zarr_mpi_append(MPI_COMM_WORLD, array, 0, 3, start, count, ZARR_DTYPE_FLOAT32,
                              ZARR_ORDER_C, buf,
                              sizeof(float) * (size_t)(n * count[1] * count[2])));
        free(buf);
        steps += n;
        /* Every handle sees the new shape at once. */
        uint64_t now[3];
        CHECK(zarr_array_shape(array, 3, now));
        bad += now[0] != steps || now[1] != ny || now[2] != nx;
        zarr_mpi_stats_t stats;
        CHECK(zarr_mpi_last_stats(&stats));
        files += stats.objects;
    }
    bad += check_steps(array, steps, ny, nx);
    verdict(path, bad, "%s: %llu steps in 5 calls, %llu objects written", sharded ? "sharded" : "chunks",
            (unsigned long long)steps, (unsigned long long)files);
    zarr_array_free(array);
}

/* A failure expected on every rank: `status`, and a message naming `culprit`. */
static int expect_failure(zarr_status_t got, zarr_status_t want, int culprit) {
    char message[2048], prefix[32];
    zarr_mpi_last_error(message, sizeof message, NULL);
    snprintf(prefix, sizeof prefix, "rank %d: ", culprit);
    int bad = got != want || strncmp(message, prefix, strlen(prefix)) != 0;
    if (bad)
        fprintf(stderr, "rank %d: expected %s from rank %d, got %s: %s\n", rank_,
                zarr_status_str(want), culprit, zarr_status_str(got), message);
    return bad;
}

static void case_errors(zarr_store_t *store) {
    const uint64_t shape[3] = {5, 37, 29}, chunks[3] = {2, 8, 6};
    int last = size_ - 1;
    char message[2048];
    /* Write: the last rank's buf_bytes is one element short. */
    zarr_array_t *array = create(store, "error_write", ZARR_DTYPE_FLOAT64, shape, chunks, NULL);
    uint64_t start[3], count[3];
    block3(shape, 0, start, count);
    double *buf = fill_block(start, count, ZARR_ORDER_C, 0);
    size_t bytes = sizeof(double) * (size_t)(count[0] * count[1] * count[2]);
    zarr_status_t st = zarr_mpi_write(MPI_COMM_WORLD, array, 3, start, count, ZARR_DTYPE_FLOAT64,
                                      ZARR_ORDER_C, buf, rank_ == last ? bytes - 8 : bytes);
    free(buf);
    int bad = expect_failure(st, ZARR_ERR_BUFFER_SIZE, last);
    zarr_mpi_last_error(message, sizeof message, NULL);
    uint64_t initialized = 1;
    CHECK(zarr_array_nchunks_initialized(array, &initialized));
    bad += initialized != 0;
    verdict("error_write", bad, "%s", message);
    zarr_array_free(array);

    /* Append: two good steps, then the last rank's block leaves the array along x. */
    const uint64_t ny = 23, nx = 19, fshape[3] = {0, 23, 19}, fchunks[3] = {1, 8, 7};
    array = create(store, "error_append", ZARR_DTYPE_FLOAT32, fshape, fchunks, NULL);
    block3(fshape, 0, start, count);
    count[0] = 1; /* one step */
    float *step = xmalloc(sizeof(float) * (size_t)(count[1] * count[2] + count[1]));
    for (uint64_t t = 0; t < 2; t++) {
        fill_step(step, t, 1, start, count);
        CHECK(zarr_mpi_append(MPI_COMM_WORLD, array, 0, 3, start, count, ZARR_DTYPE_FLOAT32,
                              ZARR_ORDER_C, step, sizeof(float) * (size_t)(count[1] * count[2])));
    }
    uint64_t wrong[3] = {count[0], count[1], count[2] + (rank_ == last)};
    if (rank_ == last) start[2] = nx - count[2]; /* so that one more column leaves it */
    st = zarr_mpi_append(MPI_COMM_WORLD, array, 0, 3, start, wrong, ZARR_DTYPE_FLOAT32,
                         ZARR_ORDER_C, step, sizeof(float) * (size_t)(wrong[1] * wrong[2]));
    bad = expect_failure(st, ZARR_ERR_OUT_OF_BOUNDS, last);
    zarr_mpi_last_error(message, sizeof message, NULL);
    bad += check_steps(array, 2, ny, nx);
    verdict("error_append", bad, "%s", message);

    /* A write failing on an aggregator: the last rank's handle is read-only. Every rank is
     * an aggregator (one node) and the 9 objects of a step give each one at least one. */
    zarr_array_t *readonly = NULL;
    CHECK(zarr_array_open(store, "error_append", ZARR_MODE_R, &readonly));
    block3(fshape, 0, start, count);
    count[0] = 1;
    fill_step(step, 2, 1, start, count);
    st = zarr_mpi_append(MPI_COMM_WORLD, rank_ == last ? readonly : array, 0, 3, start, count,
                         ZARR_DTYPE_FLOAT32, ZARR_ORDER_C, step,
                         sizeof(float) * (size_t)(count[1] * count[2]));
    bad = expect_failure(st, ZARR_ERR_READ_ONLY, last);
    zarr_mpi_last_error(message, sizeof message, NULL);
    /* Taken back: two steps, on every handle and in the store. */
    bad += check_steps(array, 2, ny, nx);
    CHECK(zarr_array_refresh(readonly));
    bad += check_steps(readonly, 2, ny, nx);
    verdict("error_aggregator", bad, "%s", message);
    /* And the next step goes in as the third. */
    st = zarr_mpi_append(MPI_COMM_WORLD, array, 0, 3, start, count, ZARR_DTYPE_FLOAT32,
                         ZARR_ORDER_C, step, sizeof(float) * (size_t)(count[1] * count[2]));
    bad = st != ZARR_OK || check_steps(array, 3, ny, nx);
    verdict("append_after_error", bad, "the step appended again");
    free(step);
    zarr_array_free(readonly);
    zarr_array_free(array);

    /* The last rank passes another array of the same shape, chunked otherwise (encoding
     * where held on, whose exchanges would not match): refused on every rank, naming it,
     * nothing written to either array. */
    if (size_ == 1) return;
    const uint64_t other[3] = {2, 8, 5};
    zarr_array_t *mine = create(store, "error_layout_a", ZARR_DTYPE_FLOAT64, shape, chunks, NULL);
    zarr_array_t *theirs = create(store, "error_layout_b", ZARR_DTYPE_FLOAT64, shape, other, NULL);
    block3(shape, 0, start, count);
    buf = fill_block(start, count, ZARR_ORDER_C, 0);
    bytes = sizeof(double) * (size_t)(count[0] * count[1] * count[2]);
    CHECK(zarr_mpi_set_encode_where_held(1));
    st = zarr_mpi_write(MPI_COMM_WORLD, rank_ == last ? theirs : mine, 3, start, count,
                        ZARR_DTYPE_FLOAT64, ZARR_ORDER_C, buf, bytes);
    CHECK(zarr_mpi_set_encode_where_held(0));
    free(buf);
    bad = expect_failure(st, ZARR_ERR_INVALID_ARG, last);
    zarr_mpi_last_error(message, sizeof message, NULL);
    bad += strstr(message, "not chunked as rank 0's") == NULL;
    for (int i = 0; i < 2; i++) {
        initialized = 1;
        CHECK(zarr_array_nchunks_initialized(i ? theirs : mine, &initialized));
        bad += initialized != 0;
    }
    verdict("error_layout", bad, "%s", message);
    zarr_array_free(mine);
    zarr_array_free(theirs);
}

/* Collective open and create, and their errors. */
static void case_open(zarr_store_t *store) {
    const uint64_t shape[3] = {5, 37, 29};
    int last = size_ - 1, bad = 0;
    char message[2048];
    /* Every rank opens what case_write wrote, and reads it. */
    zarr_array_t *array = NULL;
    CHECK(zarr_mpi_array_open(MPI_COMM_WORLD, store, "write_0_0_0", ZARR_MODE_R, &array));
    bad += compare_all(array, shape, expect_value3, NULL);
    zarr_array_free(array);
    /* The last rank names an array that does not exist: nobody keeps a handle. */
    array = NULL;
    zarr_status_t st = zarr_mpi_array_open(MPI_COMM_WORLD, store,
                                           rank_ == last ? "missing" : "write_0_0_0",
                                           ZARR_MODE_R_PLUS, &array);
    bad += expect_failure(st, ZARR_ERR_NOT_FOUND, last) + (array != NULL);
    zarr_mpi_last_error(message, sizeof message, NULL);
    /* Creating over an existing array with ZARR_MODE_W_MINUS fails on rank 0, for all. */
    zarr_array_builder_t *builder = NULL;
    if (rank_ == 0) CHECK(zarr_array_builder_new(ZARR_DTYPE_FLOAT64, 3, shape, &builder));
    array = NULL;
    st = zarr_mpi_array_create(MPI_COMM_WORLD, builder, store, "write_0_0_0", ZARR_MODE_W_MINUS,
                               &array);
    bad += expect_failure(st, ZARR_ERR_EXISTS, 0) + (array != NULL);
    zarr_array_builder_free(builder);
    verdict("open", bad, "%s", message);
}

/* The series of a killed job: shape (0, 23, 19), chunks of one step, shards of 4 steps. */
static zarr_array_t *killed_series(zarr_store_t *store) {
    const uint64_t shape[3] = {0, 23, 19}, chunks[3] = {1, 8, 7}, shards[3] = {4, 16, 14};
    return create(store, "killed", ZARR_DTYPE_FLOAT32, shape, chunks, shards);
}

/* A disk that fills up (`store` on a small file system): steps of a 2-D field are appended
 * to an uncompressed array until an append fails. Every rank must get the same error,
 * ZARR_ERR_STORAGE_IO naming the rank whose write failed and the cause (no space left), and
 * the steps appended before must all be there, exact, in a shape that stops at them. */
/* The directory of case_full's store, and what its walk found left behind. */
static const char *full_dir;
static int left_behind;

/* nftw's visitor: counts the temporary files (hidden names) a failed write left. */
static int count_left_behind(const char *path, const struct stat *st, int type,
                             struct FTW *at) {
    (void)st;
    (void)type;
    if (path[at->base] == '.') {
        fprintf(stderr, "left behind: %s\n", path);
        left_behind++;
    }
    return 0;
}

static void case_full(zarr_store_t *store) {
    const uint64_t ny = 64, nx = 64, shape[3] = {0, 64, 64}, chunks[3] = {1, 32, 32};
    zarr_array_t *array = create(store, "full", ZARR_DTYPE_FLOAT32, shape, chunks, NULL);
    uint64_t start[3], count[3];
    block3(shape, 1, start, count);
    count[0] = 1;
    size_t bytes = sizeof(float) * (size_t)(count[1] * count[2]);
    float *step = xmalloc(bytes);
    zarr_status_t st = ZARR_OK;
    uint64_t steps = 0;
    for (; steps < 100000; steps++) {
        fill_step(step, steps, 1, start, count);
        st = zarr_mpi_append(MPI_COMM_WORLD, array, 0, 3, start, count, ZARR_DTYPE_FLOAT32,
                             ZARR_ORDER_C, step, bytes);
        if (st != ZARR_OK) break;
    }
    free(step);
    char message[2048];
    zarr_mpi_last_error(message, sizeof message, NULL);
    int lowest = 0, highest = 0, code = (int)st;
    MPI_Allreduce(&code, &lowest, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    MPI_Allreduce(&code, &highest, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    int culprit = -1;
    int bad = st != ZARR_ERR_STORAGE_IO || lowest != highest ||
              sscanf(message, "rank %d: ", &culprit) != 1 || culprit < 0 || culprit >= size_ ||
              strstr(message, "No space left") == NULL;
    if (bad)
        fprintf(stderr, "rank %d: after %llu steps: %s: %s\n", rank_, (unsigned long long)steps,
                zarr_status_str(st), message);
    /* The steps before: there and exact, on this handle and on a new one; nothing of the
     * failed step, and no temporary file, left on the disk. */
    bad += check_steps(array, steps, ny, nx);
    if (rank_ == 0) {
        left_behind = 0;
        bad += nftw(full_dir, count_left_behind, 16, FTW_PHYS) != 0 || left_behind != 0;
        char failed_step[4200];
        snprintf(failed_step, sizeof failed_step, "%s/full/c/%llu", full_dir,
                 (unsigned long long)steps);
        bad += access(failed_step, F_OK) == 0;
    }
    zarr_array_t *again = NULL;
    CHECK(zarr_array_open(store, "full", ZARR_MODE_R, &again));
    bad += check_steps(again, steps, ny, nx);
    verdict("full_disk", bad, "%llu steps appended before the disk was full: %s",
            (unsigned long long)steps, message);
    zarr_array_free(again);
    zarr_array_free(array);
}

/* Appends steps until the last rank kills itself during step `kill_at` (never returns). */
static void kill_during_append(zarr_store_t *store, uint64_t kill_at) {
    zarr_array_t *array = killed_series(store);
    const uint64_t shape[3] = {0, 23, 19};
    uint64_t start[3], count[3];
    block3(shape, 1, start, count);
    count[0] = 1;
    float *buf = xmalloc(sizeof(float) * (size_t)(count[1] * count[2]));
    for (uint64_t t = 0;; t++) {
        if (t == kill_at) {
            /* Everyone has returned from step kill_at - 1: the others enter the next step
             * and wait for this rank's pieces, which never come. */
            MPI_Barrier(MPI_COMM_WORLD);
            if (rank_ == size_ - 1) {
                fflush(stdout);
                raise(SIGKILL);
            }
        }
        fill_step(buf, t, 1, start, count);
        CHECK(zarr_mpi_append(MPI_COMM_WORLD, array, 0, 3, start, count, ZARR_DTYPE_FLOAT32,
                              ZARR_ORDER_C, buf, sizeof(float) * (size_t)(count[1] * count[2])));
    }
}

/* After a killed job: the `completed` steps exact, the array readable whole. */
static int check_killed(zarr_store_t *store, uint64_t completed) {
    zarr_array_t *array = NULL;
    CHECK(zarr_array_open(store, "killed", ZARR_MODE_R, &array));
    uint64_t shape[3];
    CHECK(zarr_array_shape(array, 3, shape));
    int bad = shape[0] != completed && shape[0] != completed + 1;
    size_t n = (size_t)(shape[0] * shape[1] * shape[2]);
    float *all = xmalloc(sizeof(float) * n);
    const uint64_t origin[3] = {0, 0, 0};
    zarr_status_t st = zarr_array_read(array, 3, origin, shape, ZARR_DTYPE_FLOAT32, ZARR_ORDER_C,
                                       all, sizeof(float) * n);
    bad += st != ZARR_OK;
    size_t i = 0;
    for (uint64_t t = 0; st == ZARR_OK && t < completed && t < shape[0]; t++)
        for (uint64_t y = 0; y < shape[1]; y++)
            for (uint64_t x = 0; x < shape[2]; x++, i++) bad += all[i] != step_value(t, y, x);
    free(all);
    zarr_array_free(array);
    printf("%s killed (%llu steps completed before the kill; the array has %llu, read %s)\n",
           bad ? "FAIL" : "ok  ", (unsigned long long)completed, (unsigned long long)shape[0],
           st == ZARR_OK ? "whole" : "with an error");
    return bad;
}

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank_);
    MPI_Comm_size(MPI_COMM_WORLD, &size_);
    bool kill = argc == 4 && strcmp(argv[1], "--kill-at") == 0;
    bool check = argc == 4 && strcmp(argv[1], "--check-killed") == 0;
    bool full = argc == 3 && strcmp(argv[1], "--full") == 0;
    if (argc != 2 && !kill && !check && !full) {
        if (rank_ == 0)
            fprintf(stderr, "usage: collective [--kill-at K | --check-killed K | --full] "
                            "<directory>\n");
        MPI_Finalize();
        return 2;
    }
    if (full) {
        zarr_set_num_threads(1);
        zarr_store_t *store = NULL;
        CHECK(zarr_store_open_fs(argv[2], ZARR_MODE_A, &store));
        full_dir = argv[2];
        case_full(store);
        zarr_store_free(store);
        if (rank_ == 0) printf("collective --full (%d ranks): %d passed, %d failed\n", size_,
                               passed, failed);
        MPI_Finalize();
        return failed ? 1 : 0;
    }
    if (kill || check) {
        uint64_t steps = strtoull(argv[2], NULL, 10);
        zarr_set_num_threads(1);
        zarr_store_t *store = NULL;
        CHECK(zarr_store_open_fs(argv[3], ZARR_MODE_A, &store));
        if (kill) kill_during_append(store, steps);
        int bad = check_killed(store, steps);
        zarr_store_free(store);
        MPI_Finalize();
        return bad ? 1 : 0;
    }
    /* Ranks x threads within the cores. */
    zarr_set_num_threads(1);
    zarr_store_t *store = NULL;
    if (strstr(argv[1], "://") != NULL)
        CHECK(zarr_store_open_url(argv[1], ZARR_MODE_A, getenv("COLLECTIVE_STORE_OPTIONS"),
                                  &store));
    else
        CHECK(zarr_store_open_fs(argv[1], ZARR_MODE_A, &store));
    for (int sharded = 0; sharded < 2; sharded++)
        for (int uneven = 0; uneven < 2; uneven++) case_write(store, sharded, uneven, ZARR_ORDER_C);
    case_write(store, 0, 1, ZARR_ORDER_F);
    case_write(store, 1, 0, ZARR_ORDER_F);
    for (int variant = 0; variant < 4; variant++) case_encoded(store, variant);
    case_open(store);
    case_partial(store, 0);
    case_partial(store, 1);
    case_rounds(store);
    case_append(store, 0);
    case_append(store, 1);
    case_errors(store);
    zarr_store_free(store);
    if (rank_ == 0) printf("collective (%d ranks): %d passed, %d failed\n", size_, passed, failed);
    MPI_Finalize();
    return failed ? 1 : 0;
}
