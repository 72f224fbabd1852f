//! `--tls-cert` / `--tls-key`: the simulator serves HTTPS only, with a certificate its client
//! verifies against the CA that signed it; a plain HTTP request is not answered, and a file
//! that is not a PEM certificate or key is refused before anything binds.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use servebench_sim::{SimError, TestPki, TlsFiles};

use crate::common::{fast, start};

/// A CA, and a certificate for 127.0.0.1 and localhost signed by it, written to `dir`:
/// (cert, key, ca) paths.
fn pki(dir: &Path) -> (PathBuf, PathBuf, PathBuf) {
    let (files, ca) = TestPki::generate()
        .expect("pki")
        .write(dir)
        .expect("written");
    (files.cert, files.key, ca)
}

fn trusting(ca: &Path) -> reqwest::Client {
    let mut roots = rustls::RootCertStore::empty();
    let pem = std::fs::read(ca).expect("ca");
    let der = certificate_of(&pem);
    roots.add(der).expect("root");
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let config = rustls::ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .expect("versions")
        .with_root_certificates(roots)
        .with_no_client_auth();
    reqwest::Client::builder()
        .no_proxy()
        .tls_backend_preconfigured(config)
        .build()
        .expect("client")
}

/// The DER of the one certificate in `pem`.
fn certificate_of(pem: &[u8]) -> rustls::pki_types::CertificateDer<'static> {
    use rustls::pki_types::pem::PemObject;
    rustls::pki_types::CertificateDer::from_pem_slice(pem).expect("a PEM certificate")
}

#[tokio::test]
async fn serves_https_only_with_a_certificate_its_ca_verifies() {
    let dir = tempfile::tempdir().expect("tempdir");
    let (cert, key, ca) = pki(dir.path());
    let mut config = fast();
    config.tls = Some(TlsFiles { cert, key });
    let sim = start(config).await;
    let url = sim.base_url();
    assert!(url.starts_with("https://127.0.0.1:"), "{url}");

    let client = trusting(&ca);
    let models: serde_json::Value = client
        .get(format!("{url}/v1/models"))
        .send()
        .await
        .expect("an HTTPS answer")
        .json()
        .await
        .expect("json");
    assert_eq!(models["data"][0]["id"], "sim-model");
    let done = client
        .post(format!("{url}/v1/completions"))
        .json(&serde_json::json!({"prompt": "a b c", "max_tokens": 4, "stream": false}))
        .send()
        .await
        .expect("answers");
    assert!(done.status().is_success(), "{}", done.status());

    // Plain HTTP to the same port gets no HTTP answer.
    let plain = crate::common::client()
        .get(format!("http://{}/v1/models", sim.addr()))
        .timeout(std::time::Duration::from_secs(5))
        .send()
        .await;
    assert!(plain.is_err(), "plain HTTP was answered: {plain:?}");
    // A client that does not trust the CA is refused by its own verification.
    let untrusting = crate::common::client()
        .get(format!("{url}/v1/models"))
        .send()
        .await;
    assert!(untrusting.is_err(), "{untrusting:?}");
    sim.shutdown().await.expect("stops");
}

#[tokio::test]
async fn a_file_that_is_not_a_pem_certificate_or_key_is_refused_naming_it() {
    let dir = tempfile::tempdir().expect("tempdir");
    let (cert, key, _) = pki(dir.path());
    let junk = dir.path().join("junk.pem");
    std::fs::write(&junk, "not a certificate\n").expect("write");
    for (c, k, named) in [(&junk, &key, "--tls-cert"), (&cert, &junk, "--tls-key")] {
        let mut config = fast();
        config.tls = Some(TlsFiles {
            cert: c.clone(),
            key: k.clone(),
        });
        let Err(e) = servebench_sim::spawn(config).await else {
            panic!("{named} junk was accepted")
        };
        assert!(matches!(e, SimError::InvalidConfig(_)), "{e:?}");
        let msg = e.to_string();
        assert!(msg.contains(named) && msg.contains("junk.pem"), "{msg}");
        assert!(msg.contains("PEM"), "says what to give: {msg}");
    }
}
