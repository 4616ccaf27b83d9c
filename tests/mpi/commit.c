/*
 * commit.c — tests of zarr_mpi_commit (include/zarr_mpi.h): every rank writes its part of a
 * step of an Icechunk repository with zarr_mpi_write through a store of its own, and the
 * step becomes ONE snapshot.
 *
 * Rank 0 creates the repository and a sharded float64 array (STEPS x NY x 12, inner chunks
 * 1 x 4 x 6, shards 1 x 8 x 12) and commits it; every rank opens its store and the array
 * (zarr_mpi_array_open). Each step: the ranks' uneven blocks of y, whose boundaries do not
 * line up with the shards, go through zarr_mpi_write (each shard written by one
 * aggregator), then zarr_mpi_commit; every rank must get the same snapshot id, equal to
 * what its own store then reads, and read the whole array exact through its handle. Before
 * the second step's commit another writer commits to the branch (a chunk of a second
 * array, through a store of its own): the step must still commit, on top of it. Then:
 * a commit with nothing written (ZARR_ERR_INVALID_ARG on every rank, from rank 0), an
 * id buffer too small on the last rank (ZARR_ERR_BUFFER_SIZE on every rank naming it;
 * nothing committed), an export failing on the last rank (a read-only store: its error,
 * named by that rank, on every rank), and rank 0 checks the history: the setup, the other writer's commit
 * and one snapshot per step, with their messages, and both arrays' values.
 *
 * Usage: mpirun -np N commit <absolute directory of a new repository>
 * Prints "commit (N ranks): P passed, F failed" from rank 0; exits 1 on a failure.
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zarr.h>
#include <zarr_mpi.h>

enum { STEPS = 3, NX = 12 };

static int rank_, size_, passed, failed;

/* Stops every rank on an unexpected failure. */
static void check(zarr_status_t status, const char *what) {
    if (status == ZARR_OK) return;
    char message[1024] = "";
    zarr_mpi_last_error(message, sizeof message, NULL);
    if (!message[0]) zarr_last_error(message, sizeof message, NULL);
    fprintf(stderr, "rank %d: %s: %s: %s\n", rank_, what, zarr_status_str(status), message);
    MPI_Abort(MPI_COMM_WORLD, 1);
}

/* Counts a case (rank 0 prints it): failed when any rank saw it fail. */
static void verdict(const char *name, int bad) {
    MPI_Allreduce(MPI_IN_PLACE, &bad, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    if (bad) failed++;
    else passed++;
    if (rank_ == 0) printf("%s %s\n", bad ? "FAIL" : "ok  ", name);
}

static double value(uint64_t t, uint64_t y, uint64_t x) { return (double)t * 1e4 + (double)y * 1e2 + (double)x; }

/* Rows of y of rank r: 5 each, the inner boundaries moved one row down (rank 0 holds 6). */
static uint64_t y_start(int r) {
    if (r == 0) return 0;
    return (uint64_t)r * 5 + (r < size_ ? 1 : 0);
}

/* Whether the array reads as steps [0, steps) written and the rest never written (NaN). */
static int compare(zarr_array_t *array, uint64_t ny, uint64_t steps) {
    const uint64_t start[3] = {0, 0, 0}, count[3] = {STEPS, ny, NX};
    size_t n = (size_t)(STEPS * ny * NX);
    double *got = malloc(n * sizeof *got);
    if (!got) MPI_Abort(MPI_COMM_WORLD, 1);
    check(zarr_array_read(array, 3, start, count, ZARR_DTYPE_FLOAT64, ZARR_ORDER_C, got,
                          n * sizeof *got),
          "read back");
    int bad = 0;
    for (uint64_t t = 0; t < STEPS; t++)
        for (uint64_t y = 0; y < ny; y++)
            for (uint64_t x = 0; x < NX; x++) {
                double v = got[(t * ny + y) * NX + x];
                bad += t < steps ? v != value(t, y, x) : v == v;
            }
    free(got);
    return bad;
}

/* Rank 0: the repository and the array, committed. */
static void setup(const char *url, uint64_t ny) {
    zarr_store_t *store = NULL;
    check(zarr_store_open_url(url, ZARR_MODE_W_MINUS, NULL, &store), "create the repository");
    const uint64_t shape[3] = {STEPS, ny, NX}, chunks[3] = {1, 4, 6}, shards[3] = {1, 8, NX};
    zarr_array_builder_t *b = NULL;
    zarr_array_t *a = NULL;
    check(zarr_array_builder_new(ZARR_DTYPE_FLOAT64, 3, shape, &b), "builder");
    check(zarr_array_builder_set_chunk_shape(b, 3, chunks), "chunk shape");
    check(zarr_array_builder_set_shard_shape(b, 3, shards), "shard shape");
    check(zarr_array_builder_set_fill_value_json(b, "\"NaN\""), "fill value");
    check(zarr_array_create(b, store, "field", ZARR_MODE_W_MINUS, &a), "create the array");
    zarr_array_free(a);
    zarr_array_builder_free(b);
    /* The array another writer commits a chunk of meanwhile. */
    const uint64_t one[1] = {4};
    check(zarr_array_builder_new(ZARR_DTYPE_FLOAT64, 1, one, &b), "builder");
    check(zarr_array_create(b, store, "other", ZARR_MODE_W_MINUS, &a), "create the other array");
    zarr_array_free(a);
    zarr_array_builder_free(b);
    check(zarr_store_commit(store, "setup", NULL, 0), "setup commit");
    zarr_store_free(store);
}

/* Rank 0: another writer commits the other array's values through a store of its own. */
static void other_writer(const char *url) {
    zarr_store_t *store = NULL;
    zarr_array_t *a = NULL;
    const double values[4] = {1.5, 2.5, 3.5, 4.5};
    const uint64_t start[1] = {0}, count[1] = {4};
    check(zarr_store_open_url(url, ZARR_MODE_R_PLUS, NULL, &store), "open the other writer");
    check(zarr_array_open(store, "other", ZARR_MODE_R_PLUS, &a), "open the other array");
    check(zarr_array_write(a, 1, start, count, ZARR_DTYPE_FLOAT64, ZARR_ORDER_C, values,
                           sizeof values),
          "write the other array");
    check(zarr_store_commit(store, "other writer", NULL, 0), "the other writer's commit");
    zarr_array_free(a);
    zarr_store_free(store);
}

/* The last error message of the layer starts with "rank N: ". */
static int names_rank(int r) {
    char message[1024] = "", want[32];
    zarr_mpi_last_error(message, sizeof message, NULL);
    snprintf(want, sizeof want, "rank %d: ", r);
    return strncmp(message, want, strlen(want)) == 0;
}

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank_);
    MPI_Comm_size(MPI_COMM_WORLD, &size_);
    if (argc != 2 || argv[1][0] != '/') {
        if (rank_ == 0) fprintf(stderr, "usage: commit <absolute directory>\n");
        MPI_Finalize();
        return 2;
    }
    char url[4096];
    if (snprintf(url, sizeof url, "icechunk://%s", argv[1]) >= (int)sizeof url)
        MPI_Abort(MPI_COMM_WORLD, 2);
    const uint64_t ny = y_start(size_);
    if (rank_ == 0) setup(url, ny);
    MPI_Barrier(MPI_COMM_WORLD);

    zarr_store_t *store = NULL;
    zarr_array_t *array = NULL;
    check(zarr_store_open_url(url, ZARR_MODE_R_PLUS, NULL, &store), "open the branch");
    check(zarr_mpi_array_open(MPI_COMM_WORLD, store, "field", ZARR_MODE_R_PLUS, &array),
          "zarr_mpi_array_open");
    const uint64_t y0 = y_start(rank_), rows = y_start(rank_ + 1) - y0;
    double *block = malloc((size_t)(rows * NX) * sizeof *block + 1);
    char (*ids)[ZARR_SNAPSHOT_ID_BYTES] = malloc((size_t)size_ * ZARR_SNAPSHOT_ID_BYTES);
    char steps[STEPS][ZARR_SNAPSHOT_ID_BYTES];
    if (!block || !ids) MPI_Abort(MPI_COMM_WORLD, 1);
    for (uint64_t t = 0; t < STEPS; t++) {
        for (uint64_t y = 0; y < rows; y++)
            for (uint64_t x = 0; x < NX; x++) block[y * NX + x] = value(t, y0 + y, x);
        const uint64_t start[3] = {t, y0, 0}, count[3] = {1, rows, NX};
        check(zarr_mpi_write(MPI_COMM_WORLD, array, 3, start, count, ZARR_DTYPE_FLOAT64,
                             ZARR_ORDER_C, block, (size_t)(rows * NX) * sizeof *block),
              "zarr_mpi_write");
        char message[32], id[ZARR_SNAPSHOT_ID_BYTES] = "", at[ZARR_SNAPSHOT_ID_BYTES] = "";
        snprintf(message, sizeof message, "step %d", (int)t + 1);
        if (t == 1 && rank_ == 0) other_writer(url);
        check(zarr_mpi_commit(MPI_COMM_WORLD, store, message, id, sizeof id), "zarr_mpi_commit");
        memcpy(steps[t], id, sizeof id);
        check(zarr_store_snapshot_id(store, at, sizeof at), "zarr_store_snapshot_id");
        MPI_Allgather(id, ZARR_SNAPSHOT_ID_BYTES, MPI_CHAR, ids, ZARR_SNAPSHOT_ID_BYTES,
                      MPI_CHAR, MPI_COMM_WORLD);
        int bad = strcmp(id, at) != 0 || strlen(id) + 1 != ZARR_SNAPSHOT_ID_BYTES;
        for (int r = 0; r < size_; r++) bad += strcmp(ids[r], id) != 0;
        /* The handle still works after the rebase, and sees every step committed. */
        bad += compare(array, ny, t + 1);
        char name[48];
        snprintf(name, sizeof name, "step %d: one snapshot, read back", (int)t + 1);
        verdict(name, bad);
    }

    /* Nothing written since the last commit: rank 0's commit refuses, every rank hears. */
    zarr_status_t st = zarr_mpi_commit(MPI_COMM_WORLD, store, "empty", NULL, 0);
    verdict("nothing to commit: ZARR_ERR_INVALID_ARG from rank 0",
            st != ZARR_ERR_INVALID_ARG || !names_rank(0));

    /* An id buffer too small on the last rank: refused everywhere before anything moves. */
    const uint64_t start[3] = {0, y0, 0}, count[3] = {1, rows, NX};
    for (uint64_t y = 0; y < rows; y++)
        for (uint64_t x = 0; x < NX; x++) block[y * NX + x] = value(0, y0 + y, x);
    check(zarr_mpi_write(MPI_COMM_WORLD, array, 3, start, count, ZARR_DTYPE_FLOAT64,
                         ZARR_ORDER_C, block, (size_t)(rows * NX) * sizeof *block),
          "zarr_mpi_write (rewrite of step 1)");
    char small[ZARR_SNAPSHOT_ID_BYTES];
    st = zarr_mpi_commit(MPI_COMM_WORLD, store, "refused", small,
                         rank_ == size_ - 1 ? 4 : sizeof small);
    char at[ZARR_SNAPSHOT_ID_BYTES] = "";
    check(zarr_store_snapshot_id(store, at, sizeof at), "zarr_store_snapshot_id");
    verdict("an id buffer too small on the last rank: refused on every rank, nothing committed",
            st != ZARR_ERR_BUFFER_SIZE || !names_rank(size_ - 1) ||
                strcmp(at, steps[STEPS - 1]) != 0);

    /* The last rank's store is read-only: its export fails, every rank hears it once,
     * named by that rank alone. */
    if (size_ > 1) {
        zarr_store_t *reader = NULL;
        if (rank_ == size_ - 1)
            check(zarr_store_open_url(url, ZARR_MODE_R, NULL, &reader), "open read-only");
        st = zarr_mpi_commit(MPI_COMM_WORLD, rank_ == size_ - 1 ? reader : store, "refused",
                             NULL, 0);
        char message[1024] = "", want[64];
        zarr_mpi_last_error(message, sizeof message, NULL);
        snprintf(want, sizeof want, "rank %d: zarr_store_changes_export", size_ - 1);
        verdict("an export failing on the last rank: its error on every rank",
                st != ZARR_ERR_READ_ONLY || strncmp(message, want, strlen(want)) != 0);
        zarr_store_free(reader);
    }
    zarr_array_free(array);
    zarr_store_free(store);
    MPI_Barrier(MPI_COMM_WORLD);

    /* Rank 0: the history holds the setup and one snapshot per step, newest first. */
    if (rank_ == 0) {
        zarr_store_t *reader = NULL;
        check(zarr_store_open_url(url, ZARR_MODE_R, NULL, &reader), "open read-only");
        size_t needed = 0;
        int bad = zarr_store_history_json(reader, NULL, 0, &needed) != ZARR_ERR_BUFFER_SIZE;
        char *history = malloc(needed ? needed : 1);
        if (!history) MPI_Abort(MPI_COMM_WORLD, 1);
        check(zarr_store_history_json(reader, history, needed, NULL), "history");
        int snapshots = 0;
        for (const char *p = history; (p = strstr(p, "\"id\":")) != NULL; p++) snapshots++;
        /* the repository's first, the setup, the other writer's, the steps */
        bad += snapshots != STEPS + 3 || !strstr(history, "\"message\":\"other writer\"");
        const char *previous = history;
        for (int t = STEPS - 1; t >= 0; t--) {
            char message[32];
            snprintf(message, sizeof message, "\"message\":\"step %d\"", t + 1);
            const char *found = strstr(history, steps[t]);
            bad += !found || found < previous || !strstr(found, message);
            if (found) previous = found;
        }
        free(history);
        zarr_array_t *a = NULL;
        check(zarr_array_open(reader, "field", ZARR_MODE_R, &a), "open the array read-only");
        bad += compare(a, ny, STEPS);
        zarr_array_free(a);
        double other[4] = {0};
        const uint64_t start[1] = {0}, count[1] = {4};
        check(zarr_array_open(reader, "other", ZARR_MODE_R, &a), "open the other array");
        check(zarr_array_read(a, 1, start, count, ZARR_DTYPE_FLOAT64, ZARR_ORDER_C, other,
                              sizeof other),
              "read the other array");
        bad += other[0] != 1.5 || other[3] != 4.5;
        zarr_array_free(a);
        zarr_store_free(reader);
        if (bad) failed++;
        else passed++;
        printf("%s history: the setup, the other writer's commit and %d steps, values exact\n",
               bad ? "FAIL" : "ok  ", STEPS);
    }
    free(block);
    free(ids);
    if (rank_ == 0)
        printf("commit (%d ranks): %d passed, %d failed\n", size_, passed, failed);
    MPI_Bcast(&failed, 1, MPI_INT, 0, MPI_COMM_WORLD);
    MPI_Finalize();
    return failed != 0;
}
