#pragma once
// Asks glibc to back the heap with transparent huge pages, by starting the program again with
// GLIBC_TUNABLES=glibc.malloc.hugetlb=1 (glibc reads its tunables only when a process starts; no
// mallopt sets this one).
//
// Why: the twin's state is a few hundred MiB of block-hash runs that grow a turn at a time. With
// 4 KiB pages a 64-D simulated hour takes ~33,000 page faults, a quarter of its time on this
// project's 2-core VMs (bench_cluster_scale: 1.2 s -> 0.95 s with huge pages). The kernel decides:
// with THP "never" nothing changes, and RSS grows by a few percent at most (2 MiB granules).
//
// Call it first in main(), before any thread starts. It returns (and the program runs as it is)
// when the tunable is already set by anyone, when KVSCOPE_HUGE_PAGES=0, off Linux/glibc, or when
// exec fails; otherwise it does not return.
namespace kvscope {

void relaunchWithHugePageHeap(char** argv);

}  // namespace kvscope
