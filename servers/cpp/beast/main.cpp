// lang_cpp_beast: the shoot-out's C++ "production" server: Boost.Beast on
// Boost.Asio (Debian's Boost 1.74, header-only). One io_context run by one
// thread per CPU in the process's affinity mask (sched_getaffinity), a strand
// per connection, asynchronous reads and writes, HTTP/1.1 keep-alive.
// Routing and JSON are the code lang_cpp_std uses (common/): Boost.JSON is
// not packaged for Boost 1.74 in Debian 12.
//
//     lang_cpp_beast PORT

#include <sched.h>

#include <boost/asio/bind_executor.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/signal_set.hpp>
#include <boost/asio/strand.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "../common/routes.hpp"

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
using tcp = asio::ip::tcp;

namespace {

constexpr const char* kName = "lang_cpp_beast";

int affinity_cpus() {
    cpu_set_t set;
    CPU_ZERO(&set);
    if (sched_getaffinity(0, sizeof set, &set) != 0) return 1;
    int n = CPU_COUNT(&set);
    return n > 0 ? n : 1;
}

std::string_view sv(beast::string_view s) { return std::string_view(s.data(), s.size()); }

class Session : public std::enable_shared_from_this<Session> {
public:
    explicit Session(tcp::socket socket) : stream_(std::move(socket)) {}

    void start() {
        // Run the first read on the connection's strand.
        asio::dispatch(stream_.get_executor(),
                       beast::bind_front_handler(&Session::read, shared_from_this()));
    }

private:
    beast::tcp_stream stream_;
    beast::flat_buffer buffer_;
    std::unique_ptr<http::request_parser<http::string_body>> parser_;
    http::response<http::string_body> res_;
    std::unique_ptr<http::response<http::empty_body>> continue_;
    routes::Reply reply_;

    void read() {
        parser_ = std::make_unique<http::request_parser<http::string_body>>();
        parser_->body_limit(routes::kMaxBody);
        parser_->header_limit(16 * 1024);
        // The head first, so that "Expect: 100-continue" can be answered
        // before the body is read.
        http::async_read_header(stream_, buffer_, *parser_,
                                beast::bind_front_handler(&Session::on_header, shared_from_this()));
    }

    void on_header(beast::error_code ec, std::size_t n) {
        if (ec) return on_read(ec, n);
        auto& req = parser_->get();
        if (!parser_->is_done() && req.version() == 11 &&
            beast::iequals(req[http::field::expect], "100-continue")) {
            continue_ = std::make_unique<http::response<http::empty_body>>(http::status::continue_, 11);
            http::async_write(stream_, *continue_,
                              beast::bind_front_handler(&Session::on_continue, shared_from_this()));
            return;
        }
        read_body();
    }

    void on_continue(beast::error_code ec, std::size_t) {
        if (ec) return close();
        read_body();
    }

    void read_body() {
        http::async_read(stream_, buffer_, *parser_,
                         beast::bind_front_handler(&Session::on_read, shared_from_this()));
    }

    void on_read(beast::error_code ec, std::size_t) {
        if (ec == http::error::end_of_stream || ec == asio::error::eof ||
            ec == asio::error::connection_reset) {
            return close();
        }
        if (ec) {
            int status = ec == http::error::body_limit ? 413
                       : ec == http::error::header_limit ? 431 : 400;
            return send_error(status);
        }
        auto& req = parser_->get();
        routes::handle(sv(req.method_string()), sv(req.target()), req.body(), reply_);
        res_ = {};
        res_.version(11);
        res_.result(static_cast<http::status>(reply_.status));
        res_.set(http::field::content_type, reply_.content_type);
        res_.body() = std::move(reply_.body);
        res_.keep_alive(req.keep_alive());
        res_.prepare_payload();
        write();
    }

    void send_error(int status) {
        res_ = {};
        res_.version(11);
        res_.result(static_cast<http::status>(status));
        res_.set(http::field::content_type, "text/plain");
        res_.body() = std::string(routes::reason(status)) + "\n";
        res_.keep_alive(false);
        res_.prepare_payload();
        write();
    }

    void write() {
        http::async_write(stream_, res_,
                          beast::bind_front_handler(&Session::on_write, shared_from_this()));
    }

    void on_write(beast::error_code ec, std::size_t) {
        if (ec || !res_.keep_alive()) return close();
        read();
    }

    void close() {
        beast::error_code ignored;
        stream_.socket().shutdown(tcp::socket::shutdown_send, ignored);
        stream_.socket().close(ignored);
    }
};

class Listener : public std::enable_shared_from_this<Listener> {
public:
    Listener(asio::io_context& ioc, tcp::endpoint ep)
        : ioc_(ioc), acceptor_(asio::make_strand(ioc)) {
        acceptor_.open(ep.protocol());
        acceptor_.set_option(asio::socket_base::reuse_address(true));
        acceptor_.bind(ep);
        acceptor_.listen(1024);
    }

    tcp::endpoint local_endpoint() const { return acceptor_.local_endpoint(); }

    void accept() {
        // Each connection gets its own strand.
        acceptor_.async_accept(asio::make_strand(ioc_),
                               beast::bind_front_handler(&Listener::on_accept, shared_from_this()));
    }

private:
    asio::io_context& ioc_;
    tcp::acceptor acceptor_;

    void on_accept(beast::error_code ec, tcp::socket socket) {
        if (!ec) {
            socket.set_option(tcp::no_delay(true), ec);
            std::make_shared<Session>(std::move(socket))->start();
        } else if (ec == asio::error::operation_aborted) {
            return;
        }
        accept();
    }
};

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
    const int threads = affinity_cpus();
    asio::io_context ioc(threads);
    std::shared_ptr<Listener> listener;
    try {
        listener = std::make_shared<Listener>(
            ioc, tcp::endpoint(asio::ip::make_address(host), static_cast<unsigned short>(port)));
    } catch (const std::exception& e) {
        std::fprintf(stderr, "%s: %s\n", kName, e.what());
        return 1;
    }
    listener->accept();
    asio::signal_set signals(ioc, SIGTERM, SIGINT);
    signals.async_wait([&ioc](beast::error_code, int) { ioc.stop(); });

    std::fprintf(stderr, "%s: listening on %s:%u\n", kName, host, listener->local_endpoint().port());
    std::vector<std::thread> pool;
    for (int k = 1; k < threads; ++k) pool.emplace_back([&ioc] { ioc.run(); });
    ioc.run();
    for (auto& t : pool) t.join();
    return 0;
}
