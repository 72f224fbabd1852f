//! Mid-ranks ("average" ranks) with tie groups, shared by the rank-based methods
//! (Mann–Whitney U, Spearman's ρ).
//!
//! Method: sort, then give each group of equal values the mean of the ranks it spans
//! (1-based). Reference: Hollander, Wolfe & Chicken (2014) §4.1; scipy `stats.rankdata`
//! (`method="average"`).

/// Mid-ranks of `values` (1-based, ties averaged) and the sizes of the tie groups (one entry
/// per distinct value). Values must not be NaN (callers check finiteness first).
pub fn average_ranks(values: &[f64]) -> (Vec<f64>, Vec<usize>) {
    let mut order: Vec<usize> = (0..values.len()).collect();
    order.sort_by(|&a, &b| values[a].total_cmp(&values[b]));
    let mut ranks = vec![0.0; values.len()];
    let mut ties = Vec::new();
    let mut start = 0;
    while start < order.len() {
        let mut end = start + 1;
        while end < order.len() && values[order[end]] == values[order[start]] {
            end += 1;
        }
        // Positions start..end hold ranks start+1 ..= end; their mean:
        let rank = (start + 1 + end) as f64 / 2.0;
        for &i in &order[start..end] {
            ranks[i] = rank;
        }
        ties.push(end - start);
        start = end;
    }
    (ranks, ties)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ties_get_mid_ranks() {
        let (r, t) = average_ranks(&[10.0, 20.0, 10.0, 30.0]);
        assert_eq!(r, vec![1.5, 3.0, 1.5, 4.0]);
        assert_eq!(t, vec![2, 1, 1]);
    }
}
