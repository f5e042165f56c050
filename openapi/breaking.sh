#!/usr/bin/env bash
# Fails on a breaking change to the spec that its commit does not call deliberate.
#
# Every commit since BASELINE that touched the spec is compared with its parent by oasdiff (`breaking`,
# level ERR: what breaks a client generated from the parent's spec). A commit may break the spec on
# purpose by saying so in its message with the trailer line
#
#     Spec-Breaking: deliberate
#
# Uncommitted changes are compared with HEAD; they have no message yet, so SPEC_BREAKING=deliberate
# lets them pass until they are committed with the trailer.
#
# Usage: openapi/breaking.sh <oasdiff binary>
set -euo pipefail
cd "$(dirname "$0")/.."

oasdiff=$1
spec=openapi/openapi.yaml
# The last commit on main before this check existed: older history is not re-judged.
BASELINE=4a396cacca4385e8a0c4497d6217d15e49e459dc
trailer='Spec-Breaking: deliberate'

failed=0
# compare <base ref> <revision ref or file> <label> <message or "">
compare() {
	local out
	if out=$("$oasdiff" breaking "$1" "$2" --fail-on ERR --color never 2>&1); then
		return 0
	fi
	if printf '%s\n' "$4" | grep -qxiF "$trailer"; then
		printf 'spec: %s breaks the spec deliberately (%s):\n%s\n\n' "$3" "$trailer" "$out"
		return 0
	fi
	printf 'spec: %s makes a breaking change to %s:\n%s\n\n' "$3" "$spec" "$out" >&2
	failed=1
}

if ! git rev-parse --verify -q HEAD >/dev/null; then
	echo "spec: no git history here; breaking-change check skipped"
	exit 0
fi

if git cat-file -e "$BASELINE^{commit}" 2>/dev/null; then
	range="$BASELINE..HEAD"
else
	# A shallow clone: judge the last commit at least.
	echo "spec: baseline $BASELINE is not in this clone's history; checking the last commit only"
	range="HEAD~1..HEAD"
	git cat-file -e "HEAD~1^{commit}" 2>/dev/null || range=""
fi
# A commit's verdict never changes (its spec, its parent's and its message are fixed by its hash): the
# commits judged acceptable by this oasdiff under this script's rules (its hash names the list) are noted
# in bin/ (not committed) and not compared again.
judged=$(dirname "$oasdiff")/judged-by-$(git hash-object openapi/breaking.sh | cut -c1-12)
touch "$judged"
checked=0
if [ -n "$range" ]; then
	for c in $(git rev-list --reverse --no-merges "$range" -- "$spec"); do
		git cat-file -e "$c^:$spec" 2>/dev/null || continue
		checked=$((checked + 1))
		grep -qxF "$c" "$judged" && continue
		before=$failed
		compare "$c^:$spec" "$c:$spec" "commit $(git log -1 --format='%h (%s)' "$c")" "$(git log -1 --format=%B "$c")"
		[ "$failed" = "$before" ] && echo "$c" >>"$judged"
	done
fi

if ! git diff --quiet HEAD -- "$spec"; then
	tmp=$(mktemp -d)
	trap 'rm -rf "$tmp"' EXIT
	git show "HEAD:$spec" >"$tmp/head.yaml"
	msg=""
	[ "${SPEC_BREAKING:-}" = deliberate ] && msg=$trailer
	compare "$tmp/head.yaml" "$spec" "the uncommitted change" "$msg"
fi

if [ "$failed" -ne 0 ]; then
	echo "spec: a breaking change needs the line '$trailer' in its commit message (uncommitted: SPEC_BREAKING=deliberate)." >&2
	exit 1
fi
echo "spec: no undeclared breaking change ($checked commit(s) since ${BASELINE:0:12} compared with their parents, or judged so before)"
