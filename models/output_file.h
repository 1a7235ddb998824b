// Writing outputs: every file tilesim writes (results, validation reports, traces) goes through
// write_output_file, so a full disk, a missing folder or a device path is one clear line and a
// non-zero exit, never a silent exit 0 or a half-written file.
#pragma once

#include <string>
#include <string_view>

namespace tilesim {

// Writes `content` to a temporary file in `path`'s folder and renames it over `path` once every
// write, the flush to disk and the close succeeded; on failure `path` is left as it was and the
// temporary removed. Refuses a `path` that exists and is not a regular file (/dev/full, a
// folder, a FIFO). Throws SpecError naming `path`, `option` (the flag that named it: "--out")
// and the cause.
void write_output_file(const std::string& path, std::string_view content, const std::string& option);

// The checks write_output_file makes before writing, made up front by commands that run long
// before they write (a simulation, a measurement): a folder that does not exist, or a path that
// is a device, folder or FIFO, is refused before the work instead of after it.
void check_output_path(const std::string& path, const std::string& option);

} // namespace tilesim
