#include "nkicc/support/file_io.h"

#include <catch2/catch.hpp>

#include <cstdlib>
#include <csignal>
#include <dirent.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <cstdio>
#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <string>
#include <vector>

using namespace nkicc;

TEST_CASE("path helpers", "[support]") {
  CHECK(parent_dir("a/b/c.json") == "a/b");
  CHECK(parent_dir("c.json").empty());
  CHECK(parent_dir("/c.json") == "/");
  CHECK(file_stem("a/b/kernel.json") == "kernel");
  CHECK(file_stem("noext") == "noext");
  CHECK(file_stem(".hidden") == ".hidden");
  CHECK(join_path("a", "b.py") == "a/b.py");
  CHECK(join_path("a/", "b.py") == "a/b.py");
  CHECK(join_path("", "b.py") == "b.py");
  CHECK(join_path("a", "/abs.py") == "/abs.py");
}

TEST_CASE("atomic writes replace the file and leave no temporary behind", "[support]") {
  char tmpl[] = "/tmp/nkicc-unit-XXXXXX";
  REQUIRE(::mkdtemp(tmpl));
  std::string dir = tmpl;
  std::string path = dir + "/out.txt";
  std::string error;
  REQUIRE(write_file_atomically(path, "first", error));
  REQUIRE(write_file_atomically(path, "second", error));
  auto text = read_file(path, error);
  REQUIRE(text);
  CHECK(*text == "second");
  // A folder that does not exist: an error, nothing written.
  CHECK_FALSE(write_file_atomically(dir + "/missing/out.txt", "x", error));
  CHECK(error.find("cannot create a temporary file") != std::string::npos);
  int entries = 0;
  DIR *d = ::opendir(dir.c_str());
  while (dirent *e = ::readdir(d))
    entries += std::string(e->d_name) != "." && std::string(e->d_name) != "..";
  ::closedir(d);
  CHECK(entries == 1);
  CHECK_FALSE(read_file(dir, error));
  CHECK(error == "is a directory");
  CHECK_FALSE(read_file(dir + "/none", error));
  CHECK(error == "no such file or directory");
  ::unlink(path.c_str());
  ::rmdir(dir.c_str());
}

TEST_CASE("only regular files are read, and never waited on", "[support]") {
  char tmpl[] = "/tmp/nkicc-unit-XXXXXX";
  REQUIRE(::mkdtemp(tmpl));
  std::string dir = tmpl;
  std::string fifo = dir + "/pipe";
  REQUIRE(::mkfifo(fifo.c_str(), 0600) == 0);
  std::string error;
  CHECK_FALSE(read_file(fifo, error));
  CHECK(error == "is a named pipe, not a regular file");
  CHECK_FALSE(read_file_prefix(fifo, 16, error));
  CHECK(error == "is a named pipe, not a regular file");
  CHECK_FALSE(read_file("/dev/zero", error));
  CHECK(error == "is a character device, not a regular file");

  std::string path = dir + "/name";
  REQUIRE(write_file_atomically(path, "trn2.48xlarge\n", error));
  auto prefix = read_file_prefix(path, 4, error);
  REQUIRE(prefix);
  CHECK(*prefix == "trn2");
  auto whole = read_file_prefix(path, 256, error);
  REQUIRE(whole);
  CHECK(*whole == "trn2.48xlarge\n");
  ::unlink(path.c_str());
  ::unlink(fifo.c_str());
  ::rmdir(dir.c_str());
}

TEST_CASE("same_file compares files, not spellings", "[support]") {
  char tmpl[] = "/tmp/nkicc-unit-XXXXXX";
  REQUIRE(::mkdtemp(tmpl));
  std::string dir = tmpl;
  std::string error;
  REQUIRE(write_file_atomically(dir + "/a.json", "{}", error));
  REQUIRE(::symlink((dir + "/a.json").c_str(), (dir + "/link.json").c_str()) == 0);
  CHECK(same_file(dir + "/a.json", dir + "/a.json"));
  CHECK(same_file(dir + "/a.json", dir + "/./a.json"));
  CHECK(same_file(dir + "/link.json", dir + "/a.json"));
  CHECK_FALSE(same_file(dir + "/a.json", dir + "/b.json"));
  // Neither exists: the normalized paths decide.
  CHECK(same_file(dir + "/x/../b.json", dir + "/b.json"));
  CHECK_FALSE(same_file(dir + "/b.json", dir + "/c.json"));
  CHECK_FALSE(same_file("-", "-"));
  ::unlink((dir + "/link.json").c_str());
  ::unlink((dir + "/a.json").c_str());
  ::rmdir(dir.c_str());
}

namespace {

/// The names in a folder, without . and ..
std::vector<std::string> folder_entries(const std::string &dir) {
  std::vector<std::string> names;
  DIR *d = ::opendir(dir.c_str());
  while (dirent *e = ::readdir(d)) {
    std::string name = e->d_name;
    if (name != "." && name != "..")
      names.push_back(name);
  }
  ::closedir(d);
  std::sort(names.begin(), names.end());
  return names;
}

} // namespace

TEST_CASE("AtomicOutput: pieces become the file at commit, and vanish without it", "[support]") {
  char tmpl[] = "/tmp/nkicc-unit-XXXXXX";
  REQUIRE(::mkdtemp(tmpl));
  std::string dir = tmpl;
  std::string path = dir + "/out.txt";
  std::string error;
  REQUIRE(write_file_atomically(path, "previous", error));
  {
    AtomicOutput out(path);
    REQUIRE(out.write("new ", error));
    REQUIRE(out.write("text", error));
    // Until commit the target keeps its old content; the pieces sit in a temporary file.
    CHECK(*read_file(path, error) == "previous");
    CHECK(folder_entries(dir).size() == 2);
  } // destroyed without commit
  CHECK(*read_file(path, error) == "previous");
  CHECK(folder_entries(dir) == std::vector<std::string>{"out.txt"});
  {
    AtomicOutput out(path);
    REQUIRE(out.write("new ", error));
    REQUIRE(out.write("text", error));
    REQUIRE(out.commit(error));
  }
  CHECK(*read_file(path, error) == "new text");
  CHECK(folder_entries(dir) == std::vector<std::string>{"out.txt"});
  {
    AtomicOutput out(path); // nothing written: the output is an empty file
    REQUIRE(out.commit(error));
  }
  CHECK(read_file(path, error)->empty());
  AtomicOutput missing(dir + "/missing/out.txt");
  CHECK_FALSE(missing.write("x", error));
  CHECK(error.find("cannot create a temporary file") != std::string::npos);
  CHECK_FALSE(missing.write("y", error)); // every later write fails too
  CHECK_FALSE(missing.commit(error));
  ::unlink(path.c_str());
  ::rmdir(dir.c_str());
}

TEST_CASE("AtomicOutput and TextSink: what was written is taken back through a temporary file only", "[support]") {
  char tmpl[] = "/tmp/nkicc-unit-XXXXXX";
  REQUIRE(::mkdtemp(tmpl));
  std::string dir = tmpl;
  std::string path = dir + "/out.txt";
  std::string error;
  {
    AtomicOutput out(path);
    CHECK(out.rewindable());
    CHECK(out.rewind(error)); // nothing written yet
    REQUIRE(out.write("first try, ", error));
    REQUIRE(out.write("taken back", error));
    CHECK(out.rewind(error));
    REQUIRE(out.write("second", error));
    REQUIRE(out.commit(error));
  }
  CHECK(*read_file(path, error) == "second");
  CHECK(folder_entries(dir) == std::vector<std::string>{"out.txt"});
  {
    // The sink's buffer and what it already handed to the file go together.
    AtomicOutput out(path);
    TextSink sink(out, 8);
    CHECK(sink.rewindable());
    sink.write("0123456789 written through");
    sink.text += "buffered";
    CHECK(sink.rewind());
    CHECK(sink.text.empty());
    sink.text += "kept";
    REQUIRE(sink.flush());
    REQUIRE(out.commit(error));
  }
  CHECK(*read_file(path, error) == "kept");
  {
    // Standard output redirected to a file (`>> file`): cut back to where it started.
    std::string redirected = dir + "/stdout.txt";
    REQUIRE(write_file_atomically(redirected, "before\n", error));
    std::fflush(stdout);
    int saved = ::dup(STDOUT_FILENO);
    int fd = ::open(redirected.c_str(), O_WRONLY | O_APPEND);
    REQUIRE(saved >= 0);
    REQUIRE(fd >= 0);
    ::dup2(fd, STDOUT_FILENO);
    ::close(fd);
    bool rewindable = false, rewound = false, wrote = false;
    {
      AtomicOutput out("-");
      rewindable = out.rewindable();
      wrote = out.write("taken back\n", error);
      rewound = out.rewind(error);
      wrote = wrote && out.write("after\n", error) && out.commit(error);
    }
    ::dup2(saved, STDOUT_FILENO);
    ::close(saved);
    CHECK(rewindable);
    CHECK(rewound);
    CHECK(wrote);
    CHECK(*read_file(redirected, error) == "before\nafter\n");
    ::unlink(redirected.c_str());
  }
  // Standard output on a pipe, and what is written in place, cannot be taken back.
  {
    int pipe_fds[2];
    REQUIRE(::pipe(pipe_fds) == 0);
    std::fflush(stdout);
    int saved = ::dup(STDOUT_FILENO);
    ::dup2(pipe_fds[1], STDOUT_FILENO);
    bool rewindable = AtomicOutput("-").rewindable();
    ::dup2(saved, STDOUT_FILENO);
    ::close(saved);
    ::close(pipe_fds[0]);
    ::close(pipe_fds[1]);
    CHECK_FALSE(rewindable);
  }
  AtomicOutput device("/dev/null");
  CHECK_FALSE(device.rewindable());
  REQUIRE(device.write("x", error));
  CHECK_FALSE(device.rewind(error));
  TextSink device_sink(device);
  CHECK_FALSE(device_sink.rewindable());
  device_sink.text += "pending";
  CHECK_FALSE(device_sink.rewind());
  CHECK(device_sink.text == "pending"); // nothing changed
  // Without an output, the buffer is all there is.
  TextSink collected;
  collected.text += "abc";
  CHECK(collected.rewindable());
  CHECK(collected.rewind());
  CHECK(collected.text.empty());
  ::unlink(path.c_str());
  ::rmdir(dir.c_str());
}

namespace {

/// The bytes an output has written so far: its temporary file's, the one dot-file in `dir`.
std::string pending_bytes(const std::string &dir) {
  std::string error;
  for (const std::string &name : folder_entries(dir))
    if (name.starts_with("."))
      return *read_file(dir + "/" + name, error);
  return "(no temporary file)";
}

} // namespace

TEST_CASE("TextSink: buffers small pieces, writes large ones through, in order", "[support]") {
  char tmpl[] = "/tmp/nkicc-unit-XXXXXX";
  REQUIRE(::mkdtemp(tmpl));
  std::string dir = tmpl;
  std::string path = dir + "/out.txt";
  std::string error;
  {
    AtomicOutput out(path);
    TextSink sink(out, 8);
    std::size_t capacity = sink.text.capacity();
    sink.text += "abc";
    sink.flush_if_large();
    CHECK(folder_entries(dir).empty()); // below the threshold: nothing written, no file yet
    sink.text += "defgh";               // exactly the threshold
    sink.flush_if_large();
    CHECK(pending_bytes(dir) == "abcdefgh");
    CHECK(sink.text.empty());
    sink.write("1234567"); // one byte short of the threshold: buffered
    CHECK(pending_bytes(dir) == "abcdefgh");
    CHECK(sink.text == "1234567");
    sink.write("ABCDEFGH"); // as large as the buffer: the pending text first, then the piece itself
    CHECK(pending_bytes(dir) == "abcdefgh1234567ABCDEFGH");
    CHECK(sink.text.empty());
    sink.write("x");
    sink.write(std::string(20, 'L')); // far larger than the buffer
    CHECK(pending_bytes(dir) == "abcdefgh1234567ABCDEFGHx" + std::string(20, 'L'));
    for (int i = 0; i < 100; ++i)
      sink.write("pq");                      // crossing the threshold again and again
    CHECK(sink.text.capacity() == capacity); // the buffer is reused, never grown
    CHECK(sink.flush());
    CHECK(sink.error().empty());
    CHECK(folder_entries(dir).size() == 1);
    REQUIRE(out.commit(error));
  }
  std::string pq;
  for (int i = 0; i < 100; ++i)
    pq += "pq";
  CHECK(*read_file(path, error) == "abcdefgh1234567ABCDEFGHx" + std::string(20, 'L') + pq);
  CHECK(folder_entries(dir) == std::vector<std::string>{"out.txt"});
  ::unlink(path.c_str());
  ::rmdir(dir.c_str());
}

TEST_CASE("TextSink: a failed write is reported, and the atomic output leaves no file", "[support]") {
  char tmpl[] = "/tmp/nkicc-unit-XXXXXX";
  REQUIRE(::mkdtemp(tmpl));
  std::string dir = tmpl;
  std::string path = dir + "/out.txt";
  // The file-size limit makes the write past byte 16 fail with EFBIG, as a full disk would
  // with ENOSPC; SIGXFSZ, which would end the process, is ignored meanwhile.
  struct rlimit old_limit {};
  REQUIRE(::getrlimit(RLIMIT_FSIZE, &old_limit) == 0);
  struct rlimit limit = old_limit;
  limit.rlim_cur = 16;
  auto old_handler = ::signal(SIGXFSZ, SIG_IGN);
  REQUIRE(::setrlimit(RLIMIT_FSIZE, &limit) == 0);
  bool flushed = true, again = true;
  std::string error;
  {
    AtomicOutput out(path);
    TextSink sink(out, 8);
    sink.write("0123456789");         // written through: 10 bytes
    sink.write(std::string(12, 'a')); // 22 bytes: past the limit
    flushed = sink.flush();
    sink.write("more");
    again = sink.flush();
    error = sink.error();
    out.discard();
  }
  ::setrlimit(RLIMIT_FSIZE, &old_limit);
  ::signal(SIGXFSZ, old_handler);
  CHECK_FALSE(flushed);
  CHECK_FALSE(again); // the sink stays failed
  CHECK(error == "file too large");
  CHECK(folder_entries(dir).empty()); // neither the output nor its temporary file
  ::rmdir(dir.c_str());
}

TEST_CASE("TextSink: without an output it collects everything", "[support]") {
  TextSink collect;
  CHECK_FALSE(collect.streaming());
  collect.text = std::string(10000, 'x');
  collect.flush_if_large();
  CHECK(collect.text.size() == 10000);
}
