@sim-only
Feature: A Barbican placed on a target cluster, and what happens when that cluster goes away

  A Barbican with spec.targetClusterRef places its children on the cluster a registration Secret
  in c5c3-clusters names; the CR, its status and its events stay on the management cluster.
  Remote children carry the three owner labels instead of ownerReferences. Until the name
  resolves, the pass stops ahead of every step and of the finalizers: SecretsReady says why, the
  CR requeues every 15 seconds, and nothing is created on any cluster. Deleting the CR sweeps its
  children off the target; with the target gone, the finalizers hold for two 5-minute windows
  (since the deletion, and since this operator process first failed to resolve the cluster) and
  are then released with a RemoteChildrenAbandoned warning.

  Background:
    Given a simulated cluster with the operator running
    And the namespace "openstack"
    And the target cluster "edge-1" is running but not registered
    And the scenario works on the target cluster "edge-1"
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
      ---
      apiVersion: barbican.openstack.c5c3.io/v1alpha1
      kind: Barbican
      metadata: {name: barbican, namespace: openstack}
      spec:
        openStackRelease: "2025.2"
        targetClusterRef: {name: edge-1}
        image: {repository: ghcr.io/c5c3/barbican, tag: "2025.2"}
        database:
          clusterRef: {name: openstack-mariadb}
          database: barbican
          secretRef: {name: barbican-db}
        cache:
          clusterRef: {name: openstack-memcached}
        keystoneEndpoint: http://keystone.openstack.svc.cluster.local:5000/v3
        serviceUser:
          secretRef: {name: barbican-keystone}
      """

  Scenario: an unregistered target cluster at create: no finalizer, nothing created, and it heals once registered
    Then within 1 minute the Barbican "barbican" in "openstack" reports:
      | condition    | status | reason                   |
      | SecretsReady | False  | TargetClusterUnavailable |
      | Ready        | False  | NotAllReady              |
    And within 1 minute the SecretsReady condition of the Barbican "barbican" in "openstack" mentions "cluster not found"
    # A pass held at the gate reports its conditions to the series too.
    And the operator's metric "barbican_operator_condition_status" with "kind=Barbican,name=barbican,namespace=openstack,condition=SecretsReady" reads 0
    And within 1 minute the BarbicanSecretStore "vault-legacy" in "openstack" reports:
      | condition        | status | reason                   |
      | CredentialsReady | False  | TargetClusterUnavailable |
    When 2 minutes pass
    Then the Barbican "barbican" in "openstack" has no "/metadata/finalizers"
    And the BarbicanSecretStore "vault-legacy" in "openstack" has no "/metadata/finalizers"
    And the Deployment "barbican" in "openstack" does not exist
    And the Secret "barbican-db-connection" in "openstack" does not exist
    When the target cluster "edge-1" is registered
    Then within 3 minutes the Barbican "barbican" in "openstack" reports:
      | condition    | status | reason    |
      | SecretsReady | True   | SecretsAvailable |
      | Ready        | True   | AllReady  |
    And the Deployment "barbican" in "openstack" has "/metadata/labels/openstack.c5c3.io~1owner-kind" set to "Barbican"
    And the Deployment "barbican" in "openstack" has "/metadata/labels/openstack.c5c3.io~1owner-name" set to "barbican"
    And the Deployment "barbican" in "openstack" has "/metadata/labels/openstack.c5c3.io~1owner-namespace" set to "openstack"
    And the Deployment "barbican" in "openstack" has no "/metadata/ownerReferences"
    And the Service "barbican" in "openstack" has no "/metadata/ownerReferences"
    And the Barbican "barbican" in "openstack" has "/metadata/finalizers/1" set to "openstack.c5c3.io/remote-children"
    And the BarbicanSecretStore "vault-legacy" in "openstack" has "/metadata/annotations/openstack.c5c3.io~1children-cluster" set to "edge-1"
    And the BarbicanSecretStore "vault-legacy" in "openstack" has "/metadata/finalizers/0" set to "openstack.c5c3.io/remote-children"
    When the scenario works on the management cluster
    Then the Deployment "barbican" in "openstack" does not exist
    And the Secret "barbican-db-connection" in "openstack" does not exist

  Scenario: a Barbican held at the gate and deleted takes its series along, though it never held a finalizer
    Then within 1 minute the Barbican "barbican" in "openstack" reports:
      | condition    | status | reason                   |
      | SecretsReady | False  | TargetClusterUnavailable |
    When the Barbican "barbican" in "openstack" is deleted
    Then within 1 minute the Barbican "barbican" in "openstack" is gone
    And the operator's metrics lack series for the Barbican "barbican" in "openstack"

  Scenario: a cluster deregistered under a Ready Barbican flips SecretsReady and leaves the children where they are
    Given the target cluster "edge-1" is registered
    And within 3 minutes the Barbican "barbican" in "openstack" reports:
      | condition | status | reason   |
      | Ready     | True   | AllReady |
    When the target cluster "edge-1" is deregistered
    Then within 1 minute the Barbican "barbican" in "openstack" reports:
      | condition    | status | reason                   |
      | SecretsReady | False  | TargetClusterUnavailable |
    And within 1 minute the SecretsReady condition of the Barbican "barbican" in "openstack" mentions "cluster not found"
    When 3 minutes pass
    Then the Deployment "barbican" in "openstack" has "/metadata/name" set to "barbican"
    And the Secret "barbican-db-connection" in "openstack" has "/metadata/name" set to "barbican-db-connection"

  # Ownership on a target is by the owner labels: the sweep after a pass takes the child the
  # spec dropped, and never a run of the db-clean CronJob (a Job the CronJob controls).
  Scenario: on the target, the pass sweeps a child the spec dropped and leaves a db-clean run
    Given the target cluster "edge-1" is registered
    And within 3 minutes the Barbican "barbican" in "openstack" reports:
      | condition | status | reason   |
      | Ready     | True   | AllReady |
    When the Barbican "barbican" in "openstack" is patched with:
      """
      spec:
        networkPolicy:
          ingress:
            - namespaceSelector: {matchLabels: {kubernetes.io/metadata.name: ingress}}
      """
    Then within 1 minute the Barbican "barbican" in "openstack" reports:
      | condition          | status | reason             |
      | NetworkPolicyReady | True   | NetworkPolicyReady |
    And the NetworkPolicy "barbican" in "openstack" has "/metadata/name" set to "barbican"
    When a Job "barbican-db-clean-manual" is created from the CronJob "barbican-db-clean" in "openstack"
    And the Barbican "barbican" in "openstack" is patched with:
      """
      spec:
        networkPolicy: null
      """
    Then within 1 minute the NetworkPolicy "barbican" in "openstack" is gone
    And within 1 minute the Barbican "barbican" in "openstack" reports:
      | condition          | status | reason                   |
      | NetworkPolicyReady | True   | NetworkPolicyNotRequired |
    When 5 minutes pass
    Then the Job "barbican-db-clean-manual" in "openstack" has "/metadata/name" set to "barbican-db-clean-manual"
    And the CronJob "barbican-db-clean" in "openstack" has "/metadata/name" set to "barbican-db-clean"

  Scenario: deleting a placed Barbican sweeps its children off the target cluster
    Given the target cluster "edge-1" is registered
    And within 3 minutes the Barbican "barbican" in "openstack" reports:
      | condition | status | reason   |
      | Ready     | True   | AllReady |
    When the Barbican "barbican" in "openstack" is deleted
    Then within 3 minutes the Barbican "barbican" in "openstack" is gone
    And within 1 minute the Deployment "barbican" in "openstack" is gone
    And within 1 minute the Secret "barbican-db-connection" in "openstack" is gone
    And within 1 minute the CronJob "barbican-db-clean" in "openstack" is gone
    And within 1 minute the Database "barbican" in "openstack" is gone
    And the Secret "barbican-db" in "openstack" has "/metadata/name" set to "barbican-db"

  Scenario: deleting a Barbican whose cluster is gone holds for five minutes, then abandons the children with a warning
    Given the target cluster "edge-1" is registered
    And within 3 minutes the Barbican "barbican" in "openstack" reports:
      | condition | status | reason   |
      | Ready     | True   | AllReady |
    When the target cluster "edge-1" is deregistered
    # The operator sees the registration go before the deletion, or the deletion's cleanup
    # reaches the still-running cluster through the engaged client and ends at once.
    Then within 1 minute the Barbican "barbican" in "openstack" reports:
      | condition    | status | reason                   |
      | SecretsReady | False  | TargetClusterUnavailable |
    When the Barbican "barbican" in "openstack" is deleted
    Then within 1 minute the SecretsReady condition of the Barbican "barbican" in "openstack" mentions "waiting for target cluster"
    When 4 minutes pass
    Then the Barbican "barbican" in "openstack" has "/metadata/name" set to "barbican"
    And within 2 minutes the Barbican "barbican" in "openstack" is gone
    And within 1 minute a Warning event "RemoteChildrenAbandoned" about "barbican" in "openstack" mentions "edge-1"
    And the Deployment "barbican" in "openstack" has "/metadata/name" set to "barbican"

  Scenario: deleting a Barbican whose registered target forbids every request ends within ten minutes with a warning
    Given the target cluster "edge-1" is registered
    And within 3 minutes the Barbican "barbican" in "openstack" reports:
      | condition | status | reason   |
      | Ready     | True   | AllReady |
    # Registered and reachable, but every request of the operator's is refused from now on.
    When the API server answers by the fault rule "code=403"
    And the Barbican "barbican" in "openstack" is deleted
    And the BarbicanSecretStore "vault-legacy" in "openstack" is deleted
    And 8 minutes pass
    Then the Barbican "barbican" in "openstack" has "/metadata/name" set to "barbican"
    And within 4 minutes the Barbican "barbican" in "openstack" is gone
    And within 1 minute a Warning event "RemoteChildrenAbandoned" about "barbican" in "openstack" mentions "the API server answered 403"
    And within 1 minute the BarbicanSecretStore "vault-legacy" in "openstack" is gone
    And within 1 minute a Warning event "RemoteChildrenAbandoned" about "vault-legacy" in "openstack" mentions "kept failing for 10 minutes"
    When the API server's fault rules are cleared
    Then the Deployment "barbican" in "openstack" has "/metadata/name" set to "barbican"

  Scenario: team B's objects on the target cluster under the Barbican's child names are never touched
    # The scenario works on edge-1: these are the target cluster's, where ownership is told by
    # the owner labels alone.
    Given team B's NetworkPolicy "barbican" in "openstack"
    And team B's HorizontalPodAutoscaler "barbican" in "openstack"
    And team B's Job "barbican-db-sync" in "openstack"
    When the target cluster "edge-1" is registered
    Then within 3 minutes the Barbican "barbican" in "openstack" reports:
      | condition          | status | reason                   |
      | DatabaseReady      | False  | NameTaken                |
    And within 1 minute the DatabaseReady condition of the Barbican "barbican" in "openstack" mentions "on cluster"
    When 5 minutes pass
    Then team B's objects are untouched
    When the Job "barbican-db-sync" in "openstack" is deleted
    Then within 3 minutes the Barbican "barbican" in "openstack" reports:
      | condition          | status | reason                   |
      | Ready              | True   | AllReady                 |
      | NetworkPolicyReady | True   | NetworkPolicyNotRequired |
      | HPAReady           | True   | HPANotRequired           |
    When the Barbican "barbican" in "openstack" is deleted
    Then within 3 minutes the Barbican "barbican" in "openstack" is gone
    And the NetworkPolicy "barbican" in "openstack" has "/metadata/labels/example.com~1team" set to "b"
    And the HorizontalPodAutoscaler "barbican" in "openstack" has "/metadata/labels/example.com~1team" set to "b"

  Scenario: an operator restarted during the wait starts its own five minutes
    Given the target cluster "edge-1" is registered
    And within 3 minutes the Barbican "barbican" in "openstack" reports:
      | condition | status | reason   |
      | Ready     | True   | AllReady |
    When the target cluster "edge-1" is deregistered
    # The operator sees the registration go before the deletion, or the deletion's cleanup
    # reaches the still-running cluster through the engaged client and ends at once.
    Then within 1 minute the Barbican "barbican" in "openstack" reports:
      | condition    | status | reason                   |
      | SecretsReady | False  | TargetClusterUnavailable |
    When the Barbican "barbican" in "openstack" is deleted
    And 4 minutes pass
    And the operator restarts
    And 3 minutes pass
    Then the Barbican "barbican" in "openstack" has "/metadata/name" set to "barbican"
    And within 3 minutes the Barbican "barbican" in "openstack" is gone

  Scenario: a rotated registration kubeconfig is engaged afresh
    Given the target cluster "edge-1" is registered
    And within 3 minutes the Barbican "barbican" in "openstack" reports:
      | condition | status | reason   |
      | Ready     | True   | AllReady |
    When the registration of "edge-1" is rotated to a new token
    And the Service "barbican" in "openstack" is deleted
    Then within 1 minute the Service "barbican" in "openstack" exists
    And within 1 minute the Barbican "barbican" in "openstack" reports:
      | condition | status | reason   |
      | Ready     | True   | AllReady |

  Scenario: a kubeconfig whose token the target rejects engages, and the CR reports the API server's error
    Given the target cluster "edge-1" rejects the operator's token
    When the target cluster "edge-1" is registered
    Then within 1 minute the Barbican "barbican" in "openstack" reports:
      | condition    | status | reason                   |
      | SecretsReady | False  | TargetClusterUnavailable |
    And within 1 minute the SecretsReady condition of the Barbican "barbican" in "openstack" mentions "401"
    And the Deployment "barbican" in "openstack" does not exist

  Scenario: an event from a cluster the Barbican does not name does not wake it
    Given the target cluster "edge-1" is registered
    And within 3 minutes the Barbican "barbican" in "openstack" reports:
      | condition | status | reason   |
      | Ready     | True   | AllReady |
    # Ready comes before the rollout completes; the Service narrows its selector after it.
    And the operator converges on "openstack"
    And the target cluster "edge-2" is registered
    And the scenario works on the target cluster "edge-2"
    And the namespace "openstack"
    And the Secret "barbican-db" in "openstack" holds:
      | key      | value    |
      | username | barbican |
      | password | other-pw |
    When the Secret "barbican-db" in "openstack" on the target cluster "edge-2" changes
    Then the change does not wake the Barbican "barbican" in "openstack"
    When the Secret "barbican-db" in "openstack" on the target cluster "edge-1" changes
    Then the change wakes the Barbican "barbican" in "openstack"

  Scenario: a registration limited to other namespaces refuses the Barbican's namespace before anything is written
    Given the target cluster "edge-1" is registered for the namespaces "tenant-a,tenant-b"
    Then within 1 minute the Barbican "barbican" in "openstack" reports:
      | condition    | status | reason                   |
      | SecretsReady | False  | TargetClusterUnavailable |
    And within 1 minute the SecretsReady condition of the Barbican "barbican" in "openstack" mentions "outside the namespaces cluster"
    And within 1 minute the CredentialsReady condition of the BarbicanSecretStore "vault-legacy" in "openstack" mentions "outside the namespaces cluster"
    And the Deployment "barbican" in "openstack" does not exist
    And the Secret "barbican-db-connection" in "openstack" does not exist

  Scenario: a Barbican whose name cannot be a label value is refused before anything is created on the target
    # The webhook refuses a name this long at admission; this is the operator's own defence,
    # for a Barbican created while the webhooks were not installed.
    Given the admission webhooks are not installed
    And the target cluster "edge-1" is registered
    When the following is applied:
      """
      apiVersion: barbican.openstack.c5c3.io/v1alpha1
      kind: Barbican
      metadata: {name: bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb, namespace: openstack}
      spec:
        openStackRelease: "2025.2"
        targetClusterRef: {name: edge-1}
        image: {repository: ghcr.io/c5c3/barbican, tag: "2025.2"}
        database:
          clusterRef: {name: openstack-mariadb}
          database: barbican
          secretRef: {name: barbican-db}
        cache:
          clusterRef: {name: openstack-memcached}
        keystoneEndpoint: http://keystone.openstack.svc.cluster.local:5000/v3
        serviceUser:
          secretRef: {name: barbican-keystone}
      """
    Then within 1 minute the Barbican "bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb" in "openstack" reports:
      | condition    | status | reason                   |
      | SecretsReady | False  | TargetClusterUnavailable |
    And within 1 minute the SecretsReady condition of the Barbican "bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb" in "openstack" mentions "is 64 characters"
    And the Barbican "bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb" in "openstack" has no "/metadata/finalizers"
    And the Deployment "bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb" in "openstack" does not exist
    And the Secret "bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb-db-connection" in "openstack" does not exist

  Scenario: a target whose API server goes down reports its error, and the Barbican is Ready again when it comes back
    Given the target cluster "edge-1" is registered
    And within 3 minutes the Barbican "barbican" in "openstack" reports:
      | condition | status | reason   |
      | Ready     | True   | AllReady |
    When the target cluster "edge-1" goes down
    Then within 2 minutes the Barbican "barbican" in "openstack" reports:
      | condition    | status | reason                   |
      | SecretsReady | False  | TargetClusterUnavailable |
    And within 1 minute the SecretsReady condition of the Barbican "barbican" in "openstack" mentions "edge-1"
    When the target cluster "edge-1" comes back
    Then within 6 minutes the Barbican "barbican" in "openstack" reports:
      | condition    | status | reason           |
      | SecretsReady | True   | SecretsAvailable |
      | Ready        | True   | AllReady         |
