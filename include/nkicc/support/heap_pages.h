// How the nkicc binary's heap is set up (tools/nkicc/counting_new.cpp, tools/nkicc/cli.cpp).
//
// On the machines nkicc runs on, the first touch of a page costs more than writing it. malloc
// keeps freed heap rather than giving it back, so that a buffer made again and again reuses
// pages, and the top of the heap a command is about to use is advised for transparent huge
// pages, so that its many small blocks fault in 2 MiB at a time.
//
// Blocks of 2 MiB and more are malloc's own mappings on ordinary pages. They used to be mappings
// of nkicc's advised for huge pages; measured again on this machine (scripts/bench_trace.sh,
// scripts/bench_ab.sh), a fresh huge page there often costs far more than the 4 KiB pages it
// replaces (the 400,000-instruction trace writing BIR: 1.00 s of trace and emit with them, 0.43
// s without), so they were dropped.
#pragma once

#include <cstddef>

namespace nkicc::memory {

/// Requests from this size on are mapped on their own by malloc (M_MMAP_THRESHOLD).
inline constexpr std::size_t kMmapFrom = std::size_t{2} << 20;
/// Free heap malloc keeps (configure_heap).
inline constexpr std::size_t kKeptHeapBytes = std::size_t{32} << 20;

/// Sets malloc up for nkicc's binary: blocks below kMmapFrom come from the heap (glibc maps
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
/// Called once a command knows it will work (not for `--version`); nothing when huge pages are
/// not wanted.
void advise_heap_huge_pages(std::size_t bytes) noexcept;
/// Whether the heap is advised for huge pages: yes unless NKICC_HUGE_PAGES=0 (benchmarks
/// compare the two); never in the sanitizer builds, whose allocator must see every block.
bool huge_pages_wanted() noexcept;

} // namespace nkicc::memory
