// A JSON document that remembers where every value came from, so that each manifest error can
// be reported at the offending value (SPEC §2). Parsing is RapidJSON's iterative SAX reader:
// no recursion, so 1,000,000 nested arrays cannot overflow the stack.
#pragma once

#include "nkicc/support/diagnostics.h"

#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace nkicc {

struct JsonValue {
  enum class Kind { Null, Bool, Number, String, Array, Object };

  Kind kind = Kind::Null;
  bool boolean = false;
  /// String: the decoded UTF-8 text. Number: the literal as written (`-1.5e3`), so that nkicc
  /// decides itself between int64 and double.
  std::string text;
  std::vector<JsonValue> items;
  std::vector<std::pair<JsonValue, JsonValue>> members; ///< (key as String, value), in document order
  SourceLoc loc;                                        ///< the first byte of the value

  const JsonValue *find(std::string_view key) const;
  bool is_integer_literal() const; ///< a Number written without fraction or exponent
};

struct JsonParseOptions {
  /// Deeper documents are rejected with a located error; a description file is ~6 levels deep.
  std::size_t max_depth = 256;
  /// The diagnostic id of syntax errors: which kind of file was malformed.
  std::string error_id = "manifest-json";
};

/// Parses a registered buffer. Syntax errors, duplicate keys, invalid UTF-8 and lone
/// surrogates are reported at their position; the result is empty when any was found.
std::optional<JsonValue> parse_json(const SourceManager &sources, FileId file, DiagnosticEngine &diags,
                                    const JsonParseOptions &options = {});

/// The message for a number literal nkicc cannot hold: an integer beyond int64, or a float
/// beyond the double range (JSON has no infinity, so nkicc does not read one as inf).
std::string number_out_of_range_message(std::string_view literal);

/// The kind's name for messages: `null`, `a boolean`, `a number`, `a string`, `an array`, `an object`.
const char *json_kind_name(JsonValue::Kind kind);

} // namespace nkicc
