#pragma once
// What a long job off the GUI thread (a what-if fork, a router's rebuild) owes the rest of the
// process: it yields the CPU to the run and the console, and gives the heap it freed back.
namespace kvscope {

// Lowers the calling thread's scheduling priority (nice +10 on Linux; nothing elsewhere): on a
// 2-core laptop a preview's fork must not starve the run it forecasts or the console's repaints.
void lowerThisThreadsPriority();

// Hands freed heap pages back to the system (glibc keeps them in its arenas: a 64-D preview's
// hundreds of MB stayed with the process after Revert).
void giveFreeHeapBack();

}  // namespace kvscope
