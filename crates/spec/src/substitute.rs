//! `${…}` references: `${port}`, `${servebench}`, `${variant.NAME}`, `${env.NAME}`, and
//! for servers that span nodes `${node.rank}`, `${node.count}`, `${head.host}` and
//! `${head.port}`. `$$` writes a literal `$`.

use std::collections::BTreeMap;
use std::sync::OnceLock;

/// The values a published run recorded for the `${env.NAME}` its spec read
/// (`provenance.env`), set once by `rerun` before anything is substituted.
static REPLAYED_ENV: OnceLock<BTreeMap<String, String>> = OnceLock::new();

/// For `rerun` (docs/rerun.md): a name this environment does not set takes the value the
/// published run recorded for it. Set once, before the first substitution; secrets' values
/// were never recorded and are not passed here. False when already set.
pub fn replay_env(recorded: BTreeMap<String, String>) -> bool {
    REPLAYED_ENV.set(recorded).is_ok()
}

/// `${env.NAME}` as servebench reads it: this environment's value, else — in a re-run — the
/// value the published run recorded ([`replay_env`]). Every reader of `${env.…}` goes
/// through here, so a run, its checks and its record agree.
pub fn env_value(name: &str) -> Option<String> {
    std::env::var(name)
        .ok()
        .or_else(|| REPLAYED_ENV.get()?.get(name).cloned())
}

/// One reference found in a string.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Reference {
    /// `${port}`: the free port the runner picked.
    Port,
    /// `${servebench}`: the path of the running servebench binary.
    Servebench,
    /// `${variant.NAME}`: a value from the variant's `vars`.
    Variant(String),
    /// `${env.NAME}`: an environment variable (recorded in the result's `provenance.env`; a
    /// secret's name only).
    Env(String),
    /// `${node.rank}`: the index of the node a rank runs on (0 for the head's node, and on
    /// a single host).
    NodeRank,
    /// `${node.count}`: the number of nodes the server spans (1 on a single host).
    NodeCount,
    /// `${head.host}`: the address of the head's node (`127.0.0.1` on a single host).
    HeadHost,
    /// `${head.port}`: a second free port on the head's node, for the engine's own
    /// rendezvous (`--dist-init-addr`, `--master-port`), distinct from `${port}`.
    HeadPort,
    /// Anything else: an error.
    Unknown(String),
}

/// A piece of a string: literal text or a reference.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Piece {
    /// Literal text.
    Text(String),
    /// A reference.
    Ref(Reference),
}

/// Why a string's references could not be read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SubstError {
    /// `${` without its `}`.
    #[error("`${{` at byte {0} is never closed with `}}`")]
    Unclosed(usize),
    /// A reference that is not one of the known kinds.
    #[error("unknown reference `${{{0}}}`")]
    Unknown(String),
    /// A `${variant.NAME}` the variant's `vars` do not define.
    #[error("`${{variant.{0}}}` is not defined in this variant's `vars`")]
    MissingVar(String),
    /// A `${env.NAME}` not set in the environment.
    #[error("environment variable `{0}` (read by `${{env.{0}}}`) is not set")]
    MissingEnv(String),
}

/// Split a string into literal text and references.
pub fn parse(s: &str) -> Result<Vec<Piece>, SubstError> {
    let mut out = Vec::new();
    let mut text = String::new();
    let bytes = s.as_bytes();
    let mut i = 0;
    while i < s.len() {
        if bytes[i] == b'$' && bytes.get(i + 1) == Some(&b'$') {
            text.push('$');
            i += 2;
        } else if bytes[i] == b'$' && bytes.get(i + 1) == Some(&b'{') {
            let Some(close) = s[i + 2..].find('}') else {
                return Err(SubstError::Unclosed(i));
            };
            let name = s[i + 2..i + 2 + close].trim();
            if !text.is_empty() {
                out.push(Piece::Text(std::mem::take(&mut text)));
            }
            out.push(Piece::Ref(classify(name)));
            i += close + 3;
        } else {
            let ch = s[i..].chars().next().unwrap_or('\u{fffd}');
            text.push(ch);
            i += ch.len_utf8();
        }
    }
    if !text.is_empty() {
        out.push(Piece::Text(text));
    }
    Ok(out)
}

fn classify(name: &str) -> Reference {
    match name {
        "port" => Reference::Port,
        "servebench" => Reference::Servebench,
        "node.rank" => Reference::NodeRank,
        "node.count" => Reference::NodeCount,
        "head.host" => Reference::HeadHost,
        "head.port" => Reference::HeadPort,
        _ => {
            if let Some(v) = name.strip_prefix("variant.").filter(|v| !v.is_empty()) {
                Reference::Variant(v.to_owned())
            } else if let Some(e) = name.strip_prefix("env.").filter(|e| !e.is_empty()) {
                Reference::Env(e.to_owned())
            } else {
                Reference::Unknown(name.to_owned())
            }
        }
    }
}

/// The references in a string (for validation).
pub fn references(s: &str) -> Result<Vec<Reference>, SubstError> {
    Ok(parse(s)?
        .into_iter()
        .filter_map(|p| match p {
            Piece::Ref(r) => Some(r),
            Piece::Text(_) => None,
        })
        .collect())
}

/// Values to substitute. A `None` field leaves its reference in place (written back as
/// `${…}`), which is how the spec hash is taken before `${port}` and `${env.*}` are known.
#[derive(Debug, Clone, Default)]
pub struct Context<'a> {
    /// Value of `${port}`.
    pub port: Option<u16>,
    /// Value of `${servebench}`.
    pub servebench: Option<&'a str>,
    /// The variant's `vars`.
    pub vars: Option<&'a BTreeMap<String, String>>,
    /// Read environment variables for `${env.*}`.
    pub env: bool,
    /// Value of `${node.rank}` (each rank of a multi-node server resolves its own).
    pub node_rank: Option<u32>,
    /// Value of `${node.count}`.
    pub node_count: Option<u32>,
    /// Value of `${head.host}`.
    pub head_host: Option<&'a str>,
    /// Value of `${head.port}`.
    pub head_port: Option<u16>,
}

/// Substitute references in `s`.
pub fn substitute(s: &str, ctx: &Context<'_>) -> Result<String, SubstError> {
    let mut out = String::with_capacity(s.len());
    for piece in parse(s)? {
        match piece {
            Piece::Text(t) => out.push_str(&t.replace('$', "$$")),
            Piece::Ref(r) => match (&r, ctx) {
                (Reference::Port, Context { port: Some(p), .. }) => out.push_str(&p.to_string()),
                (
                    Reference::Servebench,
                    Context {
                        servebench: Some(b),
                        ..
                    },
                ) => out.push_str(b),
                (
                    Reference::Variant(v),
                    Context {
                        vars: Some(vars), ..
                    },
                ) => {
                    let val = vars
                        .get(v)
                        .ok_or_else(|| SubstError::MissingVar(v.clone()))?;
                    out.push_str(&val.replace('$', "$$"));
                }
                (Reference::Env(e), Context { env: true, .. }) => {
                    let val = env_value(e).ok_or_else(|| SubstError::MissingEnv(e.clone()))?;
                    out.push_str(&val.replace('$', "$$"));
                }
                (
                    Reference::NodeRank,
                    Context {
                        node_rank: Some(r), ..
                    },
                ) => {
                    out.push_str(&r.to_string());
                }
                (
                    Reference::NodeCount,
                    Context {
                        node_count: Some(n),
                        ..
                    },
                ) => {
                    out.push_str(&n.to_string());
                }
                (
                    Reference::HeadHost,
                    Context {
                        head_host: Some(h), ..
                    },
                ) => {
                    out.push_str(&h.replace('$', "$$"));
                }
                (
                    Reference::HeadPort,
                    Context {
                        head_port: Some(p), ..
                    },
                ) => {
                    out.push_str(&p.to_string());
                }
                (Reference::Unknown(u), _) => return Err(SubstError::Unknown(u.clone())),
                (other, _) => out.push_str(&write_ref(other)),
            },
        }
    }
    Ok(out)
}

/// Substitute everything and unescape `$$`: the final string handed to a process.
pub fn resolve(s: &str, ctx: &Context<'_>) -> Result<String, SubstError> {
    let partial = substitute(s, ctx)?;
    let mut out = String::with_capacity(partial.len());
    for piece in parse(&partial)? {
        match piece {
            Piece::Text(t) => out.push_str(&t),
            Piece::Ref(r) => out.push_str(&write_ref(&r)),
        }
    }
    Ok(out)
}

fn write_ref(r: &Reference) -> String {
    match r {
        Reference::Port => "${port}".into(),
        Reference::Servebench => "${servebench}".into(),
        Reference::Variant(v) => format!("${{variant.{v}}}"),
        Reference::Env(e) => format!("${{env.{e}}}"),
        Reference::NodeRank => "${node.rank}".into(),
        Reference::NodeCount => "${node.count}".into(),
        Reference::HeadHost => "${head.host}".into(),
        Reference::HeadPort => "${head.port}".into(),
        Reference::Unknown(u) => format!("${{{u}}}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_and_substitutes() {
        let vars: BTreeMap<String, String> = [("backend".to_owned(), "cutlass".to_owned())].into();
        let ctx = Context {
            port: Some(8123),
            servebench: Some("/bin/sb"),
            vars: Some(&vars),
            env: false,
            ..Context::default()
        };
        assert_eq!(
            resolve("--port=${port}", &ctx).as_deref(),
            Ok("--port=8123")
        );
        assert_eq!(
            resolve("b='${variant.backend}'", &ctx).as_deref(),
            Ok("b='cutlass'")
        );
        assert_eq!(resolve("cost $$5", &ctx).as_deref(), Ok("cost $5"));
        assert_eq!(
            resolve("${env.HOME_X}", &ctx).as_deref(),
            Ok("${env.HOME_X}")
        );
        assert_eq!(
            resolve("${variant.nope}", &ctx),
            Err(SubstError::MissingVar("nope".into()))
        );
        assert_eq!(parse("x ${port"), Err(SubstError::Unclosed(2)));
        assert_eq!(
            references("${prot}"),
            Ok(vec![Reference::Unknown("prot".into())])
        );
        let partial = Context {
            vars: Some(&vars),
            ..Context::default()
        };
        assert_eq!(
            substitute("${port}/${variant.backend}", &partial).as_deref(),
            Ok("${port}/cutlass")
        );
    }

    #[test]
    fn node_references_resolve_per_rank_and_stay_in_place_until_known() {
        let partial = Context {
            port: Some(30000),
            node_count: Some(2),
            head_host: Some("10.0.0.1"),
            head_port: Some(20000),
            ..Context::default()
        };
        let args = "--nnodes=${node.count} --node-rank=${node.rank} --dist-init-addr=${head.host}:${head.port} --port=${port} $$HOME";
        let kept = substitute(args, &partial).expect("partial");
        assert_eq!(
            kept,
            "--nnodes=2 --node-rank=${node.rank} --dist-init-addr=10.0.0.1:20000 --port=30000 $$HOME"
        );
        let rank1 = Context {
            node_rank: Some(1),
            ..Context::default()
        };
        assert_eq!(
            resolve(&kept, &rank1).as_deref(),
            Ok("--nnodes=2 --node-rank=1 --dist-init-addr=10.0.0.1:20000 --port=30000 $HOME")
        );
        assert_eq!(
            references("${node.rank}${node.count}${head.host}${head.port}${node.name}"),
            Ok(vec![
                Reference::NodeRank,
                Reference::NodeCount,
                Reference::HeadHost,
                Reference::HeadPort,
                Reference::Unknown("node.name".into())
            ])
        );
    }
}
