# What `cmake --install` puts where (GNUInstallDirs: CMAKE_INSTALL_PREFIX,
# --prefix and DESTDIR are honoured):
#   bin/fnt                         the command-line tool
#   LIBDIR/libfntstore.so.N, .a     the store, for programs that embed it
#   LIBDIR/fntrace.so               the SQLite extension; in the library
#                                   directory so that with the prefix /usr
#                                   dlopen, hence `.load fntrace`, finds it
#   include/fnt_store.h             the store's one public header
#   LIBDIR/pkgconfig/fntrace.pc     pkg-config --cflags --libs fntrace
#   LIBDIR/cmake/fntrace/           find_package(fntrace) -> fntrace::store
#   share/man/man1/fnt.1, man7/fntrace.7
include(CMakePackageConfigHelpers)

install(TARGETS fnt RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
install(TARGETS fntrace LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR})
install(TARGETS fntstore ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR})
install(TARGETS fntstore_shared EXPORT fntraceTargets
        LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR})
install(FILES store/fnt_store.h DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(FILES man/fnt.1 DESTINATION ${CMAKE_INSTALL_MANDIR}/man1)
install(FILES man/fntrace.7 DESTINATION ${CMAKE_INSTALL_MANDIR}/man7)

set(FNT_CMAKE_DIR ${CMAKE_INSTALL_LIBDIR}/cmake/fntrace)
install(EXPORT fntraceTargets NAMESPACE fntrace:: DESTINATION ${FNT_CMAKE_DIR})
set(FNT_EXTENSION_PATH ${CMAKE_INSTALL_LIBDIR}/fntrace.so)
configure_package_config_file(cmake/fntraceConfig.cmake.in
                              ${CMAKE_BINARY_DIR}/fntraceConfig.cmake
                              INSTALL_DESTINATION ${FNT_CMAKE_DIR}
                              PATH_VARS FNT_EXTENSION_PATH)
# 0.x: a new minor version may change the ABI (the SONAME carries it too).
write_basic_package_version_file(${CMAKE_BINARY_DIR}/fntraceConfigVersion.cmake
                                 COMPATIBILITY SameMinorVersion)
install(FILES ${CMAKE_BINARY_DIR}/fntraceConfig.cmake
              ${CMAKE_BINARY_DIR}/fntraceConfigVersion.cmake
        DESTINATION ${FNT_CMAKE_DIR})

# The .pc file names the prefix installed into, known only at install time
# (`--prefix`, cpack's /usr): @CMAKE_INSTALL_PREFIX@ is filled in then, in a
# file of that prefix's own (installs may run concurrently).
set(FNT_PC_PREFIX "@CMAKE_INSTALL_PREFIX@")
configure_file(cmake/fntrace.pc.in ${CMAKE_BINARY_DIR}/fntrace.pc.in @ONLY)
install(CODE "
  string(MD5 fnt_pc_dir \"\$ENV{DESTDIR}\${CMAKE_INSTALL_PREFIX}\")
  set(fnt_pc \"${CMAKE_BINARY_DIR}/pc-\${fnt_pc_dir}/fntrace.pc\")
  configure_file(\"${CMAKE_BINARY_DIR}/fntrace.pc.in\" \"\${fnt_pc}\" @ONLY)
  file(INSTALL \"\${fnt_pc}\" DESTINATION
       \"\${CMAKE_INSTALL_PREFIX}/${CMAKE_INSTALL_LIBDIR}/pkgconfig\")
  file(REMOVE_RECURSE \"${CMAKE_BINARY_DIR}/pc-\${fnt_pc_dir}\")")
