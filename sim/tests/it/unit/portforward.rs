//! Tests of `barbican_sim::portforward`.

use barbican_sim::portforward::*;

#[test]
fn ports_are_read_from_the_query_as_kube_apiserver_reads_them() {
    assert_eq!(ports(Some("ports=8200")).unwrap(), [8200]);
    assert_eq!(ports(Some("&ports=80%2C1234")).unwrap(), [80, 1234]);
    assert_eq!(ports(Some("ports=80&ports=81")).unwrap(), [80, 81]);
    assert_eq!(ports(None).unwrap_err().code, 400);
    assert_eq!(ports(Some("ports=0")).unwrap_err().code, 400);
    assert_eq!(ports(Some("ports=http")).unwrap_err().code, 400);
}
