# opencl_mingw.cmake — OpenCL::OpenCL for Windows cross builds without an OpenCL SDK.
# Headers: the Khronos OpenCL headers of the build machine (ONNX2CL_OPENCL_HEADERS, default
# /usr/include from Debian's opencl-c-headers), copied alone into the build tree so that the
# build machine's libc headers never shadow MinGW's. Library: libOpenCL.dll.a, made at configure
# time from cmake/OpenCL.def with dlltool; at run time the program loads OpenCL.dll (the
# Khronos ICD loader every Windows GPU driver installs).
set(ONNX2CL_OPENCL_HEADERS /usr/include CACHE PATH "folder holding CL/cl.h (Khronos OpenCL headers)")
if(NOT EXISTS ${ONNX2CL_OPENCL_HEADERS}/CL/cl.h)
  message(FATAL_ERROR "CL/cl.h not found under ${ONNX2CL_OPENCL_HEADERS}: apt-get install opencl-c-headers")
endif()
if(NOT CMAKE_DLLTOOL)
  find_program(CMAKE_DLLTOOL NAMES x86_64-w64-mingw32-dlltool dlltool REQUIRED)
endif()
set(_o2c_cl ${CMAKE_BINARY_DIR}/opencl)
file(COPY ${ONNX2CL_OPENCL_HEADERS}/CL DESTINATION ${_o2c_cl}/include)
execute_process(
  COMMAND ${CMAKE_DLLTOOL} --input-def ${CMAKE_CURRENT_LIST_DIR}/OpenCL.def
          --dllname OpenCL.dll --output-lib ${_o2c_cl}/libOpenCL.dll.a
  RESULT_VARIABLE _o2c_rc)
if(NOT _o2c_rc EQUAL 0)
  message(FATAL_ERROR "${CMAKE_DLLTOOL} could not make the OpenCL import library")
endif()
add_library(OpenCL::OpenCL UNKNOWN IMPORTED)
set_target_properties(OpenCL::OpenCL PROPERTIES
  IMPORTED_LOCATION ${_o2c_cl}/libOpenCL.dll.a
  INTERFACE_INCLUDE_DIRECTORIES ${_o2c_cl}/include)
set(OpenCL_FOUND TRUE)
