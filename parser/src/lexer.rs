//! The lexer: query text to tokens.
//!
//! Keywords are case-insensitive; the literal words `true`, `false`, `null`, `undefined`, `NaN`,
//! `Infinity` and the `udf` prefix are case-sensitive, as in Cosmos DB (`TRUE` is an identifier). Identifiers are
//! `[A-Za-z_][A-Za-z0-9_]*`; anything else is reached with `c["any name"]`. `--` starts a comment
//! that runs to the end of the line.

use crate::error::{ParseError, ParseErrorKind};
use crate::span::Span;

/// Reserved words. They cannot be used as identifiers (aliases, property names after `.`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Keyword {
    And,
    Array,
    As,
    Asc,
    Between,
    By,
    Desc,
    Distinct,
    Escape,
    Exists,
    From,
    Group,
    In,
    Join,
    Like,
    Limit,
    Not,
    Offset,
    Or,
    Order,
    Select,
    Top,
    Value,
    Where,
    // Case-sensitive words.
    True,
    False,
    Null,
    Undefined,
    Udf,
    /// The number literal `NaN`.
    NaN,
    /// The number literal `Infinity`.
    Infinity,
}

impl Keyword {
    /// The keyword for `word`, if it is one.
    pub fn lookup(word: &str) -> Option<Keyword> {
        // Case-sensitive words first.
        match word {
            "true" => return Some(Keyword::True),
            "false" => return Some(Keyword::False),
            "null" => return Some(Keyword::Null),
            "undefined" => return Some(Keyword::Undefined),
            "udf" => return Some(Keyword::Udf),
            "NaN" => return Some(Keyword::NaN),
            "Infinity" => return Some(Keyword::Infinity),
            _ => {}
        }
        if word.len() > 8 {
            return None;
        }
        let mut buf = [0u8; 8];
        buf[..word.len()].copy_from_slice(word.as_bytes());
        buf[..word.len()].make_ascii_uppercase();
        Some(match &buf[..word.len()] {
            b"AND" => Keyword::And,
            b"ARRAY" => Keyword::Array,
            b"AS" => Keyword::As,
            b"ASC" => Keyword::Asc,
            b"BETWEEN" => Keyword::Between,
            b"BY" => Keyword::By,
            b"DESC" => Keyword::Desc,
            b"DISTINCT" => Keyword::Distinct,
            b"ESCAPE" => Keyword::Escape,
            b"EXISTS" => Keyword::Exists,
            b"FROM" => Keyword::From,
            b"GROUP" => Keyword::Group,
            b"IN" => Keyword::In,
            b"JOIN" => Keyword::Join,
            b"LIKE" => Keyword::Like,
            b"LIMIT" => Keyword::Limit,
            b"NOT" => Keyword::Not,
            b"OFFSET" => Keyword::Offset,
            b"OR" => Keyword::Or,
            b"ORDER" => Keyword::Order,
            b"SELECT" => Keyword::Select,
            b"TOP" => Keyword::Top,
            b"VALUE" => Keyword::Value,
            b"WHERE" => Keyword::Where,
            _ => return None,
        })
    }

    /// The keyword as the printer writes it.
    pub fn as_str(self) -> &'static str {
        match self {
            Keyword::And => "AND",
            Keyword::Array => "ARRAY",
            Keyword::As => "AS",
            Keyword::Asc => "ASC",
            Keyword::Between => "BETWEEN",
            Keyword::By => "BY",
            Keyword::Desc => "DESC",
            Keyword::Distinct => "DISTINCT",
            Keyword::Escape => "ESCAPE",
            Keyword::Exists => "EXISTS",
            Keyword::From => "FROM",
            Keyword::Group => "GROUP",
            Keyword::In => "IN",
            Keyword::Join => "JOIN",
            Keyword::Like => "LIKE",
            Keyword::Limit => "LIMIT",
            Keyword::Not => "NOT",
            Keyword::Offset => "OFFSET",
            Keyword::Or => "OR",
            Keyword::Order => "ORDER",
            Keyword::Select => "SELECT",
            Keyword::Top => "TOP",
            Keyword::Value => "VALUE",
            Keyword::Where => "WHERE",
            Keyword::True => "true",
            Keyword::False => "false",
            Keyword::Null => "null",
            Keyword::Undefined => "undefined",
            Keyword::Udf => "udf",
            Keyword::NaN => "NaN",
            Keyword::Infinity => "Infinity",
        }
    }
}

/// Whether `name` can be written bare (an identifier that is no keyword).
pub fn is_plain_identifier(name: &str) -> bool {
    let mut chars = name.chars();
    matches!(chars.next(), Some(c) if c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
        && Keyword::lookup(name).is_none()
}

/// One token.
#[derive(Debug, Clone, PartialEq)]
pub enum Token {
    /// An identifier (not a keyword).
    Ident(String),
    /// A reserved word.
    Keyword(Keyword),
    /// A numeric literal (never signed: `-1` is unary minus applied to `1`).
    Number(f64),
    /// A string literal, escapes resolved.
    String(String),
    /// `@name`, without the `@`.
    Parameter(String),
    Comma,
    Dot,
    LParen,
    RParen,
    LBracket,
    RBracket,
    LBrace,
    RBrace,
    Colon,
    Question,
    QuestionQuestion,
    Star,
    Slash,
    Percent,
    Plus,
    Minus,
    Tilde,
    Amp,
    Pipe,
    PipePipe,
    Caret,
    ShiftLeft,
    ShiftRight,
    ShiftRightZeroFill,
    Eq,
    /// `!=`
    NotEq,
    /// `<>`
    LtGt,
    Lt,
    LtEq,
    Gt,
    GtEq,
    /// End of input.
    Eof,
}

impl Token {
    /// How an error message names this token.
    pub fn describe(&self) -> String {
        match self {
            Token::Ident(name) => format!("identifier `{name}`"),
            Token::Keyword(k) => k.as_str().to_string(),
            Token::Number(_) => "a number".to_string(),
            Token::String(_) => "a string".to_string(),
            Token::Parameter(name) => format!("parameter `@{name}`"),
            Token::Eof => "end of input".to_string(),
            other => format!("`{}`", other.punct()),
        }
    }

    fn punct(&self) -> &'static str {
        match self {
            Token::Comma => ",",
            Token::Dot => ".",
            Token::LParen => "(",
            Token::RParen => ")",
            Token::LBracket => "[",
            Token::RBracket => "]",
            Token::LBrace => "{",
            Token::RBrace => "}",
            Token::Colon => ":",
            Token::Question => "?",
            Token::QuestionQuestion => "??",
            Token::Star => "*",
            Token::Slash => "/",
            Token::Percent => "%",
            Token::Plus => "+",
            Token::Minus => "-",
            Token::Tilde => "~",
            Token::Amp => "&",
            Token::Pipe => "|",
            Token::PipePipe => "||",
            Token::Caret => "^",
            Token::ShiftLeft => "<<",
            Token::ShiftRight => ">>",
            Token::ShiftRightZeroFill => ">>>",
            Token::Eq => "=",
            Token::NotEq => "!=",
            Token::LtGt => "<>",
            Token::Lt => "<",
            Token::LtEq => "<=",
            Token::Gt => ">",
            Token::GtEq => ">=",
            _ => "",
        }
    }
}

/// A token and where it is.
#[derive(Debug, Clone, PartialEq)]
pub struct Spanned {
    pub token: Token,
    pub span: Span,
}

/// Splits `source` into tokens, ending with [`Token::Eof`].
pub fn tokenize(source: &str) -> Result<Vec<Spanned>, ParseError> {
    Lexer { src: source, bytes: source.as_bytes(), pos: 0 }.run()
}

struct Lexer<'a> {
    src: &'a str,
    bytes: &'a [u8],
    pos: usize,
}

impl Lexer<'_> {
    fn run(mut self) -> Result<Vec<Spanned>, ParseError> {
        let mut out = Vec::new();
        loop {
            self.skip_trivia();
            let start = self.pos;
            let Some(&b) = self.bytes.get(self.pos) else {
                // End of input sits right after the last token, not after trailing blanks and
                // comments, so "expected X, found end of input" points where X belongs.
                let end = out.last().map_or(0, |t: &Spanned| t.span.end);
                out.push(Spanned { token: Token::Eof, span: Span::new(end, end) });
                return Ok(out);
            };
            let token = match b {
                b'a'..=b'z' | b'A'..=b'Z' | b'_' => {
                    let word = self.word();
                    match Keyword::lookup(word) {
                        Some(k) => Token::Keyword(k),
                        None => Token::Ident(word.to_string()),
                    }
                }
                b'0'..=b'9' => self.number(start)?,
                b'.' if self.peek_at(1).is_some_and(|c| c.is_ascii_digit()) => self.number(start)?,
                b'"' | b'\'' => self.string(b)?,
                b'@' => {
                    self.pos += 1;
                    if !self.peek_at(0).is_some_and(|c| c.is_ascii_alphabetic() || c == b'_') {
                        return Err(self.error(
                            ParseErrorKind::InvalidParameter,
                            start,
                            "expected a parameter name after `@`",
                        ));
                    }
                    Token::Parameter(self.word().to_string())
                }
                _ => self.punct(start)?,
            };
            out.push(Spanned { token, span: Span::new(start, self.pos) });
        }
    }

    fn peek_at(&self, ahead: usize) -> Option<u8> {
        self.bytes.get(self.pos + ahead).copied()
    }

    fn error(&self, kind: ParseErrorKind, start: usize, message: &str) -> ParseError {
        let end = (self.pos.max(start + 1)).min(self.src.len());
        ParseError::new(self.src, kind, Span::new(start, end), message.to_string())
    }

    fn skip_trivia(&mut self) {
        loop {
            match self.peek_at(0) {
                Some(b' ' | b'\t' | b'\r' | b'\n' | b'\x0c') => self.pos += 1,
                Some(b'-') if self.peek_at(1) == Some(b'-') => {
                    while self.peek_at(0).is_some_and(|c| c != b'\n') {
                        self.pos += 1;
                    }
                }
                _ => return,
            }
        }
    }

    fn word(&mut self) -> &str {
        let start = self.pos;
        while self.peek_at(0).is_some_and(|c| c.is_ascii_alphanumeric() || c == b'_') {
            self.pos += 1;
        }
        &self.src[start..self.pos]
    }

    fn digits(&mut self) -> usize {
        let start = self.pos;
        while self.peek_at(0).is_some_and(|c| c.is_ascii_digit()) {
            self.pos += 1;
        }
        self.pos - start
    }

    /// `DIGIT+ ('.' DIGIT*)? (E [-+]? DIGIT+)?` or `'.' DIGIT+ (E [-+]? DIGIT+)?`.
    fn number(&mut self, start: usize) -> Result<Token, ParseError> {
        self.digits();
        if self.peek_at(0) == Some(b'.') {
            self.pos += 1;
            self.digits();
        }
        if matches!(self.peek_at(0), Some(b'e' | b'E')) {
            self.pos += 1;
            if matches!(self.peek_at(0), Some(b'+' | b'-')) {
                self.pos += 1;
            }
            if self.digits() == 0 {
                return Err(self.error(
                    ParseErrorKind::InvalidNumber,
                    start,
                    "expected digits in the exponent of the number",
                ));
            }
        }
        // `1.2.3` or `12abc`: a number glued to more number or word characters.
        if self.peek_at(0).is_some_and(|c| c.is_ascii_alphanumeric() || c == b'_' || c == b'.') {
            while self.peek_at(0).is_some_and(|c| c.is_ascii_alphanumeric() || c == b'_' || c == b'.') {
                self.pos += 1;
            }
            let text = &self.src[start..self.pos];
            return Err(self.error(
                ParseErrorKind::InvalidNumber,
                start,
                &format!("expected a number, found `{text}`"),
            ));
        }
        let text = &self.src[start..self.pos];
        text.parse::<f64>().map(Token::Number).map_err(|_| {
            self.error(ParseErrorKind::InvalidNumber, start, &format!("expected a number, found `{text}`"))
        })
    }

    fn string(&mut self, quote: u8) -> Result<Token, ParseError> {
        let start = self.pos;
        self.pos += 1;
        let mut out = String::new();
        loop {
            let rest = &self.src[self.pos..];
            let Some(c) = rest.chars().next() else {
                return Err(ParseError::new(
                    self.src,
                    ParseErrorKind::UnterminatedString,
                    Span::new(start, start + 1),
                    "expected a closing quote for this string, found end of input".to_string(),
                ));
            };
            match c {
                c if c as u32 == quote as u32 => {
                    self.pos += 1;
                    return Ok(Token::String(out));
                }
                '\\' => {
                    let esc_start = self.pos;
                    self.pos += 1;
                    let Some(e) = self.src[self.pos..].chars().next() else {
                        continue;
                    };
                    self.pos += e.len_utf8();
                    match e {
                        '"' => out.push('"'),
                        '\'' => out.push('\''),
                        '\\' => out.push('\\'),
                        '/' => out.push('/'),
                        'b' => out.push('\u{8}'),
                        'f' => out.push('\u{c}'),
                        'n' => out.push('\n'),
                        'r' => out.push('\r'),
                        't' => out.push('\t'),
                        'u' => out.push(self.unicode_escape(esc_start)?),
                        other => {
                            return Err(self.error(
                                ParseErrorKind::InvalidEscape,
                                esc_start,
                                &format!(
                                "expected an escape (\\\" \\' \\\\ \\/ \\b \\f \\n \\r \\t \\uXXXX), found `\\{other}`"
                            ),
                            ))
                        }
                    }
                }
                c if (c as u32) < 0x20 && c != '\t' && c != '\n' && c != '\r' => {
                    return Err(self.error(
                        ParseErrorKind::UnexpectedCharacter,
                        self.pos,
                        &format!("expected a printable character in a string, found U+{:04X}", c as u32),
                    ));
                }
                c => {
                    out.push(c);
                    self.pos += c.len_utf8();
                }
            }
        }
    }

    fn hex4(&mut self, esc_start: usize) -> Result<u32, ParseError> {
        let digits = self.src.get(self.pos..self.pos + 4).filter(|d| d.bytes().all(|b| b.is_ascii_hexdigit()));
        match digits {
            Some(d) => {
                self.pos += 4;
                u32::from_str_radix(d, 16).map_err(|_| self.bad_unicode(esc_start))
            }
            None => Err(self.bad_unicode(esc_start)),
        }
    }

    fn bad_unicode(&self, esc_start: usize) -> ParseError {
        self.error(ParseErrorKind::InvalidEscape, esc_start, "expected four hex digits of a Unicode scalar after `\\u`")
    }

    /// After `\u`: four hex digits, or a surrogate pair `\uD83D\uDE00`.
    fn unicode_escape(&mut self, esc_start: usize) -> Result<char, ParseError> {
        let hi = self.hex4(esc_start)?;
        if (0xD800..0xDC00).contains(&hi) {
            if self.src[self.pos..].starts_with("\\u") {
                self.pos += 2;
                let lo = self.hex4(esc_start)?;
                if (0xDC00..0xE000).contains(&lo) {
                    let code = 0x10000 + ((hi - 0xD800) << 10) + (lo - 0xDC00);
                    return char::from_u32(code).ok_or_else(|| self.bad_unicode(esc_start));
                }
            }
            return Err(self.error(
                ParseErrorKind::InvalidEscape,
                esc_start,
                "expected a low surrogate `\\uDC00`-`\\uDFFF` after a high surrogate",
            ));
        }
        char::from_u32(hi).ok_or_else(|| {
            self.error(
                ParseErrorKind::InvalidEscape,
                esc_start,
                "expected a Unicode scalar, found a lone low surrogate",
            )
        })
    }

    fn punct(&mut self, start: usize) -> Result<Token, ParseError> {
        let two = |a: u8, b: u8| self.bytes.get(start) == Some(&a) && self.bytes.get(start + 1) == Some(&b);
        let (token, len) = if self.src[start..].starts_with(">>>") {
            (Token::ShiftRightZeroFill, 3)
        } else if two(b'?', b'?') {
            (Token::QuestionQuestion, 2)
        } else if two(b'|', b'|') {
            (Token::PipePipe, 2)
        } else if two(b'<', b'<') {
            (Token::ShiftLeft, 2)
        } else if two(b'>', b'>') {
            (Token::ShiftRight, 2)
        } else if two(b'!', b'=') {
            (Token::NotEq, 2)
        } else if two(b'<', b'>') {
            (Token::LtGt, 2)
        } else if two(b'<', b'=') {
            (Token::LtEq, 2)
        } else if two(b'>', b'=') {
            (Token::GtEq, 2)
        } else {
            let token = match self.bytes[start] {
                b',' => Token::Comma,
                b'.' => Token::Dot,
                b'(' => Token::LParen,
                b')' => Token::RParen,
                b'[' => Token::LBracket,
                b']' => Token::RBracket,
                b'{' => Token::LBrace,
                b'}' => Token::RBrace,
                b':' => Token::Colon,
                b'?' => Token::Question,
                b'*' => Token::Star,
                b'/' => Token::Slash,
                b'%' => Token::Percent,
                b'+' => Token::Plus,
                b'-' => Token::Minus,
                b'~' => Token::Tilde,
                b'&' => Token::Amp,
                b'|' => Token::Pipe,
                b'^' => Token::Caret,
                b'=' => Token::Eq,
                b'<' => Token::Lt,
                b'>' => Token::Gt,
                _ => {
                    let c = self.src[start..].chars().next().unwrap_or('\u{fffd}');
                    self.pos = start + c.len_utf8();
                    let shown = if c.is_control() { format!("U+{:04X}", c as u32) } else { format!("`{c}`") };
                    return Err(ParseError::new(
                        self.src,
                        ParseErrorKind::UnexpectedCharacter,
                        Span::new(start, self.pos),
                        format!("expected a token, found {shown}"),
                    ));
                }
            };
            (token, 1)
        };
        self.pos = start + len;
        Ok(token)
    }
}
