#!/usr/bin/env bash
# Finds closures the compiler gave one name, so that one body runs for both.
#
# Swift 6.3.1 can name a closure written inside a macro's argument (`#expect(x.contains { ... })`)
# within an enclosing closure like a later closure of the same type: only one body is compiled
# and both places run it. A test then checks something other than what it reads (found in
# StoreConformanceTests and CustomerStateLookupTests). SILGen shows it: a closure is created
# where it is written, so a closure referenced from two places is such a pair.
#
# Usage: scripts/closure-collisions.sh [TestModule ...]   (default: every module under Tests/)
# Needs the debug build (`swift build --build-tests`, with the same toolchain: `SWIFT`).
# Prints each pair and exits 1 if any, 2 if it could not check.
set -euo pipefail
cd "$(dirname "$0")/.."
swift=${SWIFT:-swift}
swiftc="$(dirname "$(command -v "$swift")")/swiftc"
modules=("$@")
if [ ${#modules[@]} -eq 0 ]; then
    for dir in Tests/*/; do modules+=("$(basename "$dir")"); done
fi
build=$("$swift" build --show-bin-path)
manifest="$(dirname "$(dirname "$build")")/debug.yaml"
if [ ! -d "$build/Modules" ] || [ ! -f "$manifest" ]; then
    echo "closure-collisions: no debug build in $build: run '$swift build --build-tests' first" >&2
    exit 2
fi
# The package name SwiftPM compiles with (its identity: the checkout's directory name), which
# `package` declarations used by the tests need.
package=$(grep -o -m 1 '"-package-name","[^"]*"' "$manifest" | cut -d '"' -f 4 || true)
if [ -z "$package" ]; then
    echo "closure-collisions: no -package-name in $manifest" >&2
    exit 2
fi
includes=()
for library in openssl sqlite3 libpq libmicrohttpd libcurl; do
    flags=$(pkg-config --cflags-only-I "$library")
    for flag in $flags; do includes+=("$flag"); done
done
maps=()
for map in Sources/C*/module.modulemap; do maps+=(-Xcc "-fmodule-map-file=$PWD/$map"); done
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
# One module's check: its report in $work/$module.out; status 0 none, 1 pairs, 2 cannot check.
check() {
    local module=$1 files=()
    while IFS= read -r file; do files+=("$file"); done < <(find "Tests/$module" -name '*.swift' | sort)
    "$swiftc" -emit-silgen -wmo -suppress-warnings -parse-as-library -enable-testing -swift-version 6 \
        -package-name "$package" -module-name "$module" \
        -D SWIFT_PACKAGE -D DEBUG -D SWIFT_MODULE_RESOURCE_BUNDLE_UNAVAILABLE \
        -I "$build/Modules" "${includes[@]}" "${maps[@]}" \
        -plugin-path "$(dirname "$(dirname "$swiftc")")/lib/swift/host/plugins" \
        "${files[@]}" -o "$work/$module.sil" || return 2
    # Every closure reference, demangled; a module without any means the SIL was not read right.
    grep -oE "function_ref @[^ ]+" "$work/$module.sil" | sort | uniq -c | sed 's/ *\([0-9]*\) function_ref @/\1 /' \
        > "$work/$module.refs"
    cut -d ' ' -f 2 "$work/$module.refs" | "$swift" demangle --simplified > "$work/$module.names"
    paste -d ' ' <(cut -d ' ' -f 1 "$work/$module.refs") "$work/$module.names" > "$work/$module.counted"
    if ! grep -qE "^[0-9]+ (implicit )?closure #" "$work/$module.counted"; then
        echo "closure-collisions: $module: no closure found in its SIL; cannot check" >&2
        return 2
    fi
    # Referenced from more than one place (local functions, called from many, are not closures).
    local pairs
    pairs=$(awk '$1 > 1' "$work/$module.counted" | grep -E "^[0-9]+ (implicit )?closure #" | cut -d ' ' -f 2- ||
        [ $? -eq 1 ])
    if [ -n "$pairs" ]; then
        { echo "$module:"; echo "$pairs" | sed 's/^/  /'; } > "$work/$module.out"
        return 1
    fi
    echo "$module: none" > "$work/$module.out"
}

# Modules are checked CLOSURE_JOBS at a time (default: the cores): in `make test` this runs last
# beside the suites, alone on the machine once they end, and one module at a time left a core
# idle for two minutes.
jobs=${CLOSURE_JOBS:-$(nproc)}
for module in "${modules[@]}"; do
    while [ "$(jobs -rp | wc -l)" -ge "$jobs" ]; do wait -n || true; done
    (check "$module"; echo $? > "$work/$module.status") &
done
wait
found=0
for module in "${modules[@]}"; do
    status=$(cat "$work/$module.status" 2>/dev/null || echo 2)
    [ -f "$work/$module.out" ] && cat "$work/$module.out"
    if [ "$status" -eq 2 ]; then exit 2; fi
    if [ "$status" -eq 1 ]; then found=1; fi
done
exit $found
