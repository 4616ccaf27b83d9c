/* Reads the whole array t of the reference file REFS (reference:///REFS, which lists the
   chunks of the netCDF files) with one zarr_array_read; prints the seconds and a checksum
   of the values, as read_netcdf does.

   usage: read_zarr REFS */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <zarr.h>

static void check(zarr_status_t status, const char *what) {
    if (status != ZARR_OK) {
        char message[1024];
        zarr_last_error(message, sizeof message, NULL);
        fprintf(stderr, "read_zarr: %s: %s\n", what, message);
        exit(1);
    }
}

int main(int argc, char **argv) {
    if (argc != 2) {
        fprintf(stderr, "usage: read_zarr REFS\n");
        return 2;
    }
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    char url[4200];
    snprintf(url, sizeof url, "reference://%s", argv[1]);
    zarr_store_t *store = NULL;
    check(zarr_store_open_url(url, ZARR_MODE_R, NULL, &store), "open");
    zarr_array_t *t = NULL;
    check(zarr_array_open(store, "t", ZARR_MODE_R, &t), "open t");
    uint64_t shape[3];
    check(zarr_array_shape(t, 3, shape), "shape");
    uint64_t n = shape[0] * shape[1] * shape[2];
    float *buf = malloc(n * sizeof(float));
    if (buf == NULL)
        return 1;
    const uint64_t start[3] = {0, 0, 0};
    check(zarr_array_read(t, 3, start, shape, ZARR_DTYPE_FLOAT32, ZARR_ORDER_C, buf,
                          n * sizeof(float)),
          "read t");
    double sum = 0;
    for (uint64_t i = 0; i < n; i++)
        sum += buf[i];
    clock_gettime(CLOCK_MONOTONIC, &t1);
    double seconds = (double)(t1.tv_sec - t0.tv_sec) + 1e-9 * (double)(t1.tv_nsec - t0.tv_nsec);
    printf("%.3f %llu %.6e\n", seconds, (unsigned long long)n, sum);
    free(buf);
    zarr_array_free(t);
    zarr_store_free(store);
    return 0;
}
