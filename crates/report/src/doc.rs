//! The report as a small document tree, built once ([`super::content`]) and written as
//! Markdown ([`super::markdown`]) or HTML ([`super::html`]), so both say the same thing.

/// Inline text.
#[derive(Debug, Clone, PartialEq)]
pub enum Span {
    /// Plain text.
    Text(String),
    /// Monospace (`code`).
    Code(String),
    /// Bold.
    Strong(String),
    /// A link to a file beside the report.
    Link {
        /// Link text.
        text: String,
        /// Relative path.
        href: String,
    },
    /// A footnote marker that points at a numbered flag (`[2]`), drawn in red.
    Flag(usize),
}

/// A run of spans.
pub type Line = Vec<Span>;

/// A block.
#[derive(Debug, Clone, PartialEq)]
pub enum Block {
    /// A heading of level 1–3.
    Heading(u8, String),
    /// A paragraph.
    Para(Line),
    /// A bulleted list.
    List(Vec<Line>),
    /// A table; the first row is the header.
    Table {
        /// Header cells.
        header: Vec<String>,
        /// Right-align these columns (numbers).
        right: Vec<bool>,
        /// Body rows.
        rows: Vec<Vec<Line>>,
    },
    /// A plot: its SVG file and caption.
    Figure {
        /// File name beside the report.
        file: String,
        /// Short alternative text.
        alt: String,
        /// What to read in it.
        caption: Line,
    },
    /// A group of flags of one rule under one footnote number.
    Flag {
        /// Footnote number.
        number: usize,
        /// `re-baseline` or `look`.
        level: String,
        /// Rule id (`stale-baseline`).
        id: String,
        /// What it concerns (`output_throughput at c=4, c=16 — cutedsl vs cutlass`).
        scope: String,
        /// Each flag's evidence sentence and action.
        items: Vec<(String, String)>,
    },
    /// Preformatted text.
    Code(String),
}

/// The report.
#[derive(Debug, Clone, PartialEq)]
pub struct Document {
    /// Title.
    pub title: String,
    /// Blocks in order.
    pub blocks: Vec<Block>,
}

/// `Span::Text`.
pub fn t(s: impl Into<String>) -> Span {
    Span::Text(s.into())
}

/// `Span::Code`.
pub fn code(s: impl Into<String>) -> Span {
    Span::Code(s.into())
}

/// `Span::Strong`.
pub fn strong(s: impl Into<String>) -> Span {
    Span::Strong(s.into())
}
