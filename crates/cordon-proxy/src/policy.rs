//! One policy for HTTP, CONNECT and SOCKS5 (issue 10 §4): judged first on the destination
//! as the client named it, then on every address it resolves to — the address actually
//! connected to is the one judged, so a name that rebinds to an internal address between
//! checks gets nothing.

use cordon_policy::hosts::{is_internal, parse_target, HostRule, Target};
use cordon_policy::NetworkRules;
use std::net::IpAddr;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// The allow and deny lists and the optional port list.
#[derive(Debug, Clone, Default)]
pub struct ProxyPolicy {
    allow: Vec<HostRule>,
    deny: Vec<HostRule>,
    ports: Vec<u16>,
    own: OwnAddrs,
}

/// The addresses of this machine's own interfaces (`getifaddrs`), re-read at most every
/// [`OwnAddrs::FRESH`]: the proxy connects from the host, so a name resolving to one of
/// them reaches the host's own services on every interface (a server bound to
/// `0.0.0.0`) even when the address is public (breaker, stop 20: an allowed name
/// resolving to the VM's 192.0.2.2 reached a host service). They are judged like internal
/// addresses.
#[derive(Debug, Clone, Default)]
struct OwnAddrs(Arc<Mutex<Option<ReadAt>>>);

/// When the interface addresses were read, and what they were.
type ReadAt = (Instant, Vec<IpAddr>);

impl OwnAddrs {
    const FRESH: Duration = Duration::from_secs(5);

    fn contains(&self, a: IpAddr) -> bool {
        let a = cordon_policy::hosts::canonical_ip(a);
        let Ok(mut g) = self.0.lock() else {
            return false;
        };
        if g.as_ref().is_none_or(|(t, _)| t.elapsed() > Self::FRESH) {
            *g = Some((Instant::now(), interface_addrs()));
        }
        g.as_ref().is_some_and(|(_, v)| v.contains(&a))
    }
}

/// Every address of every interface of this machine (empty where they cannot be read).
#[cfg(unix)]
fn interface_addrs() -> Vec<IpAddr> {
    let Ok(ifs) = nix::ifaddrs::getifaddrs() else {
        return Vec::new();
    };
    ifs.filter_map(|i| i.address)
        .filter_map(|a| {
            a.as_sockaddr_in()
                .map(|v| IpAddr::V4(v.ip()))
                .or_else(|| a.as_sockaddr_in6().map(|v| IpAddr::V6(v.ip())))
        })
        .collect()
}

#[cfg(not(unix))]
fn interface_addrs() -> Vec<IpAddr> {
    Vec::new()
}

/// A decision and the rule that made it (named in the 403, the SOCKS5 log line and the
/// JSONL log), e.g. `allow **.crates.io`, `deny evil.example`, `not in network.allow`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Verdict {
    /// Whether the connection may proceed.
    pub allowed: bool,
    /// The rule, in words.
    pub rule: String,
    /// No rule named the destination (`not in network.allow`): with an ask channel the
    /// person running the command is asked (R-P4 `ask`) instead of the deny standing.
    pub unknown: bool,
}

impl Verdict {
    fn allow(rule: String) -> Verdict {
        Verdict {
            allowed: true,
            rule,
            unknown: false,
        }
    }
    fn deny(rule: String) -> Verdict {
        Verdict {
            allowed: false,
            rule,
            unknown: false,
        }
    }

    /// The verdict of an answer to an ask about an unknown destination.
    pub fn answered(allowed: bool, rule: String) -> Verdict {
        Verdict {
            allowed,
            rule,
            unknown: false,
        }
    }
}

impl ProxyPolicy {
    /// Builds the policy from spellings (see [`cordon_policy::hosts`]).
    ///
    /// Errors: the first bad entry, naming its list (`network.allow: "*" would match
    /// every host; …`), or port 0.
    pub fn new(allow: &[String], deny: &[String], ports: &[u16]) -> Result<ProxyPolicy, String> {
        let parse = |list: &str, v: &[String]| -> Result<Vec<HostRule>, String> {
            v.iter()
                .map(|s| HostRule::parse(s).map_err(|e| format!("network.{list}: {e}")))
                .collect()
        };
        if ports.contains(&0) {
            return Err("network.ports: 0 is not a port".into());
        }
        Ok(ProxyPolicy {
            allow: parse("allow", allow)?,
            deny: parse("deny", deny)?,
            ports: ports.to_vec(),
            own: OwnAddrs::default(),
        })
    }

    /// The policy of a profile's `[network]` table.
    ///
    /// Errors: see [`ProxyPolicy::new`].
    pub fn from_rules(r: &NetworkRules) -> Result<ProxyPolicy, String> {
        ProxyPolicy::new(&r.allow, &r.deny, &r.ports)
    }

    /// Parses a host as the client named it and judges it (stage 1: ports, deny list, allow
    /// list — deny wins). Address literals need an address rule in the allow list.
    pub fn judge_host(&self, host: &str, port: u16) -> (Option<Target>, Verdict) {
        match parse_target(host) {
            Ok(t) => {
                let v = self.judge_target(&t, port);
                (Some(t), v)
            }
            Err(e) => (None, Verdict::deny(format!("invalid host: {e}"))),
        }
    }

    /// Stage 1 on a parsed target.
    pub fn judge_target(&self, target: &Target, port: u16) -> Verdict {
        if !self.ports.is_empty() && !self.ports.contains(&port) {
            return Verdict::deny(format!("port {port} is not in network.ports"));
        }
        if let Some(d) = self.deny.iter().find(|r| r.matches(target, port)) {
            return Verdict::deny(format!("deny {}", d.text));
        }
        match self.allow.iter().find(|r| r.matches(target, port)) {
            Some(a) => Verdict::allow(format!("allow {}", a.text)),
            None => Verdict {
                unknown: true,
                ..Verdict::deny("not in network.allow".into())
            },
        }
    }

    /// Stage 2: an address the destination resolved to (or the literal itself), judged
    /// just before connecting to exactly that address. Deny address rules apply; an
    /// internal address (loopback, private, link-local, …) needs an allow address rule
    /// covering it. `stage1` is the rule that allowed the destination.
    ///
    /// An IPv6 address carrying an IPv4 one (NAT64, 6to4, Teredo, SIIT:
    /// [`cordon_policy::hosts::embedded_ipv4`]) is judged as both: a deny rule or this
    /// machine's own address matching the IPv4 refuses it, an allow address rule matching
    /// either allows it.
    pub fn judge_addr(&self, addr: IpAddr, port: u16, stage1: &Verdict) -> Verdict {
        let carried = match addr {
            IpAddr::V6(v6) => cordon_policy::hosts::embedded_ipv4(v6).map(IpAddr::V4),
            IpAddr::V4(_) => None,
        };
        let forms = || std::iter::once(addr).chain(carried);
        if let Some(d) = self
            .deny
            .iter()
            .find(|r| forms().any(|a| r.matches_addr(a, port)))
        {
            return Verdict::deny(format!("deny {} (resolved address {addr})", d.text));
        }
        let explicit = || {
            self.allow
                .iter()
                .any(|r| forms().any(|a| r.matches_addr(a, port)))
        };
        if is_internal(addr) && !explicit() {
            return Verdict::deny(format!(
                "internal address {addr} (loopback/private/link-local) needs an address rule \
                 in network.allow"
            ));
        }
        if forms().any(|a| self.own.contains(a)) && !explicit() {
            return Verdict::deny(format!(
                "internal address {addr} (this machine's own interface) needs an address \
                 rule in network.allow"
            ));
        }
        stage1.clone()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Breaker (stop 20): an allowed name resolving to one of this machine's own
    /// addresses (public or not) is refused unless an address rule names it; an address
    /// that is not the machine's own and not internal passes (twin).
    #[test]
    fn the_machines_own_addresses_need_an_address_rule() {
        let own: Vec<IpAddr> = interface_addrs();
        let pol = p(&["**.example.com"], &[], &[]);
        let v = pol.judge_target(&parse_target("a.example.com").unwrap(), 443);
        assert!(v.allowed);
        for a in own {
            let v2 = pol.judge_addr(a, 443, &v);
            assert!(!v2.allowed, "{a}: {v2:?}");
            let explicit = p(&["**.example.com", &a.to_string()], &[], &[]);
            assert!(explicit.judge_addr(a, 443, &v).allowed, "{a}");
        }
        assert!(
            pol.judge_addr("93.184.216.34".parse().unwrap(), 443, &v)
                .allowed
        );
    }

    fn p(allow: &[&str], deny: &[&str], ports: &[u16]) -> ProxyPolicy {
        let s = |v: &[&str]| v.iter().map(|x| x.to_string()).collect::<Vec<_>>();
        ProxyPolicy::new(&s(allow), &s(deny), ports).unwrap()
    }

    #[test]
    fn deny_wins_and_ports_apply() {
        let pol = p(&["**.example.com"], &["evil.example.com"], &[443]);
        assert!(pol.judge_host("a.example.com", 443).1.allowed);
        assert_eq!(
            pol.judge_host("EVIL.example.com.", 443).1.rule,
            "deny evil.example.com"
        );
        assert_eq!(
            pol.judge_host("a.example.com", 80).1.rule,
            "port 80 is not in network.ports"
        );
        assert_eq!(
            pol.judge_host("other.org", 443).1.rule,
            "not in network.allow"
        );
        assert!(!pol.judge_host("bad host", 443).1.allowed);
        assert!(ProxyPolicy::new(&["*".into()], &[], &[]).is_err());
    }

    #[test]
    fn literals_and_internal_addresses_need_address_rules() {
        let pol = p(&["example.com", "127.0.0.2"], &["10.0.0.0/8"], &[]);
        assert!(!pol.judge_host("127.0.0.1", 80).1.allowed);
        assert!(pol.judge_host("127.0.0.2", 80).1.allowed);
        assert!(!pol.judge_host("[::1]", 80).1.allowed);
        let ok = pol.judge_host("example.com", 80).1;
        assert!(ok.allowed);
        // Rebinding: an allowed name resolving to an internal address.
        let v = pol.judge_addr("127.0.0.1".parse().unwrap(), 80, &ok);
        assert!(
            !v.allowed && v.rule.contains("internal address 127.0.0.1"),
            "{v:?}"
        );
        assert!(
            !pol.judge_addr("::ffff:169.254.169.254".parse().unwrap(), 80, &ok)
                .allowed
        );
        assert!(
            pol.judge_addr("127.0.0.2".parse().unwrap(), 80, &ok)
                .allowed
        );
        assert!(
            pol.judge_addr("93.184.216.34".parse().unwrap(), 80, &ok)
                .allowed
        );
        assert!(pol
            .judge_addr("10.1.1.1".parse().unwrap(), 80, &ok)
            .rule
            .starts_with("deny 10.0.0.0/8"));
    }

    /// Breaker (stop 22): an allowed name whose AAAA is an IPv6 form carrying an internal
    /// IPv4 (NAT64 `64:ff9b::7f00:1`, 6to4, SIIT) reached it through a NAT64 gateway. Now
    /// judged as the IPv4 it carries: internal refused, deny rules apply, an allow address
    /// rule for the IPv4 allows it; a carried public address passes (twin).
    #[test]
    fn ipv6_forms_carrying_ipv4_are_judged_as_the_ipv4() {
        let pol = p(&["**.example.com", "127.0.0.2"], &["10.0.0.0/8"], &[]);
        let ok = pol.judge_host("a.example.com", 80).1;
        assert!(ok.allowed);
        for a in [
            "64:ff9b::7f00:1",
            "2002:7f00:1::1",
            "::ffff:0:7f00:1",
            "64:ff9b::a9fe:a9fe",
        ] {
            let v = pol.judge_addr(a.parse().unwrap(), 80, &ok);
            assert!(
                !v.allowed && v.rule.contains("internal address"),
                "{a}: {v:?}"
            );
        }
        let v = pol.judge_addr("64:ff9b::a00:1".parse().unwrap(), 80, &ok);
        assert!(v.rule.starts_with("deny 10.0.0.0/8"), "{v:?}");
        assert!(
            pol.judge_addr("64:ff9b::7f00:2".parse().unwrap(), 80, &ok)
                .allowed
        );
        assert!(
            pol.judge_addr("64:ff9b::808:808".parse().unwrap(), 80, &ok)
                .allowed
        );
    }
}
