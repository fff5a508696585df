// Checking one registry.json (the format is in nkicc/registry/registry.h and docs/registry.md):
// every error located at its value, with its JSON pointer, all of a file's errors reported.
#pragma once

#include "nkicc/manifest/json_document.h"
#include "nkicc/registry/registry.h"

#include <optional>
#include <string>
#include <vector>

namespace nkicc::registry {

/// The entries of the registry.json of `search.back()`, in document order; nullopt when any
/// error was found (all reported). `search` is the search path from its first folder up to and
/// including the registry's own folder: where the entries' files are looked up, first match wins.
std::optional<std::vector<RegistryEntry>> check_registry(const JsonValue &root, const std::vector<std::string> &search,
                                                         DiagnosticEngine &diags);

} // namespace nkicc::registry
