// repr() and str() of host arrays as NumPy 1.24's arrayprint prints them with its default
// options (precision 8, linewidth 75, threshold 1000, edgeitems 3): a common format for every
// element (positional or scientific, padded to one width), rows wrapped and nested with
// NumPy's indentation, `dtype=` for the types NumPy does not imply.
#include "numpy_values.h"

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <functional>

namespace nkicc::trace::numpy {

namespace {

constexpr std::size_t kLineWidth = 75;
constexpr std::int64_t kThreshold = 1000;
constexpr std::int64_t kEdgeItems = 3;
constexpr int kPrecision = 8;

/// Shortest round-trip digits of a finite nonzero value of the type: digits and the decimal
/// exponent of the first one.
void shortest_digits(NpType t, double x, std::string &digits, int &exp10) {
  char buf[64];
  for (int p = 1; p <= 17; ++p) {
    std::snprintf(buf, sizeof buf, "%.*e", p - 1, std::fabs(x));
    if (Scalar::of_double(t, std::strtod(buf, nullptr)).f == std::fabs(x))
      break;
  }
  std::string s = buf;
  std::size_t e = s.find('e');
  exp10 = std::atoi(s.c_str() + e + 1);
  digits.clear();
  for (std::size_t k = 0; k < e; ++k)
    if (s[k] != '.')
      digits += s[k];
  while (digits.size() > 1 && digits.back() == '0')
    digits.pop_back();
}

/// Dragon4 positional, unique digits but at most kPrecision after the point, trailing zeros
/// trimmed to the point ("1.", "0.25").
std::string positional(NpType t, double x) {
  if (x == 0.0)
    return std::signbit(x) ? "-0." : "0.";
  std::string digits;
  int exp10 = 0;
  shortest_digits(t, x, digits, exp10);
  int frac = static_cast<int>(digits.size()) - exp10 - 1;
  std::string out;
  if (frac > kPrecision) {
    char buf[400];
    std::snprintf(buf, sizeof buf, "%.*f", kPrecision, std::fabs(x));
    out = buf;
    while (out.back() == '0')
      out.pop_back();
  } else if (exp10 >= 0) {
    std::string int_part = digits.substr(0, std::min<std::size_t>(digits.size(), static_cast<std::size_t>(exp10) + 1));
    while (int_part.size() < static_cast<std::size_t>(exp10) + 1)
      int_part += '0';
    out = int_part + "." + (digits.size() > int_part.size() ? digits.substr(int_part.size()) : "");
  } else {
    out = "0." + std::string(static_cast<std::size_t>(-exp10 - 1), '0') + digits;
  }
  return (std::signbit(x) ? "-" : "") + out;
}

/// Dragon4 scientific: mantissa digits (unique, at most kPrecision after the point), split into
/// sign+integer part, fraction and exponent.
void scientific(NpType t, double x, std::string &int_part, std::string &frac, int &exp10) {
  if (x == 0.0) {
    int_part = std::signbit(x) ? "-0" : "0";
    frac.clear();
    exp10 = 0;
    return;
  }
  std::string digits;
  shortest_digits(t, x, digits, exp10);
  if (digits.size() > static_cast<std::size_t>(kPrecision) + 1) {
    char buf[64];
    std::snprintf(buf, sizeof buf, "%.*e", kPrecision, std::fabs(x));
    std::string s = buf;
    std::size_t e = s.find('e');
    exp10 = std::atoi(s.c_str() + e + 1);
    digits.clear();
    for (std::size_t k = 0; k < e; ++k)
      if (s[k] != '.')
        digits += s[k];
    while (digits.size() > 1 && digits.back() == '0')
      digits.pop_back();
  }
  int_part = (std::signbit(x) ? "-" : "") + digits.substr(0, 1);
  frac = digits.substr(1);
}

std::string exponent_text(int exp10, std::size_t digits) {
  std::string e = std::to_string(std::abs(exp10));
  while (e.size() < digits)
    e = "0" + e;
  return std::string(exp10 < 0 ? "e-" : "e+") + e;
}

/// The element formatter of an array: one width for every element.
std::function<std::string(const Scalar &)> formatter(const HostArray &a, const std::vector<std::int64_t> &shown) {
  NpType t = a.type;
  if (is_bool(t)) {
    // BoolFormat: " True" lines up with "False", except in a 0-d array.
    std::string true_text = a.shape.empty() ? "True" : " True";
    return [true_text](const Scalar &s) { return s.truthy() ? true_text : std::string("False"); };
  }
  if (is_integer(t)) {
    std::size_t width = 0;
    auto text = [](const Scalar &s) { return is_unsigned_int(s.type) ? std::to_string(s.u) : std::to_string(s.i); };
    for (std::int64_t k : shown)
      width = std::max(width, text(get_element(a, k)).size());
    return [width, text](const Scalar &s) {
      std::string v = text(s);
      return std::string(width > v.size() ? width - v.size() : 0, ' ') + v;
    };
  }
  // Floats: FloatingFormat.fillFormat.
  std::vector<double> finite;
  bool any_nonfinite = false, neg_inf = false;
  for (std::int64_t k : shown) {
    double x = get_element(a, k).f;
    if (std::isfinite(x))
      finite.push_back(x);
    else {
      any_nonfinite = true;
      neg_inf = neg_inf || (std::isinf(x) && x < 0);
    }
  }
  double max_abs = 0, min_abs = INFINITY;
  for (double x : finite)
    if (x != 0.0) {
      max_abs = std::max(max_abs, std::fabs(x));
      min_abs = std::min(min_abs, std::fabs(x));
    }
  bool exp_format = max_abs > 0 && (max_abs >= 1e8 || min_abs < 0.0001 || max_abs / min_abs > 1000.0);
  std::size_t pad_left = 0, pad_right = 0, exp_size = 0;
  std::size_t precision = 0;
  if (exp_format) {
    for (double x : finite) {
      std::string ip, fr;
      int e = 0;
      scientific(t, x, ip, fr, e);
      pad_left = std::max(pad_left, ip.size());
      precision = std::max(precision, fr.size());
      exp_size = std::max(exp_size, std::to_string(std::abs(e)).size());
    }
    exp_size = std::max<std::size_t>(exp_size, 2);
    pad_right = exp_size + 2 + precision;
  } else {
    for (double x : finite) {
      std::string s = positional(t, x);
      std::size_t dot = s.find('.');
      pad_left = std::max(pad_left, dot);
      pad_right = std::max(pad_right, s.size() - dot - 1);
    }
  }
  if (any_nonfinite) {
    std::size_t offset = pad_right + 1;
    std::size_t inflen = 3 + (neg_inf ? 1 : 0);
    if (inflen > offset)
      pad_left = std::max(pad_left, inflen - offset);
    if (3 > offset)
      pad_left = std::max(pad_left, 3 - offset);
  }
  return [=](const Scalar &s) {
    double x = s.f;
    if (!std::isfinite(x)) {
      std::string v = std::isnan(x) ? "nan" : x > 0 ? "inf" : "-inf";
      std::size_t width = pad_left + pad_right + 1;
      return std::string(width > v.size() ? width - v.size() : 0, ' ') + v;
    }
    if (exp_format) {
      std::string ip, fr;
      int e = 0;
      scientific(t, x, ip, fr, e);
      while (fr.size() < precision)
        fr += '0';
      return std::string(pad_left > ip.size() ? pad_left - ip.size() : 0, ' ') + ip + "." + fr +
             exponent_text(e, exp_size);
    }
    std::string v = positional(t, x);
    std::size_t dot = v.find('.');
    std::size_t right = v.size() - dot - 1;
    return std::string(pad_left > dot ? pad_left - dot : 0, ' ') + v + std::string(pad_right - right, ' ');
  };
}

/// _extendLine: appends a word, wrapping before it when the line would grow past the width.
void extend_line(std::string &s, std::string &line, const std::string &word, std::size_t width,
                 const std::string &next_prefix) {
  bool wrap = line.size() + word.size() > width && line.size() > next_prefix.size();
  if (wrap) {
    while (!line.empty() && line.back() == ' ')
      line.pop_back();
    s += line + "\n";
    line = next_prefix;
  }
  line += word;
}

/// _formatArray's recursion.
std::string format_array(const HostArray &a, const std::function<std::string(const Scalar &)> &fmt,
                         std::vector<std::int64_t> &index, const std::string &hanging, std::size_t width,
                         const std::string &separator, bool summarize) {
  std::size_t axis = index.size(), axes_left = a.shape.size() - axis;
  if (axes_left == 0) {
    std::int64_t k = 0;
    for (std::size_t d = 0; d < a.shape.size(); ++d)
      k = k * a.shape[d] + index[d];
    return fmt(get_element(a, k));
  }
  std::string next_hanging = hanging + " ";
  std::size_t next_width = width - 1;
  std::int64_t n = a.shape[axis];
  bool show_summary = summarize && 2 * kEdgeItems < n;
  std::int64_t leading = show_summary ? kEdgeItems : 0, trailing = show_summary ? kEdgeItems : n;
  std::string rsep = separator;
  while (!rsep.empty() && rsep.back() == ' ')
    rsep.pop_back();
  std::string s;
  auto item = [&](std::int64_t i) {
    index.push_back(i < 0 ? i + n : i);
    std::string out = format_array(a, fmt, index, next_hanging, next_width, separator, summarize);
    index.pop_back();
    return out;
  };
  if (axes_left == 1) {
    std::size_t elem_width = width - std::max<std::size_t>(rsep.size(), 1);
    std::string line = hanging;
    for (std::int64_t i = 0; i < leading; ++i) {
      extend_line(s, line, item(i), elem_width, hanging);
      line += separator;
    }
    if (show_summary) {
      extend_line(s, line, "...", elem_width, hanging);
      line += separator;
    }
    for (std::int64_t i = trailing; i > 1; --i) {
      extend_line(s, line, item(-i), elem_width, hanging);
      line += separator;
    }
    if (n > 0)
      extend_line(s, line, item(-1), elem_width, hanging);
    s += line;
  } else {
    std::string line_sep = rsep + std::string(axes_left - 1, '\n');
    for (std::int64_t i = 0; i < leading; ++i)
      s += hanging + item(i) + line_sep;
    if (show_summary)
      s += hanging + "..." + line_sep;
    for (std::int64_t i = trailing; i > 1; --i)
      s += hanging + item(-i) + line_sep;
    if (n > 0)
      s += hanging + item(-1);
  }
  return "[" + s.substr(std::min(hanging.size(), s.size())) + "]";
}

/// The elements printed (all, or the edges of each axis when summarizing), for the format.
std::vector<std::int64_t> shown_elements(const HostArray &a, bool summarize) {
  std::vector<std::int64_t> out;
  std::int64_t n = a.size();
  if (!summarize) {
    for (std::int64_t k = 0; k < n; ++k)
      out.push_back(k);
    return out;
  }
  for (std::int64_t k = 0; k < n; ++k) {
    std::int64_t rem = k;
    bool edge = true;
    for (std::size_t d = a.shape.size(); d-- > 0;) {
      std::int64_t i = rem % a.shape[d];
      rem /= a.shape[d];
      if (a.shape[d] > 2 * kEdgeItems && i >= kEdgeItems && i < a.shape[d] - kEdgeItems)
        edge = false;
    }
    if (edge)
      out.push_back(k);
  }
  return out;
}

std::string array_to_string(const HostArray &a, const std::string &separator, const std::string &prefix,
                            std::size_t width) {
  bool summarize = a.size() > kThreshold;
  auto fmt = formatter(a, shown_elements(a, summarize));
  if (a.shape.empty())
    return fmt(get_element(a, 0));
  std::vector<std::int64_t> index;
  return format_array(a, fmt, index, std::string(prefix.size() + 1, ' '), width, separator, summarize);
}

bool implied_dtype(NpType t) { return t == NpType::Int64 || t == NpType::Float64 || t == NpType::Bool; }

std::string shape_repr(const std::vector<std::int64_t> &shape) {
  std::string out = "(";
  for (std::size_t k = 0; k < shape.size(); ++k)
    out += (k ? ", " : "") + std::to_string(shape[k]);
  return out + (shape.size() == 1 ? ",)" : ")");
}

} // namespace

std::string array_repr(const HostArray &a) {
  bool skip_dtype = implied_dtype(a.type) && a.size() > 0;
  std::string prefix = "array(";
  std::string suffix = skip_dtype ? ")" : ",";
  std::string body;
  if (a.size() > 0 || (a.shape.size() == 1 && a.shape[0] == 0))
    body = a.size() == 0 ? "[]" : array_to_string(a, ", ", prefix, kLineWidth - suffix.size());
  else
    body = "[], shape=" + shape_repr(a.shape);
  std::string out = prefix + body + suffix;
  if (skip_dtype)
    return out;
  std::string dtype = "dtype=" + std::string(type_name(a.type)) + ")";
  std::size_t last_line = out.size() - (out.rfind('\n') == std::string::npos ? 0 : out.rfind('\n') + 1);
  std::string spacer = last_line + dtype.size() + 1 > kLineWidth ? "\n" + std::string(prefix.size(), ' ') : " ";
  return out + spacer + dtype;
}

std::string array_str(const HostArray &a) {
  if (a.size() == 0)
    return "[]";
  return array_to_string(a, " ", "", kLineWidth);
}

} // namespace nkicc::trace::numpy
