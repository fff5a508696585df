// Owns every buffer nkicc reads (description files, kernel sources) and maps byte offsets to
// line:column positions for diagnostics.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace nkicc {

/// Identifies a buffer registered with a SourceManager. 0 is "no file".
using FileId = std::uint32_t;
inline constexpr FileId kNoFile = 0;

/// A position in a registered buffer: a byte offset.
struct SourceLoc {
  FileId file = kNoFile;
  std::uint32_t offset = 0;

  bool valid() const { return file != kNoFile; }
};

/// A half-open byte range [begin, end) in one buffer.
struct SourceRange {
  SourceLoc begin;
  std::uint32_t end = 0;
};

/// 1-based line and column; the column counts bytes, as C compilers do.
struct LineCol {
  std::uint32_t line = 0;
  std::uint32_t column = 0;
};

/// Holds buffers and answers line:column queries in O(log lines) after a one-time scan.
class SourceManager {
public:
  SourceManager();
  ~SourceManager();
  SourceManager(const SourceManager &) = delete;
  SourceManager &operator=(const SourceManager &) = delete;

  /// Registers a buffer under a display name (the path as the user wrote it).
  FileId add_buffer(std::string name, std::string contents);
  /// Registers a file by its path without reading it: its contents are read on first use (a
  /// diagnostic's line). A description read as a stream (manifest/description_stream.h) is
  /// registered so, and is read whole only when a diagnostic points into it.
  FileId add_lazy_file(std::string name);

  std::string_view name(FileId file) const;
  std::string_view contents(FileId file) const;
  std::size_t file_count() const { return files_.size(); }

  /// Line and column of a byte offset; an offset past the end maps to the last position.
  LineCol line_col(SourceLoc loc) const;

  /// The text of a 1-based line, without its line terminator.
  std::string_view line_text(FileId file, std::uint32_t line) const;

private:
  struct File;
  const File &file(FileId id) const;
  std::vector<std::unique_ptr<File>> files_;
};

} // namespace nkicc
