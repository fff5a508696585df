#include "nkicc/support/source_manager.h"

#include "nkicc/support/file_io.h"

#include <algorithm>

namespace nkicc {

struct SourceManager::File {
  std::string name;
  mutable std::string contents;
  mutable bool lazy = false; ///< contents not read yet (add_lazy_file)
  mutable bool indexed = false;
  mutable std::vector<std::uint32_t> starts; ///< offset where each line begins, built on first use

  void load() const {
    if (!lazy)
      return;
    lazy = false;
    std::string why;
    if (auto text = read_file(name, why))
      contents = std::move(*text);
  }

  void index() const {
    if (indexed)
      return;
    load();
    starts.clear();
    starts.push_back(0);
    for (std::uint32_t i = 0; i < contents.size(); ++i) {
      // '\r\n' and a lone '\r' end a line too, as Python and JSON readers treat them.
      char c = contents[i];
      if (c == '\n') {
        starts.push_back(i + 1);
      } else if (c == '\r') {
        if (i + 1 < contents.size() && contents[i + 1] == '\n')
          ++i;
        starts.push_back(i + 1);
      }
    }
    indexed = true;
  }
};

SourceManager::SourceManager() = default;
SourceManager::~SourceManager() = default;

FileId SourceManager::add_buffer(std::string name, std::string contents) {
  auto f = std::make_unique<File>();
  f->name = std::move(name);
  f->contents = std::move(contents);
  files_.push_back(std::move(f));
  return static_cast<FileId>(files_.size());
}

FileId SourceManager::add_lazy_file(std::string name) {
  FileId id = add_buffer(std::move(name), {});
  files_.back()->lazy = true;
  return id;
}

const SourceManager::File &SourceManager::file(FileId id) const { return *files_.at(id - 1); }

std::string_view SourceManager::name(FileId id) const { return file(id).name; }
std::string_view SourceManager::contents(FileId id) const {
  const File &f = file(id);
  f.load();
  return f.contents;
}

LineCol SourceManager::line_col(SourceLoc loc) const {
  const File &f = file(loc.file);
  f.index();
  std::uint32_t offset = std::min<std::uint32_t>(loc.offset, static_cast<std::uint32_t>(f.contents.size()));
  auto it = std::upper_bound(f.starts.begin(), f.starts.end(), offset);
  auto line = static_cast<std::uint32_t>(it - f.starts.begin());
  return {line, offset - f.starts[line - 1] + 1};
}

std::string_view SourceManager::line_text(FileId id, std::uint32_t line) const {
  const File &f = file(id);
  f.index();
  if (line == 0 || line > f.starts.size())
    return {};
  std::uint32_t begin = f.starts[line - 1];
  std::uint32_t end = line < f.starts.size() ? f.starts[line] : static_cast<std::uint32_t>(f.contents.size());
  std::string_view text(f.contents.data() + begin, end - begin);
  while (!text.empty() && (text.back() == '\n' || text.back() == '\r'))
    text.remove_suffix(1);
  return text;
}

} // namespace nkicc
