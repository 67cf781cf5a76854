//! TLS for the fakes and the sim's kubelet: a CA of its own, a certificate minted on demand
//! for whatever name a client asks for (its SNI, or the address it dialled), a front relaying
//! to a plain TCP upstream, and the cluster's API served over TLS to pods. An outage closes
//! the listener, so connections are refused, and reopens the same port
//! ([`serve_with_outages`]).

use std::{
    collections::BTreeMap,
    net::SocketAddr,
    sync::{Arc, Mutex},
};

use crate::listener::serve_with_outages;
use rcgen::{BasicConstraints, CertificateParams, CertifiedIssuer, IsCa, KeyPair};
use rustls::{
    pki_types::{CertificateDer, PrivateKeyDer, PrivatePkcs8KeyDer},
    server::{ClientHello, ResolvesServerCert},
    sign::CertifiedKey,
};
use tokio::{net::TcpListener, sync::watch};

/// A certificate authority that signs a serving certificate for any name asked of it.
pub struct Authority {
    issuer: CertifiedIssuer<'static, KeyPair>,
    issued: Mutex<BTreeMap<String, Arc<CertifiedKey>>>,
}

impl std::fmt::Debug for Authority {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Authority").finish_non_exhaustive()
    }
}

impl Authority {
    /// A new self-signed CA.
    pub fn new() -> Self {
        let mut params = CertificateParams::new(Vec::<String>::new()).expect("empty SANs");
        params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
        params
            .distinguished_name
            .push(rcgen::DnType::CommonName, "barbican-fakes CA");
        let key = KeyPair::generate().expect("a key");
        Self {
            issuer: CertifiedIssuer::self_signed(params, key).expect("a self-signed CA"),
            issued: Mutex::new(BTreeMap::new()),
        }
    }

    /// The CA certificate, PEM: what a test publishes as `<instance>-tls-ca` or a caBundle.
    pub fn ca_pem(&self) -> String {
        self.issuer.pem()
    }

    /// A serving certificate for `name` (a DNS name or an IP address), minted once.
    pub fn certificate(&self, name: &str) -> Option<Arc<CertifiedKey>> {
        let mut issued = self.issued.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(known) = issued.get(name) {
            return Some(known.clone());
        }
        let key = KeyPair::generate().ok()?;
        let cert = CertificateParams::new(vec![name.to_string()])
            .ok()?
            .signed_by(&key, &self.issuer)
            .ok()?;
        let der = PrivateKeyDer::Pkcs8(PrivatePkcs8KeyDer::from(key.serialize_der()));
        let signing = rustls::crypto::ring::sign::any_supported_type(&der).ok()?;
        let certified = Arc::new(CertifiedKey::new(
            vec![CertificateDer::from(cert.der().to_vec())],
            signing,
        ));
        issued.insert(name.to_string(), certified.clone());
        Some(certified)
    }
}

impl Authority {
    /// A certificate resolver that serves, for each name a client asks for, a certificate
    /// this CA signed (a TLS server's `with_cert_resolver`); a client that sends no name
    /// dialled an address, loopback.
    pub fn resolver(self: &Arc<Self>) -> Arc<dyn ResolvesServerCert> {
        Arc::new(OnDemand(self.clone(), "127.0.0.1".into()))
    }

    /// A TLS server configuration serving this CA's certificates, `address` for a client that
    /// sends no name (it dialled that address).
    pub fn server_config(self: &Arc<Self>, address: &str) -> std::io::Result<rustls::ServerConfig> {
        Ok(rustls::ServerConfig::builder_with_provider(Arc::new(
            rustls::crypto::ring::default_provider(),
        ))
        .with_safe_default_protocol_versions()
        .map_err(std::io::Error::other)?
        .with_no_client_auth()
        .with_cert_resolver(Arc::new(OnDemand(self.clone(), address.to_string()))))
    }
}

impl Default for Authority {
    fn default() -> Self {
        Self::new()
    }
}

/// Mints for the name a client sends, else for the address it dialled.
#[derive(Debug)]
struct OnDemand(Arc<Authority>, String);

impl ResolvesServerCert for OnDemand {
    fn resolve(&self, hello: ClientHello<'_>) -> Option<Arc<CertifiedKey>> {
        self.0.certificate(hello.server_name().unwrap_or(&self.1))
    }
}

/// A running TLS front.
#[derive(Clone, Debug)]
pub struct Front {
    addr: SocketAddr,
    down: watch::Sender<bool>,
}

impl Front {
    /// Terminates TLS on a free loopback port and relays each connection to `upstream`.
    pub async fn start(authority: Arc<Authority>, upstream: SocketAddr) -> std::io::Result<Self> {
        let listener = TcpListener::bind("127.0.0.1:0").await?;
        let addr = listener.local_addr()?;
        let config = authority.server_config("127.0.0.1")?;
        let acceptor = tokio_rustls::TlsAcceptor::from(Arc::new(config));
        let (down, watching) = watch::channel(false);
        tokio::spawn(serve_with_outages(listener, watching, move |tcp| {
            let acceptor = acceptor.clone();
            async move {
                let Ok(mut tls) = acceptor.accept(tcp).await else {
                    return;
                };
                let Ok(mut plain) = tokio::net::TcpStream::connect(upstream).await else {
                    return;
                };
                let _ = tokio::io::copy_bidirectional(&mut tls, &mut plain).await;
            }
        }));
        Ok(Self { addr, down })
    }

    /// Where it listens.
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// Closes the listener (`true`: connections are refused) or reopens it.
    pub fn set_down(&self, down: bool) {
        self.down.send_replace(down);
    }
}

/// Serves `router` (the cluster's API) over TLS on `listener` with `authority`'s certificates,
/// `address` for clients that send no name, until the listener's task is dropped.
pub async fn serve_router(
    listener: TcpListener,
    authority: Arc<Authority>,
    address: &str,
    router: axum::Router,
) -> std::io::Result<()> {
    let acceptor = tokio_rustls::TlsAcceptor::from(Arc::new(authority.server_config(address)?));
    loop {
        let (tcp, _) = listener.accept().await?;
        let acceptor = acceptor.clone();
        let service = hyper_util::service::TowerToHyperService::new(router.clone());
        tokio::spawn(async move {
            let Ok(tls) = acceptor.accept(tcp).await else {
                return;
            };
            let _ =
                hyper_util::server::conn::auto::Builder::new(hyper_util::rt::TokioExecutor::new())
                    .serve_connection_with_upgrades(hyper_util::rt::TokioIo::new(tls), service)
                    .await;
        });
    }
}

/// A client configuration that takes whatever certificate a server presents (its handshake
/// signatures still checked), as the kubelet's HTTPS probes and kube-apiserver's `https:`
/// service proxy do: neither verifies a backend's certificate.
pub fn unverified_client() -> Arc<rustls::ClientConfig> {
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let verifier = Arc::new(AnyCertificate(provider.clone()));
    let config = rustls::ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .map(|builder| {
            builder
                .dangerous()
                .with_custom_certificate_verifier(verifier)
                .with_no_client_auth()
        })
        // ring supports the default versions; this cannot fail.
        .unwrap_or_else(|_| unreachable!("ring supports TLS 1.2 and 1.3"));
    Arc::new(config)
}

/// Connects to `addr` over TLS without verifying the server ([`unverified_client`]).
pub async fn connect_unverified(
    addr: SocketAddr,
) -> std::io::Result<tokio_rustls::client::TlsStream<tokio::net::TcpStream>> {
    let tcp = tokio::net::TcpStream::connect(addr).await?;
    let name = rustls::pki_types::ServerName::IpAddress(addr.ip().into());
    tokio_rustls::TlsConnector::from(unverified_client())
        .connect(name, tcp)
        .await
}

/// Takes any certificate; checks the handshake's signatures with the provider's algorithms.
#[derive(Debug)]
struct AnyCertificate(Arc<rustls::crypto::CryptoProvider>);

impl rustls::client::danger::ServerCertVerifier for AnyCertificate {
    fn verify_server_cert(
        &self,
        _end_entity: &CertificateDer<'_>,
        _intermediates: &[CertificateDer<'_>],
        _server_name: &rustls::pki_types::ServerName<'_>,
        _ocsp_response: &[u8],
        _now: rustls::pki_types::UnixTime,
    ) -> Result<rustls::client::danger::ServerCertVerified, rustls::Error> {
        Ok(rustls::client::danger::ServerCertVerified::assertion())
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &rustls::DigitallySignedStruct,
    ) -> Result<rustls::client::danger::HandshakeSignatureValid, rustls::Error> {
        rustls::crypto::verify_tls12_signature(
            message,
            cert,
            dss,
            &self.0.signature_verification_algorithms,
        )
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &rustls::DigitallySignedStruct,
    ) -> Result<rustls::client::danger::HandshakeSignatureValid, rustls::Error> {
        rustls::crypto::verify_tls13_signature(
            message,
            cert,
            dss,
            &self.0.signature_verification_algorithms,
        )
    }

    fn supported_verify_schemes(&self) -> Vec<rustls::SignatureScheme> {
        self.0.signature_verification_algorithms.supported_schemes()
    }
}
