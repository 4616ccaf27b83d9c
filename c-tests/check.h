/*
 * check.h — the tiny assertion helpers of libzarr's C tests. Include it first (it selects
 * the POSIX API the tests use). Every failed check prints file:line, what failed and, for
 * status checks, the status name and zarr_last_error(); CHECK_DONE() prints the totals and
 * makes main return nonzero if anything failed.
 */
#ifndef ZARR_CHECK_H
#define ZARR_CHECK_H

#ifndef _XOPEN_SOURCE
#define _XOPEN_SOURCE 700 /* mkdtemp, nftw, setenv */
#endif

#include <ftw.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "zarr.h"

static int check_passed;
static int check_failed;

/* The calling thread's last libzarr error message (static buffer). */
static inline const char *check_last_error(void) {
    static char message[2048];
    message[0] = '\0';
    zarr_last_error(message, sizeof message, NULL);
    return message;
}

static inline void check_fail_header(const char *file, int line) {
    check_failed++;
    fprintf(stderr, "%s:%d: FAILED: ", file, line);
}

/* A condition that must hold. */
#define CHECK(cond)                                                                        \
    do {                                                                                   \
        if (cond) {                                                                        \
            check_passed++;                                                                \
        } else {                                                                           \
            check_fail_header(__FILE__, __LINE__);                                         \
            fprintf(stderr, "CHECK(%s)\n", #cond);                                         \
        }                                                                                  \
    } while (0)

/* A call that must return the status `expected`. */
#define CHECK_STATUS(expr, expected)                                                       \
    do {                                                                                   \
        zarr_status_t check_got_ = (expr);                                                 \
        zarr_status_t check_want_ = (expected);                                            \
        if (check_got_ == check_want_) {                                                   \
            check_passed++;                                                                \
        } else {                                                                           \
            check_fail_header(__FILE__, __LINE__);                                         \
            fprintf(stderr, "%s\n    returned %s (%d), expected %s (%d)\n    last error: %s\n", \
                    #expr, zarr_status_str(check_got_), (int)check_got_,                   \
                    zarr_status_str(check_want_), (int)check_want_, check_last_error());   \
        }                                                                                  \
    } while (0)

/* A call that must succeed. */
#define CHECK_OK(expr) CHECK_STATUS(expr, ZARR_OK)

/* Two integers that must be equal (compared as 64-bit values). */
#define CHECK_EQ(actual, expected)                                                         \
    do {                                                                                   \
        long long check_a_ = (long long)(actual);                                          \
        long long check_e_ = (long long)(expected);                                        \
        if (check_a_ == check_e_) {                                                        \
            check_passed++;                                                                \
        } else {                                                                           \
            check_fail_header(__FILE__, __LINE__);                                         \
            fprintf(stderr, "%s == %s: got %lld, expected %lld\n", #actual, #expected,     \
                    check_a_, check_e_);                                                   \
        }                                                                                  \
    } while (0)

/* Two NUL-terminated strings that must be equal (NULL only equals NULL). */
#define CHECK_STR(actual, expected)                                                        \
    do {                                                                                   \
        const char *check_a_ = (actual);                                                   \
        const char *check_e_ = (expected);                                                 \
        if ((check_a_ == NULL && check_e_ == NULL) ||                                      \
            (check_a_ != NULL && check_e_ != NULL && strcmp(check_a_, check_e_) == 0)) {   \
            check_passed++;                                                                \
        } else {                                                                           \
            check_fail_header(__FILE__, __LINE__);                                         \
            fprintf(stderr, "%s: got \"%s\", expected \"%s\"\n", #actual,                  \
                    check_a_ ? check_a_ : "(null)", check_e_ ? check_e_ : "(null)");       \
        }                                                                                  \
    } while (0)

/* A string that must contain `needle`. */
#define CHECK_CONTAINS(haystack, needle)                                                   \
    do {                                                                                   \
        const char *check_h_ = (haystack);                                                 \
        const char *check_n_ = (needle);                                                   \
        if (check_h_ != NULL && strstr(check_h_, check_n_) != NULL) {                      \
            check_passed++;                                                                \
        } else {                                                                           \
            check_fail_header(__FILE__, __LINE__);                                         \
            fprintf(stderr, "%s does not contain \"%s\": \"%s\"\n", #haystack, check_n_,   \
                    check_h_ ? check_h_ : "(null)");                                       \
        }                                                                                  \
    } while (0)

/* The last error message must contain `needle`. */
#define CHECK_ERROR_CONTAINS(needle) CHECK_CONTAINS(check_last_error(), needle)

/* Two byte ranges that must be equal; the first differing byte is reported. */
#define CHECK_MEM(actual, expected, nbytes)                                                \
    do {                                                                                   \
        const unsigned char *check_a_ = (const unsigned char *)(actual);                   \
        const unsigned char *check_e_ = (const unsigned char *)(expected);                 \
        size_t check_n_ = (nbytes), check_i_ = 0;                                          \
        while (check_i_ < check_n_ && check_a_[check_i_] == check_e_[check_i_])            \
            check_i_++;                                                                    \
        if (check_i_ == check_n_) {                                                        \
            check_passed++;                                                                \
        } else {                                                                           \
            check_fail_header(__FILE__, __LINE__);                                         \
            fprintf(stderr, "%s and %s differ at byte %zu of %zu (0x%02x != 0x%02x)\n",    \
                    #actual, #expected, check_i_, check_n_, check_a_[check_i_],            \
                    check_e_[check_i_]);                                                   \
        }                                                                                  \
    } while (0)

/* Prints the totals; use as `return CHECK_DONE();` at the end of main. */
#define CHECK_DONE() check_done(__FILE__)

static inline int check_done(const char *file) {
    printf("%s: %d checks passed, %d failed\n", file, check_passed, check_failed);
    return check_failed == 0 && check_passed > 0 ? 0 : 1;
}

/* ---- temporary directories ---- */

/* Creates a fresh directory under $TMPDIR (or /tmp); the result is malloc'd. */
static inline char *check_mkdtemp(void) {
    const char *base = getenv("TMPDIR");
    if (base == NULL || base[0] == '\0')
        base = "/tmp";
    size_t n = strlen(base) + sizeof "/zarr-ctest-XXXXXX";
    char *path = (char *)malloc(n);
    if (path == NULL)
        abort();
    snprintf(path, n, "%s/zarr-ctest-XXXXXX", base);
    if (mkdtemp(path) == NULL) {
        perror("mkdtemp");
        abort();
    }
    return path;
}

static inline int check_rm_entry(const char *path, const struct stat *st, int flag,
                                 struct FTW *ftw) {
    (void)st;
    (void)flag;
    (void)ftw;
    return remove(path);
}

/* Removes a directory tree and frees its path. */
static inline void check_rmtree(char *path) {
    if (path == NULL)
        return;
    if (nftw(path, check_rm_entry, 16, FTW_DEPTH | FTW_PHYS) != 0)
        fprintf(stderr, "warning: could not remove %s\n", path);
    free(path);
}

/* Joins a directory and a relative name into a malloc'd path. */
static inline char *check_join(const char *dir, const char *name) {
    size_t n = strlen(dir) + strlen(name) + 2;
    char *path = (char *)malloc(n);
    if (path == NULL)
        abort();
    snprintf(path, n, "%s/%s", dir, name);
    return path;
}

/* Whether a file or directory exists at `dir`/`name`. */
static inline bool check_path_exists(const char *dir, const char *name) {
    char *path = check_join(dir, name);
    struct stat st;
    bool exists = stat(path, &st) == 0;
    free(path);
    return exists;
}

/* Reads a whole file into a malloc'd buffer (NUL-terminated); NULL if it cannot. */
static inline char *check_read_file(const char *path, size_t *out_len) {
    FILE *f = fopen(path, "rb");
    if (f == NULL)
        return NULL;
    size_t cap = 4096, len = 0;
    char *data = (char *)malloc(cap + 1);
    size_t got;
    while (data != NULL && (got = fread(data + len, 1, cap - len, f)) > 0) {
        len += got;
        if (len == cap) {
            cap *= 2;
            char *bigger = (char *)realloc(data, cap + 1);
            if (bigger == NULL)
                free(data);
            data = bigger;
        }
    }
    fclose(f);
    if (data == NULL)
        return NULL;
    data[len] = '\0';
    if (out_len != NULL)
        *out_len = len;
    return data;
}

/* Whether a list holds exactly the strings `expected[0..n]`, in order. */
static inline bool check_strings_equal(const zarr_strings_t *list, const char *const *expected,
                                       size_t n) {
    if (zarr_strings_count(list) != n)
        return false;
    for (size_t i = 0; i < n; i++) {
        const char *s = zarr_strings_get(list, i);
        if (s == NULL || strcmp(s, expected[i]) != 0)
            return false;
    }
    return zarr_strings_get(list, n) == NULL;
}

/* Whether a list contains the string `s`. */
static inline bool check_strings_contain(const zarr_strings_t *list, const char *s) {
    for (size_t i = 0; i < zarr_strings_count(list); i++)
        if (strcmp(zarr_strings_get(list, i), s) == 0)
            return true;
    return false;
}

/* Prints a string list to stderr (for diagnosing failures). */
static inline void check_print_strings(const char *what, const zarr_strings_t *list) {
    fprintf(stderr, "  %s (%zu):", what, zarr_strings_count(list));
    for (size_t i = 0; i < zarr_strings_count(list); i++)
        fprintf(stderr, " \"%s\"", zarr_strings_get(list, i));
    fprintf(stderr, "\n");
}

/*
 * Forked children report their verdict as one byte on a pipe rather than only through their
 * exit status: under valgrind a child forked from a process whose worker threads hold memory
 * exits with the checker's error code (those threads do not exist in the child, so their
 * memory is unreachable there), which would hide the child's own result. The child calls
 * check_child_report(fds[1], ok) and exits; the parent passes the wait status and fds[0] to
 * check_child_passed. A child that crashed or never reported fails.
 */
static inline void check_child_report(int fd, bool ok) {
    char verdict = ok ? 'k' : 'f';
    if (write(fd, &verdict, 1) != 1)
        perror("check_child_report");
    close(fd);
}

static inline bool check_child_passed(int fd, int status) {
    char verdict = 0;
    ssize_t n = read(fd, &verdict, 1);
    close(fd);
    return n == 1 && verdict == 'k' && WIFEXITED(status);
}

#endif /* ZARR_CHECK_H */
