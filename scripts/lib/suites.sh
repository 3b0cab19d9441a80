# scripts/lib/suites.sh: the suite registry as the shell sees it (sourced by lib.sh). A suite is one
# folder, suites/<name>/, and nothing outside it names the suite:
#   suite.toml      its declaration for the analysis side (title, the write-up it mirrors, run order,
#                   the comparisons it makes, its wording); httplab.lab.suites reads it
#   <name>.sh       its scenario matrix, when it runs as one part, or
#   <name>_<x>.sh   one file per part, when a server must start in another mode for some points
#                   (latency_h1, latency_h2c, latency_https: HTTP/1.1, h2c and TLS); each part is
#                   a directory of its own in raw/<run_id>/ and is run by scripts/bench.sh <part>
#   report.ipynb    its report (papermill parameters run_dir, out_dir); without one, the generic
#                   notebooks/suite.ipynb reports it
# Any other file in the folder (lib.sh, targets.toml, report.py) is the suite's own business.

SUITES_DIR=${SUITES_DIR:-$LAB_ROOT/suites}

# suite_order_of NAME: the suite's `order = N` (suite.toml; 1000 when absent): run_all.sh runs the
# suites low first.
suite_order_of() {
    local n
    n=$(awk -F= '/^order[[:space:]]*=/ { gsub(/[[:space:]]/, "", $2); print $2; exit }' "$SUITES_DIR/$1/suite.toml")
    echo "${n:-1000}"
}

# lab_suites: every suite's name, in run order.
lab_suites() {
    local toml name
    for toml in "$SUITES_DIR"/*/suite.toml; do
        [[ -f $toml ]] || continue
        name=$(basename "$(dirname "$toml")")
        printf '%s %s\n' "$(suite_order_of "$name")" "$name"
    done | sort -k1,1n -k2,2 | cut -d' ' -f2
}

# suite_parts NAME: the suite's parts (NAME.sh, NAME_*.sh in its folder), one a line.
suite_parts() {
    local f
    for f in "$SUITES_DIR/$1/$1.sh" "$SUITES_DIR/$1/$1"_*.sh; do
        [[ -f $f ]] && basename "$f" .sh
    done
    return 0
}

# lab_parts: every part of every suite, in run order.
lab_parts() {
    local s
    for s in $(lab_suites); do suite_parts "$s"; done
}

# suite_title_of NAME: the suite's `title = "…"` (suite.toml's first one, before any [table]; the
# folder's name when it has none).
suite_title_of() {
    local t
    t=$(awk '/^\[/ { exit } /^title[[:space:]]*=/ { sub(/^title[[:space:]]*=[[:space:]]*"/, ""); sub(/"[[:space:]]*(#.*)?$/, ""); print; exit }' \
        "$SUITES_DIR/$1/suite.toml")
    echo "${t:-$1}"
}

# suites_help: the suites and their parts as a usage text lists them, read from suites/ (one line a
# suite, in run order: its name, its title, its parts when they are more than the suite itself, and
# the write-up it mirrors when its suite.toml has a [seed] table).
suites_help() {
    local s parts seed width=0
    for s in $(lab_suites); do (( ${#s} > width )) && width=${#s}; done
    echo
    echo "suites (a folder of suites/ each; --suites takes a suite or one of its parts):"
    for s in $(lab_suites); do
        parts=$(suite_parts "$s" | paste -sd' ')
        seed=$(awk '/^\[seed\]/ { on = 1; next } /^\[/ { on = 0 } on && /^number[[:space:]]*=/ { gsub(/[^0-9]/, ""); print; exit }' \
            "$SUITES_DIR/$s/suite.toml")
        printf '  %-*s  %s%s%s\n' "$width" "$s" "$(suite_title_of "$s")" \
            "$([[ $parts == "$s" ]] || echo "; parts: ${parts// /, }")" "${seed:+ (seed $seed)}"
    done
}

# part_suite PART: the suite a part belongs to (nothing when none).
part_suite() {
    local s p
    for s in $(lab_suites); do
        for p in $(suite_parts "$s"); do [[ $p == "$1" ]] && { echo "$s"; return 0; }; done
    done
    return 0
}

# suite_notebook NAME: the notebook that reports the suite.
suite_notebook() {
    if [[ -f $SUITES_DIR/$1/report.ipynb ]]; then echo "$SUITES_DIR/$1/report.ipynb"
    else echo "$LAB_ROOT/notebooks/suite.ipynb"; fi
}

# expand_suites NAME...: the parts the names select (a suite: all of its parts; a part: itself), each
# once, in the order given; dies naming an unknown one.
expand_suites() {
    local name p seen=" " parts
    for name in "$@"; do
        if [[ -f $SUITES_DIR/$name/suite.toml ]]; then parts=$(suite_parts "$name")
        elif [[ -n $(part_suite "$name") ]]; then parts=$name
        else die "unknown suite '$name' (suites: $(lab_suites | paste -sd' '); parts: $(lab_parts | paste -sd' '))"
        fi
        [[ -n $parts ]] || die "suite '$name' has no part (suites/$name/$name.sh or suites/$name/${name}_<part>.sh)"
        for p in $parts; do
            [[ $seen == *" $p "* ]] || { echo "$p"; seen+="$p "; }
        done
    done
}
