//! https for `cosmoql serve --tls`: a self-signed certificate made at start, as the emulators do,
//! valid for the names a local client uses (`localhost`, `127.0.0.1`, `::1`, and the address the
//! server is bound to when it is a specific one), with its PEM kept so that `--cert-out` can write
//! it for clients that want to trust it (the JavaScript SDK through `NODE_EXTRA_CA_CERTS`, Python
//! through `connection_verify`, curl through `--cacert`).
//!
//! rustls with the `ring` provider, named explicitly (the test build also has aws-lc-rs through
//! the Rust SDK, and rustls picks no default when two are built). ALPN offers `h2` and
//! `http/1.1`, so each client gets the protocol it asks for on the one port.

use std::net::IpAddr;
use std::sync::Arc;

use rustls::pki_types::{CertificateDer, PrivateKeyDer, PrivatePkcs8KeyDer};
use tokio_rustls::TlsAcceptor;

/// A certificate and the acceptor that serves it.
#[derive(Clone)]
pub struct Tls {
    /// The certificate, PEM-encoded (what `--cert-out` writes).
    pub certificate_pem: String,
    acceptor: TlsAcceptor,
}

impl std::fmt::Debug for Tls {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Tls").field("certificate_pem", &self.certificate_pem).finish_non_exhaustive()
    }
}

impl Tls {
    /// A new self-signed certificate (ECDSA P-256) for the loopback names and `bind` (when it
    /// is neither loopback nor unspecified: a client on another host reaches it by that
    /// address).
    pub fn self_signed(bind: IpAddr) -> Result<Tls, String> {
        let mut names = vec!["localhost".to_string(), "127.0.0.1".to_string(), "::1".to_string()];
        if !bind.is_loopback() && !bind.is_unspecified() {
            names.push(bind.to_string());
        }
        let certified =
            rcgen::generate_simple_self_signed(names).map_err(|e| format!("cannot make a certificate: {e}"))?;
        let key = PrivateKeyDer::Pkcs8(PrivatePkcs8KeyDer::from(certified.signing_key.serialize_der()));
        let chain: Vec<CertificateDer<'static>> = vec![certified.cert.der().clone()];
        let provider = Arc::new(rustls::crypto::ring::default_provider());
        let mut config = rustls::ServerConfig::builder_with_provider(provider)
            .with_safe_default_protocol_versions()
            .map_err(|e| format!("cannot configure TLS: {e}"))?
            .with_no_client_auth()
            .with_single_cert(chain, key)
            .map_err(|e| format!("cannot configure TLS: {e}"))?;
        config.alpn_protocols = vec![b"h2".to_vec(), b"http/1.1".to_vec()];
        Ok(Tls { certificate_pem: certified.cert.pem(), acceptor: TlsAcceptor::from(Arc::new(config)) })
    }

    /// The acceptor for incoming connections.
    pub fn acceptor(&self) -> &TlsAcceptor {
        &self.acceptor
    }
}
