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

  @sim-only
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
    And the barbican.conf mounted by the Deployment "barbican" in "openstack" does not set [vault_plugin] approle_secret_id
    And the Deployment "barbican" in "openstack" takes the env "OS_VAULT_PLUGIN__APPROLE_SECRET_ID" from the Secret "openbao-primary-approle" key "secret-id"
    And the Deployment "barbican" in "openstack" takes the env "OS_DATABASE__CONNECTION" from the Secret "barbican-db-connection" key "connection"
    And the pod template of the Deployment "barbican" in "openstack" has the annotation "barbican.c5c3.io/db-connection-hash"
    And the operator's metric "barbican_operator_db_sync_total" with "barbican=barbican,namespace=openstack,result=succeeded" reads 1
    # The API pods, db-sync and db-clean run where a namespace enforces the restricted standard.
    And every pod template in "openstack" meets the Pod Security Standard "restricted"

  Scenario: a Barbican built from a table of fields, then scaled by editing one field
    When the Barbican "barbican" in "openstack" is applied with the fields:
      | field                            | value                                               |
      | spec.openStackRelease            | "2025.2"                                            |
      | spec.image.repository            | ghcr.io/c5c3/barbican                               |
      | spec.image.tag                   | "2025.2"                                            |
      | spec.database.clusterRef.name    | openstack-mariadb                                   |
      | spec.database.database           | barbican                                            |
      | spec.database.secretRef.name     | barbican-db                                         |
      | spec.cache.clusterRef.name       | openstack-memcached                                 |
      | spec.keystoneEndpoint            | http://keystone.openstack.svc.cluster.local:5000/v3 |
      | spec.serviceUser.secretRef.name  | barbican-keystone                                   |
    Then within 3 minutes the Barbican "barbican" in "openstack" reports:
      | condition | status | reason   |
      | Ready     | True   | AllReady |
    And within 1 minute the barbican.conf mounted by the Deployment "barbican" in "openstack" sets [secretstore:openbao-primary] global_default to "True"
    And within 1 minute the barbican.conf mounted by the Deployment "barbican" in "openstack" sets [vault_plugin] kv_mountpoint to "barbican"
    When the field "spec.deployment.replicas" of the Barbican "barbican" in "openstack" is set to "2"
    Then within 1 minute the Deployment "barbican" in "openstack" has "/spec/replicas" set to "2"
    And within 30 seconds the Barbican "barbican" in "openstack" reports:
      | condition | status | reason   |
      | Ready     | True   | AllReady |

  @sim-only
  Scenario: an API server that fails the Deployment's writes holds it back until the fault clears
    Given the API server answers by the fault rule "verb=create,resource=deployments,code=500"
    When the example "barbican.yaml" is applied
    Then for 2 minutes the Ready condition of the Barbican "barbican" in "openstack" never reads True
    And the Deployment "barbican" in "openstack" does not exist
    When the API server's fault rules are cleared
    Then within 5 minutes the Barbican "barbican" in "openstack" reports:
      | condition       | status | reason          |
      | DeploymentReady | True   | DeploymentReady |
      | Ready           | True   | AllReady        |

  Scenario: an External Secrets store that stops being ready flips SecretsReady and leaves the Deployment running
    When the example "barbican.yaml" is applied
    Then within 3 minutes the Barbican "barbican" in "openstack" reports:
      | condition | status | reason   |
      | Ready     | True   | AllReady |
    When the External Secrets ClusterSecretStore "openbao-cluster-store" stops being ready
    Then within 1 minute the Barbican "barbican" in "openstack" reports:
      | condition    | status | reason              |
      | SecretsReady | False  | SecretStoreNotReady |
      | Ready        | False  | NotAllReady         |
    And the Deployment "barbican" in "openstack" has "/metadata/name" set to "barbican"
    When the External Secrets ClusterSecretStore "openbao-cluster-store" is ready again
    Then within 2 minutes the Barbican "barbican" in "openstack" reports:
      | condition    | status | reason           |
      | SecretsReady | True   | SecretsAvailable |
      | Ready        | True   | AllReady         |
