// go_http_bench: the seed's Go HTTP/1.1 comparison server, net/http with defaults.
//
//	go_http_bench PORT
package main

import (
	"fmt"
	"log"
	"net"
	"net/http"
	"os"

	"httplab/servers/go/listen"
	"httplab/servers/go/routes"
)

func main() {
	addr, ok := listen.Address(os.Args[1:], 1)
	if !ok {
		fmt.Fprintln(os.Stderr, "usage: go_http_bench PORT [ADDR]")
		os.Exit(2)
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Fprintf(os.Stderr, "go_http_bench: listening on %s\n", ln.Addr())
	log.Fatal(http.Serve(ln, routes.NewMux()))
}
