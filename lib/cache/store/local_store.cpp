#include "nkicc/cache/local_store.h"

#include "nkicc/support/sha256.h"

#include <fmt/format.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <charconv>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <dirent.h>
#include <fcntl.h>
#include <random>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

namespace nkicc {

namespace {

/// A temporary file this old was left by a writer that died: no write takes an hour.
constexpr std::int64_t kStaleTempSeconds = 3600;
/// A names index past this size is rewritten with its newest keys only.
constexpr std::size_t kNamesIndexMaxBytes = 64 * 1024;
constexpr std::size_t kNamesIndexKeep = 128;
constexpr std::string_view kTempMarker = ".tmp.";

constexpr std::string_view kCacheDirTag =
    "Signature: 8a477f597d28d172789f06886806bc55\n"
    "# This file is a cache directory tag created by nkicc.\n"
    "# For information about cache directory tags, see https://bford.info/cachedir/\n";

std::string errno_text(int err) {
  std::string s = std::strerror(err);
  if (!s.empty())
    s[0] = static_cast<char>(std::tolower(static_cast<unsigned char>(s[0])));
  return s;
}

bool is_hex_key(std::string_view name) {
  return name.size() == 64 &&
         std::all_of(name.begin(), name.end(), [](char c) { return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'); });
}

unsigned shard_of(std::string_view key) {
  char c = key.empty() ? '0' : key[0];
  return c >= 'a' ? static_cast<unsigned>(c - 'a' + 10) : static_cast<unsigned>(c - '0');
}

char hex_digit(unsigned v) { return "0123456789abcdef"[v & 15]; }

bool env_set(const char *name) {
  const char *v = std::getenv(name);
  return v && *v && std::strcmp(v, "0") != 0;
}

/// Makes a folder and its missing parents; EEXIST is success.
bool make_dirs(const std::string &path, std::string &why) {
  if (path.empty())
    return true;
  struct stat st;
  if (::stat(path.c_str(), &st) == 0) {
    if (S_ISDIR(st.st_mode))
      return true;
    why = fmt::format("{}: not a directory", path);
    return false;
  }
  std::size_t slash = path.find_last_of('/');
  if (slash != std::string::npos && slash > 0 && !make_dirs(path.substr(0, slash), why))
    return false;
  if (::mkdir(path.c_str(), 0755) != 0 && errno != EEXIST) {
    why = fmt::format("cannot create {}: {}", path, errno_text(errno));
    return false;
  }
  return true;
}

bool write_all(int fd, std::string_view data, int &err) {
  while (!data.empty()) {
    ssize_t n = ::write(fd, data.data(), data.size());
    if (n < 0) {
      if (errno == EINTR)
        continue;
      err = errno;
      return false;
    }
    data.remove_prefix(static_cast<std::size_t>(n));
  }
  return true;
}

/// Reads up to `limit` bytes of an open file. The buffer grows from 4 KiB as the file turns
/// out larger: the files read whole here are mostly a shard's few hundred bytes of counters, and
/// a first step of 64 KiB zeroed 64 KiB for each (a persistent-cache run flushes up to 16).
bool read_fd(int fd, std::string &out, std::size_t limit, int &err) {
  std::size_t have = out.size();
  while (have < limit) {
    if (out.size() < limit)
      out.resize(std::min(limit, std::max<std::size_t>(have + 4096, have * 2)));
    ssize_t n = ::read(fd, out.data() + have, out.size() - have);
    if (n < 0) {
      if (errno == EINTR)
        continue;
      err = errno;
      return false;
    }
    if (n == 0)
      break;
    have += static_cast<std::size_t>(n);
  }
  out.resize(have);
  return true;
}

std::string unique_suffix() {
  static std::atomic<unsigned> counter{0};
  static const std::uint64_t salt = [] {
    std::random_device rd;
    return (std::uint64_t{rd()} << 32) ^ rd();
  }();
  return fmt::format("{}{}.{}.{:016x}", kTempMarker, ::getpid(), counter++, salt);
}

/// The stats file's text: one fixed-width line per counter, so a rewrite never changes the
/// file's length and one pwrite() replaces it whole.
std::string stats_text(const CacheCounters &c) {
  std::string out;
  for (std::size_t i = 0; i < c.values.size(); ++i)
    out += fmt::format("{:<14}{:>20}\n", cache_counter_name(static_cast<CacheCounter>(i)), c.values[i]);
  return out;
}

CacheCounters parse_stats(std::string_view text) {
  CacheCounters c;
  while (!text.empty()) {
    std::size_t nl = text.find('\n');
    std::string_view line = text.substr(0, nl);
    text = nl == std::string_view::npos ? std::string_view() : text.substr(nl + 1);
    std::size_t sp = line.find(' ');
    if (sp == std::string_view::npos)
      continue;
    std::string_view name = line.substr(0, sp);
    std::string_view number = line.substr(
        line.find_first_not_of(' ', sp) == std::string_view::npos ? line.size() : line.find_first_not_of(' ', sp));
    std::uint64_t v = 0;
    auto [end, ec] = std::from_chars(number.data(), number.data() + number.size(), v);
    if (ec != std::errc() || end != number.data() + number.size())
      continue; // a garbled line (a writer killed mid-update) counts from zero again
    for (std::size_t i = 0; i < c.values.size(); ++i)
      if (cache_counter_name(static_cast<CacheCounter>(i)) == name)
        c.values[i] = v;
  }
  return c;
}

/// A stats file open and locked for as long as the object lives.
class LockedStats {
public:
  LockedStats(const std::string &path, bool exclusive) {
    fd_ = ::open(path.c_str(), (exclusive ? O_RDWR | O_CREAT : O_RDONLY) | O_CLOEXEC, 0644);
    if (fd_ < 0)
      return;
    while (::flock(fd_, exclusive ? LOCK_EX : LOCK_SH) != 0 && errno == EINTR) {
    }
    std::string text;
    int err = 0;
    if (read_fd(fd_, text, 1 << 16, err))
      counters = parse_stats(text);
  }
  ~LockedStats() {
    if (fd_ >= 0)
      ::close(fd_); // releases the lock
  }
  LockedStats(const LockedStats &) = delete;
  LockedStats &operator=(const LockedStats &) = delete;
  bool ok() const { return fd_ >= 0; }
  void write() {
    std::string text = stats_text(counters);
    if (::pwrite(fd_, text.data(), text.size(), 0) == static_cast<ssize_t>(text.size())) [[maybe_unused]]
      int rc = ::ftruncate(fd_, static_cast<off_t>(text.size()));
  }
  CacheCounters counters;

private:
  int fd_ = -1;
};

struct ScannedEntry {
  std::string path;
  std::uint64_t bytes = 0;
  std::int64_t mtime_ns = 0;
};

/// Calls `visit(path, name, stat)` for every file in the shard's sub-folders.
template <class Visit> void for_each_shard_file(const std::string &shard_dir, Visit visit) {
  DIR *top = ::opendir(shard_dir.c_str());
  if (!top)
    return;
  std::vector<std::string> subdirs;
  while (dirent *d = ::readdir(top)) {
    std::string_view name = d->d_name;
    if (name.size() == 1 && std::isxdigit(static_cast<unsigned char>(name[0])))
      subdirs.emplace_back(name);
  }
  ::closedir(top);
  std::sort(subdirs.begin(), subdirs.end());
  for (const std::string &sub : subdirs) {
    std::string sub_dir = shard_dir + "/" + sub;
    DIR *dir = ::opendir(sub_dir.c_str());
    if (!dir)
      continue;
    std::vector<std::string> names;
    while (dirent *d = ::readdir(dir))
      if (d->d_name[0] != '.')
        names.emplace_back(d->d_name);
    ::closedir(dir);
    std::sort(names.begin(), names.end());
    for (const std::string &name : names) {
      std::string path = sub_dir + "/" + name;
      struct stat st;
      if (::lstat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode))
        visit(path, name, st);
    }
  }
}

std::int64_t mtime_ns(const struct stat &st) {
  return static_cast<std::int64_t>(st.st_mtim.tv_sec) * 1'000'000'000 + st.st_mtim.tv_nsec;
}

} // namespace

std::string_view cache_counter_name(CacheCounter c) {
  switch (c) {
  case CacheCounter::Hits:
    return "hits";
  case CacheCounter::Misses:
    return "misses";
  case CacheCounter::Stores:
    return "stores";
  case CacheCounter::Corrupt:
    return "corrupt";
  case CacheCounter::ReadErrors:
    return "read_errors";
  case CacheCounter::WriteErrors:
    return "write_errors";
  case CacheCounter::Evictions:
    return "evictions";
  case CacheCounter::Cleanups:
    return "cleanups";
  case CacheCounter::RemoteHits:
    return "remote_hits";
  case CacheCounter::RemoteMisses:
    return "remote_misses";
  case CacheCounter::RemoteErrors:
    return "remote_errors";
  case CacheCounter::RemoteStores:
    return "remote_stores";
  case CacheCounter::Files:
    return "files";
  case CacheCounter::Bytes:
    return "bytes";
  case CacheCounter::Count_:
    break;
  }
  return "?";
}

CacheCounters &CacheCounters::operator+=(const CacheCounters &o) {
  for (std::size_t i = 0; i < values.size(); ++i)
    values[i] += o.values[i];
  return *this;
}

bool CacheCounters::any() const {
  return std::any_of(values.begin(), values.end(), [](std::uint64_t v) { return v != 0; });
}

LocalStore::LocalStore(std::string dir, std::uint64_t max_size) : dir_(std::move(dir)), max_size_(max_size) {
  while (dir_.size() > 1 && dir_.back() == '/')
    dir_.pop_back();
}

LocalStore::~LocalStore() { flush_counters(); }

std::string LocalStore::entry_path(const std::string &key) const {
  return fmt::format("{}/{}/{}/{}", dir_, key.substr(0, 1), key.substr(1, 1), key);
}

bool LocalStore::ensure_layout(const std::string &key, std::string &why) {
  if (!make_dirs(fmt::format("{}/{}/{}", dir_, key.substr(0, 1), key.substr(1, 1)), why))
    return false;
  if (!tagged_) {
    std::string tag = dir_ + "/CACHEDIR.TAG";
    if (::access(tag.c_str(), F_OK) != 0) {
      // Written like an entry, so that no reader sees half a tag.
      std::string temp = tag + unique_suffix();
      int fd = ::open(temp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
      int err = 0;
      if (fd >= 0) {
        bool ok = write_all(fd, kCacheDirTag, err);
        ::close(fd);
        if (!ok || ::rename(temp.c_str(), tag.c_str()) != 0)
          ::unlink(temp.c_str());
      }
    }
    tagged_ = true;
  }
  return true;
}

LookupOutcome LocalStore::lookup(const std::string &key, std::optional<CacheEntry> &entry, std::string &why) {
  unsigned shard = shard_of(key);
  CacheCounters &pending = pending_[shard];
  std::string path = entry_path(key);
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    ++pending[CacheCounter::Misses];
    if (errno == ENOENT || errno == ENOTDIR)
      return LookupOutcome::Miss;
    why = fmt::format("cannot open {}: {}", path, errno_text(errno));
    ++pending[CacheCounter::ReadErrors];
    return LookupOutcome::ReadError;
  }
  struct stat st;
  OwnedBytes bytes;
  int err = 0;
  bool ok = ::fstat(fd, &st) == 0 || (err = errno, false);
  if (ok) {
    // Exactly the size the file has: a writer never changes an entry in place (it renames a
    // new file over it), so this open file keeps its bytes. Read into the arena, not zeroed.
    std::size_t size = std::min<std::size_t>(static_cast<std::size_t>(st.st_size), std::size_t{1} << 31);
    std::shared_ptr<const void> owner;
    char *buffer = read_arena_.allocate(size, owner);
    std::size_t have = 0;
    while (ok && have < size) {
      ssize_t n = ::read(fd, buffer + have, size - have);
      if (n < 0 && errno == EINTR)
        continue;
      if (n <= 0) {
        ok = n == 0;
        err = errno;
        break;
      }
      have += static_cast<std::size_t>(n);
    }
    bytes = OwnedBytes(std::move(owner), std::string_view(buffer, have));
  }
  if (!ok) {
    ::close(fd);
    ++pending[CacheCounter::Misses];
    ++pending[CacheCounter::ReadErrors];
    why = fmt::format("cannot read {}: {}", path, errno_text(err));
    return LookupOutcome::ReadError;
  }
  EntryDefect defect = EntryDefect::None;
  std::string reason;
  entry = parse_entry_buffer(bytes, key, defect, reason);
  if (!entry) {
    ::close(fd);
    ++pending[CacheCounter::Misses];
    ++pending[CacheCounter::Corrupt];
    why = fmt::format("{}: {}", path, reason);
    return LookupOutcome::Corrupt;
  }
  // Least recently used goes first when the shard is cleaned: a hit makes the entry recent.
  ::futimens(fd, nullptr);
  ::close(fd);
  ++pending[CacheCounter::Hits];
  return LookupOutcome::Hit;
}

StoreOutcome LocalStore::store(const std::string &key, std::string_view bytes, std::string &why) {
  unsigned shard = shard_of(key);
  if (bytes.size() > shard_limit()) {
    why = fmt::format("an entry of {} is larger than a cache shard's share of the limit ({})",
                      format_cache_size(bytes.size()), format_cache_size(shard_limit()));
    return StoreOutcome::TooLarge;
  }
  auto failed = [&](std::string text) {
    why = std::move(text);
    ++pending_[shard][CacheCounter::WriteErrors];
    return StoreOutcome::Failed;
  };
  if (!ensure_layout(key, why))
    return failed(why);
  std::string path = entry_path(key);
  std::string temp = path + unique_suffix();
  int fd = ::open(temp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
  if (fd < 0)
    return failed(fmt::format("cannot create {}: {}", temp, errno_text(errno)));
  int err = 0;
  bool ok;
  if (env_set("NKICC_CACHE_TEST_FAIL_WRITE")) {
    ok = false;
    err = ENOSPC;
  } else if (env_set("NKICC_CACHE_TEST_KILL_MID_WRITE")) {
    ok = write_all(fd, bytes.substr(0, bytes.size() / 2), err);
    std::raise(SIGKILL);
  } else {
    ok = write_all(fd, bytes, err);
  }
  if (ok && ::fsync(fd) != 0)
    ok = false, err = errno;
  if (::close(fd) != 0 && ok)
    ok = false, err = errno;
  struct stat old;
  bool replaced = ok && ::stat(path.c_str(), &old) == 0;
  if (ok && ::rename(temp.c_str(), path.c_str()) != 0)
    ok = false, err = errno;
  if (!ok) {
    ::unlink(temp.c_str());
    return failed(fmt::format("cannot write {}: {}", path, errno_text(err)));
  }
  CacheCounters delta;
  delta[CacheCounter::Stores] = 1;
  delta[CacheCounter::Files] = 1;
  delta[CacheCounter::Bytes] = bytes.size();
  update_shard(shard, delta, replaced ? static_cast<std::uint64_t>(old.st_size) : 0, replaced);
  return StoreOutcome::Stored;
}

void LocalStore::count(const std::string &key, CacheCounter c, std::uint64_t n) { pending_[shard_of(key)][c] += n; }

void LocalStore::update_shard(unsigned shard, CacheCounters delta, std::uint64_t replaced_bytes, bool replaced) {
  delta += pending_[shard];
  std::string shard_dir = fmt::format("{}/{}", dir_, hex_digit(shard));
  std::string why;
  if (!make_dirs(shard_dir, why))
    return; // counts are figures, not data: losing them fails nothing
  LockedStats stats(shard_dir + "/stats", true);
  if (!stats.ok())
    return;
  pending_[shard] = {};
  stats.counters += delta;
  if (replaced) {
    CacheCounters &c = stats.counters;
    c[CacheCounter::Files] -= std::min<std::uint64_t>(1, c[CacheCounter::Files]);
    c[CacheCounter::Bytes] -= std::min(replaced_bytes, c[CacheCounter::Bytes]);
  }
  if (stats.counters[CacheCounter::Bytes] > shard_limit())
    clean_shard(shard, stats.counters, true);
  stats.write();
}

void LocalStore::flush_counters() {
  for (unsigned shard = 0; shard < kCacheShards; ++shard) {
    if (!pending_[shard].any())
      continue;
    std::string shard_dir = fmt::format("{}/{}", dir_, hex_digit(shard));
    // A run that only missed in a folder that does not exist yet leaves no trace of itself.
    struct stat st;
    if (::stat(dir_.c_str(), &st) != 0) {
      pending_[shard] = {};
      continue;
    }
    update_shard(shard, {}, 0, false);
  }
}

void LocalStore::clean_shard(unsigned shard, CacheCounters &stats, bool evict) {
  std::string shard_dir = fmt::format("{}/{}", dir_, hex_digit(shard));
  std::vector<ScannedEntry> entries;
  std::uint64_t total = 0;
  std::int64_t now = static_cast<std::int64_t>(::time(nullptr));
  for_each_shard_file(shard_dir, [&](const std::string &path, const std::string &name, const struct stat &st) {
    if (name.find(kTempMarker) != std::string::npos) {
      if (now - static_cast<std::int64_t>(st.st_mtim.tv_sec) > kStaleTempSeconds)
        ::unlink(path.c_str());
      return;
    }
    if (!is_hex_key(name) || shard_of(name) != shard)
      return; // a stray file: not ours to count or remove
    entries.push_back({path, static_cast<std::uint64_t>(st.st_size), mtime_ns(st)});
    total += static_cast<std::uint64_t>(st.st_size);
  });
  std::uint64_t files = entries.size();
  if (evict && total > shard_limit()) {
    std::sort(entries.begin(), entries.end(), [](const ScannedEntry &a, const ScannedEntry &b) {
      return a.mtime_ns != b.mtime_ns ? a.mtime_ns < b.mtime_ns : a.path < b.path;
    });
    std::uint64_t target = shard_limit() / 10 * 9;
    for (const ScannedEntry &e : entries) {
      if (total <= target)
        break;
      // Another process may have evicted it already: gone is as good as removed.
      if (::unlink(e.path.c_str()) == 0 || errno == ENOENT) {
        total -= e.bytes;
        --files;
        ++stats[CacheCounter::Evictions];
      }
    }
    ++stats[CacheCounter::Cleanups];
  }
  stats[CacheCounter::Files] = files;
  stats[CacheCounter::Bytes] = total;
}

void LocalStore::note_kernel(const std::string &kernel, const std::string &key) {
  std::string hash = sha256_hex(kernel);
  std::string dir = fmt::format("{}/names/{}", dir_, hash.substr(0, 2));
  std::string why;
  if (!make_dirs(dir, why))
    return;
  std::string path = dir + "/" + hash;
  int fd = ::open(path.c_str(), O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
  if (fd < 0)
    return;
  int err = 0;
  std::string line = key + "\n";
  // One O_APPEND write of 65 bytes: concurrent writers do not interleave within a line.
  write_all(fd, line, err);
  struct stat st;
  bool large = ::fstat(fd, &st) == 0 && static_cast<std::size_t>(st.st_size) > kNamesIndexMaxBytes;
  ::close(fd);
  if (!large)
    return;
  std::vector<std::string> keep;
  for (const auto &[k, components] : kernel_entries(kernel, kNamesIndexKeep))
    keep.push_back(k);
  std::string text;
  for (auto it = keep.rbegin(); it != keep.rend(); ++it)
    text += *it + "\n";
  std::string temp = path + unique_suffix();
  fd = ::open(temp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
  if (fd < 0)
    return;
  bool ok = write_all(fd, text, err);
  ::close(fd);
  if (!ok || ::rename(temp.c_str(), path.c_str()) != 0)
    ::unlink(temp.c_str());
}

std::vector<std::pair<std::string, std::vector<std::pair<std::string, std::string>>>>
LocalStore::kernel_entries(const std::string &kernel, std::size_t limit) {
  std::vector<std::pair<std::string, std::vector<std::pair<std::string, std::string>>>> out;
  std::string hash = sha256_hex(kernel);
  std::string path = fmt::format("{}/names/{}/{}", dir_, hash.substr(0, 2), hash);
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0)
    return out;
  std::string text;
  int err = 0;
  read_fd(fd, text, kNamesIndexMaxBytes * 4, err);
  ::close(fd);
  std::vector<std::string_view> lines;
  for (std::size_t pos = 0; pos < text.size();) {
    std::size_t nl = text.find('\n', pos);
    if (nl == std::string::npos)
      break;
    lines.push_back(std::string_view(text).substr(pos, nl - pos));
    pos = nl + 1;
  }
  std::vector<std::string> seen;
  for (auto it = lines.rbegin(); it != lines.rend() && out.size() < limit; ++it) {
    std::string key(*it);
    if (!is_hex_key(key) || std::find(seen.begin(), seen.end(), key) != seen.end())
      continue;
    seen.push_back(key);
    int efd = ::open(entry_path(key).c_str(), O_RDONLY | O_CLOEXEC);
    if (efd < 0)
      continue; // evicted since: the index is only a hint
    std::string head;
    read_fd(efd, head, 1 << 16, err);
    ::close(efd);
    std::string header_key;
    std::vector<std::pair<std::string, std::string>> components;
    if (parse_entry_header(head, header_key, components) && header_key == key)
      out.emplace_back(key, std::move(components));
  }
  return out;
}

CacheCounters LocalStore::totals() const {
  CacheCounters total;
  for (unsigned shard = 0; shard < kCacheShards; ++shard) {
    std::string path = fmt::format("{}/{}/stats", dir_, hex_digit(shard));
    if (::access(path.c_str(), F_OK) != 0)
      continue;
    LockedStats stats(path, false);
    if (stats.ok())
      total += stats.counters;
  }
  return total;
}

bool LocalStore::clear(std::string &why) {
  pending_ = {};
  for (unsigned shard = 0; shard < kCacheShards; ++shard) {
    std::string shard_dir = fmt::format("{}/{}", dir_, hex_digit(shard));
    struct stat st;
    if (::stat(shard_dir.c_str(), &st) != 0)
      continue;
    // Under the shard's lock, so that a concurrent store's size update cannot resurrect the
    // removed entries' bytes.
    LockedStats stats(shard_dir + "/stats", true);
    for_each_shard_file(shard_dir, [&](const std::string &path, const std::string &name, const struct stat &) {
      if (name.find(kTempMarker) != std::string::npos || is_hex_key(name))
        if (::unlink(path.c_str()) != 0 && errno != ENOENT && why.empty())
          why = fmt::format("cannot remove {}: {}", path, errno_text(errno));
    });
    stats.counters = {};
    if (stats.ok())
      stats.write();
  }
  std::string names = dir_ + "/names";
  DIR *d = ::opendir(names.c_str());
  if (d) {
    std::vector<std::string> subs;
    while (dirent *e = ::readdir(d))
      if (e->d_name[0] != '.')
        subs.push_back(names + "/" + e->d_name);
    ::closedir(d);
    for (const std::string &sub : subs) {
      DIR *sd = ::opendir(sub.c_str());
      if (!sd)
        continue;
      std::vector<std::string> files;
      while (dirent *e = ::readdir(sd))
        if (e->d_name[0] != '.')
          files.push_back(sub + "/" + e->d_name);
      ::closedir(sd);
      for (const std::string &f : files)
        ::unlink(f.c_str());
      ::rmdir(sub.c_str());
    }
  }
  return why.empty();
}

VerifyReport LocalStore::verify() {
  VerifyReport report;
  for (unsigned shard = 0; shard < kCacheShards; ++shard) {
    std::string shard_dir = fmt::format("{}/{}", dir_, hex_digit(shard));
    for_each_shard_file(shard_dir, [&](const std::string &path, const std::string &name, const struct stat &) {
      if (name.find(kTempMarker) != std::string::npos)
        return;
      if (!is_hex_key(name) || shard_of(name) != shard) {
        ++report.stray;
        return;
      }
      std::string bytes;
      int err = 0;
      int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
      if (fd < 0)
        return; // removed meanwhile
      bool ok = read_fd(fd, bytes, std::size_t{1} << 31, err);
      ::close(fd);
      EntryDefect defect = EntryDefect::None;
      std::string why;
      if (!ok)
        why = errno_text(err);
      else if (parse_entry(bytes, name, defect, why))
        ++report.valid;
      if (!why.empty()) {
        ::unlink(path.c_str());
        report.bad.emplace_back(path, why);
      }
    });
    struct stat st;
    if (::stat(shard_dir.c_str(), &st) == 0) {
      LockedStats stats(shard_dir + "/stats", true);
      if (stats.ok()) {
        clean_shard(shard, stats.counters, false);
        stats.write();
      }
    }
  }
  return report;
}

void LocalStore::trim() {
  flush_counters();
  for (unsigned shard = 0; shard < kCacheShards; ++shard) {
    std::string shard_dir = fmt::format("{}/{}", dir_, hex_digit(shard));
    struct stat st;
    if (::stat(shard_dir.c_str(), &st) != 0)
      continue;
    LockedStats stats(shard_dir + "/stats", true);
    if (!stats.ok())
      continue;
    clean_shard(shard, stats.counters, true);
    stats.write();
  }
}

std::optional<std::uint64_t> parse_cache_size(std::string_view text) {
  std::uint64_t n = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), n);
  if (ec != std::errc() || end == text.data())
    return std::nullopt;
  std::string unit(end, text.data() + text.size());
  for (char &c : unit)
    c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  static const std::pair<const char *, int> units[] = {{"", 0},     {"B", 0},   {"K", 10},   {"KB", 10}, {"KIB", 10},
                                                       {"M", 20},   {"MB", 20}, {"MIB", 20}, {"G", 30},  {"GB", 30},
                                                       {"GIB", 30}, {"T", 40},  {"TB", 40},  {"TIB", 40}};
  for (const auto &[name, shift] : units) {
    if (unit != name)
      continue;
    if (shift && n > (~std::uint64_t{0} >> shift))
      return std::nullopt;
    return n << shift;
  }
  return std::nullopt;
}

std::string format_cache_size(std::uint64_t bytes) {
  if (bytes < 1024)
    return fmt::format("{} B", bytes);
  static const char *units[] = {"KiB", "MiB", "GiB", "TiB"};
  double v = static_cast<double>(bytes) / 1024.0;
  std::size_t u = 0;
  while (v >= 1024.0 && u + 1 < std::size(units)) {
    v /= 1024.0;
    ++u;
  }
  return fmt::format("{:.1f} {}", v, units[u]);
}

} // namespace nkicc
