#!/bin/sh
# The Debian packages the test suite runs for real (no mocks of what can run here).
# `check`: install missing ones with apt-get when root, else fail with one line naming them.
set -eu

# kubectl (test/deploy: kubectl kustomize) is not a Debian package (Debian's kubernetes-client is
# kubectl 1.20, too old for current kustomizations): install it separately; the test names it.
# binary -> Debian package (curl: the demo test runs the README's curl commands as printed)
DEPS="curl:curl redis-server:redis-server redis-cli:redis-tools redis-sentinel:redis-sentinel nginx:nginx-light prometheus:prometheus promtool:prometheus prometheus-alertmanager:prometheus-alertmanager amtool:prometheus-alertmanager prometheus-nginx-exporter:prometheus-nginx-exporter chromium:chromium"

missing=""
for pair in $DEPS; do
  bin=${pair%%:*}
  pkg=${pair#*:}
  if ! command -v "$bin" >/dev/null 2>&1 && [ ! -x "/usr/sbin/$bin" ] && [ ! -x "/usr/bin/$bin" ]; then
    case " $missing " in *" $pkg "*) ;; *) missing="$missing $pkg" ;; esac
  fi
done

[ -z "$missing" ] && exit 0

if [ "$(id -u)" = "0" ] && command -v apt-get >/dev/null 2>&1; then
  echo "installing Debian packages for the tests:$missing" >&2
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq >/dev/null
  # shellcheck disable=SC2086
  apt-get install -y -qq --no-install-recommends $missing >/dev/null
  exit 0
fi

echo "limitswitch tests need Debian packages:$missing (run: sudo apt-get install -y$missing)" >&2
exit 1
