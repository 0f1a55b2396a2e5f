//! All terminal output and input goes through [`Ui`]: results to stdout, progress, prompts and
//! errors to stderr, and text that came from a model or a subprocess sanitized first.

use std::io::{self, BufRead, IsTerminal, Write};
use std::sync::atomic::{AtomicBool, Ordering};

/// Set while gavel waits at a prompt; Ctrl-C then exits at once (the run is already saved).
pub static IN_PROMPT: AtomicBool = AtomicBool::new(false);

/// Set once this process has asked a person anything: the time before it is not all gavel's.
static ASKED: AtomicBool = AtomicBool::new(false);

/// Whether this process has asked a person anything yet.
pub fn asked() -> bool {
    ASKED.load(Ordering::SeqCst)
}

/// Discards input typed at the terminal that nothing has read yet, so an answer is typed
/// after its question: an `approve` typed ahead (or pasted, or sent by a script that does not
/// wait for the prompt) never answers a gate it was not typed for. Nothing happens when stdin
/// is not a terminal.
pub fn discard_typeahead() {
    let stdin = io::stdin();
    if stdin.is_terminal() {
        let _ = nix::sys::termios::tcflush(&stdin, nix::sys::termios::FlushArg::TCIFLUSH);
    }
}

/// The terminal, as gavel sees it.
#[derive(Debug, Clone, Copy)]
pub struct Ui {
    interactive: bool,
}

impl Ui {
    /// Interactive when both stdin and stderr are terminals.
    pub fn detect() -> Self {
        Self {
            interactive: io::stdin().is_terminal() && io::stderr().is_terminal(),
        }
    }

    /// Whether gates can be asked here.
    pub fn interactive(&self) -> bool {
        self.interactive
    }

    /// A result line on stdout. A closed pipe is not an error.
    pub fn out(&self, line: &str) {
        let mut out = io::stdout().lock();
        let _ = writeln!(out, "{line}");
    }

    /// A progress or status line on stderr, in one write (stderr is unbuffered: `writeln!`
    /// would write the line and its newline separately).
    pub fn info(&self, line: &str) {
        let mut whole = String::with_capacity(line.len() + 1);
        whole.push_str(line);
        whole.push('\n');
        let _ = io::stderr().lock().write_all(whole.as_bytes());
    }

    /// Writes a prompt on stderr without a newline.
    pub fn prompt_inline(&self, prompt: &str) {
        let mut err = io::stderr().lock();
        let _ = write!(err, "{prompt}");
        let _ = err.flush();
    }

    /// Asks a question on stderr and reads one line. `None` at end of input. What was typed
    /// at a terminal before the question was asked is discarded ([`discard_typeahead`]).
    pub fn ask(&self, question: &str) -> Option<String> {
        self.ask_after(question, true)
    }

    /// [`Self::ask`], discarding typed-ahead input only when `fresh` (the first question of an
    /// answer given over several lines is fresh; the lines after it are typed ahead on purpose).
    fn ask_after(&self, question: &str, fresh: bool) -> Option<String> {
        {
            let mut err = io::stderr().lock();
            let _ = write!(err, "{question}");
            let _ = err.flush();
        }
        if fresh {
            discard_typeahead();
        }
        IN_PROMPT.store(true, Ordering::SeqCst);
        ASKED.store(true, Ordering::SeqCst);
        let mut line = String::new();
        let read = io::stdin().lock().read_line(&mut line);
        IN_PROMPT.store(false, Ordering::SeqCst);
        match read {
            Ok(0) | Err(_) => None,
            Ok(_) => Some(line.trim_end_matches(['\n', '\r']).to_owned()),
        }
    }

    /// Reads lines until an empty line or end of input.
    pub fn ask_multiline(&self, question: &str) -> String {
        self.info(question);
        let mut lines = Vec::new();
        let mut fresh = true;
        while let Some(line) = self.ask_after("> ", fresh) {
            fresh = false;
            if line.is_empty() {
                break;
            }
            lines.push(line);
        }
        lines.join("\n")
    }
}

/// Removes terminal escape sequences (with their payloads), control characters (except newline
/// and tab) and bidi controls from text that did not come from gavel itself: the one sanitizer,
/// shared with the diff gate's report.
pub use gavel_diffgate::sanitize;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escapes_controls_and_bidi_are_removed() {
        assert_eq!(sanitize("a\u{1b}[31mred\u{1b}[0m b"), "ared b");
        assert_eq!(sanitize("x\u{1b}]0;title\u{7}y"), "xy");
        assert_eq!(sanitize("ok\u{202e}evil\u{2066}"), "okevil");
        assert_eq!(sanitize("keep\n\ttabs\r\u{8}"), "keep\n\ttabs");
    }

    #[test]
    fn dcs_and_apc_payloads_are_removed_with_their_introducers() {
        // Regression: the CLI's own sanitizer dropped `ESC P` / `ESC _` but printed the payload.
        assert_eq!(sanitize("a\u{1b}P+q544e\u{1b}\\b"), "ab");
        assert_eq!(sanitize("a\u{1b}_Gf=100;AAAA\u{7}b"), "ab");
        assert_eq!(sanitize("a\u{1b}^pm\u{1b}\\b\u{1b}Xsos\u{1b}\\c"), "abc");
    }
}
