#include "output.h"

#include "nkicc/driver/depfile.h"

#include <fmt/format.h>

#include <cstdio>
#include <unistd.h>

namespace nkicc::tool {

namespace {

/// The input of the run that `path` names, if any: every file the run read is registered with
/// the source manager under its path (standard input and the command line are no files).
std::optional<std::string> input_at(const std::string &path, const SourceManager &sources) {
  for (FileId f = 1; f <= sources.file_count(); ++f) {
    std::string input(sources.name(f));
    if (input.empty() || input.front() == '<')
      continue;
    if (same_file(path, input))
      return input;
  }
  return std::nullopt;
}

/// Inputs are never modified (SPEC §10): reports `option PATH would overwrite the input file`.
bool refuse_input(std::string_view option, const std::string &path, const SourceManager &sources,
                  DiagnosticEngine &diags) {
  auto input = input_at(path, sources);
  if (!input)
    return false;
  diags.error({}, fmt::format("{} {} would overwrite the input file{}", option, escape_for_message(path, 256),
                              *input == path ? "" : " " + quote_for_message(*input, 256)));
  return true;
}

std::string depfile_for(const DriverOutput &out, const OutputOptions &options, const std::string &main_input) {
  DepfileRule rule;
  if (!options.depfile_targets.empty())
    rule.targets = options.depfile_targets;
  else
    rule.targets.push_back(make_escape(normalize_path(options.output)));
  rule.prerequisites = out.dependencies;
  rule.main_file = main_input == "-" ? "" : main_input;
  rule.phony = options.depfile_phony;
  return depfile_text(rule);
}

} // namespace

std::optional<UsageError> check_output_options(const OutputOptions &options) {
  if (options.depfile.empty()) {
    if (options.depfile_phony)
      return UsageError{"--depfile-phony needs --depfile: it adds rules to the depfile"};
    if (!options.depfile_targets.empty())
      return UsageError{"--depfile-target needs --depfile: it names the depfile rule's target"};
    return std::nullopt;
  }
  if (options.output == "-" && options.depfile_targets.empty())
    return UsageError{"--depfile needs -o or --depfile-target: a depfile names the output it describes"};
  if (options.depfile == "-")
    return UsageError{"--depfile needs a file: standard output carries the result"};
  if (options.output != "-" && same_file(options.depfile, options.output))
    return UsageError{
        fmt::format("--depfile {} would overwrite the -o output", escape_for_message(options.depfile, 256))};
  return std::nullopt;
}

void deliver(const DriverOutput &out, const OutputOptions &options, const std::string &main_input, AtomicOutput &file,
             TextSink &sink, std::string &write_error, DiagnosticEngine &diags) {
  const SourceManager &sources = diags.sources();
  bool has_depfile = !options.depfile.empty();
  bool refused = refuse_input("-o", options.output, sources, diags);
  refused = (has_depfile && refuse_input("--depfile", options.depfile, sources, diags)) || refused;
  if (refused) {
    file.discard();
    return;
  }
  const std::string &path = options.output;
  std::string shown = path == "-" ? "<stdout>" : path;
  if (path == "-" && out.binary && ::isatty(STDOUT_FILENO)) {
    diags.io_error("<stdout>", "refusing to write a binary blob to a terminal; use -o FILE or --emit=bir-text");
    return;
  }
  // The depfile is written first and made visible just before the output, so that on stdout
  // (which cannot be taken back) a depfile failure comes before any byte of the result.
  std::optional<AtomicOutput> depfile;
  std::string depfile_error;
  if (has_depfile) {
    depfile.emplace(options.depfile);
    if (!depfile->write(depfile_for(out, options, main_input), depfile_error)) {
      file.discard();
      depfile->discard();
      diags.io_error(options.depfile, "cannot write depfile: " + depfile_error);
      return;
    }
  }
  bool ok = true;
  if (out.streamed)
    ok = sink.flush();
  else if (out.blob.empty())
    ok = file.write(out.bytes, write_error);
  else
    for (const OwnedBytes &piece : out.blob.pieces())
      if (!(ok = file.write(piece.bytes(), write_error)))
        break;
  if (!ok) {
    if (out.streamed)
      write_error = sink.error();
    file.discard();
    if (depfile)
      depfile->discard();
    diags.io_error(shown, "cannot write output: " + write_error);
    return;
  }
  if (depfile && !depfile->commit(depfile_error)) {
    file.discard();
    diags.io_error(options.depfile, "cannot write depfile: " + depfile_error);
    return;
  }
  if (!file.commit(write_error)) {
    file.discard();
    // The depfile describes an output that is not there: it goes too.
    if (has_depfile)
      std::remove(options.depfile.c_str());
    diags.io_error(shown, "cannot write output: " + write_error);
  }
}

} // namespace nkicc::tool
