/* zarr.h in every language standard a user may compile with: this file is built as C99,
 * C11, C17 and C23 and (through test_header_std.cpp) as C++11, C++17 and C++20, with
 * -Wall -Wextra -Wpedantic -Werror and -fsanitize=undefined. It uses every macro and every
 * enumeration constant of zarr.h (tests/header.rs checks that none is missing), in the
 * preprocessor where they are macros and at run time against the library's own answers. */
#include "zarr.h"
#include "zarr_build.h"

#include <stdint.h>
#include <stdio.h>
#include <string.h>

#if !defined(ZARR_H)
#error "ZARR_H is not defined"
#endif
#if defined(ZARR_EXPECT_C23) && (!defined(__STDC_VERSION__) || __STDC_VERSION__ < 202311L)
#error "built as full C23, but __STDC_VERSION__ says otherwise"
#endif

/* What the build has, known to the preprocessor (zarr_build.h). */
#if !(ZARR_BUILD_FEATURES & ZARR_HAS_ZIP)
#error "every build has zip stores"
#endif
#if ZARR_BUILD_FEATURES & ZARR_HAS_S3
#define BUILT_WITH_OBJECT_STORES 1
#else
#define BUILT_WITH_OBJECT_STORES 0
#endif

/* Every macro is a plain integer the preprocessor can evaluate. */
#if ZARR_VERSION_NUMBER != ZARR_VERSION_MAJOR * 1000000 + ZARR_VERSION_MINOR * 1000 + ZARR_VERSION_PATCH
#error "ZARR_VERSION_NUMBER does not match its parts"
#endif
#if ZARR_ABI_VERSION < 0
#error "ZARR_ABI_VERSION is negative"
#endif
#if (ZARR_HAS_ZIP | ZARR_HAS_S3 | ZARR_HAS_GCS | ZARR_HAS_AZURE | ZARR_HAS_HTTP | ZARR_HAS_ZFP | \
     ZARR_HAS_PCODEC | ZARR_HAS_ICECHUNK) != 255
#error "the ZARR_HAS_* bits are not eight distinct bits"
#endif
#if ZARR_APPEND_BUFFER_BYTES != 268435456
#error "ZARR_APPEND_BUFFER_BYTES is not the documented 256 MiB"
#endif
#if ZARR_SNAPSHOT_ID_BYTES != 21
#error "ZARR_SNAPSHOT_ID_BYTES is not a 20-character snapshot id and its NUL"
#endif
#if ZARR_ASYNC_COPY != 1
#error "ZARR_ASYNC_COPY is not the one flag bit of the non-blocking calls"
#endif
#if ZARR_FORMAT_V3_DRAFT <= 3 || ZARR_FORMAT_V3_DRAFT_ZARR_PYTHON == ZARR_FORMAT_V3_DRAFT
#error "the draft format numbers collide with real formats"
#endif

static int failures = 0;

static void check(int ok, const char *what) {
    if (!ok) {
        fprintf(stderr, "test_header_std: FAILED: %s\n", what);
        failures++;
    }
}

/* A named constant, as the library's name functions should give it back. */
struct named {
    int32_t value;
    const char *name;
};

#define NAMED(x) {(int32_t)(x), #x}

static const struct named statuses[] = {
    NAMED(ZARR_OK), NAMED(ZARR_ERR_NULL_ARG), NAMED(ZARR_ERR_INVALID_ARG),
    NAMED(ZARR_ERR_RANK_MISMATCH), NAMED(ZARR_ERR_OUT_OF_BOUNDS), NAMED(ZARR_ERR_DTYPE_MISMATCH),
    NAMED(ZARR_ERR_BUFFER_SIZE), NAMED(ZARR_ERR_NOT_FOUND), NAMED(ZARR_ERR_EXISTS),
    NAMED(ZARR_ERR_METADATA), NAMED(ZARR_ERR_CODEC_UNSUPPORTED), NAMED(ZARR_ERR_CODEC),
    NAMED(ZARR_ERR_STORAGE_IO), NAMED(ZARR_ERR_READ_ONLY), NAMED(ZARR_ERR_UNSUPPORTED),
    NAMED(ZARR_ERR_PANIC), NAMED(ZARR_ERR_POISONED), NAMED(ZARR_ERR_INTERNAL),
    NAMED(ZARR_ERR_INVALID_KEY), NAMED(ZARR_ERR_OVERFLOW), NAMED(ZARR_ERR_NODE_TYPE),
    NAMED(ZARR_ERR_NO_MEMORY), NAMED(ZARR_ERR_RANGE), NAMED(ZARR_ERR_CONFLICT),
};

/* Element types with their v3 names (the names zarr_dtype_name gives). */
static const struct named dtypes[] = {
    {ZARR_DTYPE_BOOL, "bool"},           {ZARR_DTYPE_INT8, "int8"},
    {ZARR_DTYPE_INT16, "int16"},         {ZARR_DTYPE_INT32, "int32"},
    {ZARR_DTYPE_INT64, "int64"},         {ZARR_DTYPE_UINT8, "uint8"},
    {ZARR_DTYPE_UINT16, "uint16"},       {ZARR_DTYPE_UINT32, "uint32"},
    {ZARR_DTYPE_UINT64, "uint64"},       {ZARR_DTYPE_FLOAT16, "float16"},
    {ZARR_DTYPE_FLOAT32, "float32"},     {ZARR_DTYPE_FLOAT64, "float64"},
    {ZARR_DTYPE_COMPLEX64, "complex64"}, {ZARR_DTYPE_COMPLEX128, "complex128"},
    {ZARR_DTYPE_RAW, NULL},              {ZARR_DTYPE_STRING, "string"},
    {ZARR_DTYPE_BYTES, "bytes"},
    {ZARR_DTYPE_BFLOAT16, "bfloat16"},
    {ZARR_DTYPE_FLOAT8_E4M3, "float8_e4m3"},
    {ZARR_DTYPE_FLOAT8_E4M3FN, "float8_e4m3fn"},
    {ZARR_DTYPE_FLOAT8_E4M3FNUZ, "float8_e4m3fnuz"},
    {ZARR_DTYPE_FLOAT8_E4M3B11FNUZ, "float8_e4m3b11fnuz"},
    {ZARR_DTYPE_FLOAT8_E5M2, "float8_e5m2"},
    {ZARR_DTYPE_FLOAT8_E5M2FNUZ, "float8_e5m2fnuz"},
    {ZARR_DTYPE_FLOAT8_E3M4, "float8_e3m4"},
    {ZARR_DTYPE_FLOAT8_E8M0FNU, "float8_e8m0fnu"},
    {ZARR_DTYPE_FLOAT6_E2M3FN, "float6_e2m3fn"},
    {ZARR_DTYPE_FLOAT6_E3M2FN, "float6_e3m2fn"},
    {ZARR_DTYPE_FLOAT4_E2M1FN, "float4_e2m1fn"},
    {ZARR_DTYPE_INT2, "int2"},
    {ZARR_DTYPE_INT4, "int4"},
    {ZARR_DTYPE_UINT2, "uint2"},
    {ZARR_DTYPE_UINT4, "uint4"},
};

/* The other enumerations: their values are part of the ABI. */
struct frozen_value {
    int32_t value;
    int32_t expected;
    const char *name;
};

#define FROZEN(x, n) {(int32_t)(x), n, #x}

static const struct frozen_value frozen[] = {
    FROZEN(ZARR_ORDER_C, 0),         FROZEN(ZARR_ORDER_F, 1),
    FROZEN(ZARR_MODE_R, 0),          FROZEN(ZARR_MODE_R_PLUS, 1),
    FROZEN(ZARR_MODE_A, 2),          FROZEN(ZARR_MODE_W, 3),
    FROZEN(ZARR_MODE_W_MINUS, 4),    FROZEN(ZARR_NODE_NONE, 0),
    FROZEN(ZARR_NODE_ARRAY, 1),      FROZEN(ZARR_NODE_GROUP, 2),
    FROZEN(ZARR_SYNC_NONE, 0),       FROZEN(ZARR_SYNC_THREAD, 1),
    FROZEN(ZARR_SYNC_PROCESS, 2),    FROZEN(ZARR_SYNC_VERSIONED, 3),
    FROZEN(ZARR_DURABILITY_NONE, 0), FROZEN(ZARR_DURABILITY_FLUSH, 1),
    FROZEN(ZARR_DURABILITY_EACH_WRITE, 2), FROZEN(ZARR_ATTR_STRING, 1),
    FROZEN(ZARR_ATTR_INTEGER, 2),     FROZEN(ZARR_ATTR_FLOAT, 3),
    FROZEN(ZARR_ATTR_STRINGS, 4),     FROZEN(ZARR_ATTR_INTEGERS, 5),
    FROZEN(ZARR_ATTR_FLOATS, 6),      FROZEN(ZARR_ATTR_OTHER, 7),
    FROZEN(ZARR_CHUNK_GRID_REGULAR, 0), FROZEN(ZARR_CHUNK_GRID_RECTILINEAR, 1),
};

int main(void) {
    size_t i;
    uint32_t features = zarr_features();
    uint32_t all = ZARR_HAS_ZIP | ZARR_HAS_S3 | ZARR_HAS_GCS | ZARR_HAS_AZURE | ZARR_HAS_HTTP |
                   ZARR_HAS_ZFP | ZARR_HAS_PCODEC | ZARR_HAS_ICECHUNK;
    zarr_status_t status;
    zarr_dtype_t dtype;

    check(zarr_version_number() == (uint32_t)ZARR_VERSION_NUMBER, "zarr_version_number");
    check((features & ~all) == 0, "zarr_features sets only ZARR_HAS_* bits");
    check((features & ZARR_HAS_ZIP) != 0, "every build has zip stores");
    check(features == (uint32_t)(ZARR_BUILD_FEATURES), "zarr_build.h states zarr_features()");
    check(((features & ZARR_HAS_S3) != 0) == BUILT_WITH_OBJECT_STORES, "object stores");
    check(ZARR_FORMAT_V3_DRAFT == 30 && ZARR_FORMAT_V3_DRAFT_ZARR_PYTHON == 31, "draft formats");

    for (i = 0; i < sizeof statuses / sizeof statuses[0]; i++) {
        check(strcmp(zarr_status_str(statuses[i].value), statuses[i].name) == 0, statuses[i].name);
    }
    for (i = 0; i < sizeof dtypes / sizeof dtypes[0]; i++) {
        const char *name = zarr_dtype_name(dtypes[i].value);
        if (dtypes[i].name == NULL) {
            continue;
        }
        check(name != NULL && strcmp(name, dtypes[i].name) == 0, dtypes[i].name);
        status = zarr_dtype_from_name(dtypes[i].name, &dtype);
        check(status == ZARR_OK && dtype == dtypes[i].value, dtypes[i].name);
    }
    for (i = 0; i < sizeof frozen / sizeof frozen[0]; i++) {
        check(frozen[i].value == frozen[i].expected, frozen[i].name);
    }
    if (failures != 0) {
        return 1;
    }
#if defined(__cplusplus)
    printf("test_header_std: ok (C++ %ld)\n", (long)__cplusplus);
#else
    printf("test_header_std: ok (C %ld)\n", (long)__STDC_VERSION__);
#endif
    return 0;
}
