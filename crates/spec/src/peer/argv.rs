//! A peer's command line read the way Python's `argparse` reads it: `--flag value`,
//! `--flag=value`, switches, lists (`nargs='+'`/`'*'`: every following token that is not an
//! option), a negative number as a value (`--request-rate -1`), and a unique prefix of a
//! flag for the flag (`allow_abbrev`, on by default in both tools' parsers).

use std::collections::BTreeMap;

/// How many values a flag takes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Arity {
    /// `action="store_true"` (or a `BooleanOptionalAction` form): no value.
    Switch,
    /// One value.
    One,
    /// `nargs='+'` or `'*'`: the following non-option tokens.
    Many,
}

/// One flag of a peer's parser.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FlagDef {
    /// The long name, `--request-rate`.
    pub name: &'static str,
    /// Its values.
    pub arity: Arity,
}

/// A flag given on the command line, by its full name.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Given {
    /// As written (`--request-rate`, or the prefix `--request-r`).
    pub written: String,
    /// Its values (none for a switch).
    pub values: Vec<String>,
}

/// The command line read against a table of flags.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Parsed {
    /// Known flags by full name; a flag given twice keeps its last values, as argparse does.
    pub given: BTreeMap<&'static str, Given>,
    /// Options the tool does not have, with the tokens that followed them.
    pub unknown: Vec<String>,
    /// Tokens that are no option's value (the tools take no positional arguments).
    pub stray: Vec<String>,
    /// The leading program words (`python3 -m sglang.bench_serving`, `vllm bench serve`).
    pub program: Vec<String>,
}

/// Why a command line could not be read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ArgvError {
    /// A flag that needs a value came last or before another option.
    #[error("`{0}` needs a value")]
    MissingValue(String),
    /// A prefix that is more than one flag's.
    #[error("`{written}` is ambiguous: it could be {candidates}")]
    Ambiguous {
        /// As written.
        written: String,
        /// The flags it could be.
        candidates: String,
    },
    /// A switch given a value (`--disable-tqdm=yes`).
    #[error("`{0}` takes no value")]
    UnexpectedValue(String),
    /// An unbalanced quote in a one-string command line.
    #[error("the command line has an unclosed quote")]
    Quote,
}

/// Whether `t` reads as a negative number (argparse treats it as a value, not an option,
/// when no option of the parser looks like one).
fn negative_number(t: &str) -> bool {
    t.starts_with('-') && t.len() > 1 && t[1..].parse::<f64>().is_ok()
}

fn is_option(t: &str) -> bool {
    t.starts_with('-') && t != "-" && !negative_number(t)
}

/// Splits one pasted command string the way a POSIX shell splits words: whitespace, single
/// and double quotes, backslash escapes (no expansion).
pub fn shell_words(s: &str) -> Result<Vec<String>, ArgvError> {
    let mut out = Vec::new();
    let mut cur = String::new();
    let mut in_word = false;
    let mut chars = s.chars();
    while let Some(c) = chars.next() {
        match c {
            '\'' => {
                in_word = true;
                loop {
                    match chars.next() {
                        Some('\'') => break,
                        Some(ch) => cur.push(ch),
                        None => return Err(ArgvError::Quote),
                    }
                }
            }
            '"' => {
                in_word = true;
                loop {
                    match chars.next() {
                        Some('"') => break,
                        Some('\\') => match chars.next() {
                            Some(ch @ ('"' | '\\' | '$' | '`')) => cur.push(ch),
                            Some(ch) => {
                                cur.push('\\');
                                cur.push(ch);
                            }
                            None => return Err(ArgvError::Quote),
                        },
                        Some(ch) => cur.push(ch),
                        None => return Err(ArgvError::Quote),
                    }
                }
            }
            '\\' => {
                in_word = true;
                if let Some(ch) = chars.next()
                    && ch != '\n'
                {
                    cur.push(ch);
                }
            }
            c if c.is_whitespace() => {
                if in_word {
                    out.push(std::mem::take(&mut cur));
                    in_word = false;
                }
            }
            c => {
                in_word = true;
                cur.push(c);
            }
        }
    }
    if in_word {
        out.push(cur);
    }
    Ok(out)
}

/// The flag `written` names: exactly, else as the unique prefix of one (argparse's
/// `allow_abbrev`). `normalize` maps the written name first (vLLM's parser accepts `_` for
/// `-`).
fn resolve(
    table: &[FlagDef],
    written: &str,
    normalize: fn(&str) -> String,
) -> Result<Option<FlagDef>, ArgvError> {
    let name = normalize(written);
    if let Some(f) = table.iter().find(|f| f.name == name) {
        return Ok(Some(*f));
    }
    let matches: Vec<&FlagDef> = table.iter().filter(|f| f.name.starts_with(&name)).collect();
    match matches.as_slice() {
        [] => Ok(None),
        [one] => Ok(Some(**one)),
        many => Err(ArgvError::Ambiguous {
            written: written.to_owned(),
            candidates: many
                .iter()
                .map(|f| format!("`{}`", f.name))
                .collect::<Vec<_>>()
                .join(", "),
        }),
    }
}

/// Reads `argv` (after any program words) against `table`.
pub fn parse(
    argv: &[String],
    table: &[FlagDef],
    normalize: fn(&str) -> String,
) -> Result<Parsed, ArgvError> {
    let mut out = Parsed::default();
    let mut i = 0;
    // Program words before the first long option: `python3 -m sglang.bench_serving` (the
    // tools' own flags are all long).
    while i < argv.len() && !argv[i].starts_with("--") {
        out.program.push(argv[i].clone());
        i += 1;
    }
    while i < argv.len() {
        let tok = &argv[i];
        i += 1;
        if !is_option(tok) {
            out.stray.push(tok.clone());
            continue;
        }
        let (written, inline) = match tok.split_once('=') {
            Some((a, b)) => (a.to_owned(), Some(b.to_owned())),
            None => (tok.clone(), None),
        };
        let Some(def) = resolve(table, &written, normalize)? else {
            let mut text = tok.clone();
            while i < argv.len() && !is_option(&argv[i]) {
                text.push(' ');
                text.push_str(&argv[i]);
                i += 1;
            }
            out.unknown.push(text);
            continue;
        };
        let values = match (def.arity, inline) {
            (Arity::Switch, Some(_)) => return Err(ArgvError::UnexpectedValue(written)),
            (Arity::Switch, None) => Vec::new(),
            (Arity::One, Some(v)) => vec![v],
            (Arity::One, None) => match argv.get(i) {
                Some(v) if !is_option(v) => {
                    i += 1;
                    vec![v.clone()]
                }
                _ => return Err(ArgvError::MissingValue(written)),
            },
            (Arity::Many, first) => {
                let mut vs: Vec<String> = first.into_iter().collect();
                while i < argv.len() && !is_option(&argv[i]) {
                    vs.push(argv[i].clone());
                    i += 1;
                }
                vs
            }
        };
        out.given.insert(def.name, Given { written, values });
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    const T: &[FlagDef] = &[
        FlagDef {
            name: "--request-rate",
            arity: Arity::One,
        },
        FlagDef {
            name: "--random-input-len",
            arity: Arity::One,
        },
        FlagDef {
            name: "--random-output-len",
            arity: Arity::One,
        },
        FlagDef {
            name: "--header",
            arity: Arity::Many,
        },
        FlagDef {
            name: "--disable-tqdm",
            arity: Arity::Switch,
        },
    ];

    fn words(s: &str) -> Vec<String> {
        shell_words(s).expect("words")
    }

    #[test]
    fn reads_values_negative_numbers_lists_prefixes_and_unknowns() {
        let p = parse(
            &words(
                "python3 -m sglang.bench_serving --request-rate -1 --random-input=512 \
                 --header A=1 B=2 --disable-tqdm --bogus 3 --random-output-len 7",
            ),
            T,
            str::to_owned,
        )
        .expect("parsed");
        assert_eq!(p.program, ["python3", "-m", "sglang.bench_serving"]);
        assert_eq!(p.given["--request-rate"].values, ["-1"]);
        assert_eq!(p.given["--random-input-len"].values, ["512"]);
        assert_eq!(p.given["--random-input-len"].written, "--random-input");
        assert_eq!(p.given["--header"].values, ["A=1", "B=2"]);
        assert!(p.given["--disable-tqdm"].values.is_empty());
        assert_eq!(p.unknown, ["--bogus 3"]);
        assert_eq!(p.given["--random-output-len"].values, ["7"]);
    }

    #[test]
    fn ambiguous_prefixes_and_missing_values_are_errors() {
        let e = parse(&words("--random 5"), T, str::to_owned).expect_err("ambiguous");
        assert!(
            e.to_string()
                .contains("`--random-input-len`, `--random-output-len`")
        );
        let e =
            parse(&words("--request-rate --disable-tqdm"), T, str::to_owned).expect_err("missing");
        assert_eq!(e, ArgvError::MissingValue("--request-rate".into()));
    }

    #[test]
    fn shell_words_follow_quotes() {
        assert_eq!(
            words(r#"a 'b c' "d \"e\"" f\ g"#),
            ["a", "b c", "d \"e\"", "f g"]
        );
        assert_eq!(shell_words("'open"), Err(ArgvError::Quote));
    }
}
