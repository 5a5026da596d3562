// The layout the user named holds: library code (.cpp/.hpp) lives only in agents/ env/ orchestra/
// lbb/ experiments/ common/ (tests/ bench/ fuzz/ cmake/ aside), each file's first namespace is its
// top-level folder, every folder of code is one CMake target, and no file includes a header of a
// target its own target does not depend on, so no dependency runs back up. The dependencies are
// CMake's own (tests/CMakeLists.txt writes each library target's folder and links to
// ORCHESTRA_LAYOUT_TARGETS), not a second list here. docs/ARCHITECTURE.md's layout table and the
// README's layout section name the folders there are, with their targets.
#include <doctest/doctest.h>

#include <fnmatch.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

namespace fs = std::filesystem;

namespace {

const fs::path kSource = ORCHESTRA_SOURCE_DIR;
const std::set<std::string> kLibraryFolders = {"agents", "env", "orchestra", "lbb", "experiments", "common"};
const std::set<std::string> kCodeAside = {"tests", "bench", "fuzz", "cmake"};

std::string read(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

bool is_code(const fs::path& p) {
  static const std::set<std::string> extensions = {".cpp", ".hpp", ".h", ".cc", ".hh", ".cxx", ".hxx", ".c", ".ipp"};
  return extensions.count(p.extension().string()) > 0;
}

// The folders .gitignore keeps out of the repository (its lines ending in '/', as fnmatch globs
// against a top-level name), so that build trees and unpacked packages are not taken for code.
std::vector<std::string> ignored_folder_patterns() {
  std::vector<std::string> patterns;
  std::istringstream lines(read(kSource / ".gitignore"));
  for (std::string line; std::getline(lines, line);) {
    if (line.empty() || line[0] == '#' || line.back() != '/') continue;
    line.pop_back();
    if (line[0] == '/') line.erase(0, 1);
    patterns.push_back(line);
  }
  return patterns;
}

// Every source file of the repository, relative to its root: hidden folders, ignored folders and
// build trees (a CMakeCache.txt) left out.
std::vector<fs::path> source_files() {
  const auto ignored = ignored_folder_patterns();
  std::vector<fs::path> files;
  for (auto it = fs::recursive_directory_iterator(kSource); it != fs::recursive_directory_iterator(); ++it) {
    const fs::path relative = fs::relative(it->path(), kSource);
    const std::string name = it->path().filename().string();
    if (it->is_directory()) {
      const bool top = relative.parent_path().empty();
      const bool skip = name[0] == '.' || fs::exists(it->path() / "CMakeCache.txt") ||
                        (top && std::any_of(ignored.begin(), ignored.end(),
                                            [&](const std::string& p) { return ::fnmatch(p.c_str(), name.c_str(), 0) == 0; }));
      if (skip) it.disable_recursion_pending();
      continue;
    }
    if (is_code(relative)) files.push_back(relative);
  }
  std::sort(files.begin(), files.end());
  return files;
}

std::string top_folder(const fs::path& relative) { return relative.begin()->string(); }

struct Target {
  std::string name;
  std::string folder;  // relative to the repository: "env/sim"
  std::vector<std::string> links;
};

// tests/CMakeLists.txt writes one line per library target: name, folder, links (';'-separated).
std::map<std::string, Target> cmake_targets() {
  std::map<std::string, Target> targets;
  std::istringstream lines(read(ORCHESTRA_LAYOUT_TARGETS));
  for (std::string line; std::getline(lines, line);) {
    std::istringstream fields(line);
    Target t;
    std::string links;
    std::getline(fields, t.name, '\t');
    std::getline(fields, t.folder, '\t');
    std::getline(fields, links, '\t');
    std::istringstream each(links);
    for (std::string l; std::getline(each, l, ';');) t.links.push_back(l);
    targets[t.name] = t;
  }
  return targets;
}

// The project targets `name` depends on, itself included (links to other libraries dropped).
std::set<std::string> closure(const std::map<std::string, Target>& targets, const std::string& name) {
  std::set<std::string> seen;
  std::vector<std::string> todo{name};
  while (!todo.empty()) {
    const std::string t = todo.back();
    todo.pop_back();
    if (!targets.count(t) || !seen.insert(t).second) continue;
    for (const auto& l : targets.at(t).links) todo.push_back(l);
  }
  return seen;
}

// The target whose folder holds `file` (folder = target), or "" for none.
std::string target_of(const std::map<std::string, Target>& targets, const fs::path& file) {
  const std::string folder = file.parent_path().string();
  for (const auto& [name, t] : targets)
    if (t.folder == folder) return name;
  return "";
}

// The first named namespace a file opens ("experiments" for `namespace experiments::calibration`).
std::string first_namespace(const std::string& text) {
  static const std::regex named(R"((^|\n)\s*namespace\s+([A-Za-z_]\w*))");
  std::smatch m;
  return std::regex_search(text, m, named) ? m[2].str() : "";
}

// The quoted includes of a file.
std::vector<std::string> includes(const std::string& text) {
  static const std::regex include(R"re(#include\s+"([^"]+)")re");
  std::vector<std::string> out;
  for (auto it = std::sregex_iterator(text.begin(), text.end(), include); it != std::sregex_iterator(); ++it) out.push_back((*it)[1]);
  return out;
}

std::vector<fs::path> library_files() {
  std::vector<fs::path> out;
  for (const auto& f : source_files())
    if (kLibraryFolders.count(top_folder(f))) out.push_back(f);
  return out;
}

// The text of a Markdown file from `heading` to the next heading of the same level.
std::string section(const std::string& markdown, const std::string& heading) {
  const auto begin = markdown.find("\n" + heading + "\n");
  REQUIRE_MESSAGE(begin != std::string::npos, "no section '" << heading << "'");
  const auto end = markdown.find("\n## ", begin + heading.size() + 2);
  return markdown.substr(begin, end == std::string::npos ? std::string::npos : end - begin);
}

}  // namespace

TEST_CASE("layout: code lives only in the user's folders (agents env orchestra lbb experiments common, tests bench fuzz cmake aside)") {
  const auto files = source_files();
  REQUIRE(files.size() > 100);  // the walk found the tree
  for (const auto& f : files) {
    CAPTURE(f.string());
    const std::string top = top_folder(f);
    CHECK_MESSAGE((kLibraryFolders.count(top) || kCodeAside.count(top)), f.string() << ": code outside the named folders");
  }
}

TEST_CASE("layout: each file's first namespace is its top-level folder") {
  int checked = 0;
  for (const auto& f : library_files()) {
    const std::string text = read(kSource / f);
    const std::string ns = first_namespace(text);
    // The program's entry point is the one file without a namespace of its own.
    if (ns.empty() && text.find("int main(") != std::string::npos) continue;
    CHECK_MESSAGE(ns == top_folder(f), f.string() << ": first namespace '" << ns << "', folder '" << top_folder(f) << "'");
    ++checked;
  }
  CHECK(checked > 100);
}

TEST_CASE("layout: every folder of library code is one CMake target, and no include runs against the dependencies") {
  const auto targets = cmake_targets();
  REQUIRE(targets.count("env_sim"));  // the file CMake wrote was read
  REQUIRE(targets.count("cli"));
  // The target graph itself has no cycle: no target is among its own dependencies' dependencies.
  for (const auto& [name, t] : targets)
    for (const auto& l : t.links)
      if (targets.count(l)) CHECK_MESSAGE(closure(targets, l).count(name) == 0, name << " and " << l << " depend on each other");

  int includes_checked = 0;
  for (const auto& f : library_files()) {
    const std::string owner = target_of(targets, f);
    CHECK_MESSAGE(!owner.empty(), f.string() << ": in a folder that is no target's");
    if (owner.empty()) continue;
    const auto allowed = closure(targets, owner);
    for (const auto& inc : includes(read(kSource / f))) {
      if (!fs::exists(kSource / inc)) continue;  // a system header, or one CMake writes (c10d_backends.hpp)
      const std::string used = target_of(targets, inc);
      if (used.empty() || allowed.count(used)) {
        ++includes_checked;
        continue;
      }
      const bool back_up = closure(targets, used).count(owner) > 0;
      FAIL_CHECK(f.string() << " (" << owner << ") includes " << inc << " (" << used << "), "
                            << (back_up ? "which depends on " + owner + ": a dependency running back up"
                                        : owner + " does not link " + used + " in CMake"));
    }
  }
  CHECK(includes_checked > 500);
}

TEST_CASE("layout: docs/ARCHITECTURE.md's table and the README's layout section name the folders and targets there are") {
  const auto targets = cmake_targets();
  const std::string table = section(read(kSource / "docs/ARCHITECTURE.md"), "## Layout");
  const std::string readme = section(read(kSource / "README.md"), "## Layout");
  for (const auto& [name, t] : targets) {
    CAPTURE(name);
    // A row `| `env/sim/` | `env_sim` | ...`: the folder and its target on one line.
    const std::regex row("\\| `" + t.folder + "/` \\| [^|]*`" + name + "`");
    CHECK_MESSAGE(std::regex_search(table, row), "docs/ARCHITECTURE.md's layout table has no row `" << t.folder << "/` | `" << name << "`");
    const std::string last = fs::path(t.folder).filename().string();
    const bool named = readme.find("`" + last + "/`") != std::string::npos || readme.find("`" + t.folder + "/`") != std::string::npos;
    CHECK_MESSAGE(named, "README's layout section does not name `" << t.folder << "/`");
  }
  // And no folder either names is missing from the tree.
  const std::regex folder("`([a-z_/]+)/`");
  for (const std::string* text : {&table, &readme})
    for (auto it = std::sregex_iterator(text->begin(), text->end(), folder); it != std::sregex_iterator(); ++it) {
      const std::string named = (*it)[1];
      // What the build writes (`build/python/orchestra/`) lies in whichever build folder the user
      // chose, and only once built: not a folder of the tree.
      if (named.rfind("build/", 0) == 0) continue;
      bool found = fs::is_directory(kSource / named);
      for (const auto& top : kLibraryFolders) found = found || fs::is_directory(kSource / top / named);
      CHECK_MESSAGE(found, "the documentation names `" << named << "/`, which is not in the tree");
    }
}
