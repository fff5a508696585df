// fmt's compiled part, built into nkicc instead of loaded from Debian's libfmt.so.
//
// Why: the shared libfmt (and the shared libspdlog that needs it) made every nkicc process load
// and relocate a second C++ runtime (libstdc++.so, beside the static one nkicc links): about half
// the instructions of `nkicc --version`. Debian ships no static libfmt, and fmt's header-only
// mode compiles its implementation into every file that formats (seconds more per file). fmt's
// own recipe for a compiled library is this: format-inl.h's definitions in one file, plus
// instances of the templates that format.h declares `extern` (issue 16, start-up).
#include <fmt/format-inl.h>

FMT_BEGIN_NAMESPACE
namespace detail {

template FMT_API auto dragonbox::to_decimal(float x) noexcept -> dragonbox::decimal_fp<float>;
template FMT_API auto dragonbox::to_decimal(double x) noexcept -> dragonbox::decimal_fp<double>;
template FMT_API auto thousands_sep_impl(locale_ref) -> thousands_sep_result<char>;
template FMT_API auto decimal_point_impl(locale_ref) -> char;
template FMT_API void buffer<char>::append(const char *, const char *);
template FMT_API void vformat_to(buffer<char> &, string_view, basic_format_args<FMT_BUFFER_CONTEXT(char)>, locale_ref);

} // namespace detail
FMT_END_NAMESPACE
