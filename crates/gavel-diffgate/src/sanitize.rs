//! Making repository text safe to put on a terminal. The report quotes file contents and names
//! that anyone could have written; an escape sequence in them could recolour, move the cursor,
//! retitle the window, hide lines or rewrite what the reviewer believes they approved (OSC 8
//! links, "Trojan Source" bidi reordering). Everything that is not printable text is removed.

/// Removes, from `text`:
/// * ESC sequences: CSI (`ESC [ ... final`), OSC (`ESC ] ... BEL` or `ESC ] ... ESC \`),
///   DCS/SOS/PM/APC strings (`ESC P`, `ESC X`, `ESC ^`, `ESC _` up to the string terminator)
///   and two-character escapes (`ESC 7`, `ESC c`, ...);
/// * C1 controls (U+0080..U+009F, which include the 8-bit CSI and OSC);
/// * C0 controls and DEL, except `\n` and `\t` (so `\r` cannot overwrite a line);
/// * bidirectional formatting characters (U+061C, U+200E, U+200F, U+202A..U+202E,
///   U+2066..U+2069).
#[must_use]
pub fn sanitize(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\u{1b}' => skip_escape(&mut chars),
            '\n' | '\t' => out.push(c),
            c if is_control(c) || is_bidi(c) => {}
            c => out.push(c),
        }
    }
    out
}

fn is_control(c: char) -> bool {
    // C0, DEL and C1.
    c.is_control()
}

pub(crate) fn is_bidi(c: char) -> bool {
    matches!(
        c,
        '\u{061C}' | '\u{200E}' | '\u{200F}' | '\u{202A}'..='\u{202E}' | '\u{2066}'..='\u{2069}'
    )
}

/// Consumes the rest of an escape sequence whose ESC was just read.
fn skip_escape(chars: &mut std::iter::Peekable<std::str::Chars<'_>>) {
    let Some(&next) = chars.peek() else {
        return;
    };
    match next {
        '[' => {
            chars.next();
            // Parameters and intermediates (0x20..0x3F), then one final byte (0x40..0x7E).
            // Anything else ends the sequence without being eaten.
            while let Some(&c) = chars.peek() {
                if ('\u{20}'..='\u{3f}').contains(&c) {
                    chars.next();
                } else {
                    if ('\u{40}'..='\u{7e}').contains(&c) {
                        chars.next();
                    }
                    break;
                }
            }
        }
        ']' | 'P' | 'X' | '^' | '_' => {
            chars.next();
            // A control string: ends at BEL or ST (ESC \); an unterminated one runs to the end
            // of the text, all of it hidden from the terminal anyway.
            while let Some(c) = chars.next() {
                match c {
                    '\u{7}' | '\u{9c}' => break,
                    '\u{1b}' => {
                        if chars.peek() == Some(&'\\') {
                            chars.next();
                        }
                        break;
                    }
                    _ => {}
                }
            }
        }
        c if ('\u{20}'..='\u{2f}').contains(&c) => {
            // nF escapes: intermediates, then one final character.
            while chars
                .next_if(|c| ('\u{20}'..='\u{2f}').contains(c))
                .is_some()
            {}
            chars.next_if(|c| ('\u{30}'..='\u{7e}').contains(c));
        }
        c if ('\u{30}'..='\u{7e}').contains(&c) => {
            chars.next();
        }
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::sanitize;

    #[test]
    fn keeps_plain_text_newlines_and_tabs() {
        let text = "fn main() {\n\tprintln!(\"héllo → 世界\");\n}\n";
        assert_eq!(sanitize(text), text);
    }

    #[test]
    fn strips_csi_and_sgr() {
        assert_eq!(sanitize("\x1b[31mred\x1b[0m \x1b[2J\x1b[1;1Hx"), "red x");
        assert_eq!(sanitize("a\x1b[?25lb"), "ab");
    }

    #[test]
    fn strips_osc_with_bel_or_st() {
        assert_eq!(sanitize("\x1b]0;pwned\x07title"), "title");
        assert_eq!(
            sanitize("\x1b]8;;https://evil.invalid\x1b\\link\x1b]8;;\x1b\\"),
            "link"
        );
        assert_eq!(sanitize("x\x1b]unterminated"), "x");
        assert_eq!(sanitize("\x1bPdcs\x1b\\after"), "after");
    }

    #[test]
    fn strips_other_escapes_and_controls() {
        assert_eq!(sanitize("a\x1bcb\x1b(Bc\x1b"), "abc");
        assert_eq!(sanitize("ok\rEVIL\x08\x00\x7f"), "okEVIL");
        assert_eq!(sanitize("\u{9b}31mx\u{85}"), "31mx");
    }

    #[test]
    fn strips_bidi_controls() {
        let trojan =
            "if access_level != \"user\u{202E} \u{2066}// Check if admin\u{2069} \u{2066}\"";
        let clean = sanitize(trojan);
        assert!(!clean.contains(['\u{202E}', '\u{2066}', '\u{2069}']));
        assert_eq!(sanitize("a\u{200F}b\u{061C}c"), "abc");
    }
}
