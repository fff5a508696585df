// The HTTP remote store (libcurl): GET and PUT of `<base URL>/<path>`, the Bazel remote cache
// HTTP layout, over one reused connection, each request bounded by the timeout.
//
// libcurl is loaded with dlopen() when the first HTTP request is made, not linked: its
// dependencies (TLS, Kerberos, LDAP, SSH, HTTP/2 libraries) more than double the start-up time
// of every nkicc run, and most runs never speak HTTP. Debian's libcurl4 package provides the
// library; libcurl4-openssl-dev the header these declarations come from.
#include "nkicc/cache/remote_store.h"

#include <curl/curl.h>
#include <dlfcn.h>
#include <fmt/format.h>

#include <algorithm>
#include <mutex>
#include <type_traits>

namespace nkicc {

namespace {

/// The libcurl functions nkicc calls, resolved once.
struct CurlApi {
  CURLcode (*global_init)(long);
  CURL *(*easy_init)();
  void (*easy_reset)(CURL *);
  CURLcode (*easy_setopt)(CURL *, CURLoption, ...);
  CURLcode (*easy_perform)(CURL *);
  CURLcode (*easy_getinfo)(CURL *, CURLINFO, ...);
  void (*easy_cleanup)(CURL *);
  const char *(*easy_strerror)(CURLcode);
  curl_slist *(*slist_append)(curl_slist *, const char *);
  void (*slist_free_all)(curl_slist *);
  std::string error; ///< why libcurl could not be loaded; empty when it was
};

const CurlApi &curl_api() {
  static const CurlApi api = [] {
    CurlApi a{};
    void *lib = ::dlopen("libcurl.so.4", RTLD_NOW | RTLD_LOCAL);
    if (!lib) {
      const char *e = ::dlerror();
      a.error = fmt::format("cannot load libcurl: {}", e ? e : "unknown error");
      return a;
    }
    bool ok = true;
    auto get = [&](auto &fn, const char *name) {
      fn = reinterpret_cast<std::remove_reference_t<decltype(fn)>>(::dlsym(lib, name));
      ok = ok && fn;
    };
    get(a.global_init, "curl_global_init");
    get(a.easy_init, "curl_easy_init");
    get(a.easy_reset, "curl_easy_reset");
    get(a.easy_setopt, "curl_easy_setopt");
    get(a.easy_perform, "curl_easy_perform");
    get(a.easy_getinfo, "curl_easy_getinfo");
    get(a.easy_cleanup, "curl_easy_cleanup");
    get(a.easy_strerror, "curl_easy_strerror");
    get(a.slist_append, "curl_slist_append");
    get(a.slist_free_all, "curl_slist_free_all");
    if (!ok)
      a.error = "cannot load libcurl: a function is missing";
    else
      a.global_init(CURL_GLOBAL_DEFAULT);
    return a;
  }();
  return api;
}

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
    base_ = url_;
    while (!base_.empty() && base_.back() == '/')
      base_.pop_back();
  }
  ~HttpStore() override {
    if (curl_)
      api_->easy_cleanup(curl_);
    if (headers_)
      api_->slist_free_all(headers_);
  }

  const std::string &url() const override { return url_; }

  RemoteOutcome get(const std::string &path, std::string &bytes, std::string &why) override {
    if (!prepare(path, why))
      return RemoteOutcome::Error;
    bytes.clear();
    api_->easy_setopt(curl_, CURLOPT_HTTPGET, 1L);
    api_->easy_setopt(curl_, CURLOPT_WRITEFUNCTION, append_body);
    api_->easy_setopt(curl_, CURLOPT_WRITEDATA, &bytes);
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
    api_->easy_setopt(curl_, CURLOPT_UPLOAD, 1L);
    api_->easy_setopt(curl_, CURLOPT_READFUNCTION, read_body);
    api_->easy_setopt(curl_, CURLOPT_READDATA, &up);
    api_->easy_setopt(curl_, CURLOPT_INFILESIZE_LARGE, static_cast<curl_off_t>(bytes.size()));
    api_->easy_setopt(curl_, CURLOPT_WRITEFUNCTION, append_body);
    api_->easy_setopt(curl_, CURLOPT_WRITEDATA, &ignored);
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
      api_ = &curl_api();
      if (!api_->error.empty()) {
        why = api_->error;
        return false;
      }
      curl_ = api_->easy_init();
      if (!curl_) {
        why = "cannot make a libcurl handle";
        return false;
      }
      headers_ = api_->slist_append(nullptr, "Expect:"); // no 100-continue round trip
    }
    api_->easy_reset(curl_); // keeps the open connection
    auto ms = static_cast<long>(options_.timeout_seconds * 1000);
    std::string target = base_ + "/" + path;
    api_->easy_setopt(curl_, CURLOPT_URL, target.c_str());
    api_->easy_setopt(curl_, CURLOPT_NOSIGNAL, 1L); // no SIGALRM for timeouts, no SIGPIPE
    api_->easy_setopt(curl_, CURLOPT_CONNECTTIMEOUT_MS, ms);
    api_->easy_setopt(curl_, CURLOPT_TIMEOUT_MS, ms);
    api_->easy_setopt(curl_, CURLOPT_HTTPHEADER, headers_);
    api_->easy_setopt(curl_, CURLOPT_ERRORBUFFER, error_);
    error_[0] = '\0';
    return true;
  }

  bool perform(long &status, std::string &why) {
    CURLcode rc = api_->easy_perform(curl_);
    if (rc != CURLE_OK) {
      why = fmt::format("{}: {}", base_, error_[0] ? error_ : api_->easy_strerror(rc));
      return false;
    }
    api_->easy_getinfo(curl_, CURLINFO_RESPONSE_CODE, &status);
    return true;
  }

  std::string url_;
  std::string base_;
  RemoteOptions options_;
  const CurlApi *api_ = nullptr;
  CURL *curl_ = nullptr;
  curl_slist *headers_ = nullptr;
  char error_[CURL_ERROR_SIZE] = {};
};

} // namespace

std::unique_ptr<RemoteStore> make_http_store(const std::string &url, const RemoteOptions &options) {
  return std::make_unique<HttpStore>(url, options);
}

} // namespace nkicc
