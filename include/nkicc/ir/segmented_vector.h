// A vector that never moves its elements: storage is a list of segments of doubling size
// (64, 128, 256, ... elements), so growing by one appends a segment instead of copying
// everything into a block twice the size. A trace of ten million instructions thus peaks at
// the memory it holds, not at twice that while the last copy runs, and references to elements
// stay valid as it grows.
#pragma once

#include <bit>
#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <iterator>
#include <memory>
#include <new>
#include <utility>
#include <vector>

namespace nkicc::ir {

template <class T> class SegmentedVector {
  static constexpr unsigned kFirstBits = 6; ///< the first segment holds 64 elements

public:
  using value_type = T;
  using size_type = std::size_t;
  using reference = T &;
  using const_reference = const T &;

  template <bool Const> class Iterator {
  public:
    using iterator_category = std::random_access_iterator_tag;
    using value_type = T;
    using difference_type = std::ptrdiff_t;
    using pointer = std::conditional_t<Const, const T *, T *>;
    using reference = std::conditional_t<Const, const T &, T &>;
    using Owner = std::conditional_t<Const, const SegmentedVector, SegmentedVector>;

    Iterator() = default;
    Iterator(Owner *owner, size_type i) : owner_(owner), i_(i) {}
    reference operator*() const { return (*owner_)[i_]; }
    pointer operator->() const { return &(*owner_)[i_]; }
    reference operator[](difference_type n) const { return (*owner_)[i_ + n]; }
    Iterator &operator++() {
      ++i_;
      return *this;
    }
    Iterator operator++(int) {
      Iterator old = *this;
      ++i_;
      return old;
    }
    Iterator &operator--() {
      --i_;
      return *this;
    }
    Iterator operator--(int) {
      Iterator old = *this;
      --i_;
      return old;
    }
    Iterator &operator+=(difference_type n) {
      i_ = static_cast<size_type>(static_cast<difference_type>(i_) + n);
      return *this;
    }
    Iterator &operator-=(difference_type n) { return *this += -n; }
    friend Iterator operator+(Iterator it, difference_type n) { return it += n; }
    friend Iterator operator+(difference_type n, Iterator it) { return it += n; }
    friend Iterator operator-(Iterator it, difference_type n) { return it -= n; }
    friend difference_type operator-(const Iterator &a, const Iterator &b) {
      return static_cast<difference_type>(a.i_) - static_cast<difference_type>(b.i_);
    }
    friend bool operator==(const Iterator &a, const Iterator &b) { return a.i_ == b.i_; }
    friend auto operator<=>(const Iterator &a, const Iterator &b) { return a.i_ <=> b.i_; }
    operator Iterator<true>() const { return Iterator<true>(owner_, i_); }

  private:
    Owner *owner_ = nullptr;
    size_type i_ = 0;
  };
  using iterator = Iterator<false>;
  using const_iterator = Iterator<true>;

  SegmentedVector() = default;
  SegmentedVector(std::initializer_list<T> items) { append(items.begin(), items.end()); }
  SegmentedVector(const SegmentedVector &other) { append(other.begin(), other.end()); }
  SegmentedVector(SegmentedVector &&other) noexcept
      : segments_(std::move(other.segments_)), size_(std::exchange(other.size_, 0)) {}
  ~SegmentedVector() { clear(); }
  SegmentedVector &operator=(const SegmentedVector &other) {
    if (this != &other) {
      clear();
      append(other.begin(), other.end());
    }
    return *this;
  }
  SegmentedVector &operator=(SegmentedVector &&other) noexcept {
    if (this != &other) {
      clear();
      segments_ = std::move(other.segments_);
      size_ = std::exchange(other.size_, 0);
    }
    return *this;
  }
  SegmentedVector &operator=(std::initializer_list<T> items) {
    clear();
    append(items.begin(), items.end());
    return *this;
  }

  size_type size() const noexcept { return size_; }
  bool empty() const noexcept { return size_ == 0; }

  T &operator[](size_type i) noexcept {
    auto [s, at] = locate(i);
    return segments_[s].get()[at];
  }
  const T &operator[](size_type i) const noexcept {
    auto [s, at] = locate(i);
    return segments_[s].get()[at];
  }
  T &back() noexcept { return (*this)[size_ - 1]; }
  const T &back() const noexcept { return (*this)[size_ - 1]; }

  iterator begin() noexcept { return {this, 0}; }
  iterator end() noexcept { return {this, size_}; }
  const_iterator begin() const noexcept { return {this, 0}; }
  const_iterator end() const noexcept { return {this, size_}; }

  template <class... Args> T &emplace_back(Args &&...args) {
    T *slot = next_slot();
    ::new (static_cast<void *>(slot)) T(std::forward<Args>(args)...);
    ++size_;
    return *slot;
  }
  void push_back(const T &value) { emplace_back(value); }
  void push_back(T &&value) { emplace_back(std::move(value)); }

  /// Elements that can be appended at the end of the last segment without starting a new one.
  size_type room_in_segment() const noexcept {
    return size_ == capacity() ? 0 : segment_end(locate(size_).first) - size_;
  }
  /// Drops the elements past the first `n`.
  void truncate(size_type n) noexcept {
    while (size_ > n)
      back_pop();
  }
  void resize(size_type n) {
    truncate(n);
    while (size_ < n)
      emplace_back();
  }
  void clear() noexcept {
    truncate(0);
    segments_.clear();
  }

private:
  struct Free {
    void operator()(T *p) const noexcept { ::operator delete (static_cast<void *>(p), std::align_val_t{alignof(T)}); }
  };

  // Element i lies in segment s = bit_width((i >> kFirstBits) + 1) - 1, which starts at
  // (2^s - 1) << kFirstBits and holds 2^s << kFirstBits elements.
  static std::pair<size_type, size_type> locate(size_type i) noexcept {
    size_type s = static_cast<size_type>(std::bit_width((i >> kFirstBits) + 1)) - 1;
    return {s, i - segment_start(s)};
  }
  static size_type segment_start(size_type s) noexcept { return ((size_type{1} << s) - 1) << kFirstBits; }
  static size_type segment_end(size_type s) noexcept { return segment_start(s + 1); }
  size_type capacity() const noexcept { return segment_start(segments_.size()); }

  T *next_slot() {
    if (size_ == capacity()) {
      size_type n = size_type{1} << (segments_.size() + kFirstBits);
      segments_.emplace_back(static_cast<T *>(::operator new (n * sizeof(T), std::align_val_t{alignof(T)})));
    }
    auto [s, at] = locate(size_);
    return segments_[s].get() + at;
  }
  void back_pop() noexcept {
    back().~T();
    --size_;
  }
  template <class It> void append(It first, It last) {
    for (; first != last; ++first)
      emplace_back(*first);
  }

  std::vector<std::unique_ptr<T, Free>> segments_;
  size_type size_ = 0;
};

} // namespace nkicc::ir
