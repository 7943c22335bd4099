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
        let chars: Vec<char> = pattern.chars().collect();
        // The position of the first `]` at or after each position: finding the end of a set takes
        // one lookup, so compiling stays linear whatever the pattern (`[[[[...` included).
        let mut next_close = vec![usize::MAX; chars.len() + 1];
        for i in (0..chars.len()).rev() {
            next_close[i] = if chars[i] == ']' { i } else { next_close[i + 1] };
        }
        let mut tokens = Vec::new();
        let mut i = 0;
        while i < chars.len() {
            let c = chars[i];
            i += 1;
            if Some(c) == escape {
                match chars.get(i) {
                    Some(&next) => {
                        tokens.push(LikeToken::Char(next));
                        i += 1;
                    }
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
                // A set runs to the next `]`; without one (or empty), `[` is literal.
                '[' if next_close[i] != usize::MAX && next_close[i] > i => {
                    let end = next_close[i];
                    let body = &chars[i..end];
                    i = end + 1;
                    let (negated, body) = match body.split_first() {
                        Some(('^', tail)) => (true, tail),
                        _ => (false, body),
                    };
                    let mut ranges = Vec::new();
                    let mut k = 0;
                    while k < body.len() {
                        if k + 2 < body.len() && body[k + 1] == '-' {
                            ranges.push((body[k], body[k + 2]));
                            k += 3;
                        } else {
                            ranges.push((body[k], body[k]));
                            k += 1;
                        }
                    }
                    tokens.push(LikeToken::Set { negated, ranges });
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
        // Compiling is linear: 200,000 unclosed `[` (each looked for its `]` in the rest).
        assert!(m(&"[".repeat(200_000), &"[".repeat(200_000)));
        assert!(m("[]]", "[]]"), "`[]` is no set: a literal `[` and `]`");
    }
}
