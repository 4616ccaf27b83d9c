/* Prints the version of the libzarr this program runs with; fails if it is not the version
 * of the zarr.h it was compiled with. */
#include <stdio.h>

#include <zarr.h>

int main(void) {
    printf("libzarr %s (header %d.%d.%d)\n", zarr_version_string(), ZARR_VERSION_MAJOR,
           ZARR_VERSION_MINOR, ZARR_VERSION_PATCH);
    if (zarr_version_number() != ZARR_VERSION_NUMBER) {
        fprintf(stderr, "library version %u does not match header version %u\n",
                (unsigned)zarr_version_number(), (unsigned)ZARR_VERSION_NUMBER);
        return 1;
    }
    return 0;
}
