#include "experiments/analysis/gnuplot.hpp"
#include "common/errors.hpp"
#include "common/atomic_file.hpp"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <vector>

namespace experiments {
namespace {

struct ProgramResult {
  int status = -1;  // exit status; -1 if killed
  bool timed_out = false;
  std::string output;  // stdout and stderr together
};

// fork + exec without a shell, so no path or title is ever parsed by one; output is read until
// the child closes it or the deadline passes.
ProgramResult run_program(const std::vector<std::string>& argv, int timeout_s) {
  int fds[2];
  if (::pipe(fds) != 0) throw common::PlotError(std::string("cannot start gnuplot: pipe: ") + std::strerror(errno));
  std::vector<char*> args;
  for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  const pid_t pid = ::fork();
  if (pid < 0) {
    ::close(fds[0]);
    ::close(fds[1]);
    throw common::PlotError(std::string("cannot start gnuplot: fork: ") + std::strerror(errno));
  }
  if (pid == 0) {
    ::dup2(fds[1], STDOUT_FILENO);
    ::dup2(fds[1], STDERR_FILENO);
    ::close(fds[0]);
    ::close(fds[1]);
    const int null_in = ::open("/dev/null", O_RDONLY);  // gnuplot must never wait for a terminal
    if (null_in >= 0) ::dup2(null_in, STDIN_FILENO);
    ::execv(args[0], args.data());
    std::fprintf(stderr, "exec %s: %s\n", args[0], std::strerror(errno));
    ::_exit(127);
  }
  ::close(fds[1]);
  ProgramResult result;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(timeout_s);
  char buf[4096];
  for (;;) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now()).count();
    if (left <= 0) {
      result.timed_out = true;
      ::kill(pid, SIGKILL);
      break;
    }
    pollfd p{fds[0], POLLIN, 0};
    const int ready = ::poll(&p, 1, static_cast<int>(left));
    if (ready < 0 && errno == EINTR) continue;
    if (ready <= 0) continue;  // the deadline check above ends the wait
    const ssize_t n = ::read(fds[0], buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    result.output.append(buf, static_cast<std::size_t>(n));
  }
  ::close(fds[0]);
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  result.status = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return result;
}

// gnuplot's last lines say what went wrong; a whole echo of a long script would bury them.
// gnuplot's error, its last non-blank line ("\"x.gp\", line 24: x range is invalid"): the lines
// above it echo the script and point at the column, which one error line has no room for.
std::string last_line(const std::string& text) {
  std::size_t end = text.size();
  while (end > 0 && (text[end - 1] == '\n' || text[end - 1] == ' ' || text[end - 1] == '\r')) --end;
  const std::size_t start = text.rfind('\n', end == 0 ? 0 : end - 1);
  return text.substr(start == std::string::npos ? 0 : start + 1, end - (start == std::string::npos ? 0 : start + 1));
}

// pngcairo draws anti-aliased lines; the libgd `png` terminal is the fallback for a gnuplot built
// without cairo (GPVAL_TERMINALS lists what this gnuplot has). Enhanced text mode: the svg
// terminal then titles each series' <g> with its key text; the scripts mark every text they
// draw `noenhanced` so that "fixed_t" keeps its underscore.
std::string terminal_setup(ImageFormat format, const GnuplotOptions& o) {
  const std::string size = std::to_string(o.width) + "," + std::to_string(o.height);
  if (format == ImageFormat::Svg) return "set terminal svg size " + size + " dynamic enhanced font 'Arial,12' background '#ffffff'";
  return "if (strstrt(GPVAL_TERMINALS, 'pngcairo') > 0) { set terminal pngcairo size " + size +
         " enhanced font 'Arial,11' } else { set terminal png size " + size + " enhanced }";
}

}  // namespace

std::string gnuplot_quote(const std::string& text) {
  std::string out = "'";
  for (const char c : text) {
    if (c == '\'') out += "''";
    else if (c == '\n' || c == '\r') out += ' ';  // a line break would end the command
    else out += c;
  }
  return out + "'";
}

std::string find_gnuplot(const std::string& program) {
  const std::string missing = "gnuplot not found (" + program +
                              "): plots need Debian's gnuplot-nox package (scripts/install-deps.sh installs it, "
                              "or: sudo apt-get install gnuplot-nox)";
  if (program.find('/') != std::string::npos) {
    if (::access(program.c_str(), X_OK) != 0) throw common::PlotError(missing);
    return program;
  }
  const char* path = std::getenv("PATH");
  std::string dirs = path ? path : "/usr/local/bin:/usr/bin:/bin";
  std::size_t start = 0;
  while (start <= dirs.size()) {
    const std::size_t end = std::min(dirs.find(':', start), dirs.size());
    const std::string dir = end > start ? dirs.substr(start, end - start) : ".";
    const std::string candidate = dir + "/" + program;
    if (::access(candidate.c_str(), X_OK) == 0 && std::filesystem::is_regular_file(candidate)) return candidate;
    start = end + 1;
  }
  throw common::PlotError(missing);
}

void render_gnuplot(const std::string& script_path, const std::string& image_path, ImageFormat format,
                    const GnuplotOptions& options) {
  const std::string program = find_gnuplot(options.program);
  const std::string temporary = common::temporary_path(image_path);
  const std::string setup = terminal_setup(format, options) + "; set output " + gnuplot_quote(temporary);
  const ProgramResult r = run_program({program, "-e", setup, script_path}, options.timeout_s);
  std::error_code ec;
  if (r.timed_out || r.status != 0 || !std::filesystem::is_regular_file(temporary, ec)) {
    std::filesystem::remove(temporary, ec);
    if (r.timed_out) throw common::PlotError(script_path + ": gnuplot did not finish within " + std::to_string(options.timeout_s) + " s");
    throw common::PlotError(script_path + ": gnuplot failed (exit " + std::to_string(r.status) + "): " + last_line(r.output));
  }
  std::filesystem::rename(temporary, image_path, ec);
  if (ec) {
    std::filesystem::remove(temporary, ec);
    throw common::PlotError(image_path + ": cannot rename into place (" + ec.message() + ")");
  }
}

}  // namespace experiments
