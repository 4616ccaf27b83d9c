/*
 * tool_common.h: the helpers libzarr's interop tools (zarr_tool.c, zarr_tree.c) share:
 * comma-separated integer lists and whole files. The including file defines MAX_DIMS and
 * `static void die(const char *fmt, const char *arg)` (prints and exits) first.
 */
#ifndef ZARR_TOOL_COMMON_H
#define ZARR_TOOL_COMMON_H

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

/* Parses "1,2,3" into `out` (at most MAX_DIMS values); "" is a list of length 0. */
static size_t parse_list(const char *text, uint64_t *out) {
    size_t n = 0;
    const char *p = text;
    if (*p == '\0') return 0;
    for (;;) {
        char *end = NULL;
        errno = 0;
        unsigned long long v = strtoull(p, &end, 10);
        if (end == p || errno != 0 || (*end != ',' && *end != '\0')) die("bad integer list %s", text);
        if (n == MAX_DIMS) die("too many dimensions in %s", text);
        out[n++] = (uint64_t)v;
        if (*end == '\0') break;
        p = end + 1;
    }
    return n;
}

/* Reads a whole file; always returns a non-NULL buffer (NUL-terminated for text). */
static unsigned char *read_file(const char *path, size_t *out_len) {
    FILE *f = fopen(path, "rb");
    if (!f) die("cannot open %s", path);
    size_t cap = 4096, len = 0;
    unsigned char *buf = malloc(cap + 1);
    if (!buf) die("out of memory reading %s", path);
    for (;;) {
        size_t got = fread(buf + len, 1, cap - len, f);
        len += got;
        if (len < cap) break;
        cap *= 2;
        unsigned char *grown = realloc(buf, cap + 1);
        if (!grown) die("out of memory reading %s", path);
        buf = grown;
    }
    if (ferror(f)) die("cannot read %s", path);
    fclose(f);
    buf[len] = '\0';
    *out_len = len;
    return buf;
}

static void write_file(const char *path, const void *data, size_t len) {
    FILE *f = fopen(path, "wb");
    if (!f) die("cannot create %s", path);
    if (len > 0 && fwrite(data, 1, len, f) != len) die("cannot write %s", path);
    if (fclose(f) != 0) die("cannot close %s", path);
}

#endif
