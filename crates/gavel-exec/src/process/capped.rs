//! A byte buffer with a size cap that keeps the head and the tail of what was written to it.
//!
//! A child may print without end (a test suite in a loop, a CLI streaming a runaway answer);
//! gavel must not hold all of it. The beginning says what the program was doing and the end
//! says how it stopped, so both are kept and the middle is counted and dropped.

use std::collections::VecDeque;

/// Output kept under a cap: the first half of the cap verbatim, then the last bytes written.
#[derive(Debug, Clone)]
pub(crate) struct Capped {
    head_cap: usize,
    tail_cap: usize,
    head: Vec<u8>,
    tail: VecDeque<u8>,
    omitted: u64,
}

impl Capped {
    /// A buffer that keeps at most `limit` bytes.
    pub(crate) fn new(limit: usize) -> Self {
        let head_cap = limit / 2;
        Self {
            head_cap,
            tail_cap: limit - head_cap,
            head: Vec::new(),
            tail: VecDeque::new(),
            omitted: 0,
        }
    }

    /// Appends `bytes`, dropping from the middle what does not fit.
    pub(crate) fn push(&mut self, mut bytes: &[u8]) {
        let room = self.head_cap - self.head.len();
        if room > 0 {
            let take = room.min(bytes.len());
            self.head.extend_from_slice(&bytes[..take]);
            bytes = &bytes[take..];
        }
        if bytes.len() > self.tail_cap {
            let skip = bytes.len() - self.tail_cap;
            self.omitted += (self.tail.len() + skip) as u64;
            self.tail.clear();
            bytes = &bytes[skip..];
        }
        let over = (self.tail.len() + bytes.len()).saturating_sub(self.tail_cap);
        if over > 0 {
            self.tail.drain(..over);
            self.omitted += over as u64;
        }
        self.tail.extend(bytes);
    }

    /// How many bytes were dropped from the middle.
    pub(crate) fn omitted(&self) -> u64 {
        self.omitted
    }

    /// The kept text (invalid UTF-8 replaced), with a marker line where bytes were dropped.
    pub(crate) fn text(&self) -> String {
        let mut text = String::from_utf8_lossy(&self.head).into_owned();
        if self.omitted > 0 {
            if !text.is_empty() && !text.ends_with('\n') {
                text.push('\n');
            }
            text.push_str(&format!(
                "[gavel: {} bytes of output omitted]\n",
                self.omitted
            ));
        }
        let (a, b) = self.tail.as_slices();
        let mut tail = Vec::with_capacity(a.len() + b.len());
        tail.extend_from_slice(a);
        tail.extend_from_slice(b);
        text.push_str(&String::from_utf8_lossy(&tail));
        text
    }

    /// The last `max` bytes written (or fewer, if fewer were kept), as text.
    pub(crate) fn tail_text(&self, max: usize) -> String {
        let from_tail = self.tail.len().min(max);
        let from_head = (max - from_tail).min(self.head.len());
        let mut bytes = Vec::with_capacity(from_head + from_tail);
        // The head only contributes when nothing was dropped between it and the tail.
        if self.omitted == 0 {
            bytes.extend_from_slice(&self.head[self.head.len() - from_head..]);
        }
        bytes.extend(self.tail.iter().skip(self.tail.len() - from_tail));
        String::from_utf8_lossy(&bytes).into_owned()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn small_output_is_kept_whole() {
        let mut c = Capped::new(16);
        c.push(b"hello ");
        c.push(b"world");
        assert_eq!(c.text(), "hello world");
        assert_eq!(c.omitted(), 0);
        assert_eq!(c.tail_text(5), "world");
        assert_eq!(c.tail_text(100), "hello world");
    }

    #[test]
    fn the_middle_is_dropped_and_counted() {
        let mut c = Capped::new(8);
        for chunk in [&b"abcd"[..], b"efgh", b"ijkl", b"mn"] {
            c.push(chunk);
        }
        assert_eq!(c.omitted(), 6, "14 bytes written, 8 kept");
        assert_eq!(c.text(), "abcd\n[gavel: 6 bytes of output omitted]\nklmn");
        assert_eq!(c.tail_text(3), "lmn");
        assert_eq!(c.tail_text(10), "klmn", "dropped bytes are never glued in");
    }

    #[test]
    fn one_huge_write_keeps_its_own_head_and_tail() {
        let mut c = Capped::new(4);
        c.push(b"0123456789");
        assert_eq!(c.text(), "01\n[gavel: 6 bytes of output omitted]\n89");
    }

    #[test]
    fn a_zero_cap_keeps_nothing_but_counts() {
        let mut c = Capped::new(0);
        c.push(b"abc");
        assert_eq!(c.omitted(), 3);
        assert_eq!(c.tail_text(2), "");
    }
}
