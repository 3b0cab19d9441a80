// go_https_bench: the seed's Go HTTPS comparison server: net/http + crypto/tls
// with http2.ConfigureServer, so ALPN offers h2 and http/1.1; defaults otherwise.
//
//	go_https_bench PORT CERT KEY
package main

import (
	"fmt"
	"log"
	"net"
	"net/http"
	"os"

	"golang.org/x/net/http2"

	"httplab/servers/go/listen"
	"httplab/servers/go/routes"
)

func main() {
	addr, ok := listen.Address(os.Args[1:], 3)
	if !ok {
		fmt.Fprintln(os.Stderr, "usage: go_https_bench PORT CERT KEY [ADDR]")
		os.Exit(2)
	}
	srv := &http.Server{Handler: routes.NewMux()}
	if err := http2.ConfigureServer(srv, &http2.Server{}); err != nil {
		log.Fatal(err)
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Fprintf(os.Stderr, "go_https_bench: listening on %s\n", ln.Addr())
	log.Fatal(srv.ServeTLS(ln, os.Args[2], os.Args[3]))
}
