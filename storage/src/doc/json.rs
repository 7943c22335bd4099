//! JSON text to the binary form in one pass without serde: the import's and the write path's
//! reader for well-formed documents.
//!
//! It takes only what it is sure of: text that is valid JSON and valid UTF-8 (checked as strings
//! are scanned), nested less than [`FAST_DEPTH`], whose numbers are finite doubles. Anything else (an error, a lone surrogate, deep nesting, a
//! number out of range) makes it give up, and serde_json reads the text instead, so every error,
//! its message and its position are serde_json's. What it accepts it encodes exactly as the
//! serde path does (`tests` checks the two against each other): numbers are correctly rounded
//! by both (`float_roundtrip`), `-0` stays `-0`, and a repeated key keeps its first position and
//! its last value. It writes the in-memory form straight away (keys by their names' numbers,
//! `super::names`), counting how much longer the portable form is.

use super::encode::{begin_container, end_container_counted, end_object, push_number, push_varint, Writer};
use super::names::push_memory_key;
use super::{key_print, tag, varint_len};

/// Containers nested deeper than this are left to serde_json (its recursion limit and
/// [`super::MAX_DEPTH`] decide); no item the service stores comes close.
pub(super) const FAST_DEPTH: usize = 64;

/// Encodes `text` into `w` (cleared by the caller); `None` when the text is left to serde_json
/// (`w` then holds partial output).
pub(super) fn encode(text: &[u8], w: &mut Writer) -> Option<()> {
    let mut r = Reader { b: text, i: 0, scratch: Vec::new() };
    r.skip_ws();
    r.value(w, 0)?;
    r.skip_ws();
    (r.i == r.b.len()).then_some(())
}

/// Where a string literal's bytes are.
enum Text {
    /// In the text, at this range (no escapes).
    Input(usize, usize),
    /// Decoded into the reader's scratch buffer.
    Scratch,
}

struct Reader<'a> {
    b: &'a [u8],
    i: usize,
    /// A string with escapes, decoded (allocated only for those).
    scratch: Vec<u8>,
}

impl Reader<'_> {
    #[inline]
    fn skip_ws(&mut self) {
        while let Some(&c) = self.b.get(self.i) {
            if c == b' ' || c == b'\n' || c == b'\r' || c == b'\t' {
                self.i += 1;
            } else {
                break;
            }
        }
    }

    #[inline]
    fn peek(&self) -> Option<u8> {
        self.b.get(self.i).copied()
    }

    /// Consumes `word` (after its first byte, already seen).
    fn literal(&mut self, word: &[u8]) -> Option<()> {
        let end = self.i.checked_add(word.len())?;
        (self.b.get(self.i..end)? == word).then(|| self.i = end)
    }

    fn value(&mut self, w: &mut Writer, depth: usize) -> Option<()> {
        match self.peek()? {
            b'{' => self.object(w, depth),
            b'[' => self.array(w, depth),
            b'"' => {
                let bytes = match self.string()? {
                    Text::Input(start, end) => &self.b[start..end],
                    Text::Scratch => &self.scratch[..],
                };
                let len = bytes.len();
                if len <= tag::SHORT_STRING_MAX {
                    w.buf.push(tag::SHORT_STRING + len as u8);
                } else {
                    w.buf.push(tag::STRING);
                    push_varint(&mut w.buf, len);
                }
                w.buf.extend_from_slice(bytes);
                Some(())
            }
            b't' => {
                self.literal(b"true")?;
                w.buf.push(tag::TRUE);
                Some(())
            }
            b'f' => {
                self.literal(b"false")?;
                w.buf.push(tag::FALSE);
                Some(())
            }
            b'n' => {
                self.literal(b"null")?;
                w.buf.push(tag::NULL);
                Some(())
            }
            b'-' | b'0'..=b'9' => {
                let n = self.number()?;
                push_number(&mut w.buf, n);
                Some(())
            }
            _ => None,
        }
    }

    fn array(&mut self, w: &mut Writer, depth: usize) -> Option<()> {
        if depth >= FAST_DEPTH {
            return None;
        }
        self.i += 1;
        let start = begin_container(&mut w.buf, tag::ARRAY);
        let extra = w.extra;
        let mut count = 0;
        let mut more = self.any_before(b']')?;
        while more {
            self.value(w, depth + 1)?;
            count += 1;
            more = self.more_before(b']')?;
        }
        end_container_counted(w, start, count, extra);
        Some(())
    }

    fn object(&mut self, w: &mut Writer, depth: usize) -> Option<()> {
        if depth >= FAST_DEPTH {
            return None;
        }
        self.i += 1;
        let start = begin_container(&mut w.buf, tag::OBJECT);
        let extra = w.extra;
        let base = w.entries.len();
        let prints_base = w.prints.len();
        let mut more = self.any_before(b'}')?;
        while more {
            if self.peek()? != b'"' {
                return None;
            }
            w.entries.push(w.buf.len());
            // The print reads a word from the text where the key starts.
            let (key, print) = match self.string()? {
                Text::Input(start, end) => (&self.b[start..end], key_print(&self.b[start..], end - start)),
                Text::Scratch => (&self.scratch[..], key_print(&self.scratch, self.scratch.len())),
            };
            w.prints.push(print);
            // Written in memory (a name's number where the table has one); the portable form's
            // extra bytes are counted.
            let portable = varint_len(key.len()) + key.len();
            w.extra += portable as isize - push_memory_key(&mut w.buf, key, print) as isize;
            self.skip_ws();
            if self.peek()? != b':' {
                return None;
            }
            self.i += 1;
            self.skip_ws();
            self.value(w, depth + 1)?;
            more = self.more_before(b'}')?;
        }
        let prints = &w.prints[prints_base..];
        // Equal keys have equal prints: most objects are cleared by comparing words.
        let may_repeat = prints.len() > 16 || (1..prints.len()).any(|i| prints[..i].contains(&prints[i]));
        w.prints.truncate(prints_base);
        end_object(w, start, base, may_repeat, extra);
        Some(())
    }

    /// After a container's opening bracket: whether an element comes before `close` (which is
    /// stepped over when none does).
    fn any_before(&mut self, close: u8) -> Option<bool> {
        self.skip_ws();
        if self.peek()? == close {
            self.i += 1;
            return Some(false);
        }
        Some(true)
    }

    /// After an element: `,` and more to come (`true`), or `close` and the end (`false`);
    /// `None` for anything else.
    fn more_before(&mut self, close: u8) -> Option<bool> {
        self.skip_ws();
        match self.peek()? {
            b',' => {
                self.i += 1;
                self.skip_ws();
                Some(true)
            }
            c if c == close => {
                self.i += 1;
                Some(false)
            }
            _ => None,
        }
    }

    /// Reads a string literal (at its opening quote): where its bytes are.
    fn string(&mut self) -> Option<Text> {
        self.i += 1;
        let start = self.i;
        loop {
            self.i = stop_at(self.b, self.i)?;
            match self.b[self.i] {
                b'"' => {
                    self.i += 1;
                    return Some(Text::Input(start, self.i - 1));
                }
                b'\\' => break,
                c if c >= 0x80 => self.utf8_char()?,
                // A control character, which serde_json rejects.
                _ => return None,
            }
        }
        self.scratch.clear();
        self.scratch.extend_from_slice(&self.b[start..self.i]);
        loop {
            match self.peek()? {
                b'"' => {
                    self.i += 1;
                    return Some(Text::Scratch);
                }
                b'\\' => {
                    self.i += 1;
                    let escaped = self.peek()?;
                    self.i += 1;
                    let plain = match escaped {
                        b'"' => b'"',
                        b'\\' => b'\\',
                        b'/' => b'/',
                        b'b' => 0x08,
                        b'f' => 0x0C,
                        b'n' => b'\n',
                        b'r' => b'\r',
                        b't' => b'\t',
                        b'u' => {
                            let c = self.unicode_escape()?;
                            let mut utf8 = [0u8; 4];
                            self.scratch.extend_from_slice(c.encode_utf8(&mut utf8).as_bytes());
                            continue;
                        }
                        _ => return None,
                    };
                    self.scratch.push(plain);
                }
                c if c >= 0x80 => {
                    let from = self.i;
                    self.utf8_char()?;
                    self.scratch.extend_from_slice(&self.b[from..self.i]);
                }
                c if c < 0x20 => return None,
                _ => {
                    let from = self.i;
                    self.i = stop_at(self.b, from)?;
                    self.scratch.extend_from_slice(&self.b[from..self.i]);
                }
            }
        }
    }

    /// Checks the UTF-8 character starting at the current byte (not ASCII) and steps over it.
    fn utf8_char(&mut self) -> Option<()> {
        let width = match self.b[self.i] {
            0xC2..=0xDF => 2,
            0xE0..=0xEF => 3,
            0xF0..=0xF4 => 4,
            _ => return None,
        };
        let end = self.i + width;
        // The standard check of the few bytes rejects overlong forms, surrogates and values
        // past U+10FFFF.
        std::str::from_utf8(self.b.get(self.i..end)?).ok()?;
        self.i = end;
        Some(())
    }

    /// The character of a `\u` escape (after the `u`), joining a surrogate pair; `None` for a
    /// lone surrogate (serde_json's error).
    fn unicode_escape(&mut self) -> Option<char> {
        let first = self.hex4()?;
        let code = match first {
            0xD800..=0xDBFF => {
                self.literal(b"\\u")?;
                let second = self.hex4()?;
                if !(0xDC00..=0xDFFF).contains(&second) {
                    return None;
                }
                0x10000 + ((first - 0xD800) << 10) + (second - 0xDC00)
            }
            0xDC00..=0xDFFF => return None,
            c => c,
        };
        char::from_u32(code)
    }

    fn hex4(&mut self) -> Option<u32> {
        let end = self.i.checked_add(4)?;
        let digits = self.b.get(self.i..end)?;
        let mut v = 0u32;
        for &d in digits {
            v = v * 16 + char::from(d).to_digit(16)?;
        }
        self.i = end;
        Some(v)
    }

    /// A number, as serde_json reads it (with `float_roundtrip`: correctly rounded); `None` for
    /// bad syntax or a value out of the doubles' range.
    fn number(&mut self) -> Option<f64> {
        let start = self.i;
        let negative = self.peek() == Some(b'-');
        if negative {
            self.i += 1;
        }
        let int_start = self.i;
        match self.peek()? {
            b'0' => self.i += 1,
            b'1'..=b'9' => self.digits(),
            _ => return None,
        }
        let int_end = self.i;
        let mut integral = true;
        if self.peek() == Some(b'.') {
            self.i += 1;
            if !self.peek()?.is_ascii_digit() {
                return None;
            }
            self.digits();
            integral = false;
        }
        if matches!(self.peek(), Some(b'e' | b'E')) {
            self.i += 1;
            if matches!(self.peek(), Some(b'+' | b'-')) {
                self.i += 1;
            }
            if !self.peek()?.is_ascii_digit() {
                return None;
            }
            self.digits();
            integral = false;
        }
        // A digit right after a leading zero ("01") is not JSON.
        if self.peek().is_some_and(|c| c.is_ascii_digit()) {
            return None;
        }
        if integral && int_end - int_start <= 18 {
            // Exact in u64; the conversion to f64 rounds to nearest, ties to even, as
            // serde_json's does.
            let mut v = 0u64;
            for &d in &self.b[int_start..int_end] {
                v = v * 10 + u64::from(d - b'0');
            }
            let n = v as f64;
            return Some(if negative { -n } else { n });
        }
        let n: f64 = std::str::from_utf8(&self.b[start..self.i]).ok()?.parse().ok()?;
        n.is_finite().then_some(n)
    }

    #[inline]
    fn digits(&mut self) {
        while self.peek().is_some_and(|c| c.is_ascii_digit()) {
            self.i += 1;
        }
    }
}

/// The position of the first byte at or after `from` that ends a run of plain string bytes: a
/// quote, a backslash, a control character or a byte of a non-ASCII character; `None` at the end
/// of the text. Eight bytes are looked at a time.
#[inline]
fn stop_at(b: &[u8], mut from: usize) -> Option<usize> {
    const ONES: u64 = 0x0101_0101_0101_0101;
    const HIGHS: u64 = 0x8080_8080_8080_8080;
    while let Some(chunk) = b.get(from..from + 8) {
        let x = u64::from_le_bytes(chunk.try_into().ok()?);
        // The classic "has a zero byte" test on x ^ quote and x ^ backslash, "has a byte below
        // 0x20" on x, and the high bits. False marks can appear only above a true one, so the
        // lowest mark is exact.
        let quote = x ^ (ONES * u64::from(b'"'));
        let backslash = x ^ (ONES * u64::from(b'\\'));
        let marks = (quote.wrapping_sub(ONES) & !quote)
            | (backslash.wrapping_sub(ONES) & !backslash)
            | x.wrapping_sub(ONES * 0x20)
            | x;
        let marks = marks & HIGHS;
        if marks != 0 {
            return Some(from + (marks.trailing_zeros() / 8) as usize);
        }
        from += 8;
    }
    let rest = b.get(from..)?;
    rest.iter().position(|&c| c == b'"' || c == b'\\' || !(0x20..0x80).contains(&c)).map(|p| from + p)
}

#[cfg(test)]
mod tests;
