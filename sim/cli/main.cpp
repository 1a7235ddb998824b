// tilesim: what-if analysis of GEMM launch orders on simulated GPUs.
#include "sim/cli/commands.h"

#include "models/spec_error.h"

#include <boost/program_options/errors.hpp>

#include <nlohmann/json.hpp>

#include <filesystem>
#include <iostream>
#include <new>
#include <stdexcept>
#include <string>
#include <map>
#include <functional>

namespace {

const char* kUsage = R"(usage: tilesim <command> [options]   (tilesim <command> --help for its options)

commands:
  simulate   replay one kernel spec on one GPU profile; summary on stdout, full result with --out
  whatif     compare launch orders for a kernel (the built-in default problem without --kernel)
  gpus       list the GPU profiles and their headline figures
  compare    put a predicted result beside a measured one
  validate   simulate every measured configuration of a dataset and score the predictions
  fusion     a GEMM plus a separate element-wise epilogue kernel against the fused GEMM
)";

// An option's text echoed back may hold a newline; stderr gets one line.
std::string one_line(std::string text) {
  for (char& c : text)
    if (static_cast<unsigned char>(c) < 0x20) c = '?';
  return text;
}

} // namespace

int main(int argc, char** argv) {
  using namespace tilesim::cli;
  const std::map<std::string, std::function<int(const Args&)>> commands{
      {"simulate", simulate_command}, {"whatif", whatif_command},   {"gpus", gpus_command},
      {"compare", compare_command},   {"validate", validate_command}, {"fusion", fusion_command}};
  if (argc < 2 || std::string(argv[1]) == "--help" || std::string(argv[1]) == "-h") {
    std::cout << kUsage;
    return argc < 2 ? 2 : 0;
  }
  const auto it = commands.find(argv[1]);
  if (it == commands.end()) {
    std::cerr << "tilesim: unknown command '" << argv[1] << "'; run tilesim --help for the list\n";
    return 2;
  }
  try {
    return it->second(Args(argv + 2, argv + argc));
  } catch (const tilesim::SpecError& e) {
    std::cerr << "tilesim: " << e.what() << '\n';
  } catch (const boost::program_options::error& e) {
    std::cerr << "tilesim " << argv[1] << ": " << one_line(e.what()) << "; see tilesim " << argv[1] << " --help\n";
  } catch (const std::bad_alloc&) {
    std::cerr << "tilesim " << argv[1] << ": out of memory; use a smaller problem or fewer --threads\n";
  } catch (const std::filesystem::filesystem_error& e) {
    std::cerr << "tilesim " << argv[1] << ": " << e.path1().string() << ": " << e.code().message() << "; check the path\n";
  } catch (const std::ios_base::failure& e) {
    std::cerr << "tilesim " << argv[1] << ": reading or writing a file failed (" << e.code().message() << "); check the paths\n";
  } catch (const nlohmann::json::exception&) {
    // Loaders check every field's type first; this is a tilesim bug, told without the library's internals.
    std::cerr << "tilesim " << argv[1] << ": internal error: a JSON value had a type tilesim did not check; "
              << "please report it with the command and its input files\n";
  } catch (const std::logic_error&) {
    std::cerr << "tilesim " << argv[1] << ": internal error (a broken invariant); please report it with the command "
              << "and its input files\n";
  } catch (const std::exception& e) {
    std::cerr << "tilesim " << argv[1] << ": " << one_line(e.what()) << '\n';
  }
  return 1;
}
