/* Reads the variable t of each file given, one file after another, with netCDF-C
   (nc_get_var_float) into one buffer; prints the seconds and a checksum of the values.

   usage: read_netcdf FILE... */
#include <netcdf.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static void check(int status, const char *what) {
    if (status != NC_NOERR) {
        fprintf(stderr, "read_netcdf: %s: %s\n", what, nc_strerror(status));
        exit(1);
    }
}

int main(int argc, char **argv) {
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    double sum = 0;
    uint64_t values = 0;
    float *buf = NULL;
    size_t held = 0;
    for (int f = 1; f < argc; f++) {
        int ncid, t, dims[3];
        check(nc_open(argv[f], NC_NOWRITE, &ncid), argv[f]);
        check(nc_inq_varid(ncid, "t", &t), "t");
        check(nc_inq_vardimid(ncid, t, dims), "dims");
        size_t n = 1;
        for (int d = 0; d < 3; d++) {
            size_t len;
            check(nc_inq_dimlen(ncid, dims[d], &len), "dim");
            n *= len;
        }
        if (n > held) {
            free(buf);
            buf = malloc(n * sizeof(float));
            held = n;
            if (buf == NULL)
                return 1;
        }
        check(nc_get_var_float(ncid, t, buf), "read t");
        for (size_t i = 0; i < n; i++)
            sum += buf[i];
        values += n;
        check(nc_close(ncid), "close");
    }
    clock_gettime(CLOCK_MONOTONIC, &t1);
    double seconds = (double)(t1.tv_sec - t0.tv_sec) + 1e-9 * (double)(t1.tv_nsec - t0.tv_nsec);
    printf("%.3f %llu %.6e\n", seconds, (unsigned long long)values, sum);
    free(buf);
    return 0;
}
