#include "nkicc/manifest/json_document.h"
#include "nkicc/support/utf8.h"

#include <fmt/format.h>
#include <rapidjson/error/en.h>
#include <rapidjson/memorystream.h>
#include <rapidjson/reader.h>

#define XXH_STATIC_LINKING_ONLY // XXH3_state_t on the stack
#include <xxhash.h>

#include <fcntl.h>
#include <unistd.h>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <new>
#include <set>
#include <utility>

namespace nkicc {

const JsonValue *JsonValue::find(std::string_view key) const {
  for (const JsonMember &m : members())
    if (m.key.text() == key)
      return &m.value;
  return nullptr;
}

const char *json_kind_name(JsonValue::Kind kind) {
  switch (kind) {
  case JsonValue::Kind::Null:
    return "null";
  case JsonValue::Kind::Bool:
    return "a boolean";
  case JsonValue::Kind::Number:
    return "a number";
  case JsonValue::Kind::String:
    return "a string";
  case JsonValue::Kind::Array:
    return "an array";
  case JsonValue::Kind::Object:
    return "an object";
  }
  return "a value";
}

std::string number_out_of_range_message(std::string_view literal) {
  std::string shown = escape_for_message(literal, 32);
  if (literal.find_first_of(".eE") == std::string_view::npos)
    return fmt::format("integer {} does not fit in 64 bits", shown);
  // Python's json module would read such a literal as inf; RFC 8259 JSON has no infinity.
  return fmt::format("number {} is out of the range of a 64-bit float (JSON has no infinity)", shown);
}

namespace {

// The first lone surrogate (U+D800..U+DFFF, written as a \u escape and encoded by RapidJSON as
// CESU-style bytes ED A0..BF xx) in a decoded string, or 0. Python would accept it, then fail
// to encode the cache key, so nkicc rejects it up front.
unsigned lone_surrogate(std::string_view s) {
  // memchr finds the lead byte at memory speed; most strings have none.
  for (std::size_t i = 0; i + 2 < s.size(); ++i) {
    const void *at = std::memchr(s.data() + i, 0xED, s.size() - 2 - i);
    if (!at)
      return 0;
    i = static_cast<std::size_t>(static_cast<const char *>(at) - s.data());
    auto b1 = static_cast<unsigned char>(s[i + 1]);
    if (b1 >= 0xA0)
      return 0xD000u | ((b1 & 0x3Fu) << 6) | (static_cast<unsigned char>(s[i + 2]) & 0x3Fu);
  }
  return 0;
}

} // namespace

/// The whole registered buffer as a builder's stream: strings may point into it.
class MemoryWindow : public rapidjson::MemoryStream {
public:
  static constexpr bool kStable = true;
  explicit MemoryWindow(std::string_view text) : rapidjson::MemoryStream(text.data(), text.size()), text_(text) {}
  std::string_view window() const { return text_; }
  std::size_t window_base() const { return 0; }
  void keep_from(std::size_t) {}

private:
  std::string_view text_;
};

namespace {

/// Whether a byte can change where a JSON value ends: a quote, a backslash or a bracket.
inline bool is_special(char c) { return c == '"' || c == '\\' || c == '{' || c == '}' || c == '[' || c == ']'; }

/// Bit k set when byte k of the sixteen at `p` is_special().
inline unsigned special_bytes(const char *p) {
#if defined(__SSE2__)
  __m128i v = _mm_loadu_si128(reinterpret_cast<const __m128i *>(p));
  // `[` `{` and `]` `}` differ only in bit 0x20.
  __m128i folded = _mm_or_si128(v, _mm_set1_epi8(0x20));
  __m128i hit = _mm_or_si128(
      _mm_or_si128(_mm_cmpeq_epi8(v, _mm_set1_epi8('"')), _mm_cmpeq_epi8(v, _mm_set1_epi8('\\'))),
      _mm_or_si128(_mm_cmpeq_epi8(folded, _mm_set1_epi8('{')), _mm_cmpeq_epi8(folded, _mm_set1_epi8('}'))));
  return static_cast<unsigned>(_mm_movemask_epi8(hit));
#else
  unsigned mask = 0;
  for (unsigned k = 0; k < 16; ++k)
    mask |= is_special(p[k]) ? 1u << k : 0u;
  return mask;
#endif
}

/// Bit k set when byte k of the sixteen at `p` ends a run of plain string characters: a quote,
/// a backslash or a control character.
inline unsigned string_stop_bytes(const char *p) {
#if defined(__SSE2__)
  __m128i v = _mm_loadu_si128(reinterpret_cast<const __m128i *>(p));
  __m128i control = _mm_cmpeq_epi8(_mm_max_epu8(v, _mm_set1_epi8(0x1F)), _mm_set1_epi8(0x1F));
  __m128i hit = _mm_or_si128(
      _mm_or_si128(_mm_cmpeq_epi8(v, _mm_set1_epi8('"')), _mm_cmpeq_epi8(v, _mm_set1_epi8('\\'))), control);
  return static_cast<unsigned>(_mm_movemask_epi8(hit));
#else
  unsigned mask = 0;
  for (unsigned k = 0; k < 16; ++k) {
    auto c = static_cast<unsigned char>(p[k]);
    mask |= c == '"' || c == '\\' || c < 0x20 ? 1u << k : 0u;
  }
  return mask;
#endif
}

/// The first byte from `p` on, before `end`, that ends a run of plain string characters (a
/// quote, a backslash or a control character), or `end`.
inline const char *plain_run_end(const char *p, const char *end) {
  while (end - p >= 16) {
    if (unsigned mask = string_stop_bytes(p))
      return p + __builtin_ctz(mask);
    p += 16;
  }
  while (p < end) {
    auto c = static_cast<unsigned char>(*p);
    if (c == '"' || c == '\\' || c < 0x20)
      return p;
    ++p;
  }
  return end;
}

/// The value of four hex digits at `p`, or -1.
inline long hex4(const char *p) {
  long value = 0;
  for (int k = 0; k < 4; ++k) {
    auto c = static_cast<unsigned char>(p[k]);
    int digit = c >= '0' && c <= '9'   ? c - '0'
                : c >= 'a' && c <= 'f' ? c - 'a' + 10
                : c >= 'A' && c <= 'F' ? c - 'A' + 10
                                       : -1;
    if (digit < 0)
      return -1;
    value = value * 16 + digit;
  }
  return value;
}

/// Decodes the inside of a JSON string from the start of `text` for as long as it is plain
/// characters or well-formed escapes wholly within `text` (`\"`, `\\`, `\/`, `\b`, `\f`, `\n`,
/// `\r`, `\t`, `\uXXXX` outside the surrogates, and a pair of them that is a surrogate pair),
/// handing the decoded bytes to `put(bytes, n)` in runs; returns how many bytes of `text` it
/// read. It stops before anything else (the closing quote, a control character, any other
/// escape, an escape cut by the end of `text`), which the caller reads its own way: what it
/// decodes is what RapidJSON's ParseStringToStream would, byte for byte.
template <class Put> std::size_t string_run(std::string_view text, Put &&put) {
  const char *begin = text.data(), *p = begin, *end = begin + text.size();
  for (;;) {
    const char *run = p;
    p = plain_run_end(p, end);
    if (p > run)
      put(run, static_cast<std::size_t>(p - run));
    if (end - p < 2 || *p != '\\')
      return static_cast<std::size_t>(p - begin);
    char simple = 0;
    switch (p[1]) {
    case '"':
      simple = '"';
      break;
    case '\\':
      simple = '\\';
      break;
    case '/':
      simple = '/';
      break;
    case 'b':
      simple = '\b';
      break;
    case 'f':
      simple = '\f';
      break;
    case 'n':
      simple = '\n';
      break;
    case 'r':
      simple = '\r';
      break;
    case 't':
      simple = '\t';
      break;
    case 'u':
      break;
    default:
      return static_cast<std::size_t>(p - begin);
    }
    if (simple) {
      put(&simple, 1);
      p += 2;
      continue;
    }
    if (end - p < 6)
      return static_cast<std::size_t>(p - begin);
    long code = hex4(p + 2);
    std::size_t length = 6;
    if (code < 0 || (code >= 0xDC00 && code <= 0xDFFF))
      return static_cast<std::size_t>(p - begin);
    if (code >= 0xD800 && code <= 0xDBFF) {
      long low = end - p >= 12 && p[6] == '\\' && p[7] == 'u' ? hex4(p + 8) : -1;
      if (low < 0xDC00 || low > 0xDFFF)
        return static_cast<std::size_t>(p - begin);
      code = (((code - 0xD800) << 10) | (low - 0xDC00)) + 0x10000;
      length = 12;
    }
    char bytes[4];
    put(bytes, encode_utf8(static_cast<char32_t>(code), bytes));
    p += length;
  }
}

/// The length of the JSON number at the start of `text` when RapidJSON would read exactly those
/// bytes without an error: `-`, then `0` or up to 300 digits, then maybe `.` and digits, then
/// maybe `e`/`E`, a sign and one or two digits, followed within `text` by a byte that cannot
/// continue it. 0 otherwise (malformed, cut by the end of `text`, or long enough that RapidJSON
/// may call it too big), and the caller lets RapidJSON read it.
std::size_t plain_number(std::string_view text) {
  const char *begin = text.data(), *p = begin, *end = begin + text.size();
  auto digit = [&](const char *q) { return q < end && *q >= '0' && *q <= '9'; };
  auto digits = [&](const char *q) {
    while (digit(q))
      ++q;
    return q;
  };
  if (p < end && *p == '-')
    ++p;
  if (!digit(p))
    return 0;
  if (*p == '0') {
    ++p;
  } else {
    const char *q = digits(p);
    if (q - p > 300) // RapidJSON calls an integer part past about 308 digits too big
      return 0;
    p = q;
  }
  if (p < end && *p == '.') {
    const char *q = digits(p + 1);
    if (q == p + 1)
      return 0;
    p = q;
  }
  if (p < end && (*p == 'e' || *p == 'E')) {
    const char *q = p + 1;
    if (q < end && (*q == '+' || *q == '-'))
      ++q;
    const char *r = digits(q);
    if (r == q || r - q > 2) // no digit is an error; RapidJSON bounds an exponent's value
      return 0;
    p = r;
  }
  if (p == end) // the number may go on past the window
    return 0;
  return static_cast<std::size_t>(p - begin);
}

/// The length of the JSON string at the start of `text` (from its opening quote through its
/// closing one) when it has no escape and no control character and a byte follows it within
/// `text`; 0 otherwise, and the caller lets RapidJSON read it.
std::size_t plain_string(std::string_view text) {
  const char *begin = text.data(), *end = begin + text.size();
  const char *p = plain_run_end(begin + 1, end);
  if (end - p < 2 || *p != '"')
    return 0;
  return static_cast<std::size_t>(p + 1 - begin);
}

} // namespace

/// A file read through a window for RapidJSON: the bytes from the last offset the builder still
/// needs (keep_from) to the end of what was read. The window is refilled a chunk at a time when
/// the reader reaches its end, so it holds a few chunks however large the file is; a single
/// token larger than that (a long inline source) makes it grow to hold the token.
class ChunkedFileStream {
public:
  using Ch = char;
  static constexpr bool kStable = false;
  /// Under malloc's mmap threshold, so that the second pass's window reuses the first one's pages
  /// (on this machine a page's first touch costs more than reading it); the buffer is not
  /// zero-filled either, for the same reason.
  static constexpr std::size_t kChunk = 32 * 1024;

  /// `validate`: check that the bytes are UTF-8 (the reader itself does not).
  ChunkedFileStream(int fd, bool validate) : fd_(fd), validate_(validate) {
    XXH3_64bits_reset(&hash_);
    refill();
  }

  Ch Peek() const { return buffer_[pos_]; }
  Ch Take() {
    Ch c = buffer_[pos_];
    if (pos_ < len_ && ++pos_ == len_)
      refill();
    return c;
  }
  std::size_t Tell() const { return base_ + pos_; }
  // Only in-situ parsing writes to a stream; nkicc never parses in situ.
  Ch *PutBegin() { return nullptr; }
  void Put(Ch) {}
  void Flush() {}
  std::size_t PutEnd(Ch *) { return 0; }

  std::string_view window() const { return {buffer_.get(), len_}; }

  /// The bytes from the reading position to the end of the window (string_run() and
  /// plain_number() read them).
  std::string_view rest() const { return {buffer_.get() + pos_, len_ - pos_}; }
  void skip(std::size_t n) {
    pos_ += n;
    if (pos_ == len_)
      refill();
  }
  std::size_t window_base() const { return base_; }
  void keep_from(std::size_t offset) { keep_ = offset; }

  /// The offset of the `}` that closes the object whose `{` is at the reading position, reading
  /// on as far as needed, or nullopt when it does not close within `max_bytes` (or the file
  /// ends first). Strings are skipped by their quotes and escapes; nothing else is checked: the
  /// caller compares the bytes with an item it parsed before (SplitRepeats).
  std::optional<std::size_t> object_end(std::size_t max_bytes) {
    std::size_t depth = 0, i = pos_;
    std::size_t escaped = SIZE_MAX; // the byte after a backslash in a string
    bool in_string = false;
    // One byte that can change the state: a quote, a backslash or a bracket. True at the `}`
    // that closes the object.
    auto visit = [&](std::size_t k) {
      char c = buffer_[k];
      if (k == escaped)
        return false;
      if (in_string) {
        if (c == '\\')
          escaped = k + 1;
        else if (c == '"')
          in_string = false;
        return false;
      }
      if (c == '"')
        in_string = true;
      else if (c == '{' || c == '[')
        ++depth;
      else if (c == '}' || c == ']')
        return --depth == 0;
      return false;
    };
    for (;;) {
      if (i + 16 <= len_) {
        // Sixteen bytes at a time: most are none of those.
        for (unsigned mask = special_bytes(buffer_.get() + i); mask; mask &= mask - 1) {
          std::size_t k = i + static_cast<std::size_t>(__builtin_ctz(mask));
          if (visit(k))
            return k + 1 - pos_ <= max_bytes ? std::optional<std::size_t>(base_ + k) : std::nullopt;
        }
        i += 16;
      } else if (i < len_) {
        if (is_special(buffer_[i]) && visit(i))
          return i + 1 - pos_ <= max_bytes ? std::optional<std::size_t>(base_ + i) : std::nullopt;
        ++i;
      } else {
        if (eof_ || i - pos_ >= max_bytes)
          return std::nullopt;
        std::size_t from = pos_;
        read_more(); // may move the window: positions stay relative to the reading position
        i = pos_ + (i - from);
        if (escaped != SIZE_MAX)
          escaped = pos_ + (escaped - from);
      }
    }
  }

  /// The next Take() returns the `{` at the reading position and moves on to `close`, the offset
  /// object_end() gave: RapidJSON then reads an empty object, `{}`, in place of the item. The
  /// window is made to end after the `{`, so that the Take() runs into refill(), which jumps;
  /// Take() itself stays as it is.
  void jump_on_take(std::size_t close) {
    jump_to_ = close;
    jump_len_ = len_;
    len_ = pos_ + 1;
  }

  bool at_end() const { return pos_ == len_ && eof_; }
  bool failed() const { return failed_ || invalid_; }
  std::uint64_t digest() const { return XXH3_64bits_digest(&hash_); }
  std::uint64_t size() const { return read_; }

private:
  void refill() {
    if (jump_len_) {
      len_ = std::exchange(jump_len_, 0);
      pos_ = jump_to_ - base_;
      return;
    }
    read_more();
  }

  /// Drops what the builder no longer needs and reads the next chunk after the window's end.
  void read_more() {
    if (eof_)
      return;
    // Drop what the builder no longer needs, then read the next chunk behind what is left.
    std::size_t drop = std::min(keep_ > base_ ? keep_ - base_ : 0, pos_);
    if (drop) {
      std::memmove(buffer_.get(), buffer_.get() + drop, len_ - drop);
      base_ += drop;
      pos_ -= drop;
      len_ -= drop;
    }
    if (capacity_ < len_ + kChunk + 1) {
      std::size_t capacity = std::max(2 * capacity_, len_ + kChunk + 1);
      std::unique_ptr<char[]> grown(new char[capacity]);
      if (len_)
        std::memcpy(grown.get(), buffer_.get(), len_);
      buffer_ = std::move(grown);
      capacity_ = capacity;
    }
    for (;;) {
      ssize_t n = ::read(fd_, buffer_.get() + len_, kChunk);
      if (n < 0 && errno == EINTR)
        continue;
      if (n <= 0) {
        failed_ = n < 0;
        eof_ = true;
        break;
      }
      XXH3_64bits_update(&hash_, buffer_.get() + len_, static_cast<std::size_t>(n));
      len_ += static_cast<std::size_t>(n);
      read_ += static_cast<std::size_t>(n);
      break;
    }
    buffer_[len_] = '\0';
    if (validate_)
      validate();
  }

  /// Checks the bytes read since the last call as UTF-8, in bulk (RapidJSON's own check goes a
  /// character at a time): a sequence cut by the end of the window waits for the next chunk.
  void validate() {
    std::string_view text(buffer_.get(), len_);
    // Bytes already checked may have left the window (a drop keeps from the builder's mark).
    std::size_t i = validated_ > base_ ? validated_ - base_ : 0;
    while (i < text.size()) {
      // Runs of ASCII, eight bytes at a time.
      while (i + 8 <= text.size()) {
        std::uint64_t word;
        std::memcpy(&word, text.data() + i, 8);
        if (word & 0x8080808080808080ull)
          break;
        i += 8;
      }
      if (i >= text.size())
        break;
      auto lead = static_cast<unsigned char>(text[i]);
      if (lead < 0x80) {
        ++i;
        continue;
      }
      std::size_t need = lead >= 0xF0 ? 4 : lead >= 0xE0 ? 3 : 2;
      if (i + need > text.size() && !eof_)
        break;
      std::size_t n = utf8_sequence_length(text, i);
      if (n == 0) {
        invalid_ = true;
        break;
      }
      i += n;
    }
    validated_ = base_ + i;
    if (eof_ && validated_ < base_ + text.size())
      invalid_ = true;
  }

  int fd_;
  std::unique_ptr<char[]> buffer_;
  std::size_t capacity_ = 0;
  std::size_t base_ = 0; ///< the file offset of buffer_[0]
  std::size_t pos_ = 0, len_ = 0, keep_ = 0, read_ = 0;
  bool eof_ = false, failed_ = false;
  bool validate_;
  bool invalid_ = false;
  std::size_t validated_ = 0;              ///< the file offset up to which the bytes are known UTF-8
  std::size_t jump_to_ = 0, jump_len_ = 0; ///< jump_on_take(): where to, and the window's real length
  XXH3_state_t hash_{};
};

/// A ChunkedFileStream seen through another type, so that RapidJSON's own ParseNumber and
/// ParseString can be instantiated for it beside the specializations for ChunkedFileStream
/// below, which read what they can from the window and leave the rest to them.
struct ChunkedFileStreamRef {
  using Ch = char;
  ChunkedFileStream &s;
  Ch Peek() const { return s.Peek(); }
  Ch Take() { return s.Take(); }
  std::size_t Tell() const { return s.Tell(); }
  Ch *PutBegin() { return nullptr; }
  void Put(Ch) {}
  void Flush() {}
  std::size_t PutEnd(Ch *) { return 0; }
};

} // namespace nkicc

namespace rapidjson {
/// RapidJSON copies the characters of a string one at a time through its stream, and decodes an
/// escape with a call per character (RapidJSON's own fast paths exist only for its in-memory
/// streams, and only for plain characters). A file window hands over what nkicc::string_run()
/// decodes at once; what it leaves (the closing quote, a control character, a malformed or
/// unusual escape, the window's end) RapidJSON reads as before, with its own errors.
template <>
template <>
inline void GenericReader<UTF8<>, UTF8<>, CrtAllocator>::ScanCopyUnescapedString<
    nkicc::ChunkedFileStreamRef, GenericReader<UTF8<>, UTF8<>, CrtAllocator>::StackStream<char>>(
    nkicc::ChunkedFileStreamRef &ref, StackStream<char> &os) {
  nkicc::ChunkedFileStream &is = ref.s;
  std::string_view text = is.rest();
  std::size_t used = nkicc::string_run(
      text, [&os](const char *bytes, std::size_t n) { std::memcpy(os.Push(static_cast<SizeType>(n)), bytes, n); });
  if (used)
    is.skip(used);
}
} // namespace rapidjson

namespace nkicc {

/// Builds a JsonDocument from RapidJSON's SAX events. The values of the open arrays and
/// objects wait on one scratch stack (an object's as key, value, key, value...); when a
/// container ends, its values move as one contiguous run into the document's blocks, which
/// never move, so a finished value can point at its children.
///
/// `Stream` is the text: the whole buffer (MemoryWindow), whose bytes strings can point into,
/// or a window that slides over a file (ChunkedFileStream), whose bytes do not stay. With a
/// split key, each item of that array of the root object goes to a callback as soon as it is
/// complete and is then dropped, its storage reused: a streamed description holds one call.
template <class Stream> class BasicJsonBuilder {
public:
  BasicJsonBuilder(FileId file, DiagnosticEngine &diags, const JsonParseOptions &options, Stream &stream)
      : file_(file), diags_(diags), options_(options), stream_(stream) {}

  /// Hands each item of the root object's array `key` to `on_item` instead of keeping it.
  void split(std::string_view key, const std::function<bool(const JsonValue &)> *on_item,
             const std::function<bool(const JsonValue &)> *on_start = nullptr, const SplitRepeats *repeats = nullptr) {
    split_key_ = key;
    on_item_ = on_item;
    on_start_ = on_start;
    repeats_ = repeats;
  }

  /// Whether the split array was the root object's last member (0 when there was none).
  bool split_last() const {
    return split_member_ && !scratch_.empty() && scratch_.back().kind() == JsonValue::Kind::Object &&
           scratch_.back().members().size() == split_member_;
  }

  bool Null() { return scalar(JsonValue::Kind::Null, {}, false); }
  bool Bool(bool b) { return scalar(JsonValue::Kind::Bool, {}, b); }
  bool RawNumber(const char *s, rapidjson::SizeType n, bool) {
    // Whether it is an integer literal is decided here, once: the checks ask of every number.
    bool integer = true;
    for (rapidjson::SizeType k = 0; k < n; ++k)
      integer &= s[k] != '.' && s[k] != 'e' && s[k] != 'E';
    return scalar(JsonValue::Kind::Number, std::string_view(s, n), integer);
  }
  bool String(const char *s, rapidjson::SizeType n, bool) {
    return scalar(JsonValue::Kind::String, std::string_view(s, n), false);
  }
  // Unused with kParseNumbersAsStringsFlag, but the SAX interface requires them.
  bool Int(int) { return false; }
  bool Uint(unsigned) { return false; }
  bool Int64(std::int64_t) { return false; }
  bool Uint64(std::uint64_t) { return false; }
  bool Double(double) { return false; }

  bool Key(const char *s, rapidjson::SizeType n, bool) {
    JsonValue key = leaf(JsonValue::Kind::String, start_offset());
    if (!check_string(key, std::string_view(s, n)))
      return false;
    set_text(key, std::string_view(s, n));
    if (!insert_key(key.text())) {
      diags_.error(key.loc(), fmt::format("duplicate key {} in object", quote_for_message(key.text())),
                   options_.error_id);
      return false;
    }
    scratch_.push_back(key);
    mark();
    return true;
  }

  bool StartObject() { return start(JsonValue::Kind::Object); }
  bool StartArray() { return start(JsonValue::Kind::Array); }
  bool EndObject(rapidjson::SizeType) { return end(); }
  bool EndArray(rapidjson::SizeType) { return end(); }

  std::size_t split_items() const { return split_items_; }

  JsonDocument take_document() {
    doc_.root_ = scratch_.empty() ? JsonValue() : scratch_.back();
    scratch_.clear();
    return std::move(doc_);
  }

private:
  struct Frame {
    JsonValue::Kind kind;
    std::uint32_t offset;
    std::size_t first; ///< the index of its first value on the scratch stack
    std::unique_ptr<std::set<std::string_view, std::less<>>> keys; ///< made only once an object is large
    bool split = false;                                            ///< the items of this array go to on_item_ (split())
    std::optional<std::uint32_t> repeat; ///< an item skipped as a repeat (SplitRepeats): its id
  };

  /// Where the document's storage stood: what a split item allocates is given back after it.
  struct ArenaMark {
    std::size_t blocks = 0;
    std::byte *block = nullptr;
    std::size_t used = 0;
  };

  std::uint32_t start_offset() const {
    // The value starts at the first byte after the previous token that is not white space or
    // a separator: RapidJSON reports events after the token, so nkicc scans forward from the
    // end of the previous one.
    // The window holds every byte from last_end_ on (Stream::keep_from).
    std::string_view window = stream_.window();
    std::size_t base = stream_.window_base();
    std::size_t i = last_end_;
    while (i - base < window.size()) {
      char c = window[i - base];
      if (c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == ',' || c == ':')
        ++i;
      else
        break;
    }
    return static_cast<std::uint32_t>(i);
  }
  void mark() {
    last_end_ = stream_.Tell();
    stream_.keep_from(last_end_);
  }
  // RapidJSON's iterative parser calls Start*/End* before it takes the bracket.
  void mark_after_bracket() {
    last_end_ = stream_.Tell() + 1;
    stream_.keep_from(last_end_);
  }

  JsonValue leaf(JsonValue::Kind kind, std::uint32_t offset) const {
    JsonValue v;
    v.kind_ = kind;
    v.offset_ = offset;
    v.file_ = file_;
    return v;
  }

  /// Points a String or Number at its text: the source bytes when they are the text itself
  /// (a number, or a string without escapes), else a copy in the document.
  void set_text(JsonValue &v, std::string_view decoded) {
    std::size_t begin = v.offset_ + (v.kind_ == JsonValue::Kind::String ? 1 : 0);
    const char *data = nullptr;
    std::string_view text = stream_.window();
    if (Stream::kStable && begin <= text.size() && text.substr(begin, decoded.size()) == decoded) {
      data = text.data() + begin;
    } else {
      char *copy = static_cast<char *>(allocate(decoded.size(), 1));
      if (!decoded.empty())
        std::memcpy(copy, decoded.data(), decoded.size());
      data = copy;
    }
    v.data_ = data;
    v.size_ = static_cast<std::uint32_t>(decoded.size());
  }

  /// Records a key of the innermost object; false when the object has it already. Small
  /// objects are scanned, which allocates nothing; a large one gets a set so that a huge object
  /// stays O(n log n).
  bool insert_key(std::string_view key) {
    constexpr std::size_t kScanLimit = 16;
    Frame &frame = stack_.back();
    std::size_t count = (scratch_.size() - frame.first) / 2;
    if (count < kScanLimit) {
      for (std::size_t i = frame.first; i < scratch_.size(); i += 2)
        if (scratch_[i].text() == key)
          return false;
      return true;
    }
    if (!frame.keys) {
      frame.keys = std::make_unique<std::set<std::string_view, std::less<>>>();
      for (std::size_t i = frame.first; i < scratch_.size(); i += 2)
        frame.keys->insert(scratch_[i].text());
    }
    return frame.keys->insert(key).second;
  }

  bool check_string(const JsonValue &v, std::string_view decoded) {
    // RapidJSON reports a string once its closing quote is read. Every escape decodes to fewer
    // bytes than it is written with (`\n` two for one, `\ud800` six for three), so a string as
    // long as its source between the quotes has none; and only a `\u` escape can make a lone
    // surrogate (the bytes read are checked UTF-8). Most strings skip the scan.
    if (decoded.size() + 2 == stream_.Tell() - v.offset_)
      return true;
    if (unsigned cp = lone_surrogate(decoded)) {
      diags_.error(v.loc(),
                   fmt::format("string contains a lone surrogate \\u{:04x}, which is not valid Unicode text", cp),
                   options_.error_id);
      return false;
    }
    return true;
  }

  bool scalar(JsonValue::Kind kind, std::string_view decoded, bool b) {
    JsonValue v = leaf(kind, start_offset());
    v.boolean_ = b;
    if (kind == JsonValue::Kind::String && !check_string(v, decoded))
      return false;
    if (kind == JsonValue::Kind::String || kind == JsonValue::Kind::Number)
      set_text(v, decoded);
    mark();
    scratch_.push_back(v);
    return finish_value();
  }

  /// A value was pushed: an item of the split array goes to the callback and is let go.
  bool finish_value() {
    if (stack_.empty() || !stack_.back().split)
      return true;
    ++split_items_;
    bool go_on = (*on_item_)(scratch_.back());
    scratch_.pop_back();
    release(split_mark_);
    return go_on;
  }

  bool start(JsonValue::Kind kind) {
    std::uint32_t offset = start_offset();
    if (stack_.size() >= options_.max_depth) {
      diags_.error({file_, offset}, fmt::format("JSON nesting is deeper than {} levels", options_.max_depth),
                   options_.error_id);
      return false;
    }
    // The split array: the root object's member named split_key_ (its key is on top).
    bool split = on_item_ && kind == JsonValue::Kind::Array && stack_.size() == 1 &&
                 stack_[0].kind == JsonValue::Kind::Object && !scratch_.empty() && scratch_.size() > stack_[0].first &&
                 (scratch_.size() - stack_[0].first) % 2 == 1 && scratch_.back().text() == split_key_;
    if (split) {
      split_member_ = (scratch_.size() - stack_[0].first + 1) / 2;
      if (on_start_ && !(*on_start_)(partial_root(offset)))
        return false;
    }
    if constexpr (requires { stream_.object_end(std::size_t{}); })
      if (repeats_ && kind == JsonValue::Kind::Object && !stack_.empty() && stack_.back().split &&
          (!repeats_->look || repeats_->look()))
        if (std::optional<std::size_t> close = stream_.object_end(repeats_->max_item_bytes)) {
          std::size_t from = stream_.Tell(); // the `{`
          std::string_view text = stream_.window().substr(from - stream_.window_base(), *close + 1 - from);
          if (std::optional<std::uint32_t> id = repeats_->known(text)) {
            stack_.push_back({kind, offset, scratch_.size(), nullptr, false, id});
            stream_.jump_on_take(*close);
            return true;
          }
        }
    stack_.push_back({kind, offset, scratch_.size(), nullptr, split, std::nullopt});
    if (split)
      split_mark_ = {doc_.blocks_.size(), block_, used_};
    mark_after_bracket();
    return true;
  }

  bool end() {
    Frame &frame = stack_.back();
    if (frame.repeat) {
      // The item's bytes were skipped: RapidJSON read `{}` (jump_on_take).
      std::uint32_t id = *frame.repeat, offset = frame.offset;
      stack_.pop_back();
      mark_after_bracket();
      ++split_items_;
      return repeats_->repeat(id, offset);
    }
    JsonValue v = leaf(frame.kind, frame.offset);
    std::size_t n = scratch_.size() - frame.first;
    const JsonValue *values = scratch_.data() + frame.first;
    if (frame.kind == JsonValue::Kind::Array) {
      if (n) {
        auto *items = static_cast<JsonValue *>(allocate(n * sizeof(JsonValue), alignof(JsonValue)));
        for (std::size_t i = 0; i < n; ++i)
          new (items + i) JsonValue(values[i]);
        v.data_ = items;
      }
      v.size_ = static_cast<std::uint32_t>(n);
    } else {
      std::size_t members = n / 2;
      if (members) {
        auto *out = static_cast<JsonMember *>(allocate(members * sizeof(JsonMember), alignof(JsonMember)));
        for (std::size_t i = 0; i < members; ++i)
          new (out + i) JsonMember{values[2 * i], values[2 * i + 1]};
        v.data_ = out;
      }
      v.size_ = static_cast<std::uint32_t>(members);
    }
    scratch_.resize(frame.first);
    stack_.pop_back();
    mark_after_bracket();
    scratch_.push_back(v);
    return finish_value();
  }

  /// The root object as far as it is read when the split array starts: its members so far, the
  /// split array last and empty.
  JsonValue partial_root(std::uint32_t array_offset) {
    const Frame &root = stack_[0];
    std::size_t members = (scratch_.size() - root.first + 1) / 2;
    auto *out = static_cast<JsonMember *>(allocate(members * sizeof(JsonMember), alignof(JsonMember)));
    for (std::size_t i = 0; i + 1 < members; ++i)
      new (out + i) JsonMember{scratch_[root.first + 2 * i], scratch_[root.first + 2 * i + 1]};
    new (out + members - 1) JsonMember{scratch_.back(), leaf(JsonValue::Kind::Array, array_offset)};
    JsonValue v = leaf(JsonValue::Kind::Object, root.offset);
    v.data_ = out;
    v.size_ = static_cast<std::uint32_t>(members);
    return v;
  }

  /// Gives back what was allocated since `m`; one ordinary block is kept for the next item.
  void release(const ArenaMark &m) {
    while (doc_.blocks_.size() > m.blocks) {
      bool ordinary = doc_.blocks_.back().get() == block_ && !spare_;
      if (ordinary)
        spare_ = std::move(doc_.blocks_.back());
      doc_.blocks_.pop_back();
    }
    block_ = m.block;
    used_ = m.used;
  }

  /// Storage that never moves, from blocks the document owns; a large request gets its own.
  void *allocate(std::size_t bytes, std::size_t align) {
    // A streamed document holds one call at a time: small blocks keep its footprint small.
    constexpr std::size_t kBlock = Stream::kStable ? 256 * 1024 : 16 * 1024;
    std::size_t at = (used_ + align - 1) & ~(align - 1);
    if (block_ && at + bytes <= kBlock) {
      used_ = at + bytes;
      return block_ + at;
    }
    if (bytes > kBlock / 4) {
      doc_.blocks_.emplace_back(new std::byte[bytes]);
      return doc_.blocks_.back().get();
    }
    doc_.blocks_.emplace_back(spare_ ? std::move(spare_) : std::unique_ptr<std::byte[]>(new std::byte[kBlock]));
    block_ = doc_.blocks_.back().get();
    used_ = bytes;
    return block_;
  }

  FileId file_;
  DiagnosticEngine &diags_;
  const JsonParseOptions &options_;
  Stream &stream_;
  std::string_view split_key_;
  const std::function<bool(const JsonValue &)> *on_item_ = nullptr;
  const std::function<bool(const JsonValue &)> *on_start_ = nullptr;
  const SplitRepeats *repeats_ = nullptr;
  std::size_t split_member_ = 0; ///< the split array's position among the root's members, from 1
  ArenaMark split_mark_;
  std::size_t split_items_ = 0;
  std::unique_ptr<std::byte[]> spare_; ///< an ordinary block a split item gave back
  std::vector<Frame> stack_;
  std::vector<JsonValue> scratch_; ///< the values of the open containers, then the root
  std::size_t last_end_ = 0;
  JsonDocument doc_;
  std::byte *block_ = nullptr; ///< the block being filled
  std::size_t used_ = 0;
};

namespace {

/// The flags a file window is parsed with (parse_json_stream; UTF-8 is checked by the window).
constexpr unsigned kStreamParseFlags = rapidjson::kParseIterativeFlag | rapidjson::kParseNumbersAsStringsFlag;

} // namespace

} // namespace nkicc

namespace rapidjson {
/// A number read from a file window: RapidJSON pushes its bytes one at a time onto its stack
/// (and computes its value, which nkicc does not use) before handing the text over; a number
/// that plain_number() finds whole in the window is handed over from the window itself. Any
/// other goes through RapidJSON's own ParseNumber, errors and all.
template <>
template <>
inline void GenericReader<UTF8<>, UTF8<>, CrtAllocator>::ParseNumber<nkicc::kStreamParseFlags, nkicc::ChunkedFileStream,
                                                                     nkicc::BasicJsonBuilder<nkicc::ChunkedFileStream>>(
    nkicc::ChunkedFileStream &is, nkicc::BasicJsonBuilder<nkicc::ChunkedFileStream> &handler) {
  std::string_view text = is.rest();
  if (std::size_t n = nkicc::plain_number(text)) {
    std::size_t start = is.Tell();
    is.skip(n);
    if (!handler.RawNumber(text.data(), static_cast<SizeType>(n), true))
      RAPIDJSON_PARSE_ERROR(kParseErrorTermination, start);
    return;
  }
  nkicc::ChunkedFileStreamRef ref{is};
  ParseNumber<nkicc::kStreamParseFlags>(ref, handler);
}

/// A string read from a file window: one without escapes that plain_string() finds whole in
/// the window is handed to the builder from the window itself, not first copied onto
/// RapidJSON's stack; any other goes through RapidJSON's own ParseString (whose string scan
/// for a window is the ScanCopyUnescapedString above).
template <>
template <>
inline void GenericReader<UTF8<>, UTF8<>, CrtAllocator>::ParseString<nkicc::kStreamParseFlags, nkicc::ChunkedFileStream,
                                                                     nkicc::BasicJsonBuilder<nkicc::ChunkedFileStream>>(
    nkicc::ChunkedFileStream &is, nkicc::BasicJsonBuilder<nkicc::ChunkedFileStream> &handler, bool isKey) {
  std::string_view text = is.rest();
  if (std::size_t n = nkicc::plain_string(text)) {
    is.skip(n);
    auto length = static_cast<SizeType>(n - 2);
    bool ok = isKey ? handler.Key(text.data() + 1, length, true) : handler.String(text.data() + 1, length, true);
    if (!ok)
      RAPIDJSON_PARSE_ERROR(kParseErrorTermination, is.Tell());
    return;
  }
  nkicc::ChunkedFileStreamRef ref{is};
  ParseString<nkicc::kStreamParseFlags>(ref, handler, isKey);
}
} // namespace rapidjson

namespace nkicc {

namespace {

// What a syntax error code expects next, in the user's words.
std::string expectation(rapidjson::ParseErrorCode code) {
  using namespace rapidjson;
  switch (code) {
  case kParseErrorValueInvalid:
    return "a JSON value";
  case kParseErrorObjectMissName:
    return "a string key in object";
  case kParseErrorObjectMissColon:
    return "':' after object key";
  case kParseErrorObjectMissCommaOrCurlyBracket:
    return "',' or '}' in object";
  case kParseErrorArrayMissCommaOrSquareBracket:
    return "',' or ']' in array";
  case kParseErrorNumberMissFraction:
    return "a digit after the decimal point";
  case kParseErrorNumberMissExponent:
    return "a digit in the exponent";
  default:
    return {};
  }
}

// A control character (U+0000..U+001F) in a string, which JSON requires to be escaped.
std::string control_in_string(unsigned char c) {
  if (c == '\n' || c == '\r')
    return "unterminated string: a JSON string cannot span lines (write a line break as \\n)";
  const char *escape = c == '\t' ? "\\t" : c == '\b' ? "\\b" : c == '\f' ? "\\f" : nullptr;
  return fmt::format("unescaped control character U+{:04X} in string; write it as {}", c,
                     escape ? std::string(escape) : fmt::format("\\u{:04x}", c));
}

// A literal RapidJSON found too large: an integer beyond 308 digits, or a float beyond 1.8e308.
std::string number_too_big(std::string_view text, std::size_t offset) {
  std::size_t end = offset;
  while (end < text.size() && std::string_view("+-.eE0123456789").find(text[end]) != std::string_view::npos)
    ++end;
  return number_out_of_range_message(text.substr(offset, end - offset));
}

// What stopped RapidJSON, in the user's terms. RapidJSON reads a NUL byte as the end of the
// text and folds several faults into one code (a TAB in a string is an "invalid escape"), so
// the bytes at the error offset decide the message.
std::string syntax_message(std::string_view text, std::size_t &offset, rapidjson::ParseErrorCode code) {
  using namespace rapidjson;
  bool at_end = offset >= text.size();
  // What people write in JSON by habit from other formats gets its own message: a comment, and a
  // comma before a closing bracket (located at the comma).
  if (!at_end && (text.substr(offset, 2) == "//" || text.substr(offset, 2) == "/*" || text[offset] == '#'))
    return "JSON does not allow comments";
  if (!at_end && (text[offset] == '}' || text[offset] == ']')) {
    std::size_t before = offset;
    while (before > 0 && (text[before - 1] == ' ' || text[before - 1] == '\t' || text[before - 1] == '\n' ||
                          text[before - 1] == '\r'))
      --before;
    if (before > 0 && text[before - 1] == ',') {
      char close = text[offset];
      offset = before - 1;
      return fmt::format("trailing comma before '{}': JSON does not allow one", close);
    }
  }
  auto here = at_end ? 0u : static_cast<unsigned char>(text[offset]);
  // RFC 8259 §8.1 lets a reader ignore a byte order mark; Python's json.loads refuses one, and
  // so does nkicc, with a message that names it.
  if (offset == 0 && text.starts_with("\xEF\xBB\xBF"))
    return "the file starts with a UTF-8 byte order mark; JSON does not allow one";
  if (!at_end && here == 0)
    return "unexpected NUL byte (binary file?)";
  switch (code) {
  case kParseErrorDocumentEmpty:
    // RapidJSON also says "empty" when the first character cannot start a value.
    return at_end ? "expected a JSON value, found the end of the file" : "invalid JSON value";
  case kParseErrorDocumentRootNotSingular:
    return "unexpected text after the JSON value";
  case kParseErrorStringEscapeInvalid:
  case kParseErrorStringInvalidEncoding:
  case kParseErrorStringMissQuotationMark:
    if (at_end)
      return "unexpected end of file: unterminated string";
    if (here < 0x20)
      return control_in_string(here);
    if (here == '\\')
      return "invalid escape sequence in string";
    return fmt::format("invalid UTF-8 in string (byte 0x{:02X})", here);
  case kParseErrorStringUnicodeEscapeInvalidHex:
    return "invalid \\u escape in string";
  case kParseErrorStringUnicodeSurrogateInvalid:
    return "invalid UTF-16 surrogate pair in string";
  case kParseErrorNumberTooBig:
    return number_too_big(text, offset);
  default:
    break;
  }
  std::string expected = expectation(code);
  if (at_end)
    return expected.empty() ? std::string("unexpected end of file") : "unexpected end of file: expected " + expected;
  switch (code) {
  case kParseErrorValueInvalid:
    return "invalid JSON value";
  case kParseErrorNumberMissFraction:
  case kParseErrorNumberMissExponent:
    return "invalid number";
  default:
    return expected.empty() ? fmt::format("invalid JSON: {}", GetParseError_En(code)) : "expected " + expected;
  }
}

} // namespace

namespace {
constexpr unsigned kParseFlags =
    rapidjson::kParseIterativeFlag | rapidjson::kParseValidateEncodingFlag | rapidjson::kParseNumbersAsStringsFlag;
} // namespace

std::optional<JsonStreamResult>
parse_json_stream(const std::string &path, FileId file, DiagnosticEngine &diags, std::string_view split_key,
                  const std::function<bool(const JsonValue &)> &on_item, const JsonParseOptions &options,
                  const std::function<bool(const JsonValue &)> &on_start, const SplitRepeats *repeats) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0)
    return std::nullopt;
  struct Closer {
    int fd;
    ~Closer() { ::close(fd); }
  } closer{fd};
  ChunkedFileStream stream(fd, options.validate_utf8);
  BasicJsonBuilder<ChunkedFileStream> builder(file, diags, options, stream);
  builder.split(split_key, &on_item, on_start ? &on_start : nullptr, repeats);
  rapidjson::Reader reader;
  static_assert(kStreamParseFlags == (kParseFlags & ~rapidjson::kParseValidateEncodingFlag));
  rapidjson::ParseResult result = reader.Parse<kStreamParseFlags>(stream, builder);
  if (!result || stream.failed())
    return std::nullopt;
  // Only white space may follow the value (RapidJSON stops at a NUL byte as if the text ended).
  while (!stream.at_end()) {
    char c = stream.Take();
    if (c != ' ' && c != '\t' && c != '\n' && c != '\r')
      return std::nullopt;
  }
  if (stream.failed())
    return std::nullopt;
  JsonStreamResult out;
  out.items = builder.split_items();
  out.split_last = builder.split_last();
  out.document = builder.take_document();
  out.digest = stream.digest();
  out.size = stream.size();
  return out;
}

std::optional<JsonDocument> parse_json(const SourceManager &sources, FileId file, DiagnosticEngine &diags,
                                       const JsonParseOptions &options) {
  std::string_view text = sources.contents(file);
  MemoryWindow stream(text);
  BasicJsonBuilder<MemoryWindow> builder(file, diags, options, stream);
  rapidjson::Reader reader;
  constexpr unsigned flags = kParseFlags;
  std::size_t errors_before = diags.error_count();
  rapidjson::ParseResult result = reader.Parse<flags>(stream, builder);
  if (!result) {
    // A handler abort has reported its own, better-located error already.
    if (diags.error_count() == errors_before) {
      std::size_t offset = result.Offset();
      std::string message = syntax_message(text, offset, result.Code());
      diags.error({file, static_cast<std::uint32_t>(offset)}, std::move(message), options.error_id);
    }
    return std::nullopt;
  }
  // RapidJSON stops at a NUL byte as if the text ended there; nothing may follow the value.
  std::size_t rest = stream.Tell();
  while (rest < text.size() && (text[rest] == ' ' || text[rest] == '\t' || text[rest] == '\n' || text[rest] == '\r'))
    ++rest;
  if (rest < text.size()) {
    std::string_view after = text.substr(rest, 2);
    diags.error({file, static_cast<std::uint32_t>(rest)},
                text[rest] == '\0'                                    ? "unexpected NUL byte (binary file?)"
                : after == "//" || after == "/*" || text[rest] == '#' ? "JSON does not allow comments"
                                                                      : "unexpected text after the JSON value",
                options.error_id);
    return std::nullopt;
  }
  return builder.take_document();
}

} // namespace nkicc
