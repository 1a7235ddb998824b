#include "models/output_file.h"

#include "models/spec_error.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <vector>

namespace tilesim {
namespace {

// Removes the temporary file unless it was renamed into place.
class TemporaryFile {
public:
  explicit TemporaryFile(std::string name) : name_(std::move(name)) {}
  ~TemporaryFile() {
    if (fd_ >= 0) ::close(fd_);
    if (!kept_) ::unlink(name_.c_str());
  }
  TemporaryFile(const TemporaryFile&) = delete;
  TemporaryFile& operator=(const TemporaryFile&) = delete;

  int open() {
    std::vector<char> pattern(name_.begin(), name_.end());
    pattern.push_back('\0');
    fd_ = ::mkstemp(pattern.data());
    if (fd_ >= 0) name_.assign(pattern.data());
    else kept_ = true; // nothing was created
    return fd_;
  }
  int close() {
    const int rc = ::close(fd_);
    fd_ = -1;
    return rc;
  }
  int fd() const { return fd_; }
  const std::string& name() const { return name_; }
  void keep() { kept_ = true; }

private:
  std::string name_;
  int fd_ = -1;
  bool kept_ = false;
};

mode_t creation_mode() {
  const mode_t mask = ::umask(0);
  ::umask(mask);
  return 0666 & ~mask;
}

std::string folder_of(const std::string& path) {
  const std::filesystem::path target(path);
  return target.has_parent_path() ? target.parent_path().string() : ".";
}

} // namespace

void check_output_path(const std::string& path, const std::string& option) {
  const auto fail = [&](const std::string& problem, const std::string& fix) { throw SpecError(path, option, problem, fix); };
  if (path.empty()) fail("names no file", "give a file path");
  struct stat st {};
  if (::stat(path.c_str(), &st) == 0 && !S_ISREG(st.st_mode))
    fail(S_ISDIR(st.st_mode) ? "is a folder" : "is not a regular file (a device, FIFO or socket)",
         "give the path of a file to write");
  if (::stat(folder_of(path).c_str(), &st) != 0 || !S_ISDIR(st.st_mode))
    fail("cannot create a file in its folder: " + folder_of(path) + " is not a folder", "create the folder first");
}

void write_output_file(const std::string& path, std::string_view content, const std::string& option) {
  const auto failed = [&](const char* step) {
    throw SpecError(path, option, std::string("cannot ") + step + ": " + std::strerror(errno),
                    "check the folder exists, is writable and has space");
  };
  check_output_path(path, option);
  const std::filesystem::path target(path);
  const std::string folder = folder_of(path);
  TemporaryFile temporary(folder + "/." + target.filename().string() + ".tmp-XXXXXX");
  if (temporary.open() < 0) failed("create a file in its folder");
  for (size_t written = 0; written < content.size();) {
    const ssize_t n = ::write(temporary.fd(), content.data() + written, content.size() - written);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) failed("write");
    written += static_cast<size_t>(n);
  }
  if (::fchmod(temporary.fd(), creation_mode()) != 0) failed("set the file's permissions");
  if (::fsync(temporary.fd()) != 0) failed("flush to disk");
  if (temporary.close() != 0) failed("close");
  if (::rename(temporary.name().c_str(), path.c_str()) != 0) failed("rename the finished file into place");
  temporary.keep();
}

} // namespace tilesim
