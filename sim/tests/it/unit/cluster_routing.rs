//! Tests of `barbican_sim::cluster::routing`.

use axum::http::Uri;

use barbican_sim::cluster::routing::*;

#[test]
fn query_values_are_percent_decoded() {
    assert_eq!(
        decode("tier%20in%20(api%2Cdb)").as_deref(),
        Some("tier in (api,db)")
    );
    assert_eq!(decode("a+b").as_deref(), Some("a b"));
    assert_eq!(decode("100%").as_deref(), Some("100%"));
    let uri: Uri = "/api/v1/configmaps?labelSelector=app%3Dbarbican&limit=2"
        .parse()
        .unwrap();
    let q = query(&uri);
    assert_eq!(q["labelSelector"], "app=barbican");
    assert_eq!(q["limit"], "2");
}
