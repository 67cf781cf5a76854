Feature: What a platform team relies on: deletion takes exactly what was made, scaling follows

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
    And the example "barbican.yaml" is applied
    And within 2 minutes the Barbican "barbican" in "openstack" reports:
      | condition | status | reason   |
      | Ready     | True   | AllReady |

  Scenario: deleting a Barbican removes every child it made, and nothing else in the namespace
    Then within 1 minute the Job "barbican-db-sync" in "openstack" exists
    And within 1 minute the CronJob "barbican-db-clean" in "openstack" exists
    And within 1 minute the Secret "barbican-db-connection" in "openstack" exists
    And within 1 minute there are 1 config Secrets for the Barbican "barbican" in "openstack"
    When the Barbican "barbican" in "openstack" is deleted
    Then within 2 minutes the Barbican "barbican" in "openstack" is gone
    And within 1 minute the Deployment "barbican" in "openstack" is gone
    And within 1 minute the Service "barbican" in "openstack" is gone
    And within 1 minute the PodDisruptionBudget "barbican" in "openstack" is gone
    And within 1 minute the Job "barbican-db-sync" in "openstack" is gone
    And within 1 minute the CronJob "barbican-db-clean" in "openstack" is gone
    And within 1 minute the Secret "barbican-db-connection" in "openstack" is gone
    And within 1 minute there are 0 config Secrets for the Barbican "barbican" in "openstack"
    And within 1 minute the Database "barbican" in "openstack" is gone
    And within 1 minute the User "barbican" in "openstack" is gone
    And within 1 minute the Grant "barbican" in "openstack" is gone
    And within 1 minute the Secret "barbican-db" in "openstack" exists
    And within 1 minute the Secret "barbican-keystone" in "openstack" exists
    And within 1 minute the BarbicanSecretStore "openbao-primary" in "openstack" exists
    And within 1 minute the MariaDB "openstack-mariadb" in "openstack" exists

  Scenario: scaling 3 to 5 to 1 reaches the pods, and the disruption budget follows
    Then within 1 minute the Deployment "barbican" in "openstack" has "/status/readyReplicas" set to "3"
    And the PodDisruptionBudget "barbican" in "openstack" has "/spec/minAvailable" set to "1"
    When the Barbican "barbican" in "openstack" is patched with:
      """
      spec: {deployment: {replicas: 5}}
      """
    Then within 1 minute the Deployment "barbican" in "openstack" has "/spec/replicas" set to "5"
    And within 1 minute the Deployment "barbican" in "openstack" has "/status/readyReplicas" set to "5"
    And within 1 minute the Deployment "barbican" in "openstack" has "/status/availableReplicas" set to "5"
    And within 1 minute the Deployment "barbican" in "openstack" has "/status/updatedReplicas" set to "5"
    And the PodDisruptionBudget "barbican" in "openstack" has "/spec/minAvailable" set to "1"
    When the Barbican "barbican" in "openstack" is patched with:
      """
      spec: {deployment: {replicas: 1}}
      """
    Then within 1 minute the Deployment "barbican" in "openstack" has "/status/readyReplicas" set to "1"
    And within 1 minute the Deployment "barbican" in "openstack" has "/status/availableReplicas" set to "1"
    And within 1 minute the PodDisruptionBudget "barbican" in "openstack" has "/spec/maxUnavailable" set to "1"
    And the PodDisruptionBudget "barbican" in "openstack" has no "/spec/minAvailable"
    And within 1 minute the Barbican "barbican" in "openstack" reports:
      | condition       | status | reason          |
      | DeploymentReady | True   | DeploymentReady |
      | Ready           | True   | AllReady        |

  Scenario: a managed store's CA comes from its instance, its secret ID from the store's Secret
    Then the Deployment "barbican" in "openstack" has "/spec/template/spec/volumes/1/name" set to "secret-store-ca"
    And the Deployment "barbican" in "openstack" has "/spec/template/spec/volumes/1/secret/secretName" set to "openbao-instance-tls-ca"
    And the Deployment "barbican" in "openstack" takes the env "OS_VAULT_PLUGIN__APPROLE_SECRET_ID" from the Secret "openbao-primary-approle" key "secret-id"

  # Each of the three hashes changes with its own input only: the pods roll for a rotated
  # credential, and only then.
  # @sim-only: the virtual clock (the revoked secret ID is re-minted on the store's requeue,
  # minutes of real time on a real cluster).
  @sim-only
  Scenario: each credential hash on the pod template changes only when its own input does
    Given the pod-template annotation "barbican.c5c3.io/db-connection-hash" of the Deployment "barbican" in "openstack" is noted
    And the pod-template annotation "barbican.c5c3.io/authtoken-hash" of the Deployment "barbican" in "openstack" is noted
    And the pod-template annotation "barbican.c5c3.io/secret-store-credentials-hash" of the Deployment "barbican" in "openstack" is noted
    When the Secret "barbican-keystone" in "openstack" holds:
      | key      | value                |
      | password | rotated-keystone-pw  |
    Then within 2 minutes the pod-template annotation "barbican.c5c3.io/authtoken-hash" of the Deployment "barbican" in "openstack" has changed
    And the pod-template annotation "barbican.c5c3.io/db-connection-hash" of the Deployment "barbican" in "openstack" has not changed
    And the pod-template annotation "barbican.c5c3.io/secret-store-credentials-hash" of the Deployment "barbican" in "openstack" has not changed
    When the pod-template annotation "barbican.c5c3.io/authtoken-hash" of the Deployment "barbican" in "openstack" is noted
    And the Secret "barbican-db" in "openstack" holds:
      | key      | value      |
      | username | barbican   |
      | password | rotated-pw |
    Then within 2 minutes the pod-template annotation "barbican.c5c3.io/db-connection-hash" of the Deployment "barbican" in "openstack" has changed
    And the pod-template annotation "barbican.c5c3.io/authtoken-hash" of the Deployment "barbican" in "openstack" has not changed
    And the pod-template annotation "barbican.c5c3.io/secret-store-credentials-hash" of the Deployment "barbican" in "openstack" has not changed
    When the pod-template annotation "barbican.c5c3.io/db-connection-hash" of the Deployment "barbican" in "openstack" is noted
    And the OpenBao of "openbao-instance" in "openstack" revokes the secret ID of the store "openbao-primary"
    Then within 25 minutes the pod-template annotation "barbican.c5c3.io/secret-store-credentials-hash" of the Deployment "barbican" in "openstack" has changed
    And the pod-template annotation "barbican.c5c3.io/db-connection-hash" of the Deployment "barbican" in "openstack" has not changed
    And the pod-template annotation "barbican.c5c3.io/authtoken-hash" of the Deployment "barbican" in "openstack" has not changed
