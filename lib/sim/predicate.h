// The predicates BIR carries as text: `mask=` bounds of loads and stores and affine_select's
// `pred`, and iota's `start`. lib/nki writes them (IndexObject::term, predicate(), Affine::text)
// in this grammar, which is therefore part of the BIR format:
//
//   pred    := or
//   or      := and ('|' and)*
//   and     := compare ('&' compare)*
//   compare := sum (('<' | '<=' | '>' | '>=' | '==' | '!=') sum)?
//   sum     := product (('+' | '-') product)*
//   product := unary ('*' unary)*
//   unary   := '-' unary | INT | 'i' DIGIT | 'program_id' '(' DIGIT ')' | '(' pred ')'
//
// `iK` is the coordinate along axis K of the instruction's iteration space (the view's
// dimension K), `program_id(A)` the SPMD instance's coordinate on grid axis A. Every sum is
// affine: a product needs a constant factor.
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace nkicc::sim {

inline constexpr std::size_t kMaxIndexAxes = 6;
inline constexpr std::size_t kMaxProgramAxes = 3;

/// c + sum(a[k] * i_k) + sum(p[a] * program_id(a)).
struct AffineForm {
  std::int64_t constant = 0;
  std::array<std::int64_t, kMaxIndexAxes> index{};
  std::array<std::int64_t, kMaxProgramAxes> program{};
  bool is_constant() const;
};

/// A parsed predicate (or, for iota's start, a bare affine value).
class Predicate {
public:
  /// Parses `text`; nullopt with `error` naming the offending position.
  static std::optional<Predicate> parse(std::string_view text, std::string &error);

  /// Binds the program ids: afterwards eval() needs only the coordinates.
  void bind(std::span<const std::int64_t> program_ids);
  /// The predicate's truth (a bare sum: whether it is non-zero) at `coords`.
  bool eval(std::span<const std::int64_t> coords) const;
  /// The value of a bare sum at `coords` (iota's start); a comparison gives 0 or 1.
  std::int64_t value(std::span<const std::int64_t> coords) const;
  /// The highest index axis it names plus one.
  std::size_t axes() const { return axes_; }

  struct Node {
    enum class Kind { Sum, Compare, And, Or } kind = Kind::Sum;
    std::string op; ///< comparison operator
    AffineForm form; ///< Sum: the value; Compare: lhs - rhs
    std::int64_t bound = 0; ///< the form's value with the program ids bound, minus index terms
    std::unique_ptr<Node> lhs, rhs;
  };

  Predicate() = default;
  Predicate(Predicate &&) = default;
  Predicate &operator=(Predicate &&) = default;

private:
  std::unique_ptr<Node> root_;
  std::size_t axes_ = 0;
};

} // namespace nkicc::sim
