// Which training samples each worker uses in an epoch. Under gradient all-reduce the epoch is one
// shuffled stream split into global batches (LBB, SSGD); under model averaging each worker owns a
// contiguous shard of the shuffled set, sized by its data share (Orchestra 3.1.2).
#pragma once

#include <cstdint>
#include <vector>

namespace env {

// How an epoch's shards are dealt under model averaging. Epoch: each worker's shard is fixed when
// the epoch opens (Orchestra 3.1.2 sets the shares once an epoch), so a worker that slows down
// mid-epoch is left holding data after the others have used theirs, and the epoch ends with rounds
// it trains alone. Rebalance: when a worker taking part in a round has less data left than the
// round needs while another holds more than its round, the samples left in the epoch are shared
// out again by the same shares (round_rules.hpp, rebalance_shards), so the epoch ends together.
// Steal: work stealing, only towards faster workers: when a worker runs short while one that
// takes fewer samples a round (a slower one) holds more than its round, the samples left are split
// in proportion to each worker's samples a round, so that all finish in about as many rounds. A
// tail of fast workers (slow ones ran short first: often one server, over its fast link) is kept.
enum class ShardRule { Epoch, Rebalance, Steal };
inline constexpr ShardRule kShardRules[] = {ShardRule::Epoch, ShardRule::Rebalance, ShardRule::Steal};
inline const char* shard_rule_name(ShardRule r) {
  switch (r) {
    case ShardRule::Epoch: return "epoch";
    case ShardRule::Rebalance: return "rebalance";
    case ShardRule::Steal: return "steal";
  }
  return "epoch";
}

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

  // Shares the samples left in the sharded epoch out again, proportional to `shares` (one per
  // worker, as begin_shards), each new shard a contiguous run of what is left; the order stays a
  // permutation of the set, the samples already used first. Throws std::invalid_argument as
  // begin_shards, and for a list whose size is not the number of shards.
  void reshare(const std::vector<double>& shares);

  IndexSpan take_stream(std::int64_t count);
  IndexSpan take_shard(int worker, std::int64_t count);

  std::int64_t stream_remaining() const { return samples_ - stream_cursor_; }
  std::int64_t shard_remaining(int worker) const;
  std::int64_t shard_size(int worker) const;  // since the epoch opened or the last reshare
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
  std::int64_t consumed_before_reshare_ = 0;
};

}  // namespace env
