// The test executables' main: doctest's own, with one rule added: a run that selects no test case
// fails. ctest runs each TEST_CASE as `--test-case=<name>`; a name that does not reach doctest whole
// (CMake's test discovery splits a list at ';', so a name with one became two filters that matched
// nothing) would otherwise run nothing and pass.
#define DOCTEST_CONFIG_IMPLEMENT
#include <doctest/doctest.h>

#include <iostream>

namespace {

bool g_selected_nothing = false;

// Listens to every run (not to --help or --list-test-cases, which run nothing by design).
struct SelectedNothingListener : doctest::IReporter {
  explicit SelectedNothingListener(const doctest::ContextOptions&) {}
  void test_run_end(const doctest::TestRunStats& stats) override { g_selected_nothing = stats.numTestCasesPassingFilters == 0; }
  void report_query(const doctest::QueryData&) override {}
  void test_run_start() override {}
  void test_case_start(const doctest::TestCaseData&) override {}
  void test_case_reenter(const doctest::TestCaseData&) override {}
  void test_case_end(const doctest::CurrentTestCaseStats&) override {}
  void test_case_exception(const doctest::TestCaseException&) override {}
  void subcase_start(const doctest::SubcaseSignature&) override {}
  void subcase_end() override {}
  void log_assert(const doctest::AssertData&) override {}
  void log_message(const doctest::MessageData&) override {}
  void test_case_skipped(const doctest::TestCaseData&) override {}
};

}  // namespace

DOCTEST_REGISTER_LISTENER("selected_nothing", 1, SelectedNothingListener);

int main(int argc, char** argv) {
  doctest::Context context(argc, argv);
  const int result = context.run();
  if (g_selected_nothing) {
    std::cerr << "no test case matches the filters given: nothing ran (a TEST_CASE name must not hold ';')\n";
    return 1;
  }
  return result;
}
