/* Reads a whole benchmark array into memory in one call (zarr_benchmarks' "read all").
 *
 *   read_all PATH */
#include "bench_public.h"

int main(int argc, char **argv) {
    if (argc != 2) {
        fprintf(stderr, "usage: read_all PATH\n");
        return 2;
    }
    zarr_array_t *array = open_array(argv[1]);
    uint64_t start[3] = {0, 0, 0}, shape[3];
    array_shape(array, shape);
    size_t bytes = (size_t)(shape[0] * shape[1] * shape[2]) * 2;
    void *buf = alloc_or_exit(bytes);
    CHECK(zarr_array_read(array, 3, start, shape, ZARR_DTYPE_UINT16, ZARR_ORDER_C, buf, bytes));
    free(buf);
    zarr_array_free(array);
    return 0;
}
