//! Summary statistics every Bauxite part reports with: mean, sample standard
//! deviation, nearest-rank percentiles, and Student-t 95 % confidence intervals.
//! Pure functions, no I/O.
//!
//! One definition of each, so that a p99 means the same thing in the demo's
//! tables, the shaper's tests, the bridge's telemetry and the simulator's study.
//! The arithmetic (summation order, `n − 1` denominators) is the simulator's, whose
//! outputs are kept as byte-exact snapshots: do not reorder it.

/// Arithmetic mean, summed in the given order; `None` for no values.
pub fn mean(values: &[f64]) -> Option<f64> {
    (!values.is_empty()).then(|| values.iter().sum::<f64>() / values.len() as f64)
}

/// Sample variance (`n − 1` denominator); `None` with fewer than two values, where
/// there is no spread to estimate.
pub fn variance(values: &[f64]) -> Option<f64> {
    let n = values.len();
    let m = mean(values)?;
    (n >= 2).then(|| values.iter().map(|x| (x - m) * (x - m)).sum::<f64>() / (n - 1) as f64)
}

/// Sample standard deviation (`n − 1` denominator); `None` with fewer than two values.
pub fn sd(values: &[f64]) -> Option<f64> {
    variance(values).map(f64::sqrt)
}

/// The nearest-rank `q`-quantile (`0 < q ≤ 1`) of `sorted` (ascending): the smallest
/// value with at least `q` of the values at or below it, i.e. the value of rank
/// `⌈q·n⌉`. Always one of the values, never an interpolation. `None` when empty.
pub fn percentile<T: Copy>(sorted: &[T], q: f64) -> Option<T> {
    let n = sorted.len();
    (n > 0).then(|| sorted[((q * n as f64).ceil() as usize).clamp(1, n) - 1])
}

/// Count, mean, median, p95, p99 and maximum of a set of samples (e.g. latencies
/// in ms), percentiles by [`percentile`].
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Summary {
    /// Number of samples.
    pub count: usize,
    /// Mean.
    pub mean: f64,
    /// Median.
    pub p50: f64,
    /// 95th percentile.
    pub p95: f64,
    /// 99th percentile.
    pub p99: f64,
    /// Largest sample.
    pub max: f64,
}

impl Summary {
    /// Summarises `samples` (any order); all zero when empty.
    pub fn of(samples: &[f64]) -> Self {
        let mut sorted = samples.to_vec();
        sorted.sort_by(f64::total_cmp);
        let at = |q| percentile(&sorted, q).unwrap_or(0.0);
        Self {
            count: sorted.len(),
            mean: mean(&sorted).unwrap_or(0.0),
            p50: at(0.50),
            p95: at(0.95),
            p99: at(0.99),
            max: at(1.0),
        }
    }
}

impl std::fmt::Display for Summary {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "n={} mean={:.3} p50={:.3} p95={:.3} p99={:.3} max={:.3}",
            self.count, self.mean, self.p50, self.p95, self.p99, self.max
        )
    }
}

/// Latency figures in ms, as every report writes them (`critical_latency_ms` of the
/// demo's and the simulator's `summary.json`): nearest-rank percentiles, all zero when
/// nothing arrived (the sample count is reported beside them).
#[derive(Clone, Copy, Debug, Default, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct LatencyMs {
    /// Mean.
    pub mean: f64,
    /// Median.
    pub p50: f64,
    /// 95th percentile.
    pub p95: f64,
    /// 99th percentile.
    pub p99: f64,
    /// Largest.
    pub max: f64,
}

impl LatencyMs {
    /// The figures of `samples` (ms, any order).
    pub fn of(samples: &[f64]) -> Self {
        let Summary { mean, p50, p95, p99, max, .. } = Summary::of(samples);
        Self { mean, p50, p95, p99, max }
    }
}

/// The control loop's update delay in ms (`update_delay_ms`): the two figures the
/// seed's table reports, zero when no correction was consumed.
#[derive(Clone, Copy, Debug, Default, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct UpdateDelayMs {
    /// Mean.
    pub mean: f64,
    /// 99th percentile (nearest-rank).
    pub p99: f64,
}

impl UpdateDelayMs {
    /// The figures of `samples` (ms, any order).
    pub fn of(samples: &[f64]) -> Self {
        let Summary { mean, p99, .. } = Summary::of(samples);
        Self { mean, p99 }
    }
}

/// The two-sided 95 % Student-t quantile (the 0.975 quantile) for `df` degrees
/// of freedom; NaN for 0.
///
/// Up to 30 degrees of freedom from the standard table (three decimals); beyond,
/// the Cornish-Fisher expansion of the t quantile about the normal one (Abramowitz
/// and Stegun 26.7.5, terms to `1/df⁴`), which is within 1e-5 of the exact value
/// from 31 degrees of freedom on and tends to 1.960 as `df` grows. (A coarse table
/// that used, say, 40 degrees of freedom's 2.021 for all of 31 to 40 would make
/// those intervals too narrow.)
pub fn t95(df: usize) -> f64 {
    const TABLE: [f64; 30] = [
        12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228, 2.201, 2.179, 2.160, 2.145, 2.131,
        2.120, 2.110, 2.101, 2.093, 2.086, 2.080, 2.074, 2.069, 2.064, 2.060, 2.056, 2.052, 2.048, 2.045, 2.042,
    ];
    /// The standard normal 0.975 quantile.
    const Z: f64 = 1.959_963_984_540_054;
    match df {
        0 => f64::NAN,
        1..=30 => TABLE[df - 1],
        _ => {
            let (n, z) = (df as f64, Z);
            let z2 = z * z;
            let g1 = z * (z2 + 1.0) / 4.0;
            let g2 = z * ((5.0 * z2 + 16.0) * z2 + 3.0) / 96.0;
            let g3 = z * (((3.0 * z2 + 19.0) * z2 + 17.0) * z2 - 15.0) / 384.0;
            let g4 = z * ((((79.0 * z2 + 776.0) * z2 + 1482.0) * z2 - 1920.0) * z2 - 945.0) / 92160.0;
            z + (g1 + (g2 + (g3 + g4 / n) / n) / n) / n
        }
    }
}

/// Mean and 95 % confidence half-width (Student t, n − 1 degrees of freedom) of
/// `values`; the half-width is `None` with fewer than two values.
pub fn mean_ci95(values: &[f64]) -> (Option<f64>, Option<f64>) {
    let n = values.len();
    let half = variance(values).map(|var| t95(n - 1) * (var / n as f64).sqrt());
    (mean(values), half)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nearest_rank_percentiles() {
        let samples: Vec<f64> = (1..=100).rev().map(f64::from).collect();
        let s = Summary::of(&samples);
        assert_eq!((s.count, s.p50, s.p95, s.p99, s.max), (100, 50.0, 95.0, 99.0, 100.0));
        assert!((s.mean - 50.5).abs() < 1e-12);
        assert_eq!(Summary::of(&[]), Summary::default());
        assert_eq!(Summary::of(&[3.0]).p99, 3.0);
        // Rank ⌈q·n⌉: of 10 values the median is the 5th, p99 the 10th.
        let ten: Vec<u32> = (1..=10).collect();
        assert_eq!(
            (percentile(&ten, 0.5), percentile(&ten, 0.99), percentile(&ten, 0.0)),
            (Some(5), Some(10), Some(1))
        );
        assert_eq!(percentile::<u32>(&[], 0.5), None);
    }

    #[test]
    fn sample_spread_uses_n_minus_one() {
        assert_eq!(mean(&[]), None);
        assert_eq!(variance(&[4.0]), None);
        assert_eq!(variance(&[1.0, 2.0, 3.0]), Some(1.0));
        let sd = sd(&[100.0, 300.0]).unwrap();
        assert!((sd - 141.421_356).abs() < 1e-6, "{sd}");
    }

    #[test]
    fn t_quantiles_match_the_published_table() {
        let round3 = |x: f64| (x * 1000.0).round() / 1000.0;
        let known = [
            (1, 12.706),
            (5, 2.571),
            (10, 2.228),
            (30, 2.042),
            (31, 2.040),
            (40, 2.021),
            (60, 2.000),
            (61, 2.000),
            (120, 1.980),
            (121, 1.980),
            (1000, 1.962),
            (usize::MAX, 1.960),
        ];
        for (df, t) in known {
            assert_eq!(round3(t95(df)), t, "df {df}: {}", t95(df));
        }
        // Exact quantiles (R's qt(0.975, df)) where the table stops.
        for (df, t) in [(31, 2.039_513), (50, 2.008_559), (100, 1.983_972)] {
            assert!((t95(df) - t).abs() < 1e-5, "df {df}: {} vs {t}", t95(df));
        }
        assert!(t95(0).is_nan());
        // Never narrower with fewer degrees of freedom.
        assert!((1..500).all(|df| t95(df) > t95(df + 1)));
    }

    #[test]
    fn confidence_interval_uses_student_t() {
        let (m, h) = mean_ci95(&[1.0, 2.0, 3.0]);
        assert_eq!(m, Some(2.0));
        // s = 1, n = 3: 4.303 / sqrt(3).
        assert!((h.unwrap() - 4.303 / 3f64.sqrt()).abs() < 1e-12);
        assert_eq!(mean_ci95(&[5.0]), (Some(5.0), None));
        assert_eq!(mean_ci95(&[]), (None, None));
    }
}
