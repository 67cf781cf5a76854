Feature: A Barbican naming a target cluster that does not resolve creates nothing anywhere

  A Barbican with spec.targetClusterRef places its children on a registered target cluster. Until
  the name resolves, the pass stops ahead of every step and of the finalizer: SecretsReady says
  why, the CR requeues every 15 seconds, and nothing is created on any cluster. Its stores mint
  nothing either, since the cluster their credentials belong on is unknown.

  Background:
    Given a simulated cluster with the operator running
    And the namespace "openstack"
    And the MariaDB "openstack-mariadb" in "openstack" is running
    And the External Secrets ClusterSecretStore "openbao-cluster-store" is ready
    And the Secret "barbican-db" in "openstack" holds:
      | key      | value        |
      | username | barbican     |
      | password | db-secret-pw |
    And the Secret "barbican-keystone" in "openstack" holds:
      | key      | value            |
      | password | keystone-user-pw |
    And the OpenBaoCluster "openbao-instance" in "openstack" is running
    And the example "barbicansecretstore-managed.yaml" is applied

  Scenario: an unregistered target cluster at create: no finalizer, nothing created, nothing minted
    When the following is applied:
      """
      apiVersion: barbican.openstack.c5c3.io/v1alpha1
      kind: Barbican
      metadata: {name: barbican, namespace: openstack}
      spec:
        openStackRelease: "2025.2"
        targetClusterRef: {name: edge-1}
        image: {repository: ghcr.io/c5c3/barbican, tag: "2025.2"}
        database:
          clusterRef: {name: openstack-mariadb}
          database: barbican
          secretRef: {name: barbican-db}
        cache:
          clusterRef: {name: openstack-memcached}
        keystoneEndpoint: http://keystone.openstack.svc.cluster.local:5000/v3
        serviceUser:
          secretRef: {name: barbican-keystone}
      """
    Then within 1 minute the Barbican "barbican" in "openstack" reports:
      | condition    | status | reason                   |
      | SecretsReady | False  | TargetClusterUnavailable |
      | Ready        | False  | NotAllReady              |
    And within 1 minute the SecretsReady condition of the Barbican "barbican" in "openstack" mentions "cluster not found"
    And within 1 minute the BarbicanSecretStore "openbao-primary" in "openstack" reports:
      | condition        | status | reason                   |
      | CredentialsReady | False  | TargetClusterUnavailable |
    When 2 minutes pass
    Then the Barbican "barbican" in "openstack" has no "/metadata/finalizers"
    And the Deployment "barbican" in "openstack" does not exist
    And the Secret "barbican-db-connection" in "openstack" does not exist
    And the Secret "openbao-primary-approle" in "openstack" does not exist
