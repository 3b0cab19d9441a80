module httplab/servers/go

go 1.26.0

require (
	github.com/valyala/fasthttp v1.73.0
	golang.org/x/net v0.62.0
)

require (
	github.com/andybalholm/brotli v1.2.2 // indirect
	github.com/klauspost/compress v1.19.1 // indirect
	github.com/valyala/bytebufferpool v1.0.0 // indirect
	golang.org/x/text v0.43.0 // indirect
)
