// The persistent cache of one run (issue 14): the on-disk folder first, then the remote server,
// behind the seed's per-run caches (a per-run hit never reaches it). A local hit never touches
// the remote; a remote hit is checked, then written to the folder; a miss is traced and the
// result stored in both. Nothing here can fail a compile: every failure is a miss, counted and
// logged, and a remote that fails kRemoteMaxFailures times is dropped for the rest of the run
// with one warning (reference/cache.md, "Shared (remote) cache").
#pragma once

#include "nkicc/cache/cache_entry.h"
#include "nkicc/cache/local_store.h"
#include "nkicc/support/byte_arena.h"
#include "nkicc/cache/persistent_key.h"
#include "nkicc/cache/remote_store.h"

#include <functional>
#include <memory>
#include <optional>
#include <string>

namespace nkicc {

inline constexpr unsigned kRemoteMaxFailures = 3;

enum class CacheLogLevel { Debug, Info, Warn };

struct PersistentCacheOptions {
  std::string dir;                               ///< the local folder; empty: none
  std::uint64_t max_size = kDefaultCacheMaxSize; ///< --cache-max-size
  std::string remote_url;                        ///< --remote-cache; empty: none
  bool remote_read_only = false;                 ///< --remote-cache-read-only: never upload
  double remote_timeout_seconds = 2.0;           ///< --remote-cache-timeout
  /// Where the cache's messages go (the tool logs them; the library never prints).
  std::function<void(CacheLogLevel, const std::string &)> log;

  bool enabled() const { return !dir.empty() || !remote_url.empty(); }
};

/// This run's persistent-cache figures (the stats section beside the seed's report).
struct PersistentCacheFigures {
  std::uint64_t lookups = 0;
  std::uint64_t local_hits = 0;
  std::uint64_t remote_hits = 0;
  std::uint64_t misses = 0;
  std::uint64_t stores = 0;
  std::uint64_t corrupt = 0;
  std::uint64_t errors = 0; ///< local read and write errors
  std::uint64_t remote_stores = 0;
  std::uint64_t remote_rejected = 0; ///< downloads refused by the digest or entry checks
  std::uint64_t remote_errors = 0;
  bool remote_dropped = false;
  bool has_local = false;
  bool has_remote = false;
};

class PersistentCache {
public:
  /// Null with `why` when the remote URL is malformed (a usage error for the tool).
  static std::unique_ptr<PersistentCache> open(const PersistentCacheOptions &options, std::string &why);
  ~PersistentCache();
  PersistentCache(const PersistentCache &) = delete;
  PersistentCache &operator=(const PersistentCache &) = delete;

  /// The entry of `key`: local first, then remote.
  std::optional<CacheEntry> find(const PersistentKey &key);
  /// Stores a freshly traced entry locally and remotely (unless read-only).
  void store(const PersistentKey &key, CacheEntry entry);
  /// Why `key` missed: the components in which it differs from the nearest local entry of the
  /// same kernel (the one with the fewest differences, newest first), or that there is none.
  std::string explain_miss(const PersistentKey &key);

  /// Whether the last find() was answered by the remote.
  bool last_hit_remote() const { return last_hit_remote_; }
  const PersistentCacheFigures &figures() const { return figures_; }
  /// Writes this run's counts to the folder's stats files.
  void flush();

private:
  explicit PersistentCache(const PersistentCacheOptions &options);
  void log(CacheLogLevel level, const std::string &text) const;
  void remote_failed(const std::string &why);
  std::optional<CacheEntry> find_remote(const PersistentKey &key);
  void count(const PersistentKey &key, CacheCounter c);

  PersistentCacheOptions options_;
  std::unique_ptr<LocalStore> local_;
  std::unique_ptr<RemoteStore> remote_;
  unsigned remote_failures_ = 0;
  bool warned_write_ = false;
  bool last_hit_remote_ = false;
  std::string remote_record_, remote_blob_; ///< reused for every download: their pages stay
  ByteArena remote_arena_;                  ///< where downloaded entries are kept for the run
  PersistentCacheFigures figures_;
};

/// The figures as the text stats report's own section, and as the JSON report's
/// `persistent_cache` object.
std::string persistent_cache_figures_text(const PersistentCacheFigures &f);
PyConstant persistent_cache_figures_value(const PersistentCacheFigures &f);

} // namespace nkicc
