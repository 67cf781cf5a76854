use rcgen::{BasicConstraints, CertificateParams, CertifiedIssuer, IsCa, KeyPair};

use super::*;
use crate::api::tls::{IssuerKind, IssuerRefSpec};

/// A CA-signed pair for `names`, valid from day `from` to day `to` (of 2027, at midnight
/// UTC), as PEM: (chain, key, ca).
fn pair(names: &[&str], from: i64, to: i64) -> (String, String, String) {
    let mut ca_params = CertificateParams::new(Vec::<String>::new()).unwrap();
    ca_params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
    let ca = CertifiedIssuer::self_signed(ca_params, KeyPair::generate().unwrap()).unwrap();
    let key = KeyPair::generate().unwrap();
    let mut params =
        CertificateParams::new(names.iter().map(|n| n.to_string()).collect::<Vec<_>>()).unwrap();
    let ((fy, fm, fd), (ty, tm, td)) = (ymd(from), ymd(to));
    params.not_before = rcgen::date_time_ymd(fy, fm, fd);
    params.not_after = rcgen::date_time_ymd(ty, tm, td);
    let cert = params.signed_by(&key, &ca).unwrap();
    (cert.pem(), key.serialize_pem(), ca.pem())
}

/// Day `day` of 2027 (1 is January 1st; the later ones run on into the next months).
fn date(day: i64) -> jiff::civil::Date {
    jiff::civil::date(2027, 1, 1)
        .checked_add(jiff::Span::new().days(day - 1))
        .unwrap()
}

fn ymd(day: i64) -> (i32, u8, u8) {
    let d = date(day);
    (
        i32::from(d.year()),
        u8::try_from(d.month()).unwrap(),
        u8::try_from(d.day()).unwrap(),
    )
}

fn at(day: i64) -> jiff::Timestamp {
    date(day)
        .to_zoned(jiff::tz::TimeZone::UTC)
        .unwrap()
        .timestamp()
}

const DAY: i64 = 1;
const NOW: i64 = 100;

#[test]
fn a_certificate_and_its_key_are_served_with_their_names_and_end() {
    let (crt, key, _) = pair(&["kms.ns.svc", "kms"], NOW - DAY, NOW + 90 * DAY);
    let served = check_pair(crt.as_bytes(), key.as_bytes(), at(NOW)).unwrap();
    assert_eq!(served.names, ["kms.ns.svc", "kms"]);
    assert_eq!(served.not_after, at(NOW + 90 * DAY));
}

#[test]
fn each_unusable_pair_is_named_without_quoting_the_key() {
    let (crt, key, _) = pair(&["kms"], NOW - DAY, NOW + DAY);
    let (_, other_key, _) = pair(&["kms"], NOW - DAY, NOW + DAY);
    let now = at(NOW);
    assert_eq!(
        check_pair(b"", key.as_bytes(), now),
        Err(Unusable::NoCertificate)
    );
    assert_eq!(
        check_pair(b"not pem at all", key.as_bytes(), now),
        Err(Unusable::NoCertificate)
    );
    assert_eq!(check_pair(crt.as_bytes(), b"", now), Err(Unusable::NoKey));
    assert_eq!(
        check_pair(crt.as_bytes(), other_key.as_bytes(), now),
        Err(Unusable::KeyMismatch)
    );
    // A certificate where the key goes is not a key.
    assert_eq!(
        check_pair(crt.as_bytes(), crt.as_bytes(), now),
        Err(Unusable::NoKey)
    );
    let mangled = crt.replace("MII", "MIX");
    let refused = check_pair(mangled.as_bytes(), key.as_bytes(), now).unwrap_err();
    assert!(
        matches!(refused, Unusable::BadCertificate(_) | Unusable::KeyMismatch),
        "{refused:?}"
    );
    for message in [
        Unusable::NoKey.to_string(),
        Unusable::KeyMismatch.to_string(),
        Unusable::BadKey("x".into()).to_string(),
    ] {
        assert!(!message.contains("PRIVATE KEY-----"), "{message}");
    }
}

#[test]
fn a_certificate_outside_its_validity_is_not_served() {
    let (crt, key, _) = pair(&["kms"], NOW - 2 * DAY, NOW - DAY);
    assert_eq!(
        check_pair(crt.as_bytes(), key.as_bytes(), at(NOW)),
        Err(Unusable::NotValidNow {
            not_before: at(NOW - 2 * DAY),
            not_after: at(NOW - DAY)
        })
    );
    let (later, key, _) = pair(&["kms"], NOW + DAY, NOW + 2 * DAY);
    assert!(matches!(
        check_pair(later.as_bytes(), key.as_bytes(), at(NOW)),
        Err(Unusable::NotValidNow { .. })
    ));
}

#[test]
fn the_requested_certificate_covers_the_services_names_then_the_extra_ones_once() {
    let names = dns_names(
        "kms",
        "ns",
        &["kms.ns.svc".into(), "kms.internal.example".into()],
    );
    assert_eq!(
        names,
        [
            "kms",
            "kms.ns",
            "kms.ns.svc",
            "kms.ns.svc.cluster.local",
            "kms.internal.example"
        ]
    );
}

#[test]
fn the_certificate_names_the_issuer_and_the_secret_the_pods_mount() {
    let tls = TlsSpec {
        issuer_ref: Some(IssuerRefSpec {
            name: "cloud-ca".into(),
            kind: Some(IssuerKind::ClusterIssuer),
            group: None,
        }),
        ..TlsSpec::default()
    };
    let spec = certificate_spec("kms", "ns", &tls);
    assert_eq!(spec["secretName"], "kms-tls");
    assert_eq!(spec["secretName"], tls.secret("kms").as_str());
    assert_eq!(
        spec["issuerRef"],
        json!({"name": "cloud-ca", "kind": "ClusterIssuer", "group": "cert-manager.io"})
    );
    assert_eq!(spec["dnsNames"][3], "kms.ns.svc.cluster.local");
    assert_eq!(spec["privateKey"]["rotationPolicy"], "Always");
}

#[test]
fn a_waiting_condition_quotes_the_certificates_own_reason_briefly() {
    let long = "é".repeat(300);
    let certificate = json!({"status": {"conditions": [
        {"type": "Ready", "status": "False", "message": long}
    ]}});
    let quoted = not_ready_message(&certificate).unwrap();
    assert!(quoted.len() <= QUOTE && quoted.starts_with('é'));
    let ready = json!({"status": {"conditions": [{"type": "Ready", "status": "True"}]}});
    assert_eq!(not_ready_message(&ready), None);
    assert_eq!(not_ready_message(&json!({})), None);
}
