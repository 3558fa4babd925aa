//! A small deterministic pseudo-random generator (SplitMix64).
//!
//! The simulator needs randomness only for application start offsets and flow
//! hashes, and needs it to be the same on every machine and every build, so it
//! carries its own 64-bit generator instead of depending on a crate whose stream
//! could change between versions. SplitMix64 (Steele, Lea, Flood 2014) passes
//! BigCrush, is one addition and three xor-shift-multiplies per draw, and any
//! `u64` is a valid seed.

/// SplitMix64: a 64-bit state advanced by a fixed odd increment, output through a
/// bijective mixing function.
#[derive(Clone, Debug)]
pub struct SplitMix64 {
    state: u64,
}

/// The golden-ratio increment of SplitMix64.
const GAMMA: u64 = 0x9E37_79B9_7F4A_7C15;

impl SplitMix64 {
    /// A generator whose stream is fixed by `seed`.
    pub fn new(seed: u64) -> Self {
        Self { state: seed }
    }

    /// The next 64 random bits.
    pub fn next_u64(&mut self) -> u64 {
        self.state = self.state.wrapping_add(GAMMA);
        mix(self.state)
    }

    /// A uniform integer in `0..bound` (0 when `bound` is 0), by Lemire's
    /// multiply-shift; the tiny bias for bounds near 2^64 does not matter here.
    pub fn below(&mut self, bound: u64) -> u64 {
        ((self.next_u64() as u128 * bound as u128) >> 64) as u64
    }

    /// A uniform float in `[0, 1)` with 53 random bits.
    pub fn unit_f64(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 * (1.0 / (1u64 << 53) as f64)
    }
}

/// SplitMix64's output function: a bijection on `u64` that spreads every input
/// bit over every output bit. Also used on its own to hash flow identities.
pub fn mix(mut z: u64) -> u64 {
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn matches_the_reference_stream() {
        // First outputs of the reference C implementation seeded with 0.
        let mut r = SplitMix64::new(0);
        assert_eq!(r.next_u64(), 0xE220_A839_7B1D_CDAF);
        assert_eq!(r.next_u64(), 0x6E78_9E6A_A1B9_65F4);
        assert_eq!(r.next_u64(), 0x06C4_5D18_8009_454F);
    }

    #[test]
    fn below_stays_in_range() {
        let mut r = SplitMix64::new(7);
        for bound in [1u64, 2, 3, 1000, u64::MAX] {
            for _ in 0..100 {
                assert!(r.below(bound) < bound);
            }
        }
        assert_eq!(r.below(0), 0);
        let u = r.unit_f64();
        assert!((0.0..1.0).contains(&u));
    }
}
