// The pieces the HTML report is made of, each a pure function of its input: escaped text, a table
// from the Markdown the comparison tables are printed in (so the report shows exactly what the
// terminal did), and a gnuplot SVG made fit to stand inline in a page beside other figures.
#pragma once

#include <string>

namespace experiments {

// Text for HTML content and attribute values: & < > " ' escaped.
std::string html_escape(const std::string& text);

// A GitHub pipe table (header, |---:| alignment row, rows; "\|" inside a cell) as an HTML <table>,
// cells escaped, numbers right-aligned as the alignment row says. Lines that are not table rows
// are ignored. Throws std::invalid_argument when there is no header and alignment row.
std::string html_table(const std::string& markdown, const std::string& css_class);

// A gnuplot SVG document as an inline <svg> element: the XML declaration and doctype dropped,
// every id (and every reference to one) prefixed with `id_prefix` so that the figures of one page
// do not share ids, and gnuplot's generic <title> replaced by `title`. Throws
// std::invalid_argument when the text holds no <svg> element.
std::string inline_svg(const std::string& svg_document, const std::string& id_prefix, const std::string& title);

}  // namespace experiments
