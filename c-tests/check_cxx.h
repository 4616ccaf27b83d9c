/*
 * check_cxx.h — the assertion helpers of libzarr's C++ tests, beside check.h's (include
 * check.h first): CHECK_THROWS for an expected zarr::Error, run() for a block that must not
 * throw.
 */
#ifndef ZARR_CHECK_CXX_H
#define ZARR_CHECK_CXX_H

#include "zarr.hpp"

#include <cstdio>
#include <cstring>
#include <exception>

// `expr` must throw zarr::Error with status `want` and a message containing `needle`.
#define CHECK_THROWS(expr, want, needle)                                                   \
    do {                                                                                   \
        try {                                                                              \
            (void)(expr);                                                                  \
            check_fail_header(__FILE__, __LINE__);                                         \
            fprintf(stderr, "%s did not throw\n", #expr);                                  \
        } catch (const zarr::Error &e) {                                                   \
            if (e.status() == (want) && std::strstr(e.what(), (needle)) != nullptr) {      \
                check_passed++;                                                            \
            } else {                                                                       \
                check_fail_header(__FILE__, __LINE__);                                     \
                fprintf(stderr, "%s threw %s (%d) \"%s\", expected %s with \"%s\"\n", #expr, \
                        e.status_name(), e.status(), e.what(), zarr_status_str(want),      \
                        needle);                                                           \
            }                                                                              \
        }                                                                                  \
    } while (0)

// Runs a block; an unexpected exception fails the test with its message.
template <class F> static void run(const char *name, F body) {
    try {
        body();
    } catch (const std::exception &e) {
        check_fail_header(__FILE__, __LINE__);
        fprintf(stderr, "%s: unexpected exception: %s\n", name, e.what());
    }
}

#endif
