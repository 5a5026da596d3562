// The shared pieces: the YAML reader's duplicate-key check and typed options, the atomic writer,
// and the exit codes the error base carries.
#include <doctest/doctest.h>

#include <sys/stat.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>
#include <sys/wait.h>
#include <unistd.h>

#include "common/atomic_file.hpp"
#include "common/errors.hpp"
#include "common/folder_lock.hpp"
#include "common/json_diff.hpp"
#include "common/json_file.hpp"
#include "common/leftovers.hpp"
#include "common/names.hpp"
#include "common/yaml_file.hpp"
#include "common/yaml_reader.hpp"

namespace {

enum class Color { Red, Blue };

std::string error_of(const std::string& yaml) {
  try {
    common::YamlReader r(YAML::Load(yaml), "x.yaml", "");
    r.integer("seed", 0, 0, 100);
    r.reject_unknown_keys();
  } catch (const common::ConfigError& e) {
    return e.what();
  }
  return "";
}

}  // namespace

TEST_CASE("yaml: a key given twice is a config error naming both lines") {
  CHECK(error_of("seed: 1\nname: x\nseed: 2\n") == "x.yaml:3: seed: duplicate key (first given on line 1)");
  // Nested mappings are checked when they are read.
  common::YamlReader top(YAML::Load("training:\n  lr: 0.1\n  lr: 0.2\n"), "x.yaml", "");
  CHECK_THROWS_WITH_AS(top.child("training"), "x.yaml:3: training.lr: duplicate key (first given on line 2)", common::ConfigError);
  CHECK(error_of("seed: 1\nname: x\n").find("name: unknown key") != std::string::npos);
}

TEST_CASE("yaml: option() maps spellings to a typed enum, records the spelling, and lists them on error") {
  common::YamlReader r(YAML::Load("color: blue\n"), "x.yaml", "");
  CHECK(r.option("color", Color::Red, {{"red", Color::Red}, {"blue", Color::Blue}}) == Color::Blue);
  CHECK(r.resolved()["color"] == "blue");
  common::YamlReader d(YAML::Load("{}"), "x.yaml", "");
  CHECK(d.option("color", Color::Red, {{"red", Color::Red}, {"blue", Color::Blue}}) == Color::Red);
  CHECK(d.resolved()["color"] == "red");
  common::YamlReader bad(YAML::Load("color: green\n"), "x.yaml", "");
  CHECK_THROWS_WITH_AS(bad.option("color", Color::Red, {{"red", Color::Red}, {"blue", Color::Blue}}),
                       "x.yaml:1: color: expected one of red, blue, got 'green'", common::ConfigError);
}

TEST_CASE("atomic file: writes whole, replaces, leaves no temporary, and reads back") {
  const auto dir = std::filesystem::temp_directory_path() / ("common-atomic-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  const std::string path = (dir / "f.txt").string();
  common::write_file_atomic(path, std::string("first"));
  common::write_file_atomic(path, std::string("second\n"));
  const auto bytes = common::read_file_bytes(path);
  CHECK(std::string(bytes.begin(), bytes.end()) == "second\n");
  int files = 0;
  for (const auto& entry : std::filesystem::directory_iterator(dir)) files += entry.is_regular_file();
  CHECK(files == 1);
  CHECK_THROWS_WITH_AS(common::write_file_atomic((dir / "missing/f.txt").string(), std::string("x")),
                       doctest::Contains("missing/f.txt: cannot write"), std::runtime_error);
  CHECK_THROWS_WITH_AS(common::read_file_bytes((dir / "none").string()), doctest::Contains("none: cannot read"), std::runtime_error);
  std::filesystem::remove_all(dir);
}

TEST_CASE("json file: the document, or one data error naming the file and saying what is wrong") {
  namespace fs = std::filesystem;
  const auto dir = fs::temp_directory_path() / ("common-json-" + std::to_string(::getpid()));
  fs::create_directories(dir / "folder.json");
  const auto write = [&](const std::string& name, const std::string& text) {
    common::write_file_atomic((dir / name).string(), text);
    return (dir / name).string();
  };
  CHECK(common::read_json_file(write("good.json", "{\"a\": [1, 2.5]}")) == nlohmann::json{{"a", {1, 2.5}}});
  const auto fails_with = [](const std::string& path, const std::string& message) {
    CHECK_THROWS_WITH_AS(common::read_json_file(path), doctest::Contains((path + message).c_str()), common::DataError);
  };
  fails_with((dir / "none.json").string(), ": cannot read (No such file or directory)");
  fails_with((dir / "folder.json").string(), ": is a folder, not a file");  // not "empty input"
  fails_with(write("bad.json", "{\"a\": "), ": not valid JSON ([json.exception.parse_error.101]");
  fails_with(write("huge.json", "[1e999]"), ": not valid JSON ([json.exception.out_of_range.406]");
  fails_with(write("empty.json", ""), ": not valid JSON (");
  fs::remove_all(dir);
}

TEST_CASE("yaml file: the document, or one config error naming the file (and line) and saying what is wrong") {
  namespace fs = std::filesystem;
  const auto dir = fs::temp_directory_path() / ("common-yaml-" + std::to_string(::getpid()));
  fs::create_directories(dir / "folder.yaml");
  const auto write = [&](const std::string& name, const std::string& text) {
    common::write_file_atomic((dir / name).string(), text);
    return (dir / name).string();
  };
  CHECK(common::read_yaml_file(write("good.yaml", "a: [1, 2]\n"))["a"][1].as<int>() == 2);
  const auto fails_with = [](const std::string& path, const std::string& message) {
    CHECK_THROWS_WITH_AS(common::read_yaml_file(path), (path + message).c_str(), common::ConfigError);
  };
  fails_with((dir / "none.yaml").string(), ": no such config file");
  // A secret is its owner's from its first byte (the file is created so, not chmod-ed after).
  common::write_file_atomic((dir / "secret").string(), std::string("key"), common::FileAccess::OwnerOnly);
  CHECK(fs::status(dir / "secret").permissions() == (fs::perms::owner_read | fs::perms::owner_write));
  fails_with((dir / "folder.yaml").string(), ": is a directory, not a config file");  // not libstdc++'s "basic_filebuf::underflow"
  REQUIRE(::mkfifo((dir / "fifo.yaml").c_str(), 0600) == 0);  // it blocked the reader for good
  fails_with((dir / "fifo.yaml").string(), ": is not a regular file (a FIFO, socket or device), not a config file");
  CHECK_THROWS_WITH_AS(common::read_file_bytes((dir / "fifo.yaml").string()), doctest::Contains("is not a regular file"), common::DataError);
  fails_with(write("bad.yaml", "a: 1\nb: [1, 2\n"), ":3: not valid YAML: end of sequence flow not found");
  // A tab that indents: yaml-cpp says only "illegal map value".
  fails_with(write("tab.yaml", "name: x\ntraining:\n\tepochs: 2\n"),
             ":3: not valid YAML: illegal map value (line 3 is indented with a tab: YAML indents with spaces only)");
  // yaml-cpp's Load read the first document and dropped the second without a word.
  fails_with(write("two.yaml", "a: 1\n---\na: 2\n"), ":3: a second YAML document: one config per file");
  CHECK(common::read_yaml_file(write("trailing.yaml", "a: 1\n---\n"))["a"].as<int>() == 1);  // an empty one says nothing
  CHECK(common::parse_yaml_text("", "empty.yaml").IsNull());
  CHECK(common::parse_yaml_text("# a comment\n---\na: 1\n", "start.yaml")["a"].as<int>() == 1);  // a first document's own marker
  // yaml-cpp's LoadAll loops forever on this input (found by fuzzing): the reader must return.
  std::ifstream corpus(std::string(ORCHESTRA_SOURCE_DIR) + "/fuzz/corpus/config/loadall-hang.yaml");
  REQUIRE(corpus);
  const std::string looping((std::istreambuf_iterator<char>(corpus)), std::istreambuf_iterator<char>());
  try {
    common::parse_yaml_text(looping, "loop.yaml");
  } catch (const common::ConfigError&) {
  }
  fs::remove_all(dir);
}

TEST_CASE("replace folder: the new folder in place of the old, or where there was none, nothing else left") {
  namespace fs = std::filesystem;
  const auto dir = fs::temp_directory_path() / ("common-replace-" + std::to_string(::getpid()));
  fs::create_directories(dir / "target");
  common::write_file_atomic((dir / "target/old.txt").string(), std::string("old"));
  fs::create_directories(dir / ".staging");
  common::write_file_atomic((dir / ".staging/new.txt").string(), std::string("new"));
  common::replace_folder((dir / ".staging").string(), (dir / "target").string());
  CHECK(fs::exists(dir / "target/new.txt"));
  CHECK_FALSE(fs::exists(dir / "target/old.txt"));
  std::vector<std::string> left;
  for (const auto& entry : fs::directory_iterator(dir)) left.push_back(entry.path().filename().string());
  CHECK(left == std::vector<std::string>{"target"});  // the old folder removed, no staging or aside name
  fs::create_directories(dir / ".second");
  common::replace_folder((dir / ".second").string(), (dir / "fresh").string());
  CHECK(fs::is_directory(dir / "fresh"));
  CHECK_FALSE(fs::exists(dir / ".second"));
  CHECK_THROWS_WITH_AS(common::replace_folder((dir / ".none").string(), (dir / "other").string()),
                       doctest::Contains("other: cannot put the new folder in place"), std::runtime_error);
  fs::remove_all(dir);
}

TEST_CASE("errors: what the user gave exits 2, a failure at run time exits 1, each with its kind") {
  CHECK(common::ConfigError("x").exit_code() == 2);
  CHECK(common::DataError("x").exit_code() == 2);
  CHECK(common::UsageError("x").exit_code() == 2);
  CHECK(common::PlanError("x").exit_code() == 1);
  CHECK(common::CommError("x").exit_code() == 1);
  CHECK(std::string(common::ConfigError("x").kind()) == "config error");
  const common::Error& base = common::PlotError("gnuplot failed");
  CHECK(std::string(base.what()) == "gnuplot failed");
}

// Issue 39: the one rule for names that become path components.
TEST_CASE("names: each case a path component must not be, refused with why, names are accepted as they are") {
  struct Case {
    std::string name;
    const char* problem;
  };
  const Case refused[] = {
      {"", "is empty"},
      {".", "is '.', which names the folder it is in"},
      {"..", "is '..', which names the folder above"},
      {"../x", "holds '/', a path separator"},
      {"a/b", "holds '/', a path separator"},
      {"/abs", "holds '/', a path separator"},
      {"a\\b", "holds '\\', a path separator"},
      {"tab\there", "holds a control character (byte 0x09)"},
      {"line\nbreak", "holds a control character (byte 0x0a)"},
      {std::string("nul\0x", 5), "holds a control character (byte 0x00)"},
      {"del\x7f", "holds a control character (byte 0x7f)"},
      {".hidden", "starts with '.'"},
      {"a,b", "holds ','"},
      {"say \"x\"", "holds '\"'"},
      {std::string(201, 'n'), "is 201 bytes long (at most 200)"},
  };
  for (const auto& c : refused) {
    CAPTURE(common::quoted_name(c.name));
    const auto problem = common::name_problem(c.name);
    REQUIRE(problem);
    CHECK(problem->find(c.problem) == 0);
  }
  for (const std::string& ok : std::vector<std::string>{"dsgd", "fixed-t-T_ms=200", "a3c:run-1", "x..y", "node-3.gpu-0", "with space", "ünïcode", std::string(200, 'n')}) {
    CAPTURE(ok);
    CHECK_FALSE(common::name_problem(ok));
  }
  CHECK(common::quoted_name("a\nb\x01") == "'a\\nb\\x01'");
  CHECK(common::first_duplicate({"a", "b", "a"}) == std::optional<std::string>("a"));
  CHECK_FALSE(common::first_duplicate({"a", "b"}));
}

TEST_CASE("json differences: the keys that differ, as dotted paths, with before and now") {
  const nlohmann::json a = {{"seed", 1}, {"training", {{"lr", 0.05}, {"epochs", 2}}}, {"model", {{"hidden", {32}}}}};
  nlohmann::json b = a;
  CHECK(common::differing_keys(a, b).empty());
  b["training"]["lr"] = 0.1;
  b["model"]["hidden"] = {16};
  b["extra"] = true;
  CHECK(common::differing_keys(a, b) == std::vector<std::string>{"extra", "model.hidden", "training.lr"});
  CHECK(common::describe_differences(a, b) == "extra (absent, now true), model.hidden ([32], now [16]), training.lr (0.05, now 0.1)");
  CHECK(common::describe_differences(a, b, 1) == "extra (absent, now true) and 2 more");
}

TEST_CASE("folder lock: a folder inside or around one another process holds is refused, this process's own nesting is not") {
  namespace fs = std::filesystem;
  const auto base = fs::temp_directory_path() / ("common-nested-" + std::to_string(::getpid()));
  fs::remove_all(base);
  const std::string outer = (base / "out").string(), inner = (base / "out" / "seed-1").string();
  // Another process holds `held` until told to let go (a byte on `go`).
  const auto held_by_child = [](const std::string& held, int ready[2], int go[2]) {
    const pid_t child = ::fork();
    REQUIRE(child >= 0);
    if (child == 0) {
      {
        const common::FolderLock lock(held);
        char byte = 1;
        if (::write(ready[1], &byte, 1) != 1) ::_exit(3);
        if (::read(go[0], &byte, 1) != 1) ::_exit(4);
      }
      ::_exit(0);
    }
    char byte = 0;
    REQUIRE(::read(ready[0], &byte, 1) == 1);
    return child;
  };
  const auto let_go = [](pid_t child, int go[2]) {
    const char byte = 1;
    REQUIRE(::write(go[1], &byte, 1) == 1);
    int status = 0;
    ::waitpid(child, &status, 0);
    CHECK(WIFEXITED(status));
    CHECK(WEXITSTATUS(status) == 0);
  };
  int ready[2], go[2];
  REQUIRE(::pipe(ready) == 0);
  REQUIRE(::pipe(go) == 0);
  pid_t child = held_by_child(outer, ready, go);
  CHECK_THROWS_WITH_AS(common::FolderLock{inner},
                       doctest::Contains(("another orchestra run is writing in " + fs::absolute(outer).string() + ", which holds this folder (pid " +
                                          std::to_string(child) + ")").c_str()),
                       common::FolderError);
  CHECK_FALSE(fs::exists(inner));  // refused before anything is left there
  CHECK_NOTHROW(common::FolderLock{(base / "beside").string()});
  let_go(child, go);
  child = held_by_child(inner, ready, go);
  CHECK_THROWS_WITH_AS(common::FolderLock{outer},
                       doctest::Contains(("another orchestra run is writing in " + fs::absolute(inner).string() + ", inside this folder (pid " +
                                          std::to_string(child) + ")").c_str()),
                       common::FolderError);
  CHECK(fs::exists(fs::path(inner) / common::FolderLock::kFileName));  // the refusal did not touch the holder's lock
  let_go(child, go);
  for (int fd : {ready[0], ready[1], go[0], go[1]}) ::close(fd);
  // One process may hold a folder inside its own (calibrate's --traces inside the real run's folder).
  {
    const common::FolderLock mine(outer);
    CHECK_NOTHROW(common::FolderLock{inner});
  }
  fs::remove_all(base);
}

TEST_CASE("leftovers of killed runs: removed when their process has ended, a live one's and a user's files kept") {
  namespace fs = std::filesystem;
  CHECK(common::leftover_pid(".train.csv.orchestra-tmp-123") == 123);
  CHECK(common::leftover_pid(".dsgd.staging-4567-Ab12Cd") == 4567);
  CHECK(common::leftover_pid(".dsgd.staging-4567-Ab12Cd.old") == 4567);
  CHECK(common::leftover_pid(".lbb.copy-89-xYz123") == 89);
  for (const char* not_one : {"train.csv", "notes.tmp-", "a.tmp-12x", ".tmp-12", "train.csv.tmp-123", "train.csv.orchestra-tmp-123",
                              ".orchestra-tmp-12", "dsgd.staging-4567-Ab12Cd", ".dsgd.staging-4567", ".dsgd.staging-x-Ab12Cd", ".orchestra.lock"})
    CHECK_MESSAGE(common::leftover_pid(not_one) == 0, not_one);
  CHECK(fs::path(common::temporary_path("a/b/summary.json")).filename().string() == ".summary.json.orchestra-tmp-" + std::to_string(::getpid()));
  CHECK(fs::path(common::temporary_path("a/b/summary.json")).parent_path() == "a/b");

  const pid_t ended = ::fork();  // a pid whose process has ended
  REQUIRE(ended >= 0);
  if (ended == 0) ::_exit(0);
  ::waitpid(ended, nullptr, 0);
  const std::string dead = std::to_string(ended), alive = std::to_string(::getpid());
  const auto base = fs::temp_directory_path() / ("common-leftovers-" + alive);
  fs::remove_all(base);
  const auto write = [&](const fs::path& path) {
    fs::create_directories(path.parent_path());
    common::write_file_atomic(path.string(), std::string("x"));
  };
  write(base / (".summary.json.orchestra-tmp-" + dead));
  write(base / ("." + std::string("dsgd.staging-") + dead + "-Ab12Cd") / "summary.json");
  write(base / ("seed-1/.lbb.copy-" + dead + "-xYz123.old") / "rounds.csv");
  write(base / ("seed-1/.rounds.csv.orchestra-tmp-" + dead));
  write(base / ("seed-1/.epochs.csv.orchestra-tmp-" + alive));  // a run still writing
  write(base / "seed-1/rounds.csv");
  write(base / "notes.txt");
  write(base / ("a/b/c/d/.e.orchestra-tmp-" + dead));  // deeper than looked at
  // A user's files whose names only look like leftovers: the old shape of a temporary file, a
  // folder named like a temporary file, a file named like a staging folder.
  write(base / ("backup.tmp-" + dead) / "thesis.tex");
  write(base / ("notes/draft.tmp-" + dead));
  write(base / (".kept.orchestra-tmp-" + dead) / "inside.txt");
  write(base / (".mine.staging-" + dead + "-Ab12Cd"));
  CHECK(common::remove_leftovers(base.string(), 4) == 4);
  std::vector<std::string> kept;
  for (const auto& entry : fs::recursive_directory_iterator(base))
    if (entry.is_regular_file()) kept.push_back(fs::relative(entry.path(), base).string());
  std::sort(kept.begin(), kept.end());
  CHECK(kept == std::vector<std::string>{".kept.orchestra-tmp-" + dead + "/inside.txt", ".mine.staging-" + dead + "-Ab12Cd",
                                         "a/b/c/d/.e.orchestra-tmp-" + dead, "backup.tmp-" + dead + "/thesis.tex", "notes.txt",
                                         "notes/draft.tmp-" + dead, "seed-1/.epochs.csv.orchestra-tmp-" + alive, "seed-1/rounds.csv"});
  // Taking the folder's lock clears them.
  write(base / (".summary.json.orchestra-tmp-" + dead));
  { const common::FolderLock lock(base.string()); }
  CHECK_FALSE(fs::exists(base / (".summary.json.orchestra-tmp-" + dead)));
  CHECK(fs::exists(base / "notes.txt"));
  CHECK(fs::exists(base / ("backup.tmp-" + dead) / "thesis.tex"));
  fs::remove_all(base);
}

TEST_CASE("folder lock: one holder, a second is refused at once naming the holder's pid, nothing left behind") {
  namespace fs = std::filesystem;
  const auto base = fs::temp_directory_path() / ("common-lock-" + std::to_string(::getpid()));
  fs::remove_all(base);
  const std::string dir = (base / "out" / "deeper").string();
  {
    const common::FolderLock first(dir);  // creates the folders
    CHECK(fs::exists(fs::path(dir) / common::FolderLock::kFileName));
    // flock conflicts between two open files even in one process: the second claim is refused.
    CHECK_THROWS_WITH_AS(common::FolderLock{dir}, doctest::Contains(("another orchestra run is writing here (pid " + std::to_string(::getpid()) + ")").c_str()),
                         common::FolderError);
    common::write_file_atomic((fs::path(dir) / "result.txt").string(), std::string("kept"));
  }
  // Released: the lock file is gone, what the run wrote stays, and the folder can be claimed again.
  CHECK_FALSE(fs::exists(fs::path(dir) / common::FolderLock::kFileName));
  CHECK(fs::exists(fs::path(dir) / "result.txt"));
  CHECK_NOTHROW(common::FolderLock{dir});
  // A folder the lock created and the run left empty goes again (a run that failed before writing).
  const std::string empty = (base / "fresh" / "one").string();
  { const common::FolderLock lock(empty); }
  CHECK_FALSE(fs::exists(base / "fresh"));
  // A path that is a file, or under one: one line, before any work.
  common::write_file_atomic((base / "file").string(), std::string("x"));
  CHECK_THROWS_WITH_AS(common::FolderLock{(base / "file").string()}, doctest::Contains("is a file, not a folder"), common::FolderError);
  CHECK_THROWS_WITH_AS(common::FolderLock{(base / "file" / "sub").string()}, doctest::Contains("cannot create the results folder"), common::FolderError);
  fs::remove_all(base);
}
