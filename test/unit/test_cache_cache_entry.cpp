#include "nkicc/cache/cache_entry.h"

#include <catch2/catch.hpp>

#include <string>

using namespace nkicc;

namespace {

CacheEntry sample_entry() {
  CacheEntry e;
  e.key = std::string(64, 'a');
  e.components = {{"format", std::string(64, '1')}, {"file k.py", std::string(64, '2')}};
  e.internal = false;
  e.kernel = "matmul_tiled";
  e.bir = OwnedBytes::of(std::string("NBIK\0\x01\x02 blob bytes", 17));
  trace::KernelTrace &t = e.trace;
  t.function.name = "matmul_tiled";
  t.function.input_names = {"a", "b"};
  t.function.output_names = {"out"};
  t.function.matmul_mac_count = 1234567890123;
  t.function.has_collectives = true;
  t.returns = {{"out", {128, 512}, DType::BFloat16}};
  t.result_is_sequence = true;
  t.aliases = {{1, 0}};
  t.constant_values = {
      {"eps", PyConstant::floating(1e-5)},
      {"cfg", PyConstant::make_dict({{"tile", PyConstant::tuple({PyConstant::integer(-3), PyConstant::none()})},
                                     {"name", PyConstant::str("é\n")},
                                     {"on", PyConstant::boolean(true)},
                                     {"l", PyConstant::list({})}})}};
  t.grid = {2, 4};
  t.platform_target_is_fallback = true;
  t.specialization_key = "(((128, 512), 'bfloat16'),)";
  return e;
}

void check_same(const CacheEntry &a, const CacheEntry &b) {
  CHECK(a.key == b.key);
  CHECK(a.components == b.components);
  CHECK(a.internal == b.internal);
  CHECK(a.kernel == b.kernel);
  CHECK(a.bir.bytes() == b.bir.bytes());
  const trace::KernelTrace &x = a.trace, &y = b.trace;
  CHECK(x.function.name == y.function.name);
  CHECK(x.function.input_names == y.function.input_names);
  CHECK(x.function.output_names == y.function.output_names);
  CHECK(x.function.matmul_mac_count == y.function.matmul_mac_count);
  CHECK(x.function.has_collectives == y.function.has_collectives);
  REQUIRE(x.returns.size() == y.returns.size());
  CHECK(x.returns[0].name == y.returns[0].name);
  CHECK(x.returns[0].shape == y.returns[0].shape);
  CHECK(x.returns[0].dtype == y.returns[0].dtype);
  CHECK(x.result_is_sequence == y.result_is_sequence);
  CHECK(x.aliases == y.aliases);
  CHECK(x.constant_values == y.constant_values);
  CHECK(x.grid == y.grid);
  CHECK(x.platform_target_is_fallback == y.platform_target_is_fallback);
  CHECK(x.specialization_key == y.specialization_key);
}

} // namespace

TEST_CASE("an entry reads back as it was written", "[cache]") {
  CacheEntry e = sample_entry();
  std::string bytes = serialize_entry(e);
  CHECK(bytes.substr(0, 8) == "NKICACHE");
  EntryDefect defect = EntryDefect::Corrupt;
  std::string why;
  auto back = parse_entry(bytes, e.key, defect, why);
  REQUIRE(back);
  CHECK(defect == EntryDefect::None);
  check_same(e, *back);
  // The same entry gives the same bytes.
  CHECK(serialize_entry(*back) == bytes);
  // Read from an owned buffer, the blob is the same, kept in that buffer (which it keeps alive).
  OwnedBytes owned = OwnedBytes::of(bytes);
  auto in_place = parse_entry_buffer(owned, e.key, defect, why);
  REQUIRE(in_place);
  check_same(e, *in_place);
  const char *start = owned.bytes().data();
  CHECK(in_place->bir.bytes().data() > start);
  CHECK(in_place->bir.bytes().data() + in_place->bir.size() < start + owned.size());
  owned = OwnedBytes();
  CHECK(in_place->bir.bytes() == e.bir.bytes());
  // The header alone names the key and components.
  std::string key;
  std::vector<std::pair<std::string, std::string>> components;
  REQUIRE(parse_entry_header(bytes, key, components));
  CHECK(key == e.key);
  CHECK(components == e.components);
}

TEST_CASE("every truncation of an entry is refused, none crashes", "[cache]") {
  std::string bytes = serialize_entry(sample_entry());
  for (std::size_t n = 0; n < bytes.size(); ++n) {
    EntryDefect defect = EntryDefect::None;
    std::string why;
    INFO("length " << n);
    CHECK_FALSE(parse_entry(std::string_view(bytes).substr(0, n), "", defect, why));
    CHECK(defect == EntryDefect::Truncated);
    CHECK_FALSE(why.empty());
  }
}

TEST_CASE("every flipped bit of an entry is caught", "[cache]") {
  std::string bytes = serialize_entry(sample_entry());
  for (std::size_t i = 0; i < bytes.size(); ++i)
    for (int bit = 0; bit < 8; bit += 3) {
      std::string flipped = bytes;
      flipped[i] = static_cast<char>(flipped[i] ^ (1 << bit));
      EntryDefect defect = EntryDefect::None;
      std::string why;
      INFO("byte " << i << " bit " << bit);
      CHECK_FALSE(parse_entry(flipped, "", defect, why));
      CHECK(defect != EntryDefect::None);
    }
}

TEST_CASE("foreign bytes, another format and another key are told apart", "[cache]") {
  EntryDefect defect = EntryDefect::None;
  std::string why;
  CHECK_FALSE(parse_entry("", "", defect, why));
  CHECK(defect == EntryDefect::Truncated);
  CHECK(why == "empty entry");
  CHECK_FALSE(parse_entry("\x7f"
                          "ELF\x02\x01\x01 not an entry at all",
                          "", defect, why));
  CHECK(defect == EntryDefect::Foreign);
  CHECK(why == "not an nkicc cache entry");

  CacheEntry e = sample_entry();
  std::string bytes = serialize_entry(e);
  std::string old = bytes;
  old[8] = 0; // format version 0 (the low byte of the little-endian u32)
  CHECK_FALSE(parse_entry(old, "", defect, why));
  CHECK(defect == EntryDefect::Foreign);
  CHECK(why == "entry format 0, this nkicc reads 1");

  CHECK_FALSE(parse_entry(bytes, std::string(64, 'b'), defect, why));
  CHECK(defect == EntryDefect::WrongKey);
  CHECK(why == "the entry holds key aaaaaaaaaaaaaaaa...");

  std::string longer = bytes + "x";
  CHECK_FALSE(parse_entry(longer, "", defect, why));
  CHECK(defect == EntryDefect::Corrupt);
}
