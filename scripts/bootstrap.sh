#!/bin/sh
# Set up what logsift needs on a Debian/Ubuntu machine that has only Python:
# Debian packages when missing (as root, or through sudo), a virtual environment in .venv,
# and logsift installed into it in editable mode with the extras of the chosen profile.
#
#   scripts/bootstrap.sh demo   # run logsift: no system packages beyond python3-venv
#   scripts/bootstrap.sh test   # the test suite: journal tools, libsystemd for systemd-python,
#                               # Chromium and chromedriver for the HTML report, Alertmanager and
#                               # Prometheus (started by the tests, on loopback)
set -eu
profile=${1:-demo}
cd "$(dirname "$0")/.."
PYTHON=${PYTHON:-python3}

case "$profile" in
  demo) apt_packages=""; extras="fast" ;;
  test) apt_packages="systemd-journal-remote libsystemd-dev pkg-config gcc chromium chromium-driver prometheus prometheus-alertmanager"
        extras="dev,fast,portable,journal,ml,watch" ;;
  *) echo "bootstrap: unknown profile '$profile' (demo or test)" >&2; exit 2 ;;
esac

# Python.h is needed to compile systemd-python; Debian's system Python keeps it in python3-dev.
if [ "$profile" = test ] && ! "$PYTHON" -c 'import sysconfig, os, sys; sys.exit(not os.path.exists(os.path.join(sysconfig.get_paths()["include"], "Python.h")))'; then
  apt_packages="$apt_packages python3-dev"
fi
# venv needs ensurepip, which Debian ships separately.
if ! "$PYTHON" -c 'import ensurepip, venv' >/dev/null 2>&1; then
  apt_packages="$apt_packages python3-venv"
fi

missing=""
for package in $apt_packages; do
  dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q "install ok installed" || missing="$missing $package"
done
if [ -n "$missing" ]; then
  if [ "$(id -u)" = 0 ]; then sudo=""; elif command -v sudo >/dev/null 2>&1; then sudo="sudo"; else
    echo "bootstrap: need Debian packages:$missing (run as root or install sudo)" >&2; exit 1
  fi
  echo "bootstrap: installing$missing" >&2
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends $missing >/dev/null
fi

if [ ! -x .venv/bin/python ]; then
  "$PYTHON" -m venv .venv
fi
stamp=".venv/.installed-compat-$profile"
if [ ! -f "$stamp" ] || [ setup.cfg -nt "$stamp" ] || [ pyproject.toml -nt "$stamp" ]; then
  # editable_mode=compat: a plain path in a .pth file, not setuptools' import hook, which costs
  # every start ~10 ms (it imports pathlib, importlib.util and inspect before logsift runs).
  .venv/bin/python -m pip install -q --disable-pip-version-check -e ".[$extras]" --config-settings editable_mode=compat
  touch "$stamp"
fi

# The learned fallback is trained here, once per rule library, never by a diagnosis: triage only
# reads the cache (~/.cache/logsift). Only where the ml extra (scikit-learn) is installed.
if .venv/bin/python -c 'import sklearn' >/dev/null 2>&1; then
  .venv/bin/logsift train >/dev/null || echo "bootstrap: logsift train failed; triage runs without the model fallback" >&2
fi
