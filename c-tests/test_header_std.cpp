// test_header_std.c compiled as C++ (C++11, C++17 and C++20 builds of this file).
#include "test_header_std.c"
