Feature: A store that leaves the projection is announced with what it costs

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

  # A Barbican has one OpenBao store, so a user replaces it as admission allows: the old store
  # is deleted first (the last-good configuration keeps serving), then the new one is created.
  Scenario: replacing the default store detaches the old one with a Warning
    Given the example "barbican.yaml" is applied
    And within 2 minutes the Barbican "barbican" in "openstack" reports:
      | condition | status | reason   |
      | Ready     | True   | AllReady |
    And the OpenBaoCluster "openbao-next-instance" in "openstack" is running
    When the BarbicanSecretStore "openbao-primary" in "openstack" is deleted
    Then within 1 minute the Barbican "barbican" in "openstack" reports:
      | condition         | status | reason               |
      | SecretStoresReady | False  | NoDefaultSecretStore |
    And the Barbican "barbican" in "openstack" has "/status/projectedSecretStores/0" set to "openbao-primary"
    When the following is applied:
      """
      apiVersion: barbican.openstack.c5c3.io/v1alpha1
      kind: BarbicanSecretStore
      metadata: {name: openbao-next, namespace: openstack}
      spec:
        barbicanRef: {name: barbican}
        type: OpenBao
        isDefault: true
        openBao:
          instanceRef: {name: openbao-next-instance}
      """
    And the BarbicanSecretStore "openbao-next" in "openstack" is credential-ready
    Then within 1 minute the Barbican "barbican" in "openstack" reports:
      | condition         | status | reason             |
      | SecretStoresReady | True   | AllStoresProjected |
    And the Barbican "barbican" in "openstack" has "/status/projectedSecretStores/0" set to "openbao-next"
    And within 1 minute a Warning event "SecretStoreDetached" about "barbican" in "openstack" mentions "openbao-primary"
    And within 2 minutes the config mounted by the Deployment "barbican" in "openstack" contains "[secretstore:openbao-next]"

  Scenario: removing the last store keeps the running configuration and the last-good record
    Given the example "barbican.yaml" is applied
    And within 2 minutes the Barbican "barbican" in "openstack" reports:
      | condition | status | reason   |
      | Ready     | True   | AllReady |
    When the BarbicanSecretStore "openbao-primary" in "openstack" is deleted
    Then within 1 minute the Barbican "barbican" in "openstack" reports:
      | condition         | status | reason               |
      | SecretStoresReady | False  | NoDefaultSecretStore |
    And within 1 minute the config mounted by the Deployment "barbican" in "openstack" contains "[secretstore:openbao-primary]"
    And the Barbican "barbican" in "openstack" has "/status/projectedSecretStores/0" set to "openbao-primary"
    And the Barbican "barbican" in "openstack" has "/status/projectedSecretStoreHosts/0" set to "https://openbao-instance.openstack.svc:8200"
    # The API waits for a valid projection as it runs: the sweep after the pass that saw the
    # store go (the one that reported NoDefaultSecretStore) took nothing of it.
    And the Deployment "barbican" in "openstack" has "/metadata/name" set to "barbican"
    And the Service "barbican" in "openstack" has "/metadata/name" set to "barbican"
    And the PodDisruptionBudget "barbican" in "openstack" has "/metadata/name" set to "barbican"
    And the CronJob "barbican-db-clean" in "openstack" has "/metadata/name" set to "barbican-db-clean"
