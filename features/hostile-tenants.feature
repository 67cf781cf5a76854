Feature: Hostile tenants: one CR can never stop, leak or delete another's

  Many tenants share one operator. Whatever one of them writes into a CR, a Secret or a
  registration, the others' Barbicans keep reconciling, nothing a tenant planted reaches a
  status, an event, a log line, /metrics or a rendered config, and teardown deletes only what
  the operator made. Each scenario asserts the victim's side, not only the attacker's refusal.

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

  @in-process-operator
  Scenario: a store whose namespace would break a header is refused, and the other tenant's Barbican reaches Ready
    When applying the following is refused with "spec.openBao.namespace":
      """
      apiVersion: barbican.openstack.c5c3.io/v1alpha1
      kind: BarbicanSecretStore
      metadata: {name: hostile, namespace: openstack}
      spec:
        barbicanRef: {name: barbican}
        type: OpenBao
        openBao:
          server: {url: "https://vault.example.com:8200", credentialsSecretRef: {name: vault-approle}}
          namespace: "tenant\u0001a"
      """
    And applying the following is refused with "spec.openBao.server.url":
      """
      apiVersion: barbican.openstack.c5c3.io/v1alpha1
      kind: BarbicanSecretStore
      metadata: {name: hostile, namespace: openstack}
      spec:
        barbicanRef: {name: barbican}
        type: OpenBao
        openBao:
          server: {url: "https://admin:planted-url-password@vault.example.com", credentialsSecretRef: {name: vault-approle}}
      """
    And the example "barbicansecretstore-managed.yaml" is applied
    And the example "barbican.yaml" is applied
    Then within 3 minutes the Barbican "barbican" in "openstack" reports:
      | condition | status | reason   |
      | Ready     | True   | AllReady |
    And the operator's metric "barbican_operator_reconcile_panics_total" with "controller=secretstore" reads 0
    And the operator's metric "barbican_operator_reconcile_panics_total" with "controller=barbican" reads 0
    And "planted-url-password" appears nowhere in "openstack"

  @in-process-operator
  Scenario: a brownfield server answering with a token no header can carry fails its own store only
    Given the namespace "tenant-b"
    And the external OpenBao "vault" serves "vault" in "legacy" with the mount "secret-barbican" in the namespace "tenant-a"
    And the external OpenBao "vault" issued AppRole credentials in "tenant-a" into the Secret "vault-barbican-approle" in "tenant-b"
    And the CA of the external OpenBao "vault" is in the Secret "vault-ca" in "tenant-b"
    And the external OpenBao "vault" issues tokens holding a control character
    When the following is applied:
      """
      apiVersion: barbican.openstack.c5c3.io/v1alpha1
      kind: Barbican
      metadata: {name: barbican, namespace: tenant-b}
      spec:
        openStackRelease: "2025.2"
        image: {repository: ghcr.io/c5c3/barbican, tag: "2025.2"}
        database: {host: db.example.com, port: 3307, database: barbican, secretRef: {name: barbican-db}}
        cache: {servers: ["memcached-0.example.com:11211"]}
        keystoneEndpoint: http://keystone.openstack.svc.cluster.local:5000/v3
        serviceUser: {secretRef: {name: barbican-keystone, key: password}}
      ---
      apiVersion: barbican.openstack.c5c3.io/v1alpha1
      kind: BarbicanSecretStore
      metadata: {name: vault-hostile, namespace: tenant-b}
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
    Then within 2 minutes the BarbicanSecretStore "vault-hostile" in "tenant-b" reports:
      | condition        | status | reason              |
      | CredentialsReady | False  | OpenBaoUnreachable  |
    And within 1 minute the CredentialsReady condition of the BarbicanSecretStore "vault-hostile" in "tenant-b" mentions "header"
    When the example "barbicansecretstore-managed.yaml" is applied
    And the example "barbican.yaml" is applied
    Then within 3 minutes the Barbican "barbican" in "openstack" reports:
      | condition | status | reason   |
      | Ready     | True   | AllReady |
    And the operator's metric "barbican_operator_reconcile_panics_total" with "controller=secretstore" reads 0

  @in-process-operator
  Scenario: a root token slipped into a plugin section is never rendered, and nothing planted leaks
    # The webhook refuses it at admission (admission.feature); this is the renderer's own
    # defence, for a Barbican written while the webhooks were not installed.
    Given the admission webhooks are not installed
    And the example "barbicansecretstore-managed.yaml" is applied
    When the following is applied:
      """
      apiVersion: barbican.openstack.c5c3.io/v1alpha1
      kind: Barbican
      metadata: {name: barbican, namespace: openstack}
      spec:
        openStackRelease: "2025.2"
        image: {repository: ghcr.io/c5c3/barbican, tag: "2025.2"}
        database: {clusterRef: {name: openstack-mariadb}, database: barbican, secretRef: {name: barbican-db}}
        cache: {servers: ["memcached-0.example.com:11211"]}
        keystoneEndpoint: http://keystone.openstack.svc.cluster.local:5000/v3
        serviceUser: {secretRef: {name: barbican-keystone, key: password}}
        plugins:
          - {name: vault, configSection: VAULT_PLUGIN, config: {root_token_id: s.planted-root-token}}
      """
    Then within 2 minutes the Barbican "barbican" in "openstack" reports:
      | condition    | status | reason      |
      | SecretsReady | False  | ConfigError |
    And within 1 minute the SecretsReady condition of the Barbican "barbican" in "openstack" mentions "never rendered"
    And "s.planted-root-token" appears nowhere in "openstack"
    When the Barbican "barbican" in "openstack" is patched with:
      """
      spec: {plugins: null}
      """
    Then within 3 minutes the Barbican "barbican" in "openstack" reports:
      | condition | status | reason   |
      | Ready     | True   | AllReady |

  Scenario: deleting a brownfield Barbican leaves a Database and User of the same name alone
    Given the following is applied:
      """
      apiVersion: k8s.mariadb.com/v1alpha1
      kind: Database
      metadata: {name: keystone, namespace: openstack}
      spec: {mariaDbRef: {name: openstack-mariadb}, name: keystone}
      ---
      apiVersion: k8s.mariadb.com/v1alpha1
      kind: User
      metadata: {name: keystone, namespace: openstack}
      spec: {mariaDbRef: {name: openstack-mariadb}, name: keystone}
      """
    When the following is applied:
      """
      apiVersion: barbican.openstack.c5c3.io/v1alpha1
      kind: Barbican
      metadata: {name: keystone, namespace: openstack}
      spec:
        openStackRelease: "2025.2"
        image: {repository: ghcr.io/c5c3/barbican, tag: "2025.2"}
        database: {host: db.example.com, port: 3307, database: barbican, secretRef: {name: barbican-db}}
        cache: {servers: ["memcached-0.example.com:11211"]}
        keystoneEndpoint: http://keystone.openstack.svc.cluster.local:5000/v3
        serviceUser: {secretRef: {name: barbican-keystone, key: password}}
      """
    Then within 2 minutes the Barbican "keystone" in "openstack" reports:
      | condition     | status | reason                 |
      | DatabaseReady | False  | WaitingForSecretStores |
    And the Barbican "keystone" in "openstack" has "/metadata/finalizers/0" set to "barbican.openstack.c5c3.io/finalizer"
    When the Barbican "keystone" in "openstack" is deleted
    Then within 2 minutes the Barbican "keystone" in "openstack" is gone
    And the Database "keystone" in "openstack" has "/spec/name" set to "keystone"
    And the User "keystone" in "openstack" has "/spec/name" set to "keystone"

  # @sim-only: the virtual clock (ten minutes pass) and a mariadb-operator slowed by the sim.
  @sim-only
  Scenario: a Database that never goes holds the Barbican for ten minutes at most, then a warning names it
    Given the mariadb-operator takes 30 minutes to tear a database down
    And the example "barbicansecretstore-managed.yaml" is applied
    When the example "barbican.yaml" is applied
    Then within 3 minutes the Barbican "barbican" in "openstack" reports:
      | condition | status | reason   |
      | Ready     | True   | AllReady |
    When the Barbican "barbican" in "openstack" is deleted
    Then within 1 minute a Normal event "FinalizingDatabase" about "barbican" in "openstack" mentions "Database, User and Grant"
    When 5 minutes pass
    Then within 1 minute the Barbican "barbican" in "openstack" exists
    # A FinalizingDatabase every 30 s for five minutes is one Event with a series, not ten.
    And the event "FinalizingDatabase" about "barbican" in "openstack" is one Event whose series counts at least 2
    And within 7 minutes the Barbican "barbican" in "openstack" is gone
    And within 1 minute a Warning event "DatabaseAbandoned" about "barbican" in "openstack" mentions "left behind"
    And within 1 minute the Database "barbican" in "openstack" exists

  @in-process-operator
  Scenario: a registration whose kubeconfig does not parse names the line, never the credentials
    Given the target cluster "edge-1" is registered with the kubeconfig:
      """
      apiVersion: v1
      kind: Config
      clusters:
      - name: edge
        cluster: {server: 'https://edge.example:6443'}
      users:
      - name: operator
        user: {token: planted-registration-token, client-key-data: UExBTlRFRC1LRVk=
        broken: [
      """
    When the following is applied:
      """
      apiVersion: barbican.openstack.c5c3.io/v1alpha1
      kind: Barbican
      metadata: {name: barbican, namespace: openstack}
      spec:
        openStackRelease: "2025.2"
        targetClusterRef: {name: edge-1}
        image: {repository: ghcr.io/c5c3/barbican, tag: "2025.2"}
        database: {host: db.example.com, port: 3307, database: barbican, secretRef: {name: barbican-db}}
        cache: {servers: ["memcached-0.example.com:11211"]}
        keystoneEndpoint: http://keystone.openstack.svc.cluster.local:5000/v3
        serviceUser: {secretRef: {name: barbican-keystone, key: password}}
      """
    Then within 1 minute the Barbican "barbican" in "openstack" reports:
      | condition    | status | reason                   |
      | SecretsReady | False  | TargetClusterUnavailable |
    And within 1 minute the SecretsReady condition of the Barbican "barbican" in "openstack" mentions "line"
    And "planted-registration-token" appears nowhere in "openstack"
    And "UExBTlRFRC1LRVk=" appears nowhere in "openstack"

  Scenario: a registration that would read the operator's own token is refused before any connection
    Given the target cluster "edge-1" is registered with the kubeconfig:
      """
      apiVersion: v1
      kind: Config
      clusters:
      - name: edge
        cluster: {server: 'http://127.0.0.1:9'}
      users:
      - name: operator
        user: {tokenFile: /var/run/secrets/kubernetes.io/serviceaccount/token}
      contexts:
      - name: edge
        context: {cluster: edge, user: operator}
      current-context: edge
      """
    When the following is applied:
      """
      apiVersion: barbican.openstack.c5c3.io/v1alpha1
      kind: Barbican
      metadata: {name: barbican, namespace: openstack}
      spec:
        openStackRelease: "2025.2"
        targetClusterRef: {name: edge-1}
        image: {repository: ghcr.io/c5c3/barbican, tag: "2025.2"}
        database: {host: db.example.com, port: 3307, database: barbican, secretRef: {name: barbican-db}}
        cache: {servers: ["memcached-0.example.com:11211"]}
        keystoneEndpoint: http://keystone.openstack.svc.cluster.local:5000/v3
        serviceUser: {secretRef: {name: barbican-keystone, key: password}}
      """
    Then within 1 minute the Barbican "barbican" in "openstack" reports:
      | condition    | status | reason                   |
      | SecretsReady | False  | TargetClusterUnavailable |
    And within 1 minute the SecretsReady condition of the Barbican "barbican" in "openstack" mentions "refused"

  # @sim-only: the virtual clock (six minutes pass).
  @sim-only
  Scenario: a health endpoint that answers without end is read only up to its bound
    Given the example "barbicansecretstore-managed.yaml" is applied
    And the example "barbican.yaml" is applied
    And within 3 minutes the Barbican "barbican" in "openstack" reports:
      | condition | status | reason   |
      | Ready     | True   | AllReady |
    When the barbican API of "barbican" in "openstack" answers endlessly
    And 6 minutes pass
    Then within 2 minutes the Barbican "barbican" in "openstack" reports:
      | condition        | status | reason            |
      | BarbicanAPIReady | False  | HealthCheckFailed |
    And within 1 minute the BarbicanAPIReady condition of the Barbican "barbican" in "openstack" mentions "larger than 65536 bytes"
    When the barbican API of "barbican" in "openstack" answers healthy
    Then within 3 minutes the Barbican "barbican" in "openstack" reports:
      | condition | status | reason   |
      | Ready     | True   | AllReady |

  # The ownership rule, one child kind at a time: team B's object under the name a child of
  # the Barbican takes is never modified or deleted, and the step that wanted the name says
  # which object is in its way.
  # @sim-only: the virtual clock (minutes pass to show nothing changes).
  @sim-only
  Scenario Outline: team B's <kind> under a child's name is left as it is, and <condition> names it
    Given team B's <kind> "<name>" in "openstack"
    And the example "barbicansecretstore-managed.yaml" is applied
    When the example "barbican.yaml" is applied
    Then within 3 minutes the Barbican "barbican" in "openstack" reports:
      | condition   | status | reason    |
      | <condition> | False  | NameTaken |
    And within 1 minute the <condition> condition of the Barbican "barbican" in "openstack" mentions "<kind> "
    And within 1 minute the <condition> condition of the Barbican "barbican" in "openstack" mentions "<name>"
    And within 1 minute the <condition> condition of the Barbican "barbican" in "openstack" mentions "exists and is not owned by Barbican"
    When 5 minutes pass
    Then team B's objects are untouched

    Examples:
      | kind                | name                   | condition       |
      | Secret              | barbican-db-connection | SecretsReady    |
      | CronJob             | barbican-db-clean      | DBCleanReady    |
      | Database            | barbican               | DatabaseReady   |
      | User                | barbican               | DatabaseReady   |
      | Grant               | barbican               | DatabaseReady   |
      | Job                 | barbican-db-sync       | DatabaseReady   |
      | Deployment          | barbican               | DeploymentReady |
      | Service             | barbican               | DeploymentReady |
      | PodDisruptionBudget | barbican               | DeploymentReady |

  # Children the spec does not ask for: the operator deletes its own when a field goes away,
  # but a foreign object under the name is not its own, so it stays and the Barbican is Ready.
  # @sim-only: the virtual clock (minutes pass to show nothing changes).
  @sim-only
  Scenario: team B's HPA, NetworkPolicy and HTTPRoute under the Barbican's name stay as they are
    Given team B's HorizontalPodAutoscaler "barbican" in "openstack"
    And team B's NetworkPolicy "barbican" in "openstack"
    And team B's HTTPRoute "barbican" in "openstack"
    And the example "barbicansecretstore-managed.yaml" is applied
    When the example "barbican.yaml" is applied
    Then within 3 minutes the Barbican "barbican" in "openstack" reports:
      | condition          | status | reason                   |
      | Ready              | True   | AllReady                 |
      | HPAReady           | True   | HPANotRequired           |
      | NetworkPolicyReady | True   | NetworkPolicyNotRequired |
    When 5 minutes pass
    Then team B's objects are untouched

  # The sweep after each pass deletes the Barbican's children it no longer asks for; team B's
  # objects that copy those children's labels under names of their own are not its children.
  # @sim-only: the virtual clock (minutes pass to show nothing changes).
  @sim-only
  Scenario: team B's objects carrying the labels of the Barbican's children survive every sweep
    Given team B's NetworkPolicy "team-b-policy" in "openstack" carries the labels of the Barbican "barbican"'s children
    And team B's Secret "barbican-config-0123456789" in "openstack" carries the labels of the Barbican "barbican"'s children
    And team B's HorizontalPodAutoscaler "team-b-hpa" in "openstack" carries the labels of the Barbican "barbican"'s children
    And the example "barbicansecretstore-managed.yaml" is applied
    When the example "barbican.yaml" is applied
    Then within 3 minutes the Barbican "barbican" in "openstack" reports:
      | condition | status | reason   |
      | Ready     | True   | AllReady |
    When the Barbican "barbican" in "openstack" is patched with:
      """
      {"spec": {"replicas": 2}}
      """
    Then within 3 minutes the Barbican "barbican" in "openstack" reports:
      | condition | status | reason   |
      | Ready     | True   | AllReady |
    When 5 minutes pass
    Then team B's objects are untouched

  # @sim-only: the virtual clock (minutes pass to show nothing changes).
  @sim-only
  Scenario: team B's Secret under a store's credentials name is neither read nor overwritten
    Given team B's Secret "openbao-primary-approle" in "openstack"
    When the example "barbicansecretstore-managed.yaml" is applied
    And the example "barbican.yaml" is applied
    Then within 3 minutes the BarbicanSecretStore "openbao-primary" in "openstack" reports:
      | condition        | status | reason    |
      | CredentialsReady | False  | NameTaken |
    And within 1 minute the CredentialsReady condition of the BarbicanSecretStore "openbao-primary" in "openstack" mentions "is not owned by BarbicanSecretStore"
    When 5 minutes pass
    Then team B's objects are untouched

  Scenario: with every child name taken, deleting the Barbican leaves all of team B's objects
    Given team B's objects under every child name of the Barbican "barbican" with the store "openbao-primary" in "openstack"
    And the example "barbicansecretstore-managed.yaml" is applied
    When the example "barbican.yaml" is applied
    Then within 3 minutes the Barbican "barbican" in "openstack" reports:
      | condition    | status | reason    |
      | SecretsReady | False  | NameTaken |
    When the BarbicanSecretStore "openbao-primary" in "openstack" is deleted
    And the Barbican "barbican" in "openstack" is deleted
    Then within 12 minutes the Barbican "barbican" in "openstack" is gone
    And within 1 minute the BarbicanSecretStore "openbao-primary" in "openstack" is gone
    And team B's objects are untouched
