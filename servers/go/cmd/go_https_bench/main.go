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

	"httplab/servers/go/routes"
)

func main() {
	if len(os.Args) != 4 {
		fmt.Fprintln(os.Stderr, "usage: go_https_bench PORT CERT KEY")
		os.Exit(2)
	}
	srv := &http.Server{Handler: routes.NewMux()}
	if err := http2.ConfigureServer(srv, &http2.Server{}); err != nil {
		log.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:"+os.Args[1])
	if err != nil {
		log.Fatal(err)
	}
	fmt.Fprintf(os.Stderr, "go_https_bench: listening on %s\n", ln.Addr())
	log.Fatal(srv.ServeTLS(ln, os.Args[2], os.Args[3]))
}
