// The process-wide symbol table behind python::Symbol.
#include "nkicc/python/symbol.h"

#include <deque>
#include <memory>
#include <stdexcept>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

namespace nkicc::python {

namespace {

/// Names by id live in chunks that never move, so that name() reads one without the lock: an id
/// is handed out only after its name is stored, under the lock, and whoever holds a Symbol got it
/// from such a hand-out.
constexpr std::uint32_t kChunkBits = 12, kChunkSize = 1u << kChunkBits, kMaxChunks = 1u << 12;

struct SymbolTable {
  std::mutex mutex;
  std::deque<std::string> texts; ///< a deque never moves its elements
  std::unique_ptr<std::string_view[]> chunks[kMaxChunks];
  std::uint32_t count = 0;
  std::unordered_map<std::string_view, std::uint32_t> ids;

  SymbolTable() { add(std::string_view()); } // id 0 is the empty name

  std::uint32_t add(std::string_view text) {
    std::uint32_t id = count;
    if (id >> kChunkBits >= kMaxChunks)
      throw std::length_error("more than 16,777,216 distinct Python names");
    auto &chunk = chunks[id >> kChunkBits];
    if (!chunk)
      chunk = std::make_unique<std::string_view[]>(kChunkSize);
    chunk[id & (kChunkSize - 1)] = text;
    ids.emplace(text, id);
    ++count;
    return id;
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
  return Symbol(t.add(t.texts.emplace_back(name)));
}

std::optional<Symbol> Symbol::find(std::string_view name) {
  SymbolTable &t = table();
  std::lock_guard lock(t.mutex);
  if (auto it = t.ids.find(name); it != t.ids.end())
    return Symbol(it->second);
  return std::nullopt;
}

std::string_view Symbol::name() const { return table().chunks[id_ >> kChunkBits][id_ & (kChunkSize - 1)]; }

} // namespace nkicc::python
