@sim-only
Feature: A cluster without the Gateway API

  Background:
    Given a simulated cluster without the Gateway API and the operator running
    And the namespace "openstack"
    And the MariaDB "openstack-mariadb" in "openstack" is running
    And the External Secrets ClusterSecretStore "openbao-cluster-store" is ready
    And the Secret "barbican-db" in "openstack" holds:
      | key      | value    |
      | username | barbican |
      | password | pw       |
    And the Secret "barbican-keystone" in "openstack" holds:
      | key      | value |
      | password | pw    |
    And the OpenBaoCluster "openbao-instance" in "openstack" is running
    And the example "barbicansecretstore-managed.yaml" is applied

  Scenario: no gateway block needs no route; a gateway block says the API is missing
    When the example "barbican.yaml" is applied
    Then within 2 minutes the Barbican "barbican" in "openstack" reports:
      | condition      | status | reason               |
      | HTTPRouteReady | True   | HTTPRouteNotRequired |
    When the Barbican "barbican" in "openstack" is patched with:
      """
      spec:
        gateway: {hostname: kms.example.com, parentRef: {name: public}}
      """
    Then within 1 minute the Barbican "barbican" in "openstack" reports:
      | condition      | status | reason                 |
      | HTTPRouteReady | False  | GatewayAPINotInstalled |
      | Ready          | False  | NotAllReady            |
