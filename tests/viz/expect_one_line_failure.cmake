# ctest helper for viewer_bad_input: `tilesim-viewer --screenshot` on a bad result must exit
# non-zero, write no PNG, and print exactly one stderr line naming the file.
include(${CMAKE_CURRENT_LIST_DIR}/../../cmake/check_one_line_failure.cmake)
set(out ${CMAKE_CURRENT_BINARY_DIR}/viewer_bad_input.png)
file(REMOVE ${out})
execute_process(COMMAND ${EXE} --screenshot ${out} ${BAD} RESULT_VARIABLE code ERROR_VARIABLE err)
check_one_line_failure("${code}" "${err}" "^tilesim-viewer: ${BAD}: " "name the file first" ${out})
