// A shared cache on an existing server (`--remote-cache=URL`), for teams that outgrow one
// machine: Redis (`redis://HOST:PORT/N`, hiredis) or an HTTP server speaking the Bazel remote
// cache layout (`http://HOST:PORT/PREFIX`, libcurl; nginx with WebDAV PUT serves it).
//
// Both hold two namespaces, as the Bazel protocol does:
//
//   ac/<key>      the action record of a persistent key: `nkicc-ac 1 <sha256> <size>\n`
//   cas/<sha256>  the entry file's bytes (nkicc/cache/cache_entry.h), named by their SHA-256
//
// HTTP: GET/PUT `<PREFIX>/ac/<key>` and `<PREFIX>/cas/<sha256>`; 404 is a miss. Redis: GET/SET
// of the keys `nkicc/ac/<key>` and `nkicc/cas/<sha256>` in database N. (Bazel's ac/ holds an
// ActionResult protobuf; nkicc's holds its own record: the layout is shared, not the message.)
// A download is used only when its bytes have the SHA-256 and size its record names and parse
// as an entry of the key asked for (Bazel served corrupt blobs until it checked). An upload
// writes the blob before the record that points at it, so a record never names a missing blob.
#pragma once

#include <memory>
#include <string>
#include <string_view>

namespace nkicc {

enum class RemoteOutcome { Hit, Miss, Error };

/// One server's blob namespace: raw GET and PUT of `ac/...` and `cas/...` paths.
class RemoteStore {
public:
  virtual ~RemoteStore() = default;
  /// The URL as given, for messages.
  virtual const std::string &url() const = 0;
  /// GET of `path` (`ac/<key>` or `cas/<sha256>`); Error with `why` on any failure.
  virtual RemoteOutcome get(const std::string &path, std::string &bytes, std::string &why) = 0;
  /// PUT of `path`; false with `why` on any failure.
  virtual bool put(const std::string &path, std::string_view bytes, std::string &why) = 0;
};

struct RemoteOptions {
  /// Bound on connecting and on each request, in seconds (a silent server costs this much).
  double timeout_seconds = 2.0;
};

/// Parses the URL and makes its store (connections are opened at the first request).
/// Null with `why` when the URL is not `redis://HOST:PORT[/N]` or `http://HOST[:PORT][/PREFIX]`.
std::unique_ptr<RemoteStore> make_remote_store(const std::string &url, const RemoteOptions &options, std::string &why);

std::unique_ptr<RemoteStore> make_redis_store(const std::string &url, std::string host, int port, int db,
                                              const RemoteOptions &options);
std::unique_ptr<RemoteStore> make_http_store(const std::string &url, const RemoteOptions &options);

/// The action record of an entry blob, and its reading.
std::string remote_action_record(std::string_view blob);
bool parse_remote_action_record(std::string_view record, std::string &sha256, std::uint64_t &size);

} // namespace nkicc
