#!/usr/bin/env bash
# Installs the Debian packages KVScope builds with, plus any named as arguments, only those missing
# (idempotent, quiet when done).
set -euo pipefail
packages=(
  cmake ninja-build ccache g++ pkg-config
  lld  # links the executables in a fifth of GNU ld's time (CMakeLists.txt)
  qt6-base-dev qt6-charts-dev libqt6opengl6-dev libgl1-mesa-dev
  xvfb xauth imagemagick  # screenshots of the real window
  libabsl-dev nlohmann-json3-dev libcli11-dev
  libboost-math-dev  # Boost.Math: Student t quantiles for the sweep's confidence intervals
  libeigen3-dev  # calibrate profile: least-squares fits of the hardware profile
  libnlopt-dev  # calibrate fit: derivative-free search of scenario parameters
  libbenchmark-dev
  libprotobuf-dev protobuf-compiler libgrpc++-dev libgrpc-dev protobuf-compiler-grpc
  libxxhash-dev libspdlog-dev python3-grpcio python3-protobuf
  openssl  # the TLS test makes a throwaway certificate
  libcpp-httplib-dev  # serve --metrics: the Prometheus /metrics endpoint; the live scraper
  libyaml-cpp-dev  # the live cluster file (serve --live)
  libzmq3-dev cppzmq-dev libmsgpack-cxx-dev  # the engines' KV events (vLLM, SGLang: ZMQ + msgpack)
  python3-zmq python3-msgpack  # the KV-event tests publish as the engines do
  python3-xxhash  # an independent check of the token block hashes (Dynamo's formula)
  prometheus  # the metrics test has a real Prometheus scrape it
  slurm-wlm munge  # sweep --executor slurm: its test starts a real single-node Slurm (app.slurm_sweep)
  dpkg-dev binutils  # the .deb: dpkg-shlibdeps for its Depends; strings and readelf in the path checks
  "$@"
)
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "kvscope: installing ${missing[*]}" >&2
  SUDO=""; [ "$(id -u)" -ne 0 ] && SUDO="sudo"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${missing[@]}" >/dev/null
fi
