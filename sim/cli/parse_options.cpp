#include "sim/cli/commands.h"

#include "models/spec_error.h"

#include <boost/program_options.hpp>

#include <iostream>

namespace tilesim::cli {

bool parse_options(const Args& args, const boost::program_options::options_description& options,
                   const boost::program_options::positional_options_description& positional) {
  namespace po = boost::program_options;
  po::variables_map vm;
  po::store(po::command_line_parser(args).options(options).positional(positional).run(), vm);
  if (vm.count("help")) {
    std::cout << options;
    return false;
  }
  po::notify(vm);
  return true;
}

void require_nonempty(const char* option, const std::string& value, const std::string& fix) {
  if (value.empty()) throw SpecError(option, "''", "is empty", fix);
}

} // namespace tilesim::cli
