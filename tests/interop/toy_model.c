/*
 * toy_model.c — a weather model's output loop through libzarr's C API, for xarray to read
 * (tests/interop/test_toy_model_xarray.py).
 *
 * Usage: toy_model STORE FORMAT   (FORMAT 2 or 3)
 *
 * Writes at STORE a group with CF global attributes and:
 *   lat (3), lon (4)      float64 coordinates holding a real 0.0 (no missing value)
 *   level (3)             float32 pressure levels
 *   time (time)           float64 "hours since 2000-01-01", first value 0, appended per step
 *   t (time, level, lat, lon)  float32 with the CF missing value -9999, one chunk per
 *                         (step, level), appended one step at a time
 * Steps 0 to 2 are appended whole, each with one cell written as the missing value (the
 * model's "no data here"). Step 3 grows the arrays by resize and writes only level 0 of
 * t: its other levels are never written (their chunks do not exist). Attributes are set
 * by the typed calls: strings, a float32 (0.1f), a float32 pair, a float64 and an int32.
 * t[s][k][j][i] = 250 + 10 k + j + 0.25 i + 0.5 s (exact in float32).
 */
#include <stdio.h>
#include <stdlib.h>
#include <zarr.h>

enum { NLEV = 3, NLAT = 3, NLON = 4, FULL_STEPS = 3, STEPS = 4 };
static const float MISSING = -9999.0f;

static void check(zarr_status_t status, const char *what) {
    if (status != ZARR_OK) {
        char message[1024];
        zarr_last_error(message, sizeof message, NULL);
        fprintf(stderr, "toy_model: %s: %s: %s\n", what, zarr_status_str(status), message);
        exit(1);
    }
}

/* A new array at `path` of `group`, with the dimension names `dims`. */
static zarr_array_t *create(zarr_group_t *group, const char *path, zarr_dtype_t dtype,
                            size_t ndim, const uint64_t *shape, const uint64_t *chunks,
                            const char *const *dims, const float *missing) {
    zarr_array_builder_t *builder = NULL;
    zarr_array_t *array = NULL;
    check(zarr_array_builder_new(dtype, ndim, shape, &builder), path);
    check(zarr_array_builder_set_chunk_shape(builder, ndim, chunks), path);
    if (missing) check(zarr_array_builder_set_missing_value(builder, *missing), path);
    check(zarr_group_create_array(group, builder, path, ZARR_MODE_W, &array), path);
    zarr_array_builder_free(builder);
    check(zarr_array_set_dimension_names(array, ndim, dims), path);
    return array;
}

static void set_string(zarr_array_t *array, const char *key, const char *value) {
    check(zarr_array_attr_set_string(array, key, value), key);
}

/* Writes a whole 1-D coordinate. */
static void write_1d(zarr_array_t *array, zarr_dtype_t dtype, uint64_t n, const void *values,
                     size_t bytes) {
    const uint64_t start[1] = {0}, count[1] = {n};
    check(zarr_array_write(array, 1, start, count, dtype, ZARR_ORDER_C, values, bytes),
          "coordinate");
}

int main(int argc, char **argv) {
    if (argc != 3 || (atoi(argv[2]) != 2 && atoi(argv[2]) != 3)) {
        fprintf(stderr, "usage: toy_model STORE FORMAT (2 or 3)\n");
        return 2;
    }
    zarr_store_t *store = NULL;
    zarr_group_t *root = NULL;
    check(zarr_store_open_fs(argv[1], ZARR_MODE_W, &store), argv[1]);
    check(zarr_group_create(store, "", ZARR_MODE_W, atoi(argv[2]), &root), "root group");
    check(zarr_group_attr_set_string(root, "Conventions", "CF-1.8"), "Conventions");
    check(zarr_group_attr_set_string(root, "title", "toy model"), "title");
    const int32_t version = 2;
    check(zarr_group_attr_set_number(root, "model_version", ZARR_DTYPE_INT32, &version),
          "model_version");

    const char *lat_dims[] = {"lat"}, *lon_dims[] = {"lon"}, *level_dims[] = {"level"};
    const char *time_dims[] = {"time"}, *t_dims[] = {"time", "level", "lat", "lon"};
    const uint64_t nlat[1] = {NLAT}, nlon[1] = {NLON}, nlev[1] = {NLEV};
    zarr_array_t *lat = create(root, "lat", ZARR_DTYPE_FLOAT64, 1, nlat, nlat, lat_dims, NULL);
    const double lat_values[NLAT] = {-10.0, 0.0, 10.0};
    write_1d(lat, ZARR_DTYPE_FLOAT64, NLAT, lat_values, sizeof lat_values);
    set_string(lat, "units", "degrees_north");
    set_string(lat, "standard_name", "latitude");
    zarr_array_t *lon = create(root, "lon", ZARR_DTYPE_FLOAT64, 1, nlon, nlon, lon_dims, NULL);
    const double lon_values[NLON] = {0.0, 90.0, 180.0, 270.0};
    write_1d(lon, ZARR_DTYPE_FLOAT64, NLON, lon_values, sizeof lon_values);
    set_string(lon, "units", "degrees_east");
    set_string(lon, "standard_name", "longitude");
    zarr_array_t *level =
        create(root, "level", ZARR_DTYPE_FLOAT32, 1, nlev, nlev, level_dims, NULL);
    const float level_values[NLEV] = {1000.0f, 850.0f, 500.0f};
    write_1d(level, ZARR_DTYPE_FLOAT32, NLEV, level_values, sizeof level_values);
    set_string(level, "units", "hPa");
    set_string(level, "positive", "down");

    const uint64_t no_time[1] = {0}, time_chunks[1] = {2};
    zarr_array_t *time = create(root, "time", ZARR_DTYPE_FLOAT64, 1, no_time, time_chunks,
                                time_dims, NULL);
    set_string(time, "units", "hours since 2000-01-01 00:00:00");
    set_string(time, "calendar", "standard");
    set_string(time, "standard_name", "time");

    const uint64_t t_shape[4] = {0, NLEV, NLAT, NLON}, t_chunks[4] = {1, 1, NLAT, NLON};
    zarr_array_t *t = create(root, "t", ZARR_DTYPE_FLOAT32, 4, t_shape, t_chunks, t_dims,
                             &MISSING);
    set_string(t, "units", "K");
    set_string(t, "standard_name", "air_temperature");
    const float accuracy = 0.1f, valid_range[2] = {150.0f, 350.0f};
    const double reference = 273.15;
    const int32_t member = 7;
    check(zarr_array_attr_set_number(t, "accuracy", ZARR_DTYPE_FLOAT32, &accuracy), "accuracy");
    check(zarr_array_attr_set_numbers(t, "valid_range", ZARR_DTYPE_FLOAT32, valid_range, 2),
          "valid_range");
    check(zarr_array_attr_set_number(t, "reference_temperature", ZARR_DTYPE_FLOAT64,
                                     &reference),
          "reference_temperature");
    check(zarr_array_attr_set_number(t, "ensemble_member", ZARR_DTYPE_INT32, &member),
          "ensemble_member");

    static float field[NLEV][NLAT][NLON];
    for (int s = 0; s < STEPS; s++) {
        for (int k = 0; k < NLEV; k++)
            for (int j = 0; j < NLAT; j++)
                for (int i = 0; i < NLON; i++)
                    field[k][j][i] = 250.0f + 10.0f * (float)k + (float)j + 0.25f * (float)i +
                                     0.5f * (float)s;
        /* One cell per step the model has no value for. */
        field[s % NLEV][1][s % NLON] = MISSING;
        const double hours = 6.0 * s;
        const uint64_t one[1] = {1};
        check(zarr_array_append(time, 0, 1, one, ZARR_DTYPE_FLOAT64, ZARR_ORDER_C, &hours,
                                sizeof hours),
              "append time");
        if (s < FULL_STEPS) {
            const uint64_t step[4] = {1, NLEV, NLAT, NLON};
            check(zarr_array_append(t, 0, 4, step, ZARR_DTYPE_FLOAT32, ZARR_ORDER_C, field,
                                    sizeof field),
                  "append t");
        } else {
            /* The last step: grown by resize, only level 0 written. */
            const uint64_t shape[4] = {(uint64_t)s + 1, NLEV, NLAT, NLON};
            check(zarr_array_resize(t, 4, shape), "resize t");
            const uint64_t start[4] = {(uint64_t)s, 0, 0, 0}, count[4] = {1, 1, NLAT, NLON};
            check(zarr_array_write(t, 4, start, count, ZARR_DTYPE_FLOAT32, ZARR_ORDER_C,
                                   field[0], sizeof field[0]),
                  "write t level 0");
        }
    }
    check(zarr_array_flush(t), "flush t");
    check(zarr_array_flush(time), "flush time");
    zarr_array_free(t);
    zarr_array_free(time);
    zarr_array_free(level);
    zarr_array_free(lon);
    zarr_array_free(lat);
    zarr_group_free(root);
    check(zarr_store_flush(store), "flush store");
    zarr_store_free(store);
    return 0;
}
