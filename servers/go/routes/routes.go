// Package routes holds the handlers shared by the lab's Go comparison servers
// (plain HTTP/1.1 now; h2c and TLS front ends reuse the same mux).
//
// They follow the seed write-up's Go server: plain net/http, default settings,
// one goroutine per connection, bytes allocated per request as a typical
// handler would. Nothing here is tuned: the point is to measure the default.
package routes

import (
	"bytes"
	"io"
	"net/http"
	"strconv"
)

// MaxEchoSize caps GET /echo?size=N, as the C server does (1 MiB).
const MaxEchoSize = 1 << 20

// MaxBody is the largest POST /echo body accepted (16 MiB, the C server's default).
const MaxBody = 16 << 20

// NewMux returns the lab's routes: /ping and /echo.
func NewMux() *http.ServeMux {
	mux := http.NewServeMux()
	mux.HandleFunc("/ping", ping)
	mux.HandleFunc("/echo", echo)
	return mux
}

func ping(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		w.Header().Set("Allow", "GET, HEAD")
		http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
		return
	}
	w.Header().Set("Content-Type", "text/plain")
	w.Header().Set("Content-Length", "4")
	io.WriteString(w, "pong")
}

func echo(w http.ResponseWriter, r *http.Request) {
	switch r.Method {
	case http.MethodGet, http.MethodHead:
		echoSize(w, r)
	case http.MethodPost:
		echoBody(w, r)
	default:
		w.Header().Set("Allow", "GET, HEAD, POST")
		http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
	}
}

func echoSize(w http.ResponseWriter, r *http.Request) {
	n := 64
	if s, ok := r.URL.Query()["size"]; ok {
		v, err := strconv.Atoi(s[0])
		if err != nil || v < 0 || v > MaxEchoSize {
			http.Error(w, "bad size", http.StatusBadRequest)
			return
		}
		n = v
	}
	w.Header().Set("Content-Type", "text/plain")
	w.Header().Set("Content-Length", strconv.Itoa(n))
	w.Write(bytes.Repeat([]byte{'x'}, n))
}

func echoBody(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, MaxBody))
	if err != nil {
		http.Error(w, "body too large", http.StatusRequestEntityTooLarge)
		return
	}
	w.Header().Set("Content-Type", "application/octet-stream")
	w.Header().Set("Content-Length", strconv.Itoa(len(body)))
	w.Write(body)
}
