#!/usr/bin/env bash
# Generates what a non-default carried release needs to build in this tree, without copying it:
# _output/releases/VERSION/gen/ (the line's vendored controller and integration port) and
# overlay.json, the go -overlay that puts them, and releases/<line>/src/, in place of the default
# line's files. The Makefile runs it before every target with KUBE_VERSION=VERSION; module_flags
# (hack/lib.sh) adds -modfile=releases/<line>/go.mod and -overlay to the go commands.
#   hack/release/release-overlay.sh v1.35.4     prints the overlay's path
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/../lib.sh"

version="${1:?usage: hack/release/release-overlay.sh vX.Y.Z}"
line="$(line_of "${version}")" || exit 2
if [[ "${line}" == "$(default_line)" ]]; then
  echo "release-overlay.sh: ${version} is the default release; it needs no overlay" >&2
  exit 2
fi
out="${REPO_ROOT}/_output/releases/${version}"
gen="${out}/gen"
rm -rf "${gen}"
mkdir -p "${gen}"
vendored_tree "${line}" "${gen}/${VENDORED_PKG}" || { echo "release-overlay.sh: the series does not apply to ${version}" >&2; exit 1; }
integration_tests "${line}" "${gen}/test/integration/volume" || exit 1
python3 - "${REPO_ROOT}" "${gen}" "${RELEASES_DIR}/${line}/src" "${VENDORED_PKG}" >"${out}/overlay.json.tmp" <<'PY'
import json, os, sys
root, gen, src, pkg = sys.argv[1:5]
replace = {}
def files(base, sub):
    top = os.path.join(base, sub)
    for d, _, names in os.walk(top):
        for n in names:
            yield os.path.relpath(os.path.join(d, n), base)
# The generated directories: the line's files replace the default's; a file only the default
# line has is removed.
for sub in (pkg, "test/integration/volume"):
    ours = set(files(gen, sub))
    committed = set(files(root, sub))
    if sub == "test/integration/volume":  # only the two ported files are generated there
        committed = {f for f in committed if os.path.basename(f) in ("main_test.go", "persistent_volumes_test.go")}
    for f in sorted(ours | committed):
        replace[os.path.join(root, f)] = os.path.join(gen, f) if f in ours else ""
# Our own files that differ on the line.
if os.path.isdir(src):
    for f in files(src, "."):
        replace[os.path.join(root, os.path.normpath(f))] = os.path.join(src, os.path.normpath(f))
json.dump({"Replace": replace}, sys.stdout, indent=1, sort_keys=True)
PY
mv "${out}/overlay.json.tmp" "${out}/overlay.json"
echo "${out}/overlay.json"
