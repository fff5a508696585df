#include "nkicc/support/file_io.h"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

namespace nkicc {

namespace {

std::string errno_text(int err) {
  std::string s = std::strerror(err);
  if (!s.empty())
    s[0] = static_cast<char>(std::tolower(static_cast<unsigned char>(s[0])));
  return s;
}

bool read_fd(int fd, std::string &out, std::string &error) {
  char buf[1 << 16];
  for (;;) {
    ssize_t n = ::read(fd, buf, sizeof buf);
    if (n < 0) {
      if (errno == EINTR)
        continue;
      error = errno_text(errno);
      return false;
    }
    if (n == 0)
      return true;
    if (out.size() + static_cast<std::size_t>(n) > kMaxInputBytes) {
      error = "file is larger than 2 GiB";
      return false;
    }
    out.append(buf, static_cast<std::size_t>(n));
  }
}

bool write_all(int fd, std::string_view data, std::string &error) {
  while (!data.empty()) {
    ssize_t n = ::write(fd, data.data(), data.size());
    if (n < 0) {
      if (errno == EINTR)
        continue;
      error = errno_text(errno);
      return false;
    }
    data.remove_prefix(static_cast<std::size_t>(n));
  }
  return true;
}

} // namespace

std::optional<std::string> read_file(const std::string &path, std::string &error) {
  std::string out;
  if (path == "-") {
    if (!read_fd(STDIN_FILENO, out, error))
      return std::nullopt;
    return out;
  }
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    error = errno_text(errno);
    return std::nullopt;
  }
  struct stat st {};
  if (::fstat(fd, &st) == 0) {
    if (S_ISDIR(st.st_mode)) {
      ::close(fd);
      error = "is a directory";
      return std::nullopt;
    }
    if (S_ISREG(st.st_mode)) {
      if (static_cast<std::size_t>(st.st_size) > kMaxInputBytes) {
        ::close(fd);
        error = "file is larger than 2 GiB";
        return std::nullopt;
      }
      out.reserve(static_cast<std::size_t>(st.st_size));
    }
  }
  bool ok = read_fd(fd, out, error);
  ::close(fd);
  if (!ok)
    return std::nullopt;
  return out;
}

AtomicOutput::AtomicOutput(std::string path) : path_(std::move(path)) {}

AtomicOutput::~AtomicOutput() { discard(); }

bool AtomicOutput::open(std::string &error) {
  if (fd_ >= 0)
    return true;
  if (path_ == "-") {
    fd_ = STDOUT_FILENO;
    return true;
  }
  std::string dir = parent_dir(path_);
  std::string tmpl = join_path(dir, "." + file_stem(path_) + ".nkicc-tmp-XXXXXX");
  int fd = ::mkstemp(tmpl.data());
  if (fd < 0) {
    error = "cannot create a temporary file in '" + (dir.empty() ? std::string(".") : dir) + "': " + errno_text(errno);
    return false;
  }
  // mkstemp creates 0600; an output file gets the usual permissions under the umask.
  mode_t mask = ::umask(0);
  ::umask(mask);
  ::fchmod(fd, 0666 & ~mask);
  fd_ = fd;
  temp_ = std::move(tmpl);
  return true;
}

bool AtomicOutput::write(std::string_view data, std::string &error) {
  if (failed_)
    return false;
  if (!open(error) || !write_all(fd_, data, error)) {
    failed_ = true;
    return false;
  }
  return true;
}

bool AtomicOutput::commit(std::string &error) {
  if (failed_ || !open(error)) // nothing written yet: the output is an empty file
    return false;
  if (path_ == "-") {
    fd_ = -1;
    return true;
  }
  bool ok = ::fsync(fd_) == 0 || (error = errno_text(errno), false);
  if (::close(fd_) != 0 && ok) {
    error = errno_text(errno);
    ok = false;
  }
  fd_ = -1;
  if (ok && ::rename(temp_.c_str(), path_.c_str()) != 0) {
    error = errno_text(errno);
    ok = false;
  }
  if (!ok)
    ::unlink(temp_.c_str());
  temp_.clear();
  return ok;
}

void AtomicOutput::discard() {
  if (fd_ >= 0 && path_ != "-") {
    ::close(fd_);
    ::unlink(temp_.c_str());
  }
  fd_ = -1;
  temp_.clear();
}

bool write_file_atomically(const std::string &path, std::string_view data, std::string &error) {
  AtomicOutput out(path);
  return out.write(data, error) && out.commit(error);
}

TextSink::TextSink(Writer writer, std::size_t threshold) : writer_(std::move(writer)), threshold_(threshold) {}

bool TextSink::flush() {
  if (!writer_ || text.empty())
    return ok_;
  ok_ = ok_ && writer_(text);
  text.clear();
  return ok_;
}

bool same_file(const std::string &a, const std::string &b) {
  if (a == "-" || b == "-" || a.empty() || b.empty())
    return false;
  struct stat sa {
  }, sb{};
  bool has_a = ::stat(a.c_str(), &sa) == 0;
  bool has_b = ::stat(b.c_str(), &sb) == 0;
  if (has_a && has_b)
    return sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
  if (has_a != has_b)
    return false;
  std::error_code ec;
  auto normal = [&](const std::string &p) { return std::filesystem::absolute(p, ec).lexically_normal(); };
  return normal(a) == normal(b);
}

std::string parent_dir(std::string_view path) {
  auto slash = path.rfind('/');
  if (slash == std::string_view::npos)
    return {};
  if (slash == 0)
    return "/";
  return std::string(path.substr(0, slash));
}

std::string file_stem(std::string_view path) {
  auto slash = path.rfind('/');
  std::string_view base = slash == std::string_view::npos ? path : path.substr(slash + 1);
  auto dot = base.rfind('.');
  if (dot != std::string_view::npos && dot > 0)
    base = base.substr(0, dot);
  return std::string(base);
}

std::string join_path(std::string_view dir, std::string_view rel) {
  if (dir.empty() || (!rel.empty() && rel[0] == '/'))
    return std::string(rel);
  std::string out(dir);
  if (out.back() != '/')
    out += '/';
  out += rel;
  return out;
}

} // namespace nkicc
