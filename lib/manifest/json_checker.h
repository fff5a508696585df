// The checks shared by nkicc's JSON formats (the kernel description file, SPEC §2, and the
// internal-kernel registry, SPEC §7): each error is located at the offending value and starts
// with its JSON pointer, and a file's errors are reported in document order.
#pragma once

#include "nkicc/manifest/json_document.h"
#include "nkicc/support/py_constant.h"

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace nkicc {

/// A JSON pointer (RFC 6901) built lazily: a chain of keys and indices on the stack, rendered
/// only when an error needs it, so that checking a valid file allocates no pointer strings.
struct JsonPointer {
  const JsonPointer *parent = nullptr;
  std::string_view key;
  std::size_t index = 0;
  bool is_index = false;

  /// `/calls/0/kernel`; the root is "". Keys are user text, shown escaped and cut.
  std::string str() const;
};

inline JsonPointer pointer_append(const JsonPointer &base, std::string_view key) { return {&base, key, 0, false}; }
inline JsonPointer pointer_append(const JsonPointer &base, std::size_t index) { return {&base, {}, index, true}; }

/// `'a', 'b', 'c'`: accepted names (nkicc's own words, not user text) for messages.
std::string quote_list(const std::vector<std::string> &names);

/// `message; did you mean 'best'?` when a candidate is close to `word`, else `message`.
std::string with_suggestion(std::string message, std::string_view word, const std::vector<std::string> &candidates);

/// The field-by-field checks of one JSON file. Errors are collected and reported by flush(),
/// sorted by offset: every value nests inside its object, so sorting orders the fields of each
/// object and keeps array items in their order, which is how the user reads the file.
class JsonChecker {
public:
  JsonChecker(DiagnosticEngine &diags, const char *id) : diags_(diags), id_(id) {}

protected:
  /// `pointer: message` at `v` (just `message` at the root).
  void error(const JsonValue &v, const JsonPointer &ptr, std::string message);
  /// Records an error built by the caller (an I/O error, say); reported by flush().
  void report(Diagnostic d);
  /// Reports the collected errors in document order; false when there were any.
  bool flush();
  bool failed() const { return failed_; }

  bool expect(const JsonValue &v, JsonValue::Kind kind, const JsonPointer &ptr, std::string_view what);
  /// Reports each member of `obj` not in `accepted`, with a suggestion; false when any was found.
  bool check_fields(const JsonValue &obj, const JsonPointer &ptr, const std::vector<std::string> &accepted);
  std::optional<std::string> string(const JsonValue &v, const JsonPointer &ptr);
  std::optional<std::int64_t> integer(const JsonValue &v, const JsonPointer &ptr);
  /// A JSON value as the Python constant it stands for (SPEC §2 and §7): an array is a list,
  /// `{"tuple": [...]}` a tuple, `{"float": "inf"}` a float, `{"function": ...}` and
  /// `{"object": ..., "fields"?: ...}` named references (PyConstant::Kind::Ref), any other
  /// object a dict in document order.
  std::optional<PyConstant> constant(const JsonValue &v, const JsonPointer &ptr);
  /// The description's special object forms ({"float": ...}, {"function": ...}, {"object": ...});
  /// nullopt when `v` is none of them, an empty inner optional when it is one with an error.
  std::optional<std::optional<PyConstant>> special_form(const JsonValue &v, const JsonPointer &ptr);

  DiagnosticEngine &diags_;
  const char *id_;

private:
  std::vector<Diagnostic> pending_; ///< this file's errors, reported in document order by flush()
  bool failed_ = false;
};

} // namespace nkicc
