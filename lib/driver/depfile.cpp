#include "nkicc/driver/depfile.h"

#include <filesystem>
#include <set>

namespace nkicc {

std::string make_escape(std::string_view path) {
  std::string out;
  for (char c : path) {
    if (c == ' ' || c == '#' || c == ':' || c == '\\')
      out += '\\';
    if (c == '$')
      out += '$';
    out += c;
  }
  return out;
}

std::string normalize_path(std::string_view path) {
  if (path.empty())
    return {};
  std::string normal = std::filesystem::path(path).lexically_normal().string();
  // lexically_normal() keeps a trailing separator ("a/b/.." -> "a/"); a depfile names files.
  if (normal.size() > 1 && normal.back() == '/')
    normal.pop_back();
  return normal.empty() ? "." : normal;
}

std::string depfile_text(const DepfileRule &rule) {
  std::string text;
  for (std::size_t i = 0; i < rule.targets.size(); ++i) {
    if (i)
      text += ' ';
    text += rule.targets[i];
  }
  text += ':';
  std::vector<std::string> listed;
  std::set<std::string> seen;
  for (const std::string &p : rule.prerequisites) {
    std::string normal = normalize_path(p);
    if (normal.empty() || !seen.insert(normal).second)
      continue;
    text += " \\\n  " + make_escape(normal);
    listed.push_back(std::move(normal));
  }
  text += '\n';
  if (!rule.phony)
    return text;
  std::string main = normalize_path(rule.main_file);
  for (const std::string &p : listed)
    if (p != main)
      text += "\n" + make_escape(p) + ":\n";
  return text;
}

} // namespace nkicc
