//! Distribution functions used by the tests and intervals: Student's t (fractional degrees of
//! freedom), the standard normal, χ² and the binomial.
//!
//! Method: thin wrappers over `statrs` 0.19 (`StudentsT::new(location, scale, freedom)`,
//! regularized incomplete beta/gamma functions). The t quantile from statrs' inverse incomplete
//! beta is polished by Newton steps on the CDF (or survival function in the upper tail), so it
//! agrees with `scipy.stats.t.ppf` to ~1e-12 relative; see `tests/reference/`.
//! Reference: Abramowitz & Stegun (1964) §26.7; Press et al., *Numerical Recipes* §6.4.

use statrs::distribution::{
    Binomial, ChiSquared, Continuous, ContinuousCDF, DiscreteCDF, Normal, StudentsT,
};

use crate::error::{StatsError, check_probability};

fn students_t(df: f64) -> Result<StudentsT, StatsError> {
    StudentsT::new(0.0, 1.0, df).map_err(|_| StatsError::InvalidParameter {
        name: "degrees of freedom",
        value: df,
        why: "must be > 0 and not NaN",
    })
}

/// The `p`-quantile of Student's t with `df` degrees of freedom (fractional allowed), i.e.
/// `t(p, ν)` in docs/statistics-method.md. Method: statrs' inverse regularized incomplete beta, then up to
/// eight Newton steps on `F(x) − p` (lower half) or `S(x) − (1 − p)` (upper half).
/// Reference: scipy `stats.t.ppf`; Hill (1970), CACM algorithm 396.
pub fn t_quantile(p: f64, df: f64) -> Result<f64, StatsError> {
    check_probability("p", p)?;
    let dist = students_t(df)?;
    let mut x = dist.inverse_cdf(p);
    if !x.is_finite() {
        return Err(StatsError::NoSolution {
            what: "t quantile",
            limit: 0,
        });
    }
    let upper = p > 0.5;
    let target = if upper { 1.0 - p } else { p };
    for _ in 0..8 {
        let density = dist.pdf(x);
        if !(density.is_finite() && density > 0.0) {
            break;
        }
        let step = if upper {
            (dist.sf(x) - target) / density
        } else {
            -(dist.cdf(x) - target) / density
        };
        x += step;
        if step.abs() <= 1e-15 * x.abs().max(1e-300) {
            break;
        }
    }
    Ok(x)
}

/// Upper-tail probability `P(T > t)` of Student's t with `df` degrees of freedom.
/// Method: regularized incomplete beta (statrs). Reference: A&S 26.7.1.
pub fn t_sf(t: f64, df: f64) -> Result<f64, StatsError> {
    Ok(students_t(df)?.sf(t))
}

/// Two-sided p-value `2·(1 − F_ν(|t|))` of a t statistic, as in docs/statistics-method.md's Welch test.
/// Method: regularized incomplete beta (statrs). Reference: Welch (1947).
pub fn t_two_sided_p(t: f64, df: f64) -> Result<f64, StatsError> {
    Ok((2.0 * t_sf(t.abs(), df)?).min(1.0))
}

/// Upper-tail probability of the standard normal, `1 − Φ(z)`, via the complementary error
/// function (statrs). Reference: A&S 26.2.
pub fn normal_sf(z: f64) -> f64 {
    // Normal::new(0, 1) cannot fail: mean 0 and standard deviation 1 are valid.
    Normal::standard().sf(z)
}

/// Upper-tail probability `P(X > x)` of χ² with `k` degrees of freedom, via the regularized
/// upper incomplete gamma function (statrs). Reference: A&S 26.4.
pub fn chi2_sf(x: f64, k: f64) -> Result<f64, StatsError> {
    let dist = ChiSquared::new(k).map_err(|_| StatsError::InvalidParameter {
        name: "chi-square degrees of freedom",
        value: k,
        why: "must be > 0",
    })?;
    Ok(dist.sf(x))
}

/// The `p`-quantile of the standard normal (`z_p`: 1.959964 at 0.975). Method: statrs'
/// inverse complementary error function. Reference: scipy `stats.norm.ppf`.
pub fn normal_quantile(p: f64) -> Result<f64, StatsError> {
    check_probability("p", p)?;
    Ok(Normal::standard().inverse_cdf(p))
}

/// `P(X ≤ k)` for `X ~ Binomial(n, p)`, via the regularized incomplete beta (statrs).
/// Reference: A&S 26.5.24.
pub fn binomial_cdf(k: u64, n: u64, p: f64) -> Result<f64, StatsError> {
    let dist = Binomial::new(p, n).map_err(|_| StatsError::InvalidParameter {
        name: "binomial p",
        value: p,
        why: "must lie in [0, 1]",
    })?;
    Ok(dist.cdf(k))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn t_quantile_known_values() {
        // Table values (scipy.stats.t.ppf): t(0.975, 4) = 2.7764451051977987.
        let q = t_quantile(0.975, 4.0).expect("valid");
        assert!((q - 2.776_445_105_197_798_7).abs() < 1e-12, "{q}");
        let lo = t_quantile(0.025, 4.0).expect("valid");
        assert!((lo + q).abs() < 1e-12);
        assert!(t_quantile(1.0, 4.0).is_err());
        assert!(t_quantile(0.5, 0.0).is_err());
    }

    #[test]
    fn two_sided_p_is_symmetric_and_bounded() {
        let a = t_two_sided_p(2.0, 7.3).expect("valid");
        let b = t_two_sided_p(-2.0, 7.3).expect("valid");
        assert_eq!(a, b);
        assert!((t_two_sided_p(0.0, 3.0).expect("valid") - 1.0).abs() < 1e-15);
    }
}
