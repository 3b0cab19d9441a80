// go_h3_bench: the lab's Go HTTP/3 rival, quic-go's http3.Server with its defaults, serving the
// same mux (servers/go/routes: /ping, /echo) as the Go family's HTTP/1.1, h2c and TLS servers.
//
//	go_h3_bench PORT CERT KEY [ADDR]
//
// It listens on UDP only: QUIC on ADDR:PORT. It is a module of its own (go.mod) so that quic-go and
// what it requires never move the versions the other Go servers are built with.
package main

import (
	"crypto/tls"
	"fmt"
	"log"
	"net"
	"os"

	"github.com/quic-go/quic-go/http3"

	"httplab/servers/go/listen"
	"httplab/servers/go/routes"
)

func main() {
	addr, ok := listen.Address(os.Args[1:], 3)
	if !ok {
		fmt.Fprintln(os.Stderr, "usage: go_h3_bench PORT CERT KEY [ADDR]")
		os.Exit(2)
	}
	cert, err := tls.LoadX509KeyPair(os.Args[2], os.Args[3])
	if err != nil {
		log.Fatal(err)
	}
	conn, err := net.ListenPacket("udp", addr)
	if err != nil {
		log.Fatal(err)
	}
	// quic-go's defaults otherwise (as the other rivals run theirs): its flow-control windows,
	// stream limits and idle timeout are what a user of it gets
	srv := &http3.Server{Handler: routes.NewMux(), TLSConfig: &tls.Config{Certificates: []tls.Certificate{cert}}}
	fmt.Fprintf(os.Stderr, "go_h3_bench: listening on %s (udp)\n", conn.LocalAddr())
	log.Fatal(srv.Serve(conn))
}
