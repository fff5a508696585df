// The collections module: deque, and the dict subclasses OrderedDict, defaultdict and Counter,
// which are dicts with a flavor (DictData::flavor) so that everything a dict does they do.
#pragma once

#include "methods.h"

namespace nkicc::trace::pylib {

/// A method of a dict subclass that plain dicts lack or do differently (`most_common`,
/// `move_to_end`, Counter's `update`), or null.
MethodImpl flavor_method(DictData::Flavor flavor, std::string_view name);
/// A data attribute of a dict subclass (`default_factory`), or nullopt.
std::optional<Value> flavor_attr(const Value &dict, std::string_view name);
/// The table of real names of a dict subclass, for "does not model" (`OrderedDict`).
std::string_view flavor_table(DictData::Flavor flavor);

/// The `collections` module.
std::shared_ptr<ModuleObject> make_collections_module(Interpreter &interp);

} // namespace nkicc::trace::pylib
