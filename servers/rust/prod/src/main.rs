//! lang_rust_axum: the shoot-out's Rust "production" server: axum on a tokio
//! multi-thread runtime with one worker thread per CPU in the process's
//! affinity mask (`available_parallelism` reads it, so under `taskset -c 0`
//! there is one worker), serde_json for JSON.
//!
//!     lang_rust_axum PORT

use axum::body::Bytes;
use axum::extract::RawQuery;
use axum::http::{header, HeaderValue, Method, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::any;
use axum::serve::ListenerExt;
use axum::Router;
use serde_json::{Map, Value};

const NAME: &str = "lang_rust_axum";
const TEXT: HeaderValue = HeaderValue::from_static("text/plain");
const JSON_TYPE: HeaderValue = HeaderValue::from_static("application/json");

fn reply(status: StatusCode, ctype: HeaderValue, body: impl Into<Bytes>) -> Response {
    (status, [(header::CONTENT_TYPE, ctype)], body.into()).into_response()
}

fn not_found() -> Response {
    reply(StatusCode::NOT_FOUND, TEXT, "not found\n")
}

async fn root(method: Method) -> Response {
    if method == Method::GET {
        reply(StatusCode::OK, TEXT, "Hello, World!")
    } else {
        not_found()
    }
}

fn get_something(query: Option<String>) -> Response {
    let query = query.unwrap_or_default();
    // form_urlencoded keeps order and repeats, decodes '+' as a space and
    // replaces invalid UTF-8 after decoding.
    let params = form_urlencoded::parse(query.as_bytes());
    if params.clone().any(|(k, v)| k == "json" && v == "true") {
        let mut q = Map::new();
        for (k, v) in params {
            q.insert(k.into_owned(), Value::String(v.into_owned()));
        }
        let mut reply_obj = Map::new();
        reply_obj.insert("message".into(), Value::String("Hello, World!".into()));
        reply_obj.insert("query".into(), Value::Object(q));
        let body = serde_json::to_vec(&Value::Object(reply_obj)).expect("serialize");
        return reply(StatusCode::OK, JSON_TYPE, body);
    }
    let mut body = String::with_capacity(query.len() + 8);
    for (k, v) in params {
        body.push_str(&k);
        body.push('=');
        body.push_str(&v);
        body.push('\n');
    }
    reply(StatusCode::OK, TEXT, body)
}

fn post_something(body: Bytes) -> Response {
    let received: Value = match serde_json::from_slice(&body) {
        Ok(v) => v,
        Err(_) => return reply(StatusCode::BAD_REQUEST, TEXT, "invalid JSON\n"),
    };
    let mut obj = Map::new();
    obj.insert("received".into(), received);
    obj.insert("bytes".into(), Value::from(body.len()));
    let out = serde_json::to_vec(&Value::Object(obj)).expect("serialize");
    reply(StatusCode::OK, JSON_TYPE, out)
}

// One handler for every method on /something: a method other than GET or
// POST is a 404 like an unknown path (a method router would answer 405).
async fn something(method: Method, RawQuery(query): RawQuery, body: Bytes) -> Response {
    match method {
        Method::GET => get_something(query),
        Method::POST => post_something(body),
        _ => not_found(),
    }
}

fn cpus() -> usize {
    std::thread::available_parallelism().map_or(1, |n| n.get())
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
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(cpus())
        .enable_all()
        .build()
        .expect("tokio runtime");
    runtime.block_on(async move {
        let listener = tokio::net::TcpListener::bind((addr.as_str(), port))
            .await
            .unwrap_or_else(|e| {
                eprintln!("{NAME}: {e}");
                std::process::exit(1)
            });
        let addr = listener.local_addr().expect("local_addr");
        let listener = listener.tap_io(|tcp| {
            let _ = tcp.set_nodelay(true);
        });
        let app = Router::new()
            .route("/", any(root))
            .route("/something", any(something))
            .fallback(|| async { not_found() });
        let mut term = tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate())
            .expect("SIGTERM handler");
        eprintln!("{NAME}: listening on {addr}");
        tokio::select! {
            r = axum::serve(listener, app) => {
                eprintln!("{NAME}: server stopped: {r:?}");
                std::process::exit(1);
            }
            _ = term.recv() => {}
        }
    });
    // Open keep-alive connections are simply dropped with the process.
    std::process::exit(0);
}
