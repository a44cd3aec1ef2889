#!/usr/bin/env bash
# Installs the Debian packages Storekeeper builds and tests with, if any are missing.
# As root it runs apt-get; otherwise it prints the exact command and fails.
set -euo pipefail
packages=(pkg-config libssl-dev libsqlite3-dev libpq-dev libmicrohttpd-dev libcurl4-openssl-dev python3-venv openssl)
case "${1:-}" in
  --test) packages+=(postgresql util-linux chromium chromium-driver) ;;
  --bench) packages+=(postgresql util-linux wrk nginx) ;;
esac
missing=()
for package in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q "install ok installed" || missing+=("$package")
done
[ ${#missing[@]} -eq 0 ] && exit 0
command="apt-get update && apt-get install -y --no-install-recommends ${missing[*]}"
if [ "$(id -u)" -eq 0 ]; then
  echo "installing: ${missing[*]}"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq && apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
else
  echo "missing Debian packages: ${missing[*]}" >&2
  echo "run as root: $command" >&2
  exit 1
fi
