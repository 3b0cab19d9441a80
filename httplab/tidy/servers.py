"""Server ids -> display names, in one place. Extend SERVER_NAMES when a server is added."""
from __future__ import annotations

SERVER_NAMES: dict[str, str] = {
    "evloop": "C (evloop)",
    "go": "Go net/http",
    "nginx": "nginx",
    "h2o": "h2o",
    "floor": "floor",
    # the languages suite (seed 003): stdlib tier
    "lang_go_std": "Go net/http",
    "lang_rust_std": "Rust std::net (8-thread pool)",
    "lang_node_std": "Node.js http",
    "lang_cpp_std": "C++ std::thread (8 threads)",
    "lang_python_std": "Python http.server",
    # production tier
    "lang_go_fasthttp": "Go fasthttp",
    "lang_rust_axum": "Rust axum/tokio",
    "lang_node_fastify": "Node.js Fastify + cluster",
    "lang_python_uvicorn": "Python Starlette/uvicorn (uvloop, httptools)",
    "lang_cpp_beast": "C++ Boost.Beast/Asio",
}

# Names that differ in one suite's report (suite -> server -> name).
SUITE_SERVER_NAMES: dict[str, dict[str, str]] = {
    "languages": {"evloop": "C event loop (evloop)"},
}

# Language and tier of the languages suite's servers ("stdlib": the language's standard library
# only, as in seed 003; "production": the stack seed 003 suggests instead). evloop is the lab's
# answer to "C with epoll" and counts as stdlib tier (libc + epoll, no framework).
SERVER_LANGUAGES: dict[str, str] = {
    "lang_go_std": "Go", "lang_go_fasthttp": "Go",
    "lang_rust_std": "Rust", "lang_rust_axum": "Rust",
    "lang_node_std": "JavaScript", "lang_node_fastify": "JavaScript",
    "lang_cpp_std": "C++", "lang_cpp_beast": "C++",
    "lang_python_std": "Python", "lang_python_uvicorn": "Python",
    "evloop": "C",
}
SERVER_TIERS: dict[str, str] = {
    "lang_go_std": "stdlib", "lang_rust_std": "stdlib", "lang_node_std": "stdlib",
    "lang_cpp_std": "stdlib", "lang_python_std": "stdlib", "evloop": "stdlib",
    "lang_go_fasthttp": "production", "lang_rust_axum": "production", "lang_node_fastify": "production",
    "lang_python_uvicorn": "production", "lang_cpp_beast": "production",
}

# Short labels for table column headers ("C req/s", "Go req/s").
SHORT_NAMES: dict[str, str] = {
    "evloop": "C",
    "go": "Go",
    "nginx": "nginx",
    "h2o": "h2o",
    "floor": "floor",
    "lang_go_std": "Go std", "lang_rust_std": "Rust std", "lang_node_std": "Node std",
    "lang_cpp_std": "C++ std", "lang_python_std": "Python std",
    "lang_go_fasthttp": "fasthttp", "lang_rust_axum": "axum", "lang_node_fastify": "Fastify",
    "lang_python_uvicorn": "uvicorn", "lang_cpp_beast": "Beast",
}

# Servers that are reference points rather than contestants (DESIGN §6).
REFERENCE_SERVERS: tuple[str, ...] = ("nginx", "h2o", "floor")

# Display order; unknown ids sort after these, alphabetically.
SERVER_ORDER: tuple[str, ...] = ("evloop", "go", "nginx", "h2o", "floor",
                                 "lang_go_std", "lang_rust_std", "lang_node_std", "lang_cpp_std",
                                 "lang_python_std", "lang_go_fasthttp", "lang_rust_axum",
                                 "lang_node_fastify", "lang_cpp_beast", "lang_python_uvicorn")


AA_SUFFIX = "~aa"  # an A/A copy: a second instance of a server (scripts/lib.sh AA_SUFFIX)


def is_aa_copy(server: str) -> bool:
    return server.endswith(AA_SUFFIX)


def aa_of(server: str) -> str | None:
    """The server an A/A copy copies ("evloop~aa" -> "evloop"); None for an ordinary server."""
    return server.removesuffix(AA_SUFFIX) if is_aa_copy(server) else None


def display_name(server: str, suite: str | None = None) -> str:
    """Human name of a server id ("evloop" -> "C (evloop)"); unknown ids are returned as given.
    With a suite, that suite's own name when it has one (SUITE_SERVER_NAMES). An A/A copy is
    named after its original ("evloop~aa" -> "C (evloop), A/A copy")."""
    original = aa_of(server)
    if original is not None:
        return display_name(original, suite) + ", A/A copy"
    if suite is not None and server in SUITE_SERVER_NAMES.get(suite, {}):
        return SUITE_SERVER_NAMES[suite][server]
    return SERVER_NAMES.get(server, server)


def language(server: str) -> str | None:
    """Programming language of a languages-suite server (None for others)."""
    return SERVER_LANGUAGES.get(server)


def tier(server: str) -> str | None:
    """"stdlib" or "production" for a languages-suite server (None for others)."""
    return SERVER_TIERS.get(server)


def short_name(server: str) -> str:
    """Short label for column headers ("evloop" -> "C"; "evloop~aa" -> "C A/A")."""
    original = aa_of(server)
    if original is not None:
        return short_name(original) + " A/A"
    return SHORT_NAMES.get(server, server)


def sort_servers(servers: list[str] | tuple[str, ...] | set[str]) -> list[str]:
    """Servers in display order."""
    known = {s: i for i, s in enumerate(SERVER_ORDER)}
    # an A/A copy right after its original
    return sorted(set(servers), key=lambda s: (known.get(s.removesuffix(AA_SUFFIX), len(known)),
                                               is_aa_copy(s), s))
