// `orchestra compare DIR --html`: the page is well-formed (checked as XML, which the report is
// written to be, so that a stray '<' or an unclosed element anywhere fails), self-contained, and
// holds every table row and every figure of the run, with the seeds, the parameters, the resolved
// config and the version; the same results give the same bytes. No browser needed.
#include <doctest/doctest.h>

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <regex>
#include <set>
#include <string>
#include <vector>

#include "experiments/analysis/plots.hpp"
#include "experiments/report/html_blocks.hpp"
#include "experiments/report/html_report.hpp"
#include "results_fixture.hpp"
#include "test_helpers.hpp"

using namespace experiments;
namespace fs = std::filesystem;

namespace {

// Checks that `text` is one well-formed XML element (after an optional <!DOCTYPE ...>): every
// element closed in order, attributes quoted and not repeated, every '&' an entity, no '<' in text.
// Returns "" or what is wrong and where.
std::string xml_problem(const std::string& text) {
  std::vector<std::string> open;
  std::size_t i = 0, roots = 0;
  const auto at = [&](std::size_t pos) { return " at byte " + std::to_string(pos) + ": ..." + text.substr(pos, 60); };
  const auto name_char = [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == ':' || c == '-' || c == '_' || c == '.'; };
  const auto check_entities = [&](std::size_t from, std::size_t to) -> std::string {
    static const std::regex entity(R"(^&(amp|lt|gt|quot|apos|#[0-9]+|#x[0-9a-fA-F]+);)");
    for (std::size_t k = from; k < to; ++k)
      if (text[k] == '&' && !std::regex_search(text.substr(k, 12), entity)) return "a bare '&'" + at(k);
    return "";
  };
  if (text.rfind("<!DOCTYPE html>", 0) == 0) i = 15;
  while (i < text.size()) {
    const std::size_t lt = text.find('<', i);
    const std::size_t end_of_text = lt == std::string::npos ? text.size() : lt;
    if (open.empty() && text.find_first_not_of(" \n\r\t", i) < end_of_text) return "text outside the root" + at(i);
    if (const std::string p = check_entities(i, end_of_text); !p.empty()) return p;
    if (lt == std::string::npos) break;
    if (text.compare(lt, 4, "<!--") == 0) {
      const std::size_t close = text.find("-->", lt);
      if (close == std::string::npos) return "an unclosed comment" + at(lt);
      i = close + 3;
      continue;
    }
    if (text.compare(lt, 2, "</") == 0) {
      std::size_t k = lt + 2;
      while (k < text.size() && name_char(text[k])) ++k;
      const std::string name = text.substr(lt + 2, k - lt - 2);
      if (k >= text.size() || text[k] != '>') return "a malformed end tag" + at(lt);
      if (open.empty() || open.back() != name) return "</" + name + "> closes <" + (open.empty() ? "" : open.back()) + ">" + at(lt);
      open.pop_back();
      i = k + 1;
      continue;
    }
    std::size_t k = lt + 1;
    while (k < text.size() && name_char(text[k])) ++k;
    const std::string name = text.substr(lt + 1, k - lt - 1);
    if (name.empty()) return "a '<' that starts no tag" + at(lt);
    std::set<std::string> attributes;
    for (;;) {
      while (k < text.size() && std::isspace(static_cast<unsigned char>(text[k]))) ++k;
      if (k >= text.size()) return "an unclosed tag" + at(lt);
      if (text[k] == '>' || text.compare(k, 2, "/>") == 0) break;
      const std::size_t a = k;
      while (k < text.size() && name_char(text[k])) ++k;
      const std::string attribute = text.substr(a, k - a);
      const auto skip_space = [&] {
        while (k < text.size() && std::isspace(static_cast<unsigned char>(text[k]))) ++k;
      };
      skip_space();  // XML allows  name = 'value'
      if (attribute.empty() || k >= text.size() || text[k] != '=') return "an attribute without a value" + at(a);
      ++k;
      skip_space();
      if (k >= text.size() || (text[k] != '"' && text[k] != '\'')) return "an unquoted attribute" + at(a);
      if (!attributes.insert(attribute).second) return "attribute " + attribute + " twice" + at(a);
      const char quote = text[k];
      const std::size_t close = text.find(quote, k + 1);
      if (close == std::string::npos || text.find('<', k + 1) < close) return "an attribute value with '<' or unclosed" + at(a);
      if (const std::string p = check_entities(k + 1, close); !p.empty()) return p;
      k = close + 1;
    }
    if (open.empty() && ++roots > 1) return "a second root element" + at(lt);
    if (text[k] == '>') {
      open.push_back(name);
      i = k + 1;
    } else {
      i = k + 2;
    }
  }
  if (!open.empty()) return "<" + open.back() + "> is never closed";
  return roots == 1 ? "" : "no root element";
}

// The inner text of the first element whose start tag holds `start_tag_part`.
std::string element(const std::string& html, const std::string& start_tag_part, const std::string& name) {
  const std::size_t a = html.find(start_tag_part);
  if (a == std::string::npos) return "";
  const std::size_t b = html.find("</" + name + ">", a);
  return b == std::string::npos ? "" : html.substr(a, b - a);
}

int count(const std::string& text, const std::string& what) {
  int n = 0;
  for (std::size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + what.size())) ++n;
  return n;
}

// A config.json as `orchestra run` writes it: the resolved config and the policy's parameters.
void write_config(const std::string& policy_dir, int seed, const std::string& params) {
  testing::write_text(policy_dir + "/config.json", R"({"name": "exp", "seed": )" + std::to_string(seed) +
                                                        R"(, "training": {"global_batch": 128, "epochs": 2}, "policy": )" + params + "}\n");
}

void write_run(const std::string& dir, int seed) {
  testing::write_results(dir);
  write_config(dir + "/dsgd", seed, R"({"name": "dsgd"})");
  write_config(dir + "/lbb", seed, R"({"name": "lbb", "FT": 0.05})");
  write_config(dir + "/fixed-t", seed, R"({"name": "fixed-t", "T_ms": 120})");
}

std::string orchestra() { return ORCHESTRA_BINARY; }

// Every figure the folder's plots/ holds, by name (file name without .svg).
std::set<std::string> figures_in(const std::string& plots_dir) {
  std::set<std::string> names;
  for (const auto& e : fs::directory_iterator(plots_dir))
    if (e.path().extension() == ".svg") names.insert(e.path().stem().string());
  return names;
}

}  // namespace

TEST_CASE("html blocks: escaped text, a Markdown table as an HTML table, a gnuplot SVG made fit to inline") {
  CHECK(html_escape(R"(a<b & "c" 'd'>)") == "a&lt;b &amp; &quot;c&quot; &#39;d&#39;&gt;");
  const std::string table = html_table("| policy | time (s) |\n|---|---:|\n| a\\|b | 1.50 |\n| <x> | - |\n", "comparison");
  CHECK(table ==
        "<table class=\"comparison\">\n<thead><tr><th>policy</th><th class=\"num\">time (s)</th></tr></thead>\n<tbody>\n"
        "<tr><td>a|b</td><td class=\"num\">1.50</td></tr>\n<tr><td>&lt;x&gt;</td><td class=\"num\">-</td></tr>\n</tbody>\n</table>\n");
  CHECK_THROWS_AS(html_table("no table here\n", "x"), std::invalid_argument);

  const std::string svg = "<?xml version=\"1.0\"?>\n<svg width=\"10\">\n<title>Gnuplot</title>\n<defs><path id='gpPt1'/></defs>"
                          "<g id=\"gnuplot_plot_1\"><use xlink:href='#gpPt1'/><rect filter='url(#textbox)'/></g></svg>\n";
  const std::string inlined = inline_svg(svg, "f3-", "a & b");
  CHECK(inlined == "<svg width=\"10\">\n<title>a &amp; b</title>\n<defs><path id='f3-gpPt1'/></defs>"
                   "<g id=\"f3-gnuplot_plot_1\"><use xlink:href='#f3-gpPt1'/><rect filter='url(#f3-textbox)'/></g></svg>");
  CHECK_THROWS_AS(inline_svg("<html/>", "f-", "t"), std::invalid_argument);
  CHECK(xml_problem("<a><b x=\"1\"/>t &amp; u</a>").empty());  // the checker itself: one good, three bad
  CHECK_FALSE(xml_problem("<a><b></a></b>").empty());
  CHECK_FALSE(xml_problem("<a>x & y</a>").empty());
  CHECK_FALSE(xml_problem("<a x=1></a>").empty());
}

TEST_CASE("orchestra compare --html: one well-formed, self-contained page with every table row and figure, the same bytes twice") {
  if (!testing::gnuplot_or_skip()) return;
  testing::TempDir tmp;
  write_run(tmp / "exp", 42);
  const auto r = testing::run_command(orchestra() + " compare " + (tmp / "exp") + " --html");
  INFO(r.output);
  REQUIRE(r.exit_code == 0);
  CHECK(r.output.find("Report: " + (tmp / "exp/report.html")) != std::string::npos);
  const std::string html = testing::read_text(tmp / "exp/report.html");
  CHECK(xml_problem(html) == "");
  CHECK(html.rfind("<!DOCTYPE html>\n<html lang=\"en\">", 0) == 0);

  // Self-contained: nothing to fetch, nothing to run.
  for (const char* outside : {"<script", "<link", "<img", "src=", "href=\"http", "href='http", "@import", "url(http"})
    CHECK_MESSAGE(html.find(outside) == std::string::npos, outside);

  // The table: one row per policy, as the terminal printed it.
  const std::string table = element(html, "<table class=\"comparison\">", "table");
  REQUIRE_FALSE(table.empty());
  CHECK(count(table, "<tr>") == 4);  // the header and three policies
  for (const char* row : {"<td>dsgd</td><td class=\"num\">100.00</td><td class=\"num\">1.00x</td>",
                          "<td>lbb</td><td class=\"num\">50.00</td><td class=\"num\">2.00x</td>", "<td>fixed-t</td><td class=\"num\">not reached</td>"})
    CHECK_MESSAGE(table.find(row) != std::string::npos, row);

  // Who wins and why, computed from the same results.
  const std::string story = element(html, "<section id=\"summary\"", "section");
  CHECK(story.find("lbb reaches 80.0% first, in 50.0 s: 2.00x faster than dsgd (100.0 s).") != std::string::npos);
  CHECK(story.find("Why: lbb&#39;s workers compute 75% of the time") != std::string::npos);

  // Every figure of plots/ inline, each an <svg> in its own <figure>, ids made unique.
  const std::set<std::string> figures = figures_in(tmp / "exp/plots");
  CHECK(figures == std::set<std::string>{"accuracy_vs_time", "timeline", "dsgd.iterations", "lbb.iterations", "fixed-t.iterations",
                                         "fixed-t.barrier"});
  for (const auto& name : figures) {
    const std::string figure = element(html, "<figure id=\"fig-" + name + "\">", "figure");
    CHECK_MESSAGE(figure.find("<svg") != std::string::npos, name);
    CHECK_MESSAGE(figure.find("</svg>") != std::string::npos, name);
    CHECK_MESSAGE(figure.find("<figcaption>") != std::string::npos, name);
  }
  CHECK(count(html, "<svg") == static_cast<int>(figures.size()));
  CHECK(count(html, "id='gpPt1'") == 0);  // every figure's ids carry its own prefix
  CHECK(count(html, "id='f0-gpPt1'") == 1);

  // What was run: the seed, each policy's parameters, the resolved config, the version.
  CHECK(html.find("· seed 42") != std::string::npos);
  CHECK(html.find("<td>lbb</td><td>lbb</td><td><code>{&quot;FT&quot;:0.05,&quot;name&quot;:&quot;lbb&quot;}</code></td>") != std::string::npos);
  const std::string config = element(html, "<pre class=\"config\">", "pre");
  CHECK(config.find("&quot;global_batch&quot;: 128") != std::string::npos);
  CHECK(config.find("&quot;policy&quot;") == std::string::npos);  // per policy, in the table above
  CHECK(html.find("Orchestra toolkit " + toolkit_version()) != std::string::npos);
  CHECK(std::regex_match(toolkit_version(), std::regex(R"(\d+\.\d+\.\d+)")));

  // Deterministic: the same results give the same page.
  fs::rename(tmp / "exp/report.html", tmp / "first.html");
  REQUIRE(testing::run_command(orchestra() + " compare " + (tmp / "exp") + " --html --quiet").exit_code == 0);
  CHECK(testing::read_text(tmp / "exp/report.html") == testing::read_text(tmp / "first.html"));
}

TEST_CASE("orchestra compare --html on a multi-seed folder: the summary over seeds, every seed's rows and figures") {
  if (!testing::gnuplot_or_skip()) return;
  testing::TempDir tmp;
  write_run(tmp / "seeds/seed-1", 1);
  write_run(tmp / "seeds/seed-2", 2);
  const auto r = testing::run_command(orchestra() + " compare " + (tmp / "seeds") + " --html --quiet");
  INFO(r.output);
  REQUIRE(r.exit_code == 0);
  const std::string html = testing::read_text(tmp / "seeds/report.html");
  CHECK(xml_problem(html) == "");
  const std::string summary = element(html, "<table class=\"seed-summary\">", "table");
  CHECK(count(summary, "<tr>") == 4);
  CHECK(summary.find("<td>lbb</td>") != std::string::npos);
  const std::string every = element(html, "<table class=\"comparison\">", "table");
  CHECK(count(every, "<tr>") == 7);  // the header, three policies per seed
  CHECK(every.find("<td>seed-2</td><td>fixed-t</td>") != std::string::npos);
  CHECK(html.find("Over 2 seeds, lbb reaches 80.0% soonest on average: 50.0 s") != std::string::npos);
  CHECK(html.find("seeds 1, 2") != std::string::npos);
  const std::set<std::string> figures = figures_in(tmp / "seeds/plots");
  CHECK(figures.count("seed-1.timeline") == 1);
  CHECK(figures.count("seed-2.accuracy_vs_time") == 1);
  for (const auto& name : figures) CHECK_MESSAGE(html.find("<figure id=\"fig-" + name + "\">") != std::string::npos, name);
  CHECK(html.find("<h3>seed-2</h3>") != std::string::npos);  // figures grouped by seed
}

TEST_CASE("orchestra compare --html without gnuplot: one clear line, nothing written") {
  testing::TempDir tmp;
  write_run(tmp / "exp", 1);
  const auto r = testing::run_command(orchestra() + " compare " + (tmp / "exp") + " --html --gnuplot /nonexistent/gnuplot");
  CHECK(r.exit_code != 0);
  CHECK(r.output.find("gnuplot-nox") != std::string::npos);
  CHECK_FALSE(fs::exists(tmp / "exp/report.html"));
  CHECK_FALSE(fs::exists(tmp / "exp/compare.md"));
  // No gnuplot on PATH at all, as on a machine set up without it.
  const auto none = testing::run_command("PATH=" + testing::path_without_gnuplot() + " " + orchestra() + " compare " + (tmp / "exp") + " --html");
  CHECK(none.exit_code == 1);
  CHECK(none.output.rfind("orchestra: plot error: gnuplot not found (gnuplot): plots need Debian's gnuplot-nox package", 0) == 0);
  CHECK(std::count(none.output.begin(), none.output.end(), '\n') == 1);
  CHECK_FALSE(fs::exists(tmp / "exp/report.html"));
}
