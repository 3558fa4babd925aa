//! Packet loss on the link: none, independent (Bernoulli), or bursty (Gilbert–Elliott).
//!
//! The Gilbert–Elliott model takes netem's four parameters (`loss gemodel p r 1-h 1-k`):
//! `p` the chance of going from the good to the bad state, `r` of coming back, `1-h`
//! the loss probability in the bad state and `1-k` in the good one. As in netem, a
//! packet's fate is decided by the state it finds, and the state then moves on. Seed
//! 004 evaluates the bridge under this model; radio links lose packets in bursts.

use serde::{Deserialize, Serialize};

use crate::rng::SplitMix64;

/// How the link loses packets.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize, Default)]
#[serde(rename_all = "snake_case", deny_unknown_fields)]
pub enum LossModel {
    /// Nothing is lost.
    #[default]
    None,
    /// Each packet is lost independently with this probability.
    Bernoulli(f64),
    /// Bursty loss with a two-state Markov chain.
    GilbertElliott(GilbertElliott),
}

/// The four Gilbert–Elliott parameters, each a probability in `[0, 1]`.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct GilbertElliott {
    /// Good → bad, per packet.
    pub p: f64,
    /// Bad → good, per packet.
    pub r: f64,
    /// Loss probability in the bad state (netem's `1-h`).
    pub loss_bad: f64,
    /// Loss probability in the good state (netem's `1-k`).
    pub loss_good: f64,
}

impl GilbertElliott {
    /// The long-run loss rate: the chain spends `p / (p + r)` of packets in the bad state.
    pub fn mean_loss(&self) -> f64 {
        if self.p + self.r == 0.0 {
            return self.loss_good;
        }
        let bad = self.p / (self.p + self.r);
        bad * self.loss_bad + (1.0 - bad) * self.loss_good
    }
}

impl LossModel {
    /// Checks every probability; the error names the parameter.
    pub fn validate(&self) -> Result<(), String> {
        let check = |name: &str, value: f64| {
            if (0.0..=1.0).contains(&value) {
                Ok(())
            } else {
                Err(format!("{name} = {value} is not a probability in [0, 1]"))
            }
        };
        match self {
            Self::None => Ok(()),
            Self::Bernoulli(p) => check("loss", *p),
            Self::GilbertElliott(ge) => {
                check("p", ge.p)?;
                check("r", ge.r)?;
                check("loss_bad (1-h)", ge.loss_bad)?;
                check("loss_good (1-k)", ge.loss_good)
            }
        }
    }
}

/// A loss model with its state and its own random stream.
#[derive(Clone, Debug)]
pub struct Loss {
    model: LossModel,
    bad: bool,
    rng: SplitMix64,
}

impl Loss {
    /// Starts in the good state, drawing from `seed`.
    pub fn new(model: LossModel, seed: u64) -> Self {
        Self { model, bad: false, rng: SplitMix64::new(seed) }
    }

    /// Whether the next packet is lost.
    pub fn lose_next(&mut self) -> bool {
        match self.model {
            LossModel::None => false,
            LossModel::Bernoulli(p) => self.rng.next_f64() < p,
            LossModel::GilbertElliott(ge) => {
                let lost = self.rng.next_f64() < if self.bad { ge.loss_bad } else { ge.loss_good };
                let flip = if self.bad { ge.r } else { ge.p };
                if self.rng.next_f64() < flip {
                    self.bad = !self.bad;
                }
                lost
            }
        }
    }

    /// The model in force.
    pub fn model(&self) -> LossModel {
        self.model
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(model: LossModel, n: usize) -> Vec<bool> {
        let mut loss = Loss::new(model, 2026);
        (0..n).map(|_| loss.lose_next()).collect()
    }

    #[test]
    fn bernoulli_loses_its_rate_independently() {
        let lost = run(LossModel::Bernoulli(0.05), 200_000);
        let rate = lost.iter().filter(|&&l| l).count() as f64 / lost.len() as f64;
        // 200 000 draws: the standard error is 0.05 % of the packets; 0.3 % is six of them.
        assert!((rate - 0.05).abs() < 0.003, "{rate}");
        // Independent: a loss is followed by a loss with the same 5 %.
        let after_loss: Vec<bool> = lost.windows(2).filter(|w| w[0]).map(|w| w[1]).collect();
        let burst = after_loss.iter().filter(|&&l| l).count() as f64 / after_loss.len() as f64;
        assert!((burst - 0.05).abs() < 0.015, "{burst}");
    }

    #[test]
    fn gilbert_elliott_loses_in_bursts_at_its_mean_rate() {
        // Seed 004-like: rare entry into a bad state that loses most packets for ~4 packets.
        let ge = GilbertElliott { p: 0.01, r: 0.25, loss_bad: 0.8, loss_good: 0.001 };
        let lost = run(LossModel::GilbertElliott(ge), 400_000);
        let rate = lost.iter().filter(|&&l| l).count() as f64 / lost.len() as f64;
        assert!((rate - ge.mean_loss()).abs() < 0.15 * ge.mean_loss(), "{rate} vs {}", ge.mean_loss());
        let after_loss: Vec<bool> = lost.windows(2).filter(|w| w[0]).map(|w| w[1]).collect();
        let burst = after_loss.iter().filter(|&&l| l).count() as f64 / after_loss.len() as f64;
        // A loss says the chain is most likely bad, and bad stays bad with 1 - r = 75 %.
        assert!(burst > 0.5, "losses come in bursts: P(loss | loss) = {burst}");
    }

    #[test]
    fn the_same_seed_loses_the_same_packets_and_bad_values_are_named() {
        let model = LossModel::Bernoulli(0.3);
        assert_eq!(run(model, 1000), run(model, 1000));
        assert!(run(LossModel::None, 1000).iter().all(|&l| !l));
        let bad = LossModel::GilbertElliott(GilbertElliott { p: 0.1, r: 1.5, loss_bad: 1.0, loss_good: 0.0 });
        assert!(bad.validate().unwrap_err().contains("r = 1.5"));
        assert!(LossModel::Bernoulli(f64::NAN).validate().is_err());
    }
}
