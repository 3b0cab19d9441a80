//! A small JSON parser and serializer (RFC 8259), standard library only.
//!
//! Numbers are validated and kept as the text that was sent, so they come back
//! out exactly as they went in (no float round trip). Strings are decoded to
//! UTF-8; a lone surrogate escape becomes U+FFFD. In an object a repeated key
//! keeps its first position and its last value, as most JSON libraries do.

use std::collections::HashMap;

pub enum Json {
    Null,
    Bool(bool),
    /// A number, as written (already checked against the JSON grammar).
    Num(String),
    Str(String),
    Arr(Vec<Json>),
    Obj(Vec<(String, Json)>),
}

/// Nesting deeper than this is refused (keeps the recursion bounded).
const MAX_DEPTH: usize = 512;
/// Objects with more keys than this look up duplicates in a hash map.
const LINEAR_KEYS: usize = 16;

pub fn parse(input: &[u8]) -> Option<Json> {
    // JSON text is UTF-8; checking once up front lets the string scanner copy
    // runs of bytes without re-validating them.
    let text = std::str::from_utf8(input).ok()?;
    let mut p = Parser {
        s: text.as_bytes(),
        i: 0,
        depth: 0,
    };
    p.ws();
    let v = p.value()?;
    p.ws();
    if p.i != p.s.len() {
        return None;
    }
    Some(v)
}

struct Parser<'a> {
    s: &'a [u8],
    i: usize,
    depth: usize,
}

impl<'a> Parser<'a> {
    fn peek(&self) -> Option<u8> {
        self.s.get(self.i).copied()
    }

    fn ws(&mut self) {
        while let Some(b' ' | b'\t' | b'\n' | b'\r') = self.peek() {
            self.i += 1;
        }
    }

    fn lit(&mut self, word: &[u8], v: Json) -> Option<Json> {
        if self.s[self.i..].starts_with(word) {
            self.i += word.len();
            Some(v)
        } else {
            None
        }
    }

    fn value(&mut self) -> Option<Json> {
        match self.peek()? {
            b'{' => self.object(),
            b'[' => self.array(),
            b'"' => self.string().map(Json::Str),
            b't' => self.lit(b"true", Json::Bool(true)),
            b'f' => self.lit(b"false", Json::Bool(false)),
            b'n' => self.lit(b"null", Json::Null),
            b'-' | b'0'..=b'9' => self.number(),
            _ => None,
        }
    }

    fn enter(&mut self) -> Option<()> {
        self.depth += 1;
        self.i += 1; // the opening bracket
        if self.depth > MAX_DEPTH {
            None
        } else {
            Some(())
        }
    }

    fn array(&mut self) -> Option<Json> {
        self.enter()?;
        let mut items = Vec::new();
        self.ws();
        if self.peek() == Some(b']') {
            self.i += 1;
            self.depth -= 1;
            return Some(Json::Arr(items));
        }
        loop {
            self.ws();
            items.push(self.value()?);
            self.ws();
            match self.peek()? {
                b',' => self.i += 1,
                b']' => {
                    self.i += 1;
                    self.depth -= 1;
                    return Some(Json::Arr(items));
                }
                _ => return None,
            }
        }
    }

    fn object(&mut self) -> Option<Json> {
        self.enter()?;
        let mut obj = ObjBuilder::new();
        self.ws();
        if self.peek() == Some(b'}') {
            self.i += 1;
            self.depth -= 1;
            return Some(Json::Obj(obj.finish()));
        }
        loop {
            self.ws();
            if self.peek()? != b'"' {
                return None;
            }
            let key = self.string()?;
            self.ws();
            if self.peek()? != b':' {
                return None;
            }
            self.i += 1;
            self.ws();
            let v = self.value()?;
            obj.insert(key, v);
            self.ws();
            match self.peek()? {
                b',' => self.i += 1,
                b'}' => {
                    self.i += 1;
                    self.depth -= 1;
                    return Some(Json::Obj(obj.finish()));
                }
                _ => return None,
            }
        }
    }

    fn digits(&mut self) -> usize {
        let start = self.i;
        while let Some(b'0'..=b'9') = self.peek() {
            self.i += 1;
        }
        self.i - start
    }

    fn number(&mut self) -> Option<Json> {
        let start = self.i;
        if self.peek() == Some(b'-') {
            self.i += 1;
        }
        match self.peek()? {
            b'0' => self.i += 1,
            b'1'..=b'9' => {
                self.digits();
            }
            _ => return None,
        }
        if self.peek() == Some(b'.') {
            self.i += 1;
            if self.digits() == 0 {
                return None;
            }
        }
        if let Some(b'e' | b'E') = self.peek() {
            self.i += 1;
            if let Some(b'+' | b'-') = self.peek() {
                self.i += 1;
            }
            if self.digits() == 0 {
                return None;
            }
        }
        // The input was checked to be UTF-8 and these bytes are ASCII.
        let text = std::str::from_utf8(&self.s[start..self.i]).ok()?;
        Some(Json::Num(text.to_owned()))
    }

    fn hex4(&mut self) -> Option<u32> {
        let h = self.s.get(self.i..self.i + 4)?;
        let mut v = 0u32;
        for &c in h {
            let d = (c as char).to_digit(16)?;
            v = v * 16 + d;
        }
        self.i += 4;
        Some(v)
    }

    /// A string starting at the opening quote.
    fn string(&mut self) -> Option<String> {
        self.i += 1;
        let mut out = String::new();
        loop {
            // Copy the run of plain bytes up to the next quote, backslash or
            // control character in one go.
            let start = self.i;
            while let Some(c) = self.peek() {
                if c == b'"' || c == b'\\' || c < 0x20 {
                    break;
                }
                self.i += 1;
            }
            if self.i > start {
                // Both ends sit on ASCII bytes, so this is whole characters.
                out.push_str(std::str::from_utf8(&self.s[start..self.i]).ok()?);
            }
            match self.peek()? {
                b'"' => {
                    self.i += 1;
                    return Some(out);
                }
                b'\\' => {
                    self.i += 1;
                    let e = self.peek()?;
                    self.i += 1;
                    match e {
                        b'"' => out.push('"'),
                        b'\\' => out.push('\\'),
                        b'/' => out.push('/'),
                        b'b' => out.push('\u{8}'),
                        b'f' => out.push('\u{c}'),
                        b'n' => out.push('\n'),
                        b'r' => out.push('\r'),
                        b't' => out.push('\t'),
                        b'u' => out.push(self.unicode_escape()?),
                        _ => return None,
                    }
                }
                _ => return None, // raw control character
            }
        }
    }

    /// The code point of a \uXXXX escape (the "\u" already consumed),
    /// joining a surrogate pair when the low half follows.
    fn unicode_escape(&mut self) -> Option<char> {
        let hi = self.hex4()?;
        if (0xD800..0xDC00).contains(&hi) {
            if self.s[self.i..].starts_with(b"\\u") {
                let save = self.i;
                self.i += 2;
                let lo = self.hex4()?;
                if (0xDC00..0xE000).contains(&lo) {
                    let cp = 0x10000 + ((hi - 0xD800) << 10) + (lo - 0xDC00);
                    return char::from_u32(cp);
                }
                self.i = save; // not a low half: decode it on its own
            }
            return Some('\u{FFFD}');
        }
        Some(char::from_u32(hi).unwrap_or('\u{FFFD}'))
    }
}

/// Collects an object's members; a repeated key replaces the earlier value.
pub struct ObjBuilder {
    members: Vec<(String, Json)>,
    index: Option<HashMap<String, usize>>,
}

impl ObjBuilder {
    pub fn new() -> Self {
        ObjBuilder {
            members: Vec::new(),
            index: None,
        }
    }

    pub fn insert(&mut self, key: String, v: Json) {
        if let Some(index) = &mut self.index {
            if let Some(&at) = index.get(&key) {
                self.members[at].1 = v;
            } else {
                index.insert(key.clone(), self.members.len());
                self.members.push((key, v));
            }
            return;
        }
        if let Some(m) = self.members.iter_mut().find(|m| m.0 == key) {
            m.1 = v;
            return;
        }
        self.members.push((key, v));
        if self.members.len() > LINEAR_KEYS {
            let index = self
                .members
                .iter()
                .enumerate()
                .map(|(at, m)| (m.0.clone(), at))
                .collect();
            self.index = Some(index);
        }
    }

    pub fn finish(self) -> Vec<(String, Json)> {
        self.members
    }
}

/// Appends `s` as a JSON string literal.
pub fn write_str(out: &mut Vec<u8>, s: &str) {
    out.push(b'"');
    let b = s.as_bytes();
    let mut start = 0;
    for (i, &c) in b.iter().enumerate() {
        let esc: &[u8] = match c {
            b'"' => b"\\\"",
            b'\\' => b"\\\\",
            b'\n' => b"\\n",
            b'\r' => b"\\r",
            b'\t' => b"\\t",
            0x08 => b"\\b",
            0x0c => b"\\f",
            0..=0x1f => b"",
            _ => continue,
        };
        out.extend_from_slice(&b[start..i]);
        if esc.is_empty() {
            const HEX: &[u8; 16] = b"0123456789abcdef";
            out.extend_from_slice(b"\\u00");
            out.push(HEX[(c >> 4) as usize]);
            out.push(HEX[(c & 15) as usize]);
        } else {
            out.extend_from_slice(esc);
        }
        start = i + 1;
    }
    out.extend_from_slice(&b[start..]);
    out.push(b'"');
}

/// Appends the compact serialization of `v`.
pub fn write(out: &mut Vec<u8>, v: &Json) {
    match v {
        Json::Null => out.extend_from_slice(b"null"),
        Json::Bool(true) => out.extend_from_slice(b"true"),
        Json::Bool(false) => out.extend_from_slice(b"false"),
        Json::Num(n) => out.extend_from_slice(n.as_bytes()),
        Json::Str(s) => write_str(out, s),
        Json::Arr(items) => {
            out.push(b'[');
            for (k, item) in items.iter().enumerate() {
                if k > 0 {
                    out.push(b',');
                }
                write(out, item);
            }
            out.push(b']');
        }
        Json::Obj(members) => {
            out.push(b'{');
            for (k, (key, item)) in members.iter().enumerate() {
                if k > 0 {
                    out.push(b',');
                }
                write_str(out, key);
                out.push(b':');
                write(out, item);
            }
            out.push(b'}');
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn round(s: &str) -> Option<String> {
        let v = parse(s.as_bytes())?;
        let mut out = Vec::new();
        write(&mut out, &v);
        Some(String::from_utf8(out).unwrap())
    }

    #[test]
    fn values() {
        assert_eq!(
            round(" {\"a\" : [1, -2.5e+3, true, null, \"x\"]} ").unwrap(),
            "{\"a\":[1,-2.5e+3,true,null,\"x\"]}"
        );
        assert_eq!(
            round("\"\\u00e9\\ud83d\\ude00\\n\\u0001\"").unwrap(),
            "\"\u{e9}\u{1F600}\\n\\u0001\""
        );
        assert_eq!(
            round("{\"k\":1,\"j\":2,\"k\":3}").unwrap(),
            "{\"k\":3,\"j\":2}"
        );
        assert_eq!(round("\"\\ud800x\"").unwrap(), "\"\u{FFFD}x\"");
    }

    #[test]
    fn rejects() {
        for bad in [
            "",
            "nope",
            "{",
            "[1,]",
            "{\"a\":1,}",
            "01",
            "1.",
            "-",
            "1e",
            "\"\t\"",
            "\"\\x\"",
            "[1] 2",
            "tru",
            "{1:2}",
        ] {
            assert!(parse(bad.as_bytes()).is_none(), "{bad:?}");
        }
        assert!(parse(&[b'"', 0xff, b'"']).is_none());
        let deep = "[".repeat(600) + &"]".repeat(600);
        assert!(parse(deep.as_bytes()).is_none());
    }

    #[test]
    fn many_keys() {
        let mut s = String::from("{");
        for k in 0..40 {
            s += &format!("\"k{}\":{},", k % 30, k);
        }
        s += "\"z\":0}";
        let out = round(&s).unwrap();
        assert!(out.starts_with("{\"k0\":30,"), "{out}");
        assert!(out.contains("\"k29\":29,"));
    }
}
