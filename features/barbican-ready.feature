Feature: A Barbican with a ready default store is deployed, exposed and probed

  The operator turns a Barbican CR into a running, probed barbican API once its credential
  Secrets have arrived through External Secrets and a default secret store is credential-ready.

  Background:
    Given a simulated cluster with the operator running
    And the namespace "openstack"
    And the External Secrets ClusterSecretStore "openbao-cluster-store" is ready
    And the Secret "barbican-db" in "openstack" holds:
      | key      | value        |
      | username | barbican     |
      | password | db-secret-pw |
    And the Secret "barbican-keystone" in "openstack" holds:
      | key      | value            |
      | password | keystone-user-pw |
    And the Secret "openbao-primary-approle" in "openstack" holds:
      | key       | value                                |
      | role-id   | 5f0c3c9e-role-id                     |
      | secret-id | 9a1e7f42-secret-id                   |
    And the example "barbicansecretstore-managed.yaml" is applied
    And the BarbicanSecretStore "openbao-primary" in "openstack" is credential-ready

  Scenario: the minimal example reaches every condition this pipeline owns
    When the example "barbican.yaml" is applied
    Then within 2 minutes the Barbican "barbican" in "openstack" reports:
      | condition          | status | reason                  |
      | SecretsReady       | True   | SecretsAvailable        |
      | SecretStoresReady  | True   | AllStoresProjected      |
      | DeploymentReady    | True   | DeploymentReady         |
      | BarbicanAPIReady   | True   | APIHealthy              |
      | HPAReady           | True   | HPANotRequired          |
      | NetworkPolicyReady | True   | NetworkPolicyNotRequired |
      | HTTPRouteReady     | True   | HTTPRouteNotRequired    |
      | ExtraConfigHealthy | True   | NoOwnedKeysOverridden   |
    And the Barbican "barbican" in "openstack" reports the endpoint "http://barbican.openstack.svc.cluster.local:9311"
    # DatabaseReady and DBCleanReady arrive with the Database and DBClean steps; until then
    # the aggregate names exactly those two.
    And within 1 minute the Barbican "barbican" in "openstack" reports:
      | condition | status | reason      |
      | Ready     | False  | NotAllReady |
    And the Ready message of the Barbican "barbican" in "openstack" names "DatabaseReady, DBCleanReady"
    And a full pass over the Barbican "barbican" in "openstack" writes nothing
