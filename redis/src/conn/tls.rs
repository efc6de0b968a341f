//! A rustls client configuration from a URL's TLS settings, for the connections this crate
//! makes itself (the smart cache's subscribers: the `redis` crate's own TLS streams are
//! not reachable from outside it). It checks certificates as the `redis` crate does: the
//! `ssl_ca_certs` roots, else the system's; a client certificate when given; no check at
//! all only with `ssl_cert_reqs=none`.

use std::io::{self, Write};
use std::net::TcpStream;
use std::sync::Arc;
use std::time::Duration;

use rustls::client::danger::{HandshakeSignatureValid, ServerCertVerified, ServerCertVerifier};
use rustls::crypto::{verify_tls12_signature, verify_tls13_signature, WebPkiSupportedAlgorithms};
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer, ServerName, UnixTime};
use rustls::{ClientConfig, ClientConnection, DigitallySignedStruct, RootCertStore, StreamOwned};

/// The configuration for `verify`, the CA roots `ca` (PEM; the system's when none) and a
/// client certificate chain and key (PEM).
pub(super) fn client_config(
    verify: bool,
    ca: Option<&[u8]>,
    client: Option<(&[u8], &[u8])>,
) -> Result<ClientConfig, String> {
    let mut roots = RootCertStore::empty();
    match ca {
        Some(pem) => {
            for cert in CertificateDer::pem_slice_iter(pem) {
                let cert = cert.map_err(|e| format!("ssl_ca_certs: {e}"))?;
                roots.add(cert).map_err(|e| format!("ssl_ca_certs: {e}"))?;
            }
        }
        None if verify => {
            let found = rustls_native_certs::load_native_certs();
            if let Some(e) = found.errors.first() {
                return Err(format!("the system's CA certificates: {e}"));
            }
            for cert in found.certs {
                let _ = roots.add(cert);
            }
        }
        None => {}
    }
    let builder = ClientConfig::builder().with_root_certificates(roots);
    let mut config = match client {
        Some((cert, key)) => {
            let chain = CertificateDer::pem_slice_iter(cert)
                .collect::<Result<Vec<_>, _>>()
                .map_err(|e| format!("ssl_certfile: {e}"))?;
            let key =
                PrivateKeyDer::from_pem_slice(key).map_err(|e| format!("ssl_keyfile: {e}"))?;
            builder
                .with_client_auth_cert(chain, key)
                .map_err(|e| format!("ssl_certfile/ssl_keyfile: {e}"))?
        }
        None => builder.with_no_client_auth(),
    };
    if !verify {
        let supported = config.crypto_provider().signature_verification_algorithms;
        config.enable_sni = false;
        config
            .dangerous()
            .set_certificate_verifier(Arc::new(NoCheck { supported }));
    }
    Ok(config)
}

/// `ssl_cert_reqs=none`: any certificate is accepted (the handshake's signatures are
/// still checked against it).
#[derive(Debug)]
struct NoCheck {
    supported: WebPkiSupportedAlgorithms,
}

impl ServerCertVerifier for NoCheck {
    fn verify_server_cert(
        &self,
        _end_entity: &CertificateDer<'_>,
        _intermediates: &[CertificateDer<'_>],
        _server_name: &ServerName<'_>,
        _ocsp_response: &[u8],
        _now: UnixTime,
    ) -> Result<ServerCertVerified, rustls::Error> {
        Ok(ServerCertVerified::assertion())
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        verify_tls12_signature(message, cert, dss, &self.supported)
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        verify_tls13_signature(message, cert, dss, &self.supported)
    }

    fn supported_verify_schemes(&self) -> Vec<rustls::SignatureScheme> {
        self.supported.supported_schemes()
    }
}

/// A TLS stream over TCP, the handshake done.
pub(crate) type TlsStream = StreamOwned<ClientConnection, TcpStream>;

/// Shakes hands over `tcp` with `host` (a name or an IP address), every wait bounded by
/// `timeout`.
pub(crate) fn handshake(
    config: &Arc<ClientConfig>,
    host: &str,
    tcp: TcpStream,
    timeout: Duration,
) -> io::Result<TlsStream> {
    let name = ServerName::try_from(host.to_string())
        .map_err(|e| io::Error::new(io::ErrorKind::InvalidInput, e))?;
    let conn = ClientConnection::new(Arc::clone(config), name).map_err(io::Error::other)?;
    tcp.set_read_timeout(Some(timeout))?;
    tcp.set_write_timeout(Some(timeout))?;
    let mut stream = StreamOwned::new(conn, tcp);
    while stream.conn.is_handshaking() {
        stream.conn.complete_io(&mut stream.sock)?;
    }
    // Anything the handshake left to send.
    stream.flush()?;
    Ok(stream)
}
