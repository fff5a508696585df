#include "nkicc/manifest/manifest.h"
#include "nkicc/manifest/description_stream.h"

#include "manifest/json_checker.h"

#include "nkicc/support/file_io.h"
#include "nkicc/target/target.h"

#include <fmt/format.h>

#define XXH_STATIC_LINKING_ONLY
#include <xxhash.h>

#include <algorithm>
#include <memory>
#include <set>
#include <string_view>
#include <unordered_map>

namespace nkicc {

namespace {

constexpr const char *kId = "manifest";
using Kind = JsonValue::Kind;

// Shared with the registry checker (manifest/json_checker.h).
using Pointer = JsonPointer;

const Pointer kRoot{};

// The fields of each kind of call; the kind's own name comes first.
const std::vector<std::string> kExternalCallFields = {"kernel", "args", "kwargs", "grid", "nc", "opts"};
const std::vector<std::string> kInternalCallFields = {"internal", "kernel_name", "op", "operands", "results", "attrs"};

} // namespace

/// The description's checks, field by field (SPEC §2). A streamed read (description_stream.h)
/// checks the root without its calls (`calls_streamed`), then each call as it comes.
class ManifestChecker : JsonChecker {
public:
  ManifestChecker(SourceManager &sources, DiagnosticEngine &diags, const ManifestLoadOptions &options,
                  bool calls_streamed = false)
      : JsonChecker(diags, kId), sources_(sources), options_(options), calls_streamed_(calls_streamed) {}

  /// One item of `calls`, as a streamed read hands it over.
  std::optional<Call> check_call(const JsonValue &item, std::size_t index) {
    const Pointer calls = pointer_append(kRoot, "calls");
    auto c = call(item, pointer_append(calls, index), index);
    if (!flush())
      return std::nullopt;
    return c;
  }

  std::optional<Manifest> check(const JsonValue &root, FileId file) {
    Manifest m;
    m.file = file;
    if (root.kind() != Kind::Object) {
      diags_.error(root.loc(),
                   fmt::format("a kernel description must be a JSON object, not {}", json_kind_name(root.kind())), kId);
      return std::nullopt;
    }
    check_fields(root, kRoot, {"nkicc", "name", "target", "sources", "calls"});

    if (const JsonValue *v = root.find("nkicc")) {
      if (auto version = integer(*v, pointer_append(kRoot, "nkicc"))) {
        if (*version != kManifestVersion)
          error(*v, pointer_append(kRoot, "nkicc"),
                fmt::format("unsupported format version {}; this nkicc reads version {}", *version, kManifestVersion));
      }
    } else {
      error(root, kRoot, "missing required field 'nkicc' (the format version, 1)");
    }

    m.name = options_.default_name;
    if (const JsonValue *v = root.find("name")) {
      if (auto s = string(*v, pointer_append(kRoot, "name"))) {
        if (s->empty())
          error(*v, pointer_append(kRoot, "name"), "the module name must not be empty");
        m.name = *s;
      }
    }

    if (const JsonValue *v = root.find("target")) {
      if (auto s = string(*v, pointer_append(kRoot, "target"))) {
        if (find_target(*s)) {
          m.target = *s;
          m.target_loc = v->loc();
        } else {
          error(*v, pointer_append(kRoot, "target"),
                with_suggestion(fmt::format("unknown target {}", quote_for_message(*s)), *s, target_names()) +
                    fmt::format(" (expected one of {})", quote_list(target_names())));
        }
      }
    }

    if (const JsonValue *v = root.find("sources")) {
      if (expect(*v, Kind::Array, pointer_append(kRoot, "sources"), "an array of sources"))
        for (std::size_t i = 0; i < v->items().size(); ++i)
          if (auto src = source(v->items()[i], pointer_append(pointer_append(kRoot, "sources"), i)))
            m.sources.push_back(std::move(*src));
    }

    if (const JsonValue *v = root.find("calls")) {
      // A streamed read has checked the items already, one by one.
      if (expect(*v, Kind::Array, pointer_append(kRoot, "calls"), "an array of calls") && !calls_streamed_)
        for (std::size_t i = 0; i < v->items().size(); ++i)
          if (auto c = call(v->items()[i], pointer_append(pointer_append(kRoot, "calls"), i), i))
            m.calls.push_back(std::move(*c));
    } else {
      error(root, kRoot, "missing required field 'calls' (the list of kernel calls, may be empty)");
    }

    // The checks above go field by field; the user reads the file top to bottom, so the errors
    // are reported in document order.
    if (!flush())
      return std::nullopt;
    return m;
  }

private:
  std::optional<std::int64_t> positive(const JsonValue &v, const Pointer &ptr, std::string_view what) {
    auto i = integer(v, ptr);
    if (i && *i <= 0) {
      error(v, ptr, fmt::format("{} must be positive, found {}", what, *i));
      return std::nullopt;
    }
    return i;
  }

  std::optional<std::vector<std::int64_t>> dims(const JsonValue &v, const Pointer &ptr, std::string_view what) {
    // The expectation's words are made only when it fails (a description has a shape per tensor).
    if (v.kind() != Kind::Array) {
      expect(v, Kind::Array, ptr, fmt::format("{} (an array of positive integers)", what));
      return std::nullopt;
    }
    if (v.items().empty()) {
      error(v, ptr, fmt::format("{} must have at least one dimension", what));
      return std::nullopt;
    }
    std::vector<std::int64_t> out;
    out.reserve(v.items().size());
    bool ok = true;
    for (std::size_t i = 0; i < v.items().size(); ++i) {
      auto d = positive(v.items()[i], pointer_append(ptr, i), "a dimension");
      ok = ok && d.has_value();
      if (d)
        out.push_back(*d);
    }
    if (!ok)
      return std::nullopt;
    return out;
  }

  /// `allow_access_shape`: an internal call's operand or result; `allow_memory`: its result.
  std::optional<TensorSpec> tensor(const JsonValue &v, const Pointer &ptr, bool allow_access_shape,
                                   bool allow_memory = false) {
    TensorSpec t;
    t.loc = v.loc();
    // The accepted fields of each kind of tensor, made once (a description has a tensor per
    // operand of every call).
    static const std::vector<std::string> kFields[4] = {{"shape", "dtype", "name"},
                                                        {"shape", "dtype", "name", "memory"},
                                                        {"shape", "dtype", "name", "access_shape"},
                                                        {"shape", "dtype", "name", "access_shape", "memory"}};
    check_fields(v, ptr, kFields[(allow_access_shape ? 2 : 0) + (allow_memory ? 1 : 0)]);
    bool ok = true;
    if (const JsonValue *s = v.find("shape")) {
      auto d = dims(*s, pointer_append(ptr, "shape"), "a shape");
      ok = ok && d.has_value();
      if (d)
        t.shape = std::move(*d);
    } else {
      error(v, ptr, "a tensor needs a 'shape'");
      ok = false;
    }
    if (const JsonValue *d = v.find("dtype")) {
      Pointer p = pointer_append(ptr, "dtype");
      if (auto s = string(*d, p)) {
        if (auto dt = parse_dtype(*s)) {
          t.dtype = *dt;
        } else {
          error(*d, p, with_suggestion(fmt::format("unknown dtype {}", quote_for_message(*s)), *s, dtype_names()));
          ok = false;
        }
      } else {
        ok = false;
      }
    } else {
      error(v, ptr, "a tensor needs a 'dtype'");
      ok = false;
    }
    if (const JsonValue *n = v.find("name")) {
      Pointer p = pointer_append(ptr, "name");
      if (auto s = string(*n, p)) {
        if (s->empty())
          error(*n, p, "a tensor name must not be empty");
        t.name = *s;
      }
    }
    if (const JsonValue *a = allow_access_shape ? v.find("access_shape") : nullptr) {
      auto d = dims(*a, pointer_append(ptr, "access_shape"), "an access shape");
      ok = ok && d.has_value();
      if (d) {
        t.access_shape = std::move(*d);
        t.has_access_shape = true;
      }
    } else {
      t.access_shape = t.shape;
    }
    if (const JsonValue *m = allow_memory ? v.find("memory") : nullptr) {
      // Where a result the kernel writes as an output parameter lives (docs/description.md).
      Pointer p = pointer_append(ptr, "memory");
      static const std::vector<std::string> kMemories = {"shared_hbm", "private_hbm"};
      if (auto s = string(*m, p)) {
        if (*s == "private_hbm" || *s == "shared_hbm") {
          t.memory = *s;
        } else {
          error(*m, p,
                with_suggestion(fmt::format("unknown memory {}", quote_for_message(*s)), *s, kMemories) +
                    fmt::format(" (accepted: {})", quote_list(kMemories)));
          ok = false;
        }
      } else {
        ok = false;
      }
    }
    if (ok) {
      // SPEC §10: sizes must not overflow; every later stage multiplies these.
      for (const auto *shape : {&t.shape, &t.access_shape}) {
        std::int64_t bytes = static_cast<std::int64_t>(dtype_size(t.dtype));
        for (std::int64_t d : *shape) {
          if (__builtin_mul_overflow(bytes, d, &bytes)) {
            error(v, ptr,
                  fmt::format("a tensor of shape [{}] and dtype {} is larger than 2^63 bytes", fmt::join(*shape, ", "),
                              dtype_name(t.dtype)));
            return std::nullopt;
          }
        }
      }
    }
    if (!ok)
      return std::nullopt;
    return t;
  }

  /// An object with `shape`, or with `dtype` and another member; `{"dtype": "float8_e5m2_x4"}`
  /// alone is a dtype value (JsonChecker::special_form).
  static bool looks_like_tensor(const JsonValue &v) {
    return v.kind() == Kind::Object && (v.find("shape") || (v.find("dtype") && v.members().size() > 1));
  }

  std::optional<Argument> argument(const JsonValue &v, const Pointer &ptr) {
    Argument a;
    a.loc = v.loc();
    if (looks_like_tensor(v)) {
      auto t = tensor(v, ptr, false);
      if (!t)
        return std::nullopt;
      a.value = std::move(*t);
    } else {
      auto c = constant(v, ptr);
      if (!c)
        return std::nullopt;
      a.value = std::move(*c);
    }
    return a;
  }

  std::optional<KernelSource> source(const JsonValue &v, const Pointer &ptr) {
    if (!expect(v, Kind::Object, ptr, "a source object ({\"path\": ...} or {\"name\": ..., \"code\": ...})"))
      return std::nullopt;
    check_fields(v, ptr, {"path", "name", "code"});
    KernelSource src;
    src.loc = v.loc();
    const JsonValue *path = v.find("path");
    const JsonValue *code = v.find("code");
    const JsonValue *name = v.find("name");
    if (path && code) {
      error(*code, pointer_append(ptr, "code"), "a source has either 'path' or 'code', not both");
      return std::nullopt;
    }
    if (path) {
      if (name)
        error(*name, pointer_append(ptr, "name"),
              "'name' is only for inline 'code'; a 'path' source is named by its path");
      Pointer p = pointer_append(ptr, "path");
      auto s = string(*path, p);
      if (!s)
        return std::nullopt;
      if (s->empty()) {
        error(*path, p, "a source path must not be empty");
        return std::nullopt;
      }
      src.name = *s;
      src.path = *s;
      src.resolved_path = join_path(options_.base_dir, *s);
      std::string why;
      auto text = read_file(src.resolved_path, why);
      if (!text) {
        // A source that cannot be read is an I/O error (exit 3), located at its `path` value.
        Diagnostic d;
        d.error_class = ErrorClass::IO;
        d.loc = path->loc();
        d.message = fmt::format("{}: cannot read kernel source {}: {}", p.str(),
                                quote_for_message(src.resolved_path, 256), why);
        d.id = kId;
        report(std::move(d));
        return std::nullopt;
      }
      src.file = sources_.add_buffer(src.resolved_path, std::move(*text));
    } else if (code) {
      Pointer p = pointer_append(ptr, "code");
      auto text = string(*code, p);
      if (!name) {
        error(v, ptr, "inline 'code' needs a 'name' for diagnostics");
        return std::nullopt;
      }
      auto n = string(*name, pointer_append(ptr, "name"));
      if (!text || !n)
        return std::nullopt;
      if (n->empty()) {
        error(*name, pointer_append(ptr, "name"), "a source name must not be empty");
        return std::nullopt;
      }
      src.name = *n;
      src.file = sources_.add_buffer(*n, *text);
    } else {
      error(v, ptr, "a source needs a 'path' or inline 'code'");
      return std::nullopt;
    }
    if (!source_names_.insert(src.name).second) {
      error(v, ptr, fmt::format("duplicate source {}", quote_for_message(src.name)));
      return std::nullopt;
    }
    return src;
  }

  std::optional<Call> call(const JsonValue &v, const Pointer &ptr, std::size_t index) {
    if (!expect(v, Kind::Object, ptr, "a call object"))
      return std::nullopt;
    Call c;
    c.index = index;
    c.loc = v.loc();
    const JsonValue *kernel = v.find("kernel");
    const JsonValue *internal = v.find("internal");
    if (kernel && internal) {
      error(*internal, pointer_append(ptr, "internal"),
            "a call names either 'kernel' (a kernel in sources) or 'internal' (a registry kernel), not both");
      return std::nullopt;
    }
    if (kernel) {
      auto e = external_call(v, *kernel, ptr);
      if (!e)
        return std::nullopt;
      c.body = std::move(*e);
    } else if (internal) {
      auto i = internal_call(v, *internal, ptr);
      if (!i)
        return std::nullopt;
      c.body = std::move(*i);
    } else {
      // Without a kind to go by, a misspelt 'kernel' or 'internal' still gets its suggestion.
      std::vector<std::string> accepted = kExternalCallFields;
      accepted.insert(accepted.end(), kInternalCallFields.begin() + 1, kInternalCallFields.end());
      accepted.insert(accepted.begin() + 1, kInternalCallFields.front());
      check_fields(v, ptr, accepted);
      error(v, ptr, "a call needs 'kernel' (a kernel in sources) or 'internal' (a registry kernel)");
      return std::nullopt;
    }
    return c;
  }

  std::optional<ExternalCall> external_call(const JsonValue &v, const JsonValue &kernel, const Pointer &ptr) {
    check_fields(v, ptr, kExternalCallFields);
    ExternalCall e;
    bool ok = true;
    if (auto s = string(kernel, pointer_append(ptr, "kernel"))) {
      if (s->empty()) {
        error(kernel, pointer_append(ptr, "kernel"), "a kernel name must not be empty");
        ok = false;
      }
      e.kernel = *s;
      e.kernel_loc = kernel.loc();
    } else {
      ok = false;
    }
    if (const JsonValue *args = v.find("args")) {
      Pointer p = pointer_append(ptr, "args");
      if (expect(*args, Kind::Array, p, "an array of arguments")) {
        for (std::size_t i = 0; i < args->items().size(); ++i) {
          auto a = argument(args->items()[i], pointer_append(p, i));
          ok = ok && a.has_value();
          if (a)
            e.args.push_back(std::move(*a));
        }
      } else {
        ok = false;
      }
    }
    if (const JsonValue *kwargs = v.find("kwargs")) {
      Pointer p = pointer_append(ptr, "kwargs");
      if (expect(*kwargs, Kind::Object, p, "an object of keyword arguments")) {
        for (const auto &[key, value] : kwargs->members()) {
          auto a = argument(value, pointer_append(p, key.text()));
          ok = ok && a.has_value();
          if (a)
            e.kwargs.emplace_back(key.text(), std::move(*a));
        }
      } else {
        ok = false;
      }
    }
    if (const JsonValue *grid = v.find("grid")) {
      Pointer p = pointer_append(ptr, "grid");
      if (auto g = dims(*grid, p, "a grid")) {
        if (g->size() > 3) {
          error(*grid, p, fmt::format("an SPMD grid has 1 to 3 dimensions, found {}", g->size()));
          ok = false;
        }
        e.grid = std::move(*g);
        e.grid_loc = grid->loc();
      } else {
        ok = false;
      }
    }
    if (const JsonValue *nc = v.find("nc")) {
      Pointer p = pointer_append(ptr, "nc");
      if (auto k = positive(*nc, p, "'nc'")) {
        e.nc = *k;
        e.nc_loc = nc->loc();
        if (e.grid.empty() && ok) {
          error(*nc, p, "'nc' spreads the first grid dimension over physical cores and needs a 'grid'");
          ok = false;
        } else if (!e.grid.empty() && e.grid[0] % *k != 0) {
          error(*nc, p, fmt::format("'nc' ({}) must divide the first grid dimension ({})", *k, e.grid[0]));
          ok = false;
        }
      } else {
        ok = false;
      }
    }
    if (const JsonValue *opts = v.find("opts")) {
      Pointer p = pointer_append(ptr, "opts");
      if (expect(*opts, Kind::Object, p, "an object of compile options")) {
        for (const auto &[key, value] : opts->members()) {
          Pointer q = pointer_append(p, key.text());
          if (value.kind() == Kind::Array || value.kind() == Kind::Object) {
            error(value, q,
                  fmt::format("compile option {} must be a scalar (string, number, boolean or null), found {}",
                              quote_for_message(key.text()), json_kind_name(value.kind())));
            ok = false;
            continue;
          }
          auto c = constant(value, q);
          ok = ok && c.has_value();
          if (c)
            e.opts.emplace_back(key.text(), std::move(*c));
        }
      } else {
        ok = false;
      }
    }
    if (!ok)
      return std::nullopt;
    return e;
  }

  std::optional<std::vector<TensorSpec>> tensor_list(const JsonValue &v, const Pointer &ptr, bool results) {
    if (!expect(v, Kind::Array, ptr, "an array of tensors"))
      return std::nullopt;
    std::vector<TensorSpec> out;
    out.reserve(v.items().size());
    bool ok = true;
    for (std::size_t i = 0; i < v.items().size(); ++i) {
      Pointer p = pointer_append(ptr, i);
      if (!expect(v.items()[i], Kind::Object, p, "a tensor ({\"shape\": [...], \"dtype\": ...})")) {
        ok = false;
        continue;
      }
      auto t = tensor(v.items()[i], p, true, results);
      ok = ok && t.has_value();
      if (t)
        out.push_back(std::move(*t));
    }
    if (!ok)
      return std::nullopt;
    return out;
  }

  std::optional<InternalCall> internal_call(const JsonValue &v, const JsonValue &internal, const Pointer &ptr) {
    check_fields(v, ptr, kInternalCallFields);
    InternalCall c;
    bool ok = true;
    if (auto s = string(internal, pointer_append(ptr, "internal"))) {
      if (s->empty()) {
        error(internal, pointer_append(ptr, "internal"), "an internal kernel name must not be empty");
        ok = false;
      }
      c.internal = std::move(*s);
      c.internal_loc = internal.loc();
    } else {
      ok = false;
    }
    if (const JsonValue *k = v.find("kernel_name")) {
      if (auto s = string(*k, pointer_append(ptr, "kernel_name")))
        c.kernel_name = std::move(*s);
      else
        ok = false;
    } else {
      c.kernel_name = c.internal;
    }
    if (const JsonValue *op = v.find("op")) {
      if (auto s = string(*op, pointer_append(ptr, "op")))
        c.op = *s;
      else
        ok = false;
    }
    for (auto [field, list] : {std::pair{"operands", &c.operands}, std::pair{"results", &c.results}}) {
      if (const JsonValue *t = v.find(field)) {
        auto specs = tensor_list(*t, pointer_append(ptr, field), list == &c.results);
        ok = ok && specs.has_value();
        if (specs)
          *list = std::move(*specs);
      }
    }
    if (c.op == "ResizeNearest" && c.results.empty() && ok) {
      error(v, ptr, "a 'ResizeNearest' op needs a result: its access shape is the cache key's out_shape");
      ok = false;
    }
    if (const JsonValue *attrs = v.find("attrs")) {
      Pointer p = pointer_append(ptr, "attrs");
      if (expect(*attrs, Kind::Object, p, "an object of op attributes")) {
        auto a = constant(*attrs, p);
        // {"tuple": [...]} is a tuple, but attrs themselves must stay a dict.
        if (a && a->kind != PyConstant::Kind::Dict) {
          error(*attrs, p, "'attrs' must be an object of attributes, not a tuple");
          ok = false;
        } else if (a) {
          c.attrs = std::move(*a);
        } else {
          ok = false;
        }
      } else {
        ok = false;
      }
    }
    if (!ok)
      return std::nullopt;
    return c;
  }

  SourceManager &sources_;
  const ManifestLoadOptions &options_;
  bool calls_streamed_ = false;
  std::set<std::string, std::less<>> source_names_;
};

std::optional<Manifest> load_manifest(SourceManager &sources, FileId file, const ManifestLoadOptions &options,
                                      DiagnosticEngine &diags) {
  auto doc = parse_json(sources, file, diags);
  if (!doc)
    return std::nullopt;
  return ManifestChecker(sources, diags, options).check(doc->root(), file);
}

} // namespace nkicc

namespace nkicc {

namespace {

void note_name(std::vector<std::string> &names, const std::string &name) {
  // A description calls a handful of kernels: a scan of the few seen beats a set.
  if (std::find(names.begin(), names.end(), name) == names.end())
    names.push_back(name);
}

} // namespace

void move_call_locations(Call &call, std::uint32_t from, std::uint32_t to) {
  auto move = [&](SourceLoc &loc) {
    if (loc.valid())
      loc.offset = loc.offset - from + to;
  };
  auto move_argument = [&](Argument &a) {
    move(a.loc);
    if (a.is_tensor())
      move(std::get<TensorSpec>(a.value).loc);
  };
  move(call.loc);
  if (auto *e = std::get_if<ExternalCall>(&call.body)) {
    move(e->kernel_loc);
    move(e->grid_loc);
    move(e->nc_loc);
    for (Argument &a : e->args)
      move_argument(a);
    for (auto &[name, a] : e->kwargs)
      move_argument(a);
  } else {
    auto &ic = std::get<InternalCall>(call.body);
    move(ic.internal_loc);
    for (TensorSpec &t : ic.operands)
      move(t.loc);
    for (TensorSpec &t : ic.results)
      move(t.loc);
  }
}

namespace {

struct TextHash {
  std::size_t operator()(std::string_view text) const { return XXH3_64bits(text.data(), text.size()); }
};

/// The calls of a streamed read by their bytes (SplitRepeats): the checked Call of each distinct
/// text, so that a call whose bytes repeat an earlier call's is neither parsed nor checked again
/// (the checks of a call depend on its bytes alone, and a call that fails them ends the read).
/// Bounded: past kMaxCalls texts or kMaxBytes of them, new texts are parsed as always. Where
/// calls seldom repeat, few are looked at, so that a description of distinct calls pays little.
class RepeatedCalls {
public:
  /// Every call while at least one in eight of those looked at repeated an earlier one (or
  /// while few were looked at), else one in sixteen, which sees repeats if they start later.
  bool look() {
    ++items_;
    return looked_ < 256 || repeats_ * 8 >= looked_ || items_ % 16 == 0;
  }

  /// The id of a text checked before; else the text is kept for the add() that follows its check.
  std::optional<std::uint32_t> known(std::string_view text) {
    ++looked_;
    if (auto it = ids_.find(text); it != ids_.end()) {
      ++repeats_;
      return it->second;
    }
    has_pending_ = calls_.size() < kMaxCalls && bytes_ + text.size() <= kMaxBytes;
    if (has_pending_)
      pending_.assign(text);
    return std::nullopt;
  }

  /// The call just checked, whose text known() saw last (if it kept it): it gets its text's id.
  void add(Call &call) {
    if (!std::exchange(has_pending_, false))
      return;
    call.text = static_cast<std::uint32_t>(calls_.size());
    auto entry = std::make_unique<Entry>(Entry{std::move(pending_), call});
    bytes_ += entry->text.size();
    ids_.emplace(entry->text, static_cast<std::uint32_t>(calls_.size()));
    calls_.push_back(std::move(entry));
  }

  /// Call `id` again, as the `index`th call, its text at `offset`.
  const Call &repeat(std::uint32_t id, std::uint32_t offset, std::size_t index) {
    Call &call = calls_[id]->call;
    move_call_locations(call, call.loc.offset, offset);
    call.index = index;
    return call;
  }

private:
  static constexpr std::size_t kMaxCalls = 4096;
  static constexpr std::size_t kMaxBytes = 1 << 20;
  struct Entry {
    std::string text;
    Call call; ///< as its last copy was read (its locations are that copy's)
  };
  std::vector<std::unique_ptr<Entry>> calls_; ///< entries never move: ids_ views their text
  std::unordered_map<std::string_view, std::uint32_t, TextHash> ids_;
  std::string pending_;
  bool has_pending_ = false;
  std::size_t bytes_ = 0;
  std::size_t items_ = 0, looked_ = 0, repeats_ = 0;
};

/// The items of `calls` as a streamed read hands them over (parse_json_stream's on_item and
/// repeats): each checked into a Call, or, when its bytes repeat an earlier call's, that call
/// again, and given to `on_call` in order.
class CallStream {
public:
  CallStream(SourceManager &sources, DiagnosticEngine &diags, const ManifestLoadOptions &options,
             std::function<bool(const Call &)> on_call)
      : checker_(sources, diags, options, true), on_call_(std::move(on_call)) {
    on_item = [this](const JsonValue &item) {
      std::optional<Call> call = checker_.check_call(item, index_++);
      if (!call)
        return false;
      repeated_.add(*call);
      return on_call_(*call);
    };
    repeats.look = [this] { return repeated_.look(); };
    repeats.known = [this](std::string_view text) { return repeated_.known(text); };
    repeats.repeat = [this](std::uint32_t id, std::uint32_t offset) {
      ++repeat_count_;
      return on_call_(repeated_.repeat(id, offset, index_++));
    };
  }
  CallStream(const CallStream &) = delete;
  CallStream &operator=(const CallStream &) = delete;

  std::function<bool(const JsonValue &)> on_item;
  SplitRepeats repeats;
  /// The calls handed over so far, and how many of them were repeats.
  ReadFigures figures() const { return {index_, repeat_count_}; }

private:
  ManifestChecker checker_;
  std::function<bool(const Call &)> on_call_;
  RepeatedCalls repeated_;
  std::size_t index_ = 0, repeat_count_ = 0;
};

} // namespace

std::optional<DescriptionScan> scan_description(SourceManager &sources, FileId file, const std::string &path,
                                                const ManifestLoadOptions &options, DiagnosticEngine &diags) {
  DescriptionScan scan;
  CallStream calls(sources, diags, options, [&](const Call &call) {
    if (call.is_external())
      note_name(scan.kernels, call.external().kernel);
    else
      note_name(scan.internals, call.internal().internal);
    return true;
  });
  auto parsed = parse_json_stream(path, file, diags, "calls", calls.on_item, {}, {}, &calls.repeats);
  if (!parsed)
    return std::nullopt;
  scan.call_count = calls.figures().calls;
  auto header = ManifestChecker(sources, diags, options, true).check(parsed->document.root(), file);
  if (!header)
    return std::nullopt;
  scan.header = std::move(*header);
  scan.digest = parsed->digest;
  scan.size = parsed->size;
  return scan;
}

bool stream_calls(SourceManager &sources, FileId file, const std::string &path, const ManifestLoadOptions &options,
                  const DescriptionScan &scan, DiagnosticEngine &diags,
                  const std::function<void(const Call &)> &on_call, ReadFigures *figures) {
  // The checks passed on these bytes once; a call that fails them now, or bytes that hash
  // otherwise, mean the file changed under nkicc: what the first pass decided no longer holds.
  DiagnosticEngine::Mark mark = diags.mark();
  bool same = true;
  CallStream calls(sources, diags, options, [&](const Call &call) {
    if (call.index >= scan.call_count)
      return same = false;
    on_call(call);
    return true;
  });
  JsonParseOptions parse_options;
  parse_options.validate_utf8 = false; // the first pass did, and the digest says the bytes are the same
  auto parsed = parse_json_stream(path, file, diags, "calls", calls.on_item, parse_options, {}, &calls.repeats);
  if (!parsed || !same || calls.figures().calls != scan.call_count || parsed->digest != scan.digest ||
      parsed->size != scan.size) {
    diags.rollback(mark);
    diags.io_error(path, "the kernel description changed while nkicc was reading it; run nkicc again");
    return false;
  }
  if (figures)
    *figures = calls.figures();
  return true;
}

bool read_description_once(SourceManager &sources, FileId file, const std::string &path,
                           const ManifestLoadOptions &options, DiagnosticEngine &diags,
                           const std::function<bool(Manifest &&)> &on_header,
                           const std::function<bool(const Call &)> &on_call,
                           const std::function<bool(std::string)> &on_trailing_name, ReadFigures *figures) {
  CallStream calls(sources, diags, options, on_call);
  bool started = false;
  std::function<bool(const JsonValue &)> on_start = [&](const JsonValue &root) {
    auto header = ManifestChecker(sources, diags, options, true).check(root, file);
    started = header && on_header(std::move(*header));
    return started;
  };
  auto parsed = parse_json_stream(path, file, diags, "calls", calls.on_item, {}, on_start, &calls.repeats);
  if (!parsed || !started)
    return false;
  if (figures)
    *figures = calls.figures();
  if (parsed->split_last)
    return true;
  // Members after `calls`: the calls were read with the header as it stood when they started,
  // which still holds when all that follows is a valid `name` (the outputs' module name, used
  // only once every call is done). Anything else, or a name the checks would reject, starts over
  // (where the two-pass or whole read reports it).
  if (!on_trailing_name)
    return false;
  std::optional<std::string> name;
  bool after_calls = false;
  for (const JsonMember &member : parsed->document.root().members()) {
    if (after_calls) {
      if (member.key.text() != "name" || member.value.kind() != JsonValue::Kind::String || member.value.text().empty())
        return false;
      name = std::string(member.value.text());
    }
    after_calls = after_calls || member.key.text() == "calls";
  }
  return name && on_trailing_name(std::move(*name));
}

} // namespace nkicc
