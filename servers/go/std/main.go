// lang_go_std: the shoot-out's Go stdlib server, net/http with default
// settings (one goroutine per connection; GOMAXPROCS follows the CPU
// affinity mask, so under taskset it sees the pinned CPU set).
//
//	lang_go_std PORT
//
// Built by its manifest (servers/go/std/lab.toml) as DIR/lang_go_std, the
// server id; the server calls itself lang_go_std in its ready line.
package main

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/signal"
	"syscall"
	"time"

	"httplab/servers/go/lang"
	"httplab/servers/go/listen"
)

func main() {
	addr, ok := listen.Address(os.Args[1:], 1)
	if !ok {
		fmt.Fprintln(os.Stderr, "usage: lang_go_std PORT [ADDR]")
		os.Exit(2)
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		fmt.Fprintln(os.Stderr, "lang_go_std:", err)
		os.Exit(1)
	}
	srv := &http.Server{Handler: lang.Handler{}}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, os.Interrupt)
	defer stop()
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	fmt.Fprintf(os.Stderr, "lang_go_std: listening on %s\n", ln.Addr())
	select {
	case err := <-errc:
		fmt.Fprintln(os.Stderr, "lang_go_std:", err)
		os.Exit(1)
	case <-ctx.Done():
	}
	sctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	srv.Shutdown(sctx)
}
