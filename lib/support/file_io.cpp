#include "nkicc/support/file_io.h"

#include <array>
#include <atomic>
#include <cerrno>
#include <climits>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fcntl.h>
#include <mutex>
#include <pthread.h>
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

namespace {

/// What a node that is not a regular file is, for "cannot read" messages.
std::string_view node_kind(mode_t mode) {
  if (S_ISDIR(mode))
    return "a directory";
  if (S_ISFIFO(mode))
    return "a named pipe";
  if (S_ISCHR(mode))
    return "a character device";
  if (S_ISBLK(mode))
    return "a block device";
  if (S_ISSOCK(mode))
    return "a socket";
  return "not a regular file";
}

/// Opens `path` for reading only if it is a regular file, without ever blocking: a FIFO opened
/// with O_NONBLOCK returns at once, and is then refused like every other non-file.
int open_regular_file(const std::string &path, struct stat &st, std::string &error) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
  if (fd < 0) {
    error = errno_text(errno);
    return -1;
  }
  if (::fstat(fd, &st) != 0) {
    error = errno_text(errno);
    ::close(fd);
    return -1;
  }
  if (!S_ISREG(st.st_mode)) {
    error =
        S_ISDIR(st.st_mode) ? "is a directory" : "is " + std::string(node_kind(st.st_mode)) + ", not a regular file";
    ::close(fd);
    return -1;
  }
  int flags = ::fcntl(fd, F_GETFL);
  if (flags >= 0)
    ::fcntl(fd, F_SETFL, flags & ~O_NONBLOCK);
  return fd;
}

} // namespace

std::optional<std::string> read_file(const std::string &path, std::string &error) {
  std::string out;
  if (path == "-") {
    // A pipe, a regular file or a terminal; a device such as /dev/zero would never end.
    struct stat st {};
    if (::fstat(STDIN_FILENO, &st) == 0 && (S_ISCHR(st.st_mode) || S_ISBLK(st.st_mode)) && !::isatty(STDIN_FILENO)) {
      error = "standard input is " + std::string(node_kind(st.st_mode)) + ", not a file or a pipe";
      return std::nullopt;
    }
    if (::fstat(STDIN_FILENO, &st) == 0 && S_ISREG(st.st_mode) &&
        static_cast<std::uint64_t>(st.st_size) > kMaxInputBytes) {
      error = "file is larger than 2 GiB";
      return std::nullopt;
    }
    if (!read_fd(STDIN_FILENO, out, error))
      return std::nullopt;
    return out;
  }
  struct stat st {};
  int fd = open_regular_file(path, st, error);
  if (fd < 0)
    return std::nullopt;
  // The size is known before a byte is read; a file that grows while it is read is still
  // bounded by read_fd.
  if (static_cast<std::uint64_t>(st.st_size) > kMaxInputBytes) {
    ::close(fd);
    error = "file is larger than 2 GiB";
    return std::nullopt;
  }
  out.reserve(static_cast<std::size_t>(st.st_size));
  bool ok = read_fd(fd, out, error);
  ::close(fd);
  if (!ok)
    return std::nullopt;
  return out;
}

std::optional<std::string> read_file_prefix(const std::string &path, std::size_t max_bytes, std::string &error) {
  struct stat st {};
  int fd = open_regular_file(path, st, error);
  if (fd < 0)
    return std::nullopt;
  std::string out(max_bytes, '\0');
  std::size_t got = 0;
  while (got < max_bytes) {
    ssize_t n = ::read(fd, out.data() + got, max_bytes - got);
    if (n < 0 && errno == EINTR)
      continue;
    if (n < 0) {
      error = errno_text(errno);
      ::close(fd);
      return std::nullopt;
    }
    if (n == 0)
      break;
    got += static_cast<std::size_t>(n);
  }
  ::close(fd);
  out.resize(got);
  return out;
}

// Temporary outputs are removed when SIGINT, SIGTERM or SIGHUP ends the run (as LLVM's
// RemoveFileOnSignal does). The handler may only make async-signal-safe calls, so the paths
// live in a fixed table of atomic pointers: registering fills a free slot with a copy of the
// path, and the handler takes each pointer and unlinks it (it never frees).
namespace {

constexpr std::size_t kTempSlots = 64;
std::array<std::atomic<char *>, kTempSlots> g_temp_files{};
constexpr std::array<int, 3> kCleanupSignals = {SIGINT, SIGTERM, SIGHUP};

extern "C" void remove_temp_files_and_reraise(int sig) {
  for (auto &slot : g_temp_files)
    if (char *path = slot.exchange(nullptr))
      ::unlink(path);
  // Die of the signal itself, so the parent sees what happened: the default action is
  // restored and the signal is delivered again once this handler returns.
  ::signal(sig, SIG_DFL);
  ::raise(sig);
}

void install_cleanup_handlers() {
  static std::once_flag once;
  std::call_once(once, [] {
    for (int sig : kCleanupSignals) {
      struct sigaction old {};
      // A signal the parent chose to ignore (nohup, a shell's background job) stays ignored.
      if (::sigaction(sig, nullptr, &old) == 0 && old.sa_handler == SIG_IGN)
        continue;
      struct sigaction action {};
      action.sa_handler = remove_temp_files_and_reraise;
      sigemptyset(&action.sa_mask);
      ::sigaction(sig, &action, nullptr);
    }
  });
}

/// Holds SIGINT, SIGTERM and SIGHUP back while a temporary file is created and registered: a
/// signal arriving between the two would otherwise end the run with the file unknown to the
/// handler and left behind. A signal held back is delivered when the guard ends, and the handler
/// then finds the file.
class CleanupSignalsHeld {
public:
  CleanupSignalsHeld() {
    sigset_t set;
    sigemptyset(&set);
    for (int sig : kCleanupSignals)
      sigaddset(&set, sig);
    held_ = ::pthread_sigmask(SIG_BLOCK, &set, &old_) == 0;
  }
  ~CleanupSignalsHeld() {
    if (held_)
      ::pthread_sigmask(SIG_SETMASK, &old_, nullptr);
  }
  CleanupSignalsHeld(const CleanupSignalsHeld &) = delete;
  CleanupSignalsHeld &operator=(const CleanupSignalsHeld &) = delete;

private:
  sigset_t old_{};
  bool held_ = false;
};

/// The slot now holding `path`, or -1 when all are taken (the file is then only removed on
/// the normal paths).
int register_temp_file(const std::string &path) {
  for (std::size_t k = 0; k < kTempSlots; ++k) {
    char *expected = nullptr;
    char *copy = ::strdup(path.c_str());
    if (!copy)
      return -1;
    if (g_temp_files[k].compare_exchange_strong(expected, copy))
      return static_cast<int>(k);
    std::free(copy);
  }
  return -1;
}

/// Forgets a temporary file once it was renamed or removed.
void unregister_temp_file(int slot) {
  if (slot < 0)
    return;
  std::free(g_temp_files[static_cast<std::size_t>(slot)].exchange(nullptr));
}

bool under_proc(const std::string &dir) {
  char *real = ::realpath(dir.empty() ? "." : dir.c_str(), nullptr);
  if (!real)
    return false;
  std::string_view r(real);
  bool proc = r == "/proc" || r.starts_with("/proc/");
  std::free(real);
  return proc;
}

/// How an output at a path is written: replaced through a temporary file (a regular file, or
/// none yet), or opened and written in place (a device, a FIFO, a socket, or a file this
/// process has open, reached through /proc: `/dev/stdout`, `/dev/fd/1`).
struct OutputPlan {
  enum Kind { Replace, InPlace, Fail } kind;
  std::string target; ///< Replace: the file to replace (symbolic links followed)
  std::string error;  ///< Fail
};

OutputPlan plan_output(const std::string &path) {
  std::string p = path;
  for (int hop = 0; hop < 40; ++hop) {
    if (under_proc(parent_dir(p)))
      return {OutputPlan::InPlace, p, {}};
    struct stat st {};
    if (::lstat(p.c_str(), &st) != 0) {
      if (errno == ENOENT || errno == ENOTDIR)
        return {OutputPlan::Replace, p, {}}; // a new file; a missing folder is reported by mkstemp
      return {OutputPlan::Fail, p, errno_text(errno)};
    }
    if (S_ISREG(st.st_mode))
      return {OutputPlan::Replace, p, {}};
    if (S_ISDIR(st.st_mode))
      return {OutputPlan::Fail, p, "is a directory"};
    if (!S_ISLNK(st.st_mode))
      return {OutputPlan::InPlace, p, {}};
    char buf[PATH_MAX];
    ssize_t n = ::readlink(p.c_str(), buf, sizeof buf);
    if (n < 0)
      return {OutputPlan::Fail, p, errno_text(errno)};
    std::string link(buf, static_cast<std::size_t>(n));
    if (link.starts_with("/proc/"))
      return {OutputPlan::InPlace, p, {}};
    p = join_path(parent_dir(p), link);
  }
  return {OutputPlan::Fail, path, "too many levels of symbolic links"};
}

} // namespace

AtomicOutput::AtomicOutput(std::string path) : path_(std::move(path)) {}

AtomicOutput::~AtomicOutput() { discard(); }

bool AtomicOutput::open(std::string &error) {
  if (fd_ >= 0)
    return true;
  if (path_ == "-") {
    rewindable(); // the rewind point is where standard output stands before the first write
    fd_ = STDOUT_FILENO;
    return true;
  }
  OutputPlan plan = plan_output(path_);
  if (plan.kind == OutputPlan::Fail) {
    error = plan.error;
    return false;
  }
  if (plan.kind == OutputPlan::InPlace) {
    // Opening a FIFO waits for its reader, as a shell's `>` does.
    int fd;
    do
      fd = ::open(path_.c_str(), O_WRONLY | O_CLOEXEC | O_NOCTTY);
    while (fd < 0 && errno == EINTR);
    if (fd < 0) {
      error = errno_text(errno);
      return false;
    }
    // A regular file reached through /proc (`-o /dev/stdout > file`) starts empty, as after `>`.
    struct stat st {};
    if (::fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && ::ftruncate(fd, 0) != 0) {
      error = errno_text(errno);
      ::close(fd);
      return false;
    }
    fd_ = fd;
    direct_ = true;
    return true;
  }
  target_ = std::move(plan.target);
  std::string dir = parent_dir(target_);
  std::string tmpl = join_path(dir, "." + file_stem(target_) + ".nkicc-tmp-XXXXXX");
  install_cleanup_handlers();
  int fd;
  int mkstemp_errno = 0;
  {
    CleanupSignalsHeld held;
    fd = ::mkstemp(tmpl.data());
    mkstemp_errno = errno;
    if (fd >= 0)
      temp_slot_ = register_temp_file(tmpl);
  }
  if (fd < 0) {
    error = "cannot create a temporary file in '" + (dir.empty() ? std::string(".") : dir) +
            "': " + errno_text(mkstemp_errno);
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

namespace {

/// Where standard output's file may be cut back to (see AtomicOutput::rewindable), or -2.
off_t stdout_rewind_point() {
  struct stat out {};
  struct stat err {};
  if (::fstat(STDOUT_FILENO, &out) != 0 || !S_ISREG(out.st_mode))
    return -2;
  if (::fstat(STDERR_FILENO, &err) == 0 && err.st_dev == out.st_dev && err.st_ino == out.st_ino)
    return -2;
  int flags = ::fcntl(STDOUT_FILENO, F_GETFL);
  if (flags < 0)
    return -2;
  if (flags & O_APPEND)
    return out.st_size;
  off_t at = ::lseek(STDOUT_FILENO, 0, SEEK_CUR);
  return at == out.st_size ? at : -2; // writing over existing bytes cannot be undone
}

} // namespace

bool AtomicOutput::rewindable() const {
  if (path_ == "-") {
    if (stdout_start_ == -1)
      stdout_start_ = stdout_rewind_point();
    return stdout_start_ >= 0;
  }
  if (fd_ >= 0)
    return !direct_;
  return plan_output(path_).kind == OutputPlan::Replace;
}

bool AtomicOutput::rewind(std::string &error) {
  if (!rewindable())
    return false;
  if (fd_ < 0) // nothing written yet
    return true;
  off_t start = path_ == "-" ? stdout_start_ : 0;
  if (::ftruncate(fd_, start) != 0 || ::lseek(fd_, start, SEEK_SET) != start) {
    error = errno_text(errno);
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
  if (direct_) {
    bool ok = ::close(fd_) == 0 || (error = errno_text(errno), false);
    fd_ = -1;
    direct_ = false;
    return ok;
  }
  bool ok = ::fsync(fd_) == 0 || (error = errno_text(errno), false);
  if (::close(fd_) != 0 && ok) {
    error = errno_text(errno);
    ok = false;
  }
  fd_ = -1;
  if (ok && ::rename(temp_.c_str(), target_.c_str()) != 0) {
    error = errno_text(errno);
    ok = false;
  }
  if (!ok)
    ::unlink(temp_.c_str());
  unregister_temp_file(temp_slot_);
  temp_slot_ = -1;
  temp_.clear();
  return ok;
}

void AtomicOutput::discard() {
  if (fd_ >= 0 && path_ != "-") {
    ::close(fd_);
    if (!direct_)
      ::unlink(temp_.c_str());
  }
  unregister_temp_file(temp_slot_);
  temp_slot_ = -1;
  fd_ = -1;
  direct_ = false;
  temp_.clear();
}

bool write_file_atomically(const std::string &path, std::string_view data, std::string &error) {
  AtomicOutput out(path);
  return out.write(data, error) && out.commit(error);
}

TextSink::TextSink(AtomicOutput &out, std::size_t threshold) : out_(&out), threshold_(threshold) {
  // Room for the threshold and the piece that crosses it: the buffer is allocated once.
  text.reserve(threshold + threshold / 2);
}

bool TextSink::rewind() {
  if (out_ && !out_->rewind(error_))
    return false;
  text.clear();
  return true;
}

void TextSink::write(std::string_view piece) {
  if (!out_ || piece.size() < threshold_) {
    text += piece;
    flush_if_large();
    return;
  }
  if (flush() && !out_->write(piece, error_))
    ok_ = false;
}

bool TextSink::flush() {
  if (!out_ || text.empty())
    return ok_;
  ok_ = ok_ && out_->write(text, error_);
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
