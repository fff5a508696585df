// Reading inputs and writing outputs. Outputs are written atomically (SPEC §1): a temporary
// file in the target folder, renamed over the target only when the whole output is written.
#pragma once

#include <cstddef>
#include <sys/types.h>
#include <optional>
#include <string>
#include <string_view>

namespace nkicc {

/// Largest input nkicc reads: source positions are 32-bit offsets.
inline constexpr std::size_t kMaxInputBytes = std::size_t{1} << 31;

/// Reads a whole file ("-" reads standard input). On failure returns nullopt and sets `error`
/// to a lowercase reason (`no such file or directory`, `is a directory`, `file is larger than 2 GiB`).
/// Only a regular file is read: a FIFO, a device or a socket is refused at once (`is a named
/// pipe, not a regular file`), never waited on, and the size limit is checked before reading.
/// Standard input may be a pipe, a file or a terminal, not a device.
std::optional<std::string> read_file(const std::string &path, std::string &error);

/// The first `max_bytes` of a regular file (all of it when shorter), with read_file()'s checks.
std::optional<std::string> read_file_prefix(const std::string &path, std::size_t max_bytes, std::string &error);

/// Writes `data` to `path` through a temporary file in the same folder, then renames it into
/// place. On failure the temporary file is removed, an existing `path` is left untouched and
/// `error` says why. "-" writes to standard output.
bool write_file_atomically(const std::string &path, std::string_view data, std::string &error);

/// An output written in pieces and made visible at once: the pieces go to a temporary file in
/// the folder of `path`, created at the first write, and commit() renames it over `path`.
/// Destroyed (or discarded) without commit(), the temporary file is removed and `path` is left
/// untouched. "-" writes straight to standard output.
///
/// Only a regular file (or a path that does not exist yet) is replaced that way, as LLVM's tools
/// do: a device, a FIFO or a socket (`-o /dev/null`, `-o /dev/stdout`, a named pipe) is opened
/// and written in place, so that the node itself is never replaced. A symbolic link to a regular
/// file keeps the link: the file it points to is the one replaced. While a temporary file
/// exists, SIGINT, SIGTERM and SIGHUP remove it before the process dies of the signal.
class AtomicOutput {
public:
  explicit AtomicOutput(std::string path);
  ~AtomicOutput();
  AtomicOutput(const AtomicOutput &) = delete;
  AtomicOutput &operator=(const AtomicOutput &) = delete;

  /// False, with `error` set, when the temporary file cannot be made or written; every later
  /// write fails too.
  bool write(std::string_view data, std::string &error);
  /// Whether what was written can be taken back by rewind(): yes through a temporary file (a
  /// regular file, or a path that does not exist yet), and for standard output redirected to a
  /// regular file that it writes at the end of (`> keys.txt`, `>> keys.txt`) and that standard
  /// error does not share (log lines written meanwhile would be cut too); no for a terminal, a
  /// pipe, and what is written in place (a device, a FIFO, a socket).
  bool rewindable() const;
  /// Takes back everything written so far: the temporary file is emptied, standard output's file
  /// cut back to its size before the first write. False (nothing changed) when the output is not
  /// rewindable or the file cannot be cut.
  bool rewind(std::string &error);
  /// Makes the output visible (an empty file when nothing was written).
  bool commit(std::string &error);
  void discard();

private:
  bool open(std::string &error);
  std::string path_;
  std::string target_; ///< the file a commit replaces: path_, or where its symbolic links lead
  std::string temp_;
  int fd_ = -1;
  int temp_slot_ = -1;  ///< this output's entry in the signal handler's list of temporary files
  bool direct_ = false; ///< writing into a device, FIFO or socket in place (no temporary file)
  bool failed_ = false;
  /// Standard output's rewind point: -1 until known (the first rewindable() or write), -2 when
  /// standard output cannot be taken back.
  mutable off_t stdout_start_ = -1;
};

/// The one buffered writer of an output: emitters append text to `text` (the buffer) and call
/// flush_if_large() between pieces, and the buffer goes to the AtomicOutput whenever it has
/// grown past the threshold, so that gigabytes of IR or HLO text are never held at once and
/// the buffer, reused, never grows by doubling. A large piece that already lies in memory (a
/// backend_config, a BIR module) is handed to write(), which sends it on from where it lies
/// after the pending text instead of copying it into the buffer. Without an output, `text`
/// collects everything.
class TextSink {
public:
  TextSink() = default;
  explicit TextSink(AtomicOutput &out, std::size_t threshold = std::size_t{1} << 20);

  std::string text;
  void flush_if_large() {
    if (out_ && text.size() >= threshold_)
      flush();
  }
  /// Appends `piece`: into the buffer when small, else written straight through.
  void write(std::string_view piece);
  /// Hands the pending text to the output; false once any write has failed.
  bool flush();
  bool streaming() const { return out_ != nullptr; }
  /// Whether rewind() can take back what was written: always without an output (the buffer is
  /// all there is), else when the output is rewindable.
  bool rewindable() const { return !out_ || out_->rewindable(); }
  /// Takes back everything written: the buffer and the output. False (nothing changed) when
  /// not rewindable.
  bool rewind();
  /// Why the first failed write failed (`no space left on device`); empty while all succeed.
  const std::string &error() const { return error_; }

private:
  AtomicOutput *out_ = nullptr;
  std::size_t threshold_ = 0;
  std::string error_;
  bool ok_ = true;
};

/// Whether two paths name the same file: the same device and inode when both exist (so links
/// and `./x` match), else the same lexically normalized absolute path. "-" is no file.
bool same_file(const std::string &a, const std::string &b);

/// The folder part of a path ("" for a bare file name), and the stem of its file name.
std::string parent_dir(std::string_view path);
std::string file_stem(std::string_view path);
/// `dir/rel` unless `rel` is absolute or `dir` is empty.
std::string join_path(std::string_view dir, std::string_view rel);

} // namespace nkicc
