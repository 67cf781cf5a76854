Feature: The Deployment step waits for the rollout and only then reports an endpoint

  Background:
    Given a simulated cluster with the operator running
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

  @sim-only
  Scenario: a rollout that never finishes keeps DeploymentReady False and sets no endpoint
    Given Deployment rollouts matching "name=barbican" never finish
    When the example "barbican.yaml" is applied
    Then within 2 minutes the Barbican "barbican" in "openstack" reports:
      | condition       | status | reason               |
      | SecretsReady    | True   | SecretsAvailable     |
      | DeploymentReady | False  | WaitingForDeployment |
    And within 1 minute the Service "barbican" in "openstack" exists
    And the Service "barbican" in "openstack" has "/spec/selector/app.kubernetes.io~1instance" set to "barbican"
    And the PodDisruptionBudget "barbican" in "openstack" has "/spec/minAvailable" set to "1"
    And the Barbican "barbican" in "openstack" does not set "BarbicanAPIReady"

  Scenario: once the rollout converges the Service narrows to the API pods
    When the example "barbican.yaml" is applied
    Then within 2 minutes the Barbican "barbican" in "openstack" reports:
      | condition       | status | reason          |
      | DeploymentReady | True   | DeploymentReady |
    And the Service "barbican" in "openstack" has "/spec/selector/app.kubernetes.io~1component" set to "api"
    And the Deployment "barbican" in "openstack" has "/spec/template/spec/containers/0/name" set to "barbican-api"
    And the Deployment "barbican" in "openstack" has "/metadata/ownerReferences/0/kind" set to "Barbican"
    And the Deployment "barbican" in "openstack" has "/metadata/labels/app.kubernetes.io~1managed-by" set to "barbican-operator"
