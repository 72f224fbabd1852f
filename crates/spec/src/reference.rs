//! The field reference of `docs/spec.md`, generated from the JSON Schema so the two cannot
//! drift (a test compares the committed section with this output).

use serde_json::Value;

/// Marker lines around the generated section of `docs/spec.md`.
pub const BEGIN: &str =
    "<!-- BEGIN GENERATED FIELD REFERENCE (cargo test -p servebench-spec --test it docs_drift) -->";
/// End marker.
pub const END: &str = "<!-- END GENERATED FIELD REFERENCE -->";

/// Marker lines around the generated metric list of `docs/spec.md`.
pub const METRICS_BEGIN: &str =
    "<!-- BEGIN GENERATED METRIC NAMES (cargo test -p servebench-spec --test it docs_drift) -->";
/// End marker of the metric list.
pub const METRICS_END: &str = "<!-- END GENERATED METRIC NAMES -->";

/// One row per catalogue metric: name, unit, which way is better, what it is (the same text
/// the schema's `markdownEnumDescriptions` carries).
pub fn metric_names_markdown() -> String {
    let mut s = String::from("| name | unit | better | what it is |\n|---|---|---|---|\n");
    for m in crate::metrics::catalogue() {
        let better = match m.direction {
            crate::metrics::Direction::HigherIsBetter => "higher",
            crate::metrics::Direction::LowerIsBetter => "lower",
            crate::metrics::Direction::Neutral => "—",
        };
        s.push_str(&format!(
            "| `{}` | {} | {better} | {} |\n",
            m.name,
            m.unit,
            m.description.replace('|', "\\|")
        ));
    }
    s
}

/// One row per field: key path, type, default, meaning.
pub fn field_reference_markdown() -> String {
    let schema = crate::schema::spec_schema();
    let mut rows = Vec::new();
    walk(&schema, &schema, "", &mut rows, 0);
    let mut s = String::from("| key | type | default | meaning |\n|---|---|---|---|\n");
    for (path, ty, default, required, desc) in rows {
        let default = match (required, default) {
            (true, _) => "required".to_owned(),
            (false, Some(d)) => format!("`{d}`"),
            (false, None) => "—".to_owned(),
        };
        s.push_str(&format!(
            "| `{path}` | {ty} | {default} | {} |\n",
            desc.replace('\n', " ").replace('|', "\\|")
        ));
    }
    s
}

type Row = (String, String, Option<String>, bool, String);

fn resolve<'a>(root: &'a Value, node: &'a Value) -> &'a Value {
    match node
        .get("$ref")
        .and_then(Value::as_str)
        .and_then(|r| r.strip_prefix('#'))
    {
        Some(p) => root.pointer(p).unwrap_or(node),
        None => node,
    }
}

fn walk(root: &Value, node: &Value, prefix: &str, rows: &mut Vec<Row>, depth: usize) {
    if depth > 12 {
        return;
    }
    let n = resolve(root, node);
    let Some(props) = n.get("properties").and_then(Value::as_object) else {
        return;
    };
    let required: Vec<&str> = n
        .get("required")
        .and_then(Value::as_array)
        .map(|a| a.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    for (key, field) in props {
        let path = if prefix.is_empty() {
            key.clone()
        } else {
            format!("{prefix}.{key}")
        };
        let target = resolve(root, field);
        let desc = field
            .get("description")
            .or_else(|| target.get("description"))
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_owned();
        let default = field.get("default").map(|d| match d {
            Value::String(s) => s.clone(),
            other => other.to_string(),
        });
        rows.push((
            path.clone(),
            type_of(root, field),
            default,
            required.contains(&key.as_str()),
            desc,
        ));
        if target.get("properties").is_some() {
            walk(root, target, &path, rows, depth + 1);
        } else if let Some(items) = target.get("items") {
            let item = resolve(root, items);
            if item.get("properties").is_some() {
                walk(root, item, &format!("{path}[]"), rows, depth + 1);
            }
        } else if let Some(branches) = target.get("anyOf").and_then(Value::as_array) {
            for b in branches {
                let b = resolve(root, b);
                if b.get("properties").is_some() {
                    walk(root, b, &path, rows, depth + 1);
                }
            }
        }
    }
}

fn type_of(root: &Value, field: &Value) -> String {
    let t = resolve(root, field);
    if let Some(name) = field
        .get("$ref")
        .and_then(Value::as_str)
        .and_then(|r| r.rsplit('/').next())
    {
        if name == "MetricName" {
            return "metric name (below)".into();
        }
        if let Some(e) = t.get("enum").and_then(Value::as_array) {
            return e
                .iter()
                .map(|v| format!("`{}`", v.as_str().unwrap_or("?")))
                .collect::<Vec<_>>()
                .join(" \\| ");
        }
        return match name {
            "MetricThresholds" => "map of metric name → number".into(),
            "Duration" => "duration (`10s`)".into(),
            "Rate" => "number > 0 \\| `inf`".into(),
            "TokenCount" => "integer \\| `{min, max}`".into(),
            _ => "mapping".into(),
        };
    }
    if let Some(e) = t.get("enum").and_then(Value::as_array) {
        return e
            .iter()
            .map(|v| format!("`{}`", v.as_str().unwrap_or("?")))
            .collect::<Vec<_>>()
            .join(" \\| ");
    }
    match t.get("type").and_then(Value::as_str) {
        Some("array") => {
            let item = t
                .get("items")
                .map(|i| type_of(root, i))
                .unwrap_or_else(|| "any".into());
            format!("list of {item}")
        }
        Some("object") => match t.get("additionalProperties") {
            Some(Value::Object(ap)) if !ap.is_empty() => {
                format!("map of {}", type_of(root, &Value::Object(ap.clone())))
            }
            _ => "mapping".into(),
        },
        Some(other) => other.to_owned(),
        None => "any JSON".into(),
    }
}
