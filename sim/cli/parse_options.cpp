#include "sim/cli/commands.h"

#include "models/spec_error.h"

#include <boost/program_options.hpp>

#include <algorithm>
#include <iostream>
#include <vector>

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
  // No option of tilesim means anything as '': an empty --out, --order or --kernel must not
  // quietly mean "not given" (no output, the spec's order, the default problem).
  for (const auto& [name, value] : vm) {
    if (value.defaulted()) continue;
    const auto* text = boost::any_cast<std::string>(&value.value());
    const auto* list = boost::any_cast<std::vector<std::string>>(&value.value());
    if ((text && text->empty()) || (list && std::find(list->begin(), list->end(), "") != list->end()))
      throw SpecError("--" + name, "''", "is empty", "give a value or leave the option out");
  }
  po::notify(vm);
  return true;
}

void require_nonempty(const char* option, const std::string& value, const std::string& fix) {
  if (value.empty()) throw SpecError(option, "''", "is empty", fix);
}

} // namespace tilesim::cli
