Feature: Nothing is deployed until the credentials and a default store are there

  The Secrets step gates on the External Secrets store and the two credential Secrets; the
  SecretStores step needs exactly one credential-ready default store. While either waits, no
  API Deployment is created.

  Background:
    Given a simulated cluster with the operator running
    And the namespace "openstack"
    And the MariaDB "openstack-mariadb" in "openstack" is running

  Scenario: an External Secrets store that does not exist holds the pipeline at SecretsReady
    When the example "barbican.yaml" is applied
    Then within 1 minute the Barbican "barbican" in "openstack" reports:
      | condition    | status | reason              |
      | SecretsReady | False  | SecretStoreNotReady |
      | Ready        | False  | NotAllReady         |
    And the Ready message of the Barbican "barbican" in "openstack" names "SecretsReady, DatabaseReady, SecretStoresReady, DeploymentReady, BarbicanAPIReady, HPAReady, NetworkPolicyReady, HTTPRouteReady, DBCleanReady, KeystoneCatalogReady, TLSReady"
    And the Deployment "barbican" in "openstack" does not exist
    And the Secret "barbican-db-connection" in "openstack" does not exist

  Scenario: the database Secret, then the service-user Secret, are waited for
    Given the External Secrets ClusterSecretStore "openbao-cluster-store" is ready
    When the example "barbican.yaml" is applied
    Then within 1 minute the Barbican "barbican" in "openstack" reports:
      | condition    | status | reason                  |
      | SecretsReady | False  | WaitingForDBCredentials |
    And within 1 minute the SecretsReady condition of the Barbican "barbican" in "openstack" mentions "no ExternalSecret"
    Given the Secret "barbican-db" in "openstack" holds:
      | key      | value    |
      | username | barbican |
    Then within 1 minute the SecretsReady condition of the Barbican "barbican" in "openstack" mentions "missing key(s) password"
    Given the Secret "barbican-db" in "openstack" holds:
      | key      | value    |
      | username | barbican |
      | password | pw       |
    Then within 1 minute the Barbican "barbican" in "openstack" reports:
      | condition    | status | reason                           |
      | SecretsReady | False  | WaitingForServiceUserCredentials |
    Given the Secret "barbican-keystone" in "openstack" holds:
      | key      | value |
      | password | pw    |
    Then within 1 minute the Barbican "barbican" in "openstack" reports:
      | condition         | status | reason                 |
      | SecretsReady      | True   | SecretsAvailable       |
      | SecretStoresReady | False  | NoDefaultSecretStore   |
      | DBCleanReady      | False  | WaitingForSecretStores |
      | DatabaseReady     | False  | WaitingForSecretStores |
    And the Deployment "barbican" in "openstack" does not exist
    And the Secret "barbican-db-connection" in "openstack" has "/metadata/ownerReferences/0/kind" set to "Barbican"

  Scenario: a managed store waits for its OpenBaoCluster, then is projected
    Given the External Secrets ClusterSecretStore "openbao-cluster-store" is ready
    And the Secret "barbican-db" in "openstack" holds:
      | key      | value    |
      | username | barbican |
      | password | pw       |
    And the Secret "barbican-keystone" in "openstack" holds:
      | key      | value |
      | password | pw    |
    And the example "barbicansecretstore-managed.yaml" is applied
    When the example "barbican.yaml" is applied
    Then within 1 minute the BarbicanSecretStore "openbao-primary" in "openstack" reports:
      | condition         | status | reason                |
      | ProvisioningReady | False  | InstanceNotFound      |
      | CredentialsReady  | False  | WaitingForCredentials |
      | Ready             | False  | NotAllReady           |
    And within 1 minute the Barbican "barbican" in "openstack" reports:
      | condition         | status | reason                 |
      | SecretStoresReady | False  | NoDefaultSecretStore   |
      | DatabaseReady     | False  | WaitingForSecretStores |
    Given the OpenBaoCluster "openbao-instance" in "openstack" is running
    Then within 1 minute the Barbican "barbican" in "openstack" reports:
      | condition         | status | reason             |
      | SecretStoresReady | True   | AllStoresProjected |
      | DeploymentReady   | True   | DeploymentReady    |
    And the Barbican "barbican" in "openstack" has "/status/projectedSecretStores/0" set to "openbao-primary"
    And the Barbican "barbican" in "openstack" has "/status/projectedSecretStoreHosts/0" set to "https://openbao-instance.openstack.svc:8200"

  # The Barbican's database credentials are held back until both stores have minted: its pipeline
  # stops at the Secrets step, ahead of the store step, so no store is projected early. Without
  # that, whichever store mints first is projected on its own, the schema syncs, and the second
  # store then meets the last-good configuration instead (barbican-config.feature covers that).
  Scenario: two credential-ready stores are more than barbican can take
    # A second OpenBao store is refused at admission (admission.feature); this is the
    # operator's own defence, for a store created while the webhooks were not installed.
    Given the admission webhooks are not installed
    And the External Secrets ClusterSecretStore "openbao-cluster-store" is ready
    And the Secret "barbican-keystone" in "openstack" holds:
      | key      | value |
      | password | pw    |
    And the OpenBaoCluster "openbao-instance" in "openstack" is running
    And the example "barbicansecretstore-managed.yaml" is applied
    And the following is applied:
      """
      apiVersion: barbican.openstack.c5c3.io/v1alpha1
      kind: BarbicanSecretStore
      metadata:
        name: openbao-secondary
        namespace: openstack
      spec:
        barbicanRef:
          name: barbican
        type: OpenBao
        openBao:
          instanceRef:
            name: openbao-instance
      """
    When the example "barbican.yaml" is applied
    Then within 1 minute the Barbican "barbican" in "openstack" reports:
      | condition    | status | reason                  |
      | SecretsReady | False  | WaitingForDBCredentials |
    And within 1 minute the BarbicanSecretStore "openbao-primary" in "openstack" reports:
      | condition        | status | reason               |
      | CredentialsReady | True   | CredentialsAvailable |
    And within 1 minute the BarbicanSecretStore "openbao-secondary" in "openstack" reports:
      | condition        | status | reason               |
      | CredentialsReady | True   | CredentialsAvailable |
    When the Secret "barbican-db" in "openstack" holds:
      | key      | value    |
      | username | barbican |
      | password | pw       |
    Then within 1 minute the Barbican "barbican" in "openstack" reports:
      | condition         | status | reason                 |
      | SecretStoresReady | False  | MultipleOpenBaoStores  |
      | DatabaseReady     | False  | WaitingForSecretStores |

  Scenario: a Barbican pinned to a namespaced External Secrets store waits for that store
    Given the Secret "barbican-db" in "openstack" holds:
      | key      | value    |
      | username | barbican |
      | password | pw       |
    And the Secret "barbican-keystone" in "openstack" holds:
      | key      | value |
      | password | pw    |
    When the example "barbican.yaml" is applied
    And the Barbican "barbican" in "openstack" is patched with:
      """
      spec:
        secretStoreRef: {kind: SecretStore, name: tenant-store}
      """
    Then within 1 minute the SecretsReady condition of the Barbican "barbican" in "openstack" mentions "tenant-store"
    When the following is applied:
      """
      apiVersion: external-secrets.io/v1
      kind: SecretStore
      metadata: {name: tenant-store, namespace: openstack}
      spec: {provider: {vault: {server: "https://openbao.openbao.svc:8200"}}}
      """
    Then within 1 minute the Barbican "barbican" in "openstack" reports:
      | condition    | status | reason           |
      | SecretsReady | True   | SecretsAvailable |
