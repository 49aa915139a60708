# `cmake --install`: libturbokv, the public headers (include/turbokv/, which include no internal
# header), a CMake package (find_package(turbokv) -> turbokv::turbokv) and a pkg-config file
# (turbokv.pc, relocatable). A shared libturbokv keeps its private dependencies (spdlog, the
# embedded shaders) inside; a static one exports them for the consumer's link.
include(CMakePackageConfigHelpers)

set(TKV_INSTALL_CMAKEDIR ${CMAKE_INSTALL_LIBDIR}/cmake/turbokv)
install(TARGETS turbokv EXPORT turbokvTargets
  LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
  ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
  RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
set(TKV_PC_REQUIRES "vulkan")
set(TKV_PC_LIBS "-lturbokv")
if(NOT TKV_SHARED)
  # There is no shared variant to hide them: plain `pkg-config --libs` must name them.
  install(TARGETS tkv_shaders EXPORT turbokvTargets ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR})
  set(TKV_PC_REQUIRES "vulkan spdlog SPIRV-Tools")
  set(TKV_PC_LIBS "-lturbokv -ltkv_shaders -lxxhash -lstdc++")
endif()
install(DIRECTORY include/turbokv DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(EXPORT turbokvTargets NAMESPACE turbokv:: DESTINATION ${TKV_INSTALL_CMAKEDIR})

if(TKV_SHARED)
  set(TKV_CONFIG_STATIC OFF)
else()
  set(TKV_CONFIG_STATIC ON)
endif()
configure_package_config_file(${CMAKE_CURRENT_LIST_DIR}/turbokvConfig.cmake.in ${CMAKE_CURRENT_BINARY_DIR}/turbokvConfig.cmake
  INSTALL_DESTINATION ${TKV_INSTALL_CMAKEDIR})
write_basic_package_version_file(${CMAKE_CURRENT_BINARY_DIR}/turbokvConfigVersion.cmake
  COMPATIBILITY SameMinorVersion)
install(FILES ${CMAKE_CURRENT_BINARY_DIR}/turbokvConfig.cmake ${CMAKE_CURRENT_BINARY_DIR}/turbokvConfigVersion.cmake
  DESTINATION ${TKV_INSTALL_CMAKEDIR})

# pkg-config: the prefix is found from the .pc file's own location, so `--prefix` at install time works.
set(TKV_PC_DIR ${CMAKE_INSTALL_LIBDIR}/pkgconfig)
if(IS_ABSOLUTE "${CMAKE_INSTALL_LIBDIR}" OR IS_ABSOLUTE "${CMAKE_INSTALL_INCLUDEDIR}")
  message(FATAL_ERROR "turbokv.pc needs CMAKE_INSTALL_LIBDIR and CMAKE_INSTALL_INCLUDEDIR relative to the prefix")
endif()
file(RELATIVE_PATH TKV_PC_TO_PREFIX "/prefix/${TKV_PC_DIR}" "/prefix")
string(REGEX REPLACE "/$" "" TKV_PC_TO_PREFIX "${TKV_PC_TO_PREFIX}")
configure_file(${CMAKE_CURRENT_LIST_DIR}/turbokv.pc.in ${CMAKE_CURRENT_BINARY_DIR}/turbokv.pc @ONLY)
install(FILES ${CMAKE_CURRENT_BINARY_DIR}/turbokv.pc DESTINATION ${TKV_PC_DIR})
