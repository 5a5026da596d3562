#include "experiments/report/html_blocks.hpp"

#include <cctype>
#include <sstream>
#include <stdexcept>
#include <vector>

namespace experiments {
namespace {

// The cells of one "| a | b |" row; "\|" is a pipe inside a cell.
std::vector<std::string> cells_of(const std::string& line) {
  std::vector<std::string> cells;
  std::string cell;
  for (std::size_t i = 1; i < line.size(); ++i) {
    if (line[i] == '\\' && i + 1 < line.size() && line[i + 1] == '|') {
      cell += '|';
      ++i;
    } else if (line[i] == '|') {
      const auto first = cell.find_first_not_of(' '), last = cell.find_last_not_of(' ');
      cells.push_back(first == std::string::npos ? std::string() : cell.substr(first, last - first + 1));
      cell.clear();
    } else {
      cell += line[i];
    }
  }
  return cells;
}

// `text` with `prefix` inserted after every `marker` (after those that follow white space only,
// when `attribute`: an attribute name, not the end of a longer one).
std::string prefix_after(const std::string& text, const std::string& marker, const std::string& prefix, bool attribute) {
  std::string out;
  out.reserve(text.size() + text.size() / 16);
  std::size_t from = 0;
  for (std::size_t at = text.find(marker); at != std::string::npos; at = text.find(marker, at + marker.size())) {
    if (attribute && (at == 0 || !std::isspace(static_cast<unsigned char>(text[at - 1])))) continue;
    out.append(text, from, at + marker.size() - from);
    out += prefix;
    from = at + marker.size();
  }
  out.append(text, from, std::string::npos);
  return out;
}

}  // namespace

std::string html_escape(const std::string& text) {
  std::string out;
  out.reserve(text.size());
  for (const char c : text) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      case '\'': out += "&#39;"; break;
      default: out += c;
    }
  }
  return out;
}

std::string html_table(const std::string& markdown, const std::string& css_class) {
  std::vector<std::vector<std::string>> rows;
  std::istringstream in(markdown);
  for (std::string line; std::getline(in, line);) {
    while (!line.empty() && (line.back() == '\r' || line.back() == ' ')) line.pop_back();
    if (line.size() >= 2 && line.front() == '|' && line.back() == '|') rows.push_back(cells_of(line));
  }
  if (rows.size() < 2) throw std::invalid_argument("html_table: no Markdown table (a header and an alignment row)");
  std::vector<bool> right;
  for (const auto& a : rows[1]) {
    if (a.find_first_not_of("-:") != std::string::npos || a.find('-') == std::string::npos)
      throw std::invalid_argument("html_table: the second row is not an alignment row: " + a);
    right.push_back(a.size() > 1 && a.back() == ':');
  }
  const auto align = [&](std::size_t c) { return c < right.size() && right[c] ? " class=\"num\"" : ""; };
  std::string html = "<table class=\"" + html_escape(css_class) + "\">\n<thead><tr>";
  for (std::size_t c = 0; c < rows[0].size(); ++c) html += std::string("<th") + align(c) + ">" + html_escape(rows[0][c]) + "</th>";
  html += "</tr></thead>\n<tbody>\n";
  for (std::size_t r = 2; r < rows.size(); ++r) {
    html += "<tr>";
    for (std::size_t c = 0; c < rows[r].size(); ++c) html += std::string("<td") + align(c) + ">" + html_escape(rows[r][c]) + "</td>";
    html += "</tr>\n";
  }
  return html + "</tbody>\n</table>\n";
}

std::string inline_svg(const std::string& document, const std::string& id_prefix, const std::string& title) {
  const auto start = document.find("<svg");
  const auto end = document.rfind("</svg>");
  if (start == std::string::npos || end == std::string::npos || end < start)
    throw std::invalid_argument("inline_svg: no <svg> element");
  std::string svg = document.substr(start, end + 6 - start);
  // id='x' / id="x", href='#x' / xlink:href="#x", url(#x): every way gnuplot names or uses an id.
  for (const char* quote : {"'", "\""}) {
    svg = prefix_after(svg, std::string("id=") + quote, id_prefix, true);
    svg = prefix_after(svg, std::string("href=") + quote + "#", id_prefix, false);
  }
  svg = prefix_after(svg, "url(#", id_prefix, false);
  const std::string generic = "<title>Gnuplot</title>";
  const auto t = svg.find(generic);
  if (t != std::string::npos) svg.replace(t, generic.size(), "<title>" + html_escape(title) + "</title>");
  return svg;
}

}  // namespace experiments
