//! Charts as PNG and SVG with `plotters`: line charts with spread bands, grouped
//! bars and heatmaps, the three shapes Bauxite's reports need.
//!
//! Text is drawn with DejaVu Sans compiled into the binary (`assets/`, with its
//! licence), so charts render the same on a machine without any font installed.
//! Each chart is described as data ([`LineChart`], [`BarChart`], [`Heatmap`]) and
//! drawn once per backend, so the PNG and the SVG always show the same thing.

use std::path::{Path, PathBuf};
use std::sync::Once;

use plotters::coord::Shift;
use plotters::element::DashedPathElement;
use plotters::prelude::*;

/// The font every chart uses, shipped with the crate.
const FONT: &[u8] = include_bytes!("../assets/DejaVuSans.ttf");
const FAMILY: &str = "sans-serif";
const SIZE: (u32, u32) = (1000, 560);

/// Why a chart could not be written.
#[derive(Debug, thiserror::Error)]
#[error("chart {path}: {message}")]
pub struct ChartError {
    /// The file being written.
    pub path: PathBuf,
    /// What went wrong.
    pub message: String,
}

/// One line of a [`LineChart`], optionally with a shaded band (e.g. min–max across trials).
#[derive(Clone, Debug, Default)]
pub struct Series {
    /// Legend text.
    pub name: String,
    /// (x, y) points, in x order.
    pub points: Vec<(f64, f64)>,
    /// Points further apart in x than this are not joined: the gap shows as one.
    pub max_step: Option<f64>,
    /// (x, low, high) of the band around the line; empty for none.
    pub band: Vec<(f64, f64, f64)>,
}

/// Lines over a shared x axis.
#[derive(Clone, Debug, Default)]
pub struct LineChart {
    /// Title above the plot.
    pub title: String,
    /// X axis label.
    pub x_label: String,
    /// Y axis label.
    pub y_label: String,
    /// Logarithmic y axis (latencies spanning 0.1 ms to 500 ms need one).
    pub log_y: bool,
    /// The lines.
    pub series: Vec<Series>,
    /// Dashed horizontal reference lines: (y, label), e.g. a latency target.
    pub references: Vec<(f64, String)>,
    /// Dashed vertical markers: (x, label), e.g. the moment the link rate drops.
    pub markers: Vec<(f64, String)>,
}

/// Bars per category, one bar per group within each category.
#[derive(Clone, Debug, Default)]
pub struct BarChart {
    /// Title above the plot.
    pub title: String,
    /// Y axis label.
    pub y_label: String,
    /// Category names along the x axis.
    pub categories: Vec<String>,
    /// (group name, one value per category).
    pub groups: Vec<(String, Vec<f64>)>,
}

/// A grid of values with a colour scale and the value printed in each cell. The
/// scale runs from white at the chart's best value to deep red at its worst, where
/// best is the highest value if `higher_is_better` and the lowest otherwise.
#[derive(Clone, Debug, Default)]
pub struct Heatmap {
    /// Title above the plot.
    pub title: String,
    /// Row labels (top to bottom).
    pub rows: Vec<String>,
    /// Column labels (left to right).
    pub columns: Vec<String>,
    /// `values[row][column]`; NaN cells are left blank.
    pub values: Vec<Vec<f64>>,
    /// How cell values are printed, e.g. `ms` or `%`.
    pub unit: String,
    /// Whether a higher value is better (a fairness index) rather than worse (a
    /// delay, a loss): it decides which end of the colour scale is red.
    pub higher_is_better: bool,
    /// Decimals printed in each cell.
    pub decimals: usize,
}

/// Anything that can be drawn.
trait Draw {
    fn draw<DB: DrawingBackend>(&self, area: &DrawingArea<DB, Shift>) -> Result<(), String>;
}

fn register_font() {
    static ONCE: Once = Once::new();
    ONCE.call_once(|| {
        for style in [FontStyle::Normal, FontStyle::Bold] {
            // The font is part of the binary: failing to parse it is a build defect.
            plotters::style::register_font(FAMILY, style, FONT).unwrap_or_else(|_| panic!("bundled font is invalid"));
        }
    });
}

/// The files a chart is written as.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Formats {
    /// `<stem>.svg` alone. Rasterising and encoding a PNG costs many times what
    /// the SVG does: 7 % of the CPU of `sim study --family compare`, whole process.
    Svg,
    /// `<stem>.png` and `<stem>.svg`.
    PngAndSvg,
}

/// Draws `chart` into `<stem>.png` (if asked) and `<stem>.svg`; returns the paths.
fn write(chart: &impl Draw, stem: &Path, formats: Formats) -> Result<Vec<PathBuf>, ChartError> {
    register_font();
    let fail = |path: &Path, message: String| ChartError { path: path.to_path_buf(), message };
    let mut written = Vec::with_capacity(2);
    if formats == Formats::PngAndSvg {
        let png = stem.with_extension("png");
        let mut pixels = vec![0u8; (SIZE.0 * SIZE.1 * 3) as usize];
        {
            let area = BitMapBackend::with_buffer(&mut pixels, SIZE).into_drawing_area();
            chart.draw(&area).map_err(|e| fail(&png, e))?;
            area.present().map_err(|e| fail(&png, e.to_string()))?;
        }
        encode_png(&pixels, &png).map_err(|e| fail(&png, e.to_string()))?;
        written.push(png);
    }
    let svg = stem.with_extension("svg");
    {
        let area = SVGBackend::new(&svg, SIZE).into_drawing_area();
        chart.draw(&area).map_err(|e| fail(&svg, e))?;
        area.present().map_err(|e| fail(&svg, e.to_string()))?;
    }
    written.push(svg);
    Ok(written)
}

/// Writes an RGB image of [`SIZE`] as PNG. plotters' own encoder (the `image`
/// crate's) tries every filter on every row and deflates at zlib's default level,
/// which cost a study writing a few charts more CPU than some of its runs (15 % of
/// `sim study --family compare`). One filter (Paeth: a chart's flat areas predict
/// each pixel from its neighbours) and the PNG-specific fast deflate give files as
/// small (40–60 KB) for a fraction of the time.
fn encode_png(rgb: &[u8], path: &Path) -> Result<(), png::EncodingError> {
    let mut file = std::io::BufWriter::new(std::fs::File::create(path)?);
    let mut encoder = png::Encoder::new(&mut file, SIZE.0, SIZE.1);
    encoder.set_color(png::ColorType::Rgb);
    encoder.set_depth(png::BitDepth::Eight);
    encoder.set_compression(png::Compression::Fast);
    encoder.set_filter(png::FilterType::Paeth);
    encoder.set_adaptive_filter(png::AdaptiveFilterType::NonAdaptive);
    let mut writer = encoder.write_header()?;
    writer.write_image_data(rgb)?;
    // Finished and flushed here, so that a full disk is an error, not a short file.
    writer.finish()?;
    std::io::Write::flush(&mut file)?;
    Ok(())
}

impl LineChart {
    /// Writes `<stem>.png` and `<stem>.svg`.
    pub fn write(&self, stem: &Path) -> Result<Vec<PathBuf>, ChartError> {
        write(self, stem, Formats::PngAndSvg)
    }

    /// Writes `<stem>.svg`, and `<stem>.png` if `formats` asks for it.
    pub fn write_as(&self, stem: &Path, formats: Formats) -> Result<Vec<PathBuf>, ChartError> {
        write(self, stem, formats)
    }
}

impl BarChart {
    /// Writes `<stem>.png` and `<stem>.svg`.
    pub fn write(&self, stem: &Path) -> Result<Vec<PathBuf>, ChartError> {
        write(self, stem, Formats::PngAndSvg)
    }

    /// Writes `<stem>.svg`, and `<stem>.png` if `formats` asks for it.
    pub fn write_as(&self, stem: &Path, formats: Formats) -> Result<Vec<PathBuf>, ChartError> {
        write(self, stem, formats)
    }
}

impl Heatmap {
    /// Writes `<stem>.png` and `<stem>.svg`.
    pub fn write(&self, stem: &Path) -> Result<Vec<PathBuf>, ChartError> {
        write(self, stem, Formats::PngAndSvg)
    }

    /// Writes `<stem>.svg`, and `<stem>.png` if `formats` asks for it.
    pub fn write_as(&self, stem: &Path, formats: Formats) -> Result<Vec<PathBuf>, ChartError> {
        write(self, stem, formats)
    }
}

/// A distinct, print-friendly colour per line or group.
fn color(i: usize) -> RGBColor {
    const COLORS: [RGBColor; 12] = [
        RGBColor(0xd6, 0x27, 0x28),
        RGBColor(0x1f, 0x77, 0xb4),
        RGBColor(0x2c, 0xa0, 0x2c),
        RGBColor(0xff, 0x7f, 0x0e),
        RGBColor(0x94, 0x67, 0xbd),
        RGBColor(0x8c, 0x56, 0x4b),
        RGBColor(0x17, 0xbe, 0xcf),
        RGBColor(0x7f, 0x7f, 0x7f),
        RGBColor(0xbc, 0xbd, 0x22),
        RGBColor(0xe3, 0x77, 0xc2),
        RGBColor(0x00, 0x00, 0x00),
        RGBColor(0x99, 0x66, 0x00),
    ];
    COLORS[i % COLORS.len()]
}

fn err(e: impl std::fmt::Display) -> String {
    e.to_string()
}

/// The range `values` span, padded, and never empty.
fn span(values: impl Iterator<Item = f64>) -> (f64, f64) {
    let (lo, hi) =
        values.filter(|v| v.is_finite()).fold((f64::INFINITY, f64::NEG_INFINITY), |(l, h), v| (l.min(v), h.max(v)));
    if !lo.is_finite() {
        return (0.0, 1.0);
    }
    if hi - lo < 1e-12 { (lo - 0.5, hi + 0.5) } else { (lo, hi) }
}

impl Draw for LineChart {
    fn draw<DB: DrawingBackend>(&self, area: &DrawingArea<DB, Shift>) -> Result<(), String> {
        area.fill(&WHITE).map_err(err)?;
        // A log axis is drawn as log10 of the values with labels put back in units.
        let y = |v: f64| if self.log_y { v.max(1e-3).log10() } else { v };
        let xs = self.series.iter().flat_map(|s| s.points.iter().map(|p| p.0));
        let (x0, x1) = span(xs.chain(self.markers.iter().map(|m| m.0)));
        let ys =
            self.series.iter().flat_map(|s| s.points.iter().map(|p| p.1).chain(s.band.iter().flat_map(|b| [b.1, b.2])));
        let (y0, y1) = span(ys.chain(self.references.iter().map(|r| r.0)).map(y));
        let pad = (y1 - y0) * 0.05;
        let (y0, y1) = if self.log_y { (y0.floor(), y1.ceil()) } else { ((y0 - pad).min(0.0), y1 + pad) };
        let mut chart = ChartBuilder::on(area)
            .caption(&self.title, (FAMILY, 22))
            .margin(12)
            .x_label_area_size(40)
            .y_label_area_size(70)
            .build_cartesian_2d(x0..x1, y0..y1)
            .map_err(err)?;
        let log = self.log_y;
        let y_format = move |v: &f64| {
            if log {
                let u = 10f64.powf(*v);
                if u >= 1.0 { format!("{u:.0}") } else { format!("{u}") }
            } else {
                format!("{v:.3}").trim_end_matches('0').trim_end_matches('.').to_string()
            }
        };
        let mut mesh = chart.configure_mesh();
        mesh.x_desc(&self.x_label).y_desc(&self.y_label).y_label_formatter(&y_format).label_style((FAMILY, 14));
        if log {
            mesh.y_labels((y1 - y0) as usize + 1);
        }
        mesh.draw().map_err(err)?;
        for (i, s) in self.series.iter().enumerate() {
            let c = color(i);
            if !s.band.is_empty() {
                let mut outline: Vec<(f64, f64)> = s.band.iter().map(|b| (b.0, y(b.2))).collect();
                outline.extend(s.band.iter().rev().map(|b| (b.0, y(b.1))));
                chart.draw_series(std::iter::once(Polygon::new(outline, c.mix(0.18).filled()))).map_err(err)?;
            }
            let mut runs: Vec<Vec<(f64, f64)>> = Vec::new();
            for p in &s.points {
                match runs.last_mut() {
                    Some(run) if s.max_step.is_none_or(|step| p.0 - run[run.len() - 1].0 <= step) => run.push(*p),
                    _ => runs.push(vec![*p]),
                }
            }
            for (k, run) in runs.iter().enumerate() {
                let line = chart
                    .draw_series(LineSeries::new(run.iter().map(|p| (p.0, y(p.1))), c.stroke_width(2)))
                    .map_err(err)?;
                if k == 0 {
                    line.label(&s.name)
                        .legend(move |(x, yy)| PathElement::new(vec![(x, yy), (x + 20, yy)], c.stroke_width(3)));
                }
            }
        }
        let dashed = |from: (f64, f64), to: (f64, f64)| {
            DashedPathElement::new(vec![from, to], 6, 4, BLACK.mix(0.6).stroke_width(1))
        };
        for (value, label) in &self.references {
            let v = y(*value);
            chart.draw_series(std::iter::once(dashed((x0, v), (x1, v)))).map_err(err)?;
            chart.draw_series(std::iter::once(Text::new(label.clone(), (x0, v), (FAMILY, 13)))).map_err(err)?;
        }
        for (x, label) in &self.markers {
            chart.draw_series(std::iter::once(dashed((*x, y0), (*x, y1)))).map_err(err)?;
            chart.draw_series(std::iter::once(Text::new(label.clone(), (*x, y1), (FAMILY, 13)))).map_err(err)?;
        }
        chart
            .configure_series_labels()
            .position(emptiest_corner(
                self.series
                    .iter()
                    .flat_map(|s| s.points.iter())
                    .map(|p| ((p.0 - x0) / (x1 - x0), (y(p.1) - y0) / (y1 - y0))),
            ))
            .background_style(WHITE.mix(0.85))
            .border_style(BLACK.mix(0.4))
            .label_font((FAMILY, 14))
            .draw()
            .map_err(err)
    }
}

/// Where the legend hides the fewest points, given points in plot coordinates
/// scaled to 0..1 (x rightwards, y upwards).
fn emptiest_corner(points: impl Iterator<Item = (f64, f64)>) -> SeriesLabelPosition {
    // The legend covers roughly the outer 40 % × 45 % of a corner, or a band at mid-height.
    let places = [
        (SeriesLabelPosition::UpperLeft, 0.0..0.4, 0.55..1.01),
        (SeriesLabelPosition::UpperRight, 0.6..1.01, 0.55..1.01),
        (SeriesLabelPosition::MiddleRight, 0.6..1.01, 0.3..0.7),
        (SeriesLabelPosition::MiddleLeft, 0.0..0.4, 0.3..0.7),
        (SeriesLabelPosition::LowerRight, 0.6..1.01, 0.0..0.45),
        (SeriesLabelPosition::LowerLeft, 0.0..0.4, 0.0..0.45),
    ];
    let mut counts = [0usize; 6];
    for (x, y) in points {
        for (i, (_, xs, ys)) in places.iter().enumerate() {
            if xs.contains(&x) && ys.contains(&y) {
                counts[i] += 1;
            }
        }
    }
    let best = (0..places.len()).min_by_key(|i| counts[*i]).expect("six places");
    places.into_iter().nth(best).expect("in range").0
}

impl Draw for BarChart {
    fn draw<DB: DrawingBackend>(&self, area: &DrawingArea<DB, Shift>) -> Result<(), String> {
        area.fill(&WHITE).map_err(err)?;
        let n = self.categories.len().max(1);
        let (_, hi) = span(self.groups.iter().flat_map(|g| g.1.iter().copied()).chain([0.0]));
        let mut chart = ChartBuilder::on(area)
            .caption(&self.title, (FAMILY, 22))
            .margin(12)
            .x_label_area_size(40)
            .y_label_area_size(70)
            .build_cartesian_2d(0.0..n as f64, 0.0..hi * 1.1)
            .map_err(err)?;
        let names = self.categories.clone();
        let x_format = move |v: &f64| {
            let i = v.floor() as usize;
            if (v - i as f64 - 0.5).abs() < 1e-6 { names.get(i).cloned().unwrap_or_default() } else { String::new() }
        };
        chart
            .configure_mesh()
            .disable_x_mesh()
            .x_labels(2 * n + 1)
            .x_label_formatter(&x_format)
            .y_desc(&self.y_label)
            .label_style((FAMILY, 14))
            .draw()
            .map_err(err)?;
        let width = 0.8 / self.groups.len().max(1) as f64;
        for (g, (name, values)) in self.groups.iter().enumerate() {
            let c = color(g);
            let bars = values.iter().enumerate().filter(|(_, v)| v.is_finite()).map(|(i, v)| {
                let left = i as f64 + 0.1 + g as f64 * width;
                Rectangle::new([(left, 0.0), (left + width * 0.95, *v)], c.filled())
            });
            chart
                .draw_series(bars)
                .map_err(err)?
                .label(name)
                .legend(move |(x, y)| Rectangle::new([(x, y - 6), (x + 14, y + 6)], c.filled()));
        }
        chart
            .configure_series_labels()
            .position(SeriesLabelPosition::UpperRight)
            .background_style(WHITE.mix(0.85))
            .border_style(BLACK.mix(0.4))
            .label_font((FAMILY, 14))
            .draw()
            .map_err(err)
    }
}

/// A heatmap cell's colour: white at the best value of `(lo, hi)` to deep red at
/// the worst, the best being `hi` if `higher_is_better`, else `lo`. When every
/// value is the same nothing is worse than anything else: white.
fn heat_colour(value: f64, (lo, hi): (f64, f64), higher_is_better: bool) -> RGBColor {
    let worse = if higher_is_better { hi - value } else { value - lo };
    let t = if hi - lo > 1e-12 { (worse / (hi - lo)).clamp(0.0, 1.0) } else { 0.0 };
    RGBColor(255, (255.0 * (1.0 - 0.8 * t)) as u8, (255.0 * (1.0 - 0.85 * t)) as u8)
}

impl Draw for Heatmap {
    fn draw<DB: DrawingBackend>(&self, area: &DrawingArea<DB, Shift>) -> Result<(), String> {
        area.fill(&WHITE).map_err(err)?;
        let (rows, cols) = (self.rows.len().max(1), self.columns.len().max(1));
        let finite = || self.values.iter().flatten().copied().filter(|v| v.is_finite());
        let range = (finite().fold(f64::INFINITY, f64::min), finite().fold(f64::NEG_INFINITY, f64::max));
        let mut chart = ChartBuilder::on(area)
            .caption(&self.title, (FAMILY, 22))
            .margin(12)
            .x_label_area_size(40)
            .y_label_area_size(140)
            .build_cartesian_2d(0.0..cols as f64, 0.0..rows as f64)
            .map_err(err)?;
        let (columns, row_names) = (self.columns.clone(), self.rows.clone());
        let at_center = |v: f64| {
            let i = v.floor() as usize;
            ((v - i as f64 - 0.5).abs() < 1e-6).then_some(i)
        };
        let x_format = move |v: &f64| at_center(*v).and_then(|i| columns.get(i).cloned()).unwrap_or_default();
        // Rows are listed top to bottom; the y axis grows upwards.
        let y_format = move |v: &f64| {
            at_center(*v).and_then(|i| row_names.get(rows - 1 - i.min(rows - 1)).cloned()).unwrap_or_default()
        };
        chart
            .configure_mesh()
            .disable_mesh()
            .x_labels(2 * cols + 1)
            .y_labels(2 * rows + 1)
            .x_label_formatter(&x_format)
            .y_label_formatter(&y_format)
            .label_style((FAMILY, 14))
            .draw()
            .map_err(err)?;
        for (r, row) in self.values.iter().enumerate() {
            for (c, value) in row.iter().enumerate().filter(|(_, v)| v.is_finite()) {
                let fill = heat_colour(*value, range, self.higher_is_better);
                let y = (rows - 1 - r) as f64;
                chart
                    .draw_series(std::iter::once(Rectangle::new(
                        [(c as f64, y), (c as f64 + 1.0, y + 1.0)],
                        fill.filled(),
                    )))
                    .map_err(err)?;
                let mut label = format!("{value:.*}", self.decimals);
                if !self.unit.is_empty() {
                    label = format!("{label} {}", self.unit);
                }
                let style = TextStyle::from((FAMILY, 14).into_font()).pos(plotters::style::text_anchor::Pos::new(
                    plotters::style::text_anchor::HPos::Center,
                    plotters::style::text_anchor::VPos::Center,
                ));
                chart.draw_series(std::iter::once(Text::new(label, (c as f64 + 0.5, y + 0.5), style))).map_err(err)?;
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A chart's stem in a directory of its own, removed with it.
    struct TempStem(PathBuf);

    impl std::ops::Deref for TempStem {
        type Target = Path;
        fn deref(&self) -> &Path {
            &self.0
        }
    }

    impl Drop for TempStem {
        fn drop(&mut self) {
            if let Some(dir) = self.0.parent() {
                let _ = std::fs::remove_dir_all(dir);
            }
        }
    }

    fn temp(name: &str) -> TempStem {
        let dir = std::env::temp_dir().join(format!("bauxite-chart-{}-{name}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        TempStem(dir.join(name))
    }

    /// A PNG's width and height from its IHDR chunk.
    fn png_size(path: &Path) -> (u32, u32) {
        let bytes = std::fs::read(path).unwrap();
        assert_eq!(&bytes[1..4], b"PNG", "{} is a PNG", path.display());
        let be = |i: usize| u32::from_be_bytes(bytes[i..i + 4].try_into().unwrap());
        (be(16), be(20))
    }

    #[test]
    fn a_line_chart_is_written_as_png_and_svg_with_its_text() {
        let chart = LineChart {
            title: "critical latency".into(),
            x_label: "time (s)".into(),
            y_label: "ms".into(),
            log_y: true,
            series: vec![Series {
                name: "standard stack".into(),
                points: vec![(0.0, 0.2), (5.0, 400.0), (10.0, 480.0)],
                band: vec![(0.0, 0.1, 0.3), (5.0, 300.0, 500.0), (10.0, 450.0, 510.0)],
                max_step: Some(6.0),
            }],
            references: vec![(2.0, "2 ms target".into())],
            markers: vec![(5.0, "link drops".into())],
        };
        let stem = temp("line");
        let files = chart.write(&stem).unwrap();
        assert_eq!(png_size(&files[0]), SIZE);
        let svg = std::fs::read_to_string(&files[1]).unwrap();
        for text in ["critical latency", "standard stack", "2 ms target", "link drops"] {
            assert!(svg.contains(text), "the SVG shows `{text}`");
        }
    }

    #[test]
    fn bars_and_heatmaps_label_their_categories() {
        let bars = BarChart {
            title: "control delay".into(),
            y_label: "ms".into(),
            categories: vec!["fifo".into(), "fq-codel".into()],
            groups: vec![("dscp off".into(), vec![40.8, 8.9]), ("dscp on".into(), vec![40.8, f64::NAN])],
        };
        let bars_stem = temp("bars");
        let files = bars.write(&bars_stem).unwrap();
        let svg = std::fs::read_to_string(&files[1]).unwrap();
        assert!(svg.contains("fq-codel") && svg.contains("dscp on"));
        let stem = temp("svg-only");
        let only = bars.write_as(&stem, Formats::Svg).unwrap();
        assert_eq!(only, [stem.with_extension("svg")]);
        assert_eq!(std::fs::read_to_string(&only[0]).unwrap(), svg, "the same SVG, without the PNG");
        assert!(!stem.with_extension("png").exists());
        let heat = Heatmap {
            title: "delay per class".into(),
            rows: vec!["fifo".into(), "prio".into()],
            columns: vec!["control".into(), "telemetry".into()],
            values: vec![vec![40.8, 34.1], vec![8.9, f64::NAN]],
            unit: "ms".into(),
            higher_is_better: false,
            decimals: 1,
        };
        let heat_stem = temp("heat");
        let files = heat.write(&heat_stem).unwrap();
        let svg = std::fs::read_to_string(&files[1]).unwrap();
        for text in ["40.8 ms", "8.9 ms", "telemetry", "prio"] {
            assert!(svg.contains(text), "the heatmap shows `{text}`");
        }
        assert!(!svg.contains("NaN"), "blank cells stay blank");
        let fairness = Heatmap {
            title: "Jain fairness".into(),
            rows: vec!["fifo".into()],
            columns: vec!["control".into(), "bulk".into()],
            values: vec![vec![1.0, 0.874]],
            higher_is_better: true,
            decimals: 2,
            ..Heatmap::default()
        };
        let fair_stem = temp("fair");
        let svg = std::fs::read_to_string(&fairness.write(&fair_stem).unwrap()[1]).unwrap();
        assert!(svg.contains("\n1.00\n") && svg.contains("\n0.87\n"), "two decimals, no unit");
    }

    #[test]
    fn the_colour_scale_is_white_at_the_best_end() {
        const WHITE: RGBColor = RGBColor(255, 255, 255);
        const DEEP_RED: RGBColor = RGBColor(255, 50, 38);
        // Delay: the lowest is best.
        assert_eq!(heat_colour(8.9, (8.9, 40.8), false), WHITE);
        assert_eq!(heat_colour(40.8, (8.9, 40.8), false), DEEP_RED);
        // Jain fairness: 1.0 is best, not the reddest.
        assert_eq!(heat_colour(1.0, (0.5, 1.0), true), WHITE);
        assert_eq!(heat_colour(0.5, (0.5, 1.0), true), DEEP_RED);
        // Nothing to tell apart: no cell is worse.
        assert_eq!(heat_colour(1.0, (1.0, 1.0), true), WHITE);
    }
}
