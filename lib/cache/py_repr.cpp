#include "nkicc/cache/py_repr.h"
#include "nkicc/support/decimal.h"

#include <algorithm>
#include <array>
#include <charconv>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <iterator>

namespace nkicc {
namespace {

struct CodePointRange {
  char32_t first;
  char32_t end; // one past the last
};

// The code points for which CPython 3.11's str.isprintable() is false. Generated from Python's
// own database rather than taken from ICU or the C library, whose Unicode versions differ.
constexpr CodePointRange kNonPrintable[] = {
#include "unicode_printable.inc"
};

/// The same for the Basic Multilingual Plane as a bitmap (8 KiB, built at compile time), a bit
/// set for each printable code point: keys hold mostly BMP text, and a lookup is a load where
/// the search over the 701 ranges is about ten steps.
constexpr std::array<std::uint64_t, 0x10000 / 64> make_bmp_printable() {
  std::array<std::uint64_t, 0x10000 / 64> bits{};
  for (auto &word : bits)
    word = ~std::uint64_t{0};
  for (const CodePointRange &r : kNonPrintable)
    for (char32_t c = r.first; c < r.end && c < 0x10000; ++c)
      bits[c / 64] &= ~(std::uint64_t{1} << (c % 64));
  return bits;
}

constexpr std::array<std::uint64_t, 0x10000 / 64> kBmpPrintable = make_bmp_printable();

constexpr char kHexDigits[] = "0123456789abcdef";

// How unicode_repr treats each ASCII byte, apart from the quote, which depends on the text.
enum class AsciiClass : unsigned char { Copy, Backslash, Named, Hex };

constexpr std::array<AsciiClass, 128> make_ascii_classes() {
  std::array<AsciiClass, 128> classes{};
  for (int c = 0; c < 128; ++c)
    classes[c] = (c < 0x20 || c == 0x7f) ? AsciiClass::Hex : AsciiClass::Copy;
  classes['\\'] = AsciiClass::Backslash;
  classes['\t'] = AsciiClass::Named;
  classes['\n'] = AsciiClass::Named;
  classes['\r'] = AsciiClass::Named;
  return classes;
}

constexpr std::array<AsciiClass, 128> kAsciiClasses = make_ascii_classes();

void append_hex_escape(std::string &out, char marker, char32_t code_point, int digits) {
  char buf[10];
  buf[0] = '\\';
  buf[1] = marker;
  for (int k = 0; k < digits; ++k)
    buf[2 + k] = kHexDigits[(code_point >> (4 * (digits - 1 - k))) & 0xf];
  out.append(buf, static_cast<std::size_t>(2 + digits));
}

// Decodes the UTF-8 sequence that starts at text[i] (a byte >= 0x80) and returns its length.
// The loader hands over valid UTF-8; a malformed byte is still read safely, as the code point
// of its own value, so that a broken invariant cannot read past the end.
std::size_t decode_utf8(std::string_view text, std::size_t i, char32_t &code_point) {
  auto byte = [&](std::size_t k) { return static_cast<unsigned char>(text[k]); };
  unsigned char lead = byte(i);
  std::size_t length = lead >= 0xf0 ? 4 : lead >= 0xe0 ? 3 : lead >= 0xc0 ? 2 : 0;
  if (length == 0 || i + length > text.size()) {
    code_point = lead;
    return 1;
  }
  char32_t cp = lead & (0x7f >> length);
  for (std::size_t k = 1; k < length; ++k) {
    unsigned char next = byte(i + k);
    if ((next & 0xc0) != 0x80) {
      code_point = lead;
      return 1;
    }
    cp = (cp << 6) | (next & 0x3f);
  }
  code_point = cp;
  return length;
}

} // namespace

bool py_is_printable(char32_t code_point) {
  // Printable ASCII is by far the common case: skip the search.
  if (code_point >= 0x20 && code_point < 0x7f)
    return true;
  if (code_point < 0x10000)
    return (kBmpPrintable[code_point / 64] >> (code_point % 64)) & 1;
  if (code_point > 0x10ffff)
    return false;
  auto it = std::upper_bound(std::begin(kNonPrintable), std::end(kNonPrintable), code_point,
                             [](char32_t cp, const CodePointRange &r) { return cp < r.first; });
  if (it == std::begin(kNonPrintable))
    return true;
  return code_point >= std::prev(it)->end;
}

void append_py_str_repr(std::string &out, std::string_view utf8) {
  // unicode_repr prefers ' and switches to " only when that avoids every escape of a quote.
  bool has_single = utf8.find('\'') != std::string_view::npos;
  bool has_double = has_single && utf8.find('"') != std::string_view::npos;
  const char quote = has_single && !has_double ? '"' : '\'';

  out.reserve(out.size() + utf8.size() + 2);
  out.push_back(quote);
  // Bytes that appear unchanged are appended as one run rather than one at a time.
  std::size_t run_start = 0;
  std::size_t i = 0;
  while (i < utf8.size()) {
    auto byte = static_cast<unsigned char>(utf8[i]);
    if (byte < 0x80) {
      AsciiClass cls = kAsciiClasses[byte];
      if (cls == AsciiClass::Copy && byte != static_cast<unsigned char>(quote)) {
        ++i;
        continue;
      }
      out.append(utf8.data() + run_start, i - run_start);
      if (cls == AsciiClass::Hex) {
        append_hex_escape(out, 'x', byte, 2);
      } else {
        out.push_back('\\');
        out.push_back(byte == '\t' ? 't' : byte == '\n' ? 'n' : byte == '\r' ? 'r' : static_cast<char>(byte));
      }
      run_start = ++i;
      continue;
    }
    char32_t cp = 0;
    std::size_t length = decode_utf8(utf8, i, cp);
    if (py_is_printable(cp)) {
      i += length;
      continue;
    }
    out.append(utf8.data() + run_start, i - run_start);
    if (cp <= 0xff)
      append_hex_escape(out, 'x', cp, 2);
    else if (cp <= 0xffff)
      append_hex_escape(out, 'u', cp, 4);
    else
      append_hex_escape(out, 'U', cp, 8);
    i += length;
    run_start = i;
  }
  out.append(utf8.data() + run_start, utf8.size() - run_start);
  out.push_back(quote);
}

void append_py_float_repr(std::string &out, double value) {
  // format_float_short ignores the sign of a nan.
  if (std::isnan(value)) {
    out += "nan";
    return;
  }
  if (std::isinf(value)) {
    out += value < 0 ? "-inf" : "inf";
    return;
  }

  // std::to_chars without a precision gives the shortest digits that round-trip, the same
  // digits as David Gay's dtoa in mode 0 that CPython uses; the scientific form makes them
  // and the exponent easy to take apart: [-]d[.ddd]e(+|-)dd.
  char sci[32];
  auto result = std::to_chars(sci, sci + sizeof sci, value, std::chars_format::scientific);
  const char *p = sci;
  bool negative = *p == '-';
  if (negative)
    ++p;
  char digits[24];
  int ndigits = 0;
  for (; *p != 'e'; ++p)
    if (*p != '.')
      digits[ndigits++] = *p;
  ++p; // 'e'
  int exponent = 0;
  std::from_chars(*p == '+' ? p + 1 : p, result.ptr, exponent);
  // decpt as in format_float_short: where the decimal point falls relative to the digits.
  const int decpt = exponent + 1;

  char buf[48];
  char *q = buf;
  if (negative)
    *q++ = '-';
  if (decpt <= -4 || decpt > 16) {
    // Repr never adds ".0" to a one-digit mantissa: 1e+16, not 1.0e+16.
    *q++ = digits[0];
    if (ndigits > 1) {
      *q++ = '.';
      q = std::copy(digits + 1, digits + ndigits, q);
    }
    *q++ = 'e';
    int e = decpt - 1;
    *q++ = e < 0 ? '-' : '+';
    if (e < 0)
      e = -e;
    if (e < 10)
      *q++ = '0';
    q = std::to_chars(q, buf + sizeof buf, e).ptr;
  } else if (decpt <= 0) {
    *q++ = '0';
    *q++ = '.';
    q = std::fill_n(q, -decpt, '0');
    q = std::copy(digits, digits + ndigits, q);
  } else if (decpt >= ndigits) {
    q = std::copy(digits, digits + ndigits, q);
    q = std::fill_n(q, decpt - ndigits, '0');
    *q++ = '.';
    *q++ = '0';
  } else {
    q = std::copy(digits, digits + decpt, q);
    *q++ = '.';
    q = std::copy(digits + decpt, digits + ndigits, q);
  }
  out.append(buf, q);
}

void append_py_repr(std::string &out, const PyConstant &value) {
  using Kind = PyConstant::Kind;
  switch (value.kind) {
  case Kind::None:
    out += "None";
    return;
  case Kind::Bool:
    out += value.b ? "True" : "False";
    return;
  case Kind::Int:
    append_int(out, value.i);
    return;
  case Kind::Float:
    append_py_float_repr(out, value.f);
    return;
  case Kind::Str:
    append_py_str_repr(out, value.s);
    return;
  case Kind::Tuple:
  case Kind::List: {
    bool tuple = value.kind == Kind::Tuple;
    out.push_back(tuple ? '(' : '[');
    for (std::size_t k = 0; k < value.items.size(); ++k) {
      if (k != 0)
        out += ", ";
      append_py_repr(out, value.items[k]);
    }
    // A one-element tuple keeps its trailing comma: (1,).
    if (tuple && value.items.size() == 1)
      out.push_back(',');
    out.push_back(tuple ? ')' : ']');
    return;
  }
  case Kind::Dict: {
    out.push_back('{');
    for (std::size_t k = 0; k < value.dict.size(); ++k) {
      if (k != 0)
        out += ", ";
      append_py_str_repr(out, value.dict[k].first);
      out += ": ";
      append_py_repr(out, value.dict[k].second);
    }
    out.push_back('}');
    return;
  }
  case Kind::Ref:
    out += value.s;
    if (value.b) {
      out.push_back('(');
      for (std::size_t k = 0; k < value.dict.size(); ++k) {
        if (k != 0)
          out += ", ";
        out += value.dict[k].first;
        out.push_back('=');
        append_py_repr(out, value.dict[k].second);
      }
      out.push_back(')');
    }
    return;
  }
}

std::string py_repr(const PyConstant &value) {
  std::string out;
  append_py_repr(out, value);
  return out;
}

} // namespace nkicc
