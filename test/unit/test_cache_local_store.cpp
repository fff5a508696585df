#include "nkicc/cache/local_store.h"

#include "nkicc/cache/remote_store.h"
#include "nkicc/support/file_io.h"
#include "nkicc/support/sha256.h"

#include <catch2/catch.hpp>

#include <atomic>
#include <fcntl.h>
#include <filesystem>
#include <fstream>
#include <sys/stat.h>
#include <thread>
#include <utime.h>

using namespace nkicc;

namespace {

struct TempDir {
  std::string path;
  TempDir() {
    char tmpl[] = "/tmp/nkicc-unit-cache-XXXXXX";
    REQUIRE(::mkdtemp(tmpl));
    path = tmpl;
  }
  ~TempDir() { std::filesystem::remove_all(path); }
};

std::string key_of(int i) { return sha256_hex("key " + std::to_string(i)); }

std::string entry_bytes(const std::string &key, std::string payload) {
  CacheEntry e;
  e.key = key;
  e.kernel = "k";
  e.bir = OwnedBytes::of(std::move(payload));
  e.components = {{"format", "1"}};
  return serialize_entry(e);
}

std::vector<std::string> files_under(const std::string &dir) {
  std::vector<std::string> out;
  for (const auto &e : std::filesystem::recursive_directory_iterator(dir))
    if (e.is_regular_file())
      out.push_back(std::filesystem::relative(e.path(), dir).string());
  std::sort(out.begin(), out.end());
  return out;
}

} // namespace

TEST_CASE("sizes parse in binary units", "[cache]") {
  CHECK(parse_cache_size("0") == 0u);
  CHECK(parse_cache_size("1048576") == 1048576u);
  CHECK(parse_cache_size("5G") == std::uint64_t{5} << 30);
  CHECK(parse_cache_size("5GiB") == std::uint64_t{5} << 30);
  CHECK(parse_cache_size("64k") == 65536u);
  CHECK(parse_cache_size("2MB") == std::uint64_t{2} << 20);
  CHECK(parse_cache_size("1T") == std::uint64_t{1} << 40);
  CHECK_FALSE(parse_cache_size(""));
  CHECK_FALSE(parse_cache_size("G"));
  CHECK_FALSE(parse_cache_size("5 G"));
  CHECK_FALSE(parse_cache_size("5X"));
  CHECK_FALSE(parse_cache_size("-1"));
  CHECK_FALSE(parse_cache_size("99999999999999T"));
  CHECK(format_cache_size(0) == "0 B");
  CHECK(format_cache_size(1536) == "1.5 KiB");
  CHECK(format_cache_size(std::uint64_t{5} << 30) == "5.0 GiB");
}

TEST_CASE("a stored entry is found again; the folder is tagged and sharded", "[cache]") {
  TempDir dir;
  std::string key = key_of(1);
  {
    LocalStore store(dir.path, kDefaultCacheMaxSize);
    std::optional<CacheEntry> entry;
    std::string why;
    CHECK(store.lookup(key, entry, why) == LookupOutcome::Miss);
    CHECK(store.store(key, entry_bytes(key, "blob"), why) == StoreOutcome::Stored);
    CHECK(store.lookup(key, entry, why) == LookupOutcome::Hit);
    REQUIRE(entry);
    CHECK(entry->bir.bytes() == "blob");
  }
  std::vector<std::string> files = files_under(dir.path);
  CHECK(std::find(files.begin(), files.end(), "CACHEDIR.TAG") != files.end());
  CHECK(std::find(files.begin(), files.end(), key.substr(0, 1) + "/" + key.substr(1, 1) + "/" + key) != files.end());
  LocalStore again(dir.path, kDefaultCacheMaxSize);
  CacheCounters c = again.totals();
  CHECK(c[CacheCounter::Hits] == 1);
  CHECK(c[CacheCounter::Misses] == 1);
  CHECK(c[CacheCounter::Stores] == 1);
  CHECK(c[CacheCounter::Files] == 1);
  CHECK(c[CacheCounter::Bytes] == entry_bytes(key, "blob").size());
}

TEST_CASE("a damaged entry is a counted miss and the next store repairs it", "[cache]") {
  TempDir dir;
  LocalStore store(dir.path, kDefaultCacheMaxSize);
  std::string key = key_of(2), why;
  std::string bytes = entry_bytes(key, "payload");
  REQUIRE(store.store(key, bytes, why) == StoreOutcome::Stored);
  std::optional<CacheEntry> entry;
  for (std::string damaged : {std::string(), bytes.substr(0, bytes.size() / 2), bytes}) {
    if (damaged.size() == bytes.size())
      damaged[damaged.size() / 2] ^= 0x10;
    REQUIRE(write_file_atomically(store.entry_path(key), damaged, why));
    CHECK(store.lookup(key, entry, why) == LookupOutcome::Corrupt);
    CHECK_FALSE(why.empty());
  }
  // An entry of another key under this key's name (a stray copy) is refused too.
  REQUIRE(write_file_atomically(store.entry_path(key), entry_bytes(key_of(3), "x"), why));
  CHECK(store.lookup(key, entry, why) == LookupOutcome::Corrupt);
  REQUIRE(store.store(key, bytes, why) == StoreOutcome::Stored);
  CHECK(store.lookup(key, entry, why) == LookupOutcome::Hit);
  store.flush_counters();
  CHECK(store.totals()[CacheCounter::Corrupt] == 4);
}

TEST_CASE("two writers of one key with different bytes: readers see one whole entry", "[cache]") {
  TempDir dir;
  std::string key = key_of(4);
  std::string a = entry_bytes(key, std::string(200000, 'a')), b = entry_bytes(key, std::string(300000, 'b'));
  std::atomic<bool> stop{false};
  auto writer = [&](const std::string &bytes) {
    LocalStore store(dir.path, kDefaultCacheMaxSize);
    std::string why;
    for (int i = 0; i < 40; ++i)
      CHECK(store.store(key, bytes, why) == StoreOutcome::Stored);
  };
  std::atomic<int> hits{0}, bad{0};
  std::thread reader([&] {
    LocalStore store(dir.path, kDefaultCacheMaxSize);
    while (!stop) {
      std::optional<CacheEntry> entry;
      std::string why;
      LookupOutcome got = store.lookup(key, entry, why);
      if (got == LookupOutcome::Hit &&
          (entry->bir.bytes() == std::string(200000, 'a') || entry->bir.bytes() == std::string(300000, 'b')))
        ++hits;
      else if (got != LookupOutcome::Miss)
        ++bad;
    }
  });
  std::thread w1(writer, a), w2(writer, b);
  w1.join();
  w2.join();
  stop = true;
  reader.join();
  CHECK(bad == 0);
  CHECK(hits > 0);
  // One entry, no temporary file left.
  std::vector<std::string> files = files_under(dir.path);
  CHECK(std::count_if(files.begin(), files.end(),
                      [](const std::string &f) { return f.find(".tmp.") != std::string::npos; }) == 0);
}

TEST_CASE("a store past the limit evicts the shard's oldest entries, never the newest", "[cache]") {
  TempDir dir;
  // 16 shards of 64 KiB: entries of ~20 KiB, all in shard '0'.
  LocalStore store(dir.path, 1 << 20);
  std::vector<std::string> keys;
  for (int i = 0; keys.size() < 10; ++i) {
    std::string k = key_of(100 + i);
    if (k[0] == '0')
      keys.push_back(k);
  }
  std::string why;
  for (std::size_t i = 0; i < keys.size(); ++i) {
    REQUIRE(store.store(keys[i], entry_bytes(keys[i], std::string(20000, 'x')), why) == StoreOutcome::Stored);
    // Distinct modification times, oldest first.
    struct timespec times[2] = {{static_cast<time_t>(1000 + i), 0}, {static_cast<time_t>(1000 + i), 0}};
    ::utimensat(AT_FDCWD, store.entry_path(keys[i]).c_str(), times, 0);
  }
  CacheCounters c = store.totals();
  CHECK(c[CacheCounter::Bytes] <= (1u << 20) / 16);
  CHECK(c[CacheCounter::Evictions] > 0);
  std::optional<CacheEntry> entry;
  CHECK(store.lookup(keys.back(), entry, why) == LookupOutcome::Hit);
  CHECK(store.lookup(keys.front(), entry, why) == LookupOutcome::Miss);
  // An entry larger than a shard's share is not stored at all.
  CHECK(store.store(keys[0], entry_bytes(keys[0], std::string(70000, 'y')), why) == StoreOutcome::TooLarge);
  CHECK(why == "an entry of 68.6 KiB is larger than a cache shard's share of the limit (64.0 KiB)");
}

TEST_CASE("trim sweeps stale temporary files and leaves stray files alone", "[cache]") {
  TempDir dir;
  LocalStore store(dir.path, kDefaultCacheMaxSize);
  std::string key = key_of(5), why;
  REQUIRE(store.store(key, entry_bytes(key, "x"), why) == StoreOutcome::Stored);
  std::string folder = std::filesystem::path(store.entry_path(key)).parent_path().string();
  std::string stale = folder + "/" + key + ".tmp.1.0.dead", fresh = folder + "/" + key + ".tmp.2.0.live";
  std::string stray = folder + "/notes.txt";
  for (const std::string &f : {stale, fresh, stray})
    REQUIRE(write_file_atomically(f, "partial", why));
  struct utimbuf old = {1000, 1000};
  ::utime(stale.c_str(), &old);
  store.trim();
  CHECK_FALSE(std::filesystem::exists(stale));
  CHECK(std::filesystem::exists(fresh));
  CHECK(std::filesystem::exists(stray));
  VerifyReport report = store.verify();
  CHECK(report.valid == 1);
  CHECK(report.bad.empty());
  CHECK(report.stray == 1);
  REQUIRE(store.clear(why));
  CHECK(std::filesystem::exists(stray));
  CHECK_FALSE(std::filesystem::exists(store.entry_path(key)));
  CHECK_FALSE(store.totals().any());
}

TEST_CASE("the names index lists a kernel's entries, newest first", "[cache]") {
  TempDir dir;
  LocalStore store(dir.path, kDefaultCacheMaxSize);
  std::string why;
  for (int i = 0; i < 3; ++i) {
    std::string k = key_of(10 + i);
    REQUIRE(store.store(k, entry_bytes(k, "x"), why) == StoreOutcome::Stored);
    store.note_kernel("kern", k);
  }
  store.note_kernel("kern", key_of(99)); // never stored: skipped
  auto entries = store.kernel_entries("kern", 2);
  REQUIRE(entries.size() == 2);
  CHECK(entries[0].first == key_of(12));
  CHECK(entries[1].first == key_of(11));
  CHECK(entries[0].second == std::vector<std::pair<std::string, std::string>>{{"format", "1"}});
  CHECK(store.kernel_entries("other", 5).empty());
}

TEST_CASE("remote action records name a blob's digest and size", "[cache]") {
  std::string record = remote_action_record("blob bytes");
  CHECK(record == "nkicc-ac 1 " + sha256_hex("blob bytes") + " 10\n");
  std::string digest;
  std::uint64_t size = 0;
  REQUIRE(parse_remote_action_record(record, digest, size));
  CHECK(digest == sha256_hex("blob bytes"));
  CHECK(size == 10);
  CHECK_FALSE(parse_remote_action_record("nkicc-ac 1 abc 10\n", digest, size));
  CHECK_FALSE(parse_remote_action_record(record.substr(0, record.size() - 1), digest, size));
  CHECK_FALSE(parse_remote_action_record("", digest, size));
  std::string why;
  CHECK_FALSE(make_remote_store("ftp://x", {}, why));
  CHECK(why == "'ftp://x' is not a remote cache URL: use redis://HOST:PORT/N or http://HOST:PORT/PREFIX");
  CHECK_FALSE(make_remote_store("redis://:6379/0", {}, why));
  CHECK(why == "'redis://:6379/0' names no host");
  CHECK_FALSE(make_remote_store("redis://h:99999/0", {}, why));
  CHECK(why == "'redis://h:99999/0' has no valid port");
  CHECK_FALSE(make_remote_store("redis://h:1/x", {}, why));
  CHECK(why == "'redis://h:1/x' names database 'x', which is not a number");
  CHECK(make_remote_store("redis://127.0.0.1:6379/2", {}, why));
  CHECK(make_remote_store("http://127.0.0.1:8080/cache", {}, why));
}
