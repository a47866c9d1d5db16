# Finds what wsv builds on. Every dependency is a Debian 12 package; a missing one stops
# configuration with the name of the package that provides it (tools/scripts/install-deps.sh
# installs them all).

function(wsv_require found what package)
  if(NOT ${found})
    message(FATAL_ERROR "wsv: ${what} not found; install it with: apt-get install ${package} "
                        "(or run tools/scripts/install-deps.sh)")
  endif()
endfunction()

if(WSV_ANALYZER)
  # LLVM 19: Support (SourceMgr diagnostics, MemoryBuffer, ADT, allocators, ThreadPool) and the
  # FileCheck/lit tools the golden tests use. Debian keeps it under /usr/lib/llvm-19; ask
  # llvm-config-19 where its CMake package is rather than spelling the path here.
  find_program(WSV_LLVM_CONFIG NAMES llvm-config-19 llvm-config)
  set(_llvm_hints "")
  if(WSV_LLVM_CONFIG)
    execute_process(COMMAND ${WSV_LLVM_CONFIG} --cmakedir OUTPUT_VARIABLE _llvm_hints
                    OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET)
  endif()
  # LLVM's version file matches major.minor exactly, so ask for any version and check the major.
  find_package(LLVM CONFIG QUIET HINTS ${_llvm_hints})
  if(LLVM_FOUND AND NOT LLVM_VERSION_MAJOR EQUAL 19)
    message(FATAL_ERROR "wsv: found LLVM ${LLVM_PACKAGE_VERSION} in ${LLVM_DIR}, need LLVM 19: "
                        "apt-get install llvm-19-dev (and set LLVM_DIR if several are installed)")
  endif()
  wsv_require(LLVM_FOUND "LLVM 19 (CMake package)" "llvm-19-dev")
  message(STATUS "wsv: LLVM ${LLVM_PACKAGE_VERSION} in ${LLVM_DIR}")
  llvm_map_components_to_libnames(_llvm_support_libs support)
  add_library(wsv_llvm_support INTERFACE)
  target_include_directories(wsv_llvm_support SYSTEM INTERFACE ${LLVM_INCLUDE_DIRS})
  separate_arguments(_llvm_defs NATIVE_COMMAND "${LLVM_DEFINITIONS}")
  target_compile_definitions(wsv_llvm_support INTERFACE ${_llvm_defs})
  target_link_libraries(wsv_llvm_support INTERFACE ${_llvm_support_libs})
  add_library(wsv::LLVMSupport ALIAS wsv_llvm_support)

  find_program(WSV_FILECHECK FileCheck HINTS ${LLVM_TOOLS_BINARY_DIR} NO_DEFAULT_PATH)
  find_program(WSV_LLVM_OBJCOPY llvm-objcopy HINTS ${LLVM_TOOLS_BINARY_DIR} NO_DEFAULT_PATH)
  find_program(WSV_LLVM_READELF llvm-readelf HINTS ${LLVM_TOOLS_BINARY_DIR} NO_DEFAULT_PATH)
  find_program(WSV_NOT not HINTS ${LLVM_TOOLS_BINARY_DIR} NO_DEFAULT_PATH)
  find_file(WSV_LIT lit.py HINTS ${LLVM_TOOLS_BINARY_DIR}/../build/utils/lit NO_DEFAULT_PATH)

  find_package(Z3 MODULE)
  wsv_require(Z3_FOUND "Z3 (z3++.h and libz3)" "libz3-dev")
endif()

if(WSV_ANALYZER OR WSV_RUNNER)
  # Header-only; the GPU machines have no package for it, so a bare copy of the header folder
  # (found through CMAKE_PREFIX_PATH or CPATH) is accepted too.
  find_package(nlohmann_json 3 CONFIG QUIET)
  if(NOT nlohmann_json_FOUND)
    find_path(WSV_NLOHMANN_INCLUDE nlohmann/json.hpp)
    wsv_require(WSV_NLOHMANN_INCLUDE "nlohmann/json" "nlohmann-json3-dev")
    add_library(nlohmann_json::nlohmann_json INTERFACE IMPORTED)
    target_include_directories(nlohmann_json::nlohmann_json INTERFACE ${WSV_NLOHMANN_INCLUDE})
  endif()
endif()

if(WSV_TESTS)
  find_package(GTest CONFIG QUIET)
  wsv_require(GTest_FOUND "GoogleTest" "libgtest-dev")
  find_package(Python3 COMPONENTS Interpreter QUIET)
  wsv_require(Python3_FOUND "python3 (runs lit)" "python3")
  if(WSV_ANALYZER)
    wsv_require(WSV_FILECHECK "FileCheck" "llvm-19-tools")
    wsv_require(WSV_LIT "lit" "llvm-19-tools")
    wsv_require(WSV_LLVM_OBJCOPY "llvm-objcopy" "llvm-19")
  endif()
endif()

if(WSV_BENCHMARKS)
  find_package(benchmark CONFIG QUIET)
  wsv_require(benchmark_FOUND "Google Benchmark" "libbenchmark-dev")
endif()

if(WSV_KERNELS OR WSV_RUNNER)
  find_package(CUDAToolkit 13 QUIET)
  wsv_require(CUDAToolkit_FOUND "the CUDA toolkit 13 (nvcc, cudart, cuBLAS)"
              "the CUDA 13 toolkit at /usr/local/cuda, with /usr/local/cuda/bin on PATH")
  find_program(WSV_NVCC nvcc HINTS ${CUDAToolkit_BIN_DIR})
  find_program(WSV_PTXAS ptxas HINTS ${CUDAToolkit_BIN_DIR})
  wsv_require(WSV_NVCC "nvcc" "the CUDA 13 toolkit")
  wsv_require(WSV_PTXAS "ptxas" "the CUDA 13 toolkit")
  # clang-19 compiles some kernels a second time (LLVM NVPTX PTX differs from nvcc's); optional.
  find_program(WSV_CLANG_CUDA NAMES clang++-19)
  if(NOT WSV_CLANG_CUDA)
    message(STATUS "wsv: clang++-19 not found: no <kernel>.clang.ptx (apt-get install clang-19)")
  endif()
endif()
