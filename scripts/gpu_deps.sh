#!/usr/bin/env bash
# The Debian packages a GPU machine without a package registry needs to build and test this
# project against its own CUDA PyTorch (README "With a GPU"), carried over as .deb files:
#
#   scripts/gpu_deps.sh fetch [DIR]          here, on Debian 12 with apt: apt-get download them into
#                                            DIR (default gpu-deps/, ignored by git)
#   scripts/gpu_deps.sh unpack DIR PREFIX    there: unpack every DIR/*.deb into PREFIX (dpkg -x, or
#                                            ar and tar where there is no dpkg), for
#                                            scripts/gpu_check.sh PREFIX
#
# What is fetched: the headers, CMake files and libraries of yaml-cpp, ZeroMQ (and the libraries
# libzmq5 links), cppzmq, nlohmann-json, doctest and zlib, Gloo's headers (libgloo-dev: headers
# only, no library is carried or linked) and the Fashion-MNIST data. Not libtorch: the machine's
# PyTorch is used. A pip PyTorch ships no gloo/ headers; configure uses these only after checking
# that the toolkit's ProcessGroupGloo source compiled against them holds and calls no Gloo code, so
# that only the Gloo inside libtorch runs (cmake/GlooHeaders.cmake, README "With a GPU").
set -euo pipefail

PACKAGES=(
  libyaml-cpp-dev libyaml-cpp0.7
  libzmq3-dev libzmq5 libsodium23 libpgm-5.3-0 libnorm1 libbsd0 libmd0
  cppzmq-dev
  nlohmann-json3-dev
  doctest-dev
  zlib1g-dev zlib1g
  libgloo-dev
  dataset-fashion-mnist
)

usage() {
  sed -n '2,16p' "$0" | sed 's/^# \{0,1\}//'
  exit 2
}

fetch() {
  local dir="${1:-gpu-deps}"
  mkdir -p "$dir"
  (cd "$dir" && apt-get download "${PACKAGES[@]}")
  echo "fetched $(find "$dir" -name "*.deb" | wc -l) packages into $dir/ ($(du -sh "$dir" | cut -f1)); carry it to the GPU machine"
}

# One .deb into PREFIX: dpkg-deb where there is one, else its data.tar.* through ar and tar.
unpack_one() {
  local deb="$1" prefix="$2"
  if command -v dpkg-deb > /dev/null; then
    dpkg-deb -x "$deb" "$prefix"
    return
  fi
  local tmp deb_path
  tmp="$(mktemp -d)"
  deb_path="$(realpath "$deb")"
  (cd "$tmp" && ar x "$deb_path")
  tar -xf "$tmp"/data.tar.* -C "$prefix"
  rm -rf "$tmp"
}

unpack() {
  [ $# -eq 2 ] || usage
  local dir="$1" prefix="$2"
  mkdir -p "$prefix"
  prefix="$(realpath "$prefix")"
  local n=0
  for deb in "$dir"/*.deb; do
    unpack_one "$deb" "$prefix"
    n=$((n + 1))
  done
  # A few links point at absolute paths (libz.so -> /lib/...): point them at PREFIX's copy.
  find "$prefix" -type l -lname '/*' | while read -r link; do
    local target
    target="$(readlink "$link")"
    if [ -e "$prefix$target" ]; then ln -sfn "$prefix$target" "$link"; fi
  done
  # doctest's CMake targets name /usr as their prefix outright; the others compute theirs from
  # where they lie, so only this one is pointed at PREFIX.
  find "$prefix" -name 'doctestTargets.cmake' -exec sed -i "s|set(_IMPORT_PREFIX \"/usr\")|set(_IMPORT_PREFIX \"$prefix/usr\")|" {} +
  echo "unpacked $n packages into $prefix"
}

case "${1:-}" in
  fetch) shift; fetch "$@" ;;
  unpack) shift; unpack "$@" ;;
  *) usage ;;
esac
