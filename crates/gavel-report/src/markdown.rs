//! Markdown from models, rendered as HTML that cannot run anything. Model output is untrusted:
//! raw HTML in it is shown as text, links keep only `http`, `https`, `mailto` and relative
//! targets (a `javascript:` or `data:` link points nowhere), and images become links, so a page
//! never fetches what a draft names.

use pulldown_cmark::{CowStr, Event, LinkType, Options, Parser, Tag, TagEnd, html};

/// `text` (Markdown) as safe HTML.
pub fn to_html(text: &str) -> String {
    let mut options = Options::empty();
    options.insert(Options::ENABLE_TABLES);
    options.insert(Options::ENABLE_TASKLISTS);
    options.insert(Options::ENABLE_STRIKETHROUGH);
    let events = Parser::new_ext(text, options).map(|event| match event {
        // Raw HTML is text.
        Event::Html(raw) | Event::InlineHtml(raw) => Event::Text(raw),
        Event::Start(Tag::Link {
            link_type,
            dest_url,
            title,
            id,
        }) => Event::Start(Tag::Link {
            link_type,
            dest_url: safe_url(dest_url),
            title,
            id,
        }),
        // An image is shown as a link to it: nothing is fetched when the page opens.
        Event::Start(Tag::Image {
            dest_url,
            title,
            id,
            ..
        }) => Event::Start(Tag::Link {
            link_type: LinkType::Inline,
            dest_url: safe_url(dest_url),
            title,
            id,
        }),
        // Every image started a link above, nested ones too.
        Event::End(TagEnd::Image) => Event::End(TagEnd::Link),
        other => other,
    });
    let mut out = String::with_capacity(text.len() * 3 / 2);
    html::push_html(&mut out, events);
    out
}

/// `url` when it is safe to follow from a page, `#` otherwise.
pub fn safe_url(url: CowStr<'_>) -> CowStr<'_> {
    if is_safe_url(&url) {
        url
    } else {
        CowStr::Borrowed("#")
    }
}

/// Whether a link target is `http`, `https`, `mailto` or relative. Browsers drop tabs and line
/// breaks from URLs and ignore leading spaces and control characters, so those are removed
/// before the scheme is read (`java\tscript:` is `javascript:`).
pub fn is_safe_url(url: &str) -> bool {
    let cleaned: String = url
        .chars()
        .filter(|c| !c.is_ascii_control() && *c != ' ')
        .collect();
    let Some(colon) = cleaned.find(':') else {
        return true;
    };
    let before = &cleaned[..colon];
    if before.contains(['/', '?', '#']) {
        // `a/b:c`, `?x=y:z`, `#p:q`: a relative reference, no scheme.
        return true;
    }
    matches!(
        before.to_ascii_lowercase().as_str(),
        "http" | "https" | "mailto"
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn raw_html_from_a_model_is_text() {
        let html = to_html("Hi <script>alert(1)</script> and <img src=x onerror=alert(2)>\n");
        assert!(!html.contains("<script"), "{html}");
        assert!(!html.contains("<img"), "{html}");
        assert!(html.contains("&lt;script&gt;"), "{html}");
        let block = to_html("<div onclick=\"x()\">\n<script>bad()</script>\n</div>\n");
        assert!(
            !block.contains("<script") && !block.contains("<div"),
            "{block}"
        );
    }

    #[test]
    fn links_keep_only_safe_schemes() {
        for bad in [
            "javascript:alert(1)",
            "JavaScript:alert(1)",
            " javascript:alert(1)",
            "java\tscript:alert(1)",
            "java\nscript:alert(1)",
            "\u{1}javascript:alert(1)",
            "data:text/html,<script>alert(1)</script>",
            "vbscript:msgbox(1)",
            "file:///etc/passwd",
        ] {
            assert!(!is_safe_url(bad), "{bad:?}");
        }
        for good in [
            "https://example.com/a:b",
            "http://x",
            "mailto:a@b.c",
            "docs/a.md",
            "../b.md#part:two",
            "?q=a:b",
            "#top",
        ] {
            assert!(is_safe_url(good), "{good:?}");
        }
        let html = to_html("[click](javascript:alert(1)) [ok](https://example.com)\n");
        assert!(!html.contains("javascript"), "{html}");
        assert!(html.contains("href=\"#\""), "{html}");
        assert!(html.contains("href=\"https://example.com\""), "{html}");
    }

    #[test]
    fn images_become_links_and_fetch_nothing() {
        let html = to_html("![tracker](https://evil.example/pixel.png)\n");
        assert!(!html.contains("<img"), "{html}");
        assert!(
            html.contains("<a href=\"https://evil.example/pixel.png\">tracker</a>"),
            "{html}"
        );
    }

    #[test]
    fn nested_images_leave_balanced_links() {
        let html = to_html("![a ![b](https://x/c.png)](https://x/d.png)\n");
        assert_eq!(
            html.matches("<a ").count(),
            html.matches("</a>").count(),
            "{html}"
        );
        assert!(!html.contains("<img"), "{html}");
    }

    #[test]
    fn ordinary_markdown_renders() {
        let html = to_html("# Title\n\n| a | b |\n|---|---|\n| 1 | 2 |\n\n- [x] done\n");
        assert!(html.contains("<h1>Title</h1>"), "{html}");
        assert!(html.contains("<table>"), "{html}");
        assert!(html.contains("checkbox"), "{html}");
    }
}
