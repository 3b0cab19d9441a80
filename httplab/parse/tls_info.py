"""The negotiated TLS parameters of the https suite (seed 002): parsers for `openssl s_client`
output (r<rep>.tls.txt), the TLS lines of h2load's stdout, and the run's certificate.txt; and the
per-point check that makes a run failed when the negotiated application protocol (ALPN) is not the
scenario's protocol.

r<rep>.tls.txt holds the descriptive lines (scripts/lib.sh keeps only those: no certificate dump,
session ids or secrets) of
    openssl s_client -connect 127.0.0.1:PORT -alpn <h2|http/1.1> </dev/null
taken right before the measured run. Both of s_client's layouts are read (tests/fixtures/tls/ has
real samples of each, OpenSSL 3.0.22):

* `-brief`: `CONNECTION ESTABLISHED`, `Protocol version: TLSv1.3`, `Ciphersuite: TLS_AES_128_GCM_SHA256`,
  `Peer certificate: CN = localhost`, `Server Temp Key: X25519, 253 bits`. OpenSSL 3.0's brief
  output does NOT print the ALPN result at all.
* the full layout: `New, TLSv1.3, Cipher is TLS_AES_128_GCM_SHA256`, `ALPN protocol: h2` or
  `No ALPN negotiated`, and the `SSL-Session:` block (`Protocol  : TLSv1.3`, `Cipher    : ...`).

When s_client said nothing about ALPN (brief layout), the h2load runs of the point supply it: h2load
prints `Application protocol: h2` for the connection it actually measured (and `TLS Protocol:`,
`Cipher:`, `Server Temp Key:` over TLS). wrk prints nothing about TLS, so an HTTPS/1.1 point with a
brief tls.txt has alpn None, which the rule accepts (http/1.1 or none for h1).

Columns added to the runs frame for TLS points: tls_version, tls_cipher, alpn (None when absent),
alpn_source ("s_client", "h2load" or None).
"""
from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .errors import RawFormatError
from .jsonio import read_utf8
from .layout import TLS_TXT, RepFiles, certificate_text

TLS_TEXT_COLUMNS: tuple[str, ...] = ("tls_version", "tls_cipher", "alpn", "alpn_source")

_VERSION_RE = re.compile(r"(?:TLSv1(?:\.[0-3])?|SSLv3|DTLSv1(?:\.2)?)")
_TOKEN_RE = re.compile(r"[A-Za-z0-9_./+:-]+")
_ALPN_RE = re.compile(r"[\x21-\x7e]{1,255}")  # an ALPN id: printable, no spaces
# s_client lines that report a failure (connect error, handshake alert, OpenSSL error queue)
_ERROR_RES = (re.compile(r"^connect:errno=\d+"), re.compile(r"^[0-9A-F]+:error:[0-9A-F]+:"),
              re.compile(r"^\S*:error:"))


@dataclass(frozen=True)
class TlsInfo:
    """What one TLS handshake report says. version/cipher/alpn are None when not printed;
    alpn_stated says whether the report said anything about ALPN (a protocol or "No ALPN
    negotiated"), so alpn None + alpn_stated True means "the server chose none"."""
    path: str
    source: str  # "s_client" or "h2load"
    connected: bool
    version: str | None = None
    cipher: str | None = None
    alpn: str | None = None
    alpn_stated: bool = False
    temp_key: str | None = None
    peer: str | None = None
    error: str | None = None  # first error line (s_client), when the handshake failed


def _set(fields: dict[str, Any], key: str, value: str, path: str, line: int) -> None:
    """Store a value; the same field printed twice with different values is bad input."""
    old = fields.get(key)
    if old is not None and old != value:
        raise RawFormatError(path, f"{key} {value!r} contradicts {old!r} printed earlier", line=line)
    fields[key] = value


def _checked(value: str, pattern: re.Pattern, what: str, path: str, line: int) -> str:
    value = value.strip()
    if not pattern.fullmatch(value):
        raise RawFormatError(path, f"cannot read {what} {value!r}", line=line)
    return value


def parse_s_client(text: str, path: str | Path = "<s_client output>") -> TlsInfo:
    """Parse `openssl s_client` output (brief or full layout; see the module docstring).

    RawFormatError naming the file and line for: a malformed protocol version, cipher or ALPN
    value; one field printed twice with different values; a report with neither a connection
    nor an error line (empty or foreign text)."""
    path = str(path)
    fields: dict[str, Any] = {}
    connected = False
    alpn_stated = False
    error = None
    for i, raw in enumerate(text.splitlines(), start=1):
        ln = raw.strip()
        if not ln:
            continue
        if ln == "CONNECTION ESTABLISHED" or ln.startswith("CONNECTED("):
            connected = True
        elif ln.startswith("Protocol version:"):
            _set(fields, "version", _checked(ln.partition(":")[2], _VERSION_RE, "protocol version", path, i),
                 path, i)
        elif ln.startswith("Ciphersuite:"):
            _set(fields, "cipher", _checked(ln.partition(":")[2], _TOKEN_RE, "cipher suite", path, i), path, i)
        elif ln.startswith("New, "):
            # full layout: "New, TLSv1.3, Cipher is TLS_AES_128_GCM_SHA256" / "New, (NONE), Cipher is (NONE)"
            m = re.fullmatch(r"New, (\S+), Cipher is (\S+)", ln)
            if not m:
                raise RawFormatError(path, f"cannot read the session line {ln!r}", line=i)
            if m.group(1) != "(NONE)":
                _set(fields, "version", _checked(m.group(1), _VERSION_RE, "protocol version", path, i), path, i)
            if m.group(2) != "(NONE)":
                _set(fields, "cipher", _checked(m.group(2), _TOKEN_RE, "cipher suite", path, i), path, i)
        elif ln.startswith("Protocol  :") or ln.startswith("Cipher    :"):
            key = "version" if ln.startswith("Protocol") else "cipher"
            pat = _VERSION_RE if key == "version" else _TOKEN_RE
            value = ln.partition(":")[2].strip()
            if value and value != "0000":  # "Cipher    : 0000" = no session
                _set(fields, key, _checked(value, pat, "protocol version" if key == "version" else "cipher suite",
                                           path, i), path, i)
        elif ln.startswith("ALPN protocol:"):
            _set(fields, "alpn", _checked(ln.partition(":")[2], _ALPN_RE, "ALPN protocol", path, i), path, i)
            alpn_stated = True
        elif ln == "No ALPN negotiated":
            if fields.get("alpn") is not None:
                raise RawFormatError(path, f"'No ALPN negotiated' contradicts ALPN {fields['alpn']!r} "
                                           "printed earlier", line=i)
            alpn_stated = True
        elif ln.startswith("Server Temp Key:"):
            fields.setdefault("temp_key", ln.partition(":")[2].strip())
        elif ln.startswith("Peer certificate:"):
            fields.setdefault("peer", ln.partition(":")[2].strip())
        elif error is None and any(r.match(ln) for r in _ERROR_RES):
            error = ln[:300]
    has_session = fields.get("version") is not None
    if not (connected or has_session or error):
        first = next((n for n, ln in enumerate(text.splitlines(), start=1) if ln.strip()), None)
        raise RawFormatError(path, "not an openssl s_client report: no 'CONNECTION ESTABLISHED', "
                                   "'CONNECTED(', protocol line or error line", line=first)
    # "CONNECTION ESTABLISHED" alone (no protocol line) is not a usable handshake report
    return TlsInfo(path=path, source="s_client", connected=has_session,
                   version=fields.get("version"), cipher=fields.get("cipher"), alpn=fields.get("alpn"),
                   alpn_stated=alpn_stated, temp_key=fields.get("temp_key"), peer=fields.get("peer"),
                   error=error)


def read_s_client(path: str | Path) -> TlsInfo:
    p = Path(path)
    text = read_utf8(p)
    return parse_s_client(text, p)


def parse_h2load_tls(text: str, path: str | Path = "<h2load stdout>") -> TlsInfo | None:
    """The TLS lines h2load prints before its report (`TLS Protocol:`, `Cipher:`, `Server Temp
    Key:`, `Application protocol:`); None when there is no `TLS Protocol:` line (cleartext run or
    no connection). A malformed value raises RawFormatError naming file and line."""
    path = str(path)
    fields: dict[str, Any] = {}
    for i, raw in enumerate(text.splitlines(), start=1):
        ln = raw.strip()
        if ln.startswith("finished in"):
            break
        if ln.startswith("TLS Protocol:"):
            _set(fields, "version", _checked(ln.partition(":")[2], _VERSION_RE, "TLS protocol", path, i), path, i)
        elif ln.startswith("Cipher:"):
            _set(fields, "cipher", _checked(ln.partition(":")[2], _TOKEN_RE, "cipher", path, i), path, i)
        elif ln.startswith("Server Temp Key:"):
            fields.setdefault("temp_key", ln.partition(":")[2].strip())
        elif ln.startswith("Application protocol:"):
            _set(fields, "alpn", _checked(ln.partition(":")[2], _ALPN_RE, "application protocol", path, i),
                 path, i)
    if "version" not in fields:
        return None
    return TlsInfo(path=path, source="h2load", connected=True, version=fields["version"],
                   cipher=fields.get("cipher"), alpn=fields.get("alpn"), alpn_stated="alpn" in fields,
                   temp_key=fields.get("temp_key"))


# ---------------------------------------------------------------- certificate.txt
@dataclass(frozen=True)
class CertInfo:
    path: str
    subject: str | None
    issuer: str | None
    not_before: str | None
    not_after: str | None
    fingerprint_alg: str | None
    fingerprint: str | None
    key: str | None  # the "key: RSA 2048, self-signed, ..." line
    san: str | None = None  # "-ext subjectAltName": "DNS:localhost, IP Address:127.0.0.1"


_FPR_RE = re.compile(r"(\S+) Fingerprint=([0-9A-Fa-f:]+)")


def parse_certificate(text: str, path: str | Path = "<certificate.txt>") -> CertInfo:
    """raw/<run>/https/certificate.txt: the output of `openssl x509 -noout -subject -dates
    -fingerprint [-sha256] [-ext subjectAltName]` (`subject=...`, `notBefore=...`, `notAfter=...`,
    `<alg> Fingerprint=AA:BB:...`, optionally other `name=value` lines; an `X509v3 <extension>:`
    header with indented value lines, or `No extensions in certificate`) and a line `key: ...`.
    Any other non-blank line, or a file without a subject, raises RawFormatError naming file and
    line."""
    path = str(path)
    f: dict[str, str] = {}
    ext: str | None = None  # the X509v3 extension whose indented value lines follow
    for i, raw in enumerate(text.splitlines(), start=1):
        ln = raw.strip()
        if not ln:
            continue
        if ext is not None and raw[:1].isspace():
            f[ext] = (f[ext] + " " + ln).strip()
            continue
        ext = None
        if ln.startswith("X509v3 ") and ln.endswith(":"):
            ext = ln[len("X509v3 "):-1].strip()
            f.setdefault(ext, "")
        elif ln == "No extensions in certificate":
            pass
        elif (m := _FPR_RE.fullmatch(ln)):
            f["fingerprint_alg"], f["fingerprint"] = m.group(1).upper(), m.group(2).upper()
        elif ln.lower().startswith("key:"):
            f["key"] = ln.partition(":")[2].strip()
        elif re.match(r"^[A-Za-z][A-Za-z0-9 ]*=", ln):
            name, _, value = ln.partition("=")
            f[name.strip()] = value.strip()
        else:
            raise RawFormatError(path, f"unexpected line {ln[:80]!r} (expected name=value, "
                                       "'<alg> Fingerprint=...' or 'key: ...')", line=i)
    if "subject" not in f:
        raise RawFormatError(path, "no 'subject=' line", line=None)
    return CertInfo(path, f.get("subject"), f.get("issuer"), f.get("notBefore"), f.get("notAfter"),
                    f.get("fingerprint_alg"), f.get("fingerprint"), f.get("key"),
                    f.get("Subject Alternative Name") or None)


def read_certificate(run_dir: str | Path, part: str) -> CertInfo | None:
    """raw/<run>/<part>/certificate.txt (a TLS part's) parsed, or None when the file is absent."""
    found = certificate_text(run_dir, part)
    return None if found is None else parse_certificate(*found)


# ---------------------------------------------------------------- the per-point rule
EXPECTED_ALPN = {"h2": ("h2",), "h1": ("http/1.1", None), "h3": ("h3",)}


def alpn_problem(protocol: str, alpn: str | None) -> str | None:
    """Why the negotiated ALPN does not fit the scenario's protocol (None = fits): h2 needs "h2", h3 "h3";
    h1 accepts "http/1.1" or no ALPN at all (a client that offers none gets HTTP/1.1)."""
    allowed = EXPECTED_ALPN.get(protocol)
    if allowed is None:
        return None
    if alpn in allowed:
        return None
    want = " or ".join("none" if a is None else a for a in allowed)
    return f"TLS: negotiated ALPN {alpn or 'none'}, expected {want} for this {protocol} scenario"


def point_tls(scenario_dir: Path, rep: int, scen: Mapping[str, Any],
              app_text: Mapping[str, str | None] | None = None) -> tuple[dict[str, str | None], list[str]]:
    """tls_columns of the point's r<rep>.tls.txt (read here)."""
    files = RepFiles.of_dir(scenario_dir, rep)
    return tls_columns(files.text(TLS_TXT), files.where(TLS_TXT), files.name(TLS_TXT), scen, app_text)


def tls_columns(s_client_text: str | None, where: str, name: str, scen: Mapping[str, Any],
                app_text: Mapping[str, str | None] | None = None) -> tuple[dict[str, str | None], list[str]]:
    """(runs-frame columns, fail reasons) of one TLS point.

    Sources: r<rep>.tls.txt's text (s_client; None when the file, named `name`, is missing, and
    `where` its path for errors) first; for what it leaves out (ALPN in the brief layout;
    everything when the file is missing), the TLS lines of the load tool's own output
    (`app_text`: LoadResult.text of an h2load point). Fail reasons: tls.txt missing, s_client made
    no TLS connection, or an ALPN that does not fit the scenario's protocol."""
    reasons: list[str] = []
    s_info: TlsInfo | None = None
    if s_client_text is not None:
        s_info = parse_s_client(s_client_text, where)
        if not s_info.connected:
            why = f" ({s_info.error})" if s_info.error else ""
            reasons.append(f"TLS: s_client made no TLS connection{why}")
    elif scen.get("protocol") != "h3":
        # (an HTTP/3 point has none: TLS runs inside QUIC, on UDP, where s_client cannot go; the
        # load tool's own handshakes say what was agreed)
        reasons.append(f"TLS: {name} missing")
    app = app_text or {}
    version = (s_info.version if s_info else None) or app.get("tls_version")
    cipher = (s_info.cipher if s_info else None) or app.get("tls_cipher")
    if s_info is not None and s_info.alpn_stated:
        alpn, source = s_info.alpn, "s_client"
    elif app.get("alpn") is not None:
        alpn, source = app.get("alpn"), str(app.get("alpn_source") or "load tool")
    else:
        alpn, source = None, None
    if s_info is None or s_info.connected:
        problem = alpn_problem(str(scen.get("protocol", "")), alpn)
        if problem:
            reasons.append(problem + (f" (from {source})" if source else ""))
    cols = {"tls_version": version, "tls_cipher": cipher, "alpn": alpn, "alpn_source": source}
    return cols, reasons
