#include "nkicc/support/heap_pages.h"

#include <catch2/catch.hpp>

#include <cstdlib>
#include <fstream>
#include <string>

using namespace nkicc::memory;

TEST_CASE("advise_heap_huge_pages marks the top of malloc's heap for huge pages", "[support][heap]") {
  if (!huge_pages_wanted())
    return; // the sanitizer builds leave the heap to their allocator
  // As nkicc's operator new sets it up: freed heap is kept, so the advised part stays mapped.
  configure_heap();
  advise_heap_huge_pages(std::size_t{8} << 20);
  void *small = std::malloc(64); // carved from the advised top
  REQUIRE(small != nullptr);
  // /proc/self/smaps lists the heap's parts; the advised one carries the `hg` flag.
  std::ifstream smaps("/proc/self/smaps");
  std::string line;
  bool in_heap = false, advised = false;
  while (std::getline(smaps, line)) {
    // A mapping's header starts with its range (`55d0c8a5e000-55d0c8a7f000 rw-p ...`), its fields
    // with a name and a colon.
    std::string first = line.substr(0, line.find(' '));
    if (first.find('-') != std::string::npos && first.find(':') == std::string::npos)
      in_heap = line.find("[heap]") != std::string::npos;
    if (in_heap && line.rfind("VmFlags:", 0) == 0 && line.find(" hg") != std::string::npos)
      advised = true;
  }
  std::free(small);
  CHECK(advised);
  // Nothing is done past the size it accepts.
  advise_heap_huge_pages(std::size_t{64} << 20);
}
