// A tensor's name in 8 bytes where a std::string takes 32: a trace holds one Tensor per tile,
// up to millions, and most tiles share a few stems (the kernel's variable names) that
// ir::number_tensor_names numbers (`a.17` is the stem "a" and the number 17). Stems are interned
// once per process, as python::Symbol interns Python names; the text is built on demand.
#pragma once

#include <fmt/format.h>

#include <cstdint>
#include <string>
#include <string_view>

namespace nkicc::ir {

class TensorName {
public:
  TensorName() = default;
  // Implicit, as the std::string it stands for: a whole name, not numbered.
  TensorName(std::string_view text) : stem_(intern(text)) {}
  TensorName(const std::string &text) : TensorName(std::string_view(text)) {}
  TensorName(const char *text) : TensorName(std::string_view(text)) {}
  /// `stem.number`; number 0 is the stem alone.
  TensorName(std::string_view stem, std::uint32_t number) : stem_(intern(stem)), number_(number) {}

  std::string_view stem() const;
  std::uint32_t number() const { return number_; }
  /// The name's text: the stem, then `.number` when numbered.
  std::string str() const;
  operator std::string() const { return str(); }
  bool empty() const { return stem_ == 0 && number_ == 0; }

  friend bool operator==(const TensorName &a, const TensorName &b) {
    return (a.stem_ == b.stem_ && a.number_ == b.number_) || a.str() == b.str();
  }
  friend bool operator==(const TensorName &a, std::string_view b) {
    return a.number_ == 0 ? a.stem() == b : a.str() == b;
  }
  friend bool operator==(const TensorName &a, const std::string &b) { return a == std::string_view(b); }
  friend bool operator==(const TensorName &a, const char *b) { return a == std::string_view(b); }

private:
  static std::uint32_t intern(std::string_view text);
  std::uint32_t stem_ = 0; ///< 0 is the empty text
  std::uint32_t number_ = 0;
};

} // namespace nkicc::ir

template <> struct fmt::formatter<nkicc::ir::TensorName> : fmt::formatter<std::string_view> {
  auto format(const nkicc::ir::TensorName &name, format_context &ctx) const {
    std::string text = name.str();
    return fmt::formatter<std::string_view>::format(text, ctx);
  }
};
