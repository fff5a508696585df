// Signature parsing, argument binding and kind checks for every op of the catalogue.
#include "op_table.h"

#include "index.h"
#include "lowering.h"
#include "objects.h"
#include "runtime.h"

#include "nkicc/trace/pylib.h"

#include <fmt/format.h>

#include <charconv>
#include <cstdlib>

namespace nkicc::nki {

namespace {

/// A malformed signature is nkicc's bug, found the first time the module is built.
[[noreturn]] void bad_signature(std::string_view signature, std::string_view why) {
  raise_error("internal", fmt::format("nkicc bug: malformed NKI op signature '{}': {}", signature, why));
}

std::optional<ParamKind> parse_kind(std::string_view k) {
  static const std::pair<std::string_view, ParamKind> kKinds[] = {
      {"any", ParamKind::Any},     {"tensor", ParamKind::Tensor}, {"tile", ParamKind::Tile},
      {"hbm", ParamKind::Hbm},     {"scalar", ParamKind::Scalar}, {"tile_or_scalar", ParamKind::TileOrScalar},
      {"dtype", ParamKind::Dtype}, {"op", ParamKind::Op},         {"bool", ParamKind::Bool},
      {"int", ParamKind::Int},     {"shape", ParamKind::Shape},   {"index", ParamKind::Index},
      {"mask", ParamKind::Mask}};
  for (auto [name, kind] : kKinds)
    if (name == k)
      return kind;
  return std::nullopt;
}

std::string_view trim(std::string_view s) {
  while (!s.empty() && s.front() == ' ')
    s.remove_prefix(1);
  while (!s.empty() && s.back() == ' ')
    s.remove_suffix(1);
  return s;
}

Value parse_default(std::string_view signature, std::string_view text) {
  if (text == "None")
    return Value::none();
  if (text == "True" || text == "False")
    return Value::boolean(text == "True");
  if (text.size() >= 2 && text.front() == '\'' && text.back() == '\'')
    return Value::str(std::string(text.substr(1, text.size() - 2)));
  std::int64_t i = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), i);
  if (ec == std::errc() && end == text.data() + text.size())
    return Value::integer(i);
  std::string copy(text);
  char *stop = nullptr;
  double f = std::strtod(copy.c_str(), &stop);
  if (stop && *stop == '\0' && !copy.empty())
    return Value::floating(f);
  bad_signature(signature, fmt::format("default '{}' is not a literal", text));
}

std::string_view kind_text(ParamKind kind) {
  switch (kind) {
  case ParamKind::Any:
    return "a value";
  case ParamKind::Tensor:
  case ParamKind::Tile:
  case ParamKind::Hbm:
    return "a tensor or tile";
  case ParamKind::Scalar:
    return "a number";
  case ParamKind::TileOrScalar:
    return "a tile or a number";
  case ParamKind::Dtype:
    return "an NKI dtype such as nl.float32";
  case ParamKind::Op:
    return "an operator such as np.add or nl.exp";
  case ParamKind::Bool:
    return "a bool";
  case ParamKind::Int:
    return "an integer";
  case ParamKind::Shape:
    return "a shape (a tuple of positive integers)";
  case ParamKind::Index:
    return "an index tile such as nl.arange(128)[:, None]";
  case ParamKind::Mask:
    return "a predicate on index tiles";
  }
  return "a value";
}

} // namespace

OpInfo parse_signature(const OpDef &def) {
  OpInfo info;
  info.def = &def;
  std::string_view s = def.signature;
  std::size_t open = s.find('(');
  if (open == std::string_view::npos || s.back() != ')')
    bad_signature(s, "expected name(...)");
  info.name = s.substr(0, open);
  std::string_view body = s.substr(open + 1, s.size() - open - 2);
  bool keyword_only = false;
  while (!trim(body).empty()) {
    std::size_t comma = body.find(',');
    std::string_view item = trim(body.substr(0, comma));
    body = comma == std::string_view::npos ? std::string_view() : body.substr(comma + 1);
    if (item == "*") {
      keyword_only = true;
      continue;
    }
    ParamDef p;
    p.keyword_only = keyword_only;
    if (item.front() == '*') {
      p.variadic = true;
      keyword_only = true;
      item.remove_prefix(1);
    }
    std::size_t colon = item.find(':');
    if (colon == std::string_view::npos)
      bad_signature(s, fmt::format("parameter '{}' has no kind", item));
    p.name = trim(item.substr(0, colon));
    std::string_view rest = trim(item.substr(colon + 1));
    std::size_t eq = rest.find('=');
    std::string_view kind = trim(rest.substr(0, eq));
    if (!kind.empty() && kind.back() == '?') {
      p.nullable = true;
      kind.remove_suffix(1);
    }
    auto k = parse_kind(kind);
    if (!k)
      bad_signature(s, fmt::format("unknown kind '{}'", kind));
    p.kind = *k;
    if (eq != std::string_view::npos) {
      p.default_value = parse_default(s, trim(rest.substr(eq + 1)));
      if (p.default_value->is_none())
        p.nullable = true;
    }
    info.params.push_back(std::move(p));
  }
  if (info.params.size() >= OpInfo::kTableSize / 2)
    bad_signature(s, "too many parameters");
  info.table.fill(0xff);
  for (std::size_t i = 0; i < info.params.size(); ++i) {
    std::size_t h = OpInfo::hash(info.params[i].name);
    while (info.table[h] != 0xff)
      h = (h + 1) & (OpInfo::kTableSize - 1);
    info.table[h] = static_cast<std::uint8_t>(i);
  }
  info.mask_index = info.index("mask");
  return info;
}

std::size_t OpInfo::index(std::string_view param) const {
  if (param.empty())
    return params.size();
  for (std::size_t h = hash(param);; h = (h + 1) & (kTableSize - 1)) {
    std::uint8_t i = table[h];
    if (i == 0xff)
      return params.size();
    if (params[i].name == param)
      return i;
  }
}

OpCall::OpCall(NkiRuntime *runtime, KernelBuilder *builder, const OpInfo &info, Interpreter &interpreter,
               const CallArgs &args)
    : op(info), interp(interpreter), rt_(runtime), kb_(builder) {
  const std::vector<ParamDef> &params = op.params;
  values_.resize(params.size(), nullptr);
  std::size_t positional = 0;
  while (positional < params.size() && !params[positional].keyword_only)
    ++positional;
  bool variadic = positional < params.size() && params[positional].variadic;
  if (args.positional.size() > positional && !variadic)
    raise_error("TypeError", fmt::format("{}() takes {} positional arguments but {} were given", op.name, positional,
                                         args.positional.size()));
  std::size_t bound = std::min(positional, args.positional.size());
  for (std::size_t i = 0; i < bound; ++i)
    values_[i] = &args.positional[i];
  if (variadic) {
    static const Value kNone;
    values_[positional] = &kNone;
    rest_ = std::span<const Value>(args.positional).subspan(bound);
  }
  for (const auto &[name, value] : args.keywords) {
    std::size_t i = op.index(name);
    if (i == params.size() || params[i].variadic)
      raise_error("TypeError", fmt::format("{}() got an unexpected keyword argument '{}'", op.name, name));
    if (values_[i])
      raise_error("TypeError", fmt::format("{}() got multiple values for argument '{}'", op.name, name));
    values_[i] = &value;
  }
  for (std::size_t i = 0; i < params.size(); ++i) {
    const ParamDef &p = params[i];
    if (!values_[i]) {
      if (!p.default_value)
        raise_error("TypeError", fmt::format("{}() missing required argument '{}'", op.name, p.name));
      values_[i] = &*p.default_value;
    }
  }
  // A masked access may reach past a tensor's end (NKI relaxes the bounds where the mask
  // holds), so the bounds are checked after the mask is known.
  std::size_t mask = op.mask_index;
  if (mask < params.size() && values_[mask]->kind == Value::Kind::Bool) {
    // `mask=(i * 128 < n)` where every term is a Python int is a bool: True masks nothing (as
    // no mask), False every element (the predicate that never holds).
    static const Value kNoMask = Value::none();
    static const Value kNever = [] {
      auto m = std::make_shared<MaskObject>();
      m->text = "0 != 0";
      return Value::object(std::move(m));
    }();
    values_[mask] = values_[mask]->b ? &kNoMask : &kNever;
  }
  bool masked = mask < params.size() && !values_[mask]->is_none();
  for (std::size_t i = 0; i < params.size(); ++i) {
    const ParamDef &p = params[i];
    const Value &v = *values_[i];
    if ((v.is_none() && p.nullable) || p.variadic)
      continue;
    auto wrong = [&]() {
      raise_error("TypeError", fmt::format("parameter '{}' of '{}' must be {}, not '{}'", p.name, op.name,
                                           kind_text(p.kind), trace::type_name(v)));
    };
    switch (p.kind) {
    case ParamKind::Any:
      break;
    case ParamKind::Tensor:
    case ParamKind::Tile:
    case ParamKind::Hbm: {
      if (auto *b = v.as<BlockTensorRef>())
        b->raise_not_a_tile();
      auto *t = v.as<TensorRef>();
      if (!t && v.as<LoopReduceObject>())
        raise_loop_reduce_operand(p.name, op.name);
      if (!t)
        wrong();
      if (!t->out_of_bound.empty() && !masked)
        raise_error("err_tensor_access_out_of_bound", t->out_of_bound);
      if (t->indirect && !op.def->indirect)
        raise_error("err_indirect_indices_are_not_supported_with_nki_api",
                    fmt::format("The API does not allow using tiles / tensors with indirect indices: parameter '{}' "
                                "of '{}' is indexed by a tile of indices (nl.load, nl.store, nisa.dma_copy and "
                                "nisa.tensor_copy_dynamic_src take one)",
                                p.name, op.name));
      if (p.kind == ParamKind::Tile)
        require_on_chip(*t, op.name, p.name);
      else if (p.kind == ParamKind::Hbm)
        require_hbm(*t, op.name, p.name);
      break;
    }
    case ParamKind::TileOrScalar:
      if (auto *b = v.as<BlockTensorRef>())
        b->raise_not_a_tile();
      if (auto *t = v.as<TensorRef>()) {
        if (!t->out_of_bound.empty() && !masked)
          raise_error("err_tensor_access_out_of_bound", t->out_of_bound);
        require_on_chip(*t, op.name, p.name);
      } else if (v.as<LoopReduceObject>()) {
        raise_loop_reduce_operand(p.name, op.name);
      } else if (!is_scalar(v)) {
        wrong();
      }
      break;
    case ParamKind::Scalar:
      if (!is_scalar(v))
        wrong();
      break;
    case ParamKind::Dtype:
      dtype_arg(&v, op.name);
      break;
    case ParamKind::Op:
      nki::op_name(v, op.name, p.name);
      break;
    case ParamKind::Bool:
      if (v.kind != Value::Kind::Bool && v.kind != Value::Kind::Int)
        wrong();
      break;
    case ParamKind::Int:
      if (v.kind != Value::Kind::Int && !trace::index_number(v)) // lib: a NumPy integer is one
        wrong();
      break;
    case ParamKind::Shape:
      shape_arg(v, op.name);
      break;
    case ParamKind::Index:
      if (!v.as<IndexObject>())
        wrong();
      break;
    case ParamKind::Mask:
      if (!v.as<MaskObject>())
        raise_error("TypeError", fmt::format("'mask' must be a predicate on index tiles, not {}", trace::repr(v)));
      break;
    }
  }
}

KernelBuilder &OpCall::kb() { return kb_ ? *kb_ : rt_->builder(op.name); }

const Value *OpCall::slot(std::string_view param) const {
  std::size_t i = op.index(param);
  if (i == op.params.size())
    raise_error("internal", fmt::format("nkicc bug: op '{}' has no parameter '{}'", op.name, param));
  return values_[i];
}

const Value *OpCall::get(std::string_view param) const {
  const Value *v = slot(param);
  return v->is_none() ? nullptr : v;
}

const Value &OpCall::required(std::string_view param) const {
  const Value *v = get(param);
  if (!v)
    raise_error("TypeError", fmt::format("{}() missing required argument '{}'", op.name, param));
  return *v;
}

std::shared_ptr<TensorRef> OpCall::tensor(std::string_view param) const {
  const Value *v = get(param);
  return v ? v->shared_as<TensorRef>() : nullptr;
}

std::shared_ptr<TensorRef> OpCall::required_tensor(std::string_view param) const {
  auto t = required(param).shared_as<TensorRef>();
  if (!t)
    raise_error("TypeError", fmt::format("parameter '{}' of '{}' must be a tensor or tile, not '{}'", param, op.name,
                                         trace::type_name(required(param))));
  return t;
}

std::optional<DType> OpCall::dtype(std::string_view param) const { return dtype_arg(get(param), op.name); }

std::string OpCall::op_name(std::string_view param) const { return nki::op_name(required(param), op.name, param); }

bool OpCall::flag(std::string_view param) const {
  const Value *v = get(param);
  if (!v)
    return false;
  return v->kind == Value::Kind::Bool ? v->b : v->kind == Value::Kind::Int && v->i != 0;
}

std::int64_t OpCall::integer(std::string_view param) const { return int_arg(required(param), op.name, param); }

const MaskObject *OpCall::mask() const {
  const Value *v = get("mask");
  return v ? v->as<MaskObject>() : nullptr;
}

void OpCall::emit(std::span<const ir::AccessPattern> dst, std::span<const ir::AccessPattern> src,
                  const ir::AttrList &attrs) {
  kb().emit(op.def->opcode, op.def->engine, dst, src, attrs);
}

namespace {

/// Runs an op's lowering; an op given `mask=` has its instructions masked. Data movement ops
/// attach their mask themselves (with_mask); for every other op the mask is the predicate over
/// the result's iteration space, so it goes on each instruction the call emitted whose
/// destination has the shape of the last one's (not on a helper transpose of an operand).
Value lower_masked(const OpInfo &op, OpCall &c) {
  const MaskObject *mask_arg = op.mask_index < op.params.size() ? c.mask() : nullptr;
  const std::string *mask = mask_arg ? &mask_arg->text : nullptr;
  // Without mask=, an operand masked by subscript (`t[i_p, i_f][mask]`) masks the op.
  std::shared_ptr<const std::string> subscript;
  if (!mask && op.mask_index < op.params.size())
    for (const ParamDef &p : op.params) {
      if (p.kind != ParamKind::Tile && p.kind != ParamKind::Tensor && p.kind != ParamKind::TileOrScalar)
        continue;
      if (const Value *v = c.get(p.name))
        if (const auto *t = v->as<TensorRef>(); t && t->subscript_mask) {
          subscript = t->subscript_mask;
          mask = subscript.get();
          break;
        }
    }
  KernelBuilder &kb = c.kb();
  std::size_t first = kb.fn.instructions.size();
  Value result = op.def->lower(c);
  std::size_t end = kb.fn.instructions.size();
  if (!mask || end == first)
    return result;
  auto shape_of = [&kb](const ir::Instruction &inst) {
    std::vector<std::int64_t> shape;
    if (inst.num_dst > 0)
      for (const auto &[step, num] : kb.fn.pattern(kb.fn.dst(inst).front()))
        shape.push_back(num);
    return shape;
  };
  std::vector<std::int64_t> shape = shape_of(kb.fn.instructions[end - 1]);
  for (std::size_t i = first; i < end; ++i) {
    ir::Instruction &inst = kb.fn.instructions[i];
    if (inst.num_dst == 0 || shape_of(inst) != shape)
      continue;
    ir::AttrList attrs = kb.fn.attrs(inst);
    bool has = false;
    for (const auto &[key, value] : attrs)
      has = has || key == "mask";
    if (has)
      continue;
    attrs.emplace_back("mask", PyConstant::str(*mask));
    kb.fn.set_attrs(inst, attrs);
  }
  return result;
}

/// Removes keyword argument `name` from `call` and gives its value; nullopt when absent.
std::optional<Value> take_keyword(CallArgs &call, std::string_view name) {
  for (auto it = call.keywords.begin(); it != call.keywords.end(); ++it)
    if (it->first == name) {
      Value v = std::move(it->second);
      call.keywords.erase(it);
      return v;
    }
  return std::nullopt;
}

/// The value form of `op`, then its result written to `dst` (DstForm).
Value call_with_dst(NkiRuntime &rt, const OpInfo &op, Interpreter &interp, CallArgs &call) {
  std::optional<Value> dst = take_keyword(call, "dst");
  if (!dst && call.positional.size() > op.def->dst.probe && call.positional[op.def->dst.probe].as<TensorRef>()) {
    dst = call.positional.front();
    call.positional.erase(call.positional.begin());
  }
  OpCall c(&rt, nullptr, op, interp, call);
  if (!dst)
    return lower_masked(op, c);
  auto target = as_tensor(*dst, op.name, "dst");
  if (!target->out_of_bound.empty())
    raise_error("err_tensor_access_out_of_bound", target->out_of_bound);
  Value result = lower_masked(op, c);
  auto r = result.shared_as<TensorRef>();
  if (!r)
    return result;
  if (op.def->dst.accumulates) {
    assign_to_view(interp, *target, result, python::BinOpKind::Add);
    return Value::none();
  }
  // The instruction that made the result writes the destination itself (assign_to_view).
  assign_to_view(interp, *target, result, std::nullopt);
  return Value::none();
}

/// `nisa.op(..., name="mm1")`: runs the call, then names every instruction it emitted.
Value call_named(NkiRuntime &rt, const OpInfo &op, Interpreter &interp, CallArgs &call,
                 const BuiltinFunction::Impl &impl) {
  std::optional<Value> name = take_keyword(call, "name");
  if (!name || name->is_none())
    return impl(interp, call);
  if (name->kind != Value::Kind::Str)
    raise_error("TypeError", fmt::format("'name' of '{}' must be a str, not '{}'", op.name, trace::type_name(*name)));
  KernelBuilder &kb = rt.builder(op.name);
  std::size_t first = kb.fn.instructions.size();
  Value result = impl(interp, call);
  for (std::size_t i = first; i < kb.fn.instructions.size(); ++i) {
    ir::Instruction &inst = kb.fn.instructions[i];
    ir::AttrList attrs = kb.fn.attrs(inst);
    attrs.emplace_back("name", PyConstant::str(name->str_text()));
    kb.fn.set_attrs(inst, attrs);
  }
  return result;
}

/// An op's signature, parsed when a kernel first calls the op: nl and nisa define a few hundred
/// ops, a kernel calls a handful, and parsing them all was a tenth of a small trace's work.
class LazyOpInfo {
public:
  explicit LazyOpInfo(const OpDef &def) : def_(def) {}
  const OpInfo &get() {
    if (!info_) {
      info_.emplace(parse_signature(def_));
      own_name_ = info_->index("name") != info_->params.size();
    }
    return *info_;
  }
  /// Whether the op has a `name` parameter of its own (asked after get()).
  bool own_name() const { return own_name_; }

private:
  const OpDef &def_;
  std::optional<OpInfo> info_;
  bool own_name_ = false;
};

/// The name an op is installed under: its signature up to the parameters (the whole signature
/// is checked when it is parsed).
std::string_view op_name_of(const OpDef &def) { return def.signature.substr(0, def.signature.find('(')); }

} // namespace

void install_ops(NkiRuntime &rt, ModuleObject &module, std::span<const OpDef> table, bool named) {
  for (const OpDef &def : table) {
    auto lazy = std::make_shared<LazyOpInfo>(def);
    std::string name(op_name_of(def));
    BuiltinFunction::Impl impl;
    if (def.dst.enabled)
      impl = [&rt, lazy](Interpreter &interp, CallArgs &call) { return call_with_dst(rt, lazy->get(), interp, call); };
    else
      impl = [&rt, lazy](Interpreter &interp, CallArgs &call) {
        const OpInfo &info = lazy->get();
        OpCall c(&rt, nullptr, info, interp, call);
        return lower_masked(info, c);
      };
    // In a module whose ops take `name=` (the instruction's name), an op without a `name`
    // parameter of its own has it taken here.
    if (named)
      impl = [&rt, lazy, inner = std::move(impl)](Interpreter &interp, CallArgs &call) {
        const OpInfo &info = lazy->get();
        if (lazy->own_name())
          return inner(interp, call);
        return call_named(rt, info, interp, call, inner);
      };
    module.globals().set(name, Value::object(std::make_shared<BuiltinFunction>(name, std::move(impl))));
  }
}

} // namespace nkicc::nki
