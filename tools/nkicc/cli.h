// The command line of SPEC §1. CLI11 types stay in this folder: the library sees only plain
// option structs.
#pragma once

namespace nkicc::tool {

/// Parses the command line, runs the subcommand, prints diagnostics and returns the exit code.
int run(int argc, char **argv);

} // namespace nkicc::tool
