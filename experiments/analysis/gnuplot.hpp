// Runs gnuplot (Debian's gnuplot-nox) on a script to make a PNG or SVG image. The script holds its
// data inline and sets no terminal, so it is kept beside the images: a researcher can restyle a
// figure and render it again, to any terminal (`gnuplot -e "set terminal pdfcairo; set output
// 'f.pdf'" f.gp`).
#pragma once

#include <stdexcept>
#include <string>

#include "common/errors.hpp"

namespace experiments {

enum class ImageFormat { Png, Svg };

struct GnuplotOptions {
  std::string program = "gnuplot";  // a name looked up on PATH, or a path
  int timeout_s = 120;              // a bounded wait: a stuck gnuplot is killed
  int width = 1000;                 // pixels (PNG) or SVG user units
  int height = 700;
};

// The full path of `program` (as given if it holds a '/'); throws common::PlotError naming the Debian
// package when it is not found.
std::string find_gnuplot(const std::string& program);

// Renders the gnuplot script at `script_path` into `image_path` (written under a temporary name
// and renamed, so an image is never half-written). Throws common::PlotError with gnuplot's own message.
void render_gnuplot(const std::string& script_path, const std::string& image_path, ImageFormat format,
                    const GnuplotOptions& options);

// A gnuplot string literal: single quotes, in which only '' needs escaping.
std::string gnuplot_quote(const std::string& text);

}  // namespace experiments
