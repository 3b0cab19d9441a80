//! lang_rust_std: the shoot-out's Rust stdlib server.
//!
//! `std::net::TcpListener` on the main thread hands accepted connections to a
//! fixed pool of 8 worker threads through a `std::sync::mpsc` channel (the
//! receiver behind a mutex). A worker serves a connection with blocking reads
//! and writes, HTTP/1.1 keep-alive and pipelining included; HTTP parsing and
//! JSON are our own (src/json.rs), no crates.
//!
//! Fairness: a connection stays on its worker while nobody is waiting, but
//! once a response is written, no further request is already buffered and
//! other connections sit in the channel, the worker sends the connection back
//! to the channel and takes the next one. Without that, 100 keep-alive
//! clients on 8 workers leave 92 of them unserved for as long as the first 8
//! stay open (wrk counts them as timeouts). LANG_STD_STICKY=1 turns the
//! hand-back off (a connection then keeps its worker until it closes).
//! A connection idle for 5 s is closed, so idle clients cannot hold all the
//! workers for ever.
//!
//!     lang_rust_std PORT

mod json;

use std::io::{self, Read, Write};
use std::net::{Shutdown, TcpListener, TcpStream};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::mpsc::{self, Receiver, Sender};
use std::sync::{Arc, Mutex};
use std::thread;
use std::time::Duration;

use json::Json;

const NAME: &str = "lang_rust_std";
const WORKERS: usize = 8;
const HELLO: &[u8] = b"Hello, World!";
const MAX_HEAD: usize = 16 * 1024;
const MAX_BODY: usize = 1 << 20;
const READ_CHUNK: usize = 16 * 1024;
/// A connection that sends nothing for this long is closed (it would
/// otherwise hold a worker): Node's default keep-alive timeout.
const IDLE_TIMEOUT: Duration = Duration::from_secs(5);
const TEXT: &str = "text/plain";
const JSON_TYPE: &str = "application/json";

/// An accepted connection and the bytes read from it but not yet used.
struct Conn {
    stream: TcpStream,
    buf: Vec<u8>,
}

struct Pool {
    tx: Sender<Conn>, // Sender is Sync: workers hand connections back through it
    rx: Mutex<Receiver<Conn>>,
    /// Connections sent to the channel and not yet taken by a worker.
    queued: AtomicUsize,
    sticky: bool,
}

impl Pool {
    fn push(&self, conn: Conn) {
        self.queued.fetch_add(1, Ordering::SeqCst);
        // The pool owns the receiver, so the channel cannot be disconnected.
        let _ = self.tx.send(conn);
    }

    fn pop(&self) -> Conn {
        let conn = self.rx.lock().unwrap().recv().expect("channel closed");
        self.queued.fetch_sub(1, Ordering::SeqCst);
        conn
    }
}

/// One parsed request head.
struct Head<'a> {
    method: &'a [u8],
    target: &'a [u8],
    head_len: usize,
    content_length: usize,
    keep_alive: bool,
    http10: bool,
    chunked: bool,
    expect_continue: bool,
}

enum Parse<'a> {
    Done(Head<'a>),
    Partial,
    Bad(u16),
}

fn find_head_end(buf: &[u8]) -> Option<usize> {
    buf.windows(4).position(|w| w == b"\r\n\r\n").map(|p| p + 4)
}

fn trim(mut s: &[u8]) -> &[u8] {
    while let [b' ' | b'\t', rest @ ..] = s {
        s = rest;
    }
    while let [rest @ .., b' ' | b'\t'] = s {
        s = rest;
    }
    s
}

fn has_token(value: &[u8], token: &[u8]) -> bool {
    value
        .split(|&c| c == b',')
        .any(|t| trim(t).eq_ignore_ascii_case(token))
}

fn parse_head(buf: &[u8]) -> Parse<'_> {
    let end = match find_head_end(buf) {
        Some(e) => e,
        None if buf.len() > MAX_HEAD => return Parse::Bad(431),
        None => return Parse::Partial,
    };
    let mut lines = buf[..end - 4].split(|&c| c == b'\n');
    let line = lines.next().unwrap_or(b"");
    let line = line.strip_suffix(b"\r").unwrap_or(line);
    let mut parts = line.split(|&c| c == b' ');
    let (method, target, version) = match (parts.next(), parts.next(), parts.next(), parts.next()) {
        (Some(m), Some(t), Some(v), None) if !m.is_empty() && !t.is_empty() => (m, t, v),
        _ => return Parse::Bad(400),
    };
    let http10 = match version {
        b"HTTP/1.1" => false,
        b"HTTP/1.0" => true,
        _ => return Parse::Bad(505),
    };
    let mut head = Head {
        method,
        target,
        head_len: end,
        content_length: 0,
        keep_alive: !http10,
        http10,
        chunked: false,
        expect_continue: false,
    };
    let mut seen_length = false;
    for line in lines {
        let line = line.strip_suffix(b"\r").unwrap_or(line);
        let colon = match line.iter().position(|&c| c == b':') {
            Some(c) if c > 0 => c,
            _ => return Parse::Bad(400),
        };
        let (name, value) = (&line[..colon], trim(&line[colon + 1..]));
        if name.eq_ignore_ascii_case(b"content-length") {
            let n = std::str::from_utf8(value)
                .ok()
                .and_then(|v| v.parse::<usize>().ok());
            match n {
                Some(n) if !seen_length || n == head.content_length => head.content_length = n,
                _ => return Parse::Bad(400),
            }
            seen_length = true;
        } else if name.eq_ignore_ascii_case(b"transfer-encoding") {
            head.chunked = true;
        } else if name.eq_ignore_ascii_case(b"expect") {
            head.expect_continue = value.eq_ignore_ascii_case(b"100-continue");
        } else if name.eq_ignore_ascii_case(b"connection") {
            if has_token(value, b"close") {
                head.keep_alive = false;
            } else if http10 && has_token(value, b"keep-alive") {
                head.keep_alive = true;
            }
        }
    }
    Parse::Done(head)
}

fn reason(status: u16) -> &'static str {
    match status {
        200 => "OK",
        400 => "Bad Request",
        404 => "Not Found",
        413 => "Payload Too Large",
        431 => "Request Header Fields Too Large",
        501 => "Not Implemented",
        505 => "HTTP Version Not Supported",
        _ => "Error",
    }
}

/// Appends a whole response (head and body) to `out`.
fn respond(
    out: &mut Vec<u8>,
    status: u16,
    ctype: &str,
    body: &[u8],
    keep_alive: bool,
    http10: bool,
) {
    let conn = match (keep_alive, http10) {
        (false, _) => "Connection: close\r\n",
        (true, true) => "Connection: keep-alive\r\n",
        (true, false) => "",
    };
    // write! into a Vec cannot fail.
    let _ = write!(
        out,
        "HTTP/1.1 {} {}\r\nContent-Type: {}\r\nContent-Length: {}\r\n{}\r\n",
        status,
        reason(status),
        ctype,
        body.len(),
        conn
    );
    out.extend_from_slice(body);
}

fn hex(c: u8) -> Option<u8> {
    (c as char).to_digit(16).map(|d| d as u8)
}

/// Form decoding: '+' is a space, %XX a byte; a malformed escape stays as sent.
fn decode(s: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(s.len());
    let mut i = 0;
    while i < s.len() {
        match s[i] {
            b'+' => out.push(b' '),
            b'%' if i + 2 < s.len() => match (hex(s[i + 1]), hex(s[i + 2])) {
                (Some(h), Some(l)) => {
                    out.push(h * 16 + l);
                    i += 3;
                    continue;
                }
                _ => out.push(b'%'),
            },
            c => out.push(c),
        }
        i += 1;
    }
    out
}

fn parse_query(q: &[u8]) -> Vec<(Vec<u8>, Vec<u8>)> {
    q.split(|&c| c == b'&')
        .filter(|seg| !seg.is_empty())
        .map(|seg| match seg.iter().position(|&c| c == b'=') {
            Some(eq) => (decode(&seg[..eq]), decode(&seg[eq + 1..])),
            None => (decode(seg), Vec::new()),
        })
        .collect()
}

fn get_something(query: &[u8], out_body: &mut Vec<u8>) -> &'static str {
    let params = parse_query(query);
    let wants_json = params.iter().any(|(k, v)| k == b"json" && v == b"true");
    if !wants_json {
        for (k, v) in &params {
            out_body.extend_from_slice(k);
            out_body.push(b'=');
            out_body.extend_from_slice(v);
            out_body.push(b'\n');
        }
        return TEXT;
    }
    let mut q = json::ObjBuilder::new();
    for (k, v) in params {
        let text = |b: Vec<u8>| {
            String::from_utf8(b)
                .unwrap_or_else(|e| String::from_utf8_lossy(e.as_bytes()).into_owned())
        };
        q.insert(text(k), Json::Str(text(v)));
    }
    let reply = Json::Obj(vec![
        ("message".to_owned(), Json::Str("Hello, World!".to_owned())),
        ("query".to_owned(), Json::Obj(q.finish())),
    ]);
    json::write(out_body, &reply);
    JSON_TYPE
}

fn post_something(body: &[u8], out_body: &mut Vec<u8>) -> Option<()> {
    let v = json::parse(body)?;
    out_body.extend_from_slice(b"{\"received\":");
    json::write(out_body, &v);
    let _ = write!(out_body, ",\"bytes\":{}}}", body.len());
    Some(())
}

/// Routes one request; returns the status, content type and fills `body`.
fn route(method: &[u8], target: &[u8], req_body: &[u8], body: &mut Vec<u8>) -> (u16, &'static str) {
    let (path, query) = match target.iter().position(|&c| c == b'?') {
        Some(q) => (&target[..q], &target[q + 1..]),
        None => (target, &b""[..]),
    };
    match (path, method) {
        (b"/", b"GET") => {
            body.extend_from_slice(HELLO);
            (200, TEXT)
        }
        (b"/something", b"GET") => (200, get_something(query, body)),
        (b"/something", b"POST") => match post_something(req_body, body) {
            Some(()) => (200, JSON_TYPE),
            None => {
                body.clear();
                body.extend_from_slice(b"invalid JSON\n");
                (400, TEXT)
            }
        },
        _ => {
            body.extend_from_slice(b"not found\n");
            (404, TEXT)
        }
    }
}

/// Reads more bytes into the connection buffer; Ok(false) at end of stream.
fn fill(conn: &mut Conn) -> io::Result<bool> {
    let len = conn.buf.len();
    conn.buf.resize(len + READ_CHUNK, 0);
    let r = conn.stream.read(&mut conn.buf[len..]);
    let n = *r.as_ref().unwrap_or(&0);
    conn.buf.truncate(len + n);
    r.map(|n| n > 0)
}

enum Next {
    Close,
    Yield,
}

/// Serves requests on `conn` until it closes, fails, or should go back to the
/// queue to let a waiting connection in.
fn serve(conn: &mut Conn, pool: &Pool) -> Next {
    let mut out = Vec::with_capacity(512);
    let mut body = Vec::with_capacity(256);
    let mut served = false;
    let mut sent_continue = false;
    loop {
        let (status, ctype, keep_alive, http10, used) = match parse_head(&conn.buf) {
            Parse::Partial => {
                if served && !pool.sticky && pool.queued.load(Ordering::SeqCst) > 0 {
                    return Next::Yield;
                }
                match fill(conn) {
                    Ok(true) => continue,
                    _ => return Next::Close,
                }
            }
            Parse::Bad(status) => {
                out.clear();
                let msg = format!("{}\n", reason(status)).into_bytes();
                respond(&mut out, status, TEXT, &msg, false, false);
                let _ = conn.stream.write_all(&out);
                return Next::Close;
            }
            Parse::Done(head) => {
                if head.chunked {
                    (501, TEXT, false, head.http10, None)
                } else if head.content_length > MAX_BODY {
                    (413, TEXT, false, head.http10, None)
                } else {
                    let total = head.head_len + head.content_length;
                    if conn.buf.len() < total {
                        if head.expect_continue && !head.http10 && !sent_continue {
                            sent_continue = true;
                            if conn
                                .stream
                                .write_all(b"HTTP/1.1 100 Continue\r\n\r\n")
                                .is_err()
                            {
                                return Next::Close;
                            }
                        }
                        match fill(conn) {
                            Ok(true) => continue,
                            _ => return Next::Close,
                        }
                    }
                    body.clear();
                    let req_body = &conn.buf[head.head_len..total];
                    let (status, ctype) = route(head.method, head.target, req_body, &mut body);
                    (status, ctype, head.keep_alive, head.http10, Some(total))
                }
            }
        };
        if used.is_none() {
            body.clear();
            body.extend_from_slice(format!("{}\n", reason(status)).as_bytes());
        }
        out.clear();
        respond(&mut out, status, ctype, &body, keep_alive, http10);
        if conn.stream.write_all(&out).is_err() {
            return Next::Close;
        }
        match used {
            Some(n) if keep_alive => {
                conn.buf.drain(..n);
                served = true;
                sent_continue = false;
            }
            _ => return Next::Close,
        }
    }
}

fn worker(pool: Arc<Pool>) {
    loop {
        let mut conn = pool.pop();
        match serve(&mut conn, &pool) {
            Next::Yield => pool.push(conn),
            Next::Close => {
                let _ = conn.stream.shutdown(Shutdown::Both);
            }
        }
    }
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    // PORT [ADDR]: ADDR is 127.0.0.1, or the server host's address in the lab's netns host mode.
    let (p, addr) = match args.as_slice() {
        [_, p] => (p, "127.0.0.1".to_string()),
        [_, p, a] => (p, a.clone()),
        _ => {
            eprintln!("usage: {NAME} PORT [ADDR]");
            std::process::exit(2)
        }
    };
    let port: u16 = p.parse().unwrap_or_else(|_| {
        eprintln!("{NAME}: bad port {p:?}");
        std::process::exit(2)
    });
    let listener = TcpListener::bind((addr.as_str(), port)).unwrap_or_else(|e| {
        eprintln!("{NAME}: {e}");
        std::process::exit(1)
    });
    let (tx, rx) = mpsc::channel();
    let pool = Arc::new(Pool {
        tx,
        rx: Mutex::new(rx),
        queued: AtomicUsize::new(0),
        sticky: std::env::var("LANG_STD_STICKY").map_or(false, |v| v == "1"),
    });
    for k in 0..WORKERS {
        let pool = Arc::clone(&pool);
        thread::Builder::new()
            .name(format!("worker-{k}"))
            .spawn(move || worker(pool))
            .expect("spawn worker");
    }
    let addr = listener.local_addr().expect("local_addr");
    eprintln!("{NAME}: listening on {addr}");
    // SIGTERM keeps its default action (the process ends): the standard
    // library has no signal handling and there is nothing to flush.
    for stream in listener.incoming() {
        match stream {
            Ok(stream) => {
                let _ = stream.set_nodelay(true);
                let _ = stream.set_read_timeout(Some(IDLE_TIMEOUT));
                pool.push(Conn {
                    stream,
                    buf: Vec::new(),
                });
            }
            Err(e) => eprintln!("{NAME}: accept: {e}"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn query_decoding() {
        assert_eq!(decode(b"x%20y+z%E2%9C%93"), "x y z\u{2713}".as_bytes());
        assert_eq!(decode(b"100%"), b"100%");
        assert_eq!(decode(b"%4"), b"%4");
        assert_eq!(decode(b"%zz%41"), b"%zzA");
        let q = parse_query(b"a=1&&b&c=x=y");
        assert_eq!(
            q,
            vec![
                (b"a".to_vec(), b"1".to_vec()),
                (b"b".to_vec(), vec![]),
                (b"c".to_vec(), b"x=y".to_vec())
            ]
        );
    }

    #[test]
    fn heads() {
        match parse_head(
            b"GET /x?y HTTP/1.0\r\nConnection: Keep-Alive\r\nContent-Length: 3\r\n\r\nabc",
        ) {
            Parse::Done(h) => {
                assert_eq!(h.target, b"/x?y");
                assert!(h.keep_alive && h.http10);
                assert_eq!(h.content_length, 3);
            }
            _ => panic!(),
        }
        assert!(matches!(
            parse_head(b"GET / HTTP/1.1\r\nHost: x\r\n"),
            Parse::Partial
        ));
        assert!(matches!(
            parse_head(b"GET / HTTP/2\r\n\r\n"),
            Parse::Bad(505)
        ));
        assert!(matches!(
            parse_head(b"GET / HTTP/1.1\r\nContent-Length: x\r\n\r\n"),
            Parse::Bad(400)
        ));
    }
}
