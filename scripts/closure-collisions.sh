#!/usr/bin/env bash
# Finds closures the compiler gave one name, so that one body runs for both.
#
# Swift 6.3.1 can name a closure written inside a macro's argument (`#expect(x.contains { ... })`)
# like a later closure of the same type in the same enclosing closure: only one body is
# compiled and both places run it. A test then checks something other than what it reads
# (found in StoreConformanceTests and CustomerStateLookupTests). SILGen shows it: a closure
# is created where it is written, so a closure referenced from two places is such a pair.
#
# Usage: scripts/closure-collisions.sh [TestModule ...]   (default: every module under Tests/)
# Needs the debug build (`swift build --build-tests`); prints each pair, exits 1 if any.
set -euo pipefail
cd "$(dirname "$0")/.."
modules=("$@")
if [ ${#modules[@]} -eq 0 ]; then
    for dir in Tests/*/; do modules+=("$(basename "$dir")"); done
fi
build=$(swift build --show-bin-path)
includes=()
for package in openssl sqlite3 libpq libmicrohttpd libcurl; do
    for flag in $(pkg-config --cflags-only-I "$package" 2>/dev/null); do includes+=("$flag"); done
done
maps=()
for map in Sources/C*/module.modulemap; do maps+=(-Xcc "-fmodule-map-file=$PWD/$map"); done
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
found=0
for module in "${modules[@]}"; do
    mapfile -t files < <(find "Tests/$module" -name '*.swift' | sort)
    swiftc -emit-silgen -wmo -suppress-warnings -parse-as-library -enable-testing -swift-version 6 -package-name main \
        -module-name "$module" -D SWIFT_PACKAGE -D DEBUG -D SWIFT_MODULE_RESOURCE_BUNDLE_UNAVAILABLE \
        -I "$build/Modules" "${includes[@]}" "${maps[@]}" \
        -plugin-path "$(dirname "$(dirname "$(command -v swiftc)")")/lib/swift/host/plugins" \
        "${files[@]}" -o "$work/$module.sil"
    # Closures of this module referenced from more than one place (local functions, which are
    # called from many, are left out by their demangled names).
    pairs=$(grep -oE "function_ref @[^ ]+" "$work/$module.sil" | sort | uniq -c | awk '$1 > 1 { print $3 }' \
        | sed 's/^@//' | swift demangle --simplified | grep -E "^(implicit )?closure #" || true)
    if [ -n "$pairs" ]; then
        found=1
        echo "$module:"
        echo "$pairs" | sed 's/^/  /'
    else
        echo "$module: none"
    fi
done
exit $found
