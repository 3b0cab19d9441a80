//! rust_h3_bench: the lab's Rust HTTP/3 rival: quinn (QUIC) and the hyperium h3 crate on a tokio
//! multi-thread runtime, TLS 1.3 by rustls on ring. It serves the lab's comparison routes as the Go
//! family does (servers/go/routes): GET/HEAD /ping, GET/HEAD /echo?size=N (N bytes of 'x', default
//! 64, at most 1 MiB), POST /echo (the body back, at most 16 MiB); 404 elsewhere.
//!
//!     rust_h3_bench PORT CERT KEY [ADDR]
//!
//! It listens on UDP only. quinn's and h3's defaults otherwise (flow-control windows, stream limits,
//! idle timeout), as every rival runs its own: what a user of these crates gets. One worker thread
//! per CPU of the affinity mask (tokio's default reads it), so under `taskset -c 0` there is one.

use std::net::SocketAddr;
use std::sync::Arc;

use bytes::{Buf, Bytes, BytesMut};
use h3::server::RequestStream;
use http::{header, Method, Request, Response, StatusCode};
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer};

const NAME: &str = "rust_h3_bench";
/// GET /echo?size=N above this is refused (the C server's cap).
const MAX_ECHO_SIZE: usize = 1 << 20;
/// A POST /echo body above this is refused with 413 (the C server's default).
const MAX_BODY: usize = 16 << 20;

type Stream = RequestStream<h3_quinn::BidiStream<Bytes>, Bytes>;

struct Reply {
    status: StatusCode,
    ctype: &'static str,
    allow: Option<&'static str>,
    body: Bytes,
}

fn reply(status: StatusCode, ctype: &'static str, body: impl Into<Bytes>) -> Reply {
    Reply { status, ctype, allow: None, body: body.into() }
}

fn not_allowed(allow: &'static str) -> Reply {
    Reply { allow: Some(allow), ..reply(StatusCode::METHOD_NOT_ALLOWED, "text/plain", "method not allowed\n") }
}

/// The size asked for by GET /echo: `size=N` in the query (the last one wins, as Go's mux reads
/// the first; the lab's clients send one), 64 without it, None when it is not a number in range.
fn echo_size(query: Option<&str>) -> Option<usize> {
    let mut n = 64;
    for pair in query.unwrap_or("").split('&') {
        if let Some(v) = pair.strip_prefix("size=") {
            n = v.parse::<usize>().ok().filter(|&n| n <= MAX_ECHO_SIZE)?;
        }
    }
    Some(n)
}

/// Reads the request body into memory, refusing more than MAX_BODY (None then).
async fn read_body(stream: &mut Stream) -> Result<Option<Bytes>, h3::error::StreamError> {
    let mut body = BytesMut::new();
    while let Some(mut chunk) = stream.recv_data().await? {
        if body.len() + chunk.remaining() > MAX_BODY {
            return Ok(None);
        }
        while chunk.has_remaining() {
            let part = chunk.chunk();
            body.extend_from_slice(part);
            let n = part.len();
            chunk.advance(n);
        }
    }
    Ok(Some(body.freeze()))
}

async fn route(req: &Request<()>, stream: &mut Stream) -> Result<Reply, h3::error::StreamError> {
    let method = req.method();
    let head_or_get = method == Method::GET || method == Method::HEAD;
    Ok(match req.uri().path() {
        "/ping" if head_or_get => reply(StatusCode::OK, "text/plain", "pong"),
        "/ping" => not_allowed("GET, HEAD"),
        "/echo" if head_or_get => match echo_size(req.uri().query()) {
            Some(n) => reply(StatusCode::OK, "text/plain", vec![b'x'; n]),
            None => reply(StatusCode::BAD_REQUEST, "text/plain", "bad size\n"),
        },
        "/echo" if method == Method::POST => match read_body(stream).await? {
            Some(body) => reply(StatusCode::OK, "application/octet-stream", body),
            None => reply(StatusCode::PAYLOAD_TOO_LARGE, "text/plain", "body too large\n"),
        },
        "/echo" => not_allowed("GET, HEAD, POST"),
        _ => reply(StatusCode::NOT_FOUND, "text/plain", "404 page not found\n"),
    })
}

async fn serve_request(req: Request<()>, mut stream: Stream) -> Result<(), h3::error::StreamError> {
    let r = route(&req, &mut stream).await?;
    let mut resp = Response::builder()
        .status(r.status)
        .header(header::CONTENT_TYPE, r.ctype)
        .header(header::CONTENT_LENGTH, r.body.len());
    if let Some(allow) = r.allow {
        resp = resp.header(header::ALLOW, allow);
    }
    stream.send_response(resp.body(()).expect("a valid response head")).await?;
    if req.method() != Method::HEAD && !r.body.is_empty() {
        stream.send_data(r.body).await?;
    }
    stream.finish().await
}

/// One QUIC connection: its HTTP/3 requests, each on a task of its own (streams are independent).
async fn serve_connection(incoming: quinn::Incoming) {
    let Ok(conn) = incoming.await else { return };
    let Ok(mut h3c) = h3::server::Connection::<_, Bytes>::new(h3_quinn::Connection::new(conn)).await else {
        return;
    };
    // Ends on the client's close or an error of the connection (the crate has sent its error
    // code to the client already); either way there is nothing more to serve.
    while let Ok(Some(resolver)) = h3c.accept().await {
        tokio::spawn(async move {
            if let Ok((req, stream)) = resolver.resolve_request().await {
                let _ = serve_request(req, stream).await;
            }
        });
    }
}

fn tls_config(cert: &str, key: &str) -> Result<rustls::ServerConfig, String> {
    let certs = CertificateDer::pem_file_iter(cert)
        .and_then(|it| it.collect::<Result<Vec<_>, _>>())
        .map_err(|e| format!("{cert}: {e}"))?;
    let key = PrivateKeyDer::from_pem_file(key).map_err(|e| format!("{key}: {e}"))?;
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let mut tls = rustls::ServerConfig::builder_with_provider(provider)
        .with_protocol_versions(&[&rustls::version::TLS13])
        .map_err(|e| e.to_string())?
        .with_no_client_auth()
        .with_single_cert(certs, key)
        .map_err(|e| e.to_string())?;
    tls.alpn_protocols = vec![b"h3".to_vec()];
    Ok(tls)
}

fn fail(msg: impl std::fmt::Display) -> ! {
    eprintln!("{NAME}: {msg}");
    std::process::exit(1);
}

#[tokio::main]
async fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if args.len() < 3 || args.len() > 4 {
        eprintln!("usage: {NAME} PORT CERT KEY [ADDR]");
        std::process::exit(2);
    }
    let port: u16 = args[0].parse().unwrap_or_else(|_| fail(format!("bad port {:?}", args[0])));
    let ip = args.get(3).map(String::as_str).unwrap_or("127.0.0.1");
    let addr: SocketAddr = (ip.parse::<std::net::IpAddr>().unwrap_or_else(|_| fail(format!("bad address {ip:?}"))), port).into();
    let tls = tls_config(&args[1], &args[2]).unwrap_or_else(|e| fail(e));
    let crypto = quinn::crypto::rustls::QuicServerConfig::try_from(tls).unwrap_or_else(|e| fail(e));
    let endpoint = quinn::Endpoint::server(quinn::ServerConfig::with_crypto(Arc::new(crypto)), addr)
        .unwrap_or_else(|e| fail(format!("{addr}: {e}")));
    eprintln!("{NAME}: listening on {} (udp)", endpoint.local_addr().map(|a| a.to_string()).unwrap_or_default());
    while let Some(incoming) = endpoint.accept().await {
        tokio::spawn(serve_connection(incoming));
    }
}
