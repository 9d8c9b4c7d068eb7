//! Commands given to a tool in its own language or as an option's value (attack pass 193,
//! classes F5 and F8): `sed '1e CMD'`, `awk 'BEGIN{system("CMD")}'`, `tar
//! --to-command=CMD`, `vim -c '!CMD'`, `socat SYSTEM:CMD`, `ssh -o ProxyCommand=CMD`,
//! `sqlite3 db '.shell CMD'`, `man -P CMD`, `rsync -e CMD`, `zip -TT CMD`, `LESSOPEN`, …, and
//! files such tools write (`sed 'w .git/config'`, `curl -o .git/config`, `tar -x -C .git`).
//!
//! One rule throughout: an option or statement whose value is a command line has that
//! command judged as if it ran on its own ([`embedded`]: its findings are this command's,
//! named so); a command that cannot be read statically (run-time text, a script file, a
//! construct this module does not parse) is asked about (`dynamic_command`). A file the tool
//! writes is judged as a redirection to it would be ([`dangerous_write_target`]: a
//! repository's `.git/config`, shell start-up files, system paths, devices).

use super::{
    cwd_candidates, dangerous, dangerous_write_target, fed_by, finding, git_sub_args, names_git,
    resolve, Cwd, DangerCtx, Finding, FindingId, LongOption,
};
use crate::model::{Decision, RedirectKind, Segment};

/// How a command given to a tool gets its standard input.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Input {
    /// The tool's own (a terminal, or whatever the command line gives it).
    Inherited,
    /// Data the tool produces at run time (an archive, a page, a network stream): an
    /// interpreter reading it runs text known only then.
    Data,
}

/// An ask for a command this module cannot read.
fn unread(reason: impl Into<String>) -> Finding {
    finding(
        FindingId::DynamicCommand,
        Decision::Ask,
        format!("{}: what it runs is not checked", reason.into()),
    )
}

/// Judge `text`, a command line `what` runs, as if it ran on its own: its findings are
/// added (worded with `what`); a part of it that does not parse statically is asked about.
fn embedded(what: &str, text: &str, input: Input, cx: &DangerCtx<'_>, out: &mut Vec<Finding>) {
    let left = cx.alias_budget.get();
    if left == 0 {
        out.push(unread(format!(
            "{what} runs `{text}` (too many nested commands)"
        )));
        return;
    }
    cx.alias_budget.set(left - 1);
    let script = match input {
        Input::Inherited => text.to_string(),
        Input::Data => format!("echo \"$TOOL_DATA\" | {text}"),
    };
    let parsed = crate::parse::parse_script(&script);
    if let Some(o) = parsed.opaque.iter().find(|o| !o.kind.body_is_visible()) {
        out.push(unread(format!(
            "{what} runs `{text}`, which holds {} ({})",
            o.kind, o.text
        )));
    }
    let inner = DangerCtx {
        segments: &parsed.segments,
        ..*cx
    };
    let before = out.len();
    for i in 0..parsed.segments.len() {
        out.extend(dangerous(i, &inner));
    }
    let mut seen = Vec::new();
    let mut k = before;
    while k < out.len() {
        if seen.contains(&out[k].id) {
            out.remove(k);
            continue;
        }
        seen.push(out[k].id);
        out[k].reason = format!("{what} runs `{text}`: {}", out[k].reason);
        k += 1;
    }
}

/// Judge a file `what` writes, as a redirection to it would be.
fn written(what: &str, path: &str, cx: &DangerCtx<'_>, out: &mut Vec<Finding>) {
    if let Some(mut f) = dangerous_write_target(path, cx.cwds, cx.home) {
        f.reason = format!("{what}: {}", f.reason);
        out.push(f);
    }
}

/// Whether directory `dir` is, or is inside, a `.git` directory (what a tool extracting or
/// downloading into it may write: `.git/config`, hooks).
fn in_git_dir(dir: &str, cx: &DangerCtx<'_>) -> bool {
    cwd_candidates(cx.cwds)
        .iter()
        .any(|c| match resolve(c, dir, cx.home) {
            Cwd::Abs(v) | Cwd::Rel(v) | Cwd::Home(v) => v.iter().any(|p| names_git(p)),
            Cwd::Unknown => false,
        })
}

/// The ask for a tool writing files into a `.git` directory.
fn git_dir_write(what: &str, dir: &str) -> Finding {
    finding(
        FindingId::GitAlias,
        Decision::Ask,
        format!(
            "{what} writes into {dir}: a later git command of the same run uses what it sets \
             (config, hooks) unchecked"
        ),
    )
}

/// One option occurrence found by [`scan`]: its name as given (`-o`, `--output`) and its
/// value, `None` when the value is known only at run time.
struct Opt {
    name: String,
    value: Option<String>,
}

/// getopt-style scan of `seg`'s arguments for the options in `short_wanted` (letters) and
/// `long_wanted` (long names, matched as `long`); `short_valued` lists every short option of
/// the tool that takes a value (so a cluster ends there); `long_valued` the long options
/// (besides the wanted ones) that take a separate value. Stops at `--`. Returns the wanted
/// options and the operands (static ones, with their index).
fn scan(
    seg: &Segment,
    short_valued: &str,
    short_wanted: &str,
    long_wanted: &[LongOption],
    long_valued: &[&str],
) -> (Vec<Opt>, Vec<(usize, String)>) {
    let mut opts = Vec::new();
    let mut operands = Vec::new();
    let argv = &seg.argv;
    let value_at = |j: usize| argv.get(j).filter(|_| seg.is_static(j)).cloned();
    let mut i = 1;
    while i < argv.len() {
        let t = argv[i].as_str();
        if !seg.is_static(i) {
            i += 1;
            continue;
        }
        if t == "--" {
            operands.extend(
                (i + 1..argv.len())
                    .filter(|&j| seg.is_static(j))
                    .map(|j| (j, argv[j].clone())),
            );
            break;
        }
        if let Some(long) = t.strip_prefix("--") {
            let (name, val) = match long.split_once('=') {
                Some((n, v)) => (n, Some(v.to_string())),
                None => (long, None),
            };
            if let Some(o) = long_wanted.iter().find(|o| o.matches_body(name)) {
                let value = match val {
                    Some(v) => Some(v),
                    None => {
                        i += 1;
                        value_at(i)
                    }
                };
                opts.push(Opt {
                    name: format!("--{}", o.name()),
                    value,
                });
            } else if val.is_none() && long_valued.contains(&name) {
                i += 1;
            }
            i += 1;
            continue;
        }
        if t.len() > 1 && t.starts_with('-') {
            for (k, c) in t[1..].char_indices() {
                if short_valued.contains(c) {
                    let rest = &t[1 + k + c.len_utf8()..];
                    let value = if rest.is_empty() {
                        i += 1;
                        value_at(i)
                    } else {
                        Some(rest.to_string())
                    };
                    if short_wanted.contains(c) {
                        opts.push(Opt {
                            name: format!("-{c}"),
                            value,
                        });
                    }
                    break;
                }
            }
            i += 1;
            continue;
        }
        operands.push((i, t.to_string()));
        i += 1;
    }
    (opts, operands)
}

/// The static text a segment reads as its standard input: a static heredoc or
/// herestring, or the arguments of an `echo`/`printf` with static arguments feeding it.
/// `Err(())` when it reads text known only at run time (a dynamic heredoc, another
/// program's output); `Ok(None)` when it reads none of these (a terminal, a file).
fn stdin_text(seg: &Segment, cx: &DangerCtx<'_>) -> Result<Option<String>, ()> {
    for r in seg.redirections.iter().rev() {
        match r.kind {
            RedirectKind::Heredoc | RedirectKind::Herestring => {
                return r.text.clone().map(Some).ok_or(());
            }
            // `< <(…)`, `< "$f"`, `< /dev/fd/3`: text known only at run time.
            RedirectKind::Read if r.fd.as_deref().unwrap_or("0") == "0" => {
                return if r.dynamic || runtime_file(&r.target) {
                    Err(())
                } else {
                    Ok(None)
                };
            }
            RedirectKind::Dup if r.fd.as_deref() == Some("0") => return Err(()),
            _ => {}
        }
    }
    match fed_by(seg, cx) {
        None => Ok(None),
        Some(s)
            if s.program.is_trusted_name()
                && matches!(s.program.name.as_str(), "echo" | "printf")
                && s.dynamic_args.is_empty() =>
        {
            Ok(Some(s.argv[1..].join(" ").replace("\\n", "\n")))
        }
        Some(_) => Err(()),
    }
}

/// Whether file `f` is text made at run time: a process substitution, a descriptor or
/// the standard input (`<(…)`, `/dev/fd/3`, `/dev/stdin`, `/proc/self/fd/0`, `-`).
fn runtime_file(f: &str) -> bool {
    f == "-"
        || f.starts_with("<(")
        || f.starts_with(">(")
        || f.starts_with("/dev/fd/")
        || matches!(f, "/dev/stdin" | "/dev/tty")
        || (f.starts_with("/proc/") && f.contains("/fd/"))
}

/// The checks of this module for program `name` (its folded basename).
pub(super) fn checks(name: &str, seg: &Segment, cx: &DangerCtx<'_>, out: &mut Vec<Finding>) {
    match name {
        "sed" | "gsed" => sed(seg, cx, out),
        "awk" | "gawk" | "mawk" | "nawk" | "busybox-awk" => awk(name, seg, cx, out),
        "tar" | "gtar" | "bsdtar" => tar(seg, cx, out),
        "vim" | "vi" | "nvim" | "ex" | "view" | "vimdiff" | "gvim" | "evim" | "gview" | "rvim"
        | "nvi" | "elvis" | "vile" => vim(name, seg, cx, out),
        "ed" | "red" => ed(name, seg, cx, out),
        "socat" => socat(seg, cx, out),
        "ssh" | "scp" | "sftp" | "slogin" => ssh(name, seg, cx, out),
        "sqlite3" | "sqlite" => sqlite(name, seg, cx, out),
        "man" => man(seg, cx, out),
        "make" | "gmake" => make(name, seg, out),
        "rsync" => rsync(seg, cx, out),
        "zip" => zip(seg, cx, out),
        "less" | "more" | "most" => less(name, seg, cx, out),
        "rg" => {
            let (opts, _) = scan(seg, "ABCEefgjMmrTt", "", &[LongOption::exact("pre")], &[]);
            for o in opts {
                command_value("rg --pre", o.value, Input::Inherited, cx, out);
            }
        }
        "at" | "batch" => at(name, seg, out),
        "curl" => curl(seg, cx, out),
        "wget" => wget(seg, cx, out),
        "find" => find_files(seg, cx, out),
        "unzip" => {
            let (opts, _) = scan(seg, "dxP", "d", &[], &[]);
            for o in opts {
                if let Some(v) = o.value.filter(|v| in_git_dir(v, cx)) {
                    out.push(git_dir_write("unzip -d", &v));
                }
            }
        }
        "perl" => perl(seg, cx, out),
        "patch" => patch(seg, cx, out),
        "git" => {
            git_apply(seg, cx, out);
            git_outputs(seg, cx, out);
        }
        "sort" | "shuf" | "uniq" | "split" | "csplit" => text_outputs(name, seg, cx, out),
        n if COMPRESSORS.iter().any(|(c, _)| *c == n) => compressor(n, seg, cx, out),
        // `7z x a.7z -o.git`: the directory it extracts into (attached, 7-Zip's syntax).
        "7z" | "7za" | "7zr" | "7zz" => {
            for a in seg
                .argv
                .iter()
                .skip(1)
                .enumerate()
                .filter(|(i, _)| seg.is_static(i + 1))
            {
                if let Some(dir) = a.1.strip_prefix("-o").filter(|d| !d.is_empty()) {
                    if in_git_dir(dir, cx) {
                        out.push(git_dir_write(&format!("{name} -o"), dir));
                    }
                }
            }
        }
        _ => {}
    }
    wrapper_outputs(seg, cx, out);
}

/// curl: the files it writes (`-o`, `-D`, `-c`, `--trace`, `--stderr`, `--libcurl`, …, in
/// any abbreviation curl takes) are judged; `--output-dir` into `.git` asks; a config file
/// (`-K`/`--config`) may set any of them: a static one given on the input is read for
/// them, any other is asked about (attack pass 197 B8).
fn curl(seg: &Segment, cx: &DangerCtx<'_>, out: &mut Vec<Finding>) {
    let (opts, _) = scan(
        seg,
        "AbCcdDeEFHhKmoPQrTtUuwxXYyz",
        "oDcK",
        &CURL_WRITES
            .iter()
            // `--cookie` (which reads) is itself, not `--cookie-jar` abbreviated.
            .map(|n| LongOption::abbrev(n).except(&["cookie"]))
            .collect::<Vec<_>>(),
        &[],
    );
    for o in opts {
        if o.name == "-K" || o.name == "--config" {
            curl_config(o.value.as_deref(), seg, cx, out);
            continue;
        }
        let Some(v) = o.value else {
            out.push(unread(format!(
                "curl {} writes a file named only at run time",
                o.name
            )));
            continue;
        };
        curl_write(&o.name, &v, cx, out);
    }
}

/// curl's long options that name a file it writes (and `config`, which may set them).
const CURL_WRITES: &[&str] = &[
    "output",
    "output-dir",
    "dump-header",
    "cookie-jar",
    "trace",
    "trace-ascii",
    "stderr",
    "libcurl",
    "etag-save",
    "hsts",
    "alt-svc",
    "config",
];

/// A file curl option `name` writes: judged (a directory: asked about when in `.git`).
fn curl_write(name: &str, v: &str, cx: &DangerCtx<'_>, out: &mut Vec<Finding>) {
    if name == "--output-dir" || name == "output-dir" {
        if in_git_dir(v, cx) {
            out.push(git_dir_write("curl --output-dir", v));
        }
    } else if v != "-" {
        written(&format!("curl {name}"), v, cx, out);
    }
}

/// `curl -K FILE`: a config file's lines set options (`output = FILE`, `-o FILE`, `--out
/// FILE`). Read when it is static text on the input (`-K -` with a heredoc); else asked.
fn curl_config(file: Option<&str>, seg: &Segment, cx: &DangerCtx<'_>, out: &mut Vec<Finding>) {
    let text = match (file, stdin_text(seg, cx)) {
        (Some("-"), Ok(Some(t))) => t,
        _ => {
            out.push(unread(
                "curl reads a config file this policy does not read (it may set output files)",
            ));
            return;
        }
    };
    for line in text.lines().map(str::trim) {
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let (key, value) = line
            .split_once(|c: char| c == '=' || c == ':' || c.is_whitespace())
            .map_or((line, ""), |(k, v)| (k, v));
        let value = value
            .trim_start_matches(|c: char| c == '=' || c == ':' || c.is_whitespace())
            .trim()
            .trim_matches('"');
        let short = key.strip_prefix('-').filter(|k| !k.starts_with('-'));
        let long = key.trim_start_matches('-');
        let hit = match short {
            Some(k) => matches!(k, "o" | "D" | "c" | "K").then(|| format!("-{k}")),
            None => CURL_WRITES
                .iter()
                .find(|n| LongOption::abbrev(n).except(&["cookie"]).matches_body(long))
                .map(|n| format!("--{n}")),
        };
        match hit.as_deref() {
            Some("-K" | "--config") => out.push(unread("curl's config text reads another config")),
            Some(n) => curl_write(n, value, cx, out),
            None => {}
        }
    }
}

/// wget: the files it writes (`-O`, `-o`, `-a`, `--save-cookies`, …) are judged, `-P` into
/// `.git` asks; `-e`/`--execute` wgetrc commands naming files are judged, other commands
/// and a config file (`--config`) are asked about (attack pass 197 B8).
fn wget(seg: &Segment, cx: &DangerCtx<'_>, out: &mut Vec<Finding>) {
    let (opts, _) = scan(
        seg,
        "OPoaeiBTtwQUYlAIRDX",
        "OPoae",
        &[
            LongOption::abbrev("output-document"),
            LongOption::abbrev("directory-prefix"),
            LongOption::abbrev("output-file"),
            LongOption::abbrev("append-output"),
            LongOption::abbrev("execute"),
            LongOption::abbrev("config"),
            LongOption::abbrev("save-cookies"),
            LongOption::abbrev("hsts-file"),
            LongOption::abbrev("warc-file"),
            LongOption::abbrev("rejected-log"),
        ],
        &[],
    );
    for o in opts {
        let Some(v) = o.value else {
            out.push(unread(format!(
                "wget {} is given a value known only at run time",
                o.name
            )));
            continue;
        };
        match o.name.as_str() {
            "-P" | "--directory-prefix" => {
                if in_git_dir(&v, cx) {
                    out.push(git_dir_write("wget -P", &v));
                }
            }
            "-e" | "--execute" => wget_command(&v, cx, out),
            "--config" => out.push(unread(
                "wget reads a config file this policy does not read (it may set output files)",
            )),
            _ if v == "-" => {}
            _ => written(&format!("wget {}", o.name), &v, cx, out),
        }
    }
}

/// One wgetrc command given with `wget -e` (`output_document = FILE`): a file it names is
/// judged; a command this policy does not know is asked about.
fn wget_command(cmd: &str, cx: &DangerCtx<'_>, out: &mut Vec<Finding>) {
    let (key, value) = cmd.split_once('=').unwrap_or((cmd, ""));
    let key: String = key
        .trim()
        .chars()
        .filter(|c| *c != '_' && *c != '-')
        .collect::<String>()
        .to_ascii_lowercase();
    let value = value.trim();
    match key.as_str() {
        "outputdocument" | "logfile" | "savecookies" | "hstsfile" | "warcfile" | "rejectedlog" => {
            written(&format!("wget -e {key}"), value, cx, out)
        }
        "dirprefix" => {
            if in_git_dir(value, cx) {
                out.push(git_dir_write("wget -e dir_prefix", value));
            }
        }
        "robots" | "tries" | "timeout" | "quiet" | "verbose" | "useragent" | "checkcertificate"
        | "httpsonly" | "retryconnrefused" | "wait" | "waitretry" | "limitrate" | "progress"
        | "showprogress" | "dotstyle" | "noclobber" | "continue" | "timestamping"
        | "serverresponse" | "inet4only" | "inet6only" | "maxredirect" | "readtimeout"
        | "connecttimeout" | "dnstimeout" | "header" | "referer" | "contentdisposition" => {}
        _ => out.push(unread(format!(
            "wget -e `{cmd}` is a wgetrc command this policy does not read"
        ))),
    }
}

/// find's actions that write a file (`-fprint FILE`, `-fprint0`, `-fprintf FILE FMT`,
/// `-fls FILE`): the file is judged as a write (attack pass 197 B8).
fn find_files(seg: &Segment, cx: &DangerCtx<'_>, out: &mut Vec<Finding>) {
    for (i, a) in seg.argv.iter().enumerate().skip(1) {
        if !seg.is_static(i) || !matches!(a.as_str(), "-fprint" | "-fprint0" | "-fprintf" | "-fls")
        {
            continue;
        }
        match seg.argv.get(i + 1).filter(|_| seg.is_static(i + 1)) {
            Some(f) => written(&format!("find {a}"), f, cx, out),
            None => out.push(unread(format!(
                "find {a} writes a file named only at run time"
            ))),
        }
    }
}

/// Files the wrappers around a command write besides running it (`strace -o FILE`,
/// `ltrace -o FILE`, `time -o FILE`, `script FILE`-like logs): judged as a redirection to
/// them would be (`strace -o .git/config true` rewrote the repository's config unasked).
fn wrapper_outputs(seg: &Segment, cx: &DangerCtx<'_>, out: &mut Vec<Finding>) {
    for w in &seg.wrappers {
        // The option naming the file, and every short option that takes a value (so a
        // cluster ends there and the next word is that value, not the command).
        let valued = match w.name.as_str() {
            "strace" => "abeEIoOpPsSuUX",
            "ltrace" => "aAelnopsuxDFw",
            "time" => "fo",
            _ => continue,
        };
        let args = &w.argv[1.min(w.argv.len())..];
        let mut i = 0;
        while i < args.len() {
            let a = args[i].as_str();
            if a == "--" || !a.starts_with('-') || a == "-" {
                break;
            }
            let mut value = None;
            if let Some(rest) = a.strip_prefix("--") {
                let (n, v) = rest
                    .split_once('=')
                    .map_or((rest, None), |(n, v)| (n, Some(v)));
                if n.len() >= 2 && "output".starts_with(n) {
                    value = match v {
                        Some(v) => Some(v.to_string()),
                        None => {
                            i += 1;
                            args.get(i).cloned()
                        }
                    };
                }
            } else {
                let letters = &a[1..];
                if let Some((at, c)) = letters.char_indices().find(|(_, c)| valued.contains(*c)) {
                    let rest = &letters[at + c.len_utf8()..];
                    let v = if rest.is_empty() {
                        i += 1;
                        args.get(i).cloned()
                    } else {
                        Some(rest.to_string())
                    };
                    if c == 'o' {
                        value = v;
                    }
                }
            }
            if let Some(v) = value.filter(|v| !v.is_empty()) {
                written(&format!("{} -o", w.name), &v, cx, out);
            }
            i += 1;
        }
    }
}

/// An option value that is a command line: judged, or asked about when known only at run
/// time.
fn command_value(
    what: &str,
    value: Option<String>,
    input: Input,
    cx: &DangerCtx<'_>,
    out: &mut Vec<Finding>,
) {
    match value {
        Some(v) => embedded(what, &v, input, cx, out),
        None => out.push(unread(format!(
            "{what} is given a command known only at run time"
        ))),
    }
}

// ---------------------------------------------------------------------------------------------
// sed
// ---------------------------------------------------------------------------------------------

/// What a sed script does beyond editing its stream.
#[derive(Debug, PartialEq, Eq)]
enum SedEffect {
    /// `e CMD` (`Some`), `e` or `s///e` (the pattern space, `None`).
    Exec(Option<String>),
    /// `w FILE`, `W FILE`, `s///w FILE`.
    Write(String),
}

/// sed: its scripts' `e` commands and `w` files (GNU `--sandbox` refuses both); a script
/// file (`-f`) or a script this reader cannot follow is asked about.
fn sed(seg: &Segment, cx: &DangerCtx<'_>, out: &mut Vec<Finding>) {
    if seg
        .argv
        .iter()
        .any(|a| LongOption::abbrev("sandbox").matches(a))
    {
        return;
    }
    let (opts, operands) = scan(
        seg,
        "efl",
        "ef",
        &[LongOption::abbrev("expression"), LongOption::abbrev("file")],
        &["line-length"],
    );
    // The run-time values of `-e`/`--expression` (separate words), in order.
    let mut dynamic_e = (2..seg.argv.len())
        .filter(|&i| {
            let o = &seg.argv[i - 1];
            !seg.is_static(i)
                && seg.is_static(i - 1)
                && (o == "-e"
                    || o == "--expression"
                    || (o.len() > 2
                        && o.starts_with('-')
                        && !o.starts_with("--")
                        && o.ends_with('e')
                        && !o[1..o.len() - 1].contains(['e', 'f', 'l'])))
        })
        .map(|i| seg.argv[i].clone());
    // `Ok`: a static script; `Err(Some(text))`: one spelled with run-time parts.
    let mut scripts: Vec<Result<String, Option<String>>> = Vec::new();
    for o in opts {
        if o.name == "-f" || o.name == "--file" {
            out.push(unread("sed runs a script file this policy does not read"));
            return;
        }
        scripts.push(o.value.ok_or_else(|| dynamic_e.next()));
    }
    if scripts.is_empty() {
        let first_operand = (1..seg.argv.len()).find(|&i| {
            let a = &seg.argv[i];
            !seg.is_static(i) || !a.starts_with('-') || a == "-"
        });
        match first_operand {
            Some(i) if !seg.is_static(i) => scripts.push(Err(Some(seg.argv[i].clone()))),
            Some(_) => scripts.extend(operands.first().map(|(_, s)| Ok(s.clone()))),
            None => {}
        }
    }
    for s in scripts {
        let (s, effects) = match s {
            Ok(s) => {
                let fx = sed_effects(&s);
                (s, fx)
            }
            // `sed -i "s/@VERSION@/$VERSION/g"`: plain variables in a pattern, a
            // replacement or an address are data (usability pass 200).
            Err(Some(t)) => match sed_spliced_effects(&t) {
                Some(fx) => (t, Some(fx)),
                None => {
                    out.push(unread("sed's script is known only at run time"));
                    continue;
                }
            },
            Err(None) => {
                out.push(unread("sed's script is known only at run time"));
                continue;
            }
        };
        match effects {
            None => out.push(unread(format!(
                "sed script `{s}` is not one this policy reads"
            ))),
            Some(effects) => {
                for e in effects {
                    match e {
                        SedEffect::Exec(Some(c)) => {
                            embedded("sed's `e` command", &c, Input::Inherited, cx, out)
                        }
                        SedEffect::Exec(None) => out.push(unread(
                            "sed runs its pattern space as a command (`e`, `s///e`)",
                        )),
                        SedEffect::Write(f) => written(&format!("sed writes {f}"), &f, cx, out),
                    }
                }
            }
        }
    }
}

/// The `e`/`w` effects of sed script `s` (GNU syntax); `None` when it is not read to the
/// end (a command this reader does not know: asked about).
fn sed_effects(s: &str) -> Option<Vec<SedEffect>> {
    if s.contains(SED_VAR) {
        return None;
    }
    sed_parse(s).map(|(fx, _)| fx)
}

/// Stands for a plain shell variable spliced into a sed script ([`sed_spliced_effects`]):
/// read as a line number in an address, as text elsewhere.
const SED_VAR: char = '\u{E000}';

/// The effects of a sed script spelled with run-time parts (`t`: the word as written,
/// `s/@V@/${VERSION}/g`) when each is a plain variable (`$NAME`, `${NAME}`, `$1`) inside an
/// `s`/`y` pattern or replacement or an address, and the script read with each `$` as
/// written (as a single-quoted `$` is) runs and writes nothing either; `None` otherwise
/// (a command substitution, any other expansion, or a variable elsewhere: a command, a
/// flag, a file name). What the variables hold is not judged (README Known limits).
fn sed_spliced_effects(t: &str) -> Option<Vec<SedEffect>> {
    if t.contains(['`', SED_VAR]) || t.contains("$(") {
        return None;
    }
    let b: Vec<char> = t.chars().collect();
    let mut spliced = String::new();
    let mut vars = 0;
    let mut i = 0;
    while i < b.len() {
        let name_char = |c: char| c.is_ascii_alphanumeric() || c == '_';
        if b[i] != '$' {
            spliced.push(b[i]);
            i += 1;
            continue;
        }
        let end = match b.get(i + 1) {
            Some('{') => {
                let close = b[i + 2..].iter().position(|&c| c == '}')? + i + 2;
                if close == i + 2 || !b[i + 2..close].iter().all(|&c| name_char(c)) {
                    return None;
                }
                close + 1
            }
            Some(c) if c.is_ascii_digit() => i + 2,
            Some(&c) if c.is_ascii_alphabetic() || c == '_' => {
                let mut j = i + 1;
                while j < b.len() && name_char(b[j]) {
                    j += 1;
                }
                j
            }
            // `$` as sed reads it (an anchor, the last line) or another expansion.
            Some(c) if "@*#?-!$".contains(*c) => return None,
            _ => {
                spliced.push('$');
                i += 1;
                continue;
            }
        };
        spliced.push(SED_VAR);
        vars += 1;
        i = end;
    }
    if vars == 0 {
        return None;
    }
    let (fx, data) = sed_parse(&spliced)?;
    let placed = spliced
        .chars()
        .enumerate()
        .filter(|(_, c)| *c == SED_VAR)
        .all(|(k, _)| data.iter().any(|r| r.contains(&k)));
    if !placed || fx.iter().any(|e| matches!(e, SedEffect::Exec(_))) {
        return None;
    }
    // Read with each `$` as written: a single-quoted `'$e'` beside a variable is sed's
    // last-line address and `e` command.
    if let Some(literal) = sed_parse(t) {
        if !literal.0.is_empty() {
            return None;
        }
    }
    Some(fx)
}

/// [`sed_effects`] of `s`, with the character ranges of `s` that are data: addresses and
/// the patterns and replacements of `s` and `y` (where [`SED_VAR`] may stand).
// Longer than most: a reader of sed's whole command syntax (addresses, each command's
// argument form); its closures share the cursor.
fn sed_parse(s: &str) -> Option<(Vec<SedEffect>, Vec<std::ops::Range<usize>>)> {
    let b: Vec<char> = s.chars().collect();
    let n = b.len();
    let mut i = 0;
    let mut fx = Vec::new();
    let mut data = Vec::new();
    let delimited = |mut i: usize, d: char| -> Option<usize> {
        while i < n {
            if b[i] == '\\' {
                i += 2;
                continue;
            }
            if b[i] == d {
                return Some(i + 1);
            }
            i += 1;
        }
        None
    };
    // To the end of the line (a file name, a command, a label, text).
    let rest_of_line = |i: &mut usize| -> String {
        while *i < n && (b[*i] == ' ' || b[*i] == '\t') {
            *i += 1;
        }
        let start = *i;
        while *i < n && b[*i] != '\n' {
            *i += 1;
        }
        b[start..*i].iter().collect()
    };
    let addr = |i: &mut usize| -> Option<()> {
        if *i >= n {
            return Some(());
        }
        match b[*i] {
            '0'..='9' | SED_VAR => {
                while *i < n && (b[*i].is_ascii_digit() || b[*i] == '~' || b[*i] == SED_VAR) {
                    *i += 1;
                }
            }
            '$' => *i += 1,
            '/' => {
                *i = delimited(*i + 1, '/')?;
                while *i < n && (b[*i] == 'I' || b[*i] == 'M') {
                    *i += 1;
                }
            }
            '\\' => {
                let d = *b.get(*i + 1)?;
                *i = delimited(*i + 2, d)?;
                while *i < n && (b[*i] == 'I' || b[*i] == 'M') {
                    *i += 1;
                }
            }
            _ => {}
        }
        Some(())
    };
    loop {
        while i < n && matches!(b[i], ' ' | '\t' | '\n' | ';' | '}') {
            i += 1;
        }
        if i >= n {
            return Some((fx, data));
        }
        let start = i;
        addr(&mut i)?;
        if i < n && b[i] == ',' {
            i += 1;
            if i < n && (b[i] == '+' || b[i] == '~') {
                i += 1;
                while i < n && (b[i].is_ascii_digit() || b[i] == SED_VAR) {
                    i += 1;
                }
            } else {
                addr(&mut i)?;
            }
        }
        data.push(start..i);
        while i < n && matches!(b[i], ' ' | '\t' | '!') {
            i += 1;
        }
        let c = *b.get(i)?;
        i += 1;
        match c {
            // A block: its first command follows directly.
            '{' => continue,
            '=' | 'd' | 'D' | 'g' | 'G' | 'h' | 'H' | 'n' | 'N' | 'p' | 'P' | 'x' | 'z' | 'F' => {}
            'q' | 'Q' | 'l' | 'L' => {
                while i < n && (b[i] == ' ' || b[i].is_ascii_digit()) {
                    i += 1;
                }
            }
            '#' | ':' | 'r' | 'R' | 'v' => {
                rest_of_line(&mut i);
            }
            'b' | 't' | 'T' => {
                while i < n && !matches!(b[i], ';' | '\n' | '}') {
                    i += 1;
                }
            }
            'a' | 'i' | 'c' => {
                // Text to the end of the line; a trailing backslash continues it.
                loop {
                    let line = rest_of_line(&mut i);
                    if !line.ends_with('\\') || i >= n {
                        break;
                    }
                    i += 1;
                }
            }
            'w' | 'W' => fx.push(SedEffect::Write(rest_of_line(&mut i))),
            'e' => {
                let cmd = rest_of_line(&mut i);
                fx.push(SedEffect::Exec((!cmd.trim().is_empty()).then_some(cmd)));
            }
            's' | 'y' => {
                let d = *b.get(i)?;
                if d == '\\' || d == '\n' {
                    return None;
                }
                let j = delimited(i + 1, d)?;
                let start = i + 1;
                i = delimited(j, d)?;
                data.push(start..i - 1);
                if c == 's' {
                    while i < n {
                        match b[i] {
                            'g' | 'p' | 'i' | 'I' | 'm' | 'M' | '0'..='9' => i += 1,
                            'e' => {
                                fx.push(SedEffect::Exec(None));
                                i += 1;
                            }
                            'w' => {
                                i += 1;
                                fx.push(SedEffect::Write(rest_of_line(&mut i)));
                            }
                            _ => break,
                        }
                    }
                }
            }
            _ => return None,
        }
        while i < n && (b[i] == ' ' || b[i] == '\t') {
            i += 1;
        }
        if i < n && !matches!(b[i], ';' | '\n' | '}' | '#') {
            return None;
        }
    }
}

// ---------------------------------------------------------------------------------------------
// awk
// ---------------------------------------------------------------------------------------------

/// A token of an awk program, as far as [`awk_effects`] needs one.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Tok {
    Word(String),
    Str(String),
    /// An operator or punctuation (`|`, `>`, `>>`, `(`, `;`, newline as `\n`, …).
    Op(String),
    /// A number, a regex literal or a field (`$1`): an operand.
    Value,
}

/// Split an awk program into tokens (strings, regex literals and comments handled).
fn awk_tokens(p: &str) -> Vec<Tok> {
    let b: Vec<char> = p.chars().collect();
    let mut out: Vec<Tok> = Vec::new();
    let mut i = 0;
    let operand_before = |out: &[Tok]| {
        matches!(out.last(), Some(Tok::Word(_) | Tok::Str(_) | Tok::Value))
            || matches!(out.last(), Some(Tok::Op(o)) if o == ")" || o == "]")
    };
    while i < b.len() {
        let c = b[i];
        if c == '\\' && b.get(i + 1) == Some(&'\n') {
            i += 2;
        } else if c == ' ' || c == '\t' {
            i += 1;
        } else if c == '#' {
            while i < b.len() && b[i] != '\n' {
                i += 1;
            }
        } else if c == '"' {
            let mut s = String::new();
            i += 1;
            while i < b.len() && b[i] != '"' {
                if b[i] == '\\' && i + 1 < b.len() {
                    s.push(match b[i + 1] {
                        'n' => '\n',
                        't' => '\t',
                        o => o,
                    });
                    i += 2;
                } else {
                    s.push(b[i]);
                    i += 1;
                }
            }
            i += 1;
            out.push(Tok::Str(s));
        } else if c == '/' && !operand_before(&out) {
            i += 1;
            while i < b.len() && b[i] != '/' {
                i += if b[i] == '\\' { 2 } else { 1 };
            }
            i += 1;
            out.push(Tok::Value);
        } else if c.is_ascii_alphabetic() || c == '_' {
            let start = i;
            while i < b.len() && (b[i].is_ascii_alphanumeric() || b[i] == '_') {
                i += 1;
            }
            out.push(Tok::Word(b[start..i].iter().collect()));
        } else if c.is_ascii_digit() || c == '$' {
            i += 1;
            while i < b.len() && (b[i].is_ascii_alphanumeric() || b[i] == '.') {
                i += 1;
            }
            out.push(Tok::Value);
        } else {
            let two: String = b[i..(i + 2).min(b.len())].iter().collect();
            let op = if matches!(
                two.as_str(),
                ">>" | "||"
                    | "|&"
                    | "&&"
                    | "=="
                    | "!="
                    | "<="
                    | ">="
                    | "++"
                    | "--"
                    | "+="
                    | "-="
                    | "*="
                    | "/="
                    | "%="
                    | "^="
                    | "!~"
            ) {
                two
            } else {
                c.to_string()
            };
            i += op.chars().count();
            out.push(Tok::Op(op));
        }
    }
    out
}

/// What an awk program does beyond printing: commands it runs (`Ok(text)` when a static
/// string, `Err(why)` when not) and files it writes (likewise).
enum AwkEffect {
    /// `system("CMD")`, `"CMD" | getline`: runs CMD with awk's input.
    Run(Result<String, String>),
    /// `print | "CMD"`: CMD reads what awk prints.
    Feed(Result<String, String>),
    /// `print > "FILE"`.
    Write(Result<String, String>),
    /// `print > ("out/" $1 ".txt")`: a file named at run time from these static parts
    /// (joined), relative, outside `.git` by them.
    WriteComputed(String),
}

/// The [`AwkEffect`]s of awk program `p`.
fn awk_effects(p: &str) -> Vec<AwkEffect> {
    let t = awk_tokens(p);
    let mut fx = Vec::new();
    let is_op = |k: usize, o: &str| matches!(t.get(k), Some(Tok::Op(x)) if x == o);
    let ends = |k: usize| {
        k >= t.len() || matches!(&t[k], Tok::Op(x) if matches!(x.as_str(), ";" | "\n" | "}" | ")"))
    };
    // A lone string literal starting at `k` and ending the statement.
    let lone = |k: usize, what: &str| match t.get(k) {
        Some(Tok::Str(s)) if ends(k + 1) => Ok(s.clone()),
        _ => Err(format!("awk {what} a value computed at run time")),
    };
    // A file name made at `k` only of string literals, variables and fields, starting with
    // a literal (`("out/" $1 ".txt")`; `$1 ".txt"` is named by its input): the literals
    // joined.
    let computed = |k: usize| -> Option<String> {
        let paren = is_op(k, "(");
        let mut j = k + usize::from(paren);
        if !matches!(t.get(j), Some(Tok::Str(_))) {
            return None;
        }
        let mut parts = String::new();
        let mut strings = 0;
        while j < t.len() {
            if !paren && ends(j) {
                break;
            }
            match &t[j] {
                Tok::Str(s) => {
                    parts.push_str(s);
                    strings += 1;
                }
                Tok::Word(w) if !is_op(j + 1, "(") && !matches!(w.as_str(), "getline") => {}
                Tok::Value => {}
                Tok::Op(o) if o == "$" => {}
                Tok::Op(o) if paren && o == ")" => {
                    return (ends(j + 1) && strings > 0).then_some(parts);
                }
                _ => return None,
            }
            j += 1;
        }
        (!paren && strings > 0).then_some(parts)
    };
    let mut depth = 0usize;
    let mut print_depth: Option<usize> = None;
    for k in 0..t.len() {
        match &t[k] {
            Tok::Word(w) if w == "system" && is_op(k + 1, "(") => {
                let arg = match (t.get(k + 2), t.get(k + 3)) {
                    (Some(Tok::Str(s)), Some(Tok::Op(c))) if c == ")" => Ok(s.clone()),
                    _ => Err("awk's system() runs a command computed at run time".into()),
                };
                fx.push(AwkEffect::Run(arg));
            }
            Tok::Word(w) if w == "print" || w == "printf" => print_depth = Some(depth),
            Tok::Op(o) if o == "(" || o == "[" || o == "{" => depth += 1,
            Tok::Op(o) if o == ")" || o == "]" || o == "}" => {
                depth = depth.saturating_sub(1);
                if o == "}" {
                    print_depth = None;
                }
            }
            Tok::Op(o) if o == ";" || o == "\n" => print_depth = None,
            Tok::Op(o) if o == "|&" || o == "@" => {
                fx.push(AwkEffect::Run(Err(format!("awk uses `{o}`"))));
            }
            Tok::Op(o) if o == "|" => {
                if matches!(t.get(k + 1), Some(Tok::Word(w)) if w == "getline") {
                    let cmd = match (
                        k.checked_sub(1).and_then(|j| t.get(j)),
                        k.checked_sub(2).map(|j| &t[j]),
                    ) {
                        (Some(Tok::Str(s)), before)
                            if !matches!(before, Some(Tok::Str(_) | Tok::Word(_) | Tok::Value)) =>
                        {
                            Ok(s.clone())
                        }
                        _ => Err("awk reads from a command computed at run time".into()),
                    };
                    fx.push(AwkEffect::Run(cmd));
                } else {
                    fx.push(AwkEffect::Feed(lone(k + 1, "pipes its output to")));
                }
            }
            Tok::Op(o) if (o == ">" || o == ">>") && print_depth == Some(depth) => {
                let file = lone(k + 1, "writes to");
                let named = file
                    .is_err()
                    .then(|| computed(k + 1))
                    .flatten()
                    .filter(|p| {
                        !p.to_ascii_lowercase().contains(".git")
                            && !p.starts_with(['/', '~'])
                            && !p.contains("..")
                    });
                fx.push(match named {
                    Some(p) => AwkEffect::WriteComputed(p),
                    None => AwkEffect::Write(file),
                });
            }
            _ => {}
        }
    }
    fx
}

/// awk: `system()`, pipes from and to commands, and output redirected to files; a program
/// file (`-f`), an extension or library (`-l`, `-i`, `@load`) or a run-time program is
/// asked about.
fn awk(name: &str, seg: &Segment, cx: &DangerCtx<'_>, out: &mut Vec<Finding>) {
    let (opts, _) = scan(
        seg,
        "FvfEilW",
        "fEil",
        &[
            LongOption::abbrev("file"),
            LongOption::abbrev("exec"),
            LongOption::abbrev("include"),
            LongOption::abbrev("load"),
            LongOption::exact("source"),
        ],
        &["field-separator", "assign"],
    );
    let mut programs: Vec<Option<String>> = Vec::new();
    for o in opts {
        if o.name == "--source" {
            programs.push(o.value);
        } else {
            out.push(unread(format!(
                "{name} {} loads awk code this policy does not read",
                o.name
            )));
            return;
        }
    }
    if programs.is_empty() {
        // The program is the first word after the options and their values (`-v v="$X"`:
        // a run-time value is data, not the program; usability pass 200).
        let mut i = 1;
        while i < seg.argv.len() && seg.is_static(i) {
            let a = seg.argv[i].as_str();
            if a == "--" {
                i += 1;
                break;
            }
            if !a.starts_with('-') || a == "-" {
                break;
            }
            if let Some(long) = a.strip_prefix("--") {
                if !long.contains('=')
                    && ["assign", "field-separator"]
                        .iter()
                        .any(|o| LongOption::abbrev(o).matches_body(long))
                {
                    i += 1;
                }
            } else if a[1..]
                .char_indices()
                .find(|(_, c)| "FvfEilW".contains(*c))
                .is_some_and(|(k, c)| k + 1 + c.len_utf8() == a.len())
            {
                i += 1;
            }
            i += 1;
        }
        match seg.argv.get(i) {
            Some(_) if !seg.is_static(i) => programs.push(None),
            Some(p) => programs.push(Some(p.clone())),
            None => {}
        }
    }
    for p in programs {
        let Some(p) = p else {
            out.push(unread(format!(
                "{name}'s program is known only at run time"
            )));
            continue;
        };
        for e in awk_effects(&p) {
            match e {
                AwkEffect::Run(Ok(c)) => embedded(name, &c, Input::Inherited, cx, out),
                AwkEffect::Feed(Ok(c)) => {
                    embedded(&format!("{name} print |"), &c, Input::Data, cx, out)
                }
                AwkEffect::Write(Ok(f)) => written(&format!("{name} writes {f}"), &f, cx, out),
                AwkEffect::WriteComputed(f) => written(
                    &format!("{name} writes a file named at run time from {f:?}"),
                    &f,
                    cx,
                    out,
                ),
                AwkEffect::Run(Err(why))
                | AwkEffect::Feed(Err(why))
                | AwkEffect::Write(Err(why)) => out.push(unread(why)),
            }
        }
    }
}

// ---------------------------------------------------------------------------------------------
// tar, zip, rsync, man, rg, make, at
// ---------------------------------------------------------------------------------------------

/// GNU tar's short options that take a value.
const TAR_SHORT_VALUED: &str = "bCfFgHIKLNTVX";

/// tar: the commands its options run (`--to-command`, `-I`/`--use-compress-program`,
/// `--checkpoint-action=exec=`, `-F`/`--info-script`/`--new-volume-script`,
/// `--rsh-command`, `--rmt-command`), and extraction into a `.git` directory.
fn tar(seg: &Segment, cx: &DangerCtx<'_>, out: &mut Vec<Finding>) {
    let long = [
        LongOption::abbrev("to-command"),
        LongOption::abbrev("use-compress-program"),
        LongOption::abbrev("checkpoint-action"),
        LongOption::abbrev("info-script"),
        LongOption::abbrev("new-volume-script"),
        LongOption::abbrev("rsh-command"),
        LongOption::abbrev("rmt-command"),
        LongOption::abbrev("directory"),
        LongOption::abbrev("transform"),
        LongOption::abbrev("xform"),
    ];
    let mut long = long.to_vec();
    long.push(LongOption::abbrev("file"));
    let (mut opts, _) = scan(seg, TAR_SHORT_VALUED, "IFCf", &long, &["exclude"]);
    // Modes that write the archive `-f` names (attack pass 200 P3: `tar -cf .git/HEAD x`).
    let mut creates = seg.argv.iter().enumerate().skip(1).any(|(i, a)| {
        seg.is_static(i)
            && ((a.starts_with('-') && !a.starts_with("--") && a.contains(['c', 'r', 'u', 'A']))
                || ["create", "append", "update", "catenate", "concatenate"]
                    .iter()
                    .any(|n| LongOption::abbrev(n).matches(a)))
    });
    // Old style: `tar xfC a.tar dir`: the letters of the first word take values in order.
    let mut extracts = false;
    if let Some(first) = seg
        .argv
        .get(1)
        .filter(|f| seg.is_static(1) && !f.starts_with('-'))
    {
        let mut next = 2;
        for c in first.chars() {
            extracts |= c == 'x';
            creates |= "cruA".contains(c);
            if TAR_SHORT_VALUED.contains(c) {
                let value = seg.argv.get(next).filter(|_| seg.is_static(next)).cloned();
                next += 1;
                if "IFCf".contains(c) {
                    opts.push(Opt {
                        name: format!("-{c}"),
                        value,
                    });
                }
            }
        }
    }
    extracts |= seg.argv.iter().skip(1).any(|a| {
        (a.starts_with('-') && !a.starts_with("--") && a.contains('x'))
            || LongOption::abbrev("extract").matches(a)
            || LongOption::abbrev("get").matches(a)
    });
    // `--one-top-level[=DIR]` (its value only attached): without DIR, the archive's
    // name less its suffix (`.git.tar` → `.git`).
    let top = LongOption::abbrev("one-top-level");
    for (i, a) in seg.argv.iter().enumerate().skip(1) {
        if !extracts || !seg.is_static(i) || !top.matches(a) {
            continue;
        }
        let into_git = match a.split_once('=') {
            Some((_, d)) => in_git_dir(d, cx),
            None => seg.argv.iter().skip(1).any(|w| w.contains(".git")),
        };
        if into_git {
            out.push(git_dir_write("tar --one-top-level", a));
        }
    }
    for o in opts {
        let what = format!("tar {}", o.name);
        match o.name.as_str() {
            // Extraction into a directory named `.git`, or names rewritten to land there
            // (attack pass 197 B8: `tar -xf x.tar --one-top-level=.git`, `--xform
            // 's,^,.git/,'`).
            "--transform" | "--xform" => {
                if extracts && o.value.as_deref().is_none_or(|t| t.contains(".git")) {
                    out.push(git_dir_write(
                        &format!("tar {}", o.name),
                        "a path its rewritten names may reach (.git)",
                    ));
                }
            }
            "-f" | "--file" => {
                if let Some(f) = o.value.filter(|_| creates) {
                    written("tar -f", &f, cx, out);
                }
            }
            "-C" | "--directory" => {
                if let Some(d) = o.value.filter(|d| extracts && in_git_dir(d, cx)) {
                    out.push(git_dir_write("tar -x", &d));
                }
            }
            "--checkpoint-action" => match o.value {
                Some(v) => {
                    if let Some(cmd) = v.strip_prefix("exec=") {
                        embedded(&what, cmd, Input::Inherited, cx, out);
                    }
                }
                None => out.push(unread("tar's checkpoint action is known only at run time")),
            },
            "-F" | "--info-script" | "--new-volume-script" => {
                command_value(&what, o.value, Input::Inherited, cx, out)
            }
            _ => command_value(&what, o.value, Input::Data, cx, out),
        }
    }
}

/// zip: `-TT CMD`/`--unzip-command CMD` tests the archive with CMD.
/// The archive it writes (its first operand, and `-O`/`--output-file`) is judged as a
/// write (attack pass 200 P3).
fn zip(seg: &Segment, cx: &DangerCtx<'_>, out: &mut Vec<Finding>) {
    let (opts, operands) = scan(
        seg,
        "bntOPZsxi",
        "O",
        &[LongOption::abbrev("output-file")],
        &[
            "temp-path",
            "suffixes",
            "password",
            "compression-method",
            "split-size",
            "exclude",
            "include",
        ],
    );
    for f in opts
        .into_iter()
        .filter_map(|o| o.value)
        .chain(operands.into_iter().take(1).map(|(_, a)| a))
    {
        written("zip", &f, cx, out);
    }
    let argv = &seg.argv;
    for (i, a) in argv.iter().enumerate().skip(1) {
        let value = if a == "-TT" || a == "--unzip-command" {
            Some(argv.get(i + 1).filter(|_| seg.is_static(i + 1)).cloned())
        } else {
            a.strip_prefix("--unzip-command=")
                .or_else(|| a.strip_prefix("-TT").filter(|v| !v.is_empty()))
                .map(|v| Some(v.to_string()))
        };
        if let Some(v) = value {
            command_value("zip -TT", v, Input::Inherited, cx, out);
        }
    }
}

/// rsync: `-e`/`--rsh` (and `RSYNC_RSH`, `RSYNC_CONNECT_PROG`) is the command rsync talks
/// to; `--rsync-path` the program it starts through it.
fn rsync(seg: &Segment, cx: &DangerCtx<'_>, out: &mut Vec<Finding>) {
    let (opts, _) = scan(
        seg,
        "eBfTM@",
        "e",
        &[LongOption::exact("rsh"), LongOption::exact("rsync-path")],
        &[],
    );
    for o in opts {
        let input = if o.name == "--rsync-path" {
            Input::Inherited
        } else {
            Input::Data
        };
        command_value(&format!("rsync {}", o.name), o.value, input, cx, out);
    }
    env_commands(
        seg,
        &["RSYNC_RSH", "RSYNC_CONNECT_PROG"],
        Input::Data,
        cx,
        out,
    );
}

/// The variables of `seg` among `names` whose value is a command line: judged.
fn env_commands(
    seg: &Segment,
    names: &[&str],
    input: Input,
    cx: &DangerCtx<'_>,
    out: &mut Vec<Finding>,
) {
    for e in seg.env.iter().filter(|e| names.contains(&e.name.as_str())) {
        let value = (!e.dynamic).then(|| e.value.clone());
        command_value(&e.name, value, input, cx, out);
    }
}

/// man: the pager (`-P`, `--pager`, `MANPAGER`, `PAGER`), the browser (`-H`, `--html`),
/// a configuration file (`-C`) or `MANOPT` (options known only at run time).
fn man(seg: &Segment, cx: &DangerCtx<'_>, out: &mut Vec<Finding>) {
    let (opts, _) = scan(
        seg,
        "CMPSemprLERH",
        "PCH",
        &[
            LongOption::abbrev("pager"),
            LongOption::abbrev("config-file"),
            LongOption::abbrev("html"),
        ],
        &[],
    );
    for o in opts {
        match o.name.as_str() {
            "-C" | "--config-file" => out.push(unread(
                "man reads a configuration file this policy does not read",
            )),
            "-H" | "--html" => command_value("man --html", o.value, Input::Inherited, cx, out),
            _ => command_value("man's pager", o.value, Input::Data, cx, out),
        }
    }
    env_commands(seg, &["MANPAGER", "PAGER"], Input::Data, cx, out);
    env_commands(seg, &["BROWSER"], Input::Inherited, cx, out);
    if seg.env.iter().any(|e| e.name == "MANOPT") {
        out.push(unread("MANOPT gives man options this policy does not read"));
    }
}

/// make: makefile text given on the command line — `--eval`/`-E`, a variable assignment
/// operand (`'x:=$(shell …)'`), `MAKEFLAGS`/`GNUMAKEFLAGS`/`MFLAGS` — with rules or
/// functions is asked about, as is a makefile made at run time (`-f <(…)`, `-f -`,
/// `-f /dev/fd/N`: attack pass 197 B5). A makefile on disk is make's own business (make is
/// not known-safe).
fn make(name: &str, seg: &Segment, out: &mut Vec<Finding>) {
    let (opts, operands) = scan(
        seg,
        "CEfIjlOoWx",
        "Ef",
        &[
            LongOption::abbrev("eval"),
            LongOption::abbrev("file"),
            LongOption::abbrev("makefile"),
        ],
        &[
            "directory",
            "include-dir",
            "jobs",
            "load-average",
            "old-file",
            "assume-old",
            "what-if",
            "new-file",
            "assume-new",
        ],
    );
    for o in opts {
        if matches!(o.name.as_str(), "-f" | "--file" | "--makefile") {
            if o.value.as_deref().is_none_or(runtime_file) {
                out.push(unread(format!(
                    "{name} {} reads a makefile made at run time",
                    o.name
                )));
            }
            continue;
        }
        if !o.value.as_deref().is_some_and(make_text_plain) {
            out.push(unread(format!(
                "{name} {} adds makefile text with rules or functions",
                o.name
            )));
        }
    }
    // `make 'x:=$(shell …)'`: a command-line variable; `:=` expands it at once.
    for (_, op) in &operands {
        if op.contains('=') && !make_text_plain(op) {
            out.push(unread(format!(
                "{name} is given the variable `{op}`, which calls make functions"
            )));
        }
    }
    // A value built by a command substitution (`X="$(printf …)"`) may be makefile code;
    // one that only expands shell variables (`CC="$CC"`, `PREFIX="$HOME/.local"`) is no
    // more than the environment make reads anyway (README: Known limits).
    let dynamic_assignment = (1..seg.argv.len()).any(|i| {
        let a = &seg.argv[i];
        !seg.is_static(i)
            && a.contains('=')
            && !a.starts_with('-')
            && (a.contains("$(") || a.contains('`') || a.contains("<("))
    });
    if dynamic_assignment {
        out.push(unread(format!(
            "{name} is given a variable whose value is known only at run time"
        )));
    }
    for e in seg
        .env
        .iter()
        .filter(|e| matches!(e.name.as_str(), "MAKEFLAGS" | "GNUMAKEFLAGS" | "MFLAGS"))
    {
        if e.dynamic || !make_flags_plain(&e.value) {
            out.push(unread(format!(
                "{} gives {name} options or text this policy does not read",
                e.name
            )));
        }
    }
}

/// Whether makefile text `text` only assigns variables (no rule, no function call such as
/// `$(shell …)`, `$(file …)`, `$(eval …)`: a reference with a blank or `,` inside).
fn make_text_plain(text: &str) -> bool {
    let calls = text.match_indices(['(', '{']).any(|(k, open)| {
        text[..k].ends_with('$') && {
            let close = if open == "(" { ')' } else { '}' };
            let body = &text[k + 1..];
            let inner = body.find(close).map_or(body, |e| &body[..e]);
            inner.contains([' ', '\t', ',', '$']) || body.find(close).is_none()
        }
    });
    !calls
        && text.lines().all(|l| {
            let l = l.trim();
            l.is_empty()
                || l.starts_with('#')
                || l.split_once('=').is_some_and(|(lhs, _)| {
                    let lhs = lhs.trim_end_matches([':', '+', '?', '!', ' ']);
                    !lhs.is_empty()
                        && lhs
                            .chars()
                            .all(|c| c.is_ascii_alphanumeric() || "_.-".contains(c))
                })
        })
}

/// Whether a `MAKEFLAGS` value only sets plain flags and plain variables: no `--eval`/`-E`,
/// no makefile (`-f`), no variable calling functions.
fn make_flags_plain(v: &str) -> bool {
    v.split_whitespace().enumerate().all(|(k, w)| {
        if let Some(long) = w.strip_prefix("--") {
            let n = long.split_once('=').map_or(long, |(n, _)| n);
            ![
                LongOption::abbrev("eval"),
                LongOption::abbrev("file"),
                LongOption::abbrev("makefile"),
            ]
            .iter()
            .any(|o| o.matches_body(n))
        } else if let Some(short) = w.strip_prefix('-') {
            !short.contains(['E', 'f'])
        } else if w.contains('=') {
            make_text_plain(w)
        } else {
            // The first word may be flag letters without a dash (`MAKEFLAGS=ks`).
            k > 0 || !w.contains(['E', 'f'])
        }
    })
}

/// at/batch schedule the commands they read (their input, or `-f FILE`); listing and
/// removing jobs run nothing.
fn at(name: &str, seg: &Segment, out: &mut Vec<Finding>) {
    let lists = seg.argv.iter().skip(1).any(|a| {
        a.starts_with('-')
            && !a.starts_with("--")
            && a[1..]
                .chars()
                .any(|c| matches!(c, 'l' | 'r' | 'd' | 'c' | 'V' | 'h'))
    });
    if !lists {
        out.push(unread(format!(
            "{name} schedules the commands it reads (its input or -f FILE)"
        )));
    }
}

// ---------------------------------------------------------------------------------------------
// editors and pagers
// ---------------------------------------------------------------------------------------------

/// What one ex command (one `|`-separated piece) does, as far as `vim -c`/`+` and ex-mode
/// input are judged.
#[derive(Debug, PartialEq, Eq)]
enum ExEffect {
    /// Quits, moves, searches, prints, sets a harmless option or edits the buffer (`wq`,
    /// `normal G`, `retab`, `%s/a/b/g`, `g/x/d`, `sort`, `undo`): the files edited are
    /// judged as writes on their own.
    Inert,
    /// Writes the named file (`w FILE`, `w >> FILE`, `saveas FILE`).
    Writes(String),
    /// Anything else (`!cmd`, `r !cmd`, `w !cmd`, `source`, `call system(…)`, `py`,
    /// `terminal`, `autocmd`, …): asked about.
    Other,
}

/// Whether `word` is a spelling of the ex command `full` whose shortest form is `min`
/// characters long (`norm` for `normal`).
fn ex_is(word: &str, full: &str, min: usize) -> bool {
    word.len() >= min && full.starts_with(word)
}

/// Options whose value is a program or an expression vim runs (`formatprg` with `gq`,
/// `formatexpr` on a wrap, `*func`): setting one is not inert.
fn ex_set_inert(args: &str) -> bool {
    const RUNS: &[&str] = &[
        "fp",
        "ep",
        "kp",
        "gp",
        "mp",
        "sh",
        "shcf",
        "sp",
        "srr",
        "shq",
        "sxq",
        "sxe",
        "fex",
        "inex",
        "inde",
        "fde",
        "fdt",
        "tfu",
        "cfu",
        "ofu",
        "ccv",
        "dex",
        "pex",
        "stl",
        "tal",
        "ruf",
        "rtp",
        "pp",
        "ex",
        "exrc",
        "secure",
        "tsrfu",
        "ffu",
        "qftf",
        "titlestring",
        "iconstring",
        "statusline",
        "tabline",
        "rulerformat",
        "runtimepath",
        "packpath",
        "pythondll",
        "pythonthreedll",
        "luadll",
        "perldll",
        "rubydll",
        "tcldll",
        "mzschemedll",
        "cpt",
        "complete",
        "efm",
        "errorformat",
    ];
    !args.contains('(')
        && args.split_whitespace().all(|a| {
            let n: String = a.chars().take_while(|c| c.is_ascii_alphabetic()).collect();
            let n = n
                .strip_prefix("no")
                .or_else(|| n.strip_prefix("inv"))
                .filter(|_| !RUNS.contains(&n.as_str()))
                .unwrap_or(&n);
            !RUNS.contains(&n)
                && !["prg", "func", "expr", "shell", "dll"]
                    .iter()
                    .any(|k| n.contains(k))
        })
}

/// The end of a `d`-delimited part of `b` starting at `i` (the index after the closing
/// delimiter, or `b.len()` when it is missing, as vim allows for the last part).
fn ex_delimited(b: &[char], mut i: usize, d: char) -> usize {
    while i < b.len() {
        if b[i] == '\\' {
            i += 2;
            continue;
        }
        if b[i] == d {
            return i + 1;
        }
        i += 1;
    }
    b.len()
}

/// Whether `rest` (after the command name `s`) is a substitute that only edits: its
/// replacement is no expression (`\=`), its flags are flags.
fn ex_substitute_inert(rest: &str) -> bool {
    let b: Vec<char> = rest.chars().collect();
    let Some(&d) = b.first() else {
        return true; // `:s` repeats the last substitute
    };
    if d.is_alphanumeric() || d.is_whitespace() || matches!(d, '"' | '|' | '\\') {
        return false;
    }
    let j = ex_delimited(&b, 1, d);
    let k = ex_delimited(&b, j, d);
    let replacement: String = b[j.min(k)..k].iter().collect();
    if replacement.starts_with("\\=") {
        return false;
    }
    b[k..]
        .iter()
        .all(|c| "&cegiInp#lr ".contains(*c) || c.is_ascii_digit())
}

/// `c` without its leading range: line numbers, marks, `%`, `.`, `$`, offsets.
fn ex_strip_range(c: &str) -> &str {
    let mut body = c;
    loop {
        let t = body.trim_start_matches(|ch: char| ch.is_ascii_digit() || ",.$%;+- ".contains(ch));
        let t = match t.strip_prefix('\'') {
            Some(m) => m.get(1..).unwrap_or(""),
            None => t,
        };
        if t.len() == body.len() {
            return body;
        }
        body = t;
    }
}

/// The `++opt` arguments of `:write`/`:edit` that set how the file is read or written
/// (`++ff=unix`, `++enc=utf-8`, `++bin`, `++p`): `args` without them, `None` when one is
/// not such an option or spells an expansion.
fn ex_strip_plus_opts(args: &str) -> Option<&str> {
    let mut rest = args.trim_start();
    while let Some(opt) = rest.strip_prefix("++") {
        let end = opt.find(char::is_whitespace).unwrap_or(opt.len());
        let (word, after) = opt.split_at(end);
        let name = word.split('=').next().unwrap_or("");
        let known = matches!(
            name,
            "ff" | "fileformat"
                | "enc"
                | "encoding"
                | "bin"
                | "binary"
                | "nobin"
                | "nobinary"
                | "bad"
                | "edit"
                | "p"
        );
        if !known || word.contains(['`', '$', '%', '#', '<']) {
            return None;
        }
        rest = after.trim_start();
    }
    Some(rest)
}

/// The [`ExEffect`] of ex command `c` (one `|`-separated piece).
fn ex_effect(c: &str) -> ExEffect {
    let c = c.trim().trim_start_matches([':', ' ', '\t']).trim();
    if c.chars().any(|ch| ch.is_control()) {
        return ExEffect::Other;
    }
    let body = ex_strip_range(c);
    if matches!(
        body,
        "p" | "print" | "nu" | "number" | "#" | "l" | "list" | "=" | ""
    ) {
        return ExEffect::Inert;
    }
    if let Some(d) = body.chars().next().filter(|d| matches!(d, '/' | '?')) {
        // A search (`/pat`, `/pat/+1`); a command after it (`/pat/w FILE`) is not one.
        let b: Vec<char> = body.chars().collect();
        let end = ex_delimited(&b, 1, d);
        return if b[end..]
            .iter()
            .all(|c| c.is_ascii_digit() || "+-;".contains(*c))
        {
            ExEffect::Inert
        } else {
            ExEffect::Other
        };
    }
    let word: String = body
        .chars()
        .take_while(|ch| ch.is_ascii_alphabetic())
        .collect();
    let after = &body[word.len()..];
    let bang = after.starts_with('!');
    let args = after[usize::from(bang)..].trim();
    let w = word.as_str();
    // Substitute and global: their argument starts right after the name.
    if ex_is(w, "substitute", 1) || body.starts_with('&') {
        return if !bang && (body.starts_with('&') || ex_substitute_inert(after)) {
            ExEffect::Inert
        } else {
            ExEffect::Other
        };
    }
    if ex_is(w, "global", 1) || ex_is(w, "vglobal", 1) {
        let b: Vec<char> = args.chars().collect();
        let Some(&d) = b.first() else {
            return ExEffect::Other;
        };
        if d.is_alphanumeric() || d.is_whitespace() || matches!(d, '"' | '|' | '\\') {
            return ExEffect::Other;
        }
        let j = ex_delimited(&b, 1, d);
        let cmd: String = b[j..].iter().collect();
        let cmd = cmd.trim();
        let cw: String = cmd
            .chars()
            .take_while(|ch| ch.is_ascii_alphabetic())
            .collect();
        let deletes = ex_is(&cw, "delete", 1)
            && cmd[cw.len()..]
                .trim()
                .chars()
                .all(|ch| ch.is_ascii_alphanumeric() || ch == ' ');
        let substitutes = ex_is(&cw, "substitute", 1) && ex_substitute_inert(&cmd[cw.len()..]);
        return if cmd.is_empty() || deletes || substitutes || matches!(cmd, "p" | "print") {
            ExEffect::Inert
        } else {
            ExEffect::Other
        };
    }
    if ex_is(w, "normal", 4) {
        // Keys without a command line (`:`), a filter (`!`), ex mode (`Q`), a register run
        // (`@`), the expression register (`"=`), `K` (keywordprg), `gx` (opens a program)
        // or `gq` (formatprg). The `=` operator (`gg=G`) re-indents as `:set equalprg`
        // says, and setting that option is not inert ([`ex_set_inert`]).
        let risky = args.contains([':', '!', 'Q', '@', 'K'])
            || args.contains("\"=")
            || args.contains("gx")
            || args.contains("gq");
        return if risky {
            ExEffect::Other
        } else {
            ExEffect::Inert
        };
    }
    // `:bufdo CMD` (and argdo, windo, tabdo, the quickfix ones): CMD in each buffer.
    if matches!(
        w,
        "bufdo"
            | "bufd"
            | "argdo"
            | "argd"
            | "windo"
            | "wind"
            | "tabdo"
            | "tabd"
            | "cdo"
            | "ldo"
            | "cfdo"
            | "cfd"
            | "lfdo"
            | "lfd"
    ) {
        return ex_effect(args);
    }
    if args.contains('!') {
        return ExEffect::Other; // `w !cmd`, `r !cmd`, `set x=!…`
    }
    // Line edits of the buffer: `:d [x] [count]`, `:m ADDR`, `:t ADDR`/`:co ADDR`,
    // `:j [count]`, `:y [x] [count]`.
    let register_count = |a: &str| a.chars().all(|ch| ch.is_ascii_alphanumeric() || ch == ' ');
    if (ex_is(w, "delete", 1) || ex_is(w, "yank", 1) || ex_is(w, "join", 1)) && register_count(args)
    {
        return ExEffect::Inert;
    }
    if (ex_is(w, "move", 1) || ex_is(w, "copy", 2) || w == "t")
        && ex_strip_range(args).trim().is_empty()
    {
        return ExEffect::Inert;
    }
    // `:e ++ff=dos`, `:e!`: the current file read again.
    if ex_is(w, "edit", 1) && ex_strip_plus_opts(args).is_some_and(str::is_empty) {
        return ExEffect::Inert;
    }
    let quits = ex_is(w, "quit", 1)
        || ex_is(w, "qall", 2)
        || ex_is(w, "quitall", 5)
        || ex_is(w, "cquit", 2)
        || matches!(w, "noh" | "nohlsearch");
    if quits && args.is_empty() {
        return ExEffect::Inert;
    }
    let writes_edited = ex_is(w, "wall", 2)
        || ex_is(w, "wqall", 3)
        || ex_is(w, "xall", 2)
        || ex_is(w, "undo", 1)
        || ex_is(w, "redo", 3);
    if writes_edited && args.chars().all(|ch| ch.is_ascii_digit()) {
        return ExEffect::Inert;
    }
    let writes_file = ex_is(w, "write", 1)
        || ex_is(w, "wq", 2)
        || ex_is(w, "xit", 1)
        || ex_is(w, "exit", 3)
        || ex_is(w, "update", 2)
        || ex_is(w, "saveas", 3);
    if writes_file {
        let Some(file) = ex_strip_plus_opts(args) else {
            return ExEffect::Other;
        };
        let file = file.trim_start_matches(">>").trim();
        return if file.is_empty() {
            ExEffect::Inert
        } else if file.starts_with("++") || file.contains(['`', '$']) {
            ExEffect::Other
        } else {
            ExEffect::Writes(file.to_string())
        };
    }
    if ex_is(w, "retab", 3) && args.chars().all(|ch| ch.is_ascii_digit()) {
        return ExEffect::Inert;
    }
    if ex_is(w, "sort", 3) && !args.contains(['|']) {
        return ExEffect::Inert;
    }
    if (ex_is(w, "set", 2) || ex_is(w, "setlocal", 4) || ex_is(w, "setglobal", 4))
        && ex_set_inert(args)
    {
        return ExEffect::Inert;
    }
    if (ex_is(w, "syntax", 2) || ex_is(w, "filetype", 5) || ex_is(w, "colorscheme", 4))
        && !args.contains('(')
    {
        return ExEffect::Inert;
    }
    ExEffect::Other
}

/// Judge ex commands `text` (`|`-separated, one per line) that editor `name` runs (`via`:
/// how it gets them, for the reason): a file one writes is judged as a write; one that is
/// not [`ExEffect::Inert`] is asked about.
fn ex_commands(name: &str, via: &str, text: &str, cx: &DangerCtx<'_>, out: &mut Vec<Finding>) {
    let mut asked = false;
    for piece in text.lines().flat_map(|l| l.split('|')) {
        match ex_effect(piece) {
            ExEffect::Inert => {}
            ExEffect::Writes(f) => written(&format!("{name} writes {f}"), &f, cx, out),
            ExEffect::Other if !asked => {
                asked = true;
                out.push(unread(format!(
                    "{name} runs{via} ex command `{}`",
                    text.trim()
                )));
            }
            ExEffect::Other => {}
        }
    }
}

/// vim and its relatives: `-c`/`+`/`--cmd` ex commands that are not inert ([`ex_effect`]),
/// a script (`-S`, `-s` outside ex mode, `-u` other than `NONE`/`NORC`/`DEFAULTS`), ex-mode
/// commands from the input, and the files edited (judged as writes).
fn vim(name: &str, seg: &Segment, cx: &DangerCtx<'_>, out: &mut Vec<Finding>) {
    let argv = &seg.argv;
    let mut ex_mode = name == "ex";
    let mut commands: Vec<Option<String>> = Vec::new();
    let mut files = Vec::new();
    let mut i = 1;
    let value = |j: usize| argv.get(j).filter(|_| seg.is_static(j)).cloned();
    let mut only_operands = false;
    while i < argv.len() {
        let a = argv[i].as_str();
        if !seg.is_static(i) {
            if only_operands || !a.starts_with('-') {
                out.push(unread(format!(
                    "{name} is given a word known only at run time ({a})"
                )));
            }
            i += 1;
            continue;
        }
        if only_operands {
            files.push(a.to_string());
        } else if a == "--" {
            only_operands = true;
        } else if a == "--cmd" || a == "-c" {
            i += 1;
            commands.push(value(i));
        } else if let Some(c) = a.strip_prefix('+') {
            let inert = c.is_empty() || c.chars().all(|ch| ch.is_ascii_digit());
            if !inert {
                commands.push(Some(c.to_string()));
            }
        } else if a == "-S" || a.starts_with("-S") {
            out.push(unread(format!(
                "{name} -S sources a script file this policy does not read"
            )));
        } else if a == "-u" || a == "-U" {
            i += 1;
            if !value(i).is_some_and(|v| matches!(v.as_str(), "NONE" | "NORC" | "DEFAULTS")) {
                out.push(unread(format!(
                    "{name} {a} reads a vimrc this policy does not read"
                )));
            }
        } else if a == "-w" || a == "-W" {
            i += 1;
            if let Some(f) = value(i) {
                written(&format!("{name} {a} writes {f}"), &f, cx, out);
            }
        } else if matches!(
            a,
            "-T" | "-i"
                | "-t"
                | "-q"
                | "-r"
                | "--servername"
                | "--remote-send"
                | "--remote-expr"
                | "--startuptime"
                | "--log"
        ) {
            if matches!(a, "--remote-send" | "--remote-expr") {
                out.push(unread(format!(
                    "{name} {a} sends commands to a running editor"
                )));
            }
            i += 1;
        } else if a.starts_with("--") {
        } else if a.starts_with('-') && a.len() > 1 {
            for (k, c) in a[1..].char_indices() {
                match c {
                    'e' | 'E' => ex_mode = true,
                    // `ex -sc CMD`, `vim -escCMD`: the rest, or the next word, is the command.
                    'c' => {
                        let rest = &a[2 + k..];
                        if rest.is_empty() {
                            i += 1;
                            commands.push(value(i));
                        } else {
                            commands.push(Some(rest.to_string()));
                        }
                        break;
                    }
                    'S' => {
                        out.push(unread(format!(
                            "{name} -S sources a script file this policy does not read"
                        )));
                        break;
                    }
                    's' if !ex_mode => {
                        out.push(unread(format!(
                            "{name} -s replays keystrokes from a file this policy does not read"
                        )));
                    }
                    _ => {}
                }
            }
        } else {
            files.push(a.to_string());
        }
        i += 1;
    }
    for c in commands {
        match c {
            None => out.push(unread(format!(
                "{name} -c is given commands known only at run time"
            ))),
            Some(c) => ex_commands(name, "", &c, cx, out),
        }
    }
    if ex_mode {
        // `vim -e -s < script.vim`: ex commands from a file (attack pass 197 B5).
        let from_file = seg.redirections.iter().any(|r| {
            r.kind == RedirectKind::Read
                && r.fd.as_deref().unwrap_or("0") == "0"
                && !r.dynamic
                && !runtime_file(&r.target)
                && r.target != "/dev/null"
        });
        if from_file {
            out.push(unread(format!(
                "{name} runs ex commands from a file this policy does not read"
            )));
        }
        match stdin_text(seg, cx) {
            Err(()) => out.push(unread(format!("{name} runs ex commands from its input"))),
            Ok(Some(t)) => ex_commands(name, " from its input", &t, cx, out),
            Ok(None) => {}
        }
    }
    for f in files {
        written(&format!("{name} edits {f}"), &f, cx, out);
    }
}

/// ed: commands from its input: `!` runs a command (asked); `w`/`W`/`e`/`f` name a file it
/// writes (judged); a plain `w` writes the file edited.
fn ed(name: &str, seg: &Segment, cx: &DangerCtx<'_>, out: &mut Vec<Finding>) {
    let files: Vec<String> = (1..seg.argv.len())
        .filter(|&i| seg.is_static(i) && !seg.argv[i].starts_with('-'))
        .map(|i| seg.argv[i].clone())
        .collect();
    for f in &files {
        written(&format!("{name} edits {f}"), f, cx, out);
    }
    let text = match stdin_text(seg, cx) {
        Err(()) => {
            out.push(unread(format!("{name} runs commands from its input")));
            return;
        }
        Ok(None) => return,
        Ok(Some(t)) => t,
    };
    for line in text.lines() {
        if line.contains('!') {
            out.push(unread(format!("{name} runs `{}`", line.trim())));
            continue;
        }
        let body = line.trim_start_matches(|c: char| c.is_ascii_digit() || ",.$;+- '".contains(c));
        if let Some((cmd, file)) = body.split_once(' ') {
            if matches!(cmd, "w" | "wq" | "W" | "e" | "E" | "f") {
                let f = file.trim();
                written(&format!("{name} {cmd} {f}"), f, cx, out);
            }
        }
    }
}

/// less/more: `+CMD` initial commands other than a line, the end or a search; a log file
/// (`-o`, `-O`); `LESSOPEN`/`LESSCLOSE` input preprocessors.
fn less(name: &str, seg: &Segment, cx: &DangerCtx<'_>, out: &mut Vec<Finding>) {
    for (i, a) in seg.argv.iter().enumerate().skip(1) {
        if !seg.is_static(i) {
            continue;
        }
        if let Some(c) = a.strip_prefix('+') {
            let c = c.trim_start_matches('+');
            let inert = c.is_empty()
                || c.chars().all(|ch| ch.is_ascii_digit())
                || matches!(c, "G" | "g" | "F")
                || ((c.starts_with('/') || c.starts_with('?')) && !c.contains(['!', '|']));
            if !inert {
                out.push(unread(format!("{name} runs its command `{c}`")));
            }
        }
    }
    let (opts, _) = scan(
        seg,
        "bhjkoOpPtTxyz#",
        "oO",
        &[
            LongOption::abbrev("log-file"),
            LongOption::abbrev("LOG-FILE"),
        ],
        &[],
    );
    for o in opts {
        if let Some(f) = o.value {
            written(&format!("{name} {} writes {f}", o.name), &f, cx, out);
        }
    }
    for e in seg
        .env
        .iter()
        .filter(|e| matches!(e.name.as_str(), "LESSOPEN" | "LESSCLOSE"))
    {
        let v = (!e.dynamic).then(|| e.value.trim_start_matches(['|', '-']).to_string());
        command_value(&e.name, v, Input::Inherited, cx, out);
    }
    if seg
        .env
        .iter()
        .any(|e| e.name == "LESS" && (e.dynamic || e.value.contains('+')))
    {
        out.push(unread("LESS gives less initial commands"));
    }
}

// ---------------------------------------------------------------------------------------------
// network tools, sqlite3
// ---------------------------------------------------------------------------------------------

/// socat: `SYSTEM:`/`EXEC:`/`SHELL:` addresses run a command talking to the other
/// address; `CREATE:`/`OPEN:`/`GOPEN:` write a file.
fn socat(seg: &Segment, cx: &DangerCtx<'_>, out: &mut Vec<Finding>) {
    for (i, a) in seg.argv.iter().enumerate().skip(1) {
        if a.starts_with('-') && a.len() > 1 {
            continue;
        }
        if !seg.is_static(i) {
            out.push(unread(format!(
                "socat is given an address known only at run time ({a})"
            )));
            continue;
        }
        // `A!!B` gives two addresses (read from A, write to B); address types are matched
        // whatever their case, and a value may be quoted (`exec:"git reset --hard"`,
        // socat 1.7.4+: attack pass 197 B5).
        for addr in a.split("!!") {
            let Some((kind, rest)) = addr.trim_start().split_once(':') else {
                continue;
            };
            let value = socat_value(rest);
            match kind.trim().to_ascii_uppercase().as_str() {
                "SYSTEM" | "EXEC" | "SHELL" => {
                    embedded(&format!("socat {kind}:"), &value, Input::Data, cx, out)
                }
                "CREATE" | "CREAT" | "OPEN" | "GOPEN" => {
                    written(&format!("socat {kind}:{value}"), &value, cx, out)
                }
                _ => {}
            }
        }
    }
}

/// The first parameter of a socat address (up to an unquoted `,`), its quotes removed:
/// `"…"` and `'…'` group (a `,` or `:` inside is part of it), `\x` is `x`.
fn socat_value(rest: &str) -> String {
    let mut v = String::new();
    let mut quote: Option<char> = None;
    let mut chars = rest.chars();
    while let Some(c) = chars.next() {
        match (quote, c) {
            (_, '\\') => v.extend(chars.next()),
            (None, '"' | '\'') => quote = Some(c),
            (Some(q), c) if c == q => quote = None,
            (None, ',') => break,
            _ => v.push(c),
        }
    }
    v
}

/// ssh, scp, sftp: `-o` options that run a command (`ProxyCommand`, `LocalCommand`,
/// `KnownHostsCommand`) are judged; ones that load code or enable the configuration's
/// local command, and a configuration file (`-F`), are asked about; scp/sftp `-S PROGRAM`
/// is judged.
fn ssh(name: &str, seg: &Segment, cx: &DangerCtx<'_>, out: &mut Vec<Finding>) {
    let (valued, wanted) = match name {
        "scp" => ("cDFiJlooPSX", "oFS"),
        "sftp" => ("BbcDFiJlooPRSs", "oFSD"),
        _ => ("BbcDEeFIiJLlmOoPpQRSWw", "oF"),
    };
    let (opts, _) = scan(seg, valued, wanted, &[], &[]);
    for o in opts {
        let Some(v) = o.value else {
            out.push(unread(format!(
                "{name} {} is known only at run time",
                o.name
            )));
            continue;
        };
        match o.name.as_str() {
            "-F" => {
                if !matches!(v.as_str(), "none" | "/dev/null") {
                    out.push(unread(format!(
                        "{name} -F reads a configuration file this policy does not read ({v})"
                    )));
                }
            }
            "-S" | "-D" => embedded(&format!("{name} {}", o.name), &v, Input::Data, cx, out),
            _ => {
                let (key, val) = match v.split_once(['=', ' ', '\t']) {
                    Some((k, v)) => (
                        k.to_ascii_lowercase(),
                        v.trim_start_matches(['=', ' ']).to_string(),
                    ),
                    None => (v.to_ascii_lowercase(), String::new()),
                };
                let what = format!("{name} -o {key}");
                match key.as_str() {
                    "proxycommand" if val != "none" => embedded(&what, &val, Input::Data, cx, out),
                    "localcommand" | "knownhostscommand" => {
                        embedded(&what, &val, Input::Inherited, cx, out)
                    }
                    "permitlocalcommand" if val.eq_ignore_ascii_case("yes") => out.push(unread(
                        format!("{what} runs the configuration's LocalCommand"),
                    )),
                    "pkcs11provider" | "securitykeyprovider" | "include" => out.push(unread(
                        format!("{what} loads code or configuration ({val})"),
                    )),
                    _ => {}
                }
            }
        }
    }
}

/// sqlite3: dot-commands that run a command (`.shell`, `.system`, a `|CMD` output, import
/// or read), write a file (`.output`, `.once`, `.save`, `.backup`, `.log`, `.trace`), or
/// load code or scripts (`.load`, `.read`); SQL calling `writefile`, `edit` or
/// `load_extension`; commands from `-cmd`, the arguments and static input (`-safe`
/// refuses all of these).
fn sqlite(name: &str, seg: &Segment, cx: &DangerCtx<'_>, out: &mut Vec<Finding>) {
    let argv = &seg.argv;
    if argv.iter().any(|a| a == "-safe" || a == "--safe") {
        return;
    }
    let mut texts: Vec<Option<String>> = Vec::new();
    let mut operands = 0;
    let mut i = 1;
    let value = |j: usize| argv.get(j).filter(|_| seg.is_static(j)).cloned();
    while i < argv.len() {
        let a = argv[i].trim_start_matches('-');
        if argv[i].starts_with('-') && seg.is_static(i) {
            match a {
                "cmd" => {
                    i += 1;
                    texts.push(value(i));
                }
                "init" => {
                    i += 1;
                    out.push(unread(format!(
                        "{name} -init reads a script file this policy does not read"
                    )));
                }
                "separator" | "newline" | "nullvalue" | "vfs" | "mmap" | "maxsize" | "heap"
                | "pagecache" | "lookaside" | "escape" => i += 1,
                _ => {}
            }
        } else {
            operands += 1;
            if operands > 1 {
                texts.push(value(i));
            }
        }
        i += 1;
    }
    match stdin_text(seg, cx) {
        Err(()) => out.push(unread(format!("{name} runs the commands of its input"))),
        Ok(t) => texts.extend(t.map(Some)),
    }
    for t in texts {
        let Some(t) = t else {
            out.push(unread(format!(
                "{name} is given commands known only at run time"
            )));
            continue;
        };
        let lower = t.to_ascii_lowercase();
        if ["writefile(", "edit(", "load_extension(", "fts3_tokenizer("]
            .iter()
            .any(|f| lower.contains(f))
        {
            out.push(unread(format!(
                "{name} SQL writes files or loads code (`{t}`)"
            )));
        }
        for line in t.lines().map(str::trim).filter(|l| l.starts_with('.')) {
            sqlite_dot_command(name, line, cx, out);
        }
    }
}

/// What an sqlite3 dot-command does beyond querying.
#[derive(Clone, Copy, PartialEq, Eq)]
enum DotKind {
    /// `.shell`, `.system`: runs its arguments.
    Run,
    /// `.output`, `.once`, …: writes a file (or pipes to `|CMD`).
    Write,
    /// `.import`, `.read`: reads a file (or from `|CMD`); `.read FILE` runs its commands.
    Read,
    /// `.load`: loads an extension.
    Load,
}

/// The dot-commands with an effect ([`DotKind`]).
const SQLITE_DOT: &[(&str, DotKind)] = &[
    ("shell", DotKind::Run),
    ("system", DotKind::Run),
    ("output", DotKind::Write),
    ("once", DotKind::Write),
    ("log", DotKind::Write),
    ("trace", DotKind::Write),
    ("save", DotKind::Write),
    ("backup", DotKind::Write),
    ("open", DotKind::Write),
    ("excel", DotKind::Write),
    ("clone", DotKind::Write),
    ("import", DotKind::Read),
    ("read", DotKind::Read),
    ("load", DotKind::Load),
];

/// The arguments of an sqlite3 dot-command line as its shell splits them: on blanks, with
/// `'…'` (literal) and `"…"` (`\` escapes) grouping.
fn sqlite_args(line: &str) -> Vec<String> {
    let mut args = Vec::new();
    let mut chars = line.chars().peekable();
    loop {
        while chars.peek().is_some_and(|c| c.is_whitespace()) {
            chars.next();
        }
        let Some(&first) = chars.peek() else {
            return args;
        };
        let mut a = String::new();
        if first == '\'' || first == '"' {
            chars.next();
            while let Some(c) = chars.next() {
                if c == first {
                    break;
                }
                if c == '\\' && first == '"' {
                    a.extend(chars.next());
                } else {
                    a.push(c);
                }
            }
        } else {
            while let Some(&c) = chars.peek() {
                if c.is_whitespace() {
                    break;
                }
                a.push(c);
                chars.next();
            }
        }
        args.push(a);
    }
}

/// One sqlite3 dot-command line (attack pass 197 B5). The shell takes a command by any
/// prefix of its name (`.she`, `.sys`): a prefix of commands with different effects is
/// asked about. Any argument `|CMD` (`.import "|cmd" t`, `.output |cmd`) runs CMD.
fn sqlite_dot_command(name: &str, line: &str, cx: &DangerCtx<'_>, out: &mut Vec<Finding>) {
    let args = sqlite_args(&line[1..]);
    let Some((cmd, rest_args)) = args.split_first() else {
        return;
    };
    let what = format!("{name} .{cmd}");
    let rest = line[1..].trim_start().get(cmd.len()..).unwrap_or("").trim();
    for a in rest_args {
        if let Some(c) = a.strip_prefix('|') {
            embedded(&what, c, Input::Inherited, cx, out);
        }
    }
    // Unquoted, `.once |git reset --hard` pipes to the rest of the line.
    let bar = rest.strip_prefix('|').or_else(|| {
        rest.find(" |")
            .or_else(|| rest.find("\t|"))
            .map(|k| &rest[k + 2..])
    });
    if let Some(c) = bar {
        if !rest_args.iter().any(|a| a.strip_prefix('|') == Some(c)) {
            embedded(&what, c, Input::Inherited, cx, out);
        }
    }
    let mut kinds: Vec<DotKind> = SQLITE_DOT
        .iter()
        .filter(|(full, _)| !cmd.is_empty() && full.starts_with(cmd.as_str()))
        .map(|(_, k)| *k)
        .collect();
    kinds.dedup();
    let kind = match kinds.as_slice() {
        [] => return,
        [k] => *k,
        _ => {
            out.push(unread(format!(
                "{what} may be any of several dot-commands, some of which run or write"
            )));
            return;
        }
    };
    let operands: Vec<&String> = rest_args.iter().filter(|a| !a.starts_with('-')).collect();
    match kind {
        DotKind::Run => embedded(&what, rest, Input::Inherited, cx, out),
        DotKind::Write => {
            if rest_args.iter().any(|a| a == "-x" || a == "-e") || "excel".starts_with(cmd.as_str())
            {
                out.push(unread(format!(
                    "{what} opens the result in another program"
                )));
            } else if let Some(f) = operands.last().filter(|f| !f.starts_with('|')) {
                written(&format!("{what} writes {f}"), f, cx, out);
            }
        }
        DotKind::Read => {
            if "read".starts_with(cmd.as_str())
                && operands.first().is_some_and(|f| !f.starts_with('|'))
            {
                out.push(unread(format!(
                    "{what} runs a script file this policy does not read"
                )));
            }
        }
        DotKind::Load => out.push(unread(format!("{what} loads an extension library"))),
    }
}

// ---------------------------------------------------------------------------------------------
// writers of named files: perl -i, patch, git apply
// ---------------------------------------------------------------------------------------------

/// `perl -i`/`-pi`: the files it edits in place are judged as writes.
fn perl(seg: &Segment, cx: &DangerCtx<'_>, out: &mut Vec<Finding>) {
    let argv = &seg.argv;
    let mut in_place = false;
    let mut files = Vec::new();
    let mut script_seen = false;
    let mut i = 1;
    while i < argv.len() {
        let a = argv[i].as_str();
        if a == "--" {
            files.extend(argv[i + 1..].iter().cloned());
            break;
        }
        if a.starts_with('-') && a.len() > 1 && !script_seen {
            for (k, c) in a[1..].char_indices() {
                match c {
                    'i' => {
                        in_place = true;
                        break; // the rest is the backup suffix
                    }
                    'e' | 'E' => {
                        script_seen = true;
                        if a.len() == 2 + k {
                            i += 1;
                        }
                        break;
                    }
                    'I' | 'M' | 'm' | 'x' | 'C' | 'd' | 'D' | 'l' | '0' => break,
                    _ => {}
                }
            }
        } else if !script_seen && !a.starts_with('-') {
            // The script file; the files follow.
            script_seen = true;
        } else if a.starts_with('-') && matches!(a, "-e" | "-E") {
            i += 1;
        } else {
            files.push(a.to_string());
        }
        i += 1;
    }
    if in_place {
        for f in files {
            written(&format!("perl -i edits {f}"), &f, cx, out);
        }
    }
}

/// patch writes the files its diff names (a diff can name `.git/config`): asked about
/// unless it writes one named file (`-o FILE`, an ORIGFILE operand: judged) or only
/// reports (`--dry-run`).
fn patch(seg: &Segment, cx: &DangerCtx<'_>, out: &mut Vec<Finding>) {
    let argv = &seg.argv;
    if argv
        .iter()
        .any(|a| LongOption::abbrev("dry-run").matches(a) || a == "-C")
    {
        return;
    }
    let (opts, operands) = scan(
        seg,
        "BbDdFgiopPrVxYYz",
        "oBYr",
        &[
            LongOption::abbrev("output"),
            LongOption::abbrev("prefix"),
            LongOption::abbrev("basename-prefix"),
            LongOption::abbrev("reject-file"),
        ],
        &[
            "input",
            "directory",
            "strip",
            "suffix",
            "fuzz",
            "backup-if-mismatch",
            "define",
            "quoting-style",
            "read-only",
            "version-control",
            "get",
        ],
    );
    // Backups go to PREFIX + the file's name (`-B .git/`, `-Y`): a prefix in `.git` writes
    // there (attack pass 197 B8).
    for o in &opts {
        if matches!(
            o.name.as_str(),
            "-B" | "-Y" | "--prefix" | "--basename-prefix"
        ) {
            match &o.value {
                Some(p) if !in_git_dir(p, cx) && !p.contains(".git") => {}
                v => out.push(git_dir_write(
                    &format!("patch {}", o.name),
                    v.as_deref().unwrap_or("a directory named only at run time"),
                )),
            }
        }
    }
    let named: Vec<String> = opts
        .iter()
        .filter(|o| matches!(o.name.as_str(), "-o" | "--output" | "-r" | "--reject-file"))
        .filter_map(|o| o.value.clone())
        .chain(operands.first().map(|(_, f)| f.clone()))
        .collect();
    if named.is_empty() {
        // A diff written on the command line (a heredoc, a herestring, `printf … |`) names
        // its files in its `---`/`+++` headers: each is judged as written. A diff from a
        // file is not read here.
        match stdin_text(seg, cx) {
            Ok(Some(diff)) => {
                for f in diff_targets(&diff) {
                    written(&format!("patch writes {f}"), &f, cx, out);
                }
            }
            _ => out.push(finding(
                FindingId::GitAlias,
                Decision::Ask,
                "patch writes the files its diff names, which this policy does not read (a \
                 diff may name .git/config): name the file, or use git apply (which refuses \
                 paths in .git)",
            )),
        }
    }
    for f in named {
        written(&format!("patch writes {f}"), &f, cx, out);
    }
}

/// The files a unified or context diff's `---`/`+++`/`***` headers name, each also without
/// its first component (`patch -p1` strips `a/`, `b/`), up to a tab (the timestamp).
fn diff_targets(diff: &str) -> Vec<String> {
    let mut out = Vec::new();
    for line in diff.lines() {
        let Some(rest) = ["--- ", "+++ ", "*** "]
            .iter()
            .find_map(|h| line.strip_prefix(h))
        else {
            continue;
        };
        let path = rest.split('\t').next().unwrap_or(rest).trim();
        if path.is_empty() || path == "/dev/null" {
            continue;
        }
        out.push(path.to_string());
        if let Some((_, stripped)) = path.split_once('/') {
            out.push(stripped.to_string());
        }
    }
    out
}

/// `git apply --unsafe-paths` (paths outside the work tree, `.git` included) and `git
/// apply --directory=.git`.
fn git_apply(seg: &Segment, cx: &DangerCtx<'_>, out: &mut Vec<Finding>) {
    let Some(("apply", args)) = git_sub_args(seg) else {
        return;
    };
    // parse-options takes abbreviations (`--unsafe`, `--dir=.git`).
    let directory = LongOption::abbrev("directory");
    for (k, a) in args.iter().enumerate() {
        let dir = if !directory.matches(a) {
            None
        } else if let Some((_, d)) = a.split_once('=') {
            Some(d)
        } else {
            args.get(k + 1).map(String::as_str)
        };
        if LongOption::abbrev("unsafe-paths").matches(a) {
            out.push(git_dir_write(
                "git apply --unsafe-paths",
                "paths outside the work tree",
            ));
        } else if let Some(d) = dir.filter(|d| in_git_dir(d, cx)) {
            out.push(git_dir_write("git apply --directory", d));
        }
    }
}

/// Compressors and their decompressing names: (name, keeps its input by default). Each
/// replaces FILE with FILE.gz (or FILE.gz with FILE): the operand is deleted unless kept
/// (`-k`, `--keep`, `-c`, `--stdout`, `-t`, `-l`), and with `-r` whole directories are
/// (attack pass 200 P3: `gzip -r .git/objects`, `bzip2 .git/HEAD` lost the history).
const COMPRESSORS: &[(&str, bool)] = &[
    ("gzip", false),
    ("gunzip", false),
    ("pigz", false),
    ("unpigz", false),
    ("bzip2", false),
    ("bunzip2", false),
    ("pbzip2", false),
    ("lbzip2", false),
    ("xz", false),
    ("unxz", false),
    ("lzma", false),
    ("unlzma", false),
    ("lzip", false),
    ("plzip", false),
    ("compress", false),
    ("uncompress", false),
    ("zstd", true),
    ("unzstd", true),
    ("pzstd", true),
    ("lz4", true),
    ("unlz4", true),
    ("brotli", true),
];

/// A compressor's operands (see [`COMPRESSORS`]): deleted ones judged as `rm` judges its
/// operands (the project, its history); the file a decompression writes (`gzip -d
/// .git/HEAD.gz` writes `.git/HEAD`) and `-o FILE` (zstd, lz4, brotli; lz4's second
/// operand) judged as writes.
fn compressor(name: &str, seg: &Segment, cx: &DangerCtx<'_>, out: &mut Vec<Finding>) {
    let keeps_default = COMPRESSORS.iter().any(|(c, k)| *c == name && *k);
    let (opts, operands) = scan(
        seg,
        "SoDTMFCb",
        "o",
        &[LongOption::abbrev("output")],
        &[
            "suffix", "threads", "memlimit", "format", "check", "dict", "memory",
        ],
    );
    let flags: Vec<&str> = seg
        .argv
        .iter()
        .enumerate()
        .skip(1)
        .filter(|(i, a)| seg.is_static(*i) && a.starts_with('-'))
        .map(|(_, a)| a.as_str())
        .collect();
    let short = |c: char| {
        flags.iter().any(|f| {
            !f.starts_with("--")
                && f[1..]
                    .chars()
                    .take_while(|c| !"SoDTMFCb".contains(*c))
                    .any(|x| x == c)
        })
    };
    let long = |n: &'static str| flags.iter().any(|f| LongOption::abbrev(n).matches(f));
    let keeps = short('k')
        || short('c')
        || short('t')
        || short('l')
        || long("keep")
        || long("stdout")
        || long("to-stdout")
        || long("test")
        || long("list");
    let deletes = !keeps && (!keeps_default || long("rm"));
    let recursive = short('r') || long("recursive");
    let decompress = short('d')
        || long("decompress")
        || long("uncompress")
        || name.starts_with("un")
        || matches!(name, "gunzip" | "bunzip2");
    for o in opts.into_iter().filter_map(|o| o.value) {
        written(&format!("{name} -o"), &o, cx, out);
    }
    let operands: Vec<String> = operands.into_iter().map(|(_, a)| a).collect();
    if matches!(name, "lz4" | "unlz4") && operands.len() == 2 {
        written(name, &operands[1], cx, out);
    }
    for t in &operands {
        if deletes {
            if let Some(why) = cx.project_target(t, recursive) {
                out.push(finding(
                    FindingId::RmProject,
                    Decision::Ask,
                    format!("{name} replaces its operands with their (de)compressed files: deletes {why}"),
                ));
            }
        }
        if decompress && !keeps {
            if let Some((stem, _)) = t.rsplit_once('.').filter(|(s, _)| !s.is_empty()) {
                written(name, stem, cx, out);
            }
        }
    }
}

/// `sort -o FILE`, `shuf -o FILE`, `uniq IN OUT`: the file written; `split [IN [PREFIX]]`,
/// `csplit -f PREFIX`: the pieces written in a `.git` directory (a prefix and suffixes
/// can spell `.git/config`); `split --filter=CMD` runs CMD (attack pass 200 P3).
fn text_outputs(name: &str, seg: &Segment, cx: &DangerCtx<'_>, out: &mut Vec<Finding>) {
    let what = format!("{name} -o");
    match name {
        "sort" => {
            let (opts, _) = scan(
                seg,
                "kotST",
                "o",
                &[LongOption::abbrev("output")],
                &[
                    "key",
                    "field-separator",
                    "buffer-size",
                    "temporary-directory",
                    "files0-from",
                    "parallel",
                    "batch-size",
                    "random-source",
                    "compress-program",
                ],
            );
            for v in opts.into_iter().filter_map(|o| o.value) {
                written(&what, &v, cx, out);
            }
        }
        "shuf" => {
            let (opts, _) = scan(
                seg,
                "ino",
                "o",
                &[LongOption::abbrev("output")],
                &["input-range", "head-count", "random-source"],
            );
            for v in opts.into_iter().filter_map(|o| o.value) {
                written(&what, &v, cx, out);
            }
        }
        "uniq" => {
            let (_, operands) = scan(
                seg,
                "fsw",
                "",
                &[],
                &["skip-fields", "skip-chars", "check-chars"],
            );
            if let Some((_, o)) = operands.get(1) {
                written("uniq's output", o, cx, out);
            }
        }
        "split" => {
            let (opts, operands) = scan(
                seg,
                "abClnt",
                "",
                &[LongOption::abbrev("filter")],
                &[
                    "suffix-length",
                    "bytes",
                    "line-bytes",
                    "lines",
                    "number",
                    "separator",
                    "additional-suffix",
                ],
            );
            for o in opts {
                command_value("split --filter", o.value, Input::Data, cx, out);
            }
            let prefix = operands.get(1).map_or("x", |(_, p)| p.as_str());
            if in_git_dir(prefix, cx) {
                out.push(git_dir_write("split", prefix));
            }
        }
        _ => {
            let (opts, _) = scan(
                seg,
                "bfn",
                "f",
                &[LongOption::abbrev("prefix")],
                &["suffix-format", "digits"],
            );
            let prefix = opts.into_iter().filter_map(|o| o.value).next_back();
            let prefix = prefix.as_deref().unwrap_or("xx");
            if in_git_dir(prefix, cx) {
                out.push(git_dir_write("csplit", prefix));
            }
        }
    }
}

/// git's output files (attack pass 200 P3): `--output=FILE` of the diff family (`diff`,
/// `log`, `show`, `format-patch`, …), `git archive -o FILE`, `git bundle create FILE`
/// judged as writes; `git format-patch -o DIR` into a `.git` directory asks.
fn git_outputs(seg: &Segment, cx: &DangerCtx<'_>, out: &mut Vec<Finding>) {
    let Some((sub, args)) = git_sub_args(seg) else {
        return;
    };
    let output = LongOption::abbrev("output");
    let output_dir = LongOption::abbrev("output-directory");
    let value = |k: usize, a: &str| match a.split_once('=') {
        Some((_, v)) => Some(v.to_string()),
        None => args.get(k + 1).cloned(),
    };
    for (k, a) in args.iter().enumerate() {
        if a == "--" {
            break;
        }
        if output.matches(a) {
            if let Some(v) = value(k, a) {
                written(&format!("git {sub} --output"), &v, cx, out);
            }
        } else if sub == "format-patch" && (output_dir.matches(a) || a.starts_with("-o")) {
            let dir = match a
                .strip_prefix("-o")
                .filter(|r| !r.is_empty() && !a.starts_with("--"))
            {
                Some(d) => Some(d.to_string()),
                None => value(k, a),
            };
            if let Some(d) = dir.filter(|d| in_git_dir(d, cx)) {
                out.push(git_dir_write("git format-patch -o", &d));
            }
        } else if sub == "archive" && a.starts_with("-o") && a.len() > 2 {
            written("git archive -o", &a[2..], cx, out);
        } else if sub == "archive" && a == "-o" {
            if let Some(v) = args.get(k + 1) {
                written("git archive -o", v, cx, out);
            }
        }
    }
    if sub == "bundle" && args.first().is_some_and(|a| a == "create") {
        if let Some(f) = args.iter().skip(1).find(|a| !a.starts_with('-')) {
            written("git bundle create", f, cx, out);
        }
    }
}
