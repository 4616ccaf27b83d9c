/*
 * mpi_icechunk.c — MPI ranks write one step of a time series into an Icechunk repository
 * in sessions of their own; rank 0 commits each step as ONE snapshot.
 *
 * Rank 0 creates the repository and two arrays, `temperature` (int32) and `pressure`
 * (float64), each STEPS x (ROWS * ranks) x NX with chunks of 1 x ROWS x NX, and commits
 * them (the setup commit: writers only write chunks, never create or change arrays). Then,
 * for each step, every rank writes its slab (ROWS rows, chunk-aligned, so no two ranks touch
 * one chunk; for a sharded array, shard-aligned) of both arrays through its own writable
 * store on the branch, does not commit,
 * and exports its uncommitted changes (zarr_store_changes_export); rank 0 gathers the bytes
 * (MPI_Gatherv), merges them into its own store (zarr_store_changes_merge) and commits once.
 * The other ranks then discard their exported changes and rebase onto that commit, so that
 * every rank starts the next step on the same snapshot. At the end rank 0 checks that the
 * history holds one snapshot per step and that both arrays hold exactly what was written.
 *
 * Usage: mpirun -np N mpi_icechunk <absolute directory of a new repository>
 */
#include <limits.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zarr.h>

enum { STEPS = 3, ROWS = 8, NX = 64 };

static void check(zarr_status_t status, const char *what, int rank) {
    if (status != ZARR_OK) {
        char message[512];
        zarr_last_error(message, sizeof message, NULL);
        fprintf(stderr, "rank %d: %s failed: %s: %s\n", rank, what, zarr_status_str(status),
                message);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
}

static void require(int ok, const char *what, int rank) {
    if (!ok) {
        fprintf(stderr, "rank %d: %s\n", rank, what);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
}

/* The values of cell (y, x) at step t: exact in both types. */
static int32_t temperature_at(uint64_t t, uint64_t y, uint64_t x) {
    return (int32_t)(t * 100000 + y * 100 + x);
}
static double pressure_at(uint64_t t, uint64_t y, uint64_t x) {
    return (double)t * 1e6 + (double)y * 1e3 + (double)x + 0.25;
}

static const char *const NAMES[2] = {"temperature", "pressure"};

/* Rank 0: the repository with both arrays, committed. */
static void setup(const char *url, uint64_t ny, int rank) {
    zarr_store_t *store = NULL;
    check(zarr_store_open_url(url, ZARR_MODE_W_MINUS, NULL, &store), "open the repository", rank);
    const uint64_t shape[3] = {STEPS, ny, NX}, chunks[3] = {1, ROWS, NX};
    const zarr_dtype_t types[2] = {ZARR_DTYPE_INT32, ZARR_DTYPE_FLOAT64};
    for (int i = 0; i < 2; i++) {
        zarr_array_builder_t *b = NULL;
        zarr_array_t *a = NULL;
        check(zarr_array_builder_new(types[i], 3, shape, &b), "builder", rank);
        check(zarr_array_builder_set_chunk_shape(b, 3, chunks), "chunk shape", rank);
        check(zarr_array_builder_set_zarr_format(b, 3), "format", rank);
        check(zarr_array_create(b, store, NAMES[i], ZARR_MODE_W_MINUS, &a), NAMES[i], rank);
        zarr_array_free(a);
        zarr_array_builder_free(b);
    }
    check(zarr_store_commit(store, "setup", NULL, 0), "setup commit", rank);
    zarr_store_free(store);
}

/* This rank's slab of step `t` of both arrays, written through `store` (uncommitted). */
static void write_slab(zarr_store_t *store, uint64_t t, int rank) {
    static int32_t temperature[ROWS * NX];
    static double pressure[ROWS * NX];
    const uint64_t y0 = (uint64_t)rank * ROWS;
    for (uint64_t y = 0; y < ROWS; y++) {
        for (uint64_t x = 0; x < NX; x++) {
            temperature[y * NX + x] = temperature_at(t, y0 + y, x);
            pressure[y * NX + x] = pressure_at(t, y0 + y, x);
        }
    }
    const uint64_t origin[3] = {t, y0, 0}, count[3] = {1, ROWS, NX};
    const void *data[2] = {temperature, pressure};
    const size_t sizes[2] = {sizeof temperature, sizeof pressure};
    const zarr_dtype_t types[2] = {ZARR_DTYPE_INT32, ZARR_DTYPE_FLOAT64};
    for (int i = 0; i < 2; i++) {
        zarr_array_t *a = NULL;
        check(zarr_array_open(store, NAMES[i], ZARR_MODE_R_PLUS, &a), NAMES[i], rank);
        check(zarr_array_write(a, 3, origin, count, types[i], ZARR_ORDER_C, data[i], sizes[i]),
              "write the slab", rank);
        zarr_array_free(a);
    }
}

/* Rank 0 gathers every rank's exported changes of `store` and merges them into its own. */
static void gather_and_merge(zarr_store_t *store, int rank, int size) {
    void *bytes = NULL;
    size_t len = 0;
    check(zarr_store_changes_export(store, &bytes, &len), "export the changes", rank);
    require(len <= INT_MAX, "the exported changes exceed what MPI_Gatherv counts", rank);
    int mine = (int)len;
    int *lens = NULL, *offsets = NULL;
    char *all = NULL;
    if (rank == 0) {
        lens = calloc((size_t)size, sizeof *lens);
        offsets = calloc((size_t)size, sizeof *offsets);
        require(lens && offsets, "out of memory", rank);
    }
    MPI_Gather(&mine, 1, MPI_INT, lens, 1, MPI_INT, 0, MPI_COMM_WORLD);
    if (rank == 0) {
        size_t total = 0;
        for (int r = 0; r < size; r++) {
            require(total <= INT_MAX, "the changes of all ranks exceed what MPI counts", rank);
            offsets[r] = (int)total;
            total += (size_t)lens[r];
        }
        require(total <= INT_MAX, "the changes of all ranks exceed what MPI counts", rank);
        all = malloc(total ? total : 1);
        require(all != NULL, "out of memory", rank);
    }
    MPI_Gatherv(bytes, mine, MPI_BYTE, all, lens, offsets, MPI_BYTE, 0, MPI_COMM_WORLD);
    zarr_bytes_free(bytes);
    if (rank == 0) {
        /* Rank 0's own changes are in its store already. */
        for (int r = 1; r < size; r++)
            check(zarr_store_changes_merge(store, all + offsets[r], (size_t)lens[r]),
                  "merge a rank's changes", rank);
        free(all);
        free(offsets);
        free(lens);
    }
}

/* Rank 0, at the end: one snapshot per step in the history, and exact values. */
static void verify(const char *url, uint64_t ny, char ids[STEPS][ZARR_SNAPSHOT_ID_BYTES]) {
    zarr_store_t *store = NULL;
    check(zarr_store_open_url(url, ZARR_MODE_R, NULL, &store), "open read-only", 0);
    size_t needed = 0;
    zarr_status_t sized = zarr_store_history_json(store, NULL, 0, &needed);
    require(sized == ZARR_ERR_BUFFER_SIZE, "history size", 0);
    char *history = malloc(needed);
    require(history != NULL, "out of memory", 0);
    check(zarr_store_history_json(store, history, needed, NULL), "history", 0);
    /* Newest first: step 3, 2, 1 (each id and its message), setup, the repository's first. */
    int snapshots = 0;
    for (const char *at = history; (at = strstr(at, "\"id\":")) != NULL; at++) snapshots++;
    require(snapshots == STEPS + 2, "the history does not hold one snapshot per step", 0);
    const char *previous = history;
    for (int t = STEPS - 1; t >= 0; t--) {
        char entry[128];
        snprintf(entry, sizeof entry, "{\"id\":\"%s\",\"parent\":\"%s\"", ids[t],
                 t > 0 ? ids[t - 1] : "");
        const char *found = strstr(history, t > 0 ? entry : ids[t]);
        require(found != NULL && found >= previous, "a step's snapshot is missing", 0);
        char message[32];
        snprintf(message, sizeof message, "\"message\":\"step %d\"", t + 1);
        require(strstr(found, message) != NULL, "a step's message is missing", 0);
        previous = found;
    }
    free(history);

    const size_t n = (size_t)STEPS * ny * NX;
    int32_t *temperature = malloc(n * sizeof *temperature);
    double *pressure = malloc(n * sizeof *pressure);
    require(temperature && pressure, "out of memory", 0);
    const uint64_t origin[3] = {0, 0, 0}, shape[3] = {STEPS, ny, NX};
    void *data[2] = {temperature, pressure};
    const size_t sizes[2] = {n * sizeof *temperature, n * sizeof *pressure};
    const zarr_dtype_t types[2] = {ZARR_DTYPE_INT32, ZARR_DTYPE_FLOAT64};
    for (int i = 0; i < 2; i++) {
        zarr_array_t *a = NULL;
        check(zarr_array_open(store, NAMES[i], ZARR_MODE_R, &a), NAMES[i], 0);
        check(zarr_array_read(a, 3, origin, shape, types[i], ZARR_ORDER_C, data[i], sizes[i]),
              "read back", 0);
        zarr_array_free(a);
    }
    for (uint64_t t = 0; t < STEPS; t++)
        for (uint64_t y = 0; y < ny; y++)
            for (uint64_t x = 0; x < NX; x++) {
                size_t k = (size_t)((t * ny + y) * NX + x);
                require(temperature[k] == temperature_at(t, y, x), "temperature differs", 0);
                require(pressure[k] == pressure_at(t, y, x), "pressure differs", 0);
            }
    free(pressure);
    free(temperature);
    zarr_store_free(store);
}

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    int rank = 0, size = 1;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (argc < 2 || argv[1][0] != '/') {
        if (rank == 0) fprintf(stderr, "usage: mpi_icechunk <absolute directory>\n");
        MPI_Finalize();
        return 2;
    }
    char url[4096];
    require(snprintf(url, sizeof url, "icechunk://%s", argv[1]) < (int)sizeof url,
            "the directory name is too long", rank);
    const uint64_t ny = (uint64_t)size * ROWS;
    if (rank == 0) setup(url, ny, rank);
    MPI_Barrier(MPI_COMM_WORLD);

    /* Every rank's own writable store on the branch, at the setup commit. */
    zarr_store_t *store = NULL;
    check(zarr_store_open_url(url, ZARR_MODE_R_PLUS, NULL, &store), "open the branch", rank);
    char ids[STEPS][ZARR_SNAPSHOT_ID_BYTES];
    for (int t = 0; t < STEPS; t++) {
        write_slab(store, (uint64_t)t, rank);
        gather_and_merge(store, rank, size);
        if (rank == 0) {
            char message[32];
            snprintf(message, sizeof message, "step %d", t + 1);
            check(zarr_store_commit(store, message, ids[t], sizeof ids[t]), "commit", rank);
        }
        MPI_Bcast(ids[t], ZARR_SNAPSHOT_ID_BYTES, MPI_CHAR, 0, MPI_COMM_WORLD);
        if (rank != 0) {
            /* What this rank wrote is in the commit: go on from it. */
            check(zarr_store_discard(store), "discard", rank);
            check(zarr_store_rebase(store), "rebase", rank);
        }
        char at[ZARR_SNAPSHOT_ID_BYTES];
        check(zarr_store_snapshot_id(store, at, sizeof at), "snapshot id", rank);
        require(strcmp(at, ids[t]) == 0, "a rank is not at the step's commit", rank);
    }
    zarr_store_free(store);
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0) {
        verify(url, ny, ids);
        printf("mpi_icechunk: %d ranks, %d steps committed as %d snapshots, values exact\n",
               size, STEPS, STEPS);
    }
    MPI_Finalize();
    return 0;
}
