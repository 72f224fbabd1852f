//! A prefix cache of prompt-token blocks, as vLLM's automatic prefix caching and SGLang's
//! RadixAttention keep one: a prompt's tokens are cut into blocks of `block_tokens`; a
//! block is identified by a hash of its tokens *and of every block before it*, so block k
//! of two prompts matches only when their first k + 1 blocks are equal. A request's cached
//! tokens are its leading blocks found in the cache (whole blocks only); they skip prefill.
//!
//! Every full block of a prompt enters the cache when the request arrives (a simplification:
//! a real engine caches a block once its prefill has run, so two requests arriving together
//! with a new prefix would both miss there). The cache holds at most `capacity_blocks`
//! blocks and evicts the least recently used. Blocks of a prompt are touched front to back,
//! so a prefix's first blocks are never older than its later ones.

use std::collections::{BTreeMap, HashMap};

use serde::Serialize;

/// What the cache is configured with (`--prefix-cache`, `--prefix-cache-block`,
/// `--prefix-cache-capacity`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct PrefixCacheParams {
    /// Tokens per block; only whole blocks are cached.
    pub block_tokens: u32,
    /// Most tokens held (rounded down to whole blocks).
    pub capacity_tokens: u64,
}

impl Default for PrefixCacheParams {
    fn default() -> Self {
        PrefixCacheParams {
            block_tokens: 16,
            capacity_tokens: 1 << 20,
        }
    }
}

/// The cache: block hash → last use, and last use → block hash for eviction.
#[derive(Debug)]
pub(crate) struct PrefixCache {
    block: usize,
    capacity: usize,
    last_use: HashMap<u64, u64>,
    by_age: BTreeMap<u64, u64>,
    tick: u64,
}

impl PrefixCache {
    pub(crate) fn new(p: PrefixCacheParams) -> Self {
        let block = p.block_tokens.max(1) as usize;
        let capacity = usize::try_from(p.capacity_tokens / u64::from(p.block_tokens.max(1)))
            .unwrap_or(usize::MAX);
        PrefixCache {
            block,
            capacity,
            last_use: HashMap::new(),
            by_age: BTreeMap::new(),
            tick: 0,
        }
    }

    /// The number of leading tokens of `ids` found in the cache (whole blocks); then every
    /// full block of `ids` is put in (or refreshed), evicting the least recently used.
    pub(crate) fn lookup_insert(&mut self, ids: &[u32]) -> u32 {
        let mut h: u64 = 0xcbf2_9ce4_8422_2325;
        let mut hits = 0usize;
        let mut matching = true;
        for chunk in ids.chunks_exact(self.block) {
            for &id in chunk {
                h = mix(h ^ u64::from(id));
            }
            if matching && self.last_use.contains_key(&h) {
                hits += 1;
            } else {
                matching = false;
            }
            self.touch(h);
        }
        u32::try_from(hits * self.block).unwrap_or(u32::MAX)
    }

    fn touch(&mut self, h: u64) {
        self.tick += 1;
        if let Some(old) = self.last_use.insert(h, self.tick) {
            self.by_age.remove(&old);
        }
        self.by_age.insert(self.tick, h);
        while self.last_use.len() > self.capacity {
            let Some((_, oldest)) = self.by_age.pop_first() else {
                break;
            };
            self.last_use.remove(&oldest);
        }
    }

    /// Blocks held.
    #[cfg(test)]
    fn len(&self) -> usize {
        self.last_use.len()
    }
}

/// SplitMix64's finaliser: each block's hash depends on every token before it.
fn mix(mut z: u64) -> u64 {
    z = z.wrapping_add(0x9e37_79b9_7f4a_7c15);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cache(block: u32, capacity_tokens: u64) -> PrefixCache {
        PrefixCache::new(PrefixCacheParams {
            block_tokens: block,
            capacity_tokens,
        })
    }

    #[test]
    fn shared_leading_blocks_hit_and_partial_blocks_do_not() {
        let mut c = cache(4, 1000);
        let a: Vec<u32> = (0..10).collect();
        assert_eq!(c.lookup_insert(&a), 0, "cold");
        assert_eq!(
            c.lookup_insert(&a),
            8,
            "two whole blocks of 4; the last 2 tokens are not cached"
        );
        let mut b = a.clone();
        b[5] = 99; // differs inside the second block
        assert_eq!(c.lookup_insert(&b), 4);
        let mut d = a.clone();
        d[0] = 7; // differs in the first block: nothing after it matches either
        assert_eq!(c.lookup_insert(&d), 0);
    }

    #[test]
    fn a_block_matches_only_after_the_same_blocks() {
        let mut c = cache(2, 1000);
        c.lookup_insert(&[1, 2, 3, 4]);
        // Block [3, 4] after a different first block is a different block.
        assert_eq!(c.lookup_insert(&[0, 0, 3, 4]), 0);
        assert_eq!(c.lookup_insert(&[1, 2, 3, 4, 5, 6]), 4);
    }

    #[test]
    fn least_recently_used_blocks_are_evicted() {
        let mut c = cache(2, 6); // three blocks
        c.lookup_insert(&[1, 1, 2, 2]); // blocks A, AB
        c.lookup_insert(&[3, 3]); // C
        assert_eq!(c.len(), 3);
        c.lookup_insert(&[4, 4]); // D evicts A (the oldest)
        assert_eq!(c.len(), 3);
        assert_eq!(c.lookup_insert(&[1, 1, 2, 2]), 0, "A was evicted");
        // A's return evicted AB's older neighbours in age order: C went, D stayed.
        assert_eq!(c.lookup_insert(&[4, 4]), 2);
        assert_eq!(c.lookup_insert(&[3, 3]), 0);
    }
}
