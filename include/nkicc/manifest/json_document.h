// A JSON document that remembers where every value came from, so that each manifest error can
// be reported at the offending value (SPEC §2). Parsing is RapidJSON's iterative SAX reader:
// no recursion, so 1,000,000 nested arrays cannot overflow the stack.
//
// The document is compact: a value is a 24-byte node, the items of an array and the members of
// an object are contiguous runs of nodes, and the text of a string or number is a view, into
// the source buffer when the string has no escape (the SourceManager keeps the buffer alive),
// else into the document's own storage. A JsonDocument owns the nodes and the decoded text;
// its values live as long as it does.
#pragma once

#include "nkicc/support/diagnostics.h"

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace nkicc {

struct JsonMember;

class JsonValue {
public:
  enum class Kind : std::uint8_t { Null, Bool, Number, String, Array, Object };

  Kind kind() const { return kind_; }
  bool boolean() const { return kind_ == Kind::Bool && boolean_; } ///< a Bool's value (false for other kinds)
  /// String: the decoded UTF-8 text. Number: the literal as written (`-1.5e3`), so that nkicc
  /// decides itself between int64 and double. Empty for other kinds.
  std::string_view text() const {
    return is_text() ? std::string_view(static_cast<const char *>(data_), size_) : std::string_view();
  }
  /// The items of an Array (empty for other kinds).
  std::span<const JsonValue> items() const {
    return kind_ == Kind::Array ? std::span<const JsonValue>(static_cast<const JsonValue *>(data_), size_)
                                : std::span<const JsonValue>();
  }
  /// The (key as String, value) members of an Object, in document order (empty for other kinds).
  std::span<const JsonMember> members() const;
  SourceLoc loc() const { return {file_, offset_}; } ///< the first byte of the value

  const JsonValue *find(std::string_view key) const;
  /// A Number written without fraction or exponent (decided when it was read).
  bool is_integer_literal() const { return kind_ == Kind::Number && boolean_; }

private:
  template <class> friend class BasicJsonBuilder;

  bool is_text() const { return kind_ == Kind::String || kind_ == Kind::Number; }

  const void *data_ = nullptr; ///< text chars, first JsonValue item, or first JsonMember
  std::uint32_t size_ = 0;     ///< text length, item count or member count
  std::uint32_t offset_ = 0;
  FileId file_ = kNoFile;
  Kind kind_ = Kind::Null;
  bool boolean_ = false; ///< Bool: its value; Number: whether it is an integer literal
};

struct JsonMember {
  JsonValue key; ///< a String
  JsonValue value;
};

inline std::span<const JsonMember> JsonValue::members() const {
  return kind_ == Kind::Object ? std::span<const JsonMember>(static_cast<const JsonMember *>(data_), size_)
                               : std::span<const JsonMember>();
}

/// A parsed document: owns the storage its values point into (nodes and unescaped text); the
/// source buffer itself stays with the SourceManager, which must outlive the document.
class JsonDocument {
public:
  const JsonValue &root() const { return root_; }

private:
  template <class> friend class BasicJsonBuilder;
  JsonValue root_;
  std::vector<std::unique_ptr<std::byte[]>> blocks_;
};

struct JsonParseOptions {
  /// Deeper documents are rejected with a located error; a description file is ~6 levels deep.
  std::size_t max_depth = 256;
  /// The diagnostic id of syntax errors: which kind of file was malformed.
  std::string error_id = "manifest-json";
  /// parse_json_stream(): check that the bytes are UTF-8. A second pass over bytes a first one
  /// checked (the same digest) skips it.
  bool validate_utf8 = true;
};

/// The bytes of a file parsed as a stream (parse_json_stream).
struct JsonStreamResult {
  JsonDocument document;    ///< the file without the split array's items (the array is empty)
  std::size_t items = 0;    ///< how many items the split array had
  std::uint64_t digest = 0; ///< XXH3-64 of the bytes, so that a second pass can tell the file changed
  std::uint64_t size = 0;
  bool split_last = false; ///< the split array was the root object's last member
};

/// Items of the split array that repeat an earlier one byte for byte, skipped unparsed
/// (parse_json_stream). A build graph calls the same few variants over and over, often with the
/// same text: what its bytes gave the first time stands for every copy.
struct SplitRepeats {
  /// Whether to look at the next object item at all (finding its end costs a scan of its bytes,
  /// which pays only when items do repeat); always when not given.
  std::function<bool()> look;
  /// Sees the bytes of each object item of the split array before it is parsed, from its `{` to
  /// its `}`: an id when the caller holds what those bytes gave before, and then the item is not
  /// parsed (nor handed to on_item): `repeat` gets the id and the item's offset in its place.
  std::function<std::optional<std::uint32_t>(std::string_view text)> known;
  std::function<bool(std::uint32_t id, std::uint32_t offset)> repeat;
  /// Longer items are parsed, not looked at: the window would have to hold them whole.
  std::size_t max_item_bytes = 16 * 1024;
};

/// Parses the regular file at `path` (registered, maybe lazily, as `file`) through a window of
/// fixed size, so that memory does not grow with the file: each item of the root object's array
/// member `split_key` is handed to `on_item` as soon as it is complete, then let go (its storage
/// is reused). Nullopt when the file cannot be read, is not a single JSON value, or `on_item`
/// returned false. `on_start`, when given, sees the root object as far as it is read when the split
/// array starts (its members so far, then the split array, empty): a reader that needs what comes
/// before the items can begin with it, and learns from `split_last` whether anything followed. Problems found by the
/// builder (duplicate keys, depth) are reported, the others are not: the caller reads such a file whole with
/// parse_json(), which says what is wrong.
std::optional<JsonStreamResult>
parse_json_stream(const std::string &path, FileId file, DiagnosticEngine &diags, std::string_view split_key,
                  const std::function<bool(const JsonValue &)> &on_item, const JsonParseOptions &options = {},
                  const std::function<bool(const JsonValue &)> &on_start = {}, const SplitRepeats *repeats = nullptr);

/// Parses a registered buffer. Syntax errors, duplicate keys, invalid UTF-8 and lone
/// surrogates are reported at their position; the result is empty when any was found.
std::optional<JsonDocument> parse_json(const SourceManager &sources, FileId file, DiagnosticEngine &diags,
                                       const JsonParseOptions &options = {});

/// The message for a number literal nkicc cannot hold: an integer beyond int64, or a float
/// beyond the double range (JSON has no infinity, so nkicc does not read one as inf).
std::string number_out_of_range_message(std::string_view literal);

/// The kind's name for messages: `null`, `a boolean`, `a number`, `a string`, `an array`, `an object`.
const char *json_kind_name(JsonValue::Kind kind);

} // namespace nkicc
