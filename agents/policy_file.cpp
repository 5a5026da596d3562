#include "agents/policy_file.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <set>
#include <sstream>
#include <stdexcept>

#include <caffe2/serialize/inline_container.h>

#include "agents/network_shape.hpp"
#include "agents/zip_records.hpp"
#include "common/atomic_file.hpp"
#include "orchestra/barrier_env.hpp"
#include "common/errors.hpp"

namespace agents {
namespace {

constexpr const char* kFormat = kPolicyFileMarker;
constexpr std::int64_t kFormatVersion = 2;

c10::IValue field(const c10::impl::GenericDict& dict, const std::string& key, const std::string& path) {
  const auto it = dict.find(c10::IValue(key));
  if (it == dict.end()) throw common::DataError(path + ": not an orchestra-a3c policy (no '" + key + "' entry)");
  return it->value();
}

double number(const c10::impl::GenericDict& dict, const std::string& key, const std::string& path) {
  const c10::IValue v = field(dict, key, path);
  if (v.isDouble()) return v.toDouble();
  if (v.isInt()) return static_cast<double>(v.toInt());
  throw common::DataError(path + ": controller." + key + " must be a number");
}

// A count the file stores as an integer: a whole number in [lo, hi]. A hand-edited 1.9, -5 or
// 2^32 + 64 was narrowed to an int without a word (read as 1, or as a 64-wide layer).
std::int64_t whole_number(const c10::IValue& v, const std::string& what, std::int64_t lo, std::int64_t hi, const std::string& path) {
  const std::string range = "a whole number in [" + std::to_string(lo) + ", " + std::to_string(hi) + "]";
  std::int64_t n = 0;
  if (v.isInt()) {
    n = v.toInt();
  } else if (v.isDouble() && std::isfinite(v.toDouble()) && std::floor(v.toDouble()) == v.toDouble() && std::fabs(v.toDouble()) < 9e15) {
    n = static_cast<std::int64_t>(v.toDouble());  // Python's 2.0: whole, and exact in a double
  } else {
    throw common::DataError(path + ": " + what + " must be " + range);
  }
  if (n < lo || n > hi) throw common::DataError(path + ": " + what + " must be " + range + ", got " + std::to_string(n));
  return n;
}

// Widths and sizes beyond any network this toolkit trains: a larger one is a damaged file, and
// would ask for gigabytes before its weights were found missing.
constexpr std::int64_t kMaxWidth = 1 << 16;

std::string text(const c10::impl::GenericDict& dict, const std::string& key, const std::string& path) {
  const c10::IValue v = field(dict, key, path);
  if (!v.isString()) throw common::DataError(path + ": controller." + key + " must be a string");
  return v.toStringRef();
}

// The first line that says something (TorchScript's reports start with an empty one).
std::string first_line(const std::string& message) {
  const std::size_t start = std::min(message.find_first_not_of("\n \t"), message.size());
  const std::size_t end = message.find('\n', start);
  return message.substr(start, end == std::string::npos ? std::string::npos : end - start);
}

// A tensor a pickle names can point past its storage (a crafted offset, size or stride, or a
// truncated record): libtorch does not check, and reading it reads out of bounds. So the bytes it
// spans are checked against its storage before a copy, and its values must be finite floats.
void check_weights(const at::Tensor& t, const std::string& path, const std::string& key) {
  const std::string where = path + ": state_dict." + key;
  if (t.scalar_type() != torch::kFloat) throw common::DataError(where + " must hold float32 values");
  if (t.numel() == 0) return;
  std::int64_t last = t.storage_offset();
  if (last < 0) throw common::DataError(where + " starts before its storage");
  for (std::int64_t d = 0; d < t.dim(); ++d) {
    if (t.stride(d) < 0) throw common::DataError(where + " has a negative stride");
    last += (t.size(d) - 1) * t.stride(d);
  }
  const auto needed = static_cast<std::uint64_t>(last + 1) * static_cast<std::uint64_t>(t.element_size());
  if (!t.has_storage() || t.storage().nbytes() < needed)
    throw common::DataError(where + " reaches past its stored data (" + std::to_string(t.has_storage() ? t.storage().nbytes() : 0) +
                            " bytes, " + std::to_string(needed) + " needed): a damaged file");
  if (!torch::isfinite(t).all().item<bool>()) throw common::DataError(where + " holds values that are not finite");
}

const char* spelling(orchestra::BarrierMove move) { return move == orchestra::BarrierMove::Multiplicative ? "multiplicative" : "additive"; }
const char* spelling(orchestra::DecisionInterval interval) { return interval == orchestra::DecisionInterval::Rounds ? "rounds" : "epoch"; }

PolicyControl read_control(const c10::impl::GenericDict& c, const std::string& path) {
  PolicyControl control;
  const std::string move = text(c, "move", path), interval = text(c, "interval", path);
  if (move != "additive" && move != "multiplicative") throw common::DataError(path + ": controller.move must be additive or multiplicative, got " + move);
  if (interval != "epoch" && interval != "rounds") throw common::DataError(path + ": controller.interval must be epoch or rounds, got " + interval);
  control.move = move == "multiplicative" ? orchestra::BarrierMove::Multiplicative : orchestra::BarrierMove::Additive;
  control.interval = interval == "rounds" ? orchestra::DecisionInterval::Rounds : orchestra::DecisionInterval::Epoch;
  control.unit_ms = number(c, "unit_ms", path);
  control.factor = number(c, "factor", path);
  control.interval_rounds = static_cast<int>(whole_number(field(c, "interval_rounds", path), "controller.interval_rounds", 1, 1 << 30, path));
  control.min_barrier_ms = number(c, "min_T_ms", path);
  control.max_barrier_ms = number(c, "max_T_ms", path);
  control.min_barrier_x_start = number(c, "min_T_x_start", path);
  control.max_barrier_x_start = number(c, "max_T_x_start", path);
  if (c.contains("floor_cap_steps")) control.floor_cap_steps = number(c, "floor_cap_steps", path);
  if (c.contains("min_T_steps")) control.min_barrier_steps = number(c, "min_T_steps", path);
  if (c.contains("T_cap_steps")) control.lcm_cap_steps = number(c, "T_cap_steps", path);
  if (c.contains("T_cap_x_comm")) control.lcm_cap_x_comm = number(c, "T_cap_x_comm", path);
  if (c.contains("T_cap_above_steps")) control.lcm_cap_above_steps = number(c, "T_cap_above_steps", path);
  if (c.contains("weighting")) {
    const std::string weighting = text(c, "weighting", path);
    const auto known = env::weighting_from_name(weighting);
    if (!known) throw common::DataError(path + ": controller.weighting must be uniform, all_workers, samples or fednova, got " + weighting);
    control.weighting = *known;
  }
  if (c.contains("state")) {
    const std::string state = text(c, "state", path);
    const auto known = orchestra::state_features_from_name(state);
    if (!known) throw common::DataError(path + ": controller.state must be base, progress or lead, got " + state);
    control.state_features = *known;
  }
  if (c.contains("start")) {
    const std::string start = text(c, "start", path);
    if (start != "lcm" && start != "planned") throw common::DataError(path + ": controller.start must be lcm or planned, got " + start);
    control.start = start == "planned" ? BarrierStart::Planned : BarrierStart::Lcm;
  }
  if (c.contains("planned_min_T_x_start")) control.planned_min_barrier_x_start = number(c, "planned_min_T_x_start", path);
  if (c.contains("planned_max_T_x_start")) control.planned_max_barrier_x_start = number(c, "planned_max_T_x_start", path);
  // The controller's own checks, so a hand-edited file fails here with its path.
  try {
    check_control(control);
  } catch (const std::invalid_argument& e) {
    throw common::DataError(path + ": " + e.what());
  }
  return control;
}

}  // namespace

void check_control(const PolicyControl& control) {
  orchestra::BarrierControllerOptions options;
  control.apply_to(options);
  orchestra::BarrierController as_trained(options);
  if (control.planned_min_barrier_x_start > 0) options.min_barrier_x_start = control.planned_min_barrier_x_start;
  if (control.planned_max_barrier_x_start > 0) options.max_barrier_x_start = control.planned_max_barrier_x_start;
  try {
    orchestra::BarrierController from_plan(options);
  } catch (const std::invalid_argument& e) {
    // The controller knows only its own bounds; where a planned one stood in, say so by its name.
    std::string text = e.what();
    for (const char* key : {"min_barrier_x_start", "max_barrier_x_start"}) {
      const bool planned = key[1] == 'i' ? control.planned_min_barrier_x_start > 0 : control.planned_max_barrier_x_start > 0;
      const std::size_t at = text.find(key);
      if (planned && at != std::string::npos && (at == 0 || text[at - 1] != '_')) text.insert(at, "planned_");
    }
    throw std::invalid_argument(text);
  }
}

const char* barrier_start_name(BarrierStart start) { return start == BarrierStart::Planned ? "planned" : "lcm"; }

PolicyControl PolicyControl::of(const orchestra::BarrierControllerOptions& o) {
  PolicyControl c;
  c.move = o.move;
  c.unit_ms = o.action_unit_ms;
  c.factor = o.move_factor;
  c.max_move = o.max_move;
  c.interval = o.interval;
  c.interval_rounds = o.interval_rounds;
  c.min_barrier_ms = o.min_barrier_ms;
  c.max_barrier_ms = o.max_barrier_ms;
  c.min_barrier_x_start = o.min_barrier_x_start;
  c.max_barrier_x_start = o.max_barrier_x_start;
  c.floor_cap_steps = o.floor_cap_steps;
  c.min_barrier_steps = o.min_barrier_steps;
  c.lcm_cap_steps = o.lcm_cap_steps;
  c.lcm_cap_x_comm = o.lcm_cap_x_comm;
  c.lcm_cap_above_steps = o.lcm_cap_above_steps;
  c.weighting = o.weighting;
  c.state_features = o.state_features;
  return c;
}

void PolicyControl::apply_to(orchestra::BarrierControllerOptions& o) const {
  o.move = move;
  o.action_unit_ms = unit_ms;
  o.move_factor = factor;
  o.max_move = max_move;
  o.interval = interval;
  o.interval_rounds = interval_rounds;
  o.min_barrier_ms = min_barrier_ms;
  o.max_barrier_ms = max_barrier_ms;
  o.min_barrier_x_start = min_barrier_x_start;
  o.max_barrier_x_start = max_barrier_x_start;
  o.floor_cap_steps = floor_cap_steps;
  o.min_barrier_steps = min_barrier_steps;
  o.lcm_cap_steps = lcm_cap_steps;
  o.lcm_cap_x_comm = lcm_cap_x_comm;
  o.lcm_cap_above_steps = lcm_cap_above_steps;
  o.weighting = weighting;
  o.state_features = state_features;
}

bool PolicyControl::operator==(const PolicyControl& o) const {
  return move == o.move && unit_ms == o.unit_ms && factor == o.factor && max_move == o.max_move && interval == o.interval && interval_rounds == o.interval_rounds &&
         min_barrier_ms == o.min_barrier_ms && max_barrier_ms == o.max_barrier_ms && min_barrier_x_start == o.min_barrier_x_start &&
         max_barrier_x_start == o.max_barrier_x_start && floor_cap_steps == o.floor_cap_steps &&
         min_barrier_steps == o.min_barrier_steps &&
         lcm_cap_steps == o.lcm_cap_steps && lcm_cap_x_comm == o.lcm_cap_x_comm && lcm_cap_above_steps == o.lcm_cap_above_steps && weighting == o.weighting &&
         state_features == o.state_features && start == o.start &&
         planned_min_barrier_x_start == o.planned_min_barrier_x_start && planned_max_barrier_x_start == o.planned_max_barrier_x_start;
}

PolicyControl PolicyControl::as_trained() const {
  PolicyControl trained = *this;
  trained.start = BarrierStart::Lcm;
  trained.planned_min_barrier_x_start = 0;
  trained.planned_max_barrier_x_start = 0;
  return trained;
}

A3cPolicy::A3cPolicy(ActorCritic net, std::int64_t updates, PolicyControl control, std::map<std::string, std::string> training)
    : net_(std::move(net)), updates_(updates), control_(control), training_(std::move(training)) {
  if (net_->spec().actions != orchestra::num_barrier_actions(control_.max_move))
    throw std::invalid_argument("a3c policy: the network has " + std::to_string(net_->spec().actions) + " actions, moves up to " +
                                std::to_string(control_.max_move) + " need " + std::to_string(orchestra::num_barrier_actions(control_.max_move)));
  net_->eval();
}

std::vector<double> A3cPolicy::probabilities(const std::vector<float>& observation) {
  if (static_cast<int>(observation.size()) != observation_size())
    throw std::invalid_argument("a3c policy: observation has " + std::to_string(observation.size()) +
                                " entries, the network expects " + std::to_string(observation_size()));
  torch::NoGradGuard no_grad;
  const torch::Tensor obs =
      torch::from_blob(const_cast<float*>(observation.data()), {1, static_cast<std::int64_t>(observation.size())}, torch::kFloat);
  const torch::Tensor p = torch::softmax(net_->forward(obs).logits, -1).to(torch::kDouble).contiguous();
  return std::vector<double>(p.data_ptr<double>(), p.data_ptr<double>() + p.numel());
}

int A3cPolicy::predict(const std::vector<float>& observation, bool deterministic, std::mt19937_64* rng) {
  const std::vector<double> p = probabilities(observation);
  int index = 0;
  if (deterministic) {
    // Ties go to the lower index, so a tie never depends on the order of a library's max search.
    for (int i = 1; i < static_cast<int>(p.size()); ++i)
      if (p[static_cast<std::size_t>(i)] > p[static_cast<std::size_t>(index)]) index = i;
  } else {
    if (!rng) throw std::invalid_argument("a3c policy: sampling needs a random generator");
    index = sample_index(p, *rng);
  }
  return orchestra::action_from_index(index, control_.max_move);
}

int sample_index(const std::vector<double>& probs, std::mt19937_64& rng) {
  const double u = static_cast<double>(rng() >> 11) * (1.0 / 9007199254740992.0);  // [0, 1), 53 bits
  double cumulative = 0;
  for (std::size_t i = 0; i < probs.size(); ++i) {
    cumulative += probs[i];
    if (u < cumulative) return static_cast<int>(i);
  }
  return static_cast<int>(probs.size()) - 1;  // rounding left the sum a hair under 1
}

void A3cPolicy::save(const std::string& path) const {
  c10::Dict<std::string, at::Tensor> weights;
  for (const auto& item : net_->named_parameters()) weights.insert(item.key(), item.value().detach().clone());
  c10::impl::GenericDict root(c10::StringType::get(), c10::AnyType::get());
  root.insert("format", std::string(kFormat));
  root.insert("format_version", kFormatVersion);
  root.insert("observation_size", static_cast<std::int64_t>(net_->spec().observation_size));
  root.insert("hidden", std::vector<std::int64_t>(net_->spec().hidden.begin(), net_->spec().hidden.end()));
  std::vector<std::int64_t> moves;
  for (int m = -control_.max_move; m <= control_.max_move; ++m) moves.push_back(m);
  root.insert("actions", moves);
  root.insert("updates", updates_);
  c10::impl::GenericDict control(c10::StringType::get(), c10::AnyType::get());
  control.insert("move", std::string(spelling(control_.move)));
  control.insert("unit_ms", control_.unit_ms);
  control.insert("factor", control_.factor);
  control.insert("interval", std::string(spelling(control_.interval)));
  control.insert("interval_rounds", static_cast<std::int64_t>(control_.interval_rounds));
  control.insert("min_T_ms", control_.min_barrier_ms);
  control.insert("max_T_ms", control_.max_barrier_ms);
  control.insert("min_T_x_start", control_.min_barrier_x_start);
  control.insert("max_T_x_start", control_.max_barrier_x_start);
  control.insert("floor_cap_steps", control_.floor_cap_steps);
  control.insert("min_T_steps", control_.min_barrier_steps);
  control.insert("T_cap_steps", control_.lcm_cap_steps);
  control.insert("T_cap_x_comm", control_.lcm_cap_x_comm);
  control.insert("T_cap_above_steps", control_.lcm_cap_above_steps);
  control.insert("weighting", std::string(env::weighting_name(control_.weighting)));
  control.insert("state", std::string(orchestra::state_features_name(control_.state_features)));
  control.insert("start", std::string(barrier_start_name(control_.start)));
  control.insert("planned_min_T_x_start", control_.planned_min_barrier_x_start);
  control.insert("planned_max_T_x_start", control_.planned_max_barrier_x_start);
  root.insert("controller", control);
  c10::Dict<std::string, std::string> training;
  for (const auto& [key, value] : training_) training.insert(key, value);
  root.insert("training", training);
  root.insert("state_dict", weights);
  common::write_file_atomic(path, torch::pickle_save(c10::IValue(root)));
}

namespace {

// libtorch gives each tensor storage the byte size the pickle declares, over the buffer of its
// record as stored, whatever that record's length: a record cut short or a declared size too
// large would be read past its end. A file libtorch or PyTorch wrote stores each storage whole,
// so the storages' declared sizes are the data records' sizes, one for one; anything else is
// refused before a weight is read.
void check_storages_against_records(const c10::IValue& value, const std::vector<char>& bytes, const std::string& path) {
  if (!value.isGenericDict()) return;  // from_pickle says what is wrong
  const c10::impl::GenericDict root = value.toGenericDict();
  const auto weights = root.find("state_dict");
  if (weights == root.end() || !weights->value().isGenericDict()) return;
  std::set<const void*> seen;
  std::vector<std::uint64_t> declared;
  for (const auto& item : weights->value().toGenericDict()) {
    if (!item.value().isTensor() || !item.value().toTensor().has_storage()) continue;
    const at::Storage storage = item.value().toTensor().storage();
    if (seen.insert(storage.unsafeGetStorageImpl()).second) declared.push_back(storage.nbytes());
  }
  std::istringstream in(std::string(bytes.begin(), bytes.end()));
  caffe2::serialize::PyTorchStreamReader reader(&in);
  std::vector<std::uint64_t> stored;
  for (const std::string& name : reader.getAllRecords())
    if (name.rfind("data/", 0) == 0) stored.push_back(std::get<1>(reader.getRecord(name)));
  std::sort(declared.begin(), declared.end());
  std::sort(stored.begin(), stored.end());
  if (declared != stored)
    throw common::DataError(path + ": the weights' data records do not hold the bytes the file declares for them (" +
                            std::to_string(stored.size()) + " records for " + std::to_string(declared.size()) +
                            " storages, of other sizes): a damaged file");
}

// A policy's pickle (data.pkl: its keys, the controller, the record of its training) is about
// 2 KB. libtorch's unpickler recurses with the nesting of what it reads, and a crafted pickle of
// lists nested 200,000 deep overflowed the stack (SIGSEGV); 128 KiB holds at most about 64,000
// levels, which it reads and refuses cleanly.
constexpr std::uint64_t kMaxPickleBytes = 128 * 1024;

void check_pickle_size(const std::vector<ZipRecord>& records, const std::string& path) {
  for (const ZipRecord& r : records) {
    const bool pickle = r.name == "data.pkl" || (r.name.size() > 9 && r.name.compare(r.name.size() - 9, 9, "/data.pkl") == 0);
    if (pickle && std::max(r.size, r.stored_size) > kMaxPickleBytes)
      throw common::DataError(path + ": not a policy file this toolkit reads (its pickle is " + std::to_string(r.size) +
                              " bytes; a policy's is about 2 KB, and at most " + std::to_string(kMaxPickleBytes) + " are read)");
  }
}

}  // namespace

A3cPolicy A3cPolicy::load(const std::string& path) {
  c10::IValue value;
  try {
    const std::vector<char> bytes = common::read_file_bytes(path);
    const std::vector<ZipRecord> records = read_zip_records(bytes);
    check_pickle_size(records, path);
    value = torch::pickle_load(bytes);
    check_storages_against_records(value, bytes, path);
    if (const auto damaged = first_crc_mismatch(bytes, records))
      throw common::DataError(path + ": a damaged file: the bytes of " + *damaged +
                              " do not match their CRC-32 (changed on disk or in transfer); copy the policy again");
  } catch (const c10::Error& e) {
    throw common::DataError(path + ": not a readable policy file (" + first_line(e.what_without_backtrace()) + ")");
  } catch (const common::Error&) {
    throw;
  } catch (const std::exception& e) {
    // A damaged pickle fails in TorchScript's type parser (a multi-line report), an index check
    // or a size it cannot allocate: each is this file's damage, said in one line.
    throw common::DataError(path + ": not a readable policy file (" + first_line(e.what()) + ")");
  }
  // A field of an unexpected type makes libtorch's accessors throw c10::Error: one line with the path.
  try {
    return from_pickle(value, path);
  } catch (const c10::Error& e) {
    throw common::DataError(path + ": not an orchestra-a3c policy (" + first_line(e.what_without_backtrace()) + ")");
  } catch (const common::Error&) {
    throw;
  } catch (const std::exception& e) {
    throw common::DataError(path + ": not an orchestra-a3c policy (" + first_line(e.what()) + ")");
  }
}

A3cPolicy A3cPolicy::from_pickle(const c10::IValue& value, const std::string& path) {
  if (!value.isGenericDict()) throw common::DataError(path + ": not an orchestra-a3c policy (expected a dict)");
  const c10::impl::GenericDict root = value.toGenericDict();
  if (field(root, "format", path).toStringRef() != kFormat) throw common::DataError(path + ": not an orchestra-a3c policy (format)");
  const std::int64_t version = field(root, "format_version", path).toInt();
  if (version != kFormatVersion)
    throw common::DataError(path + ": policy format version " + std::to_string(version) + ", this build reads " +
                             std::to_string(kFormatVersion) +
                             (version < kFormatVersion ? " (the barrier state changed: retrain with orchestra train)" : ""));
  ActorCriticSpec spec;
  spec.observation_size = static_cast<int>(whole_number(field(root, "observation_size", path), "observation_size", 1, kMaxWidth, path));
  spec.hidden.clear();
  // torch::pickle_save writes an int list; torch.save from Python a generic list of ints.
  const c10::IValue hidden = field(root, "hidden", path);
  if (!hidden.isList() || hidden.toListRef().size() > 64) throw common::DataError(path + ": hidden must be a list of at most 64 layer widths");
  for (const c10::IValue& h : hidden.toListRef()) {
    spec.hidden.push_back(static_cast<int>(whole_number(h, "each of hidden's layer widths", 1, kMaxWidth, path)));
  }
  // The moves of the outputs: -m ... m in order (files before moves of two sizes: [-1, 0, 1]).
  const c10::IValue actions = field(root, "actions", path);
  if (!actions.isList()) throw common::DataError(path + ": actions must be a list of moves");
  const auto moves = actions.toListRef();
  const int max_move = static_cast<int>(moves.size() / 2);
  bool contiguous = moves.size() % 2 == 1 && max_move >= 1 && max_move <= orchestra::kMaxBarrierMove;
  for (std::size_t i = 0; contiguous && i < moves.size(); ++i)
    contiguous = moves[i].isInt() && moves[i].toInt() == static_cast<std::int64_t>(i) - max_move;
  if (!contiguous)
    throw common::DataError(path + ": actions must be the moves -m ... m in order, m in [1, " + std::to_string(orchestra::kMaxBarrierMove) + "]");
  spec.actions = orchestra::num_barrier_actions(max_move);
  ActorCritic net(spec);
  const c10::impl::GenericDict weights = field(root, "state_dict", path).toGenericDict();
  torch::NoGradGuard no_grad;
  for (auto& item : net->named_parameters()) {
    const c10::IValue t = field(weights, item.key(), path);
    if (!t.isTensor() || t.toTensor().sizes() != item.value().sizes())
      throw common::DataError(path + ": state_dict." + item.key() + " has the wrong shape for the declared network");
    check_weights(t.toTensor(), path, item.key());
    item.value().copy_(t.toTensor());
  }
  if (weights.size() != net->named_parameters().size())
    throw common::DataError(path + ": state_dict has " + std::to_string(weights.size()) + " tensors, the network " +
                             std::to_string(net->named_parameters().size()));
  const c10::IValue control = field(root, "controller", path);
  if (!control.isGenericDict()) throw common::DataError(path + ": controller must be a dict");
  std::map<std::string, std::string> training;
  const c10::IValue trained = field(root, "training", path);
  if (!trained.isGenericDict()) throw common::DataError(path + ": training must be a dict");
  for (const auto& item : trained.toGenericDict()) {
    if (!item.key().isString() || !item.value().isString()) throw common::DataError(path + ": training must map strings to strings");
    training[item.key().toStringRef()] = item.value().toStringRef();
  }
  PolicyControl read = read_control(control.toGenericDict(), path);
  read.max_move = max_move;
  const std::int64_t updates = whole_number(field(root, "updates", path), "updates", 0, std::numeric_limits<std::int64_t>::max(), path);
  return A3cPolicy(net, updates, read, std::move(training));
}

A3cPolicy load_policy_of_shape(const std::string& path, const ActorCriticSpec& shape) {
  A3cPolicy policy = A3cPolicy::load(path);
  const ActorCriticSpec& trained = policy.network()->spec();
  if (!same_shape(trained, shape))
    throw std::invalid_argument(path + " is a network of " + shape_text(trained) + "; this training's is " + shape_text(shape));
  return policy;
}

}  // namespace agents
