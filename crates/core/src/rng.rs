//! The one pseudo-random generator of Bauxite: SplitMix64 (Steele, Lea and
//! Flood, 2014).
//!
//! Disciplines that need chance (PIE's drop decision) or a salt (the flow-hash
//! perturbation of FQ-CoDel and FQ-PIE) draw it from here, seeded from their
//! configuration, so the same inputs always give the same outputs; so do the link
//! model's loss and jitter ([`crate::link`]) and the simulator (`bauxite-sim`) for
//! application start offsets, the seeds it hands each discipline and flow hashes:
//! a run is replayed exactly from its seed, on every machine and build, with no
//! dependency whose stream could change between versions. SplitMix64 is tiny, passes BigCrush, accepts any `u64` as a
//! seed and needs no dependency; nothing here is cryptographic.

/// A SplitMix64 stream: a 64-bit state advanced by a fixed odd increment, output
/// through [`mix64`].
#[derive(Clone, Debug)]
pub struct SplitMix64 {
    state: u64,
}

/// The golden-ratio increment of SplitMix64.
const GAMMA: u64 = 0x9e37_79b9_7f4a_7c15;

impl SplitMix64 {
    /// A stream that starts from `seed`; every seed, 0 included, is a good one.
    pub fn new(seed: u64) -> Self {
        Self { state: seed }
    }

    /// The next 64 random bits.
    pub fn next_u64(&mut self) -> u64 {
        self.state = self.state.wrapping_add(GAMMA);
        mix64(self.state)
    }

    /// A uniform draw from [0, 1) with 53 bits of precision.
    pub fn next_f64(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 * (1.0 / (1u64 << 53) as f64)
    }

    /// A uniform integer in `0..bound` (0 when `bound` is 0), by Lemire's
    /// multiply-shift; the bias, at most `bound / 2^64`, does not matter here.
    pub fn below(&mut self, bound: u64) -> u64 {
        ((u128::from(self.next_u64()) * u128::from(bound)) >> 64) as u64
    }
}

/// SplitMix64's finaliser: a bijection on `u64` in which every input bit affects
/// every output bit. Also the flow hash of the fair-queueing disciplines and of
/// the simulator's flow identities, and how the simulator derives sub-seeds.
pub fn mix64(mut z: u64) -> u64 {
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn matches_the_reference_sequence_for_seed_zero() {
        // The first outputs of the reference C implementation seeded with 0.
        let mut rng = SplitMix64::new(0);
        assert_eq!(rng.next_u64(), 0xe220_a839_7b1d_cdaf);
        assert_eq!(rng.next_u64(), 0x6e78_9e6a_a1b9_65f4);
        assert_eq!(rng.next_u64(), 0x06c4_5d18_8009_454f);
    }

    #[test]
    fn unit_draws_stay_in_range_and_average_one_half() {
        let mut rng = SplitMix64::new(42);
        let n = 100_000;
        let mut sum = 0.0;
        for _ in 0..n {
            let u = rng.next_f64();
            assert!((0.0..1.0).contains(&u));
            sum += u;
        }
        assert!((sum / n as f64 - 0.5).abs() < 0.01);
    }

    #[test]
    fn below_stays_in_range() {
        let mut rng = SplitMix64::new(7);
        for bound in [1u64, 2, 3, 1000, u64::MAX] {
            for _ in 0..100 {
                assert!(rng.below(bound) < bound);
            }
        }
        assert_eq!(rng.below(0), 0);
    }
}
