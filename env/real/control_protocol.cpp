#include "env/real/control_protocol.hpp"
#include "common/errors.hpp"

#include <nlohmann/json.hpp>

namespace env {
namespace {

using nlohmann::json;

constexpr int kStatsFields = 9;

const char* kind_name(ControlKind k) {
  switch (k) {
    case ControlKind::Round: return "round";
    case ControlKind::Probe: return "probe";
    case ControlKind::Resume: return "resume";
    case ControlKind::EndPolicy: return "end-policy";
    case ControlKind::Abort: return "abort";
  }
  return "?";
}

ControlKind kind_of(const std::string& name) {
  for (ControlKind k : {ControlKind::Round, ControlKind::Probe, ControlKind::Resume, ControlKind::EndPolicy, ControlKind::Abort})
    if (name == kind_name(k)) return k;
  throw common::ProtocolError("unknown control message kind '" + name + "'");
}

env::AverageWeighting weighting_of(const std::string& name) {
  if (const auto w = env::weighting_from_name(name)) return *w;
  throw common::ProtocolError("unknown weighting '" + name + "'");
}

json plan_json(const env::RoundPlan& p) {
  json workers = json::array();
  for (const auto& w : p.workers) workers.push_back({w.batch_size, w.local_steps});
  return {{"aggregation", p.aggregation == env::Aggregation::ModelAverage ? "average" : "gradient"},
          {"weighting", env::weighting_name(p.weighting)},
          {"workers", workers},
          {"server_average_every", p.server_average_every},
          {"data_shares", p.data_shares},
          {"barrier_ms", p.barrier_ms},
          {"outer", p.outer ? json{{"lr", p.outer->lr}, {"momentum", p.outer->momentum}, {"nesterov", p.outer->nesterov}} : json(nullptr)}};
}

env::RoundPlan plan_of(const json& j) {
  env::RoundPlan p;
  p.aggregation = j.at("aggregation").get<std::string>() == "average" ? env::Aggregation::ModelAverage : env::Aggregation::GradientAllReduce;
  p.weighting = weighting_of(j.at("weighting").get<std::string>());
  for (const auto& w : j.at("workers")) p.workers.push_back({w.at(0).get<int>(), w.at(1).get<int>()});
  p.server_average_every = j.at("server_average_every").get<int>();
  p.data_shares = j.at("data_shares").get<std::vector<double>>();
  p.barrier_ms = j.at("barrier_ms").get<double>();
  if (const json& o = j.at("outer"); !o.is_null())
    p.outer = env::OuterOptimizer{o.at("lr").get<double>(), o.at("momentum").get<double>(), o.at("nesterov").get<bool>()};
  return p;
}

}  // namespace

std::string encode(const ControlMessage& m) {
  json j{{"kind", kind_name(m.kind)}, {"seq", m.seq}, {"round", m.round}, {"epoch", m.epoch}, {"clock_ms", m.clock_ms}};
  if (m.kind == ControlKind::Round) j["plan"] = plan_json(m.plan);
  if (m.kind == ControlKind::Probe) j["probe_batch"] = m.probe_batch;
  if (m.kind == ControlKind::Abort) j["reason"] = m.reason;
  return j.dump();
}

ControlMessage decode(const std::string& bytes) {
  try {
    const json j = json::parse(bytes);
    ControlMessage m;
    m.kind = kind_of(j.at("kind").get<std::string>());
    m.seq = j.at("seq").get<std::int64_t>();
    m.round = j.at("round").get<std::int64_t>();
    m.epoch = j.at("epoch").get<int>();
    m.clock_ms = j.at("clock_ms").get<double>();
    if (m.kind == ControlKind::Round) m.plan = plan_of(j.at("plan"));
    if (m.kind == ControlKind::Probe) m.probe_batch = j.at("probe_batch").get<int>();
    if (m.kind == ControlKind::Abort) m.reason = j.at("reason").get<std::string>();
    return m;
  } catch (const json::exception& e) {
    throw common::ProtocolError(std::string("malformed control message: ") + e.what());
  }
}

ControlMessage exchange_control(env::Communicator& comm, const ControlMessage& message, std::int64_t expected_seq) {
  const std::string what = "control message " + std::to_string(expected_seq) + " from rank 0";
  const std::string bytes = broadcast_bytes(comm, comm.rank() == 0 ? encode(message) : std::string(), 0, what);
  if (comm.rank() == 0) return message;
  ControlMessage got = decode(bytes);
  if (got.seq != expected_seq)
    throw common::ProtocolError(comm.describe() + ": expected control message " + std::to_string(expected_seq) + ", got " + std::to_string(got.seq) + " (" +
                        kind_name(got.kind) + ")");
  return got;
}

std::vector<env::RealRoundStats> gather_stats(env::Communicator& comm, const env::RealRoundStats& s, std::int64_t round) {
  const auto& w = s.worker;
  const torch::Tensor mine = torch::tensor({static_cast<double>(s.round), static_cast<double>(w.batch_size), static_cast<double>(w.local_steps),
                                            static_cast<double>(w.samples), w.compute_ms, s.loss_sum, static_cast<double>(s.loss_count),
                                            s.sync_ms, s.epoch_end ? 1.0 : 0.0},
                                           torch::kFloat64);
  const torch::Tensor all = comm.all_gather(mine, "round " + std::to_string(round) + " statistics");
  std::vector<env::RealRoundStats> out(static_cast<std::size_t>(comm.world_size()));
  const auto a = all.accessor<double, 2>();
  for (int r = 0; r < comm.world_size(); ++r) {
    auto& o = out[static_cast<std::size_t>(r)];
    o.round = static_cast<std::int64_t>(a[r][0]);
    if (o.round != round)
      throw common::ProtocolError("rank " + std::to_string(r) + " reports round " + std::to_string(o.round) + " where round " + std::to_string(round) + " was run");
    o.worker.batch_size = static_cast<int>(a[r][1]);
    o.worker.local_steps = static_cast<int>(a[r][2]);
    o.worker.samples = static_cast<int>(a[r][3]);
    o.worker.compute_ms = a[r][4];
    o.loss_sum = a[r][5];
    o.loss_count = static_cast<int>(a[r][6]);
    o.sync_ms = a[r][7];
    o.epoch_end = a[r][8] != 0;
  }
  static_assert(kStatsFields == 9, "the tensor above has kStatsFields entries");
  return out;
}

std::vector<double> gather_probe(env::Communicator& comm, double mine, int batch) {
  const torch::Tensor all = comm.all_gather(torch::tensor({mine}, torch::kFloat64), "probe of batch " + std::to_string(batch));
  std::vector<double> out;
  for (int r = 0; r < comm.world_size(); ++r) out.push_back(all[r][0].item<double>());
  return out;
}

}  // namespace env
