Feature: The rendered configuration is immutable, kept for rollback, and guarded

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
      | condition        | status | reason     |
      | BarbicanAPIReady | True   | APIHealthy |

  Scenario: overriding an operator-owned key is honoured, reported, and announced
    When the Barbican "barbican" in "openstack" is patched with:
      """
      spec:
        extraConfig:
          DEFAULT: {host_href: "https://kms.internal.example"}
      """
    # ExtraConfigHealthy is never aggregated: an honoured override does not hold Ready down.
    # (Ready is False for a moment while the new config rolls out; that window is not what
    # this scenario is about, and a check that waits for it misses it on a busy machine.)
    Then within 1 minute the Barbican "barbican" in "openstack" reports:
      | condition          | status | reason              |
      | ExtraConfigHealthy | False  | OwnedKeysOverridden |
      | Ready              | True   | AllReady            |
    And within 1 minute a Warning event "ExtraConfigOwnedKeyOverride" about "barbican" in "openstack" mentions "host_href"

  Scenario: every change renders a new Secret and three old ones are kept
    When the Barbican "barbican" in "openstack" is patched with:
      """
      spec: {extraConfig: {oslo_messaging_notifications: {driver: messagingv2}}}
      """
    Then within 2 minutes the config mounted by the Deployment "barbican" in "openstack" contains "driver = messagingv2"
    When the Barbican "barbican" in "openstack" is patched with:
      """
      spec: {extraConfig: {oslo_messaging_notifications: {driver: log}}}
      """
    Then within 2 minutes the config mounted by the Deployment "barbican" in "openstack" contains "driver = log"
    When the Barbican "barbican" in "openstack" is patched with:
      """
      spec: {extraConfig: {oslo_messaging_notifications: {driver: routing}}}
      """
    Then within 2 minutes the config mounted by the Deployment "barbican" in "openstack" contains "driver = routing"
    When the Barbican "barbican" in "openstack" is patched with:
      """
      spec: {extraConfig: {oslo_messaging_notifications: {driver: noop}}}
      """
    Then within 2 minutes the config mounted by the Deployment "barbican" in "openstack" contains "driver = noop"
    When the Barbican "barbican" in "openstack" is patched with:
      """
      spec: {extraConfig: {oslo_messaging_notifications: {driver: test}}}
      """
    Then within 2 minutes the config mounted by the Deployment "barbican" in "openstack" contains "driver = test"
    And within 1 minute there are 4 config Secrets for the Barbican "barbican" in "openstack"

  @sim-only
  Scenario: a policy ConfigMap that is missing is a config error, written to status
    When the Barbican "barbican" in "openstack" is patched with:
      """
      spec: {policyOverrides: {configMapRef: {name: barbican-policy}}}
      """
    Then within 1 minute the Barbican "barbican" in "openstack" reports:
      | condition    | status | reason      |
      | SecretsReady | False  | ConfigError |
    When the following is applied:
      """
      apiVersion: v1
      kind: ConfigMap
      metadata: {name: barbican-policy, namespace: openstack}
      data:
        policy.yaml: |
          "secrets:get": "role:admin"
      """
    And 1 minute passes
    Then within 1 minute the Barbican "barbican" in "openstack" reports:
      | condition    | status | reason           |
      | SecretsReady | True   | SecretsAvailable |

  Scenario: a deleted Barbican releases its finalizer and leaves
    Then the Barbican "barbican" in "openstack" has "/metadata/finalizers/0" set to "barbican.openstack.c5c3.io/finalizer"
    When the Barbican "barbican" in "openstack" is deleted
    Then within 1 minute the Barbican "barbican" in "openstack" is gone

  @sim-only
  Scenario: a projection going invalid keeps the running configuration and the last-good record
    # A second OpenBao store is refused at admission (admission.feature); this is the
    # operator's own defence, for a store created while the webhooks were not installed.
    Given the admission webhooks are not installed
    And the OpenBaoCluster "openbao-other" in "openstack" is running
    When the following is applied:
      """
      apiVersion: barbican.openstack.c5c3.io/v1alpha1
      kind: BarbicanSecretStore
      metadata: {name: openbao-secondary, namespace: openstack}
      spec:
        barbicanRef: {name: barbican}
        type: OpenBao
        openBao:
          instanceRef: {name: openbao-other}
      """
    And the BarbicanSecretStore "openbao-secondary" in "openstack" is credential-ready
    Then within 1 minute the Barbican "barbican" in "openstack" reports:
      | condition         | status | reason                 |
      | SecretStoresReady | False  | MultipleOpenBaoStores  |
      | DeploymentReady   | False  | WaitingForSecretStores |
    When the Barbican "barbican" in "openstack" is patched with:
      """
      spec: {extraConfig: {oslo_messaging_notifications: {driver: log}}}
      """
    And 1 minute passes
    Then within 1 minute there are 1 config Secrets for the Barbican "barbican" in "openstack"
    And the Deployment "barbican" in "openstack" has "/spec/template/spec/volumes/0/name" set to "config"
    And the Barbican "barbican" in "openstack" has "/status/projectedSecretStores/0" set to "openbao-primary"
    And the Barbican "barbican" in "openstack" has "/status/projectedSecretStoreHosts/0" set to "https://openbao-instance.openstack.svc:8200"

  # The messaging audit driver's transport URL carries the broker's password: it reaches the
  # pods from its Secret as an environment variable, never the rendered config, and a rotated
  # value rolls them.
  Scenario: audit notifications over a transport URL from a Secret, which rolls the pods when rotated
    When the Barbican "barbican" in "openstack" is patched with:
      """
      spec:
        audit:
          driver: messaging
          transportUrlSecretRef: {name: rabbitmq-audit, key: url}
      """
    Then within 1 minute the Barbican "barbican" in "openstack" reports:
      | condition    | status | reason                   |
      | SecretsReady | False  | WaitingForAuditTransport |
    And within 1 minute the SecretsReady condition of the Barbican "barbican" in "openstack" mentions 'audit transport URL Secret "rabbitmq-audit" not found'
    When the Secret "rabbitmq-audit" in "openstack" holds:
      | key | value                                            |
      | url | rabbit://audit:broker-pw@rabbitmq.openstack:5672/ |
    Then within 2 minutes the Barbican "barbican" in "openstack" reports:
      | condition | status | reason   |
      | Ready     | True   | AllReady |
    And within 1 minute the barbican.conf mounted by the Deployment "barbican" in "openstack" sets [audit_middleware_notifications] driver to "messagingv2"
    And the Deployment "barbican" in "openstack" has "/spec/template/spec/containers/0/env/3/name" set to "OS_AUDIT_MIDDLEWARE_NOTIFICATIONS__TRANSPORT_URL"
    And the Deployment "barbican" in "openstack" has "/spec/template/spec/containers/0/env/3/valueFrom/secretKeyRef/name" set to "rabbitmq-audit"

  # A rotated URL rolls the pods (its digest is a pod-template annotation).
  @sim-only
  Scenario: a rotated audit transport URL rolls the pods
    Given the Secret "rabbitmq-audit" in "openstack" holds:
      | key | value                                            |
      | url | rabbit://audit:broker-pw@rabbitmq.openstack:5672/ |
    When the Barbican "barbican" in "openstack" is patched with:
      """
      spec:
        audit:
          driver: messaging
          transportUrlSecretRef: {name: rabbitmq-audit, key: url}
      """
    Then within 2 minutes the Barbican "barbican" in "openstack" reports:
      | condition | status | reason   |
      | Ready     | True   | AllReady |
    When the Secret "rabbitmq-audit" in "openstack" holds:
      | key | value                                             |
      | url | rabbit://audit:rotated-pw@rabbitmq.openstack:5672/ |
    Then within 2 minutes the pods of the Deployment "barbican" in "openstack" roll
