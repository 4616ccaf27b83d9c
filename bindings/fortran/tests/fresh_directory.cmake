# Removes the directory DIR and creates it again, empty: run before a test (as its fixture)
# so that every run starts from what the test writes itself, never from an earlier run's files.
if(NOT DIR)
  message(FATAL_ERROR "fresh_directory.cmake: give -DDIR=<directory>")
endif()
file(REMOVE_RECURSE "${DIR}")
file(MAKE_DIRECTORY "${DIR}")
