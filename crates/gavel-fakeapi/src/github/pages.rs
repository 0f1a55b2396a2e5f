//! GitHub's pagination: `per_page` (default 30, at most 100) and `page` (from 1) cut a list,
//! and the `link` header points at the other pages.
//!
//! Clients follow the `link` header rather than counting pages, so it must be exactly
//! GitHub's: absolute URLs on the host the client asked (with GitHub Enterprise's `/api/v3`
//! prefix kept), every other query parameter kept, relations in GitHub's order (`prev`,
//! `next`, `last`, `first`), and no header at all when everything fits on one page.

/// The query parameters of a request, decoded, in order.
pub(crate) fn query_pairs(query: &str) -> Vec<(String, String)> {
    query
        .split('&')
        .filter(|p| !p.is_empty())
        .map(|pair| {
            let (k, v) = pair.split_once('=').unwrap_or((pair, ""));
            (decode(k), decode(v))
        })
        .collect()
}

/// Percent-decoding, with `+` as a space (as in form-encoded queries).
fn decode(s: &str) -> String {
    let bytes = s.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'+' => out.push(b' '),
            b'%' if i + 2 < bytes.len() => match (hex(bytes[i + 1]), hex(bytes[i + 2])) {
                (Some(hi), Some(lo)) => {
                    out.push(hi * 16 + lo);
                    i += 2;
                }
                _ => out.push(b'%'),
            },
            b => out.push(b),
        }
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

fn hex(b: u8) -> Option<u8> {
    char::from(b)
        .to_digit(16)
        .and_then(|d| u8::try_from(d).ok())
}

/// Percent-encoding of a path segment or query value (everything but RFC 3986's unreserved
/// characters).
pub(crate) fn encode(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for b in s.bytes() {
        if b.is_ascii_alphanumeric() || matches!(b, b'-' | b'.' | b'_' | b'~') {
            out.push(char::from(b));
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

/// Which page of a list a request asked for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Page {
    pub per_page: usize,
    pub page: usize,
}

impl Page {
    /// `per_page` and `page` from a query; values that are not numbers get the defaults, as on
    /// GitHub.
    pub fn from_query(pairs: &[(String, String)]) -> Self {
        let get = |name: &str| {
            pairs
                .iter()
                .rev()
                .find(|(k, _)| k == name)
                .and_then(|(_, v)| v.trim().parse::<usize>().ok())
        };
        Self {
            per_page: get("per_page").filter(|n| *n > 0).unwrap_or(30).min(100),
            page: get("page").filter(|n| *n > 0).unwrap_or(1),
        }
    }

    /// This page's items.
    pub fn cut<T>(&self, items: Vec<T>) -> Vec<T> {
        items
            .into_iter()
            .skip((self.page - 1).saturating_mul(self.per_page))
            .take(self.per_page)
            .collect()
    }

    /// The `link` header for a list of `total` items, `None` when it fits on one page.
    /// `base` is the absolute URL of the request without its query.
    pub fn link(&self, total: usize, base: &str, pairs: &[(String, String)]) -> Option<String> {
        let last = total.div_ceil(self.per_page).max(1);
        if last <= 1 {
            return None;
        }
        let url = |page: usize| {
            let mut query: Vec<String> = pairs
                .iter()
                .filter(|(k, _)| k != "page")
                .map(|(k, v)| format!("{}={}", encode(k), encode(v)))
                .collect();
            query.push(format!("page={page}"));
            format!("<{base}?{}>", query.join("&"))
        };
        let mut rels = Vec::new();
        if self.page > 1 {
            rels.push(format!("{}; rel=\"prev\"", url((self.page - 1).min(last))));
        }
        if self.page < last {
            rels.push(format!("{}; rel=\"next\"", url(self.page + 1)));
            rels.push(format!("{}; rel=\"last\"", url(last)));
        }
        if self.page > 1 {
            rels.push(format!("{}; rel=\"first\"", url(1)));
        }
        Some(rels.join(", "))
    }
}

#[cfg(test)]
mod unit {
    use super::*;

    #[test]
    fn queries_decode_and_pages_default_and_cap() {
        let pairs = query_pairs("labels=good%20first+issue&per_page=500&page=x");
        assert_eq!(pairs[0], ("labels".into(), "good first issue".into()));
        let page = Page::from_query(&pairs);
        assert_eq!(
            page,
            Page {
                per_page: 100,
                page: 1
            }
        );
        assert_eq!(decode("100%"), "100%");
        assert_eq!(decode("%e2%9c%93"), "✓");
    }

    #[test]
    fn the_link_header_names_the_other_pages_in_githubs_order() {
        let pairs = query_pairs("state=all&page=2&per_page=2");
        let page = Page::from_query(&pairs);
        let link = page.link(5, "http://h/repos/o/r/issues", &pairs);
        assert_eq!(
            link.as_deref(),
            Some(
                "<http://h/repos/o/r/issues?state=all&per_page=2&page=1>; rel=\"prev\", \
                 <http://h/repos/o/r/issues?state=all&per_page=2&page=3>; rel=\"next\", \
                 <http://h/repos/o/r/issues?state=all&per_page=2&page=3>; rel=\"last\", \
                 <http://h/repos/o/r/issues?state=all&per_page=2&page=1>; rel=\"first\""
            )
        );
        assert_eq!(
            page.link(4, "http://h/x", &pairs)
                .map(|l| l.contains("next")),
            Some(false)
        );
        assert_eq!(Page::from_query(&[]).link(30, "http://h/x", &[]), None);
    }
}
