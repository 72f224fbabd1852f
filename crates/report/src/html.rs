//! `report.html`: the document as ONE self-contained file — CSS inline, every plot inlined
//! as SVG, no scripts, fonts, images or links that leave the file. A Content-Security-Policy
//! forbids any network fetch, so the page renders the same offline.

use super::Exporter;
use super::content::document;
use super::doc::{Block, Document, Line, Span};
use super::error::ReportError;
use super::model::Report;
use super::plots;

/// The HTML report.
#[derive(Debug, Clone, Copy, Default)]
pub struct Html;

const CSS: &str = "\
:root{color-scheme:light}\
body{margin:0;background:#fff;color:#1b1b1b;font:15px/1.5 system-ui,-apple-system,'Segoe UI',\
Roboto,'Helvetica Neue',Arial,sans-serif}\
main{max-width:1180px;margin:0 auto;padding:24px 32px 64px}\
h1{font-size:26px;margin:8px 0 12px}h2{font-size:21px;margin:36px 0 10px;\
border-bottom:1px solid #ddd;padding-bottom:4px}h3{font-size:17px;margin:24px 0 8px}\
code,pre{font-family:ui-monospace,SFMono-Regular,Menlo,Consolas,monospace;font-size:13px}\
code{background:#f3f3f3;padding:1px 4px;border-radius:3px;overflow-wrap:break-word}\
pre{background:#f6f6f6;padding:10px 12px;border-radius:4px;white-space:pre-wrap;\
overflow-wrap:anywhere}\
table{border-collapse:collapse;margin:8px 0 16px;font-size:14px}\
th,td{border:1px solid #d8d8d8;padding:4px 8px;text-align:left;vertical-align:top}\
th{background:#f4f4f4}td.num,th.num{text-align:right;font-variant-numeric:tabular-nums}\
figure{margin:18px 0 30px}figure svg{display:block;max-width:100%;height:auto;\
border:1px solid #eee}\
figcaption{color:#444;font-size:14px;margin-top:6px;max-width:960px}\
.flag{margin:10px 0;padding:8px 12px;border-left:4px solid #d62728;background:#fdf3f3}\
.flag.look{border-left-color:#e69f00;background:#fdf8ee}\
.mark{color:#d62728;font-weight:bold;text-decoration:none}\
.verdict-improved{color:#08743b;font-weight:bold}.verdict-regressed{color:#b00020;\
font-weight:bold}";

/// Escape text for HTML.
pub fn escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

fn line(spans: &Line) -> String {
    spans
        .iter()
        .map(|s| match s {
            Span::Text(x) => escape(x),
            Span::Code(x) => format!("<code>{}</code>", escape(x)),
            Span::Strong(x) => match x.as_str() {
                "improved" | "regressed" => {
                    format!("<strong class=\"verdict-{x}\">{}</strong>", escape(x))
                }
                _ => format!("<strong>{}</strong>", escape(x)),
            },
            Span::Link { text, href } => {
                format!("<a href=\"{}\">{}</a>", escape(href), escape(text))
            }
            Span::Flag(n) => format!("<a class=\"mark\" href=\"#flag-{n}\">[{n}]</a>"),
        })
        .collect()
}

/// A heading's anchor: lower-case letters and digits, runs of anything else as one `-`.
pub fn slug(text: &str) -> String {
    let mut out = String::new();
    for c in text.chars() {
        if c.is_ascii_alphanumeric() {
            out.push(c.to_ascii_lowercase());
        } else if !out.ends_with('-') && !out.is_empty() {
            out.push('-');
        }
    }
    out.trim_end_matches('-').to_owned()
}

/// An SVG for inlining: HTML puts `<svg>` in the SVG namespace by itself, so the namespace
/// URL is dropped (the page then names no URL at all).
pub fn inline_svg(svg: &str) -> String {
    svg.replacen(" xmlns=\"http://www.w3.org/2000/svg\"", "", 1)
}

fn block(out: &mut String, b: &Block, svgs: &[(String, String)]) {
    match b {
        Block::Heading(level, text) => {
            out.push_str(&format!(
                "<h{level} id=\"{}\">{}</h{level}>\n",
                slug(text),
                escape(text)
            ));
        }
        Block::Para(l) => out.push_str(&format!("<p>{}</p>\n", line(l))),
        Block::List(items) => {
            out.push_str("<ul>\n");
            for i in items {
                out.push_str(&format!("<li>{}</li>\n", line(i)));
            }
            out.push_str("</ul>\n");
        }
        Block::Table {
            header,
            right,
            rows,
        } => {
            let class = |i: usize| {
                if right.get(i).copied().unwrap_or(false) {
                    " class=\"num\""
                } else {
                    ""
                }
            };
            out.push_str("<table>\n<thead><tr>");
            for (i, h) in header.iter().enumerate() {
                // Header cells may carry Markdown code ticks around file names.
                let h = escape(h.trim_matches('`'));
                out.push_str(&format!("<th{}>{h}</th>", class(i)));
            }
            out.push_str("</tr></thead>\n<tbody>\n");
            for r in rows {
                out.push_str("<tr>");
                for (i, c) in r.iter().enumerate() {
                    out.push_str(&format!("<td{}>{}</td>", class(i), line(c)));
                }
                out.push_str("</tr>\n");
            }
            out.push_str("</tbody>\n</table>\n");
        }
        Block::Figure { file, alt, caption } => {
            let svg = svgs
                .iter()
                .find(|(f, _)| f == file)
                .map(|(_, s)| inline_svg(s))
                .unwrap_or_else(|| format!("<p>({} could not be drawn)</p>", escape(file)));
            out.push_str(&format!(
                "<figure role=\"img\" aria-label=\"{}\">\n{svg}<figcaption>{}</figcaption>\n</figure>\n",
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
            let class = if level == "look" { "flag look" } else { "flag" };
            out.push_str(&format!(
                "<div class=\"{class}\" id=\"flag-{number}\"><strong>[{number}] <code>{}</code>\
                 </strong> ({}) — {}\n<ul>\n",
                escape(id),
                escape(level),
                escape(scope)
            ));
            let one_action = items.windows(2).all(|w| w[0].1 == w[1].1);
            for (evidence, action) in items {
                if one_action {
                    out.push_str(&format!("<li>{}</li>\n", escape(evidence)));
                } else {
                    out.push_str(&format!(
                        "<li>{} → <em>{}</em></li>\n",
                        escape(evidence),
                        escape(action)
                    ));
                }
            }
            out.push_str("</ul>\n");
            if let (true, Some((_, action))) = (one_action, items.first()) {
                out.push_str(&format!("<p><em>Action:</em> {}</p>\n", escape(action)));
            }
            out.push_str("</div>\n");
        }
        Block::Code(text) => out.push_str(&format!("<pre>{}</pre>\n", escape(text))),
    }
}

/// The document as one HTML page, with `svgs` (file name, SVG text) inlined.
pub fn render(doc: &Document, svgs: &[(String, String)]) -> String {
    let mut body = String::new();
    for b in &doc.blocks {
        block(&mut body, b, svgs);
    }
    format!(
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n\
         <meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; \
         style-src 'unsafe-inline'\">\n\
         <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n\
         <title>{title}</title>\n<style>{CSS}</style>\n</head>\n<body>\n<main>\n\
         <h1>{title}</h1>\n{body}</main>\n</body>\n</html>\n",
        title = escape(&doc.title)
    )
}

impl Exporter for Html {
    fn file_name(&self) -> String {
        "report.html".into()
    }

    fn export(&self, report: &Report) -> Result<String, ReportError> {
        let svgs = plots::all(report)
            .into_iter()
            .map(|f| Ok((f.exporter.file_name(), f.exporter.export(report)?)))
            .collect::<Result<Vec<_>, ReportError>>()?;
        Ok(render(&document(report), &svgs))
    }
}
