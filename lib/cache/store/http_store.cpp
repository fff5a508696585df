// The HTTP remote store (libcurl): GET and PUT of `<base URL>/<path>`, the Bazel remote cache
// HTTP layout, over one reused connection, each request bounded by the timeout.
#include "nkicc/cache/remote_store.h"

#include <curl/curl.h>
#include <fmt/format.h>

#include <algorithm>
#include <mutex>

namespace nkicc {

namespace {

std::size_t append_body(char *data, std::size_t size, std::size_t count, void *out) {
  static_cast<std::string *>(out)->append(data, size * count);
  return size * count;
}

struct Upload {
  std::string_view bytes;
};

std::size_t read_body(char *buffer, std::size_t size, std::size_t count, void *in) {
  auto &up = *static_cast<Upload *>(in);
  std::size_t n = std::min(size * count, up.bytes.size());
  std::copy_n(up.bytes.data(), n, buffer);
  up.bytes.remove_prefix(n);
  return n;
}

class HttpStore final : public RemoteStore {
public:
  HttpStore(std::string url, const RemoteOptions &options) : url_(std::move(url)), options_(options) {
    static std::once_flag init;
    std::call_once(init, [] { curl_global_init(CURL_GLOBAL_DEFAULT); });
    base_ = url_;
    while (!base_.empty() && base_.back() == '/')
      base_.pop_back();
    headers_ = curl_slist_append(nullptr, "Expect:"); // no 100-continue round trip
  }
  ~HttpStore() override {
    if (curl_)
      curl_easy_cleanup(curl_);
    curl_slist_free_all(headers_);
  }

  const std::string &url() const override { return url_; }

  RemoteOutcome get(const std::string &path, std::string &bytes, std::string &why) override {
    if (!prepare(path, why))
      return RemoteOutcome::Error;
    bytes.clear();
    curl_easy_setopt(curl_, CURLOPT_HTTPGET, 1L);
    curl_easy_setopt(curl_, CURLOPT_WRITEFUNCTION, append_body);
    curl_easy_setopt(curl_, CURLOPT_WRITEDATA, &bytes);
    long status = 0;
    if (!perform(status, why))
      return RemoteOutcome::Error;
    if (status == 200)
      return RemoteOutcome::Hit;
    if (status == 404)
      return RemoteOutcome::Miss;
    why = fmt::format("GET {}/{}: HTTP status {}", base_, path, status);
    return RemoteOutcome::Error;
  }

  bool put(const std::string &path, std::string_view bytes, std::string &why) override {
    if (!prepare(path, why))
      return false;
    Upload up{bytes};
    std::string ignored;
    curl_easy_setopt(curl_, CURLOPT_UPLOAD, 1L);
    curl_easy_setopt(curl_, CURLOPT_READFUNCTION, read_body);
    curl_easy_setopt(curl_, CURLOPT_READDATA, &up);
    curl_easy_setopt(curl_, CURLOPT_INFILESIZE_LARGE, static_cast<curl_off_t>(bytes.size()));
    curl_easy_setopt(curl_, CURLOPT_WRITEFUNCTION, append_body);
    curl_easy_setopt(curl_, CURLOPT_WRITEDATA, &ignored);
    long status = 0;
    if (!perform(status, why))
      return false;
    if (status == 200 || status == 201 || status == 204)
      return true;
    why = fmt::format("PUT {}/{}: HTTP status {}", base_, path, status);
    return false;
  }

private:
  bool prepare(const std::string &path, std::string &why) {
    if (!curl_) {
      curl_ = curl_easy_init();
      if (!curl_) {
        why = "cannot make a libcurl handle";
        return false;
      }
    }
    curl_easy_reset(curl_); // keeps the open connection
    auto ms = static_cast<long>(options_.timeout_seconds * 1000);
    std::string target = base_ + "/" + path;
    curl_easy_setopt(curl_, CURLOPT_URL, target.c_str());
    curl_easy_setopt(curl_, CURLOPT_NOSIGNAL, 1L); // no SIGALRM for timeouts, no SIGPIPE
    curl_easy_setopt(curl_, CURLOPT_CONNECTTIMEOUT_MS, ms);
    curl_easy_setopt(curl_, CURLOPT_TIMEOUT_MS, ms);
    curl_easy_setopt(curl_, CURLOPT_HTTPHEADER, headers_);
    curl_easy_setopt(curl_, CURLOPT_ERRORBUFFER, error_);
    error_[0] = '\0';
    return true;
  }

  bool perform(long &status, std::string &why) {
    CURLcode rc = curl_easy_perform(curl_);
    if (rc != CURLE_OK) {
      why = fmt::format("{}: {}", base_, error_[0] ? error_ : curl_easy_strerror(rc));
      return false;
    }
    curl_easy_getinfo(curl_, CURLINFO_RESPONSE_CODE, &status);
    return true;
  }

  std::string url_;
  std::string base_;
  RemoteOptions options_;
  CURL *curl_ = nullptr;
  curl_slist *headers_ = nullptr;
  char error_[CURL_ERROR_SIZE] = {};
};

} // namespace

std::unique_ptr<RemoteStore> make_http_store(const std::string &url, const RemoteOptions &options) {
  return std::make_unique<HttpStore>(url, options);
}

} // namespace nkicc
