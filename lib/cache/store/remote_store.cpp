// The remote store's URL parsing and action records; the servers' clients are beside this
// file (redis_store.cpp, http_store.cpp).
#include "nkicc/cache/remote_store.h"

#include "nkicc/support/sha256.h"

#include <fmt/format.h>

#include <charconv>

namespace nkicc {

namespace {

constexpr std::string_view kRecordMagic = "nkicc-ac 1 ";

bool parse_port(std::string_view text, int &port) {
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), port);
  return ec == std::errc() && end == text.data() + text.size() && port > 0 && port < 65536;
}

} // namespace

std::unique_ptr<RemoteStore> make_remote_store(const std::string &url, const RemoteOptions &options,
                                               std::string &why) {
  std::string_view u = url;
  if (u.starts_with("redis://")) {
    std::string_view rest = u.substr(8);
    std::size_t slash = rest.find('/');
    std::string_view authority = rest.substr(0, slash);
    int db = 0;
    if (slash != std::string_view::npos && slash + 1 < rest.size()) {
      std::string_view n = rest.substr(slash + 1);
      auto [end, ec] = std::from_chars(n.data(), n.data() + n.size(), db);
      if (ec != std::errc() || end != n.data() + n.size() || db < 0) {
        why = fmt::format("'{}' names database '{}', which is not a number", url, n);
        return nullptr;
      }
    }
    std::size_t colon = authority.rfind(':');
    std::string host(authority.substr(0, colon));
    int port = 6379;
    if (colon != std::string_view::npos && !parse_port(authority.substr(colon + 1), port)) {
      why = fmt::format("'{}' has no valid port", url);
      return nullptr;
    }
    if (host.empty()) {
      why = fmt::format("'{}' names no host", url);
      return nullptr;
    }
    return make_redis_store(url, std::move(host), port, db, options);
  }
  if (u.starts_with("http://") || u.starts_with("https://")) {
    std::string_view rest = u.substr(u.find("//") + 2);
    if (rest.empty() || rest[0] == '/' || rest[0] == ':') {
      why = fmt::format("'{}' names no host", url);
      return nullptr;
    }
    return make_http_store(url, options);
  }
  why = fmt::format("'{}' is not a remote cache URL: use redis://HOST:PORT/N or http://HOST:PORT/PREFIX", url);
  return nullptr;
}

std::string remote_action_record(std::string_view blob) {
  return fmt::format("{}{} {}\n", kRecordMagic, sha256_hex(blob), blob.size());
}

bool parse_remote_action_record(std::string_view record, std::string &sha256, std::uint64_t &size) {
  if (!record.starts_with(kRecordMagic) || !record.ends_with('\n'))
    return false;
  std::string_view rest = record.substr(kRecordMagic.size(), record.size() - kRecordMagic.size() - 1);
  std::size_t sp = rest.find(' ');
  if (sp != 64)
    return false;
  sha256 = std::string(rest.substr(0, 64));
  for (char c : sha256)
    if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f')))
      return false;
  std::string_view n = rest.substr(65);
  auto [end, ec] = std::from_chars(n.data(), n.data() + n.size(), size);
  return ec == std::errc() && end == n.data() + n.size() && !n.empty();
}

} // namespace nkicc
