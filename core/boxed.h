// Boxed<T>: a T kept on the heap, with the value semantics of a plain member
// (copies copy the T). For members that most elements of a big array leave
// empty: a Graph holds ~80k Values of which ~40% are tensors, and ~1% of its
// nodes carry communication attributes. Inline, those members were ~60% of
// the Graph's memory; boxed, an empty one costs a pointer.
//
// Reading an empty box through a const reference gives a default T (what the
// inline member held before); writing through a mutable one creates the T.
// has_value() / operator bool say whether a T was ever set, for members that
// were std::optional.
#pragma once

#include <memory>
#include <utility>

namespace tracetwin::core {

template <typename T>
class Boxed {
 public:
  Boxed() = default;
  Boxed(const T& value) : p_(std::make_unique<T>(value)) {}        // NOLINT: implicit like T
  Boxed(T&& value) : p_(std::make_unique<T>(std::move(value))) {}  // NOLINT
  Boxed(const Boxed& other) : p_(other.p_ ? std::make_unique<T>(*other.p_) : nullptr) {}
  Boxed(Boxed&&) noexcept = default;
  Boxed& operator=(const Boxed& other) {
    if (this != &other) p_ = other.p_ ? std::make_unique<T>(*other.p_) : nullptr;
    return *this;
  }
  Boxed& operator=(Boxed&&) noexcept = default;
  Boxed& operator=(const T& value) {
    p_ = std::make_unique<T>(value);
    return *this;
  }
  Boxed& operator=(T&& value) {
    p_ = std::make_unique<T>(std::move(value));
    return *this;
  }

  bool has_value() const { return p_ != nullptr; }
  explicit operator bool() const { return has_value(); }
  T& emplace() {
    p_ = std::make_unique<T>();
    return *p_;
  }
  void reset() { p_.reset(); }

  const T& operator*() const { return p_ ? *p_ : empty(); }
  const T* operator->() const { return &**this; }
  T& operator*() { return p_ ? *p_ : emplace(); }
  T* operator->() { return &**this; }
  // So that code written for the inline member (functions taking a
  // const T&) reads on unchanged. Only const: a conversion that created the
  // T would grow every Value it is applied to.
  operator const T&() const { return **this; }  // NOLINT(google-explicit-constructor)

 private:
  static const T& empty() {
    static const T kEmpty{};
    return kEmpty;
  }
  std::unique_ptr<T> p_;
};

}  // namespace tracetwin::core
