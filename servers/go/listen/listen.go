// Package listen reads the address a lab server listens on from its command line: PORT first,
// the mode's other arguments next (CERT KEY for TLS), then an optional ADDR, 127.0.0.1 by default
// (the server host's address in the lab's netns host mode).
package listen

import "net"

// Address returns "ADDR:PORT" from args (os.Args[1:]) holding `fixed` arguments, PORT the first,
// and an optional ADDR after them; ok is false for any other count.
func Address(args []string, fixed int) (hostport string, ok bool) {
	switch len(args) {
	case fixed:
		return net.JoinHostPort("127.0.0.1", args[0]), true
	case fixed + 1:
		return net.JoinHostPort(args[fixed], args[0]), true
	}
	return "", false
}
