// Interned identifiers: the parser interns every name it reads, so that the interpreter binds and
// looks up names by comparing two integers instead of two strings.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

namespace nkicc::python {

/// An interned identifier: two Symbols are equal exactly when their names are. The table is
/// process-wide (names from every parsed file and every name the NKI layer binds) and never
/// shrinks; the default Symbol is the empty name.
class Symbol {
public:
  constexpr Symbol() = default;

  /// The symbol of `name`, interned on first use.
  static Symbol intern(std::string_view name);
  /// The symbol of `name` if it was ever interned, else nullopt: a name never interned is
  /// bound nowhere, so lookups by string need not grow the table.
  static std::optional<Symbol> find(std::string_view name);

  /// The name; the text lives as long as the process.
  std::string_view name() const;
  std::uint32_t id() const { return id_; }

  friend bool operator==(Symbol a, Symbol b) { return a.id_ == b.id_; }
  friend bool operator!=(Symbol a, Symbol b) { return a.id_ != b.id_; }

private:
  explicit Symbol(std::uint32_t id) : id_(id) {}
  std::uint32_t id_ = 0;
};

} // namespace nkicc::python
