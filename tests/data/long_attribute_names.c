/* Writes long_attribute_names.h5: a netCDF-4 style HDF5 file whose root group and variable
   "v" (int, 3 values 1 2 3) each hold an int attribute (7) with a 1000-byte name. */
#include <hdf5.h>
#include <string.h>
int main(void) {
    char name[1001];
    int seven = 7, values[3] = {1, 2, 3};
    hsize_t n = 3;
    hid_t f = H5Fcreate("long_attribute_names.h5", H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
    hid_t scalar = H5Screate(H5S_SCALAR), line = H5Screate_simple(1, &n, NULL);
    hid_t v = H5Dcreate2(f, "v", H5T_STD_I32LE, line, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
    H5Dwrite(v, H5T_NATIVE_INT, H5S_ALL, H5S_ALL, H5P_DEFAULT, values);
    memset(name, 'g', 1000);
    name[1000] = 0;
    hid_t a = H5Acreate2(f, name, H5T_STD_I32LE, scalar, H5P_DEFAULT, H5P_DEFAULT);
    H5Awrite(a, H5T_NATIVE_INT, &seven);
    H5Aclose(a);
    memset(name, 'a', 1000);
    a = H5Acreate2(v, name, H5T_STD_I32LE, scalar, H5P_DEFAULT, H5P_DEFAULT);
    H5Awrite(a, H5T_NATIVE_INT, &seven);
    H5Aclose(a);
    H5Dclose(v);
    H5Sclose(scalar);
    H5Sclose(line);
    return H5Fclose(f) < 0;
}
