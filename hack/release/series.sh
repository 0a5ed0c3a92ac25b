#!/usr/bin/env bash
# The patch series and the release lines, as functions that take their inputs as arguments.
# Sourced by hack/lib.sh; do not run it. docs/maintainers/patches-and-releases.md tells the model:
#
#   patches/series, patches/NNNN-*.patch   the series: every entry applies to every line by default
#   releases/DEFAULT                       the default line (the repository's go.mod, the committed
#                                          vendored copy and integration port are for it)
#   releases/<line>/UPSTREAM               the k8s.io/kubernetes tag the line carries (every line)
#   releases/<line>/patches/               only how the line differs: an entry adapted to it (the
#                                          files whose change differs; the shared patch gives the
#                                          rest) or an entry only it carries (its own name, ordered
#                                          among the others by number)
#   releases/<line>/drop                   entries of the series the line does not apply, one per
#                                          line, the reason in a comment
#   releases/<line>/go.mod, tools/, etcd/  module files of a non-default line
#   releases/<line>/src/                   our own files that differ on the line, at their path

RELEASES_DIR="${REPO_ROOT}/releases"

# default_line prints the default release line (v1.37).
default_line() {
  tr -d '[:space:]' <"${RELEASES_DIR}/DEFAULT"
}

# line_tag LINE prints the upstream tag LINE carries.
line_tag() {
  tr -d '[:space:]' <"${RELEASES_DIR}/$1/UPSTREAM"
}

# upstream_tag prints the default line's upstream tag.
upstream_tag() {
  line_tag "$(default_line)"
}

# carried_lines prints every carried line, oldest first.
carried_lines() {
  local d
  for d in "${RELEASES_DIR}"/v*/UPSTREAM; do basename "$(dirname "${d}")"; done | sort -V
}

# release_line v1.36.3 -> v1.36
release_line() {
  local v="${1#v}"
  echo "v${v%%.*}.$(echo "${v}" | cut -d. -f2)"
}

# line_of VERSION prints the carried line whose tag is VERSION, or fails saying what is carried.
line_of() {
  local line l carried=""
  line="$(release_line "$1")"
  for l in $(carried_lines); do carried+="$(line_tag "${l}") "; done
  if [[ ! -f "${RELEASES_DIR}/${line}/UPSTREAM" ]]; then
    echo "release line ${line} is not carried; carried: ${carried}(hack/release/rebase.sh $1 starts it)" >&2
    return 2
  fi
  if [[ "$(line_tag "${line}")" != "$1" ]]; then
    echo "line ${line} carries $(line_tag "${line}"), not $1; carried: ${carried}(hack/release/rebase.sh $1 moves it)" >&2
    return 2
  fi
  echo "${line}"
}

# line_toolchain LINE prints the Go toolchain LINE's go.mod names on its toolchain line (nothing when
# it names none). A line whose release needs a newer Go than the default line's (v1.38: Go 1.27)
# builds with that toolchain: hack/lib.sh, the Makefile and rebase.sh export it as GOTOOLCHAIN, so
# the go command fetches it from the module proxy the first time; every other line keeps the local Go.
line_toolchain() {
  [[ -f "${RELEASES_DIR}/$1/go.mod" ]] || return 0
  sed -n 's/^toolchain[[:space:]]*//p' "${RELEASES_DIR}/$1/go.mod"
}

# line_variants LINE prints the directory of LINE's adapted and own entries (it may not exist).
line_variants() {
  echo "${RELEASES_DIR}/$1/patches"
}

# series_file_entries FILE prints the entries of a series-like file, comments and blanks dropped.
series_file_entries() {
  [[ -f "$1" ]] || return 0
  sed 's/#.*//; s/[[:space:]]//g; /^$/d' "$1"
}

# line_series LINE prints the entries LINE applies, in order: patches/series without the line's
# drop list, plus the entries only the line carries, ordered by their number.
line_series() {
  local variants f
  variants="$(line_variants "$1")"
  {
    series_file_entries "${REPO_ROOT}/patches/series" | grep -vxF -f <(series_file_entries "${RELEASES_DIR}/$1/drop"; echo "#none")
    for f in "${variants}"/[0-9][0-9][0-9][0-9]-*.patch; do
      [[ -f "${f}" && ! -f "${REPO_ROOT}/patches/$(basename "${f}")" ]] && basename "${f}"
    done
  } | sort -s -t- -k1,1n
}

# entry_kind LINE ENTRY: shared | adapted | own (only this line carries it).
entry_kind() {
  local variant
  variant="$(line_variants "$1")/$2"
  if [[ ! -f "${variant}" ]]; then echo shared
  elif [[ -f "${REPO_ROOT}/patches/$2" ]]; then echo adapted
  else echo own
  fi
}

# patch_files PATCH lists the files a patch touches.
patch_files() {
  awk '/^diff --git a\// { print substr($3, 3) }' "$1"
}

# apply_entry DIR ENTRY VARIANTS [git apply args...] applies one entry to the tree at DIR: the
# shared patch patches/ENTRY; or, when VARIANTS/ENTRY exists, the shared patch's changes to the
# files the adapted one does not carry, then the adapted one (so a patch's new files, and any hunk
# that still applies, are written once for every line); or an entry only VARIANTS has.
apply_entry() {
  local dir="$1" entry="$2" variants="$3"
  shift 3
  local shared="${REPO_ROOT}/patches/${entry}" variant="${variants}/${entry}"
  if [[ ! -f "${variant}" ]]; then
    (cd "${dir}" && git apply --whitespace=nowarn -p1 "$@" "${shared}")
    return
  fi
  if [[ ! -f "${shared}" ]]; then
    (cd "${dir}" && git apply --whitespace=nowarn -p1 "$@" "${variant}")
    return
  fi
  local includes=() f
  while read -r f; do
    [[ -z "${f}" ]] && continue
    patch_files "${variant}" | grep -qxF "${f}" || includes+=("--include=${f}")
  done < <(patch_files "${shared}")
  if [[ ${#includes[@]} -gt 0 ]]; then
    (cd "${dir}" && git apply --whitespace=nowarn -p1 "$@" "${includes[@]}" "${shared}") || return 1
  fi
  (cd "${dir}" && git apply --whitespace=nowarn -p1 "$@" "${variant}")
}

# entry_source ENTRY VARIANTS prints the patch whose header (author, date, message) ENTRY carries:
# the shared patch's, also for an adapted entry (whose own message only names it); an entry only
# the line carries, its own.
entry_source() {
  if [[ -f "${REPO_ROOT}/patches/$1" ]]; then echo "${REPO_ROOT}/patches/$1"; else echo "$2/$1"; fi
}

# adapted_message LINE ENTRY replaces the message of the format-patch output on stdin with one
# line naming the shared patch: an adapted entry's message is the shared patch's (entry_source).
adapted_message() {
  awk -v line="$1" -v entry="$2" '
    done { print; next }
    !body && /^$/ { body = 1; print; print "The " line " form of patches/" entry " (its message): only the files where it differs."; print ""; next }
    !body { print; next }
    /^---$/ { done = 1; print }'
}

# commit_entry DIR ENTRY VARIANTS [git apply args...] applies ENTRY to the git work tree DIR and
# commits it with the patch's author, date and message, as git am would. With --3way, a conflict
# leaves the work tree for a human and returns 1 without committing.
commit_entry() {
  local dir="$1" entry="$2" variants="$3"
  shift 3
  apply_entry "${dir}" "${entry}" "${variants}" "$@" || return 1
  commit_entry_message "${dir}" "${entry}" "${variants}"
}

# commit_entry_message DIR ENTRY VARIANTS commits what is staged in DIR with ENTRY's header.
commit_entry_message() {
  local dir="$1" entry="$2" variants="$3" tmp info date
  tmp="$(mktemp -d)"
  info="$(git mailinfo "${tmp}/msg" "${tmp}/patch" <"$(entry_source "${entry}" "${variants}")")"
  git -C "${dir}" add -A
  date="$(sed -n 's/^Date: //p' <<<"${info}")"
  GIT_AUTHOR_NAME="$(sed -n 's/^Author: //p' <<<"${info}")" GIT_AUTHOR_EMAIL="$(sed -n 's/^Email: //p' <<<"${info}")" \
    GIT_AUTHOR_DATE="${date}" GIT_COMMITTER_DATE="${date}" \
    git -C "${dir}" -c user.name=pv-controller-manager -c user.email=pv-controller-manager@invalid \
    commit -q --allow-empty -F <({ sed -n 's/^Subject: //p' <<<"${info}"; echo; cat "${tmp}/msg"; })
  rm -rf "${tmp}"
}

# copy_upstream TAG DIR copies VENDORED_PKG (and the carried sub-packages) of k8s.io/kubernetes@TAG
# into the tree at DIR, at upstream's path.
copy_upstream() {
  local src sub
  src="$(upstream_dir "$1")/${VENDORED_PKG}" || return 1
  rm -rf "${2:?}/${VENDORED_PKG}"
  mkdir -p "$2/${VENDORED_PKG}"
  cp "${src}"/*.go "$2/${VENDORED_PKG}/"
  for sub in "${VENDORED_SUBPKGS[@]}"; do
    mkdir -p "$2/${VENDORED_PKG}/${sub}"
    cp "${src}/${sub}"/*.go "$2/${VENDORED_PKG}/${sub}/"
  done
  chmod -R u+w "$2/${VENDORED_PKG}"
}

# series_work_tree DIR TAG LINE: a git work tree at DIR with upstream TAG (tagged "upstream") and
# one commit per entry of LINE's series. Fails naming the first entry that does not apply.
series_work_tree() {
  local dir="$1" tag="$2" line="$3" entry variants
  variants="$(line_variants "${line}")"
  rm -rf "${dir}"
  mkdir -p "${dir}"
  copy_upstream "${tag}" "${dir}" || return 1
  git -C "${dir}" init -q
  git -C "${dir}" add -A
  git -C "${dir}" -c user.name=pv-controller-manager -c user.email=pv-controller-manager@invalid commit -qm "upstream k8s.io/kubernetes ${tag}"
  git -C "${dir}" tag upstream
  for entry in $(line_series "${line}"); do
    commit_entry "${dir}" "${entry}" "${variants}" || { echo "${entry} does not apply on ${tag} (hack/release/rebase.sh ${tag})" >&2; return 1; }
  done
}

# entry_with_subject DIR WORK COMMIT prints the patch in DIR with the subject of WORK's COMMIT, if any.
entry_with_subject() {
  local subject f
  subject="$(git -C "$2" log -1 --format=%s "$3")"
  for f in "$1"/[0-9][0-9][0-9][0-9]-*.patch; do
    [[ -f "${f}" ]] || continue
    [[ "$(git mailinfo /dev/null /dev/null <"${f}" | sed -n 's/^Subject: //p')" == "${subject}" ]] && { basename "${f}"; return; }
  done
  return 0
}

series_header() {
  echo "# The patch series, applied in this order on top of each release line's upstream tag"
  echo "# (releases/<line>/UPSTREAM) by hack/release/update-vendored.sh. A line differs only by"
  echo "# releases/<line>/patches/ and releases/<line>/drop (docs/maintainers/patches-and-releases.md)."
}

# export_series WORK LINE writes the commits of the work tree WORK after "upstream" back. For the
# default line: patches/NNNN-*.patch and patches/series. For another line: only how it differs, in
# releases/LINE/patches/: an entry whose shared patch does not give the commit keeps the files where
# it does not (adapted); a commit no shared patch names is an entry of its own.
export_series() {
  local work="$1" line="$2" commits c entry idx paths f shared_blob variants out
  local fp=(format-patch --zero-commit --no-signature --no-numbered)
  git_w() { git -C "${work}" "$@"; }
  if [[ "${line}" == "$(default_line)" ]]; then
    rm -f "${REPO_ROOT}"/patches/[0-9][0-9][0-9][0-9]-*.patch
    git_w "${fp[@]}" -q -o "${REPO_ROOT}/patches" upstream..HEAD
    { series_header; (cd "${REPO_ROOT}/patches" && ls [0-9][0-9][0-9][0-9]-*.patch 2>/dev/null || true); } >"${REPO_ROOT}/patches/series"
    return
  fi
  variants="$(line_variants "${line}")"
  out="$(mktemp -d)"
  mapfile -t commits < <(git_w rev-list --reverse upstream..HEAD)
  idx="$(mktemp)"
  for c in "${commits[@]}"; do
    entry="$(entry_with_subject "${REPO_ROOT}/patches" "${work}" "${c}")"
    if [[ -z "${entry}" ]]; then # an entry only this line carries: keep its name
      entry="$(entry_with_subject "${variants}" "${work}" "${c}")"
      if [[ -n "${entry}" ]]; then
        git_w "${fp[@]}" -1 --stdout "${c}" >"${out}/${entry}"
      else
        git_w "${fp[@]}" -1 -o "${out}" "${c}" >/dev/null
      fi
      continue
    fi
    # Does the shared patch, applied to the parent, give exactly this commit?
    GIT_INDEX_FILE="${idx}" git_w read-tree "${c}^"
    if GIT_INDEX_FILE="${idx}" git_w apply --cached --whitespace=nowarn "${REPO_ROOT}/patches/${entry}" 2>/dev/null &&
      [[ "$(GIT_INDEX_FILE="${idx}" git_w write-tree)" == "$(git_w rev-parse "${c}^{tree}")" ]]; then
      continue
    fi
    # Adapted: only the files where the shared patch does not give this commit's content.
    paths=()
    while read -r f; do
      shared_blob=""
      if patch_files "${REPO_ROOT}/patches/${entry}" | grep -qxF "${f}"; then
        GIT_INDEX_FILE="${idx}" git_w read-tree "${c}^"
        if GIT_INDEX_FILE="${idx}" git_w apply --cached --whitespace=nowarn --include="${f}" "${REPO_ROOT}/patches/${entry}" 2>/dev/null; then
          shared_blob="$(GIT_INDEX_FILE="${idx}" git_w ls-files -s -- "${f}" | awk '{print $2}')"
        fi
      fi
      [[ -n "${shared_blob}" && "${shared_blob}" == "$(git_w rev-parse "${c}:${f}" 2>/dev/null)" ]] && continue
      paths+=("${f}")
    done < <(git_w diff --name-only "${c}^" "${c}")
    git_w "${fp[@]}" -1 --stdout "${c}" -- "${paths[@]}" | adapted_message "${line}" "${entry}" >"${out}/${entry}"
  done
  rm -f "${idx}"
  rm -rf "${variants}"
  if compgen -G "${out}/*.patch" >/dev/null; then
    mkdir -p "${variants}"
    cp "${out}"/*.patch "${variants}/"
  fi
  rm -rf "${out}"
}

# vendored_tree LINE OUT writes the vendored controller of LINE (its upstream tag + its series,
# the import paths of the carried sub-packages rewritten, gofmt, marked generated) to OUT.
vendored_tree() {
  local line="$1" out="$2" tag src work dst patch variants f sub
  tag="$(line_tag "${line}")"
  variants="$(line_variants "${line}")"
  src="$(upstream_dir "${tag}")/${VENDORED_PKG}" || return 1
  work="$(mktemp -d)"
  dst="${work}/${VENDORED_PKG}"
  mkdir -p "${dst}"
  # Top-level Go files plus the sub-packages we carry; config/ and options/ stay upstream's
  # (KCM's option structs import them from k8s.io/kubernetes).
  cp "${src}"/*.go "${dst}/"
  for sub in "${VENDORED_SUBPKGS[@]}"; do
    mkdir -p "${dst}/${sub}"
    cp "${src}/${sub}"/*.go "${dst}/${sub}/"
  done
  chmod -R u+w "${work}"
  for patch in $(line_series "${line}"); do
    if ! apply_entry "${work}" "${patch}" "${variants}"; then
      echo "patch ${patch} does not apply on k8s.io/kubernetes ${tag} (hack/release/rebase.sh ${tag} shows the hunks)" >&2
      rm -rf "${work}"
      return 1
    fi
  done
  local upstream_import="k8s.io/kubernetes/${VENDORED_PKG}" ours_import="${MODULE}/${VENDORED_PKG}"
  local marker="// Code generated by hack/release/update-vendored.sh from k8s.io/kubernetes ${tag} and patches/series. DO NOT EDIT."
  while IFS= read -r -d '' f; do
    for sub in "${VENDORED_SUBPKGS[@]}"; do
      sed -i "s#\"${upstream_import}/${sub}\"#\"${ours_import}/${sub}\"#g" "${f}"
    done
    { echo "${marker}"; echo; cat "${f}"; } >"${f}.tmp" && mv "${f}.tmp" "${f}"
  done < <(find "${dst}" -name '*.go' -print0)
  gofmt -w "${dst}"
  cat >"${dst}/VENDORED.md" <<MD
# Generated: do not edit

This directory is upstream \`k8s.io/kubernetes/${VENDORED_PKG}\` at ${tag}
with \`patches/series\` applied and the import paths of ${VENDORED_SUBPKGS[*]} rewritten to
\`${ours_import}\`. It is regenerated by \`hack/release/update-vendored.sh\` and checked by
\`hack/verify/verify-vendored.sh\`. To change it, change a patch (see docs/maintainers/patches-and-releases.md).
MD
  rm -rf "${out}"
  mkdir -p "$(dirname "${out}")"
  cp -r "${dst}" "${out}"
  rm -rf "${work}"
}

# integration_tests LINE OUT ports upstream's PV integration tests of LINE's tag
# (test/integration/volume/{main_test.go,persistent_volumes_test.go}) into OUT. The only change:
# the controller under test is our patched copy, built with ConcurrentSyncs from
# getConcurrentSyncs() (pvcm_settings_test.go).
integration_tests() {
  local tag out="$2" src f
  tag="$(line_tag "$1")"
  src="$(upstream_dir "${tag}")/test/integration/volume" || return 1
  mkdir -p "${out}"
  local upstream_import='persistentvolumecontroller "k8s.io/kubernetes/pkg/controller/volume/persistentvolume"'
  local our_import="persistentvolumecontroller \"${MODULE}/${VENDORED_PKG}\""
  local params_anchor='SyncPeriod:                getSyncPeriod(syncPeriod),'
  for f in main_test.go persistent_volumes_test.go; do
    { echo "// Code generated by hack/release/update-integration.sh from k8s.io/kubernetes@${tag} test/integration/volume/${f}. DO NOT EDIT."; echo; cat "${src}/${f}"; } >"${out}/${f}"
    chmod 0644 "${out}/${f}"
  done
  local pv="${out}/persistent_volumes_test.go"
  grep -qF "${upstream_import}" "${pv}" || { echo "upstream import not found in ${tag}'s ${pv##*/}; port by hand" >&2; return 1; }
  grep -qF "${params_anchor}" "${pv}" || { echo "ControllerParameters anchor not found in ${tag}'s ${pv##*/}; port by hand" >&2; return 1; }
  sed -i "s#${upstream_import}#${our_import}#" "${pv}"
  sed -i "s#\(\t*\)${params_anchor}#&\n\1ConcurrentSyncs: getConcurrentSyncs(),#" "${pv}"
  gofmt -w "${out}"
}
