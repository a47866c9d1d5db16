# Compiler flags shared by every wsv target. Targets opt in with wsv_set_flags(<target>).

add_library(wsv_flags INTERFACE)
target_compile_options(wsv_flags INTERFACE
  $<$<COMPILE_LANGUAGE:CXX>:-Wall -Wextra -Wno-unused-parameter>)
# RelWithDebInfo with line tables only (-g1 after the build type's -g wins): enough for perf
# and backtraces, and a fresh build on two cores compiles a quarter faster than with -g (the
# analyzer's largest test file: 15.2 s to 11.1 s).
target_compile_options(wsv_flags INTERFACE
  $<$<AND:$<CONFIG:RelWithDebInfo>,$<COMPILE_LANGUAGE:CXX>>:-g1>)

if(WSV_SANITIZE)
  target_compile_options(wsv_flags INTERFACE
    $<$<COMPILE_LANGUAGE:CXX>:-fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined>)
  target_link_options(wsv_flags INTERFACE -fsanitize=address,undefined)
endif()

if(WSV_FUZZ)
  if(NOT CMAKE_CXX_COMPILER_ID MATCHES "Clang")
    message(FATAL_ERROR "WSV_FUZZ needs clang as the C++ compiler: configure with "
                        "-DCMAKE_CXX_COMPILER=clang++-19 (apt-get install clang-19 libclang-rt-19-dev)")
  endif()
  # Everything the fuzzer links is instrumented for coverage; the fuzz target adds the driver.
  target_compile_options(wsv_flags INTERFACE
    $<$<COMPILE_LANGUAGE:CXX>:-fsanitize=fuzzer-no-link,address,undefined -fno-omit-frame-pointer>)
  target_link_options(wsv_flags INTERFACE -fsanitize=address,undefined)
endif()

function(wsv_set_flags target)
  target_link_libraries(${target} PRIVATE wsv_flags)
endfunction()

# Precompiled headers: most of a wsv file's compile time is parsing the same LLVM, gtest,
# nlohmann/json and wsv headers again (gtest and the analyzer's headers take 1.7 s each to
# parse, nlohmann/json 2.4 s). Each target names the headers most of its files include; every
# file of it then reads them from one precompiled copy. WSV_PCH=OFF builds without, which
# shows a file that forgot an include the precompiled header supplied.
option(WSV_PCH "Precompile the headers most files of a target include (a faster fresh build)" ON)
function(wsv_precompile_headers target)
  if(WSV_PCH)
    target_precompile_headers(${target} PRIVATE ${ARGN})
  endif()
endfunction()
