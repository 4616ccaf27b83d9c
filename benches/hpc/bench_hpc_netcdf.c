/*
 * Parallel netCDF-4 (HDF5 over MPI-IO) side of scripts/bench-hpc.sh: every rank writes its
 * block of each step into one variable (time, z, y, x), chunked as libzarr's collective
 * runs (nz x ny / 4 x nx: the ranks' uneven blocks share chunks), no fill, collective or
 * independent access, no compression or zlib level 1 with shuffle; then reads everything
 * back and checks it bit for bit.
 *
 *   mpirun -n N bench_hpc_netcdf OUT.nc collective|independent none|zlib STEPS NZ NY NX
 */
#include "field.h"

#include <netcdf.h>
#include <netcdf_par.h>

/* Stops every rank on a netCDF error, naming the call. */
#define NC(call)                                                                            \
    do {                                                                                    \
        int status_ = (call);                                                               \
        if (status_ != NC_NOERR) {                                                          \
            fprintf(stderr, "%s: %s\n", #call, nc_strerror(status_));                       \
            MPI_Abort(MPI_COMM_WORLD, 1);                                                   \
        }                                                                                   \
    } while (0)

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    struct run r;
    run_init(&r, argc, argv);
    int collective = strcmp(r.mode, "collective") == 0;
    int zlib = strcmp(r.codec, "zlib") == 0;
    float *buf = malloc(r.block * sizeof(float));
    float *scratch = malloc(r.block * sizeof(float));
    if (!buf || !scratch)
        MPI_Abort(MPI_COMM_WORLD, 1);

    MPI_Barrier(MPI_COMM_WORLD);
    double t0 = MPI_Wtime(), output = 0;
    int ncid, varid, dims[4], old_fill;
    NC(nc_create_par(r.path, NC_NETCDF4 | NC_CLOBBER, MPI_COMM_WORLD, MPI_INFO_NULL, &ncid));
    NC(nc_set_fill(ncid, NC_NOFILL, &old_fill));
    NC(nc_def_dim(ncid, "time", (size_t)r.steps, &dims[0]));
    NC(nc_def_dim(ncid, "z", r.nz, &dims[1]));
    NC(nc_def_dim(ncid, "y", r.ny, &dims[2]));
    NC(nc_def_dim(ncid, "x", r.nx, &dims[3]));
    NC(nc_def_var(ncid, "temperature", NC_FLOAT, 4, dims, &varid));
    size_t chunks[4] = {1, r.nz, r.chunk_y, r.nx};
    NC(nc_def_var_chunking(ncid, varid, NC_CHUNKED, chunks));
    if (zlib)
        NC(nc_def_var_deflate(ncid, varid, 1, 1, 1));
    NC(nc_enddef(ncid));
    int status = nc_var_par_access(ncid, varid, collective ? NC_COLLECTIVE : NC_INDEPENDENT);
    if (status != NC_NOERR) {
        /* HDF5 writes filtered (compressed) datasets in parallel only collectively. */
        if (r.rank == 0)
            printf("ROW|netCDF-4|%s|%s|%d|unsupported: %s\n", r.mode, r.codec, r.ranks,
                   nc_strerror(status));
        nc_close(ncid);
        MPI_Finalize();
        return 0;
    }
    for (int t = 0; t < r.steps; t++) {
        fill_step(&r, t, buf);
        double s = MPI_Wtime();
        size_t start[4] = {(size_t)t, 0, r.y0, 0}, count[4] = {1, r.nz, r.ny_rank, r.nx};
        NC(nc_put_vara_float(ncid, varid, start, count, buf));
        output += MPI_Wtime() - s;
    }
    double s = MPI_Wtime();
    NC(nc_close(ncid));
    output += MPI_Wtime() - s;
    MPI_Barrier(MPI_COMM_WORLD);
    double wall = max_over_ranks(MPI_Wtime() - t0);
    output = max_over_ranks(output);
    double rss = peak_rss_mib();

    /* Read-back: every rank its own blocks, every value exact. */
    size_t bad = 0;
    NC(nc_open_par(r.path, NC_NOWRITE, MPI_COMM_WORLD, MPI_INFO_NULL, &ncid));
    NC(nc_inq_varid(ncid, "temperature", &varid));
    for (int t = 0; t < r.steps; t++) {
        size_t start[4] = {(size_t)t, 0, r.y0, 0}, count[4] = {1, r.nz, r.ny_rank, r.nx};
        NC(nc_get_vara_float(ncid, varid, start, count, buf));
        bad += check_step(&r, t, buf, scratch);
    }
    NC(nc_close(ncid));
    unsigned long long total = 0, mine = bad;
    MPI_Allreduce(&mine, &total, 1, MPI_UNSIGNED_LONG_LONG, MPI_SUM, MPI_COMM_WORLD);
    print_row(&r, "netCDF-4", wall, output, -1, -1, rss, (size_t)total);
    free(buf);
    free(scratch);
    free(r.base);
    MPI_Finalize();
    return total != 0;
}
