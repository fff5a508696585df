// hash() of the interpreter's values, and key equality for dicts and sets. Ints, floats, bools,
// tuples and frozensets hash exactly as CPython 3.11 hashes them (so sets of them iterate in
// CPython's order); str uses a fixed FNV-1a, since CPython's own string hash is randomized per
// process and no program can rely on it.
#include "common.h"

#include "nkicc/trace/pylib.h"

#include <cmath>
#include <vector>

namespace nkicc::trace {

using namespace pylib;

namespace {

// CPython's Include/pyhash.h: hashes of numbers are reductions modulo the Mersenne prime
// 2^61 - 1, so that equal ints and floats hash alike.
constexpr int kHashBits = 61;
constexpr std::uint64_t kHashModulus = (std::uint64_t{1} << kHashBits) - 1;
constexpr std::int64_t kHashInf = 314159;

std::int64_t fix_minus_one(std::int64_t h) { return h == -1 ? -2 : h; }

// Python/pyhash.c and Objects/tupleobject.c's xxHash-based tuple hash.
constexpr std::uint64_t kXXPrime1 = 11400714785074694791ULL;
constexpr std::uint64_t kXXPrime2 = 14029467366897019727ULL;
constexpr std::uint64_t kXXPrime5 = 2870177450012600261ULL;
std::uint64_t xx_rotate(std::uint64_t x) { return (x << 31) | (x >> 33); }

std::int64_t str_hash(std::string_view s) {
  std::uint64_t h = 14695981039346656037ULL;
  for (unsigned char c : s) {
    h ^= c;
    h *= 1099511628211ULL;
  }
  return fix_minus_one(static_cast<std::int64_t>(h));
}

[[noreturn]] void unhashable(const Value &v) { raise_python("TypeError", "unhashable type: '" + tn(v) + "'"); }

/// The hash of a value that is not a tuple.
std::int64_t leaf_hash(Interpreter *interp, const Value &v) {
  switch (v.kind) {
  case K::None:
    return 0x4e6f6e65; // a constant, as CPython 3.12 gives None
  case K::Ellipsis:
    return 0x456c6c69;
  case K::Bool:
    return v.b ? 1 : 0;
  case K::Int:
    return int_hash(v.i);
  case K::Float:
    return float_hash(v.f);
  case K::Str:
    return str_hash(v.str_text());
  case K::List:
  case K::Dict:
  case K::Slice:
    unhashable(v);
  case K::Tuple:
    break;
  case K::Object: {
    Object *obj = v.object();
    if (!interp)
      return obj->identity_hash();
    std::optional<std::int64_t> h = obj->hash(*interp);
    if (!h)
      unhashable(v);
    return fix_minus_one(*h);
  }
  }
  return 0;
}

} // namespace

std::int64_t int_hash(std::int64_t x) {
  std::uint64_t m = x < 0 ? 0 - static_cast<std::uint64_t>(x) : static_cast<std::uint64_t>(x);
  std::int64_t h = static_cast<std::int64_t>(m % kHashModulus);
  return fix_minus_one(x < 0 ? -h : h);
}

std::int64_t float_hash(double v) {
  if (!std::isfinite(v)) {
    if (std::isinf(v))
      return v > 0 ? kHashInf : -kHashInf;
    return 0; // CPython hashes a NaN by its identity; nkicc's floats have none
  }
  int e = 0;
  double m = std::frexp(v, &e);
  int sign = 1;
  if (m < 0) {
    sign = -1;
    m = -m;
  }
  // 28 bits at a time, as _Py_HashDouble.
  std::uint64_t x = 0;
  while (m != 0.0) {
    x = ((x << 28) & kHashModulus) | x >> (kHashBits - 28);
    m *= 268435456.0;
    e -= 28;
    auto y = static_cast<std::uint64_t>(m);
    m -= static_cast<double>(y);
    x += y;
    if (x >= kHashModulus)
      x -= kHashModulus;
  }
  e = e >= 0 ? e % kHashBits : kHashBits - 1 - ((-1 - e) % kHashBits);
  x = ((x << e) & kHashModulus) | x >> (kHashBits - e);
  x = x * static_cast<std::uint64_t>(static_cast<std::int64_t>(sign));
  return fix_minus_one(static_cast<std::int64_t>(x));
}

std::int64_t hash_value(Interpreter *interp, const Value &v) {
  if (v.kind != K::Tuple)
    return leaf_hash(interp, v);
  // Tuples nest arbitrarily deep (CPython hashes a tuple 50,000 levels deep): an explicit
  // stack, not recursion.
  struct Frame {
    const std::vector<Value> *items;
    std::size_t next;
    std::uint64_t acc;
  };
  std::vector<Frame> stack;
  stack.push_back({&v.seq().items, 0, kXXPrime5});
  std::int64_t done = 0; // the hash of the tuple just finished
  bool have_done = false;
  while (true) {
    Frame &f = stack.back();
    if (have_done) {
      f.acc += static_cast<std::uint64_t>(done) * kXXPrime2;
      f.acc = xx_rotate(f.acc);
      f.acc *= kXXPrime1;
      have_done = false;
    }
    if (f.next < f.items->size()) {
      const Value &item = (*f.items)[f.next++];
      if (item.kind == K::Tuple) {
        stack.push_back({&item.seq().items, 0, kXXPrime5});
        continue;
      }
      done = leaf_hash(interp, item);
      have_done = true;
      continue;
    }
    std::uint64_t acc = f.acc + (f.items->size() ^ (kXXPrime5 ^ 3527539ULL));
    done = acc == static_cast<std::uint64_t>(-1) ? 1546275796 : static_cast<std::int64_t>(acc);
    stack.pop_back();
    if (stack.empty())
      return done;
    have_done = true;
  }
}

bool keys_equal(Interpreter *interp, const Value &a, const Value &b) {
  if (a.kind == b.kind) {
    switch (a.kind) {
    case K::Int:
      return a.i == b.i;
    case K::Str:
      return a.same_heap(b) || a.str_text() == b.str_text();
    default:
      break;
    }
  }
  if (is_same(a, b))
    return true;
  if (interp)
    return interp->truthy(interp->compare(python::CmpOpKind::Eq, a, b));
  return values_equal(a, b);
}

} // namespace nkicc::trace
