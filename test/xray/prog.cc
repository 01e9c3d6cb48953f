// prog.cc -- a small C++ program for the XRay importer's demangling test:
// namespaces, a template's const member, overloads' argument lists and a
// libstdc++ operator, whose names llvm-xray's symbolizer demangles with
// spaces, quotes and angle brackets; the importer must name them the same.
#include <string>
#include <vector>

namespace ns {
template <class T> struct Box {
  T v;
  __attribute__((noinline)) T get() const { return v; }
};
__attribute__((noinline)) int add(int a, int b) { return a + b; }
__attribute__((noinline)) std::string greet(const std::string &s) { return "hi " + s; }
}  // namespace ns

int main() {
  ns::Box<long> b{3};
  std::vector<int> v{1, 2};
  int s = 0;
  for (int x : v) s = ns::add(s, x);
  return (int)(b.get() + s + (long)ns::greet("x").size()) == 0;
}
