/* zarr.h twice in one translation unit: the include guard makes the second a no-op. */
#include "zarr.h"
#include "zarr.h"

#include <stdio.h>
#include <string.h>

int main(void) {
    /* Declarations are usable after the double include. */
    zarr_status_t status = ZARR_ERR_NOT_FOUND;
    zarr_dtype_t dtype = ZARR_DTYPE_FLOAT64;
    if (strcmp(zarr_status_str(status), "ZARR_ERR_NOT_FOUND") != 0 ||
        zarr_dtype_size(dtype) != 8 || zarr_version_number() != ZARR_VERSION_NUMBER) {
        fprintf(stderr, "test_double_include: FAILED\n");
        return 1;
    }
    printf("test_double_include: ok\n");
    return 0;
}
