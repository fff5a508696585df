// The NKI op catalogue: every declared signature parses into its parameters (names, kinds,
// defaults, keyword-only and variadic markers), every op has a lowering, no op is declared
// twice in one module, and a malformed signature is reported as nkicc's own bug; and the
// dtype promotion the element-wise ops share.
#include "nki/lowering.h"
#include "nki/op_table.h"

#include <catch2/catch.hpp>

#include <set>
#include <string>

using namespace nkicc;
using namespace nkicc::nki;

namespace {

OpInfo parse(std::string_view signature) {
  static std::vector<std::unique_ptr<OpDef>> keep;
  keep.push_back(std::make_unique<OpDef>());
  keep.back()->signature = signature;
  return parse_signature(*keep.back());
}

std::string parse_error(std::string_view signature) {
  try {
    parse(signature);
  } catch (const TraceError &e) {
    return e.id + ": " + e.message;
  }
  return "no error";
}

} // namespace

TEST_CASE("op signatures parse into parameters") {
  OpInfo op = parse("tensor_scalar(data: tile, op0: op, operand0: tile_or_scalar, reverse0: bool = False, "
                    "op1: op? = None, *, dtype: dtype? = None, name: any = 'x', scale: scalar = 1.5, n: int = -2)");
  CHECK(op.name == "tensor_scalar");
  REQUIRE(op.params.size() == 9);
  CHECK(op.params[0].name == "data");
  CHECK(op.params[0].kind == ParamKind::Tile);
  CHECK_FALSE(op.params[0].default_value);
  CHECK_FALSE(op.params[0].keyword_only);
  CHECK(op.params[3].default_value->kind == Value::Kind::Bool);
  CHECK_FALSE(op.params[3].default_value->b);
  CHECK(op.params[4].nullable);
  CHECK(op.params[4].kind == ParamKind::Op);
  CHECK(op.params[5].keyword_only);
  CHECK(op.params[5].nullable);
  CHECK(op.params[6].default_value->str_text() == "x");
  CHECK(op.params[7].default_value->f == 1.5);
  CHECK(op.params[8].default_value->i == -2);
  CHECK(op.index("op1") == 4);
  CHECK(op.index("nope") == op.params.size());
}

TEST_CASE("a variadic parameter makes the rest keyword-only") {
  OpInfo op = parse("spmd_dim(*dims: any, flag: bool = True)");
  REQUIRE(op.params.size() == 2);
  CHECK(op.params[0].variadic);
  CHECK(op.params[1].keyword_only);
  OpInfo empty = parse("program_ndim()");
  CHECK(empty.params.empty());
}

TEST_CASE("malformed signatures are nkicc's bug") {
  CHECK(parse_error("load") == "internal: nkicc bug: malformed NKI op signature 'load': expected name(...)");
  CHECK(parse_error("load(src)") ==
        "internal: nkicc bug: malformed NKI op signature 'load(src)': parameter 'src' has no kind");
  CHECK(parse_error("load(src: tiel)") ==
        "internal: nkicc bug: malformed NKI op signature 'load(src: tiel)': unknown kind 'tiel'");
  CHECK(parse_error("load(src: tile = nl.x)") ==
        "internal: nkicc bug: malformed NKI op signature 'load(src: tile = nl.x)': default 'nl.x' is not a literal");
}

TEST_CASE("every op of the catalogue is well declared") {
  // Every table the runtime installs: an op's signature is parsed only when a kernel first
  // calls it, so a malformed one is caught here rather than by the first kernel that uses it.
  struct Family {
    const char *module;
    std::span<const OpDef> ops;
  };
  const Family families[] = {{"nl", language_memory_ops()},
                             {"nl", language_math_ops()},
                             {"nl", language_index_ops()},
                             {"nl", language_misc_ops()},
                             {"nl", language_collective_ops()},
                             {"nl.constants", language_constants_ops()},
                             {"nisa", isa_ops()},
                             {"nisa", isa_reduce_ops()},
                             {"nisa", isa_select_ops()},
                             {"nisa", isa_mx_ops()},
                             {"nccl", nccl_ops()},
                             {"tensor", tensor_method_ops()}};
  std::set<std::string> seen;
  for (const Family &f : families) {
    for (const OpDef &def : f.ops) {
      OpInfo op = parse_signature(def);
      INFO(def.signature);
      CHECK(def.lower != nullptr);
      CHECK(seen.insert(std::string(f.module) + "." + std::string(op.name)).second);
      std::set<std::string_view> names;
      for (const ParamDef &p : op.params)
        CHECK(names.insert(p.name).second);
      // A required parameter never follows one with a default among the positional ones.
      bool defaulted = false;
      for (const ParamDef &p : op.params) {
        if (p.keyword_only)
          break;
        if (p.default_value)
          defaulted = true;
        else
          CHECK_FALSE(defaulted);
      }
      if (def.dst.enabled)
        CHECK(def.dst.probe <= op.params.size());
    }
  }
}

TEST_CASE("dtype promotion follows NKI's table") {
  // The examples of NKI's "NKI Type Promotion" rules.
  CHECK(promote(DType::Int32, DType::Float16) == DType::Float16);
  CHECK(promote(DType::UInt16, DType::TFloat32) == DType::TFloat32);
  CHECK(promote(DType::Float32, DType::TFloat32) == DType::Float32);
  CHECK(promote(DType::Float32, DType::BFloat16) == DType::Float32);
  CHECK(promote(DType::Float16, DType::BFloat16) == DType::Float32);
  CHECK(promote(DType::Float8E4M3, DType::Float16) == DType::Float16);
  CHECK(promote(DType::Float8E4M3, DType::BFloat16) == DType::BFloat16);
  CHECK(promote(DType::Float8E4M3, DType::Float8E5M2) == DType::BFloat16);
  CHECK(promote(DType::Int16, DType::Int32) == DType::Int32);
  CHECK(promote(DType::UInt8, DType::UInt16) == DType::UInt16);
  CHECK(promote(DType::UInt16, DType::Int32) == DType::Int32);
  CHECK(promote(DType::Int8, DType::UInt8) == DType::Int16);
  CHECK(promote(DType::Int8, DType::UInt16) == DType::Int32);
  CHECK(promote(DType::Int32, DType::UInt32) == DType::Float32);
  CHECK(promote(DType::Bool, DType::Int8) == DType::Int8);
  // Weak scalars: (int8, 2) -> int32, (float16, 1.2) -> float32.
  CHECK(promote(DType::Int8, weak_scalar_dtype(Value::integer(2))) == DType::Int32);
  CHECK(promote(DType::Float16, weak_scalar_dtype(Value::floating(1.2))) == DType::Float32);
  CHECK(promote(DType::BFloat16, weak_scalar_dtype(Value::integer(2))) == DType::BFloat16);
}
