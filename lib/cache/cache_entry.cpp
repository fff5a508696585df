#include "nkicc/cache/cache_entry.h"

#include "nkicc/cache/persistent_key.h"
#include "nkicc/support/xxh3.h"
#include "nkicc/version.h"

#include <array>
#include <bit>
#include <cstring>

namespace nkicc {

namespace {

constexpr std::size_t kChecksumBytes = 16;
/// Deepest constant nesting a reader accepts: the description's own limit is far below.
constexpr int kMaxValueDepth = 64;

class Writer {
public:
  std::string out;
  void u8(std::uint8_t v) { out += static_cast<char>(v); }
  void u32(std::uint32_t v) {
    for (int i = 0; i < 4; ++i)
      out += static_cast<char>((v >> (8 * i)) & 0xff);
  }
  void u64(std::uint64_t v) {
    for (int i = 0; i < 8; ++i)
      out += static_cast<char>((v >> (8 * i)) & 0xff);
  }
  void i64(std::int64_t v) { u64(static_cast<std::uint64_t>(v)); }
  void str(std::string_view s) {
    u64(s.size());
    out += s;
  }
  void strs(const std::vector<std::string> &v) {
    u32(static_cast<std::uint32_t>(v.size()));
    for (const std::string &s : v)
      str(s);
  }
  void dims(const std::vector<std::int64_t> &v) {
    u32(static_cast<std::uint32_t>(v.size()));
    for (std::int64_t d : v)
      i64(d);
  }
  void value(const PyConstant &c) {
    u8(static_cast<std::uint8_t>(c.kind));
    switch (c.kind) {
    case PyConstant::Kind::None:
      break;
    case PyConstant::Kind::Bool:
      u8(c.b ? 1 : 0);
      break;
    case PyConstant::Kind::Int:
      i64(c.i);
      break;
    case PyConstant::Kind::Float:
      u64(std::bit_cast<std::uint64_t>(c.f));
      break;
    case PyConstant::Kind::Str:
      str(c.s);
      break;
    case PyConstant::Kind::Tuple:
    case PyConstant::Kind::List:
      u32(static_cast<std::uint32_t>(c.items.size()));
      for (const PyConstant &i : c.items)
        value(i);
      break;
    case PyConstant::Kind::Dict:
      u32(static_cast<std::uint32_t>(c.dict.size()));
      for (const auto &[k, v] : c.dict) {
        str(k);
        value(v);
      }
      break;
    case PyConstant::Kind::Ref:
      str(c.s);
      u8(c.b ? 1 : 0);
      u32(static_cast<std::uint32_t>(c.dict.size()));
      for (const auto &[k, v] : c.dict) {
        str(k);
        value(v);
      }
      break;
    }
  }
};

/// A bounds-checked cursor: any read past the end sets `failed` and yields zeros.
class Reader {
public:
  explicit Reader(std::string_view bytes) : data_(bytes) {}
  bool failed = false;

  bool take(std::size_t n, const char *&p) {
    if (failed || n > data_.size() - pos_) {
      failed = true;
      return false;
    }
    p = data_.data() + pos_;
    pos_ += n;
    return true;
  }
  std::uint8_t u8() {
    const char *p;
    return take(1, p) ? static_cast<std::uint8_t>(*p) : 0;
  }
  std::uint32_t u32() {
    const char *p;
    std::uint32_t v = 0;
    if (take(4, p))
      for (int i = 0; i < 4; ++i)
        v |= std::uint32_t{static_cast<unsigned char>(p[i])} << (8 * i);
    return v;
  }
  std::uint64_t u64() {
    const char *p;
    std::uint64_t v = 0;
    if (take(8, p))
      for (int i = 0; i < 8; ++i)
        v |= std::uint64_t{static_cast<unsigned char>(p[i])} << (8 * i);
    return v;
  }
  std::int64_t i64() { return static_cast<std::int64_t>(u64()); }
  std::string str() {
    std::uint64_t n = u64();
    const char *p;
    if (n > data_.size() || !take(static_cast<std::size_t>(n), p))
      return {};
    return std::string(p, static_cast<std::size_t>(n));
  }
  /// A count of items that each take at least `min_bytes`: more than the rest of the buffer
  /// could hold is corrupt (so that a flipped count never allocates gigabytes).
  std::uint32_t count(std::size_t min_bytes) {
    std::uint32_t n = u32();
    if (!failed && std::size_t{n} * min_bytes > data_.size() - pos_)
      failed = true;
    return failed ? 0 : n;
  }
  std::vector<std::string> strs() {
    std::vector<std::string> v(count(8));
    for (std::string &s : v)
      s = str();
    return v;
  }
  std::vector<std::int64_t> dims() {
    std::vector<std::int64_t> v(count(8));
    for (std::int64_t &d : v)
      d = i64();
    return v;
  }
  PyConstant value(int depth = 0) {
    if (depth > kMaxValueDepth) {
      failed = true;
      return {};
    }
    std::uint8_t tag = u8();
    switch (tag) {
    case 0:
      return PyConstant::none();
    case 1:
      return PyConstant::boolean(u8() != 0);
    case 2:
      return PyConstant::integer(i64());
    case 3:
      return PyConstant::floating(std::bit_cast<double>(u64()));
    case 4:
      return PyConstant::str(str());
    case 5:
    case 6: {
      std::vector<PyConstant> items(count(1));
      for (PyConstant &i : items)
        i = value(depth + 1);
      return tag == 5 ? PyConstant::tuple(std::move(items)) : PyConstant::list(std::move(items));
    }
    case 7: {
      // (emplace_back, not a sized vector: clang 14 takes PyConstant's pair as not default-constructible.)
      std::size_t n = count(9);
      std::vector<std::pair<std::string, PyConstant>> entries;
      entries.reserve(n);
      for (std::size_t i = 0; i < n; ++i) {
        std::string k = str();
        entries.emplace_back(std::move(k), value(depth + 1));
      }
      return PyConstant::make_dict(std::move(entries));
    }
    case 8: {
      std::string name = str();
      bool call = u8() != 0;
      std::size_t n = count(9);
      std::vector<std::pair<std::string, PyConstant>> fields;
      fields.reserve(n);
      for (std::size_t i = 0; i < n; ++i) {
        std::string k = str();
        fields.emplace_back(std::move(k), value(depth + 1));
      }
      if (!call)
        return fields.empty() ? PyConstant::ref(std::move(name)) : (failed = true, PyConstant{});
      return PyConstant::ref_call(std::move(name), std::move(fields));
    }
    default:
      failed = true;
      return {};
    }
  }
  std::size_t pos() const { return pos_; }
  bool at_end() const { return pos_ == data_.size(); }

private:
  std::string_view data_;
  std::size_t pos_ = 0;
};

std::string checksum(std::string_view bytes) {
  std::array<unsigned char, 16> canonical = xxh3_128_canonical(bytes.data(), bytes.size());
  return std::string(reinterpret_cast<const char *>(canonical.data()), canonical.size());
}

/// The header up to the payload; false when it is malformed.
bool read_header(Reader &r, std::uint32_t &version, std::string &key, std::uint64_t &payload_size,
                 std::vector<std::pair<std::string, std::string>> &components) {
  const char *magic;
  if (!r.take(kCacheEntryMagic.size(), magic))
    return false;
  version = r.u32();
  r.str(); // the writer's nkicc version: informative, the key holds the one that matters
  key = r.str();
  payload_size = r.u64();
  components.resize(r.count(16));
  for (auto &[name, digest] : components) {
    name = r.str();
    digest = r.str();
  }
  return !r.failed;
}

} // namespace

std::string serialize_entry(const CacheEntry &entry) {
  Writer payload;
  const trace::KernelTrace &t = entry.trace;
  payload.u8(entry.internal ? 1 : 0);
  payload.str(entry.kernel);
  payload.str(t.function.name);
  payload.str(t.specialization_key);
  payload.strs(t.function.input_names);
  payload.strs(t.function.output_names);
  payload.u32(static_cast<std::uint32_t>(t.returns.size()));
  for (const trace::ReturnedTensor &r : t.returns) {
    payload.str(r.name);
    payload.dims(r.shape);
    payload.str(dtype_name(r.dtype));
  }
  payload.u8(t.result_is_sequence ? 1 : 0);
  payload.u32(static_cast<std::uint32_t>(t.aliases.size()));
  for (const auto &[in, out] : t.aliases) {
    payload.u64(in);
    payload.u64(out);
  }
  payload.u32(static_cast<std::uint32_t>(t.constant_values.size()));
  for (const auto &[name, value] : t.constant_values) {
    payload.str(name);
    payload.value(value);
  }
  payload.dims(t.grid);
  payload.u8(t.platform_target_is_fallback ? 1 : 0);
  payload.i64(t.function.matmul_mac_count);
  payload.u8(t.function.has_collectives ? 1 : 0);
  payload.str(entry.bir.bytes());

  Writer w;
  w.out.reserve(payload.out.size() + 256 + 96 * entry.components.size());
  w.out += kCacheEntryMagic;
  w.u32(kCacheEntryFormatVersion);
  w.str(NKICC_VERSION_STRING);
  w.str(entry.key);
  w.u64(payload.out.size());
  w.u32(static_cast<std::uint32_t>(entry.components.size()));
  for (const auto &[name, digest] : entry.components) {
    w.str(name);
    w.str(digest);
  }
  w.out += payload.out;
  w.out += checksum(w.out);
  return std::move(w.out);
}

bool parse_entry_header(std::string_view bytes, std::string &key,
                        std::vector<std::pair<std::string, std::string>> &components) {
  if (bytes.substr(0, kCacheEntryMagic.size()) != kCacheEntryMagic)
    return false;
  Reader r(bytes);
  std::uint32_t version = 0;
  std::uint64_t payload_size = 0;
  return read_header(r, version, key, payload_size, components) && version == kCacheEntryFormatVersion;
}

namespace {

/// The checks and the decoding; the BIR blob is copied unless `bir_at` is given, which is then
/// set to its offset and size in `bytes` (for a caller that keeps the buffer).
std::optional<CacheEntry> parse(std::string_view bytes, std::string_view expected_key, EntryDefect &defect,
                                std::string &why, std::pair<std::size_t, std::size_t> *bir_at) {
  auto fail = [&](EntryDefect d, std::string text) -> std::optional<CacheEntry> {
    defect = d;
    why = std::move(text);
    return std::nullopt;
  };
  if (bytes.empty())
    return fail(EntryDefect::Truncated, "empty entry");
  if (bytes.size() < kCacheEntryMagic.size())
    return bytes == kCacheEntryMagic.substr(0, bytes.size()) ? fail(EntryDefect::Truncated, "truncated header")
                                                             : fail(EntryDefect::Foreign, "not an nkicc cache entry");
  if (bytes.substr(0, kCacheEntryMagic.size()) != kCacheEntryMagic)
    return fail(EntryDefect::Foreign, "not an nkicc cache entry");
  Reader r(bytes);
  CacheEntry entry;
  std::uint32_t version = 0;
  std::uint64_t payload_size = 0;
  if (!read_header(r, version, entry.key, payload_size, entry.components)) {
    // A header that reads as an older or newer format is foreign before it is broken.
    if (version != kCacheEntryFormatVersion && bytes.size() >= kCacheEntryMagic.size() + 4)
      return fail(EntryDefect::Foreign, "entry format " + std::to_string(version) + ", this nkicc reads " +
                                            std::to_string(kCacheEntryFormatVersion));
    return fail(EntryDefect::Truncated, "truncated header");
  }
  if (version != kCacheEntryFormatVersion)
    return fail(EntryDefect::Foreign, "entry format " + std::to_string(version) + ", this nkicc reads " +
                                          std::to_string(kCacheEntryFormatVersion));
  std::size_t header_size = r.pos();
  if (payload_size > bytes.size() || bytes.size() - header_size < payload_size + kChecksumBytes)
    return fail(EntryDefect::Truncated, "truncated entry");
  if (bytes.size() - header_size > payload_size + kChecksumBytes)
    return fail(EntryDefect::Corrupt, "trailing bytes after the checksum");
  std::string_view body = bytes.substr(0, bytes.size() - kChecksumBytes);
  if (checksum(body) != bytes.substr(body.size()))
    return fail(EntryDefect::Corrupt, "checksum mismatch");
  if (!expected_key.empty() && entry.key != expected_key)
    return fail(EntryDefect::WrongKey, "the entry holds key " + entry.key.substr(0, 16) + "...");

  Reader p(body.substr(header_size));
  trace::KernelTrace &t = entry.trace;
  entry.internal = p.u8() != 0;
  entry.kernel = p.str();
  t.function.name = p.str();
  t.specialization_key = p.str();
  t.function.input_names = p.strs();
  t.function.output_names = p.strs();
  t.returns.resize(p.count(24));
  for (trace::ReturnedTensor &ret : t.returns) {
    ret.name = p.str();
    ret.shape = p.dims();
    auto dtype = parse_dtype(p.str());
    if (!dtype)
      return fail(EntryDefect::Corrupt, "unknown dtype in a returned tensor");
    ret.dtype = *dtype;
  }
  t.result_is_sequence = p.u8() != 0;
  t.aliases.resize(p.count(16));
  for (auto &[in, out] : t.aliases) {
    in = static_cast<std::size_t>(p.u64());
    out = static_cast<std::size_t>(p.u64());
  }
  std::size_t constants = p.count(9);
  t.constant_values.reserve(constants); // (not resize: clang 14, as in value() above)
  for (std::size_t i = 0; i < constants; ++i) {
    std::string name = p.str();
    t.constant_values.emplace_back(std::move(name), p.value());
  }
  t.grid = p.dims();
  t.platform_target_is_fallback = p.u8() != 0;
  t.function.matmul_mac_count = p.i64();
  t.function.has_collectives = p.u8() != 0;
  if (bir_at) {
    std::uint64_t n = p.u64();
    const char *blob = nullptr;
    if (n <= bytes.size() && p.take(static_cast<std::size_t>(n), blob))
      *bir_at = {static_cast<std::size_t>(blob - bytes.data()), static_cast<std::size_t>(n)};
  } else {
    entry.bir = OwnedBytes::of(p.str());
  }
  if (p.failed || !p.at_end())
    return fail(EntryDefect::Corrupt, "malformed payload");
  defect = EntryDefect::None;
  return entry;
}

} // namespace

std::optional<CacheEntry> parse_entry(std::string_view bytes, std::string_view expected_key, EntryDefect &defect,
                                      std::string &why) {
  return parse(bytes, expected_key, defect, why, nullptr);
}

std::optional<CacheEntry> parse_entry_buffer(const OwnedBytes &bytes, std::string_view expected_key,
                                             EntryDefect &defect, std::string &why) {
  std::pair<std::size_t, std::size_t> bir_at{0, 0};
  auto entry = parse(bytes.bytes(), expected_key, defect, why, &bir_at);
  if (entry) // the blob, the file's largest part, stays in the buffer it was read into
    entry->bir = bytes.slice(bir_at.first, bir_at.second);
  return entry;
}

} // namespace nkicc
