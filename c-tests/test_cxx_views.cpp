// zarr.hpp's spans and strided views, built as C++17 and as C++20: reads and writes through
// zarr::span (std::span in C++20) and zarr::View in C and F order, sub-views, steps, any
// strides, mdspan-like objects (std::mdspan where the library has it), appends from all of
// them, and the errors of wrong sizes, ranks and ranges. Every check compares exact values.
#include "check.h"

#include "check_cxx.h"
#include "zarr.hpp"

#include <array>
#include <cstring>
#include <string>
#include <type_traits>
#include <vector>

// The guards follow the standard library: std::span from C++20, std::mdspan where present.
#if defined(__cpp_lib_span) && __cpp_lib_span >= 202002L
static_assert(ZARR_HPP_HAS_STD_SPAN == 1 && std::is_same_v<zarr::span<int>, std::span<int>>,
              "zarr::span is std::span where the library has it");
#else
static_assert(ZARR_HPP_HAS_STD_SPAN == 0 && !std::is_same_v<zarr::span<int>, int>,
              "zarr::span is the binding's own class before C++20");
#endif
#if defined(__cpp_lib_mdspan) && __cpp_lib_mdspan >= 202207L
static_assert(ZARR_HPP_HAS_MDSPAN == 1, "std::mdspan is taken where the library has it");
#else
static_assert(ZARR_HPP_HAS_MDSPAN == 0, "no std::mdspan overloads without the library's");
#endif
// Spans of const elements come from spans and containers of non-const ones, not back.
static_assert(std::is_convertible_v<zarr::span<double>, zarr::span<const double>> &&
                  std::is_convertible_v<std::vector<double> &, zarr::span<const double>> &&
                  std::is_convertible_v<const std::vector<double> &, zarr::span<const double>> &&
                  !std::is_convertible_v<const std::vector<double> &, zarr::span<double>> &&
                  !std::is_convertible_v<std::vector<float> &, zarr::span<double>>,
              "span conversions");
static_assert(std::is_convertible_v<zarr::View<double>, zarr::View<const double>> &&
                  !std::is_convertible_v<zarr::View<const double>, zarr::View<double>>,
              "view conversions");

// A 4 x 5 float64 array (chunks 3 x 2) holding 10 * i + j at (i, j).
static zarr::Array grid(const zarr::Store &store) {
    zarr::Array a = zarr::ArrayBuilder::of<double>({4, 5}).set_chunk_shape({3, 2}).create(
        store, "grid", ZARR_MODE_W);
    std::vector<double> values;
    for (int i = 0; i < 4; i++)
        for (int j = 0; j < 5; j++)
            values.push_back(10.0 * i + j);
    a.write({0, 0}, {4, 5}, values);
    return a;
}

static void test_spans() {
    zarr::Store store = zarr::Store::memory();
    zarr::Array a = grid(store);

    // Into a std::array, a C array and a vector, in C and F order, without allocating.
    std::array<double, 6> box{};
    a.read({1, 2}, {2, 3}, zarr::span<double>(box));
    CHECK(box == (std::array<double, 6>{12, 13, 14, 22, 23, 24}));
    double box_f[6] = {};
    a.read({1, 2}, {2, 3}, zarr::span<double>(box_f), ZARR_ORDER_F);
    CHECK(box_f[0] == 12 && box_f[1] == 22 && box_f[2] == 13 && box_f[5] == 24);
    std::vector<double> part(10, -1.0);
    zarr::span<double> whole(part);
    a.read({3, 0}, {1, 5}, zarr::span<double>(whole.data() + 5, 5));
    CHECK(part[4] == -1 && part[5] == 30 && part[9] == 34);

    // From spans of const elements (and of non-const ones).
    const std::vector<double> row{-1, -2, -3};
    a.write({0, 1}, {1, 3}, zarr::span<const double>(row));
    a.write({2, 1}, {1, 3}, zarr::span<double>(box.data(), 3));  // 12 13 14
    CHECK(a.read<double>({0, 0}, {1, 5}) == (std::vector<double>{0, -1, -2, -3, 4}));
    CHECK(a.read<double>({2, 0}, {1, 5}) == (std::vector<double>{20, 12, 13, 14, 24}));

    // Sizes must match the region exactly; nothing is read or written otherwise.
    std::vector<double> five(5, 7.0);
    CHECK_THROWS(a.read({0, 0}, {2, 3}, zarr::span<double>(five)), ZARR_ERR_BUFFER_SIZE,
                 "the span has 5 elements where the region (2 x 3) has 6");
    CHECK(five == std::vector<double>(5, 7.0));
    CHECK_THROWS(a.write({0, 0}, {1, 4}, zarr::span<const double>(five)), ZARR_ERR_BUFFER_SIZE,
                 "the span has 5 elements where the region (1 x 4) has 4");
    CHECK(a.read<double>({0, 0}, {1, 5}) == (std::vector<double>{0, -1, -2, -3, 4}));
    CHECK_THROWS(a.read({0}, {1, 5}, zarr::span<double>(five)), ZARR_ERR_RANK_MISMATCH,
                 "count has 2 entries, start 1");
    // The element type is checked by the C call.
    std::vector<float> floats(5);
    CHECK_THROWS(a.read({0, 0}, {1, 5}, zarr::span<float>(floats)), ZARR_ERR_DTYPE_MISMATCH, "");
}

static void test_views() {
    zarr::Store store = zarr::Store::memory();
    zarr::Array a = grid(store);

    // C order: a 2 x 3 block into a view of a vector.
    std::vector<double> c(6);
    a.read({1, 1}, zarr::View<double>(c, {2, 3}));
    CHECK(c == (std::vector<double>{11, 12, 13, 21, 22, 23}));
    // F order: the same block with the first dimension fastest.
    std::vector<double> f(6);
    a.read({1, 1}, zarr::View<double>(f, {2, 3}, ZARR_ORDER_F));
    CHECK(f == (std::vector<double>{11, 21, 12, 22, 13, 23}));
    CHECK(f == a.read<double>({1, 1}, {2, 3}, ZARR_ORDER_F));

    // A sub-view: the interior of a 4 x 5 buffer with a one-cell halo (6 x 7 in all).
    std::vector<double> halo(6 * 7, -1.0);
    zarr::View<double> padded(halo, {6, 7});
    zarr::View<double> interior = padded.sub({{1, 4}, {1, 5}});
    CHECK(interior.shape() == (std::vector<uint64_t>{4, 5}));
    CHECK(interior.strides() == (std::vector<uint64_t>{7, 1}));
    CHECK(interior.footprint() == 3 * 7 + 5);
    a.read({0, 0}, interior);
    bool exact = true;
    for (uint64_t i = 0; i < 6; i++)
        for (uint64_t j = 0; j < 7; j++) {
            bool inside = i >= 1 && i <= 4 && j >= 1 && j <= 5;
            double want = inside ? 10.0 * double(i - 1) + double(j - 1) : -1.0;
            exact = exact && padded.at({i, j}) == want;
        }
    CHECK(exact);

    // Steps: every other row and column of the interior is (0, 0), (0, 2), (2, 0), (2, 2)...
    zarr::View<double> every_other = interior.sub({{0, 2, 2}, {0, 3, 2}});
    CHECK(every_other.strides() == (std::vector<uint64_t>{14, 2}));
    CHECK(every_other.at({1, 2}) == 24 && every_other.at({0, 1}) == 2);
    // ... written back as a 2 x 3 block elsewhere (a sub-view of a sub-view, as const).
    a.write({2, 2}, zarr::View<const double>(every_other));
    CHECK(a.read<double>({2, 2}, {2, 3}) == (std::vector<double>{0, 2, 4, 20, 22, 24}));

    // Any strides: a column-major buffer described by hand is the F order view.
    std::vector<double> by_hand(6);
    a.read({0, 0}, zarr::View<double>(by_hand.data(), {2, 3}, {1, 2}));
    CHECK(by_hand == a.read<double>({0, 0}, {2, 3}, ZARR_ORDER_F));
    // A stride of 0 is fine where the count is 1 (the C rule for overlap).
    double one = 0;
    a.read({3, 4}, zarr::View<double>(&one, {1, 1}, {0, 0}));
    CHECK(one == 24);  // written just above

    // Writes from a C order view of a 3-d buffer's middle plane.
    std::vector<double> cube(2 * 2 * 5);
    for (size_t k = 0; k < cube.size(); k++)
        cube[k] = 100.0 + double(k);
    zarr::View<double> plane = zarr::View<double>(cube, {2, 2, 5}).sub({{1, 1}, {0, 2}, {0, 5}});
    CHECK(plane.size() == 10);
    zarr::View<double> flat(plane.data(), {2, 5}, {5, 1});
    a.write({0, 0}, flat);
    CHECK(a.read<double>({0, 0}, {1, 5}) == (std::vector<double>{110, 111, 112, 113, 114}));
    CHECK(a.read<double>({1, 3}, {1, 2}) == (std::vector<double>{118, 119}));

    // An empty view reads and writes nothing.
    zarr::View<double> none = padded.sub({{6, 0}, {0, 7}});
    CHECK(none.size() == 0 && none.footprint() == 0);
    a.read({4, 0}, zarr::View<double>(nullptr, {0, 5}, {5, 1}));
}

static void test_view_errors() {
    zarr::Store store = zarr::Store::memory();
    zarr::Array a = grid(store);
    std::vector<double> buf(6, 9.0);

    CHECK_THROWS(zarr::View<double>(buf, {2, 2}), ZARR_ERR_BUFFER_SIZE,
                 "the span has 6 elements where the region (2 x 2) has 4");
    CHECK_THROWS(zarr::View<double>(buf.data(), {2, 3}, {3}), ZARR_ERR_RANK_MISMATCH,
                 "the view has 1 strides for 2 dimensions");
    CHECK_THROWS(zarr::View<double>(nullptr, {2, 3}, {3, 1}), ZARR_ERR_NULL_ARG, "null");
    CHECK_THROWS(zarr::View<double>(buf, {2, 3}, static_cast<zarr_order_t>(7)),
                 ZARR_ERR_INVALID_ARG, "ZARR_ORDER_C");
    CHECK_THROWS(zarr::View<double>(buf.data(), {3, 2}, {UINT64_MAX / 2, 1}), ZARR_ERR_OVERFLOW,
                 "overflows");

    zarr::View<double> v(buf, {2, 3});
    CHECK_THROWS(v.sub({{0, 2}}), ZARR_ERR_RANK_MISMATCH, "1 ranges for a view of 2 dimensions");
    CHECK_THROWS(v.sub({{1, 2}, {0, 3}}), ZARR_ERR_OUT_OF_BOUNDS,
                 "range 0 (start 1, count 2, step 1) leaves the extent 2");
    CHECK_THROWS(v.sub({{0, 2}, {0, 2, 3}}), ZARR_ERR_OUT_OF_BOUNDS,
                 "range 1 (start 0, count 2, step 3) leaves the extent 3");
    CHECK_THROWS(v.sub({{0, 2}, {4, 0}}), ZARR_ERR_OUT_OF_BOUNDS, "start 4, count 0");
    CHECK_THROWS(v.sub({{0, 2}, {0, 1, 0}}), ZARR_ERR_INVALID_ARG, "range 1 has step 0");
    CHECK(v.sub({{0, 2}, {2, 1, 5}}).at({1, 0}) == 9.0);  // a large step with one element
    CHECK_THROWS(v.at({2, 0}), ZARR_ERR_OUT_OF_BOUNDS, "index 2 of dimension 0");
    CHECK_THROWS(v.at({0}), ZARR_ERR_RANK_MISMATCH, "the index has 1 entries");

    // Array calls: ranks, bounds, types and overlapping strides, with nothing read.
    CHECK_THROWS(a.read({0}, v), ZARR_ERR_RANK_MISMATCH, "the view has 2 dimensions, start 1");
    CHECK_THROWS(a.write({3, 0}, v), ZARR_ERR_OUT_OF_BOUNDS, "");
    std::vector<float> floats(6);
    CHECK_THROWS(a.read({0, 0}, zarr::View<float>(floats, {2, 3})), ZARR_ERR_DTYPE_MISMATCH, "");
    CHECK_THROWS(a.read({0, 0}, zarr::View<double>(buf.data(), {2, 3}, {1, 1})),
                 ZARR_ERR_INVALID_ARG, "");
    CHECK(buf == std::vector<double>(6, 9.0));
}

// An mdspan-like object as the reference implementation (C++17) and std::mdspan have:
// rank(), extent(r), stride(r), is_strided() and data_handle(), with a signed index type.
template <class T, size_t R> struct StridedMdspan {
    using data_handle_type = T *;
    T *p;
    std::array<long, R> extents, strides;
    bool strided = true;
    static constexpr size_t rank() { return R; }
    long extent(size_t r) const { return extents[r]; }
    long stride(size_t r) const { return strides[r]; }
    bool is_strided() const { return strided; }
    T *data_handle() const { return p; }
};

static void test_mdspan() {
    zarr::Store store = zarr::Store::memory();
    zarr::Array a = grid(store);

    // layout_left (F order) of 2 x 3, and layout_stride with a padded row.
    std::vector<double> left(6), pad(2 * 4, -1.0);
    a.read({2, 2},
           zarr::View<double>::from_mdspan(StridedMdspan<double, 2>{left.data(), {2, 3}, {1, 2}}));
    CHECK(left == (std::vector<double>{22, 32, 23, 33, 24, 34}));
    a.read({0, 1},
           zarr::View<double>::from_mdspan(StridedMdspan<double, 2>{pad.data(), {2, 3}, {4, 1}}));
    CHECK(pad == (std::vector<double>{1, 2, 3, -1, 11, 12, 13, -1}));
    CHECK_THROWS(
        zarr::View<double>::from_mdspan(StridedMdspan<double, 2>{left.data(), {2, -3}, {1, 2}}),
        ZARR_ERR_INVALID_ARG, "an mdspan extent is negative");
    CHECK_THROWS(zarr::View<double>::from_mdspan(
                     StridedMdspan<double, 2>{left.data(), {2, 3}, {1, 2}, false}),
                 ZARR_ERR_INVALID_ARG, "not strided");

#if ZARR_HPP_HAS_MDSPAN
    // std::mdspan directly, in each strided layout.
    std::vector<double> right(6), column(6);
    a.read({1, 0}, std::mdspan<double, std::dextents<size_t, 2>>(right.data(), 2, 3));
    CHECK(right == (std::vector<double>{10, 11, 12, 20, 21, 22}));
    a.read({1, 0},
           std::mdspan<double, std::dextents<size_t, 2>, std::layout_left>(column.data(), 2, 3));
    CHECK(column == a.read<double>({1, 0}, {2, 3}, ZARR_ORDER_F));
    a.write({0, 0}, std::mdspan<double, std::dextents<size_t, 2>>(right.data(), 2, 3));
    CHECK(a.read<double>({0, 0}, {2, 3}) == right);
    using Strided = std::layout_stride::mapping<std::dextents<size_t, 2>>;
    std::vector<double> rows(2 * 4, -1.0);
    Strided padded_rows(std::dextents<size_t, 2>(2, 3), std::array<size_t, 2>{4, 1});
    a.read({2, 1}, std::mdspan(rows.data(), padded_rows));
    CHECK(rows == (std::vector<double>{21, 22, 23, -1, 31, 32, 33, -1}));
#endif
}

// Appends from spans, views and mdspans, blocking and not (append, append_async), and a
// converting append (append_converted): the series grows by each block, exactly.
static void test_appends() {
    zarr::Store store = zarr::Store::memory();
    zarr::Array a = zarr::ArrayBuilder::of<double>({0, 3}).set_chunk_shape({2, 3}).create(
        store, "series", ZARR_MODE_W);
    const std::vector<double> row{1, 2, 3};
    a.append(0, {1, 3}, zarr::span<const double>(row));
    std::array<double, 3> box{4, 5, 6};
    a.append_async(0, {1, 3}, zarr::span<double>(box)).wait();
    // The interior of a 4 x 5 buffer: rows 1-2, columns 1-3 (a view with strides 5, 1).
    std::vector<double> buf(4 * 5);
    for (size_t k = 0; k < buf.size(); k++)
        buf[k] = double(k);
    zarr::View<double> interior = zarr::View<double>(buf, {4, 5}).sub({{1, 2}, {1, 3}});
    a.append(0, interior);
    a.append_async(0, zarr::View<const double>(interior.sub({{1, 1}, {0, 3}}))).wait();
    // F order: a 1 x 3 block is the same either way; the 2 x 3 block is transposed.
    std::vector<double> f{21, 24, 22, 25, 23, 26};
    a.append(0, zarr::View<double>(f, {2, 3}, ZARR_ORDER_F));
    std::vector<float> floats{0.5f, 1.5f, 2.5f};
    a.append_converted(0, {1, 3}, floats);
    a.append_converted_async(0, {1, 3}, floats.data(), floats.size()).wait();
    CHECK(a.shape() == (std::vector<uint64_t>{9, 3}));
    CHECK(a.read<double>({0, 0}, {9, 3}) ==
          (std::vector<double>{1,  2,  3,  4,  5,  6,  6,  7,   8,   11,  12,  13, 11, 12,
                               13, 21, 22, 23, 24, 25, 26, 0.5, 1.5, 2.5, 0.5, 1.5, 2.5}));
#if ZARR_HPP_HAS_MDSPAN
    std::vector<double> m{7, 8, 9};
    a.append(0, std::mdspan<double, std::dextents<size_t, 2>>(m.data(), 1, 3));
    a.append_async(0, std::mdspan<double, std::dextents<size_t, 2>>(m.data(), 1, 3)).wait();
    CHECK(a.read<double>({9, 0}, {2, 3}) == (std::vector<double>{7, 8, 9, 7, 8, 9}));
#endif
    // A span of the wrong size, a value out of range, another type: nothing appended.
    const uint64_t before = a.shape()[0];
    CHECK_THROWS(a.append(0, {1, 3}, zarr::span<const double>(buf.data(), 4)),
                 ZARR_ERR_BUFFER_SIZE, "the span has 4 elements where the region (1 x 3) has 3");
    zarr::Array narrow = zarr::ArrayBuilder::of<int16_t>({0, 3}).create(store, "n", ZARR_MODE_W);
    CHECK_THROWS(narrow.append_converted(0, {1, 3}, std::vector<double>{1, 40000, 2}),
                 ZARR_ERR_RANGE, "int16");
    CHECK_THROWS(narrow.append_converted_async(0, {1, 3}, row.data(), 2).wait(),
                 ZARR_ERR_BUFFER_SIZE, "");
    CHECK_THROWS(narrow.append(0, {1, 3}, zarr::span<const double>(row)),
                 ZARR_ERR_DTYPE_MISMATCH, "");
    CHECK(a.shape()[0] == before && narrow.shape()[0] == 0);
    a.close();
    a.close();
}

int main() {
    run("spans", test_spans);
    run("appends", test_appends);
    run("views", test_views);
    run("view errors", test_view_errors);
    run("mdspan", test_mdspan);
    return CHECK_DONE();
}
