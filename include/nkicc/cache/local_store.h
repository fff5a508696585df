// The on-disk cache folder (`--cache-dir`, NKICC_CACHE_DIR), after ccache's local storage
// (reference/cache.md):
//
//   DIR/CACHEDIR.TAG                  marks the folder as a cache (backup tools skip it)
//   DIR/<k0>/<k1>/<key>               one entry file per key (nkicc/cache/cache_entry.h), named
//                                     by its 64-hex key, sharded by its first two hex digits
//   DIR/<k0>/<k1>/<key>.tmp.<unique>  an entry being written: flushed (fsync), then renamed
//                                     over <key>, so no reader ever sees part of an entry
//   DIR/<k0>/stats                    the shard's counters and size, updated under flock
//   DIR/names/<h0h1>/<sha256(kernel)> keys stored per kernel name, newest last: the entries a
//                                     miss is explained against (a hint; losing a line is harmless)
//
// A shard is one <k0> folder (16 of them). The size limit applies per shard (a 16th each), so a
// write that overflows its shard cleans that shard only, oldest modification time first (a hit
// refreshes the time), to 90% of its share: no full scan, and a failed eviction never fails a
// compile. The cleaning also sweeps temporary files older than an hour (left by a writer that
// was killed). Files that are neither entries nor temporary files are left alone.
//
// Test-only fault injection (documented here, read from the environment by the writer):
//   NKICC_CACHE_TEST_KILL_MID_WRITE=1  the writer kills its own process with SIGKILL after
//                                      writing half of an entry's temporary file
//   NKICC_CACHE_TEST_FAIL_WRITE=1      every entry write fails as on a full disk (ENOSPC)
#pragma once

#include "nkicc/cache/cache_entry.h"

#include "nkicc/support/byte_arena.h"

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace nkicc {

inline constexpr std::uint64_t kDefaultCacheMaxSize = std::uint64_t{5} << 30; // 5 GiB
inline constexpr unsigned kCacheShards = 16;

/// The persistent counters, kept per shard; `Files` and `Bytes` are the shard's size.
enum class CacheCounter {
  Hits,         ///< lookups answered by this folder
  Misses,       ///< lookups it could not answer (corrupt entries included)
  Stores,       ///< entries written
  Corrupt,      ///< truncated, bit-flipped, foreign or mismatched entries found by a lookup
  ReadErrors,   ///< entries that could not be read (other than missing)
  WriteErrors,  ///< entries that could not be written (a full disk, permissions)
  Evictions,    ///< entries removed to keep the size limit
  Cleanups,     ///< shard cleanings
  RemoteHits,   ///< lookups answered by the remote cache (then stored here)
  RemoteMisses, ///< remote lookups that found nothing
  RemoteErrors, ///< remote failures: refused, timed out, wrong bytes
  RemoteStores, ///< entries uploaded
  Files,        ///< entries in the shard
  Bytes,        ///< their size
  Count_,
};

/// The counters' names, as the stats file and `nkicc cache stats --format=json` write them.
std::string_view cache_counter_name(CacheCounter c);

struct CacheCounters {
  std::array<std::uint64_t, static_cast<std::size_t>(CacheCounter::Count_)> values{};
  std::uint64_t &operator[](CacheCounter c) { return values[static_cast<std::size_t>(c)]; }
  std::uint64_t operator[](CacheCounter c) const { return values[static_cast<std::size_t>(c)]; }
  CacheCounters &operator+=(const CacheCounters &o);
  bool any() const;
};

/// What one lookup found.
enum class LookupOutcome {
  Hit,
  Miss,      ///< no entry (including one removed between the lookup and the read)
  Corrupt,   ///< an entry that failed its checks: a miss, counted; the next store replaces it
  ReadError, ///< the file exists but could not be read: a miss, counted
};

enum class StoreOutcome { Stored, TooLarge, Failed };

/// The result of `nkicc cache verify`.
struct VerifyReport {
  std::uint64_t valid = 0;
  std::vector<std::pair<std::string, std::string>> bad; ///< (path, why): removed
  std::uint64_t stray = 0;                              ///< files that are not entries, left alone
};

class LocalStore {
public:
  LocalStore(std::string dir, std::uint64_t max_size);
  ~LocalStore();
  LocalStore(const LocalStore &) = delete;
  LocalStore &operator=(const LocalStore &) = delete;

  const std::string &dir() const { return dir_; }
  std::uint64_t max_size() const { return max_size_; }

  /// Reads and checks the entry of `key`. A hit refreshes the entry's modification time (LRU).
  /// Counts hits, misses, corrupt entries and read errors (flushed by flush_counters()).
  LookupOutcome lookup(const std::string &key, std::optional<CacheEntry> &entry, std::string &why);
  /// Writes an entry: temporary file in its shard folder, fsync, rename; then the shard's size
  /// is updated and, past its limit, the shard is cleaned. Failed (counted, `why` set) when the
  /// entry could not be written; the cache is never left with a partial entry. An entry larger
  /// than a shard's share of the limit is not stored.
  StoreOutcome store(const std::string &key, std::string_view bytes, std::string &why);
  /// Adds to a counter of `key`'s shard (remote figures are kept beside the local ones).
  void count(const std::string &key, CacheCounter c, std::uint64_t n = 1);
  /// Adds the counts of this process to the shards' stats files, under their locks.
  void flush_counters();

  /// Appends `key` to the names index of `kernel`.
  void note_kernel(const std::string &kernel, const std::string &key);
  /// The keys stored for `kernel`, newest first, at most `limit`, with their header components
  /// (entries gone since are skipped).
  std::vector<std::pair<std::string, std::vector<std::pair<std::string, std::string>>>>
  kernel_entries(const std::string &kernel, std::size_t limit);

  /// The counters of every shard, summed (`nkicc cache stats`).
  CacheCounters totals() const;
  /// Removes every entry, temporary file and names index and zeroes the counters
  /// (`nkicc cache clear`); CACHEDIR.TAG stays. False with `why` on an I/O error.
  bool clear(std::string &why);
  /// Reads every entry and removes those that fail their checks (`nkicc cache verify`).
  VerifyReport verify();
  /// Cleans every shard to its share of the limit and sweeps stale temporary files, and
  /// recounts the shards' sizes (`nkicc cache trim`).
  void trim();
  /// The path an entry of `key` has.
  std::string entry_path(const std::string &key) const;

private:
  bool ensure_layout(const std::string &key, std::string &why);
  /// Adds `delta` (and this process's pending counts) to a shard's stats file under its lock,
  /// minus a replaced entry's size; cleans the shard when it is over its share of the limit.
  void update_shard(unsigned shard, CacheCounters delta, std::uint64_t replaced_bytes, bool replaced);
  /// Scans a shard: sweeps stale temporary files, evicts oldest entries past the limit when
  /// `evict`, and sets the shard's Files and Bytes to what the scan found.
  void clean_shard(unsigned shard, CacheCounters &stats, bool evict);
  std::uint64_t shard_limit() const { return max_size_ / kCacheShards; }

  std::string dir_;
  std::uint64_t max_size_;
  std::array<CacheCounters, kCacheShards> pending_{};
  bool tagged_ = false;
  ByteArena read_arena_; ///< where hits are read: their BIR blobs stay there for the run
};

/// Parses a size: bytes, or a number with K, M, G or T (powers of 1024; `KiB`, `MB` and the
/// like accepted, all binary). Nullopt when it is not a size.
std::optional<std::uint64_t> parse_cache_size(std::string_view text);
/// A size for people: `0 B`, `12.3 KiB`, `5.0 GiB`.
std::string format_cache_size(std::uint64_t bytes);

} // namespace nkicc
