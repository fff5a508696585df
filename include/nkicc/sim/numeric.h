// Element values as the simulator holds them: every element of every dtype is a double (exact
// for all of them, int32 and uint32 included), rounded to its tensor's dtype whenever it is
// written, as the hardware's output converters do. The rounding rules are choices where the
// hardware's behaviour is not documented; each is stated here once.
#pragma once

#include "nkicc/support/dtype.h"

#include <cstdint>
#include <utility>

namespace nkicc::sim {

/// The value `dtype` holds nearest to `v`:
/// - float32, tfloat32, bfloat16, float16, float8: round to nearest, ties to even (tfloat32
///   keeps float32's range with a 10-bit mantissa); subnormals are kept, not flushed.
/// - overflow: float32/tfloat32/bfloat16/float16 round to +-inf (IEEE); the float8 types
///   saturate a finite value to their largest finite magnitude (float8_e4m3 240, float8_e4m3fn
///   448, float8_e5m2 57344), the saturating conversion accelerators use for fp8; an infinity
///   stays infinite where the format has one (e4m3, e5m2) and becomes NaN in float8_e4m3fn,
///   which has none. NaN stays NaN.
/// - integers: round to nearest, ties to even, then saturate to the type's range; NaN is 0.
/// - bool: 1 for any non-zero value (NaN included), else 0.
/// - the MX x4 types: an element is its bits, an unsigned integer of 32 (float8 x4) or 16
///   (float4 x4) bits, so copies move it exactly; mx_lane() reads its four values.
/// - float8_e8m0fnu: the nearest power of two in [2^-127, 2^127] (ties to the even exponent);
///   zero is 2^-127, a negative value or NaN is NaN.
double round_to(DType dtype, double v);

/// The values an integer dtype holds, [min, max] (the range round_to() saturates to).
std::pair<double, double> integer_limits(DType dtype);

/// Lane `lane` (0..3) of an MX x4 element's bits: a float8_e5m2 / float8_e4m3fn byte (lane 0
/// the low byte) or a float4_e2m1fn nibble (lane 0 the low nibble; bias 1, no inf or NaN, 6 the
/// largest magnitude).
double mx_lane(DType x4, std::uint32_t bits, int lane);
/// The bits of `v` rounded (ties to even, saturating) to one lane of `x4`, in the low bits.
std::uint32_t mx_lane_bits(DType x4, double v);

/// Whether a dtype holds integers (bool included).
bool is_integer(DType dtype);

/// The storage encoding of one element (little-endian, dtype_size() bytes): IEEE binary32 and
/// binary16, bfloat16 as the upper half of binary32, float8 as ml_dtypes encodes it
/// (float8_e4m3: bias 7 with infinities; float8_e4m3fn: bias 7, NaN 0x7f/0xff, no infinity;
/// float8_e5m2: bias 15, IEEE-like), tfloat32 as binary32, an MX x4 element as its bits,
/// float8_e8m0fnu as its biased exponent (0xff NaN). `v` is rounded first.
void encode(DType dtype, double v, unsigned char *out);
/// The value of one stored element.
double decode(DType dtype, const unsigned char *in);

} // namespace nkicc::sim
