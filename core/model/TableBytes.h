#pragma once
// Bytes an absl flat table holds: one slot and one control byte per bucket (capacity(), not
// size(): a table grows in powers of two and keeps its buckets). The memory counts that
// bench_cluster_scale prints per resident block.
#include <cstddef>

namespace kvscope {

template <typename FlatTable>
std::size_t flatTableBytes(const FlatTable& table) {
  return table.capacity() * (sizeof(typename FlatTable::value_type) + 1);
}

}  // namespace kvscope
