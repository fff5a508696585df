// The persistent cache's key (issue 14): what an entry must match to be reused by a later run,
// on another machine, or by another nkicc. It is kept apart from the seed's per-run key, which
// stays byte-identical to CPython's (SPEC §7) and holds neither the kernel's source nor
// nkicc's version, so it cannot outlive one run.
//
// A persistent key is a list of typed, named components, each standing for its value by the
// SHA-256 of that value (or of a file's contents), in this order:
//
//   format          the cache entry format version (kCacheEntryFormatVersion)
//   nkicc_version   NKICC_VERSION_STRING
//   nkicc_build     the running executable's GNU build-id (a rebuilt nkicc at the same version
//                   misses, as Triton keys on a hash of its own files)
//   target          the resolved platform target's name, and `(fallback)` when it was guessed
//   limits          the trace limits (--max-instructions): whether a trace succeeds depends on them
//   kind            `external` or `internal`
//   kernel          the external kernel's name, or the internal call's registry func_name
//   call            external: `func_name:specialization key`; internal: the seed's per-run key
//                   (the SHA-256 of the CPython key-components string)
//   registry_entry  internal only: the registry entry, canonical (how the op marshals into the
//                   entry function; its source's contents are a `file` component)
//   file NAME       each file the trace depends on, by its path relative to the description's
//                   folder (or `registry:` and its path in a registry folder), its digest the
//                   SHA-256 of its contents
//   source NAME     an inline source of the description, by its name, likewise
//
// key := hex(SHA-256(concat(name "\0" digest "\n" for each component)))
//
// Names are delimited and typed (ccache: `-I -O2` and `-I-O2` must differ), so no value can
// pose as another component. The key is what names an entry's file, so file names are 64 hex
// digits whatever the kernel's name (reference/cache.md, failure mode 12).
#pragma once

#include "nkicc/manifest/manifest.h"
#include "nkicc/registry/registry.h"

#include <string>
#include <string_view>
#include <vector>

namespace nkicc {

/// The version of the entry format (nkicc/cache/cache_entry.h) and of the key's layout.
inline constexpr std::uint32_t kCacheEntryFormatVersion = 1;

/// One named input of a persistent key.
struct KeyComponent {
  std::string name;   ///< `format`, `call`, `file kernels/mm.py`, ...
  std::string value;  ///< what it stands for, for `nkicc key --explain` (a file: its path)
  std::string digest; ///< 64 lowercase hex digits
};

/// A file a call's trace read, and the SHA-256 of its contents.
struct KeyFile {
  std::string name; ///< its stable name: the path as written, an inline source's name
  std::string path; ///< the path nkicc opened (empty for inline code), shown by --explain
  std::string digest;
};

/// What every key of a run shares besides nkicc itself.
struct KeyContext {
  std::string target; ///< the target's name (`trn2`)
  bool target_is_fallback = false;
  std::uint64_t max_instructions = 0;
};

struct PersistentKey {
  std::string kernel; ///< the `kernel` component's value: misses are explained against its entries
  std::vector<KeyComponent> components;
  std::string key; ///< 64 lowercase hex digits
};

/// The identity of this nkicc build: `gnu-build-id:<hex>` from the executable's own build-id
/// note (the linker computes it over the whole output, so any rebuild that changes a byte of
/// code changes it; reading it costs microseconds), else `sha256:<hex>` of /proc/self/exe.
/// Computed once per process.
const std::string &nkicc_build_identity();

/// The persistent key of an external call: its per-run specialization key, the files its
/// trace depends on and the build.
PersistentKey external_persistent_key(std::string_view func_name, std::string_view specialization_key,
                                      const KeyContext &context, const std::vector<KeyFile> &files);

/// The persistent key of an internal call: the seed's per-run key, the registry entry that
/// resolves it, the files its trace depends on and the build.
PersistentKey internal_persistent_key(const InternalCall &call, std::string_view per_run_key,
                                      const RegistryEntry &entry, const KeyContext &context,
                                      const std::vector<KeyFile> &files);

/// The registry entry as the key hashes it: func_name, entry function, argument marshalling
/// and result count, one field a line; the source appears only as its file name (its
/// contents are a `file` component, and its folder differs between installs).
std::string registry_entry_text(const RegistryEntry &entry);

/// The key of a component list, as above.
std::string persistent_key_of(const std::vector<KeyComponent> &components);

/// The names of the components in which two component lists differ (present in one only, or
/// with different digests), in the order of `a` then the rest of `b`.
std::vector<std::string> differing_components(const std::vector<std::pair<std::string, std::string>> &a,
                                              const std::vector<std::pair<std::string, std::string>> &b);

} // namespace nkicc
