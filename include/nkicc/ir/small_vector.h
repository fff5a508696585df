// A vector of trivially copyable elements that keeps its first N elements inline and moves to
// the heap only beyond that. An access pattern has a pair per dimension (a partition pair and
// one to four free pairs in practice), and a trace holds millions of them: inline storage saves
// a heap block per view, instruction and interpreter value. The API is the part of std::vector
// the IR uses: size, indexing, iteration, push/emplace_back, insert, resize, clear, equality.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <iterator>
#include <memory>
#include <new>
#include <type_traits>
#include <vector>

namespace nkicc::ir {

template <class T, std::uint32_t N> class SmallVector {
  static_assert(std::is_trivially_copy_constructible_v<T> && std::is_trivially_destructible_v<T>,
                "SmallVector holds trivially copyable elements only");
  static_assert(N > 0, "SmallVector needs inline room for at least one element");

public:
  using value_type = T;
  using size_type = std::size_t;
  using difference_type = std::ptrdiff_t;
  using reference = T &;
  using const_reference = const T &;
  using pointer = T *;
  using const_pointer = const T *;
  using iterator = T *;
  using const_iterator = const T *;

  SmallVector() noexcept = default;
  SmallVector(std::initializer_list<T> items) { assign(items.begin(), items.end()); }
  template <class Alloc> SmallVector(const std::vector<T, Alloc> &items) { assign(items.begin(), items.end()); }
  template <class It, class = typename std::iterator_traits<It>::iterator_category> SmallVector(It first, It last) {
    assign(first, last);
  }
  SmallVector(const SmallVector &other) { assign(other.begin(), other.end()); }
  SmallVector(SmallVector &&other) noexcept { take(other); }
  ~SmallVector() { release(); }

  SmallVector &operator=(const SmallVector &other) {
    if (this != &other)
      assign(other.begin(), other.end());
    return *this;
  }
  SmallVector &operator=(SmallVector &&other) noexcept {
    if (this != &other) {
      release();
      take(other);
    }
    return *this;
  }
  SmallVector &operator=(std::initializer_list<T> items) {
    assign(items.begin(), items.end());
    return *this;
  }
  template <class Alloc> SmallVector &operator=(const std::vector<T, Alloc> &items) {
    assign(items.begin(), items.end());
    return *this;
  }

  template <class It> void assign(It first, It last) {
    size_ = 0;
    reserve(static_cast<size_type>(std::distance(first, last)));
    T *out = data();
    for (; first != last; ++first, ++out)
      ::new (static_cast<void *>(out)) T(*first);
    size_ = static_cast<std::uint32_t>(out - data());
  }

  T *data() noexcept { return on_heap() ? heap_ : inline_data(); }
  const T *data() const noexcept { return on_heap() ? heap_ : inline_data(); }
  size_type size() const noexcept { return size_; }
  size_type capacity() const noexcept { return cap_; }
  bool empty() const noexcept { return size_ == 0; }

  iterator begin() noexcept { return data(); }
  iterator end() noexcept { return data() + size_; }
  const_iterator begin() const noexcept { return data(); }
  const_iterator end() const noexcept { return data() + size_; }
  const_iterator cbegin() const noexcept { return begin(); }
  const_iterator cend() const noexcept { return end(); }

  T &operator[](size_type i) noexcept { return data()[i]; }
  const T &operator[](size_type i) const noexcept { return data()[i]; }
  T &front() noexcept { return data()[0]; }
  const T &front() const noexcept { return data()[0]; }
  T &back() noexcept { return data()[size_ - 1]; }
  const T &back() const noexcept { return data()[size_ - 1]; }

  void reserve(size_type n) {
    if (n <= cap_)
      return;
    T *fresh = static_cast<T *>(::operator new(n * sizeof(T)));
    std::uninitialized_copy(begin(), end(), fresh);
    release();
    heap_ = fresh;
    cap_ = static_cast<std::uint32_t>(n);
  }
  void clear() noexcept { size_ = 0; }
  void resize(size_type n) { resize(n, T()); }
  void resize(size_type n, const T &value) {
    if (n > size_) {
      if (n > cap_)
        reserve(grown(n));
      std::uninitialized_fill(end(), data() + n, value);
    }
    size_ = static_cast<std::uint32_t>(n);
  }
  void push_back(const T &value) {
    T copy = value; // `value` may live in this vector
    if (size_ == cap_)
      reserve(grown(size_ + 1));
    ::new (static_cast<void *>(data() + size_)) T(copy);
    ++size_;
  }
  template <class... Args> T &emplace_back(Args &&...args) {
    T value(std::forward<Args>(args)...);
    push_back(value);
    return back();
  }
  void pop_back() noexcept { --size_; }
  iterator insert(const_iterator pos, const T &value) {
    size_type at = static_cast<size_type>(pos - begin());
    push_back(value);
    std::rotate(begin() + at, end() - 1, end());
    return begin() + at;
  }
  iterator erase(const_iterator pos) {
    size_type at = static_cast<size_type>(pos - begin());
    std::copy(begin() + at + 1, end(), begin() + at);
    --size_;
    return begin() + at;
  }

  iterator erase(const_iterator first, const_iterator last) {
    size_type at = static_cast<size_type>(first - begin());
    size_type count = static_cast<size_type>(last - first);
    std::copy(begin() + at + count, end(), begin() + at);
    size_ -= static_cast<std::uint32_t>(count);
    return begin() + at;
  }

  /// The elements as a std::vector (for APIs that take one).
  std::vector<T> to_vector() const { return std::vector<T>(begin(), end()); }

  friend bool operator==(const SmallVector &a, const SmallVector &b) {
    return std::equal(a.begin(), a.end(), b.begin(), b.end());
  }
  friend bool operator!=(const SmallVector &a, const SmallVector &b) { return !(a == b); }
  template <class Alloc> friend bool operator==(const SmallVector &a, const std::vector<T, Alloc> &b) {
    return std::equal(a.begin(), a.end(), b.begin(), b.end());
  }
  template <class Alloc> friend bool operator!=(const SmallVector &a, const std::vector<T, Alloc> &b) {
    return !(a == b);
  }

private:
  bool on_heap() const noexcept { return cap_ > N; }
  T *inline_data() noexcept { return std::launder(reinterpret_cast<T *>(inline_)); }
  const T *inline_data() const noexcept { return std::launder(reinterpret_cast<const T *>(inline_)); }
  size_type grown(size_type need) const { return std::max<size_type>(need, 2 * static_cast<size_type>(cap_)); }
  void release() noexcept {
    if (on_heap())
      ::operator delete(heap_);
    cap_ = N;
  }
  // Precondition: this vector holds no heap block.
  void take(SmallVector &other) noexcept {
    if (other.on_heap()) {
      heap_ = other.heap_;
      cap_ = other.cap_;
      size_ = other.size_;
      other.cap_ = N;
    } else {
      std::uninitialized_copy(other.begin(), other.end(), inline_data());
      cap_ = N;
      size_ = other.size_;
    }
    other.size_ = 0;
  }

  union {
    alignas(T) unsigned char inline_[N * sizeof(T)];
    T *heap_;
  };
  std::uint32_t size_ = 0;
  std::uint32_t cap_ = N;
};

} // namespace nkicc::ir
