module httplab/servers/go_h3

go 1.26.0

require (
	github.com/quic-go/quic-go v0.65.0
	httplab/servers/go v0.0.0
)

require (
	github.com/quic-go/qpack v0.6.0 // indirect
	golang.org/x/crypto v0.58.0 // indirect
	golang.org/x/net v0.62.0 // indirect
	golang.org/x/sys v0.49.0 // indirect
	golang.org/x/text v0.43.0 // indirect
)

replace httplab/servers/go => ../
