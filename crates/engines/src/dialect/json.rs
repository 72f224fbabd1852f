//! JSON written in a chosen key order. The engines' bodies come from pydantic models,
//! msgspec structs, serde structs or nlohmann's ordered_json, each with its own field order;
//! `serde_json::Value` would sort the keys (the workspace builds it without
//! `preserve_order`), so the dialects write their bodies with this small builder.

use serde::Serialize;

/// An object under construction, keys in insertion order.
#[derive(Debug, Clone, Default)]
pub struct Obj {
    buf: String,
}

impl Obj {
    /// An empty object.
    pub fn new() -> Self {
        Obj {
            buf: String::with_capacity(256),
        }
    }

    fn key(&mut self, k: &str) {
        self.buf.push(if self.buf.is_empty() { '{' } else { ',' });
        push_str(&mut self.buf, k);
        self.buf.push(':');
    }

    /// `"k": v` with `v` serialised by serde.
    pub fn f<T: Serialize + ?Sized>(mut self, k: &str, v: &T) -> Self {
        self.key(k);
        // Serialising a value into a String cannot fail for the types used here.
        self.buf
            .push_str(&serde_json::to_string(v).unwrap_or_else(|_| "null".into()));
        self
    }

    /// `"k": raw` with `raw` already JSON (a nested object or array).
    pub fn r(mut self, k: &str, raw: impl AsRef<str>) -> Self {
        self.key(k);
        self.buf.push_str(raw.as_ref());
        self
    }

    /// `"k": null`.
    pub fn null(self, k: &str) -> Self {
        self.r(k, "null")
    }

    /// `"k": v` when `v` is set, nothing otherwise (pydantic's `exclude_none`).
    pub fn opt<T: Serialize>(self, k: &str, v: Option<T>) -> Self {
        match v {
            Some(v) => self.f(k, &v),
            None => self,
        }
    }

    /// `"k": raw` when `raw` is set, nothing otherwise.
    pub fn opt_r(self, k: &str, raw: Option<String>) -> Self {
        match raw {
            Some(raw) => self.r(k, raw),
            None => self,
        }
    }

    /// The finished object.
    pub fn done(mut self) -> String {
        if self.buf.is_empty() {
            return "{}".into();
        }
        self.buf.push('}');
        self.buf
    }
}

/// A JSON array of already-serialised items.
pub fn arr<I, S>(items: I) -> String
where
    I: IntoIterator<Item = S>,
    S: AsRef<str>,
{
    let mut out = String::from("[");
    for (i, item) in items.into_iter().enumerate() {
        if i > 0 {
            out.push(',');
        }
        out.push_str(item.as_ref());
    }
    out.push(']');
    out
}

/// Appends `s` as a JSON string literal.
pub fn push_str(out: &mut String, s: &str) {
    out.push_str(&serde_json::Value::from(s).to_string());
}

/// `s` as a JSON string literal.
pub fn quoted(s: &str) -> String {
    serde_json::Value::from(s).to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_keep_their_order_and_none_is_left_out() {
        let inner = Obj::new().f("b", &1).null("a").done();
        let o = Obj::new()
            .f("z", "x\"y")
            .r("inner", &inner)
            .opt::<u32>("skip", None)
            .opt("n", Some(2.5))
            .r("list", arr([quoted("p"), "3".to_owned()]))
            .done();
        assert_eq!(
            o,
            r#"{"z":"x\"y","inner":{"b":1,"a":null},"n":2.5,"list":["p",3]}"#
        );
        assert_eq!(Obj::new().done(), "{}");
    }
}
