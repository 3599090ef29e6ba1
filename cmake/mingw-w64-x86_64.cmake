# mingw-w64-x86_64.cmake — CMake toolchain file: cross-compile for 64-bit Windows with MinGW-w64
# (Debian: gcc-mingw-w64-x86-64). Use with -DONNX2CL_RUNTIME_ONLY=ON (the compiler needs
# protobuf-c, which Debian does not ship for MinGW):
#   cmake -S . -B build-mingw -DCMAKE_TOOLCHAIN_FILE=cmake/mingw-w64-x86_64.cmake -DONNX2CL_RUNTIME_ONLY=ON
# or, for onnx2cl-sd.exe (with `serve`) and libonnx2cl-sd too (zlib, libpng, cJSON,
# libmicrohttpd: .ci/mingw_deps.sh DEPS):
#   ... -DONNX2CL_NO_COMPILER=ON -DONNX2CL_MINGW_DEPS=DEPS
# OpenCL: the Khronos headers of the build machine (opencl-c-headers) and an import library
# made from cmake/OpenCL.def by dlltool (cmake/opencl_mingw.cmake); no SDK, no network.
set(CMAKE_SYSTEM_NAME Windows)
set(CMAKE_SYSTEM_PROCESSOR x86_64)
set(ONNX2CL_MINGW_PREFIX x86_64-w64-mingw32 CACHE STRING "MinGW-w64 tool prefix")
set(CMAKE_C_COMPILER ${ONNX2CL_MINGW_PREFIX}-gcc)
set(CMAKE_RC_COMPILER ${ONNX2CL_MINGW_PREFIX}-windres)
set(CMAKE_DLLTOOL ${ONNX2CL_MINGW_PREFIX}-dlltool)
set(CMAKE_FIND_ROOT_PATH /usr/${ONNX2CL_MINGW_PREFIX})
# -DONNX2CL_MINGW_DEPS=DIR: a prefix of MinGW builds of zlib, libpng, cJSON and libmicrohttpd
# (DIR/include, DIR/lib: .ci/mingw_deps.sh makes one from Debian's sources) for -DONNX2CL_NO_COMPILER=ON.
if(ONNX2CL_MINGW_DEPS)
  list(APPEND CMAKE_FIND_ROOT_PATH ${ONNX2CL_MINGW_DEPS})
endif()
set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
set(CMAKE_FIND_ROOT_PATH_MODE_LIBRARY ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_INCLUDE ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_PACKAGE ONLY)
