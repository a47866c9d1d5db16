# wsv_lint_ptx: lint the PTX of CUDA code with `wsv lint` as part of a build or as a test.
#
#   include(WsvLint)   # with wsv's cmake/ folder on CMAKE_MODULE_PATH
#   wsv_lint_ptx(TARGET <target> | PTX <file>...
#                [NAME <name>]          the lint target or test (default <target>_wsv_lint, or
#                                       wsv_lint_<first PTX file's name>)
#                [CHECKS <globs>]       --checks, clang-tidy style ("-*,mbarrier-*")
#                [KERNEL <entry>]       only this kernel entry
#                [CLUSTER_SIZE <n>]     --cluster-size: CTAs per cluster of the launch, for
#                                       kernels whose PTX states none (clang's builds)
#                [SARIF <file>]         also write SARIF 2.1.0 (for code scanning)
#                [JSON <file>]          also write the wsv-lint/1 JSON report
#                [BASELINE <file>]      leave out the findings of a previous JSON report
#                [SARIF_ROOT <dir>]     SARIF URIs are relative to it (default: the project's
#                                       source folder; make it the repository's root)
#                [ARCH <arch>]          PTX architecture for a TARGET that is not PTX already
#                                       (default: the target's first CUDA_ARCHITECTURES entry)
#                [TEST]                 lint as a ctest instead of during the build
#                [WSV <path>])          the wsv to run (default: WSV_EXECUTABLE, the `wsv`
#                                       target of this build, or wsv on PATH)
#
# TARGET is either an OBJECT library with CUDA_PTX_COMPILATION (its objects are the PTX files)
# or any target with .cu sources: then an OBJECT library <target>_wsv_ptx compiles the same
# sources with the same include directories, definitions, options and linked libraries to PTX
# (with -lineinfo, so findings point at CUDA lines too). PTX takes files that exist or that
# custom commands produce (`nvcc -ptx ...`).
#
# During the build the lint runs when a PTX file changes and an error finding fails the build
# (warnings and remarks do not); the text goes to the build log, and the SARIF/JSON files are
# written either way. With TEST it is a ctest that fails the same way.
include_guard(GLOBAL)

function(_wsv_lint_find_wsv out)
  if(DEFINED WSV_EXECUTABLE AND WSV_EXECUTABLE)
    set(${out} ${WSV_EXECUTABLE} PARENT_SCOPE)
  elseif(TARGET wsv)
    set(${out} $<TARGET_FILE:wsv> PARENT_SCOPE)
  else()
    find_program(WSV_EXECUTABLE wsv)
    if(NOT WSV_EXECUTABLE)
      message(FATAL_ERROR "wsv_lint_ptx: no wsv found; set WSV_EXECUTABLE to its path")
    endif()
    set(${out} ${WSV_EXECUTABLE} PARENT_SCOPE)
  endif()
endfunction()

# An OBJECT library that compiles the CUDA sources of `target` to PTX for one architecture.
function(_wsv_lint_ptx_library target arch out_lib)
  get_target_property(sources ${target} SOURCES)
  get_target_property(source_dir ${target} SOURCE_DIR)
  set(cuda_sources "")
  foreach(src IN LISTS sources)
    if(src MATCHES "\\.cu$")
      get_filename_component(abs ${src} ABSOLUTE BASE_DIR ${source_dir})
      list(APPEND cuda_sources ${abs})
    endif()
  endforeach()
  if(NOT cuda_sources)
    message(FATAL_ERROR "wsv_lint_ptx: target '${target}' has no .cu source to make PTX from")
  endif()
  if(NOT arch)
    get_target_property(archs ${target} CUDA_ARCHITECTURES)
    if(NOT archs OR archs STREQUAL "archs-NOTFOUND")
      set(archs ${CMAKE_CUDA_ARCHITECTURES})
    endif()
    list(GET archs 0 arch)
    string(REGEX REPLACE "-(real|virtual)$" "" arch "${arch}")
  endif()
  set(lib ${target}_wsv_ptx)
  add_library(${lib} OBJECT ${cuda_sources})
  set_target_properties(${lib} PROPERTIES CUDA_PTX_COMPILATION ON CUDA_ARCHITECTURES ${arch})
  foreach(prop INCLUDE_DIRECTORIES COMPILE_DEFINITIONS COMPILE_OPTIONS CUDA_STANDARD
               CXX_STANDARD)
    get_target_property(value ${target} ${prop})
    if(value)
      set_property(TARGET ${lib} PROPERTY ${prop} "${value}")
    endif()
  endforeach()
  # Usage requirements of what the target links (include folders of its libraries).
  target_link_libraries(${lib} PRIVATE $<TARGET_PROPERTY:${target},LINK_LIBRARIES>)
  target_compile_options(${lib} PRIVATE $<$<COMPILE_LANGUAGE:CUDA>:-lineinfo>)
  set(${out_lib} ${lib} PARENT_SCOPE)
endfunction()

function(wsv_lint_ptx)
  cmake_parse_arguments(L "TEST" "TARGET;NAME;CHECKS;KERNEL;CLUSTER_SIZE;SARIF;JSON;BASELINE;SARIF_ROOT;ARCH;WSV"
                        "PTX"
                        ${ARGN})
  if(L_UNPARSED_ARGUMENTS)
    message(FATAL_ERROR "wsv_lint_ptx: unknown arguments: ${L_UNPARSED_ARGUMENTS}")
  endif()
  if((L_TARGET AND L_PTX) OR (NOT L_TARGET AND NOT L_PTX))
    message(FATAL_ERROR "wsv_lint_ptx: give either TARGET <target> or PTX <files>")
  endif()
  if(L_WSV)
    set(wsv ${L_WSV})
  else()
    _wsv_lint_find_wsv(wsv)
  endif()

  set(depends "")
  if(L_TARGET)
    if(NOT TARGET ${L_TARGET})
      message(FATAL_ERROR "wsv_lint_ptx: '${L_TARGET}' is not a target")
    endif()
    get_target_property(type ${L_TARGET} TYPE)
    get_target_property(is_ptx ${L_TARGET} CUDA_PTX_COMPILATION)
    if(type STREQUAL "OBJECT_LIBRARY" AND is_ptx)
      set(ptx_target ${L_TARGET})
    else()
      _wsv_lint_ptx_library(${L_TARGET} "${L_ARCH}" ptx_target)
    endif()
    set(ptx_files $<TARGET_OBJECTS:${ptx_target}>)
    set(depends ${ptx_target} ${ptx_files})
    set(default_name ${L_TARGET}_wsv_lint)
  else()
    set(ptx_files "")
    foreach(f IN LISTS L_PTX)
      get_filename_component(abs ${f} ABSOLUTE BASE_DIR ${CMAKE_CURRENT_BINARY_DIR})
      if(NOT EXISTS ${abs})
        get_filename_component(abs ${f} ABSOLUTE BASE_DIR ${CMAKE_CURRENT_SOURCE_DIR})
      endif()
      list(APPEND ptx_files ${abs})
    endforeach()
    set(depends ${ptx_files})
    list(GET L_PTX 0 first)
    get_filename_component(first ${first} NAME_WE)
    set(default_name wsv_lint_${first})
  endif()
  set(name ${default_name})
  if(L_NAME)
    set(name ${L_NAME})
  endif()

  set(args lint)
  if(L_CHECKS)
    list(APPEND args "--checks=${L_CHECKS}")
  endif()
  if(L_KERNEL)
    list(APPEND args --kernel ${L_KERNEL})
  endif()
  if(L_CLUSTER_SIZE)
    list(APPEND args --cluster-size ${L_CLUSTER_SIZE})
  endif()
  if(L_BASELINE)
    get_filename_component(baseline ${L_BASELINE} ABSOLUTE BASE_DIR ${CMAKE_CURRENT_SOURCE_DIR})
    list(APPEND args --baseline ${baseline})
  endif()
  set(byproducts "")
  foreach(kind SARIF JSON)
    if(L_${kind})
      get_filename_component(report ${L_${kind}} ABSOLUTE BASE_DIR ${CMAKE_CURRENT_BINARY_DIR})
      string(TOLOWER ${kind} lower)
      list(APPEND args --${lower}-output ${report})
      list(APPEND byproducts ${report})
    endif()
  endforeach()
  # Artifact URIs in SARIF are relative to the source tree, as code scanning expects.
  set(sarif_root ${PROJECT_SOURCE_DIR})
  if(L_SARIF_ROOT)
    get_filename_component(sarif_root ${L_SARIF_ROOT} ABSOLUTE BASE_DIR ${CMAKE_CURRENT_SOURCE_DIR})
  endif()
  list(APPEND args --sarif-root ${sarif_root})

  if(L_TEST)
    add_test(NAME ${name} COMMAND ${wsv} ${args} ${ptx_files})
    return()
  endif()
  # The stamp is touched only when the lint passes, so a failing lint fails every build until
  # the finding is fixed (its reports are byproducts, written either way).
  set(stamp ${CMAKE_CURRENT_BINARY_DIR}/${name}.stamp)
  add_custom_command(
    OUTPUT ${stamp}
    BYPRODUCTS ${byproducts}
    COMMAND ${wsv} ${args} ${ptx_files}
    COMMAND ${CMAKE_COMMAND} -E touch ${stamp}
    DEPENDS ${depends} ${L_BASELINE}
    COMMENT "wsv lint ${name}"
    COMMAND_EXPAND_LISTS
    VERBATIM)
  add_custom_target(${name} ALL DEPENDS ${stamp})
endfunction()
