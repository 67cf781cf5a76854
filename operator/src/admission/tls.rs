//! Serving certificates from mounted files (cert-manager style), reloaded when they change.
//!
//! Every TLS handshake checks the files' modification time and size; when either moved, the
//! pair is read again. A pair that does not load (a half-written rotation) keeps the previous
//! certificate in service and is retried on the next handshake.

use std::{
    path::{Path, PathBuf},
    sync::{Arc, Mutex},
    time::SystemTime,
};

use rustls::{
    crypto::CryptoProvider,
    pki_types::{CertificateDer, PrivateKeyDer, pem::PemObject},
    server::{ClientHello, ResolvesServerCert},
    sign::CertifiedKey,
};

/// Why a certificate pair did not load.
#[derive(Debug, thiserror::Error)]
pub enum TlsError {
    /// A file could not be read or parsed.
    #[error("{path}: {message}")]
    File {
        /// The file.
        path: PathBuf,
        /// What went wrong.
        message: String,
    },
    /// The key does not fit the provider.
    #[error("{path}: unusable private key: {source}")]
    Key {
        /// The key file.
        path: PathBuf,
        /// What rustls said.
        source: rustls::Error,
    },
}

type Stamp = Option<(SystemTime, u64)>;

fn stamp(path: &Path) -> Stamp {
    std::fs::metadata(path)
        .ok()
        .and_then(|m| Some((m.modified().ok()?, m.len())))
}

/// Reads a PEM certificate chain and private key into a signing key.
pub fn load_pair(
    cert: &Path,
    key: &Path,
    provider: &CryptoProvider,
) -> Result<Arc<CertifiedKey>, TlsError> {
    let file_error = |path: &Path, message: String| TlsError::File {
        path: path.to_path_buf(),
        message,
    };
    let chain: Vec<CertificateDer<'static>> = CertificateDer::pem_file_iter(cert)
        .map_err(|e| file_error(cert, e.to_string()))?
        .collect::<Result<_, _>>()
        .map_err(|e| file_error(cert, e.to_string()))?;
    if chain.is_empty() {
        return Err(file_error(cert, "no certificate in the file".into()));
    }
    let private = PrivateKeyDer::from_pem_file(key).map_err(|e| file_error(key, e.to_string()))?;
    let signing = provider
        .key_provider
        .load_private_key(private)
        .map_err(|source| TlsError::Key {
            path: key.to_path_buf(),
            source,
        })?;
    Ok(Arc::new(CertifiedKey::new(chain, signing)))
}

/// A certificate resolver that follows its files.
#[derive(Debug)]
pub struct ReloadingCertificate {
    cert: PathBuf,
    key: PathBuf,
    provider: Arc<CryptoProvider>,
    current: Mutex<(Stamp, Stamp, Arc<CertifiedKey>)>,
}

impl ReloadingCertificate {
    /// Loads the pair once; fails when the initial pair is unusable.
    pub fn new(
        cert: PathBuf,
        key: PathBuf,
        provider: Arc<CryptoProvider>,
    ) -> Result<Self, TlsError> {
        let loaded = load_pair(&cert, &key, &provider)?;
        let current = Mutex::new((stamp(&cert), stamp(&key), loaded));
        Ok(Self {
            cert,
            key,
            provider,
            current,
        })
    }

    /// The certificate in service, reloading it first when the files changed.
    pub fn current(&self) -> Arc<CertifiedKey> {
        let mut current = self
            .current
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        let (cert_stamp, key_stamp) = (stamp(&self.cert), stamp(&self.key));
        if (cert_stamp, key_stamp) != (current.0, current.1) {
            match load_pair(&self.cert, &self.key, &self.provider) {
                Ok(loaded) => {
                    tracing::info!(cert = %self.cert.display(), "reloaded the webhook serving certificate");
                    *current = (cert_stamp, key_stamp, loaded);
                }
                Err(e) => tracing::warn!(error = %e, "keeping the previous webhook certificate"),
            }
        }
        current.2.clone()
    }
}

impl ResolvesServerCert for ReloadingCertificate {
    fn resolve(&self, _hello: ClientHello<'_>) -> Option<Arc<CertifiedKey>> {
        Some(self.current())
    }
}
