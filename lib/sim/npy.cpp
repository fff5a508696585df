#include "nkicc/sim/npy.h"

#include <cctype>
#include <cstring>

namespace nkicc::sim {
namespace {

constexpr std::string_view kMagic = "\x93NUMPY";

/// A reader of the header's dict literal: the subset of Python literals numpy.lib.format writes.
class HeaderParser {
public:
  HeaderParser(std::string_view text, std::string &error) : s_(text), error_(error) {}

  bool parse(NpyArray &out) {
    skip();
    if (!eat('{'))
      return fail("its header is not a dict literal");
    bool seen_descr = false, seen_order = false, seen_shape = false;
    while (true) {
      skip();
      if (eat('}'))
        break;
      std::string key;
      if (!string(key))
        return fail("its header has a key that is not a string");
      skip();
      if (!eat(':'))
        return fail("its header is not a dict literal");
      skip();
      if (key == "descr") {
        if (!string(out.descr))
          return fail("its 'descr' is not a simple type string (structured arrays are not supported)");
        seen_descr = true;
      } else if (key == "fortran_order") {
        if (!boolean(out.fortran_order))
          return fail("its 'fortran_order' is not True or False");
        seen_order = true;
      } else if (key == "shape") {
        if (!shape(out.shape))
          return fail("its 'shape' is not a tuple of non-negative integers");
        seen_shape = true;
      } else {
        return fail("its header has an unknown key '" + key + "'");
      }
      skip();
      if (eat(','))
        continue;
      skip();
      if (eat('}'))
        break;
      return fail("its header is not a dict literal");
    }
    if (!seen_descr)
      return fail("its header has no 'descr'");
    if (!seen_order)
      return fail("its header has no 'fortran_order'");
    if (!seen_shape)
      return fail("its header has no 'shape'");
    return true;
  }

private:
  bool fail(std::string message) {
    error_ = std::move(message);
    return false;
  }
  void skip() {
    while (i_ < s_.size() && (s_[i_] == ' ' || s_[i_] == '\t' || s_[i_] == '\n' || s_[i_] == '\r'))
      ++i_;
  }
  bool eat(char c) {
    if (i_ < s_.size() && s_[i_] == c) {
      ++i_;
      return true;
    }
    return false;
  }
  bool string(std::string &out) {
    if (i_ >= s_.size() || (s_[i_] != '\'' && s_[i_] != '"'))
      return false;
    char quote = s_[i_++];
    out.clear();
    while (i_ < s_.size() && s_[i_] != quote) {
      if (s_[i_] == '\\')
        return false; // numpy never escapes inside these strings
      out += s_[i_++];
    }
    return eat(quote);
  }
  bool boolean(bool &out) {
    if (s_.substr(i_, 4) == "True") {
      i_ += 4;
      out = true;
      return true;
    }
    if (s_.substr(i_, 5) == "False") {
      i_ += 5;
      out = false;
      return true;
    }
    return false;
  }
  bool shape(std::vector<std::int64_t> &out) {
    if (!eat('('))
      return false;
    out.clear();
    while (true) {
      skip();
      if (eat(')'))
        return true;
      if (i_ >= s_.size() || !std::isdigit(static_cast<unsigned char>(s_[i_])))
        return false;
      std::int64_t v = 0;
      while (i_ < s_.size() && std::isdigit(static_cast<unsigned char>(s_[i_]))) {
        if (v > (INT64_MAX - 9) / 10)
          return false;
        v = v * 10 + (s_[i_++] - '0');
      }
      if (s_.substr(i_, 1) == "L") // Python 2's long suffix, in files it wrote
        ++i_;
      out.push_back(v);
      skip();
      if (eat(','))
        continue;
      skip();
      if (eat(')'))
        return true;
      return false;
    }
  }

  std::string_view s_;
  std::size_t i_ = 0;
  std::string &error_;
};

/// The element size a descr names, from its trailing count (`<f4` 4, `|V1` 1); 0 if none.
std::size_t descr_itemsize(std::string_view descr) {
  if (descr == "bfloat16")
    return 2;
  if (descr.size() < 3)
    return 0;
  std::size_t n = 0;
  for (char c : descr.substr(2)) {
    if (!std::isdigit(static_cast<unsigned char>(c)) || n > 1000)
      return 0;
    n = n * 10 + static_cast<std::size_t>(c - '0');
  }
  return n;
}

} // namespace

std::optional<NpyArray> parse_npy(std::string_view bytes, std::string &error) {
  if (bytes.size() < kMagic.size() + 2 || bytes.substr(0, kMagic.size()) != kMagic) {
    error = "not a .npy file (no \\x93NUMPY magic)";
    return std::nullopt;
  }
  auto major = static_cast<unsigned char>(bytes[6]);
  auto minor = static_cast<unsigned char>(bytes[7]);
  if (major < 1 || major > 3 || minor != 0) {
    error = "unsupported .npy format version " + std::to_string(major) + "." + std::to_string(minor) +
            " (nkicc reads 1.0, 2.0 and 3.0)";
    return std::nullopt;
  }
  std::size_t len_bytes = major == 1 ? 2 : 4;
  std::size_t start = 8 + len_bytes;
  if (bytes.size() < start) {
    error = "truncated .npy file: it ends inside its header";
    return std::nullopt;
  }
  std::size_t header_len = 0;
  for (std::size_t i = 0; i < len_bytes; ++i)
    header_len |= static_cast<std::size_t>(static_cast<unsigned char>(bytes[8 + i])) << (8 * i);
  if (bytes.size() - start < header_len) {
    error = "truncated .npy file: it ends inside its header";
    return std::nullopt;
  }
  NpyArray out;
  if (!HeaderParser(bytes.substr(start, header_len), error).parse(out))
    return std::nullopt;
  std::size_t itemsize = descr_itemsize(out.descr);
  if (itemsize == 0) {
    error = "its descr '" + out.descr + "' is not an element type nkicc reads";
    return std::nullopt;
  }
  std::uint64_t count = 1;
  for (std::int64_t d : out.shape) {
    if (d != 0 && count > UINT64_MAX / static_cast<std::uint64_t>(d)) {
      error = "its shape " + npy_shape_text(out.shape) + " is too large";
      return std::nullopt;
    }
    count *= static_cast<std::uint64_t>(d);
  }
  std::size_t data_start = start + header_len;
  std::uint64_t have = bytes.size() - data_start;
  if (count > UINT64_MAX / itemsize || have != count * itemsize) {
    error = "it holds " + std::to_string(have) + " bytes of data, but shape " + npy_shape_text(out.shape) + " of '" +
            out.descr + "' needs " + std::to_string(count * itemsize);
    return std::nullopt;
  }
  out.data = bytes.substr(data_start);
  return out;
}

std::string npy_shape_text(std::span<const std::int64_t> shape) {
  std::string out = "(";
  for (std::size_t i = 0; i < shape.size(); ++i) {
    if (i)
      out += ", ";
    out += std::to_string(shape[i]);
  }
  if (shape.size() == 1)
    out += ",";
  return out + ")";
}

std::string write_npy(std::string_view descr, std::span<const std::int64_t> shape, std::string_view data) {
  std::string header = "{'descr': '" + std::string(descr) + "', 'fortran_order': False, 'shape': " +
                       npy_shape_text(shape) + ", }";
  // Data starts 64-byte aligned, after spaces and a newline (numpy.lib.format's layout).
  std::size_t prefix = kMagic.size() + 2 + 2;
  bool v2 = prefix + header.size() + 1 > 65535;
  if (v2)
    prefix += 2;
  std::size_t total = prefix + header.size() + 1;
  header.append((64 - total % 64) % 64, ' ');
  header += '\n';
  std::string out(kMagic);
  out += static_cast<char>(v2 ? 2 : 1);
  out += '\0';
  std::size_t len = header.size();
  for (std::size_t i = 0; i < (v2 ? 4u : 2u); ++i)
    out += static_cast<char>((len >> (8 * i)) & 0xff);
  out += header;
  out += data;
  return out;
}

std::string_view npy_descr(DType dtype) {
  switch (dtype) {
  case DType::Float32:
  case DType::TFloat32:
    return "<f4";
  case DType::Float16:
    return "<f2";
  case DType::BFloat16:
    return "<V2";
  case DType::Float8E4M3:
  case DType::Float8E4M3FN:
  case DType::Float8E5M2:
    return "|V1";
  case DType::Int8:
    return "|i1";
  case DType::Int16:
    return "<i2";
  case DType::Int32:
    return "<i4";
  case DType::UInt8:
    return "|u1";
  case DType::UInt16:
    return "<u2";
  case DType::UInt32:
    return "<u4";
  case DType::Bool:
    return "|b1";
  case DType::Float8E5M2X4:
  case DType::Float8E4M3FNX4:
    return "<u4";
  case DType::Float4E2M1FNX4:
    return "<u2";
  case DType::Float8E8M0FNU:
    return "|V1";
  }
  return "<f4";
}

} // namespace nkicc::sim
