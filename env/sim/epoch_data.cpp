#include "env/sim/epoch_data.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <random>
#include <stdexcept>

#include "env/sim/cluster.hpp"

namespace env {

EpochData::EpochData(std::int64_t samples, std::uint64_t seed, bool shuffle)
    : samples_(samples), seed_(seed), shuffle_(shuffle), order_(static_cast<std::size_t>(samples)) {
  std::iota(order_.begin(), order_.end(), 0);
}

void EpochData::shuffle_for(int epoch) {
  if (!shuffle_) return;
  std::iota(order_.begin(), order_.end(), 0);
  std::mt19937_64 rng(derive_seed(seed_, 100000 + static_cast<std::uint64_t>(epoch)));
  std::shuffle(order_.begin(), order_.end(), rng);
}

void EpochData::begin_stream(int epoch) {
  shuffle_for(epoch);
  stream_cursor_ = 0;
  shard_begin_.clear();
  shard_cursor_.clear();
  shard_end_.clear();
}

void EpochData::begin_shards(int epoch, const std::vector<double>& shares) {
  const double total = std::accumulate(shares.begin(), shares.end(), 0.0);
  if (!(total > 0) || std::any_of(shares.begin(), shares.end(), [](double s) { return !(s >= 0) || !std::isfinite(s); }))
    throw std::invalid_argument("data shares must be finite, non-negative and not all zero");
  shuffle_for(epoch);
  stream_cursor_ = samples_;
  const std::size_t n = shares.size();
  std::vector<std::int64_t> sizes(n);
  std::vector<std::pair<double, std::size_t>> remainders(n);
  std::int64_t assigned = 0;
  for (std::size_t i = 0; i < n; ++i) {
    const double exact = static_cast<double>(samples_) * shares[i] / total;
    sizes[i] = static_cast<std::int64_t>(std::floor(exact));
    assigned += sizes[i];
    remainders[i] = {exact - std::floor(exact), i};
  }
  // Largest remainder first; ties to the lower worker index, so the split is deterministic.
  std::stable_sort(remainders.begin(), remainders.end(), [](const auto& a, const auto& b) { return a.first > b.first; });
  for (std::size_t k = 0; assigned < samples_; ++k, ++assigned) ++sizes[remainders[k % n].second];
  shard_begin_.assign(n, 0);
  shard_end_.assign(n, 0);
  std::int64_t begin = 0;
  for (std::size_t i = 0; i < n; ++i) {
    shard_begin_[i] = begin;
    begin += sizes[i];
    shard_end_[i] = begin;
  }
  shard_cursor_ = shard_begin_;
}

IndexSpan EpochData::take_stream(std::int64_t count) {
  const std::int64_t take = std::min(count, stream_remaining());
  IndexSpan span{order_.data() + stream_cursor_, take};
  stream_cursor_ += take;
  return span;
}

IndexSpan EpochData::take_shard(int worker, std::int64_t count) {
  const auto i = static_cast<std::size_t>(worker);
  const std::int64_t take = std::min(count, shard_end_[i] - shard_cursor_[i]);
  IndexSpan span{order_.data() + shard_cursor_[i], take};
  shard_cursor_[i] += take;
  return span;
}

std::int64_t EpochData::shard_remaining(int worker) const {
  const auto i = static_cast<std::size_t>(worker);
  return i < shard_end_.size() ? shard_end_[i] - shard_cursor_[i] : 0;
}

std::int64_t EpochData::shard_size(int worker) const {
  const auto i = static_cast<std::size_t>(worker);
  return i < shard_end_.size() ? shard_end_[i] - shard_begin_[i] : 0;
}

bool EpochData::exhausted() const {
  if (!sharded()) return stream_remaining() == 0;
  for (std::size_t i = 0; i < shard_end_.size(); ++i)
    if (shard_cursor_[i] < shard_end_[i]) return false;
  return true;
}

std::int64_t EpochData::consumed() const {
  if (!sharded()) return stream_cursor_;
  std::int64_t used = 0;
  for (std::size_t i = 0; i < shard_end_.size(); ++i) used += shard_cursor_[i] - shard_begin_[i];
  return used;
}

}  // namespace env
