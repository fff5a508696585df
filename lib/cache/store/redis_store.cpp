// The Redis remote store (hiredis): GET and SET of `nkicc/<path>` in one database, over one
// connection opened at the first request, each request bounded by the timeout.
#include "nkicc/cache/remote_store.h"

#include <fmt/format.h>
#include <hiredis/hiredis.h>

#include <cerrno>
#include <csignal>
#include <ctime>
#include <pthread.h>

namespace nkicc {

namespace {

/// Blocks SIGPIPE in this thread while a request runs: hiredis writes with write(), and a
/// server that died mid-run must be an error, never the end of nkicc. A SIGPIPE raised
/// meanwhile is consumed before the mask is restored.
class NoSigpipe {
public:
  NoSigpipe() {
    sigset_t pipe;
    sigemptyset(&pipe);
    sigaddset(&pipe, SIGPIPE);
    sigpending(&pending_before_);
    pthread_sigmask(SIG_BLOCK, &pipe, &old_);
  }
  ~NoSigpipe() {
    if (!sigismember(&pending_before_, SIGPIPE)) {
      sigset_t pipe, pending;
      sigemptyset(&pipe);
      sigaddset(&pipe, SIGPIPE);
      sigpending(&pending);
      if (sigismember(&pending, SIGPIPE)) {
        timespec zero{0, 0};
        while (sigtimedwait(&pipe, nullptr, &zero) < 0 && errno == EINTR) {
        }
      }
    }
    pthread_sigmask(SIG_SETMASK, &old_, nullptr);
  }
  NoSigpipe(const NoSigpipe &) = delete;
  NoSigpipe &operator=(const NoSigpipe &) = delete;

private:
  sigset_t old_;
  sigset_t pending_before_;
};

timeval to_timeval(double seconds) {
  timeval tv;
  tv.tv_sec = static_cast<time_t>(seconds);
  tv.tv_usec = static_cast<suseconds_t>((seconds - static_cast<double>(tv.tv_sec)) * 1e6);
  return tv;
}

class RedisStore final : public RemoteStore {
public:
  RedisStore(std::string url, std::string host, int port, int db, const RemoteOptions &options)
      : url_(std::move(url)), host_(std::move(host)), port_(port), db_(db), options_(options) {}
  ~RedisStore() override {
    if (ctx_)
      redisFree(ctx_);
  }

  const std::string &url() const override { return url_; }

  RemoteOutcome get(const std::string &path, std::string &bytes, std::string &why) override {
    NoSigpipe guard;
    if (!connect(why))
      return RemoteOutcome::Error;
    std::string key = "nkicc/" + path;
    auto *reply = static_cast<redisReply *>(redisCommand(ctx_, "GET %b", key.data(), key.size()));
    if (!reply)
      return failed(why);
    RemoteOutcome outcome = RemoteOutcome::Error;
    if (reply->type == REDIS_REPLY_NIL) {
      outcome = RemoteOutcome::Miss;
    } else if (reply->type == REDIS_REPLY_STRING) {
      bytes.assign(reply->str, reply->len);
      outcome = RemoteOutcome::Hit;
    } else {
      why = reply->type == REDIS_REPLY_ERROR ? fmt::format("redis: {}", std::string(reply->str, reply->len))
                                             : "redis: unexpected reply to GET";
    }
    freeReplyObject(reply);
    return outcome;
  }

  bool put(const std::string &path, std::string_view bytes, std::string &why) override {
    NoSigpipe guard;
    if (!connect(why))
      return false;
    std::string key = "nkicc/" + path;
    auto *reply =
        static_cast<redisReply *>(redisCommand(ctx_, "SET %b %b", key.data(), key.size(), bytes.data(), bytes.size()));
    if (!reply) {
      failed(why);
      return false;
    }
    bool ok = reply->type == REDIS_REPLY_STATUS;
    if (!ok)
      why = reply->type == REDIS_REPLY_ERROR ? fmt::format("redis: {}", std::string(reply->str, reply->len))
                                             : "redis: unexpected reply to SET";
    freeReplyObject(reply);
    return ok;
  }

private:
  bool connect(std::string &why) {
    if (ctx_ && !ctx_->err)
      return true;
    if (ctx_) {
      // A connection that failed stays failed: the next request tries a new one.
      redisFree(ctx_);
      ctx_ = nullptr;
    }
    timeval tv = to_timeval(options_.timeout_seconds);
    ctx_ = redisConnectWithTimeout(host_.c_str(), port_, tv);
    if (!ctx_ || ctx_->err) {
      why = ctx_ ? fmt::format("cannot connect to {}:{}: {}", host_, port_, ctx_->errstr)
                 : std::string("cannot allocate a redis connection");
      return false;
    }
    if (redisSetTimeout(ctx_, tv) != REDIS_OK) {
      why = "cannot set the redis timeout";
      return false;
    }
    // The reader keeps its buffer between replies (hiredis frees one past 16 KiB when idle):
    // entries are hundreds of kilobytes, and a new buffer each time is fresh pages each time.
    ctx_->reader->maxbuf = 0;
    if (db_ != 0) {
      auto *reply = static_cast<redisReply *>(redisCommand(ctx_, "SELECT %d", db_));
      bool ok = reply && reply->type == REDIS_REPLY_STATUS;
      if (reply)
        freeReplyObject(reply);
      if (!ok) {
        why = fmt::format("redis: cannot select database {}", db_);
        if (!ctx_->err)
          ctx_->err = REDIS_ERR_OTHER; // reconnect next time
        return false;
      }
    }
    return true;
  }

  RemoteOutcome failed(std::string &why) {
    why = ctx_->err == REDIS_ERR_IO && (errno == EAGAIN || errno == EWOULDBLOCK)
              ? fmt::format("redis {}:{}: no answer within {} s", host_, port_, options_.timeout_seconds)
              : fmt::format("redis {}:{}: {}", host_, port_, ctx_->errstr);
    return RemoteOutcome::Error;
  }

  std::string url_;
  std::string host_;
  int port_;
  int db_;
  RemoteOptions options_;
  redisContext *ctx_ = nullptr;
};

} // namespace

std::unique_ptr<RemoteStore> make_redis_store(const std::string &url, std::string host, int port, int db,
                                              const RemoteOptions &options) {
  return std::make_unique<RedisStore>(url, std::move(host), port, db, options);
}

} // namespace nkicc
