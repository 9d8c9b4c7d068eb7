//! Fuzz the proxy's front (issue 10 §4): arbitrary bytes as one client connection (HTTP
//! absolute-form and CONNECT parsed by hyper, SOCKS5 by cordon's parser, told apart by the
//! first byte), through an in-memory pipe, with a policy that allows nothing. Nothing may
//! panic, no connection may be allowed, and an HTTP answer is never a 2xx.
#![no_main]

use cordon_proxy::{Proxy, ProxyConfig, ProxyPolicy, Resolver};
use libfuzzer_sys::fuzz_target;
use std::sync::OnceLock;
use tokio::io::{AsyncReadExt, AsyncWriteExt};

fn runtime() -> &'static tokio::runtime::Runtime {
    static RT: OnceLock<tokio::runtime::Runtime> = OnceLock::new();
    RT.get_or_init(|| {
        tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .expect("runtime")
    })
}

fuzz_target!(|data: &[u8]| {
    let mut cfg = ProxyConfig::new(ProxyPolicy::default());
    cfg.resolver = Resolver::Map(Default::default());
    let proxy = Proxy::new(cfg);
    let data = data.to_vec();
    let out = runtime().block_on(async move {
        let (mut client, server) = tokio::io::duplex(64 * 1024);
        let task = tokio::spawn(proxy.serve_io(server));
        let _ = client.write_all(&data).await;
        let _ = client.shutdown().await;
        let mut out = Vec::new();
        let _ = tokio::time::timeout(
            std::time::Duration::from_millis(200),
            client.read_to_end(&mut out),
        )
        .await;
        task.abort();
        out
    });
    assert!(!out.starts_with(b"HTTP/1.1 2"), "{}", String::from_utf8_lossy(&out));
});
