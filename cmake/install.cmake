# install.cmake — what `cmake --install` writes (included by CMakeLists.txt with
# ONNX2CL_INSTALL_TARGETS = onnx2cl_rt, plus onnx2cl unless ONNX2CL_RUNTIME_ONLY):
#   bin/onnx2cl                          the compiler (finds the runtime below beside itself)
#   include/onnx2cl_rt.h                 the runtime header generated code includes ("onnx2cl_rt.h")
#   lib/onnx2cl/libonnx2cl_rt.a          the runtime
#   lib/cmake/onnx2cl/                   CMake package: find_package(onnx2cl CONFIG) gives
#                                        onnx2cl::runtime, onnx2cl::onnx2cl, onnx2cl_add_model()
#   lib/pkgconfig/onnx2cl.pc             pkg-config --cflags --libs onnx2cl
include(CMakePackageConfigHelpers)
set(_o2c_cmakedir ${CMAKE_INSTALL_LIBDIR}/cmake/onnx2cl)
install(TARGETS ${ONNX2CL_INSTALL_TARGETS} EXPORT onnx2cl-targets
        RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR}
        ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}/onnx2cl)
install(FILES ${CMAKE_SOURCE_DIR}/runtime/onnx2cl_rt.h DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(FILES ${CMAKE_SOURCE_DIR}/LICENSE DESTINATION ${CMAKE_INSTALL_DATADIR}/doc/onnx2cl)
install(EXPORT onnx2cl-targets NAMESPACE onnx2cl:: DESTINATION ${_o2c_cmakedir})
configure_package_config_file(${CMAKE_SOURCE_DIR}/cmake/onnx2clConfig.cmake.in
  ${CMAKE_BINARY_DIR}/onnx2clConfig.cmake INSTALL_DESTINATION ${_o2c_cmakedir})
write_basic_package_version_file(${CMAKE_BINARY_DIR}/onnx2clConfigVersion.cmake
  COMPATIBILITY SameMinorVersion)
install(FILES ${CMAKE_BINARY_DIR}/onnx2clConfig.cmake ${CMAKE_BINARY_DIR}/onnx2clConfigVersion.cmake
        ${CMAKE_SOURCE_DIR}/cmake/onnx2cl_add_model.cmake DESTINATION ${_o2c_cmakedir})
# pkg-config: paths relative to the .pc file's prefix, so a relocated install still works
set(ONNX2CL_PC_LIBS "-lOpenCL")
if(NOT WIN32)
  string(APPEND ONNX2CL_PC_LIBS " -lm")
endif()
if(ONNX2CL_SANITIZE)
  string(APPEND ONNX2CL_PC_LIBS " -fsanitize=address,undefined")
endif()
file(RELATIVE_PATH ONNX2CL_PC_UP /p/${CMAKE_INSTALL_LIBDIR}/pkgconfig /p)
configure_file(${CMAKE_SOURCE_DIR}/cmake/onnx2cl.pc.in ${CMAKE_BINARY_DIR}/onnx2cl.pc @ONLY)
install(FILES ${CMAKE_BINARY_DIR}/onnx2cl.pc DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)
