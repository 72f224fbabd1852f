//! The drawing layer every plot shares: colours, the SVG canvas, the legend, and marks drawn
//! in pixel space (so that arms at the same x can be dodged apart); axes are in [`super::axis`].
//!
//! Conventions that the SVG tests rely on (`crates/report/tests/it/report_svg.rs`):
//! * a series is one `<polyline>` of stroke width 2 in its arm's colour (dashed series:
//!   several short ones);
//! * an error bar is one `<polyline>` of six points — bottom cap, stem, top cap — in its
//!   arm's colour;
//! * a trial is a filled `<circle>` of radius 3 at opacity 0.35;
//! * a flagged point is a `<circle>` of radius 10, unfilled, stroked [`FLAG_RED`], with its
//!   footnote marker (`[1]`) as red `<text>` beside it.

use plotters::coord::Shift;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

use crate::error::ReportError;

/// Colour of flag rings and markers.
pub const FLAG_RED: RGBColor = RGBColor(0xD6, 0x27, 0x28);
/// Okabe–Ito colours (distinguishable with colour-blindness), without the red-like one.
const PALETTE: [RGBColor; 6] = [
    RGBColor(0x00, 0x72, 0xB2),
    RGBColor(0xE6, 0x9F, 0x00),
    RGBColor(0x00, 0x9E, 0x73),
    RGBColor(0xCC, 0x79, 0xA7),
    RGBColor(0x56, 0xB4, 0xE9),
    RGBColor(0x33, 0x33, 0x33),
];
/// The ±θ band (drawn at opacity 0.6).
pub const BAND: RGBColor = RGBColor(0xD9, 0xD9, 0xD9);
/// Grid lines.
pub(super) const GRID: RGBColor = RGBColor(0xE4, 0xE4, 0xE4);
pub(super) const FONT: &str = "sans-serif";

/// The colour of arm `i`.
pub fn arm_color(i: usize) -> RGBColor {
    PALETTE[i % PALETTE.len()]
}

/// The whole figure: an SVG drawing area with absolute pixel coordinates.
pub type Root<'a> = DrawingArea<SVGBackend<'a>, Shift>;
/// Pixel-space drawing on the whole figure.
pub struct Canvas<'a> {
    /// The figure.
    pub root: Root<'a>,
    file: String,
    size: (i32, i32),
}

impl std::fmt::Debug for Canvas<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Canvas").field("file", &self.file).finish()
    }
}

/// Draw an SVG of `size` pixels; `draw` gets the blank white canvas.
pub fn svg(
    file: &str,
    size: (u32, u32),
    draw: impl FnOnce(&Canvas<'_>) -> Result<(), ReportError>,
) -> Result<String, ReportError> {
    let mut buf = String::new();
    {
        let root = SVGBackend::with_string(&mut buf, size).into_drawing_area();
        root.fill(&WHITE).map_err(|e| ReportError::plot(file, e))?;
        let canvas = Canvas {
            root,
            file: file.to_owned(),
            size: (size.0 as i32, size.1 as i32),
        };
        draw(&canvas)?;
        canvas
            .root
            .present()
            .map_err(|e| ReportError::plot(file, e))?;
    }
    Ok(buf)
}

/// Text width estimate in pixels (sans-serif averages about 0.56 em per character).
pub fn text_width(s: &str, size: u32) -> i32 {
    (s.chars().count() as f64 * f64::from(size) * 0.56).ceil() as i32
}

/// One legend entry.
#[derive(Debug, Clone, PartialEq)]
pub enum Key {
    /// A series: line (dashed or not) with a mean marker (hollow or filled).
    Series {
        /// Text.
        label: String,
        /// Arm colour.
        color: RGBColor,
        /// Dashed line, hollow marker.
        dashed: bool,
    },
    /// A plain line (no marker).
    Line {
        /// Text.
        label: String,
        /// Colour.
        color: RGBColor,
    },
    /// The faint per-trial dot.
    Trial(String),
    /// The flag ring.
    Flag(String),
    /// A shaded band.
    Band(String),
}

impl Canvas<'_> {
    fn err(&self, e: impl std::fmt::Display) -> ReportError {
        ReportError::plot(&self.file, e)
    }

    /// A polyline (stroke width `w`).
    pub fn line(&self, pts: &[(i32, i32)], color: RGBAColor, w: u32) -> Result<(), ReportError> {
        if pts.len() < 2 {
            return Ok(());
        }
        self.root
            .draw(&PathElement::new(pts.to_vec(), color.stroke_width(w)))
            .map_err(|e| self.err(e))
    }

    /// A dashed polyline.
    pub fn dashed(&self, pts: &[(i32, i32)], color: RGBAColor, w: u32) -> Result<(), ReportError> {
        if pts.len() < 2 {
            return Ok(());
        }
        self.root
            .draw(&plotters::element::DashedPathElement::new(
                pts.to_vec(),
                7,
                5,
                color.stroke_width(w),
            ))
            .map_err(|e| self.err(e))
    }

    /// A circle, filled or stroked.
    pub fn circle(
        &self,
        c: (i32, i32),
        r: u32,
        color: RGBAColor,
        filled: bool,
        w: u32,
    ) -> Result<(), ReportError> {
        let style = if filled {
            color.filled()
        } else {
            color.stroke_width(w)
        };
        self.root
            .draw(&Circle::new(c, r, style))
            .map_err(|e| self.err(e))
    }

    /// A series' mean marker: filled, or hollow (white inside) for dashed series.
    pub fn marker(&self, c: (i32, i32), color: RGBColor, hollow: bool) -> Result<(), ReportError> {
        if hollow {
            self.circle(c, 4, WHITE.to_rgba(), true, 1)?;
            self.circle(c, 4, color.to_rgba(), false, 2)
        } else {
            self.circle(c, 4, color.to_rgba(), true, 1)
        }
    }

    /// A vertical error bar from `lo` to `hi` (pixels) at `x`, with caps.
    pub fn error_bar(&self, x: i32, lo: i32, hi: i32, color: RGBColor) -> Result<(), ReportError> {
        let w = 5;
        let pts = [
            (x - w, lo),
            (x + w, lo),
            (x, lo),
            (x, hi),
            (x - w, hi),
            (x + w, hi),
        ];
        self.root
            .draw(&PathElement::new(pts.to_vec(), color.stroke_width(2)))
            .map_err(|e| self.err(e))
    }

    /// Flagged points: a red ring around each, then each footnote marker (`[1,2]`) at the
    /// first place around its ring that stays inside the figure and clear of the other
    /// rings, markers, `avoid` points (the means drawn) and earlier markers.
    pub fn flags(
        &self,
        rings: &[((i32, i32), Vec<usize>)],
        avoid: &[(i32, i32)],
    ) -> Result<(), ReportError> {
        type Box4 = (i32, i32, i32, i32);
        let overlaps = |a: &Box4, b: &Box4| a.0 < b.2 && b.0 < a.2 && a.1 < b.3 && b.1 < a.3;
        let mut taken: Vec<Box4> = rings
            .iter()
            .map(|((x, y), _)| (x - 10, y - 10, x + 10, y + 10))
            .chain(avoid.iter().map(|(x, y)| (x - 5, y - 5, x + 5, y + 5)))
            .collect();
        for (c, _) in rings {
            self.circle(*c, 10, FLAG_RED.to_rgba(), false, 2)?;
        }
        for ((x, y), numbers) in rings {
            let text = format!(
                "[{}]",
                numbers
                    .iter()
                    .map(ToString::to_string)
                    .collect::<Vec<_>>()
                    .join(",")
            );
            let w = text_width(&text, 14) + 2;
            let places = [
                (12, -13, HPos::Left),
                (12, 13, HPos::Left),
                (-12, -13, HPos::Right),
                (-12, 13, HPos::Right),
                (14, 0, HPos::Left),
                (-14, 0, HPos::Right),
                (0, -24, HPos::Center),
                (0, 24, HPos::Center),
                (12, -30, HPos::Left),
                (12, 30, HPos::Left),
            ];
            let boxed = |(dx, dy, h): (i32, i32, HPos)| {
                let (px, py) = (x + dx, y + dy);
                let b = match h {
                    HPos::Left => (px, py - 8, px + w, py + 8),
                    HPos::Right => (px - w, py - 8, px, py + 8),
                    HPos::Center => (px - w / 2, py - 8, px + w / 2, py + 8),
                };
                ((px, py), h, b)
            };
            let inside =
                |b: &Box4| b.0 >= 2 && b.1 >= 2 && b.2 <= self.size.0 - 2 && b.3 <= self.size.1 - 2;
            let chosen = places
                .iter()
                .map(|p| boxed(*p))
                .find(|(_, _, b)| inside(b) && !taken.iter().any(|t| overlaps(t, b)))
                .or_else(|| places.iter().map(|p| boxed(*p)).find(|(_, _, b)| inside(b)))
                .unwrap_or_else(|| boxed(places[0]));
            let (at, h, b) = chosen;
            taken.push(b);
            self.text(at, &text, 14, FLAG_RED, h, true)?;
        }
        Ok(())
    }

    /// Text at a pixel position.
    pub fn text(
        &self,
        at: (i32, i32),
        s: &str,
        size: u32,
        color: RGBColor,
        h: HPos,
        bold: bool,
    ) -> Result<(), ReportError> {
        let font = (FONT, f64::from(size) * 1.24).into_font();
        let font = if bold {
            font.style(FontStyle::Bold)
        } else {
            font
        };
        let style = font.color(&color).pos(Pos::new(h, VPos::Center));
        self.root
            .draw(&Text::new(s.to_owned(), at, style))
            .map_err(|e| self.err(e))
    }

    /// A filled rectangle.
    pub fn rect(&self, a: (i32, i32), b: (i32, i32), color: RGBAColor) -> Result<(), ReportError> {
        self.root
            .draw(&Rectangle::new([a, b], color.filled()))
            .map_err(|e| self.err(e))
    }

    /// Lay out the legend in rows from `(x, y)` within `width`; returns the rows' height.
    /// Call with `draw = false` first to reserve the space.
    pub fn legend(
        &self,
        keys: &[Key],
        (x0, y0): (i32, i32),
        width: i32,
        draw: bool,
    ) -> Result<i32, ReportError> {
        const ROW: i32 = 24;
        const SIZE: u32 = 14;
        let (mut x, mut y) = (x0, y0 + ROW / 2);
        for key in keys {
            let label = match key {
                Key::Series { label, .. } | Key::Trial(label) | Key::Flag(label) => label,
                Key::Band(label) | Key::Line { label, .. } => label,
            };
            let w = 34 + text_width(label, SIZE) + 22;
            if x > x0 && x + w > x0 + width {
                x = x0;
                y += ROW;
            }
            if draw {
                match key {
                    Key::Series { color, dashed, .. } => {
                        let pts = [(x, y), (x + 28, y)];
                        if *dashed {
                            self.dashed(&pts, color.to_rgba(), 2)?;
                        } else {
                            self.line(&pts, color.to_rgba(), 2)?;
                        }
                        self.marker((x + 14, y), *color, *dashed)?;
                    }
                    Key::Line { color, .. } => {
                        self.line(&[(x, y), (x + 28, y)], color.to_rgba(), 2)?;
                    }
                    Key::Trial(_) => {
                        self.circle((x + 14, y), 3, BLACK.mix(0.35), true, 1)?;
                    }
                    Key::Flag(_) => self.circle((x + 14, y), 8, FLAG_RED.to_rgba(), false, 2)?,
                    Key::Band(_) => self.rect((x, y - 7), (x + 28, y + 7), BAND.mix(0.6))?,
                }
                self.text((x + 34, y), label, SIZE, BLACK, HPos::Left, false)?;
            }
            x += w;
        }
        Ok(y + ROW / 2 - y0)
    }
}
