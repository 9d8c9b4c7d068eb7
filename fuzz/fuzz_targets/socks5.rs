//! Fuzz the proxy's SOCKS5 parser and the host-rule/target parsers (issue 10 §4): nothing
//! may panic, a parsed message never claims more bytes than it was given, and a parsed
//! request re-encodes to the bytes it came from.
#![no_main]

use cordon_policy::hosts::{parse_target, HostRule};
use cordon_proxy::socks5::{encode_request, parse_greeting, parse_request, Host};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Ok(Some((_, n))) = parse_greeting(data) {
        assert!(n <= data.len());
    }
    if let Ok(Some((r, n))) = parse_request(data) {
        assert!(n <= data.len());
        let domain_ok = match &r.host {
            Host::Domain(d) => !d.is_empty() && d.len() <= 255,
            Host::Ip(_) => true,
        };
        if domain_ok {
            assert_eq!(encode_request(&r), &data[..n]);
        }
    }
    let text = String::from_utf8_lossy(data);
    if let Ok(rule) = HostRule::parse(&text) {
        assert_ne!(rule.text.trim(), "*");
    }
    let _ = parse_target(&text);
});
