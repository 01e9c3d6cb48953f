# `cpack -G DEB` (in a Release build folder): fntrace_VERSION_ARCH.deb with
# everything `cmake --install` installs, under /usr; its dependencies come
# from dpkg-shlibdeps, and it registers libfntstore's shlibs (and the
# ldconfig trigger).
set(CPACK_GENERATOR DEB)
set(CPACK_PACKAGE_NAME fntrace)
set(CPACK_PACKAGE_VENDOR fntrace)
set(CPACK_PACKAGE_CONTACT "fntrace maintainers <fntrace@localhost>")
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY
    "function traces (LLVM XRay) and profiles (perf) queried with SQL")
set(CPACK_PACKAGE_DESCRIPTION
    "fntrace files XRay traces and perf profiles into a warehouse folder of\n\
compressed, checksummed segment files and reads them back with SQL: the\n\
SQLite extension fntrace.so (.load fntrace), the fnt tool, and the store\n\
library libfntstore with its header, pkg-config file and CMake package.")
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_SECTION devel)
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
set(CPACK_DEBIAN_PACKAGE_GENERATE_SHLIBS ON)
set(CPACK_DEBIAN_PACKAGE_RECOMMENDS "sqlite3")
set(CPACK_DEBIAN_PACKAGE_SUGGESTS "linux-perf, clang")
include(CPack)
