#include "env/sim/epoch_data.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <random>
#include <stdexcept>
#include <string>

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
  consumed_before_reshare_ = 0;
  shard_begin_.clear();
  shard_cursor_.clear();
  shard_end_.clear();
}

namespace {

// Sizes proportional to `shares` adding up to `total`: floors, then one more each by largest
// remainder, ties to the lower worker index, so the split is deterministic.
std::vector<std::int64_t> split_by_shares(std::int64_t total, const std::vector<double>& shares) {
  const double sum = std::accumulate(shares.begin(), shares.end(), 0.0);
  if (!(sum > 0) || std::any_of(shares.begin(), shares.end(), [](double s) { return !(s >= 0) || !std::isfinite(s); }))
    throw std::invalid_argument("data shares must be finite, non-negative and not all zero");
  const std::size_t n = shares.size();
  std::vector<std::int64_t> sizes(n);
  std::vector<std::pair<double, std::size_t>> remainders(n);
  std::int64_t assigned = 0;
  for (std::size_t i = 0; i < n; ++i) {
    const double exact = static_cast<double>(total) * shares[i] / sum;
    sizes[i] = static_cast<std::int64_t>(std::floor(exact));
    assigned += sizes[i];
    remainders[i] = {exact - std::floor(exact), i};
  }
  std::stable_sort(remainders.begin(), remainders.end(), [](const auto& a, const auto& b) { return a.first > b.first; });
  for (std::size_t k = 0; assigned < total; ++k, ++assigned) ++sizes[remainders[k % n].second];
  return sizes;
}

}  // namespace

void EpochData::begin_shards(int epoch, const std::vector<double>& shares) {
  const std::vector<std::int64_t> sizes = split_by_shares(samples_, shares);
  shuffle_for(epoch);
  stream_cursor_ = samples_;
  consumed_before_reshare_ = 0;
  const std::size_t n = shares.size();
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

void EpochData::reshare(const std::vector<double>& shares) {
  if (!sharded()) throw std::invalid_argument("reshare needs a sharded epoch");
  if (shares.size() != shard_end_.size())
    throw std::invalid_argument("reshare: " + std::to_string(shares.size()) + " shares for " + std::to_string(shard_end_.size()) + " shards");
  const std::int64_t used = consumed();
  const std::vector<std::int64_t> sizes = split_by_shares(samples_ - used, shares);
  std::vector<std::int64_t> order;
  order.reserve(order_.size());
  order.insert(order.end(), order_.begin(), order_.begin() + consumed_before_reshare_);  // an earlier reshare's used samples
  for (std::size_t i = 0; i < shard_end_.size(); ++i)
    order.insert(order.end(), order_.begin() + shard_begin_[i], order_.begin() + shard_cursor_[i]);
  for (std::size_t i = 0; i < shard_end_.size(); ++i)
    order.insert(order.end(), order_.begin() + shard_cursor_[i], order_.begin() + shard_end_[i]);
  order_ = std::move(order);
  consumed_before_reshare_ = used;
  std::int64_t begin = used;
  for (std::size_t i = 0; i < sizes.size(); ++i) {
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
  std::int64_t used = consumed_before_reshare_;
  for (std::size_t i = 0; i < shard_end_.size(); ++i) used += shard_cursor_[i] - shard_begin_[i];
  return used;
}

}  // namespace env
