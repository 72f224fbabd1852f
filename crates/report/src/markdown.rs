//! `report.md`: the document as GitHub-flavoured Markdown, the plots as linked SVG images.

use super::Exporter;
use super::content::document;
use super::doc::{Block, Document, Line, Span};
use super::error::ReportError;
use super::model::Report;

/// The Markdown report.
#[derive(Debug, Clone, Copy, Default)]
pub struct Markdown;

/// Escape what Markdown would read as markup, and no more, so the raw file stays readable:
/// backslashes, `*`, backticks, pipes (tables), `<` before a tag-like character, `_` at a
/// word edge (GitHub ignores intra-word underscores), newlines.
fn escape(s: &str) -> String {
    let chars: Vec<char> = s.chars().collect();
    let mut out = String::with_capacity(s.len());
    for (i, &c) in chars.iter().enumerate() {
        let prev = i.checked_sub(1).and_then(|j| chars.get(j)).copied();
        let next = chars.get(i + 1).copied();
        let word = |c: Option<char>| c.is_some_and(char::is_alphanumeric);
        let escape = match c {
            '\\' | '*' | '`' | '|' => true,
            '<' => next.is_some_and(|n| n.is_ascii_alphabetic() || matches!(n, '/' | '!' | '?')),
            '_' => !(word(prev) && word(next)),
            _ => false,
        };
        if escape {
            out.push('\\');
        }
        out.push(if c == '\n' { ' ' } else { c });
    }
    out
}

fn code(s: &str) -> String {
    let s = s.replace('\n', " ");
    if s.contains('`') {
        format!("`` {s} ``")
    } else {
        format!("`{s}`")
    }
}

/// One line of spans.
pub fn line(spans: &Line) -> String {
    spans_md(spans, false)
}

/// Spans as Markdown; in a table cell a pipe must be escaped even inside a code span.
fn spans_md(spans: &Line, table: bool) -> String {
    spans
        .iter()
        .map(|s| match s {
            Span::Text(x) => escape(x),
            Span::Code(x) if table => code(x).replace('|', "\\|"),
            Span::Code(x) => code(x),
            Span::Strong(x) => format!("**{}**", escape(x)),
            Span::Link { text, href } => format!("[{}]({href})", escape(text)),
            Span::Flag(n) => format!("<sup>[{n}]</sup>"),
        })
        .collect()
}

fn cell(spans: &Line) -> String {
    spans_md(spans, true)
}

/// The document as Markdown.
pub fn render(doc: &Document) -> String {
    let mut out = format!("# {}\n", escape(&doc.title));
    for b in &doc.blocks {
        out.push('\n');
        match b {
            Block::Heading(level, text) => {
                out.push_str(&format!(
                    "{} {}\n",
                    "#".repeat(usize::from(*level)),
                    escape(text)
                ));
            }
            Block::Para(l) => out.push_str(&format!("{}\n", line(l))),
            Block::List(items) => {
                for i in items {
                    out.push_str(&format!("- {}\n", line(i)));
                }
            }
            Block::Table {
                header,
                right,
                rows,
            } => {
                out.push_str(&format!("| {} |\n", header.join(" | ")));
                let rule: Vec<&str> = (0..header.len())
                    .map(|i| {
                        if right.get(i).copied().unwrap_or(false) {
                            "---:"
                        } else {
                            "---"
                        }
                    })
                    .collect();
                out.push_str(&format!("|{}|\n", rule.join("|")));
                for r in rows {
                    let cells: Vec<String> = r.iter().map(cell).collect();
                    out.push_str(&format!("| {} |\n", cells.join(" | ")));
                }
            }
            Block::Figure { file, alt, caption } => {
                out.push_str(&format!(
                    "![{}]({file})\n\n*{}*\n",
                    escape(alt),
                    line(caption)
                ));
            }
            Block::Flag {
                number,
                level,
                id,
                scope,
                items,
            } => {
                out.push_str(&format!(
                    "**[{number}] {}** ({level}) — {}\n\n",
                    code(id),
                    escape(scope)
                ));
                let one_action = items.windows(2).all(|w| w[0].1 == w[1].1);
                for (evidence, action) in items {
                    if one_action {
                        out.push_str(&format!("- {}\n", escape(evidence)));
                    } else {
                        out.push_str(&format!("- {} → *{}*\n", escape(evidence), escape(action)));
                    }
                }
                if let (true, Some((_, action))) = (one_action, items.first()) {
                    out.push_str(&format!("\n*Action:* {}\n", escape(action)));
                }
            }
            Block::Code(text) => out.push_str(&format!("```\n{text}\n```\n")),
        }
    }
    out
}

impl Exporter for Markdown {
    fn file_name(&self) -> String {
        "report.md".into()
    }

    fn export(&self, report: &Report) -> Result<String, ReportError> {
        Ok(render(&document(report)))
    }
}
