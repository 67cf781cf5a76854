Feature: A managed store mints its AppRole credentials, re-mints them, and survives an outage

  The operator provisions against the OpenBaoCluster a managed store names: it mints a secret
  ID for the barbican AppRole, keeps it in <store>-approle with the minted-at and TTL stamps,
  re-mints it at two thirds of its TTL or (at most once per ten minutes) after the server
  rejected it, and reports every step on the store's conditions.

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

  # @in-process-operator: its re-mint counts and leak check read the operator's process.
  @in-process-operator
  Scenario: the minted pair is stamped, owned by the store, delivered by env var, and never leaks
    When the example "barbicansecretstore-managed.yaml" is applied
    And the example "barbican.yaml" is applied
    Then within 2 minutes the BarbicanSecretStore "openbao-primary" in "openstack" reports:
      | condition         | status | reason               |
      | CredentialsReady  | True   | CredentialsAvailable |
      | ProvisioningReady | True   | Provisioned          |
      | ConfigProjected   | True   | ConfigProjected      |
      | Ready             | True   | AllReady             |
    And the Secret "openbao-primary-approle" in "openstack" has "/metadata/ownerReferences/0/kind" set to "BarbicanSecretStore"
    And the Secret "openbao-primary-approle" in "openstack" has "/metadata/annotations/barbican.c5c3.io~1secret-id-ttl-seconds" set to "2592000"
    And the Deployment "barbican" in "openstack" has "/spec/template/spec/containers/0/env/2/valueFrom/secretKeyRef/name" set to "openbao-primary-approle"
    And the operator counted 0 proactive and 0 reactive re-mints of the store "openbao-primary" in "openstack"
    And no secret ID issued by any OpenBao appears in "openstack"

  @sim-only
  Scenario: a secret ID is re-minted at two thirds of its TTL and the pods roll
    Given the OpenBao of "openbao-instance" in "openstack" issues secret IDs for 90 seconds
    When the example "barbicansecretstore-managed.yaml" is applied
    And the example "barbican.yaml" is applied
    Then within 2 minutes the Barbican "barbican" in "openstack" reports:
      | condition | status | reason   |
      | Ready     | True   | AllReady |
    When the secret ID of the store "openbao-primary" in "openstack" is noted
    And the pod template of the Deployment "barbican" in "openstack" is noted
    Then within 2 minutes the pods of the Deployment "barbican" in "openstack" roll
    And the secret ID of the store "openbao-primary" in "openstack" has changed
    And the operator counted 1 proactive and 0 reactive re-mints of the store "openbao-primary" in "openstack"
    And no secret ID issued by any OpenBao appears in "openstack"

  @sim-only
  Scenario: a revoked secret ID is re-minted once, then reported until the ten-minute cooldown ends
    When the example "barbicansecretstore-managed.yaml" is applied
    And the example "barbican.yaml" is applied
    Then within 2 minutes the Barbican "barbican" in "openstack" reports:
      | condition | status | reason   |
      | Ready     | True   | AllReady |
    When the secret ID of the store "openbao-primary" in "openstack" is noted
    And the OpenBao of "openbao-instance" in "openstack" revokes the secret ID of the store "openbao-primary"
    Then within 25 minutes the secret ID of the store "openbao-primary" in "openstack" has changed
    And within 1 minute the BarbicanSecretStore "openbao-primary" in "openstack" reports:
      | condition        | status | reason               |
      | CredentialsReady | True   | CredentialsAvailable |
    And the operator counted 0 proactive and 1 reactive re-mint of the store "openbao-primary" in "openstack"
    When the OpenBao of "openbao-instance" in "openstack" revokes the secret ID of the store "openbao-primary"
    And the BarbicanSecretStore "openbao-primary" in "openstack" is patched with:
      """
      spec: {extraOptions: {timeout: "60"}}
      """
    Then within 1 minute the BarbicanSecretStore "openbao-primary" in "openstack" reports:
      | condition        | status | reason             |
      | CredentialsReady | False  | InvalidCredentials |
    And within 1 minute a Warning event "InvalidCredentials" about "openbao-primary" in "openstack" mentions "ten minutes"
    And the operator counted 0 proactive and 1 reactive re-mint of the store "openbao-primary" in "openstack"
    And within 11 minutes the BarbicanSecretStore "openbao-primary" in "openstack" reports:
      | condition        | status | reason               |
      | CredentialsReady | True   | CredentialsAvailable |
    And the operator counted 0 proactive and 2 reactive re-mints of the store "openbao-primary" in "openstack"
    And within 1 minute the operator's metrics have re-mint series for the store "openbao-primary" in "openstack"
    When the BarbicanSecretStore "openbao-primary" in "openstack" is deleted
    Then within 1 minute the Secret "openbao-primary-approle" in "openstack" is gone
    And within 1 minute the operator's metrics lack re-mint series for the store "openbao-primary" in "openstack"

  Scenario: an OpenBao outage is reported and the store recovers when it comes back
    When the example "barbicansecretstore-managed.yaml" is applied
    And the example "barbican.yaml" is applied
    Then within 2 minutes the Barbican "barbican" in "openstack" reports:
      | condition | status | reason   |
      | Ready     | True   | AllReady |
    When the pod-template annotation "barbican.c5c3.io/secret-store-credentials-hash" of the Deployment "barbican" in "openstack" is noted
    And the pod-template annotation "barbican.c5c3.io/db-connection-hash" of the Deployment "barbican" in "openstack" is noted
    And the OpenBao of "openbao-instance" in "openstack" goes down
    And the BarbicanSecretStore "openbao-primary" in "openstack" is patched with:
      """
      spec: {extraOptions: {timeout: "60"}}
      """
    Then within 1 minute the BarbicanSecretStore "openbao-primary" in "openstack" reports:
      | condition        | status | reason             |
      | CredentialsReady | False  | OpenBaoUnreachable |
      | Ready            | False  | NotAllReady        |
    # The socket error named after it depends on the network between: refused directly, a
    # reset through the kubelet's Service proxy (kube-proxy's userspace mode behaves so).
    And within 1 minute a Warning event "OpenBaoUnreachable" about "openbao-primary" in "openstack" mentions "OpenBao did not answer"
    And within 1 minute the Barbican "barbican" in "openstack" reports:
      | condition         | status | reason               |
      | SecretStoresReady | False  | NoDefaultSecretStore |
      | BarbicanAPIReady  | True   | APIHealthy           |
    And within 1 minute the SecretStoresReady condition of the Barbican "barbican" in "openstack" mentions "openbao-primary"
    And within 1 minute the CredentialsReady condition of the BarbicanSecretStore "openbao-primary" in "openstack" mentions "OpenBao did not answer"
    And the Deployment "barbican" in "openstack" has "/spec/template/spec/volumes/0/name" set to "config"
    And within 1 minute the config mounted by the Deployment "barbican" in "openstack" contains "[secretstore:openbao-primary]"
    And the pod-template annotation "barbican.c5c3.io/secret-store-credentials-hash" of the Deployment "barbican" in "openstack" has not changed
    When the OpenBao of "openbao-instance" in "openstack" comes back
    Then within 1 minute the BarbicanSecretStore "openbao-primary" in "openstack" reports:
      | condition        | status | reason               |
      | CredentialsReady | True   | CredentialsAvailable |
    And within 1 minute the Barbican "barbican" in "openstack" reports:
      | condition         | status | reason             |
      | SecretStoresReady | True   | AllStoresProjected |
      | Ready             | True   | AllReady           |
    And the pod-template annotation "barbican.c5c3.io/secret-store-credentials-hash" of the Deployment "barbican" in "openstack" has not changed
    And the pod-template annotation "barbican.c5c3.io/db-connection-hash" of the Deployment "barbican" in "openstack" has not changed

  @sim-only
  Scenario: a store whose Barbican does not exist waits and mints nothing
    When the following is applied:
      """
      apiVersion: barbican.openstack.c5c3.io/v1alpha1
      kind: BarbicanSecretStore
      metadata: {name: orphan, namespace: openstack}
      spec:
        barbicanRef: {name: nobody}
        type: OpenBao
        isDefault: true
        openBao:
          instanceRef: {name: openbao-instance}
      """
    Then within 1 minute the BarbicanSecretStore "orphan" in "openstack" reports:
      | condition        | status | reason                |
      | CredentialsReady | False  | WaitingForParent      |
      | ConfigProjected  | False  | WaitingForProjection  |
      | Ready            | False  | NotAllReady           |
    When 2 minutes pass
    Then the Secret "orphan-approle" in "openstack" does not exist

  Scenario: a store naming an OpenBaoCluster that does not exist says so
    When the following is applied:
      """
      apiVersion: barbican.openstack.c5c3.io/v1alpha1
      kind: BarbicanSecretStore
      metadata: {name: openbao-primary, namespace: openstack}
      spec:
        barbicanRef: {name: barbican}
        type: OpenBao
        isDefault: true
        openBao:
          instanceRef: {name: missing-instance}
      """
    And the example "barbican.yaml" is applied
    Then within 1 minute the BarbicanSecretStore "openbao-primary" in "openstack" reports:
      | condition         | status | reason                |
      | ProvisioningReady | False  | InstanceNotFound      |
      | CredentialsReady  | False  | WaitingForCredentials |
    And within 1 minute a Warning event "InstanceNotFound" about "openbao-primary" in "openstack" mentions "missing-instance"

  Scenario: a refused provisioner, a missing mount and an unpublished CA are each named
    When the example "barbicansecretstore-managed.yaml" is applied
    And the example "barbican.yaml" is applied
    Then within 2 minutes the BarbicanSecretStore "openbao-primary" in "openstack" reports:
      | condition | status | reason   |
      | Ready     | True   | AllReady |
    When the OpenBao of "openbao-instance" in "openstack" rejects logins
    And the BarbicanSecretStore "openbao-primary" in "openstack" is patched with:
      """
      spec: {extraOptions: {timeout: "61"}}
      """
    Then within 1 minute the BarbicanSecretStore "openbao-primary" in "openstack" reports:
      | condition         | status | reason               |
      | ProvisioningReady | False  | ProvisioningDenied   |
      | CredentialsReady  | True   | CredentialsAvailable |
      | Ready             | False  | NotAllReady          |
    And within 1 minute a Warning event "ProvisioningDenied" about "openbao-primary" in "openstack" mentions "kubernetes auth"
    When the OpenBao of "openbao-instance" in "openstack" accepts logins again
    And the OpenBao of "openbao-instance" in "openstack" loses its barbican mount
    And the BarbicanSecretStore "openbao-primary" in "openstack" is patched with:
      """
      spec: {extraOptions: {timeout: "62"}}
      """
    Then within 1 minute the BarbicanSecretStore "openbao-primary" in "openstack" reports:
      | condition         | status | reason                 |
      | ProvisioningReady | False  | InstanceNotProvisioned |
    And within 1 minute a Warning event "InstanceNotProvisioned" about "openbao-primary" in "openstack" mentions "barbican_kv"
    When the Secret "openbao-instance-tls-ca" in "openstack" holds:
      | key    | value |
      | ca.crt |       |
    Then within 1 minute the BarbicanSecretStore "openbao-primary" in "openstack" reports:
      | condition         | status | reason                |
      | ProvisioningReady | False  | WaitingForInstanceTLS |
