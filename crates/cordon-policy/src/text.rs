//! Text that cordon shows a person but did not write itself: argv, paths, host names and
//! an agent's justification quoted in prompts, hints and notes. A command or an agent
//! chooses those strings, so they must not be able to move the cursor, recolour the
//! terminal, reorder what follows (Unicode bidirectional controls) or start a line that
//! looks like cordon's own (breaker, stop 22: a justification with `\n  runs with: profile
//! read-only` and `ESC[1A ESC[2K` forged lines of the approval prompt).

/// `s` with every control character (C0, DEL, C1: newline, ESC, …) and every Unicode
/// bidirectional formatting character (U+061C, U+200E/F, U+202A–U+202E, U+2066–U+2069)
/// shown as an escape (`\n`, `\u{1b}`, `\u{202e}`); everything else as it is.
pub fn printable(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        if c.is_control() || is_bidi_control(c) {
            out.extend(c.escape_default());
        } else {
            out.push(c);
        }
    }
    out
}

fn is_bidi_control(c: char) -> bool {
    matches!(c, '\u{061c}' | '\u{200e}' | '\u{200f}' | '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}')
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn controls_and_bidi_overrides_are_escaped_and_the_rest_kept() {
        assert_eq!(printable("a\nb"), "a\\nb");
        assert_eq!(printable("x\u{1b}[2K"), "x\\u{1b}[2K");
        assert_eq!(printable("\u{9b}31m"), "\\u{9b}31m");
        assert_eq!(printable("evil\u{202e}txt.sh"), "evil\\u{202e}txt.sh");
        assert_eq!(printable("tab\there"), "tab\\there");
        // Twin: ordinary text, non-ASCII letters and emoji pass unchanged.
        for ok in ["/home/u/proj", "café — naïve", "日本語", "ok ✓"] {
            assert_eq!(printable(ok), ok);
        }
    }
}
