// go_h2c_bench: the seed's Go h2c comparison server: net/http wrapped with
// golang.org/x/net/http2/h2c.NewHandler (prior knowledge and Upgrade: h2c),
// defaults otherwise. HTTP/1.1 keeps working on the same port.
//
//	go_h2c_bench PORT
package main

import (
	"fmt"
	"log"
	"net"
	"net/http"
	"os"

	"golang.org/x/net/http2"
	"golang.org/x/net/http2/h2c"

	"httplab/servers/go/listen"
	"httplab/servers/go/routes"
)

func main() {
	addr, ok := listen.Address(os.Args[1:], 1)
	if !ok {
		fmt.Fprintln(os.Stderr, "usage: go_h2c_bench PORT [ADDR]")
		os.Exit(2)
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Fprintf(os.Stderr, "go_h2c_bench: listening on %s\n", ln.Addr())
	handler := h2c.NewHandler(routes.NewMux(), &http2.Server{})
	log.Fatal(http.Serve(ln, handler))
}
