//! The README's lists of secrets are the code's tables (issue 8 §6: "keep the README
//! generated from, or tested against, the code"). Each list sits between `<!-- name -->`
//! markers; this test renders the table and compares. On failure it prints the expected
//! text to paste.

use cordon_policy::env::{
    Shape, HARMLESS_COMPOUNDS, SECRET_SUFFIXES, SECRET_WORDS, SHORT_SECRET_SUFFIXES, VALUE_FORMATS,
};
use cordon_policy::profile::{CREDENTIAL_STORES, SYSTEM_CREDENTIAL_FILES};

fn readme() -> String {
    std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../../README.md"))
        .expect("README.md")
}

fn section<'a>(text: &'a str, name: &str) -> &'a str {
    let open = format!("<!-- {name} -->");
    let close = format!("<!-- /{name} -->");
    let start = text
        .find(&open)
        .unwrap_or_else(|| panic!("README lacks {open}"))
        + open.len();
    let end = text[start..]
        .find(&close)
        .unwrap_or_else(|| panic!("README lacks {close}"));
    &text[start..start + end]
}

fn ticked(items: &[&str]) -> String {
    items
        .iter()
        .map(|w| format!("`{w}`"))
        .collect::<Vec<_>>()
        .join(", ")
}

fn value_formats() -> String {
    let mut names: Vec<&str> = Vec::new();
    for f in VALUE_FORMATS {
        if !names.contains(&f.name) {
            names.push(f.name);
        }
    }
    names
        .iter()
        .map(|n| {
            let rows: Vec<_> = VALUE_FORMATS.iter().filter(|f| f.name == *n).collect();
            let prefixes: Vec<&str> = rows
                .iter()
                .filter_map(|f| match f.shape {
                    Shape::Prefixed { prefix, .. } | Shape::UpperAlnum { prefix, .. } => {
                        Some(prefix)
                    }
                    _ => None,
                })
                .collect();
            if !prefixes.is_empty() {
                format!("{n} ({})", ticked(&prefixes))
            } else if rows.iter().any(|f| f.shape == Shape::AwsSecretKey) {
                format!("{n} (40 base64 characters, mixed case and digits)")
            } else {
                n.to_string()
            }
        })
        .collect::<Vec<_>>()
        .join(", ")
}

#[test]
fn readme_lists_match_the_code() {
    let text = readme();
    for (name, want) in [
        ("secret-words", ticked(SECRET_WORDS)),
        ("secret-suffixes", ticked(SECRET_SUFFIXES)),
        ("short-secret-suffixes", ticked(SHORT_SECRET_SUFFIXES)),
        ("harmless-compounds", ticked(HARMLESS_COMPOUNDS)),
        ("value-formats", value_formats()),
        ("system-credentials", ticked(SYSTEM_CREDENTIAL_FILES)),
    ] {
        assert_eq!(
            section(&text, name),
            want,
            "README section {name} is out of date; replace it with:\n{want}"
        );
    }
    // The home credential stores are listed in prose: every one must appear.
    for store in CREDENTIAL_STORES {
        assert!(
            text.contains(&format!("`{store}`")),
            "README does not list the credential store {store}"
        );
    }
    // breaker4 MEDIUM-3: every location variable through which a store or a stripped
    // config is hidden is named.
    for (var, _) in cordon_policy::locations::STORE_LOCATIONS {
        assert!(
            text.contains(&format!("`{var}`")) || text.contains(&format!("`${var}/")),
            "README does not name the credential store variable {var}"
        );
    }
    for (var, _, _) in cordon_policy::locations::STRIPPED_LOCATIONS {
        let var = var.to_ascii_uppercase();
        assert!(
            text.contains(&format!("`${var}`")) || text.contains(&format!("`${var}/")),
            "README does not name the stripped config variable {var}"
        );
    }
}

/// Every ```toml block of the README is valid TOML, each one with profiles loads as a cordon
/// config, and the whole examples' profiles resolve (new-user pass nu9: the Profile format
/// example had `network = "…"` and a `[profiles.dev.network]` table, a duplicate key, and
/// was the first thing a user copied).
#[test]
fn every_toml_example_in_the_readme_loads() {
    let text = readme();
    let mut blocks = 0;
    for (i, part) in text.split("```toml\n").enumerate().skip(1) {
        let block = &part[..part.find("```").expect("closed block")];
        blocks += 1;
        if let Err(e) = block.parse::<toml::Table>() {
            panic!("README toml block {i} is not TOML: {e}\n{block}");
        }
        // A fragment (`[profiles.dev.limits]` alone) parses; a whole profile also resolves.
        if block.contains("[profiles.") {
            let cfg =
                cordon_policy::config::Config::parse(block, std::path::Path::new("README.md"))
                    .unwrap_or_else(|e| panic!("README toml block {i}: {e}\n{block}"));
            for name in block
                .lines()
                .filter(|_| block.contains("extends"))
                .filter_map(|l| l.strip_prefix("[profiles."))
                .filter_map(|l| l.split(['.', ']']).next())
            {
                cfg.profile(name)
                    .unwrap_or_else(|e| panic!("README profile {name}: {e}"));
            }
        }
    }
    assert!(blocks >= 2, "README has toml examples");
}
