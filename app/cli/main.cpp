#include <cstdio>
int main() { std::puts("kvscope-cli"); return 0; }
