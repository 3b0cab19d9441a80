// Package lang holds the route logic of the five-language shoot-out servers
// (lang_go_std on net/http, lang_go_fasthttp on fasthttp). The logic works on
// plain strings and byte slices so both front ends share it:
//
//	GET  /                      200 text/plain        "Hello, World!"
//	GET  /something?q           200 text/plain        "name=value\n" per parameter, in order
//	GET  /something?json=true   200 application/json  {"message": ..., "query": {...}}
//	POST /something             200 application/json  {"received": <body>, "bytes": n}
//	                            400 if the body is not JSON
//	anything else               404
package lang

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"net/url"
	"strings"
)

// Hello is the body of GET /.
const Hello = "Hello, World!"

// MaxBody is the largest POST body accepted (1 MiB); larger bodies get 413.
const MaxBody = 1 << 20

// Content types of the responses.
const (
	TextPlain = "text/plain"
	AppJSON   = "application/json"
)

// Bodies of the error responses.
var (
	NotFoundBody = []byte("not found\n")
	BadJSONBody  = []byte("invalid JSON\n")
	TooLargeBody = []byte("body too large\n")
)

// Param is one query parameter, percent-decoded.
type Param struct {
	Name, Value string
}

// unescape decodes a form-encoded component ('+' is a space); a malformed
// escape leaves the component as sent.
func unescape(s string) string {
	if strings.IndexByte(s, '%') < 0 && strings.IndexByte(s, '+') < 0 {
		return s
	}
	if v, err := url.QueryUnescape(s); err == nil {
		return v
	}
	return s
}

// ParseQuery splits a raw query string into its parameters, keeping their
// order and repeats. Empty segments ("a=1&&b=2") are skipped; a segment
// without '=' is a parameter with an empty value.
func ParseQuery(raw string) []Param {
	if raw == "" {
		return nil
	}
	params := make([]Param, 0, 4)
	for raw != "" {
		var seg string
		if i := strings.IndexByte(raw, '&'); i >= 0 {
			seg, raw = raw[:i], raw[i+1:]
		} else {
			seg, raw = raw, ""
		}
		if seg == "" {
			continue
		}
		name, value, _ := strings.Cut(seg, "=")
		params = append(params, Param{unescape(name), unescape(value)})
	}
	return params
}

// WantsJSON reports whether any parameter is json=true.
func WantsJSON(params []Param) bool {
	for _, p := range params {
		if p.Name == "json" && p.Value == "true" {
			return true
		}
	}
	return false
}

// QueryText is the text/plain body of GET /something: "name=value\n" per
// parameter.
func QueryText(params []Param) []byte {
	n := 0
	for _, p := range params {
		n += len(p.Name) + len(p.Value) + 2
	}
	out := make([]byte, 0, n)
	for _, p := range params {
		out = append(out, p.Name...)
		out = append(out, '=')
		out = append(out, p.Value...)
		out = append(out, '\n')
	}
	return out
}

type queryReply struct {
	Message string            `json:"message"`
	Query   map[string]string `json:"query"`
}

// QueryJSON is the application/json body of GET /something?json=true; a
// repeated name keeps its last value.
func QueryJSON(params []Param) []byte {
	q := make(map[string]string, len(params))
	for _, p := range params {
		q[p.Name] = p.Value
	}
	out, err := json.Marshal(queryReply{Message: Hello, Query: q})
	if err != nil { // cannot happen for strings
		panic(err)
	}
	return out
}

type echoReply struct {
	Received any `json:"received"`
	Bytes    int `json:"bytes"`
}

// ErrBadJSON is returned by EchoJSON for a body that is not one JSON value.
var ErrBadJSON = errors.New("invalid JSON")

// EchoJSON parses body as one JSON value (numbers kept as written) and returns
// the application/json body of POST /something.
func EchoJSON(body []byte) ([]byte, error) {
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, ErrBadJSON
	}
	var extra any
	if err := dec.Decode(&extra); err != io.EOF {
		return nil, ErrBadJSON
	}
	out, err := json.Marshal(echoReply{Received: v, Bytes: len(body)})
	if err != nil {
		return nil, ErrBadJSON
	}
	return out, nil
}
