//! h3load: the lab's HTTP/3 load generator. A closed loop as h2load's: C QUIC connections, each
//! with M requests in flight (one per stream), each stream sending its next request when the last
//! one is answered, for a warm-up and then a measured window; one JSON report.
//!
//!     h3load [-c CONNS] [-m STREAMS] [-w WARMUP_S] [-d DURATION_S] [-t THREADS] [--timeout S]
//!            [--body FILE] (--cacert FILE | --insecure) [--json OUT]
//!            [--end-snapshot FILE [--snapshot-pids 'PID ...']] URL
//!
//! Why the lab has its own: Debian's h2load is built without HTTP/3, and h2load's HTTP/3 needs a
//! QUIC-capable OpenSSL fork that Debian does not ship; oha's HTTP/3 client (1.16) waits out the
//! server's idle timeout after its deadline (30 s against quic-go for a 2 s run) and then reports
//! its rate over the whole 32 s. This tool closes its connections when the window ends and counts
//! only what the window holds. It uses the same QUIC and HTTP/3 crates as the Rust rival (quinn,
//! h3), with one QUIC endpoint (one UDP socket) per connection, as separate clients would have.
//!
//! What is counted: a request is in the window when its answer completed between the end of the
//! warm-up (-w) and the end of the window (-d after it); the latency histogram (µs, exact values)
//! is theirs. A request still in flight when the window ends is abandoned (its stream reset; at
//! most one per stream, counted as aborted_at_end, not an error), as wrk drops its own: the load
//! ends with the window, and no slow tail of answers stretches it. The whole run's totals also hold
//! the warm-up. Errors: a connection that could not be made, a stream or connection error, a
//! request not answered within --timeout. A stream that meets one stops (the run has failed anyway,
//! and a broken connection would otherwise spin).
//!
//! The report's clock: run_s from the start (before the first connection) to the end of the
//! process's work, connections closed; load_s from the start to the last answer (connects
//! included, the close not): the whole run's requests over load_s is its rate (without -w, the
//! window's over its length, to the microsecond). The TLS facts: the
//! ALPN protocol the handshake agreed (null when no connection was made), and TLS 1.3, the only
//! version QUIC runs (RFC 9001).

use std::collections::{BTreeMap, HashMap};
use std::fmt::Write as _;
use std::net::{SocketAddr, ToSocketAddrs};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use bytes::{Buf, Bytes};
use http::{Method, Request, Uri};
use rustls::client::danger::{HandshakeSignatureValid, ServerCertVerified, ServerCertVerifier};
use rustls::crypto::CryptoProvider;
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, ServerName, UnixTime};
use rustls::{DigitallySignedStruct, SignatureScheme};

const USAGE: &str = "usage: h3load [-c CONNS] [-m STREAMS] [-w WARMUP_S] [-d DURATION_S] [-t THREADS] \
[--timeout S] [--body FILE] (--cacert FILE | --insecure) [--json OUT] [--end-snapshot FILE \
[--snapshot-pids 'PID ...']] URL";

struct Args {
    conns: usize,
    streams: usize,
    warmup: f64,
    duration: f64,
    threads: usize,
    timeout: f64,
    body: Option<Bytes>,
    cacert: Option<String>,
    insecure: bool,
    json: Option<String>,
    end_snapshot: Option<String>,
    snapshot_pids: String,
    url: Uri,
}

fn usage(msg: &str) -> ! {
    eprintln!("h3load: {msg}\n{USAGE}");
    std::process::exit(2);
}

fn number<T: std::str::FromStr>(flag: &str, v: Option<String>) -> T {
    v.and_then(|s| s.parse().ok()).unwrap_or_else(|| usage(&format!("{flag} needs a number")))
}

fn parse_args() -> Args {
    let mut a = Args {
        conns: 1, streams: 1, warmup: 0.0, duration: 10.0, threads: 1, timeout: 5.0, body: None,
        cacert: None, insecure: false, json: None, end_snapshot: None, snapshot_pids: String::new(),
        url: Uri::default(),
    };
    let mut url = None;
    let mut it = std::env::args().skip(1);
    while let Some(arg) = it.next() {
        match arg.as_str() {
            "-c" => a.conns = number("-c", it.next()),
            "-m" => a.streams = number("-m", it.next()),
            "-w" => a.warmup = number("-w", it.next()),
            "-d" => a.duration = number("-d", it.next()),
            "-t" => a.threads = number("-t", it.next()),
            "--timeout" => a.timeout = number("--timeout", it.next()),
            "--body" => {
                let path = it.next().unwrap_or_else(|| usage("--body needs a file"));
                let data = std::fs::read(&path).unwrap_or_else(|e| usage(&format!("--body {path}: {e}")));
                a.body = Some(Bytes::from(data));
            }
            "--cacert" => a.cacert = Some(it.next().unwrap_or_else(|| usage("--cacert needs a file"))),
            "--insecure" | "-k" => a.insecure = true,
            "--json" => a.json = Some(it.next().unwrap_or_else(|| usage("--json needs a file"))),
            "--end-snapshot" => a.end_snapshot = Some(it.next().unwrap_or_else(|| usage("--end-snapshot needs a file"))),
            "--snapshot-pids" => a.snapshot_pids = it.next().unwrap_or_else(|| usage("--snapshot-pids needs a list")),
            "--version" => {
                println!("h3load {}", env!("CARGO_PKG_VERSION"));
                std::process::exit(0);
            }
            "-h" | "--help" => {
                println!("{USAGE}");
                std::process::exit(0);
            }
            s if s.starts_with('-') => usage(&format!("unknown flag {s}")),
            s => {
                if url.replace(s.to_string()).is_some() {
                    usage("one URL only");
                }
            }
        }
    }
    let url = url.unwrap_or_else(|| usage("no URL"));
    a.url = url.parse().unwrap_or_else(|_| usage(&format!("bad URL {url}")));
    if a.url.scheme_str() != Some("https") || a.url.host().is_none() {
        usage(&format!("the URL must be https://HOST[:PORT]/PATH (got {url})"));
    }
    if a.conns == 0 || a.streams == 0 || a.threads == 0 {
        usage("-c, -m and -t must be at least 1");
    }
    if !(a.duration > 0.0) || !(a.warmup >= 0.0) || !(a.timeout > 0.0) {
        usage("-d and --timeout must be > 0, -w ≥ 0");
    }
    if a.cacert.is_none() == !a.insecure {
        usage("give exactly one of --cacert FILE and --insecure");
    }
    a
}

/// Accepts any certificate (--insecure: the lab's self-signed one), still checking the handshake's
/// signatures with the provider's algorithms, as curl -k and oha --insecure do.
#[derive(Debug)]
struct AnyCertificate(Arc<CryptoProvider>);

impl ServerCertVerifier for AnyCertificate {
    fn verify_server_cert(&self, _: &CertificateDer<'_>, _: &[CertificateDer<'_>], _: &ServerName<'_>, _: &[u8],
                          _: UnixTime) -> Result<ServerCertVerified, rustls::Error> {
        Ok(ServerCertVerified::assertion())
    }
    fn verify_tls12_signature(&self, message: &[u8], cert: &CertificateDer<'_>, dss: &DigitallySignedStruct)
                              -> Result<HandshakeSignatureValid, rustls::Error> {
        rustls::crypto::verify_tls12_signature(message, cert, dss, &self.0.signature_verification_algorithms)
    }
    fn verify_tls13_signature(&self, message: &[u8], cert: &CertificateDer<'_>, dss: &DigitallySignedStruct)
                              -> Result<HandshakeSignatureValid, rustls::Error> {
        rustls::crypto::verify_tls13_signature(message, cert, dss, &self.0.signature_verification_algorithms)
    }
    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.0.signature_verification_algorithms.supported_schemes()
    }
}

fn client_config(a: &Args) -> Result<quinn::ClientConfig, String> {
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let builder = rustls::ClientConfig::builder_with_provider(provider.clone())
        .with_protocol_versions(&[&rustls::version::TLS13])
        .map_err(|e| e.to_string())?;
    let mut tls = match &a.cacert {
        Some(path) => {
            let mut roots = rustls::RootCertStore::empty();
            for cert in CertificateDer::pem_file_iter(path).map_err(|e| format!("{path}: {e}"))? {
                roots.add(cert.map_err(|e| format!("{path}: {e}"))?).map_err(|e| format!("{path}: {e}"))?;
            }
            builder.with_root_certificates(roots).with_no_client_auth()
        }
        None => builder.dangerous().with_custom_certificate_verifier(Arc::new(AnyCertificate(provider)))
            .with_no_client_auth(),
    };
    tls.alpn_protocols = vec![b"h3".to_vec()];
    let quic = quinn::crypto::rustls::QuicClientConfig::try_from(tls).map_err(|e| e.to_string())?;
    Ok(quinn::ClientConfig::new(Arc::new(quic)))
}

/// Says on stderr why the first connection failed, and why the first stream stopped (once each:
/// a run that fails usually fails the same way everywhere).
fn first_error(kind: &'static str, msg: &str) {
    static CONNECT: AtomicBool = AtomicBool::new(false);
    static STREAM: AtomicBool = AtomicBool::new(false);
    let flag = if kind == "connect" { &CONNECT } else { &STREAM };
    if !flag.swap(true, Ordering::Relaxed) {
        eprintln!("h3load: first {kind} error: {msg}");
    }
}

/// What one stream (or connection) saw; merged into the run's at the end.
#[derive(Default)]
struct Stats {
    requests_total: u64,
    requests_window: u64,
    status_window: BTreeMap<u16, u64>,
    status_total: BTreeMap<u16, u64>,
    body_bytes_window: u64,
    body_bytes_total: u64,
    hist_us: HashMap<u64, u64>,
    err_connect: u64,
    err_stream: u64,
    err_timeout: u64,
    /// requests in flight when the window ended (at most one per stream), abandoned
    aborted: u64,
    connected: u64,
    /// when the last answer came: the load's end, before the connections are closed
    last_done: Option<Instant>,
    /// the application protocol the TLS handshake inside QUIC agreed (ALPN; the first
    /// connection's: every connection offers only h3)
    alpn: Option<String>,
}

impl Stats {
    fn merge(&mut self, o: Stats) {
        self.requests_total += o.requests_total;
        self.requests_window += o.requests_window;
        for (k, v) in o.status_window { *self.status_window.entry(k).or_default() += v; }
        for (k, v) in o.status_total { *self.status_total.entry(k).or_default() += v; }
        self.body_bytes_window += o.body_bytes_window;
        self.body_bytes_total += o.body_bytes_total;
        for (k, v) in o.hist_us { *self.hist_us.entry(k).or_default() += v; }
        self.err_connect += o.err_connect;
        self.err_stream += o.err_stream;
        self.err_timeout += o.err_timeout;
        self.aborted += o.aborted;
        self.connected += o.connected;
        self.last_done = self.last_done.max(o.last_done);
        if self.alpn.is_none() {
            self.alpn = o.alpn;
        }
    }
}

/// The run's clock: the window is [warm_end, end].
#[derive(Clone, Copy)]
struct Plan {
    warm_end: Instant,
    end: Instant,
    timeout: Duration,
}

#[derive(Clone)]
struct Target {
    addr: SocketAddr,
    server_name: String,
    url: Uri,
    body: Option<Bytes>,
}

type Sender = h3::client::SendRequest<h3_quinn::OpenStreams, Bytes>;

fn request(t: &Target) -> Request<()> {
    let b = Request::builder().uri(t.url.clone());
    let b = match &t.body {
        Some(body) => b.method(Method::POST).header(http::header::CONTENT_LENGTH, body.len()),
        None => b.method(Method::GET),
    };
    b.body(()).expect("a valid request head")
}

/// One request on a stream of its own: (status, body bytes received).
async fn one_request(sender: &mut Sender, t: &Target) -> Result<(u16, u64), String> {
    let mut stream = sender.send_request(request(t)).await.map_err(|e| e.to_string())?;
    if let Some(body) = &t.body {
        stream.send_data(body.clone()).await.map_err(|e| e.to_string())?;
    }
    stream.finish().await.map_err(|e| e.to_string())?;
    let resp = stream.recv_response().await.map_err(|e| e.to_string())?;
    let mut n = 0u64;
    while let Some(chunk) = stream.recv_data().await.map_err(|e| e.to_string())? {
        n += chunk.remaining() as u64;
    }
    Ok((resp.status().as_u16(), n))
}

/// One stream's closed loop: the next request when the last is answered, until the window ends.
async fn stream_loop(mut sender: Sender, t: Arc<Target>, plan: Plan) -> Stats {
    let mut s = Stats::default();
    loop {
        let start = Instant::now();
        if start >= plan.end {
            return s;
        }
        // the request's own deadline, or the window's end if that comes first: a request still
        // unanswered when the window ends is abandoned (its stream reset), not waited for
        let limit = start + plan.timeout;
        match tokio::time::timeout_at(limit.min(plan.end).into(), one_request(&mut sender, &t)).await {
            Ok(Ok((status, bytes))) => {
                let done = Instant::now();
                s.last_done = Some(done);
                s.requests_total += 1;
                s.body_bytes_total += bytes;
                *s.status_total.entry(status).or_default() += 1;
                if done >= plan.warm_end {
                    s.requests_window += 1;
                    *s.status_window.entry(status).or_default() += 1;
                    s.body_bytes_window += bytes;
                    *s.hist_us.entry((done - start).as_micros() as u64).or_default() += 1;
                }
            }
            Ok(Err(e)) => {
                first_error("stream", &e);
                s.err_stream += 1;
                return s;
            }
            Err(_) if limit >= plan.end => {
                s.aborted += 1;
                return s;
            }
            Err(_) => {
                first_error("stream", &format!("no answer within {:?}", plan.timeout));
                s.err_timeout += 1;
                return s;
            }
        }
    }
}

/// A connection whose loops have ended, to be closed once every connection's have (the end of
/// the load, when the end-of-load snapshot is taken).
struct Open {
    endpoint: quinn::Endpoint,
    conn: quinn::Connection,
    drive: tokio::task::JoinHandle<()>,
}

impl Open {
    /// Closes at once: CONNECTION_CLOSE goes out, and the draining period (3 PTO, up to a second
    /// under load) is not waited out beyond a short grace for the packet to leave.
    async fn close(self) {
        self.conn.close(0u32.into(), b"done");
        let _ = tokio::time::timeout(Duration::from_millis(100), self.endpoint.wait_idle()).await;
        self.drive.abort();
    }
}

/// One connection: its endpoint (UDP socket), the QUIC and HTTP/3 handshakes, M stream loops.
async fn connection(t: Arc<Target>, cfg: quinn::ClientConfig, streams: usize, plan: Plan) -> (Stats, Option<Open>) {
    let mut s = Stats::default();
    let bind: SocketAddr = if t.addr.is_ipv6() { "[::]:0".parse().unwrap() } else { "0.0.0.0:0".parse().unwrap() };
    let failed = |mut s: Stats, msg: String| {
        first_error("connect", &msg);
        s.err_connect += 1;
        (s, None)
    };
    let mut endpoint = match quinn::Endpoint::client(bind) {
        Ok(e) => e,
        Err(e) => return failed(s, format!("a UDP socket on {bind}: {e}")),
    };
    endpoint.set_default_client_config(cfg);
    let conn = match endpoint.connect(t.addr, &t.server_name) {
        Ok(connecting) => match tokio::time::timeout(plan.timeout, connecting).await {
            Ok(Ok(c)) => c,
            Ok(Err(e)) => return failed(s, format!("{}: {e}", t.addr)),
            Err(_) => return failed(s, format!("{}: no handshake within {:?}", t.addr, plan.timeout)),
        },
        Err(e) => return failed(s, format!("{}: {e}", t.addr)),
    };
    let (mut driver, sender) = match h3::client::new(h3_quinn::Connection::new(conn.clone())).await {
        Ok(x) => x,
        Err(e) => return failed(s, format!("{}: HTTP/3 set-up: {e}", t.addr)),
    };
    s.connected = 1;
    s.alpn = conn.handshake_data()
        .and_then(|h| h.downcast::<quinn::crypto::rustls::HandshakeData>().ok())
        .and_then(|h| h.protocol)
        .map(|p| String::from_utf8_lossy(&p).into_owned());
    let drive = tokio::spawn(async move {
        let _ = std::future::poll_fn(|cx| driver.poll_close(cx)).await;
    });
    let loops: Vec<_> = (0..streams).map(|_| tokio::spawn(stream_loop(sender.clone(), t.clone(), plan))).collect();
    drop(sender);
    for l in loops {
        if let Ok(st) = l.await {
            s.merge(st);
        }
    }
    (s, Some(Open { endpoint, conn, drive }))
}

/// The end-of-load snapshot (--end-snapshot): the counters the lab reads around its window, copied
/// the moment the load ends, before the connections are closed, so that the server's CPU window
/// ends with the load (the same lines as the lab's wrk script writes: "uptime …", the cpuN lines of
/// /proc/stat, "self <this process's stat>", "pid PID <its stat>" for each --snapshot-pids).
fn end_snapshot(path: &str, pids: &str) -> std::io::Result<()> {
    let first = |p: &str| std::fs::read_to_string(p).ok().and_then(|t| t.lines().next().map(str::to_string));
    let mut out = format!("uptime {}\n", first("/proc/uptime").unwrap_or_default());
    for line in std::fs::read_to_string("/proc/stat")?.lines() {
        if line.starts_with("cpu") && line.as_bytes().get(3).is_some_and(u8::is_ascii_digit) {
            out.push_str(line);
            out.push('\n');
        }
    }
    let _ = writeln!(out, "self {}", first("/proc/self/stat").unwrap_or_default());
    for pid in pids.split_whitespace().filter(|p| p.bytes().all(|b| b.is_ascii_digit())) {
        if let Some(line) = first(&format!("/proc/{pid}/stat")) {
            let _ = writeln!(out, "pid {pid} {line}");
        }
    }
    let tmp = format!("{path}.tmp");
    std::fs::write(&tmp, out)?;
    std::fs::rename(&tmp, path)
}

fn target(a: &Args) -> Result<Target, String> {
    let host = a.url.host().unwrap().trim_start_matches('[').trim_end_matches(']').to_string();
    let port = a.url.port_u16().unwrap_or(443);
    let addr = (host.as_str(), port).to_socket_addrs().map_err(|e| format!("{host}: {e}"))?
        .next().ok_or_else(|| format!("{host}: no address"))?;
    Ok(Target { addr, server_name: host, url: a.url.clone(), body: a.body.clone() })
}

fn json_counts(m: &BTreeMap<u16, u64>) -> String {
    let items: Vec<String> = m.iter().map(|(k, v)| format!("\"{k}\":{v}")).collect();
    format!("{{{}}}", items.join(","))
}

fn report(a: &Args, s: &Stats, run_s: f64, load_s: f64) -> String {
    let mut hist: Vec<(u64, u64)> = s.hist_us.iter().map(|(k, v)| (*k, *v)).collect();
    hist.sort_unstable();
    let mut h = String::with_capacity(hist.len() * 12);
    for (i, (us, n)) in hist.iter().enumerate() {
        let _ = write!(h, "{}[{us},{n}]", if i == 0 { "" } else { "," });
    }
    format!(
        "{{\"tool\":\"h3load\",\"format\":1,\"version\":\"{}\",\"url\":\"{}\",\"connections\":{},\"streams\":{},\
\"threads\":{},\"warmup_s\":{},\"duration_s\":{},\"timeout_s\":{},\"body_bytes\":{},\"run_s\":{:.6},\
\"load_s\":{:.6},\
\"connected\":{},\"alpn\":{},\"tls_version\":\"TLSv1.3\",\"requests_total\":{},\"requests_window\":{},\"status_counts\":{},\"status_counts_total\":{},\
\"errors\":{{\"connect\":{},\"stream\":{},\"timeout\":{}}},\"aborted_at_end\":{},\"body_bytes_window\":{},\"body_bytes_total\":{},\
\"latency_hist\":[{}]}}\n",
        env!("CARGO_PKG_VERSION"), a.url, a.conns, a.streams, a.threads, a.warmup, a.duration, a.timeout,
        a.body.as_ref().map_or(0, |b| b.len()), run_s, load_s, s.connected,
        s.alpn.as_ref().map_or("null".to_string(), |p| format!("\"{}\"", p.escape_default())), s.requests_total, s.requests_window,
        json_counts(&s.status_window), json_counts(&s.status_total), s.err_connect, s.err_stream, s.err_timeout,
        s.aborted, s.body_bytes_window, s.body_bytes_total, h)
}

fn main() {
    let a = parse_args();
    let fail = |m: String| -> ! {
        eprintln!("h3load: {m}");
        std::process::exit(1)
    };
    let cfg = client_config(&a).unwrap_or_else(|e| fail(e));
    let t = Arc::new(target(&a).unwrap_or_else(|e| fail(e)));
    let rt = tokio::runtime::Builder::new_multi_thread().worker_threads(a.threads).enable_all().build()
        .unwrap_or_else(|e| fail(e.to_string()));
    let t0 = Instant::now();
    let warm_end = t0 + Duration::from_secs_f64(a.warmup);
    let plan = Plan { warm_end, end: warm_end + Duration::from_secs_f64(a.duration),
                      timeout: Duration::from_secs_f64(a.timeout) };
    let total = rt.block_on(async {
        let conns: Vec<_> = (0..a.conns)
            .map(|_| tokio::spawn(connection(t.clone(), cfg.clone(), a.streams, plan)))
            .collect();
        let mut total = Stats::default();
        let mut open = Vec::new();
        for c in conns {
            if let Ok((s, o)) = c.await {
                total.merge(s);
                open.extend(o);
            }
        }
        if let Some(path) = &a.end_snapshot {
            if let Err(e) = end_snapshot(path, &a.snapshot_pids) {
                eprintln!("h3load: --end-snapshot {path}: {e}");
            }
        }
        let closing: Vec<_> = open.into_iter().map(|o| tokio::spawn(o.close())).collect();
        for c in closing {
            let _ = c.await;
        }
        total
    });
    let run_s = t0.elapsed().as_secs_f64();
    let load_s = total.last_done.map_or(0.0, |d| (d - t0).as_secs_f64());
    let errors = total.err_connect + total.err_stream + total.err_timeout;
    println!("h3load: {} requests in the {} s window ({:.0} req/s), {} in the whole run of {:.3} s; \
              {}/{} connections made; errors: {} (connect {}, stream {}, timeout {}); statuses {:?}",
             total.requests_window, a.duration, total.requests_window as f64 / a.duration, total.requests_total,
             run_s, total.connected, a.conns, errors, total.err_connect, total.err_stream, total.err_timeout,
             total.status_window);
    if let Some(path) = &a.json {
        let tmp = format!("{path}.tmp");
        std::fs::write(&tmp, report(&a, &total, run_s, load_s)).and_then(|_| std::fs::rename(&tmp, path))
            .unwrap_or_else(|e| fail(format!("{path}: {e}")));
    }
}
