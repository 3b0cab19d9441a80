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

	"httplab/servers/go/routes"
)

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: go_http_bench PORT")
		os.Exit(2)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:"+os.Args[1])
	if err != nil {
		log.Fatal(err)
	}
	fmt.Fprintf(os.Stderr, "go_http_bench: listening on %s\n", ln.Addr())
	log.Fatal(http.Serve(ln, routes.NewMux()))
}
