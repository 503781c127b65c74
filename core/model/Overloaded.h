#pragma once
// The usual visitor helper: std::visit(Overloaded{[](const A&) {...}, [](const B&) {...}}, v).
namespace kvscope {

template <class... Ts>
struct Overloaded : Ts... {
  using Ts::operator()...;
};
// Spelled out for clang < 17 (clazy and clang-tidy from Debian 12 are clang 14), which lacks
// aggregate class template argument deduction.
template <class... Ts>
Overloaded(Ts...) -> Overloaded<Ts...>;

}  // namespace kvscope
