// The methods of str, in CPython 3.11's words. Strings are UTF-8; positions and widths count
// code points, as Python's do. Case mapping and character classes are ASCII's: on other
// letters a method says nkicc does not model it, rather than answer wrongly.
#include "methods.h"

#include "nkicc/cache/py_repr.h"
#include "nkicc/trace/pylib.h"
#include "unmodelled.h"

#include <algorithm>

namespace nkicc::trace {

using namespace pylib;

namespace {

/// A str's code points: byte offsets, computed only for non-ASCII text.
class Text {
public:
  explicit Text(const std::string &s) : s_(s), ascii_(is_ascii(s)) {
    if (!ascii_)
      offsets_ = code_point_offsets(s);
  }
  std::int64_t size() const {
    return ascii_ ? static_cast<std::int64_t>(s_.size()) : static_cast<std::int64_t>(offsets_.size() - 1);
  }
  /// The byte offset of code point k (0 <= k <= size()).
  std::size_t byte(std::int64_t k) const { return ascii_ ? static_cast<std::size_t>(k) : offsets_[static_cast<std::size_t>(k)]; }
  /// The code point index of byte offset b (the start of a code point).
  std::int64_t index(std::size_t b) const {
    if (ascii_)
      return static_cast<std::int64_t>(b);
    return static_cast<std::int64_t>(std::lower_bound(offsets_.begin(), offsets_.end(), b) - offsets_.begin());
  }
  std::string_view cp(std::int64_t k) const {
    std::size_t b = byte(k);
    return std::string_view(s_).substr(b, byte(k + 1) - b);
  }
  bool ascii() const { return ascii_; }
  const std::string &str() const { return s_; }

private:
  const std::string &s_;
  bool ascii_;
  std::vector<std::size_t> offsets_;
};

const std::string &str_arg(std::string_view what, const Value &v) {
  if (v.kind != K::Str)
    raise_python("TypeError", std::string(what) + " must be str, not " + tn(v));
  return v.str_text();
}

/// `start`/`end` of find(), count(), startswith(): slice indices into [0, n], None for the
/// default.
/// (CPython's ADJUST_INDICES: a start past the end stays there, so that nothing is found.)
std::pair<std::int64_t, std::int64_t> span_args(const CallArgs &args, std::size_t first, std::int64_t n) {
  auto adjust = [n](const Value &v, std::int64_t dflt) {
    if (v.is_none())
      return dflt;
    std::int64_t x = index_arg(v);
    if (x < 0)
      x = std::max<std::int64_t>(0, x + n);
    return x;
  };
  std::int64_t start = args.positional.size() > first ? adjust(args.positional[first], 0) : 0;
  std::int64_t end = args.positional.size() > first + 1 ? std::min(adjust(args.positional[first + 1], n), n) : n;
  return {start, end};
}

/// Raises "does not model" when a case or class method meets a non-ASCII letter.
void require_ascii(std::string_view method, const std::string &s) {
  if (!is_ascii(s))
    raise_unmodelled("str." + std::string(method), "on non-ASCII text");
}

bool is_space_cp(std::string_view c) {
  if (c.size() == 1)
    return c[0] == ' ' || (c[0] >= '\t' && c[0] <= '\r') || (c[0] >= '\x1c' && c[0] <= '\x1f');
  // U+0085, U+00A0, U+1680, U+2000-U+200A, U+2028, U+2029, U+202F, U+205F, U+3000
  static constexpr std::string_view spaces[] = {"\u0085", "\u00a0", "\u1680", "\u2000", "\u2001", "\u2002",
                                                "\u2003", "\u2004", "\u2005", "\u2006", "\u2007", "\u2008",
                                                "\u2009", "\u200a", "\u2028", "\u2029", "\u202f", "\u205f",
                                                "\u3000"};
  return std::find(std::begin(spaces), std::end(spaces), c) != std::end(spaces);
}

char lower_ascii(char c) { return c >= 'A' && c <= 'Z' ? static_cast<char>(c + 32) : c; }
char upper_ascii(char c) { return c >= 'a' && c <= 'z' ? static_cast<char>(c - 32) : c; }
bool is_alpha(char c) { return (c | 0x20) >= 'a' && (c | 0x20) <= 'z'; }
bool is_digit(char c) { return c >= '0' && c <= '9'; }

Value str_upper(Interpreter &, const Value &self, CallArgs &args) {
  expect_args("str.upper", args, 0, 0);
  require_ascii("upper", self.str_text());
  std::string out = self.str_text();
  std::transform(out.begin(), out.end(), out.begin(), upper_ascii);
  return Value::str(std::move(out));
}
Value str_lower(Interpreter &, const Value &self, CallArgs &args) {
  expect_args("str.lower", args, 0, 0);
  require_ascii("lower", self.str_text());
  std::string out = self.str_text();
  std::transform(out.begin(), out.end(), out.begin(), lower_ascii);
  return Value::str(std::move(out));
}
Value str_casefold(Interpreter &, const Value &self, CallArgs &args) {
  expect_args("str.casefold", args, 0, 0);
  require_ascii("casefold", self.str_text());
  std::string out = self.str_text();
  std::transform(out.begin(), out.end(), out.begin(), lower_ascii);
  return Value::str(std::move(out));
}
Value str_swapcase(Interpreter &, const Value &self, CallArgs &args) {
  expect_args("str.swapcase", args, 0, 0);
  require_ascii("swapcase", self.str_text());
  std::string out = self.str_text();
  for (char &c : out)
    c = is_alpha(c) ? static_cast<char>(c ^ 0x20) : c;
  return Value::str(std::move(out));
}
Value str_capitalize(Interpreter &, const Value &self, CallArgs &args) {
  expect_args("str.capitalize", args, 0, 0);
  require_ascii("capitalize", self.str_text());
  std::string out = self.str_text();
  for (std::size_t k = 0; k < out.size(); ++k)
    out[k] = k == 0 ? upper_ascii(out[k]) : lower_ascii(out[k]);
  return Value::str(std::move(out));
}
Value str_title(Interpreter &, const Value &self, CallArgs &args) {
  expect_args("str.title", args, 0, 0);
  require_ascii("title", self.str_text());
  std::string out = self.str_text();
  bool previous_cased = false;
  for (char &c : out) {
    if (is_alpha(c)) {
      c = previous_cased ? lower_ascii(c) : upper_ascii(c);
      previous_cased = true;
    } else {
      previous_cased = false;
    }
  }
  return Value::str(std::move(out));
}

/// The character-class predicates: true when non-empty and every character passes.
template <bool (*Pass)(char)> Value str_class(std::string_view method, const Value &self, const CallArgs &args) {
  expect_args("str." + std::string(method), args, 0, 0);
  const std::string &s = self.str_text();
  require_ascii(method, s);
  return Value::boolean(!s.empty() && std::all_of(s.begin(), s.end(), Pass));
}
bool pass_alpha(char c) { return is_alpha(c); }
bool pass_alnum(char c) { return is_alpha(c) || is_digit(c); }
bool pass_digit(char c) { return is_digit(c); }
Value str_isalpha(Interpreter &, const Value &self, CallArgs &args) { return str_class<pass_alpha>("isalpha", self, args); }
Value str_isalnum(Interpreter &, const Value &self, CallArgs &args) { return str_class<pass_alnum>("isalnum", self, args); }
Value str_isdigit(Interpreter &, const Value &self, CallArgs &args) { return str_class<pass_digit>("isdigit", self, args); }
Value str_isdecimal(Interpreter &, const Value &self, CallArgs &args) {
  return str_class<pass_digit>("isdecimal", self, args);
}
Value str_isnumeric(Interpreter &, const Value &self, CallArgs &args) {
  return str_class<pass_digit>("isnumeric", self, args);
}
Value str_isascii(Interpreter &, const Value &self, CallArgs &args) {
  expect_args("str.isascii", args, 0, 0);
  return Value::boolean(is_ascii(self.str_text()));
}
Value str_isspace(Interpreter &, const Value &self, CallArgs &args) {
  expect_args("str.isspace", args, 0, 0);
  Text t(self.str_text());
  bool all = t.size() > 0;
  for (std::int64_t k = 0; all && k < t.size(); ++k)
    all = is_space_cp(t.cp(k));
  return Value::boolean(all);
}
Value str_isprintable(Interpreter &, const Value &self, CallArgs &args) {
  expect_args("str.isprintable", args, 0, 0);
  const std::string &s = self.str_text();
  for (std::size_t k = 0; k < s.size();) {
    auto c0 = static_cast<unsigned char>(s[k]);
    std::size_t len = c0 < 0x80 ? 1 : c0 < 0xE0 ? 2 : c0 < 0xF0 ? 3 : 4;
    char32_t cp = len == 1 ? c0 : len == 2 ? c0 & 0x1F : len == 3 ? c0 & 0x0F : c0 & 0x07;
    for (std::size_t j = 1; j < len && k + j < s.size(); ++j)
      cp = (cp << 6) | (static_cast<unsigned char>(s[k + j]) & 0x3F);
    if (!py_is_printable(cp))
      return Value::boolean(false);
    k += len;
  }
  return Value::boolean(true);
}
Value str_islower(Interpreter &, const Value &self, CallArgs &args) {
  expect_args("str.islower", args, 0, 0);
  const std::string &s = self.str_text();
  require_ascii("islower", s);
  bool cased = false;
  for (char c : s) {
    if (c >= 'A' && c <= 'Z')
      return Value::boolean(false);
    cased = cased || (c >= 'a' && c <= 'z');
  }
  return Value::boolean(cased);
}
Value str_isupper(Interpreter &, const Value &self, CallArgs &args) {
  expect_args("str.isupper", args, 0, 0);
  const std::string &s = self.str_text();
  require_ascii("isupper", s);
  bool cased = false;
  for (char c : s) {
    if (c >= 'a' && c <= 'z')
      return Value::boolean(false);
    cased = cased || (c >= 'A' && c <= 'Z');
  }
  return Value::boolean(cased);
}
Value str_istitle(Interpreter &, const Value &self, CallArgs &args) {
  expect_args("str.istitle", args, 0, 0);
  const std::string &s = self.str_text();
  require_ascii("istitle", s);
  bool cased = false, previous_cased = false;
  for (char c : s) {
    bool upper = c >= 'A' && c <= 'Z', lower = c >= 'a' && c <= 'z';
    if (upper) {
      if (previous_cased)
        return Value::boolean(false);
      previous_cased = cased = true;
    } else if (lower) {
      if (!previous_cased)
        return Value::boolean(false);
      previous_cased = cased = true;
    } else {
      previous_cased = false;
    }
  }
  return Value::boolean(cased);
}
Value str_isidentifier(Interpreter &, const Value &self, CallArgs &args) {
  expect_args("str.isidentifier", args, 0, 0);
  const std::string &s = self.str_text();
  require_ascii("isidentifier", s);
  bool ok = !s.empty() && (is_alpha(s[0]) || s[0] == '_');
  for (std::size_t k = 1; ok && k < s.size(); ++k)
    ok = is_alpha(s[k]) || is_digit(s[k]) || s[k] == '_';
  return Value::boolean(ok);
}

Value str_join(Interpreter &interp, const Value &self, CallArgs &args) {
  expect_args("str.join", args, 1, 1);
  const std::string &sep = self.str_text();
  std::string out;
  std::size_t k = 0;
  std::unique_ptr<Iterator> it = interp.iterate(args.positional[0]);
  Value item;
  while (it->next(item)) {
    if (item.kind != K::Str)
      raise_python("TypeError", "sequence item " + std::to_string(k) + ": expected str instance, " + tn(item) + " found");
    if (k++)
      out += sep;
    out += item.str_text();
    interp.check_length(out.size());
  }
  return Value::str(std::move(out));
}

/// The characters strip() removes: whitespace, or those of `chars` (by code point).
std::string do_strip(const std::string &s, const Value *chars, bool left, bool right) {
  Text t(s);
  std::vector<std::string_view> set;
  std::string chars_text;
  bool whitespace = !chars || chars->is_none();
  if (!whitespace) {
    chars_text = chars->str_text();
    Text c(chars_text);
    for (std::int64_t k = 0; k < c.size(); ++k)
      set.push_back(c.cp(k));
  }
  auto drop = [&](std::int64_t k) {
    std::string_view cp = t.cp(k);
    return whitespace ? is_space_cp(cp) : std::find(set.begin(), set.end(), cp) != set.end();
  };
  std::int64_t b = 0, e = t.size();
  if (left)
    while (b < e && drop(b))
      ++b;
  if (right)
    while (e > b && drop(e - 1))
      --e;
  return s.substr(t.byte(b), t.byte(e) - t.byte(b));
}
Value strip_method(std::string_view name, const Value &self, const CallArgs &args, bool left, bool right) {
  expect_args(name, args, 0, 1);
  const Value *chars = args.positional.empty() ? nullptr : &args.positional[0];
  if (chars && !chars->is_none() && chars->kind != K::Str)
    raise_python("TypeError", std::string(name) + " arg must be None or str");
  return Value::str(do_strip(self.str_text(), chars, left, right));
}
Value str_strip(Interpreter &, const Value &self, CallArgs &args) { return strip_method("strip", self, args, true, true); }
Value str_lstrip(Interpreter &, const Value &self, CallArgs &args) {
  return strip_method("lstrip", self, args, true, false);
}
Value str_rstrip(Interpreter &, const Value &self, CallArgs &args) {
  return strip_method("rstrip", self, args, false, true);
}

Value str_replace(Interpreter &interp, const Value &self, CallArgs &args) {
  expect_args("replace", args, 2, 3);
  const std::string &s = self.str_text();
  const std::string &from = str_arg("replace() argument 1", args.positional[0]);
  const std::string &to = str_arg("replace() argument 2", args.positional[1]);
  std::int64_t count = args.positional.size() > 2 ? index_arg(args.positional[2]) : -1;
  std::string out;
  if (from.empty()) {
    // CPython inserts `to` before every code point and at the end: 'abc'.replace('', '-') is
    // '-a-b-c-'.
    Text t(s);
    std::int64_t n = 0;
    for (std::int64_t k = 0; k <= t.size(); ++k) {
      if (count < 0 || n < count) {
        out += to;
        ++n;
      }
      if (k < t.size())
        out += t.cp(k);
      interp.check_length(out.size());
    }
    return Value::str(std::move(out));
  }
  std::size_t at = 0;
  std::int64_t n = 0;
  for (std::size_t hit; (count < 0 || n < count) && (hit = s.find(from, at)) != std::string::npos;
       at = hit + from.size(), ++n) {
    out.append(s, at, hit - at);
    out += to;
    interp.check_length(out.size());
  }
  out.append(s, at);
  return Value::str(std::move(out));
}

/// find, rfind, index, rindex: the code point index of `sub` within s[start:end], or -1.
std::int64_t find_in(const Value &self, const CallArgs &args, std::string_view name, bool reverse) {
  expect_args(name, args, 1, 3);
  const std::string &s = self.str_text();
  const std::string &sub = str_arg(std::string(name) + "() argument 1", args.positional[0]);
  Text t(s);
  auto [start, end] = span_args(args, 1, t.size());
  if (start > end)
    return -1;
  std::string_view window = std::string_view(s).substr(t.byte(start), t.byte(end) - t.byte(start));
  std::size_t hit = reverse ? window.rfind(sub) : window.find(sub);
  if (hit == std::string_view::npos)
    return -1;
  return t.index(t.byte(start) + hit);
}
Value str_find(Interpreter &, const Value &self, CallArgs &args) { return Value::integer(find_in(self, args, "find", false)); }
Value str_rfind(Interpreter &, const Value &self, CallArgs &args) {
  return Value::integer(find_in(self, args, "rfind", true));
}
Value str_index(Interpreter &, const Value &self, CallArgs &args) {
  std::int64_t k = find_in(self, args, "index", false);
  if (k < 0)
    raise_python("ValueError", "substring not found");
  return Value::integer(k);
}
Value str_rindex(Interpreter &, const Value &self, CallArgs &args) {
  std::int64_t k = find_in(self, args, "rindex", true);
  if (k < 0)
    raise_python("ValueError", "substring not found");
  return Value::integer(k);
}
Value str_count(Interpreter &, const Value &self, CallArgs &args) {
  expect_args("count", args, 1, 3);
  const std::string &s = self.str_text();
  const std::string &sub = str_arg("count() argument 1", args.positional[0]);
  Text t(s);
  auto [start, end] = span_args(args, 1, t.size());
  if (start > end)
    return Value::integer(0);
  if (sub.empty())
    return Value::integer(end - start + 1);
  std::string_view window = std::string_view(s).substr(t.byte(start), t.byte(end) - t.byte(start));
  std::int64_t n = 0;
  for (std::size_t at = window.find(sub); at != std::string_view::npos; at = window.find(sub, at + sub.size()))
    ++n;
  return Value::integer(n);
}

Value starts_ends(const Value &self, const CallArgs &args, std::string_view name, bool ends) {
  expect_args(name, args, 1, 3);
  const std::string &s = self.str_text();
  Text t(s);
  auto [start, end] = span_args(args, 1, t.size());
  const Value &what = args.positional[0];
  std::vector<Value> options = what.kind == K::Tuple ? what.seq().items : std::vector<Value>{what};
  for (const Value &o : options) {
    if (o.kind != K::Str)
      raise_python("TypeError", what.kind == K::Tuple ? "tuple for " + std::string(name) +
                                                            " must only contain str, not " + tn(o)
                                                      : std::string(name) +
                                                            " first arg must be str or a tuple of str, not " + tn(o));
    if (start > end)
      continue;
    std::string_view window = std::string_view(s).substr(t.byte(start), t.byte(end) - t.byte(start));
    if (ends ? window.ends_with(o.str_text()) : window.starts_with(o.str_text()))
      return Value::boolean(true);
  }
  return Value::boolean(false);
}
Value str_startswith(Interpreter &, const Value &self, CallArgs &args) {
  return starts_ends(self, args, "startswith", false);
}
Value str_endswith(Interpreter &, const Value &self, CallArgs &args) { return starts_ends(self, args, "endswith", true); }

Value str_removeprefix(Interpreter &, const Value &self, CallArgs &args) {
  expect_args("str.removeprefix", args, 1, 1);
  const std::string &s = self.str_text(), &p = str_arg("removeprefix() argument", args.positional[0]);
  return s.starts_with(p) ? Value::str(s.substr(p.size())) : self;
}
Value str_removesuffix(Interpreter &, const Value &self, CallArgs &args) {
  expect_args("str.removesuffix", args, 1, 1);
  const std::string &s = self.str_text(), &p = str_arg("removesuffix() argument", args.positional[0]);
  return s.ends_with(p) && !p.empty() ? Value::str(s.substr(0, s.size() - p.size())) : self;
}

/// split() and rsplit(): by whitespace runs when sep is None, else by sep.
Value split_method(Interpreter &interp, const Value &self, const CallArgs &args, bool right) {
  BoundArgs a(right ? "rsplit" : "split", args, {"sep", "maxsplit"}, 0);
  const std::string &s = self.str_text();
  std::int64_t maxsplit = a.has(1) ? index_arg(*a.get(1)) : -1;
  std::vector<Value> out;
  auto limited = [&] { return maxsplit >= 0 && static_cast<std::int64_t>(out.size()) >= maxsplit; };
  if (!a.has(0) || a.get(0)->is_none()) {
    Text t(s);
    std::vector<std::pair<std::int64_t, std::int64_t>> words; // code point ranges
    if (!right) {
      std::int64_t k = 0, n = t.size();
      while (true) {
        while (k < n && is_space_cp(t.cp(k)))
          ++k;
        if (k >= n)
          break;
        if (limited()) {
          out.push_back(Value::str(s.substr(t.byte(k)))); // the rest, trailing whitespace kept
          break;
        }
        std::int64_t e = k;
        while (e < n && !is_space_cp(t.cp(e)))
          ++e;
        out.push_back(Value::str(s.substr(t.byte(k), t.byte(e) - t.byte(k))));
        k = e;
      }
    } else {
      std::int64_t e = t.size();
      while (true) {
        while (e > 0 && is_space_cp(t.cp(e - 1)))
          --e;
        if (e <= 0)
          break;
        if (limited()) {
          out.push_back(Value::str(s.substr(0, t.byte(e)))); // the rest, leading whitespace kept
          break;
        }
        std::int64_t b = e;
        while (b > 0 && !is_space_cp(t.cp(b - 1)))
          --b;
        out.push_back(Value::str(s.substr(t.byte(b), t.byte(e) - t.byte(b))));
        e = b;
      }
      std::reverse(out.begin(), out.end());
    }
    interp.check_length(out.size());
    return Value::list(std::move(out));
  }
  const std::string &sep = str_arg("must be str or None, not", *a.get(0));
  if (sep.empty())
    raise_python("ValueError", "empty separator");
  if (!right) {
    std::size_t at = 0;
    for (std::size_t hit; !limited() && (hit = s.find(sep, at)) != std::string::npos; at = hit + sep.size())
      out.push_back(Value::str(s.substr(at, hit - at)));
    out.push_back(Value::str(s.substr(at)));
  } else {
    std::size_t end = s.size();
    while (!limited()) {
      if (end < sep.size())
        break;
      std::size_t hit = s.rfind(sep, end - sep.size());
      if (hit == std::string::npos)
        break;
      out.push_back(Value::str(s.substr(hit + sep.size(), end - hit - sep.size())));
      end = hit;
    }
    out.push_back(Value::str(s.substr(0, end)));
    std::reverse(out.begin(), out.end());
  }
  interp.check_length(out.size());
  return Value::list(std::move(out));
}
Value str_split(Interpreter &interp, const Value &self, CallArgs &args) { return split_method(interp, self, args, false); }
Value str_rsplit(Interpreter &interp, const Value &self, CallArgs &args) { return split_method(interp, self, args, true); }

Value str_splitlines(Interpreter &, const Value &self, CallArgs &args) {
  BoundArgs a("splitlines", args, {"keepends"}, 0);
  bool keep = a.has(0) && (a.get(0)->kind == K::Bool ? a.get(0)->b : index_arg(*a.get(0)) != 0);
  const std::string &s = self.str_text();
  std::vector<Value> out;
  std::size_t start = 0, k = 0;
  auto boundary = [&](std::size_t at) -> std::size_t { // the length of a line break at `at`, or 0
    auto c = static_cast<unsigned char>(s[at]);
    if (c == '\r')
      return at + 1 < s.size() && s[at + 1] == '\n' ? 2 : 1;
    if (c == '\n' || c == '\v' || c == '\f' || c == 0x1c || c == 0x1d || c == 0x1e)
      return 1;
    if (c == 0xC2 && at + 1 < s.size() && static_cast<unsigned char>(s[at + 1]) == 0x85)
      return 2;
    if (c == 0xE2 && at + 2 < s.size() && static_cast<unsigned char>(s[at + 1]) == 0x80 &&
        (static_cast<unsigned char>(s[at + 2]) == 0xA8 || static_cast<unsigned char>(s[at + 2]) == 0xA9))
      return 3;
    return 0;
  };
  while (k < s.size()) {
    std::size_t len = boundary(k);
    if (!len) {
      ++k;
      continue;
    }
    out.push_back(Value::str(s.substr(start, (keep ? k + len : k) - start)));
    k += len;
    start = k;
  }
  if (start < s.size())
    out.push_back(Value::str(s.substr(start)));
  return Value::list(std::move(out));
}

Value partition_method(const Value &self, const CallArgs &args, bool right) {
  expect_args(right ? "str.rpartition" : "str.partition", args, 1, 1);
  const std::string &s = self.str_text();
  const std::string &sep = str_arg("must be str, not", args.positional[0]);
  if (sep.empty())
    raise_python("ValueError", "empty separator");
  std::size_t hit = right ? s.rfind(sep) : s.find(sep);
  if (hit == std::string::npos)
    return right ? Value::tuple({Value::str(""), Value::str(""), self})
                 : Value::tuple({self, Value::str(""), Value::str("")});
  return Value::tuple({Value::str(s.substr(0, hit)), Value::str(sep), Value::str(s.substr(hit + sep.size()))});
}
Value str_partition(Interpreter &, const Value &self, CallArgs &args) { return partition_method(self, args, false); }
Value str_rpartition(Interpreter &, const Value &self, CallArgs &args) { return partition_method(self, args, true); }

/// center, ljust, rjust: pad to `width` code points with one fill character.
Value justify(Interpreter &interp, const Value &self, const CallArgs &args, std::string_view name, char how) {
  expect_args(name, args, 1, 2);
  std::int64_t width = index_arg(args.positional[0]);
  std::string fill = " ";
  if (args.positional.size() > 1) {
    const Value &f = args.positional[1];
    if (f.kind != K::Str || code_point_count(f.str_text()) != 1)
      raise_python("TypeError", "The fill character must be exactly one character long");
    fill = f.str_text();
  }
  const std::string &s = self.str_text();
  auto n = static_cast<std::int64_t>(code_point_count(s));
  if (width <= n)
    return self;
  std::int64_t marg = width - n;
  interp.check_length(static_cast<std::uint64_t>(width) * fill.size());
  std::int64_t left = how == '<' ? 0 : how == '>' ? marg : marg / 2 + (marg & width & 1);
  std::string out;
  for (std::int64_t k = 0; k < left; ++k)
    out += fill;
  out += s;
  for (std::int64_t k = 0; k < marg - left; ++k)
    out += fill;
  return Value::str(std::move(out));
}
Value str_center(Interpreter &interp, const Value &self, CallArgs &args) { return justify(interp, self, args, "center", '^'); }
Value str_ljust(Interpreter &interp, const Value &self, CallArgs &args) { return justify(interp, self, args, "ljust", '<'); }
Value str_rjust(Interpreter &interp, const Value &self, CallArgs &args) { return justify(interp, self, args, "rjust", '>'); }
Value str_zfill(Interpreter &interp, const Value &self, CallArgs &args) {
  expect_args("str.zfill", args, 1, 1);
  std::int64_t width = index_arg(args.positional[0]);
  const std::string &s = self.str_text();
  auto n = static_cast<std::int64_t>(code_point_count(s));
  if (width <= n)
    return self;
  interp.check_length(static_cast<std::uint64_t>(width));
  std::string out(static_cast<std::size_t>(width - n), '0');
  if (!s.empty() && (s[0] == '+' || s[0] == '-'))
    return Value::str(s.substr(0, 1) + out + s.substr(1));
  return Value::str(out + s);
}
Value str_expandtabs(Interpreter &interp, const Value &self, CallArgs &args) {
  BoundArgs a("expandtabs", args, {"tabsize"}, 0);
  std::int64_t tab = a.has(0) ? index_arg(*a.get(0)) : 8;
  Text t(self.str_text());
  std::string out;
  std::int64_t column = 0;
  for (std::int64_t k = 0; k < t.size(); ++k) {
    std::string_view c = t.cp(k);
    if (c == "\t") {
      if (tab > 0) {
        std::int64_t spaces = tab - column % tab;
        out.append(static_cast<std::size_t>(spaces), ' ');
        column += spaces;
      }
    } else {
      out += c;
      column = c == "\n" || c == "\r" ? 0 : column + 1;
    }
    interp.check_length(out.size());
  }
  return Value::str(std::move(out));
}

Value str_format_method(Interpreter &interp, const Value &self, CallArgs &args) {
  return Value::str(str_format(interp, self.str_text(), args.positional, [&](std::string_view name) -> const Value * {
    return args.keyword(name);
  }));
}
Value str_format_map(Interpreter &interp, const Value &self, CallArgs &args) {
  expect_args("str.format_map", args, 1, 1);
  const Value &mapping = args.positional[0];
  Value found;
  return Value::str(str_format(interp, self.str_text(), {}, [&](std::string_view name) -> const Value * {
    found = interp.get_item(mapping, Value::str(std::string(name)));
    return &found;
  }));
}

} // namespace

namespace pylib {
std::span<const Method> str_methods() {
  static const Method methods[] = {
      {"capitalize", str_capitalize}, {"casefold", str_casefold},     {"center", str_center},
      {"count", str_count},           {"endswith", str_endswith},     {"expandtabs", str_expandtabs},
      {"find", str_find},             {"format", str_format_method},  {"format_map", str_format_map},
      {"index", str_index},           {"isalnum", str_isalnum},       {"isalpha", str_isalpha},
      {"isascii", str_isascii},       {"isdecimal", str_isdecimal},   {"isdigit", str_isdigit},
      {"isidentifier", str_isidentifier}, {"islower", str_islower},   {"isnumeric", str_isnumeric},
      {"isprintable", str_isprintable}, {"isspace", str_isspace},     {"istitle", str_istitle},
      {"isupper", str_isupper},       {"join", str_join},             {"ljust", str_ljust},
      {"lower", str_lower},           {"lstrip", str_lstrip},         {"partition", str_partition},
      {"removeprefix", str_removeprefix}, {"removesuffix", str_removesuffix}, {"replace", str_replace},
      {"rfind", str_rfind},           {"rindex", str_rindex},         {"rjust", str_rjust},
      {"rpartition", str_rpartition}, {"rsplit", str_rsplit},         {"rstrip", str_rstrip},
      {"split", str_split},           {"splitlines", str_splitlines}, {"startswith", str_startswith},
      {"strip", str_strip},           {"swapcase", str_swapcase},     {"title", str_title},
      {"upper", str_upper},           {"zfill", str_zfill},
  };
  return methods;
}
} // namespace pylib

} // namespace nkicc::trace
