//! Service-account tokens: TokenRequest mints a signed JWT for an audience and a lifetime, and
//! TokenReview checks one, as kube-apiserver does for OpenBao's kubernetes auth. Tokens are
//! HS256-signed with a key private to the cluster (a real cluster uses RS256; nothing outside
//! the cluster verifies the signature, it asks TokenReview).

use serde_json::{Value, json};
use sha2::{Digest, Sha256};

/// HMAC-SHA256 (RFC 2104).
pub fn hmac_sha256(key: &[u8], message: &[u8]) -> [u8; 32] {
    let mut block = [0u8; 64];
    if key.len() > 64 {
        block[..32].copy_from_slice(&Sha256::digest(key));
    } else {
        block[..key.len()].copy_from_slice(key);
    }
    let pad = |byte: u8| block.iter().map(|b| b ^ byte).collect::<Vec<u8>>();
    let inner = Sha256::new()
        .chain_update(pad(0x36))
        .chain_update(message)
        .finalize();
    Sha256::new()
        .chain_update(pad(0x5c))
        .chain_update(inner)
        .finalize()
        .into()
}

const BASE64URL: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";

/// Unpadded base64url.
pub fn base64url(bytes: &[u8]) -> String {
    let mut out = String::new();
    for chunk in bytes.chunks(3) {
        let n = chunk
            .iter()
            .enumerate()
            .fold(0u32, |n, (i, b)| n | (*b as u32) << (16 - 8 * i));
        for i in 0..=chunk.len() {
            out.push(BASE64URL[((n >> (18 - 6 * i)) & 63) as usize] as char);
        }
    }
    out
}

/// Decodes unpadded base64url.
pub fn base64url_decode(text: &str) -> Option<Vec<u8>> {
    let mut bits = 0u32;
    let mut count = 0;
    let mut out = Vec::new();
    for c in text.bytes() {
        bits = (bits << 6) | BASE64URL.iter().position(|a| *a == c)? as u32;
        count += 6;
        if count >= 8 {
            count -= 8;
            out.push((bits >> count) as u8);
            bits &= (1 << count) - 1;
        }
    }
    Some(out)
}

/// Standard, padded base64 (what Kubernetes uses for `[]byte` fields such as `caBundle`).
pub fn base64(bytes: &[u8]) -> String {
    let mut out: String = base64url(bytes)
        .chars()
        .map(|c| match c {
            '-' => '+',
            '_' => '/',
            c => c,
        })
        .collect();
    while !out.len().is_multiple_of(4) {
        out.push('=');
    }
    out
}

/// Decodes standard base64, padded or not.
pub fn base64_decode(text: &str) -> Option<Vec<u8>> {
    let normalised: String = text
        .trim()
        .trim_end_matches('=')
        .chars()
        .map(|c| match c {
            '+' => '-',
            '/' => '_',
            c => c,
        })
        .collect();
    if normalised.contains(['-', '_']) && text.contains(['-', '_']) {
        return None;
    }
    base64url_decode(&normalised)
}

/// The issuer claim of every token.
pub const ISSUER: &str = "https://kubernetes.default.svc.cluster.local";

/// A pod a token is bound to: its name and uid (kube-apiserver's `kubernetes.io.pod` claim).
pub type BoundPod<'a> = Option<(&'a str, &'a str)>;

/// A signed token for `system:serviceaccount:<namespace>:<name>`, bound to `pod` when given
/// (the token then dies with the pod).
#[allow(clippy::too_many_arguments)]
pub fn mint(
    key: &[u8],
    namespace: &str,
    name: &str,
    uid: &str,
    audiences: &[String],
    now: i64,
    lifetime: i64,
    pod: BoundPod<'_>,
) -> String {
    let header = base64url(br#"{"alg":"HS256","typ":"JWT"}"#);
    let mut claims = json!({
        "iss": ISSUER,
        "sub": format!("system:serviceaccount:{namespace}:{name}"),
        "aud": audiences,
        "iat": now, "nbf": now, "exp": now + lifetime,
        "kubernetes.io": {"namespace": namespace, "serviceaccount": {"name": name, "uid": uid}},
    });
    if let Some((pod, pod_uid)) = pod {
        claims["kubernetes.io"]["pod"] = json!({"name": pod, "uid": pod_uid});
    }
    let payload = base64url(claims.to_string().as_bytes());
    let signature = base64url(&hmac_sha256(key, format!("{header}.{payload}").as_bytes()));
    format!("{header}.{payload}.{signature}")
}

/// The claims of a token whose signature, lifetime and audience check out.
pub fn verify(key: &[u8], token: &str, audiences: &[String], now: i64) -> Result<Value, String> {
    let mut parts = token.split('.');
    let (Some(header), Some(payload), Some(signature), None) =
        (parts.next(), parts.next(), parts.next(), parts.next())
    else {
        return Err("not a JWT".into());
    };
    let expected = base64url(&hmac_sha256(key, format!("{header}.{payload}").as_bytes()));
    if expected != signature {
        return Err("invalid signature".into());
    }
    let claims: Value = base64url_decode(payload)
        .and_then(|b| serde_json::from_slice(&b).ok())
        .ok_or("unreadable claims")?;
    if claims["exp"].as_i64().is_none_or(|exp| exp <= now) {
        return Err("token has expired".into());
    }
    if !audiences.is_empty() {
        let granted: Vec<&str> = claims["aud"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(Value::as_str)
            .collect();
        if !audiences.iter().any(|a| granted.contains(&a.as_str())) {
            return Err("token audiences do not match".into());
        }
    }
    Ok(claims)
}
