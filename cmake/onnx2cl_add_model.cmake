# onnx2cl_add_model.cmake — compile an ONNX model as part of an application's build.
#
#   onnx2cl_add_model(TARGET MODEL.onnx [NAME id] [SHAPES in=d0,d1,... ...] [OPTIONS flag ...])
#
# At build time runs `onnx2cl MODEL.onnx -o <bin>/onnx2cl/<id>.c --name <id> --no-main
# --shape ...` (rerun when the model or onnx2cl changes), adds <id>.c to TARGET, puts <id>.h
# (prototypes <id>_init/_run/_free/_desc and the ID_INPUT<i>_* / ID_OUTPUT<i>_* macros) on its
# include path and links onnx2cl::runtime. <id> defaults to the model file's base name made a C
# identifier. Sets <id>_WEIGHTS in the caller's scope to the path of the weights file, which the
# application passes to <id>_init (install it next to the program).
# Needs the onnx2cl::onnx2cl target (a full install, or the onnx2cl build tree).
function(onnx2cl_add_model target model)
  cmake_parse_arguments(PARSE_ARGV 2 A "" "NAME" "SHAPES;OPTIONS")
  if(A_UNPARSED_ARGUMENTS)
    message(FATAL_ERROR "onnx2cl_add_model: unexpected arguments ${A_UNPARSED_ARGUMENTS}")
  endif()
  if(NOT TARGET onnx2cl::onnx2cl)
    message(FATAL_ERROR "onnx2cl_add_model: the onnx2cl compiler is not installed (runtime-only package?)")
  endif()
  get_filename_component(model ${model} ABSOLUTE)
  if(A_NAME)
    set(id ${A_NAME})
  else()
    get_filename_component(id ${model} NAME_WE)
    string(MAKE_C_IDENTIFIER ${id} id)
  endif()
  set(dir ${CMAKE_CURRENT_BINARY_DIR}/onnx2cl)
  set(flags)
  foreach(s IN LISTS A_SHAPES)
    list(APPEND flags --shape ${s})
  endforeach()
  file(MAKE_DIRECTORY ${dir})
  add_custom_command(
    OUTPUT ${dir}/${id}.c ${dir}/${id}.h ${dir}/${id}.weights
    COMMAND onnx2cl::onnx2cl ${model} -o ${dir}/${id}.c --name ${id} --no-main ${flags} ${A_OPTIONS}
    DEPENDS ${model} $<TARGET_FILE:onnx2cl::onnx2cl>
    COMMENT "onnx2cl: compiling ${model} into ${id}.c"
    VERBATIM)
  target_sources(${target} PRIVATE ${dir}/${id}.c ${dir}/${id}.h)
  target_include_directories(${target} PRIVATE ${dir})
  target_link_libraries(${target} PRIVATE onnx2cl::runtime)
  set(${id}_WEIGHTS ${dir}/${id}.weights PARENT_SCOPE)
endfunction()
