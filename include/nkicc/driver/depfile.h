// Makefile depfiles (`--depfile`, SPEC §1, §11): one rule from the output to every file a run read,
// in the syntax make and ninja read, with gcc's -MT (name the target) and -MP (a phony rule per
// prerequisite, so that make survives a prerequisite that was renamed or removed).
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace nkicc {

struct DepfileRule {
  /// The rule's targets, written as given: `--depfile-target` values are make syntax already
  /// (gcc's -MT), and the caller escapes an output path with make_escape().
  std::vector<std::string> targets;
  /// Files read, in reading order: normalized, escaped, each listed once.
  std::vector<std::string> prerequisites;
  /// The file the run was asked to process (the description, or the kernel file); it gets no
  /// phony rule, as gcc's -MP leaves out the main source: the Makefile names it itself.
  std::string main_file;
  bool phony = false; ///< `--depfile-phony`: an empty rule `PREREQUISITE:` for every other prerequisite
};

/// `TARGET...: \` then one prerequisite per line, then (phony) one empty rule per prerequisite.
std::string depfile_text(const DepfileRule &rule);

/// A path in make's syntax: spaces, `#`, `:` and `\` escaped with a backslash, `$` as `$$`.
std::string make_escape(std::string_view path);

/// The path with `.` and `dir/..` segments removed, lexically (`desc/../kernels/x.py` ->
/// `kernels/x.py`); a relative path stays relative, and leading `..` segments are kept.
std::string normalize_path(std::string_view path);

} // namespace nkicc
