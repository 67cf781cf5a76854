@sim-only
Feature: A target cluster answers for its own Gateway API

  Whether HTTPRoutes can be placed is a question for the cluster the children live on: the
  operator probes each target cluster when it engages it. Here the management cluster serves the
  Gateway API and the target does not.

  Background:
    Given a simulated cluster with the operator running
    And the namespace "openstack"
    And the target cluster "edge-1" without the Gateway API is registered
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
    And the example "barbicansecretstore-managed.yaml" is applied

  Scenario: a gateway block on a target without the Gateway API says the API is missing there
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
        gateway: {hostname: kms.example.com, parentRef: {name: public}}
      """
    Then within 3 minutes the Barbican "barbican" in "openstack" reports:
      | condition       | status | reason                 |
      | DeploymentReady | True   | DeploymentReady        |
      | HTTPRouteReady  | False  | GatewayAPINotInstalled |
    When the field "spec.gateway" of the Barbican "barbican" in "openstack" is set to "null"
    Then within 1 minute the Barbican "barbican" in "openstack" reports:
      | condition      | status | reason               |
      | HTTPRouteReady | True   | HTTPRouteNotRequired |
      | Ready          | True   | AllReady             |
