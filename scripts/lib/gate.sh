# scripts/lib/gate.sh: the verify gate (sourced by lib.sh): before any load, every route a suite
# will hit on a server is asked once over each protocol it uses and its answer checked exactly.

# payload_file N: a file of N 'x' bytes (the echo body), made once per run.
payload_file() {
    local f=$PAYLOAD_DIR/x$1
    # (written aside and renamed: two runs at once may both make it, and neither reads half a file)
    [[ -f $f ]] || { head -c "$1" /dev/zero | tr '\0' x >"$f.$$" && mv -f "$f.$$" "$f"; }
    echo "$f"
}

# gate_fetch_curl URL METHOD SEND COMPARE: one request with curl over the scenario's HTTP/1.1 or
# HTTP/2 (SC_PROTOCOL h1|h2, TLS true|false). Sets FETCH_CODE, FETCH_VERSION (1.1, 2),
# FETCH_CL (Content-Length, empty when absent) and FETCH_BODY (the file holding the body); or
# FETCH_ERROR when no answer came.
gate_fetch_curl() {
    local url=$1 method=$2 send=$3 compare=$4 out headers=$GATE_TMP/headers
    local args=(-sS --max-time 10 -o "$GATE_TMP/body" -D "$headers" -w '%{http_code} %{http_version}' -X "$method")
    case $SC_PROTOCOL:$TLS in
        h1:*)       args+=(--http1.1) ;;
        h2:false)   args+=(--http2-prior-knowledge) ;;
        h2:true)    args+=(--http2) ;;
    esac
    [[ $TLS == true ]] && args+=(--insecure)
    if [[ -n $send && $compare == json ]]; then args+=(--data-binary "@$send" -H 'Content-Type: application/json')
    elif [[ -n $send ]]; then args+=(--data-binary "@$send" -H 'Content-Type: application/octet-stream'); fi
    FETCH_ERROR= FETCH_BODY=$GATE_TMP/body
    out=$(on_client curl "${args[@]}" "$url" 2>&1) || { FETCH_ERROR="curl: $out"; return 0; }
    read -r FETCH_CODE FETCH_VERSION <<<"$out"
    FETCH_CL=$(awk 'tolower($1) == "content-length:" { gsub("\r", "", $2); print $2 }' "$headers")
}

# gate_fetch_h3 URL METHOD SEND: the same over HTTP/3 (h3_get: ngtcp2's client, as curl here has no
# HTTP/3), which saves the body under the URL's last path segment in --download's folder; a client
# that negotiated anything but h3 has no HTTP/3 stream to print, so an answer is an HTTP/3 answer.
gate_fetch_h3() {
    local url=$1 method=$2 send=$3 dl=$GATE_TMP/h3 heads args
    args=(--download="$dl")
    [[ $method == GET ]] || args+=(-m "$method")
    [[ -n $send ]] && args+=(-d "$send")
    rm -rf "$dl"; mkdir -p "$dl"
    heads=$(h3_get "$url" 15 on_client "${args[@]}") || true
    FETCH_ERROR= FETCH_VERSION=3
    FETCH_CODE=$(sed -n 's/^:status: //p' <<<"$heads" | head -n 1)
    FETCH_CL=$(sed -n 's/^content-length: //Ip' <<<"$heads" | head -n 1)
    [[ -n $FETCH_CODE ]] || { FETCH_ERROR="no answer over HTTP/3 (gtlsclient)"; return 0; }
    FETCH_BODY=$(find "$dl" -type f | head -n 1)
    [[ -n $FETCH_BODY ]] || { FETCH_BODY=$GATE_TMP/empty; : >"$FETCH_BODY"; }
}

# gate_check BASE_URL METHOD PATH EXPECTED_BODY_FILE [REQUEST_BODY_FILE [bytes|json]]
# One request over the scenario's protocol (SC_PROTOCOL h1|h2|h3, TLS true|false);
# prints one PASS/FAIL line. Fails when the response did not come over that
# protocol, the status is not 200, Content-Length is wrong (or, over HTTP/1.1,
# missing), or the body differs from the expected bytes (or, in json mode, does
# not parse to the same JSON value: whitespace and key order may differ).
gate_check() {
    local base=$1 method=$2 path=$3 expect=$4 send=${5:-} compare=${6:-bytes} want want_version body cl
    case $SC_PROTOCOL in
        h1) want_version=1.1 ;;
        h2) want_version=2 ;;
        h3) want_version=3 ;;
    esac
    if [[ $SC_PROTOCOL == h3 ]]; then gate_fetch_h3 "$base$path" "$method" "$send"
    else gate_fetch_curl "$base$path" "$method" "$send" "$compare"; fi
    [[ -z $FETCH_ERROR ]] || { echo "FAIL $method $path: $FETCH_ERROR"; return 1; }
    body=$FETCH_BODY cl=$FETCH_CL
    want=$(stat -c %s "$body")
    [[ $compare == bytes ]] && want=$(stat -c %s "$expect")
    if [[ $FETCH_VERSION != "$want_version" ]]; then echo "FAIL $method $path: answered over HTTP/$FETCH_VERSION, not HTTP/$want_version"; return 1; fi
    if [[ $FETCH_CODE != 200 ]]; then echo "FAIL $method $path: status $FETCH_CODE"; return 1; fi
    if [[ -z $cl && $SC_PROTOCOL == h1 ]]; then echo "FAIL $method $path: no Content-Length"; return 1; fi
    if [[ -n $cl && $cl != "$want" ]]; then echo "FAIL $method $path: Content-Length $cl, want $want"; return 1; fi
    if [[ $compare == json ]]; then
        if [[ $(jq -cS . "$body" 2>/dev/null) != "$(jq -cS . "$expect")" ]]; then
            echo "FAIL $method $path: JSON differs from $(jq -cS . "$expect"): $(head -c 300 "$body")"; return 1
        fi
        echo "PASS $method $path: HTTP/$FETCH_VERSION 200, Content-Length ${cl:-absent}, JSON equal"
        return 0
    fi
    if ! cmp -s "$body" "$expect"; then echo "FAIL $method $path: body differs from the expected $want bytes"; return 1; fi
    echo "PASS $method $path: HTTP/$FETCH_VERSION 200, Content-Length ${cl:-absent}, body exact ($want bytes)"
}

# The request body of the shoot-out's POST (scripts/lua/post_json.lua sends the same).
POST_JSON_BODY='{"name":"benchmark","value":42,"tags":["a","b"]}'

# make_gate_payloads: the expected bodies the gate compares with, made once.
make_gate_payloads() {
    mkdir -p "$PAYLOAD_DIR"
    put_payload pong pong
    put_payload hello 'Hello, World!'
    put_payload query_foo_bar $'foo=bar\n'
    put_payload json_true '{"message":"Hello, World!","query":{"json":"true"}}'
    put_payload post_json_body "$POST_JSON_BODY"
    put_payload post_json_reply "$(printf '{"received":%s,"bytes":%d}' "$POST_JSON_BODY" "${#POST_JSON_BODY}")"
}

# put_payload NAME CONTENT: PAYLOAD_DIR/NAME holds CONTENT exactly. Runs side by side share the
# folder, and one run's verify gate may be reading a file while another run starts a suite: a
# file that is already right is left alone, and a new one is written aside and renamed.
put_payload() {
    local f=$PAYLOAD_DIR/$1
    [[ -f $f && $(cat "$f"; printf .) == "$2." ]] && return 0
    printf '%s' "$2" >"$f.$$" && mv -f "$f.$$" "$f"
}

# gate_expectation: for the parsed scenario, the path to request, the body to send
# (GATE_SEND, maybe empty), the expected reply (GATE_EXPECT) and how to compare
# (GATE_COMPARE: bytes, or json for parsed-JSON equality).
gate_expectation() {
    GATE_PATH=$SC_ROUTE GATE_SEND= GATE_COMPARE=bytes
    case $SC_KIND in
        ping|pipeline)   GATE_EXPECT=$PAYLOAD_DIR/pong ;;
        echo_get)        GATE_EXPECT=$(payload_file "$SC_SIZE"); GATE_PATH+="?size=$SC_SIZE" ;;
        echo_post)       GATE_SEND=$(payload_file "$SC_SIZE"); GATE_EXPECT=$GATE_SEND ;;
        root|root_close) GATE_EXPECT=$PAYLOAD_DIR/hello ;;
        query)           GATE_EXPECT=$PAYLOAD_DIR/query_foo_bar ;;
        json)            GATE_EXPECT=$PAYLOAD_DIR/json_true; GATE_COMPARE=json ;;
        post_json)       GATE_SEND=$PAYLOAD_DIR/post_json_body; GATE_EXPECT=$PAYLOAD_DIR/post_json_reply
                         GATE_COMPARE=json ;;
        *)               die "no verify-gate expectation for scenario kind '$SC_KIND'" ;;
    esac
}

# gate SERVER REP: every route the suite will hit on SERVER, over each protocol it
# uses, before any load (in the rep's block TODO_BLOCK only, when scenario blocks start the
# server once per scenario: verify.r<rep>.<scenario>.txt).
gate() {
    local server=$1 rep=$2 out line ok=0 key base="$SCHEME://$SERVER_ADDR:$SERVER_PORT"
    local -A seen=()
    out=$RUN_DIR/$SUITE/$server/verify.r$rep${TODO_BLOCK:+.$TODO_BLOCK}.txt
    [[ -f $out ]] && out=$RUN_DIR/$SUITE/$server/verify.r$rep${TODO_BLOCK:+.$TODO_BLOCK}.resumed-$(date +%s).txt
    mkdir -p "$(dirname "$out")"
    {
        echo "# verify gate: $SUITE $server rep $rep $(utc_now) $base"
        while read -r line; do
            [[ -n $line ]] || continue
            parse_scenario "$line"
            gate_expectation
            key="$SC_PROTOCOL $SC_METHOD $GATE_PATH $GATE_SEND"
            [[ -n ${seen[$key]:-} ]] && continue
            seen[$key]=1
            gate_check "$base" "$SC_METHOD" "$GATE_PATH" "$GATE_EXPECT" "$GATE_SEND" "$GATE_COMPARE" || ok=1
        done < <(todo_for "$server" "$rep")
    } >"$out.tmp"
    mv "$out.tmp" "$out"
    return $ok
}
