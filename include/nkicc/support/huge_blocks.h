// Large blocks on transparent huge pages, for nkicc's operator new (tools/nkicc/counting_new.cpp).
//
// On the machines nkicc runs on, the first touch of a 4 KiB page costs 10-27 us; most of a
// 400,000-instruction trace's time was such page faults, in the few blocks of a megabyte and
// more that hold the IR's segments, the BIR builders' buffers and large strings. A 2 MiB huge
// page is zeroed and mapped at about 0.3 us per 4 KiB. So a block of kHugeBlockFrom bytes or more
// gets a mapping of its own, 2 MiB-aligned, whose whole huge pages are advised MADV_HUGEPAGE
// before anything touches them; the last partial one is rounded up to a whole one only when that
// adds at most a quarter of the block, else it stays on ordinary pages. A system whose
// transparent huge pages are `never` ignores the advice and the block is an ordinary mapping.
//
// The blocks are recorded in a fixed table, so that operator delete can tell them from malloc's
// without a header: only a 2 MiB-aligned pointer is looked up (malloc's large blocks never are,
// its small ones rarely), and a pointer not in the table is malloc's.
#pragma once

#include <cstddef>

namespace nkicc::memory {

inline constexpr std::size_t kHugePageBytes = std::size_t{2} << 20;
/// Requests from this size on are huge blocks.
inline constexpr std::size_t kHugeBlockFrom = kHugePageBytes;
/// Live huge blocks at most (each is at least 2 MiB: 16 GiB, twice the default --max-memory);
/// past it, large requests go to malloc.
inline constexpr std::size_t kMaxHugeBlocks = 8192;

/// A mapping of at least `bytes` bytes, 2 MiB-aligned, its size in `size`. Null when `bytes` is
/// below kHugeBlockFrom, the mapping fails or the table is full: the caller then asks malloc.
void *huge_block_allocate(std::size_t bytes, std::size_t &size) noexcept;
/// The size of the huge block at `p`, which is unmapped; 0 when `p` is not one (malloc's).
std::size_t huge_block_release(void *p) noexcept;
/// The size of the huge block at `p`, or 0.
std::size_t huge_block_size(const void *p) noexcept;
/// Whether `p` may be a huge block (2 MiB-aligned): the cheap test before the table's.
inline bool maybe_huge_block(const void *p) noexcept {
  return (reinterpret_cast<std::size_t>(p) & (kHugePageBytes - 1)) == 0;
}
/// Free heap malloc keeps (configure_heap).
inline constexpr std::size_t kKeptHeapBytes = std::size_t{32} << 20;

/// Sets malloc up for nkicc's binary: blocks below kHugeBlockFrom come from the heap (glibc maps
/// each block past 128 KiB on its own by default, fresh pages every time), and up to
/// kKeptHeapBytes of free heap is kept rather than given back, so a buffer made again and again
/// (a remote cache download, a growing string) reuses pages: a remote cache hit 500 -> 250 us of
/// CPU. Called once, before main, by the binary's operator new.
void configure_heap() noexcept;

/// Makes the next `bytes` (at most 16 MiB) of malloc's heap eligible for huge pages: a block that
/// size is taken from the top of the heap, its whole huge pages advised MADV_HUGEPAGE, and given
/// back, so that the small blocks carved from there next fault in 2 MiB at a time instead of
/// 4 KiB (a warm cached run touched ~500 KiB of heap in 131 faults). After configure_heap(): the
/// freed block must stay in the heap, and malloc's threshold is raised for it and set back.
/// Called once a command knows it will work (not for `--version`); nothing when huge blocks are
/// not wanted.
void advise_heap_huge_pages(std::size_t bytes) noexcept;
/// Whether large requests should be huge blocks: yes unless NKICC_HUGE_PAGES=0 (benchmarks
/// compare the two); never in the sanitizer builds, whose allocator must see every block.
bool huge_blocks_wanted() noexcept;

} // namespace nkicc::memory
