// Making a run's result visible: the output at -o (or on stdout) and its depfile, so that a
// failure of either leaves neither behind (SPEC §1, §10).
#pragma once

#include "options.h"

#include "nkicc/driver/driver.h"
#include "nkicc/support/file_io.h"

#include <optional>
#include <string>

namespace nkicc::tool {

/// Mistakes in -o and --depfile that need no run: --depfile without a target for its rule,
/// --depfile naming the -o file.
std::optional<UsageError> check_output_options(const OutputOptions &options);

/// Checks that neither -o nor the depfile would overwrite an input of the run, then writes the
/// depfile and the output. `file` and `sink` hold what a streamed output has written already;
/// `main_input` is the file the run was asked to process ("" for none), which gets no phony
/// rule. Failures are reported into `diags`.
void deliver(const DriverOutput &out, const OutputOptions &options, const std::string &main_input, AtomicOutput &file,
             TextSink &sink, std::string &write_error, DiagnosticEngine &diags);

} // namespace nkicc::tool
