// The process-wide symbol table behind python::Symbol.
#include "nkicc/python/symbol.h"

#include "nkicc/support/intern_table.h"

namespace nkicc::python {

namespace {

InternTable &table() {
  static InternTable *t = new InternTable("Python names"); // never destroyed: Symbols may outlive static destructors
  return *t;
}

} // namespace

Symbol Symbol::intern(std::string_view name) { return Symbol(table().intern(name)); }

std::optional<Symbol> Symbol::find(std::string_view name) {
  if (std::optional<std::uint32_t> id = table().find(name))
    return Symbol(*id);
  return std::nullopt;
}

std::string_view Symbol::name() const { return table().text(id_); }

} // namespace nkicc::python
