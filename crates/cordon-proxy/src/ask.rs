//! Asking about unknown hosts (issue 10 §4, R-P4 `ask`): a destination that no rule of
//! `network.allow` / `network.deny` names is put to whoever runs the command, through a
//! unix stream the caller gave the proxy (`cordon run`: a socket pair whose other end its
//! loop thread answers with the session's approver). One JSON line each way:
//!
//! - proxy → caller: [`HostAsk`] `{"id":1,"proto":"connect","host":"example.com","port":443}`
//! - caller → proxy: [`HostReply`] `{"id":1,"allow":true,"rule":"approved once by the person at the terminal"}`
//!
//! Asks are put one at a time; the reply is kept for the rest of the run (a host approved or
//! denied once is not asked again by the same command), and an answer must carry the id of
//! the ask it answers (a late answer to an ask that timed out is skipped). No answer within
//! the timeout, a closed or broken stream, or a malformed line is a deny naming why.

use serde::{Deserialize, Serialize};
use std::collections::HashMap;
use std::time::Duration;
use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader};
use tokio::net::UnixStream;

/// One question: may the command connect to `host:port`?
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct HostAsk {
    /// Matches the reply to the question.
    pub id: u64,
    /// `http`, `connect` or `socks5`.
    pub proto: String,
    /// The destination as the client named it, normalised (lower case, no trailing dot).
    pub host: String,
    /// The destination port.
    pub port: u16,
}

/// The answer.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct HostReply {
    /// The [`HostAsk::id`] answered.
    pub id: u64,
    /// Whether the connection may proceed (internal addresses are still judged afterwards).
    pub allow: bool,
    /// Who decided and how, e.g. `approved once by the person at the terminal`, `denied by the scripted answers`; it
    /// becomes the rule named in the log, the 403 and the outcome.
    pub rule: String,
}

/// Bytes one reply line may have.
const REPLY_MAX: usize = 4096;

struct State {
    stream: Option<BufReader<UnixStream>>,
    std: Option<std::os::unix::net::UnixStream>,
    next: u64,
    /// `host:port` → (allowed, rule) for the rest of the run.
    answered: HashMap<String, (bool, String)>,
}

/// The proxy's end of the ask channel (see the module docs).
pub struct Asker {
    state: tokio::sync::Mutex<State>,
    timeout: Duration,
}

impl std::fmt::Debug for Asker {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Asker")
            .field("timeout", &self.timeout)
            .finish_non_exhaustive()
    }
}

impl Asker {
    /// An asker over `stream` (the caller answers the other end); `timeout` bounds the wait
    /// for one answer (then the host is denied for the run).
    pub fn new(stream: std::os::unix::net::UnixStream, timeout: Duration) -> Asker {
        Asker {
            state: tokio::sync::Mutex::new(State {
                stream: None,
                std: Some(stream),
                next: 1,
                answered: HashMap::new(),
            }),
            timeout,
        }
    }

    /// Asks about `host:port` (or returns this run's earlier answer). `(allowed, rule)`.
    /// Must run inside the proxy's tokio runtime.
    pub async fn ask(&self, proto: &str, host: &str, port: u16) -> (bool, String) {
        let key = format!("{host}:{port}");
        let mut st = self.state.lock().await;
        if let Some(a) = st.answered.get(&key) {
            return a.clone();
        }
        let id = st.next;
        st.next += 1;
        let q = HostAsk {
            id,
            proto: proto.to_string(),
            host: host.to_string(),
            port,
        };
        let timeout = self.timeout;
        let answer = match tokio::time::timeout(timeout, exchange(&mut st, &q)).await {
            Ok(Ok(r)) => (r.allow, r.rule),
            Ok(Err(e)) => (false, format!("no answer: {e}")),
            Err(_) => (
                false,
                format!("no answer within {} s", timeout.as_secs().max(1)),
            ),
        };
        st.answered.insert(key, answer.clone());
        answer
    }
}

async fn exchange(st: &mut State, q: &HostAsk) -> std::io::Result<HostReply> {
    if st.stream.is_none() {
        let s = st
            .std
            .take()
            .ok_or_else(|| std::io::Error::other("the ask channel is closed"))?;
        s.set_nonblocking(true)?;
        st.stream = Some(BufReader::new(UnixStream::from_std(s)?));
    }
    let s = st
        .stream
        .as_mut()
        .ok_or_else(|| std::io::Error::other("the ask channel is closed"))?;
    let mut line = serde_json::to_vec(q).map_err(std::io::Error::other)?;
    line.push(b'\n');
    s.get_mut().write_all(&line).await?;
    loop {
        let mut buf = Vec::new();
        let n = (&mut *s)
            .take(REPLY_MAX as u64)
            .read_until(b'\n', &mut buf)
            .await?;
        if n == 0 {
            return Err(std::io::Error::other("the ask channel was closed"));
        }
        if !buf.ends_with(b"\n") {
            return Err(std::io::Error::other("reply line too long"));
        }
        let r: HostReply = serde_json::from_slice(&buf)
            .map_err(|e| std::io::Error::other(format!("bad reply: {e}")))?;
        if r.id == q.id {
            return Ok(r);
        }
        // A late answer to an earlier ask that timed out: skipped.
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::{BufRead, Write};

    fn rt() -> tokio::runtime::Runtime {
        tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap()
    }

    #[test]
    fn answers_are_matched_by_id_and_kept_for_the_run() {
        let (a, b) = std::os::unix::net::UnixStream::pair().unwrap();
        let answerer = std::thread::spawn(move || {
            let mut r = std::io::BufReader::new(b.try_clone().unwrap());
            let mut w = b;
            let mut line = String::new();
            r.read_line(&mut line).unwrap();
            let q: HostAsk = serde_json::from_str(&line).unwrap();
            assert_eq!((q.host.as_str(), q.port), ("example.com", 443));
            // A stale answer first, then the real one.
            writeln!(w, r#"{{"id":999,"allow":true,"rule":"stale"}}"#).unwrap();
            writeln!(
                w,
                r#"{{"id":{},"allow":false,"rule":"denied by test"}}"#,
                q.id
            )
            .unwrap();
            let mut rest = String::new();
            // Nothing more is asked: the second ask of the same host is answered locally.
            r.read_line(&mut rest).unwrap();
            rest
        });
        let asker = Asker::new(a, Duration::from_secs(5));
        let rt = rt();
        let first = rt.block_on(asker.ask("connect", "example.com", 443));
        let again = rt.block_on(asker.ask("http", "example.com", 443));
        assert_eq!(first, (false, "denied by test".to_string()));
        assert_eq!(again, first);
        drop(asker);
        assert_eq!(answerer.join().unwrap(), "");
    }

    #[test]
    fn no_answer_is_a_bounded_deny() {
        let (a, _b) = std::os::unix::net::UnixStream::pair().unwrap();
        let asker = Asker::new(a, Duration::from_millis(200));
        let (ok, rule) = rt().block_on(asker.ask("connect", "slow.example", 443));
        assert!(!ok);
        assert!(rule.contains("no answer within"), "{rule}");
        let (a, b) = std::os::unix::net::UnixStream::pair().unwrap();
        drop(b);
        let asker = Asker::new(a, Duration::from_secs(5));
        let (ok, rule) = rt().block_on(asker.ask("connect", "gone.example", 443));
        assert!(!ok && rule.starts_with("no answer"), "{rule}");
    }
}
