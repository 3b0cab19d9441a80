// lang_cpp_std: the shoot-out's C++ stdlib server.
//
// The main thread accepts on a blocking socket and puts each connection in a
// mutex-guarded queue; a fixed pool of 8 std::thread workers takes them off
// the queue and serves them with blocking reads and writes, HTTP/1.1
// keep-alive and pipelining included. HTTP parsing and JSON are our own
// (common/), C++17 standard library plus the POSIX socket calls.
//
// Fairness: a connection stays on its worker while nobody is waiting, but once
// a response is written, no further request is already buffered and other
// connections are queued, the worker puts it back at the end of the queue and
// takes the next one (otherwise 100 keep-alive clients on 8 workers leave 92
// unserved while the first 8 stay open). LANG_STD_STICKY=1 turns that off.
// A connection idle for 5 s is closed, so idle clients cannot hold all the
// workers for ever.
//
//     lang_cpp_std PORT

#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <condition_variable>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <mutex>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "../common/routes.hpp"

namespace {

constexpr const char* kName = "lang_cpp_std";
constexpr int kWorkers = 8;
constexpr size_t kMaxHead = 16 * 1024;
constexpr size_t kReadChunk = 16 * 1024;
// A connection that sends nothing for this long is closed (it would otherwise
// hold a worker): Node's default keep-alive timeout.
constexpr int kIdleTimeoutSeconds = 5;

struct Conn {
    int fd;
    std::string buf;  // bytes read but not yet used
};

class Queue {
public:
    void push(Conn* c) {
        {
            std::lock_guard<std::mutex> lock(mu_);
            q_.push_back(c);
            waiting_.store(q_.size(), std::memory_order_relaxed);
        }
        cv_.notify_one();
    }
    Conn* pop() {
        std::unique_lock<std::mutex> lock(mu_);
        cv_.wait(lock, [this] { return !q_.empty(); });
        Conn* c = q_.front();
        q_.pop_front();
        waiting_.store(q_.size(), std::memory_order_relaxed);
        return c;
    }
    // Connections waiting for a worker (read without the lock: a hint).
    size_t waiting() const { return waiting_.load(std::memory_order_relaxed); }

private:
    std::mutex mu_;
    std::condition_variable cv_;
    std::deque<Conn*> q_;
    std::atomic<size_t> waiting_{0};
};

Queue g_queue;
bool g_sticky = false;

struct Head {
    std::string_view method, target;
    size_t head_len = 0;
    size_t content_length = 0;
    bool keep_alive = true;
    bool http10 = false;
    bool chunked = false;
    bool expect_continue = false;
};

enum class Parse { Done, Partial, Bad };

std::string_view trim(std::string_view s) {
    while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
    while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
    return s;
}

bool iequals(std::string_view a, std::string_view b) {
    if (a.size() != b.size()) return false;
    for (size_t i = 0; i < a.size(); ++i) {
        char x = a[i], y = b[i];
        if (x >= 'A' && x <= 'Z') x += 32;
        if (y >= 'A' && y <= 'Z') y += 32;
        if (x != y) return false;
    }
    return true;
}

bool has_token(std::string_view v, std::string_view token) {
    while (true) {
        size_t comma = v.find(',');
        if (iequals(trim(v.substr(0, comma)), token)) return true;
        if (comma == std::string_view::npos) return false;
        v.remove_prefix(comma + 1);
    }
}

// Parses the request head at the start of buf; on Bad, status says why.
Parse parse_head(std::string_view buf, Head& h, int& status) {
    size_t end = buf.find("\r\n\r\n");
    if (end == std::string_view::npos) {
        if (buf.size() > kMaxHead) { status = 431; return Parse::Bad; }
        return Parse::Partial;
    }
    h = Head{};
    h.head_len = end + 4;
    std::string_view rest = buf.substr(0, end + 2);  // every line ends in CRLF
    size_t eol = rest.find("\r\n");
    std::string_view line = rest.substr(0, eol);
    rest.remove_prefix(eol + 2);
    size_t sp1 = line.find(' ');
    size_t sp2 = sp1 == std::string_view::npos ? sp1 : line.find(' ', sp1 + 1);
    if (sp1 == 0 || sp2 == std::string_view::npos || sp2 == sp1 + 1 ||
        line.find(' ', sp2 + 1) != std::string_view::npos) {
        status = 400;
        return Parse::Bad;
    }
    h.method = line.substr(0, sp1);
    h.target = line.substr(sp1 + 1, sp2 - sp1 - 1);
    std::string_view version = line.substr(sp2 + 1);
    if (version == "HTTP/1.0") {
        h.http10 = true;
        h.keep_alive = false;
    } else if (version != "HTTP/1.1") {
        status = 505;
        return Parse::Bad;
    }
    bool seen_length = false;
    while (!rest.empty()) {
        eol = rest.find("\r\n");
        line = rest.substr(0, eol);
        rest.remove_prefix(eol + 2);
        size_t colon = line.find(':');
        if (colon == 0 || colon == std::string_view::npos) { status = 400; return Parse::Bad; }
        std::string_view name = line.substr(0, colon);
        std::string_view value = trim(line.substr(colon + 1));
        if (iequals(name, "content-length")) {
            if (value.empty() || value.size() > 15) { status = 400; return Parse::Bad; }
            size_t n = 0;
            for (char c : value) {
                if (c < '0' || c > '9') { status = 400; return Parse::Bad; }
                n = n * 10 + (c - '0');
            }
            if (seen_length && n != h.content_length) { status = 400; return Parse::Bad; }
            h.content_length = n;
            seen_length = true;
        } else if (iequals(name, "transfer-encoding")) {
            h.chunked = true;
        } else if (iequals(name, "expect")) {
            h.expect_continue = iequals(value, "100-continue");
        } else if (iequals(name, "connection")) {
            if (has_token(value, "close")) h.keep_alive = false;
            else if (h.http10 && has_token(value, "keep-alive")) h.keep_alive = true;
        }
    }
    return Parse::Done;
}

void append_response(std::string& out, const routes::Reply& r, bool keep_alive, bool http10) {
    out += "HTTP/1.1 ";
    out += std::to_string(r.status);
    out += ' ';
    out += routes::reason(r.status);
    out += "\r\nContent-Type: ";
    out += r.content_type;
    out += "\r\nContent-Length: ";
    out += std::to_string(r.body.size());
    out += "\r\n";
    if (!keep_alive) out += "Connection: close\r\n";
    else if (http10) out += "Connection: keep-alive\r\n";
    out += "\r\n";
    out += r.body;
}

bool write_all(int fd, const std::string& data) {
    size_t off = 0;
    while (off < data.size()) {
        ssize_t n = send(fd, data.data() + off, data.size() - off, MSG_NOSIGNAL);
        if (n < 0) {
            if (errno == EINTR) continue;
            return false;
        }
        off += static_cast<size_t>(n);
    }
    return true;
}

// Reads more bytes into c.buf; false at end of stream or on error.
bool fill(Conn& c) {
    size_t len = c.buf.size();
    c.buf.resize(len + kReadChunk);
    ssize_t n;
    do {
        n = recv(c.fd, &c.buf[len], kReadChunk, 0);
    } while (n < 0 && errno == EINTR);
    c.buf.resize(len + (n > 0 ? static_cast<size_t>(n) : 0));
    return n > 0;
}

enum class Next { Close, Yield };

Next serve(Conn& c) {
    std::string out;
    routes::Reply reply;
    bool served = false;
    bool sent_continue = false;
    for (;;) {
        Head h;
        int bad = 0;
        Parse p = parse_head(c.buf, h, bad);
        if (p == Parse::Partial) {
            if (served && !g_sticky && g_queue.waiting() > 0) return Next::Yield;
            if (!fill(c)) return Next::Close;
            continue;
        }
        bool keep_alive = false;
        size_t used = 0;
        if (p == Parse::Bad) {
            reply.status = bad;
        } else if (h.chunked) {
            reply.status = 501;
        } else if (h.content_length > routes::kMaxBody) {
            reply.status = 413;
        } else {
            size_t total = h.head_len + h.content_length;
            if (c.buf.size() < total) {
                if (h.expect_continue && !h.http10 && !sent_continue) {
                    sent_continue = true;
                    if (!write_all(c.fd, "HTTP/1.1 100 Continue\r\n\r\n")) return Next::Close;
                }
                if (!fill(c)) return Next::Close;
                continue;
            }
            std::string_view body(c.buf.data() + h.head_len, h.content_length);
            routes::handle(h.method, h.target, body, reply);
            keep_alive = h.keep_alive;
            used = total;
        }
        if (used == 0) {  // an error that ends the connection
            reply.content_type = "text/plain";
            reply.body = routes::reason(reply.status);
            reply.body += '\n';
        }
        out.clear();
        append_response(out, reply, keep_alive, h.http10);
        if (!write_all(c.fd, out) || !keep_alive) return Next::Close;
        c.buf.erase(0, used);
        served = true;
        sent_continue = false;
    }
}

void worker() {
    for (;;) {
        Conn* c = g_queue.pop();
        if (serve(*c) == Next::Yield) {
            g_queue.push(c);
        } else {
            close(c->fd);
            delete c;
        }
    }
}

void on_term(int) { std::_Exit(0); }

}  // namespace

int main(int argc, char** argv) {
    if (argc != 2 && argc != 3) {
        std::fprintf(stderr, "usage: %s PORT [ADDR]\n", kName);
        return 2;
    }
    // ADDR: 127.0.0.1, or the server host's address in the lab's netns host mode
    const char* host = argc == 3 ? argv[2] : "127.0.0.1";
    char* end = nullptr;
    long port = std::strtol(argv[1], &end, 10);
    if (*argv[1] == '\0' || *end != '\0' || port < 0 || port > 65535) {
        std::fprintf(stderr, "%s: bad port %s\n", kName, argv[1]);
        return 2;
    }
    const char* sticky = std::getenv("LANG_STD_STICKY");
    g_sticky = sticky && std::string_view(sticky) == "1";
    std::signal(SIGPIPE, SIG_IGN);
    std::signal(SIGTERM, on_term);

    int lfd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    int one = 1;
    setsockopt(lfd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_port = htons(static_cast<uint16_t>(port));
    if (inet_pton(AF_INET, host, &addr.sin_addr) != 1) {
        std::fprintf(stderr, "%s: bad ADDR %s (an IPv4 address)\n", kName, host);
        return 2;
    }
    if (bind(lfd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) < 0 || listen(lfd, 1024) < 0) {
        std::fprintf(stderr, "%s: %s\n", kName, std::strerror(errno));
        return 1;
    }
    socklen_t alen = sizeof addr;
    getsockname(lfd, reinterpret_cast<sockaddr*>(&addr), &alen);

    std::vector<std::thread> pool;
    for (int k = 0; k < kWorkers; ++k) pool.emplace_back(worker);
    std::fprintf(stderr, "%s: listening on %s:%d\n", kName, host, ntohs(addr.sin_port));

    for (;;) {
        int fd = accept4(lfd, nullptr, nullptr, SOCK_CLOEXEC);
        if (fd < 0) {
            if (errno != EINTR && errno != ECONNABORTED)
                std::fprintf(stderr, "%s: accept: %s\n", kName, std::strerror(errno));
            if (errno == EMFILE || errno == ENFILE) std::this_thread::sleep_for(std::chrono::milliseconds(10));
            continue;
        }
        setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
        timeval idle{kIdleTimeoutSeconds, 0};
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &idle, sizeof idle);
        g_queue.push(new Conn{fd, std::string()});
    }
}
