//! The arguments of `cordon mcp`'s tools, as types: each tool's input schema is derived
//! from its type ([`input_schema`]) and each call's arguments are parsed into it
//! ([`parse`]), so what the schema documents is exactly what is read.
//!
//! An argument of the wrong type or an unknown name is an error that names it (new-user
//! pass nu11 M9: `"stdin": "text"`, `"timeout_ms": "5000"` or a misspelt `time_out_ms`
//! were silently ignored — the command ran without the input or the time limit the agent
//! asked for).

use cordon_session::harness::{Command, ExecParams, HarnessError, DEFAULT_MAX_OUTPUT_BYTES};
use schemars::JsonSchema;
use serde::de::DeserializeOwned;
use serde::Deserialize;
use serde_json::{Map, Value};
use std::sync::Arc;
use std::time::Duration;

/// Default `yield_time_ms` of `exec_command`: a command still running after it returns a
/// session id.
pub const DEFAULT_YIELD_MS: u64 = 10_000;

/// `exec_command`: one command inside the sandbox.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ExecArgs {
    /// The command and its arguments (give this or `script`).
    #[schemars(length(min = 1))]
    pub argv: Option<Vec<String>>,
    /// A shell script, run by `bash -c` (give this or `argv`).
    pub script: Option<String>,
    /// Working directory (relative to the server's).
    pub cwd: Option<String>,
    /// Kill the whole process tree after this many milliseconds (outcome `timed-out`).
    #[schemars(range(min = 1))]
    pub timeout_ms: Option<u64>,
    /// Return after this many milliseconds if the command still runs, with a `session_id`
    /// (default 10000). Also accepted as `wait_ms`, the name `write_stdin` and
    /// `read_output` give their wait (new-user pass 239 #4).
    #[serde(alias = "wait_ms")]
    pub yield_time_ms: Option<u64>,
    /// Run on a terminal (interactive programs: `python3 -i`, `bash`).
    pub tty: Option<bool>,
    /// Terminal rows (with `tty`; default 24).
    #[schemars(range(min = 1, max = 1000))]
    pub rows: Option<u16>,
    /// Terminal columns (with `tty`; default 80).
    #[schemars(range(min = 1, max = 1000))]
    pub cols: Option<u16>,
    /// `true`: keep stdin open for `write_stdin` (implied by `tty`). A string: the
    /// command's input, then end of file (as `printf … | cmd`; with `tty` it is typed on the
    /// terminal, which stays open).
    pub stdin: Option<Stdin>,
    /// Extra permissions for this command only (needs the user's approval), e.g.
    /// `{"network": true, "entries": [{"path": "/data", "access": "write"}]}`.
    pub additional_permissions: Option<Map<String, Value>>,
    /// Why this is needed (shown to the person asked).
    pub justification: Option<String>,
    /// Cap on output bytes returned (default 65536). While the command runs, the rest
    /// stays readable (`remaining_bytes`, `read_output`); from an ended command the answer
    /// keeps its start and end and leaves the middle out (`omitted_bytes`).
    #[schemars(range(min = 1))]
    pub max_output_bytes: Option<usize>,
}

/// `exec_command`'s `stdin`: keep it open, or the input itself.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(untagged)]
#[schemars(inline)]
pub enum Stdin {
    /// Keep stdin open (`true`) or give the command an empty one (`false`).
    Open(bool),
    /// The command's input.
    Text(String),
}

/// `write_stdin`: input for a running session.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct WriteStdinArgs {
    /// Session id from `exec_command`.
    pub session_id: String,
    /// Text to write (add `\n` to submit a line; on a terminal `\u0003` is ^C, `\u0004`
    /// end of input).
    pub chars: Option<String>,
    /// Close stdin afterwards (end of file).
    pub close_stdin: Option<bool>,
    /// Gather the output that arrives within this many milliseconds (default 500, at most
    /// 600000; sooner when the command ends). Also accepted as `yield_time_ms`, the name
    /// `exec_command` gives its wait.
    #[serde(alias = "yield_time_ms")]
    pub wait_ms: Option<u64>,
    /// Cap on output bytes returned (default 65536).
    #[schemars(range(min = 1))]
    pub max_output_bytes: Option<usize>,
}

/// `read_output`: a session's output since the last read.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ReadOutputArgs {
    /// Session id from `exec_command`.
    pub session_id: String,
    /// Gather the output that arrives within this many milliseconds (default 1000, at most
    /// 600000; sooner when the command ends). Also accepted as `yield_time_ms`, the name
    /// `exec_command` gives its wait.
    #[serde(alias = "yield_time_ms")]
    pub wait_ms: Option<u64>,
    /// Wait (up to `wait_ms`) for the session to end instead.
    pub wait_for_exit: Option<bool>,
    /// Cap on output bytes returned (default 65536).
    #[schemars(range(min = 1))]
    pub max_output_bytes: Option<usize>,
    /// Resize the terminal first (with `cols`).
    #[schemars(range(min = 1, max = 1000))]
    pub rows: Option<u16>,
    /// Resize the terminal first (with `rows`).
    #[schemars(range(min = 1, max = 1000))]
    pub cols: Option<u16>,
}

/// `kill`: end a session's process tree, or signal it.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct KillArgs {
    /// Session id from `exec_command`.
    pub session_id: String,
    /// Send this signal instead of killing (SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGUSR1,
    /// SIGUSR2, SIGWINCH).
    pub signal: Option<String>,
}

/// The input schema of a tool whose arguments are `T`, as an MCP tool carries it (a JSON
/// object schema; the `$schema` and `title` keys dropped).
pub fn input_schema<T: JsonSchema>() -> Arc<Map<String, Value>> {
    let mut v = schemars::schema_for!(T).to_value();
    if let Value::Object(m) = &mut v {
        m.remove("$schema");
        m.remove("title");
    }
    match v {
        Value::Object(m) => Arc::new(m),
        _ => Arc::new(Map::new()),
    }
}

/// Parses `tool`'s arguments into `T`. Errors (a usage error naming the tool and the
/// argument): an unknown argument, a wrong type, a missing required one, with what was
/// expected.
pub fn parse<T: DeserializeOwned>(tool: &str, args: Map<String, Value>) -> Result<T, HarnessError> {
    serde_path_to_error::deserialize(Value::Object(args)).map_err(|e| {
        let at = e.path().to_string();
        let e = e.into_inner();
        if at == "." {
            HarnessError::Usage(format!("{tool}: bad arguments: {e}"))
        } else {
            HarnessError::Usage(format!("{tool}: bad argument `{at}`: {e}"))
        }
    })
}

/// A cap on output bytes, defaulted.
///
/// Errors: 0, which the schema excludes (`minimum: 1`); it was taken as 1 (new-user pass
/// 152).
pub fn max_bytes(n: Option<usize>) -> Result<usize, HarnessError> {
    match n {
        Some(0) => Err(HarnessError::Usage(
            "max_output_bytes must be at least 1 (leave it out for the default, 65536)".into(),
        )),
        n => Ok(n.unwrap_or(DEFAULT_MAX_OUTPUT_BYTES)),
    }
}

/// A terminal size from `rows` and `cols` when both are given; one without the other is
/// an error (it would be ignored).
pub fn size(rows: Option<u16>, cols: Option<u16>) -> Result<Option<(u16, u16)>, HarnessError> {
    match (rows, cols) {
        (Some(r), Some(c)) => Ok(Some((r.clamp(1, 1000), c.clamp(1, 1000)))),
        (None, None) => Ok(None),
        _ => Err(HarnessError::Usage(
            "give both rows and cols to size the terminal".into(),
        )),
    }
}

impl ExecArgs {
    /// The harness call these arguments ask for. Errors: neither or both of `argv` and
    /// `script`, an empty `argv`, half a terminal size.
    pub fn into_params(self) -> Result<ExecParams, HarnessError> {
        let command = match (self.argv, self.script) {
            (Some(a), None) if !a.is_empty() => Command::Argv(a),
            (Some(_), None) => {
                return Err(HarnessError::Usage(
                    "argv must be a non-empty list of strings".into(),
                ))
            }
            (None, Some(s)) => Command::Script(s),
            _ => {
                return Err(HarnessError::Usage(
                    "give exactly one of argv (a list of strings) or script (a string)".into(),
                ))
            }
        };
        let mut p = match command {
            Command::Argv(a) => ExecParams::argv(a),
            Command::Script(s) => ExecParams::script(s),
        };
        if let Some(c) = self.cwd {
            p = p.cwd(c);
        }
        // 0 is outside the schema (`minimum: 1`): it timed out at once (new-user pass 152).
        if self.timeout_ms == Some(0) {
            return Err(HarnessError::Usage(
                "timeout_ms must be at least 1 (leave it out for the profile's time limit)".into(),
            ));
        }
        p.timeout = self.timeout_ms.map(Duration::from_millis);
        p.tty = self.tty.unwrap_or(false);
        match self.stdin {
            None | Some(Stdin::Open(false)) => {}
            Some(Stdin::Open(true)) => p.stdin = true,
            Some(Stdin::Text(t)) => p.stdin_data = Some(t.into_bytes()),
        }
        // One of the two alone takes the documented default for the other (new-user pass
        // nu24, F7h: `rows` alone was an error).
        let (rows, cols) = match (self.rows, self.cols) {
            (Some(r), None) => (Some(r), Some(80)),
            (None, Some(c)) => (Some(24), Some(c)),
            rc => rc,
        };
        if let Some(s) = size(rows, cols)? {
            p.size = s;
        }
        p.yield_time = Some(Duration::from_millis(
            self.yield_time_ms.unwrap_or(DEFAULT_YIELD_MS),
        ));
        p.additional_permissions = self
            .additional_permissions
            .map(|m| Value::Object(m).to_string());
        p.justification = self.justification;
        p.max_output_bytes = max_bytes(self.max_output_bytes)?;
        Ok(p)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn exec(v: Value) -> Result<ExecParams, HarnessError> {
        let Value::Object(m) = v else { panic!() };
        parse::<ExecArgs>("exec_command", m)?.into_params()
    }

    /// nu24 F7h: `rows` or `cols` alone takes the documented default for the other.
    #[test]
    fn one_terminal_dimension_takes_the_others_default() {
        let p = exec(json!({"argv": ["bash"], "tty": true, "rows": 40})).unwrap();
        assert_eq!(p.size, (40, 80));
        let p = exec(json!({"argv": ["bash"], "tty": true, "cols": 120})).unwrap();
        assert_eq!(p.size, (24, 120));
    }

    /// nu11 M9: a string `stdin` is the command's input (it was ignored: the command read
    /// an empty stdin). Twins: `true` keeps it open, absent and `false` give none.
    #[test]
    fn a_string_stdin_is_the_commands_input() {
        let p = exec(json!({"argv": ["cat"], "stdin": "hello\n"})).unwrap();
        assert_eq!(p.stdin_data.as_deref(), Some(&b"hello\n"[..]));
        assert!(!p.stdin, "text then end of file");
        let p = exec(json!({"argv": ["cat"], "stdin": true})).unwrap();
        assert!(p.stdin && p.stdin_data.is_none());
        for v in [
            json!({"argv": ["cat"]}),
            json!({"argv": ["cat"], "stdin": false}),
        ] {
            let p = exec(v).unwrap();
            assert!(!p.stdin && p.stdin_data.is_none());
        }
    }

    /// The whole kind of nu11 M9: an argument of the wrong type or an unknown name is an
    /// error naming it, never ignored (a string `timeout_ms` ran without a time limit).
    #[test]
    fn wrong_types_and_unknown_arguments_are_errors_that_name_them() {
        for (v, names) in [
            (
                json!({"argv": ["true"], "timeout_ms": "5000"}),
                "timeout_ms",
            ),
            (
                json!({"argv": ["true"], "time_out_ms": 5000}),
                "time_out_ms",
            ),
            (json!({"argv": ["true"], "cwd": 7}), "cwd"),
            (json!({"argv": ["true"], "tty": "yes"}), "tty"),
            (
                json!({"argv": ["true"], "additional_permissions": "network"}),
                "additional_permissions",
            ),
            (json!({"argv": "true"}), "argv"),
            // New-user pass 152: 0 is outside the schema; it timed out at once, or was 1.
            (json!({"argv": ["true"], "timeout_ms": 0}), "timeout_ms"),
            (
                json!({"argv": ["true"], "max_output_bytes": 0}),
                "max_output_bytes",
            ),
        ] {
            let e = exec(v.clone()).unwrap_err().to_string();
            assert!(e.contains(names), "{v}: {e}");
        }
        let Value::Object(m) = json!({"session_id": "s-1", "char": "x"}) else {
            panic!()
        };
        let e = parse::<WriteStdinArgs>("write_stdin", m)
            .unwrap_err()
            .to_string();
        assert!(e.contains("char") && e.contains("write_stdin"), "{e}");
        let Value::Object(m) = json!({"signal": "SIGINT"}) else {
            panic!()
        };
        let e = parse::<KillArgs>("kill", m).unwrap_err().to_string();
        assert!(e.contains("session_id"), "{e}");
    }

    /// Still works: every documented argument of the right type is read.
    #[test]
    fn well_typed_arguments_are_read() {
        let p = exec(json!({
            "script": "echo hi", "cwd": "sub", "timeout_ms": 5000, "yield_time_ms": 0,
            "tty": true, "rows": 30, "cols": 100,
            "additional_permissions": {"network": true}, "justification": "why",
            "max_output_bytes": 10,
        }))
        .unwrap();
        assert_eq!(p.timeout, Some(Duration::from_millis(5000)));
        assert_eq!(p.yield_time, Some(Duration::ZERO));
        assert!(p.tty);
        assert_eq!(p.size, (30, 100));
        assert_eq!(p.cwd.as_deref(), Some(std::path::Path::new("sub")));
        assert_eq!(
            p.additional_permissions.as_deref(),
            Some(r#"{"network":true}"#)
        );
        assert_eq!(p.justification.as_deref(), Some("why"));
        assert_eq!(p.max_output_bytes, 10);
    }

    /// New-user pass 239 #4: one wait, whichever of its two names a call uses. Twin: an
    /// unknown name is still refused.
    #[test]
    fn the_wait_is_taken_under_either_name() {
        let r: ReadOutputArgs =
            serde_json::from_value(serde_json::json!({"session_id": "s", "yield_time_ms": 7}))
                .unwrap();
        assert_eq!(r.wait_ms, Some(7));
        let w: WriteStdinArgs =
            serde_json::from_value(serde_json::json!({"session_id": "s", "yield_time_ms": 8}))
                .unwrap();
        assert_eq!(w.wait_ms, Some(8));
        let e: ExecArgs =
            serde_json::from_value(serde_json::json!({"argv": ["true"], "wait_ms": 9})).unwrap();
        assert_eq!(e.yield_time_ms, Some(9));
        assert!(serde_json::from_value::<ReadOutputArgs>(
            serde_json::json!({"session_id": "s", "wait_msec": 7})
        )
        .is_err());
    }

    /// The schema is derived from the type: every argument `parse` reads is in it, and
    /// `stdin` documents both forms.
    #[test]
    fn the_schema_lists_what_is_parsed() {
        let s = input_schema::<ExecArgs>();
        assert_eq!(s["type"], "object");
        let props = s["properties"].as_object().unwrap();
        for k in [
            "argv",
            "script",
            "cwd",
            "timeout_ms",
            "yield_time_ms",
            "tty",
            "rows",
            "cols",
            "stdin",
            "additional_permissions",
            "justification",
            "max_output_bytes",
        ] {
            assert!(props.contains_key(k), "{k} missing from {s:?}");
        }
        let stdin = serde_json::to_string(&props["stdin"]).unwrap();
        assert!(
            stdin.contains("boolean") && stdin.contains("string"),
            "{stdin}"
        );
        let s = input_schema::<WriteStdinArgs>();
        assert_eq!(s["required"], json!(["session_id"]));
    }
}
