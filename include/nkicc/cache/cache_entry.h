// One persistent cache entry: everything a hit needs to stand in for a trace (the BIR kernel,
// input and output names, returned tensors, aliases, constants, grid, MAC count, collectives),
// in one file, so that a reader sees either a whole entry or none (reference/cache.md: entries
// published one file at a time gave Triton users mixed entries).
//
// The file, all integers little-endian (ccache's layout: header, payload, trailing checksum):
//
//   entry       := header payload checksum
//   header      := magic version nkicc_version key payload_size components
//   magic       := "NKICACHE"                        8 bytes
//   version     := u32                               kCacheEntryFormatVersion
//   nkicc_version := str                             the nkicc that wrote the entry
//   key         := str                               64 hex digits: the entry's persistent key
//   payload_size := u64                              bytes of payload
//   components  := u32 (str name, str digest)*       the key's components, to explain misses
//   payload     := u8 kind                           0 external, 1 internal
//                  str kernel                        func_name
//                  str function_name                 the traced function's name
//                  str specialization_key            Python repr (external calls)
//                  strs input_names  strs output_names
//                  u32 (str name, dims shape, str dtype)*   returned tensors
//                  u8 result_is_sequence
//                  u32 (u64 input, u64 output)*      operand-output aliases
//                  u32 (str name, value)*            constant values
//                  dims grid
//                  u8 platform_target_is_fallback
//                  i64 matmul_mac_count  u8 has_collectives
//                  bytes bir                         the BIR kernel blob, byte for byte
//   checksum    := 16 bytes                          XXH3-128 of header and payload (big-endian
//                                                    canonical form)
//   str := bytes := u64 length, that many bytes;  strs := u32 str*;  dims := u32 i64*
//   value       := u8 tag, then: 0 None | 1 Bool u8 | 2 Int i64 | 3 Float f64 bits |
//                  4 Str str | 5 Tuple u32 value* | 6 List u32 value* | 7 Dict u32 (str value)* |
//                  8 Ref str u8 call u32 (str value)*   (a named reference, PyConstant::Kind::Ref)
//
// XXH3 is a checksum, not a digest: it catches torn and flipped bytes at memory speed, so a
// hit costs little more than reading the file. Downloads from a remote are checked against
// their SHA-256 as well (nkicc/cache/remote_store.h).
#pragma once

#include "nkicc/support/owned_bytes.h"
#include "nkicc/trace/tracer.h"

#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace nkicc {

inline constexpr std::string_view kCacheEntryMagic = "NKICACHE";

struct CacheEntry {
  std::string key;
  std::vector<std::pair<std::string, std::string>> components; ///< (name, digest)
  bool internal = false;
  std::string kernel;
  OwnedBytes bir; ///< the BIR kernel blob
  /// The assembled result; its `function` holds only the name, input and output names, MAC
  /// count and has_collectives (a hit has no IR).
  trace::KernelTrace trace;
};

/// The entry's file bytes.
std::string serialize_entry(const CacheEntry &entry);

/// Why an entry's bytes were refused.
enum class EntryDefect {
  None,
  Foreign,   ///< not an nkicc entry (wrong magic), or a format this nkicc does not read
  Truncated, ///< shorter than its header says, or empty
  Corrupt,   ///< the checksum does not match, or the payload does not parse
  WrongKey,  ///< a whole entry, but of another key
};

/// The entry in `bytes`, checked (magic, version, sizes, checksum, and the key when
/// `expected_key` is not empty); nullopt with `defect` and a lowercase `why` otherwise.
std::optional<CacheEntry> parse_entry(std::string_view bytes, std::string_view expected_key, EntryDefect &defect,
                                      std::string &why);
/// The same, keeping the BIR blob in `bytes`' own buffer (a hit then copies it no more).
std::optional<CacheEntry> parse_entry_buffer(const OwnedBytes &bytes, std::string_view expected_key,
                                             EntryDefect &defect, std::string &why);

/// Only the header's key and components, read from the start of an entry without checking its
/// checksum (to explain a miss against the nearest entry); false when the header is malformed.
bool parse_entry_header(std::string_view bytes, std::string &key,
                        std::vector<std::pair<std::string, std::string>> &components);

} // namespace nkicc
