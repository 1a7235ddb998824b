# ctest helper for measure_no_gpu: runs EXE on SPEC and passes only when it exits non-zero, writes
# no result, and prints exactly one line to stderr that names the missing GPU and the fix.
include(${CMAKE_CURRENT_LIST_DIR}/../../cmake/check_one_line_failure.cmake)
file(REMOVE ${OUT})
execute_process(COMMAND ${EXE} --kernel ${SPEC} --out ${OUT}
  RESULT_VARIABLE code OUTPUT_VARIABLE out ERROR_VARIABLE err)
check_one_line_failure("${code}" "${err}"
  "^tilesim-measure: no usable CUDA device: .*; run tilesim-measure on a machine with an NVIDIA GPU"
  "name the cause and the fix" ${OUT})
