/* Writes the netCDF files the virtual-read benchmark reads: FILES files DIR/day-NN.nc, each
   with STEPS records of a float32 field t(time, lat, lon) of 361 x 720 and its time
   coordinate; netCDF-4 with deflate level 1 and shuffle in chunks of one step ("nc4"), or
   netCDF-3 64-bit offset ("classic"). The field is smooth with a little noise, as model
   output is, so that deflate has something to do.

   usage: make_files DIR nc4|classic FILES STEPS */
#include <netcdf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { NLAT = 361, NLON = 720 };

static void check(int status, const char *what) {
    if (status != NC_NOERR) {
        fprintf(stderr, "make_files: %s: %s\n", what, nc_strerror(status));
        exit(1);
    }
}

int main(int argc, char **argv) {
    if (argc != 5) {
        fprintf(stderr, "usage: make_files DIR nc4|classic FILES STEPS\n");
        return 2;
    }
    const char *dir = argv[1];
    int nc4 = strcmp(argv[2], "nc4") == 0;
    int files = atoi(argv[3]), steps = atoi(argv[4]);
    float *field = malloc(sizeof(float) * NLAT * NLON);
    if (field == NULL || files <= 0 || steps <= 0)
        return 2;
    unsigned state = 12345;
    for (int f = 0; f < files; f++) {
        char path[4096];
        snprintf(path, sizeof path, "%s/day-%02d.nc", dir, f);
        int ncid, dims[3], t, time;
        check(nc_create(path, nc4 ? NC_NETCDF4 | NC_CLOBBER : NC_64BIT_OFFSET | NC_CLOBBER,
                        &ncid), path);
        check(nc_def_dim(ncid, "time", NC_UNLIMITED, &dims[0]), "time");
        check(nc_def_dim(ncid, "lat", NLAT, &dims[1]), "lat");
        check(nc_def_dim(ncid, "lon", NLON, &dims[2]), "lon");
        check(nc_def_var(ncid, "time", NC_DOUBLE, 1, dims, &time), "def time");
        check(nc_put_att_text(ncid, time, "units", 20, "hours since 2000-1-1"), "units");
        check(nc_def_var(ncid, "t", NC_FLOAT, 3, dims, &t), "def t");
        check(nc_put_att_text(ncid, t, "units", 1, "K"), "units");
        if (nc4) {
            size_t chunks[3] = {1, NLAT, NLON};
            check(nc_def_var_chunking(ncid, t, NC_CHUNKED, chunks), "chunking");
            check(nc_def_var_deflate(ncid, t, 1, 1, 1), "deflate");
        }
        check(nc_enddef(ncid), "enddef");
        for (int s = 0; s < steps; s++) {
            for (int i = 0; i < NLAT * NLON; i++) {
                state = state * 1664525u + 1013904223u;
                int lat = i / NLON, lon = i % NLON;
                field[i] = 250.0f + 0.1f * (float)lat + 0.01f * (float)((lon + s * 7) % NLON) +
                           (float)(state >> 24) / 1024.0f;
            }
            size_t start[3] = {(size_t)s, 0, 0}, count[3] = {1, NLAT, NLON};
            check(nc_put_vara_float(ncid, t, start, count, field), "put t");
            double hours = (double)(f * steps + s);
            size_t at = (size_t)s;
            check(nc_put_var1_double(ncid, time, &at, &hours), "put time");
        }
        check(nc_close(ncid), "close");
    }
    free(field);
    return 0;
}
