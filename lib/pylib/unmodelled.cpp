// The tables of real names (generated: scripts/gen_real_names.py writes real_names.inc) and the
// placeholders for those nkicc does not model.
#include "unmodelled.h"

#include "nkicc/trace/pylib.h"

#include <algorithm>
#include <vector>

namespace nkicc::trace {

namespace pylib {

namespace {
struct Table {
  std::string_view owner;
  std::string_view display;
  std::vector<std::string_view> names;
};
const std::vector<Table> &tables() {
  static const std::vector<Table> all = {
#include "real_names.inc"
  };
  return all;
}
} // namespace

bool RealNames::has(std::string_view name) const { return std::binary_search(names.begin(), names.end(), name); }

const RealNames &real_names(std::string_view owner) {
  static const std::vector<RealNames> views = [] {
    std::vector<RealNames> out;
    for (const Table &t : tables())
      out.push_back({t.owner, t.display, t.names});
    return out;
  }();
  static const RealNames none{"", "", {}};
  for (const RealNames &r : views)
    if (r.owner == owner)
      return r;
  return none;
}

Value unmodelled_value(std::string display_name) {
  return Value::object(std::make_shared<OpaqueObject>(std::move(display_name), true));
}

std::optional<Value> unmodelled_attribute(Interpreter &, std::string_view owner, std::string_view name) {
  const RealNames &names = real_names(owner);
  if (!names.has(name))
    return std::nullopt;
  return unmodelled_value(std::string(names.display) + std::string(name));
}

void raise_unmodelled(std::string_view what, std::string_view detail) {
  std::string message = "nkicc does not model '" + std::string(what) + "'";
  if (!detail.empty())
    message += " " + std::string(detail);
  raise_error("unmodelled", message + " yet");
}

void add_unmodelled_builtins(Scope &builtins) {
  for (std::string_view name : real_names("builtins").names)
    if (!builtins.find_local(name))
      builtins.set(name, unmodelled_value(std::string(name)));
}

} // namespace pylib

LibraryModule::LibraryModule(std::string name, std::string display, std::span<const std::string_view> real_names)
    : ModuleObject(std::move(name)), display_(std::move(display)), real_names_(real_names.begin(), real_names.end()) {
  std::sort(real_names_.begin(), real_names_.end());
}

std::optional<Value> LibraryModule::get_attr(Interpreter &interp, std::string_view attr) {
  if (std::optional<Value> v = ModuleObject::get_attr(interp, attr))
    return v;
  if (std::binary_search(real_names_.begin(), real_names_.end(), attr))
    return pylib::unmodelled_value(display_ + std::string(attr));
  return std::nullopt;
}

std::shared_ptr<LibraryModule> make_library_module(std::string name, std::string_view table) {
  const pylib::RealNames &names = pylib::real_names(table);
  return std::make_shared<LibraryModule>(std::move(name), std::string(names.display), names.names);
}

} // namespace nkicc::trace
