Feature: A Barbican with a ready default store is deployed, exposed and probed

  The operator turns a Barbican CR into a running, probed barbican API once its credential
  Secrets have arrived through External Secrets and a default secret store is credential-ready.

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

  Scenario: the minimal example goes to Ready and each sub-condition reads as the spec says
    When the example "barbican.yaml" is applied
    Then within 2 minutes the BarbicanSecretStore "openbao-primary" in "openstack" reports:
      | condition         | status | reason               |
      | CredentialsReady  | True   | CredentialsAvailable |
      | ProvisioningReady | True   | Provisioned          |
      | ConfigProjected   | True   | ConfigProjected      |
      | Ready             | True   | AllReady             |
    Then within 2 minutes the Barbican "barbican" in "openstack" reports:
      | condition          | status | reason                   |
      | SecretsReady       | True   | SecretsAvailable         |
      | SecretStoresReady  | True   | AllStoresProjected       |
      | DBCleanReady       | True   | DBCleanScheduled         |
      | DatabaseReady      | True   | DatabaseSynced           |
      | DeploymentReady    | True   | DeploymentReady          |
      | BarbicanAPIReady   | True   | APIHealthy               |
      | HPAReady           | True   | HPANotRequired           |
      | NetworkPolicyReady | True   | NetworkPolicyNotRequired |
      | HTTPRouteReady     | True   | HTTPRouteNotRequired     |
      | ExtraConfigHealthy | True   | NoOwnedKeysOverridden    |
      | Ready              | True   | AllReady                 |
    And the Barbican "barbican" in "openstack" reports the endpoint "http://barbican.openstack.svc.cluster.local:9311"
    And the Barbican "barbican" in "openstack" has "/status/installedRelease" set to "2025.2"
    And the Barbican "barbican" in "openstack" has "/status/installedImage" set to "ghcr.io/c5c3/barbican:2025.2"
    And the CronJob "barbican-db-clean" in "openstack" has "/spec/suspend" set to "false"
    And the User "barbican" in "openstack" has "/spec/maxUserConnections" set to "10"
    And a full pass over the Barbican "barbican" in "openstack" writes nothing
