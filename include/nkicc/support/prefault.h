// Faulting in a large buffer's pages on the second core while a writer fills it (issue 16).
//
// On this machine the first touch of a page costs more than writing it (a fresh page is zeroed
// by the kernel at its first write): writing a 45 MB BIR kernel blob spent four fifths of its
// time in page faults. A BackwardPrefaulter asks the kernel to fault in
// (MADV_POPULATE_WRITE) the pages of a buffer that is written from its end toward its start, as a
// FlatBuffers builder writes, on a thread of its own, a few MiB ahead of the writer. The writer
// says how far it got (advance()); pages it will not reach are not touched, beyond the lead.
// Populating never changes a byte: a page the writer touched first is left as it is.
#pragma once

#include <atomic>
#include <cstddef>
#include <thread>

namespace nkicc {

class BackwardPrefaulter {
public:
  /// Starts faulting in [begin, end) from `end` down, at most `lead` bytes ahead of the writer.
  BackwardPrefaulter(unsigned char *begin, unsigned char *end, std::size_t lead);
  /// Stops and waits for the thread (it never outlives the buffer's owner).
  ~BackwardPrefaulter();
  BackwardPrefaulter(const BackwardPrefaulter &) = delete;
  BackwardPrefaulter &operator=(const BackwardPrefaulter &) = delete;

  /// The writer has written the last `bytes` of the buffer.
  void advance(std::size_t bytes);
  /// The buffer moved or is done: the thread stops (also what the destructor does first).
  void stop();

  /// Bytes faulted in so far, from the end (for tests).
  std::size_t populated() const { return populated_.load(std::memory_order_acquire); }

private:
  void run();

  unsigned char *begin_, *end_;
  std::size_t lead_;
  std::atomic<std::size_t> written_{0};
  std::atomic<std::size_t> populated_{0};
  std::atomic<bool> stop_{false};
  std::thread thread_;
};

} // namespace nkicc
