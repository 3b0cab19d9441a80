package lang

import (
	"errors"
	"io"
	"net/http"
	"strconv"
)

// Handler is the net/http front end of the routes (lang_go_std). It
// dispatches on the path and the method itself, so a wrong method on a known
// path is a 404 like any other unknown route (ServeMux patterns would say 405).
type Handler struct{}

func reply(w http.ResponseWriter, status int, ctype string, body []byte) {
	h := w.Header()
	h["Content-Type"] = []string{ctype}
	h["Content-Length"] = []string{strconv.Itoa(len(body))}
	w.WriteHeader(status)
	w.Write(body)
}

var helloBytes = []byte(Hello)

func (Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	switch r.URL.Path {
	case "/":
		if r.Method == http.MethodGet {
			reply(w, http.StatusOK, TextPlain, helloBytes)
			return
		}
	case "/something":
		switch r.Method {
		case http.MethodGet:
			params := ParseQuery(r.URL.RawQuery)
			if WantsJSON(params) {
				reply(w, http.StatusOK, AppJSON, QueryJSON(params))
			} else {
				reply(w, http.StatusOK, TextPlain, QueryText(params))
			}
			return
		case http.MethodPost:
			body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, MaxBody))
			if err != nil {
				var tooLarge *http.MaxBytesError
				if errors.As(err, &tooLarge) {
					reply(w, http.StatusRequestEntityTooLarge, TextPlain, TooLargeBody)
				} else {
					reply(w, http.StatusBadRequest, TextPlain, BadJSONBody)
				}
				return
			}
			out, err := EchoJSON(body)
			if err != nil {
				reply(w, http.StatusBadRequest, TextPlain, BadJSONBody)
				return
			}
			reply(w, http.StatusOK, AppJSON, out)
			return
		}
	}
	reply(w, http.StatusNotFound, TextPlain, NotFoundBody)
}
