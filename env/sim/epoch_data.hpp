// Which training samples each worker uses in an epoch. Under gradient all-reduce the epoch is one
// shuffled stream split into global batches (LBB, SSGD); under model averaging each worker owns a
// contiguous shard of the shuffled set, sized by its data share (Orchestra 3.1.2).
#pragma once

#include <cstdint>
#include <vector>

namespace env {

struct IndexSpan {
  const std::int64_t* data = nullptr;
  std::int64_t size = 0;
};

class EpochData {
 public:
  // `shuffle` false keeps the identity order (timing-only runs never look at the samples).
  EpochData(std::int64_t samples, std::uint64_t seed, bool shuffle);

  // Starts epoch `epoch` as one stream.
  void begin_stream(int epoch);
  // Starts epoch `epoch` with shards proportional to `shares` (non-negative, not all zero). Sizes
  // are rounded by largest remainder so they add up to the whole set.
  void begin_shards(int epoch, const std::vector<double>& shares);

  IndexSpan take_stream(std::int64_t count);
  IndexSpan take_shard(int worker, std::int64_t count);

  std::int64_t stream_remaining() const { return samples_ - stream_cursor_; }
  std::int64_t shard_remaining(int worker) const;
  std::int64_t shard_size(int worker) const;
  bool exhausted() const;
  bool sharded() const { return !shard_end_.empty(); }
  std::int64_t samples() const { return samples_; }
  std::int64_t consumed() const;

 private:
  void shuffle_for(int epoch);

  std::int64_t samples_;
  std::uint64_t seed_;
  bool shuffle_;
  std::vector<std::int64_t> order_;
  std::int64_t stream_cursor_ = 0;
  std::vector<std::int64_t> shard_begin_, shard_cursor_, shard_end_;
};

}  // namespace env
