Feature: A brownfield store is validated against a server the operator never writes to

  A brownfield store names an OpenBao or Vault server provisioned elsewhere: the operator reads
  the referenced credentials and CA Secrets, logs in, checks the five capabilities barbican needs
  on the mount's data path, and renders the store. It creates nothing on that server.

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
    And the external OpenBao "vault" serves "vault" in "legacy" with the mount "secret-barbican" in the namespace "tenant-a"
    And the external OpenBao "vault" issued AppRole credentials in "tenant-a" into the Secret "vault-barbican-approle" in "openstack"
    And the CA of the external OpenBao "vault" is in the Secret "vault-ca" in "openstack"
    And the following is applied:
      """
      apiVersion: barbican.openstack.c5c3.io/v1alpha1
      kind: BarbicanSecretStore
      metadata: {name: vault-legacy, namespace: openstack}
      spec:
        barbicanRef: {name: barbican}
        type: OpenBao
        isDefault: true
        openBao:
          server:
            url: https://vault.legacy.svc:8200
            caBundleSecretRef: {name: vault-ca}
            credentialsSecretRef: {name: vault-barbican-approle}
          kvMountpoint: secret-barbican
          namespace: tenant-a
      """

  # @in-process-operator: its leak check searches the operator's metrics registry and captured log.
  @in-process-operator
  Scenario: the store is validated in its namespace, projected, and nothing is written there
    When the example "barbican.yaml" is applied
    Then within 2 minutes the BarbicanSecretStore "vault-legacy" in "openstack" reports:
      | condition        | status | reason               |
      | CredentialsReady | True   | CredentialsAvailable |
      | ConfigProjected  | True   | ConfigProjected      |
      | Ready            | True   | AllReady             |
    And the BarbicanSecretStore "vault-legacy" in "openstack" does not set "ProvisioningReady"
    And within 1 minute the Barbican "barbican" in "openstack" reports:
      | condition | status | reason   |
      | Ready     | True   | AllReady |
    And within 1 minute the config mounted by the Deployment "barbican" in "openstack" contains "namespace = tenant-a"
    And the Deployment "barbican" in "openstack" has "/spec/template/spec/volumes/1/name" set to "secret-store-ca"
    And the Deployment "barbican" in "openstack" has "/spec/template/spec/volumes/1/secret/secretName" set to "vault-ca"
    And the Deployment "barbican" in "openstack" takes the env "OS_VAULT_PLUGIN__APPROLE_SECRET_ID" from the Secret "vault-barbican-approle" key "secret-id"
    And the external OpenBao "vault" was only logged in to and asked for capabilities
    And every request to the external OpenBao "vault" named the namespace "tenant-a"
    And no secret ID issued by any OpenBao appears in "openstack"

  Scenario: a policy short of a capability is reported by name
    Given the external OpenBao "vault" denies "delete" on "secret-barbican/data/probe"
    When the example "barbican.yaml" is applied
    Then within 1 minute the BarbicanSecretStore "vault-legacy" in "openstack" reports:
      | condition        | status | reason                   |
      | CredentialsReady | False  | InsufficientCapabilities |
    And within 1 minute a Warning event "InsufficientCapabilities" about "vault-legacy" in "openstack" mentions "delete"
    And within 1 minute the Barbican "barbican" in "openstack" reports:
      | condition         | status | reason               |
      | SecretStoresReady | False  | NoDefaultSecretStore |

  Scenario: a deleted credentials Secret keeps the running configuration
    When the example "barbican.yaml" is applied
    Then within 2 minutes the Barbican "barbican" in "openstack" reports:
      | condition | status | reason   |
      | Ready     | True   | AllReady |
    When the Secret "vault-barbican-approle" in "openstack" is deleted
    # The Barbican, which watches the Secret, skips the store (WaitingForSecretStores and a
    # BarbicanSecretStoreSkipped Warning) until the store revalidates, which its parent's status
    # flip starts at once: which of the two a scenario sees first is a race, so only the
    # settled state is checked here (the skip itself is a unit test of secret_stores::assemble).
    Then within 16 minutes the BarbicanSecretStore "vault-legacy" in "openstack" reports:
      | condition        | status | reason                |
      | CredentialsReady | False  | WaitingForCredentials |
    And within 1 minute the Barbican "barbican" in "openstack" reports:
      | condition         | status | reason               |
      | SecretStoresReady | False  | NoDefaultSecretStore |
    And within 1 minute the config mounted by the Deployment "barbican" in "openstack" contains "[secretstore:vault-legacy]"

  # The operator skips a store whose assembled options hold a control character (unit-tested
  # in the store's projection); the schema refuses one before it is stored, on every install.
  Scenario: a control character in an option value is refused by the schema, and the store stays attached
    When the example "barbican.yaml" is applied
    Then within 2 minutes the Barbican "barbican" in "openstack" reports:
      | condition | status | reason   |
      | Ready     | True   | AllReady |
    When applying the following is refused with "spec.extraOptions.timeout in body should match":
      """
      apiVersion: barbican.openstack.c5c3.io/v1alpha1
      kind: BarbicanSecretStore
      metadata: {name: vault-legacy, namespace: openstack}
      spec:
        barbicanRef: {name: barbican}
        type: OpenBao
        isDefault: true
        openBao:
          server:
            url: https://vault.legacy.svc:8200
            caBundleSecretRef: {name: vault-ca}
            credentialsSecretRef: {name: vault-barbican-approle}
          kvMountpoint: secret-barbican
          namespace: tenant-a
        extraOptions: {timeout: "5\u0007"}
      """
    Then within 1 minute the Barbican "barbican" in "openstack" reports:
      | condition         | status | reason                 |
      | SecretStoresReady | True   | AllStoresProjected     |
