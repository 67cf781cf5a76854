//! Tests of `barbican_sim::tokens`.

use barbican_sim::tokens::*;

#[test]
fn hmac_matches_rfc_4231_case_2() {
    let mac = hmac_sha256(b"Jefe", b"what do ya want for nothing?");
    assert_eq!(
        mac.iter().map(|b| format!("{b:02x}")).collect::<String>(),
        "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843"
    );
}

#[test]
fn standard_base64_round_trips_with_padding() {
    for (bytes, text) in [
        (&b""[..], ""),
        (b"f", "Zg=="),
        (b"fo", "Zm8="),
        (b"foo", "Zm9v"),
        (&[0xfb, 0xff][..], "+/8="),
    ] {
        assert_eq!(base64(bytes), text);
        assert_eq!(base64_decode(text).unwrap(), bytes);
    }
    assert_eq!(
        base64_decode("-_8"),
        None,
        "the url alphabet is not standard"
    );
}

#[test]
fn base64url_round_trips() {
    for text in [&b""[..], b"f", b"fo", b"foo", b"foob", b"\xff\xfe\x00"] {
        assert_eq!(base64url_decode(&base64url(text)).unwrap(), text);
    }
    assert_eq!(base64url(b"foobar"), "Zm9vYmFy");
}

#[test]
fn tokens_verify_only_with_the_key_in_time_and_for_their_audience() {
    let token = mint(
        b"k",
        "openstack",
        "bao-provisioner",
        "u-1",
        &["bao".into()],
        1000,
        600,
        None,
    );
    let claims = verify(b"k", &token, &["bao".into()], 1100).unwrap();
    assert_eq!(
        claims["sub"],
        "system:serviceaccount:openstack:bao-provisioner"
    );
    assert_eq!(
        verify(b"other", &token, &[], 1100).unwrap_err(),
        "invalid signature"
    );
    assert_eq!(
        verify(b"k", &token, &[], 1600).unwrap_err(),
        "token has expired"
    );
    assert_eq!(
        verify(b"k", &token, &["vault".into()], 1100).unwrap_err(),
        "token audiences do not match"
    );
}
