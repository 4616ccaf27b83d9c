/*
 * hierarchy.c — build a small NetCDF/xarray-style dataset: a root group with global
 * attributes, coordinate arrays time/lat/lon and a data variable temperature(time, lat, lon),
 * each with named dimensions (_ARRAY_DIMENSIONS) and units, then consolidate the metadata.
 * xarray opens the result directly:
 *
 *     python -c "import xarray as xr; print(xr.open_zarr('hierarchy.zarr'))"
 *
 * Usage: hierarchy [directory]   (default: hierarchy.zarr)
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <zarr.h>

/* Prints the failing call, its status and libzarr's message, then exits. */
static void check(zarr_status_t status, const char *what) {
    if (status != ZARR_OK) {
        char message[512];
        zarr_last_error(message, sizeof message, NULL);
        fprintf(stderr, "%s failed: %s: %s\n", what, zarr_status_str(status), message);
        exit(1);
    }
}

/* Creates a variable of `dtype` with the given dimensions, units and data. */
static void variable(zarr_group_t *root, const char *name, zarr_dtype_t dtype, size_t ndim,
                     const uint64_t *shape, const char *const *dims, const char *units,
                     const void *data, size_t nbytes) {
    zarr_array_builder_t *builder = NULL;
    zarr_array_t *array = NULL;
    uint64_t start[3] = {0, 0, 0};
    check(zarr_array_builder_new(dtype, ndim, shape, &builder), "zarr_array_builder_new");
    check(zarr_array_builder_set_compressor_json(builder, "{\"id\": \"zstd\", \"level\": 3}"),
          "set_compressor_json");
    /* No fill value: xarray would otherwise mask data equal to it (time 0 here). */
    check(zarr_array_builder_set_fill_value_json(builder, "null"), "set_fill_value_json");
    check(zarr_group_create_array(root, builder, name, ZARR_MODE_W, &array),
          "zarr_group_create_array");
    check(zarr_array_set_dimension_names(array, ndim, dims), "zarr_array_set_dimension_names");
    check(zarr_array_attr_set(array, "units", units), "zarr_array_attr_set");
    check(zarr_array_write(array, ndim, start, shape, dtype, ZARR_ORDER_C, data, nbytes),
          "zarr_array_write");
    zarr_array_free(array);
    zarr_array_builder_free(builder);
}

int main(int argc, char **argv) {
    const char *dir = argc > 1 ? argv[1] : "hierarchy.zarr";
    enum { NT = 10, NY = 18, NX = 36 };
    int64_t time[NT];
    float lat[NY], lon[NX];
    static float temperature[NT][NY][NX];
    for (int t = 0; t < NT; t++) time[t] = t;
    for (int y = 0; y < NY; y++) lat[y] = -85.0f + 10.0f * (float)y;
    for (int x = 0; x < NX; x++) lon[x] = 5.0f + 10.0f * (float)x;
    for (int t = 0; t < NT; t++)
        for (int y = 0; y < NY; y++)
            for (int x = 0; x < NX; x++)
                temperature[t][y][x] =
                    (float)(288.0 + 30.0 * cos(lat[y] * 3.14159265 / 180.0) + 0.1 * t);

    zarr_store_t *store = NULL;
    zarr_group_t *root = NULL;
    check(zarr_store_open_fs(dir, ZARR_MODE_A, &store), "zarr_store_open_fs");
    check(zarr_group_open(store, "", ZARR_MODE_W, &root), "zarr_group_open");
    check(zarr_group_attrs_set(root, "{\"title\": \"libzarr example dataset\", "
                                     "\"Conventions\": \"CF-1.8\"}"),
          "zarr_group_attrs_set");

    const char *t_dims[] = {"time"}, *y_dims[] = {"lat"}, *x_dims[] = {"lon"};
    const char *data_dims[] = {"time", "lat", "lon"};
    uint64_t t_shape[] = {NT}, y_shape[] = {NY}, x_shape[] = {NX}, shape[] = {NT, NY, NX};
    variable(root, "time", ZARR_DTYPE_INT64, 1, t_shape, t_dims, "\"days since 2000-01-01\"",
             time, sizeof time);
    variable(root, "lat", ZARR_DTYPE_FLOAT32, 1, y_shape, y_dims, "\"degrees_north\"", lat,
             sizeof lat);
    variable(root, "lon", ZARR_DTYPE_FLOAT32, 1, x_shape, x_dims, "\"degrees_east\"", lon,
             sizeof lon);
    variable(root, "temperature", ZARR_DTYPE_FLOAT32, 3, shape, data_dims, "\"K\"", temperature,
             sizeof temperature);
    check(zarr_consolidate_metadata(store, ""), "zarr_consolidate_metadata");

    /* Walk the dataset back through its consolidated metadata. */
    zarr_group_free(root);
    check(zarr_group_open_consolidated(store, "", ZARR_MODE_R, &root),
          "zarr_group_open_consolidated");
    zarr_strings_t *names = NULL;
    check(zarr_group_members(root, ZARR_NODE_ARRAY, &names), "zarr_group_members");
    printf("%s: %zu variables\n", dir, zarr_strings_count(names));
    for (size_t i = 0; i < zarr_strings_count(names); i++) {
        zarr_array_t *array = NULL;
        zarr_strings_t *dims = NULL;
        char units[64];
        check(zarr_group_open_array(root, zarr_strings_get(names, i), ZARR_MODE_R, &array),
              "zarr_group_open_array");
        check(zarr_array_dimension_names(array, &dims), "zarr_array_dimension_names");
        check(zarr_array_attr_get(array, "units", units, sizeof units, NULL), "zarr_array_attr_get");
        printf("  %-12s (", zarr_strings_get(names, i));
        for (size_t d = 0; d < zarr_strings_count(dims); d++) {
            const char *dim = zarr_strings_get(dims, d); /* NULL: an unnamed dimension */
            printf("%s%s", d ? ", " : "", dim ? dim : "(unnamed)");
        }
        printf(")  units %s\n", units);
        zarr_strings_free(dims);
        zarr_array_free(array);
    }
    zarr_strings_free(names);
    zarr_group_free(root);
    zarr_store_free(store);
    return 0;
}
