// include/zarr.hpp, the C++17 binding: RAII handles (moves, any free order, adoption),
// zarr::Error (status and message) for several kinds of failure, every region call in C
// and F order for every element type, groups, stores, attributes, Zarr v3 arrays and the
// export and merge of an Icechunk store's changes.
// Every check compares exact values.
#include "check.h"

#include "check_cxx.h"
#include "zarr.hpp"

#include <complex>
#include <cstring>
#include <memory>
#include <string>
#include <type_traits>
#include <vector>

// Handles are move-only, and moving never throws.
static_assert(!std::is_copy_constructible_v<zarr::Store> && !std::is_copy_assignable_v<zarr::Array>,
              "handles are not copyable");
static_assert(std::is_nothrow_move_constructible_v<zarr::Group> &&
                  std::is_nothrow_move_assignable_v<zarr::ArrayBuilder> &&
                  std::is_nothrow_move_constructible_v<zarr::StringList>,
              "handles move without throwing");
// The compile-time element type map.
static_assert(zarr::dtype_v<bool> == ZARR_DTYPE_BOOL && zarr::dtype_v<int8_t> == ZARR_DTYPE_INT8 &&
                  zarr::dtype_v<uint64_t> == ZARR_DTYPE_UINT64 &&
                  zarr::dtype_v<float> == ZARR_DTYPE_FLOAT32 &&
                  zarr::dtype_v<std::complex<double>> == ZARR_DTYPE_COMPLEX128,
              "dtype_v");

template <class T> static bool same(const std::vector<T> &a, const std::vector<T> &b) {
    return a.size() == b.size() && (a.empty() || std::memcmp(a.data(), b.data(), a.size() * sizeof(T)) == 0);
}

// Value i of a test pattern for each element type (exact in every type).
template <class T> static T pattern(size_t i) {
    if constexpr (std::is_same_v<T, bool>)
        return i % 3 == 1;
    else if constexpr (std::is_same_v<T, std::complex<float>> || std::is_same_v<T, std::complex<double>>)
        return T(static_cast<typename T::value_type>(i) * 0.5f, -static_cast<typename T::value_type>(i));
    else if constexpr (std::is_floating_point_v<T>)
        return static_cast<T>(i) * T(0.25) - T(3);
    else if constexpr (std::is_signed_v<T>)
        return static_cast<T>(static_cast<int>(i % 100) - 50);
    else
        return static_cast<T>(i % 200 + 7);
}

// ---- RAII ---------------------------------------------------------------------------

static void test_raii() {
    zarr::Store store = zarr::Store::memory();
    CHECK(static_cast<bool>(store));

    // Moves leave the source empty; a call on an empty handle passes NULL and throws.
    zarr::Store moved = std::move(store);
    CHECK(!store && moved);
    CHECK_THROWS(store.contains("k"), ZARR_ERR_NULL_ARG, "store");
    store = std::move(moved);
    CHECK(store && !moved);

    // Free order: the builder and the store go first, the array stays usable.
    zarr::Array array;
    CHECK(!array);
    {
        zarr::ArrayBuilder builder = zarr::ArrayBuilder::of<int32_t>({4});
        builder.set_chunk_shape({2});
        array = builder.create(store, "a", ZARR_MODE_W);
        zarr::Store gone = std::move(store);  // destroyed at the end of this block
    }
    CHECK(!store && array);
    array.write({0}, {4}, std::vector<int32_t>{1, 2, 3, 4});
    CHECK(same(array.read<int32_t>({0}, {4}), std::vector<int32_t>{1, 2, 3, 4}));

    // Move assignment frees the handle it replaces; the moved-from array throws.
    zarr::Array other = std::move(array);
    CHECK_THROWS(array.rank(), ZARR_ERR_NULL_ARG, "array");
    CHECK_EQ(other.rank(), 1);

    // release() hands the C handle over; the constructor adopts one.
    zarr_array_t *raw = other.release();
    CHECK(!other && raw != nullptr);
    zarr::Array adopted(raw);
    CHECK_EQ(adopted.shape()[0], 4);

    // A group outlives its store, and arrays opened from it outlive the group.
    zarr::Array from_group;
    {
        zarr::Store s = zarr::Store::memory();
        zarr::Group root = zarr::Group::open(s, "", ZARR_MODE_W);
        root.create_array(zarr::ArrayBuilder::of<double>({3}), "x", ZARR_MODE_W)
            .write({0}, {3}, std::vector<double>{0.5, 1.5, 2.5});
        zarr::Group g = std::move(root);
        s = zarr::Store();  // frees the store now
        from_group = g.open_array("x", ZARR_MODE_R);
    }
    CHECK(same(from_group.read<double>({1}, {2}), std::vector<double>{1.5, 2.5}));

    // StringList: adoption, indexing, moves.
    zarr::Store s = zarr::Store::memory();
    s.set("b", std::vector<uint8_t>{1});
    s.set("a", std::vector<uint8_t>{2});
    zarr_strings_t *keys = nullptr;
    CHECK_OK(zarr_store_list(s.get(), "", &keys));
    zarr::StringList list(keys);
    zarr::StringList list2 = std::move(list);
    CHECK(!list && list2);
    CHECK_EQ(list.size(), 0);
    CHECK_EQ(list2.size(), 2);
    CHECK_STR(list2[0], "a");
    CHECK_STR(list2[1], "b");
    CHECK(list2[2] == nullptr);
    CHECK(list2.at(1) == "b");
    bool threw = false;
    try {
        (void)list2.at(2);
    } catch (const std::out_of_range &) {
        threw = true;
    }
    CHECK(threw);
    CHECK((list2.to_vector() == std::vector<std::string>{"a", "b"}));
}

// ---- errors -------------------------------------------------------------------------

static void test_errors(const char *dir) {
    zarr::Store store = zarr::Store::memory();
    zarr::Array a = zarr::ArrayBuilder::of<double>({4, 6}).set_chunk_shape({2, 3}).create(
        store, "grid", ZARR_MODE_W);

    CHECK_THROWS(zarr::Array::open(store, "missing", ZARR_MODE_R), ZARR_ERR_NOT_FOUND, "missing");
    CHECK_THROWS(zarr::ArrayBuilder::of<double>({4, 6}).create(store, "grid", ZARR_MODE_W_MINUS),
                 ZARR_ERR_EXISTS, "grid");
    CHECK_THROWS(a.read<float>({0, 0}, {1, 1}), ZARR_ERR_DTYPE_MISMATCH, "");
    CHECK_THROWS(a.read<double>({3, 0}, {2, 1}), ZARR_ERR_OUT_OF_BOUNDS, "");
    CHECK_THROWS(a.read<double>({0}, {1}), ZARR_ERR_RANK_MISMATCH, "");
    // start and count of different lengths are refused before the C call.
    CHECK_THROWS(a.read<double>({0, 0}, {1}), ZARR_ERR_RANK_MISMATCH, "count has 1 entries");
    double small[2];
    CHECK_THROWS(a.read({0, 0}, {2, 2}, small, 2), ZARR_ERR_BUFFER_SIZE, "");
    CHECK_THROWS(a.attribute("nope"), ZARR_ERR_NOT_FOUND, "nope");
    CHECK_THROWS(zarr::ArrayBuilder::of<double>({4}).set_compressor_json("{bad"),
                 ZARR_ERR_INVALID_ARG, "not valid JSON");
    CHECK_THROWS(zarr::Group::open(store, "grid", ZARR_MODE_R), ZARR_ERR_NODE_TYPE, "");
    CHECK_THROWS(zarr::dtype_from_name("float128"), ZARR_ERR_INVALID_ARG, "float128");
    CHECK_THROWS(store.get("nothing/here"), ZARR_ERR_NOT_FOUND, "nothing/here");

    // The message is the one zarr_last_error gives right after the failing call.
    try {
        zarr::Array::open(store, "missing/deeper", ZARR_MODE_R);
        CHECK(false);
    } catch (const zarr::Error &e) {
        CHECK_EQ(e.status(), ZARR_ERR_NOT_FOUND);
        CHECK_STR(e.status_name(), "ZARR_ERR_NOT_FOUND");
        const std::string message = zarr::last_error();
        CHECK_STR(e.what(), message.c_str());
        CHECK_CONTAINS(e.what(), "missing/deeper");
    }

    // A read-only handle refuses writes.
    char *path = check_join(dir, "ro.zarr");
    {
        zarr::Store fs = zarr::Store::open_fs(path, ZARR_MODE_W);
        zarr::ArrayBuilder::of<int16_t>({3}).create(fs, "v", ZARR_MODE_W);
        zarr::Array ro = zarr::Array::open(fs, "v", ZARR_MODE_R);
        CHECK_THROWS(ro.write({0}, {3}, std::vector<int16_t>{1, 2, 3}), ZARR_ERR_READ_ONLY, "");
    }
    // The same store by URL: file:// read-write, then read-only; bad URLs and options.
    {
        zarr::Store rw = zarr::Store::open_url(std::string("file://") + path, ZARR_MODE_A);
        zarr::Array v = zarr::Array::open(rw, "v", ZARR_MODE_R_PLUS);
        v.write({0}, {3}, std::vector<int16_t>{7, -8, 9});
        zarr::Store r = zarr::Store::open_url(path, ZARR_MODE_R, "");
        CHECK(zarr::Array::open(r, "v", ZARR_MODE_R).read<int16_t>({1}, {2}) ==
              (std::vector<int16_t>{-8, 9}));
        CHECK_THROWS(zarr::Store::open_url("ftp://host/x", ZARR_MODE_R), ZARR_ERR_INVALID_ARG,
                     "unknown URL scheme");
        if (zarr_features() & ZARR_HAS_S3)
            CHECK_THROWS(zarr::Store::open_url("s3://bucket/p", ZARR_MODE_R, "{\"regio\": 1}"),
                         ZARR_ERR_INVALID_ARG, "unknown option");
    }
    free(path);
}

// ---- regions ------------------------------------------------------------------------

// Every element type: a 2-D array of several chunks, written whole in C order and in
// parts in F order, read back whole, in parts, strided and into a new vector.
template <class T> static void roundtrip_type() {
    const size_t ny = 5, nx = 7;
    std::unique_ptr<T[]> data(new T[ny * nx]), back(new T[ny * nx]);
    for (size_t i = 0; i < ny * nx; i++)
        data[i] = pattern<T>(i);
    zarr::Store store = zarr::Store::memory();
    zarr::Array a = zarr::ArrayBuilder::of<T>({ny, nx}).set_chunk_shape({2, 3}).create(
        store, "t", ZARR_MODE_W);
    CHECK_EQ(a.dtype(), zarr::dtype_v<T>);
    CHECK_EQ(a.item_size(), sizeof(T));
    a.write({0, 0}, {ny, nx}, data.get(), ny * nx);
    a.read({0, 0}, {ny, nx}, back.get(), ny * nx);
    CHECK_MEM(back.get(), data.get(), sizeof(T) * ny * nx);

    // The block rows 1..3, columns 2..6, read in F order: element (y, x) at x*3 + y... i.e.
    // column-major over the block's (3, 4) extents.
    std::unique_ptr<T[]> block(new T[12]), want(new T[12]);
    for (size_t y = 0; y < 3; y++)
        for (size_t x = 0; x < 4; x++)
            want[x * 3 + y] = data[(1 + y) * nx + (2 + x)];
    a.read({1, 2}, {3, 4}, block.get(), 12, ZARR_ORDER_F);
    CHECK_MEM(block.get(), want.get(), sizeof(T) * 12);

    // Writing that F-order block back shifted by one row changes exactly those elements.
    a.write({2, 2}, {3, 4}, want.get(), 12, ZARR_ORDER_F);
    for (size_t y = 0; y < 3; y++)
        for (size_t x = 0; x < 4; x++)
            data[(2 + y) * nx + (2 + x)] = want[x * 3 + y];
    a.read({0, 0}, {ny, nx}, back.get(), ny * nx);
    CHECK_MEM(back.get(), data.get(), sizeof(T) * ny * nx);

    // Strided: the 2x2 block at (1, 1) lands inside a 4x4 buffer with a one-element halo.
    std::unique_ptr<T[]> halo(new T[16]());
    a.read_strided({1, 1}, {2, 2}, {4, 1}, halo.get() + 5, 11);
    CHECK_MEM(&halo[5], &data[1 * nx + 1], sizeof(T) * 2);
    CHECK_MEM(&halo[9], &data[2 * nx + 1], sizeof(T) * 2);
    // ... and written back from column-major strides into the last two columns, transposed.
    a.write_strided({3, 5}, {2, 2}, {1, 4}, halo.get() + 5, 11);
    data[3 * nx + 5] = halo[5];
    data[4 * nx + 5] = halo[6];
    data[3 * nx + 6] = halo[9];
    data[4 * nx + 6] = halo[10];
    a.read({0, 0}, {ny, nx}, back.get(), ny * nx);
    CHECK_MEM(back.get(), data.get(), sizeof(T) * ny * nx);

    if constexpr (!std::is_same_v<T, bool>) {
        std::vector<T> row = a.read<T>({4, 0}, {1, nx});
        CHECK_MEM(row.data(), &data[4 * nx], sizeof(T) * nx);
        std::vector<T> col(ny);
        a.read({0, 6}, {ny, 1}, col);
        for (size_t y = 0; y < ny; y++)
            CHECK_MEM(&col[y], &data[y * nx + 6], sizeof(T));
    }
}

static void test_regions() {
    roundtrip_type<bool>();
    roundtrip_type<int8_t>();
    roundtrip_type<int16_t>();
    roundtrip_type<int32_t>();
    roundtrip_type<int64_t>();
    roundtrip_type<uint8_t>();
    roundtrip_type<uint16_t>();
    roundtrip_type<uint32_t>();
    roundtrip_type<uint64_t>();
    roundtrip_type<float>();
    roundtrip_type<double>();
    roundtrip_type<std::complex<float>>();
    roundtrip_type<std::complex<double>>();

    zarr::Store store = zarr::Store::memory();

    // Rank 0: empty start and count.
    zarr::Array s = zarr::ArrayBuilder::of<double>({}).create(store, "scalar", ZARR_MODE_W);
    CHECK_EQ(s.rank(), 0);
    s.write({}, {}, std::vector<double>{2.75});
    CHECK(same(s.read<double>({}, {}), std::vector<double>{2.75}));

    // A rectilinear chunk grid: edges, the chunk of an element, and an append adding an edge.
    zarr::Array r = zarr::ArrayBuilder::of<int32_t>({5, 2})
                        .set_zarr_format(3)
                        .set_chunk_shape({5, 2})
                        .set_chunk_edges(0, {2, 3})
                        .create(store, "rect", ZARR_MODE_W);
    CHECK_EQ(r.chunk_grid_kind(), ZARR_CHUNK_GRID_RECTILINEAR);
    CHECK((r.chunk_grid_shape() == std::vector<uint64_t>{2, 1}));
    CHECK((r.chunk_of({3, 1}) == std::vector<uint64_t>{1, 0}));
    r.write({0, 0}, {5, 2}, std::vector<int32_t>{0, 1, 2, 3, 4, 5, 6, 7, 8, 9});
    r.append(0, {1, 2}, std::vector<int32_t>{10, 11});
    CHECK((r.chunk_edges(0) == std::vector<uint64_t>{2, 3, 1}));
    CHECK(same(r.read<int32_t>({1, 0}, {5, 2}),
               std::vector<int32_t>{2, 3, 4, 5, 6, 7, 8, 9, 10, 11}));

    // Append along both axes, resize, and the shapes after each.
    zarr::Array a = zarr::ArrayBuilder::of<int32_t>({2, 2}).set_chunk_shape({2, 2}).set_zarr_format(2).create(
        store, "grow", ZARR_MODE_W);
    a.write({0, 0}, {2, 2}, std::vector<int32_t>{1, 2, 3, 4});
    a.append(0, {1, 2}, std::vector<int32_t>{5, 6});
    CHECK((a.shape() == std::vector<uint64_t>{3, 2}));
    a.append(1, {3, 1}, std::vector<int32_t>{7, 8, 9}, ZARR_ORDER_F);
    CHECK((a.shape() == std::vector<uint64_t>{3, 3}));
    CHECK(same(a.read<int32_t>({0, 0}, {3, 3}), std::vector<int32_t>{1, 2, 7, 3, 4, 8, 5, 6, 9}));
    int32_t column[3] = {10, 11, 12};
    a.append(1, {3, 1}, column, 3);
    CHECK(same(a.read<int32_t>({0, 3}, {3, 1}), std::vector<int32_t>{10, 11, 12}));
    a.resize({2, 2});
    CHECK((a.shape() == std::vector<uint64_t>{2, 2}));
    a.resize({3, 3});
    CHECK(same(a.read<int32_t>({0, 0}, {3, 3}), std::vector<int32_t>{1, 2, 0, 3, 4, 0, 0, 0, 0}));
    CHECK((a.chunk_shape() == std::vector<uint64_t>{2, 2}));
    CHECK_EQ(a.nbytes(), 36);
    CHECK_EQ(a.nchunks(), 4);
    CHECK_EQ(a.nchunks_initialized(), 1);
    CHECK_EQ(a.order(), ZARR_ORDER_C);
    CHECK_EQ(a.zarr_format(), 2);
    CHECK(a.dtype_name() == "<i4");

    // Chunks encoded through one handle, stored whole through another; the fill value's
    // chunk is not stored.
    zarr::Array e = zarr::ArrayBuilder::of<int32_t>({4, 2}).set_chunk_shape({2, 2}).create(
        store, "encoded", ZARR_MODE_W);
    std::vector<int32_t> first{1, 2, 3, 4}, zeros(4, 0);
    auto unit = e.encode_chunk({0, 0}, first.data(), sizeof(int32_t) * first.size());
    CHECK(unit.has_value());
    CHECK(!e.encode_chunk({1, 0}, zeros.data(), sizeof(int32_t) * zeros.size()).has_value());
    CHECK_EQ(e.encoded_units({0, 0}), 1);
    e.write_encoded({0, 0}, {unit});
    e.write_encoded({1, 0}, {std::nullopt});
    CHECK(same(e.read<int32_t>({0, 0}, {4, 2}), std::vector<int32_t>{1, 2, 3, 4, 0, 0, 0, 0}));
    CHECK_EQ(e.nchunks_initialized(), 1);
    CHECK_THROWS(e.encode_chunk({0, 0}, first.data(), 8), ZARR_ERR_BUFFER_SIZE, "holds 16 bytes");

    // Synchronizers.
    a.set_synchronizer(ZARR_SYNC_THREAD);
    a.set_synchronizer(ZARR_SYNC_NONE);
    CHECK_THROWS(a.set_synchronizer(ZARR_SYNC_PROCESS), ZARR_ERR_NULL_ARG, "lock_dir");
}

// ---- groups, stores, attributes -----------------------------------------------------

static void test_hierarchy(const char *dir) {
    zarr::Store store = zarr::Store::memory();
    zarr::Group root = zarr::Group::create(store, "", ZARR_MODE_W, 2);
    CHECK(root.path() == "");
    zarr::Group sub = root.open_group("sub/inner", ZARR_MODE_A);
    CHECK(sub.path() == "sub/inner");
    zarr::ArrayBuilder b = zarr::ArrayBuilder::of<uint8_t>({3});
    b.set_fill_value<uint8_t>(9).set_compressor_json("null");
    zarr::Array x = root.create_array(b, "x", ZARR_MODE_W);
    CHECK(same(x.read<uint8_t>({0}, {3}), std::vector<uint8_t>{9, 9, 9}));
    bool is_null = true;
    CHECK_EQ(x.fill_value<uint8_t>(&is_null), 9);
    CHECK(!is_null);
    CHECK(x.fill_value_json() == "9");
    // v2 keeps the CF missing value in fill_value itself.
    CHECK(x.missing_value() == std::optional<double>(9.0));
    x.set_missing_value(255);
    CHECK(x.missing_value() == std::optional<double>(255.0));
    CHECK(x.fill_value_json() == "255");
    CHECK_THROWS(x.set_missing_value(256), ZARR_ERR_INVALID_ARG, "\"x\"");
    x.set_missing_value(9);
    zarr::ArrayBuilder m = zarr::ArrayBuilder::of<int16_t>({2});
    m.set_missing_value(-9);
    zarr::Group other = zarr::Group::create(zarr::Store::memory(), "", ZARR_MODE_W, 3);
    CHECK(other.create_array(m, "m", ZARR_MODE_W).missing_value() == std::optional<double>(-9.0));
    sub.create_array(b, "y", ZARR_MODE_W);

    CHECK((root.members() == std::vector<std::string>{"sub", "x"}));
    CHECK((root.members(ZARR_NODE_ARRAY) == std::vector<std::string>{"x"}));
    CHECK((root.members(ZARR_NODE_GROUP) == std::vector<std::string>{"sub"}));
    CHECK_EQ(root.contains("sub/inner/y"), ZARR_NODE_ARRAY);
    CHECK_EQ(root.contains("sub"), ZARR_NODE_GROUP);
    CHECK_EQ(root.contains("nothing"), ZARR_NODE_NONE);
    CHECK_EQ(store.node_kind("x"), ZARR_NODE_ARRAY);

    root.move("x", "moved/x");
    CHECK_EQ(root.contains("moved/x"), ZARR_NODE_ARRAY);
    CHECK(same(root.open_array("moved/x", ZARR_MODE_R).read<uint8_t>({2}, {1}),
               std::vector<uint8_t>{9}));
    root.erase("moved");
    CHECK_EQ(root.contains("moved"), ZARR_NODE_NONE);

    // Group attributes as JSON text.
    CHECK(sub.attributes() == "{}");
    sub.set_attributes("{\"a\": 1, \"b\": \"x\"}");
    CHECK(sub.attributes() == "{\"a\":1,\"b\":\"x\"}");
    sub.set_attribute("c", "[1, 2.5, null]");
    CHECK(sub.attribute("c") == "[1,2.5,null]");
    sub.delete_attribute("a");
    CHECK(sub.attributes() == "{\"b\":\"x\",\"c\":[1,2.5,null]}");
    CHECK_THROWS(sub.delete_attribute("a"), ZARR_ERR_NOT_FOUND, "a");

    // Array attributes and dimension names.
    zarr::Array y = sub.open_array("y", ZARR_MODE_R_PLUS);
    y.set_attributes("{\"units\": \"m\"}");
    y.set_attribute("scale", "0.5");
    CHECK(y.attributes() == "{\"units\":\"m\",\"scale\":0.5}");
    CHECK(y.attribute("units") == "\"m\"");
    y.delete_attribute("units");
    CHECK(y.attributes() == "{\"scale\":0.5}");
    CHECK_THROWS(y.dimension_names(), ZARR_ERR_NOT_FOUND, "");
    y.set_dimension_names({"time"});
    CHECK((y.dimension_names() == std::vector<std::optional<std::string>>{"time"}));
    CHECK(y.attribute("_ARRAY_DIMENSIONS") == "[\"time\"]");
    const std::string meta_y = y.metadata_json();
    CHECK_CONTAINS(meta_y.c_str(), "\"dtype\": \"|u1\"");

    // Consolidated metadata, then opening through it.
    zarr::consolidate_metadata(store, "");
    CHECK(store.contains(".zmetadata"));
    zarr::Group cons = zarr::Group::open_consolidated(store, "", ZARR_MODE_R);
    CHECK((cons.members() == std::vector<std::string>{"sub"}));

    // Raw store access.
    store.set("raw/k1", std::vector<uint8_t>{1, 2, 3});
    const char text[] = "hello";
    store.set("raw/sub/k2", text, 5);
    CHECK(same(store.get("raw/k1"), std::vector<uint8_t>{1, 2, 3}));
    CHECK(same(store.get("raw/sub/k2"), std::vector<uint8_t>{'h', 'e', 'l', 'l', 'o'}));
    store.set("raw/empty", nullptr, 0);
    CHECK(store.get("raw/empty").empty());
    CHECK((store.list("raw/") == std::vector<std::string>{"raw/empty", "raw/k1", "raw/sub/k2"}));
    zarr::ListDir listing = store.list_dir("raw/");
    CHECK((listing.keys == std::vector<std::string>{"empty", "k1"}));
    CHECK((listing.prefixes == std::vector<std::string>{"sub"}));
    store.erase("raw/k1");
    CHECK(!store.contains("raw/k1"));
    store.erase_prefix("raw/");
    CHECK(store.list("raw/").empty());

    // Copy to another store, re-encoded, then to a zip file and back.
    zarr::Store copy = zarr::Store::memory();
    zarr::copy(store, "sub", copy, "c", std::string("null"), ZARR_MODE_W);
    zarr::copy(store, "sub", copy, "d", std::nullopt, ZARR_MODE_W);
    CHECK(same(zarr::Array::open(copy, "c/inner/y", ZARR_MODE_R).read<uint8_t>({0}, {3}),
               std::vector<uint8_t>{9, 9, 9}));
    CHECK(zarr::Group::open(copy, "d/inner", ZARR_MODE_R).attribute("b") == "\"x\"");

    char *zip = check_join(dir, "h.zip");
    {
        zarr::Store z = zarr::Store::open_zip(zip, ZARR_MODE_W, true);
        zarr::ArrayBuilder::of<int64_t>({4}).create(z, "v", ZARR_MODE_W).write(
            {0}, {4}, std::vector<int64_t>{-1, 0, 1, 1LL << 40});
        z.close();
    }
    {
        zarr::Store z = zarr::Store::open_zip(zip, ZARR_MODE_R, false);
        CHECK(same(zarr::Array::open(z, "v", ZARR_MODE_R).read<int64_t>({0}, {4}),
                   std::vector<int64_t>{-1, 0, 1, 1LL << 40}));
    }
    free(zip);

    // A v1 array migrated in place.
    zarr::Store v1 = zarr::Store::memory();
    const char meta[] = "{\"zarr_format\": 1, \"shape\": [2], \"chunks\": [2], \"dtype\": \"<i2\", "
                        "\"compression\": \"none\", \"compression_opts\": null, \"fill_value\": 0, "
                        "\"order\": \"C\"}";
    v1.set("old/meta", meta, sizeof meta - 1);
    v1.set("old/attrs", "{}", 2);
    zarr::migrate_1to2(v1, "old");
    CHECK_EQ(zarr::Array::open(v1, "old", ZARR_MODE_R).dtype(), ZARR_DTYPE_INT16);

    // An array from a complete .zarray document.
    zarr::Array j = zarr::Array::create_json(
        store, "json",
        "{\"zarr_format\": 2, \"shape\": [2], \"chunks\": [2], \"dtype\": \"<f4\", "
        "\"compressor\": null, \"fill_value\": 1.5, \"order\": \"C\", \"filters\": null}",
        ZARR_MODE_W);
    CHECK(same(j.read<float>({0}, {2}), std::vector<float>{1.5f, 1.5f}));
}

// ---- Zarr v3 ------------------------------------------------------------------------

static void test_v3() {
    zarr::Store store = zarr::Store::memory();
    zarr::Group g = zarr::Group::create(store, "v3group", ZARR_MODE_W, 3);
    CHECK(store.contains("v3group/zarr.json"));
    g.set_attribute("title", "\"v3\"");

    zarr::ArrayBuilder b = zarr::ArrayBuilder::of<float>({4, 6});
    b.set_zarr_format(3).set_chunk_shape({2, 3}).set_dimension_names({std::string("y"), std::nullopt});
    zarr::Array a = g.create_array(b, "a", ZARR_MODE_W);
    CHECK_EQ(a.zarr_format(), 3);
    CHECK(store.contains("v3group/a/zarr.json"));
    CHECK((a.dimension_names() == std::vector<std::optional<std::string>>{"y", std::nullopt}));
    a.set_dimension_names({std::string(""), std::nullopt});
    CHECK((a.dimension_names() == std::vector<std::optional<std::string>>{"", std::nullopt}));
    a.set_dimension_names({"y", "x"});
    CHECK((a.dimension_names() == std::vector<std::optional<std::string>>{"y", "x"}));
    a.set_dimension_names({std::string("y"), std::nullopt});
    zarr::Group with_attrs = zarr::Group::create(store, "attrs", ZARR_MODE_W_MINUS, 3, "{\"a\": 1}");
    CHECK(with_attrs.attributes() == "{\"a\":1}");
    std::vector<float> data(24);
    for (size_t i = 0; i < data.size(); i++)
        data[i] = pattern<float>(i);
    a.write({0, 0}, {4, 6}, data);
    CHECK(same(a.read<float>({0, 0}, {4, 6}), data));
    CHECK(store.contains("v3group/a/c/1/1"));
    std::vector<uint8_t> doc = store.get("v3group/a/zarr.json");
    const std::string meta(doc.begin(), doc.end());
    CHECK_CONTAINS(meta.c_str(), "\"zarr_format\": 3");
    CHECK_CONTAINS(meta.c_str(), "\"data_type\": \"float32\"");
    CHECK_CONTAINS(meta.c_str(), "\"dimension_names\": [\n        \"y\",\n        null\n    ]");

    // Sharded: 2x3 chunks inside 4x6 shards.
    zarr::Array s = zarr::ArrayBuilder::of<uint16_t>({8, 6})
                        .set_zarr_format(3)
                        .set_chunk_shape({2, 3})
                        .set_shard_shape({4, 6})
                        .set_shard_index(true, false)
                        .set_chunk_key_encoding("default", ".")
                        .create(store, "sharded", ZARR_MODE_W);
    const std::string meta_s = s.metadata_json();
    CHECK_CONTAINS(meta_s.c_str(), "\"index_location\": \"start\"");
    CHECK((s.shard_shape() == std::vector<uint64_t>{4, 6}));
    CHECK((s.chunk_shape() == std::vector<uint64_t>{2, 3}));
    std::vector<uint16_t> sd(48);
    for (size_t i = 0; i < sd.size(); i++)
        sd[i] = pattern<uint16_t>(i);
    s.write({0, 0}, {8, 6}, sd);
    CHECK(same(zarr::Array::open(store, "sharded", ZARR_MODE_R).read<uint16_t>({0, 0}, {8, 6}), sd));
    CHECK(store.contains("sharded/c.1.0"));
    CHECK_THROWS(a.shard_shape(), ZARR_ERR_NOT_FOUND, "");
    CHECK_THROWS(zarr::ArrayBuilder::of<uint16_t>({8}).set_zarr_format(2).set_shard_shape({4}).create(
                     store, "v2s", ZARR_MODE_W),
                 ZARR_ERR_INVALID_ARG, "");
}

// ---- library ------------------------------------------------------------------------

static void test_types() {
    zarr::Store store = zarr::Store::memory();
    zarr::Array words = zarr::ArrayBuilder(ZARR_DTYPE_STRING, {4})
                            .set_chunk_shape({3})
                            .create(store, "words", ZARR_MODE_W);
    std::vector<std::string> items = {"", "alpha", std::string("nul\0in", 6), "\xf0\x9f\x98\x80"};
    words.write_vlen({0}, {4}, items);
    CHECK(words.read_vlen({0}, {4}) == items);
    CHECK(words.vlen_item_dtype() == ZARR_DTYPE_STRING);
    zarr::VlenList list = words.read_vlen_list({1}, {2});
    CHECK_EQ(list.size(), size_t{2});
    CHECK(list.at(0) == "alpha" && list.at(1) == items[2]);
    CHECK(list.data(2) == nullptr);
    CHECK_THROWS(words.write_vlen({0}, {1}, {std::string("\xff")}), ZARR_ERR_INVALID_ARG, "UTF-8");
    CHECK_THROWS(words.write_vlen({0}, {2}, {std::string("a")}), ZARR_ERR_BUFFER_SIZE, "1 items");
    words.append_vlen(0, {2}, {"five", "six"});
    CHECK(words.shape() == std::vector<uint64_t>{6});
    CHECK((words.read_vlen({4}, {2}) == std::vector<std::string>{"five", "six"}));
    CHECK_THROWS(words.append_vlen(0, {1}, {std::string("\xff")}), ZARR_ERR_INVALID_ARG, "UTF-8");
    CHECK(words.shape() == std::vector<uint64_t>{6});
    zarr::Array records = zarr::ArrayBuilder(ZARR_DTYPE_RAW, {2})
                              .set_zarr_format(2)
                              .set_dtype_name("[[\"a\", \"<i2\"], [\"b\", \"|S3\", [2]]]")
                              .create(store, "records", ZARR_MODE_W);
    std::vector<zarr::Field> fields = records.fields();
    CHECK_EQ(fields.size(), size_t{2});
    CHECK(fields[1].name == "b" && fields[1].dtype == "|S3" && fields[1].offset == 2 &&
          fields[1].size == 6 && fields[1].shape == std::vector<uint64_t>{2});
    unsigned char raw[16], back[16];
    for (int i = 0; i < 16; i++) raw[i] = static_cast<unsigned char>(i + 1);
    records.write_raw({0}, {2}, raw, sizeof raw);
    records.read_raw({0}, {2}, back, sizeof back);
    CHECK(std::memcmp(raw, back, sizeof raw) == 0);
}

static void test_library() {
    CHECK_EQ(zarr::version_number(), ZARR_VERSION_NUMBER);
    std::string v = std::to_string(ZARR_VERSION_MAJOR) + "." + std::to_string(ZARR_VERSION_MINOR) +
                    "." + std::to_string(ZARR_VERSION_PATCH);
    CHECK_STR(zarr::version_string(), v.c_str());
    CHECK(zarr::threadsafe());
    CHECK(zarr::codec_supported("zstd"));
    CHECK(!zarr::codec_supported("no-such-codec"));
    CHECK_EQ(zarr::dtype_from_name("<f8"), ZARR_DTYPE_FLOAT64);
    CHECK_STR(zarr::dtype_name(ZARR_DTYPE_COMPLEX64), "complex64");
    CHECK(zarr::dtype_name(99) == nullptr);
    CHECK_EQ(zarr::dtype_size(ZARR_DTYPE_COMPLEX128), 16);
    CHECK_STR(zarr::status_str(ZARR_ERR_EXISTS), "ZARR_ERR_EXISTS");
    zarr::set_num_threads(3);
    CHECK_EQ(zarr::num_threads(), 3);
    zarr::set_num_threads(0);
}

static void test_typed() {
    zarr::Store store = zarr::Store::memory();
    zarr::Array a = zarr::ArrayBuilder::of<float>({4}).set_zarr_format(2).create(store, "t", ZARR_MODE_W);
    a.write({0}, {4}, std::vector<float>{1.5f, -2.5f, 40000.0f, 0.25f});
    CHECK(same(a.read_converted<double>({0}, {4}), std::vector<double>{1.5, -2.5, 40000.0, 0.25}));
    CHECK_THROWS(a.read_converted<int16_t>({0}, {4}), ZARR_ERR_RANGE, "do not fit in int16");
    a.write_converted({0}, {2}, std::vector<int32_t>{3, -4});
    CHECK(same(a.read<float>({0}, {2}), std::vector<float>{3.0f, -4.0f}));

    a.set_attr("units", "K");
    a.set_attr("history", std::string("said \"hi\""));
    a.set_attr("scale_factor", 0.1f);
    a.set_attr("add_offset", 273.15);
    a.set_attr("count", int64_t{-5});
    a.set_attr("valid_range", std::vector<float>{-1.5f, 0.3f});
    a.set_attr("flags", std::vector<std::string>{"a", "b"});
    CHECK(a.attr<std::string>("history") == "said \"hi\"");
    CHECK(a.attr<float>("scale_factor") == 0.1f);
    CHECK(a.attr<double>("scale_factor") == 0.1);
    CHECK(a.attribute("scale_factor") == "0.1");
    CHECK(a.attr<int64_t>("count") == -5);
    CHECK(a.attr<int32_t>("count") == -5);
    CHECK(same(a.attr<std::vector<float>>("valid_range"), std::vector<float>{-1.5f, 0.3f}));
    CHECK(a.attr<std::vector<std::string>>("flags") == (std::vector<std::string>{"a", "b"}));
    size_t n = 0;
    CHECK_EQ(a.attr_kind("valid_range", &n), ZARR_ATTR_FLOATS);
    CHECK_EQ(n, 2);
    CHECK_THROWS(a.attr<double>("units"), ZARR_ERR_DTYPE_MISMATCH, "\"units\" is a string");
    zarr::Group g = zarr::Group::create(store, "g", ZARR_MODE_W, 3);
    g.set_attr("title", "T");
    g.set_attr("years", std::vector<int32_t>{2001, 2002});
    CHECK(g.attr<std::string>("title") == "T");
    CHECK(same(g.attr<std::vector<int64_t>>("years"), std::vector<int64_t>{2001, 2002}));
    CHECK_EQ(g.attr_kind("title"), ZARR_ATTR_STRING);
}

// ---- non-blocking requests ------------------------------------------------------------

static void test_async() {
    static_assert(!std::is_copy_constructible_v<zarr::Request> &&
                      std::is_nothrow_move_constructible_v<zarr::Request>,
                  "requests are move-only");
    zarr::Store store = zarr::Store::memory();
    zarr::Array a = zarr::ArrayBuilder::of<int32_t>({8, 4})
                        .set_zarr_format(3)
                        .set_chunk_shape({2, 4})
                        .create(store, "w", ZARR_MODE_W);
    std::vector<int32_t> lent(32);
    for (size_t i = 0; i < lent.size(); i++) lent[i] = static_cast<int32_t>(i);
    std::vector<zarr::Request> requests;
    requests.push_back(a.write_async<int32_t>({0, 0}, {8, 4}, lent.data(), lent.size()));
    // Copied: the temporary vector goes at once; applied after the first (submission order).
    requests.push_back(
        a.write_async<int32_t>({2, 0}, {1, 4}, std::vector<int32_t>{-1, -2, -3, -4}));
    zarr::wait_all(requests);
    CHECK(requests[0].ready() && requests[1].ready());
    std::vector<int32_t> expected = lent;
    for (int c = 0; c < 4; c++) expected[8 + c] = -1 - c;
    CHECK(same(a.read<int32_t>({0, 0}, {8, 4}), expected));
    // The destructor waits; an error comes from wait().
    {
        zarr::Request r = a.write_async<int32_t>({7, 0}, {2, 4}, lent.data(), 8);
        CHECK_THROWS(r.wait(), ZARR_ERR_OUT_OF_BOUNDS, "");
    }
    // Converting: doubles truncated into the int32 array; one that does not fit throws.
    std::vector<double> doubles = {1.9, -2.9, 3.0, 4e4, 5.5, 3e9, 7.0, 8.0};
    zarr::Request fits = a.write_converted_async<double>({3, 0}, {1, 4}, doubles.data(), 4);
    zarr::Request too_big = a.write_converted_async<double>({4, 0}, {1, 4}, doubles.data() + 4, 4);
    fits.wait();
    CHECK_THROWS(too_big.wait(), ZARR_ERR_RANGE, "");
    CHECK(same(a.read<int32_t>({3, 0}, {2, 4}),
               std::vector<int32_t>{1, -2, 3, 40000, 16, 17, 18, 19}));
    // Appends in order; detached requests still run, and flush waits for them.
    zarr::Array g =
        zarr::ArrayBuilder::of<int32_t>({0, 2}).set_chunk_shape({3, 2}).create(store, "g", ZARR_MODE_W);
    for (int t = 0; t < 7; t++)
        g.append_async<int32_t>(0, {1, 2}, std::vector<int32_t>{t, -t}).detach();
    g.flush();
    std::vector<int32_t> steps;
    for (int t = 0; t < 7; t++) {
        steps.push_back(t);
        steps.push_back(-t);
    }
    CHECK(same(g.read<int32_t>({0, 0}, {7, 2}), steps));
    zarr::set_async_budget(64);
    zarr::async_in_flight(true);
    std::vector<int32_t> column(8, 5);
    zarr::Request s = a.write_strided_async<int32_t>({0, 1}, {8, 1}, {1, 1}, column.data(), 8);
    s.wait();
    CHECK(zarr::async_in_flight().peak <= 64);
    CHECK_THROWS(a.write_async<int32_t>({0, 0}, {8, 4}, lent.data(), lent.size()),
                 ZARR_ERR_INVALID_ARG, "budget");
    zarr::set_async_budget(0);
    CHECK_EQ(a.read<int32_t>({5, 1}, {1, 1})[0], 5);
}

// Icechunk: a second store's changes exported and merged into the first's commit (builds with
// Icechunk only).
static void test_merge(const char *dir) {
    if ((zarr::features() & ZARR_HAS_ICECHUNK) == 0) return;
    const std::string url = std::string("icechunk://") + dir + "/merge-repo";
    zarr::Store first = zarr::Store::open_url(url, ZARR_MODE_A);
    for (const char *name : {"a", "b"})
        zarr::ArrayBuilder::of<int32_t>({4}).set_zarr_format(3).create(first, name, ZARR_MODE_W_MINUS);
    first.commit("arrays");
    zarr::Store second = zarr::Store::open_url(url, ZARR_MODE_R_PLUS);
    zarr::Array::open(first, "a", ZARR_MODE_R_PLUS).write({0}, {4}, std::vector<int32_t>{1, 2, 3, 4});
    zarr::Array::open(second, "b", ZARR_MODE_R_PLUS).write({0}, {4}, std::vector<int32_t>{5, 6, 7, 8});
    std::vector<uint8_t> changes = second.export_changes();
    CHECK(!changes.empty());
    CHECK_THROWS(first.merge_changes(std::vector<uint8_t>{1, 2, 3}), ZARR_ERR_INVALID_ARG, "not the changes");
    first.merge_changes(changes);
    first.commit("both");
    zarr::Store head = zarr::Store::open_url(url, ZARR_MODE_R);
    CHECK(same(zarr::Array::open(head, "a", ZARR_MODE_R).read<int32_t>({0}, {4}), std::vector<int32_t>{1, 2, 3, 4}));
    CHECK(same(zarr::Array::open(head, "b", ZARR_MODE_R).read<int32_t>({0}, {4}), std::vector<int32_t>{5, 6, 7, 8}));
}

int main() {
    char *dir = check_mkdtemp();
    run("raii", test_raii);
    run("errors", [&] { test_errors(dir); });
    run("regions", test_regions);
    run("hierarchy", [&] { test_hierarchy(dir); });
    run("v3", test_v3);
    run("types", test_types);
    run("library", test_library);
    run("typed", test_typed);
    run("async", test_async);
    run("merge", [&] { test_merge(dir); });
    check_rmtree(dir);
    return CHECK_DONE();
}
