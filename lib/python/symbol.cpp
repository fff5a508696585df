// The process-wide symbol table behind python::Symbol.
#include "nkicc/python/symbol.h"

#include <deque>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

namespace nkicc::python {

namespace {

struct SymbolTable {
  std::mutex mutex;
  std::deque<std::string> texts;       ///< a deque never moves its elements
  std::vector<std::string_view> names; ///< by id; names[0] is the empty name
  std::unordered_map<std::string_view, std::uint32_t> ids;

  SymbolTable() {
    names.emplace_back();
    ids.emplace(std::string_view(), 0);
  }
};

SymbolTable &table() {
  static SymbolTable *t = new SymbolTable; // never destroyed: Symbols may outlive static destructors
  return *t;
}

} // namespace

Symbol Symbol::intern(std::string_view name) {
  SymbolTable &t = table();
  std::lock_guard lock(t.mutex);
  if (auto it = t.ids.find(name); it != t.ids.end())
    return Symbol(it->second);
  const std::string &text = t.texts.emplace_back(name);
  auto id = static_cast<std::uint32_t>(t.names.size());
  t.names.push_back(text);
  t.ids.emplace(text, id);
  return Symbol(id);
}

std::optional<Symbol> Symbol::find(std::string_view name) {
  SymbolTable &t = table();
  std::lock_guard lock(t.mutex);
  if (auto it = t.ids.find(name); it != t.ids.end())
    return Symbol(it->second);
  return std::nullopt;
}

std::string_view Symbol::name() const {
  SymbolTable &t = table();
  std::lock_guard lock(t.mutex);
  return t.names[id_];
}

} // namespace nkicc::python
