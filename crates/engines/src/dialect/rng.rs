//! Small deterministic hashing helpers: every per-request random choice is a pure function
//! of (seed, request number, purpose), so it does not depend on which task asks first.

/// SplitMix64 finaliser (Steele, Lea, Flood 2014): a bijective 64-bit mixer.
pub fn splitmix64(mut x: u64) -> u64 {
    x = x.wrapping_add(0x9E37_79B9_7F4A_7C15);
    x = (x ^ (x >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    x = (x ^ (x >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    x ^ (x >> 31)
}

/// A 64-bit hash of three words.
pub fn mix3(a: u64, b: u64, c: u64) -> u64 {
    splitmix64(splitmix64(splitmix64(a) ^ b) ^ c)
}

/// A uniform number in [0, 1) from a hash.
pub fn unit(h: u64) -> f64 {
    // 53 high bits -> exactly representable doubles in [0, 1).
    (h >> 11) as f64 * (1.0 / (1u64 << 53) as f64)
}

/// Purposes, so the streams drawn for one request are independent.
pub mod salt {
    /// The simulated end of sequence.
    pub const EOS: u64 = 0x454f_5300;
    /// Generated text.
    pub const TEXT: u64 = 0x5445_5854;
    /// Injected faults.
    pub const FAULT: u64 = 0x4641_554c;
    /// A request's speed.
    pub const SPEED: u64 = 0x5350_4545;
    /// Step jitter.
    pub const JITTER: u64 = 0x4a49_5454;
    /// A trial's speed.
    pub const TRIAL: u64 = 0x5452_4941;
    /// Response ids.
    pub const ID: u64 = 0x4944_0000;
    /// Streams held back to the end.
    pub const HELD_BACK: u64 = 0x484c_4442;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unit_is_in_range_and_spread() {
        let xs: Vec<f64> = (0..10_000).map(|i| unit(mix3(1, i, 2))).collect();
        assert!(xs.iter().all(|x| (0.0..1.0).contains(x)));
        let mean = xs.iter().sum::<f64>() / xs.len() as f64;
        assert!((mean - 0.5).abs() < 0.02, "mean {mean}");
    }
}
