# Installs headers, both libraries, a CMake package (find_package(tally)) and a pkg-config file.
include(CMakePackageConfigHelpers)
install(TARGETS tally tally_static EXPORT tallyTargets
  LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
  ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
  RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR}
  INCLUDES DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(DIRECTORY include/ DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(EXPORT tallyTargets NAMESPACE tally:: DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/tally)
configure_package_config_file(cmake/tallyConfig.cmake.in
  ${CMAKE_CURRENT_BINARY_DIR}/tallyConfig.cmake
  INSTALL_DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/tally)
write_basic_package_version_file(${CMAKE_CURRENT_BINARY_DIR}/tallyConfigVersion.cmake
  VERSION ${PROJECT_VERSION} COMPATIBILITY SameMajorVersion)
install(FILES ${CMAKE_CURRENT_BINARY_DIR}/tallyConfig.cmake
              ${CMAKE_CURRENT_BINARY_DIR}/tallyConfigVersion.cmake
        DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/tally)
set(TALLY_PC_LIBS_PRIVATE "-lpthread -ldl -lm")
if(TALLY_CUDA)
  string(APPEND TALLY_PC_LIBS_PRIVATE " -L${CUDAToolkit_LIBRARY_DIR} -lcudart_static -lrt -lstdc++")
endif()
# prefix is found from the .pc file's own place, so the package can be installed anywhere.
file(RELATIVE_PATH TALLY_PC_TO_PREFIX "/root/${CMAKE_INSTALL_LIBDIR}/pkgconfig" "/root")
configure_file(cmake/tally.pc.in ${CMAKE_CURRENT_BINARY_DIR}/tally.pc @ONLY)
install(FILES ${CMAKE_CURRENT_BINARY_DIR}/tally.pc DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)
