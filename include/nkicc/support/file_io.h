// Reading inputs and writing outputs. Outputs are written atomically (SPEC §1): a temporary
// file in the target folder, renamed over the target only when the whole output is written.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace nkicc {

/// Largest input nkicc reads: source positions are 32-bit offsets.
inline constexpr std::size_t kMaxInputBytes = std::size_t{1} << 31;

/// Reads a whole file ("-" reads standard input). On failure returns nullopt and sets `error`
/// to a lowercase reason (`no such file or directory`, `is a directory`, `file is larger than 2 GiB`).
std::optional<std::string> read_file(const std::string &path, std::string &error);

/// Writes `data` to `path` through a temporary file in the same folder, then renames it into
/// place. On failure the temporary file is removed, an existing `path` is left untouched and
/// `error` says why. "-" writes to standard output.
bool write_file_atomically(const std::string &path, std::string_view data, std::string &error);

/// Whether two paths name the same file: the same device and inode when both exist (so links
/// and `./x` match), else the same lexically normalized absolute path. "-" is no file.
bool same_file(const std::string &a, const std::string &b);

/// The folder part of a path ("" for a bare file name), and the stem of its file name.
std::string parent_dir(std::string_view path);
std::string file_stem(std::string_view path);
/// `dir/rel` unless `rel` is absolute or `dir` is empty.
std::string join_path(std::string_view dir, std::string_view rel);

} // namespace nkicc
