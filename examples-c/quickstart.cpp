// quickstart.cpp — the C quickstart with the C++ binding (zarr.hpp): write a 2-D field to a
// Zarr v3 array on local disk, read it back and print a summary. zarr-python 3 reads it as is:
//
//     python -c "import zarr; print(zarr.open('quickstart.zarr/temperature')[:2, :3])"
//
// Usage: quickstart_cxx [directory]   (default: quickstart.zarr)
#include <zarr.hpp>

#include <cmath>
#include <cstdio>
#include <vector>

int main(int argc, char **argv) {
    const char *dir = argc > 1 ? argv[1] : "quickstart.zarr";
    const uint64_t ny = 1000, nx = 1200;

    // A smooth temperature field, row-major.
    std::vector<double> field(ny * nx);
    for (uint64_t y = 0; y < ny; y++)
        for (uint64_t x = 0; x < nx; x++)
            field[y * nx + x] = 15.0 + 10.0 * std::sin(y / 80.0) * std::cos(x / 120.0);

    try {
        zarr::Store store = zarr::Store::open_fs(dir, ZARR_MODE_A);
        zarr::Array array =
            zarr::ArrayBuilder::of<double>({ny, nx})
                .set_chunk_shape({250, 300})
                .set_compressor_json(R"({"id": "blosc", "cname": "zstd", "clevel": 5, "shuffle": 2})")
                .set_fill_value_json(R"("NaN")")
                .set_attributes_json(R"({"units": "degC", "long_name": "air temperature"})")
                .create(store, "temperature", ZARR_MODE_W);
        array.write({0, 0}, {ny, nx}, field);

        // Reopen read-only and read everything back.
        zarr::Array back = zarr::Array::open(store, "temperature", ZARR_MODE_R);
        std::vector<double> values = back.read<double>({0, 0}, {ny, nx});
        size_t mismatches = 0;
        for (size_t i = 0; i < values.size(); i++)
            mismatches += values[i] != field[i];

        std::printf("libzarr %s quickstart (C++)\n", zarr::version_string());
        std::printf("  array       %s/temperature\n", dir);
        std::printf("  shape       %llu x %llu, dtype %s\n", (unsigned long long)ny,
                    (unsigned long long)nx, back.dtype_name().c_str());
        std::printf("  chunks      %llu stored of %llu\n",
                    (unsigned long long)back.nchunks_initialized(),
                    (unsigned long long)back.nchunks());
        std::printf("  attributes  %s\n", back.attributes().c_str());
        std::printf("  sample      [0,0]=%.4f [500,600]=%.4f\n", values[0], values[500 * nx + 600]);
        std::printf("  read back   %s\n", mismatches == 0 ? "identical" : "MISMATCH");
        return mismatches == 0 ? 0 : 1;
    } catch (const zarr::Error &e) {
        std::fprintf(stderr, "quickstart: %s: %s\n", e.status_name(), e.what());
        return 1;
    }
}
