//! **host-contended**: CPU steal, or other processes' CPU time, during a trial above a
//! threshold (docs/statistics-method.md, "Validity flags"; calibrated in
//! docs/statistics-measured.md, "host-contended"). The evidence is servebench's reading of
//! `/proc/stat` and `/proc/[pid]/stat` around each trial: the share of the host's CPU time
//! the hypervisor stole, and the CPUs' worth of time that processes other than the server
//! and servebench used. A trial measured while something else ran on the host measured the
//! host's load as much as the variant: the flag names those trials and the verdicts of their
//! points.

use serde::{Deserialize, Serialize};

use super::{Flag, FlagId, FlagLevel};

/// One trial's reading of the host's load.
#[derive(Debug, Clone, PartialEq)]
pub struct HostLoadCheck {
    /// The arm's variant.
    pub variant: String,
    /// Repetition t (from 1).
    pub trial: u32,
    /// Short point label.
    pub point: String,
    /// Share of all CPU time stolen.
    pub steal_share: f64,
    /// CPUs' worth of time other processes used.
    pub other_cpus: f64,
    /// The host's logical CPUs.
    pub cpus: u32,
}

/// The thresholds (docs/statistics-measured.md, "host-contended").
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct HostThresholds {
    /// Steal share from which a trial is contended.
    pub steal_share: f64,
    /// Other processes' CPU time per wall second (CPUs' worth) from which a trial is
    /// contended: half a CPU busy with other work slows a server that needs one.
    pub other_cpus: f64,
}

impl Default for HostThresholds {
    fn default() -> Self {
        HostThresholds {
            steal_share: 0.05,
            other_cpus: 0.5,
        }
    }
}

impl HostLoadCheck {
    /// Other processes' CPU over the host's CPUs.
    pub fn other_share(&self) -> f64 {
        self.other_cpus / f64::from(self.cpus.max(1))
    }

    /// Above either threshold.
    pub fn contended(&self, th: &HostThresholds) -> bool {
        self.steal_share >= th.steal_share || self.other_cpus >= th.other_cpus
    }
}

/// The flag over every trial of a comparison, when any is contended; the caller adds the
/// verdicts of the named trials' points as threats ([`Flag::threatening`]).
pub fn host_contended(checks: &[HostLoadCheck], th: &HostThresholds) -> Option<Flag> {
    let hit: Vec<&HostLoadCheck> = checks.iter().filter(|c| c.contended(th)).collect();
    if hit.is_empty() {
        return None;
    }
    let words: Vec<String> = hit
        .iter()
        .map(|c| {
            format!(
                "{} trial {} at {}: other processes {:.2} of {} CPUs ({:.0}%), steal {:.1}%",
                c.variant,
                c.trial,
                c.point,
                c.other_cpus,
                c.cpus,
                c.other_share() * 100.0,
                c.steal_share * 100.0
            )
        })
        .collect();
    Some(Flag::new(
        FlagId::HostContended,
        FlagLevel::Look,
        format!(
            "{} of {} trials ran while the host was busy with other work (thresholds: other \
             processes ≥ {} CPU or steal ≥ {:.0}%): {}",
            hit.len(),
            checks.len(),
            th.other_cpus,
            th.steal_share * 100.0,
            words.join("; ")
        ),
        "re-run on a quiet host (stop other jobs; on a cloud VM with steal, ask for a \
         dedicated host); the trials named measured the host's load as much as the variant",
    ))
}

/// The points the contended trials ran at, once each, in order of first appearance.
pub fn contended_points(checks: &[HostLoadCheck], th: &HostThresholds) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for c in checks.iter().filter(|c| c.contended(th)) {
        if !out.contains(&c.point) {
            out.push(c.point.clone());
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check(trial: u32, other: f64, steal: f64) -> HostLoadCheck {
        HostLoadCheck {
            variant: "a".into(),
            trial,
            point: format!("c={trial}"),
            steal_share: steal,
            other_cpus: other,
            cpus: 2,
        }
    }

    #[test]
    fn contended_trials_are_named_with_their_readings() {
        let th = HostThresholds::default();
        let quiet = [check(1, 0.1, 0.0), check(2, 0.45, 0.01)];
        assert!(host_contended(&quiet, &th).is_none());
        let busy = [check(1, 0.1, 0.0), check(2, 0.9, 0.0), check(3, 0.0, 0.2)];
        let f = host_contended(&busy, &th).expect("flag");
        assert_eq!(f.id, FlagId::HostContended);
        assert!(
            f.evidence.starts_with("2 of 3 trials")
                && f.evidence
                    .contains("a trial 2 at c=2: other processes 0.90 of 2 CPUs (45%)")
                && f.evidence.contains("steal 20.0%"),
            "{}",
            f.evidence
        );
        assert_eq!(contended_points(&busy, &th), ["c=2", "c=3"]);
    }
}
