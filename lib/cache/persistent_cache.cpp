#include "nkicc/cache/persistent_cache.h"

#include "nkicc/support/sha256.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstring>

namespace nkicc {

namespace {

/// Entries of a kernel compared to explain one miss: the newest few are where a near miss is.
constexpr std::size_t kExplainCandidates = 32;

std::string short_key(const std::string &key) { return key.substr(0, 16) + "..."; }

} // namespace

std::unique_ptr<PersistentCache> PersistentCache::open(const PersistentCacheOptions &options, std::string &why) {
  std::unique_ptr<PersistentCache> cache(new PersistentCache(options));
  if (!options.remote_url.empty()) {
    RemoteOptions remote;
    remote.timeout_seconds = options.remote_timeout_seconds;
    cache->remote_ = make_remote_store(options.remote_url, remote, why);
    if (!cache->remote_)
      return nullptr;
    cache->figures_.has_remote = true;
  }
  return cache;
}

PersistentCache::PersistentCache(const PersistentCacheOptions &options) : options_(options) {
  if (!options.dir.empty()) {
    local_ = std::make_unique<LocalStore>(options.dir, options.max_size);
    figures_.has_local = true;
  }
}

PersistentCache::~PersistentCache() { flush(); }

void PersistentCache::flush() {
  if (local_)
    local_->flush_counters();
}

void PersistentCache::log(CacheLogLevel level, const std::string &text) const {
  if (options_.log)
    options_.log(level, text);
}

void PersistentCache::count(const PersistentKey &key, CacheCounter c) {
  if (local_)
    local_->count(key.key, c);
}

void PersistentCache::remote_failed(const std::string &why) {
  ++figures_.remote_errors;
  ++remote_failures_;
  log(CacheLogLevel::Debug, fmt::format("remote cache {}: {}", remote_->url(), why));
  if (remote_failures_ >= kRemoteMaxFailures) {
    log(CacheLogLevel::Warn, fmt::format("remote cache {} failed {} times (last: {}); not using it for the rest of "
                                         "this run",
                                         remote_->url(), remote_failures_, why));
    remote_.reset();
    figures_.remote_dropped = true;
  }
}

std::optional<CacheEntry> PersistentCache::find(const PersistentKey &key) {
  ++figures_.lookups;
  last_hit_remote_ = false;
  if (local_) {
    std::optional<CacheEntry> entry;
    std::string why;
    switch (local_->lookup(key.key, entry, why)) {
    case LookupOutcome::Hit:
      ++figures_.local_hits;
      return entry;
    case LookupOutcome::Miss:
      break;
    case LookupOutcome::Corrupt:
      ++figures_.corrupt;
      log(CacheLogLevel::Info, fmt::format("persistent cache: corrupt entry {}; treated as a miss", why));
      break;
    case LookupOutcome::ReadError:
      ++figures_.errors;
      log(CacheLogLevel::Warn, fmt::format("persistent cache: {}; treated as a miss", why));
      break;
    }
  }
  if (auto entry = find_remote(key)) {
    ++figures_.remote_hits;
    last_hit_remote_ = true;
    if (local_) {
      std::string why;
      if (local_->store(key.key, serialize_entry(*entry), why) == StoreOutcome::Stored)
        local_->note_kernel(key.kernel, key.key);
    }
    return entry;
  }
  ++figures_.misses;
  return std::nullopt;
}

std::optional<CacheEntry> PersistentCache::find_remote(const PersistentKey &key) {
  if (!remote_)
    return std::nullopt;
  std::string why;
  std::string &record = remote_record_, &blob = remote_blob_;
  RemoteOutcome got = remote_->get("ac/" + key.key, record, why);
  if (got == RemoteOutcome::Error) {
    count(key, CacheCounter::RemoteErrors);
    remote_failed(why);
    return std::nullopt;
  }
  auto reject = [&](std::string text) {
    ++figures_.remote_rejected;
    count(key, CacheCounter::RemoteErrors);
    log(CacheLogLevel::Warn, fmt::format("remote cache {}: {}; ignored", remote_->url(), text));
    remote_failed(text);
  };
  if (got == RemoteOutcome::Miss) {
    count(key, CacheCounter::RemoteMisses);
    return std::nullopt;
  }
  std::string digest;
  std::uint64_t size = 0;
  if (!parse_remote_action_record(record, digest, size)) {
    reject(fmt::format("the record of key {} is malformed", short_key(key.key)));
    return std::nullopt;
  }
  got = remote_->get("cas/" + digest, blob, why);
  if (got == RemoteOutcome::Error) {
    count(key, CacheCounter::RemoteErrors);
    remote_failed(why);
    return std::nullopt;
  }
  if (got == RemoteOutcome::Miss) {
    // A record whose blob is gone (evicted by the server): a miss, as for Bazel.
    count(key, CacheCounter::RemoteMisses);
    return std::nullopt;
  }
  if (blob.size() != size || sha256_hex(blob) != digest) {
    reject(fmt::format("the blob of key {} does not match its digest (sha256 {}, {} bytes; got {} bytes)",
                       short_key(key.key), short_key(digest), size, blob.size()));
    return std::nullopt;
  }
  EntryDefect defect = EntryDefect::None;
  // Kept in the arena for the run; the download buffer is reused.
  std::shared_ptr<const void> owner;
  char *kept = remote_arena_.allocate(blob.size(), owner);
  std::memcpy(kept, blob.data(), blob.size());
  auto entry =
      parse_entry_buffer(OwnedBytes(std::move(owner), std::string_view(kept, blob.size())), key.key, defect, why);
  if (!entry) {
    reject(fmt::format("the blob of key {} is not a valid entry: {}", short_key(key.key), why));
    return std::nullopt;
  }
  count(key, CacheCounter::RemoteHits);
  log(CacheLogLevel::Debug, fmt::format("remote cache hit for {} (key: {})", key.kernel, short_key(key.key)));
  return entry;
}

void PersistentCache::store(const PersistentKey &key, CacheEntry entry) {
  entry.key = key.key;
  entry.components.clear();
  for (const KeyComponent &c : key.components)
    entry.components.emplace_back(c.name, c.digest);
  std::string bytes = serialize_entry(entry);
  if (local_) {
    std::string why;
    switch (local_->store(key.key, bytes, why)) {
    case StoreOutcome::Stored:
      ++figures_.stores;
      local_->note_kernel(key.kernel, key.key);
      break;
    case StoreOutcome::TooLarge:
      log(CacheLogLevel::Debug, fmt::format("persistent cache: {} not stored: {}", key.kernel, why));
      break;
    case StoreOutcome::Failed:
      ++figures_.errors;
      // One warning a run: a full disk would otherwise repeat it for every call.
      log(warned_write_ ? CacheLogLevel::Debug : CacheLogLevel::Warn,
          fmt::format("persistent cache: {}; the output is not affected", why));
      warned_write_ = true;
      break;
    }
  }
  if (remote_ && !options_.remote_read_only) {
    std::string why;
    std::string digest = sha256_hex(bytes);
    if (!remote_->put("cas/" + digest, bytes, why) ||
        !remote_->put("ac/" + key.key, remote_action_record(bytes), why)) {
      count(key, CacheCounter::RemoteErrors);
      remote_failed(why);
      return;
    }
    ++figures_.remote_stores;
    count(key, CacheCounter::RemoteStores);
    log(CacheLogLevel::Debug,
        fmt::format("remote cache {}: stored {} (key: {})", remote_->url(), key.kernel, short_key(key.key)));
  }
}

std::string PersistentCache::explain_miss(const PersistentKey &key) {
  if (!local_)
    return "no local cache to compare with";
  std::vector<std::pair<std::string, std::string>> mine;
  for (const KeyComponent &c : key.components)
    mine.emplace_back(c.name, c.digest);
  std::string best_key;
  std::vector<std::string> best;
  for (const auto &[other_key, components] : local_->kernel_entries(key.kernel, kExplainCandidates)) {
    if (other_key == key.key)
      continue;
    std::vector<std::string> diff = differing_components(mine, components);
    if (best_key.empty() || diff.size() < best.size()) {
      best_key = other_key;
      best = std::move(diff);
    }
  }
  if (best_key.empty())
    return fmt::format("no entry of kernel '{}' in the cache", key.kernel);
  std::string names;
  for (const std::string &n : best)
    names += (names.empty() ? "" : ", ") + n;
  return fmt::format("the nearest entry of '{}' (key: {}) differs in {}", key.kernel, short_key(best_key), names);
}

std::string persistent_cache_figures_text(const PersistentCacheFigures &f) {
  std::string out = "Persistent cache (this run):\n";
  out += fmt::format("  Lookups:   {}\n", f.lookups);
  out +=
      fmt::format("  Hits:      {} (local {}, remote {})\n", f.local_hits + f.remote_hits, f.local_hits, f.remote_hits);
  out += fmt::format("  Misses:    {}\n", f.misses);
  out += fmt::format("  Stored:    {}\n", f.stores);
  out += fmt::format("  Corrupt:   {}\n", f.corrupt);
  out += fmt::format("  Errors:    {}\n", f.errors);
  if (f.has_remote) {
    out += fmt::format("  Remote stored:   {}\n", f.remote_stores);
    out += fmt::format("  Remote rejected: {}\n", f.remote_rejected);
    out += fmt::format("  Remote errors:   {}{}\n", f.remote_errors, f.remote_dropped ? " (dropped)" : "");
  }
  return out;
}

PyConstant persistent_cache_figures_value(const PersistentCacheFigures &f) {
  std::vector<std::pair<std::string, PyConstant>> d;
  auto field = [&d](std::string name, std::uint64_t v) {
    d.emplace_back(std::move(name), PyConstant::integer(static_cast<std::int64_t>(v)));
  };
  field("lookups", f.lookups);
  field("local_hits", f.local_hits);
  field("remote_hits", f.remote_hits);
  field("misses", f.misses);
  field("stores", f.stores);
  field("corrupt", f.corrupt);
  field("errors", f.errors);
  if (f.has_remote) {
    field("remote_stores", f.remote_stores);
    field("remote_rejected", f.remote_rejected);
    field("remote_errors", f.remote_errors);
    d.emplace_back("remote_dropped", PyConstant::boolean(f.remote_dropped));
  }
  return PyConstant::make_dict(std::move(d));
}

} // namespace nkicc
