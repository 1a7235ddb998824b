// The tilesim subcommands. Each parses its own options and returns the process exit code.
#pragma once

#include <boost/program_options/options_description.hpp>
#include <boost/program_options/positional_options.hpp>

#include <string>
#include <vector>

namespace tilesim::cli {

using Args = std::vector<std::string>;

int simulate_command(const Args& args);
int whatif_command(const Args& args);
int gpus_command(const Args& args);
int compare_command(const Args& args);
int validate_command(const Args& args);
int fusion_command(const Args& args);

// Parses `args` against `options` (and `positional`, if any) into the variables the options bind.
// Returns false after printing the options when --help was asked for. Throws SpecError for any
// option given as ''.
bool parse_options(const Args& args, const boost::program_options::options_description& options,
                   const boost::program_options::positional_options_description& positional = {});

// Refuses an empty `value` (parse_options already refuses any option given as '').
void require_nonempty(const char* option, const std::string& value, const std::string& fix);

// The shipped default problem (models/kernels/default.json).
std::string default_kernel_path();

} // namespace tilesim::cli
