/*
 * Rectilinear chunk grids (Zarr v3's extension): chunk edges set per dimension, the grid
 * queries, reads and writes across uneven chunks, and appends that add one edge each.
 */
#include "check.h"

static void test_edges_reads_and_queries(void) {
    zarr_store_t *s = NULL;
    CHECK_OK(zarr_store_new_memory(&s));
    const uint64_t shape[2] = {10, 6}, chunks[2] = {4, 3};
    const uint64_t row_edges[4] = {1, 2, 3, 4};
    zarr_array_builder_t *b = NULL;
    CHECK_OK(zarr_array_builder_new(ZARR_DTYPE_INT32, 2, shape, &b));
    CHECK_OK(zarr_array_builder_set_zarr_format(b, 3));
    CHECK_OK(zarr_array_builder_set_chunk_shape(b, 2, chunks));
    CHECK_OK(zarr_array_builder_set_chunk_edges(b, 0, row_edges, 4));
    CHECK_STATUS(zarr_array_builder_set_chunk_edges(b, 2, row_edges, 4), ZARR_ERR_INVALID_ARG);
    const uint64_t zero[2] = {3, 0};
    CHECK_STATUS(zarr_array_builder_set_chunk_edges(b, 1, zero, 2), ZARR_ERR_INVALID_ARG);
    CHECK_ERROR_CONTAINS("lengths ≥ 1");
    zarr_array_t *a = NULL;
    CHECK_OK(zarr_array_create(b, s, "r", ZARR_MODE_W_MINUS, &a));
    zarr_array_builder_free(b);

    zarr_chunk_grid_t kind = -1;
    CHECK_OK(zarr_array_chunk_grid_kind(a, &kind));
    CHECK_EQ(kind, ZARR_CHUNK_GRID_RECTILINEAR);
    uint64_t grid[2] = {0, 0};
    CHECK_OK(zarr_array_chunk_grid_shape(a, 2, grid));
    CHECK(grid[0] == 4 && grid[1] == 2);
    uint64_t edges[4] = {0};
    size_t n = 0;
    CHECK_STATUS(zarr_array_chunk_edges(a, 0, NULL, 0, &n), ZARR_ERR_BUFFER_SIZE);
    CHECK_EQ(n, 4);
    CHECK_OK(zarr_array_chunk_edges(a, 0, edges, 4, &n));
    CHECK(edges[0] == 1 && edges[1] == 2 && edges[2] == 3 && edges[3] == 4);
    CHECK_OK(zarr_array_chunk_edges(a, 1, edges, 4, &n));
    CHECK(n == 2 && edges[0] == 3 && edges[1] == 3);
    CHECK_STATUS(zarr_array_chunk_edges(a, 2, edges, 4, &n), ZARR_ERR_INVALID_ARG);
    const uint64_t at[2] = {6, 4};
    uint64_t chunk[2] = {0, 0};
    CHECK_OK(zarr_array_chunk_of(a, 2, at, chunk));
    CHECK(chunk[0] == 3 && chunk[1] == 1);
    const uint64_t outside[2] = {10, 0};
    CHECK_STATUS(zarr_array_chunk_of(a, 2, outside, chunk), ZARR_ERR_OUT_OF_BOUNDS);
    uint64_t start[2], count[2];
    const uint64_t third[2] = {2, 0};
    CHECK_OK(zarr_array_chunk_region(a, 2, third, start, count));
    CHECK(start[0] == 3 && count[0] == 3 && start[1] == 0 && count[1] == 3);

    int32_t all[60];
    for (int i = 0; i < 60; i++)
        all[i] = i;
    const uint64_t origin[2] = {0, 0};
    CHECK_OK(zarr_array_write(a, 2, origin, shape, ZARR_DTYPE_INT32, ZARR_ORDER_C, all,
                              sizeof all));
    /* Rows 2..5, columns 2..5: across three row chunks and both column chunks. */
    int32_t part[12];
    const uint64_t pstart[2] = {2, 2}, pcount[2] = {3, 4};
    CHECK_OK(zarr_array_read(a, 2, pstart, pcount, ZARR_DTYPE_INT32, ZARR_ORDER_C, part,
                             sizeof part));
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 4; j++)
            CHECK_EQ(part[i * 4 + j], (2 + i) * 6 + 2 + j);
    /* Chunk (1, 0) holds rows 1..3 and columns 0..3; chunk (3, 1) rows 6..10. */
    size_t needed = 0;
    CHECK(zarr_store_get(s, "r/c/1/0", NULL, 0, &needed) != ZARR_ERR_NOT_FOUND);
    CHECK(needed > 0);
    CHECK(zarr_store_get(s, "r/c/3/1", NULL, 0, &needed) != ZARR_ERR_NOT_FOUND);
    CHECK(needed > 0);
    zarr_array_free(a);
    zarr_store_free(s);
}

static void test_appends_add_edges(void) {
    zarr_store_t *s = NULL;
    CHECK_OK(zarr_store_new_memory(&s));
    const uint64_t shape[2] = {0, 3}, chunks[2] = {1, 3};
    const uint64_t first_edge[1] = {1};
    zarr_array_builder_t *b = NULL;
    CHECK_OK(zarr_array_builder_new(ZARR_DTYPE_FLOAT64, 2, shape, &b));
    CHECK_OK(zarr_array_builder_set_zarr_format(b, 3));
    CHECK_OK(zarr_array_builder_set_chunk_shape(b, 2, chunks));
    CHECK_OK(zarr_array_builder_set_chunk_edges(b, 0, first_edge, 1));
    zarr_array_t *a = NULL;
    CHECK_OK(zarr_array_create(b, s, "t", ZARR_MODE_W_MINUS, &a));
    zarr_array_builder_free(b);
    /* Steps of 2, 5 and 1 rows: one chunk each. */
    const uint64_t steps[3] = {2, 5, 1};
    double values[24];
    for (int i = 0; i < 24; i++)
        values[i] = i * 0.5;
    size_t done = 0;
    for (int k = 0; k < 3; k++) {
        const uint64_t count[2] = {steps[k], 3};
        CHECK_OK(zarr_array_append(a, 0, 2, count, ZARR_DTYPE_FLOAT64, ZARR_ORDER_C,
                                   values + done, steps[k] * 3 * sizeof(double)));
        done += steps[k] * 3;
    }
    uint64_t edges[8];
    size_t n = 0;
    CHECK_OK(zarr_array_chunk_edges(a, 0, edges, 8, &n));
    /* The first edge (1) covered the first step's first row; the rest were added. */
    CHECK_EQ(n, 4);
    CHECK(edges[0] == 1 && edges[1] == 1 && edges[2] == 5 && edges[3] == 1);
    double back[24];
    const uint64_t origin[2] = {0, 0}, whole[2] = {8, 3};
    CHECK_OK(zarr_array_read(a, 2, origin, whole, ZARR_DTYPE_FLOAT64, ZARR_ORDER_C, back,
                             sizeof back));
    CHECK_MEM(back, values, sizeof back);
    zarr_array_free(a);
    zarr_store_free(s);
}

int main(void) {
    test_edges_reads_and_queries();
    test_appends_add_edges();
    return CHECK_DONE();
}
