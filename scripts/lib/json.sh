# scripts/lib/json.sh: JSON written by bash itself (sourced by lib.sh), for the documents every point
# writes. jq 1.6 takes 40-80 ms to start on the two-core lab machine, and a point wrote up to nine
# small documents through it: 0.3-0.6 s a point, as much as a sliced point's measured second. The
# documents built here hold numbers, booleans, JSON read from elsewhere and a few strings; jq is
# still used wherever JSON is read or transformed.

# The control characters other than \t \n \r, for json_str (built once).
JSON_CTRL=()
for _c in {1..31}; do
    (( _c == 9 || _c == 10 || _c == 13 )) || JSON_CTRL+=("$(printf "\\x$(printf %02x "$_c")")")
done
unset _c

# json_str [-v VAR] TEXT: TEXT as a JSON string literal (quotes, backslashes and control characters
# escaped; bytes that are not UTF-8 pass through, and the reader names the file), printed or, with
# -v, put in VAR (no subshell: a word list is quoted without a fork per word).
json_str() {
    local _var=
    [[ $1 == -v ]] && { _var=$2; shift 2; }
    local s=$1 c
    s=${s//\\/\\\\}
    s=${s//\"/\\\"}
    s=${s//$'\n'/\\n}
    s=${s//$'\t'/\\t}
    s=${s//$'\r'/\\r}
    for c in "${JSON_CTRL[@]}"; do
        [[ $s == *"$c"* ]] && s=${s//"$c"/$(printf '\\u%04x' "'$c")}
    done
    if [[ -n $_var ]]; then printf -v "$_var" '"%s"' "$s"; else printf '"%s"' "$s"; fi
}

# json_strs WORD...: a JSON array of the words as strings, in JSON_STRS.
json_strs() {
    local w q out=()
    for w in "$@"; do json_str -v q "$w"; out+=("$q"); done
    local IFS=,
    JSON_STRS="[${out[*]}]"
}

# json_check WHAT VALUE...: dies, naming WHAT, unless every VALUE is a JSON number, true, false or
# null (what jq's --argjson took): a document is not written with a broken value in it. Called in
# the harness's own shell, not in a $(...), so that it stops the suite.
json_check() {
    local what=$1 v
    shift
    for v in "$@"; do
        [[ $v =~ ^(-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][-+]?[0-9]+)?|true|false|null)$ ]] ||
            die "$what: '$v' is not a JSON number, boolean or null"
    done
}

# json_nums WORD...: a JSON array of the numbers given ([] for none).
json_nums() {
    local IFS=,
    printf '[%s]' "$*"
}
