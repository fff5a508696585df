#include "cache_cli.h"

#include "nkicc/cache/local_store.h"
#include "nkicc/cache/remote_store.h"
#include "nkicc/support/json_writer.h"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <cstdio>
#include <cstdlib>
#include <sys/stat.h>

namespace nkicc::tool {

namespace {

std::string folder_of(const CacheCliOptions &o) {
  if (!o.dir.empty())
    return o.dir;
  const char *e = env("NKICC_CACHE_DIR");
  return e ? e : "";
}

std::optional<std::uint64_t> max_size_of(const CacheCliOptions &o, std::string &why) {
  std::string text = o.max_size;
  const char *source = "--cache-max-size";
  if (text.empty() && env("NKICC_CACHE_MAX_SIZE")) {
    text = env("NKICC_CACHE_MAX_SIZE");
    source = "NKICC_CACHE_MAX_SIZE";
  }
  if (text.empty())
    return kDefaultCacheMaxSize;
  auto size = parse_cache_size(text);
  if (!size || *size < kCacheShards) {
    why = fmt::format("{} '{}' is not a size: give bytes or a number with K, M, G or T (e.g. 5G)", source, text);
    return std::nullopt;
  }
  return size;
}

void cache_log(CacheLogLevel level, const std::string &text) {
  switch (level) {
  case CacheLogLevel::Debug:
    spdlog::debug("{}", text);
    break;
  case CacheLogLevel::Info:
    spdlog::info("{}", text);
    break;
  case CacheLogLevel::Warn:
    spdlog::warn("{}", text);
    break;
  }
}

std::string stats_text(const std::string &dir, const CacheCounters &c, std::uint64_t max_size) {
  std::string out = fmt::format("Cache directory: {}\n", dir);
  auto line = [&](const char *label, CacheCounter k) { out += fmt::format("  {:<15}{:>12}\n", label, c[k]); };
  line("Hits:", CacheCounter::Hits);
  line("Misses:", CacheCounter::Misses);
  line("Stores:", CacheCounter::Stores);
  line("Corrupt:", CacheCounter::Corrupt);
  line("Read errors:", CacheCounter::ReadErrors);
  line("Write errors:", CacheCounter::WriteErrors);
  line("Evictions:", CacheCounter::Evictions);
  line("Cleanups:", CacheCounter::Cleanups);
  line("Remote hits:", CacheCounter::RemoteHits);
  line("Remote misses:", CacheCounter::RemoteMisses);
  line("Remote errors:", CacheCounter::RemoteErrors);
  line("Remote stores:", CacheCounter::RemoteStores);
  line("Entries:", CacheCounter::Files);
  double percent = max_size ? 100.0 * static_cast<double>(c[CacheCounter::Bytes]) / static_cast<double>(max_size) : 0;
  out += fmt::format("  {:<15}{} of {} ({:.1f}%)\n", "Size:", format_cache_size(c[CacheCounter::Bytes]),
                     format_cache_size(max_size), percent);
  return out;
}

std::string stats_json(const std::string &dir, const CacheCounters &c, std::uint64_t max_size) {
  std::vector<std::pair<std::string, PyConstant>> d;
  d.emplace_back("cache_dir", PyConstant::str(dir));
  for (std::size_t i = 0; i < c.values.size(); ++i)
    d.emplace_back(std::string(cache_counter_name(static_cast<CacheCounter>(i))),
                   PyConstant::integer(static_cast<std::int64_t>(c.values[i])));
  d.emplace_back("max_size", PyConstant::integer(static_cast<std::int64_t>(max_size)));
  return to_pretty_json(PyConstant::make_dict(std::move(d))) + "\n";
}

void print(const std::string &text) { std::fwrite(text.data(), 1, text.size(), stdout); }

} // namespace

void add_trace_cache_options(CLI::App &trace, CacheCliOptions &o) {
  trace.add_option("--cache-dir", o.dir,
                   "Keep traced kernels in this folder across runs (default: NKICC_CACHE_DIR; off when neither)");
  trace.add_option("--cache-max-size", o.max_size,
                   "Size limit of the cache folder: bytes or K, M, G, T (default: NKICC_CACHE_MAX_SIZE, else 5G)");
  trace.add_option("--remote-cache", o.remote,
                   "Share traced kernels on a server: redis://HOST:PORT/N or http://HOST:PORT/PREFIX (Bazel "
                   "remote cache layout; default: NKICC_REMOTE_CACHE)");
  trace.add_flag("--remote-cache-read-only", o.remote_read_only, "Read the remote cache, never upload to it");
  trace
      .add_option("--remote-cache-timeout", o.remote_timeout,
                  "Seconds to wait for the remote cache to connect or answer (default: 2)")
      ->check(CLI::PositiveNumber);
}

void add_key_cache_options(CLI::App &key, CacheCliOptions &o) {
  key.add_flag("--explain", o.explain,
               "Print each call's persistent cache key: every component and its SHA-256 (parses the sources and "
               "runs their module-level code, traces nothing)");
  key.add_option("--format", o.key_format, "Format of --explain: text (default) or json")
      ->check(CLI::IsMember({"text", "json"}));
}

void add_cache_subcommand(CLI::App &app, CacheCliOptions &o, bool named) {
  o.cache = app.add_subcommand("cache", "Inspect or maintain the persistent cache folder");
  o.cache->require_subcommand(1);
  if (!named)
    return;
  auto common = [&o](CLI::App *sub, bool size) {
    sub->add_option("--cache-dir", o.dir, "The cache folder (default: NKICC_CACHE_DIR)");
    if (size)
      sub->add_option("--cache-max-size", o.max_size,
                      "Size limit: bytes or K, M, G, T (default: NKICC_CACHE_MAX_SIZE, else 5G)");
  };
  o.stats = o.cache->add_subcommand("stats", "Print the persistent counters and the size against the limit");
  common(o.stats, true);
  o.stats->add_option("--format", o.format, "text (default) or json")->check(CLI::IsMember({"text", "json"}));
  o.clear = o.cache->add_subcommand("clear", "Remove every entry and zero the counters");
  common(o.clear, false);
  o.verify = o.cache->add_subcommand("verify", "Check every entry; remove the corrupt ones (exit 1 if any)");
  common(o.verify, false);
  o.trim = o.cache->add_subcommand("trim", "Evict the oldest entries down to the size limit; sweep stale temporary "
                                           "files");
  common(o.trim, true);
}

std::optional<UsageError> apply_cache_options(const CacheCliOptions &o, DriverOptions &options, bool tracing) {
  options.explain_keys = o.explain;
  options.key_json = o.key_format == "json";
  if (!o.explain && o.key_format != "text")
    return UsageError{"--format applies to --explain"};
  if (!tracing)
    return std::nullopt;
  std::string why;
  auto max_size = max_size_of(o, why);
  if (!max_size)
    return UsageError{why};
  options.cache.dir = folder_of(o);
  options.cache.max_size = *max_size;
  options.cache.remote_url = o.remote.empty() && env("NKICC_REMOTE_CACHE") ? env("NKICC_REMOTE_CACHE") : o.remote;
  options.cache.remote_read_only = o.remote_read_only;
  options.cache.remote_timeout_seconds = o.remote_timeout;
  options.cache.log = cache_log;
  if (!options.cache.remote_url.empty()) {
    if (!make_remote_store(options.cache.remote_url, {}, why))
      return UsageError{"--remote-cache: " + why};
  }
  options.explain_misses = spdlog::should_log(spdlog::level::info);
  return std::nullopt;
}

std::optional<int> run_cache_subcommand(const CacheCliOptions &o) {
  if (!o.cache || !o.cache->parsed())
    return std::nullopt;
  std::string dir = folder_of(o);
  if (dir.empty())
    return usage_error("nkicc cache needs a cache folder: --cache-dir DIR or NKICC_CACHE_DIR");
  std::string why;
  auto max_size = max_size_of(o, why);
  if (!max_size)
    return usage_error(why);
  struct stat st;
  bool exists = ::stat(dir.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
  LocalStore store(dir, *max_size);
  if (o.clear->parsed()) {
    if (!exists)
      return 0;
    if (!store.clear(why)) {
      std::fprintf(stderr, "nkicc: error: %s\n", why.c_str());
      return kExitIO;
    }
    return 0;
  }
  if (!exists) {
    std::fprintf(stderr, "nkicc: error: %s: cannot read cache folder: no such directory\n", dir.c_str());
    return kExitIO;
  }
  if (o.stats->parsed()) {
    CacheCounters totals = store.totals();
    print(o.format == "json" ? stats_json(dir, totals, *max_size) : stats_text(dir, totals, *max_size));
    return 0;
  }
  if (o.trim->parsed()) {
    store.trim();
    return 0;
  }
  VerifyReport report = store.verify();
  for (const auto &[path, reason] : report.bad)
    print(fmt::format("{}: removed: {}\n", path, reason));
  print(fmt::format("{} valid entr{}, {} removed, {} other file{} left alone\n", report.valid,
                    report.valid == 1 ? "y" : "ies", report.bad.size(), report.stray, report.stray == 1 ? "" : "s"));
  return report.bad.empty() ? 0 : kExitInput;
}

} // namespace nkicc::tool
