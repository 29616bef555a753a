# libFuzzer targets. Every target is declared with berth_fuzz_target so that they are all built
# the same way, built in every clang build (so that they never rot) and listed for
# scripts/fuzz, which runs each one against its seed corpus in tests/fuzz/corpus/<NAME>/.
#
#   berth_fuzz_target(NAME SOURCES file.cc ... [LINK library ...])
#
# SOURCES are the fuzz entry point and the sources under test: they are compiled into the
# target so that they carry libFuzzer's coverage instrumentation (code only reached through a
# LINK library is exercised but not steered towards). Everything is built with AddressSanitizer
# and UndefinedBehaviorSanitizer, and undefined behaviour aborts like a crash.
#
# libFuzzer ships with clang only, so the option defaults to ON with clang and is ignored with
# any other compiler.
if(CMAKE_CXX_COMPILER_ID MATCHES "Clang")
  option(BERTH_FUZZ "Build the libFuzzer targets" ON)
else()
  set(BERTH_FUZZ OFF)
endif()

set(BERTH_FUZZ_FLAGS -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined
                     -fno-omit-frame-pointer)

function(berth_fuzz_target name)
  if(NOT BERTH_FUZZ)
    return()
  endif()
  cmake_parse_arguments(PARSE_ARGV 1 FUZZ "" "" "SOURCES;LINK")
  if(NOT FUZZ_SOURCES)
    message(FATAL_ERROR "berth_fuzz_target(${name}): SOURCES is required")
  endif()
  add_executable(${name} ${FUZZ_SOURCES})
  target_compile_options(${name} PRIVATE ${BERTH_FUZZ_FLAGS})
  target_link_options(${name} PRIVATE ${BERTH_FUZZ_FLAGS})
  target_link_libraries(${name} PRIVATE ${FUZZ_LINK})
  set_property(GLOBAL APPEND PROPERTY BERTH_FUZZ_TARGETS ${name})
endfunction()

# Called once after every directory is added: the `fuzz_targets` target builds them all, and
# fuzz_targets.txt lists "NAME PATH" per line for scripts/fuzz.
function(berth_fuzz_finish)
  if(NOT BERTH_FUZZ)
    return()
  endif()
  get_property(targets GLOBAL PROPERTY BERTH_FUZZ_TARGETS)
  set(lines "")
  foreach(target ${targets})
    string(APPEND lines "${target} $<TARGET_FILE:${target}>\n")
  endforeach()
  file(GENERATE OUTPUT ${CMAKE_BINARY_DIR}/fuzz_targets.txt CONTENT "${lines}")
  add_custom_target(fuzz_targets DEPENDS ${targets})
endfunction()
