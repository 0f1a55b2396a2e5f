//! Making untrusted text safe to put on a terminal: gavel's one sanitizer, used by the diff
//! gate's report and (re-exported) by the CLI for everything a model, a subprocess or a
//! repository wrote. Such text could recolour, move the cursor, retitle the window, hide lines,
//! talk to the terminal through DCS/APC strings or rewrite what a reviewer believes they
//! approved (OSC 8 links, "Trojan Source" bidi reordering). Everything that is not printable
//! text is removed, escape sequences together with their payloads.

/// Removes, from `text`:
/// * escape sequences with their payloads, whether introduced by ESC or by their 8-bit C1
///   form: CSI (`ESC [` / U+009B, parameters, then one final byte), and the control strings
///   OSC (`ESC ]` / U+009D), DCS (`ESC P` / U+0090), SOS (`ESC X` / U+0098), PM (`ESC ^` /
///   U+009E) and APC (`ESC _` / U+009F), each up to BEL or ST (`ESC \` / U+009C), or to the
///   end of the text when unterminated; an ESC inside a control string ends it and starts the
///   next sequence;
/// * the other ESC sequences (`ESC 7`, `ESC c`, `ESC ( B`, ...);
/// * the remaining C0 and C1 controls and DEL, except `\n` and `\t` (so `\r` cannot overwrite
///   a line);
/// * bidirectional formatting characters (U+061C, U+200E, U+200F, U+202A..U+202E,
///   U+2066..U+2069).
#[must_use]
pub fn sanitize(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut chars = text.chars().peekable();
    // An ESC read while skipping a control string: it starts the next sequence.
    let mut pending_escape = false;
    loop {
        let c = if std::mem::take(&mut pending_escape) {
            '\u{1b}'
        } else {
            match chars.next() {
                Some(c) => c,
                None => break,
            }
        };
        let sequence = match c {
            '\u{1b}' => match escape(&mut chars) {
                Some(sequence) => sequence,
                None => continue,
            },
            '\u{9b}' => Sequence::Csi,
            '\u{90}' | '\u{98}' | '\u{9d}' | '\u{9e}' | '\u{9f}' => Sequence::ControlString,
            '\n' | '\t' => {
                out.push(c);
                continue;
            }
            c if c.is_control() || is_bidi(c) => continue,
            c => {
                out.push(c);
                continue;
            }
        };
        match sequence {
            Sequence::Csi => skip_csi(&mut chars),
            Sequence::ControlString => pending_escape = skip_control_string(&mut chars),
        }
    }
    out
}

/// Bidirectional formatting characters, which reorder how a line is displayed.
pub(crate) fn is_bidi(c: char) -> bool {
    matches!(
        c,
        '\u{061C}' | '\u{200E}' | '\u{200F}' | '\u{202A}'..='\u{202E}' | '\u{2066}'..='\u{2069}'
    )
}

/// A sequence whose body still has to be skipped.
enum Sequence {
    Csi,
    /// OSC, DCS, SOS, PM or APC: a payload up to BEL or ST.
    ControlString,
}

type Chars<'a> = std::iter::Peekable<std::str::Chars<'a>>;

/// Reads what follows an ESC: the kind of sequence whose body comes next, or `None` when the
/// escape was complete (its characters consumed) or there was nothing after the ESC.
fn escape(chars: &mut Chars<'_>) -> Option<Sequence> {
    let next = *chars.peek()?;
    match next {
        '[' => {
            chars.next();
            Some(Sequence::Csi)
        }
        ']' | 'P' | 'X' | '^' | '_' => {
            chars.next();
            Some(Sequence::ControlString)
        }
        c if ('\u{20}'..='\u{2f}').contains(&c) => {
            // nF escapes: intermediates, then one final character.
            while chars
                .next_if(|c| ('\u{20}'..='\u{2f}').contains(c))
                .is_some()
            {}
            chars.next_if(|c| ('\u{30}'..='\u{7e}').contains(c));
            None
        }
        c if ('\u{30}'..='\u{7e}').contains(&c) => {
            chars.next();
            None
        }
        _ => None,
    }
}

/// Skips a CSI body: parameters and intermediates (0x20..0x3F), then one final byte
/// (0x40..0x7E). Anything else ends the sequence without being eaten.
fn skip_csi(chars: &mut Chars<'_>) {
    while chars
        .next_if(|c| ('\u{20}'..='\u{3f}').contains(c))
        .is_some()
    {}
    chars.next_if(|c| ('\u{40}'..='\u{7e}').contains(c));
}

/// Skips a control string's payload up to BEL or ST, or to the end of the text. Returns whether
/// it stopped at an ESC that is not part of ST: that ESC starts the next sequence.
fn skip_control_string(chars: &mut Chars<'_>) -> bool {
    while let Some(c) = chars.next() {
        match c {
            '\u{7}' | '\u{9c}' => return false,
            '\u{1b}' => return chars.next_if_eq(&'\\').is_none(),
            _ => {}
        }
    }
    false
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
        // A CSI cut short by a newline ends there; the text after it stays.
        assert_eq!(sanitize("a\x1b[12\nb"), "a\nb");
        // The 8-bit CSI, parameters included.
        assert_eq!(sanitize("\u{9b}31mx\u{85}"), "x");
    }

    #[test]
    fn strips_osc_with_bel_or_st() {
        assert_eq!(sanitize("\x1b]0;pwned\x07title"), "title");
        assert_eq!(
            sanitize("\x1b]8;;https://evil.invalid\x1b\\link\x1b]8;;\x1b\\"),
            "link"
        );
        assert_eq!(sanitize("\u{9d}0;pwned\u{9c}title"), "title");
        assert_eq!(sanitize("x\x1b]unterminated"), "x");
    }

    #[test]
    fn strips_dcs_sos_pm_and_apc_with_their_payloads() {
        for intro in [
            "\x1bP", "\x1bX", "\x1b^", "\x1b_", "\u{90}", "\u{98}", "\u{9e}", "\u{9f}",
        ] {
            for end in ["\x1b\\", "\x07", "\u{9c}"] {
                let text = format!("before{intro}payload;q+secret{end}after");
                assert_eq!(sanitize(&text), "beforeafter", "{intro:?} .. {end:?}");
            }
            let unterminated = format!("before{intro}payload to the end\nmore");
            assert_eq!(sanitize(&unterminated), "before", "{intro:?} unterminated");
        }
    }

    #[test]
    fn an_escape_inside_a_control_string_starts_the_next_sequence() {
        assert_eq!(sanitize("\x1bPdcs\x1b[31mred"), "red");
        assert_eq!(sanitize("\x1b_apc\x1b]0;title\x07after"), "after");
    }

    #[test]
    fn strips_other_escapes_and_controls() {
        assert_eq!(sanitize("a\x1bcb\x1b(Bc\x1b"), "abc");
        assert_eq!(sanitize("ok\rEVIL\x08\x00\x7f"), "okEVIL");
        assert_eq!(sanitize("c1\u{85}\u{8d}x"), "c1x");
    }

    #[test]
    fn strips_bidi_controls() {
        let trojan =
            "if access_level != \"user\u{202E} \u{2066}// Check if admin\u{2069} \u{2066}\"";
        let clean = sanitize(trojan);
        assert!(!clean.contains(['\u{202E}', '\u{2066}', '\u{2069}']));
        for bidi in [
            '\u{202A}', '\u{202B}', '\u{202C}', '\u{202D}', '\u{202E}', '\u{2066}', '\u{2067}',
            '\u{2068}', '\u{2069}', '\u{200E}', '\u{200F}', '\u{061C}',
        ] {
            assert_eq!(sanitize(&format!("a{bidi}b")), "ab", "{bidi:?}");
        }
    }

    #[test]
    fn a_long_run_of_nested_introducers_is_handled_without_recursion() {
        let hostile = "\x1bP".repeat(100_000) + "end";
        assert_eq!(sanitize(&hostile), "");
    }
}
