#pragma once
// The usual visitor helper: std::visit(Overloaded{[](const A&) {...}, [](const B&) {...}}, v).
namespace kvscope {

template <class... Ts>
struct Overloaded : Ts... {
  using Ts::operator()...;
};

}  // namespace kvscope
