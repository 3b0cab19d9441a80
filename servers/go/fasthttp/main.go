// lang_go_fasthttp: the shoot-out's Go "production" server on
// github.com/valyala/fasthttp (goroutine per connection with pooled request
// contexts; GOMAXPROCS follows the CPU affinity mask). The route logic is the
// one lang_go_std uses (package lang); only the front end differs.
//
//	lang_go_fasthttp PORT
//
// Built by its manifest (servers/go/fasthttp/lab.toml) as DIR/lang_go_fasthttp,
// the server id.
package main

import (
	"fmt"
	"net"
	"os"
	"os/signal"
	"syscall"

	"github.com/valyala/fasthttp"

	"httplab/servers/go/lang"
	"httplab/servers/go/listen"
)

var hello = []byte(lang.Hello)

func send(ctx *fasthttp.RequestCtx, status int, ctype string, body []byte) {
	ctx.SetStatusCode(status)
	ctx.SetContentType(ctype)
	ctx.SetBody(body)
}

func handle(ctx *fasthttp.RequestCtx) {
	switch string(ctx.Path()) {
	case "/":
		if ctx.IsGet() {
			send(ctx, fasthttp.StatusOK, lang.TextPlain, hello)
			return
		}
	case "/something":
		if ctx.IsGet() {
			params := lang.ParseQuery(string(ctx.URI().QueryString()))
			if lang.WantsJSON(params) {
				send(ctx, fasthttp.StatusOK, lang.AppJSON, lang.QueryJSON(params))
			} else {
				send(ctx, fasthttp.StatusOK, lang.TextPlain, lang.QueryText(params))
			}
			return
		}
		if ctx.IsPost() {
			out, err := lang.EchoJSON(ctx.PostBody())
			if err != nil {
				send(ctx, fasthttp.StatusBadRequest, lang.TextPlain, lang.BadJSONBody)
				return
			}
			send(ctx, fasthttp.StatusOK, lang.AppJSON, out)
			return
		}
	}
	send(ctx, fasthttp.StatusNotFound, lang.TextPlain, lang.NotFoundBody)
}

func main() {
	addr, ok := listen.Address(os.Args[1:], 1)
	if !ok {
		fmt.Fprintln(os.Stderr, "usage: lang_go_fasthttp PORT [ADDR]")
		os.Exit(2)
	}
	ln, err := net.Listen("tcp4", addr)
	if err != nil {
		fmt.Fprintln(os.Stderr, "lang_go_fasthttp:", err)
		os.Exit(1)
	}
	srv := &fasthttp.Server{
		Handler:              handle,
		Name:                 "lang_go_fasthttp",
		MaxRequestBodySize:   lang.MaxBody,
		NoDefaultContentType: true,
	}
	sigc := make(chan os.Signal, 1)
	signal.Notify(sigc, syscall.SIGTERM, os.Interrupt)
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	fmt.Fprintf(os.Stderr, "lang_go_fasthttp: listening on %s\n", ln.Addr())
	select {
	case err := <-errc:
		fmt.Fprintln(os.Stderr, "lang_go_fasthttp:", err)
		os.Exit(1)
	case <-sigc:
	}
	ln.Close()
	os.Exit(0)
}
