//! `LIKE` patterns: `%` (any sequence), `_` (any character), `[abc]`, `[a-f]`, `[^...]`, and an
//! optional escape character. Matching is case-sensitive and takes O(len(text) * len(pattern)) at
//! worst, whatever the pattern (no backtracking blow-up).

/// A `LIKE` pattern, compiled.
#[derive(Debug, Clone, PartialEq)]
pub struct LikePattern(Vec<LikeToken>);

#[derive(Debug, Clone, PartialEq)]
enum LikeToken {
    Char(char),
    AnyChar,
    AnySeq,
    Set { negated: bool, ranges: Vec<(char, char)> },
}

impl LikePattern {
    /// Compiles `%` (any sequence), `_` (any character), `[abc]`, `[a-f]`, `[^...]`, with an
    /// optional escape character that makes the next character literal.
    pub fn compile(pattern: &str, escape: Option<char>) -> LikePattern {
        let mut tokens = Vec::new();
        let mut chars = pattern.chars().peekable();
        while let Some(c) = chars.next() {
            if Some(c) == escape {
                match chars.next() {
                    Some(next) => tokens.push(LikeToken::Char(next)),
                    None => tokens.push(LikeToken::Char(c)),
                }
                continue;
            }
            match c {
                '%' => {
                    if tokens.last() != Some(&LikeToken::AnySeq) {
                        tokens.push(LikeToken::AnySeq);
                    }
                }
                '_' => tokens.push(LikeToken::AnyChar),
                '[' => {
                    // A set runs to the next `]`; without one, `[` is literal.
                    let rest: String = chars.clone().collect();
                    match rest.find(']') {
                        Some(end) if end > 0 => {
                            let body: Vec<char> = rest[..end].chars().collect();
                            for _ in 0..=body.len() {
                                chars.next();
                            }
                            let (negated, body) = match body.split_first() {
                                Some(('^', tail)) => (true, tail.to_vec()),
                                _ => (false, body),
                            };
                            let mut ranges = Vec::new();
                            let mut i = 0;
                            while i < body.len() {
                                if i + 2 < body.len() && body[i + 1] == '-' {
                                    ranges.push((body[i], body[i + 2]));
                                    i += 3;
                                } else {
                                    ranges.push((body[i], body[i]));
                                    i += 1;
                                }
                            }
                            tokens.push(LikeToken::Set { negated, ranges });
                        }
                        _ => tokens.push(LikeToken::Char('[')),
                    }
                }
                c => tokens.push(LikeToken::Char(c)),
            }
        }
        LikePattern(tokens)
    }

    /// Whether `text` matches, in O(len(text) * len(pattern)) at worst.
    pub fn matches(&self, text: &str) -> bool {
        let text: Vec<char> = text.chars().collect();
        let p = &self.0;
        let (mut t, mut i) = (0usize, 0usize);
        let mut star: Option<(usize, usize)> = None;
        let single = |tok: &LikeToken, c: char| match tok {
            LikeToken::Char(x) => *x == c,
            LikeToken::AnyChar => true,
            LikeToken::Set { negated, ranges } => ranges.iter().any(|(lo, hi)| (*lo..=*hi).contains(&c)) != *negated,
            LikeToken::AnySeq => false,
        };
        while t < text.len() {
            if i < p.len() && p[i] == LikeToken::AnySeq {
                star = Some((i, t));
                i += 1;
            } else if i < p.len() && single(&p[i], text[t]) {
                i += 1;
                t += 1;
            } else if let Some((si, st)) = star {
                i = si + 1;
                t = st + 1;
                star = Some((si, st + 1));
            } else {
                return false;
            }
        }
        p[i..].iter().all(|tok| *tok == LikeToken::AnySeq)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn like_patterns() {
        let m = |p: &str, t: &str| LikePattern::compile(p, None).matches(t);
        assert!(m("%", ""));
        assert!(m("a%", "abc"));
        assert!(!m("a%", "bac"));
        assert!(m("%b%", "abc"));
        assert!(m("a_c", "abc"));
        assert!(!m("a_c", "abbc"));
        assert!(m("[a-c]x", "bx"));
        assert!(!m("[^a-c]x", "bx"));
        assert!(m("[^a-c]x", "dx"));
        assert!(m("%[0-9]", "abc7"));
        assert!(m("[", "["));
        assert!(!m("abc", "ABC"), "LIKE is case-sensitive");
        let e = |p: &str, t: &str| LikePattern::compile(p, Some('!')).matches(t);
        assert!(e("100!%", "100%"));
        assert!(!e("100!%", "1000"));
        assert!(e("a!_b", "a_b"));
        assert!(!e("a!_b", "axb"));
        // Many `%` over a long text stays fast.
        let long = "a".repeat(10_000);
        assert!(!m(&"%a".repeat(50).replace("%a%a", "%a%b"), &long));
    }
}
