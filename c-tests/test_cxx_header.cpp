// zarr.h from C++17: compiles with strict warnings, the enums are int32_t-based scoped to
// the C names, and the functions link with C linkage.
#include "zarr.h"

#include <cstdint>
#include <cstdio>
#include <cstring>
#include <type_traits>

static_assert(std::is_same<std::underlying_type<zarr_status>::type, int32_t>::value,
              "zarr_status is int32_t-based in C++");
static_assert(std::is_same<std::underlying_type<zarr_dtype>::type, int32_t>::value,
              "zarr_dtype is int32_t-based in C++");
static_assert(std::is_same<zarr_status_t, int32_t>::value, "zarr_status_t is int32_t");
static_assert(sizeof(zarr_mode_t) == 4 && sizeof(zarr_order_t) == 4, "enums are 32-bit");
static_assert(ZARR_DTYPE_COMPLEX128 == 14 && ZARR_ERR_OVERFLOW == -19, "frozen values");

static int failures = 0;

static void check(bool ok, const char *what) {
    if (!ok) {
        std::fprintf(stderr, "test_cxx_header: FAILED: %s\n", what);
        failures++;
    }
}

int main() {
    check(std::strcmp(zarr_status_str(ZARR_ERR_METADATA), "ZARR_ERR_METADATA") == 0,
          "status name");
    check(zarr_version_number() == ZARR_VERSION_NUMBER, "version");

    zarr_store_t *store = nullptr;
    check(zarr_store_new_memory(&store) == ZARR_OK, "memory store");
    const uint64_t shape[2] = {4, 6};
    zarr_array_builder_t *builder = nullptr;
    check(zarr_array_builder_new(ZARR_DTYPE_FLOAT64, 2, shape, &builder) == ZARR_OK, "builder");
    zarr_array_t *array = nullptr;
    check(zarr_array_create(builder, store, "x", ZARR_MODE_W, &array) == ZARR_OK, "create");
    double data[24];
    for (int i = 0; i < 24; i++)
        data[i] = i * 0.5;
    const uint64_t start[2] = {0, 0};
    check(zarr_array_write(array, 2, start, shape, ZARR_DTYPE_FLOAT64, ZARR_ORDER_C, data,
                           sizeof data) == ZARR_OK,
          "write");
    double back[24] = {};
    check(zarr_array_read(array, 2, start, shape, ZARR_DTYPE_FLOAT64, ZARR_ORDER_C, back,
                          sizeof back) == ZARR_OK,
          "read");
    check(std::memcmp(back, data, sizeof data) == 0, "data round trip");
    zarr_array_free(array);
    zarr_array_builder_free(builder);
    zarr_store_free(store);

    if (failures == 0)
        std::printf("test_cxx_header: ok\n");
    return failures == 0 ? 0 : 1;
}
