#!/bin/sh
# Writes the man pages of tidesim from its own --help texts (no help2man):
#   scripts/gen_man.sh BIN OUTDIR VERSION
# OUTDIR/tidesim.1 from `BIN --help`, OUTDIR/tidesim-CMD.1 from `BIN CMD --help`
# for every command. The usage lines become SYNOPSIS, the rest DESCRIPTION
# (kept as laid out: no-fill), a paragraph starting "exit status:" EXIT STATUS.
# Called by `make man` and `make install`.
set -eu
if [ $# -ne 3 ]; then
    echo "usage: scripts/gen_man.sh BIN OUTDIR VERSION" >&2
    exit 2
fi
BIN=$1
OUT=$2
VERSION=$3
mkdir -p "$OUT"

# name|one-line summary (the commands of `tidesim --help`)
COMMANDS="run|simulate a scenario and write an HDF5 results file
validate|check scenario files without running them
sweep|run a scenario over axes of values: a results file per point and an index
plan|the smallest cluster passing every gate with confidence, per policy or sharing choice
report|print a results file's figures (text, Markdown or JSON)
compare|compare results files side by side, with 95% intervals
check|quality gates on a results file for CI
plot|charts of results files through gnuplot
mig|MIG profile table and layout check
traces|inspect a trace, or convert it to the generic CSV"

# roff-escape text read on stdin: backslashes, leading . and ', and hyphens.
escape() {
    sed -e 's/\\/\\e/g' -e 's/^\([.'"'"']\)/\\\&\1/' -e 's/-/\\-/g'
}

# page NAME SUMMARY HELPFILE SEEALSO
page() {
    name=$1 summary=$2 help=$3 seealso=$4
    upper=$(printf '%s' "$name" | tr '[:lower:]' '[:upper:]')
    {
        printf '.TH %s 1 "" "tidesim %s" "tidesim manual"\n' "$upper" "$VERSION"
        printf '.SH NAME\n%s \\- %s\n' "$(printf '%s' "$name" | escape)" "$(printf '%s' "$summary" | escape)"
        printf '.SH SYNOPSIS\n.nf\n'
        # the usage block: from the first line to the first blank line, "usage: " dropped
        awk 'NR == 1, /^$/ { if ($0 != "") print }' "$help" | sed 's/^usage: //' | escape
        printf '.fi\n.SH DESCRIPTION\n.nf\n'
        awk 'f && tolower($0) ~ /^exit status/ { exit } f { print } /^$/ { f = 1 }' "$help" |
            escape
        printf '.fi\n'
        if grep -qi '^exit status' "$help"; then
            printf '.SH "EXIT STATUS"\n.nf\n'
            awk 'tolower($0) ~ /^exit status/ { f = 1; sub(/^[Ee]xit status: */, "") } f' "$help" |
                escape
            printf '.fi\n'
        fi
        printf '.SH "SEE ALSO"\n%s\n' "$seealso"
    } >"$OUT/$name.1"
}

tmp=$(mktemp)
trap 'rm -f "$tmp"' EXIT
all=""
echo "$COMMANDS" | while IFS='|' read -r cmd summary; do
    "$BIN" "$cmd" --help >"$tmp"
    page "tidesim-$cmd" "$summary" "$tmp" ".BR tidesim (1)"
done
echo "$COMMANDS" | {
    while IFS='|' read -r cmd summary; do
        all="$all${all:+,\n}.BR tidesim\\-$cmd (1)"
    done
    "$BIN" --help >"$tmp"
    page tidesim "a discrete-event simulator of shared A100 GPU clusters" "$tmp" "$(printf "$all")"
}
