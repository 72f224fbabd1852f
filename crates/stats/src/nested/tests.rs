use super::*;

fn data(balanced: bool) -> Vec<Vec<f64>> {
    if balanced {
        vec![
            vec![4.61, 4.66, 4.58],
            vec![4.71, 4.69, 4.75],
            vec![4.52, 4.57, 4.55],
            vec![4.64, 4.60, 4.67],
        ]
    } else {
        vec![
            vec![4.61],
            vec![4.71, 4.69, 4.75],
            vec![4.52, 4.57],
            vec![4.64, 4.60, 4.67, 4.62],
        ]
    }
}

fn close(a: f64, b: f64) {
    assert!((a - b).abs() <= 1e-9 * b.abs() + 1e-12, "{a} vs {b}");
}

// Reference values: `python3 crates/stats/tests/reference/nested_anova.py` (a hand ANOVA in
// plain Python; with statsmodels installed it also checks the sums of squares against
// statsmodels' `anova_lm` of `ols("y ~ C(start)")`).
#[test]
fn balanced_components_match_the_reference_anova() {
    let c = components(&data(true)).unwrap();
    assert!(c.balanced);
    close(c.ms_between, 0.014674999999999987);
    close(c.ms_within.unwrap(), 0.001108333333333338);
    close(c.k0, 3.0);
    close(c.var_between.unwrap(), 0.0045222222222222165);
    close(c.var_within.unwrap(), 0.001108333333333338);
    let m = start_mean(&data(true)).unwrap();
    assert_eq!(m.method, StartMeanMethod::StartMeans);
    close(m.std_err, 0.03497022543059546);
    close(m.df, 3.0);
}

#[test]
fn unbalanced_components_match_the_reference_anova() {
    let c = components(&data(false)).unwrap();
    assert!(!c.balanced);
    close(c.ms_between, 0.012256111111111143);
    close(c.ms_within.unwrap(), 0.0009652777777777819);
    close(c.k0, 2.3333333333333335);
    close(c.var_between.unwrap(), 0.004838928571428583);
    let m = start_mean(&data(false)).unwrap();
    assert_eq!(m.method, StartMeanMethod::Satterthwaite);
    close(m.std_err, 0.03654339001112642);
    close(m.df, 3.102146768230957);
}

#[test]
fn one_trial_per_start_is_the_analysis_of_trials() {
    // k = 1: no within-start mean square, and the start mean's SE and df are the t
    // interval's s/√n and n − 1 on the trials themselves.
    let starts: Vec<Vec<f64>> = [4.61, 4.71, 4.52, 4.64, 4.70].map(|v| vec![v]).to_vec();
    let c = components(&starts).unwrap();
    assert_eq!(c.ms_within, None);
    let m = start_mean(&starts).unwrap();
    let flat: Vec<f64> = starts.iter().flatten().copied().collect();
    let (mean, var) = crate::summary::mean_var(&flat).unwrap();
    assert_eq!(m.mean, mean);
    assert_eq!(m.std_err, (var / 5.0).sqrt());
    assert_eq!(m.df, 4.0);
    let values = start_values(&flat, &[0, 1, 2, 3, 4], true);
    assert_eq!(values, flat, "one value per start is kept bit for bit");
}

#[test]
fn identical_repeats_do_not_shrink_the_standard_error() {
    // Within-start repeats that are identical carry no information about the between-start
    // spread: the SE is that of the starts, whatever k.
    let per_start = [4.61, 4.71, 4.52, 4.64];
    let se = |k: usize| {
        let starts: Vec<Vec<f64>> = per_start.iter().map(|v| vec![*v; k]).collect();
        start_mean(&starts).unwrap().std_err
    };
    close(se(3), se(1));
    close(se(10), se(1));
}

#[test]
fn start_values_are_geometric_or_arithmetic_means_in_order_of_appearance() {
    let v = [2.0, 8.0, 3.0, 5.0];
    assert_eq!(
        start_values(&v, &[7, 7, 1, 1], true),
        vec![4.0, 15f64.sqrt()]
    );
    assert_eq!(start_values(&v, &[7, 7, 1, 1], false), vec![5.0, 4.0]);
}

#[test]
fn too_few_starts_or_empty_starts_are_errors() {
    assert!(components(&[vec![1.0, 2.0]]).is_err());
    assert!(components(&[vec![1.0], vec![]]).is_err());
    assert!(components(&[vec![1.0], vec![f64::NAN]]).is_err());
}
