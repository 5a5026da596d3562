// `orchestra compare DIR --html`: one self-contained report.html to share. It holds what the
// terminal showed and what the folder holds: the comparison table (and, for a multi-seed folder,
// the summary over seeds), the lines that say who wins and why, every figure of `--plot` as inline
// SVG, the seeds, each policy's parameters, the resolved config and the toolkit's version. No
// script, stylesheet, font or image is fetched: it reads the same offline, from a mail attachment.
// The page is a function of the results and figures alone (no date, no host): the same folder
// gives the same bytes.
#pragma once

#include <string>
#include <vector>

#include "experiments/analysis/plots.hpp"
#include "experiments/results/results_reader.hpp"

namespace experiments {

struct ReportInput {
  std::string source;               // the results folder as given on the command line
  std::vector<RunResults> runs;     // read_results of it
  std::vector<DrawnFigure> figures; // make_plots of the same runs (their SVGs are read and inlined)
};

// Throws common::DataError when a figure's SVG or a policy's config.json cannot be read.
// Text every report holds (its generator tag): `compare --html` replaces only a file that has it.
constexpr const char* kReportGenerator = "<meta name=\"generator\" content=\"Orchestra toolkit";

std::string html_report(const ReportInput& input);

// The toolkit's version (CMake's project version), as the report states it.
std::string toolkit_version();

}  // namespace experiments
