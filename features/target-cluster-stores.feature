@sim-only
Feature: A managed secret store follows its Barbican onto the target cluster

  A BarbicanSecretStore has no targetClusterRef: its credentials belong where its parent's
  children live. A store whose parent is placed on a target cluster records that cluster (the
  openstack.c5c3.io/children-cluster annotation and the remote-children finalizer) before it
  writes anything there, mints on the OpenBaoCluster of that cluster through a port-forward
  tunnel (the URL and the certificate check stay the in-cluster ones), and writes
  <store>-approle there with the owner labels. Deleting the store deletes that Secret there.

  Background:
    Given a simulated cluster with the operator running
    And the namespace "openstack"
    And the target cluster "edge-1" is registered
    And the scenario works on the target cluster "edge-1"
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

  Scenario: the store mints on the target's OpenBao through a tunnel, and its deletion cleans up there
    When the example "barbicansecretstore-managed.yaml" is applied
    And the following is applied:
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
    Then within 2 minutes the BarbicanSecretStore "openbao-primary" in "openstack" reports:
      | condition         | status | reason               |
      | CredentialsReady  | True   | CredentialsAvailable |
      | ProvisioningReady | True   | Provisioned          |
    And within 3 minutes the Barbican "barbican" in "openstack" reports:
      | condition | status | reason   |
      | Ready     | True   | AllReady |
    And within 1 minute the BarbicanSecretStore "openbao-primary" in "openstack" reports:
      | condition       | status | reason          |
      | ConfigProjected | True   | ConfigProjected |
      | Ready           | True   | AllReady        |
    And the BarbicanSecretStore "openbao-primary" in "openstack" has "/metadata/annotations/openstack.c5c3.io~1children-cluster" set to "edge-1"
    And the Secret "openbao-primary-approle" in "openstack" has "/metadata/labels/openstack.c5c3.io~1owner-kind" set to "BarbicanSecretStore"
    And the Secret "openbao-primary-approle" in "openstack" has "/metadata/labels/openstack.c5c3.io~1owner-name" set to "openbao-primary"
    And the Secret "openbao-primary-approle" in "openstack" has no "/metadata/ownerReferences"
    And no secret ID issued by any OpenBao appears in "openstack"
    When the scenario works on the management cluster
    Then the Secret "openbao-primary-approle" in "openstack" does not exist
    When the BarbicanSecretStore "openbao-primary" in "openstack" is deleted
    Then within 1 minute the BarbicanSecretStore "openbao-primary" in "openstack" is gone
    When the scenario works on the target cluster "edge-1"
    Then the Secret "openbao-primary-approle" in "openstack" does not exist

  Scenario: with no ready Pod behind the instance's Service the store reports it unreachable
    Given within 1 minute the discovery.k8s.io/v1/EndpointSlice "openbao-instance-sim" in "openstack" exists
    When the discovery.k8s.io/v1/EndpointSlice "openbao-instance-sim" in "openstack" is deleted
    And the example "barbicansecretstore-managed.yaml" is applied
    And the following is applied:
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
    Then within 1 minute the BarbicanSecretStore "openbao-primary" in "openstack" reports:
      | condition        | status | reason             |
      | CredentialsReady | False  | OpenBaoUnreachable |
    And within 1 minute the CredentialsReady condition of the BarbicanSecretStore "openbao-primary" in "openstack" mentions "no ready endpoints for service openstack/openbao-instance"
    And the Secret "openbao-primary-approle" in "openstack" does not exist

  Scenario: deleting a store whose cluster is gone holds for five minutes, then abandons its Secret with a warning
    When the example "barbicansecretstore-managed.yaml" is applied
    And the following is applied:
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
    And the BarbicanSecretStore "openbao-primary" in "openstack" is credential-ready
    And the target cluster "edge-1" is deregistered
    # The operator sees the registration go before the deletion, or the deletion's cleanup
    # reaches the still-running cluster through the engaged client and ends at once.
    Then within 1 minute the BarbicanSecretStore "openbao-primary" in "openstack" reports:
      | condition        | status | reason                   |
      | CredentialsReady | False  | TargetClusterUnavailable |
    When the BarbicanSecretStore "openbao-primary" in "openstack" is deleted
    Then within 1 minute the CredentialsReady condition of the BarbicanSecretStore "openbao-primary" in "openstack" mentions "waiting for target cluster"
    When 4 minutes pass
    Then the BarbicanSecretStore "openbao-primary" in "openstack" has "/metadata/name" set to "openbao-primary"
    And within 2 minutes the BarbicanSecretStore "openbao-primary" in "openstack" is gone
    And within 1 minute a Warning event "RemoteChildrenAbandoned" about "openbao-primary" in "openstack" mentions "openbao-primary-approle"
    And the Secret "openbao-primary-approle" in "openstack" has "/metadata/name" set to "openbao-primary-approle"
