# Turns a reference kernel (CUDA C++) into the PTX files wsv analyzes and runs:
#
#   wsv_kernel(NAME <name> SOURCE <file.cu> ARCH 90a|100a
#              [BUGS <check-name>...]      one variant per check, built with -DWSV_BUG=<check-name>
#              [CHECKED]                   also build every file with -DWSV_CHECKED=1 (instrumented waits)
#              [CLANG]                     also build <name>.clang.ptx with clang-19 (LLVM NVPTX)
#              [DEFINES <-Dx=y>...])       extra flags for both compilers
#
# Files written to ${WSV_PTX_DIR}:
#   <name>.ptx, <name>.bug-<check>.ptx, <name>.clang.ptx,
#   <name>.checked.ptx, <name>.bug-<check>.checked.ptx     (with CHECKED)
# and ${WSV_PTX_DIR}/kernels.json, the manifest `wsv kernels` reads (written by wsv_write_kernel_manifest).

set(WSV_KERNEL_COMMON_DIR ${PROJECT_SOURCE_DIR}/reference_kernels/common)
set_property(GLOBAL PROPERTY WSV_KERNEL_MANIFEST "")
add_custom_target(wsv_ptx ALL)

# clang-19 cannot read CUDA 13's headers, so the clang build uses our own small device header
# (reference_kernels/common/clang_cuda_compat.h) and none of the toolkit's.
set(WSV_CLANG_CUDA_FLAGS
    -x cuda --cuda-device-only -S -nocudainc -nocudalib -O3 -gline-tables-only
    -include ${WSV_KERNEL_COMMON_DIR}/clang_cuda_compat.h -Wno-unknown-cuda-version)

function(_wsv_nvcc_ptx out src arch flags)
  get_filename_component(_name ${out} NAME)
  add_custom_command(
    OUTPUT ${out}
    COMMAND ${WSV_NVCC} -ptx -lineinfo -std=c++17 -O3
            -gencode=arch=compute_${arch},code=sm_${arch}
            -I${WSV_KERNEL_COMMON_DIR} ${flags} ${src} -o ${out} -MD -MF ${out}.d
    DEPENDS ${src}
    DEPFILE ${out}.d
    COMMENT "nvcc ${_name}"
    VERBATIM)
endfunction()

function(_wsv_clang_ptx out src arch flags)
  get_filename_component(_name ${out} NAME)
  add_custom_command(
    OUTPUT ${out}
    COMMAND ${WSV_CLANG_CUDA} ${WSV_CLANG_CUDA_FLAGS} --cuda-gpu-arch=sm_${arch}
            -I${WSV_KERNEL_COMMON_DIR} ${flags} ${src} -o ${out} -MD -MF ${out}.d
    DEPENDS ${src} ${WSV_KERNEL_COMMON_DIR}/clang_cuda_compat.h
    DEPFILE ${out}.d
    COMMENT "clang-19 ${_name}"
    VERBATIM)
endfunction()

function(wsv_kernel)
  cmake_parse_arguments(K "CHECKED;CLANG" "NAME;SOURCE;ARCH" "BUGS;DEFINES" ${ARGN})
  if(NOT K_NAME OR NOT K_SOURCE OR NOT K_ARCH)
    message(FATAL_ERROR "wsv_kernel needs NAME, SOURCE and ARCH")
  endif()
  get_filename_component(src ${K_SOURCE} ABSOLUTE)
  set(outs "")
  set(variants "")
  foreach(bug "" ${K_BUGS})
    if(bug STREQUAL "")
      set(stem ${K_NAME})
      set(flags ${K_DEFINES})
    else()
      set(stem ${K_NAME}.bug-${bug})
      set(flags ${K_DEFINES} -DWSV_BUG=${bug})
    endif()
    _wsv_nvcc_ptx(${WSV_PTX_DIR}/${stem}.ptx ${src} ${K_ARCH} "${flags}")
    list(APPEND outs ${WSV_PTX_DIR}/${stem}.ptx)
    set(checked "")
    if(K_CHECKED)
      _wsv_nvcc_ptx(${WSV_PTX_DIR}/${stem}.checked.ptx ${src} ${K_ARCH} "${flags};-DWSV_CHECKED=1")
      list(APPEND outs ${WSV_PTX_DIR}/${stem}.checked.ptx)
      set(checked ", \"checked_ptx\": \"${stem}.checked.ptx\"")
    endif()
    if(NOT bug STREQUAL "")
      list(APPEND variants "{\"bug\": \"${bug}\", \"ptx\": \"${stem}.ptx\"${checked}}")
    else()
      set(main_checked "${checked}")
    endif()
  endforeach()
  set(clang_entry "")
  if(K_CLANG AND WSV_CLANG_CUDA)
    _wsv_clang_ptx(${WSV_PTX_DIR}/${K_NAME}.clang.ptx ${src} ${K_ARCH} "${K_DEFINES}")
    list(APPEND outs ${WSV_PTX_DIR}/${K_NAME}.clang.ptx)
    set(clang_entry ", \"clang_ptx\": \"${K_NAME}.clang.ptx\"")
  endif()
  add_custom_target(ptx_${K_NAME} DEPENDS ${outs})
  add_dependencies(wsv_ptx ptx_${K_NAME})
  set_property(GLOBAL APPEND PROPERTY WSV_KERNEL_PTX_FILES ${outs})

  file(RELATIVE_PATH rel_src ${PROJECT_SOURCE_DIR} ${src})
  list(JOIN variants ",\n      " variants_json)
  # One string: set_property would join several arguments with ';', which is not JSON.
  string(CONCAT entry
    "    {\"name\": \"${K_NAME}\", \"arch\": \"sm_${K_ARCH}\", \"source\": \"${rel_src}\", "
    "\"ptx\": \"${K_NAME}.ptx\"${main_checked}${clang_entry},\n"
    "     \"variants\": [\n      ${variants_json}]},\n")
  set_property(GLOBAL APPEND_STRING PROPERTY WSV_KERNEL_MANIFEST "${entry}")
endfunction()

# Writes ${WSV_PTX_DIR}/kernels.json from every wsv_kernel() call; call once, after them all.
function(wsv_write_kernel_manifest)
  get_property(body GLOBAL PROPERTY WSV_KERNEL_MANIFEST)
  string(REGEX REPLACE ",\n$" "\n" body "${body}")
  file(WRITE ${WSV_PTX_DIR}/kernels.json.in
       "{\n  \"schema\": \"wsv-kernels/1\",\n  \"ptx_dir\": \"${WSV_PTX_DIR}\",\n"
       "  \"kernels\": [\n${body}  ]\n}\n")
  configure_file(${WSV_PTX_DIR}/kernels.json.in ${WSV_PTX_DIR}/kernels.json COPYONLY)
endfunction()
