/*
 * zarr.hpp — header-only C++17 binding of libzarr over zarr.h.
 *
 *   zarr::Store store = zarr::Store::open_fs("out.zarr", ZARR_MODE_A);
 *   zarr::Array a = zarr::ArrayBuilder::of<double>({1000, 1200})
 *                       .set_chunk_shape({250, 300})
 *                       .create(store, "temperature", ZARR_MODE_W);
 *   a.write({0, 0}, {1000, 1200}, field);                 // std::vector<double>, C order
 *   std::vector<double> block = a.read<double>({10, 20}, {2, 3});
 *
 * - Handles (Store, Array, Group, ArrayBuilder, StringList) are RAII and move-only: each
 *   frees its C handle once, in any order (libzarr counts references inside, so an Array
 *   stays usable after its Store is destroyed). A moved-from handle is empty; calls on it
 *   pass NULL to libzarr and throw zarr::Error with ZARR_ERR_NULL_ARG. get() gives the C
 *   handle, release() gives it up, and each class adopts a C handle by its constructor.
 * - Every failing call throws zarr::Error: status() is the ZARR_ERR_* code and what() the
 *   message of zarr_last_error(), read right after the failing call.
 * - Regions: start and count are std::vector<uint64_t> (or brace lists) in the array's
 *   dimension order; data is std::vector<T> or a pointer and an element count, in C
 *   (default) or F order. T must map to a zarr_dtype_t (zarr::dtype_v<T>): bool, int8_t ...
 *   uint64_t, float, double, std::complex<float>, std::complex<double>. std::vector<bool>
 *   is a bit set, so bool regions take a pointer (bool[], std::unique_ptr<bool[]>, ...).
 * - Caller-owned memory without allocation: read and write take a zarr::span<T> (std::span
 *   from C++20) that must hold exactly the region, or a strided zarr::View<T> (C or F order,
 *   sub-views by zarr::Range per dimension, any strides; std::mdspan where the standard
 *   library has it) whose shape is the region's count.
 * - Attributes and metadata are JSON text (std::string) as in the C API; set_attr and
 *   attr<T> set and read attributes as strings, numbers and vectors of them.
 * Nothing here adds behaviour: each method is one C call (see zarr.h for the semantics),
 * plus the argument checks that keep the C call memory safe.
 */
#ifndef ZARR_HPP
#define ZARR_HPP

#include "zarr.h"

#include <complex>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

/* C++20's std::span and C++23's std::mdspan, where the standard library has them. */
#if defined(__has_include)
#if __has_include(<version>)
#include <version>
#endif
#endif
#if defined(__cpp_lib_span) && __cpp_lib_span >= 202002L
#include <span>
#define ZARR_HPP_HAS_STD_SPAN 1
#else
#define ZARR_HPP_HAS_STD_SPAN 0
#endif
#if defined(__cpp_lib_mdspan) && __cpp_lib_mdspan >= 202207L
#include <mdspan>
#define ZARR_HPP_HAS_MDSPAN 1
#else
#define ZARR_HPP_HAS_MDSPAN 0
#endif

namespace zarr {

/* ---- errors ----------------------------------------------------------------------- */

/* A failed libzarr call: the status code and zarr_last_error()'s message. */
class Error : public std::runtime_error {
  public:
    Error(int status, const std::string &message) : std::runtime_error(message), status_(status) {}
    /* The ZARR_ERR_* code. */
    int status() const noexcept { return status_; }
    /* The code's name ("ZARR_ERR_NOT_FOUND"). */
    const char *status_name() const noexcept { return zarr_status_str(status_); }

  private:
    int status_;
};

/* The calling thread's last error message (zarr_last_error). */
inline std::string last_error() {
    size_t needed = 0;
    zarr_last_error(nullptr, 0, &needed);
    std::string message(needed, '\0');
    if (needed > 0) {
        zarr_last_error(&message[0], message.size(), nullptr);
        message.resize(needed - 1);  // the NUL
    }
    return message;
}

namespace detail {

/* Throws zarr::Error for a failed status; the message is read at once. */
inline void check(zarr_status_t status) {
    if (status != ZARR_OK)
        throw Error(status, last_error());
}

/* A string output of the (buf, len, needed) convention: asks the size, then copies. */
template <class Call> std::string get_text(Call call) {
    std::string text;
    size_t needed = 0;
    zarr_status_t status = call(nullptr, 0, &needed);
    while (status == ZARR_ERR_BUFFER_SIZE) {  // repeated only if the text grew meanwhile
        text.resize(needed);
        status = call(&text[0], text.size(), &needed);
    }
    check(status);
    text.resize(needed > 0 ? needed - 1 : 0);
    return text;
}

/* start and count must have one entry per dimension each (the C call takes one ndim). */
inline void check_same_rank(const std::vector<uint64_t> &a, const std::vector<uint64_t> &b,
                            const char *what) {
    if (a.size() != b.size())
        throw Error(ZARR_ERR_RANK_MISMATCH, std::string(what) + " has " +
                                                std::to_string(b.size()) + " entries, start " +
                                                std::to_string(a.size()));
}

/* The product of the extents, as an element count. */
inline size_t element_count(const std::vector<uint64_t> &count) {
    size_t n = 1;
    for (uint64_t c : count) {
        if (c != 0 && n > SIZE_MAX / c)
            throw Error(ZARR_ERR_OVERFLOW, "the region has more elements than size_t holds");
        n *= static_cast<size_t>(c);
    }
    return n;
}

/* Pointers and lengths of one string per element of a region of extents `count`. */
struct ItemViews {
    std::vector<const void *> pointers;
    std::vector<size_t> lengths;
};
inline ItemViews item_views(const std::vector<uint64_t> &count,
                            const std::vector<std::string> &items) {
    if (items.size() != element_count(count))
        throw Error(ZARR_ERR_BUFFER_SIZE, std::to_string(items.size()) + " items for a region of " +
                                              std::to_string(element_count(count)) + " elements");
    ItemViews views;
    for (const std::string &item : items) {
        views.pointers.push_back(item.data());
        views.lengths.push_back(item.size());
    }
    return views;
}

inline void free_handle(zarr_store_t *p) noexcept { zarr_store_free(p); }
inline void free_handle(zarr_array_t *p) noexcept { zarr_array_free(p); }
inline void free_handle(zarr_group_t *p) noexcept { zarr_group_free(p); }
inline void free_handle(zarr_array_builder_t *p) noexcept { zarr_array_builder_free(p); }
inline void free_handle(zarr_strings_t *p) noexcept { zarr_strings_free(p); }
inline void free_handle(zarr_vlen_list_t *p) noexcept { zarr_vlen_list_free(p); }
inline void free_handle(zarr_request_t *p) noexcept { zarr_request_free(p); }

/* Owns one C handle: move-only, freed once by the destructor. */
template <class T> class Handle {
  public:
    Handle() noexcept = default;
    explicit Handle(T *adopt) noexcept : p_(adopt) {}
    Handle(Handle &&other) noexcept : p_(other.release()) {}
    Handle &operator=(Handle &&other) noexcept {
        reset(other.release());
        return *this;
    }
    Handle(const Handle &) = delete;
    Handle &operator=(const Handle &) = delete;
    ~Handle() { reset(); }

    T *get() const noexcept { return p_; }
    T *release() noexcept { return std::exchange(p_, nullptr); }
    void reset(T *p = nullptr) noexcept {
        T *old = std::exchange(p_, p);
        if (old != nullptr)
            free_handle(old);
    }

  private:
    T *p_ = nullptr;
};

/* Runs a call with a handle output and returns the new handle. */
template <class T, class Call> T *make(Call call) {
    T *out = nullptr;
    check(call(&out));
    return out;
}

template <class> inline constexpr bool always_false = false;

}  // namespace detail

/* ---- element types ----------------------------------------------------------------- */

/* The zarr_dtype_t of a C++ element type, at compile time. */
template <class T> struct dtype_of {
    static_assert(detail::always_false<T>,
                  "no zarr_dtype_t for this type: use bool, int8_t..uint64_t, float, double, "
                  "std::complex<float> or std::complex<double>");
};
#define ZARR_HPP_DTYPE(type, code)                                                         \
    template <> struct dtype_of<type> : std::integral_constant<zarr_dtype_t, code> {}
ZARR_HPP_DTYPE(bool, ZARR_DTYPE_BOOL);
ZARR_HPP_DTYPE(int8_t, ZARR_DTYPE_INT8);
ZARR_HPP_DTYPE(int16_t, ZARR_DTYPE_INT16);
ZARR_HPP_DTYPE(int32_t, ZARR_DTYPE_INT32);
ZARR_HPP_DTYPE(int64_t, ZARR_DTYPE_INT64);
ZARR_HPP_DTYPE(uint8_t, ZARR_DTYPE_UINT8);
ZARR_HPP_DTYPE(uint16_t, ZARR_DTYPE_UINT16);
ZARR_HPP_DTYPE(uint32_t, ZARR_DTYPE_UINT32);
ZARR_HPP_DTYPE(uint64_t, ZARR_DTYPE_UINT64);
ZARR_HPP_DTYPE(float, ZARR_DTYPE_FLOAT32);
ZARR_HPP_DTYPE(double, ZARR_DTYPE_FLOAT64);
ZARR_HPP_DTYPE(std::complex<float>, ZARR_DTYPE_COMPLEX64);
ZARR_HPP_DTYPE(std::complex<double>, ZARR_DTYPE_COMPLEX128);
#undef ZARR_HPP_DTYPE

template <class T> inline constexpr zarr_dtype_t dtype_v = dtype_of<T>::value;

static_assert(sizeof(bool) == 1, "libzarr's bool elements are one byte");
static_assert(sizeof(std::complex<float>) == 8 && sizeof(std::complex<double>) == 16,
              "complex elements are (real, imaginary) pairs");

/* ---- library ----------------------------------------------------------------------- */

inline const char *status_str(int status) noexcept { return zarr_status_str(status); }
inline uint32_t version_number() noexcept { return zarr_version_number(); }
inline const char *version_string() noexcept { return zarr_version_string(); }
inline bool codec_supported(const std::string &id) noexcept { return zarr_codec_supported(id.c_str()); }
inline bool threadsafe() noexcept { return zarr_threadsafe(); }
/** What this build has: a bit set of ZARR_HAS_* values. */
inline uint32_t features() noexcept { return zarr_features(); }
inline void set_num_threads(size_t threads) { detail::check(zarr_set_num_threads(threads)); }
inline size_t num_threads() noexcept { return zarr_get_num_threads(); }
inline zarr_dtype_t dtype_from_name(const std::string &name) {
    zarr_dtype_t dtype = 0;
    detail::check(zarr_dtype_from_name(name.c_str(), &dtype));
    return dtype;
}
/* The Zarr v3 name of a dtype ("float32"); nullptr for unknown values. */
inline const char *dtype_name(zarr_dtype_t dtype) noexcept { return zarr_dtype_name(dtype); }
inline size_t dtype_size(zarr_dtype_t dtype) noexcept { return zarr_dtype_size(dtype); }

/* ---- string lists ------------------------------------------------------------------ */

/* A zarr_strings_t list. */
class StringList {
  public:
    StringList() noexcept = default;
    explicit StringList(zarr_strings_t *adopt) noexcept : h_(adopt) {}

    size_t size() const noexcept { return zarr_strings_count(h_.get()); }
    /* String i, valid while the list lives; nullptr when out of range or a null item. */
    const char *operator[](size_t i) const noexcept { return zarr_strings_get(h_.get(), i); }
    /* String i; a null item (an unnamed dimension) is "". */
    std::string at(size_t i) const {
        if (i >= size())
            throw std::out_of_range("zarr::StringList::at: index out of range");
        const char *s = zarr_strings_get(h_.get(), i);
        return s == nullptr ? std::string() : std::string(s);
    }
    /* Every string; null items (unnamed dimensions) are "". */
    std::vector<std::string> to_vector() const {
        std::vector<std::string> out;
        for (size_t i = 0; i < size(); i++)
            out.push_back(at(i));
        return out;
    }
    /* Every string, null items as std::nullopt. */
    std::vector<std::optional<std::string>> to_optional_vector() const {
        std::vector<std::optional<std::string>> out;
        for (size_t i = 0; i < size(); i++) {
            const char *s = zarr_strings_get(h_.get(), i);
            out.push_back(s == nullptr ? std::nullopt : std::optional<std::string>(s));
        }
        return out;
    }

    zarr_strings_t *get() const noexcept { return h_.get(); }
    zarr_strings_t *release() noexcept { return h_.release(); }
    explicit operator bool() const noexcept { return h_.get() != nullptr; }

  private:
    detail::Handle<zarr_strings_t> h_;
};

/* A zarr_vlen_list_t list of variable-length items. */
class VlenList {
  public:
    VlenList() noexcept = default;
    explicit VlenList(zarr_vlen_list_t *adopt) noexcept : h_(adopt) {}

    size_t size() const noexcept { return zarr_vlen_list_count(h_.get()); }
    /* Item i's bytes (followed by a NUL), valid while the list lives; nullptr when out of
     * range. *len (if given) gets the item's length. */
    const void *data(size_t i, size_t *len = nullptr) const noexcept {
        return zarr_vlen_list_item(h_.get(), i, len);
    }
    std::string at(size_t i) const {
        size_t len = 0;
        const void *p = zarr_vlen_list_item(h_.get(), i, &len);
        if (p == nullptr)
            throw std::out_of_range("zarr::VlenList::at: index out of range");
        return std::string(static_cast<const char *>(p), len);
    }

    zarr_vlen_list_t *get() const noexcept { return h_.get(); }
    zarr_vlen_list_t *release() noexcept { return h_.release(); }

  private:
    detail::Handle<zarr_vlen_list_t> h_;
};

/* One field of a structured array's record (nested names joined with '.'). */
struct Field {
    std::string name;
    std::string dtype;
    size_t offset = 0;
    size_t size = 0;
    std::vector<uint64_t> shape;
};

/* ---- stores ------------------------------------------------------------------------ */

/* zarr_store_list_dir's result: the keys directly under a prefix and the child prefixes. */
struct ListDir {
    std::vector<std::string> keys;
    std::vector<std::string> prefixes;
};

class Store {
  public:
    Store() noexcept = default;
    explicit Store(zarr_store_t *adopt) noexcept : h_(adopt) {}

    static Store open_fs(const std::string &path, zarr_mode_t mode) {
        return Store(detail::make<zarr_store_t>(
            [&](zarr_store_t **out) { return zarr_store_open_fs(path.c_str(), mode, out); }));
    }
    static Store open_zip(const std::string &path, zarr_mode_t mode, bool deflate) {
        return Store(detail::make<zarr_store_t>([&](zarr_store_t **out) {
            return zarr_store_open_zip(path.c_str(), mode, deflate, out);
        }));
    }
    /** Opens a store by URL (path, file://, memory://, zip://, s3://, gs://, az://, abfs://,
     *  http(s)://, icechunk://); `options_json` may be empty for none (see
     *  zarr_store_open_url). */
    static Store open_url(const std::string &url, zarr_mode_t mode,
                          const std::string &options_json = std::string()) {
        return Store(detail::make<zarr_store_t>([&](zarr_store_t **out) {
            return zarr_store_open_url(url.c_str(), mode,
                                       options_json.empty() ? nullptr : options_json.c_str(), out);
        }));
    }
    static Store memory() {
        return Store(detail::make<zarr_store_t>(
            [](zarr_store_t **out) { return zarr_store_new_memory(out); }));
    }

    /* Finishes pending work (a zip's central directory, a directory store's flush); the
       handle stays valid. */
    void close() const { detail::check(zarr_store_close(get())); }
    /* Syncs what the handle wrote since its last flush (see zarr_durability). */
    void flush() const { detail::check(zarr_store_flush(get())); }
    /* ZARR_DURABILITY_NONE, ZARR_DURABILITY_FLUSH (the default) or
       ZARR_DURABILITY_EACH_WRITE; memory and zip stores accept only NONE. */
    void set_durability(zarr_durability_t level) const {
        detail::check(zarr_store_set_durability(get(), level));
    }

    void set(const std::string &key, const void *value, size_t len) const {
        detail::check(zarr_store_set(get(), key.c_str(), value, len));
    }
    void set(const std::string &key, const std::vector<uint8_t> &value) const {
        set(key, value.data(), value.size());
    }
    std::vector<uint8_t> get(const std::string &key) const {
        std::vector<uint8_t> value;
        size_t needed = 0;
        zarr_status_t status = zarr_store_get(get(), key.c_str(), nullptr, 0, &needed);
        while (status == ZARR_ERR_BUFFER_SIZE) {
            value.resize(needed);
            status = zarr_store_get(get(), key.c_str(), value.data(), value.size(), &needed);
        }
        detail::check(status);
        value.resize(needed);
        return value;
    }
    bool contains(const std::string &key) const {
        bool exists = false;
        detail::check(zarr_store_contains(get(), key.c_str(), &exists));
        return exists;
    }
    void erase(const std::string &key) const { detail::check(zarr_store_erase(get(), key.c_str())); }
    void erase_prefix(const std::string &prefix) const {
        detail::check(zarr_store_erase_prefix(get(), prefix.c_str()));
    }
    std::vector<std::string> list(const std::string &prefix) const {
        return StringList(detail::make<zarr_strings_t>([&](zarr_strings_t **out) {
                   return zarr_store_list(get(), prefix.c_str(), out);
               }))
            .to_vector();
    }
    ListDir list_dir(const std::string &prefix) const {
        zarr_strings_t *keys = nullptr, *prefixes = nullptr;
        zarr_status_t status = zarr_store_list_dir(get(), prefix.c_str(), &keys, &prefixes);
        StringList k(keys), p(prefixes);  // owned before anything can throw
        detail::check(status);
        return ListDir{k.to_vector(), p.to_vector()};
    }
    /* Icechunk repositories (icechunk:///PATH, icechunk+s3://; ZARR_ERR_UNSUPPORTED on
       other stores).
       Commits everything written since the last commit, atomically, and returns the new
       snapshot's id; another writer's commit meanwhile throws ZARR_ERR_CONFLICT (rebase(),
       then commit again). A store destroyed without a commit commits nothing. */
    std::string commit(const std::string &message) const {
        char id[ZARR_SNAPSHOT_ID_BYTES] = {0};
        detail::check(zarr_store_commit(get(), message.c_str(), id, sizeof id));
        return id;
    }
    /* The id of the snapshot the store reads. */
    std::string snapshot_id() const {
        char id[ZARR_SNAPSHOT_ID_BYTES] = {0};
        detail::check(zarr_store_snapshot_id(get(), id, sizeof id));
        return id;
    }
    /* Drops what was written since the last commit. */
    void discard() const { detail::check(zarr_store_discard(get())); }
    /* Moves the uncommitted changes onto the branch's newest snapshot (ZARR_ERR_CONFLICT
       when they overlap what was committed meanwhile). */
    void rebase() const { detail::check(zarr_store_rebase(get())); }
    /* Creates a tag or a branch at the snapshot the store reads. */
    void create_tag(const std::string &name) const {
        detail::check(zarr_store_create_tag(get(), name.c_str()));
    }
    void create_branch(const std::string &name) const {
        detail::check(zarr_store_create_branch(get(), name.c_str()));
    }
    /* Makes the chunk at `key` a virtual chunk: `length` bytes at `offset` of the local
       file `location` (see zarr_store_set_virtual_ref). */
    void set_virtual_ref(const std::string &key, const std::string &location,
                         uint64_t offset, uint64_t length) const {
        detail::check(
            zarr_store_set_virtual_ref(get(), key.c_str(), location.c_str(), offset, length));
    }
    /* The history, newest first, as JSON text (see zarr_store_history_json). */
    std::string history_json() const {
        return detail::get_text([&](char *buf, size_t len, size_t *needed) {
            return zarr_store_history_json(get(), buf, len, needed);
        });
    }
    /* What was written since the last commit, as bytes another store of the repository
       merges (see zarr_store_changes_export). */
    std::vector<uint8_t> export_changes() const {
        void *bytes = nullptr;
        size_t len = 0;
        detail::check(zarr_store_changes_export(get(), &bytes, &len));
        auto release = [](void *p) { zarr_bytes_free(p); };
        std::unique_ptr<void, decltype(release)> owned(bytes, release);
        const uint8_t *start = static_cast<const uint8_t *>(owned.get());
        return std::vector<uint8_t>(start, start + len);
    }
    /* Adds changes another store exported to this store's next commit (see
       zarr_store_changes_merge). */
    void merge_changes(const std::vector<uint8_t> &bytes) const {
        detail::check(zarr_store_changes_merge(get(), bytes.data(), bytes.size()));
    }

    /* What is at `path`: ZARR_NODE_NONE, ZARR_NODE_ARRAY or ZARR_NODE_GROUP. */
    zarr_node_kind_t node_kind(const std::string &path) const {
        zarr_node_kind_t kind = 0;
        detail::check(zarr_node_kind_at(get(), path.c_str(), &kind));
        return kind;
    }

    zarr_store_t *get() const noexcept { return h_.get(); }
    zarr_store_t *release() noexcept { return h_.release(); }
    explicit operator bool() const noexcept { return h_.get() != nullptr; }

  private:
    detail::Handle<zarr_store_t> h_;
};

inline void consolidate_metadata(const Store &store, const std::string &path) {
    detail::check(zarr_consolidate_metadata(store.get(), path.c_str()));
}
inline void migrate_1to2(const Store &store, const std::string &path) {
    detail::check(zarr_migrate_1to2(store.get(), path.c_str()));
}
/* zarr_copy; compressor_json std::nullopt copies chunks as stored. */
inline void copy(const Store &source, const std::string &source_path, const Store &target,
                 const std::string &target_path, const std::optional<std::string> &compressor_json,
                 zarr_mode_t mode) {
    detail::check(zarr_copy(source.get(), source_path.c_str(), target.get(), target_path.c_str(),
                            compressor_json ? compressor_json->c_str() : nullptr, mode));
}

namespace detail {
/* The typed attribute calls of arrays and groups, overloaded on the handle. */
inline zarr_status_t attr_kind(const zarr_array_t *h, const char *k, zarr_attr_kind_t *o, size_t *n) {
    return zarr_array_attr_kind(h, k, o, n);
}
inline zarr_status_t attr_set_string(const zarr_array_t *h, const char *k, const char *v) {
    return zarr_array_attr_set_string(h, k, v);
}
inline zarr_status_t attr_get_string(const zarr_array_t *h, const char *k, char *b, size_t l, size_t *n) {
    return zarr_array_attr_get_string(h, k, b, l, n);
}
inline zarr_status_t attr_set_strings(const zarr_array_t *h, const char *k, const char *const *v, size_t n) {
    return zarr_array_attr_set_strings(h, k, v, n);
}
inline zarr_status_t attr_get_strings(const zarr_array_t *h, const char *k, zarr_strings_t **o) {
    return zarr_array_attr_get_strings(h, k, o);
}
inline zarr_status_t attr_set_number(const zarr_array_t *h, const char *k, zarr_dtype_t t, const void *v) {
    return zarr_array_attr_set_number(h, k, t, v);
}
inline zarr_status_t attr_get_number(const zarr_array_t *h, const char *k, zarr_dtype_t t, void *v) {
    return zarr_array_attr_get_number(h, k, t, v);
}
inline zarr_status_t attr_set_numbers(const zarr_array_t *h, const char *k, zarr_dtype_t t, const void *v, size_t n) {
    return zarr_array_attr_set_numbers(h, k, t, v, n);
}
inline zarr_status_t attr_get_numbers(const zarr_array_t *h, const char *k, zarr_dtype_t t, void *v, size_t l, size_t *n) {
    return zarr_array_attr_get_numbers(h, k, t, v, l, n);
}
inline zarr_status_t attr_kind(const zarr_group_t *h, const char *k, zarr_attr_kind_t *o, size_t *n) {
    return zarr_group_attr_kind(h, k, o, n);
}
inline zarr_status_t attr_set_string(const zarr_group_t *h, const char *k, const char *v) {
    return zarr_group_attr_set_string(h, k, v);
}
inline zarr_status_t attr_get_string(const zarr_group_t *h, const char *k, char *b, size_t l, size_t *n) {
    return zarr_group_attr_get_string(h, k, b, l, n);
}
inline zarr_status_t attr_set_strings(const zarr_group_t *h, const char *k, const char *const *v, size_t n) {
    return zarr_group_attr_set_strings(h, k, v, n);
}
inline zarr_status_t attr_get_strings(const zarr_group_t *h, const char *k, zarr_strings_t **o) {
    return zarr_group_attr_get_strings(h, k, o);
}
inline zarr_status_t attr_set_number(const zarr_group_t *h, const char *k, zarr_dtype_t t, const void *v) {
    return zarr_group_attr_set_number(h, k, t, v);
}
inline zarr_status_t attr_get_number(const zarr_group_t *h, const char *k, zarr_dtype_t t, void *v) {
    return zarr_group_attr_get_number(h, k, t, v);
}
inline zarr_status_t attr_set_numbers(const zarr_group_t *h, const char *k, zarr_dtype_t t, const void *v, size_t n) {
    return zarr_group_attr_set_numbers(h, k, t, v, n);
}
inline zarr_status_t attr_get_numbers(const zarr_group_t *h, const char *k, zarr_dtype_t t, void *v, size_t l, size_t *n) {
    return zarr_group_attr_get_numbers(h, k, t, v, l, n);
}

template <class T> struct is_vector : std::false_type {};
template <class T> struct is_vector<std::vector<T>> : std::true_type {};

/* Typed attributes of a node (Derived has get()): strings, int32_t, int64_t, float, double
 * and std::vector of them. The library writes the JSON (a float as its shortest decimal);
 * attr<T> throws Error with ZARR_ERR_DTYPE_MISMATCH when the stored value is of another
 * type, ZARR_ERR_RANGE when it does not fit T. */
template <class Derived> class TypedAttributes {
    auto h() const { return static_cast<const Derived *>(this)->get(); }

  public:
    /* What attribute `key` holds; `count` (if given) gets its number of items. */
    zarr_attr_kind_t attr_kind(const std::string &key, size_t *count = nullptr) const {
        zarr_attr_kind_t kind = 0;
        check(detail::attr_kind(h(), key.c_str(), &kind, count));
        return kind;
    }
    void set_attr(const std::string &key, const char *value) const {
        check(attr_set_string(h(), key.c_str(), value));
    }
    void set_attr(const std::string &key, const std::string &value) const {
        set_attr(key, value.c_str());
    }
    template <class T, std::enable_if_t<std::is_arithmetic_v<T> && !std::is_same_v<T, bool>, int> = 0>
    void set_attr(const std::string &key, T value) const {
        check(attr_set_number(h(), key.c_str(), dtype_v<T>, &value));
    }
    void set_attr(const std::string &key, const std::vector<std::string> &values) const {
        std::vector<const char *> p;
        for (const std::string &v : values)
            p.push_back(v.c_str());
        check(attr_set_strings(h(), key.c_str(), p.data(), p.size()));
    }
    template <class T, std::enable_if_t<std::is_arithmetic_v<T> && !std::is_same_v<T, bool>, int> = 0>
    void set_attr(const std::string &key, const std::vector<T> &values) const {
        check(attr_set_numbers(h(), key.c_str(), dtype_v<T>, values.data(), values.size()));
    }
    template <class T> T attr(const std::string &key) const {
        if constexpr (std::is_same_v<T, std::string>) {
            return get_text([&](char *b, size_t l, size_t *n) {
                return attr_get_string(h(), key.c_str(), b, l, n);
            });
        } else if constexpr (std::is_same_v<T, std::vector<std::string>>) {
            return StringList(make<zarr_strings_t>([&](zarr_strings_t **out) {
                       return attr_get_strings(h(), key.c_str(), out);
                   }))
                .to_vector();
        } else if constexpr (is_vector<T>::value) {
            using U = typename T::value_type;
            T values;
            size_t n = 0;
            zarr_status_t status = attr_get_numbers(h(), key.c_str(), dtype_v<U>, nullptr, 0, &n);
            while (status == ZARR_ERR_BUFFER_SIZE) {  // again only if the list grew meanwhile
                values.resize(n);
                status = attr_get_numbers(h(), key.c_str(), dtype_v<U>, values.data(), n, &n);
            }
            check(status);
            values.resize(n);
            return values;
        } else {
            T value{};
            check(attr_get_number(h(), key.c_str(), dtype_v<T>, &value));
            return value;
        }
    }
};
}  // namespace detail

/* ---- non-blocking requests ---------------------------------------------------------- */

/* A non-blocking write or append (zarr_array_write_async): move-only; wait() throws its
 * error, ready() says whether it is done. The destructor waits for it (errors are then
 * lost: call wait() to see them), so a buffer lent to it outlives it when declared before
 * it; detach() lets it run on unwaited (its error lost, the buffer still in use). */
class Request {
  public:
    Request() noexcept = default;
    explicit Request(zarr_request_t *adopt) noexcept : h_(adopt) {}
    Request(Request &&) noexcept = default;
    Request &operator=(Request &&other) noexcept {
        finish();
        h_ = std::move(other.h_);
        return *this;
    }
    ~Request() { finish(); }

    /* Waits until done; throws zarr::Error when the request failed. */
    void wait() const { detail::check(zarr_request_wait(h_.get())); }
    /* Whether the request is done (without waiting; wait() then gives its outcome). */
    bool ready() const noexcept {
        bool done = false;
        zarr_request_test(h_.get(), &done);
        return done;
    }
    /* Lets the request run on without this object (zarr_request_free before wait). */
    void detach() noexcept { h_.reset(); }
    zarr_request_t *get() const noexcept { return h_.get(); }

  private:
    void finish() noexcept {
        if (h_.get() != nullptr)
            zarr_request_wait(h_.get());
    }
    detail::Handle<zarr_request_t> h_;
};

/* Waits for every request; throws the first failure, in the order given. */
inline void wait_all(const std::vector<Request> &requests) {
    std::vector<zarr_request_t *> handles;
    for (const Request &r : requests)
        handles.push_back(r.get());
    detail::check(zarr_request_wait_all(handles.data(), handles.size()));
}

/* The process-wide budget of bytes held by requests in flight (0: no limit). */
inline void set_async_budget(size_t bytes) { detail::check(zarr_set_async_budget(bytes)); }

/* Bytes held by requests in flight now, and the most at once (zarr_async_in_flight). */
struct InFlight {
    size_t bytes = 0;
    size_t peak = 0;
};
inline InFlight async_in_flight(bool reset_peak = false) {
    InFlight f;
    detail::check(zarr_async_in_flight(reset_peak, &f.bytes, &f.peak));
    return f;
}

/* ---- spans and strided views ------------------------------------------------------- */

/* zarr::span<T>: a contiguous run of caller-owned elements (pointer and size). With the
 * standard library's std::span (C++20) it is std::span<T>; before that a minimal class with
 * the same constructors (pointer and size, C array, any container with data() and size())
 * and accessors. Array::read and Array::write take spans without allocating. */
#if ZARR_HPP_HAS_STD_SPAN
template <class T> using span = std::span<T>;
#else
namespace detail {
/* Whether C& has data() and size() with elements that a T* may point at. */
template <class C, class T, class = void> struct holds_elements_of : std::false_type {};
template <class C, class T>
struct holds_elements_of<C, T,
                         std::void_t<decltype(std::declval<C &>().data()),
                                     decltype(std::declval<C &>().size())>>
    : std::is_convertible<std::remove_pointer_t<decltype(std::declval<C &>().data())> (*)[],
                          T (*)[]> {};
template <class T> class span;
template <class C> struct is_span : std::false_type {};
template <class T> struct is_span<span<T>> : std::true_type {};
}  // namespace detail

template <class T> class span {
  public:
    using element_type = T;
    using value_type = std::remove_cv_t<T>;
    using size_type = size_t;
    using pointer = T *;
    using reference = T &;
    using iterator = T *;

    constexpr span() noexcept = default;
    constexpr span(T *data, size_t size) noexcept : data_(data), size_(size) {}
    template <size_t N> constexpr span(T (&array)[N]) noexcept : data_(array), size_(N) {}
    /* A container's elements: std::vector, std::array, another span. As with std::span,
     * a temporary container is taken only for const elements (a span does not own). */
    template <class C,
              std::enable_if_t<detail::holds_elements_of<C, T>::value &&
                                   (std::is_lvalue_reference_v<C> || std::is_const_v<T> ||
                                    detail::is_span<std::remove_cv_t<C>>::value),
                               int> = 0>
    constexpr span(C &&container) noexcept : data_(container.data()), size_(container.size()) {}

    constexpr T *data() const noexcept { return data_; }
    constexpr size_t size() const noexcept { return size_; }
    constexpr size_t size_bytes() const noexcept { return size_ * sizeof(T); }
    constexpr bool empty() const noexcept { return size_ == 0; }
    constexpr T &operator[](size_t i) const noexcept { return data_[i]; }
    constexpr T *begin() const noexcept { return data_; }
    constexpr T *end() const noexcept { return data_ + size_; }

  private:
    T *data_ = nullptr;
    size_t size_ = 0;
};
#endif

namespace detail {
/* a * b, or Error ZARR_ERR_OVERFLOW naming `what`. */
inline uint64_t mul_checked(uint64_t a, uint64_t b, const char *what) {
    if (b != 0 && a > UINT64_MAX / b)
        throw Error(ZARR_ERR_OVERFLOW, std::string(what) + " overflows 64 bits");
    return a * b;
}
/* "2 x 3 x 4": extents for messages. */
inline std::string extents_text(const std::vector<uint64_t> &extents) {
    std::string text;
    for (size_t d = 0; d < extents.size(); d++)
        text += (d > 0 ? " x " : "") + std::to_string(extents[d]);
    return extents.empty() ? std::string("(scalar)") : text;
}
/* A caller's buffer of `have` elements must hold exactly the region of extents `count`. */
inline void check_span_size(size_t have, const std::vector<uint64_t> &count) {
    size_t want = element_count(count);
    if (have != want)
        throw Error(ZARR_ERR_BUFFER_SIZE, "the span has " + std::to_string(have) +
                                              " elements where the region (" +
                                              extents_text(count) + ") has " +
                                              std::to_string(want));
}
/* An mdspan index (signed or not) as a uint64_t; negative values are refused. */
template <class I> uint64_t index_value(I value, const char *what) {
    if constexpr (std::is_signed_v<I>) {
        if (value < 0)
            throw Error(ZARR_ERR_INVALID_ARG, std::string(what) + " is negative");
    }
    return static_cast<uint64_t>(value);
}
}  // namespace detail

/* One dimension of a sub-view: `count` elements from `start`, every `step`-th. */
struct Range {
    uint64_t start = 0;
    uint64_t count = 0;
    uint64_t step = 1;
};

/* A strided N-d view of caller-owned elements: element (i0, i1, ...) is at
 * data()[Σ i[d] * strides()[d]], strides in elements. Array::read(start, view) and
 * Array::write(start, view) move the region of extents shape() at `start` through it with
 * one zarr_array_read_strided or zarr_array_write_strided call (netCDF's imap), without
 * allocating. View<const T> is for writes only. Elements must not overlap (the C call
 * refuses strides that make them), and `footprint()` elements from data() must exist. */
template <class T> class View {
  public:
    using element_type = T;

    View() = default;
    /* Any strided layout: `strides` in elements, one per dimension. */
    View(T *data, std::vector<uint64_t> shape, std::vector<uint64_t> strides)
        : data_(data), shape_(std::move(shape)), strides_(std::move(strides)) {
        if (strides_.size() != shape_.size())
            throw Error(ZARR_ERR_RANK_MISMATCH, "the view has " + std::to_string(strides_.size()) +
                                                    " strides for " +
                                                    std::to_string(shape_.size()) + " dimensions");
        footprint_ = compute_footprint();
        if (data_ == nullptr && footprint_ > 0)
            throw Error(ZARR_ERR_NULL_ARG, "the view's data pointer is null");
    }
    /* The elements of `data`, exactly the shape's, in C (row-major: the last dimension
     * varies fastest) or F (column-major: the first varies fastest) order. */
    View(span<T> data, std::vector<uint64_t> shape, zarr_order_t order = ZARR_ORDER_C)
        : View(sized_data(data, shape), shape, contiguous_strides(shape, order)) {}
    /* An mdspan (std::mdspan, or the reference implementation's for C++17) with a strided
     * layout (layout_right, layout_left, layout_stride) whose accessor indexes
     * data_handle() as a plain pointer (the default accessor). */
    template <class M> static View from_mdspan(const M &m) {
        static_assert(std::is_same_v<typename M::data_handle_type, T *>,
                      "the mdspan's elements must be T, reached through a T* data handle");
        if (!m.is_strided())
            throw Error(ZARR_ERR_INVALID_ARG, "the mdspan's layout is not strided");
        std::vector<uint64_t> shape(M::rank()), strides(M::rank());
        for (size_t r = 0; r < M::rank(); r++) {
            shape[r] = detail::index_value(m.extent(r), "an mdspan extent");
            strides[r] = detail::index_value(m.stride(r), "an mdspan stride");
        }
        return View(m.data_handle(), std::move(shape), std::move(strides));
    }
#if ZARR_HPP_HAS_MDSPAN
    template <class E, class L>
    View(std::mdspan<T, E, L, std::default_accessor<T>> m) : View(from_mdspan(m)) {}
#endif
    /* A View<U> of the same layout where a U* converts to a T* (View<double> to
     * View<const double>, for writes). */
    template <class U, std::enable_if_t<!std::is_same_v<U, T> &&
                                            std::is_convertible_v<U (*)[], T (*)[]>,
                                        int> = 0>
    View(const View<U> &other) : View(other.data(), other.shape(), other.strides()) {}

    T *data() const noexcept { return data_; }
    size_t rank() const noexcept { return shape_.size(); }
    const std::vector<uint64_t> &shape() const noexcept { return shape_; }
    const std::vector<uint64_t> &strides() const noexcept { return strides_; }
    /* Number of elements the view shows. */
    uint64_t size() const {
        uint64_t n = 1;
        for (uint64_t e : shape_)
            n = detail::mul_checked(n, e, "the view's element count");
        return n;
    }
    /* Elements from data() to the last one the view shows, inclusive (0 when empty). */
    uint64_t footprint() const noexcept { return footprint_; }

    /* The element at `index` (one per dimension), bounds-checked. */
    T &at(const std::vector<uint64_t> &index) const {
        if (index.size() != rank())
            throw Error(ZARR_ERR_RANK_MISMATCH, "the index has " + std::to_string(index.size()) +
                                                    " entries, the view " +
                                                    std::to_string(rank()) + " dimensions");
        uint64_t offset = 0;
        for (size_t d = 0; d < rank(); d++) {
            if (index[d] >= shape_[d])
                throw Error(ZARR_ERR_OUT_OF_BOUNDS,
                            "index " + std::to_string(index[d]) + " of dimension " +
                                std::to_string(d) + " is outside its extent " +
                                std::to_string(shape_[d]));
            offset += index[d] * strides_[d];  // below footprint_, which fits
        }
        return data_[offset];
    }

    /* The sub-view of one Range per dimension (a step multiplies the stride). */
    View sub(const std::vector<Range> &ranges) const {
        if (ranges.size() != rank())
            throw Error(ZARR_ERR_RANK_MISMATCH, std::to_string(ranges.size()) +
                                                    " ranges for a view of " +
                                                    std::to_string(rank()) + " dimensions");
        std::vector<uint64_t> shape(rank()), strides(rank());
        uint64_t offset = 0;
        bool empty = false;
        for (size_t d = 0; d < rank(); d++) {
            const Range &r = ranges[d];
            if (r.step == 0)
                throw Error(ZARR_ERR_INVALID_ARG, "range " + std::to_string(d) + " has step 0");
            // The last index taken, start + (count - 1) * step, must be inside the extent.
            bool inside = r.count == 0 ? r.start <= shape_[d]
                                       : r.start < shape_[d] &&
                                             r.count - 1 <= (shape_[d] - 1 - r.start) / r.step;
            if (!inside)
                throw Error(ZARR_ERR_OUT_OF_BOUNDS,
                            "range " + std::to_string(d) + " (start " + std::to_string(r.start) +
                                ", count " + std::to_string(r.count) + ", step " +
                                std::to_string(r.step) + ") leaves the extent " +
                                std::to_string(shape_[d]));
            shape[d] = r.count;
            strides[d] = detail::mul_checked(strides_[d], r.step, "a sub-view stride");
            empty = empty || r.count == 0;
            offset += r.start * strides_[d];  // an element inside footprint_ when not empty
        }
        return View(empty ? data_ : data_ + offset, std::move(shape), std::move(strides));
    }

    /* The strides as the C call takes them. */
    std::vector<int64_t> c_strides() const {
        std::vector<int64_t> out;
        for (uint64_t s : strides_) {
            if (s > static_cast<uint64_t>(INT64_MAX))
                throw Error(ZARR_ERR_OVERFLOW, "a view stride exceeds int64_t");
            out.push_back(static_cast<int64_t>(s));
        }
        return out;
    }
    /* The bytes from data() to the end of the last element, as the C call takes them. */
    size_t footprint_bytes() const {
        if (footprint_ > SIZE_MAX / sizeof(T))
            throw Error(ZARR_ERR_OVERFLOW, "the view spans more bytes than size_t holds");
        return static_cast<size_t>(footprint_) * sizeof(T);
    }

  private:
    static T *sized_data(span<T> data, const std::vector<uint64_t> &shape) {
        detail::check_span_size(data.size(), shape);
        return data.data();
    }
    static std::vector<uint64_t> contiguous_strides(const std::vector<uint64_t> &shape,
                                                    zarr_order_t order) {
        if (order != ZARR_ORDER_C && order != ZARR_ORDER_F)
            throw Error(ZARR_ERR_INVALID_ARG, "the order is neither ZARR_ORDER_C nor ZARR_ORDER_F");
        std::vector<uint64_t> strides(shape.size());
        uint64_t stride = 1;
        for (size_t k = 0; k < shape.size(); k++) {
            size_t d = order == ZARR_ORDER_C ? shape.size() - 1 - k : k;
            strides[d] = stride;
            stride = detail::mul_checked(stride, shape[d], "the view's element count");
        }
        return strides;
    }
    uint64_t compute_footprint() const {
        uint64_t last = 0;  // offset of the last element
        for (size_t d = 0; d < rank(); d++) {
            if (shape_[d] == 0)
                return 0;
            uint64_t reach = detail::mul_checked(shape_[d] - 1, strides_[d], "the view's extent");
            if (last > UINT64_MAX - 1 - reach)
                throw Error(ZARR_ERR_OVERFLOW, "the view's extent overflows 64 bits");
            last += reach;
        }
        return last + 1;
    }

    T *data_ = nullptr;
    std::vector<uint64_t> shape_;
    std::vector<uint64_t> strides_;
    uint64_t footprint_ = 0;
};

namespace detail {
template <class V> struct is_view : std::false_type {};
template <class T> struct is_view<View<T>> : std::true_type {};
}  // namespace detail

/* ---- arrays ------------------------------------------------------------------------ */

class Array : public detail::TypedAttributes<Array> {
  public:
    Array() noexcept = default;
    explicit Array(zarr_array_t *adopt) noexcept : h_(adopt) {}

    static Array open(const Store &store, const std::string &path, zarr_mode_t mode) {
        return Array(detail::make<zarr_array_t>([&](zarr_array_t **out) {
            return zarr_array_open(store.get(), path.c_str(), mode, out);
        }));
    }
    static Array create_json(const Store &store, const std::string &path,
                             const std::string &zarray_json, zarr_mode_t mode) {
        return Array(detail::make<zarr_array_t>([&](zarr_array_t **out) {
            return zarr_array_create_json(store.get(), path.c_str(), zarray_json.c_str(), mode, out);
        }));
    }

    /* -- regions: `n` is the number of elements at `data` -- */

    template <class T>
    void read(const std::vector<uint64_t> &start, const std::vector<uint64_t> &count, T *data,
              size_t n, zarr_order_t order = ZARR_ORDER_C) const {
        detail::check_same_rank(start, count, "count");
        detail::check(zarr_array_read(get(), start.size(), start.data(), count.data(), dtype_v<T>,
                                      order, data, n * sizeof(T)));
    }
    template <class T>
    void read(const std::vector<uint64_t> &start, const std::vector<uint64_t> &count,
              std::vector<T> &data, zarr_order_t order = ZARR_ORDER_C) const {
        static_assert(!std::is_same_v<T, bool>, "std::vector<bool> is packed: pass a bool pointer");
        read(start, count, data.data(), data.size(), order);
    }
    /* A new vector holding the region. */
    template <class T>
    std::vector<T> read(const std::vector<uint64_t> &start, const std::vector<uint64_t> &count,
                        zarr_order_t order = ZARR_ORDER_C) const {
        static_assert(!std::is_same_v<T, bool>, "std::vector<bool> is packed: pass a bool pointer");
        std::vector<T> data(detail::element_count(count));
        read(start, count, data.data(), data.size(), order);
        return data;
    }
    template <class T>
    void write(const std::vector<uint64_t> &start, const std::vector<uint64_t> &count,
               const T *data, size_t n, zarr_order_t order = ZARR_ORDER_C) const {
        detail::check_same_rank(start, count, "count");
        detail::check(zarr_array_write(get(), start.size(), start.data(), count.data(), dtype_v<T>,
                                       order, data, n * sizeof(T)));
    }
    template <class T>
    void write(const std::vector<uint64_t> &start, const std::vector<uint64_t> &count,
               const std::vector<T> &data, zarr_order_t order = ZARR_ORDER_C) const {
        static_assert(!std::is_same_v<T, bool>, "std::vector<bool> is packed: pass a bool pointer");
        write(start, count, data.data(), data.size(), order);
    }
    /* Raw items (ZARR_DTYPE_RAW: S, U, V, r* and structured arrays): `bytes` is the
     * buffer size, item_size() per element. */
    void read_raw(const std::vector<uint64_t> &start, const std::vector<uint64_t> &count,
                  void *data, size_t bytes, zarr_order_t order = ZARR_ORDER_C) const {
        detail::check_same_rank(start, count, "count");
        detail::check(zarr_array_read(get(), start.size(), start.data(), count.data(),
                                      ZARR_DTYPE_RAW, order, data, bytes));
    }
    void write_raw(const std::vector<uint64_t> &start, const std::vector<uint64_t> &count,
                   const void *data, size_t bytes, zarr_order_t order = ZARR_ORDER_C) const {
        detail::check_same_rank(start, count, "count");
        detail::check(zarr_array_write(get(), start.size(), start.data(), count.data(),
                                       ZARR_DTYPE_RAW, order, data, bytes));
    }
    /* Items moved as their bits under an explicit element type (ZARR_DTYPE_BFLOAT16, the
     * float8/float6/float4 types, int2/int4/uint2/uint4, float16: types without a C++
     * type); `bytes` is the buffer size. A bfloat16 array also reads and writes as float. */
    void read_as(zarr_dtype_t dtype, const std::vector<uint64_t> &start,
                 const std::vector<uint64_t> &count, void *data, size_t bytes,
                 zarr_order_t order = ZARR_ORDER_C) const {
        detail::check_same_rank(start, count, "count");
        detail::check(zarr_array_read(get(), start.size(), start.data(), count.data(), dtype,
                                      order, data, bytes));
    }
    void write_as(zarr_dtype_t dtype, const std::vector<uint64_t> &start,
                  const std::vector<uint64_t> &count, const void *data, size_t bytes,
                  zarr_order_t order = ZARR_ORDER_C) const {
        detail::check_same_rank(start, count, "count");
        detail::check(zarr_array_write(get(), start.size(), start.data(), count.data(), dtype,
                                       order, data, bytes));
    }
    /* Elements of T converted from or to the array's numeric type, as netCDF's
     * nc_get_vara_* and nc_put_vara_* (zarr_array_read_as, zarr_array_write_from): values
     * that do not fit throw Error with ZARR_ERR_RANGE (a read has still stored every
     * element; a write has stored nothing). */
    template <class T>
    void read_converted(const std::vector<uint64_t> &start, const std::vector<uint64_t> &count,
                        T *data, size_t n, zarr_order_t order = ZARR_ORDER_C) const {
        detail::check_same_rank(start, count, "count");
        detail::check(zarr_array_read_as(get(), start.size(), start.data(), count.data(),
                                         dtype_v<T>, order, data, n * sizeof(T)));
    }
    template <class T>
    std::vector<T> read_converted(const std::vector<uint64_t> &start,
                                  const std::vector<uint64_t> &count,
                                  zarr_order_t order = ZARR_ORDER_C) const {
        static_assert(!std::is_same_v<T, bool>, "std::vector<bool> is packed: pass a bool pointer");
        std::vector<T> data(detail::element_count(count));
        read_converted(start, count, data.data(), data.size(), order);
        return data;
    }
    template <class T>
    void write_converted(const std::vector<uint64_t> &start, const std::vector<uint64_t> &count,
                         const T *data, size_t n, zarr_order_t order = ZARR_ORDER_C) const {
        detail::check_same_rank(start, count, "count");
        detail::check(zarr_array_write_from(get(), start.size(), start.data(), count.data(),
                                            dtype_v<T>, order, data, n * sizeof(T)));
    }
    template <class T>
    void write_converted(const std::vector<uint64_t> &start, const std::vector<uint64_t> &count,
                         const std::vector<T> &data, zarr_order_t order = ZARR_ORDER_C) const {
        static_assert(!std::is_same_v<T, bool>, "std::vector<bool> is packed: pass a bool pointer");
        write_converted(start, count, data.data(), data.size(), order);
    }
    /* Variable-length items (strings, bytes, arrays) of a region, one string per item. */
    std::vector<std::string> read_vlen(const std::vector<uint64_t> &start,
                                       const std::vector<uint64_t> &count,
                                       zarr_order_t order = ZARR_ORDER_C) const {
        detail::check_same_rank(start, count, "count");
        size_t n = 1;
        for (uint64_t c : count)
            n *= static_cast<size_t>(c);
        std::vector<uint64_t> offsets(n + 1);
        size_t needed = 0;
        zarr_status_t st = zarr_array_read_vlen(get(), start.size(), start.data(), count.data(),
                                                order, offsets.data(), offsets.size(), nullptr, 0,
                                                &needed);
        if (st != ZARR_ERR_BUFFER_SIZE)
            detail::check(st);
        std::string data(needed, '\0');
        if (st == ZARR_ERR_BUFFER_SIZE)
            detail::check(zarr_array_read_vlen(get(), start.size(), start.data(), count.data(), order,
                                           offsets.data(), offsets.size(), data.data(),
                                           data.size(), &needed));
        std::vector<std::string> out;
        out.reserve(n);
        for (size_t i = 0; i < n; i++)
            out.emplace_back(data, offsets[i], offsets[i + 1] - offsets[i]);
        return out;
    }
    /* The items of a region as a library-owned list. */
    VlenList read_vlen_list(const std::vector<uint64_t> &start, const std::vector<uint64_t> &count,
                            zarr_order_t order = ZARR_ORDER_C) const {
        detail::check_same_rank(start, count, "count");
        zarr_vlen_list_t *list = nullptr;
        detail::check(zarr_array_read_vlen_list(get(), start.size(), start.data(), count.data(),
                                                order, &list));
        return VlenList(list);
    }
    void write_vlen(const std::vector<uint64_t> &start, const std::vector<uint64_t> &count,
                    const std::vector<std::string> &items,
                    zarr_order_t order = ZARR_ORDER_C) const {
        detail::check_same_rank(start, count, "count");
        detail::ItemViews views = detail::item_views(count, items);
        detail::check(zarr_array_write_vlen(get(), start.size(), start.data(), count.data(), order,
                                            views.pointers.data(), views.lengths.data()));
    }
    /* Appends one item per element of a block of extents `count` along `axis`. */
    void append_vlen(size_t axis, const std::vector<uint64_t> &count,
                     const std::vector<std::string> &items,
                     zarr_order_t order = ZARR_ORDER_C) const {
        detail::ItemViews views = detail::item_views(count, items);
        detail::check(zarr_array_append_vlen(get(), axis, count.size(), count.data(), order,
                                             views.pointers.data(), views.lengths.data()));
    }
    /* The record fields of a structured array (empty for other arrays). */
    std::vector<Field> fields() const {
        size_t n = 0;
        detail::check(zarr_array_nfields(get(), &n));
        std::vector<Field> out(n);
        for (size_t i = 0; i < n; i++) {
            Field &f = out[i];
            f.name = detail::get_text([&](char *b, size_t l, size_t *need) {
                return zarr_array_field_name(get(), i, b, l, need);
            });
            f.dtype = detail::get_text([&](char *b, size_t l, size_t *need) {
                return zarr_array_field_dtype_name(get(), i, b, l, need);
            });
            size_t ndim = 0;
            f.shape.resize(32);
            detail::check(zarr_array_field_layout(get(), i, &f.offset, &f.size, &ndim,
                                                  f.shape.data(), f.shape.size()));
            f.shape.resize(ndim);
        }
        return out;
    }
    /* Element i of the region is at data[Σ i[d] * strides[d]] (strides in elements). */
    template <class T>
    void read_strided(const std::vector<uint64_t> &start, const std::vector<uint64_t> &count,
                      const std::vector<int64_t> &strides, T *data, size_t n) const {
        detail::check_same_rank(start, count, "count");
        if (strides.size() != start.size())
            throw Error(ZARR_ERR_RANK_MISMATCH, "strides has " + std::to_string(strides.size()) +
                                                    " entries, start " + std::to_string(start.size()));
        detail::check(zarr_array_read_strided(get(), start.size(), start.data(), count.data(),
                                              strides.data(), dtype_v<T>, data, n * sizeof(T)));
    }
    template <class T>
    void write_strided(const std::vector<uint64_t> &start, const std::vector<uint64_t> &count,
                       const std::vector<int64_t> &strides, const T *data, size_t n) const {
        detail::check_same_rank(start, count, "count");
        if (strides.size() != start.size())
            throw Error(ZARR_ERR_RANK_MISMATCH, "strides has " + std::to_string(strides.size()) +
                                                    " entries, start " + std::to_string(start.size()));
        detail::check(zarr_array_write_strided(get(), start.size(), start.data(), count.data(),
                                               strides.data(), dtype_v<T>, data, n * sizeof(T)));
    }
    /* -- spans and strided views: into and from caller-owned memory, no allocation -- */

    /* The region into `out`, which must hold exactly its elements (else Error with
     * ZARR_ERR_BUFFER_SIZE), in C or F order. */
    template <class T>
    void read(const std::vector<uint64_t> &start, const std::vector<uint64_t> &count, span<T> out,
              zarr_order_t order = ZARR_ORDER_C) const {
        static_assert(!std::is_const_v<T>, "a read needs a span of non-const elements");
        detail::check_same_rank(start, count, "count");
        detail::check_span_size(out.size(), count);
        read(start, count, out.data(), out.size(), order);
    }
    /* The region from `data`, which must hold exactly its elements. */
    template <class T>
    void write(const std::vector<uint64_t> &start, const std::vector<uint64_t> &count, span<T> data,
               zarr_order_t order = ZARR_ORDER_C) const {
        detail::check_same_rank(start, count, "count");
        detail::check_span_size(data.size(), count);
        write<std::remove_const_t<T>>(start, count, data.data(), data.size(), order);
    }
    /* The region of extents out.shape() at `start` into the view's elements (V is a
     * zarr::View<T>: a template so that brace lists never convert to a view). */
    template <class V, std::enable_if_t<detail::is_view<V>::value, int> = 0>
    void read(const std::vector<uint64_t> &start, const V &out) const {
        using T = typename V::element_type;
        static_assert(!std::is_const_v<T>, "a read needs a view of non-const elements");
        check_view_rank(start, out.rank());
        std::vector<int64_t> strides = out.c_strides();
        detail::check(zarr_array_read_strided(get(), start.size(), start.data(),
                                              out.shape().data(), strides.data(), dtype_v<T>,
                                              out.data(), out.footprint_bytes()));
    }
    /* The region of extents data.shape() at `start` from the view's elements. */
    template <class V, std::enable_if_t<detail::is_view<V>::value, int> = 0>
    void write(const std::vector<uint64_t> &start, const V &data) const {
        using T = typename V::element_type;
        check_view_rank(start, data.rank());
        std::vector<int64_t> strides = data.c_strides();
        detail::check(zarr_array_write_strided(get(), start.size(), start.data(),
                                               data.shape().data(), strides.data(),
                                               dtype_v<std::remove_const_t<T>>, data.data(),
                                               data.footprint_bytes()));
    }
#if ZARR_HPP_HAS_MDSPAN
    /* A std::mdspan of a strided layout (layout_right, layout_left, layout_stride). */
    template <class T, class E, class L>
    void read(const std::vector<uint64_t> &start,
              std::mdspan<T, E, L, std::default_accessor<T>> out) const {
        read(start, View<T>::from_mdspan(out));
    }
    template <class T, class E, class L>
    void write(const std::vector<uint64_t> &start,
               std::mdspan<T, E, L, std::default_accessor<T>> data) const {
        write(start, View<T>::from_mdspan(data));
    }
#endif

    /* Appends a block of extents `count` along `axis`. */
    template <class T>
    void append(size_t axis, const std::vector<uint64_t> &count, const T *data, size_t n,
                zarr_order_t order = ZARR_ORDER_C) const {
        detail::check(zarr_array_append(get(), axis, count.size(), count.data(), dtype_v<T>, order,
                                        data, n * sizeof(T)));
    }
    template <class T>
    void append(size_t axis, const std::vector<uint64_t> &count, const std::vector<T> &data,
                zarr_order_t order = ZARR_ORDER_C) const {
        static_assert(!std::is_same_v<T, bool>, "std::vector<bool> is packed: pass a bool pointer");
        append(axis, count, data.data(), data.size(), order);
    }
    /* A block from `data`, which must hold exactly its elements (else Error with
     * ZARR_ERR_BUFFER_SIZE). */
    template <class T>
    void append(size_t axis, const std::vector<uint64_t> &count, span<T> data,
                zarr_order_t order = ZARR_ORDER_C) const {
        detail::check_span_size(data.size(), count);
        append<std::remove_const_t<T>>(axis, count, data.data(), data.size(), order);
    }
    /* A block of extents data.shape() from the view's elements (zarr_array_append_strided). */
    template <class V, std::enable_if_t<detail::is_view<V>::value, int> = 0>
    void append(size_t axis, const V &data) const {
        using T = typename V::element_type;
        std::vector<int64_t> strides = data.c_strides();
        detail::check(zarr_array_append_strided(get(), axis, data.rank(), data.shape().data(),
                                                strides.data(), dtype_v<std::remove_const_t<T>>,
                                                data.data(), data.footprint_bytes()));
    }
#if ZARR_HPP_HAS_MDSPAN
    /* A std::mdspan of a strided layout (layout_right, layout_left, layout_stride). */
    template <class T, class E, class L>
    void append(size_t axis, std::mdspan<T, E, L, std::default_accessor<T>> data) const {
        append(axis, View<T>::from_mdspan(data));
    }
#endif
    /* Elements of T converted to the array's numeric type, as write_converted
     * (zarr_array_append_from): a value that does not fit throws Error with ZARR_ERR_RANGE
     * and nothing is appended. */
    template <class T>
    void append_converted(size_t axis, const std::vector<uint64_t> &count, const T *data,
                          size_t n, zarr_order_t order = ZARR_ORDER_C) const {
        detail::check(zarr_array_append_from(get(), axis, count.size(), count.data(), dtype_v<T>,
                                             order, data, n * sizeof(T)));
    }
    template <class T>
    void append_converted(size_t axis, const std::vector<uint64_t> &count,
                          const std::vector<T> &data, zarr_order_t order = ZARR_ORDER_C) const {
        static_assert(!std::is_same_v<T, bool>, "std::vector<bool> is packed: pass a bool pointer");
        append_converted(axis, count, data.data(), data.size(), order);
    }
    /* Non-blocking write (zarr_array_write_async): with flags 0, `data` must stay untouched
     * until the request is done; ZARR_ASYNC_COPY copies it at once. */
    template <class T>
    Request write_async(const std::vector<uint64_t> &start, const std::vector<uint64_t> &count,
                        const T *data, size_t n, zarr_order_t order = ZARR_ORDER_C,
                        uint32_t flags = 0) const {
        detail::check_same_rank(start, count, "count");
        return Request(detail::make<zarr_request_t>([&](zarr_request_t **out) {
            return zarr_array_write_async(get(), start.size(), start.data(), count.data(),
                                          dtype_v<T>, order, data, n * sizeof(T), flags, out);
        }));
    }
    /* Non-blocking write of a vector, copied at submission (the vector may go at once). */
    template <class T>
    Request write_async(const std::vector<uint64_t> &start, const std::vector<uint64_t> &count,
                        const std::vector<T> &data, zarr_order_t order = ZARR_ORDER_C) const {
        static_assert(!std::is_same_v<T, bool>, "std::vector<bool> is packed: pass a bool pointer");
        return write_async(start, count, data.data(), data.size(), order, ZARR_ASYNC_COPY);
    }
    /* Non-blocking converting write (zarr_array_write_from_async): elements of T converted
     * to the array's numeric type when the request runs, as write_converted; a value that
     * does not fit makes wait() throw ZARR_ERR_RANGE (nothing stored). Flags as write_async. */
    template <class T>
    Request write_converted_async(const std::vector<uint64_t> &start,
                                  const std::vector<uint64_t> &count, const T *data, size_t n,
                                  zarr_order_t order = ZARR_ORDER_C, uint32_t flags = 0) const {
        detail::check_same_rank(start, count, "count");
        return Request(detail::make<zarr_request_t>([&](zarr_request_t **out) {
            return zarr_array_write_from_async(get(), start.size(), start.data(), count.data(),
                                               dtype_v<T>, order, data, n * sizeof(T), flags,
                                               out);
        }));
    }
    /* Non-blocking strided write (zarr_array_write_strided_async); flags as write_async. */
    template <class T>
    Request write_strided_async(const std::vector<uint64_t> &start,
                                const std::vector<uint64_t> &count,
                                const std::vector<int64_t> &strides, const T *data, size_t n,
                                uint32_t flags = 0) const {
        detail::check_same_rank(start, count, "count");
        if (strides.size() != start.size())
            throw Error(ZARR_ERR_RANK_MISMATCH, "strides has " + std::to_string(strides.size()) +
                                                    " entries, start " + std::to_string(start.size()));
        return Request(detail::make<zarr_request_t>([&](zarr_request_t **out) {
            return zarr_array_write_strided_async(get(), start.size(), start.data(), count.data(),
                                                  strides.data(), dtype_v<T>, data, n * sizeof(T),
                                                  flags, out);
        }));
    }
    /* Non-blocking append (zarr_array_append_async): appends apply in submission order;
     * flags as write_async. */
    template <class T>
    Request append_async(size_t axis, const std::vector<uint64_t> &count, const T *data, size_t n,
                         zarr_order_t order = ZARR_ORDER_C, uint32_t flags = 0) const {
        return Request(detail::make<zarr_request_t>([&](zarr_request_t **out) {
            return zarr_array_append_async(get(), axis, count.size(), count.data(), dtype_v<T>,
                                           order, data, n * sizeof(T), flags, out);
        }));
    }
    /* Non-blocking append of a vector, copied at submission. */
    template <class T>
    Request append_async(size_t axis, const std::vector<uint64_t> &count, const std::vector<T> &data,
                         zarr_order_t order = ZARR_ORDER_C) const {
        static_assert(!std::is_same_v<T, bool>, "std::vector<bool> is packed: pass a bool pointer");
        return append_async(axis, count, data.data(), data.size(), order, ZARR_ASYNC_COPY);
    }
    /* Non-blocking append of a span, which must hold exactly the block's elements; flags as
     * write_async. */
    template <class T>
    Request append_async(size_t axis, const std::vector<uint64_t> &count, span<T> data,
                         zarr_order_t order = ZARR_ORDER_C, uint32_t flags = 0) const {
        detail::check_span_size(data.size(), count);
        return append_async<std::remove_const_t<T>>(axis, count, data.data(), data.size(), order,
                                                    flags);
    }
    /* Non-blocking append of a view's elements (zarr_array_append_strided_async); flags as
     * write_async. */
    template <class V, std::enable_if_t<detail::is_view<V>::value, int> = 0>
    Request append_async(size_t axis, const V &data, uint32_t flags = 0) const {
        using T = typename V::element_type;
        std::vector<int64_t> strides = data.c_strides();
        return Request(detail::make<zarr_request_t>([&](zarr_request_t **out) {
            return zarr_array_append_strided_async(
                get(), axis, data.rank(), data.shape().data(), strides.data(),
                dtype_v<std::remove_const_t<T>>, data.data(), data.footprint_bytes(), flags, out);
        }));
    }
#if ZARR_HPP_HAS_MDSPAN
    template <class T, class E, class L>
    Request append_async(size_t axis, std::mdspan<T, E, L, std::default_accessor<T>> data,
                         uint32_t flags = 0) const {
        return append_async(axis, View<T>::from_mdspan(data), flags);
    }
#endif
    /* Non-blocking converting append (zarr_array_append_from_async): a value that does not
     * fit makes wait() throw ZARR_ERR_RANGE (nothing appended). Flags as write_async. */
    template <class T>
    Request append_converted_async(size_t axis, const std::vector<uint64_t> &count, const T *data,
                                   size_t n, zarr_order_t order = ZARR_ORDER_C,
                                   uint32_t flags = 0) const {
        return Request(detail::make<zarr_request_t>([&](zarr_request_t **out) {
            return zarr_array_append_from_async(get(), axis, count.size(), count.data(),
                                                dtype_v<T>, order, data, n * sizeof(T), flags,
                                                out);
        }));
    }
    /* Stores buffered appends and flushes the store (see zarr_array_flush); waits for the
     * handle's non-blocking requests first. */
    void flush() const { detail::check(zarr_array_flush(get())); }
    /* Waits for the handle's requests and, on a writable handle, stores buffered appends
     * and flushes the store, throwing what fails (zarr_array_close); the handle stays
     * valid, and the destructor, which loses such errors, frees it. */
    void close() const { detail::check(zarr_array_close(get())); }
    void resize(const std::vector<uint64_t> &shape) const {
        detail::check(zarr_array_resize(get(), shape.size(), shape.data()));
    }
    /* Re-reads the metadata (the shape another process changed). */
    void refresh() const { detail::check(zarr_array_refresh(get())); }
    /* Keeps up to `bytes` of decoded chunks for later reads (0: none); see
       zarr_array_set_cache_bytes. */
    void set_cache_bytes(size_t bytes) const {
        detail::check(zarr_array_set_cache_bytes(get(), bytes));
    }
    /* ZARR_SYNC_NONE, ZARR_SYNC_THREAD, ZARR_SYNC_PROCESS (which needs lock_dir) or
       ZARR_SYNC_VERSIONED (ETag-checked writes on object stores). */
    void set_synchronizer(zarr_sync_t sync,
                          const std::optional<std::string> &lock_dir = std::nullopt) const {
        detail::check(
            zarr_array_set_synchronizer(get(), sync, lock_dir ? lock_dir->c_str() : nullptr));
    }
    /* Turns the append lock on (the default) or off for this handle: off only for writers
       that coordinate by other means (zarr_array_set_append_lock). */
    void set_append_lock(bool on) const {
        detail::check(zarr_array_set_append_lock(get(), on));
    }

    /* -- queries -- */

    size_t rank() const {
        size_t rank = 0;
        detail::check(zarr_array_rank(get(), &rank));
        return rank;
    }
    std::vector<uint64_t> shape() const {
        std::vector<uint64_t> shape(rank());
        detail::check(zarr_array_shape(get(), shape.size(), shape.data()));
        return shape;
    }
    std::vector<uint64_t> chunk_shape() const {
        std::vector<uint64_t> chunks(rank());
        detail::check(zarr_array_chunk_shape(get(), chunks.size(), chunks.data()));
        return chunks;
    }
    /* The shard shape; ZARR_ERR_NOT_FOUND when the array is not sharded. */
    /* Number of nested sharding levels (0: not sharded). */
    size_t shard_levels() const {
        size_t levels = 0;
        detail::check(zarr_array_shard_levels(get(), &levels));
        return levels;
    }
    /* Shard shape of nesting level `level` (0: the stored shards). */
    std::vector<uint64_t> shard_level_shape(size_t level) const {
        std::vector<uint64_t> shape(rank());
        detail::check(zarr_array_shard_level_shape(get(), level, shape.size(), shape.data()));
        return shape;
    }
    std::vector<uint64_t> shard_shape() const {
        std::vector<uint64_t> shards(rank());
        detail::check(zarr_array_shard_shape(get(), shards.size(), shards.data()));
        return shards;
    }
    zarr_dtype_t dtype() const {
        zarr_dtype_t dtype = 0;
        detail::check(zarr_array_dtype(get(), &dtype));
        return dtype;
    }
    std::string dtype_name() const {
        return detail::get_text([&](char *b, size_t l, size_t *n) {
            return zarr_array_dtype_name(get(), b, l, n);
        });
    }
    size_t item_size() const {
        size_t size = 0;
        detail::check(zarr_array_item_size(get(), &size));
        return size;
    }
    /* Records read with ZARR_DTYPE_RAW to native byte order, in place
     * (zarr_array_records_to_native), and back before a write (zarr_array_records_to_stored). */
    void records_to_native(void *buf, size_t buf_bytes) const {
        detail::check(zarr_array_records_to_native(get(), buf, buf_bytes));
    }
    void records_to_stored(void *buf, size_t buf_bytes) const {
        detail::check(zarr_array_records_to_stored(get(), buf, buf_bytes));
    }
    /* The element type of a variable-length array's items (zarr_array_vlen_item_dtype):
     * the numeric type of vlen-array items, ZARR_DTYPE_STRING or ZARR_DTYPE_BYTES. */
    zarr_dtype_t vlen_item_dtype() const {
        zarr_dtype_t dtype = 0;
        detail::check(zarr_array_vlen_item_dtype(get(), &dtype, nullptr));
        return dtype;
    }
    /* The fill value as a T (sizeof(T) must be the element size); *is_null (if given) says
     * whether the metadata has null. */
    template <class T> T fill_value(bool *is_null = nullptr) const {
        T value{};
        bool null = false;
        detail::check(zarr_array_fill_value(get(), &value, sizeof(T), &null));
        if (is_null != nullptr)
            *is_null = null;
        return value;
    }
    std::string fill_value_json() const {
        return detail::get_text([&](char *b, size_t l, size_t *n) {
            return zarr_array_fill_value_json(get(), b, l, n);
        });
    }
    /* The CF missing value (_FillValue) as xarray and netCDF read it; std::nullopt when
     * there is none. */
    std::optional<double> missing_value() const {
        bool set = false;
        double value = 0;
        detail::check(zarr_array_missing_value(get(), &set, &value));
        return set ? std::optional<double>(value) : std::nullopt;
    }
    /* Makes `value` the CF missing value: the fill value and, in Zarr v3, xarray's
     * _FillValue attribute. */
    void set_missing_value(double value) const {
        detail::check(zarr_array_set_missing_value(get(), value));
    }
    zarr_order_t order() const {
        zarr_order_t order = 0;
        detail::check(zarr_array_order(get(), &order));
        return order;
    }
    /** Chunk dimension k is array dimension chunk_permutation()[k]. */
    std::vector<size_t> chunk_permutation() const {
        std::vector<size_t> perm(rank());
        detail::check(zarr_array_chunk_permutation(get(), perm.size(), perm.data()));
        return perm;
    }
    int zarr_format() const {
        int32_t version = 0;
        detail::check(zarr_array_zarr_format(get(), &version));
        return version;
    }
    uint64_t nbytes() const {
        uint64_t n = 0;
        detail::check(zarr_array_nbytes(get(), &n));
        return n;
    }
    uint64_t nbytes_stored() const {
        uint64_t n = 0;
        detail::check(zarr_array_nbytes_stored(get(), &n));
        return n;
    }
    uint64_t nchunks() const {
        uint64_t n = 0;
        detail::check(zarr_array_nchunks(get(), &n));
        return n;
    }
    /* The grid's chunks (shards when sharded) that a region touches, each rank() indices. */
    std::vector<std::vector<uint64_t>> region_chunks(const std::vector<uint64_t> &start,
                                                     const std::vector<uint64_t> &count) const {
        size_t n = 0;
        zarr_status_t status = zarr_array_region_chunks(get(), start.size(), start.data(),
                                                        count.data(), nullptr, 0, &n);
        if (status != ZARR_ERR_BUFFER_SIZE) detail::check(status);
        std::vector<uint64_t> flat(n * start.size());
        detail::check(zarr_array_region_chunks(get(), start.size(), start.data(), count.data(),
                                               flat.data(), n, &n));
        std::vector<std::vector<uint64_t>> chunks;
        for (size_t i = 0; i < n; i++)
            chunks.emplace_back(flat.begin() + i * start.size(),
                                flat.begin() + (i + 1) * start.size());
        return chunks;
    }
    /* The region (start, count) of the grid's chunk at index, clipped to the shape. */
    std::pair<std::vector<uint64_t>, std::vector<uint64_t>>
    chunk_region(const std::vector<uint64_t> &index) const {
        std::vector<uint64_t> start(index.size()), count(index.size());
        detail::check(zarr_array_chunk_region(get(), index.size(), index.data(), start.data(),
                                              count.data()));
        return {start, count};
    }
    /* ZARR_CHUNK_GRID_REGULAR or ZARR_CHUNK_GRID_RECTILINEAR. */
    zarr_chunk_grid_t chunk_grid_kind() const {
        zarr_chunk_grid_t kind = 0;
        detail::check(zarr_array_chunk_grid_kind(get(), &kind));
        return kind;
    }
    /* Chunks (shards when sharded) holding elements, per dimension. */
    std::vector<uint64_t> chunk_grid_shape() const {
        std::vector<uint64_t> grid(rank());
        detail::check(zarr_array_chunk_grid_shape(get(), grid.size(), grid.data()));
        return grid;
    }
    /* Edge lengths of the chunks along dimension dim that hold elements. */
    std::vector<uint64_t> chunk_edges(size_t dim) const {
        size_t n = 0;
        zarr_status_t status = zarr_array_chunk_edges(get(), dim, nullptr, 0, &n);
        if (status != ZARR_ERR_BUFFER_SIZE) detail::check(status);
        std::vector<uint64_t> edges(n);
        detail::check(zarr_array_chunk_edges(get(), dim, edges.data(), n, &n));
        return edges;
    }
    /* Index of the grid's chunk holding the element at index. */
    std::vector<uint64_t> chunk_of(const std::vector<uint64_t> &index) const {
        std::vector<uint64_t> chunk(index.size());
        detail::check(zarr_array_chunk_of(get(), index.size(), index.data(), chunk.data()));
        return chunk;
    }
    uint64_t nchunks_initialized() const {
        uint64_t n = 0;
        detail::check(zarr_array_nchunks_initialized(get(), &n));
        return n;
    }
    /* The whole chunk at index (inner chunks when sharded) encoded from its elements in
     * the array's type, C order (bytes of the whole chunk); std::nullopt when it equals
     * the fill value and is not stored. For write_encoded, here or in another process. */
    std::optional<std::vector<unsigned char>> encode_chunk(const std::vector<uint64_t> &index,
                                                           const void *data,
                                                           size_t bytes) const {
        size_t bound = 0, written = 0;
        bool stored = false;
        detail::check(zarr_array_encoded_chunk_bound(get(), &bound));
        std::vector<unsigned char> out(bound);
        detail::check(zarr_array_encode_chunk(get(), index.size(), index.data(), data, bytes,
                                              out.data(), out.size(), &written, &stored));
        if (!stored) return std::nullopt;
        out.resize(written);
        return out;
    }
    /* How many encodings write_encoded takes for the object at index. */
    size_t encoded_units(const std::vector<uint64_t> &index) const {
        size_t n = 0;
        detail::check(zarr_array_encoded_units(get(), index.size(), index.data(), &n));
        return n;
    }
    /* Stores the object (shard or chunk) at index whole from encode_chunk's encodings (a
     * shard's inner chunks in C order; std::nullopt: not stored). */
    void write_encoded(const std::vector<uint64_t> &index,
                       const std::vector<std::optional<std::vector<unsigned char>>> &units) const {
        std::vector<const void *> data;
        std::vector<size_t> bytes;
        for (const auto &unit : units) {
            data.push_back(unit ? static_cast<const void *>(unit->data()) : nullptr);
            bytes.push_back(unit ? unit->size() : 0);
        }
        detail::check(zarr_array_write_encoded(get(), index.size(), index.data(), units.size(),
                                               data.data(), bytes.data()));
    }
    std::string metadata_json() const {
        return detail::get_text([&](char *b, size_t l, size_t *n) {
            return zarr_array_metadata_json(get(), b, l, n);
        });
    }

    /* -- attributes (JSON) and dimension names -- */

    std::string attributes() const {
        return detail::get_text(
            [&](char *b, size_t l, size_t *n) { return zarr_array_attrs_get(get(), b, l, n); });
    }
    void set_attributes(const std::string &json) const {
        detail::check(zarr_array_attrs_set(get(), json.c_str()));
    }
    std::string attribute(const std::string &key) const {
        return detail::get_text([&](char *b, size_t l, size_t *n) {
            return zarr_array_attr_get(get(), key.c_str(), b, l, n);
        });
    }
    void set_attribute(const std::string &key, const std::string &json) const {
        detail::check(zarr_array_attr_set(get(), key.c_str(), json.c_str()));
    }
    void delete_attribute(const std::string &key) const {
        detail::check(zarr_array_attr_delete(get(), key.c_str()));
    }
    /* One name per dimension; std::nullopt leaves a dimension unnamed (v3 only). */
    void set_dimension_names(const std::vector<std::optional<std::string>> &names) const {
        std::vector<const char *> p;
        for (const std::optional<std::string> &name : names)
            p.push_back(name ? name->c_str() : nullptr);
        detail::check(zarr_array_set_dimension_names(get(), p.size(), p.data()));
    }
    /* The dimension names; an unnamed dimension is std::nullopt. */
    std::vector<std::optional<std::string>> dimension_names() const {
        return StringList(detail::make<zarr_strings_t>([&](zarr_strings_t **out) {
                   return zarr_array_dimension_names(get(), out);
               }))
            .to_optional_vector();
    }

    zarr_array_t *get() const noexcept { return h_.get(); }
    zarr_array_t *release() noexcept { return h_.release(); }
    explicit operator bool() const noexcept { return h_.get() != nullptr; }

  private:
    /* A view's rank must be the start's (the C call takes one ndim). */
    static void check_view_rank(const std::vector<uint64_t> &start, size_t view_rank) {
        if (view_rank != start.size())
            throw Error(ZARR_ERR_RANK_MISMATCH, "the view has " + std::to_string(view_rank) +
                                                    " dimensions, start " +
                                                    std::to_string(start.size()) + " entries");
    }

    detail::Handle<zarr_array_t> h_;
};

/* ---- array builder ------------------------------------------------------------------- */

/* Settings for new arrays; the setters return *this for chaining. */
class ArrayBuilder {
  public:
    ArrayBuilder() noexcept = default;
    explicit ArrayBuilder(zarr_array_builder_t *adopt) noexcept : h_(adopt) {}
    ArrayBuilder(zarr_dtype_t dtype, const std::vector<uint64_t> &shape)
        : h_(detail::make<zarr_array_builder_t>([&](zarr_array_builder_t **out) {
              return zarr_array_builder_new(dtype, shape.size(), shape.data(), out);
          })) {}
    /* A builder for elements of type T. */
    template <class T> static ArrayBuilder of(const std::vector<uint64_t> &shape) {
        return ArrayBuilder(dtype_v<T>, shape);
    }

    ArrayBuilder &set_dtype_name(const std::string &name) {
        detail::check(zarr_array_builder_set_dtype_name(get(), name.c_str()));
        return *this;
    }
    ArrayBuilder &set_chunk_shape(const std::vector<uint64_t> &chunks) {
        detail::check(zarr_array_builder_set_chunk_shape(get(), chunks.size(), chunks.data()));
        return *this;
    }
    /* Chunk edge lengths of dimension dim: a rectilinear chunk grid (Zarr v3). */
    ArrayBuilder &set_chunk_edges(size_t dim, const std::vector<uint64_t> &edges) {
        detail::check(zarr_array_builder_set_chunk_edges(get(), dim, edges.data(), edges.size()));
        return *this;
    }
    ArrayBuilder &set_shard_shape(const std::vector<uint64_t> &shape) {
        detail::check(zarr_array_builder_set_shard_shape(get(), shape.size(), shape.data()));
        return *this;
    }
    /* Nests one more level of shards (of `shape`) inside the shards set so far. */
    ArrayBuilder &add_inner_shard_shape(const std::vector<uint64_t> &shape) {
        detail::check(zarr_array_builder_add_inner_shard_shape(get(), shape.size(), shape.data()));
        return *this;
    }
    template <class T> ArrayBuilder &set_fill_value(const T &value) {
        detail::check(zarr_array_builder_set_fill_value(get(), dtype_v<T>, &value, sizeof(T)));
        return *this;
    }
    ArrayBuilder &set_fill_value_json(const std::string &json) {
        detail::check(zarr_array_builder_set_fill_value_json(get(), json.c_str()));
        return *this;
    }
    /* The CF missing value, written as xarray, netCDF and CF readers expect. */
    ArrayBuilder &set_missing_value(double value) {
        detail::check(zarr_array_builder_set_missing_value(get(), value));
        return *this;
    }
    ArrayBuilder &set_order(zarr_order_t order) {
        detail::check(zarr_array_builder_set_order(get(), order));
        return *this;
    }
    /* Any order of the dimensions inside chunks (a v3 transpose): chunk dimension k is
       array dimension permutation[k]. */
    ArrayBuilder &set_chunk_permutation(const std::vector<size_t> &permutation) {
        detail::check(zarr_array_builder_set_chunk_permutation(get(), permutation.size(),
                                                               permutation.data()));
        return *this;
    }
    ArrayBuilder &set_dimension_separator(const std::string &separator) {
        detail::check(zarr_array_builder_set_dimension_separator(get(), separator.c_str()));
        return *this;
    }
    /* "default" or "v2" chunk keys (v3); the separator is the encoding's own unless given. */
    ArrayBuilder &set_chunk_key_encoding(const std::string &name,
                                         const std::optional<std::string> &separator = std::nullopt) {
        detail::check(zarr_array_builder_set_chunk_key_encoding(
            get(), name.c_str(), separator ? separator->c_str() : nullptr));
        return *this;
    }
    /* Shard index at the start or the end of each shard, with or without its crc32c. */
    ArrayBuilder &set_shard_index(bool index_at_start, bool checksum = true) {
        detail::check(zarr_array_builder_set_shard_index(get(), index_at_start, checksum));
        return *this;
    }
    ArrayBuilder &set_compressor_json(const std::string &json) {
        detail::check(zarr_array_builder_set_compressor_json(get(), json.c_str()));
        return *this;
    }
    ArrayBuilder &set_filters_json(const std::string &json) {
        detail::check(zarr_array_builder_set_filters_json(get(), json.c_str()));
        return *this;
    }
    ArrayBuilder &set_attributes_json(const std::string &json) {
        detail::check(zarr_array_builder_set_attributes_json(get(), json.c_str()));
        return *this;
    }
    ArrayBuilder &set_zarr_format(int version) {
        detail::check(zarr_array_builder_set_zarr_format(get(), version));
        return *this;
    }
    /* v3 dimension names; std::nullopt for an unnamed dimension. */
    ArrayBuilder &set_dimension_names(const std::vector<std::optional<std::string>> &names) {
        std::vector<const char *> p;
        for (const auto &name : names)
            p.push_back(name ? name->c_str() : nullptr);
        detail::check(zarr_array_builder_set_dimension_names(get(), p.size(), p.data()));
        return *this;
    }

    /* Creates the array at `path` (ZARR_MODE_W, ZARR_MODE_W_MINUS or ZARR_MODE_A). */
    Array create(const Store &store, const std::string &path, zarr_mode_t mode) const {
        return Array(detail::make<zarr_array_t>([&](zarr_array_t **out) {
            return zarr_array_create(get(), store.get(), path.c_str(), mode, out);
        }));
    }

    zarr_array_builder_t *get() const noexcept { return h_.get(); }
    zarr_array_builder_t *release() noexcept { return h_.release(); }
    explicit operator bool() const noexcept { return h_.get() != nullptr; }

  private:
    detail::Handle<zarr_array_builder_t> h_;
};

/* ---- groups ------------------------------------------------------------------------ */

class Group : public detail::TypedAttributes<Group> {
  public:
    Group() noexcept = default;
    explicit Group(zarr_group_t *adopt) noexcept : h_(adopt) {}

    static Group open(const Store &store, const std::string &path, zarr_mode_t mode) {
        return Group(detail::make<zarr_group_t>([&](zarr_group_t **out) {
            return zarr_group_open(store.get(), path.c_str(), mode, out);
        }));
    }
    /* Like open, but a group that has to be created gets Zarr format `zarr_format`. */
    static Group create(const Store &store, const std::string &path, zarr_mode_t mode,
                        int zarr_format) {
        return Group(detail::make<zarr_group_t>([&](zarr_group_t **out) {
            return zarr_group_create(store.get(), path.c_str(), mode, zarr_format, out);
        }));
    }
    /* As create, with the group's attributes (a JSON object) written with it. */
    static Group create(const Store &store, const std::string &path, zarr_mode_t mode,
                        int zarr_format, const std::string &attributes_json) {
        return Group(detail::make<zarr_group_t>([&](zarr_group_t **out) {
            return zarr_group_create_with_attrs(store.get(), path.c_str(), mode, zarr_format,
                                                attributes_json.c_str(), out);
        }));
    }
    static Group open_consolidated(const Store &store, const std::string &path, zarr_mode_t mode) {
        return Group(detail::make<zarr_group_t>([&](zarr_group_t **out) {
            return zarr_group_open_consolidated(store.get(), path.c_str(), mode, out);
        }));
    }

    std::string path() const {
        return detail::get_text(
            [&](char *b, size_t l, size_t *n) { return zarr_group_path(get(), b, l, n); });
    }
    /* 2, 3, ZARR_FORMAT_V3_DRAFT or ZARR_FORMAT_V3_DRAFT_ZARR_PYTHON. */
    int32_t zarr_format() const {
        int32_t version = 0;
        detail::check(zarr_group_zarr_format(get(), &version));
        return version;
    }
    /* What is at `path` below the group. */
    zarr_node_kind_t contains(const std::string &path) const {
        zarr_node_kind_t kind = 0;
        detail::check(zarr_group_contains(get(), path.c_str(), &kind));
        return kind;
    }
    /* Sorted names of the direct members of `kind` (ZARR_NODE_NONE: all). */
    std::vector<std::string> members(zarr_node_kind_t kind = ZARR_NODE_NONE) const {
        return StringList(detail::make<zarr_strings_t>([&](zarr_strings_t **out) {
                   return zarr_group_members(get(), kind, out);
               }))
            .to_vector();
    }
    Group open_group(const std::string &path, zarr_mode_t mode) const {
        return Group(detail::make<zarr_group_t>([&](zarr_group_t **out) {
            return zarr_group_open_group(get(), path.c_str(), mode, out);
        }));
    }
    Array open_array(const std::string &path, zarr_mode_t mode) const {
        return Array(detail::make<zarr_array_t>([&](zarr_array_t **out) {
            return zarr_group_open_array(get(), path.c_str(), mode, out);
        }));
    }
    Array create_array(const ArrayBuilder &builder, const std::string &path,
                       zarr_mode_t mode) const {
        return Array(detail::make<zarr_array_t>([&](zarr_array_t **out) {
            return zarr_group_create_array(get(), builder.get(), path.c_str(), mode, out);
        }));
    }
    /* Deletes the member at `path` and everything under it (zarr_group_delete). */
    void erase(const std::string &path) const {
        detail::check(zarr_group_delete(get(), path.c_str()));
    }
    void move(const std::string &from, const std::string &to) const {
        detail::check(zarr_group_move(get(), from.c_str(), to.c_str()));
    }

    std::string attributes() const {
        return detail::get_text(
            [&](char *b, size_t l, size_t *n) { return zarr_group_attrs_get(get(), b, l, n); });
    }
    void set_attributes(const std::string &json) const {
        detail::check(zarr_group_attrs_set(get(), json.c_str()));
    }
    std::string attribute(const std::string &key) const {
        return detail::get_text([&](char *b, size_t l, size_t *n) {
            return zarr_group_attr_get(get(), key.c_str(), b, l, n);
        });
    }
    void set_attribute(const std::string &key, const std::string &json) const {
        detail::check(zarr_group_attr_set(get(), key.c_str(), json.c_str()));
    }
    void delete_attribute(const std::string &key) const {
        detail::check(zarr_group_attr_delete(get(), key.c_str()));
    }

    zarr_group_t *get() const noexcept { return h_.get(); }
    zarr_group_t *release() noexcept { return h_.release(); }
    explicit operator bool() const noexcept { return h_.get() != nullptr; }

  private:
    detail::Handle<zarr_group_t> h_;
};

}  // namespace zarr

#endif /* ZARR_HPP */
