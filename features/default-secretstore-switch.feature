Feature: The default store moves, and the running configuration follows only a valid projection

  barbican keeps global_default inside the default store's own section, so moving the default
  changes the rendered document and rolls the pods. While the stores do not form a valid
  projection (no default, or two OpenBao stores), the pods keep the configuration they run.

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
    And the OpenBaoCluster "openbao-next-instance" in "openstack" is running
    And the example "barbicansecretstore-managed.yaml" is applied
    And the example "barbican.yaml" is applied
    And within 2 minutes the Barbican "barbican" in "openstack" reports:
      | condition | status | reason   |
      | Ready     | True   | AllReady |

  Scenario: taking the default off the only store keeps the running configuration until it is back
    When the BarbicanSecretStore "openbao-primary" in "openstack" is patched with:
      """
      spec: {isDefault: false}
      """
    Then within 1 minute the Barbican "barbican" in "openstack" reports:
      | condition         | status | reason               |
      | SecretStoresReady | False  | NoDefaultSecretStore |
    And within 1 minute the config mounted by the Deployment "barbican" in "openstack" contains "global_default = True"
    And the Barbican "barbican" in "openstack" has "/status/projectedSecretStores/0" set to "openbao-primary"
    When the BarbicanSecretStore "openbao-primary" in "openstack" is patched with:
      """
      spec: {isDefault: true}
      """
    Then within 1 minute the Barbican "barbican" in "openstack" reports:
      | condition         | status | reason             |
      | SecretStoresReady | True   | AllStoresProjected |
      | Ready             | True   | AllReady           |

  # A Barbican has one OpenBao store, so moving to a new one is delete, then create: admission
  # refuses a second OpenBao store beside the first. Between the two the last-good
  # configuration keeps serving.
  @sim-only
  Scenario: the default moves to a new store once the old one is gone, and the pods roll onto it
    Given the pod template of the Deployment "barbican" in "openstack" is noted
    When the following is submitted:
      """
      apiVersion: barbican.openstack.c5c3.io/v1alpha1
      kind: BarbicanSecretStore
      metadata: {name: openbao-next, namespace: openstack}
      spec:
        barbicanRef: {name: barbican}
        type: OpenBao
        isDefault: false
        openBao:
          instanceRef: {name: openbao-next-instance}
      """
    Then it is refused with "already attaches an OpenBao store to Barbican barbican"
    When the BarbicanSecretStore "openbao-primary" in "openstack" is deleted
    Then within 1 minute the Barbican "barbican" in "openstack" reports:
      | condition         | status | reason               |
      | SecretStoresReady | False  | NoDefaultSecretStore |
    And within 1 minute the config mounted by the Deployment "barbican" in "openstack" contains "[secretstore:openbao-primary]"
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
    Then within 1 minute the Barbican "barbican" in "openstack" reports:
      | condition         | status | reason             |
      | SecretStoresReady | True   | AllStoresProjected |
    And within 2 minutes the config mounted by the Deployment "barbican" in "openstack" contains "[secretstore:openbao-next]"
    And within 2 minutes the pods of the Deployment "barbican" in "openstack" roll
    And within 1 minute the BarbicanSecretStore "openbao-next" in "openstack" reports:
      | condition       | status | reason          |
      | ConfigProjected | True   | ConfigProjected |
      | Ready           | True   | AllReady        |
