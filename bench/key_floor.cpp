// The floor of scripts/bench_key.sh: what `nkicc key` cannot avoid doing, done as cheaply as
// the libraries nkicc uses allow. It reads the description whole, parses it with RapidJSON's SAX
// reader (no DOM), and for each item of `calls` hashes its bytes with one reused SHA-256 context
// (OpenSSL, as nkicc) and writes a record of about the size of nkicc's (the call's bytes and the
// digest) through one reused 1 MiB buffer. No checks, no key rendering: a program that did less
// would not be computing keys. Usage: nkicc_bench_key_floor DESCRIPTION > OUT
#define OPENSSL_SUPPRESS_DEPRECATED // SHA256_*: one context reused, as nkicc's sha256_hex does
#include "nkicc/support/file_io.h"

#include <openssl/sha.h>
#include <rapidjson/memorystream.h>
#include <rapidjson/reader.h>

#include <cstdio>
#include <string>

namespace {

/// Finds the items of the root object's `calls` and hands each one's byte range over.
class CallSplitter : public rapidjson::BaseReaderHandler<rapidjson::UTF8<>, CallSplitter> {
public:
  CallSplitter(const rapidjson::MemoryStream &stream, std::string_view text) : stream_(stream), text_(text) {}

  bool Default() { return item_end(); }
  bool RawNumber(const char *, rapidjson::SizeType, bool) { return item_end(); }
  bool String(const char *, rapidjson::SizeType, bool) { return item_end(); }
  bool Key(const char *s, rapidjson::SizeType n, bool) {
    if (depth_ == 1)
      in_calls_ = std::string_view(s, n) == "calls";
    return true;
  }
  bool StartObject() { return start(); }
  bool StartArray() { return start(); }
  bool EndObject(rapidjson::SizeType) { return end(); }
  bool EndArray(rapidjson::SizeType) { return end(); }

  std::size_t calls() const { return calls_; }

private:
  bool start() {
    if (depth_ == 2 && in_calls_)
      begin_ = stream_.Tell();
    ++depth_;
    return true;
  }
  bool end() {
    --depth_;
    return item_end(1);
  }
  bool item_end(std::size_t after = 0) {
    if (depth_ == 2 && in_calls_)
      emit(text_.substr(begin_, stream_.Tell() + after - begin_));
    return true;
  }

  void emit(std::string_view call) {
    unsigned char digest[SHA256_DIGEST_LENGTH];
    SHA256_Init(&ctx_);
    SHA256_Update(&ctx_, call.data(), call.size());
    SHA256_Final(digest, &ctx_);
    static const char kHex[] = "0123456789abcdef";
    char hex[2 * SHA256_DIGEST_LENGTH];
    for (int i = 0; i < SHA256_DIGEST_LENGTH; ++i) {
      hex[2 * i] = kHex[digest[i] >> 4];
      hex[2 * i + 1] = kHex[digest[i] & 15];
    }
    out_ += "call ";
    out_ += std::to_string(calls_++);
    out_ += ":\n  components: ";
    out_.append(call);
    out_ += "\n  key: ";
    out_.append(hex, sizeof hex);
    out_ += "\n\n";
    if (out_.size() >= (1u << 20)) {
      std::fwrite(out_.data(), 1, out_.size(), stdout);
      out_.clear();
    }
  }

public:
  ~CallSplitter() { std::fwrite(out_.data(), 1, out_.size(), stdout); }

private:
  const rapidjson::MemoryStream &stream_;
  std::string_view text_;
  SHA256_CTX ctx_{};
  std::string out_;
  std::size_t depth_ = 0, begin_ = 0, calls_ = 0;
  bool in_calls_ = false;
};

} // namespace

int main(int argc, char **argv) {
  if (argc != 2) {
    std::fputs("usage: nkicc_bench_key_floor DESCRIPTION > OUT\n", stderr);
    return 2;
  }
  std::string error;
  auto text = nkicc::read_file(argv[1], error);
  if (!text) {
    std::fprintf(stderr, "nkicc_bench_key_floor: %s: %s\n", argv[1], error.c_str());
    return 1;
  }
  rapidjson::MemoryStream stream(text->data(), text->size());
  rapidjson::Reader reader;
  std::size_t calls = 0;
  {
    CallSplitter splitter(stream, *text);
    if (!reader.Parse<rapidjson::kParseIterativeFlag | rapidjson::kParseNumbersAsStringsFlag>(stream, splitter)) {
      std::fprintf(stderr, "nkicc_bench_key_floor: %s: not JSON\n", argv[1]);
      return 1;
    }
    calls = splitter.calls();
  }
  std::fprintf(stderr, "nkicc_bench_key_floor: %zu calls\n", calls);
  return 0;
}
