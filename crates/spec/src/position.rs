//! A key-path → source-position index from a position-aware YAML parse (yaml-rust2's
//! marked events), so semantic errors can point at file:line:column.

use std::collections::BTreeMap;
use std::fmt;

use yaml_rust2::parser::{Event, MarkedEventReceiver, Parser};
use yaml_rust2::scanner::Marker;

/// One step of a path into the document.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Segment {
    /// A mapping key.
    Key(String),
    /// A sequence index.
    Index(usize),
}

/// A path into the document, e.g. `spec.variants[1].name`.
#[derive(Debug, Clone, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct KeyPath(pub Vec<Segment>);

impl KeyPath {
    /// The empty (root) path.
    pub fn root() -> Self {
        Self(Vec::new())
    }
    /// This path extended by a key.
    pub fn key(&self, k: &str) -> Self {
        let mut v = self.0.clone();
        v.push(Segment::Key(k.to_owned()));
        Self(v)
    }
    /// This path extended by an index.
    pub fn index(&self, i: usize) -> Self {
        let mut v = self.0.clone();
        v.push(Segment::Index(i));
        Self(v)
    }
    /// Parse a dotted path as printed (`spec.variants[1].name`).
    pub fn parse(s: &str) -> Self {
        let mut out = Vec::new();
        for part in s.split('.').filter(|p| !p.is_empty()) {
            let mut rest = part;
            if let Some(b) = rest.find('[') {
                out.push(Segment::Key(rest[..b].to_owned()));
                rest = &rest[b..];
                while let Some(stripped) = rest.strip_prefix('[') {
                    let end = stripped.find(']').unwrap_or(stripped.len());
                    if let Ok(i) = stripped[..end].parse() {
                        out.push(Segment::Index(i));
                    }
                    rest = stripped.get(end + 1..).unwrap_or("");
                }
            } else {
                out.push(Segment::Key(rest.to_owned()));
            }
        }
        Self(out)
    }
    /// From a JSON pointer (`/spec/variants/1/name`); numeric segments become indices.
    pub fn from_json_pointer(p: &str) -> Self {
        let segs = p
            .split('/')
            .skip(1)
            .map(|s| s.replace("~1", "/").replace("~0", "~"))
            .map(|s| match s.parse::<usize>() {
                Ok(i) => Segment::Index(i),
                Err(_) => Segment::Key(s),
            })
            .collect();
        Self(segs)
    }
    /// The parent path (the root's parent is the root).
    pub fn parent(&self) -> Self {
        let mut v = self.0.clone();
        v.pop();
        Self(v)
    }
    /// The last key name in the path, skipping indices.
    pub fn last_key(&self) -> Option<&str> {
        self.0.iter().rev().find_map(|s| match s {
            Segment::Key(k) => Some(k.as_str()),
            Segment::Index(_) => None,
        })
    }
}

impl fmt::Display for KeyPath {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.0.is_empty() {
            return f.write_str("(document)");
        }
        for (i, s) in self.0.iter().enumerate() {
            match s {
                Segment::Key(k) if i == 0 => write!(f, "{k}")?,
                Segment::Key(k) => write!(f, ".{k}")?,
                Segment::Index(n) => write!(f, "[{n}]")?,
            }
        }
        Ok(())
    }
}

/// 1-based line and column in the source.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub struct Pos {
    /// Line, from 1.
    pub line: usize,
    /// Column, from 1.
    pub col: usize,
}

/// Positions of every key (the key token) and sequence item (the item's start).
#[derive(Debug, Default)]
pub struct PositionIndex {
    map: BTreeMap<KeyPath, Pos>,
    duplicates: Vec<(KeyPath, Pos)>,
}

impl PositionIndex {
    /// Index a YAML document. Syntax errors yield an empty index (they are reported by the
    /// syntax check with their own position).
    pub fn build(src: &str) -> Self {
        let mut b = Builder::default();
        let mut parser = Parser::new_from_str(src);
        if parser.load(&mut b, false).is_err() {
            return Self::default();
        }
        Self {
            map: b.map,
            duplicates: b.duplicates,
        }
    }

    /// Keys written twice in one mapping (YAML forbids it; parsers silently keep one).
    pub fn duplicates(&self) -> &[(KeyPath, Pos)] {
        &self.duplicates
    }

    /// Position of `path`, or of its nearest ancestor that has one.
    pub fn locate(&self, path: &KeyPath) -> Option<Pos> {
        let mut p = path.clone();
        loop {
            if let Some(pos) = self.map.get(&p) {
                return Some(*pos);
            }
            if p.0.is_empty() {
                return None;
            }
            p = p.parent();
        }
    }

    /// Position of exactly `path`, if indexed.
    pub fn exact(&self, path: &KeyPath) -> Option<Pos> {
        self.map.get(path).copied()
    }
}

enum Frame {
    Map {
        path: KeyPath,
        pending_key: Option<String>,
    },
    Seq {
        path: KeyPath,
        next: usize,
    },
}

#[derive(Default)]
struct Builder {
    stack: Vec<Frame>,
    map: BTreeMap<KeyPath, Pos>,
    duplicates: Vec<(KeyPath, Pos)>,
    root_done: bool,
}

fn pos(m: Marker) -> Pos {
    Pos {
        line: m.line(),
        col: m.col() + 1,
    }
}

impl Builder {
    /// Where the next value goes: its path, and whether the event is a mapping key.
    fn next_slot(&mut self, mark: Marker) -> Option<(KeyPath, bool)> {
        match self.stack.last_mut() {
            None => Some((KeyPath::root(), false)),
            Some(Frame::Map { path, pending_key }) => match pending_key.take() {
                Some(k) => Some((path.key(&k), false)),
                None => Some((path.clone(), true)),
            },
            Some(Frame::Seq { path, next }) => {
                let p = path.index(*next);
                *next += 1;
                self.map.entry(p.clone()).or_insert(pos(mark));
                Some((p, false))
            }
        }
    }
}

impl MarkedEventReceiver for Builder {
    fn on_event(&mut self, ev: Event, mark: Marker) {
        if self.root_done {
            return;
        }
        match ev {
            Event::Scalar(value, ..) => {
                if let Some((path, is_key)) = self.next_slot(mark)
                    && is_key
                {
                    let key_path = path.key(&value);
                    match self.map.entry(key_path) {
                        std::collections::btree_map::Entry::Occupied(e) => {
                            self.duplicates.push((e.key().clone(), pos(mark)));
                        }
                        std::collections::btree_map::Entry::Vacant(e) => {
                            e.insert(pos(mark));
                        }
                    }
                    if let Some(Frame::Map { pending_key, .. }) = self.stack.last_mut() {
                        *pending_key = Some(value);
                    }
                }
            }
            Event::Alias(_) => {
                let _ = self.next_slot(mark);
            }
            Event::MappingStart(..) => {
                if let Some((path, is_key)) = self.next_slot(mark) {
                    // Complex (mapping) keys are not indexed; their values land on the parent.
                    let _ = is_key;
                    self.stack.push(Frame::Map {
                        path,
                        pending_key: None,
                    });
                }
            }
            Event::SequenceStart(..) => {
                if let Some((path, _)) = self.next_slot(mark) {
                    self.stack.push(Frame::Seq { path, next: 0 });
                }
            }
            Event::MappingEnd | Event::SequenceEnd => {
                self.stack.pop();
                if self.stack.is_empty() {
                    self.root_done = true;
                }
            }
            _ => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn indexes_keys_and_items() {
        let src = "a: 1\nb:\n  c: [x, y]\n  d:\n    - e: 2\n    - f: 3\n";
        let idx = PositionIndex::build(src);
        assert_eq!(
            idx.exact(&KeyPath::parse("a")),
            Some(Pos { line: 1, col: 1 })
        );
        assert_eq!(
            idx.exact(&KeyPath::parse("b.c")),
            Some(Pos { line: 3, col: 3 })
        );
        assert_eq!(
            idx.exact(&KeyPath::parse("b.d[1].f")),
            Some(Pos { line: 6, col: 7 })
        );
        assert_eq!(
            idx.locate(&KeyPath::parse("b.d[1].f.zz")),
            Some(Pos { line: 6, col: 7 })
        );
        assert_eq!(
            KeyPath::parse("spec.variants[1].name").to_string(),
            "spec.variants[1].name"
        );
        assert_eq!(
            KeyPath::from_json_pointer("/spec/variants/1/name"),
            KeyPath::parse("spec.variants[1].name")
        );
    }
}
